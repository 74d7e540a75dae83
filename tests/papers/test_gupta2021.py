"""Tests of calibnb.papers.gupta2021 (the Gupta et al. 2021 study helpers)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from calibnb.papers.gupta2021 import SyntheticPopulation


def _sample_ks(scores, correct):
    """KS of Gupta Eq. 11-12 written out here, independent of calibnb.metrics."""
    order = np.argsort(scores, kind="stable")
    gap = np.cumsum(correct[order]) - np.cumsum(scores[order])
    return np.max(np.abs(gap)) / scores.size


# --- SyntheticPopulation ---------------------------------------------------


def test_calibrated_population_has_zero_error():
    pop = SyntheticPopulation(slope=1.0, intercept=0.0)
    s = np.linspace(0.01, 0.99, 7)
    assert_allclose(pop.probability(s), s, atol=1e-12)
    assert pop.ks_population() < 1e-12
    assert pop.ece_limit() < 1e-12


@pytest.mark.parametrize("intercept", [-1.5, -0.8, -0.2, 0.3, 1.0])
@pytest.mark.parametrize("a,b", [(5.0, 1.5), (2.0, 2.0), (1.0, 3.0)])
def test_one_signed_ks_equals_ece_limit(intercept, a, b):
    """Gupta Eq. 8: with one-signed miscalibration, KS = E|P(k|z) - z|."""
    pop = SyntheticPopulation(score_a=a, score_b=b, slope=1.0, intercept=intercept)
    assert pop.is_one_signed()
    assert pop.ks_population() > 1e-3
    assert_allclose(pop.ks_population(), pop.ece_limit(), rtol=1e-9)


@pytest.mark.parametrize("slope", [0.3, 0.5, 2.0])
def test_two_signed_ks_below_ece_limit(slope):
    """When g(z) - z changes sign, the signed areas cancel: KS < ECE limit."""
    pop = SyntheticPopulation(score_a=2.0, score_b=2.0, slope=slope, intercept=0.0)
    assert not pop.is_one_signed()
    assert pop.ks_population() < pop.ece_limit() - 1e-3


@pytest.mark.parametrize("pop", [SyntheticPopulation(), SyntheticPopulation(score_a=2, score_b=2, slope=0.5, intercept=0.3)])
def test_proposition_4_1_on_population(pop):
    """h'(t) computed by finite differences of h(t) equals g(s(t))."""
    t = np.linspace(0.0, 1.0, 4001)
    h = pop.cumulative_accuracy(t)
    dh = np.gradient(h, t)
    inner = slice(40, -40)
    assert_allclose(dh[inner], pop.cumulative_accuracy_derivative(t[inner]), atol=2e-3)
    assert h[0] == pytest.approx(0.0, abs=1e-9)
    # h(1) = P(correct) = integral of g p
    z = np.linspace(0, 1, 200001)[1:-1]
    assert h[-1] == pytest.approx(np.trapezoid(pop.probability(z) * pop.density(z), z), abs=1e-5)


def test_sample_is_seeded_and_matches_population():
    pop = SyntheticPopulation()
    s1, c1 = pop.sample(1000, seed=3)
    s2, c2 = pop.sample(1000, seed=3)
    s3, _ = pop.sample(1000, seed=4)
    assert_allclose(s1, s2)
    assert np.array_equal(c1, c2)
    assert not np.allclose(s1, s3)
    assert c1.dtype == bool and s1.shape == (1000,)
    assert np.all((s1 >= 0) & (s1 <= 1))
    scores, correct = pop.sample(200_000, seed=0)
    # sample KS converges to the population KS (sampling error ~ 1/sqrt(n))
    assert _sample_ks(scores, correct) == pytest.approx(pop.ks_population(), abs=4 / np.sqrt(scores.size))
    # and, for this one-signed population, to mean(score) - accuracy
    assert scores.mean() - correct.mean() == pytest.approx(pop.ece_limit(), abs=4 / np.sqrt(scores.size))


