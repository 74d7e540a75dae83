"""The metric registry (calibnb.metrics.registry, issue 25): one declaration drives every list of metrics."""

from __future__ import annotations

import numpy as np
import pytest

import calibnb as cn
from calibnb.apps import summary
from calibnb.calibrators._base import scorer_metrics
from calibnb.metrics import registry
from calibnb.metrics.registry import Metric


def toy_double_ice(conf, correct, *, sample_weight=None):
    """A toy metric for these tests: twice the ICE."""
    return 2.0 * cn.ice(conf, correct, sample_weight=sample_weight)


@pytest.fixture
def toy():
    m = registry.register(Metric("toy_double_ice", "toy: twice the ICE", "-", "twice the ICE", toy_double_ice,
                                 streaming=lambda stats: 2.0 * stats.ice(), aka="2 ICE"))
    yield m
    registry.unregister("toy_double_ice")


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.3, 1.0, n).round(3)
    return conf, rng.uniform(size=n) < conf


def test_every_summary_row_is_a_registered_metric_in_order():
    conf, correct = _data()
    table = cn.metric_summary(conf, correct, n_resamples=0)
    keys = [m.key for m in registry.metrics() if m.inputs == "binary"]
    assert table["key"].tolist() == keys
    directions = table.set_index("key")["higher_is_better"]
    assert all(directions[k] == registry.get_metric(k).higher_is_better for k in keys)


def test_a_fresh_process_reads_every_declaration_in_one_order_whatever_it_imported_first():
    """`import calibnb` imports modules on first use (issue 31): the registry imports the modules that declare
    metrics before it is read (else CORP's and the loss gain's rows were silently missing from the audit), and
    their order does not depend on which of them a process imported first."""
    import subprocess
    import sys

    code = ("import sys, calibnb.loss_gain\n"
            "from calibnb.metrics import registry\n"
            "assert 'calibnb.corp' not in sys.modules\n"
            "print(' '.join(m.key for m in registry.metrics()))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    keys = proc.stdout.split()
    assert keys == [m.key for m in registry.metrics()]  # this process imported calibnb.corp first
    assert keys[-4:] == ["corp_mcb_brier", "corp_mcb_log", "ts_gain_log", "ts_gain_brier"]


def test_a_registered_toy_metric_appears_in_the_summary(toy):
    conf, correct = _data()
    table = cn.metric_summary(conf, correct, n_resamples=50, seed=0).set_index("key")
    assert "toy_double_ice" in table.index
    row = table.loc["toy_double_ice"]
    assert row["estimate"] == pytest.approx(2 * table.loc["ice", "estimate"], abs=1e-12)
    assert row["low"] <= row["estimate"] <= row["high"] and row["metric"] == "toy: twice the ICE"
    assert not row["higher_is_better"]


def test_a_registered_toy_metric_is_a_scorer(toy):
    assert "toy_double_ice" in scorer_metrics()
    conf, correct = _data()
    iso = cn.IsotonicCalibrator().fit(conf, correct)
    score = cn.calibration_scorer("toy_double_ice")(iso, conf, correct)
    assert score == pytest.approx(-2.0 * cn.ice(iso.transform(conf), correct))


def test_a_registered_toy_metric_is_in_the_dask_list(toy):
    da = pytest.importorskip("dask.array")
    import calibnb.dask as cdask

    conf, correct = _data(2_000, seed=1)
    fns = cdask.metric_functions(n_bins=15)
    assert "toy_double_ice" in fns
    value = fns["toy_double_ice"](da.from_array(conf, chunks=300), da.from_array(correct, chunks=300))
    assert value == pytest.approx(toy_double_ice(conf, correct), abs=1e-12)


def test_a_registered_toy_metric_is_in_the_audit(toy):
    from calibnb.apps import audit

    conf, correct = _data()
    stats = cn.CalibrationStats.from_arrays(conf, correct)
    streamed = audit._stream_estimates(stats, 10)  # the audit's streamed top-1 metrics
    assert streamed["toy_double_ice"] == pytest.approx(2 * stats.ice())
    assert list(streamed)[:3] == ["rows", "ice", "macro_ce"]


def test_the_scorers_and_dask_functions_come_from_the_registry():
    # every (conf, correct) metric under its registry key, and each public function under its name
    assert set(scorer_metrics()) == {
        "ece_width", "ece_mass", "mce", "ice", "macro_ce", "r_o", "r_u", "hmr", "ks_top1", "kuiper", "brier_top1",
        "smooth_ece", "debiased_ece", "rms_ce", "selective_cov_acc_area", "selective_acc_10", "corp_mcb_brier",
        "corp_mcb_log", "ts_gain_log", "ts_gain_brier",
        "ece", "ks_error", "kuiper_error", "brier_top", "rms_calibration_error", "coverage_accuracy_area",
        "selective_accuracy", "corp_miscalibration", "calibration_loss_gain"}
    assert scorer_metrics()["hmr"][1] and not scorer_metrics()["ece"][1]
    assert scorer_metrics()["selective_accuracy"][1] and not scorer_metrics()["rms_calibration_error"][1]
    pytest.importorskip("dask")
    import calibnb.dask as cdask

    assert set(cdask.metric_functions()) == {"ece_width", "ece_mass", "mce", "ice", "macro_ce", "r_o", "r_u", "hmr",
                                             "ks_top1", "brier_top1"}


def test_every_declaration_is_complete():
    for m in registry.metrics():
        assert m.paper and m.reading and m.name, m.key
        assert m.inputs in registry.INPUTS and m.form in registry.FORMS
        assert (m.per_item is not None) == (m.form == "mean"), m.key
    assert registry.get_metric("ece_mass").aka.startswith("adaptive ECE")


def test_register_refuses_bad_declarations():
    with pytest.raises(TypeError, match="metric must be"):
        registry.register({"key": "x"})
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get_metric("ece_width"))
    with pytest.raises(ValueError, match="inputs must be one of"):
        registry.register(Metric("x", "x", "-", "x", cn.ece, inputs="pixels"))
    with pytest.raises(ValueError, match="no per_item"):
        registry.register(Metric("x", "x", "-", "x", form="mean"))
    with pytest.raises(ValueError, match="not a registered metric"):
        registry.get_metric("nope")
    assert "x" not in {m.key for m in registry.metrics()}


def test_summary_specs_follow_the_registry(toy):
    keys = [s.key for s in summary._specs(15)]
    assert keys == [m.key for m in registry.metrics()]
    assert dict(next(s for s in summary._specs(15) if s.key == "ece_mass").options) == {"n_bins": 15, "binning": "mass"}


def test_a_registered_toy_metric_is_a_temperature_curve_metric(toy):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(200, 3)) * 2
    labels = rng.integers(0, 3, 200)
    df = cn.temperature_curve(logits, labels, [0.5, 1.0, 2.0], metrics=("toy_double_ice", "ice"))
    np.testing.assert_allclose(df["toy_double_ice"], 2 * df["ice"], atol=1e-12)
