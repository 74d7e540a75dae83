"""Tests of the estimators beyond binned ECE and of the calibration tests with p-values."""

import numpy as np
import pytest
from scipy import stats

import calibnb as cn
from calibnb import auto_n_bins, debiased_ece, smooth_ece, smooth_ece_bandwidth, sweep_n_bins
from calibnb.uncertainty import _max_abs_brownian_sf, cumulative_ks_test, spiegelhalter_test


def _random_case(rng, lo=0.0, hi=1.0):
    n = int(rng.integers(50, 4000))
    conf = rng.beta(rng.uniform(0.3, 3), rng.uniform(0.3, 3), n)
    conf = np.clip(conf, lo, hi)
    correct = rng.uniform(size=n) < conf ** rng.uniform(0.5, 2)
    return conf, correct


# ---- smooth ECE ---------------------------------------------------------------

def test_smooth_ece_equals_relplot_within_1e3_on_random_inputs():
    relplot = pytest.importorskip("relplot")
    rng = np.random.default_rng(0)
    for _ in range(25):
        conf, correct = _random_case(rng, 0.005, 0.995)
        ours = smooth_ece(conf, correct)
        theirs = relplot.smECE(conf, correct.astype(float))
        assert abs(ours - theirs) < 1e-3, (len(conf), ours, theirs)


def _direct_smooth_ece(conf, correct, sigma, grid=20001):
    """Brute force: the reflected kernel summed over images, integrated on a fine grid."""
    t = np.linspace(0, 1, grid)[:, None]
    k = np.zeros((grid, len(conf)))
    for s in range(-4, 5):
        k += stats.norm.pdf(t - conf - 2 * s, scale=sigma) + stats.norm.pdf(t + conf - 2 * s, scale=sigma)
    r = (k * (correct - conf)).mean(axis=1)
    return np.trapezoid(np.abs(r), dx=1 / (grid - 1))


@pytest.mark.parametrize("sigma", [0.02, 0.1, 0.6])
def test_smooth_ece_at_fixed_bandwidth_equals_the_definition(sigma):
    rng = np.random.default_rng(1)
    conf = np.r_[rng.uniform(size=60), [0.0, 1.0, 1.0]]  # includes the end points
    correct = (rng.uniform(size=63) < conf ** 2).astype(float)
    assert smooth_ece(conf, correct, bandwidth=sigma) == pytest.approx(_direct_smooth_ece(conf, correct, sigma), abs=2e-6)


@pytest.mark.parametrize("sigma", [2.0 ** -13, 1e-3, 0.004, 0.03, 0.2, 1.0])
def test_smooth_residual_with_the_exponential_on_live_frequencies_only_is_bit_equal(sigma):
    """The kernel skips the frequencies where exp underflows to 0, and scipy.fft's inverse transform runs on the
    spectrum zeroed past them (issue 31): the same residual, bit for bit, as NumPy's inverse transform of the
    spectrum times exp over all 16,385 frequencies."""
    from calibnb.metrics.estimators import _SMOOTH_NODES, _SmoothResiduals

    rng = np.random.default_rng(5)
    conf = np.r_[0.0, rng.uniform(size=3000), 1.0]
    res = _SmoothResiduals(conf, (rng.uniform(size=conf.size) < conf ** 2).astype(np.float64))
    kernel = np.exp(-2.0 * np.pi**2 * sigma**2 * res.freq**2) / res.h
    full = np.fft.irfft(res.spectrum * kernel, n=res.p)[:_SMOOTH_NODES] / res.n
    assert np.array_equal(res.residual(sigma), full)
    assert (kernel == 0.0).any() == (sigma >= 1e-3)  # the cases reach the underflow (and one does not)


def test_smooth_ece_is_the_fixed_point_of_its_bandwidth():
    rng = np.random.default_rng(2)
    conf, correct = _random_case(rng)
    s = smooth_ece_bandwidth(conf, correct)
    assert smooth_ece(conf, correct) == pytest.approx(s, abs=1e-6)
    assert smooth_ece(conf, correct, bandwidth=s) == pytest.approx(s, abs=1e-6)


@pytest.mark.parametrize("case", ["miscalibrated", "calibrated"])
def test_smooth_ece_computes_each_bandwidths_value_once_and_returns_the_same_float(case, monkeypatch):
    """The fixed-point search evaluates no bandwidth twice, the answer's included (issue 31: it was computed again
    after the search), and the answer is the smooth ECE computed afresh at the returned bandwidth, bit for bit."""
    from calibnb.metrics import estimators

    if case == "calibrated":  # right as often as stated at each level: below the smallest bandwidth at once
        conf = np.repeat([0.2, 0.5, 0.8], 10)
        correct = np.r_[[1] * 2 + [0] * 8, [1] * 5 + [0] * 5, [1] * 8 + [0] * 2]
    else:
        rng = np.random.default_rng(11)
        conf = rng.uniform(0.5, 1.0, size=2000)
        correct = rng.uniform(size=conf.size) < conf ** 3
    calls = []
    ece = estimators._SmoothResiduals.ece
    monkeypatch.setattr(estimators._SmoothResiduals, "ece", lambda self, sigma: calls.append(sigma) or ece(self, sigma))
    value = smooth_ece(conf, correct)
    assert calls and len(calls) == len(set(calls)), calls
    sigma = smooth_ece_bandwidth(conf, correct)
    assert (sigma == estimators._MIN_BANDWIDTH) == (case == "calibrated")
    monkeypatch.undo()
    assert value == smooth_ece(conf, correct, bandwidth=sigma)


