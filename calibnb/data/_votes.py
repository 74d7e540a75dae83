"""Vote sub-sampling: disjoint groups of human votes drawn from each item's votes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import as_rng, check_enough_votes, check_positive_int

__all__ = ["subsample_votes"]


def subsample_votes(human: Any, n_votes: int, *, n_groups: int = 2, seed: Any = None) -> np.ndarray:
    r"""Draw ``n_groups`` disjoint groups of ``n_votes`` votes from each item's votes.

    Each item's votes are shuffled (every ordering equally likely) and the first
    ``n_groups * n_votes`` of them are split into consecutive groups, so the
    groups are sampled *without replacement* and share no vote. This is how
    Baan et al. (2022, §5.2) build the two "as-good-as-it-realistically-gets"
    classifiers H1 and H2 from 20 of ChaosNLI's 100 votes each; their MLE

    .. math::

        \bar\pi^{(g)}_c(x) = \frac{1}{T'} \sum_{t=1}^{T'} [y^{(g)}_t = c]

    with :math:`T' =` ``n_votes`` and :math:`y^{(g)}_t` the votes of group
    :math:`g`, is ``result[g] / n_votes``.

    Parameters
    ----------
    human : array-like of shape (N, K)
        Whole vote counts per item and class; items may have different totals.
    n_votes : int
        Votes per group (at least 1).
    n_groups : int, default 2
        Number of disjoint groups; every item needs ``n_groups * n_votes`` votes.
    seed : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of shape (n_groups, N, K), int64
        The vote counts of each group; each row sums to ``n_votes``.

    Raises
    ------
    ValueError
        If an item has fewer than ``n_groups * n_votes`` votes.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). §5.2.

    Examples
    --------
    >>> groups = subsample_votes([[3, 1], [0, 4]], 2, seed=0)
    >>> groups.shape
    (2, 2, 2)
    >>> groups.sum(axis=0).tolist()  # two groups of 2 use all 4 votes of each item
    [[3, 1], [0, 4]]
    """
    n_votes = check_positive_int(n_votes, "n_votes")
    n_groups = check_positive_int(n_groups, "n_groups")
    need = n_groups * n_votes
    c, totals = check_enough_votes(human, need, what=f"n_votes={n_votes}" if n_groups == 1
                                   else f"n_groups * n_votes = {need}")
    rng = as_rng(seed)
    n_items, n_classes = c.shape
    # One entry per vote: its item and its class, items in order. Counts as np.intp: np.repeat and
    # np.bincount cast to it "safely", and on a 32-bit platform (the browser site's Pyodide) int64 is not.
    totals = np.asarray(totals).astype(np.intp)
    item = np.repeat(np.arange(n_items), totals)
    cls = np.repeat(np.tile(np.arange(n_classes), n_items), c.ravel().astype(np.intp))
    # Shuffle within each item: sort by (item, random key).
    key = rng.random(item.size)
    if n_items and (totals == totals[0]).all():
        # Every item has the same number of votes (ChaosNLI: 100): the same permutation as the lexsort below, a
        # stable sort of the keys within each item, from one row-wise sort, 4-5x faster (issue 31).
        t = int(totals[0])
        order = (np.argsort(key.reshape(n_items, t), axis=1, kind="stable")
                 + (np.arange(n_items, dtype=np.intp) * t)[:, None]).ravel()
    else:
        order = np.lexsort((key, item))
    cls = cls[order]
    starts = np.cumsum(totals) - totals
    position = np.arange(item.size) - np.repeat(starts, totals)
    group = position // n_votes
    keep = group < n_groups
    flat = ((group[keep] * n_items + item[keep]) * n_classes + cls[keep]).astype(np.intp)
    out = np.bincount(flat, minlength=n_groups * n_items * n_classes)
    return out.reshape(n_groups, n_items, n_classes).astype(np.int64)
