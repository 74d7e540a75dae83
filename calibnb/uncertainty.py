"""Sampling uncertainty of calibration metrics: bootstrap confidence intervals.

A calibration metric computed on a few thousand items is itself a random
quantity; differences between systems reported in papers are often within that
noise. :func:`bootstrap_ci` gives a confidence interval for any metric of
paired arrays (items are resampled jointly: the same indices for every array),
and :func:`paired_bootstrap_ci` an interval for the difference of a metric
between two systems scored on the same items.

Both are built on :func:`scipy.stats.bootstrap`: scipy draws the resampled
item indices and computes the percentile or BCa interval; calibnb turns the
indices into resampled arrays and evaluates the metric. Metrics that accept a
leading batch axis (``conf, correct`` of shape ``(S, N)`` -> shape ``(S,)``;
see :func:`batch_axis`) are evaluated on many resamples at once; any other
callable is called once per resample.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, NamedTuple

import numpy as np

from .validation import as_numeric_array, as_rng, check_choice, check_positive_int, check_scalar_in_range

__all__ = ["BootstrapResult", "bootstrap_ci", "paired_bootstrap_ci", "batch_axis"]

_METHODS = ("percentile", "bca")
# Elements (resamples x items) evaluated per vectorised call: bounds the
# memory of the index array and the resampled arrays (about 8 bytes each).
_BATCH_ELEMENTS = 1 << 22
# Attribute that marks a metric whose arrays may carry a leading batch axis.
_BATCH_ATTR = "__calibnb_batch_axis__"


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


def batch_axis(func: Callable) -> Callable:
    """Mark ``func`` as accepting a leading batch axis on its array arguments.

    A marked metric called with arrays of shape ``(S, N)`` (S resamples or
    systems, N items) must return an array of shape ``(S,)`` equal, row by row,
    to calling it on each row. :func:`bootstrap_ci` then evaluates many
    resamples per call instead of looping over them.

    Examples
    --------
    >>> @batch_axis
    ... def mean_conf(conf, correct):
    ...     return np.mean(conf, axis=-1)
    >>> r = bootstrap_ci(mean_conf, [0.2, 0.4, 0.6, 0.8], [0, 1, 1, 1], seed=0)
    >>> r.estimate
    0.5
    """
    setattr(func, _BATCH_ATTR, True)
    return func


def _is_batched(metric: Callable) -> bool:
    return bool(getattr(metric, _BATCH_ATTR, False))


def _check_arrays(arrays, name: str = "arrays") -> tuple[list[np.ndarray], int]:
    """Arrays as ndarrays with one common first dimension (the items), N >= 2."""
    if len(arrays) == 0:
        raise TypeError(f"{name}: give at least one data array after the metric.")
    out = []
    for k, a in enumerate(arrays):
        arr = as_numeric_array(a, f"{name}[{k}]")
        if arr.ndim == 0:
            raise ValueError(f"{name}[{k}] must be an array of items, not a scalar.")
        out.append(arr)
    n = out[0].shape[0]
    for k, arr in enumerate(out[1:], start=1):
        if arr.shape[0] != n:
            raise ValueError(
                f"{name}[{k}] has {arr.shape[0]} items but {name}[0] has {n}; "
                "the arrays are resampled jointly and must have the same length."
            )
    if n < 2:
        raise ValueError(f"the bootstrap needs at least 2 items; {name}[0] has {n}.")
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


def _statistic(metric: Callable, arrays: list[np.ndarray], options: dict, batched: bool):
    """A vectorised statistic of resampled item indices for scipy.stats.bootstrap.

    scipy calls it with an integer index array ``i`` of shape ``(..., n)``
    (``n`` = N for resamples, N - 1 for BCa's jackknife); it returns the metric
    of every row of indices, with shape ``i.shape[:-1]``.
    """
    name = getattr(metric, "__name__", "metric")

    def statistic(i, axis=-1):
        i = np.asarray(i)
        rows = i.reshape(-1, i.shape[-1])
        if batched:
            out = np.asarray(metric(*(a[rows] for a in arrays), **options), dtype=np.float64)
            if out.shape != (rows.shape[0],):
                raise ValueError(
                    f"{name} is marked as batched but returned shape {out.shape} for "
                    f"{rows.shape[0]} resamples; expected ({rows.shape[0]},)."
                )
        else:
            out = np.empty(rows.shape[0])
            for r, row in enumerate(rows):
                out[r] = _as_float(metric(*(a[row] for a in arrays), **options), name)
        return out.reshape(i.shape[:-1])

    return statistic


def _bootstrap(statistic, estimate: float, n: int, n_resamples, level, method, seed, batched: bool):
    from scipy import stats

    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=2)
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    check_choice(method, _METHODS, "method")
    rng = as_rng(seed)
    batch = max(1, _BATCH_ELEMENTS // n) if batched else None
    res = stats.bootstrap(
        (np.arange(n),), statistic, n_resamples=n_resamples, batch=batch, vectorized=True,
        confidence_level=level, method="BCa" if method == "bca" else "percentile", rng=rng,
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
        resamples per call; others are called once per resample.
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
        Passed to ``metric`` (e.g. ``n_bins=15``).

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
    batched = _is_batched(metric) if vectorized is None else bool(vectorized)
    estimate = _as_float(metric(*arrs, **options), getattr(metric, "__name__", "metric"))
    stat = _statistic(metric, arrs, options, batched)
    return _bootstrap(stat, estimate, n, n_resamples, level, method, seed, batched)


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
    arrs, n = _check_arrays(tuple(a) + tuple(b), "a + b")
    k = len(a)
    arrs_a, arrs_b = arrs[:k], arrs[k:]
    batched = _is_batched(metric) if vectorized is None else bool(vectorized)
    name = getattr(metric, "__name__", "metric")
    estimate = _as_float(metric(*arrs_a, **options), name) - _as_float(metric(*arrs_b, **options), name)
    stat_a = _statistic(metric, arrs_a, options, batched)
    stat_b = _statistic(metric, arrs_b, options, batched)

    def statistic(i, axis=-1):
        return stat_a(i) - stat_b(i)

    return _bootstrap(statistic, estimate, n, n_resamples, level, method, seed, batched)
