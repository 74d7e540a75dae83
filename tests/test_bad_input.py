"""The bad-input harness over calibnb's whole public API (issue 14); machinery in ``tests/badinput.py``."""

from __future__ import annotations

import types

import numpy as np
import pytest

import calibnb
from calibnb.calibrators import Calibrator
from calibnb.validation import check_conf

import badinput as bi

#: Public callables the harness does not call, each with the reason. Everything else named in an
#: ``__all__`` under calibnb is called (result records and exception classes are skipped by rule).
EXCLUDED = {
    # report / CLI: validated by plan_report before any kernel starts; run as subprocesses in test_report.py
    **{f"calibnb.apps.report.{n}": "report/CLI function: run as a subprocess in tests/apps/test_report.py" for n in (
        "NotebookRun", "run_notebook", "notebook_to_html", "load_params_file", "parse_cli_value", "params_for",
        "build_report", "plan_report", "resolve_scalar", "render_index", "main")},
    # widgets: need a kernel (and a browser) to mean anything; tested in tests/test_widgets.py
    **{f"calibnb.widgets.{n}": "widget: needs a kernel; tested in tests/test_widgets.py" for n in (
        "Panel", "build_panel", "temperature_slider", "temperature_explorer", "binning_explorer",
        "perturbation_explorer")},
    **{n: "widget: needs a kernel; tested in tests/test_widgets.py" for n in (
        "calibnb.papers.baan2022.human_temperature_explorer", "calibnb.papers.baan2022.votes_explorer",
        "calibnb.papers.jiang2024.f_neutral_explorer", "calibnb.papers.jiang2024.ece_bins_explorer",
        "calibnb.papers.si2022.resampling_explorer", "calibnb.papers.si2022.conscal_explorer")},
    # data loaders: read the data mirror or the network; names and checksums tested in test_data_*.py
    **{f"calibnb.data.{n}": "loader: reads the data mirror or the network; tested in tests/data/test_loaders.py"
       for n in ("data_dir", "fetch", "manifest_entry", "registry", "read_text", "load_chaosnli",
                 "chaosnli_prediction_models", "load_chaosnli_predictions", "cifar_models", "load_cifar",
                 "load_cifar10h", "qa_datasets", "load_qa_confidences", "load_qa_dev_confidences",
                 "load_codex_triviaqa")},
    **{f"calibnb.validation.{n}": "reads the environment variable CALIBNB_KERNEL, no data; its bad values are tested "
                                  "in tests/metrics/test_kernels_inmemory.py and tests/scale/test_stats.py"
       for n in ("kernel_choice", "choose_compiled")},
    "calibnb.papers.si2022.load_bundled": "reads a bundled data file by name; tested in tests/papers/test_si2022_training.py",
    "calibnb.papers.jiang2024.load_circa_examples": "reads a bundled CSV; tested in tests/papers/test_jiang2024.py",
    "calibnb.papers.jiang2024.circa_examples_path": "a path, no arguments",
    "calibnb.papers.sakai2024.sakai_examples_path": "a path, no arguments",
    # calibnb.llm readers: read a log file or folder; every bad record and field is tested in tests/llm/test_llm.py
    **{f"calibnb.llm.{n}": "reads a language-model log from a path; bad records/fields tested in tests/llm/test_llm.py"
       for n in ("read_log", "read_openai", "read_lm_eval", "read_helm", "read_inspect", "read_verbalized")},
    # the audit command: files, the notebook run, figures and report tables; run as subprocesses and on
    # written files in tests/apps/test_audit.py (bad input exits 2 naming the column and the row)
    **{f"calibnb.apps.audit.{n}": "audit CLI / file reading / report rendering: tested in tests/apps/test_audit.py" for n in (
        "main", "load_predictions", "read_columns", "file_size", "stream_predictions", "load_from_parameters",
        "notebook_parameters", "write_audit_json", "audit_json", "plot_reliability", "plot_ks", "plot_rewards",
        "plot_human", "run_audit", "predictions_from_columns", "predictions_from_arrays", "summary_frame",
        "comparison_frame", "parse_scalar_values", "audit", "AuditResult", "verdict_data", "verdict_text",
        "recommendation_data", "recommendation_text", "summarise_warnings", "source_comparison", "plot_sources",
        "picks_frame", "check_out", "secure_page", "render_report", "write_report", "llm_provenance", "bin_free_table")},
    "calibnb.audit": "the audit module is also the call calibnb.audit(df); tested in tests/apps/test_audit_api.py",
    # the claims ledger: writes result files; its own validation is tested in tests/record/test_reproduction.py
    **{f"calibnb.record.reproduction.{n}": "claims ledger record (writes files); tested in tests/record/test_reproduction.py"
       for n in ("Reproduction", "to_jsonable", "from_json_float", "write_json_atomic",
                 "write_text_atomic", "load_ledger", "claims_table_html", "did_not_reproduce_markdown",
                 "status_counts", "status_mismatches", "decide", "criterion_text", "measure_thresholds_text",
                 "findings_markdown",
                 "clopper_pearson", "rule_target", "paper_summary", "restatus", "seed_split",
                 "stability_text", "unmarked_flips")},
    **{f"calibnb.apps.report.{n}": "report helper over result files/claims entries; tested in tests/apps/test_report.py"
       for n in ("copy_mathjax", "collect_claims", "claims_summary", "summary_sentence", "load_seed_stability")},
    "calibnb.scale.scan.scan_predictions": "reads prediction files from a path; tested in tests/scale/test_stats.py",
    "calibnb.scale.scan.open_predictions": "opens prediction files from a path; tested in tests/scale/test_stats.py",
    "calibnb.scale.dask.scan_parquet": "reads prediction files from a path on a Dask cluster; tested in tests/scale/test_dask.py",
    **{f"calibnb.validation.{n}": "problem records of arrays already converted by a reader (they find bad values "
       "rather than refuse them); tested in tests/test_validation.py and through every check_* function"
       for n in ("conf_problem", "correct_problem", "weight_problem", "merge_problems", "raise_problems",
                 "finite_problem", "sum_problem", "count_problem", "label_problem", "mask_problem")},
    **{f"calibnb.scale.reader.{n}": "the prediction-file reader: takes a path, an open file or a pyarrow dataset; "
       "bad files tested in tests/apps/test_audit_inputs.py and tests/scale/test_reader.py"
       for n in ("parquet_file", "parquet_batches", "read_chunks", "file_shape", "check_header")},
    "calibnb.data.project_data_path": "reads a project file by name (browser site too); tested in tests/test_site.py",
    "calibnb.data.add_data_file": "keeps an uploaded data file after verifying it against the manifest; its bad "
                                  "names, types and bytes are tested in tests/test_site.py",
    "calibnb.data.browser_file": "looks a data file up by name in a browser kernel's folders; tested in tests/test_site.py",
    "calibnb.data.upload_widget": "widget (the browser site's upload button), no arguments; tested in tests/test_site.py",
    **{f"calibnb.widgets.{n}": "takes a live figure or ipywidgets control; tested in tests/test_widgets.py"
       for n in ("figure_png", "sweep_values", "rounded_readout")},
    **{f"calibnb.metrics.registry.{n}": "the metric registry: takes Metric declarations and keys; tested in "
       "tests/metrics/test_registry.py" for n in ("register", "unregister", "metrics", "get_metric")},
    "calibnb.scale.dask.metric_functions": "returns the Dask functions of the registry; tested in tests/metrics/test_registry.py",
    "calibnb.uncertainty.bootstrap_weights": "returns an iterator of weight blocks (validated before the first "
    "block); tested in tests/test_uncertainty.py",
    "calibnb.metrics.batch.batch_axis": "a decorator (takes a function, returns one); tested in tests/test_uncertainty.py",
    **{f"calibnb.teaching.{n}": "a class's setup table, notebook stripping and the server save hook; tested in "
                                 "tests/test_teaching.py" for n in ("setup_check", "strip_outputs", "strip_on_save", "main",
                                                                     "answer_key", "Answer")},
}


