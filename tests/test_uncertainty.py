"""Tests of calibnb.uncertainty: bootstrap intervals of calibration metrics."""

import numpy as np
import pytest
from scipy import stats

import calibnb as cn
from calibnb.uncertainty import BootstrapResult, batch_axis, bootstrap_ci, paired_bootstrap_ci


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.3, 1.0, n)
    correct = rng.uniform(size=n) < conf ** 1.5
    return conf, correct


def _plain_ece(conf, correct):
    return cn.ece(conf, correct, n_bins=10)


def test_result_is_named_tuple_with_estimate_on_full_data():
    conf, correct = _data()
    r = bootstrap_ci(cn.ece, conf, correct, n_resamples=200, seed=0, n_bins=15)
    assert isinstance(r, BootstrapResult)
    est, lo, hi = r
    assert est == cn.ece(conf, correct, n_bins=15)
    assert lo < est < hi


def test_percentile_interval_equals_scipy_paired_bootstrap():
    conf, correct = _data()
    ours = bootstrap_ci(_plain_ece, conf, correct, n_resamples=300, seed=3)
    ref = stats.bootstrap((conf, correct), _plain_ece, paired=True, vectorized=False, n_resamples=300,
                          method="percentile", rng=np.random.default_rng(3))
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-15)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-15)


def test_bca_interval_equals_scipy_bca():
    conf, correct = _data(n=80)
    ours = bootstrap_ci(_plain_ece, conf, correct, n_resamples=300, seed=5, method="bca", level=0.9)
    ref = stats.bootstrap((conf, correct), _plain_ece, paired=True, vectorized=False, n_resamples=300,
                          method="BCa", confidence_level=0.9, rng=np.random.default_rng(5))
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)


def test_batched_metric_gives_the_same_interval_as_the_loop():
    conf, correct = _data(n=500)

    def gap(c, y):
        return np.mean(c, axis=-1) - np.mean(y, axis=-1)

    loop = bootstrap_ci(lambda c, y: float(gap(c, y)), conf, correct, n_resamples=400, seed=1)
    vec = bootstrap_ci(batch_axis(gap), conf, correct, n_resamples=400, seed=1)
    forced = bootstrap_ci(gap, conf, correct, n_resamples=400, seed=1, vectorized=True)
    assert loop == pytest.approx(vec, abs=1e-14)
    assert vec == forced


def test_seed_reproducible_and_generator_accepted():
    conf, correct = _data()
    a = bootstrap_ci(cn.macro_ce, conf, correct, n_resamples=200, seed=7)
    b = bootstrap_ci(cn.macro_ce, conf, correct, n_resamples=200, seed=np.random.default_rng(7))
    c = bootstrap_ci(cn.macro_ce, conf, correct, n_resamples=200, seed=8)
    assert a == b
    assert a != c


def test_wider_level_gives_wider_interval():
    conf, correct = _data()
    r90 = bootstrap_ci(cn.brier_top, conf, correct, n_resamples=400, seed=0, level=0.9)
    r99 = bootstrap_ci(cn.brier_top, conf, correct, n_resamples=400, seed=0, level=0.99)
    assert r99.low <= r90.low and r90.high <= r99.high


def test_multidimensional_arrays_are_resampled_along_the_first_axis():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4), size=200)
    labels = rng.integers(0, 4, 200)
    r = bootstrap_ci(cn.classwise_ece, probs, labels, n_resamples=100, seed=0, n_bins=5)
    assert r.estimate == cn.classwise_ece(probs, labels, n_bins=5)
    assert r.low <= r.estimate <= r.high


def test_paired_difference_estimate_and_interval():
    conf, correct = _data(n=400)
    conf_b = np.clip(conf + 0.1, 0, 1)
    d = paired_bootstrap_ci(cn.ece, (conf, correct), (conf_b, correct), n_resamples=300, seed=2, n_bins=10)
    assert d.estimate == pytest.approx(cn.ece(conf, correct) - cn.ece(conf_b, correct), abs=1e-15)

    def diff(c1, y1, c2, y2):
        return cn.ece(c1, y1) - cn.ece(c2, y2)

    ref = bootstrap_ci(diff, conf, correct, conf_b, correct, n_resamples=300, seed=2)
    looped = paired_bootstrap_ci(cn.ece, (conf, correct), (conf_b, correct), n_resamples=300, seed=2,
                                 vectorized=False)
    assert looped == pytest.approx(ref, abs=1e-14)  # same draws as one bootstrap of the difference
    width = ref.high - ref.low
    assert d.estimate == ref.estimate
    assert abs(d.low - ref.low) < 0.2 * width and abs(d.high - ref.high) < 0.2 * width


