"""The recalibration study of Gupta et al. (2021), as reusable pieces.

Used by ``notebooks/03_gupta2021_ks_splines.ipynb``:

* :class:`SyntheticPopulation` -- a population of scores with a *known*
  ``P(correct | score)``, so that Proposition 4.1 (the derivative of the
  cumulative accuracy is the calibrated probability) and Eq. 8 (KS equals the
  expected calibration error when miscalibration has one sign) can be checked
  against exact population values rather than against another estimate.
* :func:`spline_recovery_error` -- how well a spline fitted to a finite sample
  recovers that known ``P(correct | score)``, for a sensitivity study over the
  number of knots and the calibration-set size.
* :func:`network_scores` and :func:`evaluate_split` -- every method fitted on
  one calibration split and scored on its test split, with one network's
  probabilities and class order computed once for all splits: top-1..5 and
  within-top-2/3 KS (Eq. 3-5, Tables 1, 2, 4, Appendix D), accuracy (Table 5,
  also with every rank recalibrated and re-ranked), ECE/MCE/Brier (Tables
  6-7), class-wise KS (§3).
* :func:`spline_columns`, :func:`isotonic_columns`, :func:`histogram_columns`
  -- the spline of §4, isotonic regression and histogram binning fitted to
  many scores at once; column by column equal to
  :class:`calibnb.SplineCalibrator`, :class:`calibnb.IsotonicCalibrator` and
  :class:`calibnb.HistogramBinning`.
* :func:`spline_graph_data`, :func:`plot_graph_rows` -- the calibration graphs
  of Figures 1-10 with panels (c, d) from the spline's derivative.
* :func:`paired_ks_difference_ci` -- a paired bootstrap interval of a KS
  difference without re-sorting any resample.

Reference: K. Gupta, A. Rahimi, T. Ajanthan, T. Mensink, C. Sminchisescu and
R. Hartley, "Calibration of Neural Networks using Splines", ICLR 2021.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..validation import (
    as_float_array,
    as_numeric_array,
    as_rng,
    check_bool,
    check_choice,
    check_conf,
    check_conf_correct,
    check_correct,
    check_n_bins,
    check_positive_int,
    check_scalar_in_range,
    choose_compiled,
)
from ..uncertainty import bootstrap_weights, percentile_interval

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "SplineFigureData",
    "SplineRecovery",
    "SyntheticPopulation",
    "plot_spline_figure",
    "spline_figure_data",
    "spline_recovery_error",
    "STUDY_METHODS",
    "NetworkScores",
    "network_scores",
    "evaluate_split",
    "scaling_fit",
    "spline_columns",
    "isotonic_columns",
    "histogram_columns",
    "spline_graph_data",
    "plot_graph_rows",
    "paired_ks_difference_ci",
]


@dataclass(frozen=True, kw_only=True)
class SyntheticPopulation:
    r"""Scores with a known probability of being correct.

    Scores follow a Beta distribution and the probability that a prediction
    with score :math:`s` is correct is a logistic (Platt-style) distortion of
    the score:

    .. math::

        S \sim \mathrm{Beta}(a, b), \qquad
        g(s) = P(\text{correct} \mid S = s)
             = \operatorname{expit}\bigl(\alpha \operatorname{logit}(s) + \beta\bigr).

    With :math:`\alpha = 1, \beta = 0` the scores are calibrated; with
    :math:`\alpha = 1, \beta < 0` every score is over-confident
    (:math:`g(s) < s` for all :math:`s`, miscalibration of one sign, as assumed
    by Gupta et al. 2021, Eq. 8); with :math:`\alpha < 1, \beta = 0` scores
    below 0.5 are under-confident and scores above 0.5 over-confident (two
    signs).

    Population quantities, all computed by quadrature on the Beta density (no
    sampling): the fractile score :math:`s(t)` (Eq. 14), the cumulative
    accuracy :math:`h(t) = P(\text{correct}, S \le s(t))` (Eq. 14), its
    derivative :math:`h'(t) = g(s(t))` (Proposition 4.1), the population KS
    error (Eq. 7)

    .. math::

        \mathrm{KS} = \max_\sigma \Bigl| \int_0^\sigma \bigl(g(z) - z\bigr) p(z)\, dz \Bigr|,

    and the expected calibration error it equals when :math:`g(z) - z` has one
    sign (Eq. 8), :math:`\int_0^1 |g(z) - z|\, p(z)\, dz`.

    Parameters
    ----------
    score_a, score_b : float, default 5.0 and 1.5
        Beta parameters of the score distribution (both > 0). The default puts
        most scores near 1, like the top-1 scores of an image classifier.
    slope : float, default 1.0
        :math:`\alpha`, the logit slope (> 0; < 1 means over-confident at both
        ends).
    intercept : float, default -0.8
        :math:`\beta`, the logit shift (< 0 means over-confident everywhere
        when ``slope == 1``).

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Eq. 8.

    Examples
    --------
    >>> pop = SyntheticPopulation(slope=1.0, intercept=0.0)   # calibrated
    >>> float(pop.probability(0.8))
    0.8
    >>> scores, correct = pop.sample(4, seed=0)
    >>> scores.shape, correct.dtype
    ((4,), dtype('bool'))
    >>> round(SyntheticPopulation().ks_population() - SyntheticPopulation().ece_limit(), 12)
    0.0
    """

    score_a: float = 5.0
    score_b: float = 1.5
    slope: float = 1.0
    intercept: float = -0.8

    def __post_init__(self) -> None:
        check_scalar_in_range(self.score_a, "score_a", low=0.0, low_inclusive=False)
        check_scalar_in_range(self.score_b, "score_b", low=0.0, low_inclusive=False)
        check_scalar_in_range(self.slope, "slope", low=0.0, low_inclusive=False)
        check_scalar_in_range(self.intercept, "intercept")

    # --- the model -----------------------------------------------------------
    def probability(self, scores: Any) -> np.ndarray:
        """Return :math:`g(s) = P(\\text{correct} \\mid S = s)` for each score."""
        from scipy.special import expit, logit

        s = np.asarray(scores, dtype=np.float64)
        if s.ndim == 0:
            s = check_conf(s.reshape(1), "scores")[0]
        else:
            s = check_conf(s.ravel(), "scores").reshape(s.shape)
        with np.errstate(divide="ignore"):
            return expit(self.slope * logit(s) + self.intercept)

    def density(self, scores: Any) -> np.ndarray:
        """Return the Beta density :math:`p(s)` of the scores."""
        from scipy.stats import beta

        return beta.pdf(np.asarray(scores, dtype=np.float64), self.score_a, self.score_b)

    def fractile_score(self, t: Any) -> np.ndarray:
        """Return :math:`s(t)`, the score below which a fraction ``t`` of scores lie."""
        from scipy.stats import beta

        return beta.ppf(np.asarray(t, dtype=np.float64), self.score_a, self.score_b)

    def sample(self, n: int, *, seed: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` (score, correct) pairs: scores from the Beta, correct ~ Bernoulli(g(score))."""
        n = check_positive_int(n, "n")
        rng = as_rng(seed)
        scores = rng.beta(self.score_a, self.score_b, size=n)
        correct = rng.random(n) < self.probability(scores)
        return scores, correct

    # --- population quantities -----------------------------------------------
    def _grid(self, n_grid: int) -> tuple[np.ndarray, np.ndarray]:
        """Score grid on (0, 1) and the integrand (g(z) - z) p(z) on it."""
        z = np.linspace(0.0, 1.0, n_grid + 2)[1:-1]
        return z, (self.probability(z) - z) * self.density(z)

    def cumulative_accuracy(self, t: Any, *, n_grid: int = 20001) -> np.ndarray:
        r"""Return :math:`h(t) = P(\text{correct}, S \le s(t))` (Gupta et al. 2021, Eq. 14)."""
        from scipy.integrate import cumulative_trapezoid

        z = np.linspace(0.0, 1.0, n_grid + 2)[1:-1]
        h = cumulative_trapezoid(self.probability(z) * self.density(z), z, initial=0.0)
        return np.interp(self.fractile_score(t), z, h)

    def cumulative_accuracy_derivative(self, t: Any) -> np.ndarray:
        r"""Return :math:`h'(t) = g(s(t))`, Proposition 4.1 of Gupta et al. 2021."""
        return self.probability(np.clip(self.fractile_score(t), 0.0, 1.0))

    def ks_population(self, *, n_grid: int = 20001) -> float:
        r"""Population KS error, :math:`\max_\sigma |\int_0^\sigma (g(z) - z) p(z) dz|` (Eq. 7)."""
        from scipy.integrate import cumulative_trapezoid

        z, f = self._grid(n_grid)
        return float(np.max(np.abs(cumulative_trapezoid(f, z, initial=0.0))))

    def ece_limit(self, *, n_grid: int = 20001) -> float:
        r"""Expected calibration error :math:`\int_0^1 |g(z) - z| p(z) dz` (Eq. 8)."""
        from scipy.integrate import trapezoid

        z, f = self._grid(n_grid)
        return float(trapezoid(np.abs(f), z))

    def is_one_signed(self, *, n_grid: int = 20001) -> bool:
        """True when :math:`g(z) - z` has the same sign for every score (Eq. 8 applies)."""
        z = np.linspace(0.0, 1.0, n_grid + 2)[1:-1]
        d = self.probability(z) - z
        return bool(np.all(d <= 1e-12) or np.all(d >= -1e-12))


