"""Multi-class metrics: class probabilities ``probs`` (N, K) and integer ``labels`` (N,).

The reductions :func:`top_r` and :func:`within_top_r` turn class probabilities
into the ``(conf, correct)`` pairs of :mod:`calibnb.metrics.binary`;
:func:`classwise_ece` and :func:`nbr` score all K probabilities. Inputs are
validated once with :mod:`calibnb.validation`; results are fractions.
"""

from __future__ import annotations

import numpy as np

from ..validation import (
    as_float_array,
    as_numeric_array,
    check_choice,
    check_conf,
    check_labels,
    check_n_bins,
    check_positive_int,
    check_probs_labels,
)
from .binary import ece, ks_error
from .registry import Metric, register

__all__ = ["top_r", "within_top_r", "classwise_ece", "classwise_ks", "nbr", "stable_row_sort"]


def _check_r(r, n_classes: int) -> int:
    r = check_positive_int(r, "r")
    if r > n_classes:
        raise ValueError(f"r must be at most the number of classes {n_classes}; got {r}.")
    return r


def _descending_order(probs: np.ndarray) -> np.ndarray:
    """Class indices by decreasing probability; ties: lower class index first."""
    return np.argsort(-probs, axis=1, kind="stable")


def top_r(probs, labels, *, r: int = 1):
    """The r-th largest probability and whether its class is the label.

    .. math::

        c_i = f_{(r)}(x_i),\\qquad y_i = \\mathbb{1}[k_{(r)}(x_i) = \\text{label}_i]

    where :math:`k_{(r)}` is the class of the r-th largest probability (ties:
    lower class index first). Gupta et al. 2021, Eqs. 3-4.

    Parameters
    ----------
    probs : array-like of shape (N, K)
    labels : array-like of int of shape (N,)
    r : int in 1..K, default 1

    Returns
    -------
    conf : ndarray (N,)
    correct : ndarray (N,) of bool

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Eqs. 3-4.

    Examples
    --------
    >>> conf, correct = top_r([[0.2, 0.7, 0.1], [0.5, 0.1, 0.4]], [1, 2], r=2)
    >>> conf.tolist(), correct.tolist()
    ([0.2, 0.4], [False, True])
    """
    probs, labels = check_probs_labels(probs, labels)
    r = _check_r(r, probs.shape[1])
    rows = np.arange(probs.shape[0])
    if r == 1:
        cls = np.argmax(probs, axis=1)
    else:
        cls = _descending_order(probs)[:, r - 1]
    return probs[rows, cls], cls == labels


def within_top_r(probs, labels, *, r: int = 2):
    """Sum of the r largest probabilities and whether the label is among them.

    .. math::

        c_i = \\sum_{s=1}^{r} f_{(s)}(x_i),\\qquad
        y_i = \\mathbb{1}[\\text{label}_i \\in \\{k_{(1)}, \\dots, k_{(r)}\\}]

    Gupta et al. 2021, Eq. 5 (ties: lower class index first).

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Eq. 5.

    Examples
    --------
    >>> conf, correct = within_top_r([[0.2, 0.7, 0.1], [0.5, 0.1, 0.4]], [0, 1], r=2)
    >>> np.round(conf, 3).tolist(), correct.tolist()
    ([0.9, 0.9], [True, False])
    """
    probs, labels = check_probs_labels(probs, labels)
    r = _check_r(r, probs.shape[1])
    top = _descending_order(probs)[:, :r]
    conf = np.take_along_axis(probs, top, axis=1).sum(axis=1)
    correct = (top == labels[:, None]).any(axis=1)
    return np.clip(conf, 0.0, 1.0), correct