def test_paired_interval_is_narrower_than_unpaired_for_correlated_systems():
    conf, correct = _data(n=600, seed=4)
    conf_b = np.clip(conf * 0.97, 0, 1)
    d = paired_bootstrap_ci(cn.brier_top, (conf, correct), (conf_b, correct), n_resamples=400, seed=0)
    a = bootstrap_ci(cn.brier_top, conf, correct, n_resamples=400, seed=0)
    b = bootstrap_ci(cn.brier_top, conf_b, correct, n_resamples=400, seed=1)
    assert d.high - d.low < 0.5 * ((a.high - a.low) + (b.high - b.low))


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda c, y: bootstrap_ci("ece", c, y), TypeError, "metric must be callable"),
        (lambda c, y: bootstrap_ci(cn.ece), TypeError, "at least one data array"),
        (lambda c, y: bootstrap_ci(cn.ece, c, y[:-1]), ValueError, r"arrays\[1\] has 299 items"),
        (lambda c, y: bootstrap_ci(cn.ece, c[:1], y[:1]), ValueError, "at least 2 items"),
        (lambda c, y: bootstrap_ci(cn.ece, c, y, level=1.0), ValueError, "level must be < 1"),
        (lambda c, y: bootstrap_ci(cn.ece, c, y, level=95), ValueError, "level must be < 1"),
        (lambda c, y: bootstrap_ci(cn.ece, c, y, n_resamples=1), ValueError, "n_resamples must be at least 2"),
        (lambda c, y: bootstrap_ci(cn.ece, c, y, n_resamples=10.0), TypeError, "n_resamples must be an integer"),
        (lambda c, y: bootstrap_ci(cn.ece, c, y, method="bc"), ValueError, "method must be one of"),
        (lambda c, y: bootstrap_ci(cn.ece, c, y, seed="x"), TypeError, "seed must be"),
        (lambda c, y: bootstrap_ci(cn.rewards, c, y), TypeError, "rewards must return a real number"),
        (lambda c, y: bootstrap_ci(cn.ece, c, ["a"] * 300), TypeError, r"arrays\[1\]"),
        (lambda c, y: bootstrap_ci(lambda c, y: np.mean(c), c, y, vectorized=True), ValueError, "returned shape"),
        (lambda c, y: paired_bootstrap_ci(cn.ece, c, (c, y)), TypeError, "a must be a tuple"),
        (lambda c, y: paired_bootstrap_ci(cn.ece, (c, y), (c[:10], y[:10])), ValueError, "items"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, exc, match):
    conf, correct = _data()
    with pytest.raises(exc, match=match):
        call(conf, correct)


def test_metric_errors_propagate():
    conf, correct = _data()
    with pytest.raises(ValueError, match="n_bins"):
        bootstrap_ci(cn.ece, conf, correct, n_bins=0)


# ---- the multiplicity-weights path of calibnb's metrics --------------------------

def test_weights_path_agrees_with_resampled_rows_within_monte_carlo_noise():
    conf, correct = _data(n=2000, seed=11)
    for metric, opts in [(cn.ece, {}), (cn.ece, {"binning": "mass"}), (cn.macro_ce, {}), (cn.ks_error, {"ties": "group"})]:
        fast = bootstrap_ci(metric, conf, correct, n_resamples=1500, seed=0, **opts)
        slow = bootstrap_ci(lambda c, y: metric(c, y, **opts), conf, correct, n_resamples=1500, seed=0)
        width = slow.high - slow.low
        assert fast.estimate == slow.estimate
        assert abs(fast.low - slow.low) < 0.15 * width and abs(fast.high - slow.high) < 0.15 * width, metric


def test_weights_path_is_reproducible_and_independent_of_threads(monkeypatch):
    import calibnb.uncertainty as unc

    conf, correct = _data(n=3000)
    a = bootstrap_ci(cn.ece, conf, correct, n_resamples=3000, seed=4)
    monkeypatch.setattr(unc, "_MAX_THREADS", 1)
    b = bootstrap_ci(cn.ece, conf, correct, n_resamples=3000, seed=4)
    assert a == b
    d1 = paired_bootstrap_ci(cn.hmr, (conf, correct), (conf ** 2, correct), n_resamples=500, seed=1)
    monkeypatch.setattr(unc, "_MAX_THREADS", 4)
    d2 = paired_bootstrap_ci(cn.hmr, (conf, correct), (conf ** 2, correct), n_resamples=500, seed=1)
    assert d1 == d2
    assert d1.estimate == pytest.approx(cn.hmr(conf, correct) - cn.hmr(conf ** 2, correct), abs=1e-15)


def test_multiplicities_are_bootstrap_counts():
    from calibnb.uncertainty import _multiplicities

    w = _multiplicities(np.random.default_rng(0), 2000, 50)
    assert w.shape == (2000, 50)
    assert np.all(w.sum(axis=1) == 50)
    # each count is Binomial(50, 1/50): mean 1, variance 0.98
    assert w.mean() == pytest.approx(1.0, abs=1e-12)
    assert w.var() == pytest.approx(0.98, abs=0.03)


def test_sample_weight_option_is_resampled_with_the_items():
    conf, correct = _data(n=400)
    w = np.arange(400) % 3 + 1.0
    fast = bootstrap_ci(cn.ece, conf, correct, n_resamples=300, seed=0, sample_weight=w)
    assert fast.estimate == cn.ece(conf, correct, sample_weight=w)
    loop = bootstrap_ci(lambda c, y, sample_weight: cn.ece(c, y, sample_weight=sample_weight),
                        conf, correct, n_resamples=300, seed=0, sample_weight=w)
    assert loop.estimate == fast.estimate
    assert loop.low < loop.estimate < loop.high
    sweep = bootstrap_ci(cn.ece, conf, correct, n_resamples=50, seed=0, n_bins="sweep", binning="mass")
    assert sweep.low <= sweep.high


