"""Unit tests for calibnb.papers.baan2022 (the tools behind notebook 02, Baan et al. 2022)."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.stats import entropy as scipy_entropy

from calibnb.papers.baan2022 import (
    divergence_draws,
    expected_single_vote_dist_ce,
    original_agreement,
    classwise_ece_nonzero,
    histogram_divergence,
    human_calibration_summary,
    human_temperature_explorer,
    kth_guess,
    ranking_stability,
    votes_explorer,
    votes_stability,
)
from calibnb.data import subsample_votes
from calibnb.metrics import dist_ce, human_distribution


def _random_counts(rng, n, k, total):
    p = rng.dirichlet(np.full(k, 0.7), size=n)
    return np.stack([rng.multinomial(total, row) for row in p])


# --------------------------------------------------------------------------- subsample_votes


@pytest.mark.parametrize("n_votes,n_groups", [(1, 1), (5, 2), (20, 2), (10, 5), (50, 2)])
def test_subsample_votes_groups_are_disjoint_and_sized(n_votes, n_groups):
    rng = np.random.default_rng(1)
    counts = _random_counts(rng, 40, 3, 100)
    groups = subsample_votes(counts, n_votes, n_groups=n_groups, seed=3)
    assert groups.shape == (n_groups, 40, 3)
    assert groups.dtype == np.int64
    assert_array_equal(groups.sum(axis=2), n_votes)
    # disjoint draws without replacement never use more votes of a class than exist
    assert np.all(groups.sum(axis=0) <= counts)
    assert np.all(groups >= 0)


def test_subsample_votes_using_every_vote_recovers_the_counts():
    counts = np.array([[3, 1, 0], [0, 4, 0], [1, 1, 2]])
    groups = subsample_votes(counts, 2, n_groups=2, seed=0)
    assert_array_equal(groups.sum(axis=0), counts)


def test_subsample_votes_handles_items_with_different_totals():
    counts = np.array([[47, 3], [10, 53], [25, 25]])  # totals 50, 63, 50
    groups = subsample_votes(counts, 25, n_groups=2, seed=5)
    assert_array_equal(groups.sum(axis=2), 25)
    assert_array_equal(groups.sum(axis=0)[[0, 2]], counts[[0, 2]])
    assert np.all(groups.sum(axis=0)[1] <= counts[1])


@pytest.mark.parametrize("totals", ["equal", "unequal"])
def test_subsample_votes_draws_are_the_within_item_shuffle_of_its_definition(totals):
    """The same groups as the definition written out here: one uniform key per vote from the seed, votes sorted by
    (item, key) with numpy.lexsort, the first n_groups * n_votes of each item split in turn. The equal-totals path
    sorts row by row (issue 31); its draws, hence every seeded result built on them, must not change."""
    rng = np.random.default_rng(4)
    counts = _random_counts(rng, 300, 3, 100)
    if totals == "unequal":
        counts[::7, 0] += rng.integers(1, 9, size=counts[::7].shape[0])
    for seed, n_votes, n_groups in [(0, 20, 2), (5, 1, 1), (9, 10, 5), (2, 50, 2)]:
        got = subsample_votes(counts, n_votes, n_groups=n_groups, seed=seed)
        n_items, k = counts.shape
        tot = counts.sum(axis=1)
        item = np.repeat(np.arange(n_items), tot)
        cls = np.concatenate([np.repeat(np.arange(k), row) for row in counts])
        key = np.random.default_rng(seed).random(item.size)
        order = np.lexsort((key, item))
        want = np.zeros((n_groups, n_items, k), dtype=np.int64)
        start = 0
        for i in range(n_items):
            votes = cls[order[start:start + tot[i]]]
            for g in range(n_groups):
                want[g, i] = np.bincount(votes[g * n_votes:(g + 1) * n_votes], minlength=k)
            start += tot[i]
        assert_array_equal(got, want)


def test_subsample_votes_is_seeded():
    counts = _random_counts(np.random.default_rng(0), 30, 3, 100)
    a = subsample_votes(counts, 20, seed=11)
    b = subsample_votes(counts, 20, seed=11)
    c = subsample_votes(counts, 20, seed=12)
    assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    gen = np.random.default_rng(11)
    assert_array_equal(subsample_votes(counts, 20, seed=gen), a)


def test_subsample_votes_is_hypergeometric():
    # One item with 50/50 votes repeated many times: the count of class 0 in a
    # group of 20 drawn without replacement from 100 is hypergeometric
    # (mean 10, variance 20 * 0.5 * 0.5 * 80 / 99 = 4.04), not binomial (variance 5).
    counts = np.tile([50, 50], (20000, 1))
    g = subsample_votes(counts, 20, n_groups=2, seed=0)
    x = g[0, :, 0]
    assert abs(x.mean() - 10) < 0.05
    assert abs(x.var() - 20 * 0.25 * 80 / 99) < 0.15
    # the two groups share no vote, so their class-0 counts are negatively correlated
    assert np.corrcoef(g[0, :, 0], g[1, :, 0])[0, 1] < -0.1


def test_subsample_votes_errors():
    with pytest.raises(ValueError, match="fewer than n_groups \\* n_votes = 40 votes; first at row 1: 30"):
        subsample_votes([[50, 50], [10, 20]], 20)
    with pytest.raises(ValueError, match="whole vote counts"):
        subsample_votes([[0.5, 0.5]], 1)
    with pytest.raises(ValueError, match="below 0"):
        subsample_votes([[-1, 5]], 1)
    with pytest.raises(ValueError, match="n_votes must be at least 1"):
        subsample_votes([[5, 5]], 0)
    with pytest.raises(TypeError, match="n_groups must be an integer"):
        subsample_votes([[5, 5]], 1, n_groups=2.0)
    with pytest.raises(TypeError, match="seed"):
        subsample_votes([[5, 5]], 1, seed="a")


# --------------------------------------------------------------------------- histogram_divergence


def test_histogram_divergence_matches_scipy_kl_and_manual_tvd():
    rng = np.random.default_rng(2)
    for bins in (5, 10, 30):
        a = rng.beta(2, 5, size=500)
        b = rng.beta(2, 4, size=700)
        for s in (0.5, 1.0):
            p = np.histogram(a, bins=bins, range=(0, 1))[0] + s
            q = np.histogram(b, bins=bins, range=(0, 1))[0] + s
            assert_allclose(histogram_divergence(a, b, bins=bins, smoothing=s), scipy_entropy(p, q), rtol=1e-12)
        p = np.histogram(a, bins=bins, range=(0, 1))[0] / a.size
        q = np.histogram(b, bins=bins, range=(0, 1))[0] / b.size
        assert_allclose(histogram_divergence(a, b, bins=bins, divergence="tvd"), 0.5 * np.abs(p - q).sum())


def test_histogram_divergence_properties():
    rng = np.random.default_rng(3)
    a = rng.random(300)
    b = rng.random(200) ** 2
    assert histogram_divergence(a, a) == 0.0
    assert histogram_divergence(a, a, divergence="tvd") == 0.0
    assert histogram_divergence(a, b, divergence="tvd") == pytest.approx(histogram_divergence(b, a, divergence="tvd"))
    assert histogram_divergence(a, b) != pytest.approx(histogram_divergence(b, a))
    assert 0.0 <= histogram_divergence(a, b, divergence="tvd") <= 1.0


def test_histogram_divergence_reports_infinite_kl_and_smoothing_makes_it_finite():
    a = [0.05, 0.5, 0.95]
    b = [0.05, 0.06, 0.5]  # last bin empty in b but not in a
    assert histogram_divergence(a, b, bins=10) == np.inf
    smoothed = histogram_divergence(a, b, bins=10, smoothing=0.5)
    assert np.isfinite(smoothed) and smoothed > 0
    # the other direction is finite: every bin b uses is also used by a
    assert np.isfinite(histogram_divergence(b, a, bins=10))


def test_histogram_divergence_custom_range():
    assert histogram_divergence([1.0, 3.0], [1.5, 3.5], bins=2, range=(0, 4), divergence="tvd") == 0.0
    assert histogram_divergence([1.0, 3.0], [1.5, 1.7], bins=2, range=(0, 4), divergence="tvd") == 0.5


def test_histogram_divergence_errors():
    with pytest.raises(ValueError, match="a has 1 value\\(s\\) outside \\[0, 1\\]; first at index 1: 1.5"):
        histogram_divergence([0.1, 1.5], [0.2])
    with pytest.raises(ValueError, match="divergence must be one of 'kl', 'tvd'"):
        histogram_divergence([0.1], [0.2], divergence="js")
    with pytest.raises(ValueError, match="smoothing must be >= 0"):
        histogram_divergence([0.1], [0.2], smoothing=-1)
    with pytest.raises(ValueError, match="bins must be at least 1"):
        histogram_divergence([0.1], [0.2], bins=0)
    with pytest.raises(ValueError, match="low < high"):
        histogram_divergence([0.1], [0.2], range=(1, 0))
    with pytest.raises(ValueError, match="NaN or infinite"):
        histogram_divergence([np.nan], [0.2])


# --------------------------------------------------------------------------- kth_guess


def test_kth_guess_is_the_descending_sort():
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(4), size=50)
    guesses = np.stack([kth_guess(p, k=k) for k in range(1, 5)], axis=1)
    assert_allclose(guesses, -np.sort(-p, axis=1))
    assert_allclose(guesses.sum(axis=1), 1.0)
    assert_array_equal(kth_guess(p), p.max(axis=1))


def test_kth_guess_errors():
    with pytest.raises(ValueError, match="k must be at most the number of classes 3; got 4"):
        kth_guess([[0.2, 0.3, 0.5]], k=4)
    with pytest.raises(ValueError, match="k must be at least 1"):
        kth_guess([[0.2, 0.3, 0.5]], k=0)
    with pytest.raises(ValueError, match="does not sum to 1"):
        kth_guess([[0.2, 0.3, 0.6]], k=1)


# --------------------------------------------------------------------------- classwise_ece_nonzero


def _reference_loop(probs, labels, n_bins):
    """The authors' per-class loop over (a, b] bins, written out plainly."""
    out = []
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    for k in range(probs.shape[1]):
        conf = probs[:, k]
        hit = labels == k
        stats = []
        for a, b in zip(edges[:-1], edges[1:]):
            idx = (conf > a) & (conf <= b)
            if idx.any():
                stats.append((conf[idx].mean(), hit[idx].mean(), idx.sum()))
        s = np.array(stats)
        out.append(np.average(np.abs(s[:, 0] - s[:, 1]), weights=s[:, 2]))
    return float(np.mean(out))


