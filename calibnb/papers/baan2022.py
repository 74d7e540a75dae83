"""Calibration to human disagreement: the tools behind notebook 02 (Baan et al. 2022).

Baan, Aziz, Plank and Fernández (2022), *Stop Measuring Calibration When Humans
Disagree* (EMNLP), measure a classifier against the distribution of many human
votes per item instead of against the majority label. The instance-level
measures themselves (``dist_ce``, ``ent_ce``, ``rank_cs``) live in
:mod:`calibnb.metrics.human`; this module holds what the notebook
``notebooks/02_baan2022_human_disagreement.ipynb`` needs around them:

- :func:`calibnb.data.subsample_votes` draws disjoint groups of votes per item (without
  replacement) to build the sub-sampled "human classifiers" H1 and H2 of §5.2;
- :func:`histogram_divergence` compares two DistCE error distributions through
  their binned histograms (Table 2), with an explicit ``smoothing`` option and an
  honest ``inf`` for an unsmoothed KL divergence with an empty bin;
- :func:`divergence_draws` repeats Table 2 over many seeded draws of H1 and H2,
  so that the sampling spread of the paper's single draw can be measured;
- :func:`original_agreement` counts how many of an item's original annotations
  agree (ChaosNLI's "at most 3 of 5" selection rule, §5.1);
- :func:`expected_single_vote_dist_ce` is DistCE's expectation against one vote
  (the linear score 1 - f_y, which is not proper, §4);
- :func:`kth_guess` extracts the k-th largest probability (Appendix B);
- :func:`classwise_ece_nonzero` computes classwise-ECE (Eq. 8) with the
  binning of the authors' code, which silently drops probabilities of exactly 0;
- :func:`human_calibration_summary` gives one row of Table 1;
- :func:`votes_stability` and :func:`ranking_stability` ask how many votes per
  item are needed before DistCE ranks models stably;
- :func:`human_temperature_explorer` and :func:`votes_explorer` are the
  notebook's two interactive panels (ipywidgets, imported when built).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data import subsample_votes
from ..widgets import build_panel, temperature_slider
from ..validation import (
    as_rng,
    check_1d_finite,
    check_choice,
    check_human,
    check_labels,
    check_logits,
    check_n_bins,
    check_positive_int,
    check_probs,
    check_probs_labels,
    check_scalar_in_range,
    check_vote_counts,
    seed_int,
)
from .. import plots
from ..calibrators import softmax
from ..metrics import dist_ce, ece, ent_ce, entropy, human_distribution, majority_label, rank_cs
from ..metrics.batch import batch_axis

__all__ = [
    "histogram_divergence",
    "divergence_draws",
    "original_agreement",
    "expected_single_vote_dist_ce",
    "kth_guess",
    "classwise_ece_nonzero",
    "human_calibration_summary",
    "votes_stability",
    "ranking_stability",
    "human_temperature_explorer",
    "votes_explorer",
    "item_mean",
    "mean_diff_ci",
    "two_sample_ci",
    "marginal_tvd",
    "marginal_tvd_stat",
    "relative_drops",
    "NLI_CLASSES",
    "marginal_panels_data",
    "plot_marginal_panels",
    "error_panels_data",
    "plot_error_panels",
]


def _normalised_histogram(values: np.ndarray, bins: int, low: float, high: float, smoothing: float) -> np.ndarray:
    counts = np.histogram(values, bins=bins, range=(low, high))[0].astype(np.float64) + smoothing
    return counts / counts.sum()


def histogram_divergence(
    a: Any,
    b: Any,
    *,
    divergence: str = "kl",
    bins: int = 30,
    range: tuple[float, float] = (0.0, 1.0),
    smoothing: float = 0.0,
) -> float:
    r"""KL divergence or TVD between the binned histograms of two samples.

    Baan et al. (2022, Table 2) compare DistCE *error distributions*: each
    sample (e.g. the DistCE of every item under H1, and under RoBERTa) is
    binned into ``bins`` equal-width bins on ``range``; with :math:`n_{j}` the
    count in bin :math:`j` and :math:`s \ge 0` the ``smoothing`` pseudo-count
    added to every bin,

    .. math::

        P_j = \frac{n^a_j + s}{\sum_i (n^a_i + s)}, \qquad
        \mathrm{KL}(P \,\|\, Q) = \sum_{j: P_j > 0} P_j \ln \frac{P_j}{Q_j}, \qquad
        \mathrm{TVD}(P, Q) = \tfrac12 \sum_j |P_j - Q_j|.

    Without smoothing the KL divergence is infinite when a bin is empty in
    ``b`` but not in ``a``; that ``inf`` is returned, never hidden. Natural log.

    Parameters
    ----------
    a, b : array-like of shape (N,) and (M,)
        The two samples (e.g. per-item DistCE). Every value must lie in ``range``.
    divergence : {"kl", "tvd"}, default "kl"
        ``"kl"`` gives KL(a ‖ b) (asymmetric), ``"tvd"`` the total variation distance.
    bins : int, default 30
        Number of equal-width bins.
    range : (float, float), default (0.0, 1.0)
        Lower and upper edge of the bins (the upper edge is included, as in
        :func:`numpy.histogram`).
    smoothing : float, default 0.0
        Pseudo-count added to every bin of both histograms before normalising.

    Returns
    -------
    float
        The divergence; ``inf`` for an unsmoothed KL with an empty bin in ``b``.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Table 2.

    Examples
    --------
    >>> histogram_divergence([0.1, 0.1, 0.6], [0.1, 0.6, 0.6], bins=2, divergence="tvd")
    0.3333333333333333
    >>> histogram_divergence([0.1, 0.6], [0.1, 0.1], bins=2)
    inf
    >>> round(histogram_divergence([0.1, 0.6], [0.1, 0.1], bins=2, smoothing=1.0), 4)
    0.1438
    """
    x = check_1d_finite(a, "a")
    y = check_1d_finite(b, "b")
    divergence = check_choice(divergence, ("kl", "tvd"), "divergence")
    bins = check_n_bins(bins, "bins")
    try:
        low, high = (float(v) for v in range)
    except (TypeError, ValueError):
        raise TypeError(f"range must be a pair of numbers (low, high); got {range!r}.") from None
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"range must be finite with low < high; got {range!r}.")
    smoothing = check_scalar_in_range(smoothing, "smoothing", low=0.0)
    for name, v in (("a", x), ("b", y)):
        bad = (v < low) | (v > high)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{name} has {int(bad.sum())} value(s) outside [{low:g}, {high:g}]; first at index {i}: {v[i].item()!r}."
            )
    p = _normalised_histogram(x, bins, low, high, smoothing)
    q = _normalised_histogram(y, bins, low, high, smoothing)
    if divergence == "tvd":
        return float(0.5 * np.abs(p - q).sum())
    support = p > 0
    if np.any(support & (q == 0)):
        return float("inf")
    return float(np.sum(p[support] * np.log(p[support] / q[support])))


def divergence_draws(
    counts: Any,
    others: Mapping[Any, Any],
    *,
    n_votes: int = 20,
    n_draws: int = 40,
    bins: int = 30,
    smoothing: float = 0.5,
    seed: Any = None,
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    r"""Table 2 of Baan et al. (2022) over ``n_draws`` seeded draws of the human classifiers H1, H2.

    In each draw, every item's votes give two disjoint groups of ``n_votes``
    (:func:`calibnb.data.subsample_votes`); their MLEs are H1 and H2, and each is
    scored against all votes, :math:`d^{H}(x) = \mathrm{TVD}(\bar\pi^{(H)}(x), \bar\pi(x))`.
    The DistCE sample of H1 is then compared with that of H2 and of every entry
    of ``others`` through 30-bin histograms (:func:`histogram_divergence`):
    the raw :math:`\mathrm{KL}(H1 \,\|\, \cdot)` (``inf`` when a bin of H1 is empty
    in the other, as ``scipy.stats.entropy`` gives in the authors' code), the KL
    with ``smoothing`` pseudo-counts per bin, and the TVD. The paper reports one
    draw; the spread over draws is the sampling noise of that single number.

    Parameters
    ----------
    counts : array-like of shape (N, K)
        Whole vote counts per item; every item needs ``2 * n_votes`` votes.
    others : mapping
        Label -> per-item DistCE of a classifier, shape (N,), values in [0, 1]
        (e.g. ``{"RoBERTa": calibnb.dist_ce(probs, human)}``). The label ``"H2"``
        is reserved.
    n_votes : int, default 20
        Votes per item in each of H1 and H2.
    n_draws : int, default 40
        Independent draws.
    bins : int, default 30
        Equal-width histogram bins on [0, 1].
    smoothing : float, default 0.5
        Pseudo-count per bin of the smoothed KL.
    seed : None, int or numpy.random.Generator
        Source of randomness; draws are consecutive uses of one generator.

    Returns
    -------
    table : pandas.DataFrame
        One row per draw and compared classifier: ``draw``, ``vs`` (``"H2"`` or a
        label of ``others``), ``KL`` (raw, may be ``inf``), ``KL smoothed``, ``TVD``.
    first : dict
        The per-item DistCE of H1 and H2 in the first draw (for plots).

    Examples
    --------
    >>> votes = [[60, 40, 0], [10, 80, 10], [100, 0, 0], [34, 33, 33]]
    >>> table, first = divergence_draws(votes, {}, n_votes=20, n_draws=3, bins=5, seed=0)
    >>> table.shape, sorted(first)
    ((3, 5), ['H1', 'H2'])
    >>> bool((table["TVD"] >= 0).all() and (table["TVD"] <= 1).all())
    True
    """
    c = check_vote_counts(counts, "counts")
    n_votes = check_positive_int(n_votes, "n_votes")
    n_draws = check_positive_int(n_draws, "n_draws")
    bins = check_n_bins(bins, "bins")
    smoothing = check_scalar_in_range(smoothing, "smoothing", low=0.0)
    if not isinstance(others, Mapping):
        raise TypeError(f"others must be a mapping of label -> per-item DistCE; got {type(others).__name__}.")
    if "H2" in others:
        raise ValueError("others must not use the label 'H2' (it names the second human classifier).")
    samples = {label: check_1d_finite(v, f"others[{label!r}]") for label, v in others.items()}
    for label, v in samples.items():
        if v.shape[0] != c.shape[0]:
            raise ValueError(f"others[{label!r}] has {v.shape[0]} values; counts has {c.shape[0]} items.")
    human = human_distribution(c)
    rng = as_rng(seed)
    rows, first = [], None
    for draw in range(n_draws):
        groups = subsample_votes(c, n_votes, n_groups=2, seed=rng)
        h1, h2 = dist_ce(groups[0] / n_votes, human), dist_ce(groups[1] / n_votes, human)
        if first is None:
            first = {"H1": h1, "H2": h2}
        for label, other in [("H2", h2), *samples.items()]:
            rows.append({"draw": draw, "vs": label,
                         "KL": histogram_divergence(h1, other, bins=bins),
                         "KL smoothed": histogram_divergence(h1, other, bins=bins, smoothing=smoothing),
                         "TVD": histogram_divergence(h1, other, bins=bins, divergence="tvd")})
    return pd.DataFrame(rows, columns=["draw", "vs", "KL", "KL smoothed", "TVD"]), first


def original_agreement(labels: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray]:
    """How many of each item's original annotations agree: the largest count of one label, and the number of labels.

    ChaosNLI (Nie et al. 2020) selected SNLI and MNLI items on which "at most 3
    out of 5" of the original annotators chose the same label (Baan et al.
    2022, §5.1); with ``top, n = original_agreement(old_labels)`` the rule reads
    ``(n == 5) & (top <= 3)``.

    Parameters
    ----------
    labels : sequence of sequences
        Per item, its original labels (any hashable values), at least one each.

    Returns
    -------
    top : ndarray of int64, shape (N,)
        The count of the most frequent label of each item.
    n : ndarray of int64, shape (N,)
        The number of labels of each item.

    Examples
    --------
    >>> top, n = original_agreement([["e", "e", "n", "c", "e"], ["n", "n", "e", "n"]])
    >>> top.tolist(), n.tolist()
    ([3, 3], [5, 4])
    """
    if isinstance(labels, (str, bytes)) or not isinstance(labels, (Sequence, np.ndarray, pd.Series)):
        raise TypeError(f"labels must be a sequence of per-item label lists; got {type(labels).__name__}.")
    top, n = [], []
    for i, item in enumerate(labels):
        if isinstance(item, (str, bytes)) or not isinstance(item, (Sequence, np.ndarray)):
            raise TypeError(f"labels[{i}] must be a list of labels; got {type(item).__name__} {item!r}.")
        if len(item) == 0:
            raise ValueError(f"labels[{i}] is empty; every item needs at least one label.")
        values = list(item)
        top.append(max(values.count(v) for v in set(values)))
        n.append(len(values))
    return np.asarray(top, dtype=np.int64), np.asarray(n, dtype=np.int64)


def expected_single_vote_dist_ce(probs: Any, human: Any) -> np.ndarray:
    r"""Expected DistCE of a forecast against one vote drawn from the human distribution.

    Against a single observed label :math:`y` (one-hot :math:`e_y`), DistCE is
    :math:`\mathrm{TVD}(f, e_y) = \tfrac12\big(1 - f_y + \sum_{c \ne y} f_c\big) = 1 - f_y`,
    the *linear* score. Its expectation under :math:`y \sim \bar\pi(x)` is

    .. math::

        \mathbb{E}_{y \sim \bar\pi}\,[1 - f_y] = 1 - \sum_c \bar\pi_c f_c ,

    which is minimised by putting all mass on :math:`\arg\max_c \bar\pi_c`, not by
    :math:`f = \bar\pi`: as a scoring rule of observed labels DistCE is not
    proper (Gneiting and Raftery 2007, §3), against Baan et al.'s (2022, §4)
    "DistCE is a proper scoring rule".

    Parameters
    ----------
    probs : array-like of shape (N, K)
        The forecasts f(x).
    human : array-like of shape (N, K)
        Vote counts (or distributions) giving :math:`\bar\pi(x)`.

    Returns
    -------
    numpy.ndarray of shape (N,)

    Examples
    --------
    The true distribution scores worse than the one-hot forecast of its mode:

    >>> pi = [[0.6, 0.4]]
    >>> expected_single_vote_dist_ce(pi, pi), expected_single_vote_dist_ce([[1.0, 0.0]], pi)
    (array([0.48]), array([0.4]))
    """
    p = check_probs(probs)
    h = human_distribution(check_human(human, p.shape[0], p.shape[1]))
    return 1.0 - np.sum(h * p, axis=1)


def kth_guess(probs: Any, *, k: int = 1) -> np.ndarray:
    r"""The k-th largest probability of each row (the "k-th guess", Baan et al. 2022, App. B).

    .. math::

        g_k(x) = p_{(k)}(x), \qquad p_{(1)}(x) \ge p_{(2)}(x) \ge \dots \ge p_{(K)}(x)

    The class behind the k-th guess need not be the same for a model and for
    the humans; Appendix B compares the magnitudes only.

    Parameters
    ----------
    probs : array-like of shape (N, K)
        Class probabilities (a model's, or a human distribution).
    k : int, default 1
        Which guess, 1 (the largest) to K (the smallest).

    Returns
    -------
    numpy.ndarray of shape (N,)

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP).

    Examples
    --------
    >>> kth_guess([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], k=2)
    array([0.3, 0.3])
    """
    p = check_probs(probs)
    k = check_positive_int(k, "k")
    n_classes = p.shape[1]
    if k > n_classes:
        raise ValueError(f"k must be at most the number of classes {n_classes}; got {k}.")
    return np.sort(p, axis=1)[:, n_classes - k]


def classwise_ece_nonzero(probs: Any, labels: Any, *, n_bins: int = 10) -> float:
    r"""Classwise-ECE (Baan et al. 2022, Eq. 8) with the binning of the authors' code: zeros dropped.

    .. math::

        \text{cw-ECE} = \frac{1}{K} \sum_{k=1}^{K} \sum_{m=1}^{M}
        \frac{|B_{mk}|}{N_k} \, \bigl| \mathrm{acc}(m, k) - \mathrm{conf}(m, k) \bigr|

    where :math:`B_{mk}` holds the items whose probability for class :math:`k`
    lies in :math:`(\tfrac{m-1}{M}, \tfrac{m}{M}]` (bin edges from
    ``numpy.linspace(0, 1, M + 1)``), :math:`\mathrm{acc}(m, k)` is the fraction of
    them whose label is :math:`k`, :math:`\mathrm{conf}(m, k)` their mean
    probability for :math:`k`, and :math:`N_k = \sum_m |B_{mk}|`. Because every
    bin is open on the left, **a probability of exactly 0 falls in no bin**: it is
    dropped, and :math:`N_k` counts only the kept items. Eq. 8 as printed divides
    by :math:`N` and keeps every item (the first bin then holds 0); that version
    is :func:`calibnb.classwise_ece`. The two agree whenever no probability is
    exactly 0, and differ for the oracle classifier, which gives probability 0 to
    every class nobody voted for.

    See Also
    --------
    calibnb.classwise_ece : Eq. 8 as printed (every item in every class).
    calibnb.human_classwise_ce : an unbinned class-wise error against the human
        label distribution (Jiang et al. 2024, Definition 1).

    Parameters
    ----------
    probs : array-like of shape (N, K)
        Class probabilities.
    labels : array-like of shape (N,)
        Integer labels (for Baan et al., the human majority class).
    n_bins : int, default 10
        Number of equal-width bins M.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If some class has probability 0 for every item (no bin holds anything).

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Eq. 8.
    .. [2] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Definition 1.

    Examples
    --------
    Class 1 of the third item has probability 0 and is dropped:

    >>> classwise_ece_nonzero([[0.8, 0.2], [0.4, 0.6], [1.0, 0.0]], [0, 1, 0])
    0.25
    """
    p, y = check_probs_labels(probs, labels)
    n_bins = check_n_bins(n_bins)
    n_items, n_classes = p.shape
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # searchsorted(side="left") returns i with edges[i-1] < p <= edges[i]: the bin (a, b].
    bin_index = np.searchsorted(edges, p, side="left") - 1
    keep = p > 0
    cls = np.broadcast_to(np.arange(n_classes), p.shape)
    hit = (y[:, None] == cls).astype(np.float64)
    group = cls[keep] * n_bins + bin_index[keep]
    size = n_classes * n_bins
    s_conf = np.bincount(group, weights=p[keep], minlength=size).reshape(n_classes, n_bins)
    s_hit = np.bincount(group, weights=hit[keep], minlength=size).reshape(n_classes, n_bins)
    n_kept = keep.sum(axis=0)
    if np.any(n_kept == 0):
        k = int(np.flatnonzero(n_kept == 0)[0])
        raise ValueError(
            f"probs gives probability 0 to class {k} for every item, so the reference binning keeps nothing for it."
        )
    per_class = np.abs(s_hit - s_conf).sum(axis=1) / n_kept
    return float(per_class.mean())


def human_calibration_summary(probs: Any, human: Any, *, n_bins: int = 10) -> dict[str, float]:
    r"""One row of Baan et al. (2022) Table 1: Acc, ECE, RankCS, E|EntCE|, E[DistCE].

    With :math:`\bar\pi(x)` the MLE of the human votes and
    :math:`y^\star = \arg\max_c \bar\pi_c(x)` (first index wins ties):

    .. math::

        \mathrm{Acc} = \frac1N \sum_n [\hat y_n = y^\star_n], \quad
        \mathrm{ECE} \;(\text{Eq. 3, against } y^\star), \quad
        \mathrm{RankCS} \;(\text{Eq. 6}), \quad
        \mathbb{E}\,|\mathrm{EntCE}| \;(\text{Eq. 5}), \quad
        \mathbb{E}[\mathrm{DistCE}] \;(\text{Eq. 7}).

    Parameters
    ----------
    probs : array-like of shape (N, K)
        The classifier's probabilities.
    human : array-like of shape (N, K)
        Human vote counts (or distributions) for the same items and classes.
    n_bins : int, default 10
        Equal-width bins for ECE.

    Returns
    -------
    dict
        Keys ``accuracy``, ``ece``, ``rank_cs``, ``abs_ent_ce``, ``dist_ce`` (fractions).

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Table 1.

    Examples
    --------
    The oracle, which predicts the human distribution, is perfectly calibrated to
    it but not to its own majority labels:

    >>> votes = [[6, 4, 0], [0, 9, 1]]
    >>> s = human_calibration_summary([[0.6, 0.4, 0.0], [0.0, 0.9, 0.1]], votes)
    >>> s["accuracy"], s["dist_ce"], round(s["ece"], 2)
    (1.0, 0.0, 0.25)
    """
    p = check_probs(probs)
    h = check_human(human, p.shape[0], p.shape[1])
    n_bins = check_n_bins(n_bins)

    dist = human_distribution(h)
    majority = majority_label(h)
    correct = p.argmax(axis=1) == majority
    return {
        "accuracy": float(correct.mean()),
        "ece": float(ece(p.max(axis=1), correct, n_bins=n_bins)),
        "rank_cs": float(rank_cs(p, dist)),
        "abs_ent_ce": float(np.abs(ent_ce(p, dist)).mean()),
        "dist_ce": float(dist_ce(p, dist).mean()),
    }


def votes_stability(
    model_probs: Mapping[str, Any],
    human: Any,
    *,
    votes_per_item: Sequence[int] = (1, 3, 5, 10, 20, 50, 100),
    n_draws: int = 10,
    seed: Any = None,
) -> pd.DataFrame:
    r"""Mean DistCE of each model against human distributions built from few votes.

    For each number of votes :math:`T'` in ``votes_per_item`` and each of
    ``n_draws`` draws, :math:`T'` votes per item are drawn without replacement
    (:func:`calibnb.data.subsample_votes`), their MLE :math:`\bar\pi^{(T')}` is formed, and
    every model is scored by

    .. math::

        \overline{\mathrm{DistCE}}^{(T')} = \frac1N \sum_n \mathrm{TVD}\bigl(f(x_n), \bar\pi^{(T')}(x_n)\bigr).

    Feed the result to :func:`ranking_stability` to see from how many votes per
    item the models' ranking stops changing (the cost question of Baan et al.
    2022, "Limitations").

    Parameters
    ----------
    model_probs : mapping of str to array-like of shape (N, K)
        The models to rank, by name.
    human : array-like of shape (N, K)
        Whole human vote counts.
    votes_per_item : sequence of int
        The sub-sample sizes; each must not exceed any item's number of votes.
    n_draws : int, default 10
        Independent draws per size.
    seed : None, int or numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        Long table with columns ``n_votes``, ``draw``, ``model``, ``dist_ce``.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP).

    Examples
    --------
    >>> votes = [[3, 1], [1, 3], [2, 2]]
    >>> models = {"good": [[0.7, 0.3], [0.3, 0.7], [0.5, 0.5]], "bad": [[0.1, 0.9], [0.9, 0.1], [1.0, 0.0]]}
    >>> table = votes_stability(models, votes, votes_per_item=(4,), n_draws=2, seed=0)
    >>> table.groupby("model")["dist_ce"].mean().round(3).to_dict()
    {'bad': 0.6, 'good': 0.033}
    """
    if not isinstance(model_probs, Mapping) or not model_probs:
        raise TypeError("model_probs must be a non-empty mapping of model name to probabilities.")
    c = check_vote_counts(human)
    probs = {}
    for name, value in model_probs.items():
        probs[name] = check_probs(value, name=f"model_probs[{name!r}]")
        if probs[name].shape != c.shape:
            raise ValueError(f"model_probs[{name!r}] has shape {probs[name].shape} but human has {c.shape}.")
    sizes = [check_positive_int(v, "votes_per_item") for v in votes_per_item]
    if not sizes:
        raise ValueError("votes_per_item is empty; give at least one sub-sample size.")
    n_draws = check_positive_int(n_draws, "n_draws")
    rng = as_rng(seed)
    rows = []
    for size in sizes:
        for draw in range(n_draws):
            sub = subsample_votes(c, size, n_groups=1, seed=rng)[0] / size
            for name, p in probs.items():
                rows.append((size, draw, name, float(dist_ce(p, sub).mean())))
    return pd.DataFrame(rows, columns=["n_votes", "draw", "model", "dist_ce"])


def ranking_stability(table: pd.DataFrame, reference: Mapping[str, float]) -> pd.DataFrame:
    r"""How often the models' DistCE ranking from few votes matches the reference ranking.

    For each ``n_votes`` in a :func:`votes_stability` table and each draw, the
    models are ordered by mean DistCE (ascending, ties by name) and compared with
    the ordering of ``reference`` (e.g. mean DistCE against all votes):

    .. math::

        \text{agreement}(T') = \frac{1}{D} \sum_{d=1}^{D}
        [\operatorname{order}^{(T', d)} = \operatorname{order}^{\mathrm{ref}}]

    and Kendall's :math:`\tau` between the two orderings is averaged over draws.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`votes_stability`.
    reference : mapping of str to float
        The reference score of every model in ``table``.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``n_votes``, columns ``agreement`` (fraction of draws with
        exactly the reference ranking) and ``kendall_tau`` (mean over draws).

    Examples
    --------
    >>> t = pd.DataFrame({"n_votes": [1, 1, 1, 1], "draw": [0, 0, 1, 1],
    ...                   "model": ["a", "b", "a", "b"], "dist_ce": [0.2, 0.3, 0.4, 0.3]})
    >>> ranking_stability(t, {"a": 0.1, "b": 0.2})
             agreement  kendall_tau
    n_votes
    1              0.5          0.0
    """
    from scipy.stats import kendalltau

    required = {"n_votes", "draw", "model", "dist_ce"}
    if not isinstance(table, pd.DataFrame) or not required <= set(table.columns):
        raise TypeError(f"table must be a DataFrame with columns {sorted(required)} (see votes_stability).")
    if not isinstance(reference, Mapping):
        raise TypeError(f"reference must be a mapping model -> score; got {type(reference).__name__}.")
    check_1d_finite(table["dist_ce"].to_numpy(), "table['dist_ce']")
    models = sorted(table["model"].unique())
    missing = [m for m in models if m not in reference]
    if missing:
        raise ValueError(f"reference has no score for {len(missing)} model(s); first: {missing[0]!r}.")
    ref = check_1d_finite([reference[m] for m in models], "reference")
    wide = table.pivot_table(index=["n_votes", "draw"], columns="model", values="dist_ce")[models]
    scores = wide.to_numpy()
    holes = np.isnan(scores)
    if holes.any():
        i, j = np.argwhere(holes)[0]
        raise ValueError(
            f"table has no dist_ce for {int(holes.sum())} (n_votes, draw, model) cell(s); first: "
            f"{wide.index[i]!r}, model {models[j]!r}. Every draw must score every model."
        )
    ref_rank = np.argsort(np.argsort(ref, kind="stable"), kind="stable")
    ranks = np.argsort(np.argsort(scores, axis=1, kind="stable"), axis=1, kind="stable")
    same = np.all(ranks == ref_rank, axis=1)
    if len(models) > 1:
        taus = np.array([kendalltau(r, ref_rank).statistic for r in ranks])
    else:
        taus = np.ones(len(ranks))
    out = pd.DataFrame(
        {"agreement": same.astype(float), "kendall_tau": taus},
        index=wide.index.get_level_values("n_votes"),
    )
    return out.groupby(level="n_votes").mean()


# --------------------------------------------------------------------------- widgets


def human_temperature_explorer(
    logits: Any,
    human: Any,
    *,
    temperatures: tuple[float, float] = (0.25, 8.0),
    n_bins: int = 10,
    hist_bins: int = 30,
) -> Any:
    r"""A temperature slider driving the DistCE histogram, ECE and the reliability diagram together.

    At temperature :math:`\tau` the model predicts :math:`f_\tau(x) = \mathrm{softmax}(z/\tau)`;
    the left panel overlays the DistCE histogram (Baan et al. 2022, Figure 1a-b)
    at :math:`\tau` on the one at :math:`\tau = 1`, the right panel draws the
    reliability diagram against the human majority (Figure 1c-d). The readout
    gives Table 1's columns at :math:`\tau` (:func:`human_calibration_summary`).

    Parameters
    ----------
    logits : array-like of shape (N, K)
    human : array-like of shape (N, K)
        Human vote counts (or distributions).
    temperatures : (float, float), default (0.25, 8)
        Range of the logarithmic slider (starts at 1).
    n_bins : int, default 10
        ECE / reliability-diagram bins.
    hist_bins : int, default 30
        DistCE histogram bins on [0, 1].

    Returns
    -------
    calibnb.widgets.Panel
        Control ``"temperature"``; ``update(temperature=...)`` returns the readout.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Figure 1.
    """
    z = check_logits(logits)
    h = check_human(human, z.shape[0], z.shape[1])
    n_bins = check_n_bins(n_bins)
    hist_bins = check_n_bins(hist_bins, "hist_bins")
    slider = temperature_slider(temperatures=temperatures)
    dist = human_distribution(h)
    base = plots.histogram_data(dist_ce(softmax(z), dist), bins=hist_bins, label="τ = 1")

    def draw(axes: list, *, temperature: float) -> pd.DataFrame:
        tau = check_scalar_in_range(temperature, "temperature", low=0.0, low_inclusive=False)
        p = softmax(z, temperature=tau)
        scaled = plots.histogram_data(dist_ce(p, dist), bins=hist_bins, label=f"τ = {tau:.3g}")
        plots.plot_histograms([base, scaled], ax=axes[0], xlabel="DistCE (TVD to the human distribution)")
        axes[0].set_title("DistCE distribution")
        correct = p.argmax(axis=1) == h.argmax(axis=1)
        data = plots.reliability_diagram_data(p.max(axis=1), correct, n_bins=n_bins)
        plots.plot_reliability_diagram(data, ax=axes[1])
        axes[1].set_title(f"reliability against the majority, τ = {tau:.3g}")
        summary = human_calibration_summary(p, h, n_bins=n_bins)
        return pd.DataFrame({"value": {"temperature": tau, **summary}})

    return build_panel({"temperature": slider}, draw, 2, (11, 4.2))


def votes_explorer(probs: Any, human: Any, *, hist_bins: int = 30, seed: Any = None) -> Any:
    r"""A votes-per-item slider for the sub-sampled human classifier (Baan et al. 2022, §5.2).

    For :math:`T'` votes per item the human classifier :math:`H_{T'}` predicts the
    MLE of :math:`T'` votes drawn without replacement (:func:`calibnb.data.subsample_votes`,
    same ``seed`` for every :math:`T'`); its DistCE against all votes is drawn
    next to the model's, with the histogram KL and TVD of Table 2.

    Parameters
    ----------
    probs : array-like of shape (N, K)
        The model's probabilities.
    human : array-like of shape (N, K)
        Whole human vote counts.
    hist_bins : int, default 30
    seed : None, int or numpy.random.Generator
        Which votes are drawn (None: fresh entropy; fixed for the panel's life).

    Returns
    -------
    calibnb.widgets.Panel
        Control ``"n_votes"`` (1 to the smallest number of votes of an item);
        ``update(n_votes=...)`` returns the readout.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). §5.2.
    """
    c = check_vote_counts(human)
    p = check_probs(probs)
    if p.shape != c.shape:
        raise ValueError(f"probs has shape {p.shape} but human has {c.shape}; they must match.")
    hist_bins = check_n_bins(hist_bins, "hist_bins")
    dist = human_distribution(c)
    model_dce = dist_ce(p, dist)
    model_hist = plots.histogram_data(model_dce, bins=hist_bins, label="model")
    max_votes = int(c.sum(axis=1).min())
    seed_value = seed_int(seed)  # the same votes every time a slider value comes back

    import ipywidgets as w

    slider = w.IntSlider(value=min(20, max_votes), min=1, max=max_votes, description="human votes per item",
                         continuous_update=False, style={"description_width": "initial"},
                         tooltip="How many of each item's annotator votes the sub-sampled human classifier H "
                                 "sees (drawn without replacement, same seed for every value)")

    def draw(axes: list, *, n_votes: int) -> pd.DataFrame:
        sub = subsample_votes(c, int(n_votes), n_groups=1, seed=seed_value)[0] / int(n_votes)
        h_dce = dist_ce(sub, dist)
        h_hist = plots.histogram_data(h_dce, bins=hist_bins, label=f"H({int(n_votes)} votes)")
        plots.plot_histograms([h_hist, model_hist], ax=axes[0], xlabel="DistCE against all votes")
        axes[0].set_title(f"human classifier from {int(n_votes)} votes per item vs the model")
        values = {
            "votes per item": int(n_votes),
            "E[DistCE] human": float(h_dce.mean()),
            "E[DistCE] model": float(model_dce.mean()),
            "KL(H, model)": histogram_divergence(h_dce, model_dce, bins=hist_bins),
            "TVD(H, model)": histogram_divergence(h_dce, model_dce, bins=hist_bins, divergence="tvd"),
        }
        return pd.DataFrame({"value": values})

    return build_panel({"n_votes": slider}, draw, 1, (6.5, 4.2))


# ---- notebook 02's statistics for its bootstrap comparisons (moved from the notebook, issue 25 item 8)


def _check_values(values: Any, name: str) -> np.ndarray:
    """A finite real array of shape (N,) or (S, N) with N >= 1 (a batch axis first, as bootstrap_ci passes)."""
    from ..validation import as_numeric_array

    arr = as_numeric_array(values, name)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (N,) or 2-D (S, N); got {arr.ndim}-D.")
    if arr.shape[-1] == 0:
        raise ValueError(f"{name} is empty.")
    arr = arr.astype(np.float64, copy=False)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} NaN or infinite value(s).")
    return arr


def item_mean(values: Any) -> Any:
    r"""Mean over the items (last axis): the statistic of notebook 02's per-item bootstrap comparisons.

    .. math:: \bar v = \frac{1}{N} \sum_{i=1}^{N} v_i

    over per-item values :math:`v_i` (a DistCE, an EntCE, a 0/1 event).
    Marked with :func:`calibnb.metrics.batch.batch_axis`: an (S, N) array
    gives the S row means at once, so :func:`calibnb.bootstrap_ci` evaluates
    all resamples in one call.

    Parameters
    ----------
    values : array-like (N,) or (S, N)
        Finite per-item values (bool is read as 0/1).

    Returns
    -------
    float or ndarray (S,)

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". EMNLP. Section 5.2 (mean DistCE).

    Examples
    --------
    >>> float(item_mean([0.2, 0.4, 0.9]))
    0.5
    >>> item_mean([[0.0, 1.0], [1.0, 1.0]]).tolist()
    [0.5, 1.0]
    """
    return np.mean(_check_values(values, "values"), axis=-1)


item_mean = batch_axis(item_mean)


def mean_diff_ci(a: Any, b: Any, *, n_resamples: int = 2000, seed: Any = None) -> tuple[float, tuple[float, float]]:
    r"""Paired bootstrap estimate and 95% percentile interval of :math:`\bar a - \bar b` over the same items.

    .. math:: \Delta = \frac{1}{N} \sum_{i=1}^{N} (a_i - b_i)

    Each resample draws the same item indices for ``a`` and ``b``
    (:func:`calibnb.paired_bootstrap_ci` of :func:`item_mean`). Notebook 02
    uses it for the shares of Figure 1 and Appendix B (a 0/1 event per item)
    and for the single-vote DistCE of Section 4.

    Parameters
    ----------
    a, b : array-like (N,)
        Finite per-item values of the same N items (bool is read as 0/1).
    n_resamples : int, keyword-only
        Bootstrap resamples (>= 2).
    seed : None, int or numpy.random.Generator, keyword-only
        Seed of the resampling.

    Returns
    -------
    tuple
        ``(estimate, (low, high))``.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". EMNLP. Figure 1, Section 4 and Appendix B.

    Examples
    --------
    >>> est, (low, high) = mean_diff_ci([1, 1, 0, 1], [0, 1, 0, 0], n_resamples=200, seed=0)
    >>> est, bool(low <= est <= high)
    (0.5, True)
    """
    from ..uncertainty import paired_bootstrap_ci

    a, b = check_1d_finite(a, "a"), check_1d_finite(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must hold the same items; got lengths {a.size} and {b.size}.")
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=2)
    r = paired_bootstrap_ci(item_mean, (a,), (b,), n_resamples=n_resamples, seed=seed)
    return r.estimate, (r.low, r.high)


def two_sample_ci(stat_a: Any, stat_b: Any, n_a: int, n_b: int, *, n_resamples: int = 2000,
                  seed: Any = None) -> tuple[Any, tuple[float, float]]:
    r"""Percentile bootstrap of a difference between two independent item sets (Baan et al. 2022, Section 9).

    .. math:: \Delta = s_A(\{1..n_A\}) - s_B(\{1..n_B\})

    where ``stat_x(idx)`` is the statistic of the items ``idx`` of set x.
    Each resample draws ``n_a`` indices of set A and ``n_b`` of set B with
    replacement, independently (the sets are different items, e.g.
    ChaosNLI-MNLI and -SNLI); the interval is the 2.5% and 97.5% quantiles of
    the resampled differences.

    Parameters
    ----------
    stat_a, stat_b : callable
        ``idx -> float`` for each set.
    n_a, n_b : int
        Number of items of each set (>= 1).
    n_resamples, seed
        As in :func:`mean_diff_ci` (resamples >= 2; seed None, int or Generator).

    Returns
    -------
    tuple
        ``(estimate, (low, high))``, as :func:`mean_diff_ci`.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". EMNLP. Section 9 (out-of-distribution data).

    Examples
    --------
    >>> a, b = np.array([0.2, 0.4, 0.6]), np.array([0.1, 0.1])
    >>> est, (low, high) = two_sample_ci(lambda i: a[i].mean(), lambda i: b[i].mean(), 3, 2, n_resamples=100, seed=0)
    >>> round(float(est), 3), bool(low <= est <= high)
    (0.3, True)
    """
    for name, f in (("stat_a", stat_a), ("stat_b", stat_b)):
        if not callable(f):
            raise TypeError(f"{name} must be a callable idx -> statistic; got {type(f).__name__}.")
    n_a = check_positive_int(n_a, "n_a")
    n_b = check_positive_int(n_b, "n_b")
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=2)
    gen = as_rng(seed)
    diffs = [stat_a(gen.integers(0, n_a, n_a)) - stat_b(gen.integers(0, n_b, n_b)) for _ in range(n_resamples)]
    return stat_a(np.arange(n_a)) - stat_b(np.arange(n_b)), tuple(np.quantile(diffs, [0.025, 0.975]))


def _check_marginal_inputs(probs: Any, human: Any) -> tuple[np.ndarray, np.ndarray]:
    p = check_probs(probs, "probs")
    h = check_probs(human, "human")
    if p.shape != h.shape:
        raise ValueError(f"probs and human must have the same shape (N, K); got {p.shape} and {h.shape}.")
    return p, h


def marginal_tvd(probs: Any, human: Any, *, bins: int = 20) -> float:
    r"""Mean over classes of the TVD between the histograms of model and human class probabilities (Figs. 10-11).

    .. math:: \frac{1}{K} \sum_{k=1}^{K} \mathrm{TVD}\big(\mathrm{hist}(f_k(x)),\ \mathrm{hist}(\bar\pi_k(x))\big)

    with ``bins`` equal-width bins on [0, 1] (:func:`histogram_divergence`
    with ``divergence="tvd"``): how far the marginal distribution of each
    class probability is from the humans', ignoring which item is which.

    Parameters
    ----------
    probs : array-like (N, K)
        Model class probabilities.
    human : array-like (N, K)
        Human label distributions of the same items (rows sum to 1).
    bins : int, keyword-only
        Histogram bins on [0, 1] (default 20, as the paper's figures).

    Returns
    -------
    float

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". EMNLP. Figures 4-5 and 10-11.

    Examples
    --------
    >>> p = np.array([[0.9, 0.1], [0.8, 0.2]])
    >>> h = np.array([[0.5, 0.5], [0.8, 0.2]])
    >>> marginal_tvd(p, h, bins=2)  # class 0: both in (0.5, 1]; class 1: human 0.5 moves a bin
    0.25
    """
    p, h = _check_marginal_inputs(probs, human)
    bins = check_n_bins(bins, "bins")
    return float(np.mean([histogram_divergence(p[:, k], h[:, k], bins=bins, divergence="tvd") for k in range(p.shape[1])]))


def marginal_tvd_stat(probs: Any, human: Any, *, bins: int = 20) -> Any:
    r""":func:`marginal_tvd` as a statistic of item indices, for a bootstrap over items.

    Returns ``stat(idx)``, the :func:`marginal_tvd` of the items ``idx``
    (indices may repeat). The bins are :func:`numpy.histogram`'s on [0, 1]
    (the last bin closed), assigned once, so each resample only counts; on
    all items it equals :func:`marginal_tvd` up to rounding.

    .. math:: \mathrm{stat}(I) = \frac{1}{K} \sum_k \frac{1}{2|I|} \sum_b |c^f_{kb}(I) - c^{\bar\pi}_{kb}(I)|

    with :math:`c_{kb}(I)` the number of items of ``I`` whose class-k
    probability falls in bin b.

    Parameters
    ----------
    probs : array-like (N, K)
        Model class probabilities.
    human : array-like (N, K)
        Human label distributions of the same items.
    bins : int, keyword-only
        Histogram bins on [0, 1] (default 20).

    Returns
    -------
    callable
        ``idx -> float``; ``idx`` a non-empty 1-D int array of indices in [0, N).

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". EMNLP. Figures 10-11.

    Examples
    --------
    >>> p = np.array([[0.9, 0.1], [0.8, 0.2]])
    >>> h = np.array([[0.5, 0.5], [0.8, 0.2]])
    >>> stat = marginal_tvd_stat(p, h, bins=2)
    >>> stat(np.arange(2)), stat(np.array([1, 1]))
    (0.25, 0.0)
    """
    p, h = _check_marginal_inputs(probs, human)
    bins = check_n_bins(bins, "bins")
    edges = np.linspace(0.0, 1.0, bins + 1)

    def code(x):
        return np.minimum(np.searchsorted(edges, x, side="right") - 1, bins - 1)

    pc, hc = code(p), code(h)
    n = len(p)

    def stat(idx):
        idx = np.asarray(idx)
        if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= n:
            raise ValueError(f"idx must be a non-empty 1-D array of int indices in [0, {n}).")
        return float(np.mean([0.5 * np.abs(np.bincount(pc[idx, k], minlength=bins) - np.bincount(hc[idx, k], minlength=bins)).sum()
                              / len(idx) for k in range(p.shape[1])]))
    return stat


def relative_drops(conf: Any, correct: Any, conf_ts: Any, correct_ts: Any, dist_ce: Any, dist_ce_ts: Any, *,
                   n_bins: int = 10) -> float:
    r"""How much more temperature scaling cuts ECE than mean DistCE, in relative terms (Baan et al. 2022, §5.2).

    .. math:: \Big(1 - \frac{\mathrm{ECE}_{TS}}{\mathrm{ECE}}\Big) - \Big(1 - \frac{\overline{\mathrm{DistCE}}_{TS}}{\overline{\mathrm{DistCE}}}\Big)

    Positive when TS lowers ECE by a larger fraction than it lowers DistCE
    (the paper's point that ECE overstates what TS achieves against human
    disagreement). Arrays are of the same N items, so the function can be
    bootstrapped jointly (:func:`calibnb.bootstrap_ci`).

    Parameters
    ----------
    conf, correct : array-like (N,)
        Top probability and correctness (against the majority label) before TS.
    conf_ts, correct_ts : array-like (N,)
        The same after TS.
    dist_ce, dist_ce_ts : array-like (N,)
        Per-item DistCE before and after TS (:func:`calibnb.dist_ce`).
    n_bins : int, keyword-only
        Equal-width bins of ECE.

    Returns
    -------
    float
        A ValueError where ECE or mean DistCE before TS is 0 (no relative drop).

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". EMNLP. Section 5.2.

    Examples
    --------
    >>> c, y = np.array([0.9, 0.8, 0.7, 0.6]), np.array([1, 0, 0, 1])
    >>> round(relative_drops(c, y, c - 0.1, y, [0.4, 0.2, 0.2, 0.2], [0.3, 0.2, 0.2, 0.1], n_bins=1), 3)
    0.2
    """
    from ..validation import check_conf, check_correct

    conf = check_conf(conf, "conf")
    correct = check_correct(correct, conf.shape[0], "correct")
    conf_ts = check_conf(conf_ts, "conf_ts")
    correct_ts = check_correct(correct_ts, conf_ts.shape[0], "correct_ts", other="conf_ts")
    d_v = check_1d_finite(dist_ce, "dist_ce")
    d_t = check_1d_finite(dist_ce_ts, "dist_ce_ts")
    sizes = {"conf": conf.size, "conf_ts": conf_ts.size, "dist_ce": d_v.size, "dist_ce_ts": d_t.size}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"conf, conf_ts, dist_ce and dist_ce_ts must hold the same items; got lengths {sizes}.")
    n_bins = check_n_bins(n_bins)
    e_v, e_t = ece(conf, correct, n_bins=n_bins), ece(conf_ts, correct_ts, n_bins=n_bins)
    if e_v == 0 or np.mean(d_v) == 0:
        raise ValueError("ECE and mean dist_ce before TS must be above 0 for a relative drop; got "
                         f"ECE {e_v!r} and mean dist_ce {float(np.mean(d_v))!r}.")
    return float((1 - e_t / e_v) - (1 - np.mean(d_t) / np.mean(d_v)))


# ------------------------------------------------------------------ Figures 4-15: the marginal and error views

#: Class names of ChaosNLI (the order of its vote counts and of the models' outputs).
NLI_CLASSES = ("entailment", "neutral", "contradiction")


def _panel_inputs(probs_by_name: Any, human: Any) -> tuple[dict, np.ndarray]:
    """Validated {name: (N, 3) probs} and the (N, 3) human distribution (vote shares, rows summing to 1)."""
    if not isinstance(probs_by_name, Mapping) or not probs_by_name:
        raise TypeError("probs_by_name must be a non-empty dict {name: probs of shape (N, 3)}; got "
                        f"{type(probs_by_name).__name__}.")
    hum = check_probs(human, "human")
    if hum.shape[1] != 3:
        raise ValueError(f"human has {hum.shape[1]} classes (columns); the 3 x 3 grid needs 3 (ChaosNLI's).")
    probs = {str(n): check_probs(p, f"probs_by_name[{n!r}]") for n, p in probs_by_name.items()}
    for n, p in probs.items():
        if p.shape != hum.shape:
            raise ValueError(f"probs_by_name[{n!r}] has shape {p.shape} but human has {hum.shape}; they must match "
                             "(three classes, the same items).")
    return probs, hum


def _panel(histograms: list, xlabel: str, *, colour_offset: int = 0) -> dict:
    return {"histograms": histograms, "xlabel": xlabel, "colour_offset": colour_offset}


def marginal_panels_data(probs_by_name: Any, human: Any, majority: Any, *, n_bins: int = 10, bins: int = 20,
                         title: str = "") -> dict:
    r"""The marginal view of Baan et al. 2022 (Figs. 4-5, 10-11): the data of a 3 x 3 grid of panels.

    Row 1: the histogram of each class's probability :math:`f_k(x)` over the
    items, for the humans (:math:`\bar\pi_k(x)`, the vote shares) and each
    classifier; row 2: the same for the k-th guess (the k-th largest
    probability, :func:`kth_guess`); row 3: the entropy of each distribution,
    each classifier's DistCE (no human series: its DistCE is 0), and the
    reliability diagram (with counts) of the last classifier against the
    majority label. ``bins`` equal bins on [0, 1] (entropy: on [0, ln 3]).

    Parameters
    ----------
    probs_by_name : dict {str: array-like of shape (N, 3)}
        Each classifier's class probabilities, in ChaosNLI's class order.
    human : array-like of shape (N, 3)
        The human distribution of the same items (vote shares, rows summing
        to 1: :func:`calibnb.human_distribution` of the vote counts).
    majority : array-like of shape (N,)
        The majority label of each item (the reliability diagram's correctness).
    n_bins : int, default 10
        Bins of the reliability diagram.
    bins : int, default 20
        Bins of every histogram.
    title : str
        The figure's title.

    Returns
    -------
    dict
        ``title``, ``alpha`` and ``panels``: nine entries, row by row; a
        histogram panel holds ``histograms`` (:class:`calibnb.plots.HistogramData`),
        ``xlabel`` and ``colour_offset`` (colours skipped, so that each colour
        names one series in every panel); the last holds ``reliability``
        (:class:`calibnb.plots.ReliabilityDiagramData`) and its ``title``.
        Drawn by :func:`plot_marginal_panels`.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Figures 4-5, 10-11.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> votes = rng.integers(1, 30, size=(50, 3)); p = softmax(rng.normal(size=(50, 3)))
    >>> d = marginal_panels_data({"model": p}, human_distribution(votes), votes.argmax(axis=1), title="demo")
    >>> len(d["panels"]), [h.label for h in d["panels"][0]["histograms"]]
    (9, ['human', 'model'])
    """
    probs, hum = _panel_inputs(probs_by_name, human)
    n = hum.shape[0]
    maj = check_labels(majority, n, 3, "majority", other="human")
    n_bins = check_n_bins(n_bins)
    bins = check_n_bins(bins, "bins")
    sets = {"human": hum, **probs}
    if "human" in probs:
        raise ValueError("probs_by_name must not name a classifier 'human' (the human series is drawn beside them).")
    panels = []
    for by in ("class", "guess"):
        hs = {name: plots.probability_histograms(p, by=by, bins=bins) for name, p in sets.items()}
        for k in range(3):
            xlabel = f"probability of class {k} ({NLI_CLASSES[k]})" if by == "class" else f"guess {k + 1} probability"
            panels.append(_panel([dataclasses.replace(hs[name][k], label=name) for name in sets], xlabel))
    panels.append(_panel([plots.histogram_data(entropy(p), bins=bins, range=(0.0, np.log(3)), label=name)
                          for name, p in sets.items()], "entropy (nats)"))
    panels.append(_panel([plots.histogram_data(dist_ce(p, hum), bins=bins, label=name) for name, p in probs.items()],
                         "DistCE (TVD)", colour_offset=1))
    name, p = list(probs.items())[-1]
    panels.append({"reliability": plots.reliability_diagram_data(p.max(axis=1), p.argmax(axis=1) == maj,
                                                                 n_bins=n_bins),
                   "title": f"reliability with counts: {name}"})
    return {"title": str(title), "alpha": 0.4, "panels": panels}


def error_panels_data(probs_by_name: Any, human: Any, *, bins: int = 20, title: str = "") -> dict:
    r"""The instance-level error view of Baan et al. 2022 (Figs. 6-9, 12-15): the data of a 3 x 3 grid of panels.

    Per classifier, histograms over the items of: row 1, the signed error of
    each class's probability, :math:`f_k(x) - \bar\pi_k(x)`; row 2, the signed
    difference of the k-th guesses (model minus human, :func:`kth_guess`), both
    on [-1, 1]; row 3, EntCE (signed, on :math:`[-\ln 3, \ln 3]`), :math:`|`EntCE:math:`|`
    (on :math:`[0, \ln 3]`) and :math:`|f_k(x) - \bar\pi_k(x)|` over all classes
    (on [0, 1]), with :math:`\bar\pi(x)` the human vote shares.

    Parameters
    ----------
    probs_by_name, human, bins, title
        As in :func:`marginal_panels_data`.

    Returns
    -------
    dict
        As :func:`marginal_panels_data` (nine histogram panels); drawn by
        :func:`plot_error_panels`.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Figures 6-9, 12-15.

    Examples
    --------
    >>> shares = human_distribution(np.random.default_rng(2).multinomial(100, [0.6, 0.3, 0.1], size=40))
    >>> d = error_panels_data({"uniform": np.full((40, 3), 1 / 3)}, shares)
    >>> [panel["xlabel"] for panel in d["panels"][6:]]
    ['EntCE (signed, nats)', '|EntCE| (nats)', '|f_k(x) − π̄_k(x)| over all classes']
    """
    probs, hum = _panel_inputs(probs_by_name, human)
    bins = check_n_bins(bins, "bins")
    lim = float(np.log(3))
    panels = []
    for k in range(3):
        panels.append(_panel([plots.histogram_data(p[:, k] - hum[:, k], bins=bins, range=(-1.0, 1.0), label=name)
                              for name, p in probs.items()], f"f_{k}(x) − π̄_{k}(x) (signed error, class {k})"))
    for k in range(3):
        panels.append(_panel([plots.histogram_data(kth_guess(p, k=k + 1) - kth_guess(hum, k=k + 1), bins=bins,
                                                   range=(-1.0, 1.0), label=name) for name, p in probs.items()],
                             f"model − human guess {k + 1} (signed)"))
    panels.append(_panel([plots.histogram_data(ent_ce(p, hum), bins=bins, range=(-lim, lim), label=name)
                          for name, p in probs.items()], "EntCE (signed, nats)"))
    panels.append(_panel([plots.histogram_data(np.abs(ent_ce(p, hum)), bins=bins, range=(0.0, lim), label=name)
                          for name, p in probs.items()], "|EntCE| (nats)"))
    panels.append(_panel([plots.histogram_data(np.abs(p - hum).ravel(), bins=bins, label=name)
                          for name, p in probs.items()], "|f_k(x) − π̄_k(x)| over all classes"))
    return {"title": str(title), "alpha": 0.45, "panels": panels}


def _plot_panel_grid(data: Any, axes: Any, what: str) -> Any:
    """Draw the nine panels of a *_panels_data dict on a 3 x 3 array of Axes (a new 15 x 10 figure when None)."""
    import matplotlib.pyplot as plt

    if not isinstance(data, dict) or len(data.get("panels", ())) != 9:
        raise TypeError(f"data must be the dict of {what} (nine panels); got {type(data).__name__}.")
    if axes is None:
        _, axes = plt.subplots(3, 3, figsize=(15, 10))
    axes = np.asarray(axes)
    if axes.shape != (3, 3):
        raise ValueError(f"axes must be a 3 x 3 array of Axes; got shape {axes.shape}.")
    for ax, panel in zip(axes.ravel(), data["panels"]):
        if "reliability" in panel:
            plots.plot_reliability_diagram(panel["reliability"], ax=ax)
            ax.set_title(panel["title"])
            continue
        if panel["colour_offset"]:
            ax.set_prop_cycle(color=plt.rcParams["axes.prop_cycle"].by_key()["color"][panel["colour_offset"]:])
        plots.plot_histograms(panel["histograms"], ax=ax, alpha=data["alpha"], xlabel=panel["xlabel"])
    fig = axes[0, 0].figure
    fig.suptitle(data["title"])
    fig.tight_layout()
    return axes


def plot_marginal_panels(data: dict, *, axes: Any = None) -> Any:
    """Draw :func:`marginal_panels_data` (Baan et al. 2022, Figs. 4-5, 10-11): overlaid histograms, 3 x 3.

    Parameters
    ----------
    data : dict
        From :func:`marginal_panels_data`.
    axes : 3 x 3 array of matplotlib Axes, optional
        Where to draw; a new 15 x 10 inch figure is made when None.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes, shape (3, 3)

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Figures 4-5.
    """
    return _plot_panel_grid(data, axes, "marginal_panels_data")


def plot_error_panels(data: dict, *, axes: Any = None) -> Any:
    """Draw :func:`error_panels_data` (Baan et al. 2022, Figs. 6-9, 12-15), as :func:`plot_marginal_panels` draws its data.

    ``axes``: a 3 x 3 array of Axes (None: a new 15 x 10 inch figure); returns that array.
    """
    return _plot_panel_grid(data, axes, "error_panels_data")
