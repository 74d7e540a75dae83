"""Multi-class metrics: class probabilities ``probs`` (N, K) and integer ``labels`` (N,).

The reductions :func:`top_r` and :func:`within_top_r` turn class probabilities
into the ``(conf, correct)`` pairs of :mod:`calibnb.metrics.binary`;
:func:`classwise_ece` and :func:`nbr` score all K probabilities. Inputs are
validated once with :mod:`calibnb.validation`; results are fractions.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_choice, check_n_bins, check_positive_int, check_probs_labels
from .binary import ece

__all__ = ["top_r", "within_top_r", "classwise_ece", "nbr"]


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
