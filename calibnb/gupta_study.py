"""Gupta et al. (2021) over several calibration/test splits: every table as counts over networks.

Used by ``notebooks/03_gupta2021_ks_splines.ipynb`` (to be folded into
``calibnb/papers/gupta2021.py`` with the rest of the paper's code):

* :func:`network_scores` -- one network's probabilities and its stable
  descending class order, computed once and shared by every split and method.
* :func:`evaluate_split` -- every method fitted on one calibration split and
  scored on its test split: top-r KS for r = 1..5 (Eq. 3-4, Appendix D),
  within-top-r KS (Eq. 5, Table 4), accuracy (Table 5, also with every rank
  recalibrated and re-ranked), ECE/MCE with 25 bins and the top-1 Brier score
  (Tables 6-7), class-wise KS (§3).
* :func:`spline_columns` -- the spline recalibration of §4 fitted to many
  scores at once (one least-squares solve for all columns); equal to
  :class:`calibnb.SplineCalibrator` column by column.
* :func:`spline_graph_data` -- the four calibration graphs of Figure 1 with
  panels (c, d) drawn from the derivative of a spline fitted to the shown
  data, as the paper does, over the full score range.
* :func:`paired_ks_difference_ci` -- a paired bootstrap interval of the
  difference of two methods' KS on the same test items.

Reference: K. Gupta, A. Rahimi, T. Ajanthan, T. Mensink, C. Sminchisescu and
R. Hartley, "Calibration of Neural Networks using Splines", ICLR 2021.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .validation import as_rng, check_choice, check_conf_correct, check_positive_int, check_scalar_in_range

__all__ = [
    "STUDY_METHODS",
    "NetworkScores",
    "network_scores",
    "evaluate_split",
    "spline_columns",
    "isotonic_columns",
    "spline_graph_data",
    "plot_graph_rows",
    "paired_ks_difference_ci",
]

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


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _top_order(probs: np.ndarray, r: int) -> np.ndarray:
    """The r most probable classes of each row, as ``argsort(-probs, stable)[:, :r]`` but without a full sort.

    Rows whose r-th and (r+1)-th largest probabilities tie fall back to the full stable sort, so the result is
    exactly that of the full sort.
    """
    n, k = probs.shape
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
    from .calibrators._common import check_logits
    from .validation import check_labels

    z = check_logits(logits)
    y = check_labels(labels, z.shape[0], z.shape[1])
    p = _softmax(z)
    return NetworkScores(z, p, y, np.argsort(-p, axis=1, kind="stable"))


# ---------------------------------------------------------------------------
# the spline of §4, many columns at once
# ---------------------------------------------------------------------------


def _argsort_columns(x: np.ndarray) -> np.ndarray:
    """``np.argsort(x, axis=0, kind="stable")`` for an (n, m) array, faster.

    Columns are sorted by the (unstable, faster) default sort; only columns that hold equal values, where the
    order of ties matters, are sorted again stably. Without ties both sorts give the same permutation.
    """
    xt = np.ascontiguousarray(x.T)
    order = np.argsort(xt, axis=1)
    xs = np.take_along_axis(xt, order, axis=1)
    tied = np.any(xs[:, 1:] == xs[:, :-1], axis=1)
    if tied.any():
        order[tied] = np.argsort(xt[tied], axis=1, kind="stable")
    return order.T


@lru_cache(maxsize=16)
def _spline_design(n: int, n_knots: int) -> tuple[np.ndarray, np.ndarray]:
    """Natural-spline basis and its derivative at the fractiles i/n (i = 1..n), knots equally spaced in [0, 1]."""
    from .calibrators._spline import natural_spline_basis

    t = np.arange(1, n + 1) / n
    knots = np.linspace(0.0, 1.0, n_knots)
    return natural_spline_basis(t, knots), natural_spline_basis(t, knots, derivative=1)


def _fit_columns(s_cal: np.ndarray, c_cal: np.ndarray, n_knots: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted calibration scores and the unclipped spline derivative gamma there, per column."""
    n = s_cal.shape[0]
    order = _argsort_columns(s_cal)
    s = np.take_along_axis(s_cal, order, axis=0)
    c = np.take_along_axis(c_cal, order, axis=0).astype(np.float64)
    g = (np.cumsum(c, axis=0) - np.cumsum(s, axis=0)) / n  # h_i - h~_i (Eq. 11)
    design, d1 = _spline_design(n, n_knots)
    coef, *_ = np.linalg.lstsq(design, g, rcond=None)
    return s, d1 @ coef + s


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
    s_cal = np.asarray(s_cal, dtype=np.float64)
    c_cal = np.asarray(c_cal)
    s_new = np.asarray(s_new, dtype=np.float64)
    if s_cal.ndim != 2 or c_cal.shape != s_cal.shape:
        raise ValueError(f"s_cal and c_cal must be 2-D of the same shape; got {s_cal.shape} and {c_cal.shape}.")
    if s_new.ndim != 2 or s_new.shape[1] != s_cal.shape[1]:
        raise ValueError(f"s_new must be 2-D with {s_cal.shape[1]} columns; got shape {s_new.shape}.")
    n_knots = check_positive_int(n_knots, "n_knots", minimum=2)
    if s_cal.shape[0] < n_knots:
        raise ValueError(f"need at least n_knots = {n_knots} calibration rows; got {s_cal.shape[0]}.")
    for name, a in (("s_cal", s_cal), ("s_new", s_new)):
        if not np.all(np.isfinite(a)) or a.min() < 0.0 or a.max() > 1.0:
            raise ValueError(f"{name} must hold finite scores in [0, 1].")
    s, gamma = _fit_columns(s_cal, c_cal, n_knots)
    out = _interp_columns(s_new, s, gamma)
    return np.clip(out, 0.0, 1.0) if clip else out