@pytest.fixture(scope="module")
def harness():
    callables = bi.public_callables(calibnb)
    targets, skipped = bi.targets_of(callables, EXCLUDED, Calibrator)
    outcomes, calls = bi.run_harness(targets)
    return callables, targets, skipped, outcomes, calls


def test_exclusions_name_existing_callables():
    callables = bi.public_callables(calibnb)
    missing = sorted(set(EXCLUDED) - set(callables))
    assert not missing, f"EXCLUDED names callables that do not exist (renamed or removed?): {missing}"
    assert all(isinstance(r, str) and len(r) > 10 for r in EXCLUDED.values())


@pytest.mark.xdist_group("bad_input_harness")  # one worker builds the module's harness once (issue 31)
def test_harness_covers_the_public_api(harness):
    callables, targets, skipped, outcomes, calls = harness
    names = {t.name.split("(")[0].rsplit(".", 1)[0] if t.name.endswith((".fit", ".transform", "(options)"))
             else t.name for t in targets}
    covered = {c for c in callables if c in names or any(t.name.startswith(c + ".") or t.name.startswith(c + "(")
                                                         for t in targets)}
    assert covered | set(EXCLUDED) | set(skipped) == set(callables)
    assert len(targets) >= 100 and calls >= 2000, (len(targets), calls)
    calibrators = [t for t in targets if t.name.endswith(".fit")]
    assert len(calibrators) >= 10


