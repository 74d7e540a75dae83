"""Scalar-label calibration metrics (Jiang, Liu, Van Durme 2024).

A class distribution is mapped to a scalar with an expected-label scoring rule
(:func:`expected_label`), then compared with scalar labels by mean absolute
error (:func:`scalar_mae`) and pairwise ranking risk (:func:`ranking_risk`,
O(N log N)). Their Definition 1 against the human distribution is
:func:`calibnb.human_classwise_ce`; :func:`unli_transform` is UNLI's slider-to-label map.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_1d_finite, check_human, check_probs, check_same_length
from .registry import Metric, register

__all__ = [
    "expected_label",
    "scalar_mae",
    "ranking_risk",
    "unli_transform",
    "unli_inverse",
    "TIE_TOLERANCE",
    "tie_ranks",
]

#: Relative (and, near 0, absolute) tolerance under which two scalars count as
#: tied: 2**-48, i.e. 16 ulps at 1.0. Values computed two ways (``0.1 + 0.2``
#: and ``0.3``; ``sum(p * v)`` over vote shares) differ by a few ulps, never
#: by a difference a person would call real.
TIE_TOLERANCE = 2.0**-48


def tie_ranks(x, name: str = "x") -> np.ndarray:
    """Dense ranks 0, 1, ... of ``x`` in which values within rounding noise are tied.

    After a sort, two neighbours :math:`u \\le v` share a rank when
    :math:`v - u \\le \\epsilon \\max(1, |v|)` with
    :math:`\\epsilon` = :data:`TIE_TOLERANCE` (an ``np.isclose``-style test with
    ``rtol = atol = 2**-48``); chains of such neighbours form one group. Used by
    every metric that compares scalar values (:func:`ranking_risk`,
    :func:`calibnb.papers.jiang2024.ranking_agreement`).

    Parameters
    ----------
    x : array-like of shape (N,)
        Finite values.
    name : str
        The argument's name, for error messages.

    Returns
    -------
    ndarray of int64 of shape (N,)

    Examples
    --------
    >>> tie_ranks([0.3, 0.1 + 0.2, 0.5]).tolist()
    [0, 0, 1]
    >>> tie_ranks([2.0, 1.0, 1.0 + 1e-9]).tolist()
    [2, 0, 1]
    """
    a = check_1d_finite(x, name)
    order = np.argsort(a, kind="stable")
    s = a[order]
    gap = np.diff(s) > TIE_TOLERANCE * np.maximum(1.0, np.abs(s[1:]))
    ranks = np.empty(a.shape[0], dtype=np.int64)
    ranks[order] = np.concatenate(([0], np.cumsum(gap)))
    return ranks


def expected_label(probs, values) -> np.ndarray:
    """Expected-label scoring rule :math:`\\psi_f` (Jiang et al. 2024, Definition 2).

    .. math::

        \\psi_f(p) = \\sum_{k=1}^{K} p_k\\, f(y_k)

    Parameters
    ----------
    probs : array-like of shape (N, K)
        Class distributions (model or human).
    values : array-like of shape (K,)
        The scalar value :math:`f(y_k)` of each class, e.g. for NLI in the
        order [entailment, neutral, contradiction]: ``[1, 0.5, 0]``.

    Returns
    -------
    ndarray of shape (N,)

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Definition 2.

    Examples
    --------
    >>> expected_label([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]], [1.0, 0.5, 0.0]).tolist()
    [0.75, 0.0]
    """
    p = check_probs(probs)
    v = check_1d_finite(values, "values")
    if v.shape[0] != p.shape[1]:
        raise ValueError(f"values has length {v.shape[0]} but probs has {p.shape[1]} classes; they must match.")
    return p @ v


def scalar_mae(pred_scalar, target_scalar) -> float:
    """Mean absolute error between scalar predictions and scalar labels.

    .. math::

        \\mathrm{MAE} = \\frac{1}{N}\\sum_{i=1}^{N} |\\psi_f(f(x_i)) - s_i|

    Jiang et al. 2024, Section 4.

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Section 4.

    Examples
    --------
    >>> scalar_mae([0.2, 0.9], [0.0, 1.0])
    0.15
    """
    a = check_1d_finite(pred_scalar, "pred_scalar")
    b = check_1d_finite(target_scalar, "target_scalar")
    check_same_length(a, b, "pred_scalar", "target_scalar")
    return float(np.abs(a - b).mean())


def _tied_pairs(*keys: np.ndarray) -> int:
    """Number of pairs equal in every key (sum of C(g, 2) over joint groups)."""
    if len(keys) == 1:
        _, counts = np.unique(keys[0], return_counts=True)
    else:
        _, counts = np.unique(np.stack(keys, axis=1), axis=0, return_counts=True)
    counts = counts.astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def _count_inversions(a: np.ndarray) -> int:
    """Pairs i < j with a[i] > a[j], for non-negative integer ``a``; O(N log N).

    Every inverted pair is counted once, at the highest bit where the two
    values differ: there they share the higher bits (same group) and the
    earlier one has a 1 where the later one has a 0. Groups are kept in a
    stable order by refining, level by level, a stable partition on the next
    bit (one vectorised pass per bit; the Python loop is over bits).
    """
    n = a.shape[0]
    if n < 2:
        return 0
    nbits = int(a.max()).bit_length()
    order = np.arange(n)
    pos = np.arange(n)
    total = 0
    for b in range(nbits - 1, -1, -1):
        s = a[order]
        key = s >> (b + 1)
        bit = (s >> b) & 1
        start = np.empty(n, dtype=bool)
        start[0] = True
        np.not_equal(key[1:], key[:-1], out=start[1:])
        gid = np.cumsum(start) - 1
        first = np.flatnonzero(start)
        ones_incl = np.cumsum(bit)
        ones_excl = ones_incl - bit
        ones_before = ones_excl - ones_excl[first][gid]  # earlier 1s in my group
        zero = bit == 0
        total += int(ones_before[zero].sum())
        # stable partition inside each group: zeros first, then ones
        zeros_before = (pos - first[gid]) - ones_before
        n_zeros = np.bincount(gid, weights=zero).astype(np.int64)
        new_pos = np.where(zero, first[gid] + zeros_before, first[gid] + n_zeros[gid] + ones_before)
        new_order = np.empty_like(order)
        new_order[new_pos] = order
        order = new_order
    return total


def ranking_risk(pred_scalar, target_scalar) -> float:
    """Pairwise ranking risk: the fraction of pairs ordered wrongly.

    .. math::

        \\mathrm{RR} = \\frac{D + T/2}{P},\\qquad
        P = \\#\\{i<j: s_i \\ne s_j\\}

    where, among the :math:`P` pairs not tied in the target :math:`s`,
    :math:`D` pairs are ordered oppositely by the prediction and :math:`T` are
    tied in the prediction. Pairs tied in the target are excluded (Jiang et al.
    2024, Section 4); pairs tied only in the prediction count as half
    discordant, so a constant prediction scores 0.5, like a random ranking.
    Values that differ only by rounding (within :data:`TIE_TOLERANCE`
    relative, see :func:`tie_ranks`) are ties, in both arguments: ``0.1 + 0.2``
    and ``0.3`` are the same target.
    Computed in O(N log N) by counting inversions, never by listing pairs.

    Parameters
    ----------
    pred_scalar, target_scalar : array-like of shape (N,)
        Finite scalars.

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        If every pair is tied in ``target_scalar`` (nothing to rank).

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Section 4.

    Examples
    --------
    >>> ranking_risk([0.1, 0.2, 0.3], [0.0, 0.5, 1.0])
    0.0
    >>> ranking_risk([0.3, 0.2, 0.1], [0.0, 0.5, 1.0])
    1.0
    >>> ranking_risk([0.5, 0.5, 0.9], [0.0, 1.0, 1.0])  # one tie counts half
    0.25
    >>> ranking_risk([0.2, 0.1, 0.9], [0.3, 0.1 + 0.2, 0.5])  # targets tied
    0.0
    """
    a = check_1d_finite(pred_scalar, "pred_scalar")
    s = check_1d_finite(target_scalar, "target_scalar")
    check_same_length(a, s, "pred_scalar", "target_scalar")
    a, s = tie_ranks(a), tie_ranks(s)
    n = a.shape[0]
    pairs = n * (n - 1) // 2 - _tied_pairs(s)
    if pairs == 0:
        raise ValueError("target_scalar has no two different values; the ranking risk is undefined.")
    order = np.lexsort((a, s))  # by target, ties in target by prediction
    _, ranks = np.unique(a, return_inverse=True)
    discordant = _count_inversions(ranks.ravel()[order].astype(np.int64))
    tied_pred_only = _tied_pairs(a) - _tied_pairs(a, s)
    return float((discordant + 0.5 * tied_pred_only) / pairs)


_B_LOW, _B_HIGH = 0.3, 0.02


def _sigmoid(x, beta):
    return 1.0 / (1.0 + np.exp(-beta * x))


_M_LOW = _sigmoid(-50.0, _B_LOW)
_M_HIGH = _sigmoid(50.0, _B_HIGH)


def unli_transform(slider) -> np.ndarray:
    """UNLI's logistic map from slider position to a label in [0, 1].

    .. math::

        t = s/100 - 50,\\quad
        u = \\begin{cases}
        \\tfrac{1}{2}\\,\\dfrac{\\sigma_{0.3}(t) - m}{1/2 - m} & t \\le 0\\\\[4pt]
        \\tfrac{1}{2} + \\tfrac{1}{2}\\,\\dfrac{\\sigma_{0.02}(t) - 1/2}{M - 1/2} & t > 0
        \\end{cases}

    with :math:`\\sigma_\\beta(t) = 1/(1 + e^{-\\beta t})`,
    :math:`m = \\sigma_{0.3}(-50)`, :math:`M = \\sigma_{0.02}(50)`
    (Jiang et al. 2024, after Chen et al. 2020's UNLI).

    Parameters
    ----------
    slider : array-like of shape (N,)
        Slider positions in [0, 10000].

    Returns
    -------
    ndarray of shape (N,), values in [0, 1]

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL).
    .. [2] Tongfei Chen, Zhengping Jiang, Adam Poliak, Keisuke Sakaguchi, Benjamin Van Durme. 2020. "Uncertain Natural Language Inference". In Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics (ACL).

    Examples
    --------
    >>> unli_transform([0, 5000, 10000]).round(6).tolist()
    [0.0, 0.5, 1.0]
    """
    s = check_1d_finite(slider, "slider")
    bad = (s < 0) | (s > 10000)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"slider has {int(bad.sum())} value(s) outside [0, 10000]; first at index {i}: {float(s[i])!r}."
        )
    t = s / 100.0 - 50.0
    low = 0.5 * (_sigmoid(t, _B_LOW) - _M_LOW) / (0.5 - _M_LOW)
    high = 0.5 + 0.5 * (_sigmoid(t, _B_HIGH) - 0.5) / (_M_HIGH - 0.5)
    return np.clip(np.where(t <= 0, low, high), 0.0, 1.0)


def unli_inverse(u) -> np.ndarray:
    """Inverse of :func:`unli_transform`: label in [0, 1] to slider position.

    .. math::

        t = \\begin{cases}
        \\operatorname{logit}\\big(m + 2u(1/2 - m)\\big)/0.3 & u \\le 1/2\\\\
        \\operatorname{logit}\\big(1/2 + (2u - 1)(M - 1/2)\\big)/0.02 & u > 1/2
        \\end{cases},\\qquad s = 100\\,(t + 50)

    Examples
    --------
    >>> unli_inverse(unli_transform([123.0, 5000.0, 9876.0])).round(6).tolist()
    [123.0, 5000.0, 9876.0]
    """
    u = check_1d_finite(u, "u")
    bad = (u < 0) | (u > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"u has {int(bad.sum())} value(s) outside [0, 1]; first at index {i}: {float(u[i])!r}.")
    q_low = _M_LOW + 2.0 * u * (0.5 - _M_LOW)
    q_high = 0.5 + (2.0 * u - 1.0) * (_M_HIGH - 0.5)
    q = np.where(u <= 0.5, q_low, q_high)
    beta = np.where(u <= 0.5, _B_LOW, _B_HIGH)
    t = np.log(q / (1.0 - q)) / beta
    return np.clip(100.0 * (t + 50.0), 0.0, 10000.0)


# ---------------------------------------------------------------- registry declarations (calibnb.metrics.registry)

def _abs_error_items(pred_scalar, target_scalar):
    """Per-item |predicted - target| of scalar labels (the items of :func:`scalar_mae`)."""
    return np.abs(pred_scalar - target_scalar)


register(Metric("psi_mae", "MAE of psi_f", "Jiang 2024",
                "mean |expected label of the model - expected label of the humans| (class values f)", scalar_mae,
                inputs="psi", form="mean", per_item=_abs_error_items, aka="scalar_mae of expected_label"))
register(Metric("psi_rr", "RR of psi_f", "Jiang 2024",
                "share of item pairs the model's expected label orders differently from the humans'", ranking_risk,
                inputs="psi", form="loop", aka="ranking risk; ranking_risk of expected_label"))
