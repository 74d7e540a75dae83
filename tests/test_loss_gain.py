"""recalibration_gain: calibration error as the cross-fitted loss gain of recalibration (Berta et al. 2025).

The peer named in issue 29, probmetrics, requires torch (and pytorch-minimize), which calibnb does not
install; instead the gain is compared with an independent computation written here: scikit-learn's KFold,
a temperature found by scipy on a softmax written out in NumPy, and scikit-learn's log_loss and
brier_score_loss.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize, special

import calibnb as cn


def _logits(seed, n=1500, k=4, scale=2.5):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    p = special.softmax(z, axis=1)
    y = (rng.random((n, 1)) < np.cumsum(p, 1)).argmax(1)
    return scale * z, y  # scale > 1: overconfident logits


def _independent_gain(z, y, seed, n_folds=5):
    """Cross-fitted temperature scaling written out: KFold, scipy's bounded search, sklearn's losses."""
    from sklearn.metrics import brier_score_loss, log_loss
    from sklearn.model_selection import KFold

    after = np.empty(z.shape)
    for train, test in KFold(n_folds, shuffle=True, random_state=seed).split(z):
        def nll(log_t):
            return -np.mean(special.log_softmax(z[train] / np.exp(log_t), axis=1)[np.arange(len(train)), y[train]])

        t = np.exp(optimize.minimize_scalar(nll, bounds=(np.log(0.01), np.log(100)), method="bounded",
                                            options={"xatol": 1e-10}).x)
        after[test] = special.softmax(z[test] / t, axis=1)
    before = special.softmax(z, axis=1)
    labels = list(range(z.shape[1]))
    log = log_loss(y, before, labels=labels) - log_loss(y, after, labels=labels)
    brier = (brier_score_loss(y, before, labels=labels, scale_by_half=False)
             - brier_score_loss(y, after, labels=labels, scale_by_half=False))
    return log, brier, log_loss(y, after, labels=labels)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gain_equals_an_independent_cross_fitted_temperature_scaling(seed):
    z, y = _logits(seed)
    g = cn.recalibration_gain(z, y, n_resamples=0, seed=seed)
    log, brier, refinement = _independent_gain(z, y, seed)
    # calibnb's search stops at tol = 1e-4 on log(tau); the losses are flat at the optimum
    assert g.log.gain.estimate == pytest.approx(log, abs=1e-6)
    assert g.brier.gain.estimate == pytest.approx(brier, abs=1e-6)
    assert g.log.refinement.estimate == pytest.approx(refinement, abs=1e-6)
    assert g.calibrator == "temperature" and g.n_folds == 5


def test_loss_is_gain_plus_refinement_and_the_paired_interval_covers_the_gain():
    z, y = _logits(3)
    g = cn.recalibration_gain(z, y, n_resamples=300, seed=0)
    for part in (g.log, g.brier):
        assert part.loss == pytest.approx(part.gain.estimate + part.refinement.estimate, abs=1e-12)
        assert part.gain.low < part.gain.estimate < part.gain.high
        assert part.refinement.low < part.refinement.estimate < part.refinement.high
        assert part.gain.low > 0  # the logits are overconfident: TS helps, clearly
    t = g.to_frame()
    assert list(t.index) == ["log", "brier"] and t.loc["log", "gain"] == g.log.gain.estimate
    assert g.recalibrated.shape == z.shape and np.allclose(g.recalibrated.sum(1), 1)


def test_calibrated_forecasts_have_no_significant_gain():
    z, y = _logits(4, n=3000, scale=1.0)  # labels drawn from softmax(z): calibrated
    g = cn.recalibration_gain(z, y, n_resamples=300, seed=0)
    assert g.log.gain.low < 0 < g.log.gain.high
    assert abs(g.log.gain.estimate) < 5e-3


def test_binary_form_and_named_calibrators_match_sklearn_losses():
    from sklearn.metrics import brier_score_loss, log_loss
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(5)
    conf = rng.uniform(0.3, 1.0, 1200)
    correct = rng.uniform(size=1200) < conf ** 2
    for name, make in [("isotonic", cn.IsotonicCalibrator), ("histogram", cn.HistogramBinning),
                       ("platt", lambda: cn.PlattScaling(logit_input=True))]:
        g = cn.recalibration_gain(conf, correct, calibrator=name, n_resamples=0, seed=7)
        after = np.empty(1200)
        for train, test in KFold(5, shuffle=True, random_state=7).split(conf):
            after[test] = make().fit(conf[train], correct[train]).transform(conf[test])
        assert_allclose(g.recalibrated, after)
        assert g.log.refinement.estimate == pytest.approx(log_loss(correct, after, labels=[0, 1]), rel=1e-12)
        assert g.brier.refinement.estimate == pytest.approx(brier_score_loss(correct, after), rel=1e-12)
        assert g.brier.loss == pytest.approx(brier_score_loss(correct, conf), rel=1e-12)


def test_any_calibrator_instance_is_cloned_and_bad_calibrators_are_named():
    z, y = _logits(6, n=600)
    ts = cn.TemperatureScaling(objective="ece", n_bins=10)
    g = cn.recalibration_gain(z, y, calibrator=ts, n_resamples=0, seed=0)
    assert g.calibrator == "TemperatureScaling" and not hasattr(ts, "temperature_")  # the instance is not fitted
    v = cn.recalibration_gain(z, y, calibrator="vector", n_resamples=0, seed=0)
    assert v.log.gain.estimate > 0
    with pytest.raises(ValueError, match="calibrator"):
        cn.recalibration_gain(z, y, calibrator="isotonic")
    with pytest.raises(ValueError, match="calibrator"):
        cn.recalibration_gain(z, y, calibrator="beta")
    with pytest.raises(TypeError, match="calibrator"):
        cn.recalibration_gain(z, y, calibrator=cn.TemperatureScaling)
    with pytest.raises(ValueError, match="calibrator"):
        cn.recalibration_gain(np.full(10, 0.5), np.arange(10) % 2, calibrator="vector")
    with pytest.raises(ValueError, match="n_folds"):
        cn.recalibration_gain(z[:3], y[:3], n_folds=5)


def test_seed_fixes_folds_and_bootstrap():
    z, y = _logits(8, n=500)
    a = cn.recalibration_gain(z, y, n_resamples=100, seed=3)
    b = cn.recalibration_gain(z, y, n_resamples=100, seed=3)
    assert a.to_frame().equals(b.to_frame())


def test_sample_weight_weights_the_losses_not_the_fit():
    from sklearn.metrics import brier_score_loss, log_loss

    z, y = _logits(9, n=800)
    w = np.random.default_rng(0).uniform(0.0, 3.0, 800)
    g = cn.recalibration_gain(z, y, sample_weight=w, n_resamples=100, seed=2)
    u = cn.recalibration_gain(z, y, n_resamples=0, seed=2)
    np.testing.assert_allclose(g.recalibrated, u.recalibrated)  # the calibrator is fitted unweighted
    labels = list(range(z.shape[1]))
    before = special.softmax(z, axis=1)
    assert g.log.loss == pytest.approx(log_loss(y, before, sample_weight=w, labels=labels), rel=1e-12)
    assert g.log.refinement.estimate == pytest.approx(log_loss(y, g.recalibrated, sample_weight=w, labels=labels),
                                                      rel=1e-12)
    assert g.brier.refinement.estimate == pytest.approx(
        brier_score_loss(y, g.recalibrated, sample_weight=w, labels=labels, scale_by_half=False), rel=1e-12)
    assert g.log.gain.low < g.log.gain.estimate < g.log.gain.high
    with pytest.raises(ValueError, match="sample_weight"):
        cn.recalibration_gain(z, y, sample_weight=-w)


def test_probabilities_passed_as_logits_are_refused_and_log_probabilities_work():
    z, y = _logits(10, n=400)
    p = special.softmax(z, axis=1)
    with pytest.raises(ValueError, match="scores look like probabilities"):
        cn.recalibration_gain(p, y)
    a = cn.recalibration_gain(np.log(p), y, n_resamples=0, seed=0)
    b = cn.recalibration_gain(z, y, n_resamples=0, seed=0)
    assert a.log.gain.estimate == pytest.approx(b.log.gain.estimate, abs=1e-9)


def test_a_calibrator_that_cannot_be_cloned_is_named_and_fit_need_not_return_self():
    class NoParams:  # fit and transform, but no get_params: sklearn's clone cannot copy it
        def fit(self, x, y):
            return self

        def transform(self, x):
            return x

    conf = np.random.default_rng(0).uniform(size=60)
    with pytest.raises(TypeError, match="calibrator.*get_params"):
        cn.recalibration_gain(conf, conf > 0.5, calibrator=NoParams(), n_resamples=0)

    class FitReturnsNone(cn.IsotonicCalibrator):
        def fit(self, scores, labels):
            super().fit(scores, labels)

    rng = np.random.default_rng(1)
    conf = rng.uniform(0.3, 1.0, 400)
    correct = rng.uniform(size=400) < conf ** 2
    a = cn.recalibration_gain(conf, correct, calibrator=FitReturnsNone(), n_resamples=0, seed=0)
    b = cn.recalibration_gain(conf, correct, calibrator="isotonic", n_resamples=0, seed=0)
    assert_allclose(a.recalibrated, b.recalibrated)
