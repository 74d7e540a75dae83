"""One test per defect class of issue 14 (each fails on the code before the fix)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning

import calibnb as cn
from calibnb.calibrators import CalibrationWarning, HistogramBinning, TemperatureScaling, VectorScaling
from calibnb.metrics.scalar import TIE_TOLERANCE, tie_ranks
from calibnb.papers import baan2022, gupta2021, jiang2024, si2022
from calibnb.training import train_softmax_regression
from calibnb.validation import MAX_BINS, check_probs

from data_mirror import needs_mirror


def _calibrated(n, k, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2.0
    p = cn.softmax(z)
    y = (rng.random((n, 1)) < np.cumsum(p, axis=1)).argmax(axis=1)
    return z * scale, y


# ------------------------------------------------------------------ labels are validated everywhere

BAD_LABELS = [3, -1, 1.5, np.nan, 2**40, "a"]


@pytest.mark.parametrize("bad", BAD_LABELS)
def test_ece_table_and_top_confidence_validate_labels(bad):
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    labels = np.array([0, 1, 2], dtype=object if isinstance(bad, str) else float)
    labels[0] = bad
    with pytest.raises((ValueError, TypeError), match="labels"):
        jiang2024.ece_table({"m": p}, labels, n_bins=(2,), binnings=("width",))
    with pytest.raises((ValueError, TypeError), match="labels"):
        si2022.top_confidence(np.log(p), labels)


# ------------------------------------------------------------------ ties within rounding noise


def test_ranking_risk_treats_rounding_noise_as_ties():
    pred = [0.2, 0.1, 0.9]
    assert cn.ranking_risk(pred, [0.3, 0.1 + 0.2, 0.5]) == cn.ranking_risk(pred, [0.3, 0.3, 0.5]) == 0.0
    assert tie_ranks([0.3, 0.1 + 0.2, 0.5]).tolist() == [0, 0, 1]
    # a real difference is never a tie
    assert tie_ranks([0.3, 0.3 + 1e-9]).tolist() == [0, 1]
    assert TIE_TOLERANCE == 2.0**-48


@needs_mirror
def test_ranking_risk_on_chaosnli_targets_has_201_distinct_values():
    from calibnb import data

    chaos = data.load_chaosnli("snli")
    target = cn.expected_label(cn.human_distribution(chaos.counts), jiang2024.nli_values(0.5))
    assert np.unique(target).size == 288  # as computed: rounding noise splits equal values
    assert tie_ranks(target).max() + 1 == 201
    rng = np.random.default_rng(0)
    pred = rng.random(target.size)
    assert cn.ranking_risk(pred, target) == cn.ranking_risk(pred, np.round(target, 12))


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


# ------------------------------------------------------------------ splits, NaN


def test_spline_figure_data_refuses_overlapping_splits():
    z, y = _calibrated(400, 3, 0)
    with pytest.raises(ValueError, match="calibration_index and test_index overlap in 100 row"):
        gupta2021.spline_figure_data(cn.softmax(z), y, calibration_index=np.arange(200),
                                     test_index=np.arange(100, 400))


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


# ------------------------------------------------------------------ limits and argument names


def test_huge_bin_counts_and_class_counts_are_errors_naming_the_argument():
    conf, correct = [0.2, 0.9], [0, 1]
    for fn in (cn.ece, cn.mce, cn.reliability_table, cn.bin_indices):
        args = (conf,) if fn is cn.bin_indices else (conf, correct)
        with pytest.raises(ValueError, match=f"n_bins must be at most {MAX_BINS}"):
            fn(*args, n_bins=10**12)
    with pytest.raises(ValueError, match="n_bins must be at most"):
        HistogramBinning(n_bins=10**12).fit(conf, correct)
    with pytest.raises(ValueError, match="bins must be at most"):
        cn.histogram_data(conf, bins=10**12)
    with pytest.raises(ValueError, match=r"y has 1 value outside \[0, 100000\) \(the class count is inferred"):
        train_softmax_regression(np.zeros((3, 2)), [0, 1, 2**40], epochs=1, seed=0)


def test_errors_name_the_argument_the_caller_passed():
    z, y = _calibrated(40, 3, 1)
    with pytest.raises(ValueError, match="labels has length 39 but logits has 40 rows"):
        VectorScaling().fit(z, y[:39])
    with pytest.raises(ValueError, match="y has length 39 but X has 40 rows"):
        train_softmax_regression(z, y[:39], epochs=1, seed=0)
    with pytest.raises(ValueError, match="labels must hold only 0/1"):
        TemperatureScaling().fit([0.9, 0.2], [1, 2])
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        si2022.resample_indices([1, 0, 1, 0], 0.5, seed=-1)
    with pytest.raises(ValueError, match="dev_labels has 1 value outside"):
        si2022.accuracy_shift_table(z, np.where(np.arange(40) == 0, 3, y), z, y, dev_accuracy=0.5,
                                    test_accuracy=0.5, seed=0)
    with pytest.raises(ValueError, match="scores has 1 value that is NaN"):
        cn.temperature_curve(np.where(np.arange(120).reshape(40, 3) == 0, np.nan, z), y, [1.0])


def test_probabilities_within_the_accepted_tolerance_are_clipped():
    p = np.array([[1 + 5e-7, 0.0], [0.4, 0.6]])
    assert check_probs(p).max() == 1.0
    conf, correct = cn.top_r(p, [0, 1])
    assert conf.max() == 1.0
    assert cn.ece(conf, correct) == pytest.approx(0.2)


def test_temperature_curve_takes_a_fixed_list_of_metric_names():
    conf, correct = [0.9, 0.8, 0.6], [1, 0, 1]
    for bad in ("bin_indices", "reliability_table", "top_r", "human_distribution"):
        with pytest.raises(ValueError, match="metrics has an unknown name"):
            cn.temperature_curve(conf, correct, [1.0], metrics=[bad])
    df = cn.temperature_curve(conf, correct, [1.0], metrics=["ks_error", "hmr", "brier_top", "mce"])
    assert list(df.columns) == ["temperature", "ks_error", "hmr", "brier_top", "mce"]


def test_bool_options_refuse_strings():
    with pytest.raises(TypeError, match="percent must be True or False"):
        si2022.calibration_summary_table({("s", "m"): ([0.9, 0.2], [1, 0])}, percent="no")
    with pytest.raises(TypeError, match="logit_input must be True or False"):
        cn.PlattScaling(logit_input="no").fit([0.2, 0.8], [0, 1])


# ------------------------------------------------------------------ fits speak up


def test_calibration_warning_is_a_convergence_warning():
    assert issubclass(CalibrationWarning, ConvergenceWarning)
    assert cn.CalibrationWarning is CalibrationWarning


@pytest.mark.parametrize("objective", ["nll", "ece", "macro_ce"])
def test_temperature_at_the_upper_bound_warns(objective):
    """Logits x 1e4 with labels drawn at the true temperature (1e4): the optimum is beyond tau = 100."""
    z, y = _calibrated(2000, 5, 2, scale=1e4)
    with pytest.warns(CalibrationWarning, match=r"upper search bound tau = 100 \(bounds=\(0.01, 100.0\)\).*widen"):
        ts = TemperatureScaling(objective=objective).fit(z, y)
    assert 0.01 <= ts.temperature_ <= 100.0
    assert ts.temperature_ == 100.0


def test_uninformative_labels_warn():
    """Labels independent of the logits: the NLL keeps falling towards tau = infinity."""
    z, _ = _calibrated(2000, 5, 3)
    y = np.random.default_rng(4).integers(0, 5, 2000)
    with pytest.warns(CalibrationWarning, match="upper search bound"):
        ts = TemperatureScaling(objective="nll").fit(z, y)
    assert ts.temperature_ <= 100.0


def test_lower_bound_warns_and_temperature_stays_inside_bounds():
    z, y = _calibrated(2000, 5, 5, scale=1e-3)
    with pytest.warns(CalibrationWarning, match="lower search bound tau = 0.01"):
        ts = TemperatureScaling(objective="ece").fit(z, y)
    assert ts.temperature_ == 0.01


@pytest.mark.parametrize("objective", ["nll", "ece", "macro_ce"])
def test_a_well_posed_fit_does_not_warn(objective):
    z, y = _calibrated(3000, 5, 6, scale=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ts = TemperatureScaling(objective=objective).fit(z, y)
    assert 0.5 < ts.temperature_ < 8


def test_vector_scaling_warns_at_max_iter():
    z, y = _calibrated(2000, 4, 7, scale=3.0)
    with pytest.warns(CalibrationWarning, match="VectorScaling stopped at max_iter=1"):
        vs = VectorScaling(max_iter=1).fit(z, y)
    assert vs.n_iter_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        VectorScaling().fit(z, y)


# ------------------------------------------------------------------ exact binning for every float dtype


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


def test_transform_takes_its_documented_keyword():
    """scikit-learn's set_output wrapper renamed every transform's argument to X; calibnb's keep theirs."""
    z, y = _calibrated(200, 3, 9)
    ts = TemperatureScaling().fit(logits=z, labels=y)
    assert np.array_equal(ts.transform(logits=z), ts.transform(z))
    hb = HistogramBinning().fit(conf=cn.softmax(z).max(1), correct=y == z.argmax(1))
    assert hb.transform(conf=[0.5]).shape == (1,)


