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
``benchmarks/bench_metrics.py``. With :mod:`numba` installed, ECE, MCE and the
reliability table (equal-width bins), MacroCE, ICE, the rewards, HMR and the
Brier score run one compiled pass instead (``calibnb.metrics._kernels``;
``CALIBNB_KERNEL=numpy`` turns it off), which gives the same floats bit for
bit: the equal-width sums are added per bin in row order, and every sum over
items is kept in ``_LANES`` interleaved lanes per chunk (:func:`_lane_sums`,
per row :func:`_row_sums` for 2-D input and weights) by both paths.
"""

from __future__ import annotations

from typing import NamedTuple

import threading

import numpy as np

from .batch import batch_axis
from .registry import Metric, register
from ._kernels import CHUNK as _KERNEL_CHUNK
from ._kernels import LANES as _LANES
from ._kernels import compiled_inmemory
from ..validation import (
    as_numeric_array,
    check_choice,
    check_conf_correct,
    check_conf_correct_batch,
    check_correct,
    check_n_bins,
    check_positive_int,
    check_sample_weight,
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
    "kuiper_error",
    "ks_curves",
    "KSCurves",
    "brier_top",
    "auto_n_bins",
    "sweep_n_bins",
    "binomial_interval",
]

# The parameter descriptions every (conf, correct) metric shares, written once:
# ``%(conf_correct)s``, ``%(sample_weight)s``, ``%(n_bins)s`` (binned metrics) and ``%(returns)s`` (a value
# per row of 2-D input) in a docstring stand for them.
_PARAM_DOCS = {
    "%(conf_correct)s": """conf, correct : array-like of shape (N,) or (S, N)
        Confidences in [0, 1] and 0/1 correctness. 2-D input holds S systems
        (or resamples) of N items; the result then has shape (S,), equal row
        by row to 1-D calls, computed without a loop over rows.""",
    "%(sample_weight)s": """sample_weight : array-like of shape (N,) or (S, N), optional
        Non-negative item weights (multiplicities): integer weights give
        exactly the result of repeating each row that many times; real
        weights replace every count by a sum of weights. (S, N) weights with
        1-D ``conf`` evaluate S weightings of the same items at once.""",
    "%(n_bins)s": """n_bins : int, "auto" or "sweep", default 10
        Number of bins M (at most 10**6); ``"auto"``: :func:`auto_n_bins` of N
        (the number of items); ``"sweep"``: :func:`sweep_n_bins`, the
        monotonic sweep of Roelofs et al. 2022 (equal-mass bins only, no
        weights; 2-D input is then evaluated row by row, as b* differs per row).""",
    "%(returns)s": """Returns
    -------
    float in [0, 1], or ndarray of shape (S,) for 2-D input or 2-D ``sample_weight``""",
}


def _shared_param_docs(func):
    """Fill the shared parameter descriptions into ``func``'s docstring (see :data:`_PARAM_DOCS`)."""
    doc = func.__doc__ or ""
    for marker, text in _PARAM_DOCS.items():
        doc = doc.replace(marker, text)
    func.__doc__ = doc
    return func


_BINNINGS = ("width", "mass")
_TIES = ("order", "group")
_INTERVALS = ("wilson", "clopper-pearson")
# Items per chunk (the compiled kernels' CHUNK, whose sums follow the chunks): the temporaries of one chunk stay in
# the CPU cache.
_CHUNK = _KERNEL_CHUNK


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
    return _fold_code0(diff_sum, count)


def _fold_code0(diff_sum, count):
    """Per-bin arrays from per-code arrays (code 0, i.e. conf == 0, joins bin 0)."""
    diff_sum[1] += diff_sum[0]
    if count is not None:
        count[1] += count[0]
        return diff_sum[1:], count[1:]
    return diff_sum[1:], None


def _width_sums_compiled(kernels, conf, y, n_bins: int, counts: bool):
    """:func:`_width_sums` by the compiled kernel, or None when a value is out of range."""
    diff_sum = np.zeros(n_bins + 1)
    count = np.zeros(n_bins + 1) if counts else None
    bad = kernels.width_sums(counts)(conf, y, n_bins, diff_sum, diff_sum if count is None else count)
    return None if bad else _fold_code0(diff_sum, count)


def _lane_sums(x: np.ndarray, out: np.ndarray) -> None:
    """Add the lane sums of one chunk ``x`` to ``out`` (length ``_LANES``).

    Item ``i`` of the chunk goes to lane ``i % _LANES``; each lane is summed in
    item order (``numpy.add.reduce`` over axis 0 of the chunk viewed as rows
    of ``_LANES``, which adds row after row). The compiled kernels keep the
    same lanes, so both paths round alike; the caller sums the lanes at the end.
    """
    k = x.shape[0] // _LANES
    part = np.add.reduce(x[:k * _LANES].reshape(k, _LANES), axis=0)
    r = x.shape[0] - k * _LANES
    if r:
        part[:r] += x[k * _LANES:]
    out += part


def _compiled_pair(conf, correct, sample_weight=None):
    """(conf, correct as uint8, kernels) for the compiled 1-D unweighted path, or None.

    Taken for a C-contiguous 1-D float32/float64 ``conf`` of at least
    ``calibnb.metrics._kernels.MIN_ROWS`` items when the kernels are enabled.
    ``correct`` is validated here (cheap: one byte per item); ``conf`` is
    checked by the kernel as it goes, without a float64 copy of float32 input.
    """
    if sample_weight is not None or not isinstance(conf, np.ndarray) or conf.ndim != 1:
        return None
    if conf.dtype not in (np.float64, np.float32) or not conf.flags.c_contiguous or conf.shape[0] == 0:
        return None
    kernels = compiled_inmemory(conf.shape[0])
    if kernels is None:
        return None
    try:
        y = check_correct(correct, conf.shape[0])
    except (TypeError, ValueError):
        check_conf_correct(conf, correct)  # an error in conf is reported first, as on the NumPy path
        raise
    return conf, np.ascontiguousarray(y).view(np.uint8), kernels


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

    The keys are sorted as float64, through a view: each is below
    ``0x7FE0_0000_0000_0002`` (the key of a correct 1.0), so read as a double
    it is finite, non-negative and never NaN, and non-negative doubles order
    as their bit patterns do. NumPy's float64 sort was the faster here (10^7
    keys, its AVX2 sort: medians of 114-116 ms against 124-129 ms for int64;
    about the same with its AVX-512 sort). The keys of 0.0 and of
    subnormal confidences read as subnormal doubles, which compare as zero
    when the thread's floating-point unit flushes them (the DAZ flag some
    fast-math libraries set on load): then the keys are sorted as int64.
    """
    n = conf.shape[0]
    kernels = compiled_inmemory(n)
    if kernels is not None:  # one pass instead of two
        keys = _compiled_keys(kernels, conf, correct.view(np.uint8))
        if keys is None:  # cannot happen: every caller passes validated confidences
            raise RuntimeError("calibnb internal error: unvalidated confidences reached the sort keys")
    else:
        bits = conf.view(np.int64)
        keys = np.empty(n, dtype=np.int64)
        for start in range(0, n, _CHUNK):
            out = keys[start:start + _CHUNK]
            np.left_shift(bits[start:start + _CHUNK], 1, out=out)
            np.bitwise_or(out, correct[start:start + _CHUNK], out=out)
    _sort_in_place(keys)
    return keys


def _compiled_keys(kernels, conf: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The unsorted keys of :func:`_sort_keys` made by the compiled pass from float32/float64 ``conf`` and uint8
    ``y``; None when a confidence is not in [0, 1] (NaN included), which the pass checks as it goes."""
    keys = np.empty(conf.shape[0], dtype=np.int64)
    with _SORTED_LOCK:  # one call at a time, as the row lanes (threads compiling at once)
        bad = kernels.sort_keys()(conf, y, keys)
    return None if bad else keys


def _sort_in_place(keys: np.ndarray) -> None:
    """Sort the keys of :func:`_sort_keys` in place, through their float64 view unless subnormals are flushed."""
    if _SUBNORMALS[1] > _SUBNORMALS[0]:  # subnormals compare exactly in this thread
        keys.view(np.float64).sort()
    else:
        keys.sort()


#: 0.0 and the smallest subnormal double: the second compares greater unless subnormals are flushed (see _sort_keys).
_SUBNORMALS = np.array([0.0, 5e-324])


#: One call at a time of the compiled kernels around the sort (sort_keys, ks_keys, tie_fill): see _ROW_LANES_LOCK.
_SORTED_LOCK = threading.Lock()
#: Bits of the hash that pre-filters the items of mixed tie groups on the NumPy path (:func:`_fix_tie_order`): a
#: table of 2^20 flags (1 MiB), so that only the items it flags are looked up in the sorted group values. Smaller
#: tables flag more items of no group: at 10^7 with 12% tied, 2^14-2^18 flags took 232-573 ms against 196-279 ms.
_TIE_FILTER_BITS = 20
_TIE_HASH = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of bits * (2^64 / golden ratio)
_SIGN_OFF = np.int64(0x7FFF_FFFF_FFFF_FFFF)


