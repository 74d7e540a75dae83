"""Unit tests of calibnb.metrics against straightforward reference implementations."""

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

import calibnb as cb
from calibnb.metrics.binary import _CHUNK, _mixed_groups, _sort_keys


# ---- straightforward references (loops over bins, stable argsort) -----------

def ref_sorted(conf, correct):
    order = np.argsort(conf, kind="stable")
    return conf[order], np.asarray(correct, bool)[order]


def ref_width_bins(conf, n_bins):
    edges = np.arange(1, n_bins) / n_bins
    return np.searchsorted(edges, conf, side="left")  # (m/M, (m+1)/M], 0 in bin 0


def ref_bins(conf, correct, n_bins, binning):
    if binning == "width":
        idx = ref_width_bins(conf, n_bins)
        return [(conf[idx == m], np.asarray(correct, float)[idx == m]) for m in range(n_bins)]
    s, y = ref_sorted(conf, correct)
    return list(zip(np.array_split(s, n_bins), np.array_split(y.astype(float), n_bins)))


def ref_ece_mce(conf, correct, n_bins, binning):
    n = len(conf)
    gaps = [(len(c), abs(c.mean() - y.mean())) for c, y in ref_bins(conf, correct, n_bins, binning) if len(c)]
    return sum(k / n * g for k, g in gaps), max(g for _, g in gaps)


def ref_ks(conf, correct, ties):
    s, y = ref_sorted(conf, correct)
    n = len(s)
    gap = np.cumsum(y) / n - np.cumsum(s) / n
    if ties == "group":
        gap = gap[np.r_[s[1:] != s[:-1], True]]
    return np.abs(gap).max()


def random_case(rng, n, kind):
    if kind == "ties":
        conf = rng.integers(0, 11, n) / 10
    elif kind == "rounded":
        conf = np.round(rng.random(n), 2)
    else:
        conf = rng.random(n)
    return conf, rng.random(n) < conf


CASES = [(seed, n, kind) for seed in range(4) for n in (1, 2, 7, 50, 333)
         for kind in ("ties", "rounded", "continuous")]


# ---- ECE / MCE / reliability table -----------------------------------------

@pytest.mark.parametrize("seed, n, kind", CASES)
@pytest.mark.parametrize("binning", ["width", "mass"])
@pytest.mark.parametrize("n_bins", [1, 3, 10, 25])
def test_ece_mce_match_reference(seed, n, kind, binning, n_bins):
    conf, correct = random_case(np.random.default_rng(seed), n, kind)
    e, m = ref_ece_mce(conf, correct, n_bins, binning)
    assert cb.ece(conf, correct, n_bins=n_bins, binning=binning) == pytest.approx(e, abs=1e-12)
    assert cb.mce(conf, correct, n_bins=n_bins, binning=binning) == pytest.approx(m, abs=1e-12)


@pytest.mark.parametrize("n", [_CHUNK - 1, _CHUNK, _CHUNK + 1, 3 * _CHUNK + 17])
@pytest.mark.parametrize("kind", ["ties", "continuous"])
def test_chunk_boundaries(n, kind):
    conf, correct = random_case(np.random.default_rng(n), n, kind)
    for binning in ("width", "mass"):
        e, m = ref_ece_mce(conf, correct, 10, binning)
        assert cb.ece(conf, correct, binning=binning) == pytest.approx(e, abs=1e-10)
        assert cb.mce(conf, correct, binning=binning) == pytest.approx(m, abs=1e-10)
    for ties in ("order", "group"):
        assert cb.ks_error(conf, correct, ties=ties) == pytest.approx(ref_ks(conf, correct, ties), abs=1e-10)


@pytest.mark.parametrize("n_bins", [2, 3, 5, 7, 10, 15, 20, 25, 30, 50, 100, 1000])
def test_edge_values_close_their_bin(n_bins):
    # every float edge m/M lands in bin m-1, as the conventions require
    edges = np.arange(1, n_bins + 1) / n_bins
    np.testing.assert_array_equal(cb.bin_indices(edges, n_bins=n_bins), np.arange(n_bins))
    assert cb.bin_indices([0.0], n_bins=n_bins)[0] == 0
    # and a value clearly above an edge opens the next bin
    above = np.arange(1, n_bins) / n_bins + 1e-12
    np.testing.assert_array_equal(cb.bin_indices(above, n_bins=n_bins), np.arange(1, n_bins))


