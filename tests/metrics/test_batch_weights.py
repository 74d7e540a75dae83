"""Batch axis (S, N) -> (S,) and sample weights of the binary metrics."""

import numpy as np
import pandas as pd
import pytest

import calibnb as cn
from calibnb.metrics.binary import auto_n_bins, sweep_n_bins

BINNED = [cn.ece, cn.mce]
PLAIN = [cn.ice, cn.macro_ce, cn.hmr, cn.brier_top]


def _stack(seed, s=7, n=150, ties=False):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(size=(s, n))
    if ties:
        conf = np.round(conf, 1)  # many ties, and exact bin edges
    correct = rng.uniform(size=(s, n)) < conf
    return conf, correct


def _cases():
    for binning in ("width", "mass"):
        for metric in BINNED:
            for n_bins in (1, 3, 10, 15):
                yield metric, dict(n_bins=n_bins, binning=binning)
    for metric in PLAIN:
        yield metric, {}
    yield cn.hmr, dict(beta=2.0)
    for ties in ("order", "group"):
        yield cn.ks_error, dict(ties=ties)


CASES = list(_cases())
IDS = [f"{m.__name__}-{'-'.join(f'{k}={v}' for k, v in o.items())}" for m, o in CASES]


@pytest.mark.parametrize("metric, options", CASES, ids=IDS)
@pytest.mark.parametrize("ties", [False, True])
def test_batch_equals_row_by_row(metric, options, ties):
    conf, correct = _stack(1, ties=ties)
    out = metric(conf, correct, **options)
    assert isinstance(out, np.ndarray) and out.shape == (conf.shape[0],)
    ref = [metric(c, y, **options) for c, y in zip(conf, correct)]
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("metric, options", CASES, ids=IDS)
@pytest.mark.parametrize("ties", [False, True])
def test_integer_weights_equal_repeated_rows(metric, options, ties):
    rng = np.random.default_rng(2)
    conf, correct = _stack(3, s=1, n=120, ties=ties)
    conf, correct = conf[0], correct[0]
    w = rng.integers(0, 4, conf.shape[0])
    w[0] = max(w[0], 1)
    out = metric(conf, correct, sample_weight=w, **options)
    rep = metric(np.repeat(conf, w), np.repeat(correct, w), **options)
    assert isinstance(out, float)
    assert out == pytest.approx(rep, abs=1e-12)