def _tie_hash(bits: np.ndarray) -> np.ndarray:
    """Top ``_TIE_FILTER_BITS`` bits of ``bits * _TIE_HASH`` (wrapping uint64 product), as indices."""
    h = bits.view(np.uint64) * _TIE_HASH
    h >>= np.uint64(64 - _TIE_FILTER_BITS)
    return h.view(np.int64)


def _mixed_groups(keys: np.ndarray) -> np.ndarray:
    """The confidences' bits (int64, ascending) of the tie groups that hold both wrong and correct items.

    In sorted keys a group of value ``v`` reads ``2v, ..., 2v, 2v + 1, ..., 2v + 1``; two neighbours that
    differ by 1 with the first even are such a group's one step from wrong to correct (a step between two
    values, ``2v + 1`` to ``2v + 2``, starts odd). Chunk by chunk, so no temporary as long as the data.
    """
    n = keys.shape[0]
    found = []
    for start in range(0, n - 1, _CHUNK):
        w = keys[start:start + _CHUNK + 1]
        step = np.flatnonzero(np.diff(w) == 1)
        if step.size:
            step = step[(w[step] & 1) == 0]
            if step.size:
                found.append(w[step] >> 1)
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _fix_tie_order(keys: np.ndarray, conf: np.ndarray, correct: np.ndarray):
    """Sorted (values, correct) with ties in input order (a stable sort).

    ``keys`` come from :func:`_sort_keys` and are overwritten: the returned
    values are a float64 view of them (every caller is done with the keys).
    Only groups of equal confidences that mix correct and wrong items need
    their input order. Their items are found in one chunked pass over the
    input (a hash of each confidence's bits flags the few candidates, which
    are then looked up among the mixed groups' values), ordered by group
    with a stable sort that keeps input order inside each group (a radix
    sort while there are at most 2^16 such groups), and written over their
    groups' runs of the sorted correctness; with the compiled kernels, one
    pass over the input writes each item at its group's next place
    (``tie_fill``). The result is that of a stable argsort of ``conf``
    (``-0.0`` ties with ``0.0``, as in the keys).
    """
    n = keys.shape[0]
    mixed = _mixed_groups(keys)
    y = np.empty(n, dtype=bool)
    for start in range(0, n, _CHUNK):  # the correctness as the keys have it: wrong first in each group
        k = keys[start:start + _CHUNK]
        y[start:start + _CHUNK] = k & 1
        k >>= 1
    vals = keys
    if mixed.shape[0] == 0:
        return vals.view(np.float64), y
    # the runs of the mixed groups in sorted order
    lo = np.searchsorted(vals, mixed, side="left")
    sizes = np.searchsorted(vals, mixed, side="right") - lo
    kernels = compiled_inmemory(n)
    if kernels is not None:  # one pass over the input, each member written at its group's next place
        c8 = correct.view(np.uint8) if correct.dtype.itemsize == 1 else (correct != 0).view(np.uint8)
        table_bits = max(4, int(mixed.shape[0] - 1).bit_length() + 2)  # at most a quarter of the slots used
        with _SORTED_LOCK:  # one call at a time, as the row lanes (threads compiling at once)
            placed = kernels.tie_fill()(conf.view(np.int64), c8, mixed, table_bits, lo.copy(), y)
        if placed != int(sizes.sum()):  # cannot happen: every item of a mixed group is found once
            raise RuntimeError("calibnb internal error: the items of tied confidences were not all found")
        return vals.view(np.float64), y
    flags = np.zeros(1 << _TIE_FILTER_BITS, dtype=bool)
    flags[_tie_hash(mixed)] = True
    where, group = [], []
    ivals = conf.view(np.int64)
    for start in range(0, n, _CHUNK):
        bits = ivals[start:start + _CHUNK] & _SIGN_OFF  # -0.0 as 0.0
        cand = np.flatnonzero(flags[_tie_hash(bits)])
        if cand.size:
            cb = bits[cand]
            g = np.searchsorted(mixed, cb)
            np.minimum(g, mixed.shape[0] - 1, out=g)
            hit = mixed[g] == cb
            where.append(cand[hit] + start)
            group.append(g[hit])
    where = np.concatenate(where)
    group = np.concatenate(group)
    # their items in input order, group by group
    if where.shape[0] != int(sizes.sum()):  # cannot happen: every item of a mixed group is found once
        raise RuntimeError("calibnb internal error: the items of tied confidences were not all found")
    key = group.astype(np.uint16) if mixed.shape[0] <= 1 << 16 else group  # uint16: NumPy's stable radix sort
    order = np.argsort(key, kind="stable")
    first = np.cumsum(sizes) - sizes  # each group's first item among the members
    runs = np.repeat(lo - first, sizes) + np.arange(where.shape[0])
    y[runs] = correct[where[order]]
    return vals.view(np.float64), y


def _stable_sorted(conf: np.ndarray, correct: np.ndarray):
    """Confidences sorted ascending and correctness in the same (stable) order."""
    return _fix_tie_order(_sort_keys(conf, correct), conf, correct)


_MASS_LOCK = threading.Lock()


def _mass_stats(conf: np.ndarray, correct: np.ndarray, n_bins: int):
    """Per non-empty equal-mass bin: counts, sum of conf, sum of correct, min, max.

    With the compiled kernels, one pass over the sorted keys gives the same
    floats (``mass_stats`` in :mod:`calibnb.metrics._kernels`), unless a tie
    group mixing correct and wrong items straddles a bin edge.
    """
    sizes = _mass_sizes(conf.shape[0], n_bins)
    sizes = sizes[sizes > 0]
    keys = _sort_keys(conf, correct)
    kernels = compiled_inmemory(conf.shape[0])
    if kernels is not None:
        count, sum_conf, n_correct, lower, upper = (np.empty(sizes.shape[0]) for _ in range(5))
        with _MASS_LOCK:  # one call at a time, as the row lanes (bootstrap threads compiling at once)
            straddle = kernels.mass_stats()(keys, keys.view(np.float64), sizes, count, sum_conf, n_correct, lower,
                                            upper)  # keys untouched when it straddles, shifted in place if not
        if not straddle:
            return count, sum_conf, n_correct, lower, upper
        s_conf, s_y = _fix_tie_order(keys, conf, correct)
        with _MASS_LOCK:
            kernels.mass_sorted()(s_conf, s_y.view(np.uint8), sizes, count, sum_conf, n_correct, lower, upper)
        return count, sum_conf, n_correct, lower, upper
    s_conf, s_y = _fix_tie_order(keys, conf, correct)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    sum_conf = np.add.reduceat(s_conf, starts)
    n_correct = np.add.reduceat(s_y.view(np.uint8), starts, dtype=np.int64).astype(np.float64)  # exact counts
    lower = s_conf[starts]
    upper = s_conf[starts + sizes - 1]
    return sizes.astype(np.float64), sum_conf, n_correct, lower, upper


def _check_binning(n_bins, binning) -> int:
    n_bins = check_n_bins(n_bins)
    check_choice(binning, _BINNINGS, "binning")
    return n_bins


# --------------------------------------------------------------------------
# batch axis and sample weights: one general path
# --------------------------------------------------------------------------
# The 1-D, unweighted calls keep the chunked fast paths above. Everything else
# (conf, correct of shape (S, N); sample_weight of shape (N,) or (S, N)) goes
# through the functions below, vectorised over the S rows (no Python loop over
# systems). Weights are multiplicities: integer weights give exactly the
# result of repeating rows (np.repeat), and real weights generalise that.


def _prepare(conf, correct, sample_weight):
    """Validated conf, correct (1-D or 2-D), weights (None or float array), batched flag."""
    conf, correct = check_conf_correct_batch(conf, correct)
    w = check_sample_weight(sample_weight, conf.shape)
    batched = conf.ndim == 2 or (w is not None and w.ndim == 2)
    return conf, correct, w, batched


def _result(values, batched: bool):
    values = np.asarray(values, dtype=np.float64)
    return values if batched else float(values.reshape(-1)[0])


def _rows_weights(conf: np.ndarray, w):
    """Weights as a 2-D array (S, N) (ones when None), S the batch size."""
    n = conf.shape[-1]
    s = conf.shape[0] if conf.ndim == 2 else (w.shape[0] if w is not None and w.ndim == 2 else 1)
    if w is None:
        return np.ones((s, n))
    return np.broadcast_to(w, (s, n))


def _width_sums_general(conf, correct, w, n_bins: int, counts: bool = True):
    """Per row and equal-width bin: weighted sum of (conf - correct) and total weight, (S, M) each.

    Every row's items are added per bin in item order (one ``numpy.bincount``
    over the flattened rows, or the compiled kernel, which adds in the same
    order). ``counts=False`` returns None for the per-bin weights.
    """
    if conf.ndim == 1 and w is not None and w.ndim == 2:
        # One set of items, many weightings (bootstrap multiplicities): products with the
        # weight matrix (BLAS or sparse), faster than any scatter here (benchmarks/README.md,
        # bench_uncertainty); no compiled kernel, so both settings of CALIBNB_KERNEL give these.
        return _width_sums_weightings(conf, correct, w, n_bins, counts)
    wt = _rows_weights(conf, w)
    s, n = wt.shape
    kernels = compiled_inmemory(s * n)
    if kernels is not None:
        diff = np.zeros((s, n_bins))
        count = np.zeros((s, n_bins))
        kernels.width_rows(w is not None)(np.broadcast_to(conf, (s, n)), np.broadcast_to(correct.view(np.uint8), (s, n)),
                                          None if w is None else wt, n_bins, diff, count)
        return diff, (count if counts else None)
    bins = _width_codes_nd(conf, n_bins)
    np.subtract(bins, 1, out=bins)
    np.maximum(bins, 0, out=bins)
    d = conf - correct
    flat = (np.broadcast_to(bins, wt.shape) + (np.arange(s) * n_bins)[:, None]).ravel()
    diff = np.bincount(flat, weights=(np.broadcast_to(d, wt.shape) * wt).ravel(), minlength=s * n_bins)
    if not counts:
        return diff.reshape(s, n_bins), None
    count = np.bincount(flat, weights=wt.ravel(), minlength=s * n_bins)
    return diff.reshape(s, n_bins), count.reshape(s, n_bins)


