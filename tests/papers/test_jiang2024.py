"""Tests of calibnb.papers.jiang2024 (Jiang et al. 2024's scalar annotation study)."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import calibnb as cn
from calibnb.papers import jiang2024 as an


def _rand_probs(rng, n, k=3):
    z = rng.normal(size=(n, k)) * 2
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


# --- simulated scalar annotators ---------------------------------------------------------


def test_simulate_zero_noise_returns_target():
    u = np.linspace(0, 1, 21)
    out = an.simulate_scalar_labels(u, n_annotators=3, noise=0.0, seed=1)
    assert out.shape == (21, 3)
    assert_allclose(out, np.repeat(u[:, None], 3, axis=1), atol=1e-9)


def test_simulate_is_seeded_in_range_and_noise_grows():
    u = np.random.default_rng(0).random(2000)
    a = an.simulate_scalar_labels(u, n_annotators=2, noise=0.05, seed=3)
    b = an.simulate_scalar_labels(u, n_annotators=2, noise=0.05, seed=3)
    c = an.simulate_scalar_labels(u, n_annotators=2, noise=0.05, seed=4)
    assert_allclose(a, b)
    assert not np.allclose(a, c)
    assert a.min() >= 0 and a.max() <= 1
    err = [np.abs(an.simulate_scalar_labels(u, noise=s, seed=0) - u[:, None]).mean() for s in (0.01, 0.05, 0.2)]
    assert err[0] < err[1] < err[2]
    # the noise lives on the slider: the slider positions recovered are the aimed ones plus N(0, (1e4 sigma)^2)
    mid = (u > 0.6) & (u < 0.9)  # far from the clip at both ends of the slider
    lab = an.simulate_scalar_labels(u[mid], n_annotators=1, noise=0.01, seed=5)[:, 0]
    resid = cn.unli_inverse(lab) - cn.unli_inverse(u[mid])
    assert abs(resid.std() - 100.0) < 10.0 and abs(resid.mean()) < 10.0


@pytest.mark.parametrize("bad, match", [([1.2], "target has 1 value"), ([np.nan], "target")])
def test_simulate_rejects_bad_target(bad, match):
    with pytest.raises(ValueError, match=match):
        an.simulate_scalar_labels(bad, seed=0)


def test_simulate_rejects_bad_options():
    with pytest.raises(ValueError, match="noise"):
        an.simulate_scalar_labels([0.5], noise=-1.0)
    with pytest.raises(ValueError, match="n_annotators"):
        an.simulate_scalar_labels([0.5], n_annotators=0)


# --- vote sub-samples --------------------------------------------------------------------


def test_sample_votes_rows_sum_and_within_counts():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(100, [0.5, 0.3, 0.2], size=300)
    for k in (1, 3, 10, 100):
        s = an.sample_votes(counts, k, seed=2)
        assert s.shape == counts.shape and (s.sum(axis=1) == k).all()
        assert (s <= counts).all() and (s >= 0).all()
    assert_allclose(an.sample_votes(counts, 100, seed=2), counts)


def test_sample_votes_is_unbiased():
    counts = np.tile([[60, 30, 10]], (20000, 1))
    s = an.sample_votes(counts, 5, seed=0) / 5
    assert_allclose(s.mean(axis=0), [0.6, 0.3, 0.1], atol=0.01)


def test_sample_votes_errors():
    with pytest.raises(ValueError, match="fewer than n_votes=5"):
        an.sample_votes([[1, 1, 1]], 5)
    with pytest.raises(ValueError, match="whole vote counts"):
        an.sample_votes([[0.5, 0.5]], 1)


# --- Beta back-mapping -------------------------------------------------------------------


def test_fit_beta_recovers_moments():
    rng = np.random.default_rng(0)
    draws = rng.beta(2.0, 5.0, size=(3, 200000))
    a, b = an.fit_beta(draws)
    assert_allclose(a, 2.0, rtol=0.03)
    assert_allclose(b, 5.0, rtol=0.03)


def test_fit_beta_degenerate_rows_are_valid():
    a, b = an.fit_beta([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.3, 0.3, 0.3]])
    assert (a > 0).all() and (b > 0).all() and np.isfinite(a).all() and np.isfinite(b).all()
    mean = a / (a + b)
    assert mean[0] < 0.01 and mean[1] > 0.99 and abs(mean[3] - 0.3) < 1e-9
    a1, b1 = an.fit_beta([[0.25]], min_var=0.01)
    assert_allclose(a1 / (a1 + b1), 0.25)
    assert_allclose(a1 * b1 / ((a1 + b1) ** 2 * (a1 + b1 + 1)), 0.01)


def test_fit_beta_errors():
    with pytest.raises(ValueError, match="2-D"):
        an.fit_beta([0.1, 0.2])
    with pytest.raises(ValueError, match="outside"):
        an.fit_beta([[0.1, 1.5]])


def test_quantize_beta_matches_scipy_and_sums_to_one():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.3, 6, 50), rng.uniform(0.3, 6, 50)
    cut = [0.2, 0.55, 0.9]
    q = an.quantize_beta(a, b, cut)
    assert q.shape == (50, 4)
    assert_allclose(q.sum(axis=1), 1.0)
    assert (q >= 0).all()
    i = 7
    edges = [0.0, *cut, 1.0]
    expected = [stats.beta(a[i], b[i]).cdf(edges[j + 1]) - stats.beta(a[i], b[i]).cdf(edges[j]) for j in range(4)]
    assert_allclose(q[i], expected)


def test_quantize_concentrated_beta_is_one_hot():
    q = an.quantize_beta([1000.0 * 0.1, 1000.0 * 0.5], [1000.0 * 0.9, 1000.0 * 0.5], [1 / 3, 2 / 3])
    assert_allclose(q, [[1, 0, 0], [0, 1, 0]], atol=1e-6)


@pytest.mark.parametrize("cut, match", [([0.5, 0.4], "increasing"), ([0.0, 0.5], "inside"), ([0.5, 1.0], "inside")])
def test_quantize_beta_bad_cutoffs(cut, match):
    with pytest.raises(ValueError, match=match):
        an.quantize_beta([1.0], [1.0], cut)


def test_quantize_beta_bad_params():
    with pytest.raises(ValueError, match="alpha has 1 value"):
        an.quantize_beta([0.0], [1.0], [0.5])
    with pytest.raises(ValueError, match="must match"):
        an.quantize_beta([1.0, 2.0], [1.0], [0.5])


# --- simplex, baseline -------------------------------------------------------------------


def test_barycentric_vertices_and_inside():
    rng = np.random.default_rng(0)
    p = _rand_probs(rng, 500)
    xy = an.barycentric(p)
    assert_allclose(an.barycentric(np.eye(3)), [[0, 0], [1, 0], [0.5, np.sqrt(3) / 2]], atol=1e-12)
    # inside the triangle: y >= 0, below both slanted sides
    assert (xy[:, 1] >= -1e-12).all()
    assert (xy[:, 1] <= np.sqrt(3) * xy[:, 0] + 1e-12).all()
    assert (xy[:, 1] <= np.sqrt(3) * (1 - xy[:, 0]) + 1e-12).all()
    with pytest.raises(ValueError, match="vertices"):
        an.barycentric(np.ones((2, 4)) / 4)


def test_random_logit_baseline_seeded():
    a = an.random_logit_baseline(100, n_classes=3, seed=0)
    assert_allclose(a, an.random_logit_baseline(100, n_classes=3, seed=0))
    assert not np.allclose(a, an.random_logit_baseline(100, n_classes=3, seed=1))
    assert_allclose(an.random_logit_baseline(5, n_classes=3, scale=0.0, seed=0), 0.0)


# --- comparisons -------------------------------------------------------------------------


def test_calibration_table_oracle_and_bound():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(100, [0.5, 0.3, 0.2], size=400) + rng.multinomial(20, [0.1, 0.2, 0.7], size=400)
    h = counts / counts.sum(axis=1, keepdims=True)
    probs = {"oracle": h, "random": _rand_probs(rng, 400), "half": 0.5 * h + 0.5 * _rand_probs(rng, 400)}
    for f_neu in (0.0, 0.2, 0.5, 1.0):
        v = an.nli_values(f_neu)
        t = an.calibration_table(probs, counts, v)
        assert list(t.columns) == ["CE", "MAE", "RR", "MAE bound"]
        assert t.loc["oracle"].abs().max() < 1e-12
        assert (t["MAE"] <= t["MAE bound"] + 1e-12).all()
        # the bound is (max f - min f) * mean TVD; CE is 2/K mean TVD
        assert_allclose(t["MAE bound"], 1.5 * t["CE"], atol=1e-15)
        assert t.loc["half", "CE"] < t.loc["random", "CE"]
    psi = cn.expected_label(probs["random"], an.nli_values(0.5))
    t2 = an.calibration_table(probs, counts, an.nli_values(0.5), target=psi)
    assert t2.loc["random", "MAE"] == 0.0 and t2.loc["random", "RR"] == 0.0


def test_ece_table_matches_ece():
    rng = np.random.default_rng(0)
    p = _rand_probs(rng, 300)
    y = rng.integers(0, 3, 300)
    t = an.ece_table({"a": p}, y, n_bins=(5, 20), binnings=("width", "mass"))
    assert list(t.columns) == ["width-5", "width-20", "mass-5", "mass-20"]
    assert t.loc["a", "mass-20"] == cn.ece(p.max(1), p.argmax(1) == y, n_bins=20, binning="mass")
    with pytest.raises(ValueError, match="labels has length 10 but probs has 300 rows"):
        an.ece_table({"a": p}, y[:10])
    with pytest.raises(ValueError, match="binning"):
        an.ece_table({"a": p}, y, binnings=("quantile",))


def test_ranking_changes_counts_against_brute_force():
    rng = np.random.default_rng(3)
    t = pd.DataFrame(rng.random((6, 3)), index=list("abcdef"), columns=["s1", "s2", "s3"])
    out = an.ranking_changes(t)
    assert len(out) == 3
    for _, row in out.iterrows():
        x, y = t[row["setting a"]].to_numpy(), t[row["setting b"]].to_numpy()
        brute = sum((x[i] - x[j]) * (y[i] - y[j]) < 0 for i in range(6) for j in range(i + 1, 6))
        assert row["discordant pairs"] == brute
        assert_allclose(row["kendall tau"], 1 - 2 * brute / 15)
        assert len([s for s in row["flipped"].split(", ") if s]) == brute
    same = an.ranking_changes(pd.DataFrame({"x": [1.0, 2.0], "y": [5.0, 9.0]}))
    assert same["discordant pairs"].tolist() == [0] and same["flipped"].tolist() == [""]
    with pytest.raises(TypeError, match="DataFrame"):
        an.ranking_changes(pd.DataFrame({"x": [1.0, 2.0]}))


def test_ranking_agreement():
    assert an.ranking_agreement([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="same length"):
        an.ranking_agreement([1, 2], [1, 2, 3])


# --- Circa Table 4 -----------------------------------------------------------------------


def test_circa_examples_as_transcribed():
    t = an.load_circa_examples()
    assert len(t) == 11
    assert t["scalar"].tolist() == [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]
    assert t["category"].value_counts().to_dict() == {"PY": 4, "N": 3, "M": 2, "Y": 1, "PN": 1}
    # scalar order never contradicts the category order
    assert (np.diff(t["category value"]) <= 0).all()
    assert t.loc[0, "question"] == "Do you work full-time?"


# --- panels -----------------------------------------------------------------------------


def test_f_neutral_explorer_reranks():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(100, [0.4, 0.4, 0.2], size=200)
    probs = {"oracle": counts / 100, "rand": _rand_probs(rng, 200)}
    panel = an.f_neutral_explorer(probs, counts)
    base = panel.readout.copy()
    assert base.loc["oracle", "rank CE"] == 1 and base.loc["oracle", "rank MAE"] == 1
    panel.controls["f_neutral"].value = 0.0
    moved = panel.update()
    assert_allclose(moved["CE"], base["CE"])
    assert not np.allclose(moved["MAE"], base["MAE"])
    assert panel.axes[0].get_ylabel()
    with pytest.raises(ValueError, match="3-class"):
        an.f_neutral_explorer({"a": np.ones((2, 2)) / 2}, [[1, 1], [2, 0]])


def test_ece_bins_explorer_keeps_ce_fixed():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(100, [0.4, 0.4, 0.2], size=300)
    probs = {"a": _rand_probs(rng, 300), "b": _rand_probs(rng, 300)}
    panel = an.ece_bins_explorer(probs, counts, n_bins=5)
    r5 = panel.readout.copy()
    r50 = panel.update(n_bins=50, binning="mass")
    assert_allclose(r5["CE"], r50["CE"])
    assert not np.allclose(r5["ECE"], r50["ECE"])
    expected = cn.ece(probs["a"].max(1), probs["a"].argmax(1) == counts.argmax(1), n_bins=50, binning="mass")
    assert r50.loc["a", "ECE"] == expected
    with pytest.raises(ValueError, match="max_bins"):
        an.ece_bins_explorer(probs, counts, n_bins=200)