def _interp_columns(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """Per column, ``np.interp(x[:, j], unique xp, mean fp per unique xp)``; xp sorted within each column.

    The new values are sorted first (one sort for all columns): interpolating sorted values is many times
    faster than interpolating them in random order.
    """
    order = _argsort_columns(x)
    xs = np.take_along_axis(x, order, axis=0)
    out = np.empty_like(x)
    new = np.empty(x.shape[0])
    for j in range(xp.shape[1]):
        col = xp[:, j]
        starts = np.flatnonzero(np.concatenate(([True], col[1:] != col[:-1])))
        if starts.size == col.size:
            vals = fp[:, j]
        else:
            vals = np.add.reduceat(fp[:, j], starts) / np.diff(np.append(starts, col.size))
        new[:] = np.interp(xs[:, j], col[starts], vals)
        out[order[:, j], j] = new
    return out


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
    from scipy.optimize import isotonic_regression

    s_cal = np.asarray(s_cal, dtype=np.float64)
    c_cal = np.asarray(c_cal, dtype=np.float64)
    s_new = np.asarray(s_new, dtype=np.float64)
    if s_cal.ndim != 2 or c_cal.shape != s_cal.shape or s_new.ndim != 2 or s_new.shape[1] != s_cal.shape[1]:
        raise ValueError(f"s_cal, c_cal must be 2-D of one shape and s_new 2-D with as many columns; got "
                         f"{s_cal.shape}, {c_cal.shape}, {s_new.shape}.")
    order = _argsort_columns(s_cal)
    xs = np.take_along_axis(s_cal, order, axis=0)
    ys = np.take_along_axis(c_cal, order, axis=0)
    fitted = np.empty_like(xs)
    for j in range(xs.shape[1]):
        col = xs[:, j]
        starts = np.flatnonzero(np.concatenate(([True], col[1:] != col[:-1])))
        counts = np.diff(np.append(starts, col.size)).astype(np.float64)
        mean = np.add.reduceat(ys[:, j], starts) / counts
        fit = np.clip(isotonic_regression(mean, weights=counts).x, 0.0, 1.0)
        fitted[:, j] = np.repeat(fit, counts.astype(np.int64))
    return np.clip(_interp_columns(s_new, xs, fitted), 0.0, 1.0)


# ---------------------------------------------------------------------------
# one split: every method, every score
# ---------------------------------------------------------------------------


def _ks_columns(s: np.ndarray, c: np.ndarray) -> np.ndarray:
    """KS error (Eq. 12, stable sort) of every column of (n, m) scores against 0/1 correctness."""
    order = _argsort_columns(s)
    d = np.take_along_axis(c, order, axis=0).astype(np.float64) - np.take_along_axis(s, order, axis=0)
    return np.max(np.abs(np.cumsum(d, axis=0)), axis=0) / s.shape[0]


def _rank_scores(probs: np.ndarray, labels: np.ndarray, top: np.ndarray, within: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(n, r_max + len(within)) scores and correctness: top-1..r_max (Eq. 3), then within-top-r (Eq. 5)."""
    p_top = np.take_along_axis(probs, top, axis=1)
    hit = top == labels[:, None]
    s = [p_top] + [np.clip(p_top[:, :r].sum(axis=1), 0.0, 1.0)[:, None] for r in within]
    c = [hit] + [hit[:, :r].any(axis=1)[:, None] for r in within]
    return np.hstack(s), np.hstack(c)


def _per_score(method: str, s_cal, c_cal, s_test, *, n_knots, n_bins_histogram) -> np.ndarray:
    """Fit ``method`` to each column of the calibration scores; recalibrated test scores."""
    from . import calibrators

    if method == "spline":
        return spline_columns(s_cal, c_cal, s_test, n_knots=n_knots)
    if method == "isotonic":
        return isotonic_columns(s_cal, c_cal, s_test)
    out = np.empty_like(s_test)
    for j in range(s_cal.shape[1]):
        f = calibrators.IsotonicCalibrator() if method == "isotonic" else calibrators.HistogramBinning(n_bins_histogram)
        out[:, j] = np.clip(f.fit(s_cal[:, j], c_cal[:, j]).transform(s_test[:, j]), 0.0, 1.0)
    return out


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
    all_ranks: bool = True,
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
        to every class's probability against "label == k", K fits); for the
        spline, ``accuracy_all_ranks`` when ``all_ranks`` (every rank
        r = 1..K recalibrated by its own spline and the classes re-ranked by
        the recalibrated scores, as in the paper's Table 5).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(4000, 6)) * 4
    >>> y = (rng.random((4000, 1)) < np.cumsum(_softmax(z / 3), axis=1)).argmax(axis=1)
    >>> res = evaluate_split(network_scores(z, y), np.arange(2000), np.arange(2000, 4000),
    ...                      methods=("uncalibrated", "spline"))
    >>> bool(res["spline"]["ks_top1"] < res["uncalibrated"]["ks_top1"])
    True
    >>> res["spline"]["accuracy"] == res["uncalibrated"]["accuracy"]
    True
    """
    from . import calibrators, metrics
    from .recalibration import _check_index

    if not isinstance(net, NetworkScores):
        raise TypeError(f"net must be a NetworkScores (from network_scores); got {type(net).__name__}.")
    n, k = net.probs.shape
    cal = _check_index(calibration_index, n, "calibration_index")
    test = _check_index(test_index, n, "test_index")
    if np.intersect1d(cal, test).size:
        raise ValueError("calibration_index and test_index overlap; the splits must be disjoint.")
    methods = tuple(check_choice(m, STUDY_METHODS, "methods") for m in ((methods,) if isinstance(methods, str) else methods))
    r_max = min(check_positive_int(r_max, "r_max"), k)
    within = tuple(check_positive_int(r, "within") for r in within if r <= k)
    names = [f"ks_top{r}" for r in range(1, r_max + 1)] + [f"ks_within_top{r}" for r in within]
    knots = [n_knots] * r_max + [n_knots_within] * len(within)
    y_cal, y_test = net.labels[cal], net.labels[test]
    top_cal, top_test = net.order[cal, :r_max], net.order[test, :r_max]
    s_cal, c_cal = _rank_scores(net.probs[cal], y_cal, top_cal, within)
    s_test, c_test = _rank_scores(net.probs[test], y_test, top_test, within)
    out = {}
    for method in methods:
        row: dict[str, float] = {}
        q_test = None
        if method == "uncalibrated":
            q_test, st, sc = net.probs[test], s_test, s_cal[:, 0]
        elif method in ("temperature", "vector"):
            model = (calibrators.TemperatureScaling() if method == "temperature" else calibrators.VectorScaling())
            model.fit(net.logits[cal], y_cal)
            q_cal, q_test = model.transform(net.logits[cal]), model.transform(net.logits[test])
            st, ct = _rank_scores(q_test, y_test, _top_order(q_test, r_max), within)
            sc = np.max(q_cal, axis=1)
            sc_correct = np.argmax(q_cal, axis=1) == y_cal
        else:
            st = np.empty_like(s_test)
            for kn in sorted(set(knots)):
                cols = [j for j, kk in enumerate(knots) if kk == kn]
                st[:, cols] = _per_score(method, s_cal[:, cols], c_cal[:, cols], s_test[:, cols],
                                         n_knots=kn, n_bins_histogram=n_bins_histogram)
            sc = _per_score(method, s_cal[:, :1], c_cal[:, :1], s_cal[:, :1], n_knots=n_knots,
                            n_bins_histogram=n_bins_histogram)[:, 0]
        ct_use = ct if method in ("temperature", "vector") else c_test
        for name, v in zip(names, _ks_columns(st, ct_use)):
            row[name] = float(v)
        cal_correct = sc_correct if method in ("temperature", "vector") else c_cal[:, 0]
        row["ks_top1_calibration"] = float(metrics.ks_error(sc, cal_correct))
        conf, correct = st[:, 0], ct_use[:, 0]
        conf_ece = conf
        if method == "spline" and n_knots_ece != n_knots:
            conf_ece = spline_columns(s_cal[:, :1], c_cal[:, :1], s_test[:, :1], n_knots=n_knots_ece)[:, 0]
        row["accuracy"] = float(np.mean(correct))
        row["ece"] = metrics.ece(conf_ece, correct, n_bins=n_bins_ece)
        row["mce"] = metrics.mce(conf, correct, n_bins=n_bins_ece)
        row["mce_bin_items"] = float(_mce_bin_items(conf, correct, n_bins_ece))
        row["brier_top1"] = metrics.brier_top(conf, correct)
        if classwise:
            if q_test is None:  # per-score method: one calibrator per class, fitted to P(k) against label == k
                onehot_cal = net.labels[cal][:, None] == np.arange(k)
                q_test = _per_score(method, net.probs[cal], onehot_cal, net.probs[test], n_knots=n_knots,
                                    n_bins_histogram=n_bins_histogram)
            row["classwise_ks"] = metrics.classwise_ks(q_test, y_test)
        if method == "spline" and all_ranks:
            row["accuracy_all_ranks"] = _all_ranks_accuracy(net, cal, test, n_knots)
        out[method] = row
    return out


def _mce_bin_items(conf: np.ndarray, correct: np.ndarray, n_bins: int) -> int:
    """Number of items in the (first) equal-width bin where |acc - conf| is largest."""
    from . import metrics

    idx = metrics.bin_indices(conf, n_bins=n_bins)
    cnt = np.bincount(idx, minlength=n_bins)
    acc = np.bincount(idx, weights=correct.astype(np.float64), minlength=n_bins)
    mean = np.bincount(idx, weights=conf, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.where(cnt > 0, np.abs(acc - mean) / np.maximum(cnt, 1), -1.0)
    return int(cnt[int(np.argmax(gap))])


def _all_ranks_accuracy(net: NetworkScores, cal: np.ndarray, test: np.ndarray, n_knots: int) -> float:
    """Test accuracy after recalibrating every rank r = 1..K with its own spline and re-ranking (Table 5)."""
    rows_c, rows_t = np.arange(cal.size)[:, None], np.arange(test.size)[:, None]
    o_cal, o_test = net.order[cal], net.order[test]
    s_cal = net.probs[cal][rows_c, o_cal]
    c_cal = o_cal == net.labels[cal][:, None]
    s_test = net.probs[test][rows_t, o_test]
    rec = spline_columns(s_cal, c_cal, s_test, n_knots=n_knots)
    pred = o_test[np.arange(test.size), np.argmax(rec, axis=1)]  # first (highest-ranked) on ties
    return float(np.mean(pred == net.labels[test]))


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
    from .plots import ks_graph_data

    c, y = check_conf_correct(conf, correct)
    base = ks_graph_data(c, y)
    s_sorted = base.scores
    h_prime = spline_columns(c[:, None], y[:, None], s_sorted[:, None], n_knots=n_knots, clip=False)[:, 0]
    return dataclasses.replace(base, score=s_sorted, probability=h_prime, window_size=0)


def plot_graph_rows(rows: list, *, title: str | None = None, max_points: int = 1500) -> Any:
    """Draw rows of the four KS calibration graphs (a-d) as one static figure.

    Parameters
    ----------
    rows : list of (label, KSGraphData)
        One row of panels (a, b, c, d) per entry; the label names the row.
    title : str, optional
    max_points : int, default 1500
        Curves are thinned to at most this many points (the KS marker is kept
        exact) so that the static image renders quickly.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from .plots import KSGraphData, plot_ks_graph

    if not rows:
        raise ValueError("rows is empty; give at least one (label, KSGraphData).")
    max_points = check_positive_int(max_points, "max_points", minimum=2)
    fig, axes = plt.subplots(len(rows), 4, figsize=(15, 3.3 * len(rows)), constrained_layout=True, squeeze=False)
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
            if panel in "cd":
                for line in ax.get_lines():
                    if line.get_gid() == "probability":
                        line.set_label("probability (spline derivative)")
                ax.legend(loc="upper left", fontsize="small")
            ax.set_title(f"({panel}) {label}", fontsize="medium")
    if title:
        fig.suptitle(title)
    return fig


# ---------------------------------------------------------------------------
# paired bootstrap of a KS difference
# ---------------------------------------------------------------------------


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
    a, y = check_conf_correct(conf_a, correct)
    b, _ = check_conf_correct(conf_b, correct)
    if a.shape != b.shape:
        raise ValueError(f"conf_a and conf_b must have the same length; got {a.size} and {b.size}.")
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=10)
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    n = a.size
    rng = as_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    w = np.bincount((idx + n * np.arange(n_resamples)[:, None]).ravel(), minlength=n_resamples * n).reshape(n_resamples, n)
    ks = []
    for s in (a, b):
        order = np.argsort(s, kind="stable")
        d = (y[order].astype(np.float64) - s[order])
        ks.append(np.max(np.abs(np.cumsum(w[:, order] * d, axis=1)), axis=1) / n)
    diff = ks[0] - ks[1]
    from .metrics import ks_error

    est = ks_error(a, y) - ks_error(b, y)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(diff, [alpha, 1 - alpha])
    return est, float(lo), float(hi)
