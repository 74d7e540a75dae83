"""Binary calibration metrics: confidences and correctness, as pure vectorised NumPy functions.

Every function takes confidences ``conf`` (1-D floats in [0, 1]) and correctness
``correct`` (1-D 0/1 or bool of the same length), validates them once with
:mod:`calibnb.validation`, and returns fractions (not percentages). The
reductions of class probabilities to ``(conf, correct)`` are in
:mod:`calibnb.metrics.multiclass`.

Conventions (``../shared/papers/README.md``, "Common decisions"):

* **Equal-width bins.** With ``M`` bins, bin ``m`` (0-based) holds the
  confidences in :math:`(m/M, (m+1)/M]`; bin 0 also holds exactly 0. Bin
  membership is exact: a confidence is compared, in float64, with the float64
  edges ``m / M`` (the doubles nearest to m/M), so an edge value such as
  ``0.3`` (the double ``0.29999999999999998889...``) with ``M = 10`` closes
  bin 2, and the next double up, ``0.1 + 0.2 = 0.30000000000000004``, opens
  bin 3. float32 input is binned by the value it holds, converted exactly to
  float64: ``np.float32(0.3)`` is ``0.30000001192092896`` and falls in bin 3,
  so float32 confidences and their float64 cast give identical bins, ECE,
  MCE and reliability tables (but float32(k/100) are not k/100: round
  vote-share confidences in float64, not float32).
* **Equal-mass bins.** Sort by confidence (stable: ties keep input order) and
  split into ``M`` contiguous groups whose sizes differ by at most one, the
  first groups taking the extra items, as :func:`numpy.array_split` does.
* **Empty bins** are skipped; **empty groups** (no correct or no wrong
  predictions) have error 0, i.e. reward 1 (Sakai 2024, Eqs. 6-7).
* **KS error.** Stable ascending sort; ``ties="order"`` evaluates every
  position (the value depends on the input order of tied confidences, as in
  Sakai's Tables 3 and 6); ``ties="group"`` evaluates only at the last item of
  each group of equal confidences and is invariant to that order.

The width-binned metrics and the KS error are written for millions of
predictions: the data are processed in cache-sized chunks (a Python loop over
chunks, never over instances), with no per-bin temporaries; see
``benchmarks/bench_metrics.py``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..validation import (
    check_choice,
    check_conf_correct,
    check_n_bins,
    check_scalar_in_range,
)

__all__ = [
    "bin_indices",
    "ece",
    "mce",
    "reliability_table",
    "ice",
    "macro_ce",
    "macro_ce_parts",
    "MacroCEParts",
    "rewards",
    "Rewards",
    "hmr",
    "ks_error",
    "ks_curves",
    "KSCurves",
    "brier_top",
]

_BINNINGS = ("width", "mass")
_TIES = ("order", "group")
# Items per chunk: the temporaries of one chunk stay in the CPU cache.
_CHUNK = 1 << 16


class MacroCEParts(NamedTuple):
    """Parts of MacroCE (Si et al. 2022, Section 4.2)."""

    ice_pos: float
    ice_neg: float
    macro_ce: float


class Rewards(NamedTuple):
    """Sakai 2024's rewards for suppressing overconfidence and underconfidence."""

    r_o: float
    r_u: float


class KSCurves(NamedTuple):
    """Cumulative curves behind the KS error (Gupta 2021 Eq. 11-12, Sakai 2024 Eq. 3-4).

    Attributes
    ----------
    scores : ndarray (N,)
        Confidences sorted ascending (stable: ties keep input order).
    correct : ndarray (N,) of bool
        Correctness in that order.
    fractile : ndarray (N,)
        ``i / N`` for ``i = 1..N``.
    cum_accuracy : ndarray (N,)
        :math:`h_i = \\frac{1}{N}\\sum_{j \\le i} \\text{correct}_j`.
    cum_score : ndarray (N,)
        :math:`\\tilde h_i = \\frac{1}{N}\\sum_{j \\le i} \\text{conf}_j`.
    gap : ndarray (N,)
        :math:`h_i - \\tilde h_i`.

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Eq. 11-12.
    .. [2] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 3-4.
    """

    scores: np.ndarray
    correct: np.ndarray
    fractile: np.ndarray
    cum_accuracy: np.ndarray
    cum_score: np.ndarray
    gap: np.ndarray