@pytest.mark.parametrize("metric, options", CASES, ids=IDS)
def test_2d_weights_on_shared_items_equal_row_by_row(metric, options):
    rng = np.random.default_rng(4)
    conf, correct = _stack(5, s=1, n=200, ties=True)
    conf, correct = conf[0], correct[0]
    w = rng.integers(0, 3, (6, conf.shape[0])).astype(float)
    w[:, 0] += 1
    out = metric(conf, correct, sample_weight=w, **options)
    ref = [metric(conf, correct, sample_weight=row, **options) for row in w]
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-12)
    # and 2-D conf with 1-D or 2-D weights
    c2, y2 = np.tile(conf, (6, 1)), np.tile(correct, (6, 1))
    np.testing.assert_allclose(metric(c2, y2, sample_weight=w, **options), ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(metric(c2, y2, sample_weight=w[2], **options), ref[2], rtol=0, atol=1e-12)


def test_unit_weights_equal_the_unweighted_metric_and_scale_does_not_matter():
    conf, correct = _stack(6, s=1, n=301)
    conf, correct = conf[0], correct[0]
    for metric, options in CASES:
        base = metric(conf, correct, **options)
        assert metric(conf, correct, sample_weight=np.ones(301), **options) == pytest.approx(base, abs=1e-12)
        if options.get("binning") != "mass":  # equal-mass bins: integer and real totals split differently
            assert metric(conf, correct, sample_weight=np.full(301, 0.37), **options) == pytest.approx(base, abs=1e-12)


def test_float_weights_mass_bins_split_items_in_proportion():
    # 2 items, weights 0.5 and 1.5: total 2, two bins of mass 1 each; the second
    # item is split 0.5 / 1.0 between them.
    conf = [0.2, 0.8]
    correct = [1, 0]
    t = cn.ece(conf, correct, n_bins=2, binning="mass", sample_weight=[0.5, 1.5])
    bin1 = abs(0.5 * (0.2 - 1) + 0.5 * 0.8)
    bin2 = abs(1.0 * 0.8)
    assert t == pytest.approx((bin1 + bin2) / 2.0, abs=1e-15)


def test_rewards_and_parts_take_batch_and_weights():
    conf, correct = _stack(7, s=4, n=90)
    r = cn.rewards(conf, correct)
    p = cn.macro_ce_parts(conf, correct)
    for k in range(4):
        assert r.r_o[k] == pytest.approx(cn.rewards(conf[k], correct[k]).r_o, abs=1e-14)
        assert p.ice_pos[k] == pytest.approx(cn.macro_ce_parts(conf[k], correct[k]).ice_pos, abs=1e-14)
    w = np.arange(90) % 3
    rw = cn.rewards(conf[0], correct[0], sample_weight=w)
    rr = cn.rewards(np.repeat(conf[0], w), np.repeat(correct[0], w))
    assert rw == pytest.approx(rr, abs=1e-14)


def test_empty_groups_in_a_batch_follow_the_1d_convention():
    conf = np.array([[0.3, 0.8, 0.6], [0.3, 0.8, 0.6]])
    correct = np.array([[1, 1, 1], [0, 0, 0]])
    for metric in (cn.macro_ce, cn.hmr, cn.ice):
        np.testing.assert_allclose(metric(conf, correct), [metric(c, y) for c, y in zip(conf, correct)], atol=1e-15)


def test_batch_and_weight_errors_name_the_argument():
    conf, correct = _stack(8, s=3, n=20)
    with pytest.raises(ValueError, match="correct has shape"):
        cn.ece(conf, correct[:, :5])
    with pytest.raises(ValueError, match="conf has"):
        cn.ece(np.where(conf > 0.5, 2.0, conf), correct)
    with pytest.raises(ValueError, match="correct must hold only 0/1"):
        cn.macro_ce(conf, conf)
    with pytest.raises(ValueError, match="sample_weight has 19 items"):
        cn.ece(conf, correct, sample_weight=np.ones(19))
    with pytest.raises(ValueError, match="sample_weight has 2 rows"):
        cn.ece(conf, correct, sample_weight=np.ones((2, 20)))
    with pytest.raises(ValueError, match="below 0"):
        cn.ece(conf[0], correct[0], sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="positive total"):
        cn.ks_error(conf[0], correct[0], sample_weight=np.zeros(20))
    with pytest.raises(ValueError, match="NaN or infinite"):
        cn.brier_top(conf[0], correct[0], sample_weight=np.full(20, np.nan))
    with pytest.raises(ValueError, match="1-D"):
        cn.ece(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))


# ---- n_bins = "auto" / "sweep" ---------------------------------------------------

def test_n_bins_auto_uses_the_documented_rule():
    conf, correct = _stack(9, s=1, n=1000)
    conf, correct = conf[0], correct[0]
    assert auto_n_bins(1000) == 10
    assert cn.ece(conf, correct, n_bins="auto") == cn.ece(conf, correct, n_bins=10)
    assert cn.ece(conf, correct, n_bins="auto", binning="mass") == cn.ece(conf, correct, n_bins=10, binning="mass")


def test_n_bins_sweep_uses_the_monotonic_sweep():
    conf, correct = _stack(10, s=3, n=500)
    for c, y in zip(conf, correct):
        b = sweep_n_bins(c, y)
        assert cn.ece(c, y, n_bins="sweep", binning="mass") == cn.ece(c, y, n_bins=b, binning="mass")
    np.testing.assert_allclose(cn.ece(conf, correct, n_bins="sweep", binning="mass"),
                               [cn.ece(c, y, n_bins="sweep", binning="mass") for c, y in zip(conf, correct)])
    with pytest.raises(ValueError, match="equal-mass"):
        cn.ece(conf[0], correct[0], n_bins="sweep")
    with pytest.raises(ValueError, match="n_bins must be one of"):
        cn.ece(conf[0], correct[0], n_bins="many")


# ---- reliability_table: weights and per-bin intervals ------------------------------

@pytest.mark.parametrize("binning", ["width", "mass"])
def test_reliability_table_integer_weights_equal_repeated_rows(binning):
    rng = np.random.default_rng(11)
    conf = np.round(rng.uniform(size=200), 2)
    correct = rng.uniform(size=200) < conf
    w = rng.integers(0, 4, 200)
    w[0] = 1
    a = cn.reliability_table(conf, correct, n_bins=7, binning=binning, sample_weight=w, interval="wilson")
    b = cn.reliability_table(np.repeat(conf, w), np.repeat(correct, w), n_bins=7, binning=binning, interval="wilson")
    assert list(a.columns) == list(b.columns)
    for col in a.columns:
        np.testing.assert_allclose(a[col].to_numpy(float), b[col].to_numpy(float), rtol=0, atol=1e-12, err_msg=col)