def test_fractile_score_inverts_the_distribution():
    pop = SyntheticPopulation(score_a=3.0, score_b=2.0)
    t = np.array([0.1, 0.5, 0.9])
    scores, _ = pop.sample(100_000, seed=1)
    assert_allclose(np.quantile(scores, t), pop.fractile_score(t), atol=0.01)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"slope": 0.0}, "slope must be > 0"),
        ({"score_a": -1.0}, "score_a must be > 0"),
        ({"score_b": float("nan")}, "score_b must be finite"),
        ({"intercept": "a"}, "intercept must be a real number"),
    ],
)
def test_population_rejects_bad_parameters(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        SyntheticPopulation(**kwargs)


def test_probability_rejects_scores_outside_unit_interval():
    with pytest.raises(ValueError, match="scores has 1 value outside"):
        SyntheticPopulation().probability([0.2, 1.3])
    with pytest.raises(ValueError, match="n must be"):
        SyntheticPopulation().sample(0, seed=0)


# --- evaluate_split on one split (evaluate_methods, its one-split table, was removed) ---

import pandas as pd  # noqa: E402

from calibnb.metrics import ks_error, top_r  # noqa: E402
from calibnb.papers.gupta2021 import (  # noqa: E402
    METHODS,
    SplineFigureData,
    evaluate_split,
    network_scores,
    plot_spline_figure,
    spline_figure_data,
    spline_recovery_error,
)

from calibnb.papers import gupta2021  # noqa: E402
from figure_ticks import shown_ticks  # noqa: E402

METRIC_COLUMNS = ("ks_top1", "ks_top2", "ks_within_top2", "accuracy", "ece", "mce", "brier_top1", "ks_top1_calibration")


def evaluate_methods(z, y, *, calibration_index, test_index, methods=METHODS, **kw):
    res = evaluate_split(network_scores(z, y), calibration_index, test_index, methods=methods, all_ranks=False, **kw)
    return pd.DataFrame.from_dict({m: {c: res[m][c] for c in METRIC_COLUMNS} for m in methods}, orient="index")

def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _overconfident(n=6000, k=5, sharpen=3.0, seed=0):
    """Logits whose softmax is `sharpen` times too confident: labels drawn from softmax(z / sharpen)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 3.0
    labels = (rng.random((n, 1)) < np.cumsum(_softmax(z / sharpen), axis=1)).argmax(axis=1)
    return z, labels


@pytest.fixture(scope="module")
def table():
    z, y = _overconfident()
    return evaluate_methods(z, y, calibration_index=np.arange(3000), test_index=np.arange(3000, 6000))


def test_evaluate_methods_shape_and_ranges(table):
    assert list(table.index) == list(METHODS)
    assert list(table.columns) == list(METRIC_COLUMNS)
    assert np.all((table.to_numpy() >= 0) & (table.to_numpy() <= 1))


def test_evaluate_methods_uncalibrated_row_matches_metrics():
    z, y = _overconfident()
    test = np.arange(3000, 6000)
    t = evaluate_methods(z, y, calibration_index=np.arange(3000), test_index=test, methods=("uncalibrated",))
    conf, correct = top_r(_softmax(z[test]), y[test], r=1)
    assert t.loc["uncalibrated", "ks_top1"] == pytest.approx(ks_error(conf, correct))
    assert t.loc["uncalibrated", "accuracy"] == pytest.approx(correct.mean())
    assert t.loc["uncalibrated", "brier_top1"] == pytest.approx(np.mean((conf - correct) ** 2))


def test_every_method_repairs_overconfidence_and_keeps_accuracy(table):
    unc = table.loc["uncalibrated"]
    assert unc["ks_top1"] > 0.05
    for method in METHODS[1:]:
        assert table.loc[method, "ks_top1"] < 0.5 * unc["ks_top1"], method
    # TS rescales, the per-score methods never touch the predicted class
    for method in ("temperature", "isotonic", "histogram", "spline"):
        assert table.loc[method, "accuracy"] == unc["accuracy"], method
    # temperature scaling is the right model here (labels come from softmax(z / 3))
    assert table.loc["temperature", "ks_top1"] < 0.02


def test_spline_knot_parameters_act_on_their_columns():
    z, y = _overconfident()
    kw = dict(calibration_index=np.arange(3000), test_index=np.arange(3000, 6000), methods=("spline",))
    base = evaluate_methods(z, y, **kw)
    other_within = evaluate_methods(z, y, n_knots_within=4, **kw)
    other_ece = evaluate_methods(z, y, n_knots_ece=6, **kw)
    assert other_within.loc["spline", "ks_top1"] == base.loc["spline", "ks_top1"]
    assert other_within.loc["spline", "ks_within_top2"] != base.loc["spline", "ks_within_top2"]
    assert other_ece.loc["spline", "ks_top1"] == base.loc["spline", "ks_top1"]
    assert other_ece.loc["spline", "ece"] != base.loc["spline", "ece"]


def test_ties_group_reads_both_conventions_from_the_studys_own_scores():
    """ties_group=True adds the top-1 KS under ties="group" and the tied-score count of each method's recalibrated test
    scores: those of the fits that gave ks_top1 (the notebook's tie cell re-fits nothing), every other number unchanged."""
    z, y = _overconfident()
    z = np.round(z, 1)  # coarse logits: tied top-1 scores, before and after recalibration
    net, cal, test = network_scores(z, y), np.arange(3000), np.arange(3000, 6000)
    plain = evaluate_split(net, cal, test, all_ranks=False)
    both = evaluate_split(net, cal, test, all_ranks=False, ties_group=True)
    moved = []
    for method in METHODS:
        extra = {k: both[method].pop(k) for k in ("ks_top1_group", "tied_top1")}
        assert both[method] == plain[method], method
        assert isinstance(extra["tied_top1"], int) and extra["tied_top1"] >= 0, method
        # every method but vector scaling (a weight per class: the scores of two classes no longer coincide) keeps ties
        assert extra["tied_top1"] > 0 or method == "vector", method
        moved.append(abs(extra["ks_top1_group"] - plain[method]["ks_top1"]))
    # the uncalibrated row against the public function on top-1 scores computed independently here
    conf, correct = top_r(_softmax(z[test]), y[test], r=1)
    row = evaluate_split(net, cal, test, methods=("uncalibrated",), all_ranks=False, ties_group=True)["uncalibrated"]
    assert row["ks_top1_group"] == ks_error(conf, correct, ties="group")
    assert row["tied_top1"] == int(conf.size - np.unique(conf).size)
    assert max(moved) > 0  # with tied scores the conventions differ somewhere


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"calibration_index": np.arange(10), "test_index": np.arange(5, 20)}, ValueError, "overlap"),
        ({"calibration_index": np.arange(10), "test_index": np.arange(19, 9, -1)[[0, 1, 2, 0]]}, ValueError,
         "test_index has repeated indices"),
        ({"calibration_index": np.array([3, 4, 4, 5]), "test_index": np.arange(10, 20)}, ValueError,
         "calibration_index has repeated indices"),
        ({"calibration_index": np.array([5, 30, 2]), "test_index": np.array([40, 2, 7])}, ValueError, "overlap"),
        ({"calibration_index": np.array([0, 99999]), "test_index": np.arange(10, 20)}, ValueError,
         "calibration_index has 1 indices outside"),
        ({"calibration_index": np.array([0.5]), "test_index": np.arange(10, 20)}, TypeError, "must hold integers"),
        ({"calibration_index": np.arange(10), "test_index": np.arange(10, 20), "methods": ("platt",)}, ValueError,
         "methods"),
        ({"calibration_index": np.arange(10), "test_index": np.arange(10, 20), "n_knots": 1}, ValueError, "n_knots"),
    ],
)
def test_evaluate_methods_rejects_bad_input(kwargs, error, match):
    z, y = _overconfident(n=100)
    with pytest.raises(error, match=match):
        evaluate_methods(z, y, **kwargs)