def classwise_ece(probs, labels, *, n_bins: int = 10, binning: str = "width") -> float:
    """Class-wise ECE averaged over classes, against one label per item (Baan et al. 2022, Eq. 8).

    .. math::

        \\mathrm{cwECE} = \\frac{1}{K}\\sum_{k=1}^{K}
        \\mathrm{ECE}\\big(f_k(x),\\ \\mathbb{1}[\\text{label} = k]\\big)

    Every item counts in every class (a probability of 0 falls in the first
    bin), with the bins of :func:`calibnb.ece`.

    See Also
    --------
    calibnb.papers.baan2022.classwise_ece_nonzero : the same quantity with the
        binning of Baan et al.'s code, which drops probabilities of exactly 0.
    calibnb.human_classwise_ce : an unbinned class-wise error against the
        human label *distribution* (Jiang et al. 2024, Definition 1).

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of EMNLP 2022. Eq. 8.

    Examples
    --------
    >>> round(classwise_ece([[0.9, 0.1], [0.3, 0.7]], [0, 1], n_bins=2), 3)
    0.2
    """
    probs, labels = check_probs_labels(probs, labels)
    n_bins = check_n_bins(n_bins)
    check_choice(binning, ("width", "mass"), "binning")
    k = probs.shape[1]
    total = 0.0
    for cls in range(k):  # loop over classes, not instances
        col = np.clip(probs[:, cls], 0.0, 1.0)
        total += ece(col, labels == cls, n_bins=n_bins, binning=binning)
    return float(total / k)


def _check_class_scores(probs, labels):
    """(N, K) per-class scores in [0, 1] (rows need not sum to 1) and labels in [0, K)."""
    arr = as_numeric_array(probs, "probs")
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"probs must be 2-D with shape (N, K) and K >= 2 classes; got shape {arr.shape}.")
    p = check_conf(arr.reshape(-1), "probs").reshape(arr.shape)
    return p, check_labels(labels, p.shape[0], p.shape[1])


def stable_row_sort(rows: np.ndarray, *, hint=None) -> tuple[np.ndarray, np.ndarray]:
    """``np.argsort(rows, axis=1, kind="stable")`` of an (m, n) float array, and the sorted rows; faster.

    Each row is sorted by the fast (unstable) default sort. Where a row holds
    equal values, the order of ties matters: its values are replaced by their
    dense ranks (at most n distinct, so a small integer type) and those are
    sorted stably, which NumPy does by radix sort. The sorted values do not
    depend on the order of ties.

    Parameters
    ----------
    rows : array-like of shape (m, n)
        Finite values, one row to sort per line.
    hint : array-like of int of shape (m, n), optional
        A guess at the order: each row a permutation of ``0..n-1``, e.g. the
        stable order of scores that a (nearly) monotone map turned into
        ``rows``. The result does not depend on it (the stable order is
        unique); a close guess makes the sort several times faster (each row
        is taken in the hinted order and sorted by an adaptive sort, which is
        quick on nearly sorted data).

    Returns
    -------
    order : ndarray of int of shape (m, n)
    sorted_rows : ndarray of shape (m, n)

    >>> order, s = stable_row_sort(np.array([[0.5, 0.2, 0.5, 0.1]]))
    >>> order.tolist(), s.tolist()
    ([[3, 1, 0, 2]], [[0.1, 0.2, 0.5, 0.5]])
    >>> stable_row_sort(np.array([[0.5, 0.2, 0.5, 0.1]]), hint=[[0, 1, 2, 3]])[0].tolist()
    [[3, 1, 0, 2]]
    """
    rows = as_float_array(rows, "rows", keep_float32=True)
    if rows.ndim != 2:
        raise ValueError(f"rows must be a 2-D array (one row to sort per line); got shape {rows.shape}.")
    if not np.isfinite(rows).all():
        raise ValueError("rows holds NaN or infinite values; they have no place in a sort order.")
    if hint is None:
        order = np.argsort(rows, axis=1)
        s = _take_rows(rows, order)
    else:
        hint = _check_row_permutations(hint, rows.shape)
        v = _take_rows(rows, hint)
        perm = np.argsort(v, axis=1, kind="stable")  # adaptive (timsort): fast on nearly sorted rows
        order, s = _take_rows(hint, perm), _take_rows(v, perm)
    return _order_ties_by_position(np.ascontiguousarray(order), s), s