def test_width_bins_match_searchsorted_away_from_edges():
    conf = np.random.default_rng(0).random(100_000)
    for n_bins in (3, 10, 25, 100):
        np.testing.assert_array_equal(cb.bin_indices(conf, n_bins=n_bins), ref_width_bins(conf, n_bins))


def test_mass_bin_indices_follow_array_split():
    conf = np.array([0.5, 0.1, 0.5, 0.3, 0.5, 0.9, 0.0])
    idx = cb.bin_indices(conf, n_bins=3, binning="mass")
    order = np.argsort(conf, kind="stable")
    expected = np.concatenate([np.full(len(g), i) for i, g in enumerate(np.array_split(order, 3))])
    np.testing.assert_array_equal(idx[order], expected)


def test_bins_hand_example():
    conf = [0.0, 0.1, 0.1000001, 0.3, 0.95, 1.0]
    assert cb.bin_indices(conf, n_bins=10).tolist() == [0, 0, 1, 2, 9, 9]
    # ECE by hand: bin0 {0, 0.1} acc 1/2 vs 0.05; bin1 {0.1000001} acc 0; bin2 {0.3} acc 1; bin9 {0.95, 1} acc 1
    correct = [1, 0, 0, 1, 1, 1]
    expected = (2 * 0.45 + 0.1000001 + 0.7 + 2 * 0.025) / 6
    assert cb.ece(conf, correct) == pytest.approx(expected)
    assert cb.mce(conf, correct) == pytest.approx(0.7)


@pytest.mark.parametrize("binning", ["width", "mass"])
def test_reliability_table_consistent_with_ece(binning):
    conf, correct = random_case(np.random.default_rng(3), 500, "rounded")
    t = cb.reliability_table(conf, correct, n_bins=7, binning=binning)
    assert list(t.columns) == ["bin", "lower", "upper", "count", "n_correct", "mean_conf", "accuracy", "gap"]
    assert t["count"].sum() == 500 and t["n_correct"].sum() == correct.sum()
    assert (t["count"] > 0).all()
    assert (t["lower"] <= t["upper"]).all()
    np.testing.assert_allclose(t["gap"], t["mean_conf"] - t["accuracy"])
    assert (t["count"] / 500 * t["gap"].abs()).sum() == pytest.approx(cb.ece(conf, correct, n_bins=7, binning=binning))
    assert t["gap"].abs().max() == pytest.approx(cb.mce(conf, correct, n_bins=7, binning=binning))


def test_reliability_table_skips_empty_bins():
    t = cb.reliability_table([0.05, 0.95], [0, 1], n_bins=10)
    assert t["bin"].tolist() == [0, 9]
    np.testing.assert_allclose(t["lower"], [0.0, 0.9])
    np.testing.assert_allclose(t["upper"], [0.1, 1.0])
    t = cb.reliability_table([0.2, 0.4], [0, 1], n_bins=5, binning="mass")
    assert t["count"].tolist() == [1, 1]


def test_ece_against_sklearn_calibration_curve():
    rng = np.random.default_rng(11)
    conf = rng.random(5000)
    correct = rng.random(5000) < conf ** 1.5
    for n_bins in (5, 10, 15):
        prob_true, prob_pred = calibration_curve(correct, conf, n_bins=n_bins, strategy="uniform")
        counts = np.bincount(np.clip((conf * n_bins).astype(int), 0, n_bins - 1), minlength=n_bins)
        counts = counts[counts > 0]
        expected = np.sum(counts / conf.size * np.abs(prob_true - prob_pred))
        assert cb.ece(conf, correct, n_bins=n_bins) == pytest.approx(expected, rel=1e-10)
        t = cb.reliability_table(conf, correct, n_bins=n_bins)
        np.testing.assert_allclose(t["accuracy"], prob_true)
        np.testing.assert_allclose(t["mean_conf"], prob_pred)


def test_brier_against_sklearn():
    rng = np.random.default_rng(5)
    conf = rng.random(1000)
    correct = rng.random(1000) < conf
    assert cb.brier_top(conf, correct) == pytest.approx(brier_score_loss(correct, conf))


# ---- instance-level metrics --------------------------------------------------