# ---------------------------------------------------------------------------
# Every method on one network (Tables 1, 2, 4, 5, 6, 7)
# ---------------------------------------------------------------------------

#: Methods compared in the notebook's tables, in column order.
METHODS = ("uncalibrated", "temperature", "vector", "isotonic", "histogram", "spline")

#: Column headers the notebook prints for each method.
METHOD_LABELS = {
    "uncalibrated": "Uncalibrated",
    "temperature": "Temp. Scaling",
    "vector": "Vector Scaling",
    "isotonic": "Isotonic",
    "histogram": "Hist. Binning",
    "spline": "Ours (Spline)",
}

def _scores(probs: np.ndarray, labels: np.ndarray, kind: tuple[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(score, correct) of the top-r (``("top", r)``) or within-top-r (``("within", r)``) prediction."""
    from .. import metrics

    mode, r = kind
    if mode == "top":
        return metrics.top_r(probs, labels, r=r)
    return metrics.within_top_r(probs, labels, r=r)


def _check_disjoint(cal: np.ndarray, test: np.ndarray) -> None:
    """Refuse calibration and test splits that share rows (a fit scored on its own data)."""
    both = np.intersect1d(cal, test)
    if both.size:
        raise ValueError(
            f"calibration_index and test_index overlap in {both.size} row(s), first {int(both[0])}; "
            "the splits must be disjoint."
        )


def _check_index(index: Any, n: int, name: str) -> np.ndarray:
    """A 1-D array of distinct row indices in [0, n)."""
    idx = np.asarray(index)
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of row indices; got shape {idx.shape}.")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers; got dtype {idx.dtype}.")
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} has {int(bad.sum())} indices outside [0, {n}); first at position {i}: {int(idx[i])}.")
    if not _increasing(idx) and np.unique(idx).size != idx.size:  # increasing: distinct without a sort
        raise ValueError(f"{name} has repeated indices.")
    return idx.astype(np.int64)


# ---------------------------------------------------------------------------
# Figure 2 (and 4, 6, 8, 10): the KS graphs after spline recalibration
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SplineFigureData:
    """What Gupta et al. 2021 Figure 2 shows: KS graphs after spline recalibration.

    Attributes
    ----------
    calibration, test : calibnb.plots.KSGraphData
        Graphs of the recalibrated scores on the calibration split (the top
        row of Figure 2) and on the test split (the bottom row).
    before : calibnb.plots.KSGraphData
        Graphs of the uncalibrated scores on the test split (Figure 1).
    test_ks_before, test_ks_after : float
        Test KS error before and after recalibration.
    n_knots, n_calibration : int
        Knots of the spline and number of calibration items it was fitted on.
    kind : tuple of (str, int)
        ``("top", r)`` or ``("within", r)``.

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Figure 2.
    """

    calibration: Any
    test: Any
    before: Any
    test_ks_before: float
    test_ks_after: float
    n_knots: int
    n_calibration: int
    kind: tuple


def spline_figure_data(
    probs: Any,
    labels: Any,
    *,
    calibration_index: Any,
    test_index: Any,
    n_knots: int = 6,
    kind: tuple = ("top", 1),
    calibration_size: int | None = None,
    seed: Any = None,
    window: float = 0.1,
) -> SplineFigureData:
    r"""Fit a spline on (part of) the calibration split; KS graphs before and after.

    The recalibration function of Gupta et al. 2021, §4.2, is
    :math:`\gamma(\sigma) = h'(s^{-1}(\sigma))`, with :math:`h` the spline
    fitted to the calibration split's cumulative accuracy (Eq. 11) and
    :math:`s^{-1}` the calibration fractile of score :math:`\sigma`.

    Parameters
    ----------
    probs : array-like of shape (N, K)
        Class probabilities of all items.
    labels : array-like of shape (N,)
        Integer labels.
    calibration_index, test_index : array-like of int
        Disjoint row indices of the two splits.
    n_knots : int, default 6
        Spline knots.
    kind : ("top", r) or ("within", r), default ("top", 1)
        The score to recalibrate: the r-th largest probability (Eq. 3) or the
        sum of the r largest (Eq. 5).
    calibration_size : int or None
        Fit on a seeded random subset of this many calibration items (None:
        all of them).
    seed : int, Generator or None
        Seed of that subset.
    window : float, default 0.1
        Smoothing window of the non-cumulative panels (see
        :func:`calibnb.plots.ks_graph_data`).

    Returns
    -------
    SplineFigureData

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). §4.2.

    Examples
    --------
    >>> from calibnb import softmax
    >>> rng = np.random.default_rng(0)
    >>> p = softmax(rng.normal(size=(3000, 4)) * 3)
    >>> y = (rng.random((3000, 1)) < np.cumsum(softmax(np.log(p) / 2), axis=1)).argmax(axis=1)
    >>> d = spline_figure_data(p, y, calibration_index=np.arange(1500), test_index=np.arange(1500, 3000))
    >>> bool(d.test_ks_after < d.test_ks_before), d.n_calibration
    (True, 1500)
    """
    from .. import calibrators, metrics, plots
    from ..validation import check_choice, check_probs_labels

    p, y = check_probs_labels(probs, labels)
    n = p.shape[0]
    cal = _check_index(calibration_index, n, "calibration_index")
    test = _check_index(test_index, n, "test_index")
    _check_disjoint(cal, test)
    rng = as_rng(seed)
    n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
    mode, r = kind
    mode = check_choice(mode, ("top", "within"), "kind[0]")
    r = check_positive_int(r, "kind[1]")
    if calibration_size is not None:
        calibration_size = check_positive_int(calibration_size, "calibration_size", minimum=n_knots)
        if calibration_size < cal.size:
            cal = np.sort(rng.choice(cal, size=calibration_size, replace=False))
    s_cal, c_cal = _scores(p[cal], y[cal], (mode, r))
    s_test, c_test = _scores(p[test], y[test], (mode, r))
    spline = calibrators.SplineCalibrator(n_knots=n_knots, r=r, mode=mode).fit(s_cal, c_cal)
    after_cal = np.clip(spline.transform(s_cal), 0.0, 1.0)
    after_test = np.clip(spline.transform(s_test), 0.0, 1.0)
    return SplineFigureData(
        calibration=plots.ks_graph_data(after_cal, c_cal, window=window),
        test=plots.ks_graph_data(after_test, c_test, window=window),
        before=plots.ks_graph_data(s_test, c_test, window=window),
        test_ks_before=float(metrics.ks_error(s_test, c_test)),
        test_ks_after=float(metrics.ks_error(after_test, c_test)),
        n_knots=n_knots,
        n_calibration=int(cal.size),
        kind=(mode, r),
    )


#: Tick intervals per axis of the multi-panel KS figures (Figure 2, :func:`plot_graph_rows`): about five labels on a
#: 3-inch panel instead of matplotlib's up to ten. Each tick is a set of artists made at every draw; with the default
#: a 12-panel figure made 191 of them and they were the largest part of its drawing time (issue 31).
_PANEL_TICKS = 4


def plot_spline_figure(data: SplineFigureData, *, axes: Any = None, title: str | None = None) -> Any:
    """Draw Figure 2 of Gupta et al. 2021: panels a-d, calibration (top) and test (bottom) rows.

    Parameters
    ----------
    data : SplineFigureData
    axes : array of 2 x 4 matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    title : str, optional
        Figure title (the test KS before/after is appended).

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes, shape (2, 4)

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR).
    """
    from .. import plots

    if not isinstance(data, SplineFigureData):
        raise TypeError(f"data must be a SplineFigureData (from spline_figure_data); got {type(data).__name__}.")
    if axes is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 4, figsize=(16, 7.5), constrained_layout=True)
    axes = np.asarray(axes)
    if axes.shape != (2, 4):
        raise ValueError(f"axes must be a 2 x 4 array of Axes; got shape {axes.shape}.")
    for row, (graph, split) in enumerate(((data.calibration, "calibration"), (data.test, "test"))):
        for col, panel in enumerate("abcd"):
            ax = plots.plot_ks_graph(graph, panel=panel, ax=axes[row, col])
            ax.locator_params(nbins=_PANEL_TICKS)
            ax.set_title(f"({panel}) {split} split, {100 * graph.ks:.2f}% KS", fontsize="medium", y=1.0)  # see plot_graph_rows
    label = f"{'top' if data.kind[0] == 'top' else 'within-top'}-{data.kind[1]}"
    head = f"{title}: " if title else ""
    axes[0, 0].figure.suptitle(
        f"{head}{label} after spline recalibration ({data.n_knots} knots, {data.n_calibration} calibration items); "
        f"test KS {100 * data.test_ks_before:.2f}% -> {100 * data.test_ks_after:.2f}%"
    )
    return axes


# ---------------------------------------------------------------------------
# Proposition 4.1 on a population with known P(correct | score)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SplineRecovery:
    """How well a fitted spline's derivative recovers a known ``P(correct | score)``.

    Attributes
    ----------
    scores : ndarray
        Evaluation grid of scores (fractiles ``fractile_range`` of the population).
    true_probability : ndarray
        :math:`g(s)` on the grid.
    recovered : ndarray
        The spline recalibration :math:`\\gamma(s) = h'(s^{-1}(s))` on the grid.
    max_error, mean_error : float
        Maximum and mean of :math:`|\\gamma(s) - g(s)|` on the grid.
    n_calibration, n_knots : int
    """

    scores: np.ndarray
    true_probability: np.ndarray
    recovered: np.ndarray
    max_error: float
    mean_error: float
    n_calibration: int
    n_knots: int


def spline_recovery_error(
    population: SyntheticPopulation,
    *,
    n_calibration: int = 5000,
    n_knots: int = 6,
    seed: Any = None,
    fractile_range: tuple[float, float] = (0.02, 0.98),
    n_grid: int = 200,
) -> SplineRecovery:
    r"""Fit the spline to a sample of ``population``; compare its output with the true probability.

    By Proposition 4.1 of Gupta et al. 2021 the derivative of the cumulative
    accuracy :math:`h(t)` (Eq. 14) is :math:`P(\text{correct} \mid S = s(t))`,
    so the spline recalibration of a score :math:`s` should equal the known
    :math:`g(s)` up to sampling and smoothing error:

    .. math::

        \mathrm{err} = \max_{s \in G} |\gamma(s) - g(s)|,

    with :math:`G` a grid of ``n_grid`` scores at equally spaced fractiles in
    ``fractile_range`` (the two tails, where a natural spline runs out
    linearly and there are few points, are excluded).

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR).

    Examples
    --------
    >>> rec = spline_recovery_error(SyntheticPopulation(), n_calibration=20000, seed=0)
    >>> bool(rec.max_error < 0.05)
    True
    """
    from .. import calibrators

    if not isinstance(population, SyntheticPopulation):
        raise TypeError(f"population must be a SyntheticPopulation; got {type(population).__name__}.")
    n_calibration = check_positive_int(n_calibration, "n_calibration", minimum=2)
    n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
    lo, hi = fractile_range
    lo = check_scalar_in_range(lo, "fractile_range[0]", low=0.0, high=1.0)
    hi = check_scalar_in_range(hi, "fractile_range[1]", low=lo, high=1.0, low_inclusive=False)
    n_grid = check_positive_int(n_grid, "n_grid", minimum=2)
    scores, correct = population.sample(n_calibration, seed=seed)
    spline = calibrators.SplineCalibrator(n_knots=n_knots).fit(scores, correct)
    grid = population.fractile_score(np.linspace(lo, hi, n_grid))
    truth = population.probability(grid)
    recovered = np.clip(spline.transform(grid), 0.0, 1.0)
    err = np.abs(recovered - truth)
    return SplineRecovery(grid, truth, recovered, float(err.max()), float(err.mean()), n_calibration, n_knots)


# ---------------------------------------------------------------------------
# Every table over several calibration/test splits: shared orderings, many columns at once
# ---------------------------------------------------------------------------

#: Methods of :func:`evaluate_split`, in column order.
STUDY_METHODS = ("uncalibrated", "temperature", "vector", "isotonic", "histogram", "spline")
_PER_SCORE = ("isotonic", "histogram", "spline")


@dataclass(frozen=True)
class NetworkScores:
    """One network's softmax probabilities and descending class order.

    Attributes
    ----------
    logits : ndarray (N, K)
    probs : ndarray (N, K)
        ``softmax(logits)``.
    labels : ndarray (N,)
    order : ndarray (N, K)
        Classes by decreasing probability, ties broken by the lower class
        index (``argsort(-probs, kind="stable")``), as in
        :func:`calibnb.top_r`.
    """

    logits: np.ndarray
    probs: np.ndarray
    labels: np.ndarray
    order: np.ndarray
    # stable per-column sort orders over all N items, computed on first use and shared by every split
    # (see _column_orders); not part of the value
    _orders: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    # temperature- and vector-scaling models fitted on a calibration split (see scaling_fit); not part of the value
    _fits: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)


_SCALING = ("temperature", "vector")


def scaling_fit(net: NetworkScores, calibration_index: Any, method: str = "temperature") -> Any:
    r"""Temperature or vector scaling of ``net`` fitted on the calibration rows, fitted once per split (Gupta et al. 2021, §6).

    Both rescale the logits :math:`z_i` and are fitted by the calibration NLL:
    temperature scaling :math:`\mathrm{softmax}(z_i / T)`, vector scaling
    :math:`\mathrm{softmax}(w \odot z_i + b)` (:class:`calibnb.TemperatureScaling`,
    :class:`calibnb.VectorScaling`). The fit is deterministic, so it is kept on
    ``net`` and the same model is returned for the same ``method`` and
    calibration rows: :func:`evaluate_split` and a later cell that needs the
    same model's outputs share one fit. Treat the returned model as read-only.

    Parameters
    ----------
    net : NetworkScores
        From :func:`network_scores`.
    calibration_index : array-like of int
        Rows the model is fitted on.
    method : {"temperature", "vector"}, default "temperature"

    Returns
    -------
    calibnb.TemperatureScaling or calibnb.VectorScaling
        Fitted.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> net = network_scores(rng.normal(size=(200, 3)) * 3, rng.integers(0, 3, 200))
    >>> ts = scaling_fit(net, np.arange(100))
    >>> ts is scaling_fit(net, np.arange(100))   # fitted once
    True
    >>> ts.transform(net.logits[100:]).shape
    (100, 3)
    """
    from .. import calibrators

    if not isinstance(net, NetworkScores):
        raise TypeError(f"net must be a NetworkScores (from network_scores); got {type(net).__name__}.")
    cal = _check_index(calibration_index, net.probs.shape[0], "calibration_index")
    method = check_choice(method, _SCALING, "method")
    key = (method, cal.tobytes())
    if key not in net._fits:
        if method == "temperature":
            model = calibrators.TemperatureScaling()
        else:  # Newton from the temperature fit of the same rows (fitted once, shared): no search for a start
            model = calibrators.VectorScaling(init_temperature=scaling_fit(net, cal, "temperature").temperature_)
        net._fits[key] = model.fit(net.logits[cal], net.labels[cal])
    return net._fits[key]


def _column_orders(net: NetworkScores, key: tuple, columns, correct) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every column of ``columns()`` (N, m) sorted over all N items, cached on ``net`` under ``key``.

    Returns ``(order, values, hits)``, (m, N) rows each: the stable argsort of
    each column, the column in that order, and the column of ``correct()``
    (N, m) put in the same order. Every split of :func:`evaluate_split` sorts
    subsets of the same per-item scores (the top-r scores, every rank's
    probability, every class's probability). One sort of all N items serves
    them all: the stable order of a subset with increasing indices is the full
    order with the other items left out, so a split filters the sorted rows
    (:class:`_SortedSplit`) instead of sorting or gathering.
    """
    if key not in net._orders:
        order, values = _sort_rows(np.ascontiguousarray(columns().T))
        hits = np.take_along_axis(np.ascontiguousarray(correct().T), order, axis=1)
        net._orders[key] = (order, values, hits)
    return net._orders[key]