def _order_ties_by_position(order: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``order`` (m, n) sorting each row to ``s``, with every run of equal values put in increasing position.

    That is the stable order, whatever order the sort left ties in. Few tied items (the usual case for
    probabilities: a few equal values per row) are re-sorted alone, by one sort of (group, position) keys;
    many (a recalibrator's few distinct outputs) by a stable radix sort of each tied row's dense ranks.
    """
    m, n = s.shape
    same = s[:, 1:] == s[:, :-1]
    n_same = int(np.count_nonzero(same))
    if n_same == 0:
        return order
    if 8 * n_same < same.size and m * n * n < 2**62:
        member = np.zeros((m, n), dtype=bool)  # items in a run of equal values
        member[:, 1:] = same
        member[:, :-1] |= same
        f = np.flatnonzero(member)
        col = f % n
        cont = np.zeros(f.size, dtype=bool)  # f continues the run of f - 1
        inner = col > 0
        cont[inner] = same.reshape(-1)[(f[inner] // n) * (n - 1) + col[inner] - 1]
        group = np.cumsum(~cont, dtype=np.int64)  # int64 keys also where intp is 32-bit (Pyodide)
        flat = order.reshape(-1)  # a view: order is C-contiguous
        keys = group * n + flat[f]
        keys.sort()
        flat[f] = keys - group * n
        return order
    step = ~same
    tied = ~np.all(step, axis=1)
    dense_sorted = np.zeros((int(tied.sum()), n), dtype=np.uint16 if n <= 65535 else np.uint32)
    np.cumsum(step[tied], axis=1, out=dense_sorted[:, 1:])
    dense = np.empty_like(dense_sorted)
    np.put_along_axis(dense, order[tied], dense_sorted, axis=1)
    order[tied] = np.argsort(dense, axis=1, kind="stable")
    return order


def _take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``np.take_along_axis(a, idx, axis=1)`` for (m, n) arrays, by one flat ``np.take`` (the same elements; faster)."""
    m, n = idx.shape
    return np.take(a.reshape(-1), idx + (n * np.arange(m, dtype=idx.dtype))[:, None])


def _check_row_permutations(hint, shape: tuple) -> np.ndarray:
    """``hint`` as (m, n) intp rows, each a permutation of 0..n-1, or a ValueError/TypeError naming it."""
    arr = np.asarray(hint)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"hint must hold integer positions (a permutation of 0..n-1 per row); got dtype {arr.dtype}.")
    if arr.shape != shape:
        raise ValueError(f"hint must have the shape of rows {shape}; got {arr.shape}.")
    m, n = shape
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"hint must hold positions in 0..{n - 1}; got values in {arr.min()}..{arr.max()}.")
    arr = arr.astype(np.intp, copy=False)
    seen = np.zeros(m * n, dtype=bool)
    seen[(arr + (n * np.arange(m, dtype=np.intp))[:, None]).reshape(-1)] = True
    if not seen.all():
        row = int(np.flatnonzero(~seen)[0]) // n
        raise ValueError(f"hint must be a permutation of 0..{n - 1} in every row; row {row} repeats a position.")
    return arr


