"""calibnb.papers.jiang2024: Theorem 1, the annotator fit and the like-for-like cost study (issue 17)."""

import itertools

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import calibnb as cn
from calibnb.papers import jiang2024 as paper

V = paper.nli_values(0.5)


def _world(n=300, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet([0.6, 0.6, 0.6], size=n)
    counts = np.stack([rng.multinomial(100, p) for p in truth])
    h = counts / 100
    noise = rng.dirichlet([1.0, 1.0, 1.0], size=n)
    probs = {f"m{w}": (1 - w) * h + w * noise for w in (0.0, 0.25, 0.5, 0.75, 1.0)}
    return probs, counts


# --- Theorem 1 ------------------------------------------------------------------------------


def test_gap_weighted_regret_matches_brute_force_and_is_below_twice_mae():
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = int(rng.integers(2, 25))
        a = rng.integers(0, 5, n) / 4
        s = rng.integers(0, 5, n) / 4
        brute = np.mean([abs(s[i] - s[j]) * ((a[i] - a[j]) * (s[i] - s[j]) < 0)
                         + 0.5 * abs(s[i] - s[j]) * (a[i] == a[j] and s[i] != s[j])
                         for i, j in itertools.combinations(range(n), 2)])
        got = paper.gap_weighted_regret(a, s)
        assert got == pytest.approx(brute, abs=1e-12)
        assert got <= 2 * cn.scalar_mae(a, s) + 1e-12


def test_gap_weighted_regret_errors():
    with pytest.raises(ValueError, match="same length, at least 2"):
        paper.gap_weighted_regret([0.1], [0.2])
    with pytest.raises(ValueError, match="same length"):
        paper.gap_weighted_regret([0.1, 0.2], [0.2, 0.3, 0.4])


def test_kpartite_ranking_risk_matches_brute_force_with_ties():
    rng = np.random.default_rng(2)
    for _ in range(10):
        n = int(rng.integers(2, 20))
        counts = rng.integers(0, 6, size=(n, 3))
        counts[:, 1] += 1
        h = counts / counts.sum(1, keepdims=True)
        a = rng.integers(0, 4, n).astype(float)
        c = h @ (V[:, None] < V[None, :]).astype(float) @ h.T
        brute = np.mean([c[i, j] if a[i] > a[j] else c[j, i] if a[i] < a[j] else 0.5 * (c[i, j] + c[j, i])
                         for i, j in itertools.combinations(range(n), 2)])
        assert paper.kpartite_ranking_risk(a, counts, V) == pytest.approx(brute, abs=1e-12)


def test_kpartite_ranking_risk_errors():
    with pytest.raises(ValueError, match="at least 2 items"):
        paper.kpartite_ranking_risk([0.5], [[1, 1, 1]], V)
    with pytest.raises(ValueError):
        paper.kpartite_ranking_risk([0.5, 0.2], [[1, 1, 1]], V)   # human rows do not match


def test_theorem1_table_chain_holds_and_oracle_is_perfect():
    probs, counts = _world()
    t = paper.theorem1_table(probs, counts, V)
    assert list(t.columns) == ["CE", "MAE", "RR", "gap regret", "2 MAE", "bound", "L regret"]
    assert (t["gap regret"] <= t["2 MAE"] + 1e-12).all() and (t["2 MAE"] <= t["bound"] + 1e-12).all()
    assert t.loc["m0.0"].abs().max() < 1e-12
    # the worse the model, the larger every error column (the mixtures are nested)
    for col in ("CE", "MAE", "L regret"):
        assert t[col].is_monotonic_increasing
    assert_allclose(t["CE"], [cn.human_classwise_ce(p, counts) for p in probs.values()], atol=1e-15)


def test_theorem1_table_errors():
    probs, counts = _world(n=20)
    with pytest.raises(ValueError, match="one entry per class"):
        paper.theorem1_table(probs, counts, [1.0, 0.0])
    with pytest.raises(TypeError, match="non-empty mapping"):
        paper.theorem1_table({}, counts, V)


def test_pair_share_brute_force_and_errors():
    rng = np.random.default_rng(3)
    counts = rng.integers(0, 10, size=(200, 3)) + 1
    h = counts / counts.sum(1, keepdims=True)
    got = paper.pair_share(counts, threshold=0.3)
    assert got["0+2"] == pytest.approx(np.mean((h[:, 0] >= 0.3) & (h[:, 2] >= 0.3)))
    assert list(got.index) == ["0+1", "0+2", "1+2"]
    with pytest.raises(ValueError, match="threshold"):
        paper.pair_share(counts, threshold=0.0)


# --- annotators ------------------------------------------------------------------------------


def test_scalar_label_correlation_falls_with_noise():
    u = np.random.default_rng(4).uniform(size=500)
    rs = [paper.scalar_label_correlation(u, s, seed=0) for s in (0.0, 0.05, 0.2, 0.5)]
    assert rs[0] == 1.0
    assert rs == sorted(rs, reverse=True)
    with pytest.raises(ValueError, match="constant"):
        paper.scalar_label_correlation(np.full(10, 0.5), 0.1, seed=0)


def test_fit_annotator_noise_hits_r_and_is_deterministic():
    u = np.random.default_rng(5).beta(0.7, 0.7, size=1500)
    for r in (0.55, 0.703, 0.9):
        noise, got = paper.fit_annotator_noise(u, r, seed=3)
        assert abs(got - r) < 1e-4
        assert paper.scalar_label_correlation(u, noise, seed=3) == pytest.approx(got, abs=1e-12)
    assert paper.fit_annotator_noise(u, 0.7, seed=3) == paper.fit_annotator_noise(u, 0.7, seed=3)
    # a fresh draw at the fitted noise lands near the target (sampling spread of r over 1,500 items)
    noise, _ = paper.fit_annotator_noise(u, 0.703, seed=3)
    fresh = [paper.scalar_label_correlation(u, noise, seed=s) for s in range(10, 15)]
    assert max(abs(f - 0.703) for f in fresh) < 0.03


def test_fit_annotator_noise_errors():
    u = np.linspace(0.0, 1.0, 100)
    with pytest.raises(ValueError, match="not reached within bounds"):
        paper.fit_annotator_noise(u, 0.999999, seed=0, bounds=(0.1, 1.0))
    with pytest.raises(TypeError, match="common random numbers"):
        paper.fit_annotator_noise(u, 0.7, seed=1.5)
    noise, got = paper.fit_annotator_noise(u, 0.7)  # seed=None: one int drawn, the same draw at every noise
    assert abs(got - 0.7) < 1e-3
    with pytest.raises(ValueError, match="r must be"):
        paper.fit_annotator_noise(u, 1.0, seed=0)
    with pytest.raises(ValueError, match="bounds must be increasing"):
        paper.fit_annotator_noise(u, 0.7, seed=0, bounds=(0.5, 0.1))


def test_ranking_risk_fast_equals_ranking_risk():
    rng = np.random.default_rng(6)
    for _ in range(300):
        n = int(rng.integers(2, 40))
        a = rng.integers(0, int(rng.integers(1, 6)), n).astype(float)
        s = rng.integers(0, int(rng.integers(1, 6)), n).astype(float)
        if np.ptp(s) == 0:
            with pytest.raises(ValueError, match="no two different values"):
                paper._ranking_risk_fast(a, s)
            continue
        assert paper._ranking_risk_fast(a, s) == cn.ranking_risk(a, s)


# --- the like-for-like cost study -------------------------------------------------------------


def test_cost_study_full_budget_and_exact_annotators_recover_the_reference():
    probs, counts = _world(n=200)
    out = paper.like_for_like_cost_study(probs, counts, V, budgets=(100,), noise=0.0, n_draws=3, seed=0)
    assert len(out) == 3 * 3 and set(out["metric"]) == {"CE", "MAE", "RR"}
    # all 100 votes are the reference itself, on every metric
    assert_allclose(out["tau votes"], 1.0)
    # exact scalar labels are psi_f of the reference: MAE and RR rank as the reference does
    assert_allclose(out.loc[out["metric"] != "CE", "tau scalar"], 1.0)
    assert_allclose(out["difference"], out["tau scalar"] - out["tau votes"])


def test_cost_study_is_seeded_and_noise_moves_only_the_scalar_side():
    probs, counts = _world(n=150)
    kw = dict(budgets=(1, 3), n_draws=4, seed=7)
    a = paper.like_for_like_cost_study(probs, counts, V, noise=0.1, **kw)
    pd.testing.assert_frame_equal(a, paper.like_for_like_cost_study(probs, counts, V, noise=0.1, **kw))
    b = paper.like_for_like_cost_study(probs, counts, V, noise=0.4, **kw)
    assert_allclose(a["tau votes"], b["tau votes"])
    assert not np.allclose(a["tau scalar"], b["tau scalar"])


def test_cost_study_errors():
    probs, counts = _world(n=30)
    with pytest.raises(ValueError, match="at least 2 models"):
        paper.like_for_like_cost_study({"m": probs["m0.0"]}, counts, V)
    with pytest.raises(ValueError, match="strictly monotone"):
        paper.like_for_like_cost_study(probs, counts, [1.0, 0.0, 0.5])
    with pytest.raises(ValueError, match="K - 1 = 2 entries"):
        paper.like_for_like_cost_study(probs, counts, V, cutoffs=[0.5])
    with pytest.raises(ValueError, match="fewer than n_votes=101"):
        paper.like_for_like_cost_study(probs, counts, V, budgets=(101,), n_draws=1)
    with pytest.raises(TypeError, match="budgets"):
        paper.like_for_like_cost_study(probs, counts, V, budgets=(1.5,))


def test_cost_intervals_are_percentiles_of_the_draws():
    rng = np.random.default_rng(8)
    study = pd.DataFrame({"draw": np.arange(40), "budget": 3, "metric": "MAE",
                          "tau votes": rng.uniform(size=40), "tau scalar": rng.uniform(size=40)})
    study["difference"] = study["tau scalar"] - study["tau votes"]
    t = paper.cost_intervals(study, level=0.9)
    row = t.loc[(3, "MAE")]
    assert row["low"] == pytest.approx(np.quantile(study["difference"], 0.05))
    assert row["high"] == pytest.approx(np.quantile(study["difference"], 0.95))
    assert row["draws"] == 40
    with pytest.raises(TypeError, match="like_for_like_cost_study"):
        paper.cost_intervals(study.drop(columns="difference"))
    with pytest.raises(ValueError, match="level"):
        paper.cost_intervals(study, level=1.0)


def test_metric_agreement_point_values_and_errors():
    probs, counts = _world(n=200)
    sets = {"all": list(probs), "three": ["m0.25", "m0.5", "m0.75"]}
    t = paper.metric_agreement(probs, counts, V, sets, n_resamples=10, seed=0)
    calib = paper.calibration_table(probs, counts, V)
    for row in t.itertuples():
        ms = sets[row._1]
        assert row.tau == pytest.approx(paper.ranking_agreement(calib.loc[ms, "CE"], calib.loc[ms, row.metric]))
        assert row.low <= row.high
    pd.testing.assert_frame_equal(t, paper.metric_agreement(probs, counts, V, sets, n_resamples=10, seed=0))
    with pytest.raises(ValueError, match="unknown"):
        paper.metric_agreement(probs, counts, V, {"x": ["m0.0", "nope"]})
    with pytest.raises(TypeError, match="non-empty mapping"):
        paper.metric_agreement(probs, counts, V, {})


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

from calibnb.papers import jiang2024  # noqa: E402


def test_ranking_agreement_refuses_constant_scorings_and_cost_study_never_returns_nan():
    with pytest.raises(ValueError, match="a gives every model the same value"):
        jiang2024.ranking_agreement([0.5, 0.5, 0.5], [1, 2, 3])
    with pytest.raises(ValueError, match="b gives every model the same value"):
        jiang2024.ranking_agreement([1, 2, 3], [0.3, 0.1 + 0.2, 0.3])
    with pytest.raises(ValueError, match="table column 's2'"):
        jiang2024.ranking_changes(pd.DataFrame({"s1": [1.0, 2.0], "s2": [0.5, 0.5]}))
    # a protocol whose scores tie every model (here: few votes on few items) gets tau 0.0, flagged, never NaN;
    # the study used to crash on it (ranking_agreement refuses constant scorings)
    h = np.array([[6, 4], [3, 7], [8, 2], [2, 8], [5, 5], [9, 1]])
    a = np.array([[.7, .3], [.2, .8], [.9, .1], [.3, .7], [.5, .5], [.8, .2]])
    b = np.array([[.5, .5], [.5, .5], [.6, .4], [.4, .6], [.5, .5], [.6, .4]])
    out = jiang2024.like_for_like_cost_study({"a": a, "b": b}, h, [1.0, 0.0], budgets=(1,), n_draws=6,
                                             cutoffs=[0.5], seed=2)
    assert not out[["tau votes", "tau scalar", "difference"]].isna().any().any()
    tied = out["votes tied"] | out["scalar tied"]
    assert tied.any() and not tied.all()
    assert (out.loc[out["votes tied"], "tau votes"] == 0.0).all()
    assert (out.loc[out["scalar tied"], "tau scalar"] == 0.0).all()
    # budget-1 votes that give every resampled item the same target: RR ranks nothing, a tie, not a crash
    out = jiang2024.like_for_like_cost_study({"a": a, "b": b}, h, [1.0, 0.0], budgets=(1,), n_draws=6,
                                             cutoffs=[0.5], seed=1)
    assert not out[["tau votes", "tau scalar"]].isna().any().any()
    # a reference that ties every model leaves nothing to agree with: a clear error
    with pytest.raises(ValueError, match="reference CE scores tie every model on draw 0"):
        jiang2024.like_for_like_cost_study({"a": a, "b": a.copy()}, h, [1.0, 0.0], budgets=(2,), n_draws=2,
                                           cutoffs=[0.5], seed=0)