@pytest.mark.parametrize("n_bins", [1, 5, 10, 15])
@pytest.mark.parametrize("grid", [False, True])
def test_classwise_ece_reference_matches_the_loop(n_bins, grid):
    rng = np.random.default_rng(n_bins)
    if grid:  # vote fractions: many exact zeros and values on bin edges (0.3, 0.7, ...)
        counts = _random_counts(rng, 300, 3, 100)
        probs = counts / 100.0
    else:
        probs = rng.dirichlet(np.ones(3) * 0.8, size=300)
    labels = rng.integers(0, 3, size=300)
    assert_allclose(classwise_ece_nonzero(probs, labels, n_bins=n_bins), _reference_loop(probs, labels, n_bins),
                    rtol=1e-12, atol=1e-15)


def test_classwise_ece_reference_drops_exact_zeros_only():
    from calibnb.metrics import classwise_ece

    rng = np.random.default_rng(9)
    probs = rng.dirichlet(np.ones(3), size=200)
    labels = rng.integers(0, 3, size=200)
    # no exact zeros: same as Eq. 8 with every item kept
    assert_allclose(classwise_ece_nonzero(probs, labels), classwise_ece(probs, labels), rtol=1e-10)
    probs[:20, 2] = 0.0
    probs[:20] /= probs[:20].sum(axis=1, keepdims=True)
    assert classwise_ece_nonzero(probs, labels) != pytest.approx(classwise_ece(probs, labels))


