"""Jiang et al. 2024: scalar-label metrics."""

import itertools

import numpy as np
import pytest

import calibnb as cb
from calibnb.metrics.scalar import _count_inversions


def brute_ranking_risk(pred, target):
    d = t = p = 0
    for i, j in itertools.combinations(range(len(pred)), 2):
        if target[i] == target[j]:
            continue
        p += 1
        if pred[i] == pred[j]:
            t += 1
        elif (pred[i] - pred[j]) * (target[i] - target[j]) < 0:
            d += 1
    return (d + t / 2) / p


@pytest.mark.parametrize("seed", range(30))
def test_ranking_risk_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    levels = [3, 5, 1000][seed % 3]
    pred = rng.integers(0, levels, n) / levels
    target = rng.integers(0, 4, n) / 3
    if len(set(target)) < 2:
        target[0], target[1] = 0.0, 1.0
    assert cb.ranking_risk(pred, target) == pytest.approx(brute_ranking_risk(pred, target))


def test_ranking_risk_extremes_and_ties():
    t = np.arange(10.0)
    assert cb.ranking_risk(t, t) == 0.0
    assert cb.ranking_risk(-t, t) == 1.0
    assert cb.ranking_risk(np.zeros(10), t) == 0.5  # constant prediction: all half
    assert cb.ranking_risk([0.1, 0.9, 0.5, 0.5], [0, 0, 1, 1]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="target_scalar has no two different values"):
        cb.ranking_risk([0.1, 0.2], [1.0, 1.0])


def test_ranking_risk_invariant_to_monotone_maps_and_permutation():
    rng = np.random.default_rng(1)
    pred, target = rng.random(500), rng.integers(0, 5, 500) / 4
    base = cb.ranking_risk(pred, target)
    assert cb.ranking_risk(np.exp(3 * pred), target) == pytest.approx(base)
    perm = rng.permutation(500)
    assert cb.ranking_risk(pred[perm], target[perm]) == pytest.approx(base)


@pytest.mark.parametrize("seed", range(10))
def test_count_inversions(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, [2, 7, 10_000][seed % 3], int(rng.integers(0, 80)))
    brute = sum(1 for i in range(len(a)) for j in range(i + 1, len(a)) if a[i] > a[j])
    assert _count_inversions(a) == brute


def test_expected_label_and_mae():
    probs = [[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]]
    values = [1.0, 0.5, 0.0]
    np.testing.assert_allclose(cb.expected_label(probs, values), [0.45, 1.0])
    assert cb.scalar_mae([0.45, 1.0], [0.5, 0.5]) == pytest.approx(0.275)
    with pytest.raises(ValueError, match="values has length 2 but probs has 3 classes"):
        cb.expected_label(probs, [1.0, 0.0])
    with pytest.raises(ValueError, match="target_scalar has length 1 but pred_scalar has length 2"):
        cb.scalar_mae([0.1, 0.2], [0.1])


def test_mae_lower_bounds_distribution_error():
    """|psi(p) - psi(q)| <= (max f - min f) * TVD(p, q) (Jiang et al. 2024)."""
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(3), size=1000)
    counts = np.stack([rng.multinomial(20, x) for x in rng.dirichlet(np.ones(3), size=1000)])
    values = np.array([1.0, 0.5, 0.0])
    gap = np.abs(cb.expected_label(p, values) - cb.expected_label(cb.human_distribution(counts), values))
    assert (gap <= (values.max() - values.min()) * cb.dist_ce(p, counts) + 1e-12).all()


def test_classwise_ce_relation_to_dist_ce():
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(4), size=100)
    counts = rng.integers(1, 10, size=(100, 4))
    assert cb.human_classwise_ce(p, counts) == pytest.approx(2 / 4 * cb.dist_ce(p, counts).mean())


def test_unli_transform_shape_and_round_trip():
    s = np.linspace(0, 10000, 2001)
    u = cb.unli_transform(s)
    assert u[0] == pytest.approx(0.0, abs=1e-12) and u[-1] == pytest.approx(1.0)
    assert u[1000] == pytest.approx(0.5)
    assert (np.diff(u) > 0).all()  # strictly increasing
    np.testing.assert_allclose(cb.unli_inverse(u), s, atol=1e-6)
    uu = np.linspace(0, 1, 101)
    np.testing.assert_allclose(cb.unli_transform(cb.unli_inverse(uu)), uu, atol=1e-9)
    # the left branch is the steep sigmoid: at t = -10, beta = 0.3
    sig = lambda t, b: 1 / (1 + np.exp(-b * t))
    m = sig(-50, 0.3)
    assert cb.unli_transform([4000.0])[0] == pytest.approx(0.5 * (sig(-10, 0.3) - m) / (0.5 - m))
    with pytest.raises(ValueError, match="slider has 1 value"):
        cb.unli_transform([-1.0, 5.0])
    with pytest.raises(ValueError, match=r"u has 1 value\(s\) outside \[0, 1\]; first at index 0: 1.5"):
        cb.unli_inverse([1.5])