def test_ice_and_macro_ce_by_hand():
    conf = [0.9, 0.6, 0.3, 0.2]
    correct = [1, 1, 0, 1]
    assert cb.ice(conf, correct) == pytest.approx((0.1 + 0.4 + 0.3 + 0.8) / 4)
    parts = cb.macro_ce_parts(conf, correct)
    assert parts.ice_pos == pytest.approx((0.1 + 0.4 + 0.8) / 3)
    assert parts.ice_neg == pytest.approx(0.3)
    assert parts.macro_ce == pytest.approx((parts.ice_pos + parts.ice_neg) / 2)
    assert cb.macro_ce(conf, correct) == pytest.approx(parts.macro_ce)


def test_empty_groups_score_zero_error():
    assert cb.macro_ce_parts([0.8, 0.6], [1, 1]) == pytest.approx((0.3, 0.0, 0.15))
    assert cb.rewards([0.8, 0.6], [1, 1]) == pytest.approx((1.0, 0.7))
    assert cb.rewards([0.8, 0.6], [0, 0]) == pytest.approx((0.3, 1.0))


def test_hmr_zero_when_both_rewards_zero_and_beta():
    assert cb.hmr([1.0, 0.0], [0, 1]) == 0.0
    conf, correct = [0.9, 0.2, 0.7], [1, 0, 0]
    r_o, r_u = cb.rewards(conf, correct)
    for beta in (0.0, 0.5, 1.0, 2.0):
        b2 = beta ** 2
        assert cb.hmr(conf, correct, beta=beta) == pytest.approx((b2 + 1) * r_o * r_u / (b2 * r_o + r_u))
    assert cb.hmr(conf, correct, beta=0.0) == pytest.approx(r_o)
    assert cb.hmr(conf, correct, beta=1e6) == pytest.approx(r_u, rel=1e-6)


def test_brier_by_hand():
    assert cb.brier_top([0.9, 0.2], [1, 0]) == pytest.approx(0.025)


# ---- KS ----------------------------------------------------------------------

@pytest.mark.parametrize("seed, n, kind", CASES)
def test_ks_matches_stable_argsort_reference(seed, n, kind):
    conf, correct = random_case(np.random.default_rng(100 + seed), n, kind)
    for ties in ("order", "group"):
        assert cb.ks_error(conf, correct, ties=ties) == pytest.approx(ref_ks(conf, correct, ties), abs=1e-12)
    curves = cb.ks_curves(conf, correct)
    s, y = ref_sorted(conf, correct)
    np.testing.assert_array_equal(curves.scores, s)
    np.testing.assert_array_equal(curves.correct, y)
    np.testing.assert_allclose(curves.fractile, np.arange(1, n + 1) / n)
    np.testing.assert_allclose(curves.cum_accuracy, np.cumsum(y) / n)
    np.testing.assert_allclose(curves.cum_score, np.cumsum(s) / n)
    np.testing.assert_allclose(curves.gap, curves.cum_accuracy - curves.cum_score)
    assert np.abs(curves.gap).max() == pytest.approx(cb.ks_error(conf, correct), abs=1e-12)


def test_ks_order_depends_on_tie_order_group_does_not():
    conf = [0.5, 0.5, 0.5, 0.5]
    # h = .25,.5,.5,.5 vs h~ = .125,.25,.375,.5 -> max gap .25
    assert cb.ks_error(conf, [1, 1, 0, 0]) == pytest.approx(0.25)
    # h = .25,.25,.5,.5 -> gaps .125, 0, .125, 0
    assert cb.ks_error(conf, [1, 0, 1, 0]) == pytest.approx(0.125)
    for order in ([1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1]):
        assert cb.ks_error(conf, order, ties="group") == 0.0


def test_ks_handles_negative_zero():
    assert cb.ks_error([-0.0, 0.0, 0.5], [0, 1, 1]) == pytest.approx(ref_ks(np.array([0.0, 0.0, 0.5]), [0, 1, 1], "order"))
    assert cb.ks_curves([-0.0, 0.5], [0, 1]).scores.tolist() == [0.0, 0.5]


# ---- multi-class reductions ---------------------------------------------------