# --------------------------------------------------------------------------
# internal helpers
# --------------------------------------------------------------------------


# Scale slightly below M: the guess k = ceil(fl(c * M * (1 - 2**-50))) never
# overshoots the exact code K (c > fl((k-1)/M) always holds) and undershoots it
# by at most one, only for values within rounding of an edge (see _codes_into).
_EDGE_SHRINK = 1.0 - 2.0**-50
_NEAR = 2.0**-40


def _codes_into(c: np.ndarray, n_bins: int, t: np.ndarray, kf: np.ndarray, idx: np.ndarray, flag: np.ndarray) -> None:
    """Exact code ``K`` in 0..M (bin = max(K - 1, 0)) of every confidence, into ``idx``.

    ``K`` is the number of float64 edges ``E[m] = m / M`` (m = 0..M-1) below
    ``c``, i.e. ``E[K-1] < c <= E[K]`` exactly. The scaled guess ``k = ceil(
    fl(c * M * (1 - 2**-50)))`` satisfies ``c > E[k-1]`` (the scaled value is
    strictly below ``c * M`` by more than the rounding of ``E[k-1]``) and
    ``c <= E[k+1]``, so ``K = k + [c > E[k]]``. That comparison can only
    change ``k`` when the scaled value lies within rounding below an integer;
    one ``min`` of the distance to the ceiling skips it when no value does
    (random confidences), otherwise it runs on the chunk (``E[k]`` is the
    correctly rounded division ``k / M``). ``t``, ``kf`` (float) and ``flag``
    (bool) are scratch buffers of ``c``'s shape.
    """
    np.multiply(c, n_bins * _EDGE_SHRINK, out=t)
    np.ceil(t, out=kf)
    np.subtract(kf, t, out=t)  # distance to the ceiling, in [0, 1)
    if t.size and t.min() < _NEAR * n_bins:
        np.divide(kf, n_bins, out=t)  # E[k]
        np.greater(c, t, out=flag)
        np.add(kf, flag, out=kf)
    np.copyto(idx, kf, casting="unsafe")


def _width_codes(conf: np.ndarray, n_bins: int) -> np.ndarray:
    """Exact code ``K`` in 0..M of every confidence (any shape); bin = max(K - 1, 0)."""
    codes = np.empty(conf.shape, dtype=np.intp)
    _codes_into(conf, n_bins, np.empty(conf.shape), np.empty(conf.shape), codes, np.empty(conf.shape, dtype=bool))
    return codes


def _width_sums(conf: np.ndarray, correct: np.ndarray, n_bins: int, counts: bool):
    """Per equal-width bin: sum of (conf - correct) and, optionally, the count.

    Processes cache-sized chunks: exact codes (:func:`_codes_into`), subtract,
    and scatter-add -- a few passes over in-cache data, no per-bin temporaries.
    Returns arrays of length ``n_bins`` (code 0, i.e. conf == 0, folded into bin 0).
    """
    n = conf.shape[0]
    size = min(n, _CHUNK)
    diff_sum = np.zeros(n_bins + 1)
    count = np.zeros(n_bins + 1) if counts else None
    buf = np.empty(size)
    buf2 = np.empty(size)
    flags = np.empty(size, dtype=bool)
    codes = np.empty(size, dtype=np.intp)
    for start in range(0, n, _CHUNK):
        c = conf[start:start + _CHUNK]
        y = correct[start:start + _CHUNK]
        k = c.shape[0]
        t = buf[:k]
        idx = codes[:k]
        _codes_into(c, n_bins, t, buf2[:k], idx, flags[:k])
        np.subtract(c, y, out=t)
        np.add.at(diff_sum, idx, t)
        if count is not None:
            np.add.at(count, idx, 1.0)
    diff_sum[1] += diff_sum[0]
    if count is not None:
        count[1] += count[0]
        return diff_sum[1:], count[1:]
    return diff_sum[1:], None