def classwise_ks(probs, labels, *, ties: str = "order", per_class: bool = False):
    """Class-wise KS calibration error, averaged over classes (Gupta et al. 2021, §3).

    For each class :math:`k`, sort the items by :math:`f_k(x_i)` (stable,
    ascending) and take the KS error of Eqs. 9-12 with "correct" meaning
    :math:`y_i = k`; average over the :math:`K` classes:

    .. math::

        \\mathrm{KS}_k = \\max_i \\Big| \\frac{1}{N}\\sum_{j \\le i} \\mathbb{1}[y_{(j)} = k]
        - \\frac{1}{N}\\sum_{j \\le i} f_k(x_{(j)}) \\Big|,\\qquad
        \\mathrm{cwKS} = \\frac{1}{K}\\sum_{k=1}^{K} \\mathrm{KS}_k .

    Each :math:`\\mathrm{KS}_k` equals ``ks_error(probs[:, k], labels == k,
    ties=ties)``; the classes are processed together (one sort of the
    ``(N, K)`` array), not one by one.

    Parameters
    ----------
    probs : array-like of shape (N, K)
        Class probabilities (rows need not sum to 1, e.g. after recalibrating
        each class separately), each in [0, 1].
    labels : array-like of int of shape (N,)
        Labels in ``0..K-1``.
    ties : {"order", "group"}, default "order"
        As in :func:`ks_error`: ``"order"`` evaluates every position of the
        stable sort, ``"group"`` only the last item of each group of equal
        probabilities (invariant to the order of ties).
    per_class : bool, default False
        Return the K values :math:`\\mathrm{KS}_k` instead of their mean.

    Returns
    -------
    float in [0, 1], or ndarray of shape (K,) when ``per_class``

    References
    ----------
    K. Gupta et al., "Calibration of Neural Networks using Splines", ICLR
    2021, Eqs. 2, 9-12 (classwise calibration, Kull et al. 2019).

    Examples
    --------
    >>> probs = [[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]]
    >>> round(classwise_ks(probs, [0, 1, 1]), 4)
    0.25
    >>> np.round(classwise_ks(probs, [0, 1, 1], per_class=True), 4).tolist()
    [0.2667, 0.2333]
    """
    probs, labels = _check_class_scores(probs, labels)
    check_choice(ties, ("order", "group"), "ties")  # the tie rules of ks_error
    if not isinstance(per_class, (bool, np.bool_)):
        raise TypeError(f"per_class must be True or False; got {type(per_class).__name__} {per_class!r}.")
    n, k = probs.shape
    order, p_sorted = stable_row_sort(np.ascontiguousarray(probs.T))  # one row per class
    hit = labels[order] == np.arange(k)[:, None]
    gap = np.cumsum(hit - p_sorted, axis=1)
    if ties == "group":  # only the last item of each group of equal probabilities
        last = np.ones_like(hit)
        last[:, :-1] = p_sorted[:, 1:] != p_sorted[:, :-1]
        gap = np.where(last, gap, 0.0)
    per = np.max(np.abs(gap), axis=1) / n
    return per if per_class else float(per.mean())


def nbr(probs, labels) -> float:
    """Normalised Brier score over all class probabilities (Sakai 2024, Eq. 2).

    .. math::

        \\mathrm{NBR} = \\frac{1}{N M}\\sum_{j=1}^{N}\\sum_{m=1}^{M}
        (p_j^m - \\mathrm{GOLD}_j^m)^2

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 2.

    Examples
    --------
    >>> round(nbr([[0.6, 0.4, 0.0]], [0]), 4)  # (0.16 + 0.16) / 3
    0.1067
    """
    probs, labels = check_probs_labels(probs, labels)
    n, k = probs.shape
    d = probs.copy()
    d[np.arange(n), labels] -= 1.0
    return float(np.einsum("ij,ij->", d, d) / (n * k))


# ---------------------------------------------------------------- registry declarations (calibnb.metrics.registry)

def _nbr_items(probs, labels):
    """Per-item form of :func:`nbr`: each row's squared error over the classes, divided by the classes."""
    d = probs.copy()
    d[np.arange(d.shape[0]), labels] -= 1.0
    return np.einsum("ij,ij->i", d, d) / d.shape[1]


register(Metric("ks_top2", "KS (top-2)", "Gupta 2021",
                "KS of the second-highest probability against 'the label is the second guess'", ks_error,
                inputs="top2", aka="ks_error(*top_r(probs, labels, r=2))"))
register(Metric("ks_within_top2", "KS (within-top-2)", "Gupta 2021",
                "KS of the top-2 probability mass against 'the label is among the top two'", ks_error,
                inputs="within2", aka="ks_error(*within_top_r(probs, labels, r=2))"))
register(Metric("ks_classwise", "KS (class-wise, mean over classes)", "Gupta 2021",
                "KS of each class's probability against 'label == k', averaged over classes (calibnb.classwise_ks)",
                ks_error, inputs="probs", form="classwise", aka="classwise_ks(probs, labels)"))
register(Metric("classwise_ece", "class-wise ECE ({n_bins} bins)", "Baan 2022",
                "ECE of each class's probability against 'label == k', averaged over classes", ece, inputs="probs",
                form="classwise", binned=True, aka="classwise_ece(probs, labels)"))
register(Metric("nbr", "NBR", "Sakai 2024", "Brier score over all class probabilities, divided by the classes", nbr,
                inputs="probs", form="mean", per_item=_nbr_items, aka="normalised Brier score; nbr(probs, labels)"))
