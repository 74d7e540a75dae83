"""Baan et al. 2022: human-distribution metrics."""

import numpy as np
import pytest

import calibnb as cb


def random_counts(rng, n, k, votes=100):
    return np.stack([rng.multinomial(votes, p) for p in rng.dirichlet(np.ones(k), size=n)])


def test_human_distribution_and_majority():
    counts = [[3, 1, 0], [0, 2, 2], [1, 1, 1]]
    np.testing.assert_allclose(cb.human_distribution(counts).sum(axis=1), 1.0)
    assert cb.majority_label(counts).tolist() == [0, 1, 0]
    assert cb.ranking_ties(counts).tolist() == [False, True, True]


def test_entropy_natural_log():
    np.testing.assert_allclose(cb.entropy([[1 / 3] * 3, [1.0, 0.0, 0.0]]), [np.log(3), 0.0])


@pytest.mark.parametrize("seed", range(5))
def test_tvd_properties(seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(4), size=200)
    q = rng.dirichlet(np.ones(4), size=200)
    d = cb.tvd(p, q)
    np.testing.assert_allclose(d, cb.tvd(q, p))  # symmetric
    assert ((d >= 0) & (d <= 1)).all()  # bounded
    np.testing.assert_array_equal(cb.tvd(p, p), 0.0)  # zero on equal rows
    assert (d > 0).all()  # and only there
    np.testing.assert_allclose(cb.tvd([[1.0, 0.0]], [[0.0, 1.0]]), [1.0])
    # triangle inequality
    r = rng.dirichlet(np.ones(4), size=200)
    assert (cb.tvd(p, r) <= cb.tvd(p, q) + cb.tvd(q, r) + 1e-12).all()


def test_tvd_shape_mismatch():
    with pytest.raises(ValueError, match=r"q has shape \(1, 3\) but p has shape \(1, 2\)"):
        cb.tvd([[0.5, 0.5]], [[0.2, 0.3, 0.5]])


@pytest.mark.parametrize("seed", range(5))
def test_oracle_scores_perfectly(seed):
    rng = np.random.default_rng(seed)
    counts = random_counts(rng, 300, 3)
    counts = counts[~cb.ranking_ties(counts)]
    oracle = cb.human_distribution(counts)
    np.testing.assert_allclose(cb.dist_ce(oracle, counts), 0.0, atol=1e-15)
    np.testing.assert_allclose(cb.ent_ce(oracle, counts), 0.0, atol=1e-12)
    assert cb.rank_cs(oracle, counts) == 1.0
    assert cb.rank_cs(oracle, counts, ties="any") == 1.0


def test_dist_ce_and_ent_ce_by_hand():
    probs = [[0.7, 0.2, 0.1]]
    counts = [[50, 30, 20]]
    np.testing.assert_allclose(cb.dist_ce(probs, counts), [0.2])
    h = lambda p: -sum(x * np.log(x) for x in p)
    np.testing.assert_allclose(cb.ent_ce(probs, counts), [h([0.7, 0.2, 0.1]) - h([0.5, 0.3, 0.2])])


def test_rank_cs_ties():
    probs = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.3, 0.5, 0.2]])
    human = np.array([[5, 2, 2], [1, 1, 8], [4, 4, 2]])
    # row 0: human tie of classes 1,2; stable argsort of human: [1, 2, 0]; model: [2, 1, 0] -> strict miss
    # row 1: human [0, 1, 2] (tie 0,1 broken by index); model [0, 1, 2] -> match
    # row 2: human [2, 0, 1]; model [2, 0, 1] -> match
    assert cb.rank_cs(probs, human) == pytest.approx(2 / 3)
    assert cb.rank_cs(probs, human, ties="any") == 1.0
    # "any" never scores below "strict"
    rng = np.random.default_rng(0)
    counts = random_counts(rng, 500, 3, votes=5)
    p = rng.dirichlet(np.ones(3), size=500)
    assert cb.rank_cs(p, counts, ties="any") >= cb.rank_cs(p, counts)
    with pytest.raises(ValueError, match="ties must be one of 'strict', 'any'; got 'loose'"):
        cb.rank_cs(p, counts, ties="loose")


def test_human_shape_checks():
    with pytest.raises(ValueError, match="human has 2 rows but probs has 1"):
        cb.dist_ce([[0.5, 0.5]], [[1, 1], [2, 0]])
    with pytest.raises(ValueError, match="human has 3 classes"):
        cb.ent_ce([[0.5, 0.5]], [[1, 1, 1]])
    with pytest.raises(ValueError, match="all-zero row"):
        cb.human_distribution([[1, 1], [0, 0]])