def test_smooth_ece_weights_confidences_at_the_end_points_fully():
    # Residuals of one sign: smooth ECE = |mean residual| for every bandwidth (the
    # reflected kernel integrates to 1 over [0, 1], also for a confidence of exactly 1).
    conf = np.r_[np.ones(500), np.full(500, 0.7)]
    correct = np.r_[np.ones(450), np.zeros(50), np.ones(350), np.zeros(150)]
    assert smooth_ece(conf, correct) == pytest.approx(0.05, abs=1e-12)
    assert smooth_ece(conf, correct, bandwidth=0.3) == pytest.approx(0.05, abs=1e-12)


def test_smooth_ece_is_zero_when_calibrated_at_every_level_and_rejects_bad_bandwidth():
    assert smooth_ece(np.full(10, 0.5), [1, 0] * 5) == 0.0
    with pytest.raises(ValueError, match="bandwidth must be"):
        smooth_ece([0.2, 0.4], [0, 1], bandwidth=0.0)
    with pytest.raises(ValueError, match="bandwidth must be at least"):
        smooth_ece([0.2, 0.4], [0, 1], bandwidth=1e-5)
    with pytest.raises(ValueError, match="conf"):
        smooth_ece([0.2, 1.4], [0, 1])


# ---- debiased ECE -------------------------------------------------------------

@pytest.mark.parametrize("binning", ["width", "mass"])
def test_debiased_ece_equals_kumar_et_al_code(binning):
    cal = pytest.importorskip("calibration.utils")
    rng = np.random.default_rng(3)
    for n_bins in (5, 15):
        conf, correct = _random_case(rng, 0.001, 0.999)
        labels = correct.astype(int)
        if binning == "width":
            bins = cal.get_equal_prob_bins(conf, n_bins)
        else:
            bins = cal.get_equal_bins(conf, n_bins)
        binned = cal.bin(list(zip(conf, labels)), bins)
        assert debiased_ece(conf, correct, n_bins=n_bins, binning=binning) == pytest.approx(
            cal.unbiased_l2_ce(binned), abs=1e-12)
        assert debiased_ece(conf, correct, n_bins=n_bins, binning=binning, squared=True) == pytest.approx(
            cal.unbiased_square_ce(binned), abs=1e-12)


def test_debiased_squared_error_is_unbiased_where_the_plugin_is_not():
    # Fixed confidences, correctness ~ Bernoulli(p(c)) with p(c) = c^2: the binned
    # squared calibration error given the confidences is known exactly.
    rng = np.random.default_rng(4)
    n, reps, m = 300, 4000, 10
    conf = rng.uniform(size=n)
    p = conf ** 2
    idx = cn.bin_indices(conf, n_bins=m)
    count = np.bincount(idx, minlength=m)
    true_sq = np.sum(count * (np.bincount(idx, conf, m) / np.maximum(count, 1)
                              - np.bincount(idx, p, m) / np.maximum(count, 1)) ** 2) / n
    y = rng.uniform(size=(reps, n)) < p
    est = np.array([debiased_ece(conf, yy, n_bins=m, squared=True) for yy in y])
    onehot = np.eye(m)[idx]
    ybar = (y @ onehot) / np.maximum(count, 1)
    cbar = (conf @ onehot) / np.maximum(count, 1)
    plug = ((ybar - cbar) ** 2 @ count) / n  # the plug-in squared error of every repetition
    se = est.std() / np.sqrt(reps)
    assert abs(est.mean() - true_sq) < 4 * se
    assert plug.mean() - true_sq > 10 * plug.std() / np.sqrt(reps)


def test_debiased_ece_rejects_bad_options():
    with pytest.raises(TypeError, match="squared"):
        debiased_ece([0.2, 0.4], [0, 1], squared="yes")
    with pytest.raises(ValueError, match="binning"):
        debiased_ece([0.2, 0.4], [0, 1], binning="log")


# ---- number of bins -----------------------------------------------------------

def _ref_sweep(conf, correct):
    order = np.argsort(conf, kind="stable")
    y = np.asarray(correct, float)[order]
    best = 1
    for b in range(2, len(y) + 1):
        acc = [g.mean() for g in np.array_split(y, b)]
        if any(a2 < a1 for a1, a2 in zip(acc, acc[1:])):
            break
        best = b
    return best