# ------------------------------------------------------------------ defects the harness found in the merged branches


def test_new_public_functions_name_the_bad_argument():
    """Each of these was a silent answer, a numpy error or a message naming another argument before."""
    from calibnb import dask as cdask
    from calibnb.metrics.multiclass import stable_row_sort
    from calibnb.plots import plot_reliability_diagram, reliability_diagram_data
    from calibnb.record.reproduction import claim_status, interval_outcome
    from calibnb.validation import check_sample_weight

    rng = np.random.default_rng(0)
    conf, correct = rng.uniform(0.3, 1, 50), rng.random(50) < 0.6
    with pytest.raises(TypeError, match="show_intervals"):
        plot_reliability_diagram(reliability_diagram_data(conf, correct), show_intervals="no")
    for bad in ("ten", float("nan")):
        with pytest.raises(TypeError, match="split_every"):
            cdask.calibration_stats(conf, correct, split_every=bad)
    with pytest.raises(ValueError, match="rows must be a 2-D array"):
        stable_row_sort(np.array([0.5, 0.2]))
    with pytest.raises(ValueError, match="rows holds NaN"):
        stable_row_sort(np.array([[0.5, np.nan]]))
    assert stable_row_sort([[0.5, 0.2, 0.5]])[0].tolist() == [[1, 0, 2]]  # lists work
    with pytest.raises(TypeError, match="k must hold integer counts"):
        cn.binomial_interval(True, 10)
    with pytest.raises(ValueError, match="n must hold whole numbers"):
        cn.binomial_interval(3, float("nan"))
    with pytest.raises(TypeError, match="k must be an array of numbers"):
        cn.binomial_interval("ten", 10)
    with pytest.raises(ValueError, match="kind must be one of"):
        claim_status("nonsense", ["holds"])
    with pytest.raises(TypeError, match="interval must be a pair"):
        interval_outcome(None, (0.0, 1.0))
    with pytest.raises(ValueError, match="target must be a pair"):
        interval_outcome((0.1, 0.2), (0.5, 0.0))
    with pytest.raises(TypeError, match="shape must be"):
        check_sample_weight([1.0, 2.0], None)
    with pytest.raises(ValueError, match="xtol"):
        jiang2024.fit_annotator_noise(np.linspace(0.05, 0.95, 50), 0.5, xtol=float("nan"))


def test_paired_bootstrap_errors_name_the_array_as_passed():
    c, y = np.full(20, 0.7), np.arange(20) % 2 == 0
    with pytest.raises(ValueError, match=r"b\[1\] has 19 items but a\[0\] has 20"):
        cn.paired_bootstrap_ci(cn.ece, (c, y), (c, y[:-1]), n_resamples=20, seed=0)
    with pytest.raises(TypeError, match=r"a\[0\] must be an array of numbers"):
        cn.paired_bootstrap_ci(cn.ece, (None, y), (c, y), n_resamples=20, seed=0)


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
                             ("all_ranks", "no", TypeError)):
        with pytest.raises(exc, match=option):
            gupta2021.evaluate_split(net, **split, **{option: bad})
    with pytest.raises(ValueError, match="conf_b has 1 value"):
        gupta2021.paired_ks_difference_ci(s[:, 0], np.r_[np.nan, s[1:, 1]], c[:, 0], n_resamples=20, seed=0)