# ---- coverage on a known population -------------------------------------------------

def _population():
    """Confidences ~ U[0.5, 1], P(correct | c) = c^2: population MacroCE and ECE (10 bins) by quadrature."""
    from scipy.integrate import quad

    dens = 2.0  # density of U[0.5, 1]
    e_g = quad(lambda c: dens * c * c, 0.5, 1)[0]
    ice_pos = quad(lambda c: dens * (1 - c) * c * c, 0.5, 1)[0] / e_g
    ice_neg = quad(lambda c: dens * c * (1 - c * c), 0.5, 1)[0] / (1 - e_g)
    ece = sum(abs(quad(lambda c: dens * (c - c * c), m / 10, (m + 1) / 10)[0]) for m in range(5, 10))
    return (ice_pos + ice_neg) / 2, ece


@pytest.mark.parametrize("which", ["macro_ce", "ece"])
def test_95_percent_intervals_cover_the_population_value(which):
    macro, ece = _population()
    assert macro == pytest.approx((11 / 56 + 0.675) / 2, abs=1e-12) and ece == pytest.approx(1 / 6, abs=1e-12)
    metric, truth = (cn.macro_ce, macro) if which == "macro_ce" else (cn.ece, ece)
    rng = np.random.default_rng(2024)
    reps, n = 300, 1000
    conf = rng.uniform(0.5, 1.0, (reps, n))
    correct = rng.uniform(size=(reps, n)) < conf ** 2
    hits = 0
    for r in range(reps):
        res = bootstrap_ci(metric, conf[r], correct[r], n_resamples=1000, seed=r)
        hits += res.low <= truth <= res.high
    assert 0.90 <= hits / reps <= 0.98, hits / reps


def test_bca_on_the_weights_path_uses_scipys_jackknife():
    conf, correct = _data(n=150, seed=12)
    fast = bootstrap_ci(cn.ece, conf, correct, n_resamples=2000, seed=0, method="bca")
    slow = bootstrap_ci(lambda c, y: cn.ece(c, y), conf, correct, n_resamples=2000, seed=0, method="bca")
    perc = bootstrap_ci(cn.ece, conf, correct, n_resamples=2000, seed=0)
    width = slow.high - slow.low
    assert fast.estimate == slow.estimate
    assert abs(fast.low - slow.low) < 0.15 * width and abs(fast.high - slow.high) < 0.15 * width
    assert fast != perc  # the bias correction and acceleration move the interval


# ------------------------------------------------- the one bootstrap draw and interval rule (issue 25)


def test_bootstrap_weights_are_multiplicities_independent_of_the_block_size():
    from calibnb.uncertainty import bootstrap_weights

    whole = np.concatenate(list(bootstrap_weights(37, 50, seed=4, block_elements=10**9)))
    small = np.concatenate(list(bootstrap_weights(37, 50, seed=4, block_elements=37 * 3)))
    assert whole.shape == (50, 37) and np.array_equal(whole, small)
    assert (whole.sum(axis=1) == 37).all() and (whole >= 0).all()
    # the same draw as resampling indices with the generator: item i appears w[s, i] times
    idx = np.random.default_rng(4).integers(0, 37, (50, 37))
    assert np.array_equal(whole, np.stack([np.bincount(r, minlength=37) for r in idx]))
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_weights(37, 0)  # validated before the first block is drawn


def test_percentile_interval_is_the_rule_of_bootstrap_ci():
    from calibnb.uncertainty import bootstrap_weights, percentile_interval

    d = np.random.default_rng(2).normal(size=999)
    lo, hi = percentile_interval(d, level=0.9)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(d, [0.05, 0.95])), abs=1e-15)
    with pytest.raises(ValueError, match="distribution"):
        percentile_interval([0.1, np.nan])
    # bootstrap_ci of a weighted mean equals the same rule on the same multiplicities' distribution
    rng = np.random.default_rng(0)
    conf = rng.uniform(size=300)
    correct = rng.uniform(size=300) < conf
    w = np.concatenate(list(bootstrap_weights(300, 400, seed=7)))
    dist = w @ correct / w.sum(axis=1)
    lo, hi = percentile_interval(dist)
    assert lo < correct.mean() < hi


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

def test_paired_bootstrap_errors_name_the_array_as_passed():
    c, y = np.full(20, 0.7), np.arange(20) % 2 == 0
    with pytest.raises(ValueError, match=r"b\[1\] has 19 items but a\[0\] has 20"):
        cn.paired_bootstrap_ci(cn.ece, (c, y), (c, y[:-1]), n_resamples=20, seed=0)
    with pytest.raises(TypeError, match=r"a\[0\] must be an array of numbers"):
        cn.paired_bootstrap_ci(cn.ece, (None, y), (c, y), n_resamples=20, seed=0)