class _SortedSplit:
    """The sorted rows of :func:`_column_orders` filtered to a calibration and a test split (increasing indices).

    ``s_cal``, ``c_cal``, ``s_test``, ``c_test``: (m, n_cal) and (m, n_test)
    rows of scores and correctness in stable score order, equal to sorting
    each column of the split's rows stably; ``o_test``: the test positions in
    that order (``argsort(s_test_column, kind="stable")``), to put results
    back in row order; :meth:`cal_order` the same for calibration rows.
    :meth:`rows` selects columns.
    """

    def __init__(self, order, values, hits, cal, test, n, *, _parts=None):
        self._cal, self._n = cal, n
        if _parts is not None:
            self.s_cal, self.c_cal, self.s_test, self.c_test, self.o_test, self._items_cal = _parts
            return
        rows = order.shape[0]
        in_cal = np.zeros(n, dtype=bool)
        in_cal[cal] = True
        m_cal = in_cal[order]
        if test is None:  # the calibration rows only (the fits); the test attributes are None
            f_cal = np.flatnonzero(m_cal)
            self._items_cal = np.take(order.reshape(-1), f_cal).reshape(rows, cal.size)
            self.s_cal = np.take(values.reshape(-1), f_cal).reshape(rows, cal.size)
            self.c_cal = np.take(hits.reshape(-1), f_cal).reshape(rows, cal.size)
            self.s_test = self.c_test = self.o_test = None
            return
        if cal.size + test.size == n:  # the split covers every item: the test rows are the others
            m_test = ~m_cal
        else:
            in_test = np.zeros(n, dtype=bool)
            in_test[test] = True
            m_test = in_test[order]
        # positions of the kept items in the flat (m, N) rows; np.take of them is several times faster than
        # boolean indexing of the 2-D rows (same elements, same order)
        f_cal, f_test = np.flatnonzero(m_cal), np.flatnonzero(m_test)
        pos = np.empty(n, dtype=np.intp)
        pos[test] = np.arange(test.size)
        flat_order = order.reshape(-1)
        self._items_cal = np.take(flat_order, f_cal).reshape(rows, cal.size)  # item ids, in score order
        flat_values, flat_hits = values.reshape(-1), hits.reshape(-1)
        self.s_cal = np.take(flat_values, f_cal).reshape(rows, cal.size)
        self.c_cal = np.take(flat_hits, f_cal).reshape(rows, cal.size)
        self.s_test = np.take(flat_values, f_test).reshape(rows, test.size)
        self.c_test = np.take(flat_hits, f_test).reshape(rows, test.size)
        self.o_test = np.take(pos, np.take(flat_order, f_test)).reshape(rows, test.size)

    @classmethod
    def of(cls, net: NetworkScores, key: tuple, columns, correct, cal: np.ndarray, test: np.ndarray | None):
        """The split of ``net``'s cached sorted columns, or None when an index is not increasing (then the fits sort).

        ``test=None``: the calibration rows only (``s_test``, ``c_test`` and ``o_test`` are None).
        """
        if not (_increasing(cal) and (test is None or _increasing(test))):
            return None
        return cls(*_column_orders(net, key, columns, correct), cal, test, net.probs.shape[0])

    def rows(self, idx) -> "_SortedSplit":
        """The same split of the columns ``idx`` only."""
        return _SortedSplit(None, None, None, self._cal, None, self._n,
                            _parts=(self.s_cal[idx], self.c_cal[idx], self.s_test[idx], self.c_test[idx],
                                    self.o_test[idx], self._items_cal[idx]))

    def cal_order(self) -> np.ndarray:
        """The calibration positions in stable score order, per column (as ``o_test`` for the test rows)."""
        pos = np.empty(self._n, dtype=np.intp)
        pos[self._cal] = np.arange(self._cal.size)
        return np.take(pos, self._items_cal)


