"""Tests of calibnb.recalibration (the Gupta et al. 2021 study helpers)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from calibnb.recalibration import SyntheticPopulation


def _sample_ks(scores, correct):
    """KS of Gupta Eq. 11-12 written out here, independent of calibnb.metrics."""
    order = np.argsort(scores, kind="stable")
    gap = np.cumsum(correct[order]) - np.cumsum(scores[order])
    return np.max(np.abs(gap)) / scores.size


# --- SyntheticPopulation ---------------------------------------------------


def test_calibrated_population_has_zero_error():
    pop = SyntheticPopulation(slope=1.0, intercept=0.0)
    s = np.linspace(0.01, 0.99, 7)
    assert_allclose(pop.probability(s), s, atol=1e-12)
    assert pop.ks_population() < 1e-12
    assert pop.ece_limit() < 1e-12


@pytest.mark.parametrize("intercept", [-1.5, -0.8, -0.2, 0.3, 1.0])
@pytest.mark.parametrize("a,b", [(5.0, 1.5), (2.0, 2.0), (1.0, 3.0)])
def test_one_signed_ks_equals_ece_limit(intercept, a, b):
    """Gupta Eq. 8: with one-signed miscalibration, KS = E|P(k|z) - z|."""
    pop = SyntheticPopulation(score_a=a, score_b=b, slope=1.0, intercept=intercept)
    assert pop.is_one_signed()
    assert pop.ks_population() > 1e-3
    assert_allclose(pop.ks_population(), pop.ece_limit(), rtol=1e-9)


@pytest.mark.parametrize("slope", [0.3, 0.5, 2.0])
def test_two_signed_ks_below_ece_limit(slope):
    """When g(z) - z changes sign, the signed areas cancel: KS < ECE limit."""
    pop = SyntheticPopulation(score_a=2.0, score_b=2.0, slope=slope, intercept=0.0)
    assert not pop.is_one_signed()
    assert pop.ks_population() < pop.ece_limit() - 1e-3


@pytest.mark.parametrize("pop", [SyntheticPopulation(), SyntheticPopulation(score_a=2, score_b=2, slope=0.5, intercept=0.3)])
def test_proposition_4_1_on_population(pop):
    """h'(t) computed by finite differences of h(t) equals g(s(t))."""
    t = np.linspace(0.0, 1.0, 4001)
    h = pop.cumulative_accuracy(t)
    dh = np.gradient(h, t)
    inner = slice(40, -40)
    assert_allclose(dh[inner], pop.cumulative_accuracy_derivative(t[inner]), atol=2e-3)
    assert h[0] == pytest.approx(0.0, abs=1e-9)
    # h(1) = P(correct) = integral of g p
    z = np.linspace(0, 1, 200001)[1:-1]
    assert h[-1] == pytest.approx(np.trapezoid(pop.probability(z) * pop.density(z), z), abs=1e-5)


def test_sample_is_seeded_and_matches_population():
    pop = SyntheticPopulation()
    s1, c1 = pop.sample(1000, seed=3)
    s2, c2 = pop.sample(1000, seed=3)
    s3, _ = pop.sample(1000, seed=4)
    assert_allclose(s1, s2)
    assert np.array_equal(c1, c2)
    assert not np.allclose(s1, s3)
    assert c1.dtype == bool and s1.shape == (1000,)
    assert np.all((s1 >= 0) & (s1 <= 1))
    scores, correct = pop.sample(200_000, seed=0)
    # sample KS converges to the population KS (sampling error ~ 1/sqrt(n))
    assert _sample_ks(scores, correct) == pytest.approx(pop.ks_population(), abs=4 / np.sqrt(scores.size))
    # and, for this one-signed population, to mean(score) - accuracy
    assert scores.mean() - correct.mean() == pytest.approx(pop.ece_limit(), abs=4 / np.sqrt(scores.size))


def test_fractile_score_inverts_the_distribution():
    pop = SyntheticPopulation(score_a=3.0, score_b=2.0)
    t = np.array([0.1, 0.5, 0.9])
    scores, _ = pop.sample(100_000, seed=1)
    assert_allclose(np.quantile(scores, t), pop.fractile_score(t), atol=0.01)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"slope": 0.0}, "slope must be > 0"),
        ({"score_a": -1.0}, "score_a must be > 0"),
        ({"score_b": float("nan")}, "score_b must be finite"),
        ({"intercept": "a"}, "intercept must be a real number"),
    ],
)
def test_population_rejects_bad_parameters(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        SyntheticPopulation(**kwargs)


def test_probability_rejects_scores_outside_unit_interval():
    with pytest.raises(ValueError, match="scores has 1 value outside"):
        SyntheticPopulation().probability([0.2, 1.3])
    with pytest.raises(ValueError, match="n must be"):
        SyntheticPopulation().sample(0, seed=0)
