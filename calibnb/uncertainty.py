"""Sampling uncertainty of calibration metrics: bootstrap confidence intervals.

A calibration metric computed on a few thousand items is itself a random
quantity; differences between systems reported in papers are often within that
noise. :func:`bootstrap_ci` gives a confidence interval for any metric of
paired arrays (items are resampled jointly: the same indices for every array),
and :func:`paired_bootstrap_ci` an interval for the difference of a metric
between two systems scored on the same items.

Both are built on :func:`scipy.stats.bootstrap`, which computes the
percentile or BCa interval. How the bootstrap distribution is drawn depends on
the metric:

* calibnb's binary metrics (batch axis and ``sample_weight``): each resample
  is the original items with multiplicity weights (how often each item was
  drawn in N draws with replacement), evaluated for many resamples per call
  and in worker threads. This is the same bootstrap -- integer weights equal
  repeated rows -- without copying resampled arrays, and metrics that sort
  sort once. It is what meets the speed target (``benchmarks/``); scipy's
  own resampling of indices costs more than the metric here.
* other metrics marked with :func:`batch_axis`: scipy draws the indices and
  the metric gets resampled arrays of shape (S, N);
* any other callable: called once per resample.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from .metrics import ks_error, kuiper_error
from .metrics.batch import BATCH_ATTR, batch_axis
from .validation import (
    as_numeric_array, as_rng, check_1d_finite, check_choice, check_conf_correct, check_positive_int,
    check_scalar_in_range,
)

__all__ = [
    "BootstrapResult", "bootstrap_ci", "paired_bootstrap_ci", "batch_axis", "bootstrap_weights", "percentile_interval",
    "CalibrationTest", "spiegelhalter_test", "cumulative_ks_test", "kuiper_test",
]

_METHODS = ("percentile", "bca")
# Elements (resamples x items) evaluated per vectorised call: bounds the
# memory of the index array and the resampled arrays (about 8 bytes each).
_BATCH_ELEMENTS = 1 << 20
# Worker threads of the multiplicity-weights bootstrap (the machine's cores, at most this).
_MAX_THREADS = 4


class CalibrationTest(NamedTuple):
    """Statistic and p-value of a test of the null hypothesis "the confidences are calibrated"."""

    statistic: float
    p_value: float


class BootstrapResult(NamedTuple):
    """Point estimate and bootstrap confidence interval of a metric.

    Attributes
    ----------
    estimate : float
        The metric on the full data.
    low, high : float
        Lower and upper end of the confidence interval.
    """

    estimate: float
    low: float
    high: float


def _is_batched(metric: Callable) -> bool:
    return bool(getattr(metric, BATCH_ATTR, False))


def _check_arrays(arrays, name: str = "arrays", labels: Sequence[str] | None = None) -> tuple[list[np.ndarray], int]:
    """Arrays as ndarrays with one common first dimension (the items), N >= 2.

    Errors name each array as ``labels[k]`` (default ``name[k]``), the way the user passed it.
    """
    if len(arrays) == 0:
        raise TypeError(f"{name}: give at least one data array after the metric.")
    lab = list(labels) if labels is not None else [f"{name}[{k}]" for k in range(len(arrays))]
    out = []
    for k, a in enumerate(arrays):
        arr = as_numeric_array(a, lab[k])
        if arr.ndim == 0:
            raise ValueError(f"{lab[k]} must be an array of items, not a scalar.")
        out.append(arr)
    n = out[0].shape[0]
    for k, arr in enumerate(out[1:], start=1):
        if arr.shape[0] != n:
            raise ValueError(
                f"{lab[k]} has {arr.shape[0]} items but {lab[0]} has {n}; "
                "the arrays are resampled jointly and must have the same length."
            )
    if n < 2:
        raise ValueError(f"the bootstrap needs at least 2 items; {lab[0]} has {n}.")
    return out, n


def _as_float(value: Any, what: str) -> float:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{what} must return a real number; got {type(value).__name__}. "
            "Wrap metrics that return several values, e.g. lambda c, y: cn.rewards(c, y).r_o."
        )
    return float(value)


def _takes_weights(metric: Callable) -> bool:
    import inspect

    try:
        return "sample_weight" in inspect.signature(metric).parameters
    except (TypeError, ValueError):
        return False


def _mode(metric: Callable, vectorized, options: dict) -> str:
    """How resamples are evaluated: "weights", "batched" or "loop"."""
    batched = _is_batched(metric) if vectorized is None else bool(vectorized)
    if not batched:
        return "loop"
    if _is_batched(metric) and _takes_weights(metric) and options.get("n_bins") != "sweep":
        return "weights"
    return "batched"


def _statistic(metric: Callable, arrays: list[np.ndarray], options: dict, mode: str):
    """A vectorised statistic of resampled item indices for scipy.stats.bootstrap.

    scipy calls it with an integer index array ``i`` of shape ``(..., n)``
    (``n`` = N for resamples, N - 1 for BCa's jackknife); it returns the metric
    of every row of indices, with shape ``i.shape[:-1]``.

    * "weights": a resample is the data with multiplicity weights (how often
      each item was drawn), passed as ``sample_weight`` of shape (S, N) to a
      calibnb metric: no resampled copies, and sorting metrics sort once.
    * "batched": resampled arrays of shape (S, N) for a batch-axis metric.
    * "loop": one call per resample.
    """
    name = getattr(metric, "__name__", "metric")
    options = dict(options)
    user_w = options.pop("sample_weight", None)
    n = arrays[0].shape[0]
    if user_w is not None:
        user_w = np.asarray(user_w, dtype=np.float64)
        if user_w.shape != (n,):
            raise ValueError(f"sample_weight must have shape ({n},) (one weight per item); got {user_w.shape}.")

    def statistic(i, axis=-1):
        i = np.asarray(i)
        rows = i.reshape(-1, i.shape[-1])
        s = rows.shape[0]
        if mode == "weights":
            # intp: 32-bit Pyodide's bincount refuses the int64 indices scipy draws
            counts = np.bincount((rows + (np.arange(s) * n)[:, None]).ravel().astype(np.intp, copy=False),
                                 minlength=s * n)
            w = counts.reshape(s, n).astype(np.float64)
            if user_w is not None:
                w *= user_w
            out = np.asarray(metric(*arrays, sample_weight=w, **options), dtype=np.float64)
        elif mode == "batched":
            extra = {} if user_w is None else {"sample_weight": user_w[rows]}
            out = np.asarray(metric(*(a[rows] for a in arrays), **extra, **options), dtype=np.float64)
        else:
            out = np.empty(s)
            for r, row in enumerate(rows):
                extra = {} if user_w is None else {"sample_weight": user_w[row]}
                out[r] = _as_float(metric(*(a[row] for a in arrays), **extra, **options), name)
        if out.shape != (s,):
            raise ValueError(
                f"{name} is marked as batched but returned shape {out.shape} for {s} resamples; expected ({s},)."
            )
        return out.reshape(i.shape[:-1])

    return statistic


def _multiplicities(rng: np.random.Generator, size: int, n: int) -> np.ndarray:
    """(size, n) bootstrap multiplicities: how often each of n items is drawn in n draws."""
    w = np.empty((size, n))
    step = 4  # a few rows per bincount: its output stays in cache
    for start in range(0, size, step):
        b = min(step, size - start)
        i = rng.integers(0, n, (b, n))
        i += (np.arange(b) * n)[:, None]
        # intp: on 32-bit platforms (Pyodide in a browser) bincount refuses int64 indices; the draws
        # stay int64, so the resamples are the same on every platform
        w[start:start + b] = np.bincount(i.ravel().astype(np.intp, copy=False), minlength=b * n).reshape(b, n)
    return w


def bootstrap_weights(n: int, n_resamples: int, *, seed=None, block_elements: int = _BATCH_ELEMENTS):
    """The bootstrap's resamples as multiplicity weights, in blocks: an iterator of ``(S_b, n)`` arrays.

    Row s of the blocks (in order) says how often each of the ``n`` items is
    drawn in resample s (n draws with replacement): weighting the items by it
    is the same as repeating them. The one resampling draw of calibnb: behind
    :func:`bootstrap_ci` and :func:`paired_bootstrap_ci` (per batch),
    :func:`calibnb.metric_summary` and :func:`calibnb.papers.gupta2021.paired_ks_difference_ci`.
    The draws do not depend on the block size: ``seed`` fixes every weight.

    Parameters
    ----------
    n : int >= 1
        Number of items.
    n_resamples : int >= 1
    seed : None, int or numpy.random.Generator
    block_elements : int >= 1, default 2**20
        Bound on ``S_b * n`` (the memory of one block, 8 bytes each).

    Examples
    --------
    >>> blocks = list(bootstrap_weights(4, 3, seed=0, block_elements=8))
    >>> [b.shape for b in blocks], np.concatenate(blocks).sum(axis=1).tolist()
    ([(2, 4), (1, 4)], [4.0, 4.0, 4.0])
    """
    n = check_positive_int(n, "n")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    step = max(1, check_positive_int(block_elements, "block_elements") // n)
    rng = as_rng(seed)

    def blocks():
        for start in range(0, n_resamples, step):
            yield _multiplicities(rng, min(step, n_resamples - start), n)

    return blocks()


def percentile_interval(distribution, *, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of a bootstrap distribution, by :func:`scipy.stats.bootstrap`.

    The interval rule of :func:`bootstrap_ci` for a distribution drawn
    elsewhere (e.g. from :func:`bootstrap_weights`): the ``(1 - level) / 2``
    and ``(1 + level) / 2`` quantiles (linear interpolation).

    Examples
    --------
    >>> percentile_interval(np.arange(101.0), level=0.9)
    (5.0, 95.0)
    """
    from types import SimpleNamespace

    from scipy import stats

    d = check_1d_finite(distribution, "distribution")
    if d.size < 2:
        raise ValueError(f"distribution needs at least 2 values; got {d.size}.")
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    res = stats.bootstrap((np.arange(2),), lambda i, axis=-1: np.zeros(np.shape(i)[:-1]), n_resamples=0,
                          vectorized=True, confidence_level=level, method="percentile",
                          bootstrap_result=SimpleNamespace(bootstrap_distribution=d))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _weights_distribution(metric, arrays, options, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap distribution of a calibnb metric from multiplicity weights, in worker threads.

    Batch k draws from its own generator, spawned from ``rng``, so the result
    does not depend on the number of threads or their timing. NumPy releases
    the GIL in the draws, the counting and the metrics' array passes.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    options = dict(options)
    user_w = options.pop("sample_weight", None)
    n = arrays[0].shape[0]
    if user_w is not None:
        user_w = np.asarray(user_w, dtype=np.float64)
    if len(arrays) == 2 and arrays[0].ndim == 1:
        # The items are exchangeable: hand them over sorted by the first array
        # (stable, so tied items keep their order); binned and sorting
        # metrics then work on contiguous blocks and sort nothing.
        perm = np.argsort(arrays[0], kind="stable")
        arrays = [a[perm] for a in arrays]
        user_w = None if user_w is None else user_w[perm]
    batch = max(1, _BATCH_ELEMENTS // n)
    n_batches = -(-n_resamples // batch)
    seeds = np.random.SeedSequence(rng.integers(0, 2**63, size=4)).spawn(n_batches)

    def run(k):
        size = min(batch, n_resamples - k * batch)
        w = next(bootstrap_weights(n, size, seed=np.random.default_rng(seeds[k]), block_elements=size * n))
        if user_w is not None:
            w *= user_w
        out = np.asarray(metric(*arrays, sample_weight=w, **options), dtype=np.float64)
        if out.shape != (size,):
            raise ValueError(f"{metric.__name__} returned shape {out.shape} for {size} weightings; expected ({size},).")
        return out

    workers = max(1, min(_MAX_THREADS, os.cpu_count() or 1, n_batches))
    if workers == 1:
        return np.concatenate([run(k) for k in range(n_batches)])
    with ThreadPoolExecutor(workers) as pool:
        return np.concatenate(list(pool.map(run, range(n_batches))))


def _scipy_rng(function, rng) -> dict:
    """``{"rng": rng}``, or ``{"random_state": rng}`` for SciPy < 1.15 (e.g. Pyodide 0.27's 1.14)."""
    import inspect

    return {"rng" if "rng" in inspect.signature(function).parameters else "random_state": rng}


def _bootstrap(statistic, estimate: float, n: int, n_resamples, level, method, seed, mode: str, draw=None):
    """Interval from scipy.stats.bootstrap; ``draw(n_resamples, rng)``, if given, supplies the distribution."""
    from types import SimpleNamespace

    from scipy import stats

    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=2)
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    check_choice(method, _METHODS, "method")
    rng = as_rng(seed)
    batch = max(1, _BATCH_ELEMENTS // n)  # (batch x n) indices at a time, also for a looping metric
    previous = None
    if draw is not None:
        previous = SimpleNamespace(bootstrap_distribution=draw(n_resamples, rng))
        n_resamples = 0
    res = stats.bootstrap(
        (np.arange(n),), statistic, n_resamples=n_resamples, batch=batch, vectorized=True,
        confidence_level=level, method="BCa" if method == "bca" else "percentile",
        bootstrap_result=previous, **_scipy_rng(stats.bootstrap, rng),
    )
    ci = res.confidence_interval
    return BootstrapResult(estimate, float(ci.low), float(ci.high))


def bootstrap_ci(
    metric: Callable, *arrays, n_resamples: int = 2000, level: float = 0.95,
    method: str = "percentile", seed=None, vectorized: bool | None = None, **options,
) -> BootstrapResult:
    """Bootstrap confidence interval of a metric, resampling items jointly.

    Draw ``n_resamples`` sets of N item indices with replacement; each set
    resamples every array in ``arrays`` with the same indices (the items are
    the unit: ``conf[i]`` stays with ``correct[i]``). With
    :math:`\\hat\\theta^{*}_{1..B}` the metric of the resamples and
    :math:`\\alpha = 1 - \\text{level}`:

    .. math::

        \\text{percentile:}\\quad [\\hat\\theta^{*}_{(\\alpha/2)},\\
        \\hat\\theta^{*}_{(1-\\alpha/2)}]

    (empirical quantiles of the bootstrap distribution; Efron & Tibshirani
    1993, Eq. 13.5), or the bias-corrected and accelerated interval (``"bca"``,
    Eq. 14.9-14.15) whose quantile levels
    :math:`\\Phi\\big(\\hat z_0 + \\frac{\\hat z_0 + z_{q}}{1 - \\hat a(\\hat z_0 + z_{q})}\\big)`
    use the bias correction :math:`\\hat z_0 = \\Phi^{-1}(\\#\\{\\hat\\theta^* <
    \\hat\\theta\\}/B)` and the acceleration :math:`\\hat a` from a jackknife.
    The intervals are computed by :func:`scipy.stats.bootstrap`.

    Parameters
    ----------
    metric : callable
        ``metric(*arrays, **options)`` returning a float, e.g. ``cn.ece``.
        Metrics marked with :func:`batch_axis` are evaluated on many
        resamples per call; others are called once per resample. calibnb's
        binary metrics (batch axis and ``sample_weight``) get each resample as
        multiplicity weights of the original items (how often each item was
        drawn), which equals evaluating them on the resampled rows -- except
        for quantities that depend on the input order of tied confidences
        (``ks_error(ties="order")``, equal-mass bins splitting a tie group),
        where tied items keep their original order rather than the order in
        which they were drawn.
    *arrays : array-like
        The data, items along the first axis (e.g. ``conf, correct``, or
        ``probs, labels`` with probs of shape (N, K)); all of the same length N.
    n_resamples : int >= 2, default 2000
    level : float in (0, 1), default 0.95
        Confidence level.
    method : {"percentile", "bca"}, default "percentile"
        BCa needs a jackknife: N extra metric evaluations on N - 1 items, i.e.
        O(N^2) work -- use it for N up to a few thousand.
    seed : None, int or numpy.random.Generator
        ``None`` draws fresh entropy.
    vectorized : bool or None, default None
        Whether ``metric`` accepts arrays with a leading batch axis
        (``(S, N) -> (S,)``). ``None``: only if marked with :func:`batch_axis`.
    **options
        Passed to ``metric`` (e.g. ``n_bins=15``). A ``sample_weight`` of
        shape (N,) is resampled with the items.

    Returns
    -------
    BootstrapResult(estimate, low, high)
        ``estimate`` is the metric on the full data.

    Raises
    ------
    TypeError, ValueError
        For a metric that is not callable or does not return a number, arrays
        of different lengths or fewer than 2 items, and bad options.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
       Chapman & Hall, 1993, Chapters 13 (percentile interval, Eq. 13.5) and 14
       (BCa interval, Eqs. 14.9-14.15).
    .. [2] P. Virtanen et al., "SciPy 1.0: fundamental algorithms for
       scientific computing in Python", Nature Methods 17, 2020
       (``scipy.stats.bootstrap``).

    Examples
    --------
    >>> import calibnb as cn
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 500)
    >>> correct = rng.uniform(size=500) < conf
    >>> r = cn.bootstrap_ci(cn.ece, conf, correct, n_resamples=500, seed=0, n_bins=10)
    >>> r.low <= r.estimate <= r.high
    True
    >>> round(r.estimate, 4) == round(cn.ece(conf, correct, n_bins=10), 4)
    True
    """
    if not callable(metric):
        raise TypeError(f"metric must be callable (e.g. calibnb.ece); got {type(metric).__name__}.")
    arrs, n = _check_arrays(arrays)
    mode = _mode(metric, vectorized, options)
    estimate = _as_float(metric(*arrs, **options), getattr(metric, "__name__", "metric"))
    stat = _statistic(metric, arrs, options, mode)
    draw = None
    if mode == "weights":
        def draw(b, rng):
            return _weights_distribution(metric, arrs, options, b, rng)
    return _bootstrap(stat, estimate, n, n_resamples, level, method, seed, mode, draw)


def paired_bootstrap_ci(
    metric: Callable, a, b, *, n_resamples: int = 2000, level: float = 0.95,
    method: str = "percentile", seed=None, vectorized: bool | None = None, **options,
) -> BootstrapResult:
    """Bootstrap confidence interval of ``metric(*a) - metric(*b)`` on the same items.

    Two systems A and B scored on the same N items: each resample draws one
    set of item indices and applies it to the arrays of both systems, so the
    interval of

    .. math::

        \\Delta = M(\\text{A}) - M(\\text{B})

    accounts for the correlation between the systems (the items that are hard
    for A tend to be hard for B). This is the interval "A beats B" needs: if it
    contains 0, the data do not separate the two systems at that level.
    Percentile or BCa intervals as in :func:`bootstrap_ci` (Efron & Tibshirani
    1993, Chapters 13-14).

    Parameters
    ----------
    metric : callable
        As in :func:`bootstrap_ci`.
    a, b : tuple of array-like
        The arrays of each system, e.g. ``(conf_a, correct_a)``; all arrays of
        both tuples have the same length N (item i of A is item i of B).
    n_resamples, level, method, seed, vectorized, **options
        As in :func:`bootstrap_ci`.

    Returns
    -------
    BootstrapResult(estimate, low, high)
        ``estimate`` is ``metric(*a) - metric(*b)`` on the full data.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*,
       Chapman & Hall, 1993, Chapters 13-14 and Section 15.4 (paired data).

    Examples
    --------
    >>> import calibnb as cn
    >>> rng = np.random.default_rng(1)
    >>> correct = rng.uniform(size=400) < 0.7
    >>> conf_a = np.full(400, 0.7)                       # calibrated on average
    >>> conf_b = np.full(400, 0.95)                      # overconfident
    >>> d = cn.paired_bootstrap_ci(cn.ece, (conf_a, correct), (conf_b, correct), n_resamples=500, seed=0)
    >>> d.high < 0      # A has a clearly lower ECE than B
    True
    """
    if not callable(metric):
        raise TypeError(f"metric must be callable (e.g. calibnb.ece); got {type(metric).__name__}.")
    for name, group in (("a", a), ("b", b)):
        if not isinstance(group, (tuple, list)):
            raise TypeError(f"{name} must be a tuple of arrays, e.g. (conf, correct); got {type(group).__name__}.")
        if len(group) == 0:
            raise ValueError(f"{name} must hold at least one array.")
    arrs, n = _check_arrays(tuple(a) + tuple(b), "a + b",
                            [f"a[{i}]" for i in range(len(a))] + [f"b[{i}]" for i in range(len(b))])
    k = len(a)
    arrs_a, arrs_b = arrs[:k], arrs[k:]
    mode = _mode(metric, vectorized, options)
    name = getattr(metric, "__name__", "metric")
    estimate = _as_float(metric(*arrs_a, **options), name) - _as_float(metric(*arrs_b, **options), name)
    stat_a = _statistic(metric, arrs_a, options, mode)
    stat_b = _statistic(metric, arrs_b, options, mode)

    def statistic(i, axis=-1):
        return stat_a(i) - stat_b(i)

    draw = None
    if mode == "weights":
        def diff(*arrays, sample_weight, **opts):
            return metric(*arrays[:k], sample_weight=sample_weight, **opts) - metric(
                *arrays[k:], sample_weight=sample_weight, **opts)

        def draw(b, rng):
            return _weights_distribution(diff, arrs, options, b, rng)
    return _bootstrap(statistic, estimate, n, n_resamples, level, method, seed, mode, draw)


# --------------------------------------------------------------------------
# calibration tests with p-values
# --------------------------------------------------------------------------

_ALTERNATIVES = ("two-sided", "greater", "less")


def spiegelhalter_test(conf, correct, *, alternative: str = "two-sided") -> CalibrationTest:
    """Spiegelhalter's Z test of calibration.

    Under the null hypothesis that item i is correct with probability
    :math:`c_i` (independently), the Brier score
    :math:`B = \\sum_i (y_i - c_i)^2` has mean :math:`\\sum_i c_i(1 - c_i)` and
    variance :math:`\\sum_i (1 - 2c_i)^2 c_i(1 - c_i)`; standardising gives

    .. math::

        Z = \\frac{\\sum_i (y_i - c_i)(1 - 2c_i)}
        {\\sqrt{\\sum_i (1 - 2c_i)^2\\, c_i (1 - c_i)}}
        \\;\\sim\\; \\mathcal{N}(0, 1)\\ \\text{asymptotically}

    and the p-value :math:`2\\,\\bar\\Phi(|Z|)` (two-sided), :math:`\\bar\\Phi(Z)`
    (``"greater"``, the one-sided p-value MAPIE reports) or :math:`\\Phi(Z)`
    (``"less"``). Z > 0 when correct answers come with confidences below 1/2 or
    wrong ones with confidences above 1/2 more than calibration allows.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    alternative : {"two-sided", "greater", "less"}, default "two-sided"

    Returns
    -------
    CalibrationTest(statistic, p_value)

    Raises
    ------
    ValueError
        If every confidence is 0, 1/2 or 1 (the variance is 0: Z is undefined).

    References
    ----------
    .. [1] D. J. Spiegelhalter, "Probabilistic prediction in patient management
       and clinical trials", Statistics in Medicine 5(5):421-433, 1986, Eq. 4.

    Examples
    --------
    >>> r = spiegelhalter_test([0.1, 0.9, 0.21, 0.9, 0.5], [0, 1, 0, 1, 0])
    >>> round(r.statistic, 3), round(r.p_value, 3)
    (-0.757, 0.449)
    """
    from scipy.stats import norm

    conf, correct = check_conf_correct(conf, correct)
    check_choice(alternative, _ALTERNATIVES, "alternative")
    a = 1.0 - 2.0 * conf
    var = float(np.sum(a * a * conf * (1.0 - conf)))
    if var <= 0.0:
        raise ValueError(
            "spiegelhalter_test is undefined when every confidence is 0, 0.5 or 1 (zero variance)."
        )
    z = float(np.dot(correct - conf, a)) / np.sqrt(var)
    if alternative == "two-sided":
        p = 2.0 * norm.sf(abs(z))
    elif alternative == "greater":
        p = norm.sf(z)
    else:
        p = norm.cdf(z)
    return CalibrationTest(float(z), float(min(p, 1.0)))


def _max_abs_brownian_sf(x: float) -> float:
    """P(max_{0<=t<=1} |B_t| >= x) for standard Brownian motion B.

    Two series, each used where it converges fast (both are exact sums):
    for x >= 1 the reflection series :math:`4\\sum_{k\\ge1} (-1)^{k+1}
    \\bar\\Phi((2k-1)x)` (precise far into the tail), for x < 1 one minus the
    theta series :math:`\\frac{4}{\\pi}\\sum_{k\\ge0} \\frac{(-1)^k}{2k+1}
    \\exp(-\\pi^2(2k+1)^2/(8x^2))` of the distribution function.
    """
    from scipy.stats import norm

    if x <= 0.0:
        return 1.0
    k = np.arange(1, 60)
    if x >= 1.0:
        terms = (-1.0) ** (k + 1) * norm.sf((2 * k - 1) * x)
        return float(min(1.0, 4.0 * terms.sum()))
    j = 2 * np.arange(0, 60) + 1
    cdf = 4.0 / np.pi * np.sum((-1.0) ** np.arange(60) / j * np.exp(-(np.pi**2) * j * j / (8.0 * x * x)))
    return float(min(1.0, max(0.0, 1.0 - cdf)))


def _null_sd(conf: np.ndarray, test: str) -> float:
    """sigma = sqrt(sum c_i (1 - c_i)) / N, the sd of C_N under calibration (ValueError naming ``test`` if 0)."""
    sigma = float(np.sqrt(np.sum(conf * (1.0 - conf)))) / conf.shape[0]
    if sigma <= 0.0:
        raise ValueError(f"{test} is undefined when every confidence is 0 or 1 (sigma = 0).")
    return sigma


def cumulative_ks_test(conf, correct, *, ties: str = "order") -> CalibrationTest:
    """Kolmogorov-Smirnov-type test of calibration on cumulative differences.

    Sort the items by confidence and accumulate the differences between
    correctness and confidence (Arrieta-Ibarra et al. 2022, Eqs. 1-3):

    .. math::

        C_k = \\frac{1}{N}\\sum_{j \\le k} (y_{(j)} - c_{(j)}),\\qquad
        \\sigma = \\frac{1}{N}\\sqrt{\\sum_{i} c_i(1 - c_i)},\\qquad
        G = \\frac{\\max_k |C_k|}{\\sigma}

    :math:`\\max_k |C_k|` is calibnb's :func:`calibnb.ks_error` (Gupta et al.
    2021), and :math:`\\sigma` the standard deviation of :math:`C_N` under
    calibration. Under the null hypothesis of calibration, :math:`C_k/\\sigma`
    behaves asymptotically like a standard Brownian motion on [0, 1], so the
    p-value is :math:`P(\\max_{t \\le 1} |B_t| \\ge G)` (Darling & Siegert
    1953; Tygert 2022), computed from two exact series (see the source).

    Conventions: the p-value is **two-sided** -- a deviation of either sign
    (over- or under-confidence) counts, as in MAPIE's
    ``kolmogorov_smirnov_p_value`` (which computes ``1 - cdf`` and so loses its
    digits below about 1e-8; this one keeps them). A one-sided test (only
    over-, or only under-confidence) would use :math:`P(\\max_t B_t \\ge G) =
    2\\bar\\Phi(G)` by the reflection principle, at most the two-sided
    p-value and at least half of it (not offered here;
    ``tests/test_conventions.py`` checks the bounds). :func:`kuiper_test`'s
    range has no sign, and :func:`spiegelhalter_test` takes ``alternative``.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    ties : {"order", "group"}, default "order"
        Tie handling of :func:`calibnb.ks_error` (MAPIE breaks ties by a tiny
        random jitter instead; without ties all agree).

    Returns
    -------
    CalibrationTest(statistic, p_value)
        ``statistic`` is G (ECCE-MAD divided by :math:`\\sigma`).

    Raises
    ------
    ValueError
        If every confidence is 0 or 1 (:math:`\\sigma = 0`).

    References
    ----------
    .. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu,
       "Metrics of calibration for probabilistic predictions", JMLR 23(351),
       2022, Sections 2-3 (Eqs. 1-3 and the Kolmogorov-Smirnov metric).
    .. [2] M. Tygert, "Calibration of P-values for calibration and for
       deviation of a subpopulation from the full population",
       arXiv:2202.00100, 2022.
    .. [3] D. A. Darling and A. J. F. Siegert, "The first passage problem for a
       continuous Markov process", Ann. Math. Statist. 24(4):624-639, 1953.

    Examples
    --------
    >>> r = cumulative_ks_test([0.8, 0.3, 0.5, 0.55, 0.7, 0.1], [1, 0, 1, 0, 1, 0])
    >>> round(r.statistic, 3), round(r.p_value, 3)
    (0.416, 0.999)
    """
    conf, correct = check_conf_correct(conf, correct)
    g = ks_error(conf, correct, ties=ties) / _null_sd(conf, "cumulative_ks_test")
    return CalibrationTest(float(g), _max_abs_brownian_sf(g))


def _brownian_range_sf(x: float) -> float:
    """P(max_{t<=1} B_t - min_{t<=1} B_t >= x) for standard Brownian motion B (Feller 1951).

    Two exact series, each where it converges fast: for x >= 1 the tail series
    :math:`8\\sum_{k\\ge1} (-1)^{k-1} k\\,\\bar\\Phi(kx)` (the integral of Feller's
    density :math:`\\frac{8}{\\sqrt{2\\pi}}\\sum_k (-1)^{k-1}k^2 e^{-k^2x^2/2}`;
    precise far into the tail), for x < 1 one minus the distribution function
    :math:`\\sum_{k\\ge0} \\big(\\frac{8}{x^2} + \\frac{2}{(k+1/2)^2\\pi^2}\\big)
    e^{-2(k+1/2)^2\\pi^2/x^2}` (the series of Tygert 2022 that MAPIE's ``kuiper_cdf`` sums).
    """
    from scipy.stats import norm

    if x <= 0.0:
        return 1.0
    if x >= 1.0:
        k = np.arange(1, 80)
        return float(min(1.0, max(0.0, 8.0 * np.sum((-1.0) ** (k - 1) * k * norm.sf(k * x)))))
    h = np.arange(0, 60) + 0.5
    cdf = np.sum((8.0 / x**2 + 2.0 / (h * h * np.pi**2)) * np.exp(-2.0 * h * h * np.pi**2 / x**2))
    return float(min(1.0, max(0.0, 1.0 - cdf)))


def kuiper_test(conf, correct, *, ties: str = "order") -> CalibrationTest:
    """Kuiper-type test of calibration on cumulative differences (the range of the cumulative curve).

    With the cumulative differences :math:`C_k` of :func:`cumulative_ks_test`
    (items sorted by confidence; Arrieta-Ibarra et al. 2022, Eqs. 1-3) and
    :math:`C_0 = 0`:

    .. math::

        V = \\frac{\\max_{0 \\le k \\le N} C_k - \\min_{0 \\le k \\le N} C_k}{\\sigma},\\qquad
        \\sigma = \\frac{1}{N}\\sqrt{\\sum_{i} c_i(1 - c_i)}

    Under calibration :math:`C_k/\\sigma` behaves asymptotically like a
    standard Brownian motion on [0, 1], so the p-value is the probability that
    the range of Brownian motion reaches V, :math:`P(\\max_t B_t - \\min_t B_t
    \\ge V)` (Feller 1951; Tygert 2022), computed from two exact series (see
    the source). Kuiper's range reacts to a curve that rises and then falls
    (over- and under-confidence in different regions), which the KS maximum
    :math:`\\max_k |C_k|` can miss.

    Conventions: the range includes :math:`C_0 = 0`, the start of the
    Brownian path (as Arrieta-Ibarra et al. and probmetrics'
    ``KuiperCalibrationMetric``); MAPIE's ``kuiper_statistic`` takes the range
    of :math:`C_1..C_N` only, which is smaller when every :math:`C_k` has one
    sign (the two agree when the curve crosses 0). MAPIE breaks ties of
    confidences by a random jitter of relative size 1e-8; here ``ties``
    decides (as in :func:`cumulative_ks_test`). MAPIE reports ``1 - cdf``, which
    loses its digits below about 1e-8; this p-value keeps them.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    ties : {"order", "group"}, default "order"
        ``"order"``: stable sort, every :math:`C_k` counts (as
        :func:`calibnb.ks_error`); ``"group"``: only the :math:`C_k` at the end of
        each group of equal confidences, so the result does not depend on the
        input order of ties.

    Returns
    -------
    CalibrationTest(statistic, p_value)
        ``statistic`` is V (ECCE-R divided by :math:`\\sigma`).

    Raises
    ------
    ValueError
        If every confidence is 0 or 1 (:math:`\\sigma = 0`).

    References
    ----------
    .. [1] I. Arrieta-Ibarra, P. Gujral, J. Tannen, M. Tygert and C. Xu,
       "Metrics of calibration for probabilistic predictions", JMLR 23(351),
       2022, Sections 2-3 (the Kuiper metric, ECCE-R).
    .. [2] M. Tygert, "Calibration of P-values for calibration and for
       deviation of a subpopulation from the full population",
       arXiv:2202.00100, 2022.
    .. [3] W. Feller, "The asymptotic distribution of the range of sums of
       independent random variables", Ann. Math. Statist. 22(3):427-432, 1951.

    Examples
    --------
    >>> r = kuiper_test([0.1, 0.9, 0.21, 0.9, 0.5], [0, 1, 0, 1, 0])
    >>> round(r.statistic, 3), round(r.p_value, 3)
    (0.978, 0.947)
    """
    conf, correct = check_conf_correct(conf, correct)
    check_choice(ties, ("order", "group"), "ties")
    v = kuiper_error(conf, correct, ties=ties) / _null_sd(conf, "kuiper_test")  # range of C_0..C_N
    return CalibrationTest(float(v), _brownian_range_sf(v))