# --- spline_figure_data / plot_spline_figure ---------------------------------


@pytest.mark.parametrize("kind", [("top", 1), ("top", 2), ("within", 2)])
def test_spline_figure_data_before_and_after(kind):
    z, y = _overconfident(seed=1)
    p = _softmax(z)
    d = spline_figure_data(p, y, calibration_index=np.arange(3000), test_index=np.arange(3000, 6000), kind=kind)
    assert isinstance(d, SplineFigureData) and d.kind == kind and d.n_calibration == 3000
    assert d.test_ks_after < d.test_ks_before
    assert d.test.ks == pytest.approx(d.test_ks_after)
    assert d.before.ks == pytest.approx(d.test_ks_before)
    assert d.calibration.ks <= d.test.ks + 0.01


def test_spline_figure_calibration_size_subsamples_with_seed():
    z, y = _overconfident(seed=2)
    p = _softmax(z)
    kw = dict(calibration_index=np.arange(3000), test_index=np.arange(3000, 6000), calibration_size=400)
    a = spline_figure_data(p, y, seed=0, **kw)
    b = spline_figure_data(p, y, seed=0, **kw)
    c = spline_figure_data(p, y, seed=1, **kw)
    assert a.n_calibration == 400
    assert a.test_ks_after == b.test_ks_after
    assert a.test_ks_after != c.test_ks_after
    assert a.test_ks_before == c.test_ks_before  # the test split never changes
    with pytest.raises(ValueError, match="calibration_size"):
        spline_figure_data(p, y, calibration_index=np.arange(3000), test_index=np.arange(3000, 6000),
                           calibration_size=3, n_knots=6)