@pytest.mark.xdist_group("bad_input_harness")  # one worker builds the module's harness once (issue 31)
def test_no_defects(harness):
    _, targets, _, outcomes, calls = harness
    defects = [o for o in outcomes if o.verdict == "defect"]
    assert not defects, f"{len(defects)} defects in {calls} calls over {len(targets)} targets:\n" + bi.describe(defects)


def test_harness_catches_an_unvalidated_function():
    """A deliberately unvalidated function (no checks at all) is reported; a validated twin is not."""
    fake = types.ModuleType("fake_calibnb")

    def bad(conf):
        return float(np.mean(conf))

    def good(conf):
        return float(np.mean(check_conf(conf)))

    fake.bad, fake.good = bad, good
    targets, _ = bi.targets_of({"fake.bad": bad, "fake.good": good}, {})
    outcomes, _ = bi.run_harness(targets)
    bad_defects = {o.family for o in outcomes if o.target == "fake.bad" and o.verdict == "defect"}
    good_defects = [o for o in outcomes if o.target == "fake.good" and o.verdict == "defect"]
    assert {"NaN", "above 1", "string", "None", "2-D"} <= bad_defects
    assert not good_defects, bi.describe(good_defects)


def test_harness_fails_on_a_parameter_without_generator():
    def new_metric(conf, frobnication):
        return float(np.mean(check_conf(conf)))

    targets, _ = bi.targets_of({"fake.new_metric": new_metric}, {})
    outcomes, _ = bi.run_harness(targets)
    assert [o.detail for o in outcomes] == ["no baseline generator for required parameter 'frobnication'"]


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

import calibnb as cn  # noqa: E402
from calibnb.calibrators import HistogramBinning, TemperatureScaling, VectorScaling  # noqa: E402
from calibnb.papers import jiang2024, si2022  # noqa: E402
from calibnb.papers.si2022 import train_softmax_regression  # noqa: E402
from calibnb.validation import MAX_BINS  # noqa: E402

from synthetic import calibrated_logits  # noqa: E402


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
    z, y = calibrated_logits(40, 3, 1)
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


def test_bool_options_refuse_strings():
    with pytest.raises(TypeError, match="percent must be True or False"):
        si2022.calibration_summary_table({("s", "m"): ([0.9, 0.2], [1, 0])}, percent="no")
    with pytest.raises(TypeError, match="logit_input must be True or False"):
        cn.PlattScaling(logit_input="no").fit([0.2, 0.8], [0, 1])


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
