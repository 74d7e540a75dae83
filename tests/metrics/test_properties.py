"""Property tests over seeded random grids: permutation invariance, Si's
identities, Sakai's axioms, ranges."""

import numpy as np
import pytest

import calibnb as cb

SEEDS = range(12)


def draw(seed, n=None, ties=False):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(5, 400))
    conf = rng.integers(0, 21, n) / 20 if ties else rng.random(n)
    correct = rng.random(n) < conf
    return rng, conf, correct


CONF_METRICS = {
    "ece_width": lambda c, y: cb.ece(c, y, n_bins=10),
    "mce_width": lambda c, y: cb.mce(c, y, n_bins=15),
    "ice": cb.ice,
    "macro_ce": cb.macro_ce,
    "hmr": cb.hmr,
    "hmr_beta2": lambda c, y: cb.hmr(c, y, beta=2.0),
    "brier_top": cb.brier_top,
    "ks_group": lambda c, y: cb.ks_error(c, y, ties="group"),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(CONF_METRICS))
def test_permutation_invariance_with_ties(seed, name):
    rng, conf, correct = draw(seed, ties=True)
    perm = rng.permutation(conf.shape[0])
    f = CONF_METRICS[name]
    assert f(conf[perm], correct[perm]) == pytest.approx(f(conf, correct), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_order_dependent_metrics_invariant_without_ties(seed):
    rng, conf, correct = draw(seed)
    assert np.unique(conf).size == conf.size
    perm = rng.permutation(conf.shape[0])
    for f in (cb.ks_error, lambda c, y: cb.ece(c, y, n_bins=7, binning="mass"),
              lambda c, y: cb.mce(c, y, n_bins=7, binning="mass")):
        assert f(conf[perm], correct[perm]) == pytest.approx(f(conf, correct), abs=1e-12)
    assert cb.ks_error(conf, correct) == pytest.approx(cb.ks_error(conf, correct, ties="group"), abs=1e-15)


@pytest.mark.parametrize("seed", SEEDS)
def test_multiclass_permutation_invariance(seed):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(4), size=200)
    labels = rng.integers(0, 4, 200)
    counts = rng.integers(0, 6, size=(200, 4))
    counts[:, 0] += 1
    perm = rng.permutation(200)
    for f in (cb.nbr, cb.classwise_ece):
        assert f(probs[perm], labels[perm]) == pytest.approx(f(probs, labels), abs=1e-12)
    for f in (cb.rank_cs, cb.human_classwise_ce):
        assert f(probs[perm], counts[perm]) == pytest.approx(f(probs, counts), abs=1e-12)
    np.testing.assert_allclose(cb.dist_ce(probs[perm], counts[perm]), cb.dist_ce(probs, counts)[perm])


@pytest.mark.parametrize("seed", SEEDS)
def test_ranges(seed):
    _, conf, correct = draw(seed, ties=seed % 2 == 0)
    for name, f in CONF_METRICS.items():
        v = f(conf, correct)
        assert 0.0 <= v <= 1.0, name
    r = cb.rewards(conf, correct)
    assert 0 <= r.r_o <= 1 and 0 <= r.r_u <= 1
    parts = cb.macro_ce_parts(conf, correct)
    assert all(0 <= x <= 1 for x in parts)
    assert cb.ece(conf, correct) <= cb.mce(conf, correct) + 1e-15


# ---- Si et al. 2022 ---------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_average_baseline_macro_ce_is_one_half(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 500))
    correct = rng.random(n) < rng.uniform(0.05, 0.95)
    correct[0], correct[1] = True, False  # accuracy strictly between 0 and 1
    acc = correct.mean()
    assert cb.macro_ce(np.full(n, acc), correct) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_macro_ce_is_one_minus_mean_reward(seed):
    _, conf, correct = draw(seed)
    r = cb.rewards(conf, correct)
    assert cb.macro_ce(conf, correct) == pytest.approx(1 - (r.r_o + r.r_u) / 2, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_ice_is_equal_mass_ece_with_n_bins(seed):
    _, conf, correct = draw(seed, ties=seed % 2 == 0)
    n = conf.shape[0]
    assert cb.ice(conf, correct) == pytest.approx(cb.ece(conf, correct, n_bins=n, binning="mass"), abs=1e-12)


# ---- Sakai 2024 axioms --------------------------------------------------------

def _perturb(seed):
    rng, conf, correct = draw(seed, n=50)
    correct[:2] = [True, False]
    conf[0], conf[1] = 0.6, 0.4  # room to lower the correct one and raise the wrong one
    pos, neg = np.flatnonzero(correct), np.flatnonzero(~correct)
    i, j = rng.choice(pos), rng.choice(neg)
    y = conf.copy()
    y[i] = conf[i] * rng.uniform(0.1, 0.99)  # lower a correct confidence
    z = conf.copy()
    z[j] = conf[j] + (1 - conf[j]) * rng.uniform(0.01, 1.0)  # raise a wrong one
    w = y.copy()
    w[j] = z[j]
    return conf, correct, y, z, w


@pytest.mark.parametrize("seed", range(40))
def test_hmr_satisfies_axioms_u_o_uo(seed):
    x, correct, y, z, w = _perturb(seed)
    hx = cb.hmr(x, correct)
    assert cb.hmr(y, correct) <= hx  # Axiom U
    assert cb.hmr(z, correct) <= hx  # Axiom O
    assert cb.hmr(w, correct) < hx  # Axiom UO: strictly worse


def test_axiom_uo_edge_cases_of_hmr():
    # R_O = 0 (fully confident on every wrong item): U and O perturbations keep HMR at 0
    conf = np.array([1.0, 0.7])
    correct = np.array([False, True])
    assert cb.hmr(conf, correct) == 0.0
    assert cb.hmr([1.0, 0.5], correct) == 0.0