def test_top_r_and_within_top_r():
    probs = np.array([[0.1, 0.6, 0.3], [0.4, 0.4, 0.2], [0.2, 0.3, 0.5]])
    labels = np.array([2, 1, 0])
    conf, correct = cb.top_r(probs, labels)
    assert conf.tolist() == [0.6, 0.4, 0.5] and correct.tolist() == [False, False, False]
    conf, correct = cb.top_r(probs, labels, r=2)  # ties: lower class index ranks first
    assert conf.tolist() == [0.3, 0.4, 0.3] and correct.tolist() == [True, True, False]
    conf, correct = cb.top_r(probs, labels, r=3)
    assert conf.tolist() == [0.1, 0.2, 0.2] and correct.tolist() == [False, False, True]
    conf, correct = cb.within_top_r(probs, labels, r=2)
    np.testing.assert_allclose(conf, [0.9, 0.8, 0.8])
    assert correct.tolist() == [True, True, False]
    conf, correct = cb.within_top_r(probs, labels, r=3)
    np.testing.assert_allclose(conf, 1.0)
    assert correct.all()
    with pytest.raises(ValueError, match="r must be at most the number of classes 3; got 4"):
        cb.top_r(probs, labels, r=4)
    with pytest.raises(ValueError, match="r must be at least 1; got 0"):
        cb.within_top_r(probs, labels, r=0)


def test_classwise_ece_is_mean_of_per_class_ece():
    rng = np.random.default_rng(2)
    probs = rng.dirichlet(np.ones(4), size=300)
    labels = rng.integers(0, 4, 300)
    expected = np.mean([ref_ece_mce(probs[:, k], labels == k, 10, "width")[0] for k in range(4)])
    assert cb.classwise_ece(probs, labels) == pytest.approx(expected)


def test_nbr_by_hand_and_identity():
    probs = np.array([[0.6, 0.4, 0.0], [0.2, 0.2, 0.6]])
    labels = [0, 1]
    expected = ((0.4 ** 2 + 0.4 ** 2) + (0.2 ** 2 + 0.8 ** 2 + 0.6 ** 2)) / 6
    assert cb.nbr(probs, labels) == pytest.approx(expected)


def test_ks_order_mixed_tie_group_across_internal_chunks():
    """A tie group mixing correct and wrong items that straddles an internal
    processing chunk must still follow input order (stable sort)."""
    c = _CHUNK
    n = 2 * c
    conf = np.zeros(n)
    correct = np.zeros(n, dtype=bool)
    conf[c + 1:] = 1.0
    correct[c + 1:] = True
    conf[c - 1] = conf[c] = 0.3  # sorted positions c-1 and c: either side of the boundary
    correct[c - 1] = True  # input order: the correct item first
    order = np.argsort(conf, kind="stable")
    expected = np.max(np.abs(np.cumsum(correct[order] - conf[order]))) / n
    np.testing.assert_allclose(cb.ks_error(conf, correct), expected, rtol=1e-12)
    np.testing.assert_allclose(cb.ks_error(conf, correct), 0.7 / n, rtol=1e-9)


@pytest.mark.parametrize("offset", [-2, -1, 0, 1])
def test_ks_group_tie_group_across_internal_chunks(offset):
    """ties="group" evaluates only group ends, also for a group across a chunk boundary."""
    rng = np.random.default_rng(7)
    n = 2 * _CHUNK + 5
    conf = np.sort(rng.random(n))
    start = _CHUNK + offset
    conf[start:start + 4] = conf[start]  # a tie group of 4 near the boundary
    correct = rng.random(n) < conf
    perm = rng.permutation(n)
    conf, correct = conf[perm], correct[perm]
    order = np.argsort(conf, kind="stable")
    s_conf, s_y = conf[order], correct[order]
    cs = np.cumsum(s_y - s_conf)
    ends = np.append(s_conf[1:] != s_conf[:-1], True)
    expected = np.max(np.abs(cs[ends])) / n
    np.testing.assert_allclose(cb.ks_error(conf, correct, ties="group"), expected, rtol=1e-9)


def _mixed_groups_of(conf, correct):
    keys = _sort_keys(conf, np.asarray(correct, bool).view(np.uint8))
    return _mixed_groups(keys).shape[0]