def _mass_sizes(n: int, n_bins: int) -> np.ndarray:
    """Group sizes of ``numpy.array_split(range(n), n_bins)``."""
    q, r = divmod(n, n_bins)
    sizes = np.full(n_bins, q, dtype=np.intp)
    sizes[:r] += 1
    return sizes


def _sort_keys(conf: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Sorted int64 keys ``(bits(conf) << 1) | correct``.

    For non-negative doubles the IEEE bit pattern is monotone, and values
    <= 1.0 leave bit 62 clear, so the shifted key fits in a non-negative int64
    (``-0.0`` maps to the key of ``+0.0``). One ``numpy.sort`` of the keys
    gives the confidences in ascending order together with their correctness;
    within a group of equal confidences the wrong ones come first.
    """
    n = conf.shape[0]
    bits = conf.view(np.int64)
    keys = np.empty(n, dtype=np.int64)
    for start in range(0, n, _CHUNK):
        out = keys[start:start + _CHUNK]
        np.left_shift(bits[start:start + _CHUNK], 1, out=out)
        np.bitwise_or(out, correct[start:start + _CHUNK], out=out)
    keys.sort()
    return keys


def _fix_tie_order(keys: np.ndarray, conf: np.ndarray, correct: np.ndarray):
    """Sorted (values, correct) with ties in input order (a stable sort).

    ``keys`` come from :func:`_sort_keys`. Only groups of equal confidences
    that mix correct and wrong items need their input order; those items alone
    are re-sorted with a stable argsort.
    """
    vals = keys >> 1
    y = (keys & 1).astype(bool)
    if vals.shape[0] > 1:
        change = (vals[1:] == vals[:-1]) & (y[1:] != y[:-1])
        if change.any():
            mixed = vals[1:][change]  # one entry per mixed group, ascending
            ivals = conf.view(np.int64) << 1 >> 1
            pos = np.searchsorted(mixed, ivals)
            member = mixed[np.minimum(pos, mixed.shape[0] - 1)] == ivals
            sub = ivals[member]
            order = np.argsort(sub, kind="stable")
            lo = np.searchsorted(vals, mixed, side="left")
            hi = np.searchsorted(vals, mixed, side="right")
            mark = np.zeros(vals.shape[0] + 1, dtype=np.intp)
            np.add.at(mark, lo, 1)
            np.add.at(mark, hi, -1)
            in_mixed = np.cumsum(mark[:-1]) > 0
            y[in_mixed] = correct[member][order]
    return vals.view(np.float64), y


def _stable_sorted(conf: np.ndarray, correct: np.ndarray):
    """Confidences sorted ascending and correctness in the same (stable) order."""
    return _fix_tie_order(_sort_keys(conf, correct), conf, correct)


def _mass_stats(conf: np.ndarray, correct: np.ndarray, n_bins: int):
    """Per non-empty equal-mass bin: counts, sum of conf, sum of correct, min, max."""
    s_conf, s_y = _stable_sorted(conf, correct)
    sizes = _mass_sizes(conf.shape[0], n_bins)
    sizes = sizes[sizes > 0]
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    sum_conf = np.add.reduceat(s_conf, starts)
    n_correct = np.add.reduceat(s_y.astype(np.float64), starts)
    lower = s_conf[starts]
    upper = s_conf[starts + sizes - 1]
    return sizes.astype(np.float64), sum_conf, n_correct, lower, upper


def _check_binning(n_bins, binning) -> int:
    n_bins = check_n_bins(n_bins)
    check_choice(binning, _BINNINGS, "binning")
    return n_bins


# --------------------------------------------------------------------------
# binned metrics
# --------------------------------------------------------------------------


def bin_indices(conf, *, n_bins: int = 10, binning: str = "width") -> np.ndarray:
    """Bin index (0-based) of every confidence.

    Parameters
    ----------
    conf : array-like of shape (N,)
        Confidences in [0, 1].
    n_bins : int, default 10
        Number of bins ``M``.
    binning : {"width", "mass"}, default "width"
        Equal-width bins :math:`(m/M, (m+1)/M]` (bin 0 also holds 0), or
        equal-mass bins (stable sort, ``numpy.array_split`` sizes).

    Returns
    -------
    ndarray of int of shape (N,)

    Notes
    -----
    The one definition of equal-width bin membership in calibnb (ECE, MCE,
    the reliability table and every calibrator that bins use it): decided
    exactly in float64, against the float64 edges ``m / M``, from the value
    the caller passed. float32 input is converted exactly first, so
    ``np.float32(0.3)`` (``0.30000001192...``) is in bin 3 of 10, like its
    float64 value, while the double ``0.3`` closes bin 2.

    Examples
    --------
    >>> bin_indices([0.0, 0.1, 0.15, 0.3, 1.0], n_bins=10)
    array([0, 0, 1, 2, 9])
    >>> bin_indices([0.1 + 0.2, np.float32(0.3)], n_bins=10)  # just above the edge 0.3
    array([3, 3])
    >>> bin_indices([0.9, 0.1, 0.5, 0.1], n_bins=2, binning="mass")
    array([1, 0, 1, 0])
    """
    from ..validation import check_conf

    conf = check_conf(conf)
    n_bins = _check_binning(n_bins, binning)
    if binning == "width":
        return np.maximum(_width_codes(conf, n_bins) - 1, 0)
    order = np.argsort(conf, kind="stable")
    sizes = _mass_sizes(conf.shape[0], n_bins)
    out = np.empty(conf.shape[0], dtype=np.intp)
    out[order] = np.repeat(np.arange(n_bins), sizes)
    return out


def ece(conf, correct, *, n_bins: int = 10, binning: str = "width") -> float:
    """Expected calibration error.

    .. math::

        \\mathrm{ECE} = \\sum_{m=1}^{M} \\frac{|B_m|}{N}
        \\left|\\mathrm{acc}(B_m) - \\mathrm{conf}(B_m)\\right|
        = \\frac{1}{N}\\sum_{m=1}^{M}\\Big|\\sum_{i \\in B_m}(c_i - y_i)\\Big|

    where :math:`B_m` is the set of predictions in bin :math:`m`,
    :math:`\\mathrm{acc}(B_m)` their accuracy, :math:`\\mathrm{conf}(B_m)` their
    mean confidence :math:`c_i`, and :math:`y_i \\in \\{0, 1\\}` correctness.
    Guo et al. 2017; Si et al. 2022 Eq. 1; Sakai 2024 Eq. 1.

    Parameters
    ----------
    conf : array-like of shape (N,)
        Confidences in [0, 1].
    correct : array-like of shape (N,)
        1/True where the prediction is correct.
    n_bins : int, default 10
        At most 10**6.
    binning : {"width", "mass"}, default "width"
        See the module docstring for the exact bin conventions. Equal-width
        membership is exact in float64 against the edges ``m / M``
        (:func:`bin_indices`): float32 confidences are binned by the value
        they hold (``np.float32(0.3)`` is above 0.3, in bin 3 of 10), so
        float32 input and its float64 cast give the same ECE.

    Returns
    -------
    float in [0, 1]

    References
    ----------
    .. [1] Chuan Guo, Geoff Pleiss, Yu Sun, Kilian Q. Weinberger. 2017. "On Calibration of Modern Neural Networks". In Proceedings of the 34th International Conference on Machine Learning (ICML).
    .. [2] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Eq. 1.
    .. [3] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 1.

    Examples
    --------
    Sakai 2024, Example 1, System X (3 equal-mass bins):

    >>> conf = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    >>> correct = [1, 1, 0, 1, 0, 1, 1, 1, 1]
    >>> round(ece(conf, correct, n_bins=3, binning="mass"), 3)
    0.178
    """
    conf, correct = check_conf_correct(conf, correct)
    n_bins = _check_binning(n_bins, binning)
    n = conf.shape[0]
    if binning == "width":
        diff, _ = _width_sums(conf, correct, n_bins, counts=False)
        return float(np.abs(diff).sum() / n)
    count, sum_conf, n_correct, _, _ = _mass_stats(conf, correct, n_bins)
    return float(np.abs(sum_conf - n_correct).sum() / n)


def mce(conf, correct, *, n_bins: int = 10, binning: str = "width") -> float:
    """Maximum calibration error over non-empty bins.

    .. math::

        \\mathrm{MCE} = \\max_{m:\\,|B_m| > 0}
        \\left|\\mathrm{acc}(B_m) - \\mathrm{conf}(B_m)\\right|

    with the bins of :func:`ece`. Naeini et al. 2015; Sakai 2024 Eq. 1;
    Gupta et al. 2021 (Tables 6-7).

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    n_bins : int, default 10
    binning : {"width", "mass"}, default "width"

    Returns
    -------
    float in [0, 1]

    References
    ----------
    .. [1] Mahdi Pakdaman Naeini, Gregory F. Cooper, Milos Hauskrecht. 2015. "Obtaining Well Calibrated Probabilities Using Bayesian Binning". In Proceedings of the AAAI Conference on Artificial Intelligence.
    .. [2] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 1.
    .. [3] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR).

    Examples
    --------
    >>> conf = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    >>> correct = [1, 1, 0, 1, 0, 1, 1, 1, 1]
    >>> round(mce(conf, correct, n_bins=3, binning="mass"), 3)
    0.267
    """
    conf, correct = check_conf_correct(conf, correct)
    n_bins = _check_binning(n_bins, binning)
    if binning == "width":
        diff, count = _width_sums(conf, correct, n_bins, counts=True)
        keep = count > 0
        return float(np.max(np.abs(diff[keep]) / count[keep]))
    count, sum_conf, n_correct, _, _ = _mass_stats(conf, correct, n_bins)
    return float(np.max(np.abs(sum_conf - n_correct) / count))


def reliability_table(conf, correct, *, n_bins: int = 10, binning: str = "width"):
    """Per-bin statistics behind ECE, MCE and the reliability diagram.

    .. math::

        \\mathrm{gap}_m = \\mathrm{conf}(B_m) - \\mathrm{acc}(B_m)

    (positive: overconfident in that bin). Empty bins are omitted.

    Parameters
    ----------
    conf, correct, n_bins, binning :
        As in :func:`ece`.

    Returns
    -------
    pandas.DataFrame
        Columns ``bin`` (0-based index), ``lower``, ``upper`` (the bin edges
        ``m/M``, ``(m+1)/M`` for equal-width bins; the smallest and largest
        confidence in the bin for equal-mass bins), ``count``, ``n_correct``,
        ``mean_conf``, ``accuracy``, ``gap``.

    Examples
    --------
    >>> t = reliability_table([0.2, 0.25, 0.9], [0, 1, 1], n_bins=2)
    >>> t[["bin", "count", "accuracy"]].to_string(index=False)
    ' bin  count  accuracy\\n   0      2       0.5\\n   1      1       1.0'
    """
    import pandas as pd

    conf, correct = check_conf_correct(conf, correct)
    n_bins = _check_binning(n_bins, binning)
    if binning == "width":
        idx = np.maximum(_width_codes(conf, n_bins) - 1, 0)
        count = np.bincount(idx, minlength=n_bins).astype(np.float64)
        sum_conf = np.bincount(idx, weights=conf, minlength=n_bins)
        n_correct = np.bincount(idx, weights=correct, minlength=n_bins)
        bins = np.flatnonzero(count > 0)
        lower = bins / n_bins
        upper = (bins + 1) / n_bins
        count, sum_conf, n_correct = count[bins], sum_conf[bins], n_correct[bins]
    else:
        count, sum_conf, n_correct, lower, upper = _mass_stats(conf, correct, n_bins)
        bins = np.flatnonzero(_mass_sizes(conf.shape[0], n_bins) > 0)
    mean_conf = sum_conf / count
    accuracy = n_correct / count
    return pd.DataFrame(
        {
            "bin": bins.astype(np.int64),
            "lower": lower,
            "upper": upper,
            "count": count.astype(np.int64),
            "n_correct": np.rint(n_correct).astype(np.int64),
            "mean_conf": mean_conf,
            "accuracy": accuracy,
            "gap": mean_conf - accuracy,
        }
    )


# --------------------------------------------------------------------------
# instance-level metrics (Si 2022, Sakai 2024)
# --------------------------------------------------------------------------


def _group_sums(conf: np.ndarray, correct: np.ndarray):
    """(n_pos, n_neg, sum of conf over correct, sum of conf over wrong)."""
    n = conf.shape[0]
    n_pos = int(np.count_nonzero(correct))
    total = 0.0
    pos = 0.0
    buf = np.empty(min(n, _CHUNK))
    for start in range(0, n, _CHUNK):  # chunks stay in cache: one read of conf
        c = conf[start:start + _CHUNK]
        t = buf[:c.shape[0]]
        np.multiply(c, correct[start:start + _CHUNK], out=t)
        pos += float(t.sum())
        total += float(c.sum())
    return n_pos, n - n_pos, pos, total - pos


def _ice_parts(conf: np.ndarray, correct: np.ndarray) -> tuple[float, float]:
    n_pos, n_neg, pos, neg = _group_sums(conf, correct)
    ice_pos = (n_pos - pos) / n_pos if n_pos else 0.0
    ice_neg = neg / n_neg if n_neg else 0.0
    # Guard against rounding just below 0 (sum of ones minus sum of conf).
    return max(ice_pos, 0.0), max(ice_neg, 0.0)


def ice(conf, correct) -> float:
    """Instance-level calibration error.

    .. math::

        \\mathrm{ICE} = \\frac{1}{N}\\sum_{i=1}^{N} |y_i - c_i|

    Si et al. 2022, Section 4.2 (equal to equal-mass ECE with N bins, their
    footnote 4).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2.

    Examples
    --------
    >>> ice([0.9, 0.2], [1, 1])
    0.45
    """
    conf, correct = check_conf_correct(conf, correct)
    n_pos, n_neg, pos, neg = _group_sums(conf, correct)
    return float(((n_pos - pos) + neg) / conf.shape[0])


def macro_ce_parts(conf, correct) -> MacroCEParts:
    """ICE over the correct and over the wrong predictions, and their mean.

    .. math::

        \\mathrm{ICE}_{pos} = \\frac{1}{n_p}\\sum_{i: y_i = 1}(1 - c_i),\\quad
        \\mathrm{ICE}_{neg} = \\frac{1}{n_n}\\sum_{i: y_i = 0} c_i,\\quad
        \\mathrm{MacroCE} = \\tfrac{1}{2}(\\mathrm{ICE}_{pos} + \\mathrm{ICE}_{neg})

    Si et al. 2022, Section 4.2. An empty group (no correct or no wrong
    predictions) has error 0, as in Sakai 2024 Eqs. 6-7.

    Returns
    -------
    MacroCEParts(ice_pos, ice_neg, macro_ce)

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2.
    .. [2] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eqs. 6-7.

    Examples
    --------
    >>> macro_ce_parts([0.8, 0.6, 0.5], [1, 1, 0])
    MacroCEParts(ice_pos=0.3, ice_neg=0.5, macro_ce=0.4)
    """
    conf, correct = check_conf_correct(conf, correct)
    pos, neg = _ice_parts(conf, correct)
    return MacroCEParts(float(pos), float(neg), float((pos + neg) / 2))


def macro_ce(conf, correct) -> float:
    """Macro-averaged calibration error (Si et al. 2022, Section 4.2).

    .. math::

        \\mathrm{MacroCE} = \\tfrac{1}{2}(\\mathrm{ICE}_{pos} + \\mathrm{ICE}_{neg})
        = 1 - \\tfrac{1}{2}(R_O + R_U)

    with the parts of :func:`macro_ce_parts` and Sakai's rewards
    (:func:`rewards`).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2.
    .. [2] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research.

    Examples
    --------
    The average baseline (every prediction gets the accuracy) scores 0.5:

    >>> macro_ce([0.75] * 4, [1, 1, 1, 0])
    0.5
    """
    conf, correct = check_conf_correct(conf, correct)
    pos, neg = _ice_parts(conf, correct)
    return float((pos + neg) / 2)


def rewards(conf, correct) -> Rewards:
    """Rewards for suppressing overconfidence and underconfidence.

    .. math::

        O = \\sum_{i \\in I^-} c_i,\\quad U = \\sum_{i \\in I^+} (1 - c_i),\\quad
        R_O = 1 - O/|I^-|,\\quad R_U = 1 - U/|I^+|

    with :math:`R_O = 1` if :math:`I^-` (the wrong predictions) is empty and
    :math:`R_U = 1` if :math:`I^+` (the correct ones) is empty.
    Sakai 2024, Eqs. 5-7.

    Returns
    -------
    Rewards(r_o, r_u)

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eqs. 5-7.

    Examples
    --------
    >>> conf = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    >>> correct = [1, 1, 0, 1, 0, 1, 1, 1, 1]
    >>> r = rewards(conf, correct)
    >>> round(r.r_o, 3), round(r.r_u, 3)
    (0.5, 0.629)
    """
    conf, correct = check_conf_correct(conf, correct)
    pos, neg = _ice_parts(conf, correct)
    return Rewards(float(1.0 - neg), float(1.0 - pos))


def hmr(conf, correct, *, beta: float = 1.0) -> float:
    """Harmonic mean of rewards (Sakai 2024, Eq. 8 and footnote 1).

    .. math::

        \\mathrm{HMR}_\\beta = \\frac{(\\beta^2 + 1) R_O R_U}{\\beta^2 R_O + R_U},
        \\qquad \\mathrm{HMR}_1 = \\frac{2 R_O R_U}{R_O + R_U}

    with the rewards of :func:`rewards`; 0 when the denominator is 0 (for
    ``beta = 1``: when :math:`R_O = R_U = 0`). As in the F-measure, ``beta > 1``
    weights the underconfidence reward :math:`R_U` more.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    beta : float >= 0, default 1.0

    Returns
    -------
    float in [0, 1] (higher is better)

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 8.

    Examples
    --------
    >>> conf = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    >>> round(hmr(conf, [1, 1, 0, 1, 0, 1, 1, 1, 1]), 3)
    0.557
    """
    conf, correct = check_conf_correct(conf, correct)
    beta = check_scalar_in_range(beta, "beta", low=0.0)
    pos, neg = _ice_parts(conf, correct)
    r_o, r_u = 1.0 - neg, 1.0 - pos
    b2 = beta * beta
    den = b2 * r_o + r_u
    if den <= 0.0:
        return 0.0
    return float((b2 + 1.0) * r_o * r_u / den)


def brier_top(conf, correct) -> float:
    """Top-label Brier score (Gupta et al. 2021, Tables 6-7).

    .. math::

        \\mathrm{Brier} = \\frac{1}{N}\\sum_{i=1}^{N} (c_i - y_i)^2

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR).

    Examples
    --------
    >>> brier_top([0.9, 0.2], [1, 0])
    0.025
    """
    conf, correct = check_conf_correct(conf, correct)
    d = conf - correct
    return float(np.dot(d, d) / conf.shape[0])


# --------------------------------------------------------------------------
# KS error (Gupta 2021, Sakai 2024)
# --------------------------------------------------------------------------


def _ks_from_keys(keys: np.ndarray, n: int, ties: str):
    """max |cumsum(correct - conf)| / N from sorted keys, chunk by chunk.

    Returns None in "order" mode when a tie group mixes correct and wrong
    items (the key order then differs from the input order within the group).
    """
    carry = 0.0
    best = 0.0
    for start in range(0, n, _CHUNK):
        k = keys[start:start + _CHUNK]
        vals = k >> 1
        y = k & 1
        if ties == "order":
            # A tie group mixing wrong (bit 0) and correct (bit 1) items shows up
            # as adjacent keys 2v, 2v + 1: one diff pass finds the candidates.
            # The window starts one key early so a group across chunks is seen.
            w = keys[max(start - 1, 0):start + _CHUNK]
            step1 = np.flatnonzero(np.diff(w) == 1)
            if step1.size and np.any((w[step1] & 1) == 0):
                return None
            d = y - vals.view(np.float64)
            cs = np.cumsum(d)
            cs += carry
            best = max(best, float(cs.max()), float(-cs.min()))
            carry = float(cs[-1])
        else:
            d = y - vals.view(np.float64)
            cs = np.cumsum(d)
            cs += carry
            # Equal confidences have keys that differ by at most 1; the window
            # takes the next chunk's first key so a group across chunks is seen.
            w = keys[start:start + _CHUNK + 1]
            cand = np.flatnonzero(np.diff(w) <= 1)
            if cand.size:
                cand = cand[(w[cand + 1] >> 1) == (w[cand] >> 1)]  # not the last of its group
            if cand.size:
                last = np.ones(vals.shape[0], dtype=bool)
                last[cand] = False
                sel = cs[last]
            else:
                sel = cs
            if sel.size:
                best = max(best, float(sel.max()), float(-sel.min()))
            carry = float(cs[-1])
    return best / n


def ks_error(conf, correct, *, ties: str = "order") -> float:
    """Kolmogorov-Smirnov calibration error.

    .. math::

        h_i = \\frac{1}{N}\\sum_{j \\le i} y_{(j)},\\quad
        \\tilde h_i = \\frac{1}{N}\\sum_{j \\le i} c_{(j)},\\quad
        \\mathrm{KS} = \\max_{i} |h_i - \\tilde h_i|

    where :math:`c_{(1)} \\le \\dots \\le c_{(N)}` are the confidences sorted
    ascending and :math:`y_{(j)}` the matching correctness.
    Gupta et al. 2021, Eqs. 11-12; Sakai 2024, Eqs. 3-4.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    ties : {"order", "group"}, default "order"
        ``"order"``: stable sort (ties keep input order), max over all
        ``i = 1..N`` -- this reproduces Sakai's Tables 3 and 6.
        ``"group"``: max only over the last item of each group of equal
        confidences, so the value does not depend on the order of ties.
        Without ties both agree.

    Returns
    -------
    float in [0, 1]

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Eqs. 11-12.
    .. [2] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eqs. 3-4, Table 6.

    Examples
    --------
    Sakai 2024, Example 2, System X (Table 6):

    >>> conf = [0.5, 0.5, 0.5, 0.6, 0.6, 0.6, 0.7, 0.7, 0.7]
    >>> correct = [1, 0, 0, 1, 0, 1, 1, 0, 1]
    >>> round(ks_error(conf, correct), 3), round(ks_error(conf, correct, ties="group"), 3)
    (0.078, 0.056)
    """
    conf, correct = check_conf_correct(conf, correct)
    check_choice(ties, _TIES, "ties")
    n = conf.shape[0]
    keys = _sort_keys(conf, correct)
    out = _ks_from_keys(keys, n, ties)
    if out is None:  # "order" with mixed ties: restore input order in those groups
        s_conf, s_y = _fix_tie_order(keys, conf, correct)
        cs = np.cumsum(s_y - s_conf)
        out = float(np.max(np.abs(cs)) / n)
    return float(out)


def ks_curves(conf, correct) -> KSCurves:
    """Sorted scores and the cumulative curves of the KS error, for plotting.

    .. math::

        h_i = \\frac{1}{N}\\sum_{j \\le i} y_{(j)},\\qquad
        \\tilde h_i = \\frac{1}{N}\\sum_{j \\le i} c_{(j)},\\qquad i = 1..N

    (Gupta et al. 2021, Eqs. 11-12 and Figure 1a; Sakai 2024, Eq. 3 and
    Tables 3, 6). The sort is stable; ``max(abs(gap))`` equals
    ``ks_error(conf, correct, ties="order")``.

    Returns
    -------
    KSCurves(scores, correct, fractile, cum_accuracy, cum_score, gap)

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Eqs. 11-12, Figure 1.
    .. [2] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 3.

    Examples
    --------
    >>> c = ks_curves([0.4, 0.4, 0.4], [1, 1, 0])
    >>> np.round(c.gap, 3).tolist()
    [0.2, 0.4, 0.267]
    """
    conf, correct = check_conf_correct(conf, correct)
    n = conf.shape[0]
    scores, y = _stable_sorted(conf, correct)
    cum_acc = np.cumsum(y) / n
    cum_score = np.cumsum(scores) / n
    return KSCurves(
        scores=scores,
        correct=y,
        fractile=np.arange(1, n + 1) / n,
        cum_accuracy=cum_acc,
        cum_score=cum_score,
        gap=cum_acc - cum_score,
    )