def _width_sums_weightings(conf, correct, w, n_bins: int, counts: bool):
    """:func:`_width_sums_general` for 1-D items and (S, N) weights."""
    bins = _width_codes_nd(conf, n_bins)
    np.subtract(bins, 1, out=bins)
    np.maximum(bins, 0, out=bins)
    d = conf - correct
    n = conf.shape[0]
    if n > 1 and np.all(conf[1:] >= conf[:-1]):
        # sorted items: each bin is a contiguous block of columns
        edges = np.searchsorted(bins, np.arange(n_bins + 1))
        diff = np.zeros((w.shape[0], n_bins))
        count = np.zeros((w.shape[0], n_bins)) if counts else None
        for m in np.flatnonzero(np.diff(edges)):  # a loop over bins, not items or rows
            block = w[:, edges[m]:edges[m + 1]]
            diff[:, m] = block @ d[edges[m]:edges[m + 1]]
            if counts:
                count[:, m] = block.sum(axis=1)
        return diff, count
    from scipy import sparse

    cols = n_bins * (2 if counts else 1)
    rows = np.arange(n)
    if counts:
        design = sparse.csr_matrix(
            (np.concatenate([d, np.ones(n)]), (np.concatenate([rows, rows]), np.concatenate([bins, bins + n_bins]))),
            shape=(n, cols),
        )
    else:
        design = sparse.csr_matrix((d, (rows, bins)), shape=(n, cols))
    out = np.asarray(w @ design)
    return out[:, :n_bins], (out[:, n_bins:] if counts else None)


def _width_codes_nd(conf: np.ndarray, n_bins: int) -> np.ndarray:
    # The exact codes of bin_indices: the weighted and batched paths once used
    # ceil(conf * M * shrink) here, which put a value one float step above an
    # edge (0.1 + 0.2 for M = 10) in the lower bin, unlike the unweighted ECE.
    return _width_codes(conf, n_bins)


def _sorted_rows(conf, correct, w):
    """Rows sorted by confidence (stable): conf, correct as float, weights (S, N) or None."""
    if conf.ndim == 1:
        order = np.argsort(conf, kind="stable")
        sc, sy = conf[order], correct[order].astype(np.float64)
        sw = None if w is None else (w[..., order] if w.ndim == 2 else w[order][None, :])
        if sw is not None:
            sc, sy = np.broadcast_to(sc, sw.shape), np.broadcast_to(sy, sw.shape)
        else:
            sc, sy = sc[None, :], sy[None, :]
        return sc, sy, sw
    order = np.argsort(conf, axis=1, kind="stable")
    sc = np.take_along_axis(conf, order, axis=1)
    sy = np.take_along_axis(correct, order, axis=1).astype(np.float64)
    sw = None if w is None else np.take_along_axis(np.broadcast_to(w, conf.shape), order, axis=1)
    return sc, sy, sw


