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

Reference: K. Gupta, A. Rahimi, T. Ajanthan, T. Mensink, C. Sminchisescu and
R. Hartley, "Calibration of Neural Networks using Splines", ICLR 2021.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import as_rng, check_conf, check_positive_int, check_scalar_in_range

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "METRIC_COLUMNS",
    "SplineFigureData",
    "SplineRecovery",
    "SyntheticPopulation",
    "evaluate_methods",
    "plot_spline_figure",
    "spline_figure_data",
    "spline_recovery_error",
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

#: Columns of :func:`evaluate_methods`, all fractions.
METRIC_COLUMNS = (
    "ks_top1", "ks_top2", "ks_within_top2", "accuracy", "ece", "mce", "brier_top1", "ks_top1_calibration",
)


def _scores(probs: np.ndarray, labels: np.ndarray, kind: tuple[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """(score, correct) of the top-r (``("top", r)``) or within-top-r (``("within", r)``) prediction."""
    from .. import metrics

    mode, r = kind
    if mode == "top":
        return metrics.top_r(probs, labels, r=r)
    return metrics.within_top_r(probs, labels, r=r)


def _binary_calibrator(method: str, *, n_knots: int, kind: tuple[str, int], n_bins_histogram: int) -> Any:
    """A fresh calibrator of 1-D scores for ``method`` (isotonic, histogram or spline)."""
    from .. import calibrators

    if method == "isotonic":
        return calibrators.IsotonicCalibrator()
    if method == "histogram":
        return calibrators.HistogramBinning(n_bins=n_bins_histogram)
    return calibrators.SplineCalibrator(n_knots=n_knots, r=kind[1], mode=kind[0])


def evaluate_methods(
    logits: Any,
    labels: Any,
    *,
    calibration_index: Any,
    test_index: Any,
    methods: tuple[str, ...] = METHODS,
    n_knots: int = 6,
    n_knots_within: int = 14,
    n_knots_ece: int = 13,
    n_bins_ece: int = 25,
    n_bins_histogram: int = 15,
) -> "pd.DataFrame":
    r"""Fit every recalibration method on the calibration split; score it on the test split.

    This is one network's row of Gupta et al. 2021, Tables 1, 2, 4, 5, 6 and 7.
    For a score :math:`s_i` (the top-r probability, Eq. 3, or the sum of the
    top-r probabilities, Eq. 5) and correctness :math:`y_i` of test item
    :math:`i` sorted by score, the KS error is (Eq. 11-12)

    .. math::

        \mathrm{KS} = \max_i \Bigl| \frac1N \sum_{j \le i} y_j - \frac1N \sum_{j \le i} s_j \Bigr|.

    Methods: ``"uncalibrated"`` (softmax of the logits), ``"temperature"``
    (:class:`calibnb.TemperatureScaling`, NLL) and ``"vector"``
    (:class:`calibnb.VectorScaling`) rescale the logits, so one fit serves
    every score; ``"isotonic"`` (:class:`calibnb.IsotonicCalibrator`),
    ``"histogram"`` (:class:`calibnb.HistogramBinning`) and ``"spline"``
    (:class:`calibnb.SplineCalibrator`, §4) are fitted separately to each
    score (top-1, top-2, within-top-2) after the r-th class is identified, so
    they never change which class is predicted. The spline uses ``n_knots``
    for top-1 and top-2 (§6), ``n_knots_within`` for within-top-2 (Table 4)
    and ``n_knots_ece`` for the ECE column (Table 6).

    Parameters
    ----------
    logits : array-like of shape (N, K)
        Logits or log-probabilities of all N items.
    labels : array-like of shape (N,)
        Integer labels in [0, K).
    calibration_index, test_index : array-like of int
        Disjoint row indices of the calibration and the test split.
    methods : tuple of str
        A subset of :data:`METHODS`.
    n_knots, n_knots_within, n_knots_ece : int
        Spline knots (paper: 6, 14 and 13).
    n_bins_ece : int, default 25
        Equal-width bins of ECE and MCE (Table 6, 7).
    n_bins_histogram : int, default 15
        Bins of the histogram-binning baseline.

    Returns
    -------
    pandas.DataFrame
        Index ``method``; columns :data:`METRIC_COLUMNS` (fractions): test KS
        of top-1, top-2 and within-top-2 scores, test top-1 accuracy, ECE and
        MCE with ``n_bins_ece`` bins, top-1 Brier score
        :math:`\frac1N \sum_i (s_i - y_i)^2`, and the top-1 KS on the
        calibration split itself.

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR).

    Examples
    --------
    >>> from calibnb import softmax
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(4000, 5)) * 4
    >>> y = (rng.random((4000, 1)) < np.cumsum(softmax(z / 3), axis=1)).argmax(axis=1)
    >>> table = evaluate_methods(z, y, calibration_index=np.arange(2000), test_index=np.arange(2000, 4000),
    ...                          methods=("uncalibrated", "spline"))
    >>> bool(table.loc["spline", "ks_top1"] < table.loc["uncalibrated", "ks_top1"])
    True
    >>> bool(table.loc["spline", "accuracy"] == table.loc["uncalibrated", "accuracy"])
    True
    """
    import pandas as pd

    from .. import calibrators, metrics
    from ..validation import check_choice, check_labels, check_logits

    z = check_logits(logits)
    n, k = z.shape
    y = check_labels(labels, n, k)
    cal = _check_index(calibration_index, n, "calibration_index")
    test = _check_index(test_index, n, "test_index")
    if np.intersect1d(cal, test).size:
        raise ValueError("calibration_index and test_index overlap; the splits must be disjoint.")
    if isinstance(methods, str):
        methods = (methods,)
    methods = tuple(check_choice(m, METHODS, "methods") for m in methods)
    n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
    n_knots_within = check_positive_int(n_knots_within, "n_knots_within", minimum=2)
    n_knots_ece = check_positive_int(n_knots_ece, "n_knots_ece", minimum=2)
    n_bins_ece = check_positive_int(n_bins_ece, "n_bins_ece")
    n_bins_histogram = check_positive_int(n_bins_histogram, "n_bins_histogram")

    z_cal, y_cal, z_test, y_test = z[cal], y[cal], z[test], y[test]
    p_cal, p_test = calibrators.softmax(z_cal), calibrators.softmax(z_test)
    kinds = {"ks_top1": ("top", 1), "ks_top2": ("top", 2), "ks_within_top2": ("within", 2)}
    uncalibrated_scores: dict = {}  # kind -> (s_cal, c_cal, s_test, c_test), shared by the per-score methods
    rows = {}
    for method in methods:
        row: dict[str, float] = {}
        if method in ("uncalibrated", "temperature", "vector"):
            if method == "uncalibrated":
                q_cal, q_test = p_cal, p_test
            else:
                model = (calibrators.TemperatureScaling() if method == "temperature"
                         else calibrators.VectorScaling()).fit(z_cal, y_cal)
                q_cal, q_test = model.transform(z_cal), model.transform(z_test)
            for column, kind in kinds.items():
                s, c = _scores(q_test, y_test, kind)
                row[column] = metrics.ks_error(s, c)
            conf, correct = _scores(q_test, y_test, ("top", 1))
            conf_ece = conf
            row["ks_top1_calibration"] = metrics.ks_error(*_scores(q_cal, y_cal, ("top", 1)))
        else:
            for column, kind in kinds.items():
                knots = n_knots_within if kind[0] == "within" else n_knots
                if kind not in uncalibrated_scores:
                    uncalibrated_scores[kind] = (*_scores(p_cal, y_cal, kind), *_scores(p_test, y_test, kind))
                s_cal, c_cal, s_test, c_test = uncalibrated_scores[kind]
                f = _binary_calibrator(method, n_knots=knots, kind=kind, n_bins_histogram=n_bins_histogram)
                f.fit(s_cal, c_cal)
                row[column] = metrics.ks_error(np.clip(f.transform(s_test), 0.0, 1.0), c_test)
                if kind == ("top", 1):
                    conf, correct = np.clip(f.transform(s_test), 0.0, 1.0), c_test
                    row["ks_top1_calibration"] = metrics.ks_error(np.clip(f.transform(s_cal), 0.0, 1.0), c_cal)
                    conf_ece = conf
                    if method == "spline" and n_knots_ece != n_knots:
                        g = _binary_calibrator(method, n_knots=n_knots_ece, kind=kind,
                                               n_bins_histogram=n_bins_histogram).fit(s_cal, c_cal)
                        conf_ece = np.clip(g.transform(s_test), 0.0, 1.0)
        row["accuracy"] = float(np.mean(correct))
        row["ece"] = metrics.ece(conf_ece, correct, n_bins=n_bins_ece)
        row["mce"] = metrics.mce(conf, correct, n_bins=n_bins_ece)
        row["brier_top1"] = metrics.brier_top(conf, correct)
        rows[method] = {c: float(row[c]) for c in METRIC_COLUMNS}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(METRIC_COLUMNS))
    table.index.name = "method"
    return table


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
    if np.unique(idx).size != idx.size:
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
    n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
    mode, r = kind
    mode = check_choice(mode, ("top", "within"), "kind[0]")
    r = check_positive_int(r, "kind[1]")
    if calibration_size is not None:
        calibration_size = check_positive_int(calibration_size, "calibration_size", minimum=n_knots)
        if calibration_size < cal.size:
            cal = np.sort(as_rng(seed).choice(cal, size=calibration_size, replace=False))
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
            ax.set_title(f"({panel}) {split} split, {100 * graph.ks:.2f}% KS", fontsize="medium")
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
