"""Tests of spline recalibration (calibnb.calibrators._spline)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from calibnb.calibrators import NotFittedError, SplineCalibrator, natural_spline_basis, softmax


def ks(conf, correct):
    """KS error by Gupta Eq. 11-12, written out here as an independent oracle."""
    order = np.argsort(conf, kind="stable")
    n = len(conf)
    return float(np.max(np.abs(np.cumsum(np.asarray(correct, float)[order]) - np.cumsum(conf[order])) / n))


def population(n, seed, distort=lambda s: s):
    rng = np.random.default_rng(seed)
    conf = rng.beta(4.0, 1.5, n)
    correct = rng.random(n) < distort(conf)
    return conf, correct


def test_natural_spline_basis_properties():
    knots = np.linspace(0, 1, 6)
    t = np.linspace(0, 1, 101)
    a = natural_spline_basis(t, knots)
    assert_allclose(a.sum(axis=1), 1.0, atol=1e-12)  # reproduces constants
    assert_allclose(a @ (2 * knots + 1), 2 * t + 1, atol=1e-12)  # and straight lines (linear run-out)
    # natural: second derivative zero at both ends
    a2 = natural_spline_basis([0.0, 1.0], knots, derivative=2)
    assert_allclose(a2, 0.0, atol=1e-9)
    # the derivative basis is the derivative of the value basis
    h = 1e-6
    num = (natural_spline_basis(t[1:-1] + h, knots) - natural_spline_basis(t[1:-1] - h, knots)) / (2 * h)
    assert_allclose(natural_spline_basis(t[1:-1], knots, derivative=1), num, atol=1e-5)


def test_already_calibrated_scores_change_ks_little():
    conf, correct = population(40_000, seed=1)
    cal = SplineCalibrator().fit(conf[:20_000], correct[:20_000])
    before = ks(conf[20_000:], correct[20_000:])
    after = ks(cal.transform(conf[20_000:]), correct[20_000:])
    assert abs(after - before) < 0.005


@pytest.mark.parametrize("distort", [lambda s: s**3, lambda s: 0.5 * s])
def test_overconfident_model_halves_heldout_ks(distort):
    conf, correct = population(20_000, seed=2, distort=distort)
    before = ks(conf[10_000:], correct[10_000:])
    cal = SplineCalibrator().fit(conf[:10_000], correct[:10_000])
    after = ks(cal.transform(conf[10_000:]), correct[10_000:])
    assert before > 0.05
    assert after <= before / 2


def test_recovers_known_probability_of_correct():
    conf, correct = population(200_000, seed=3, distort=lambda s: s**2)
    cal = SplineCalibrator().fit(conf, correct)
    grid = np.linspace(0.5, 0.95, 10)
    assert_allclose(cal.transform(grid), grid**2, atol=0.03)


def test_order_preserved_where_recalibration_increases():
    conf, correct = population(20_000, seed=4, distort=lambda s: s**2)
    cal = SplineCalibrator().fit(conf[:10_000], correct[:10_000])
    increasing = np.diff(cal.calibrated_) > 0
    assert increasing.mean() > 0.99  # the fitted derivative rises almost everywhere here
    test = conf[10_000:]
    out = cal.transform(test)
    order = np.argsort(test, kind="stable")
    # between two test scores, the output order can only flip across a decreasing piece of the table
    pos = np.searchsorted(cal.scores_, test[order])
    steps = np.diff(out[order])
    lo, hi = pos[:-1], pos[1:]
    dec = np.concatenate(([0], np.cumsum(~increasing)))
    through_decrease = dec[np.clip(hi, 0, len(dec) - 1)] - dec[np.clip(lo - 1, 0, len(dec) - 1)] > 0
    assert np.all(steps[~through_decrease] >= -1e-12)


def test_output_clipped_to_unit_interval():
    rng = np.random.default_rng(5)
    conf = rng.uniform(0, 1, 5000)
    correct = conf > 0.5  # a step: the spline over- and undershoots
    cal = SplineCalibrator(n_knots=10).fit(conf, correct)
    raw = cal.calibrated_
    assert raw.min() < 0 or raw.max() > 1
    out = cal.transform(rng.uniform(0, 1, 1000))
    assert out.min() >= 0 and out.max() <= 1
    assert out.min() == 0 or out.max() == 1


def test_scores_outside_calibration_range_take_end_values():
    conf, correct = population(5000, seed=6)
    cal = SplineCalibrator().fit(conf, correct)
    assert cal.transform(np.array([0.0]))[0] == pytest.approx(np.clip(cal.calibrated_[0], 0, 1))
    assert cal.transform(np.array([1.0]))[0] == pytest.approx(np.clip(cal.calibrated_[-1], 0, 1))


def test_ties_share_one_value():
    conf = np.repeat([0.2, 0.5, 0.9, 1.0], 250)
    correct = np.random.default_rng(7).random(1000) < conf * 0.8
    cal = SplineCalibrator().fit(conf, correct)
    assert_allclose(cal.scores_, [0.2, 0.5, 0.9, 1.0])
    assert len(np.unique(cal.transform(conf))) == 4


def test_class_mode_uses_column_k():
    rng = np.random.default_rng(8)
    z = rng.normal(size=(6000, 4)) * 2
    p = softmax(z)
    labels = (rng.random((6000, 1)) < np.cumsum(softmax(z / 2.0), axis=1)).argmax(axis=1)  # p is overconfident
    cal = SplineCalibrator(mode="class", k=2).fit(p[:3000], labels[:3000])
    ref = SplineCalibrator().fit(p[:3000, 2], labels[:3000] == 2)
    assert_allclose(cal.transform(p[3000:]), ref.transform(p[3000:, 2]))
    assert ks(cal.transform(p[3000:]), labels[3000:] == 2) < ks(p[3000:, 2], labels[3000:] == 2)


def top_setup(seed=9, n=8000, k=10):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 3
    labels = (rng.random((n, 1)) < np.cumsum(softmax(z / 2.0), axis=1)).argmax(axis=1)
    return softmax(z), labels


def test_top1_recalibration_keeps_predicted_class():
    p, labels = top_setup()
    cal = SplineCalibrator().fit(p[:4000], labels[:4000])
    pred, conf = cal.recalibrate_top1(p[4000:])
    assert np.array_equal(pred, p[4000:].argmax(axis=1))
    assert_allclose(conf, cal.transform(p[4000:]))
    assert_allclose(conf, cal.recalibration_function(p[4000:].max(axis=1)))
    correct = pred == labels[4000:]
    assert ks(conf, correct) < ks(p[4000:].max(axis=1), correct) / 2


@pytest.mark.parametrize("mode, r", [("top", 2), ("within", 2)])
def test_top_r_and_within_top_r_modes(mode, r):
    p, labels = top_setup(seed=10)
    srt = np.sort(p, axis=1)[:, ::-1]
    rank = np.argsort(-p, axis=1, kind="stable")
    if mode == "top":
        score, correct = srt[:, r - 1], rank[:, r - 1] == labels
    else:
        score, correct = srt[:, :r].sum(axis=1), (rank[:, :r] == labels[:, None]).any(axis=1)
    cal = SplineCalibrator(mode=mode, r=r).fit(p[:4000], labels[:4000])
    ref = SplineCalibrator().fit(np.clip(score[:4000], 0, 1), correct[:4000])
    assert_allclose(cal.transform(p[4000:]), ref.transform(np.clip(score[4000:], 0, 1)), atol=1e-12)


def test_errors():
    with pytest.raises(NotFittedError, match="not fitted"):
        SplineCalibrator().transform(np.array([0.5]))
    with pytest.raises(ValueError, match="needs the class index k"):
        SplineCalibrator(mode="class").fit(np.array([0.5] * 10), [1] * 10)
    with pytest.raises(ValueError, match="mode must be one of"):
        SplineCalibrator(mode="bottom").fit(np.array([0.5] * 10), [1] * 10)
    with pytest.raises(ValueError, match="n_knots must be at least 2"):
        SplineCalibrator(n_knots=1).fit(np.array([0.5] * 10), [1] * 10)
    with pytest.raises(ValueError, match="at least n_knots"):
        SplineCalibrator().fit(np.array([0.5, 0.6]), [1, 0])
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        SplineCalibrator().fit(np.array([0.5] * 9 + [1.5]), [1] * 10)
    with pytest.raises(ValueError, match="NaN"):
        SplineCalibrator().fit(np.array([0.5] * 9 + [np.nan]), [1] * 10)
    with pytest.raises(ValueError, match="labels has length 9"):
        SplineCalibrator().fit(np.array([0.5] * 10), [1] * 9)
    with pytest.raises(ValueError, match="k = 5 is not a class index"):
        SplineCalibrator(mode="class", k=5).fit(np.full((10, 3), 1 / 3), [0] * 10)
    cal = SplineCalibrator(mode="class", k=0).fit(np.full((10, 3), 1 / 3), [0] * 10)
    with pytest.raises(ValueError, match="probs has 4 classes but the fit had 3"):
        cal.transform(np.full((2, 4), 0.25))
    with pytest.raises(ValueError, match="1-D"):
        cal.transform(np.array([0.3]))
    with pytest.raises(ValueError, match="recalibrate_top1 needs mode='top'"):
        cal.recalibrate_top1(np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="labels has length 9"):
        SplineCalibrator(mode="class", k=0).fit(np.full((10, 3), 1 / 3), [0] * 9)


def test_inputs_not_mutated():
    conf, correct = population(1000, seed=11)
    c0, y0 = conf.copy(), correct.copy()
    cal = SplineCalibrator().fit(conf, correct)
    cal.transform(conf)
    assert np.array_equal(conf, c0) and np.array_equal(correct, y0)
