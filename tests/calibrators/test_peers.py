"""Tests of the peer calibrators: vector, Platt, isotonic, histogram binning."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import expit, logit

from calibnb import metrics
from calibnb.calibrators import (
    HistogramBinning,
    IsotonicCalibrator,
    NotFittedError,
    PlattScaling,
    TemperatureScaling,
    VectorScaling,
    softmax,
)

from synthetic import distorted_logits, nll


def multiclass(n, seed, k=5):
    return distorted_logits(n, seed, np.linspace(0.5, 1.5, k), np.linspace(-1, 1, k))  # per-class distortion


def test_vector_scaling_beats_temperature_on_per_class_distortion():
    z, y = multiclass(12000, 1)
    vs = VectorScaling().fit(z[:6000], y[:6000])
    ts = TemperatureScaling().fit(z[:6000], y[:6000])
    assert nll(vs.transform(z[6000:]), y[6000:]) < nll(ts.transform(z[6000:]), y[6000:]) - 0.01
    assert_allclose(vs.weights_, np.linspace(0.5, 1.5, 5), atol=0.15)
    assert_allclose(vs.transform(z[:3]).sum(axis=1), 1.0)


def test_vector_scaling_gradient_matches_sklearn_free_fit():
    # identity data: the fit from the identity start should not move much on calibrated logits
    rng = np.random.default_rng(2)
    z = rng.normal(size=(20000, 3)) * 2
    y = (rng.random((20000, 1)) < np.cumsum(softmax(z), axis=1)).argmax(axis=1)
    vs = VectorScaling().fit(z, y)
    assert_allclose(vs.weights_, 1.0, atol=0.05)
    assert_allclose(vs.bias_ - vs.bias_.mean(), 0.0, atol=0.05)


def test_platt_scaling_recovers_slope_and_intercept():
    rng = np.random.default_rng(3)
    x = rng.normal(size=50000)
    y = rng.random(50000) < expit(2.0 * x - 0.5)
    ps = PlattScaling().fit(x, y)
    assert ps.a_ == pytest.approx(2.0, rel=0.05)
    assert ps.b_ == pytest.approx(-0.5, abs=0.05)
    conf = expit(3.0 * x)
    pl = PlattScaling(logit_input=True).fit(conf, y)
    assert_allclose(pl.transform(conf), expit(pl.a_ * logit(conf) + pl.b_))
    assert pl.a_ == pytest.approx(2.0 / 3.0, rel=0.05)


def test_isotonic_is_monotone_in_unit_interval_and_lowers_ece():
    rng = np.random.default_rng(4)
    conf = rng.beta(5, 1.5, 20000)
    correct = rng.random(20000) < conf**3
    iso = IsotonicCalibrator().fit(conf[:10000], correct[:10000])
    test = conf[10000:]
    out = iso.transform(test)
    order = np.argsort(test)
    assert np.all(np.diff(out[order]) >= 0)
    assert out.min() >= 0 and out.max() <= 1
    assert metrics.ece(out, correct[10000:]) < metrics.ece(test, correct[10000:]) / 3


def test_histogram_binning_bin_accuracies_and_convention():
    conf = np.array([0.0, 0.1, 0.2, 0.55, 0.6, 0.9, 1.0])
    correct = np.array([0, 0, 1, 1, 0, 1, 1])
    hb = HistogramBinning(n_bins=2).fit(conf, correct)
    assert_allclose(hb.bin_accuracy_, [1 / 3, 3 / 4])
    assert hb.bin_count_.tolist() == [3, 4]
    # 0.5 belongs to the first bin (m/M, (m+1)/M]
    assert_allclose(hb.transform([0.0, 0.5, 0.5000001, 1.0]), [1 / 3, 1 / 3, 3 / 4, 3 / 4])
    # empty bin: identity
    hb3 = HistogramBinning(n_bins=4).fit([0.1, 0.2, 0.9], [1, 0, 1])
    assert np.isnan(hb3.bin_accuracy_[1])
    assert hb3.transform([0.4])[0] == 0.4


def test_histogram_binning_mass_and_reliability():
    rng = np.random.default_rng(5)
    conf = rng.beta(5, 1.5, 20000)
    correct = rng.random(20000) < conf**2
    hb = HistogramBinning(n_bins=10, binning="mass").fit(conf[:10000], correct[:10000])
    assert hb.bin_count_.min() >= 999 and hb.bin_count_.max() <= 1001
    out = hb.transform(conf[10000:])
    assert len(np.unique(out)) <= 10
    assert metrics.ece(out, correct[10000:]) < metrics.ece(conf[10000:], correct[10000:]) / 3


@pytest.mark.parametrize("cls", [PlattScaling, IsotonicCalibrator, HistogramBinning])
def test_binary_peers_validate(cls):
    with pytest.raises(NotFittedError):
        cls().transform([0.5])
    with pytest.raises(ValueError, match="correct has length 1"):
        cls().fit([0.5, 0.2], [1])
    with pytest.raises(ValueError, match="NaN"):
        cls().fit([0.5, np.nan], [1, 0])
    with pytest.raises(ValueError, match="1-D"):
        cls().fit(np.zeros((2, 2)), [1, 0])


def test_vector_scaling_validates():
    with pytest.raises(NotFittedError):
        VectorScaling().transform(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="-inf"):
        VectorScaling().fit(np.array([[0.0, -np.inf], [0.0, 1.0]]), [0, 1])
    with pytest.raises(ValueError, match="labels has length 1"):
        VectorScaling().fit(np.zeros((2, 2)), [0])
    vs = VectorScaling().fit(np.array([[1.0, 0.0], [0.0, 1.0]]), [0, 1])
    with pytest.raises(ValueError, match="3 columns but the fit had 2"):
        vs.transform(np.zeros((1, 3)))


def test_inputs_not_mutated():
    z, y = multiclass(300, 6)
    z0, y0 = z.copy(), y.copy()
    VectorScaling().fit(z, y).transform(z)
    conf = softmax(z).max(axis=1)
    c0 = conf.copy()
    correct = z.argmax(axis=1) == y
    for cal in (PlattScaling(logit_input=True), IsotonicCalibrator(), HistogramBinning()):
        cal.fit(conf, correct).transform(conf)
    assert np.array_equal(z, z0) and np.array_equal(y, y0) and np.array_equal(conf, c0)
