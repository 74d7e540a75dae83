"""Calibration to the human label distribution (Baan et al. 2022).

``human`` is an (N, K) array of human vote counts (or an already normalised
distribution); :func:`human_distribution` turns it into the maximum-likelihood
distribution :math:`\\bar\\pi(x)` (no smoothing). The per-instance measures
return arrays so that notebooks can show their histograms (Baan Figures 1-2)
as well as their means.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_choice, check_human, check_probs
from .binary import ece
from .registry import Metric, register

__all__ = [
    "human_distribution",
    "majority_label",
    "entropy",
    "tvd",
    "dist_ce",
    "ent_ce",
    "rank_cs",
    "ranking_ties",
    "human_classwise_ce",
]


def human_distribution(human) -> np.ndarray:
    """Maximum-likelihood human label distribution (rows of the vote counts ``human`` normalised).

    .. math::

        \\bar\\pi_k(x) = \\frac{n_k(x)}{\\sum_{j} n_j(x)}

    Baan et al. 2022, Section 3 (no smoothing).

    Parameters
    ----------
    human : array-like of shape (N, K)
        Non-negative vote counts (or weights); no all-zero row.

    Returns
    -------
    ndarray of shape (N, K)

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Section 3.

    Examples
    --------
    >>> human_distribution([[3, 1, 0], [0, 2, 2]]).tolist()
    [[0.75, 0.25, 0.0], [0.0, 0.5, 0.5]]
    """
    h = check_human(human, name="human")
    return h / h.sum(axis=1, keepdims=True)


def majority_label(human) -> np.ndarray:
    """Human majority label per item: argmax of the vote counts, first index on ties.

    Examples
    --------
    >>> majority_label([[3, 1, 0], [0, 2, 2]]).tolist()
    [0, 1]
    """
    h = check_human(human, name="human")
    return np.argmax(h, axis=1)


def entropy(p) -> np.ndarray:
    """Shannon entropy of each row, natural log, with :math:`0 \\log 0 = 0`.

    .. math::

        H(p) = -\\sum_k p_k \\ln p_k

    Examples
    --------
    >>> np.round(entropy([[0.5, 0.5], [1.0, 0.0]]), 4).tolist()
    [0.6931, 0.0]
    """
    p = check_probs(p, "p")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=1)


def tvd(p, q) -> np.ndarray:
    """Total variation distance between matching rows of two distributions.

    .. math::

        \\mathrm{TVD}(p, q) = \\tfrac{1}{2}\\lVert p - q \\rVert_1

    Parameters
    ----------
    p, q : array-like of shape (N, K)
        Rows are probability distributions.

    Returns
    -------
    ndarray of shape (N,), values in [0, 1]

    Examples
    --------
    >>> tvd([[0.5, 0.5], [1.0, 0.0]], [[0.5, 0.5], [0.0, 1.0]]).tolist()
    [0.0, 1.0]
    """
    p = check_probs(p, "p")
    q = check_probs(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"q has shape {q.shape} but p has shape {p.shape}; they must match.")
    return np.minimum(0.5 * np.abs(p - q).sum(axis=1), 1.0)


def _probs_human(probs, human):
    p = check_probs(probs)
    h = check_human(human, p.shape[0], p.shape[1])
    return p, h / h.sum(axis=1, keepdims=True)


def dist_ce(probs, human) -> np.ndarray:
    """Distribution calibration error per instance (Baan et al. 2022, Eq. 7).

    .. math::

        \\mathrm{DistCE}(x) = \\mathrm{TVD}\\big(f(x), \\bar\\pi(x)\\big)

    Parameters
    ----------
    probs : array-like of shape (N, K)
        Model probabilities.
    human : array-like of shape (N, K)
        Human vote counts or distributions (normalised here).

    Returns
    -------
    ndarray of shape (N,)

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Eq. 7.

    Examples
    --------
    >>> dist_ce([[0.9, 0.1]], [[6, 4]]).round(3).tolist()
    [0.3]
    """
    p, h = _probs_human(probs, human)
    return np.minimum(0.5 * np.abs(p - h).sum(axis=1), 1.0)


def ent_ce(probs, human) -> np.ndarray:
    """Entropy calibration error per instance (Baan et al. 2022, Eq. 5), signed.

    .. math::

        \\mathrm{EntCE}(x) = H\\big(f(x)\\big) - H\\big(\\bar\\pi(x)\\big)

    natural log. Negative: the model is more certain than the humans. Baan
    report the mean of :math:`|\\mathrm{EntCE}|`.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Eq. 5.

    Examples
    --------
    >>> ent_ce([[1.0, 0.0]], [[5, 5]]).round(4).tolist()
    [-0.6931]
    """
    p, h = _probs_human(probs, human)
    return entropy(p) - entropy(h)


def ranking_ties(human) -> np.ndarray:
    """Whether each item's human distribution has tied classes (bool per item).

    Such items have several rankings consistent with the votes; see
    :func:`rank_cs`.

    Examples
    --------
    >>> ranking_ties([[3, 1, 0], [0, 2, 2]]).tolist()
    [False, True]
    """
    h = np.sort(check_human(human), axis=1)
    return (h[:, 1:] == h[:, :-1]).any(axis=1)


def rank_cs(probs, human, *, ties: str = "strict") -> float:
    """Ranking calibration score (Baan et al. 2022, Eq. 6).

    .. math::

        \\mathrm{RankCS} = \\frac{1}{N}\\sum_{i=1}^{N}
        \\mathbb{1}\\big[\\operatorname{argsort} f(x_i) = \\operatorname{argsort} \\bar\\pi(x_i)\\big]

    Parameters
    ----------
    probs : array-like of shape (N, K)
    human : array-like of shape (N, K)
        Vote counts or distributions.
    ties : {"strict", "any"}, default "strict"
        ``"strict"``: both rankings are stable ascending argsorts, as in Baan's
        reference code, so a human tie matches only the model ranking that
        breaks it by class index. ``"any"``: the model's ranking counts as a
        match if it is one of the rankings consistent with the human counts
        (classes ordered by the model have non-decreasing human probability).

    Returns
    -------
    float in [0, 1]

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Eq. 6.

    Examples
    --------
    >>> p = [[0.2, 0.5, 0.3], [0.6, 0.4, 0.0]]
    >>> h = [[1, 5, 3], [4, 4, 0]]
    >>> rank_cs(p, h), rank_cs(p, h, ties="any")
    (0.5, 1.0)
    """
    check_choice(ties, ("strict", "any"), "ties")
    p, h = _probs_human(probs, human)
    model_order = np.argsort(p, axis=1, kind="stable")
    if ties == "strict":
        match = (model_order == np.argsort(h, axis=1, kind="stable")).all(axis=1)
    else:
        along = np.take_along_axis(h, model_order, axis=1)
        match = (np.diff(along, axis=1) >= 0).all(axis=1)
    return float(match.mean())


def human_classwise_ce(probs, human) -> float:
    """Class-wise calibration error against the human distribution (no bins, no labels).

    .. math::

        \\mathrm{CE} = \\frac{1}{N}\\sum_{i=1}^{N}\\frac{1}{K}\\sum_{k=1}^{K}
        |f_k(x_i) - \\bar\\pi_k(x_i)|

    Jiang et al. 2024, Definition 1 (equal to :math:`\\tfrac{2}{K}` times the
    mean of :func:`calibnb.dist_ce`).

    See Also
    --------
    calibnb.classwise_ece : the binned class-wise ECE against *labels*
        (one label per item), not against a human distribution.
    calibnb.papers.baan2022.classwise_ece_nonzero : that binned ECE as Baan
        et al.'s code computes it (probabilities of exactly 0 dropped).

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the ACL (TACL). Definition 1.

    Examples
    --------
    >>> round(human_classwise_ce([[0.9, 0.1]], [[6, 4]]), 3)
    0.3
    """
    p = check_probs(probs)
    h = check_human(human, p.shape[0], p.shape[1])
    h = h / h.sum(axis=1, keepdims=True)
    return float(np.abs(p - h).mean())


# ---------------------------------------------------------------- registry declarations (calibnb.metrics.registry)

def _agreement_items(probs, human):
    """Per-item agreement of the model's top class with the human majority."""
    return probs.argmax(1) == majority_label(human)