def test_classwise_ece_reference_errors():
    with pytest.raises(ValueError, match="probability 0 to class 1 for every item"):
        classwise_ece_nonzero([[1.0, 0.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match="labels has 1 value outside \\[0, 2\\)"):
        classwise_ece_nonzero([[0.5, 0.5]], [2])
    with pytest.raises(ValueError, match="n_bins must be at least 1"):
        classwise_ece_nonzero([[0.5, 0.5]], [1], n_bins=0)


# --------------------------------------------------------------------------- human_calibration_summary


def test_human_calibration_summary_oracle_and_one_hot():
    rng = np.random.default_rng(5)
    counts = _random_counts(rng, 200, 3, 100)
    counts[:, 0] += 1  # no item without votes
    oracle = counts / counts.sum(axis=1, keepdims=True)
    s = human_calibration_summary(oracle, counts)
    assert set(s) == {"accuracy", "ece", "rank_cs", "abs_ent_ce", "dist_ce"}
    assert s["accuracy"] == 1.0
    assert s["dist_ce"] == pytest.approx(0.0, abs=1e-12)
    assert s["abs_ent_ce"] == pytest.approx(0.0, abs=1e-12)
    assert s["rank_cs"] == 1.0
    # the oracle's ECE is 1 - mean top probability (all its predictions are "correct")
    assert s["ece"] == pytest.approx(1 - oracle.max(axis=1).mean())


def test_human_calibration_summary_against_direct_formulas():
    from calibnb.metrics import ece

    rng = np.random.default_rng(6)
    counts = _random_counts(rng, 300, 3, 50) + 1
    probs = rng.dirichlet(np.ones(3), size=300)
    h = counts / counts.sum(axis=1, keepdims=True)
    s = human_calibration_summary(probs, counts, n_bins=15)
    majority = counts.argmax(axis=1)
    correct = probs.argmax(axis=1) == majority
    assert s["accuracy"] == pytest.approx(correct.mean())
    assert s["ece"] == pytest.approx(ece(probs.max(axis=1), correct, n_bins=15))
    assert s["dist_ce"] == pytest.approx(0.5 * np.abs(probs - h).sum(axis=1).mean())
    ent = lambda p: -(p * np.log(p)).sum(axis=1)  # noqa: E731 (no zeros here)
    assert s["abs_ent_ce"] == pytest.approx(np.abs(ent(probs) - ent(h)).mean())


def test_human_calibration_summary_shape_mismatch():
    with pytest.raises(ValueError, match="human has 3 classes"):
        human_calibration_summary([[0.5, 0.5]], [[1, 2, 3]])


# --------------------------------------------------------------------------- votes_stability / ranking_stability


def test_votes_stability_with_all_votes_equals_full_distce():
    rng = np.random.default_rng(7)
    counts = _random_counts(rng, 100, 3, 20)
    models = {"a": rng.dirichlet(np.ones(3), size=100), "b": counts / 20 * 0.9 + 0.1 / 3}
    t = votes_stability(models, counts, votes_per_item=(20, 5), n_draws=3, seed=0)
    assert list(t.columns) == ["n_votes", "draw", "model", "dist_ce"]
    assert len(t) == 2 * 3 * 2
    full = t[t.n_votes == 20]
    h = counts / 20
    for name, p in models.items():
        assert_allclose(full[full.model == name].dist_ce, 0.5 * np.abs(p - h).sum(axis=1).mean())
    few = t[(t.n_votes == 5) & (t.model == "b")].dist_ce
    assert few.nunique() > 1  # the draws differ
    # fewer votes make the human estimate noisier, so a model close to the full MLE looks worse
    assert few.mean() > full[full.model == "b"].dist_ce.iloc[0]
    assert_array_equal(votes_stability(models, counts, votes_per_item=(5,), n_draws=2, seed=1),
                       votes_stability(models, counts, votes_per_item=(5,), n_draws=2, seed=1))


def test_votes_stability_errors():
    counts = np.array([[3, 1], [1, 3]])
    with pytest.raises(TypeError, match="non-empty mapping"):
        votes_stability({}, counts)
    with pytest.raises(ValueError, match="shape \\(1, 2\\) but human has \\(2, 2\\)"):
        votes_stability({"m": [[0.5, 0.5]]}, counts)
    with pytest.raises(ValueError, match="fewer than n_votes=5 votes"):
        votes_stability({"m": [[0.5, 0.5], [0.5, 0.5]]}, counts, votes_per_item=(5,))


def test_ranking_stability_counts_matching_orders():
    t = pd.DataFrame({
        "n_votes": [1] * 6 + [3] * 6,
        "draw": [0, 0, 0, 1, 1, 1] * 2,
        "model": ["a", "b", "c"] * 4,
        "dist_ce": [0.1, 0.2, 0.3, 0.3, 0.2, 0.1, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3],
    })
    r = ranking_stability(t, {"a": 0.0, "b": 0.5, "c": 1.0})
    assert list(r.index) == [1, 3]
    assert_allclose(r.loc[1, "agreement"], 0.5)
    assert_allclose(r.loc[1, "kendall_tau"], 0.0)  # one draw +1, one draw -1
    assert_allclose(r.loc[3].to_numpy(), [1.0, 1.0])
    with pytest.raises(ValueError, match="no score for 1 model\\(s\\); first: 'c'"):
        ranking_stability(t, {"a": 0.0, "b": 0.5})
    with pytest.raises(TypeError, match="DataFrame with columns"):
        ranking_stability(t.drop(columns="draw"), {"a": 0, "b": 0, "c": 0})


# --------------------------------------------------------------------------- panels


def test_human_temperature_explorer_drives_histogram_and_readout():
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(8)
    counts = _random_counts(rng, 120, 3, 30) + 1
    logits = rng.normal(size=(120, 3)) * 3
    panel = human_temperature_explorer(logits, counts, n_bins=5, hist_bins=10)
    readout = panel.update(temperature=2.0)
    p = np.exp(logits / 2.0)
    p /= p.sum(axis=1, keepdims=True)
    expected = human_calibration_summary(p, counts, n_bins=5)
    for key, value in expected.items():
        assert readout.loc[key, "value"] == pytest.approx(value)
    # the histogram axis shows the tau = 1 and tau = 2 DistCE distributions
    steps = [a for a in panel.axes[0].patches if a.get_gid() == "histogram"]
    assert len(steps) == 2
    panel.controls["temperature"].value = 4.0  # as a browser would; redraws through the same callback
    assert panel.readout.loc["temperature", "value"] == pytest.approx(4.0)
    with pytest.raises(ValueError, match="logits must be 2-D"):
        human_temperature_explorer(np.ones(3), counts)


def test_votes_explorer_all_votes_gives_a_perfect_human_classifier():
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(10)
    counts = _random_counts(rng, 80, 3, 12)
    probs = rng.dirichlet(np.ones(3), size=80)
    panel = votes_explorer(probs, counts, hist_bins=10, seed=0)
    assert panel.controls["n_votes"].max == 12
    full = panel.update(n_votes=12)
    assert full.loc["E[DistCE] human", "value"] == pytest.approx(0.0, abs=1e-12)
    few = panel.update(n_votes=2)
    assert few.loc["E[DistCE] human", "value"] > 0.05
    assert few.loc["E[DistCE] model", "value"] == pytest.approx(full.loc["E[DistCE] model", "value"])
    with pytest.raises(ValueError, match="probs has shape"):
        votes_explorer(probs[:5], counts)


# --- divergence_draws, original_agreement, expected_single_vote_dist_ce ----------------------------------------

def test_divergence_draws_repeats_one_draw_exactly():
    rng = np.random.default_rng(3)
    counts = _random_counts(rng, 60, 3, 100)
    human = human_distribution(counts)
    model = dist_ce(rng.dirichlet(np.ones(3), size=60), human)
    table, first = divergence_draws(counts, {"model": model}, n_votes=20, n_draws=3, bins=10, seed=7)
    assert table.shape == (6, 5) and table["vs"].tolist() == ["H2", "model"] * 3
    # the first draw is the first use of the same generator
    groups = subsample_votes(counts, 20, n_groups=2, seed=np.random.default_rng(7))
    h1, h2 = dist_ce(groups[0] / 20, human), dist_ce(groups[1] / 20, human)
    assert_array_equal(first["H1"], h1)
    row = table.iloc[1]
    assert row["KL"] == histogram_divergence(h1, model, bins=10)
    assert row["TVD"] == histogram_divergence(h1, model, bins=10, divergence="tvd")
    again, _ = divergence_draws(counts, {"model": model}, n_votes=20, n_draws=3, bins=10, seed=7)
    pd.testing.assert_frame_equal(table, again)


def test_divergence_draws_reports_an_infinite_raw_kl_and_a_finite_smoothed_one():
    counts = np.array([[50, 50, 0]] * 20 + [[100, 0, 0]] * 20)
    far = np.full(40, 0.95)  # every item in the last bin: H1's bins are empty here
    table, _ = divergence_draws(counts, {"far": far}, n_votes=20, n_draws=2, bins=10, seed=0)
    far_rows = table[table.vs == "far"]
    assert np.isinf(far_rows["KL"]).all() and np.isfinite(far_rows["KL smoothed"]).all()


@pytest.mark.parametrize(("others", "error", "match"), [
    ({"H2": np.zeros(4)}, ValueError, "H2"),
    ({"m": np.zeros(3)}, ValueError, "3 values"),
    ([np.zeros(4)], TypeError, "mapping"),
])
def test_divergence_draws_rejects_bad_others(others, error, match):
    with pytest.raises(error, match=match):
        divergence_draws([[20, 20, 0]] * 4, others, n_votes=20, n_draws=1)


def test_original_agreement_counts_the_largest_label():
    top, n = original_agreement([["e", "n", "c", "e", "n"], ["e"] * 5, ["n", "n", "c", "n"]])
    assert top.tolist() == [2, 5, 3] and n.tolist() == [5, 5, 4]


@pytest.mark.parametrize(("labels", "error"), [("eenc", TypeError), ([["e"], "en"], TypeError), ([["e"], []], ValueError)])
def test_original_agreement_rejects_bad_input(labels, error):
    with pytest.raises(error, match="labels"):
        original_agreement(labels)


def test_expected_single_vote_dist_ce_is_the_linear_score():
    rng = np.random.default_rng(0)
    counts = _random_counts(rng, 200, 3, 100)
    pi = human_distribution(counts)
    f = rng.dirichlet(np.ones(3), size=200)
    # Monte Carlo: the mean DistCE against one vote drawn per item
    votes = np.stack([subsample_votes(counts, 1, n_groups=1, seed=s)[0] for s in range(400)])
    mc = np.mean([dist_ce(f, v) for v in votes], axis=0)
    assert_allclose(expected_single_vote_dist_ce(f, counts), mc, atol=0.06)
    # against one-hot votes it is exactly 1 - f_y
    onehot = np.eye(3)[rng.integers(0, 3, 200)]
    assert_allclose(expected_single_vote_dist_ce(f, onehot), 1 - (f * onehot).sum(1))


def test_expected_single_vote_dist_ce_prefers_the_mode_to_the_truth():
    """Improper: the one-hot forecast of the majority never scores worse than the true distribution."""
    rng = np.random.default_rng(1)
    pi = rng.dirichlet(np.ones(4), size=300)
    mode = np.eye(4)[pi.argmax(1)]
    assert np.all(expected_single_vote_dist_ce(mode, pi) <= expected_single_vote_dist_ce(pi, pi) + 1e-12)
    assert np.mean(expected_single_vote_dist_ce(mode, pi) < expected_single_vote_dist_ce(pi, pi)) > 0.99


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

from calibnb.papers import baan2022  # noqa: E402


def test_ranking_stability_refuses_nan():
    t = pd.DataFrame({"n_votes": [1, 1, 1, 1], "draw": [0, 0, 1, 1], "model": ["a", "b", "a", "b"],
                      "dist_ce": [0.2, 0.3, np.nan, 0.3]})
    with pytest.raises(ValueError, match=r"table\['dist_ce'\] has 1 value that is NaN"):
        baan2022.ranking_stability(t, {"a": 0.1, "b": 0.2})
    t["dist_ce"] = [0.2, 0.3, 0.4, 0.3]
    with pytest.raises(ValueError, match="reference has 1 value that is NaN"):
        baan2022.ranking_stability(t, {"a": np.nan, "b": 0.2})
    with pytest.raises(ValueError, match="table has no dist_ce for 1"):
        baan2022.ranking_stability(t.iloc[:3], {"a": 0.1, "b": 0.2})


# ---- notebook 02's bootstrap statistics, moved into baan2022 (issue 25, item 8)

import calibnb as cb  # noqa: E402

def test_item_mean_is_the_row_mean_with_a_batch_axis():
    from calibnb.papers.baan2022 import item_mean

    rng = np.random.default_rng(0)
    x = rng.random((5, 40))
    np.testing.assert_array_equal(item_mean(x), [np.mean(row) for row in x])
    assert item_mean(x[0]) == np.mean(x[0])
    r_batch = cb.bootstrap_ci(item_mean, x[0], n_resamples=50, seed=1)
    r_loop = cb.bootstrap_ci(lambda v: float(np.mean(v)), x[0], n_resamples=50, seed=1)
    assert (r_batch.low, r_batch.high) == pytest.approx((r_loop.low, r_loop.high), abs=1e-12)
    with pytest.raises(ValueError, match="values has 1 NaN"):
        item_mean([0.1, np.nan])
    with pytest.raises(ValueError, match="values must be 1-D"):
        item_mean(np.zeros((2, 2, 2)))


def test_mean_diff_ci_is_the_paired_bootstrap_of_the_means():
    from calibnb.papers.baan2022 import item_mean, mean_diff_ci

    rng = np.random.default_rng(2)
    a, b = rng.random(60) < 0.6, rng.random(60) < 0.4
    est, (low, high) = mean_diff_ci(a, b, n_resamples=200, seed=3)
    ref = cb.paired_bootstrap_ci(item_mean, (a.astype(float),), (b.astype(float),), n_resamples=200, seed=3)
    assert (est, low, high) == (ref.estimate, ref.low, ref.high)
    assert est == pytest.approx(a.mean() - b.mean(), abs=1e-12) and low <= est <= high
    with pytest.raises(ValueError, match="a and b must hold the same items"):
        mean_diff_ci(a, b[:-1])
    with pytest.raises(ValueError, match="n_resamples"):
        mean_diff_ci(a, b, n_resamples=1)


def test_two_sample_ci_resamples_each_set_independently_with_the_seed():
    from calibnb.papers.baan2022 import two_sample_ci

    rng = np.random.default_rng(4)
    xa, xb = rng.normal(1.0, 1.0, 80), rng.normal(0.0, 1.0, 50)
    est, (low, high) = two_sample_ci(lambda i: xa[i].mean(), lambda i: xb[i].mean(), 80, 50, n_resamples=300, seed=5)
    assert est == pytest.approx(xa.mean() - xb.mean(), abs=1e-12) and low < est < high
    gen = np.random.default_rng(5)   # the documented draw order: n_a indices of A, then n_b of B, per resample
    diffs = [xa[gen.integers(0, 80, 80)].mean() - xb[gen.integers(0, 50, 50)].mean() for _ in range(300)]
    assert (low, high) == tuple(np.quantile(diffs, [0.025, 0.975]))
    with pytest.raises(TypeError, match="stat_b must be a callable"):
        two_sample_ci(lambda i: 0.0, 1.0, 3, 3)
    with pytest.raises(ValueError, match="n_a"):
        two_sample_ci(lambda i: 0.0, lambda i: 0.0, 0, 3)


def test_marginal_tvd_and_its_resampling_statistic_agree_with_histogram_divergence():
    from calibnb.papers.baan2022 import histogram_divergence, marginal_tvd, marginal_tvd_stat

    rng = np.random.default_rng(6)
    p = rng.dirichlet([1, 1, 1], 200)
    h = rng.dirichlet([2, 2, 2], 200)
    p[0] = [1.0, 0.0, 0.0]           # the closed last bin and the first edge
    h[1] = [0.5, 0.25, 0.25]         # a value on an inner edge
    for bins in (20, 7):
        expected = np.mean([histogram_divergence(p[:, k], h[:, k], bins=bins, divergence="tvd") for k in range(3)])
        assert marginal_tvd(p, h, bins=bins) == float(expected)
        stat = marginal_tvd_stat(p, h, bins=bins)
        assert abs(stat(np.arange(200)) - marginal_tvd(p, h, bins=bins)) < 1e-12
        idx = rng.integers(0, 200, 200)
        assert abs(stat(idx) - marginal_tvd(p[idx], h[idx], bins=bins)) < 1e-12
    assert marginal_tvd(h, h) == 0.0
    with pytest.raises(ValueError, match="same shape"):
        marginal_tvd(p, h[:-1])
    with pytest.raises(ValueError, match="idx must be"):
        marginal_tvd_stat(p, h)(np.array([200]))


def test_relative_drops_against_its_formula():
    from calibnb.papers.baan2022 import relative_drops

    rng = np.random.default_rng(7)
    c, y = rng.uniform(0.5, 1.0, 100), rng.random(100) < 0.7
    ct = np.clip(c - 0.1, 0, 1)
    d, dt = rng.random(100), rng.random(100) * 0.8
    e, et = cb.ece(c, y, n_bins=10), cb.ece(ct, y, n_bins=10)
    assert relative_drops(c, y, ct, y, d, dt, n_bins=10) == pytest.approx((1 - et / e) - (1 - dt.mean() / d.mean()), abs=1e-12)
    with pytest.raises(ValueError, match="must hold the same items"):
        relative_drops(c, y, ct, y, d[:-1], dt[:-1])
    with pytest.raises(ValueError, match="above 0"):
        relative_drops(c, y, ct, y, np.zeros(100), dt)
    with pytest.raises(ValueError, match="conf_ts"):
        relative_drops(c, y, ct + 1, y, d, dt)
