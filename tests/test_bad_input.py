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
                 "status_counts", "status_mismatches", "decide", "criterion_text", "findings_markdown",
                 "clopper_pearson", "rule_target", "paper_summary", "restatus", "seed_split",
                 "stability_text", "unmarked_flips")},
    **{f"calibnb.apps.report.{n}": "report helper over result files/claims entries; tested in tests/apps/test_report.py"
       for n in ("copy_mathjax", "collect_claims", "claims_summary", "summary_sentence", "load_seed_stability")},
    "calibnb.scale.scan.scan_predictions": "reads prediction files from a path; tested in tests/scale/test_stats.py",
    "calibnb.scale.scan.open_predictions": "opens prediction files from a path; tested in tests/scale/test_stats.py",
    "calibnb.scale.dask.scan_parquet": "reads prediction files from a path on a Dask cluster; tested in tests/scale/test_dask.py",
    "calibnb.data.project_data_path": "reads a project file by name (browser site too); tested in tests/test_site.py",
    **{f"calibnb.widgets.{n}": "takes a live figure or ipywidgets control; tested in tests/test_widgets.py"
       for n in ("figure_png", "sweep_values", "rounded_readout")},
    **{f"calibnb.metrics.registry.{n}": "the metric registry: takes Metric declarations and keys; tested in "
       "tests/metrics/test_registry.py" for n in ("register", "unregister", "metrics", "get_metric")},
    "calibnb.scale.dask.metric_functions": "returns the Dask functions of the registry; tested in tests/metrics/test_registry.py",
    "calibnb.uncertainty.bootstrap_weights": "returns an iterator of weight blocks (validated before the first "
    "block); tested in tests/test_uncertainty.py",
    "calibnb.metrics.batch.batch_axis": "a decorator (takes a function, returns one); tested in tests/test_uncertainty.py",
    **{f"calibnb.teaching.{n}": "a class's setup table, notebook stripping and the server save hook; tested in "
                                 "tests/test_teaching.py" for n in ("setup_check", "strip_outputs", "strip_on_save", "main")},
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