def _increasing(index: np.ndarray) -> bool:
    return bool(np.all(index[1:] > index[:-1]))


def _top_order(probs: np.ndarray, r: int, hint: np.ndarray | None = None) -> np.ndarray:
    """The r most probable classes of each row, as ``argsort(-probs, stable)[:, :r]`` but without a full sort.

    Rows whose r-th and (r+1)-th largest probabilities tie fall back to the full stable sort, so the result is
    exactly that of the full sort. ``hint``: (n, >= r) classes believed to be each row's top r in that order
    (temperature scaling keeps each row's order of the softmax); a row where they provably are (decreasing,
    ties by class index, every other class strictly below the r-th) keeps them, the others are found as above.
    """
    n, k = probs.shape
    if hint is not None and r < k:
        cand = np.array(hint[:, :r], dtype=np.intp)  # a copy: rows are replaced below
        v = np.take_along_axis(probs, cand, axis=1)
        ok = np.all((v[:, :-1] > v[:, 1:]) | ((v[:, :-1] == v[:, 1:]) & (cand[:, :-1] < cand[:, 1:])), axis=1)
        rest = probs.copy()
        np.put_along_axis(rest, cand, -np.inf, axis=1)
        ok &= rest.max(axis=1) < v[:, -1]
        if not ok.all():
            cand[~ok] = _top_order(probs[~ok], r)
        return cand
    if r >= k:
        return np.argsort(-probs, axis=1, kind="stable")[:, :r]
    part = np.argpartition(-probs, r, axis=1)[:, : r + 1]
    vals = np.take_along_axis(probs, part, axis=1)
    boundary = vals[:, r]
    tie = np.any(vals[:, :r] == boundary[:, None], axis=1)
    cand = np.sort(part[:, :r], axis=1)
    top = np.take_along_axis(cand, np.argsort(-np.take_along_axis(probs, cand, axis=1), axis=1, kind="stable"), axis=1)
    if tie.any():
        top[tie] = np.argsort(-probs[tie], axis=1, kind="stable")[:, :r]
    return top


def network_scores(logits: Any, labels: Any) -> NetworkScores:
    """Softmax probabilities and the stable descending class order of one network, computed once.

    Parameters
    ----------
    logits : array-like (N, K)
        Logits or log-probabilities.
    labels : array-like (N,)
        Integer labels in [0, K).

    Examples
    --------
    >>> net = network_scores([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]], [0, 1])
    >>> net.order.tolist()
    [[0, 1, 2], [2, 0, 1]]
    """
    from ..calibrators import softmax
    from ..validation import check_labels, check_logits

    z = check_logits(logits)
    y = check_labels(labels, z.shape[0], z.shape[1])
    p = softmax(z)
    order, _ = _sort_rows(-p)  # argsort(-p, axis=1, kind="stable"), the same order, in half the time at K = 100
    return NetworkScores(z, p, y, order)


# ---------------------------------------------------------------------------
# the spline of §4, many columns at once
# ---------------------------------------------------------------------------