@pytest.mark.parametrize(("n_values", "n", "mixed_at_least"), [(150_000, 600_000, (1 << 16) + 1), (500, 300_000, 400)])
def test_stable_tie_order_is_exact_with_few_and_many_mixed_tie_groups(n_values, n, mixed_at_least):
    """Ties put back in input order (the hash filter, then a radix sort by group up to 2^16 mixed groups, a
    merge sort beyond): the sorted correctness is a stable argsort's, item for item, and ``ks_error`` in "order"
    mode, ``ks_curves`` and equal-mass ECE equal the stable-argsort reference exactly (the KS running sum is
    carried chunk to chunk so that each partial sum is the whole-array cumsum's float)."""
    rng = np.random.default_rng(n_values)
    conf = rng.integers(0, n_values, n) / n_values
    conf[: n // 10] = rng.random(n // 10)  # a tenth continuous: items of no group, some hashed like a group's
    conf = rng.permutation(conf)
    correct = rng.random(n) < conf
    assert _mixed_groups_of(conf, correct) >= mixed_at_least
    s, y = ref_sorted(conf, correct)
    curves = cb.ks_curves(conf, correct)
    np.testing.assert_array_equal(curves.correct, y)
    np.testing.assert_array_equal(curves.scores, s)
    assert cb.ks_error(conf, correct, ties="order") == np.max(np.abs(np.cumsum(y - s))) / n
    for n_bins in (7, 15):
        sizes = [len(b) for b in np.array_split(s, n_bins)]
        edges = np.cumsum(sizes)[:-1]
        gaps = [abs(np.sum(a) - np.sum(b)) for a, b in zip(np.split(s, edges), np.split(y.astype(float), edges))]
        assert cb.ece(conf, correct, n_bins=n_bins, binning="mass") == pytest.approx(sum(gaps) / n, abs=1e-12)


def test_stable_tie_order_treats_negative_zero_as_zero():
    """-0.0 ties with 0.0 (as in a stable argsort) and sorts as 0.0, inside a group that mixes right and wrong."""
    conf = np.array([0.0, 0.5, -0.0, 0.0, 0.5, -0.0])
    correct = np.array([0, 1, 1, 1, 0, 0], bool)
    curves = cb.ks_curves(conf, correct)
    np.testing.assert_array_equal(curves.correct, [0, 1, 1, 0, 1, 0])  # zeros in input order, then the halves
    assert not np.signbit(curves.scores).any()
    assert cb.ks_error(conf, correct) == pytest.approx(2.5 / 6)  # running sums 0, 1, 2, 2 (the zeros), 2.5, 2


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

import pandas as pd  # noqa: E402

from calibnb.calibrators import HistogramBinning  # noqa: E402

import calibnb as cn  # noqa: E402


def _exact_bins(conf, m):
    edges = np.arange(m + 1) / m  # the float64 edges m / M
    return np.searchsorted(edges[1:-1], np.asarray(conf, dtype=np.float64), side="left")


@pytest.mark.parametrize("m", [1, 2, 3, 7, 10, 15, 20, 25, 49, 100, 1000])
def test_bin_membership_is_exact_next_to_every_edge(m):
    edges = np.arange(m + 1) / m
    vals = [edges]
    up, down = edges.copy(), edges.copy()
    for _ in range(3):
        up, down = np.nextafter(up, 2), np.nextafter(down, -1)
        vals += [up, down]
    conf = np.clip(np.concatenate(vals + [np.float32(edges).astype(np.float64)]), 0.0, 1.0)
    expected = _exact_bins(conf, m)
    assert np.array_equal(cn.bin_indices(conf, n_bins=m), expected)
    # ECE and the reliability table use the same membership
    correct = np.arange(conf.size) % 3 == 0
    table = cn.reliability_table(conf, correct, n_bins=m)
    assert table["count"].tolist() == np.bincount(expected, minlength=m)[table["bin"]].tolist()
    # HistogramBinning bins the same way
    hb = HistogramBinning(n_bins=m).fit(conf, correct)
    assert np.array_equal(hb._bin(conf), expected)


def test_values_just_above_an_edge_open_the_next_bin():
    assert cn.bin_indices([0.3, 0.1 + 0.2], n_bins=10).tolist() == [2, 3]
    assert cn.bin_indices(np.float32([0.3]), n_bins=10).tolist() == [3]  # 0.30000001192... > 0.3


def test_float32_input_equals_its_float64_cast_on_vote_shares():
    rng = np.random.default_rng(8)
    conf64 = rng.integers(0, 101, 5000) / 100
    correct = rng.random(5000) < conf64
    conf32 = conf64.astype(np.float32)
    cast = conf32.astype(np.float64)
    for m in (10, 20, 25):
        assert cn.ece(conf32, correct, n_bins=m) == cn.ece(cast, correct, n_bins=m)
        assert cn.mce(conf32, correct, n_bins=m) == cn.mce(cast, correct, n_bins=m)
        pd.testing.assert_frame_equal(cn.reliability_table(conf32, correct, n_bins=m),
                                      cn.reliability_table(cast, correct, n_bins=m))
        assert np.array_equal(cn.bin_indices(conf32, n_bins=m), _exact_bins(cast, m))