def test_plot_spline_figure_draws_both_rows():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    z, y = _overconfident(seed=3)
    d = spline_figure_data(_softmax(z), y, calibration_index=np.arange(3000), test_index=np.arange(3000, 6000))
    axes = plot_spline_figure(d, title="toy")
    assert axes.shape == (2, 4)
    assert "calibration" in axes[0, 0].get_title() and "test" in axes[1, 0].get_title()
    assert f"{100 * d.test.ks:.2f}%" in axes[1, 0].get_title()
    cum = [ln for ln in axes[1, 0].get_lines() if ln.get_gid() == "cum_accuracy"][0]
    np.testing.assert_allclose(cum.get_ydata(), d.test.cum_accuracy)
    shown = shown_ticks(axes.ravel())
    assert max(shown) <= gupta2021._PANEL_TICKS + 1, shown  # few ticks a panel (issue 31; the default put 6)
    with pytest.raises(TypeError, match="SplineFigureData"):
        plot_spline_figure(d.test)
    plt.close("all")


# --- spline_recovery_error (Proposition 4.1) ---------------------------------


def test_spline_recovers_known_probability_and_improves_with_data():
    pop = SyntheticPopulation()
    small = np.mean([spline_recovery_error(pop, n_calibration=500, seed=s).mean_error for s in range(4)])
    large = np.mean([spline_recovery_error(pop, n_calibration=50_000, seed=s).mean_error for s in range(4)])
    assert large < small
    assert large < 0.01
    rec = spline_recovery_error(pop, n_calibration=50_000, seed=0)
    uncalibrated = np.mean(np.abs(rec.scores - rec.true_probability))
    assert rec.mean_error < 0.1 * uncalibrated
    assert rec.max_error >= rec.mean_error


def test_spline_recovery_of_calibrated_population_is_near_identity():
    pop = SyntheticPopulation(slope=1.0, intercept=0.0)
    rec = spline_recovery_error(pop, n_calibration=50_000, seed=0)
    np.testing.assert_allclose(rec.true_probability, rec.scores, atol=1e-12)
    assert rec.mean_error < 0.01


def test_spline_recovery_rejects_bad_input():
    with pytest.raises(TypeError, match="SyntheticPopulation"):
        spline_recovery_error("population")
    with pytest.raises(ValueError, match="fractile_range"):
        spline_recovery_error(SyntheticPopulation(), fractile_range=(0.5, 0.2))


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

import calibnb as cn  # noqa: E402

from synthetic import calibrated_logits  # noqa: E402


def test_spline_figure_data_refuses_overlapping_splits():
    z, y = calibrated_logits(400, 3, 0)
    with pytest.raises(ValueError, match="calibration_index and test_index overlap in 100 row"):
        gupta2021.spline_figure_data(cn.softmax(z), y, calibration_index=np.arange(200),
                                     test_index=np.arange(100, 400))


def test_gupta_column_fits_and_split_options_are_validated():
    rng = np.random.default_rng(0)
    s = rng.uniform(0.3, 1, (40, 2))
    c = rng.random((40, 2)) < s
    for fit in (gupta2021.spline_columns, gupta2021.isotonic_columns, gupta2021.histogram_columns):
        with pytest.raises(ValueError, match="c_cal must hold only 0/1"):
            fit(s, np.where(c, 0.5, 0.0), s)      # was accepted: a fraction is not a correctness
        with pytest.raises(ValueError, match="s_new is empty"):
            fit(s, c, s[:0])                      # was "zero-size array to reduction operation"
        with pytest.raises(TypeError, match="s_cal must hold numbers"):
            fit(np.full(s.shape, "a"), c, s)
    with pytest.raises(ValueError, match="n_bins must be at most"):
        gupta2021.histogram_columns(s, c, s, n_bins=10**12)   # was a MemoryError (7 TiB)
    with pytest.raises(TypeError, match="clip"):
        gupta2021.spline_columns(s, c, s, clip="no")
    z = rng.normal(size=(60, 3)) * 2
    y = rng.integers(0, 3, 60)
    net = gupta2021.network_scores(z, y)
    split = dict(calibration_index=np.arange(30), test_index=np.arange(30, 60), methods=("uncalibrated",))
    for option, bad, exc in (("n_knots", 1.5, TypeError), ("n_knots_within", -1, ValueError),
                             ("n_knots_ece", "ten", TypeError), ("n_bins_ece", 0, ValueError),
                             ("n_bins_histogram", 10**12, ValueError), ("classwise", "no", TypeError),
                             ("all_ranks", "no", TypeError), ("ties_group", 1, TypeError)):
        with pytest.raises(exc, match=option):
            gupta2021.evaluate_split(net, **split, **{option: bad})
    with pytest.raises(ValueError, match="conf_b has 1 value"):
        gupta2021.paired_ks_difference_ci(s[:, 0], np.r_[np.nan, s[1:, 1]], c[:, 0], n_resamples=20, seed=0)