def _sort_rows(xt: np.ndarray, hint: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stable argsort of each row of an (m, n) array and the sorted rows (see ``stable_row_sort``; ``hint``: a
    guess at the order, which makes the sort faster when close and never changes the result)."""
    from ..metrics.multiclass import stable_row_sort

    return stable_row_sort(xt, hint=hint)

@lru_cache(maxsize=16)
def _spline_design(n: int, n_knots: int) -> tuple[np.ndarray, np.ndarray]:
    """The least-squares solver and the derivative basis of the natural spline at the fractiles i/n (i = 1..n).

    Knots equally spaced in [0, 1]. The solver is the pseudo-inverse of the basis (``pinv(B) @ g`` is the
    least-squares fit of ``B @ coef = g``, as ``lstsq``; the basis has full column rank), computed once per
    ``(n, n_knots)``: every fit of a study has the same fractiles, so a fit is one small matrix product
    (``lstsq`` factorised the same basis again at every call, 10-20x the time).
    """
    from ..calibrators import natural_spline_basis

    t = np.arange(1, n + 1) / n
    knots = np.linspace(0.0, 1.0, n_knots)
    solver = np.linalg.pinv(natural_spline_basis(t, knots))
    solver.setflags(write=False)
    d1 = natural_spline_basis(t, knots, derivative=1)
    d1.setflags(write=False)
    return solver, d1


def _sorted_rows(xt: np.ndarray, order: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sort_rows` of (m, n) ``xt``, or the rows put in a known stable ``order``."""
    if order is None:
        return _sort_rows(xt)
    return order, np.take_along_axis(xt, order, axis=1)


def _fit_columns(s_cal: np.ndarray, c_cal: np.ndarray, n_knots: int) -> tuple[np.ndarray, np.ndarray]:
    """Per column: sorted calibration scores and the unclipped spline derivative gamma there, as (m, n) rows."""
    order, s = _sort_rows(np.ascontiguousarray(s_cal.T))
    return _fit_sorted(s, np.take_along_axis(np.ascontiguousarray(c_cal.T), order, axis=1), n_knots)


def _fit_sorted(s: np.ndarray, c: np.ndarray, n_knots: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_fit_columns` of (m, n) rows already in stable score order (``c``: their correctness)."""
    n = s.shape[1]
    c = c.astype(np.float64)
    g = (np.cumsum(c, axis=1) - np.cumsum(s, axis=1)) / n  # h_i - h~_i (Eq. 11)
    solver, d1 = _spline_design(n, n_knots)
    coef = solver @ g.T  # the least-squares coefficients
    return s, (d1 @ coef).T + s


def _check_columns(s_cal: Any, c_cal: Any, s_new: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, m) calibration scores in [0, 1] and correctness of the same shape; (n_new, m) new scores in [0, 1]."""
    s_cal = as_float_array(s_cal, "s_cal")
    c_cal = as_numeric_array(c_cal, "c_cal")
    s_new = as_float_array(s_new, "s_new")
    if s_cal.ndim != 2 or c_cal.shape != s_cal.shape:
        raise ValueError(f"s_cal and c_cal must be 2-D of the same shape; got {s_cal.shape} and {c_cal.shape}.")
    if s_new.ndim != 2 or s_new.shape[1] != s_cal.shape[1]:
        raise ValueError(f"s_new must be 2-D with {s_cal.shape[1]} columns; got shape {s_new.shape}.")
    for name, a in (("s_cal", s_cal), ("s_new", s_new)):
        if a.size == 0:
            raise ValueError(f"{name} is empty; at least one row is needed.")
        if not np.all(np.isfinite(a)) or a.min() < 0.0 or a.max() > 1.0:
            raise ValueError(f"{name} must hold finite scores in [0, 1].")
    if c_cal.dtype != bool and not np.all((c_cal == 0) | (c_cal == 1)):
        raise ValueError("c_cal must hold only 0/1 or bool correctness.")
    return s_cal, c_cal, s_new


def spline_columns(s_cal: Any, c_cal: Any, s_new: Any, *, n_knots: int = 6, clip: bool = True) -> np.ndarray:
    r"""Fit the spline recalibration of Gupta et al. 2021 (§4) to each column; apply it to new scores.

    For each column: sort the calibration scores, fit a natural cubic spline
    with ``n_knots`` knots equally spaced in the fractile :math:`t \in [0, 1]`
    by least squares to :math:`h_i - \tilde h_i` (Eq. 11), take
    :math:`\gamma = h' = (h - \tilde h)' + s` at the calibration scores
    (Proposition 4.1; tied scores share the mean of their values), and map a
    new score :math:`\sigma` to :math:`\gamma(s^{-1}(\sigma))` by linear
    interpolation between the nearest calibration scores (§4.2), clipped to
    [0, 1]. One least-squares solve serves all columns; each column equals
    ``SplineCalibrator(n_knots).fit(s_cal[:, j], c_cal[:, j]).transform(s_new[:, j])``.

    Parameters
    ----------
    s_cal, c_cal : array-like (n, m)
        Calibration scores in [0, 1] and 0/1 correctness, one score per column
        (e.g. the top-1..5 scores, or every class's probability).
    s_new : array-like (n_new, m)
        Scores to recalibrate.
    n_knots : int, default 6
    clip : bool, default True
        Clip the output to [0, 1] (the derivative of a least-squares spline can
        leave it).

    Returns
    -------
    ndarray (n_new, m)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(0.5, 1.0, (4000, 2))
    >>> c = rng.random((4000, 2)) < s ** 2                     # over-confident
    >>> out = spline_columns(s, c, np.array([[0.6, 0.9]]))
    >>> bool(np.all(np.abs(out - np.array([[0.36, 0.81]])) < 0.05))
    True
    """
    s_cal, c_cal, s_new = _check_columns(s_cal, c_cal, s_new)
    n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
    if s_cal.shape[0] < n_knots:
        raise ValueError(f"need at least n_knots = {n_knots} calibration rows; got {s_cal.shape[0]}.")
    clip = check_bool(clip, "clip")
    return _spline_columns(s_cal, c_cal, s_new, n_knots, clip=clip)


def _spline_columns(s_cal, c_cal, s_new, n_knots: int, *, clip: bool = True):
    """:func:`spline_columns` of checked input."""
    s, gamma = _fit_columns(s_cal, c_cal, n_knots)
    out = _interp_columns(s_new, s, gamma)
    return np.clip(out, 0.0, 1.0) if clip else out


def _spline_sorted(split: "_SortedSplit", n_knots: int, *, new: str = "test") -> np.ndarray:
    """:func:`_spline_columns` (clipped) from the sorted rows of a split, applied to its test (or calibration) rows."""
    s, gamma = _fit_sorted(split.s_cal, split.c_cal, n_knots)
    xs, order = (split.s_test, split.o_test) if new == "test" else (split.s_cal, split.cal_order())
    return np.clip(_interp_sorted(xs, order, s, gamma), 0.0, 1.0)


def _interp_columns(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """Per column j of (n_new, m) ``x``: ``np.interp(x[:, j], unique xp[j], mean fp[j] per unique xp[j])``.

    ``xp`` and ``fp`` are (m, n) rows, ``xp`` sorted within each row. The new values are sorted first (one
    sort for all columns): interpolating sorted values is many times faster than in random order.
    """
    order, xs = _sort_rows(np.ascontiguousarray(x.T))
    return _interp_sorted(xs, order, xp, fp)


def _tie_means(col: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of sorted ``col`` and the mean of ``f`` over each run of equal values (the points
    that :func:`_interp_sorted` interpolates between)."""
    starts = np.flatnonzero(np.concatenate(([True], col[1:] != col[:-1])))
    if starts.size == col.size:
        return col, f
    return col[starts], np.add.reduceat(f, starts) / np.diff(np.append(starts, col.size))


def _interp_sorted(xs: np.ndarray, order: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """:func:`_interp_columns` of new values given as sorted (m, n_new) rows ``xs`` and their stable ``order``."""
    out = np.empty_like(xs)
    rows = np.arange(xs.shape[0])[:, None]
    for j in range(xp.shape[0]):
        out[j] = np.interp(xs[j], *_tie_means(xp[j], fp[j]))
    back = np.empty_like(out)
    back[rows, order] = out
    return back.T


def isotonic_columns(s_cal: Any, c_cal: Any, s_new: Any) -> np.ndarray:
    r"""Isotonic regression of correctness on score, fitted to each column; applied to new scores.

    .. math:: \hat\gamma = \arg\min_{\gamma \text{ non-decreasing}} \sum_i (y_i - \gamma(s_i))^2

    Equal scores are merged (their mean correctness, weighted by count), the
    pool-adjacent-violators fit is clipped to [0, 1], and new scores are
    interpolated linearly between the calibration scores (constant beyond
    them): column by column the same as :class:`calibnb.IsotonicCalibrator`
    (scikit-learn's ``IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")``),
    without its per-fit overhead.

    Examples
    --------
    >>> isotonic_columns(np.array([[0.1], [0.4], [0.6], [0.9]]), np.array([[0], [1], [0], [1]]),
    ...                  np.array([[0.0], [0.5], [1.0]]))[:, 0].tolist()
    [0.0, 0.5, 1.0]
    """
    return _isotonic_columns(*_check_columns(s_cal, c_cal, s_new))


def _isotonic_columns(s_cal, c_cal, s_new):
    """:func:`isotonic_columns` of checked input."""
    c_cal = c_cal.astype(np.float64)
    order, xs = _sort_rows(np.ascontiguousarray(s_cal.T))
    ys = np.take_along_axis(np.ascontiguousarray(c_cal.T), order, axis=1)
    return np.clip(_interp_columns(s_new, xs, _isotonic_fit(xs, ys)), 0.0, 1.0)


def _isotonic_sorted(split: "_SortedSplit", *, new: str = "test") -> np.ndarray:
    """:func:`_isotonic_columns` from the sorted rows of a split, applied to its test (or calibration) rows."""
    xs = split.s_cal
    fitted = _isotonic_fit(xs, split.c_cal.astype(np.float64))
    new_s, order = (split.s_test, split.o_test) if new == "test" else (split.s_cal, split.cal_order())
    return np.clip(_interp_sorted(new_s, order, xs, fitted), 0.0, 1.0)


def _isotonic_fit(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """The isotonic fit at every sorted calibration score (m, n) of 0/1 outcomes ``ys`` in that order."""
    from scipy.optimize import isotonic_regression

    fitted = np.empty_like(xs)
    for j in range(xs.shape[0]):
        col = xs[j]
        starts = np.flatnonzero(np.concatenate(([True], col[1:] != col[:-1])))
        counts = np.diff(np.append(starts, col.size)).astype(np.float64)
        mean = np.add.reduceat(ys[j], starts) / counts
        fit = np.clip(isotonic_regression(mean, weights=counts).x, 0.0, 1.0)
        fitted[j] = np.repeat(fit, counts.astype(np.intp))  # intp: 32-bit Pyodide refuses int64 repeats
    return fitted


def histogram_columns(s_cal: Any, c_cal: Any, s_new: Any, *, n_bins: int = 15) -> np.ndarray:
    r"""Histogram binning (equal-width bins) fitted to each column; applied to new scores.

    .. math:: \hat c = \mathrm{acc}(B_{m(c)}) = \frac{1}{|B_m|}\sum_{j \in B_m} y_j

    Bin :math:`m` holds :math:`(m/M, (m+1)/M]` (the first also 0); a score
    whose bin holds no calibration score is left unchanged. Column by column
    the same as :class:`calibnb.HistogramBinning` (``binning="width"``), in one
    pass over all columns.

    Examples
    --------
    >>> histogram_columns(np.array([[0.2], [0.3], [0.7], [0.9]]), np.array([[0], [1], [1], [1]]),
    ...                   np.array([[0.1], [0.5], [0.51], [1.0]]), n_bins=2)[:, 0].tolist()
    [0.5, 0.5, 1.0, 1.0]
    """
    s_cal, c_cal, s_new = _check_columns(s_cal, c_cal, s_new)
    c_cal = c_cal.astype(np.float64)
    n_bins = check_n_bins(n_bins, "n_bins")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    m = s_cal.shape[1]
    offset = n_bins * np.arange(m)

    def bins(x):  # right-closed bins, the first also holds values <= e_1 (as HistogramBinning._bin)
        return np.clip(np.searchsorted(edges, x, side="left") - 1, 0, n_bins - 1) + offset

    b = bins(s_cal).ravel()
    count = np.bincount(b, minlength=m * n_bins)
    hits = np.bincount(b, weights=c_cal.ravel(), minlength=m * n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(count > 0, hits / np.maximum(count, 1), np.nan)
    out = acc[bins(s_new)]
    return np.where(np.isnan(out), s_new, out)


# ---------------------------------------------------------------------------
# one split: every method, every score
# ---------------------------------------------------------------------------


def _ks_columns(s: np.ndarray, c: np.ndarray, hint: np.ndarray | None = None) -> np.ndarray:
    """KS error (Eq. 12, stable sort) of every column of (n, m) scores against 0/1 correctness.

    ``hint``: (m, n) rows, a guess at each column's stable order (see :func:`_sort_rows`); the result is the same.
    """
    order, ss = _sort_rows(np.ascontiguousarray(s.T), hint)
    return _ks_sorted(ss, np.take_along_axis(np.ascontiguousarray(c.T), order, axis=1))


def _ks_sorted(ss: np.ndarray, cs: np.ndarray) -> np.ndarray:
    """:func:`_ks_columns` of (m, n) rows already in stable score order (``cs``: their correctness)."""
    d = cs.astype(np.float64) - ss
    return np.max(np.abs(np.cumsum(d, axis=1)), axis=1) / ss.shape[1]


def _rank_scores(probs: np.ndarray, labels: np.ndarray, top: np.ndarray, within: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(n, r_max + len(within)) scores and correctness: top-1..r_max (Eq. 3), then within-top-r (Eq. 5)."""
    p_top = np.take_along_axis(probs, top, axis=1)
    hit = top == labels[:, None]
    s = [p_top] + [np.clip(p_top[:, :r].sum(axis=1), 0.0, 1.0)[:, None] for r in within]
    c = [hit] + [hit[:, :r].any(axis=1)[:, None] for r in within]
    return np.hstack(s), np.hstack(c)


def _per_score(method: str, s_cal, c_cal, s_test, *, n_knots, n_bins_histogram, sorted_split=None,
               new: str = "test") -> np.ndarray:
    """Fit ``method`` to each column of the calibration scores; recalibrated test scores.

    ``sorted_split``: the same columns of the split already sorted
    (:class:`_SortedSplit`), used by the spline and isotonic fits instead of
    sorting (the result is the same); ``new="cal"`` then recalibrates the
    calibration rows themselves (``s_test`` is ``s_cal``).
    """
    if method == "spline":
        s_cal, c_cal, s_test = _check_columns(s_cal, c_cal, s_test)
        n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
        if s_cal.shape[0] < n_knots:
            raise ValueError(f"need at least n_knots = {n_knots} calibration rows; got {s_cal.shape[0]}.")
        if sorted_split is not None:
            return _spline_sorted(sorted_split, n_knots, new=new)
        return _spline_columns(s_cal, c_cal, s_test, n_knots)
    if method == "isotonic":
        checked = _check_columns(s_cal, c_cal, s_test)
        return _isotonic_sorted(sorted_split, new=new) if sorted_split is not None else _isotonic_columns(*checked)
    return np.clip(histogram_columns(s_cal, c_cal, s_test, n_bins=n_bins_histogram), 0.0, 1.0)


def evaluate_split(
    net: NetworkScores,
    calibration_index: Any,
    test_index: Any,
    *,
    methods: tuple = STUDY_METHODS,
    n_knots: int = 6,
    n_knots_within: int = 14,
    n_knots_ece: int = 13,
    n_bins_ece: int = 25,
    n_bins_histogram: int = 15,
    r_max: int = 5,
    within: tuple = (2, 3),
    classwise: bool = False,
    classwise_fits: bool = True,
    all_ranks: bool = True,
    all_ranks_max: int | None = None,
    ties_group: bool = False,
) -> dict:
    r"""Fit every method on the calibration split; score it on the test split (Gupta et al. 2021, §6, App. D).

    For a score :math:`s_i` with correctness :math:`y_i`, sorted by score, the
    KS error is :math:`\max_i |\frac1N\sum_{j\le i} y_j - \frac1N\sum_{j\le i} s_j|`
    (Eq. 11-12). Methods: ``uncalibrated`` (softmax), ``temperature`` and
    ``vector`` scaling (NLL; rescale the logits, one fit for every score);
    ``isotonic``, ``histogram`` and ``spline`` are fitted to each score
    separately after the r-th class is identified (top-r, Eq. 3), or to the
    sum of the top r (within-top-r, Eq. 5), so top-1 recalibration never
    changes the predicted class. The spline uses ``n_knots`` knots for top-r
    (§6), ``n_knots_within`` for within-top-r (Table 4) and ``n_knots_ece``
    for the ECE column (Table 6).

    Returns
    -------
    dict
        ``{method: {metric: value}}`` with fractions: ``ks_top{r}`` for
        r = 1..r_max, ``ks_within_top{r}``, ``accuracy``, ``ece``, ``mce``,
        ``mce_bin_items`` (test items in the bin where MCE is reached),
        ``brier_top1``, ``ks_top1_calibration`` (on the calibration split);
        ``classwise_ks`` when ``classwise`` (per-score methods are then fitted
        to every class's probability against "label == k", K fits; NaN for
        them when ``classwise_fits`` is False); for the spline,
        ``accuracy_all_ranks`` when ``all_ranks`` (every rank r = 1..K, or
        1..``all_ranks_max``, recalibrated by its own spline and the classes
        re-ranked by the recalibrated scores, as in the paper's Table 5).
        With ``ties_group``, also ``ks_top1_group`` (the top-1 test KS with
        ``ks_error(ties="group")``, invariant to the order of tied scores) and
        ``tied_top1`` (test items whose top-1 score equals another's), on the
        same recalibrated scores: the study's fits, not re-fits.

    Examples
    --------
    >>> from calibnb import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(4000, 6)) * 4
    >>> y = (rng.random((4000, 1)) < np.cumsum(softmax(z / 3), axis=1)).argmax(axis=1)
    >>> res = evaluate_split(network_scores(z, y), np.arange(2000), np.arange(2000, 4000),
    ...                      methods=("uncalibrated", "spline"))
    >>> bool(res["spline"]["ks_top1"] < res["uncalibrated"]["ks_top1"])
    True
    >>> res["spline"]["accuracy"] == res["uncalibrated"]["accuracy"]
    True
    """
    from .. import metrics

    if not isinstance(net, NetworkScores):
        raise TypeError(f"net must be a NetworkScores (from network_scores); got {type(net).__name__}.")
    n, k = net.probs.shape
    cal = _check_index(calibration_index, n, "calibration_index")
    test = _check_index(test_index, n, "test_index")
    in_cal = np.zeros(n, dtype=bool)
    in_cal[cal] = True
    if in_cal[test].any():
        raise ValueError("calibration_index and test_index overlap; the splits must be disjoint.")
    methods = tuple(check_choice(m, STUDY_METHODS, "methods") for m in ((methods,) if isinstance(methods, str) else methods))
    r_max = min(check_positive_int(r_max, "r_max"), k)
    n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
    n_knots_within = check_positive_int(n_knots_within, "n_knots_within", minimum=2)
    n_knots_ece = check_positive_int(n_knots_ece, "n_knots_ece", minimum=2)
    n_bins_ece = check_n_bins(n_bins_ece, "n_bins_ece")
    n_bins_histogram = check_n_bins(n_bins_histogram, "n_bins_histogram")
    classwise, classwise_fits, all_ranks, ties_group = (check_bool(classwise, "classwise"),
                                                        check_bool(classwise_fits, "classwise_fits"),
                                                        check_bool(all_ranks, "all_ranks"),
                                                        check_bool(ties_group, "ties_group"))
    within = tuple(check_positive_int(r, "within") for r in within if r <= k)
    names = [f"ks_top{r}" for r in range(1, r_max + 1)] + [f"ks_within_top{r}" for r in within]
    knots = [n_knots] * r_max + [n_knots_within] * len(within)
    y_cal, y_test = net.labels[cal], net.labels[test]
    s_all, c_all = _rank_scores(net.probs, net.labels, net.order[:, :r_max], within)
    s_cal, c_cal, s_test, c_test = s_all[cal], c_all[cal], s_all[test], c_all[test]
    # one stable sort of every score column over all items serves every split (and every method)
    split = _SortedSplit.of(net, ("rank", r_max, within), lambda: s_all, lambda: c_all, cal, test)

    def cols(idx):
        return None if split is None else split.rows(idx)

    class_splits = []  # the class columns' split (every class's probability sorted), built once, on first use

    def by_class():
        if not class_splits:
            class_splits.append(_SortedSplit.of(net, ("class",), lambda: net.probs,
                                                lambda: net.labels[:, None] == np.arange(k), cal, test))
        return class_splits[0]
    out = {}
    for method in methods:
        row: dict[str, float] = {}
        q_test = None
        if method == "uncalibrated":
            q_test, st, sc = net.probs[test], s_test, s_cal[:, 0]
        elif method in ("temperature", "vector"):
            model = scaling_fit(net, cal, method)
            q_cal, q_test = model.transform(net.logits[cal]), model.transform(net.logits[test])
            # softmax(z / T) keeps each row's order of softmax(z): the network's own top classes are the guess
            top_hint = net.order[test, :r_max] if method == "temperature" else None
            st, ct = _rank_scores(q_test, y_test, _top_order(q_test, r_max, top_hint), within)
            sc = np.max(q_cal, axis=1)
            sc_correct = np.argmax(q_cal, axis=1) == y_cal
        else:
            st = np.empty_like(s_test)
            for kn in sorted(set(knots)):
                idx = [j for j, kk in enumerate(knots) if kk == kn]
                st[:, idx] = _per_score(method, s_cal[:, idx], c_cal[:, idx], s_test[:, idx],
                                        n_knots=kn, n_bins_histogram=n_bins_histogram, sorted_split=cols(idx))
            sc = _per_score(method, s_cal[:, :1], c_cal[:, :1], s_cal[:, :1], n_knots=n_knots,
                            n_bins_histogram=n_bins_histogram, sorted_split=cols([0]), new="cal")[:, 0]
        ct_use = ct if method in ("temperature", "vector") else c_test
        # a per-score method maps each test score by a nearly monotone function: the column's own stable order is
        # a close guess at the order of the recalibrated scores (it only speeds up their sort)
        hint = split.o_test if split is not None and method in ("isotonic", "histogram", "spline") else None
        ks = (_ks_sorted(split.s_test, split.c_test) if method == "uncalibrated" and split is not None
              else _ks_columns(st, ct_use, hint))
        for name, v in zip(names, ks):
            row[name] = float(v)
        cal_correct = sc_correct if method in ("temperature", "vector") else c_cal[:, 0]
        row["ks_top1_calibration"] = float(metrics.ks_error(sc, cal_correct))
        conf, correct = st[:, 0], ct_use[:, 0]
        conf_ece = conf
        if method == "spline" and n_knots_ece != n_knots:
            conf_ece = _per_score("spline", s_cal[:, :1], c_cal[:, :1], s_test[:, :1], n_knots=n_knots_ece,
                                  n_bins_histogram=n_bins_histogram, sorted_split=cols([0]))[:, 0]
        row["accuracy"] = float(np.mean(correct))
        row["ece"] = metrics.ece(conf_ece, correct, n_bins=n_bins_ece)
        row["mce"] = metrics.mce(conf, correct, n_bins=n_bins_ece)
        row["mce_bin_items"] = float(_mce_bin_items(conf, correct, n_bins_ece))
        row["brier_top1"] = metrics.brier_top(conf, correct)
        if ties_group:
            row["ks_top1_group"] = float(metrics.ks_error(conf, correct, ties="group"))
            row["tied_top1"] = int(conf.size - np.unique(conf).size)
        if classwise:
            if q_test is None and not classwise_fits:
                row["classwise_ks"] = float("nan")
            elif method == "uncalibrated" and by_class() is not None:
                # the softmax's class columns are sorted already: classwise_ks without a sort
                row["classwise_ks"] = float(_ks_sorted(by_class().s_test, by_class().c_test).mean())
            else:
                hint = None
                if q_test is None:  # per-score method: one calibrator per class, fitted to P(k) against label == k
                    onehot_cal = net.labels[cal][:, None] == np.arange(k)
                    q_test = _per_score(method, net.probs[cal], onehot_cal, net.probs[test], n_knots=n_knots,
                                        n_bins_histogram=n_bins_histogram,
                                        sorted_split=None if method == "histogram" else by_class())  # binning: no order
                    # each class's recalibrated probability is a nearly monotone map of its probability, whose
                    # stable order is a close guess at its own (the guess only speeds up the sort)
                    hint = None if by_class() is None else by_class().o_test
                if hint is None:
                    row["classwise_ks"] = metrics.classwise_ks(q_test, y_test)
                else:  # classwise_ks(q_test, y_test), the same floats
                    order, q_sorted = _sort_rows(np.ascontiguousarray(q_test.T), hint)
                    row["classwise_ks"] = float(_ks_sorted(q_sorted, y_test[order] == np.arange(k)[:, None]).mean())
        if method == "spline" and all_ranks:
            ranks = k if all_ranks_max is None else min(k, check_positive_int(all_ranks_max, "all_ranks_max"))
            row["accuracy_all_ranks"] = _all_ranks_accuracy(net, cal, test, n_knots, ranks)
        out[method] = row
    return out


def _mce_bin_items(conf: np.ndarray, correct: np.ndarray, n_bins: int) -> int:
    """Number of items in the (first) equal-width bin where |acc - conf| is largest."""
    from .. import metrics

    idx = metrics.bin_indices(conf, n_bins=n_bins)
    cnt = np.bincount(idx, minlength=n_bins)
    acc = np.bincount(idx, weights=correct.astype(np.float64), minlength=n_bins)
    mean = np.bincount(idx, weights=conf, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(cnt > 0, np.abs(acc - mean) / np.maximum(cnt, 1), -1.0)
    return int(cnt[int(np.argmax(gap))])


def _all_ranks_accuracy(net: NetworkScores, cal: np.ndarray, test: np.ndarray, n_knots: int, ranks: int) -> float:
    """Test accuracy after recalibrating ranks r = 1..ranks with their own splines and re-ranking (Table 5)."""
    def scores():  # every item's probability at rank r
        return np.take_along_axis(net.probs, net.order[:, :ranks], axis=1)

    def hits():
        return net.order[:, :ranks] == net.labels[:, None]

    o_test = net.order[test, :ranks]
    split = _SortedSplit.of(net, ("ranks", ranks), scores, hits, cal, None)
    if split is None:
        s_all = scores()
        rec = _per_score("spline", s_all[cal], hits()[cal], s_all[test], n_knots=n_knots, n_bins_histogram=1)
        best = np.argmax(rec, axis=1)  # first (highest-ranked) on ties
    else:
        if split.s_cal.shape[1] < n_knots:
            raise ValueError(f"need at least n_knots = {n_knots} calibration rows; got {split.s_cal.shape[1]}.")
        s, gamma = _fit_sorted(split.s_cal, split.c_cal, n_knots)
        best = _first_argmax_of_fits(np.take_along_axis(net.probs[test], o_test, axis=1), s, gamma)
    pred = o_test[np.arange(test.size), best]
    return float(np.mean(pred == net.labels[test]))


def _first_argmax_of_fits(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """``argmax(clip(_interp_columns(x, xp, fp), 0, 1), axis=1)`` (the first column on ties), evaluating few values.

    ``x``: (n, m) new values, column j for the fit of row j of the sorted ``xp`` and ``fp`` (m, n_fit). A fit's
    interpolated values lie between the smallest and largest of its (tie-averaged) values, so column j can
    only win an item whose best value so far is below that largest value; the columns are visited in order
    and only such items are interpolated (a later column must be strictly larger to win, as in ``argmax``).
    The result is that of the full computation: the values evaluated are the same floats.
    """
    n, m = x.shape
    best_value = np.full(n, -np.inf)
    best = np.zeros(n, dtype=np.intp)
    for j in range(m):
        points, vals = _tie_means(xp[j], fp[j])
        # np.interp's value can pass the largest fp by a rounding: a margin that keeps the bound an upper bound
        top = float(np.clip(vals.max(), 0.0, 1.0))
        items = np.flatnonzero(best_value < top + 1e-12) if j else np.arange(n)
        if items.size == 0:
            continue
        v = np.clip(np.interp(x[items, j], points, vals), 0.0, 1.0)
        won = v > best_value[items]
        best_value[items[won]] = v[won]
        best[items[won]] = j
    return best


# ---------------------------------------------------------------------------
# Figures 1-10: calibration graphs with the spline's derivative
# ---------------------------------------------------------------------------


def spline_graph_data(conf: Any, correct: Any, *, n_knots: int = 6) -> Any:
    r"""The four calibration graphs of Figure 1, panels (c, d) from a spline's derivative.

    Panels (a, b) are the cumulative curves of Eq. 11 (as in
    :func:`calibnb.ks_graph_data`). For (c, d) the paper fits a spline to the
    cumulative accuracy of the shown data and plots its derivative,
    :math:`h'(t) = P(\text{correct} \mid s(t))` (Proposition 4.1), with the
    non-cumulative score :math:`s(t)` itself: both are evaluated at every
    sorted item, so panel (d) spans the full score range.

    Returns
    -------
    calibnb.plots.KSGraphData
        ``score`` = the sorted scores :math:`s(t)`; ``probability`` = the
        unclipped spline derivative :math:`h'(t)` at each of them;
        ``window_size`` = 0 (no smoothing window).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> s = rng.uniform(0.3, 1.0, 3000)
    >>> d = spline_graph_data(s, rng.random(3000) < s ** 2)
    >>> bool(d.score.min() < 0.31), bool(abs(d.probability[-1] - 1.0) < 0.1)
    (True, True)
    """
    from ..plots import ks_graph_data

    c, y = check_conf_correct(conf, correct)
    base = ks_graph_data(c, y)
    s_sorted = base.scores
    h_prime = spline_columns(c[:, None], y[:, None], s_sorted[:, None], n_knots=n_knots, clip=False)[:, 0]
    return dataclasses.replace(base, score=s_sorted, probability=h_prime, window_size=0)


def plot_graph_rows(rows: list, *, title: str | None = None, max_points: int = 600) -> Any:
    """Draw rows of the four KS calibration graphs (a-d) as one static figure.

    Parameters
    ----------
    rows : list of (label, KSGraphData)
        One row of panels (a, b, c, d) per entry; the label names the row.
    title : str, optional
    max_points : int, default 600
        Curves are thinned to at most this many points (the KS marker is kept
        exact) so that the static image renders quickly.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from ..plots import KSGraphData, plot_ks_graph

    if not rows:
        raise ValueError("rows is empty; give at least one (label, KSGraphData).")
    max_points = check_positive_int(max_points, "max_points", minimum=2)
    # fixed margins, no layout engine: constrained layout took half the drawing time of these 12-panel figures.
    # 3.1 inches a row: notebook 03's score panel (two selectors over three rows) is then 40 px below the 647 px
    # a notebook shows at 1366 x 768 (at 3.3 it was 4 px over; tests/test_browser.py measures it)
    fig, axes = plt.subplots(len(rows), 4, figsize=(15, 3.1 * len(rows)), squeeze=False,
                             gridspec_kw={"left": 0.05, "right": 0.99, "bottom": 0.06, "top": 0.91,
                                          "wspace": 0.28, "hspace": 0.5})
    for i, (label, data) in enumerate(rows):
        if not isinstance(data, KSGraphData):
            raise TypeError(f"rows[{i}] must hold a KSGraphData; got {type(data).__name__}.")
        step = max(1, data.fractile.size // max_points)
        keep = np.unique(np.append(np.arange(0, data.fractile.size, step), [data.ks_index, data.fractile.size - 1]))
        thin = dataclasses.replace(
            data, **{f: getattr(data, f)[keep] for f in ("fractile", "scores", "cum_score", "cum_accuracy", "score", "probability")},
            ks_index=int(np.searchsorted(keep, data.ks_index)))
        for j, panel in enumerate("abcd"):
            ax = plot_ks_graph(thin, panel=panel, ax=axes[i, j])
            ax.locator_params(nbins=_PANEL_TICKS)
            if panel in "cd":
                for line in ax.get_lines():
                    if line.get_gid() == "probability":
                        line.set_label("probability (spline derivative)")
                ax.legend(loc="upper left", fontsize="small")
            # y given: matplotlib then skips placing the title clear of the axes' decorations at every draw
            # (a fifth of this figure's drawing time); with no ticks on top the place is y = 1, the same pixels
            ax.set_title(f"({panel}) {label}", fontsize="medium", y=1.0)
    if title:
        fig.suptitle(title)
    return fig


# ---------------------------------------------------------------------------
# paired bootstrap of a KS difference
# ---------------------------------------------------------------------------


#: Resamples per block of :func:`paired_ks_difference_ci` (32 x n float32: in cache for n of several thousand).
_BOOT_BLOCK = 32
#: Resamples x items from which ``CALIBNB_KERNEL=auto`` runs the compiled pass (numba) of :func:`paired_ks_difference_ci`.
_BOOT_COMPILED_MIN = 1 << 15
#: Resamples summed side by side in that compiled pass.
_BOOT_ROWS = 8
_boot_kernel: dict = {}  # the compiled pass, built once (calibnb.validation.choose_compiled)


class _BootKernel:
    """The compiled pass of :func:`paired_ks_difference_ci` (numba), built on first use.

    ``resampled_ks(w, order, d, top)``: for each row ``r`` of the float32
    bootstrap multiplicities ``w`` (S, n), the largest
    ``|sum_{j <= i} w[r, order[j]] * d[j]|`` over ``i``, written to ``top[r]``.
    Each row's running sum is the float32 sequence of the NumPy path (``take``,
    ``multiply``, a sequential ``cumsum``, ``abs``, ``max``): one product and one
    addition per item in item order, so the results are equal bit for bit
    (``tests/papers/test_gupta2021_kernel.py``). :data:`_BOOT_ROWS` rows are summed
    side by side, so one row's additions do not wait on each other's latency; the
    NumPy path wrote and read the (S, n) products five times.
    """

    def __init__(self):
        from ..jit import njit  # imports numba: only here, on first use

        @njit(nogil=True)
        def resampled_ks(w, order, d, top):
            s, n = w.shape
            acc = np.zeros(_BOOT_ROWS, dtype=np.float32)
            big = np.zeros(_BOOT_ROWS, dtype=np.float32)
            for r0 in range(0, s - s % _BOOT_ROWS, _BOOT_ROWS):
                acc[:] = 0.0
                big[:] = 0.0
                for i in range(n):
                    o = order[i]
                    di = d[i]
                    for q in range(_BOOT_ROWS):
                        a = acc[q] + w[r0 + q, o] * di
                        acc[q] = a
                        big[q] = max(big[q], abs(a))
                top[r0:r0 + _BOOT_ROWS] = big
            for r in range(s - s % _BOOT_ROWS, s):  # the last rows, one at a time
                a = np.float32(0.0)
                b = np.float32(0.0)
                for i in range(n):
                    a += w[r, order[i]] * d[i]
                    b = max(b, abs(a))
                top[r] = b

        self.resampled_ks = resampled_ks


def paired_ks_difference_ci(conf_a: Any, conf_b: Any, correct: Any, *, n_resamples: int = 1000, level: float = 0.95,
                            seed: Any = None) -> tuple[float, float, float]:
    r"""KS(a) - KS(b) on the same items, with a paired percentile bootstrap interval.

    Items are resampled jointly (the same multiset of items for both
    methods); a resample's KS is computed from multiplicities :math:`w_i` on
    each method's fixed sort order,
    :math:`\max_i |\sum_{j \le i} w_j (y_j - s_j)| / N`, so no resample is
    re-sorted.

    Returns
    -------
    (estimate, low, high)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(0.5, 1, 2000); y = rng.random(2000) < s
    >>> est, lo, hi = paired_ks_difference_ci(np.clip(s + 0.1, 0, 1), s, y, seed=0)
    >>> bool(lo > 0 and lo <= est <= hi)
    True
    """
    a = check_conf(conf_a, "conf_a")
    b = check_conf(conf_b, "conf_b")
    if a.shape != b.shape:
        raise ValueError(f"conf_a and conf_b must have the same length; got {a.size} and {b.size}.")
    y = check_correct(correct, a.size, "correct", other="conf_a")
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=10)
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    n = a.size
    # calibnb's one bootstrap draw; multiplicities <= n: exact in float32 (each block cast as it is written)
    w = np.empty((n_resamples, n), dtype=np.float32)
    start = 0
    for rows in bootstrap_weights(n, n_resamples, seed=seed):
        w[start:start + rows.shape[0]] = rows
        start += rows.shape[0]
    kernels = choose_compiled(n * n_resamples, _BOOT_COMPILED_MIN, _boot_kernel, _BootKernel)
    ks = []
    block = None if kernels is not None else np.empty((min(_BOOT_BLOCK, n_resamples), n), dtype=np.float32)
    for s in (a, b):
        order = np.argsort(s, kind="stable")
        d = (y[order].astype(np.float64) - s[order]).astype(np.float32)
        # float32 partial sums: error ~ n * 6e-8 on sums of size <= n, far below the KS resolution 1/n.
        # max |cumsum(w[:, order] * d)| per resample: the compiled pass (numba) in one pass over each
        # resample; NumPy a few resamples at a time in one reused buffer that stays in cache. Both do the
        # float32 operations of the whole (S, n) array in the same order: the same floats.
        top = np.empty(n_resamples, dtype=np.float32)
        if kernels is not None:
            kernels.resampled_ks(w, order, d, top)
        else:
            for start in range(0, n_resamples, block.shape[0]):
                rows = w[start:start + block.shape[0]]
                buf = block[: rows.shape[0]]
                np.take(rows, order, axis=1, out=buf)
                np.multiply(buf, d, out=buf)
                np.cumsum(buf, axis=1, out=buf)
                np.abs(buf, out=buf)
                np.max(buf, axis=1, out=top[start:start + rows.shape[0]])
        ks.append(top.astype(np.float64) / n)
    diff = ks[0] - ks[1]
    from ..metrics import ks_error

    est = ks_error(a, y) - ks_error(b, y)
    lo, hi = percentile_interval(diff, level=level)
    return est, lo, hi