def _row_searchsorted(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per row: first index k with a[s, k] >= x[s, q] (rows of ``a`` non-decreasing)."""
    n = a.shape[1]
    lo = np.zeros(x.shape, dtype=np.intp)
    hi = np.full(x.shape, n, dtype=np.intp)
    for _ in range(int(n).bit_length() + 1):
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        v = np.take_along_axis(a, np.minimum(mid, n - 1), axis=1)
        right = active & (v < x)
        lo = np.where(right, mid + 1, lo)
        hi = np.where(active & ~right, mid, hi)
    return lo


def _mass_sums_general(conf, correct, w, n_bins: int):
    """Per row and equal-mass bin: total weight, weighted sums of conf and correct, (S, M) each.

    Equal-mass bins with weights: sort by confidence (stable) and give each
    item an interval of length w_i on the weight axis, in that order; bin m is
    the slice [B_m, B_{m+1}) of the total weight T, with the sizes of
    ``numpy.array_split`` (q + 1 for the first r bins, T = qM + r) when every
    weight of the row is an integer, and T/M each otherwise. An item that
    straddles a bin edge is split between the two bins in proportion, which is
    what repeating it w_i times and splitting the copies does.
    """
    sc, sy, sw = _sorted_rows(conf, correct, w)
    n = sc.shape[1]
    if sw is None:
        sizes = _mass_sizes(n, n_bins)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        nonempty = sizes > 0
        st = starts[nonempty]
        s = sc.shape[0]
        sum_c = np.zeros((s, n_bins))
        sum_y = np.zeros((s, n_bins))
        sum_c[:, nonempty] = np.add.reduceat(sc, st, axis=1)
        sum_y[:, nonempty] = np.add.reduceat(sy, st, axis=1)
        return np.broadcast_to(sizes.astype(np.float64), (s, n_bins)), sum_c, sum_y
    cw = np.cumsum(sw, axis=1)
    total = cw[:, -1]
    cc = np.cumsum(sw * sc, axis=1)
    cy = np.cumsum(sw * sy, axis=1)
    integral = np.all(sw == np.round(sw), axis=1)
    m = np.arange(n_bins + 1)
    t_int = np.round(total)
    q, r = np.floor_divide(t_int, n_bins), np.mod(t_int, n_bins)
    bounds_int = q[:, None] * m + np.minimum(m, r[:, None])
    bounds_real = total[:, None] * m / n_bins
    bounds = np.where(integral[:, None], bounds_int, bounds_real)
    bounds[:, -1] = total
    j = np.minimum(_row_searchsorted(cw, bounds), n - 1)
    wj = np.take_along_axis(sw, j, axis=1)
    cj = np.take_along_axis(sc, j, axis=1)
    yj = np.take_along_axis(sy, j, axis=1)
    start = np.take_along_axis(cw, j, axis=1) - wj
    step = bounds - start
    fc = np.take_along_axis(cc, j, axis=1) - wj * cj + step * cj
    fy = np.take_along_axis(cy, j, axis=1) - wj * yj + step * yj
    return np.diff(bounds, axis=1), np.diff(fc, axis=1), np.diff(fy, axis=1)


def _bin_sums(conf, correct, w, n_bins: int, binning: str):
    """(total weight, sum of conf - correct) per row and bin, (S, M) each."""
    if binning == "width":
        diff, count = _width_sums_general(conf, correct, w, n_bins)
        return count, diff
    count, sum_c, sum_y = _mass_sums_general(conf, correct, w, n_bins)
    return count, sum_c - sum_y


def _rows_shape(conf, w):
    """(S, N) of the batched/weighted path: S rows of conf or of the weights."""
    s = conf.shape[0] if conf.ndim == 2 else (w.shape[0] if w is not None and w.ndim == 2 else 1)
    return s, conf.shape[-1]


def _row_sums(x, shape) -> np.ndarray:
    """Per row of ``x`` broadcast to (S, N): the sum over items in the lanes of :func:`_lane_sums`."""
    x = np.ascontiguousarray(np.broadcast_to(x, shape), dtype=np.float64)
    s, n = shape
    lanes = np.zeros((s, _LANES))
    for start in range(0, n, _CHUNK):
        c = x[:, start:start + _CHUNK]
        k = c.shape[1] // _LANES
        part = np.add.reduce(c[:, :k * _LANES].reshape(s, k, _LANES), axis=1)
        r = c.shape[1] - k * _LANES
        if r:
            part[:, :r] += c[:, k * _LANES:]
        lanes += part
    return lanes.sum(axis=1)


_ROW_LANES_LOCK = threading.Lock()


def _row_lanes_compiled(conf, correct, w, brier: bool):
    """Per row and term, the lane sums of the compiled kernel (see :func:`_row_sums`), or None for NumPy."""
    shape = _rows_shape(conf, w)
    kernels = compiled_inmemory(shape[0] * shape[1])
    if kernels is None:
        return None
    # One call at a time: the bootstrap calls this from threads, and a first call that compiles (or
    # loads from numba's cache) while another thread does the same made numba fail to box the
    # result in a fresh environment ("NRT_adapt_ndarray_to_python: 'descr' is NULL").
    with _ROW_LANES_LOCK:
        lanes = kernels.row_lanes(w is not None, brier)(
            np.broadcast_to(conf, shape), np.broadcast_to(correct.view(np.uint8), shape),
            None if w is None else np.broadcast_to(w, shape))
    return [lanes[:, t].sum(axis=1) for t in range(lanes.shape[1])]


def _group_sums_general(conf, correct, w):
    """Per row: (total weight, weight of correct, weight of wrong, sum w c over correct, over wrong)."""
    shape = _rows_shape(conf, w)
    sums = _row_lanes_compiled(conf, correct, w, brier=False)
    if sums is not None and w is None:
        n_pos, pos, total = sums
        n = np.full(shape[0], float(shape[1]))
    elif sums is not None:
        n, n_pos, pos, total = sums
    else:
        y = correct.astype(np.float64)
        if w is None:
            n = np.full(shape[0], float(shape[1]))
            n_pos = _row_sums(y, shape)
            pos = _row_sums(conf * y, shape)
            total = _row_sums(conf, shape)
        else:
            wy = w * y
            n = _row_sums(w, shape)
            n_pos = _row_sums(wy, shape)
            pos = _row_sums(wy * conf, shape)
            total = _row_sums(w * conf, shape)
    return n, n_pos, n - n_pos, pos, total - pos


def _ice_parts_general(conf, correct, w):
    n, n_pos, n_neg, pos, neg = _group_sums_general(conf, correct, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        ice_pos = np.where(n_pos > 0, (n_pos - pos) / np.where(n_pos > 0, n_pos, 1.0), 0.0)
        ice_neg = np.where(n_neg > 1e-300, neg / np.where(n_neg > 1e-300, n_neg, 1.0), 0.0)
    return np.maximum(ice_pos, 0.0), np.maximum(ice_neg, 0.0)


def _cumulative_rows(conf, correct, w, ties: str):
    """Per row: the unnormalised cumulative differences C_k (0 where ``ties="group"`` skips k) and their divisor."""
    sc, sy, sw = _sorted_rows(conf, correct, w)
    r = sy - sc if sw is None else sw * (sy - sc)
    cs = np.cumsum(r, axis=1)
    if ties == "group":
        last = np.ones(sc.shape, dtype=bool)
        last[:, :-1] = sc[:, 1:] != sc[:, :-1]
        cs = np.where(last, cs, 0.0)  # 0 = C_0: neither the maximum of |C_k| nor the range changes
    total = float(sc.shape[1]) if sw is None else sw.sum(axis=1)
    return cs, total


def _ks_general(conf, correct, w, ties: str):
    cs, total = _cumulative_rows(conf, correct, w, ties)
    return np.abs(cs).max(axis=1) / total


# --------------------------------------------------------------------------
# number of bins: "auto" and the monotonic sweep
# --------------------------------------------------------------------------


def auto_n_bins(n: int) -> int:
    """Number of bins of ``n_bins="auto"``: :math:`M = \\lceil N^{1/3} \\rceil`.

    For a Lipschitz calibration function the squared bias of a binned
    estimate falls like :math:`M^{-2}` and its variance grows like
    :math:`M/N`; their sum is smallest for :math:`M \\propto N^{1/3}` (the
    rate of histogram regression). With constant 1 this gives 10 bins at
    N = 1,000 and 47 at N = 10^5. N is the number of items (the length of the
    last axis), also when ``sample_weight`` is given.

    References
    ----------
    .. [1] L. Györfi, M. Kohler, A. Krzyżak and H. Walk, *A Distribution-Free
       Theory of Nonparametric Regression*, Springer, 2002, Chapter 4
       (partitioning estimates, Theorem 4.3: rate with :math:`M \\propto N^{1/3}`
       in one dimension).

    Examples
    --------
    >>> auto_n_bins(1000), auto_n_bins(100_000)
    (10, 47)
    """
    n = check_positive_int(n, "n")
    return max(1, int(np.ceil(round(n ** (1.0 / 3.0), 9))))


def sweep_n_bins(conf, correct) -> int:
    """Number of equal-mass bins of the monotonic sweep (Roelofs et al. 2022).

    .. math::

        b^* = \\max\\{\\,b \\le N : \\bar y^{(b')}_1 \\le \\bar y^{(b')}_2 \\le
        \\dots \\le \\bar y^{(b')}_{b'} \\text{ for every } b' \\le b\\,\\}

    where :math:`\\bar y^{(b)}_k` is the accuracy of the k-th of b equal-mass
    bins (calibnb's convention: stable sort, ``numpy.array_split`` sizes). The
    sweep grows b until the bin accuracies stop being non-decreasing;
    ``ece(..., n_bins="sweep", binning="mass")`` uses b*. Each step costs
    O(b) (prefix sums), O(b*^2) in all; when the sorted correctness is itself
    non-decreasing every b qualifies and b* = N at once.

    References
    ----------
    .. [1] R. Roelofs, N. Cain, J. Shlens and M. C. Mozer, "Mitigating Bias in
       Calibration Error Estimation", AISTATS 2022, Section 4 (ECE_SWEEP, Eq. 8).

    Examples
    --------
    >>> sweep_n_bins([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    2
    """
    conf, correct = check_conf_correct(conf, correct)
    n = conf.shape[0]
    _, y = _stable_sorted(conf, correct)
    y = y.astype(np.float64)
    if n == 1 or np.all(y[1:] >= y[:-1]):
        return n
    cum = np.concatenate(([0.0], np.cumsum(y)))
    best = 1
    for b in range(2, n + 1):
        sizes = _mass_sizes(n, b)
        ends = np.cumsum(sizes)
        acc = (cum[ends] - cum[ends - sizes]) / sizes
        if np.any(acc[1:] < acc[:-1]):
            break
        best = b
    return best


def _resolve_n_bins(n_bins, binning: str, conf, correct, w):
    """An int, or the per-row counts of "sweep" (a list), from ``n_bins``."""
    check_choice(binning, _BINNINGS, "binning")
    if isinstance(n_bins, str):
        check_choice(n_bins, ("auto", "sweep"), "n_bins")
        if n_bins == "auto":
            return auto_n_bins(conf.shape[-1])
        if binning != "mass":
            raise ValueError('n_bins="sweep" is defined for equal-mass bins; pass binning="mass".')
        if w is not None:
            raise ValueError('n_bins="sweep" does not take sample_weight.')
        if conf.ndim == 1:
            return sweep_n_bins(conf, correct)
        return [sweep_n_bins(c, y) for c, y in zip(conf, correct)]  # a loop over rows: b* differs per row
    return check_n_bins(n_bins)


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

    Equal-width bins of the peers (``tests/test_conventions.py`` checks the
    runnable ones on values that sit on edges):

    * scikit-learn's ``calibration_curve(strategy="uniform")``: the same
      right-closed bins (``np.searchsorted`` on ``np.linspace`` edges, so an
      edge's membership follows the rounded ``linspace`` value rather than the
      exact :math:`m/M`); empty bins are dropped from its output;
    * relplot's ``binnedECE``: left-closed bins :math:`[m/M, (m+1)/M)` found by
      ``int(c * M)`` in floating point (``0.3 * 10`` rounds to bin 2, ``0.5`` is
      in bin 5), and a confidence of exactly 1 gets a bin of its own;
    * MAPIE's ``top_label_ece`` (``split_strategy="uniform"``): ``num_bins``
      *edges* ``np.linspace(0, 1, num_bins)``, i.e. ``num_bins - 1`` right-closed
      bins of width :math:`1/(\\mathrm{num\\_bins} - 1)` plus a bin holding exactly 0;
    * torchmetrics' ``calibration_error`` (per its source): left-closed bins
      ``torch.bucketize(conf, edges, right=True) - 1`` on float32 edges and
      float32 confidences, with exactly 1 in an extra bin of its own;
    * netcal's ``ECE`` (per its source, ``scipy.stats.binned_statistic_dd``):
      left-closed bins, the last one closed on both sides.

    Bin counting is the same everywhere: every item counts once, with weight
    ``|B_m| / N``, and empty bins contribute nothing.

    Equal-mass bins of the peers (also checked in ``tests/test_conventions.py``):

    * calibnb: stable sort, then ``numpy.array_split`` sizes (the first
      ``N mod M`` bins take one extra item); a group of tied confidences that
      straddles a cut is split there, in input order, so every bin has
      ``N // M`` or ``N // M + 1`` items;
    * scikit-learn's ``calibration_curve(strategy="quantile")``: edges
      ``np.percentile(conf, 100 k / M)`` (linear interpolation), right-closed
      bins; the same bins when the confidences have no ties and N is a
      multiple of M, otherwise the extra items can sit in other bins, and tied
      confidences always share one bin (bins can be unequal, or empty and
      dropped);
    * MAPIE's ``top_label_ece(split_strategy="quantile")``: ``num_bins``
      percentile *edges*, i.e. ``num_bins - 1`` bins plus a bin that holds only
      the items equal to the smallest confidence (as its ``"uniform"`` edges).

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


@batch_axis
@_shared_param_docs
def ece(conf, correct, *, n_bins: int | str = 10, binning: str = "width", sample_weight=None):
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
    %(conf_correct)s
    %(n_bins)s
    binning : {"width", "mass"}, default "width"
        See the module docstring for the exact bin conventions. Equal-width
        membership is exact in float64 against the edges ``m / M``
        (:func:`bin_indices`): float32 confidences are binned by the value
        they hold (``np.float32(0.3)`` is above 0.3, in bin 3 of 10), so
        float32 input and its float64 cast give the same ECE; how these
        edges differ from scikit-learn's, relplot's, MAPIE's, torchmetrics'
        and netcal's is listed under :func:`bin_indices`. Equal-mass
        bins with weights: items sorted by confidence occupy intervals of
        length w_i on the weight axis; the bins cut the total weight T into
        the ``numpy.array_split`` sizes of T when all weights of a row are
        integers, and into M equal parts T/M otherwise; an item straddling a
        cut is split in proportion (as its repeated copies would be).
    %(sample_weight)s

    %(returns)s

    References
    ----------
    .. [1] Chuan Guo, Geoff Pleiss, Yu Sun, Kilian Q. Weinberger. 2017. "On Calibration of Modern Neural Networks". In Proceedings of the 34th International Conference on Machine Learning (ICML). Section 2 (Eq. 3).
    .. [2] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Eq. 1.
    .. [3] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 1.
    .. [4] Rebecca Roelofs, Nicholas Cain, Jonathon Shlens, Michael C. Mozer. 2022. "Mitigating Bias in Calibration Error Estimation". In Proceedings of the 25th International Conference on Artificial Intelligence and Statistics (AISTATS). (``n_bins="sweep"``)

    Examples
    --------
    Sakai 2024, Example 1, System X (3 equal-mass bins):

    >>> conf = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    >>> correct = [1, 1, 0, 1, 0, 1, 1, 1, 1]
    >>> round(ece(conf, correct, n_bins=3, binning="mass"), 3)
    0.178

    Two systems at once (rows), and integer weights as repeated rows:

    >>> ece([conf, conf[::-1]], [correct, correct], n_bins=3, binning="mass").round(3)
    array([0.178, 0.267])
    >>> ece(conf, correct, n_bins=3, sample_weight=[2] * 9) == ece(conf * 2, correct * 2, n_bins=3)
    True
    """
    fast = _compiled_pair(conf, correct, sample_weight)
    if fast is not None and binning == "width":
        c, y, kernels = fast
        sums = _width_sums_compiled(kernels, c, y, _resolve_n_bins(n_bins, binning, c, None, None), counts=False)
        if sums is not None:  # else a value is out of range: the NumPy path below says which
            return float(np.abs(sums[0]).sum() / c.shape[0])
    conf, correct, w, batched = _prepare(conf, correct, sample_weight)
    n_bins = _resolve_n_bins(n_bins, binning, conf, correct, w)
    if isinstance(n_bins, list):  # "sweep" on a batch: b* differs per row
        return np.array([ece(c, y, n_bins=b, binning=binning) for c, y, b in zip(conf, correct, n_bins)])
    if not batched and w is None:
        n = conf.shape[0]
        if binning == "width":
            diff, _ = _width_sums(conf, correct, n_bins, counts=False)
            return float(np.abs(diff).sum() / n)
        count, sum_conf, n_correct, _, _ = _mass_stats(conf, correct, n_bins)
        return float(np.abs(sum_conf - n_correct).sum() / n)
    if binning == "width":
        diff, _ = _width_sums_general(conf, correct, w, n_bins, counts=False)
        total = conf.shape[-1] if w is None else w.sum(axis=-1)
        return _result(np.abs(diff).sum(axis=1) / total, batched)
    count, diff = _bin_sums(conf, correct, w, n_bins, binning)
    return _result(np.abs(diff).sum(axis=1) / count.sum(axis=1), batched)


@batch_axis
@_shared_param_docs
def mce(conf, correct, *, n_bins: int | str = 10, binning: str = "width", sample_weight=None):
    """Maximum calibration error over non-empty bins.

    .. math::

        \\mathrm{MCE} = \\max_{m:\\,|B_m| > 0}
        \\left|\\mathrm{acc}(B_m) - \\mathrm{conf}(B_m)\\right|

    with the bins of :func:`ece`. Naeini et al. 2015; Sakai 2024 Eq. 1;
    Gupta et al. 2021 (Tables 6-7).

    Parameters
    ----------
    %(conf_correct)s
    %(n_bins)s
    binning : {"width", "mass"}, default "width"
    %(sample_weight)s

    %(returns)s

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
    fast = _compiled_pair(conf, correct, sample_weight)
    if fast is not None and binning == "width":
        c, y, kernels = fast
        sums = _width_sums_compiled(kernels, c, y, _resolve_n_bins(n_bins, binning, c, None, None), counts=True)
        if sums is not None:
            diff, count = sums
            keep = count > 0
            return float(np.max(np.abs(diff[keep]) / count[keep]))
    conf, correct, w, batched = _prepare(conf, correct, sample_weight)
    n_bins = _resolve_n_bins(n_bins, binning, conf, correct, w)
    if isinstance(n_bins, list):
        return np.array([mce(c, y, n_bins=b, binning=binning) for c, y, b in zip(conf, correct, n_bins)])
    if not batched and w is None:
        if binning == "width":
            diff, count = _width_sums(conf, correct, n_bins, counts=True)
            keep = count > 0
            return float(np.max(np.abs(diff[keep]) / count[keep]))
        count, sum_conf, n_correct, _, _ = _mass_stats(conf, correct, n_bins)
        return float(np.max(np.abs(sum_conf - n_correct) / count))
    count, diff = _bin_sums(conf, correct, w, n_bins, binning)
    keep = count > 0
    gap = np.where(keep, np.abs(diff) / np.where(keep, count, 1.0), -np.inf)
    return _result(gap.max(axis=1), batched)


def reliability_table(
    conf, correct, *, n_bins: int | str = 10, binning: str = "width", sample_weight=None,
    interval: str | None = None, level: float = 0.95,
):
    """Per-bin statistics behind ECE, MCE and the reliability diagram, with intervals.

    .. math::

        \\mathrm{gap}_m = \\mathrm{conf}(B_m) - \\mathrm{acc}(B_m)

    (positive: overconfident in that bin). Empty bins are omitted. With
    ``interval``, each bin's accuracy gets a binomial confidence interval for
    :math:`n_m` items of which :math:`k_m` are correct, equal to
    ``scipy.stats.binomtest(k_m, n_m).proportion_ci(level, method)``
    (Wilson bit for bit; Clopper-Pearson to scipy's root-finder tolerance,
    see :func:`binomial_interval`):

    .. math::

        \\text{Wilson:}\\quad \\frac{2k + z^2 \\pm z\\sqrt{z^2 + 4k(n-k)/n}}{2(n + z^2)},
        \\qquad z = \\Phi^{-1}\\big(\\tfrac{1 + \\text{level}}{2}\\big)

    (0 when k = 0 and 1 when k = n at the open end), or the Clopper-Pearson
    interval, which inverts the two one-sided binomial tests (exact coverage
    at least ``level``).

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    n_bins : int, "auto" or "sweep", default 10
        As in :func:`ece`.
    binning : {"width", "mass"}, default "width"
    sample_weight : array-like of shape (N,), optional
        Item weights as in :func:`ece` (``count`` and ``n_correct`` become
        sums of weights; integer weights equal repeated rows).
    interval : {"wilson", "clopper-pearson"} or None, default None
        Adds columns ``acc_low``, ``acc_high``. Needs integer counts (no
        weights, or integer weights).
    level : float in (0, 1), default 0.95

    Returns
    -------
    pandas.DataFrame
        Columns ``bin`` (0-based index), ``lower``, ``upper`` (the bin edges
        ``m/M``, ``(m+1)/M`` for equal-width bins; the smallest and largest
        confidence in the bin for equal-mass bins), ``count``, ``n_correct``,
        ``mean_conf``, ``accuracy``, ``gap`` (and ``acc_low``, ``acc_high``).

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and
       statistical inference", JASA 22(158):209-212, 1927.
    .. [2] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial
       limits illustrated in the case of the binomial", Biometrika
       26(4):404-413, 1934.
    .. [3] R. G. Newcombe, "Two-sided confidence intervals for the single
       proportion: comparison of seven methods", Statistics in Medicine
       17(8):857-872, 1998 (the form of the Wilson interval used).

    Examples
    --------
    >>> t = reliability_table([0.2, 0.25, 0.9], [0, 1, 1], n_bins=2)
    >>> t[["bin", "count", "accuracy"]].to_string(index=False)
    ' bin  count  accuracy\\n   0      2       0.5\\n   1      1       1.0'
    >>> t = reliability_table([0.2, 0.25, 0.9], [0, 1, 1], n_bins=2, interval="wilson")
    >>> t[["acc_low", "acc_high"]].round(3).to_numpy().tolist()
    [[0.095, 0.905], [0.207, 1.0]]
    """
    import pandas as pd

    fast = _compiled_pair(conf, correct)
    if fast is not None and sample_weight is None and binning == "width":
        c, y, kernels = fast
        n_bins = _resolve_n_bins(n_bins, binning, c, None, None)
        count, sum_conf, n_correct = np.zeros(n_bins), np.zeros(n_bins), np.zeros(n_bins)
        if kernels.width_table(False)(c, y, None, n_bins, count, sum_conf, n_correct):
            fast = None  # a value is out of range: the checks below say which
        else:
            conf, correct, w = c, y.view(np.bool_), None
    else:
        fast = None
    if fast is None:
        conf, correct = check_conf_correct(conf, correct)
        w = check_sample_weight(sample_weight, conf.shape)
        if w is not None and w.ndim != 1:
            raise ValueError(f"sample_weight must be 1-D (N,) for reliability_table; got shape {w.shape}.")
        n_bins = _resolve_n_bins(n_bins, binning, conf, correct, w)
    if interval is not None:
        check_choice(interval, _INTERVALS, "interval")
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if binning == "width":
        if fast is None:
            count, sum_conf, n_correct = _width_table(conf, correct, w, n_bins)
        bins = np.flatnonzero(count > 0)
        lower = bins / n_bins
        upper = (bins + 1) / n_bins
        count, sum_conf, n_correct = count[bins], sum_conf[bins], n_correct[bins]
    elif w is None:
        count, sum_conf, n_correct, lower, upper = _mass_stats(conf, correct, n_bins)
        bins = np.flatnonzero(_mass_sizes(conf.shape[0], n_bins) > 0)
    else:
        count, sum_conf, n_correct = (a[0] for a in _mass_sums_general(conf, correct, w, n_bins))
        bins = np.flatnonzero(count > 0)
        count, sum_conf, n_correct = count[bins], sum_conf[bins], n_correct[bins]
        lower, upper = _mass_bin_range(conf, w, n_bins, bins)
    mean_conf = sum_conf / count
    accuracy = n_correct / count
    integral = w is None or bool(np.all(w == np.round(w)))
    table = pd.DataFrame(
        {
            "bin": bins.astype(np.int64),
            "lower": lower,
            "upper": upper,
            "count": np.rint(count).astype(np.int64) if integral else count,
            "n_correct": np.rint(n_correct).astype(np.int64) if integral else n_correct,
            "mean_conf": mean_conf,
            "accuracy": accuracy,
            "gap": mean_conf - accuracy,
        }
    )
    if interval is not None:
        if not integral:
            raise ValueError(
                "interval needs integer counts per bin; sample_weight has non-integer weights."
            )
        low, high = binomial_interval(table["n_correct"].to_numpy(), table["count"].to_numpy(),
                                      method=interval, level=level)
        table["acc_low"] = low
        table["acc_high"] = high
    return table


def _width_table(conf, correct, w, n_bins: int):
    """Per equal-width bin: total weight, weighted sum of conf, weighted number correct."""
    kernels = compiled_inmemory(conf.shape[0])
    if kernels is not None:
        count, sum_conf, n_correct = np.zeros(n_bins), np.zeros(n_bins), np.zeros(n_bins)
        kernels.width_table(w is not None)(conf, np.ascontiguousarray(correct).view(np.uint8), w, n_bins,
                                           count, sum_conf, n_correct)
        return count, sum_conf, n_correct
    idx = np.maximum(_width_codes(conf, n_bins) - 1, 0)
    count = np.bincount(idx, weights=w, minlength=n_bins).astype(np.float64)
    sum_conf = np.bincount(idx, weights=conf if w is None else w * conf, minlength=n_bins)
    n_correct = np.bincount(idx, weights=correct if w is None else w * correct, minlength=n_bins)
    return count, sum_conf, n_correct


def _mass_bin_range(conf, w, n_bins: int, bins: np.ndarray):
    """Smallest and largest confidence with positive weight in each weighted equal-mass bin."""
    order = np.argsort(conf, kind="stable")
    sc, sw = conf[order], w[order]
    cw = np.cumsum(sw)
    total = cw[-1]
    m = np.arange(n_bins + 1)
    if np.all(sw == np.round(sw)):
        q, r = divmod(int(round(total)), n_bins)
        bounds = q * m + np.minimum(m, r)
    else:
        bounds = total * m / n_bins
    first = np.searchsorted(cw, bounds[:-1], side="right")  # first item reaching past the start
    last = np.searchsorted(cw, bounds[1:], side="left")     # item holding the end
    n = sc.shape[0]
    return sc[np.minimum(first[bins], n - 1)], sc[np.minimum(last[bins], n - 1)]


def binomial_interval(k, n, *, method: str = "wilson", level: float = 0.95):
    """Confidence interval of a binomial proportion k/n, vectorised over bins.

    Equal to ``scipy.stats.binomtest(k, n).proportion_ci(level, method)``:
    the Wilson score interval in Newcombe's form, computed in the same
    floating-point steps (bit for bit), or the Clopper-Pearson interval from
    its closed form in beta quantiles,
    :math:`[B^{-1}(\\alpha/2;\\, k, n-k+1),\\ B^{-1}(1-\\alpha/2;\\, k+1, n-k)]`,
    :math:`\\alpha = 1 - \\text{level}`, which scipy finds by root finding
    (``brentq``, tolerance 2e-12): the two agree to that tolerance.

    .. math::

        \\text{Wilson:}\\ \\frac{2np + z^2}{2(n + z^2)} \\pm
        \\frac{z}{2(n + z^2)}\\sqrt{4np(1 - p) + z^2},\\quad p = k/n

    Parameters
    ----------
    k, n : array-like of int
        Successes and trials (n >= 1, 0 <= k <= n).
    method : {"wilson", "clopper-pearson"}, default "wilson"
    level : float in (0, 1), default 0.95

    Returns
    -------
    low, high : ndarray

    References
    ----------
    .. [1] R. G. Newcombe, "Two-sided confidence intervals for the single
       proportion: comparison of seven methods", Statistics in Medicine
       17(8):857-872, 1998 (methods 3 and 5).

    Examples
    --------
    >>> low, high = binomial_interval([0, 5], [10, 10])
    >>> low.round(3).tolist(), high.round(3).tolist()
    ([0.0, 0.237], [0.278, 0.763])
    """
    from scipy.special import ndtri

    check_choice(method, _INTERVALS, "method")
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    for name, x in (("k", k), ("n", n)):
        if isinstance(x, (bool, np.bool_)) or np.asarray(x).dtype == bool:
            raise TypeError(f"{name} must hold integer counts, not booleans; got {x!r}.")
    k = as_numeric_array(k, "k")
    n = as_numeric_array(n, "n")
    for name, x in (("k", k), ("n", n)):
        if not np.isfinite(x).all() or np.any(x != np.round(x)):
            raise ValueError(f"{name} must hold whole numbers (finite integers); got {x.tolist()}.")
    if k.shape != n.shape or np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"binomial_interval needs k and n of the same shape with 0 <= k <= n and n >= 1; "
                         f"got k={k.tolist()}, n={n.tolist()}.")
    if method == "clopper-pearson":
        from scipy.stats import beta

        alpha = (1.0 - level) / 2.0
        k = k.astype(np.float64)
        n = n.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            low = np.where(k == 0, 0.0, beta.ppf(alpha, np.maximum(k, 1), n - k + 1))
            high = np.where(k == n, 1.0, beta.isf(alpha, k + 1, np.maximum(n - k, 1)))
        return low, high
    k = k.astype(np.float64)
    n = n.astype(np.float64)
    p = k / n
    z = ndtri(0.5 + 0.5 * level)
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    q = 1 - p
    delta = z / denom * np.sqrt(4 * n * p * q + z**2)
    low = np.where(k == 0, 0.0, center - delta)
    high = np.where(k == n, 1.0, center + delta)
    return low, high


# --------------------------------------------------------------------------
# instance-level metrics (Si 2022, Sakai 2024)
# --------------------------------------------------------------------------


def _group_sums(conf: np.ndarray, correct: np.ndarray):
    """(n_pos, n_neg, sum of conf over correct, sum of conf over wrong)."""
    n = conf.shape[0]
    n_pos = int(np.count_nonzero(correct))
    total = np.zeros(_LANES)
    pos = np.zeros(_LANES)
    buf = np.empty(min(n, _CHUNK))
    for start in range(0, n, _CHUNK):  # chunks stay in cache: one read of conf
        c = conf[start:start + _CHUNK]
        t = buf[:c.shape[0]]
        np.multiply(c, correct[start:start + _CHUNK], out=t)
        _lane_sums(c, total)
        _lane_sums(t, pos)
    p = float(pos.sum())
    return n_pos, n - n_pos, p, float(total.sum()) - p


def _group_sums_1d(conf, correct, sample_weight):
    """:func:`_group_sums` of validated 1-D unweighted input, or None for the batched/weighted path.

    Returns ``(sums, conf, correct, w, batched)``, the last four as :func:`_prepare` gives them
    (None when the compiled kernel did the work and its checks).
    """
    fast = _compiled_pair(conf, correct, sample_weight)
    if fast is not None:
        c, y, kernels = fast
        tot, pos, bad, n_pos = kernels.group_lanes()(c, y)
        if not bad:  # else a value is out of range: the NumPy checks below say which
            n = c.shape[0]
            n_pos = int(n_pos)
            p = float(pos.sum())
            return (n_pos, n - n_pos, p, float(tot.sum()) - p), None, None, None, False
    conf, correct, w, batched = _prepare(conf, correct, sample_weight)
    if not batched and w is None:
        return _group_sums(conf, correct), conf, correct, w, batched
    return None, conf, correct, w, batched


def _ice_parts_from(sums) -> tuple[float, float]:
    n_pos, n_neg, pos, neg = sums
    ice_pos = (n_pos - pos) / n_pos if n_pos else 0.0
    ice_neg = neg / n_neg if n_neg else 0.0
    # Guard against rounding just below 0 (sum of ones minus sum of conf).
    return max(ice_pos, 0.0), max(ice_neg, 0.0)


@batch_axis
@_shared_param_docs
def ice(conf, correct, *, sample_weight=None):
    """Instance-level calibration error.

    .. math::

        \\mathrm{ICE} = \\frac{1}{N}\\sum_{i=1}^{N} |y_i - c_i|

    Si et al. 2022, Section 4.2 (equal to equal-mass ECE with N bins, their
    footnote 4).

    Parameters
    ----------
    %(conf_correct)s
    %(sample_weight)s

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2.

    Examples
    --------
    >>> ice([0.9, 0.2], [1, 1])
    0.45
    """
    sums, conf, correct, w, batched = _group_sums_1d(conf, correct, sample_weight)
    if sums is not None:
        n_pos, n_neg, pos, neg = sums
        return float(((n_pos - pos) + neg) / (n_pos + n_neg))
    n, n_pos, n_neg, pos, neg = _group_sums_general(conf, correct, w)
    return _result(((n_pos - pos) + neg) / n, batched)


@_shared_param_docs
def macro_ce_parts(conf, correct, *, sample_weight=None) -> MacroCEParts:
    """ICE over the correct and over the wrong predictions, and their mean.

    .. math::

        \\mathrm{ICE}_{pos} = \\frac{1}{n_p}\\sum_{i: y_i = 1}(1 - c_i),\\quad
        \\mathrm{ICE}_{neg} = \\frac{1}{n_n}\\sum_{i: y_i = 0} c_i,\\quad
        \\mathrm{MacroCE} = \\tfrac{1}{2}(\\mathrm{ICE}_{pos} + \\mathrm{ICE}_{neg})

    Si et al. 2022, Section 4.2. An empty group (no correct or no wrong
    predictions) has error 0, as in Sakai 2024 Eqs. 6-7.

    Parameters
    ----------
    %(conf_correct)s
    %(sample_weight)s

    Returns
    -------
    MacroCEParts(ice_pos, ice_neg, macro_ce)
        Floats, or arrays of shape (S,) for 2-D input.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2.
    .. [2] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eqs. 6-7.

    Examples
    --------
    >>> macro_ce_parts([0.8, 0.6, 0.5], [1, 1, 0])
    MacroCEParts(ice_pos=0.3, ice_neg=0.5, macro_ce=0.4)
    """
    sums, conf, correct, w, batched = _group_sums_1d(conf, correct, sample_weight)
    if sums is not None:
        pos, neg = _ice_parts_from(sums)
        return MacroCEParts(float(pos), float(neg), float((pos + neg) / 2))
    pos, neg = _ice_parts_general(conf, correct, w)
    return MacroCEParts(_result(pos, batched), _result(neg, batched), _result((pos + neg) / 2, batched))


@batch_axis
@_shared_param_docs
def macro_ce(conf, correct, *, sample_weight=None):
    """Macro-averaged calibration error (Si et al. 2022, Section 4.2).

    .. math::

        \\mathrm{MacroCE} = \\tfrac{1}{2}(\\mathrm{ICE}_{pos} + \\mathrm{ICE}_{neg})
        = 1 - \\tfrac{1}{2}(R_O + R_U)

    with the parts of :func:`macro_ce_parts` and Sakai's rewards
    (:func:`rewards`).

    Parameters
    ----------
    %(conf_correct)s
    %(sample_weight)s

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
    sums, conf, correct, w, batched = _group_sums_1d(conf, correct, sample_weight)
    if sums is not None:
        pos, neg = _ice_parts_from(sums)
        return float((pos + neg) / 2)
    pos, neg = _ice_parts_general(conf, correct, w)
    return _result((pos + neg) / 2, batched)


@_shared_param_docs
def rewards(conf, correct, *, sample_weight=None) -> Rewards:
    """Rewards for suppressing overconfidence and underconfidence.

    .. math::

        O = \\sum_{i \\in I^-} c_i,\\quad U = \\sum_{i \\in I^+} (1 - c_i),\\quad
        R_O = 1 - O/|I^-|,\\quad R_U = 1 - U/|I^+|

    with :math:`R_O = 1` if :math:`I^-` (the wrong predictions) is empty and
    :math:`R_U = 1` if :math:`I^+` (the correct ones) is empty.
    Sakai 2024, Eqs. 5-7.

    Parameters
    ----------
    %(conf_correct)s
    %(sample_weight)s

    Returns
    -------
    Rewards(r_o, r_u)
        Floats, or arrays of shape (S,) for 2-D input.

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
    sums, conf, correct, w, batched = _group_sums_1d(conf, correct, sample_weight)
    if sums is not None:
        pos, neg = _ice_parts_from(sums)
        return Rewards(float(1.0 - neg), float(1.0 - pos))
    pos, neg = _ice_parts_general(conf, correct, w)
    return Rewards(_result(1.0 - neg, batched), _result(1.0 - pos, batched))


@batch_axis
@_shared_param_docs
def hmr(conf, correct, *, beta: float = 1.0, sample_weight=None):
    """Harmonic mean of rewards (Sakai 2024, Eq. 8 and footnote 1).

    .. math::

        \\mathrm{HMR}_\\beta = \\frac{(\\beta^2 + 1) R_O R_U}{\\beta^2 R_O + R_U},
        \\qquad \\mathrm{HMR}_1 = \\frac{2 R_O R_U}{R_O + R_U}

    with the rewards of :func:`rewards`; 0 when the denominator is 0 (for
    ``beta = 1``: when :math:`R_O = R_U = 0`). As in the F-measure, ``beta > 1``
    weights the underconfidence reward :math:`R_U` more.

    Parameters
    ----------
    %(conf_correct)s
    beta : float >= 0, default 1.0
    %(sample_weight)s

    Returns
    -------
    float in [0, 1] (higher is better), or ndarray of shape (S,) for 2-D input

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 8.

    Examples
    --------
    >>> conf = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    >>> round(hmr(conf, [1, 1, 0, 1, 0, 1, 1, 1, 1]), 3)
    0.557
    """
    sums, conf, correct, w, batched = _group_sums_1d(conf, correct, sample_weight)
    beta = check_scalar_in_range(beta, "beta", low=0.0)
    b2 = beta * beta
    if sums is not None:
        pos, neg = _ice_parts_from(sums)
        r_o, r_u = 1.0 - neg, 1.0 - pos
        den = b2 * r_o + r_u
        if den <= 0.0:
            return 0.0
        return float((b2 + 1.0) * r_o * r_u / den)
    pos, neg = _ice_parts_general(conf, correct, w)
    r_o, r_u = 1.0 - neg, 1.0 - pos
    den = b2 * r_o + r_u
    out = np.where(den > 0.0, (b2 + 1.0) * r_o * r_u / np.where(den > 0.0, den, 1.0), 0.0)
    return _result(out, batched)


@batch_axis
@_shared_param_docs
def brier_top(conf, correct, *, sample_weight=None):
    """Top-label Brier score (Gupta et al. 2021, Tables 6-7).

    .. math::

        \\mathrm{Brier} = \\frac{1}{N}\\sum_{i=1}^{N} (c_i - y_i)^2

    Parameters
    ----------
    %(conf_correct)s
    %(sample_weight)s

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR).

    Examples
    --------
    >>> brier_top([0.9, 0.2], [1, 0])
    0.025
    """
    fast = _compiled_pair(conf, correct, sample_weight)
    if fast is not None:
        c, y, kernels = fast
        lanes, bad = kernels.brier_lanes()(c, y)
        if not bad:  # else a value is out of range: the NumPy checks below say which
            return float(lanes.sum() / c.shape[0])
    conf, correct, w, batched = _prepare(conf, correct, sample_weight)
    if not batched and w is None:
        return float(_squared_error_sum(conf, correct) / conf.shape[0])
    shape = _rows_shape(conf, w)
    sums = _row_lanes_compiled(conf, correct, w, brier=True)
    if sums is None:
        d = conf - correct
        sums = [_row_sums(d * d, shape)] if w is None else [_row_sums(w * (d * d), shape), _row_sums(w, shape)]
    return _result(sums[0] / (conf.shape[-1] if w is None else sums[1]), batched)


def _squared_error_sum(conf: np.ndarray, correct: np.ndarray) -> float:
    """Sum of (conf - correct)**2 over items, in the lanes of :func:`_lane_sums` (as the kernel adds them)."""
    n = conf.shape[0]
    acc = np.zeros(_LANES)
    buf = np.empty(min(n, _CHUNK))
    for start in range(0, n, _CHUNK):
        c = conf[start:start + _CHUNK]
        t = buf[:c.shape[0]]
        np.subtract(c, correct[start:start + _CHUNK], out=t)
        np.multiply(t, t, out=t)
        _lane_sums(t, acc)
    return float(acc.sum())


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


@batch_axis
@_shared_param_docs
def ks_error(conf, correct, *, ties: str = "order", sample_weight=None):
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
    %(conf_correct)s
    ties : {"order", "group"}, default "order"
        ``"order"``: stable sort (ties keep input order), max over all
        ``i = 1..N`` -- this reproduces Sakai's Tables 3 and 6.
        ``"group"``: max only over the last item of each group of equal
        confidences, so the value does not depend on the order of ties.
        Without ties both agree.
    %(sample_weight)s

    Returns
    -------
    float in [0, 1], or ndarray of shape (S,) for 2-D input or 2-D ``sample_weight``

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
    fast = _compiled_pair(conf, correct, sample_weight)
    if fast is not None:  # the keys made and conf checked in one compiled pass; a bad value: the NumPy path says which
        c, y, kernels = fast
        keys = _compiled_keys(kernels, c, y)
        if keys is not None:
            check_choice(ties, _TIES, "ties")
            _sort_in_place(keys)
            return _ks_of_keys(keys, c, y.view(np.bool_), ties, kernels)
    conf, correct, w, batched = _prepare(conf, correct, sample_weight)
    check_choice(ties, _TIES, "ties")
    if batched or w is not None:
        return _result(_ks_general(conf, correct, w, ties), batched)
    return _ks_of_keys(_sort_keys(conf, correct), conf, correct, ties, compiled_inmemory(conf.shape[0]))


def _ks_of_keys(keys: np.ndarray, conf: np.ndarray, correct: np.ndarray, ties: str, kernels) -> float:
    """The KS error of 1-D unweighted ``conf`` (float32/float64) and ``correct`` (bool) from their sorted ``keys``."""
    n = conf.shape[0]
    if kernels is not None:  # the same running sums in one compiled pass
        with _SORTED_LOCK:  # one call at a time, as the row lanes (threads compiling at once)
            best, mixed = kernels.ks_keys(ties == "group")(keys)
        out = None if mixed else best / n
    else:
        out = _ks_from_keys(keys, n, ties)
    if out is None:  # "order" with mixed ties: restore input order in those groups
        s_conf, s_y = _fix_tie_order(keys, conf.astype(np.float64, copy=False), correct)
        out = _ks_of_sorted(s_conf, s_y) / n
    return float(out)


def _ks_of_sorted(s_conf: np.ndarray, s_y: np.ndarray) -> float:
    """``max |cumsum(s_y - s_conf)|`` chunk by chunk, the running sum carried into each chunk's first term.

    Adding the carry to the first difference before the chunk's ``cumsum`` makes every partial sum the same
    float as one ``cumsum`` over the whole array (a sequential sum), without its temporaries.
    """
    best = carry = 0.0
    for start in range(0, s_conf.shape[0], _CHUNK):
        d = s_y[start:start + _CHUNK] - s_conf[start:start + _CHUNK]
        d[0] += carry
        cs = np.cumsum(d, out=d)
        best = max(best, float(cs.max()), float(-cs.min()))
        carry = float(cs[-1])
    return best


@batch_axis
@_shared_param_docs
def kuiper_error(conf, correct, *, ties: str = "order", sample_weight=None):
    """Kuiper calibration error: the range of the cumulative differences (ECCE-R).

    With the items sorted by confidence and :math:`C_0 = 0`,

    .. math::

        C_k = \\frac{1}{N}\\sum_{j \\le k} (y_{(j)} - c_{(j)}),\\qquad
        \\mathrm{Kuiper} = \\max_{0 \\le k \\le N} C_k - \\min_{0 \\le k \\le N} C_k

    (Arrieta-Ibarra et al. 2022, Section 2, the Kuiper metric ECCE-R). It is at
    least :func:`ks_error` (:math:`\\max_k |C_k|`, ECCE-MAD) and at most twice it;
    it adds the over- and under-confidence of different confidence regions
    where the KS maximum sees only the larger. :func:`calibnb.kuiper_test`
    divides it by the standard deviation under calibration for a p-value.
    With weights, :math:`C_k = \\sum_{j \\le k} w_{(j)}(y_{(j)} - c_{(j)}) / \\sum_j w_j`.

    Conventions: the range includes :math:`C_0 = 0` (as Arrieta-Ibarra et al.
    and probmetrics' ``KuiperCalibrationMetric``; MAPIE's ``kuiper_statistic``
    takes :math:`C_1..C_N` only, smaller when every :math:`C_k` has one sign);
    ties as in :func:`ks_error`.

    Parameters
    ----------
    %(conf_correct)s
    ties : {"order", "group"}, default "order"
        ``"order"``: stable sort, every :math:`C_k` counts; ``"group"``: only
        the :math:`C_k` at the end of each group of equal confidences, so the
        value does not depend on the input order of ties.
    %(sample_weight)s

    Returns
    -------
    float in [0, 1], or ndarray of shape (S,) for 2-D input or 2-D ``sample_weight``

    References
    ----------
    .. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu,
       "Metrics of calibration for probabilistic predictions", JMLR 23(351),
       2022, Section 2 (Kuiper metric).

    Examples
    --------
    Under-confident at 0.2, over-confident at 0.8: the range adds both sides.

    >>> conf, correct = [0.2, 0.5, 0.8], [1, 0, 0]
    >>> round(kuiper_error(conf, correct), 4), round(ks_error(conf, correct), 4)
    (0.4333, 0.2667)
    """
    conf, correct, w, batched = _prepare(conf, correct, sample_weight)
    check_choice(ties, _TIES, "ties")
    cs, total = _cumulative_rows(conf, correct, w, ties)
    return _result((np.maximum(cs.max(axis=1), 0.0) - np.minimum(cs.min(axis=1), 0.0)) / total, batched)


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


# ---------------------------------------------------------------- registry declarations
# (calibnb.metrics.registry: what metric_summary, calibration_scorer and calibnb.dask list)

def _correct_items(conf, correct):
    """Per-item form of accuracy: the 0/1 correctness itself."""
    return correct


@batch_axis
def _r_o(conf, correct, *, sample_weight=None):
    """Sakai 2024's R_O alone (batch axis, weights): :func:`rewards` ``.r_o``."""
    return rewards(conf, correct, sample_weight=sample_weight).r_o


@batch_axis
def _r_u(conf, correct, *, sample_weight=None):
    """Sakai 2024's R_U alone (batch axis, weights): :func:`rewards` ``.r_u``."""
    return rewards(conf, correct, sample_weight=sample_weight).r_u


register(Metric("accuracy", "accuracy", "-", "share of top-1 predictions that are correct",
                form="mean", per_item=_correct_items, higher_is_better=True))
register(Metric("ece_width", "ECE ({n_bins} equal-width bins)", "Guo 2017; Si 2022",
                "average |accuracy - confidence| over confidence bins of equal width", ece, binned=True,
                options=(("binning", "width"),), streaming=lambda stats, **o: stats.ece(**o),
                aka='ECE, expected calibration error; ece(conf, correct, binning="width")'))
register(Metric("ece_mass", "ECE ({n_bins} equal-mass bins)", "Si 2022; Jiang 2024",
                "the same with bins holding equal numbers of predictions", ece, binned=True,
                options=(("binning", "mass"),), aka='adaptive ECE; ece(conf, correct, binning="mass")'))
register(Metric("mce", "MCE ({n_bins} equal-width bins)", "Guo 2017; Sakai 2024",
                "the worst bin's |accuracy - confidence|", mce, binned=True,
                streaming=lambda stats, **o: stats.mce(**o), aka="maximum calibration error"))
register(Metric("ice", "ICE", "Si 2022", "mean |correct - confidence| per prediction (no bins)", ice,
                streaming=lambda stats: stats.ice(), aka="instance-level calibration error; L1 error of the top-1"))
register(Metric("macro_ce", "MacroCE", "Si 2022",
                "mean of the errors on correct (1 - conf) and on wrong (conf) predictions, both outcomes "
                "weighted equally", macro_ce, streaming=lambda stats: stats.macro_ce(),
                aka="macro-averaged calibration error: (ICE_pos + ICE_neg) / 2"))
register(Metric("r_o", "R_O (overconfidence reward)", "Sakai 2024",
                "1 - mean confidence of the wrong predictions: 1 means never confident when wrong",
                _r_o, higher_is_better=True, streaming=lambda stats: stats.rewards().r_o, aka="rewards(...).r_o"))
register(Metric("r_u", "R_U (underconfidence reward)", "Sakai 2024",
                "mean confidence of the correct predictions: 1 means fully confident when right",
                _r_u, higher_is_better=True, streaming=lambda stats: stats.rewards().r_u, aka="rewards(...).r_u"))
register(Metric("hmr", "HMR", "Sakai 2024", "harmonic mean of R_O and R_U: high only if both are high", hmr,
                higher_is_better=True, streaming=lambda stats: stats.hmr(), aka="harmonic mean of rewards"))
register(Metric("ks_top1", "KS (top-1)", "Gupta 2021",
                "largest gap between cumulative accuracy and cumulative confidence (no bins)", ks_error,
                aka="KS calibration error; ks_error(conf, correct)"))
register(Metric("kuiper", "Kuiper (top-1)", "Arrieta-Ibarra 2022",
                "range of the cumulative gap between accuracy and confidence: over- and under-confidence in "
                "different regions add up (no bins)", kuiper_error,
                aka="ECCE-R, Kuiper metric; kuiper_error(conf, correct); kuiper_test divides it by its null sd",
                not_mergeable="needs the rows sorted by confidence (as the KS error); calibnb.dask has a sorted "
                              "version of ks_error, not of this"))
register(Metric("brier_top1", "top-1 Brier", "Gupta 2021", "mean (confidence - correct)^2 of the top-1 prediction",
                brier_top, streaming=lambda stats: stats.brier_top(), aka="top-label Brier score; brier_top"))
