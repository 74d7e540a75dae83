"""kuiper_test: the range of the cumulative differences, beside cumulative_ks_test; peer: MAPIE 1.6.

The four Kuiper cases of MAPIE's own test suite (mapie/tests/test_metrics.py) are run here, with the one
convention difference (calibnb includes C_0 = 0 in the range) stated in the docstring and checked.
"""

import numpy as np
import pytest
from numpy.random import RandomState

import calibnb as cn
from calibnb.uncertainty import _brownian_range_sf


def _cum(conf, correct):
    order = np.argsort(conf, kind="stable")
    return np.cumsum(np.asarray(correct, float)[order] - conf[order]) / len(conf)


def _mapie_case(calibrated):
    g = RandomState(1)
    if calibrated:
        s = g.uniform(size=100)
        return s, (g.uniform(size=100) <= s).astype(float)
    y = g.choice([0, 1], size=100)
    return g.uniform(size=100), y


def test_mapie_kuiper_cdf_case():
    # mapie test_kuiper_cdf: 0.063365, 0.818506, 0.989201 at 1, 2, 3 (the cdf of the Brownian range)
    for x, cdf in ((1, 0.063365), (2, 0.818506), (3, 0.989201)):
        assert 1 - _brownian_range_sf(x) == pytest.approx(cdf, abs=1e-6)


def test_mapie_kuiper_p_value_cases():
    # mapie test_kuiper_p_value_calibrated: 0.313006; test_kuiper_p_value_non_calibrated: 0.0 (atol 1e-6)
    assert cn.kuiper_test(*_mapie_case(True)).p_value == pytest.approx(0.313006, abs=1e-6)
    assert cn.kuiper_test(*_mapie_case(False)).p_value == pytest.approx(0.0, abs=1e-6)


def test_mapie_kuiper_statistic_case_differs_by_the_documented_c0_convention():
    # mapie test_kuiper_statistic: 5.354395, the range of C_1..C_N; calibnb's range includes C_0 = 0
    conf, y = _mapie_case(False)
    c = _cum(conf, y)
    sigma = np.sqrt(np.sum(conf * (1 - conf))) / len(conf)
    assert (c.max() - c.min()) / sigma == pytest.approx(5.354395, abs=1e-6)  # MAPIE's number, by its rule
    assert c.min() > 0  # the curve never falls below 0, so C_0 = 0 widens the range
    assert cn.kuiper_test(conf, y).statistic == pytest.approx((c.max() - 0) / sigma, rel=1e-12)
    assert cn.kuiper_test(conf, y).statistic > 5.354395


def test_kuiper_equals_mapie_when_the_curve_crosses_zero():
    mapie = pytest.importorskip("mapie.metrics.calibration", reason="MAPIE is not installed")
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(40):
        n = int(rng.integers(100, 3000))
        conf = rng.uniform(0.02, 0.98, n)
        correct = rng.uniform(size=n) < np.clip(conf + rng.normal(0, 0.05), 0, 1)
        c = _cum(conf, correct)
        if not (c.max() > 0 > c.min()):
            continue
        checked += 1
        ours = cn.kuiper_test(conf, correct)
        y = correct.astype(int)
        assert ours.statistic == pytest.approx(mapie.kuiper_statistic(y, conf), rel=1e-6)
        assert ours.p_value == pytest.approx(mapie.kuiper_p_value(y, conf), rel=1e-6, abs=1e-9)
    assert checked >= 10


def test_range_series_agree_and_match_a_simulated_brownian_range():
    assert _brownian_range_sf(1 - 1e-12) == pytest.approx(_brownian_range_sf(1.0), abs=1e-11)
    assert _brownian_range_sf(9.0) > 0  # the tail series keeps its digits where 1 - cdf is 0
    rng = np.random.default_rng(8)
    walk = np.cumsum(rng.standard_normal((4000, 2000)), axis=1) / np.sqrt(2000)
    rng_ = np.maximum(walk.max(1), 0) - np.minimum(walk.min(1), 0)
    for x in (1.5, 2.0, 2.5):
        assert np.mean(rng_ >= x) == pytest.approx(_brownian_range_sf(x), abs=0.03)


def test_kuiper_holds_its_level_detects_miscalibration_and_is_at_least_ks():
    rng = np.random.default_rng(9)
    conf = rng.uniform(0.05, 0.95, size=(400, 600))
    calibrated = rng.uniform(size=conf.shape) < conf
    p = np.array([cn.kuiper_test(c, y).p_value for c, y in zip(conf, calibrated)])
    assert 0.02 <= np.mean(p < 0.05) <= 0.09
    over = rng.uniform(size=conf.shape) < 0.5 + 0.5 * (conf - 0.5) ** 3
    assert np.mean([cn.kuiper_test(c, y).p_value < 0.05 for c, y in zip(conf[:50], over[:50])]) > 0.9
    for c, y in zip(conf[:20], calibrated[:20]):
        assert cn.kuiper_test(c, y).statistic >= cn.cumulative_ks_test(c, y).statistic - 1e-12


def test_ties_order_and_group():
    conf = np.array([0.8, 0.3, 0.5, 0.5, 0.7, 0.1])
    a = cn.kuiper_test(conf, [1, 0, 1, 0, 1, 0])
    b = cn.kuiper_test(conf, [1, 0, 0, 1, 1, 0])  # the tied pair swapped
    assert a.statistic != b.statistic  # "order": the input order of ties counts
    g1 = cn.kuiper_test(conf, [1, 0, 1, 0, 1, 0], ties="group")
    g2 = cn.kuiper_test(conf, [1, 0, 0, 1, 1, 0], ties="group")
    assert g1 == g2
    with pytest.raises(ValueError, match="ties"):
        cn.kuiper_test(conf, [1, 0, 1, 0, 1, 0], ties="random")
    with pytest.raises(ValueError, match="sigma = 0"):
        cn.kuiper_test([0.0, 1.0], [0, 1])