def _dist_ce_items(probs, human):
    """Per-item total variation distance to the human distribution (DistCE)."""
    return 0.5 * np.abs(probs - human_distribution(human)).sum(1)


def _abs_ent_ce_items(probs, human):
    """Per-item |EntCE|."""
    return np.abs(ent_ce(probs, human))


def _jiang_ce_items(probs, human):
    """Per-item mean over classes of |model probability - human probability| (Jiang 2024)."""
    return np.abs(probs - human_distribution(human)).mean(1)


register(Metric("human_accuracy", "accuracy vs human majority", "Baan 2022",
                "share of predictions that match the humans' majority label", inputs="votes", form="mean",
                per_item=_agreement_items, higher_is_better=True))
register(Metric("dist_ce", "DistCE (mean)", "Baan 2022",
                "total variation distance between the model's and the humans' class distribution", inputs="votes",
                form="mean", per_item=_dist_ce_items, aka="mean of dist_ce(probs, human)"))
register(Metric("ent_ce", "|EntCE| (mean)", "Baan 2022",
                "|entropy of the model - entropy of the humans|: wrong amount of uncertainty", inputs="votes",
                form="mean", per_item=_abs_ent_ce_items, aka="mean of |ent_ce(probs, human)|"))
register(Metric("rank_cs", "RankCS", "Baan 2022", "share of items where the model orders the classes as the humans do",
                rank_cs, inputs="votes", form="loop", higher_is_better=True, aka="ranking calibration score"))
register(Metric("classwise_ece_human", "class-wise ECE vs human majority ({n_bins} bins)", "Baan 2022",
                "class-wise ECE with the human majority as the label", ece, inputs="probs_majority", form="classwise",
                binned=True, aka="classwise_ece(probs, majority_label(human))"))
register(Metric("jiang_ce", "CE vs human distribution", "Jiang 2024",
                "mean over items and classes of |model probability - human probability|", inputs="votes", form="mean",
                per_item=_jiang_ce_items, aka="human_classwise_ce(probs, human)"))