def test_sweep_n_bins_equals_a_direct_sweep():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 300))
        conf = np.round(rng.uniform(size=n), int(rng.integers(1, 4)))  # with ties
        correct = rng.uniform(size=n) < conf
        assert sweep_n_bins(conf, correct) == _ref_sweep(conf, correct)
    assert sweep_n_bins([0.1, 0.5, 0.9], [0, 0, 1]) == 3  # sorted correctness: every b is monotone


def test_auto_n_bins_rule():
    assert [auto_n_bins(n) for n in (1, 8, 9, 1000, 1001, 10**5)] == [1, 2, 3, 10, 11, 47]


# ---- calibration tests with p-values -----------------------------------------

def test_spiegelhalter_matches_mapie_and_the_published_formula():
    mapie = pytest.importorskip("mapie.metrics.calibration")
    rng = np.random.default_rng(6)
    for _ in range(10):
        conf, correct = _random_case(rng, 0.01, 0.99)
        y = correct.astype(int)
        ours = spiegelhalter_test(conf, correct, alternative="greater")
        assert ours.statistic == pytest.approx(mapie.spiegelhalter_statistic(y, conf), rel=1e-12)
        assert ours.p_value == pytest.approx(mapie.spiegelhalter_p_value(y, conf), rel=1e-9, abs=1e-15)
        two = spiegelhalter_test(conf, correct)
        assert two.p_value == pytest.approx(2 * stats.norm.sf(abs(ours.statistic)), rel=1e-12)
        assert spiegelhalter_test(conf, correct, alternative="less").p_value == pytest.approx(
            stats.norm.cdf(ours.statistic), rel=1e-12)
    # Spiegelhalter 1986 Eq. 4 written out on a small case
    c = np.array([0.1, 0.9, 0.21, 0.9, 0.5])
    yy = np.array([0, 1, 0, 1, 0])
    z = np.sum((yy - c) * (1 - 2 * c)) / np.sqrt(np.sum((1 - 2 * c) ** 2 * c * (1 - c)))
    assert spiegelhalter_test(c, yy).statistic == pytest.approx(z, rel=1e-14)


def test_cumulative_ks_matches_mapie():
    mapie = pytest.importorskip("mapie.metrics.calibration")
    rng = np.random.default_rng(7)
    for _ in range(10):
        conf, correct = _random_case(rng, 0.01, 0.99)
        conf = conf + rng.uniform(0, 1e-6, conf.shape)  # no ties: MAPIE's jitter then does not reorder
        y = correct.astype(int)
        ours = cumulative_ks_test(conf, correct)
        assert ours.statistic == pytest.approx(mapie.kolmogorov_smirnov_statistic(y, conf), rel=1e-6)
        assert ours.p_value == pytest.approx(mapie.kolmogorov_smirnov_p_value(y, conf), rel=1e-6, abs=1e-9)  # MAPIE: 1 - cdf


def test_brownian_max_tail_equals_mapie_cdf_and_is_continuous_between_series():
    mapie = pytest.importorskip("mapie.metrics.calibration")
    for x in (0.3, 0.6, 0.95, 1.0, 1.05, 1.7, 2.5, 3.5):
        assert _max_abs_brownian_sf(x) == pytest.approx(1 - mapie.kolmogorov_smirnov_cdf(x), abs=1e-13)
    assert _max_abs_brownian_sf(1 - 1e-12) == pytest.approx(_max_abs_brownian_sf(1.0), abs=1e-11)
    assert _max_abs_brownian_sf(8.0) > 0  # the tail series keeps precision where 1 - cdf is 0
    # P(max|B| >= x) by simulation of a random walk
    rng = np.random.default_rng(8)
    walk = np.cumsum(rng.standard_normal((4000, 2000)), axis=1) / np.sqrt(2000)
    emp = np.mean(np.abs(walk).max(axis=1) >= 1.5)
    assert emp == pytest.approx(_max_abs_brownian_sf(1.5), abs=0.03)


@pytest.mark.parametrize("test", [spiegelhalter_test, cumulative_ks_test])
def test_p_values_hold_their_level_under_calibration_and_detect_miscalibration(test):
    rng = np.random.default_rng(9)
    conf = rng.uniform(0.05, 0.95, size=(400, 600))
    calibrated = rng.uniform(size=conf.shape) < conf
    p = np.array([test(c, y).p_value for c, y in zip(conf, calibrated)])
    assert 0.02 <= np.mean(p < 0.05) <= 0.09
    over = rng.uniform(size=conf.shape) < 0.5 + 0.5 * (conf - 0.5) ** 3  # flatter than conf
    p_over = np.array([test(c, y).p_value for c, y in zip(conf[:50], over[:50])])
    assert np.mean(p_over < 0.05) > 0.9


def test_calibration_tests_refuse_degenerate_input():
    with pytest.raises(ValueError, match="zero variance"):
        spiegelhalter_test([0.5, 1.0, 0.0], [1, 1, 0])
    with pytest.raises(ValueError, match="sigma = 0"):
        cumulative_ks_test([1.0, 0.0], [1, 0])
    with pytest.raises(ValueError, match="alternative"):
        spiegelhalter_test([0.2, 0.7], [0, 1], alternative="both")