@pytest.mark.parametrize("method, scipy_method", [("wilson", "wilson"), ("clopper-pearson", "exact")])
@pytest.mark.parametrize("level", [0.8, 0.95])
def test_reliability_intervals_equal_scipy_binomtest(method, scipy_method, level):
    from scipy.stats import binomtest

    rng = np.random.default_rng(12)
    conf = rng.uniform(size=3000) ** 0.3
    correct = rng.uniform(size=3000) < conf ** 2
    correct[conf > 14 / 15] = True   # a bin with k = n
    correct[conf <= 2 / 15] = False  # bins with k = 0
    t = cn.reliability_table(conf, correct, n_bins=15, interval=method, level=level)
    assert (t["n_correct"] == t["count"]).any() and (t["n_correct"] == 0).any()
    # Wilson: the same floating-point steps, bit for bit; Clopper-Pearson: the closed
    # form, which scipy finds with brentq (xtol 2e-12)
    tol = 0.0 if method == "wilson" else 2e-12
    for k, n, lo, hi in t[["n_correct", "count", "acc_low", "acc_high"]].itertuples(index=False):
        ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method=scipy_method)
        assert abs(lo - ci.low) <= tol and abs(hi - ci.high) <= tol
    rng = np.random.default_rng(13)
    n = rng.integers(1, 5000, 200)
    k = (rng.uniform(size=200) * (n + 1)).astype(int)
    k[:3] = 0
    k[3:6] = n[3:6]
    low, high = cn.binomial_interval(k, n, method=method, level=level)
    for a, b, lo, hi in zip(k, n, low, high):
        ci = binomtest(int(a), int(b)).proportion_ci(confidence_level=level, method=scipy_method)
        assert abs(lo - ci.low) <= tol and abs(hi - ci.high) <= tol


def test_reliability_interval_errors():
    conf, correct = [0.2, 0.7, 0.9], [0, 1, 1]
    with pytest.raises(ValueError, match="interval must be one of"):
        cn.reliability_table(conf, correct, interval="agresti")
    with pytest.raises(ValueError, match="level must be"):
        cn.reliability_table(conf, correct, interval="wilson", level=95)
    with pytest.raises(ValueError, match="integer counts"):
        cn.reliability_table(conf, correct, interval="wilson", sample_weight=[0.5, 1, 1])
    with pytest.raises(ValueError, match="1-D"):
        cn.reliability_table(conf, correct, sample_weight=np.ones((2, 3)))
    with pytest.raises(ValueError, match="0 <= k <= n"):
        cn.binomial_interval([3], [2])
    t = cn.reliability_table(conf, correct, sample_weight=[0.5, 1, 1])
    assert t["count"].dtype == float and t["count"].sum() == 2.5


@pytest.mark.parametrize("name", ["ece", "mce", "reliability_table"])
def test_weighted_and_batched_bins_use_the_exact_edge_rule(name):
    """Values one float step off a bin edge (0.1 + 0.2) fall in the same bin with or without weights.

    The weighted and batched paths once binned with ceil(conf * M * (1 - 2**-50)), which put
    0.30000000000000004 in bin 2 of 10 while the unweighted path (bin_indices) put it in bin 3.
    """
    conf = np.array([0.1 + 0.2, 0.7 + 0.1, 0.3, np.nextafter(0.5, 1.0), 0.5, 0.95, 0.05, 0.6 + 0.1])
    correct = np.array([1, 0, 0, 1, 1, 1, 0, 0])
    fn = getattr(cn, name)
    plain = fn(conf, correct, n_bins=10)
    weighted = fn(conf, correct, n_bins=10, sample_weight=np.ones(conf.shape[0]))
    if name == "reliability_table":
        pd.testing.assert_frame_equal(plain, weighted, check_dtype=False)
        np.testing.assert_array_equal(cn.bin_indices(conf, n_bins=10)[:2], [3, 7])  # 0.7 + 0.1 < 0.8
        return
    batched = fn(np.stack([conf, conf]), np.stack([correct, correct]), n_bins=10)
    assert weighted == plain
    np.testing.assert_array_equal(batched, [plain, plain])
