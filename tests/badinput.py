"""The machinery of calibnb's bad-input harness (issue 14); the test is ``tests/test_bad_input.py``.

Every public callable (the ``__all__`` of every public module under
:mod:`calibnb`, walked with :mod:`pkgutil`, plus every calibrator's constructor
options, ``fit`` and ``transform``) is called with valid baseline arguments, then with
one argument at a time replaced by a member of a family of bad (or unusual
but valid) inputs. Each call is classified:

* ``error``: a ``ValueError``/``TypeError`` whose message names the argument;
* ``same``: the call succeeded and equals the float64 baseline (lists, bools,
  pandas objects with odd indices, float32, big-endian and non-contiguous
  arrays must work);
* ``ok``: for inputs that may be accepted (one element, all correct, empty),
  either a clear error or a result without NaN where the baseline has none;
* anything else is a **defect**: a silent answer to a bad input, an error of
  another type (``MemoryError``, ``IndexError``, ...), a message that does not
  name the argument, a NaN, or a result that differs from the baseline.

Private modules (a name component starting with ``_``: ``calibnb._streaming``,
``calibnb.data._arrays``, ...) are not walked by rule: they are not public API
(their ``__all__`` exists for ``tests/test_api.py``) and are exercised through
the public functions that call them; an object they define is walked only when
a public module re-exports it, under that public name. Callables that take
their arrays through ``*args`` or tuples (``bootstrap_ci``,
``paired_bootstrap_ci``) are called through adapters naming each array.

Baseline values come from generators keyed by parameter name (``conf``,
``correct``, ``probs``, ``labels``, ``logits``, ``human``, ``n_bins``, ``seed``,
...), optionally refined per callable (``"PlattScaling.fit:scores"``). A
required parameter without a generator is itself a defect, so a new public
function is covered (or fails the test) without anyone adding it to a list.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

N, K = 24, 3
ODD_INDEX = np.arange(N)[::-1] * 7 + 100  # pandas inputs get a shuffled, non-zero-based index


# --------------------------------------------------------------------------- baseline data


def _data() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(N, K)) * 2.0
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    labels = np.arange(N) % K
    labels[:8] = probs[:8].argmax(1)  # some right, some wrong
    conf = np.round(probs.max(1), 6)
    correct = probs.argmax(1) == labels
    human = rng.integers(0, 8, size=(N, K))
    human[:, 0] += 1  # no all-zero row
    return {
        "logits": logits, "probs": probs, "labels": labels, "conf": conf, "correct": correct,
        "human": human, "scalar": rng.random(N), "scalar2": rng.random(N),
        "features": rng.normal(size=(N, 4)),
        "predictions": rng.integers(0, 3, size=(N, 5)),
    }


D = _data()


@dataclass(frozen=True)
class Gen:
    """How to make a valid value of a parameter, and which family of bad inputs it gets."""

    kind: str
    make: Callable[[], Any]


def _g(kind: str, value: Any) -> Gen:
    return Gen(kind, (lambda: value) if not callable(value) or isinstance(value, type) else value)


def _sakai_data():
    from calibnb.plots import reliability_diagram_data

    return reliability_diagram_data(D["conf"], D["correct"])


def _sakai_results():
    from calibnb.papers.sakai2024 import load_sakai_example, results_table

    return results_table(load_sakai_example(1))


def _votes_table():
    from calibnb.papers.baan2022 import votes_stability

    return votes_stability({"a": D["probs"], "b": D["probs"][::-1].copy()}, D["human"] * 3,
                           votes_per_item=(1, 3), n_draws=2, seed=0)


def _spline_data():
    from calibnb.papers.gupta2021 import spline_figure_data

    rng = np.random.default_rng(1)
    z = rng.normal(size=(400, 3)) * 2
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    y = (rng.random((400, 1)) < np.cumsum(p, 1)).argmax(1)
    return spline_figure_data(p, y, calibration_index=np.arange(200), test_index=np.arange(200, 400))


def _conscal_table():
    from calibnb.papers.si2022 import conscal_threshold_data

    return conscal_threshold_data(D["predictions"], D["correct"], D["predictions"], D["correct"])


def _models():
    """A mapping of model name -> (N, K) probabilities (three models: rankings need more than two)."""
    return {"a": D["probs"], "b": D["probs"][::-1].copy(), "c": np.roll(D["probs"], 1, axis=1)}


def _cost_study():
    from calibnb.papers.jiang2024 import like_for_like_cost_study

    return like_for_like_cost_study(_models(), D["human"], np.array([1.0, 0.5, 0.0]), budgets=(1, 3), n_draws=2,
                                    seed=0)


def _metric():
    from calibnb.metrics.binary import ece

    return ece


def _graph_rows():
    from calibnb.plots import ks_graph_data

    return [("x", ks_graph_data(D["conf"], D["correct"]))]


def _others():
    from calibnb.metrics.human import dist_ce

    return {"m": dist_ce(D["probs"], D["human"] + 4)}


def _net():
    from calibnb.papers.gupta2021 import network_scores

    return network_scores(D["logits"], D["labels"])


#: Baseline generators by parameter name. Kinds choose the family of bad inputs (see FAMILIES).
GENERATORS: dict[str, Gen] = {
    # arrays with one row per item
    "conf": _g("conf", D["conf"]),
    "correct": _g("correct", D["correct"]),
    "probs": _g("probs", D["probs"]),
    "labels": _g("labels", D["labels"]),
    "logits": _g("logits", D["logits"]),
    "X": _g("real2d", D["features"]),
    "y": _g("labels", D["labels"]),
    "features": _g("real2d", D["features"]),
    "predictions": _g("int2d", D["predictions"]),
    "human": _g("human", D["human"]),
    "pred_scalar": _g("real1d", D["scalar"]),
    "target_scalar": _g("real1d", D["scalar2"]),
    "target": _g("unit1d", D["scalar2"]),
    "scores": _g("logits", D["logits"]),
    "p": _g("probs", D["probs"]),
    "q": _g("probs", D["probs"][::-1].copy()),
    "a": _g("real1d", D["scalar"]),
    "b": _g("real1d", D["scalar2"]),
    "x": _g("real1d", D["scalar"]),
    "distribution": _g("real1d", D["scalar"]),
    "t": _g("unit1d", D["scalar"]),
    "u": _g("unit1d", D["scalar"] * 0.99),
    "slider": _g("real1d", D["scalar"] * 10000),
    "values": _g("real1d", np.array([1.0, 0.5, 0.0])),
    "before": _g("real1d", D["scalar"] + 0.1),
    "after": _g("real1d", D["scalar2"]),
    "alpha": _g("pos1d", D["scalar"] + 1.0),
    "beta": _g("pos1d", D["scalar2"] + 1.0),
    "cutoffs": _g("real1d", np.array([0.3, 0.6])),
    "knots": _g("real1d", np.array([0.0, 0.3, 0.7, 1.0])),
    "dev_scores": _g("logits", D["logits"]),
    "dev_labels": _g("labels", D["labels"]),
    "test_scores": _g("logits", D["logits"][::-1].copy()),
    "test_labels": _g("labels", D["labels"][::-1].copy()),
    "dev_predictions": _g("int2d", D["predictions"]),
    "dev_correct": _g("correct", D["correct"]),
    "test_predictions": _g("int2d", D["predictions"][::-1].copy()),
    "test_correct": _g("correct", D["correct"][::-1].copy()),
    "calibration_index": _g("index", np.arange(0, N, 2)),
    "test_index": _g("index", np.arange(1, N, 2)),
    "answers": _g("opaque", [["a", "a", "b"], ["x", "y", "y"]]),
    "confidences": _g("unit2d", np.array([[0.9, 0.7, 0.2], [0.5, 0.4, 0.3]])),
    # options
    "n_bins": _g("bins", 10),
    "n": _g("int", N),
    "n_questions": _g("int", 20),
    "n_votes": _g("int", 3),
    "number": _g("int", 1),
    "index": _g("int", 0),
    "expert": _g("int", 0),
    "accuracy": _g("prob", 0.5),
    "dev_accuracy": _g("prob", 0.5),
    "test_accuracy": _g("prob", 0.4),
    "new_top": _g("prob", 0.7),
    "temperatures": _g("real1d", np.array([0.5, 1.0, 2.0])),
    "seed": _g("seed", 0),
    # opaque objects
    "model_probs": _g("opaque", lambda: {"a": D["probs"], "b": D["probs"][::-1].copy()}),
    "probs_by_name": _g("opaque", lambda: {"a": D["probs"], "b": D["probs"][::-1].copy()}),
    "majority": _g("labels", D["labels"]),
    "reference": _g("opaque", {"a": 0.1, "b": 0.2}),
    "rows": _g("opaque", lambda: {("s", "raw"): (D["conf"], D["correct"])}),
    "population": _g("opaque", lambda: importlib.import_module("calibnb.papers.gupta2021").SyntheticPopulation()),
    "text": _g("any", "The  Answer!"),
    "name": _g("str", "x"),
    "name_a": _g("str", "a"),
    "name_b": _g("str", "b"),
    "namespace": _g("opaque", lambda: {"__annotations__": {"n_bins": int}, "n_bins": 10}),
    "choices": _g("opaque", ("width", "mass")),
    "value": _g("opaque", 3),
    "type_name": _g("str", "int"),
    # added with the uncertainty, scale, gupta and jiang branches
    "k": _g("int", 7),
    "metric": _g("opaque", _metric),
    "sample_weight": _g("weights", D["scalar"] + 0.5),
    "shape": _g("opaque", (N,)),
    "conf_a": _g("conf", D["conf"]),
    "conf_b": _g("conf", np.round(D["scalar"], 6)),
    "correct_a": _g("correct", D["correct"]),
    "correct_b": _g("correct", D["correct"][::-1].copy()),
    "s_cal": _g("unit2d", np.sort(D["probs"], 1)[:, ::-1][:, :2].copy()),
    "c_cal": _g("correct2d", np.stack([D["correct"], D["labels"] == np.argsort(-D["probs"], 1)[:, 1]], 1)),
    "s_new": _g("unit2d", np.sort(D["probs"], 1)[:, ::-1][:, :2][::-1].copy()),
    "r": _g("prob", 0.5),
    "noise": _g("float", 0.1),
    "n_systems": _g("int", 3),
    "n_instances": _g("int", 10),
    "n_classes": _g("int", 3),
    "model_sets": _g("opaque", {"all": ["a", "b", "c"]}),
    "study": _g("opaque", _cost_study),
    "counts": _g("human", D["human"] + 4),
    "others": _g("opaque", _others),
    "net": _g("opaque", _net),
    "outcomes": _g("opaque", ["holds", "fails"]),
    "interval": _g("opaque", (0.1, 0.2)),
    "kind": _g("str", "range"),
    "scaling_fit:method": _g("str", "temperature"),
    # calibnb.papers.sakai2024 (notebook 04): a worked example, a system, a measure, an axiom
    "example": _g("opaque", lambda: importlib.import_module("calibnb.papers.sakai2024").load_sakai_example(1)),
    "measure": _g("str", "HMR"),
    "system": _g("str", "X"),
    "axiom": _g("str", "U"),
    # calibnb.papers.si2022.trust_table: three methods' (conf, correct)
    "methods": _g("opaque", lambda: {"a": (D["conf"], D["correct"]), "b": (D["conf"][::-1].copy(), D["correct"]),
                                     "c": (np.round(D["scalar"], 6), D["correct"])}),
    # calibnb.papers.baan2022 (notebook 02's bootstrap statistics): two index statistics, the two sets' sizes,
    # and the before/after-TS arrays of relative_drops
    "stat_a": _g("opaque", lambda: (lambda i: float(np.mean(D["scalar"][i])))),
    "stat_b": _g("opaque", lambda: (lambda i: float(np.mean(D["scalar2"][i])))),
    "n_a": _g("int", N),
    "n_b": _g("int", N),
    "conf_ts": _g("conf", np.round(D["scalar"], 6)),
    "correct_ts": _g("correct", D["correct"][::-1].copy()),
    "dist_ce": _g("real1d", D["scalar"] + 0.1),
    "dist_ce_ts": _g("real1d", D["scalar2"] + 0.1),
    # calibnb.plots.distributions_data: series of different lengths
    "values_by_name": _g("opaque", lambda: {"H1": D["scalar"], "model": D["scalar2"][:10]}),
    # calibnb.llm
    "texts": _g("opaque", ["Answer: Paris\nConfidence: 85%", "confidence = 0.3"]),
    "answer": _g("any", "The Beatles"),
    "gold": _g("opaque", ["Beatles", "the beatles"]),
    "table": _g("opaque", lambda: pd.DataFrame({"confidence": D["conf"], "correct": D["correct"],
                                                "confidence_source": "verbalized"})),
}

#: Refinements for one callable (``"qualname:param"``), where a name means something else there.
OVERRIDES: dict[str, Gen] = {
    "cross_fit:method": _g("opaque", "isotonic"),
    "metric_picks:comparison": _g("opaque", lambda: importlib.import_module("calibnb.apps.summary").recalibration_comparison(
        D["conf"], D["correct"], methods=["uncalibrated", "isotonic"], n_folds=2, n_resamples=0, seed=0)),
    "concat_reductions:parts": _g("opaque", lambda: [importlib.import_module("calibnb.apps.summary").row_reductions(
        D["probs"], D["labels"])]),
    "PlattScaling.fit:scores": _g("real1d", D["scalar"]),
    "PlattScaling.transform:scores": _g("real1d", D["scalar"]),
    "pad_candidates:scores": _g("opaque", [[2.0, 1.0, 0.0], [0.5]]),
    "check_choice:value": _g("str", "mass"),
    "check_positive_int:value": _g("opaque", 3),
    "check_scalar_in_range:value": _g("opaque", 0.5),
    "to_jsonable:value": _g("opaque", 3),
    "parameter_type_error:value": _g("opaque", 3),
    "plot_reliability_diagram:data": _g("opaque", _sakai_data),
    # calibnb.papers.sakai2024: a worked example and its results table (notebook 04)
    "worse_than_x:table": _g("opaque", _sakai_results),
    "violates:table": _g("opaque", _sakai_results),
    "better_than_x:table": _g("opaque", _sakai_results),
    # calibnb.papers.baan2022: marginal_tvd compares with the human label distribution, not the vote counts
    # calibnb.papers.si2022 (notebook 01): a summary table with raw and TS rows of source "x", a claim's range
    "ts_margin:table": _g("opaque", lambda: importlib.import_module("calibnb.papers.si2022").calibration_summary_table(
        {("x", "raw"): (D["conf"], D["correct"]), ("x", "TS"): (np.round(D["scalar"], 6), D["correct"])})),
    "split_spread:target": _g("opaque", (0.2, 0.8)),
    # si2022.temperature_fall_ci: re-sampled sets by accuracy level (notebook 01, Table 5)
    "temperature_fall_ci:samples": _g("opaque", lambda: {0.3: (D["logits"], D["labels"]),
                                                         0.7: (0.5 * D["logits"], D["labels"])}),
    # si2022.table7_methods: a small model's training dynamics, without and with label smoothing
    "table7_methods:dyn": _g("opaque", lambda: importlib.import_module("calibnb.papers.si2022").training_dynamics(
        n_checkpoints=2, n_seeds=2, epochs_per_checkpoint=1, seed=0)),
    "table7_methods:dyn_ls": _g("opaque", lambda: importlib.import_module("calibnb.papers.si2022").training_dynamics(
        n_checkpoints=2, n_seeds=2, epochs_per_checkpoint=1, seed=0, label_smoothing=0.1)),
    "item_mean:values": _g("real_batch", np.array([1.0, 0.5, 0.0])),
    "marginal_tvd:human": _g("probs", lambda: D["human"] / D["human"].sum(axis=1, keepdims=True)),
    "marginal_tvd_stat:human": _g("probs", lambda: D["human"] / D["human"].sum(axis=1, keepdims=True)),
    "plot_corp_reliability:data": _g("opaque", lambda: importlib.import_module("calibnb.plots").corp_reliability_data(
        D["conf"], D["correct"], n_resamples=20, seed=0)),
    "plot_risk_coverage:data": _g("opaque", lambda: importlib.import_module("calibnb.plots").risk_coverage_data(
        D["conf"], D["correct"])),
    "plot_ks_graph:data": _g("opaque", lambda: importlib.import_module("calibnb.plots").ks_graph_data(D["conf"], D["correct"])),
    "plot_confidence_by_correctness:data": _g("opaque", lambda: importlib.import_module(
        "calibnb.plots").confidence_by_correctness_data(D["conf"], D["correct"])),
    "plot_confidence_by_correctness:kind": _g("str", "hist"),
    "plot_distributions:data": _g("opaque", lambda: importlib.import_module("calibnb.plots").distributions_data(
        {"H1": D["scalar"], "model": D["scalar2"][:10]})),
    "plot_distributions:kind": _g("str", "ecdf"),
    "plot_spline_figure:data": _g("opaque", _spline_data),
    "marginal_panels_data:human": _g("probs", D["probs"][::-1].copy()),
    "error_panels_data:human": _g("probs", D["probs"][::-1].copy()),
    "plot_marginal_panels:data": _g("opaque", lambda: importlib.import_module("calibnb.papers.baan2022")
                                    .marginal_panels_data({"a": D["probs"]}, D["probs"][::-1].copy(), D["labels"])),
    "plot_error_panels:data": _g("opaque", lambda: importlib.import_module("calibnb.papers.baan2022")
                                 .error_panels_data({"a": D["probs"]}, D["probs"][::-1].copy())),
    "plot_conscal_threshold:data": _g("opaque", _conscal_table),
    "plot_histograms:datas": _g("opaque", lambda: importlib.import_module("calibnb.plots").histogram_data(D["conf"])),
    "ranking_stability:table": _g("opaque", _votes_table),
    "ranking_changes:table": _g("opaque", pd.DataFrame({"s1": [0.1, 0.2, 0.3], "s2": [0.2, 0.1, 0.3]}, index=list("xyz"))),
    "histogram_data:values": _g("unit1d", D["conf"]),
    "histogram_divergence:a": _g("unit1d", D["conf"]),
    "histogram_divergence:b": _g("unit1d", D["scalar"]),
    "calibration_table:probs": _g("opaque", lambda: {"a": D["probs"], "b": D["probs"][::-1].copy()}),
    "ece_table:probs": _g("opaque", lambda: {"a": D["probs"], "b": D["probs"][::-1].copy()}),
    "annotation_cost_study:probs": _g("opaque", lambda: {"a": D["probs"], "b": D["probs"][::-1].copy()}),
    "fit_beta:labels": _g("unit2d", np.clip(np.stack([D["scalar"], D["scalar2"], D["conf"]], 1), 0.05, 0.95)),
    "majority_vote:predictions": _g("table2d", D["predictions"]),
    "check_prediction_table:predictions": _g("table2d", D["predictions"]),
    "ConsCal.fit:predictions": _g("table2d", D["predictions"]),
    "ConsCal.transform:predictions": _g("table2d", D["predictions"]),
    "conscal_threshold_data:dev_predictions": _g("table2d", D["predictions"]),
    "conscal_threshold_data:test_predictions": _g("table2d", D["predictions"][::-1].copy()),
    "CorrectnessClassifier.fit:features": _g("features", D["features"]),
    "CorrectnessClassifier.transform:features": _g("features", D["features"]),
    "temperature_curve:labels": _g("qa_labels", D["labels"]),
    "train_softmax_regression:y": _g("inferred_labels", D["labels"]),
    "train_mlp:y": _g("inferred_labels", D["labels"]),
    "tau_on_bound:tau": _g("float", 2.0),
    "check_labels:labels": _g("inferred_labels", D["labels"]),
    "expert_features:answers": _g("opaque", [["a", "a", "b"], ["x", "y", "y"]]),
    "resample_indices:correct": _g("correct", np.arange(N) % 2 == 0),
    "expected_label:probs": _g("probs", D["probs"]),
    "unli_inverse:u": _g("unit1d", D["scalar"] * 0.98 + 0.01),
    "as_numeric_array:x": _g("convert", D["scalar"]),
    "as_float_array:x": _g("convert", D["scalar"]),
    "check_same_length:a": _g("convert", D["scalar"]),
    "check_same_length:b": _g("convert", D["scalar2"]),
    "check_bool:value": _g("any", True),
    "parameter_type_error:value": _g("any", 3),
    "stable_row_sort:rows": _g("real2d", D["features"]),
    "plot_graph_rows:rows": _g("opaque", _graph_rows),
    "original_agreement:labels": _g("opaque", [["e", "e", "n"], ["n", "c"], ["c"]]),
    "interval_outcome:target": _g("opaque", (0.0, 0.5)),
    "theorem1_table:probs": _g("opaque", _models),
    "metric_agreement:probs": _g("opaque", _models),
    "like_for_like_cost_study:probs": _g("opaque", _models),
    "fit_annotator_noise:target": _g("unit1d", np.linspace(0.05, 0.95, N)),
    "scalar_label_correlation:target": _g("unit1d", np.linspace(0.05, 0.95, N)),
    "check_unique_names:names": _g("opaque", ["p0", "p1", "label"]),
    "check_yaml_text:text": _g("opaque", "all: {seed: 0}\n"),
}

#: Options given to the baseline call, to keep the harness fast or deterministic.
BASE_OPTIONS: dict[str, dict[str, Any]] = {
    "training_dynamics": dict(n_checkpoints=2, n_seeds=2, epochs_per_checkpoint=1),
    "ts_rows": dict(split_seed=0),   # a seeded dev/test split, so every call splits alike
    "resample_source": dict(split_seed=0, accuracies=(0.4, 0.6)),
    "train_softmax_regression": dict(epochs=2),
    "train_mlp": dict(epochs=2),
    "spline_recovery_error": dict(n_calibration=300, n_grid=20),
    "votes_stability": dict(votes_per_item=(1, 3), n_draws=2),
    "annotation_cost_study": dict(votes=(1, 3), n_repeats=1),
    "resampling_table": dict(accuracies=(0.5,)),
    "simulate_odqa": dict(n_passages=3, n_spans=3),
    "CorrectnessClassifier": dict(seed=0),
    "bootstrap_ci": dict(n_resamples=50),
    "paired_bootstrap_ci": dict(n_resamples=50),
    "paired_ks_difference_ci": dict(n_resamples=50),
    "divergence_draws": dict(n_votes=3, n_draws=2),
    "metric_agreement": dict(n_resamples=5),
    "like_for_like_cost_study": dict(budgets=(1, 3), n_draws=2),
    "evaluate_split": dict(methods=("uncalibrated", "temperature"), all_ranks=False),
    # the audit's tables: a few resamples and two folds (their sizes are fuzzed like any option); the comparison
    # on two methods, one that fits (each calibrator's own bad input is its own target here): a third of the
    # harness's time went to fitting all seven per call (issue 31)
    "recalibration_comparison": dict(n_folds=2, n_resamples=20, heavy_resamples=5,
                                     methods=("uncalibrated", "TS (NLL)")),
    "metric_summary": dict(n_resamples=20, heavy_resamples=5),
    # CORP's consistency bands: 50 resamples instead of 1000 (the resample count is fuzzed like any option)
    "corp_reliability": dict(n_resamples=50),
    "score_decomposition": dict(n_resamples=50),
    "corp_reliability_data": dict(n_resamples=50),
}

#: Pairs of arguments whose lengths must match: a shorter second one must be an error.
PAIRS = [
    ("conf", "correct"), ("probs", "labels"), ("logits", "labels"), ("probs", "human"), ("X", "y"),
    ("pred_scalar", "target_scalar"), ("features", "correct"), ("predictions", "correct"),
    ("scores", "labels"), ("scores", "correct"), ("dev_scores", "dev_labels"), ("test_scores", "test_labels"),
    ("dev_predictions", "dev_correct"), ("test_predictions", "test_correct"), ("p", "q"),
    ("conf_a", "correct"), ("conf_b", "correct"), ("correct_a", "conf_a"), ("correct_b", "conf_b"),
    ("s_cal", "c_cal"),
]

#: Not fuzzed: the names, bounds and choices the library passes to its own validation helpers (errors
#: from those helpers name the value of ``name``), and drawing targets.
NOT_FUZZED = {"name", "other", "name_a", "name_b", "minimum", "low", "high", "low_inclusive", "high_inclusive",
              "choices", "max_classes", "type_name", "default", "ax", "axes", "title", "xlabel", "label"}

# --------------------------------------------------------------------------- families


def _str_array(x):
    return np.full(np.shape(x), "a")


def _set_first(x, v):
    a = np.array(x, dtype=np.float64, copy=True)
    a.flat[0] = v
    return a


def _shape(x) -> tuple:
    try:
        return np.shape(x)
    except ValueError:  # ragged nested lists
        return ()


def _pandas(x):
    a = np.asarray(x)
    if a.ndim == 1 and a.shape[0] == N:
        return pd.Series(a, index=ODD_INDEX)
    if a.ndim == 2 and a.shape[0] == N:
        return pd.DataFrame(a, index=ODD_INDEX)
    return None


def _bigendian(x):
    a = np.asarray(x)
    if a.dtype.kind not in "iuf":
        return None
    return a.astype(a.dtype.newbyteorder(">"))


def _noncontig(x):
    a = np.asarray(x)
    return np.repeat(a, 2, axis=0)[::2]


def _float32(x):
    a = np.asarray(x)
    return a.astype(np.float32) if a.dtype.kind == "f" else None


# (family name, transform, expectation): "error" | "same" | "ok". A transform returning None is skipped.
ARRAY_COMMON = [
    ("None", lambda x: None, "error"),
    ("string", lambda x: "abc", "error"),
    ("string array", _str_array, "error"),
    ("list", lambda x: np.asarray(x).tolist(), "same"),
    ("pandas, odd index", _pandas, "same"),
    ("big-endian", _bigendian, "same"),
    ("non-contiguous", _noncontig, "same"),
    ("empty", lambda x: np.asarray(x)[:0], "ok"),
]
FLOAT_ARRAY = [
    ("NaN", lambda x: _set_first(x, np.nan), "error"),
    ("+inf", lambda x: _set_first(x, np.inf), "error"),
    ("float32", _float32, "same32"),
]
FAMILIES: dict[str, list] = {
    "conf": ARRAY_COMMON + FLOAT_ARRAY + [
        ("-inf", lambda x: _set_first(x, -np.inf), "error"),
        ("above 1", lambda x: _set_first(x, 1.5), "error"),
        ("below 0", lambda x: _set_first(x, -0.1), "error"),
        ("2-D", lambda x: np.asarray(x)[:, None], "error"),
    ],
    "unit1d": ARRAY_COMMON + FLOAT_ARRAY + [
        ("2-D", lambda x: np.asarray(x)[:, None], "error"),
    ],
    "real1d": ARRAY_COMMON + FLOAT_ARRAY + [
        ("-inf", lambda x: _set_first(x, -np.inf), "error"),
        ("2-D", lambda x: np.asarray(x)[:, None], "error"),
    ],
    "pos1d": ARRAY_COMMON + FLOAT_ARRAY + [("negative", lambda x: _set_first(x, -1.0), "error")],
    "correct": ARRAY_COMMON + [
        ("NaN", lambda x: _set_first(x, np.nan), "error"),
        ("0.5", lambda x: _set_first(x, 0.5), "error"),
        ("2", lambda x: _set_first(x, 2), "error"),
        ("-1", lambda x: _set_first(x, -1), "error"),
        ("0/1 int8", lambda x: np.asarray(x).astype(np.int8), "same"),
        ("0.0/1.0 floats", lambda x: np.asarray(x).astype(np.float64), "same"),
        ("2-D", lambda x: np.asarray(x)[:, None], "error"),
    ],
    "labels": ARRAY_COMMON + [
        ("NaN", lambda x: _set_first(x, np.nan), "error"),
        ("K", lambda x: _set_first(x, K).astype(np.int64), "error"),
        ("-1", lambda x: _set_first(x, -1).astype(np.int64), "error"),
        ("1.5", lambda x: _set_first(x, 1.5), "error"),
        ("2**40", lambda x: _set_first(x, 2**40).astype(np.int64), "error"),
        ("whole floats", lambda x: np.asarray(x).astype(np.float64), "same"),
        ("int32", lambda x: np.asarray(x).astype(np.int32), "same"),
        ("2-D", lambda x: np.asarray(x)[:, None], "error"),
    ],
    "probs": ARRAY_COMMON + FLOAT_ARRAY + [
        ("negative", lambda x: _set_first(x, -0.1), "error"),
        ("rows sum 1.2", lambda x: np.asarray(x) * 1.2, "error"),
        ("1-D", lambda x: np.asarray(x)[:, 0], "error"),
        ("Fortran order", lambda x: np.asfortranarray(x), "same"),
        ("top 1 + 5e-7", lambda x: np.vstack([[1 + 5e-7] + [0.0] * (K - 1), np.asarray(x)[1:]]), "ok"),
    ],
    "unit2d": ARRAY_COMMON + FLOAT_ARRAY + [("1-D", lambda x: np.asarray(x)[:, 0], "error")],
    "logits": ARRAY_COMMON + FLOAT_ARRAY + [
        ("-inf", lambda x: _set_first(x, -np.inf), "ok"),
        ("Fortran order", lambda x: np.asfortranarray(x), "same"),
        ("x 1e4", lambda x: np.asarray(x) * 1e4, "ok"),
    ],
    "real2d": ARRAY_COMMON + FLOAT_ARRAY + [
        ("1-D", lambda x: np.asarray(x)[:, 0], "error"),
        ("Fortran order", lambda x: np.asfortranarray(x), "same"),
    ],
    "int2d": ARRAY_COMMON + [
        ("1-D", lambda x: np.asarray(x)[:, 0], "error"),
        ("whole floats", lambda x: np.asarray(x).astype(np.float64), "same"),
    ],
    "human": ARRAY_COMMON + [
        ("NaN", lambda x: _set_first(x, np.nan), "error"),
        ("+inf", lambda x: _set_first(x, np.inf), "error"),
        ("negative", lambda x: _set_first(x, -1), "error"),
        ("all-zero row", lambda x: np.vstack([np.zeros(K), np.asarray(x)[1:]]), "error"),
        ("1-D", lambda x: np.asarray(x)[:, 0], "error"),
        ("whole floats", lambda x: np.asarray(x).astype(np.float64), "same"),
    ],
    "index": [
        ("None", lambda x: None, "error"),
        ("floats", lambda x: np.asarray(x) + 0.5, "error"),
        ("out of range", lambda x: _set_first(x, 10**6).astype(np.int64), "error"),
        ("list", lambda x: np.asarray(x).tolist(), "same"),
    ],
    "bins": [
        ("0", lambda x: 0, "error"), ("-1", lambda x: -1, "error"), ("1.5", lambda x: 1.5, "error"),
        ("10**12", lambda x: 10**12, "error"), ("'ten'", lambda x: "ten", "error"), ("True", lambda x: True, "error"),
        ("NaN", lambda x: float("nan"), "error"), ("numpy int", lambda x: np.int64(x), "same"),
    ],
    "int": [
        ("-1", lambda x: -1, "error"), ("1.5", lambda x: 1.5, "error"), ("'ten'", lambda x: "ten", "error"),
        ("True", lambda x: True, "error"), ("NaN", lambda x: float("nan"), "error"),
    ],
    "float": [("NaN", lambda x: float("nan"), "error"), ("'x'", lambda x: "x", "error")],
    "prob": [
        ("NaN", lambda x: float("nan"), "error"), ("-0.5", lambda x: -0.5, "error"),
        ("1.5", lambda x: 1.5, "error"), ("'x'", lambda x: "x", "error"),
    ],
    "str": [("unknown", lambda x: "no_such_option", "error"), ("3", lambda x: 3, "error")],
    "bool": [("'no'", lambda x: "no", "error")],
    "seed": [
        ("-1", lambda x: -1, "error"), ("1.5", lambda x: 1.5, "error"), ("'abc'", lambda x: "abc", "error"),
        ("True", lambda x: True, "error"), ("Generator", lambda x: np.random.default_rng(x), "ok"),
    ],
    "opaque": [("None", lambda x: None, "error")],
}
# Prediction tables may hold strings (answers); 1-D features are one feature; labels of -1 mean "no correct
# candidate" for temperature_curve; without n_classes, a label K is simply one more class.
# Converters (as_numeric_array, check_same_length) promise a numeric array, not finite values.
FAMILIES["convert"] = [f for f in ARRAY_COMMON if f[0] != "empty"]
FAMILIES["any"] = []
FAMILIES["table2d"] = [f for f in FAMILIES["int2d"] if f[0] != "string array"]
FAMILIES["features"] = [f for f in FAMILIES["real2d"] if f[0] != "1-D"]
FAMILIES["qa_labels"] = [f for f in FAMILIES["labels"] if f[0] != "-1"]
# sample weights may be None (no weights); 0/1 correctness with one column per score.
FAMILIES["weights"] = [f for f in FAMILIES["pos1d"] if f[0] != "None"]
FAMILIES["correct2d"] = [f for f in FAMILIES["correct"] if f[0] != "2-D"]
# per-item values with an optional leading batch axis (baan2022.item_mean): (N, 1) is 1-item rows, not an error
FAMILIES["real_batch"] = [f for f in FAMILIES["real1d"] if f[0] != "2-D"]
FAMILIES["inferred_labels"] = [f for f in FAMILIES["labels"] if f[0] != "K"]


def option_kind(name: str, default: Any) -> str | None:
    """Family of an optional parameter, from its name and default; None: not fuzzed."""
    if name in NOT_FUZZED:
        return None
    if name == "seed":
        return "seed"
    if isinstance(default, bool):
        return "bool"
    if "bins" in name and isinstance(default, int):
        return "bins"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, str):
        return "str"
    return None


# --------------------------------------------------------------------------- targets


@dataclass
class Target:
    """One public callable (or calibrator method) and how to call it."""

    name: str
    call: Callable[..., Any]
    signature: inspect.Signature
    qual: str  # key for OVERRIDES / BASE_OPTIONS
    fixed: dict[str, Any] = field(default_factory=dict)  # extra keywords not fuzzed


def _is_record(obj) -> bool:
    """Result containers (NamedTuple, dataclass without __post_init__): built by calibnb, never validated."""
    if isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
        return True
    return dataclasses.is_dataclass(obj) and not hasattr(obj, "__post_init__")


def _private(qual: str) -> bool:
    """A name in a private module: some component after ``calibnb`` starts with ``_``."""
    return any(part.startswith("_") for part in qual.split(".")[1:-1])


def public_callables(package) -> dict[str, Any]:
    """Every callable named in an ``__all__`` of a public module under ``package``, by qualified name.

    An object exported from several modules is named after the deepest public
    one (``calibnb.metrics.binary.ece``, not ``calibnb.ece``). Private modules
    (a name component starting with ``_``, e.g. ``calibnb._streaming`` or
    ``calibnb.data._arrays``) are not public API: their ``__all__`` exists for
    ``tests/test_api.py``, and their functions are reached through the public
    ones that call them. A private module's object is walked only when a public
    module re-exports it (``calibnb.calibrators._peers`` classes re-exported by
    ``calibnb.calibrators``), under its public name.
    """
    found: dict[int, tuple[Any, list[str]]] = {}
    modules = [package] + [importlib.import_module(m.name)
                           for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    for mod in modules:
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if callable(obj):
                found.setdefault(id(obj), (obj, []))[1].append(f"{mod.__name__}.{name}")

    def rank(qual: str) -> int:
        return qual.count(".")

    out = {}
    for obj, names in found.values():
        public = [n for n in names if not _private(n)]
        if public:
            out[max(public, key=rank)] = obj
    return out


def _bootstrap_ci(metric, conf, correct, *, n_resamples=2000, level=0.95, method="percentile", seed=None,
                  vectorized=None, **options):
    """``bootstrap_ci`` with its ``*arrays`` named, so that each array is fuzzed on its own."""
    from calibnb.uncertainty import bootstrap_ci

    return bootstrap_ci(metric, conf, correct, n_resamples=n_resamples, level=level, method=method, seed=seed,
                        vectorized=vectorized, **options)


def _paired_bootstrap_ci(metric, conf_a, correct_a, conf_b, correct_b, *, n_resamples=2000, level=0.95,
                         method="percentile", seed=None, vectorized=None, **options):
    """``paired_bootstrap_ci`` with the arrays of its ``a`` and ``b`` tuples named."""
    from calibnb.uncertainty import paired_bootstrap_ci

    return paired_bootstrap_ci(metric, (conf_a, correct_a), (conf_b, correct_b), n_resamples=n_resamples,
                               level=level, method=method, seed=seed, vectorized=vectorized, **options)


def _rho_gap(conf_a, correct_a, conf_b, correct_b, *, n_bins=10):
    """``si2022.rho_gap(*arrays)`` with two methods' arrays named."""
    from calibnb.papers.si2022 import rho_gap

    return rho_gap(conf_a, correct_a, conf_b, correct_b, n_bins=n_bins)


#: Names an error may use for an adapter's argument: the way the user passed it (``arrays[0]`` of
#: ``bootstrap_ci(metric, *arrays)``, ``a[0]`` of ``paired_bootstrap_ci(metric, a, b)``), or the
#: metric's own argument name when the metric refuses the value.
ALIASES: dict[str, tuple[str, ...]] = {
    "bootstrap_ci:conf": ("arrays[0]",), "bootstrap_ci:correct": ("arrays[1]",),
    "paired_bootstrap_ci:conf_a": ("a[0]", "conf"), "paired_bootstrap_ci:correct_a": ("a[1]", "correct"),
    "paired_bootstrap_ci:conf_b": ("b[0]", "conf"), "paired_bootstrap_ci:correct_b": ("b[1]", "correct"),
    "rho_gap:conf_a": ("arrays[0]",), "rho_gap:correct_a": ("arrays[1]",),
    "rho_gap:conf_b": ("arrays[2]",), "rho_gap:correct_b": ("arrays[3]",),
}


#: Callables whose arrays travel in ``*args`` or tuples: called through a wrapper naming each array.
ADAPTERS: dict[str, Callable[..., Any]] = {
    "calibnb.uncertainty.bootstrap_ci": _bootstrap_ci,
    "calibnb.uncertainty.paired_bootstrap_ci": _paired_bootstrap_ci,
    "calibnb.papers.si2022.rho_gap": _rho_gap,
}


def _calibrator_targets(qualname: str, cls) -> list[Target]:
    short = cls.__name__
    opts = dict(BASE_OPTIONS.get(short, {}))
    fit_sig = inspect.signature(cls.fit)
    fit_args = {p: baseline_value(f"{short}.fit", p) for p in list(fit_sig.parameters)[1:]}

    def construct_and_fit(**options):
        return cls(**{**opts, **options}).fit(**fit_args)

    def fit(**kw):
        return cls(**opts).fit(**kw)

    fitted = cls(**opts).fit(**fit_args)

    def transform(**kw):  # by keyword, as documented
        return fitted.transform(**kw)

    init_sig = inspect.signature(cls.__init__)
    init_sig = init_sig.replace(parameters=list(init_sig.parameters.values())[1:])
    return [
        Target(f"{qualname}(options)", construct_and_fit, init_sig, short),
        Target(f"{qualname}.fit", fit, fit_sig.replace(parameters=list(fit_sig.parameters.values())[1:]), f"{short}.fit"),
        Target(f"{qualname}.transform", transform,
               inspect.signature(cls.transform).replace(
                   parameters=list(inspect.signature(cls.transform).parameters.values())[1:]),
               f"{short}.transform"),
    ]


def targets_of(callables: dict[str, Any], excluded: dict[str, str], calibrator_base=None) -> tuple[list[Target], list[str]]:
    """Targets for the harness, and the names skipped by rule (exceptions, result records)."""
    targets, skipped = [], []
    for qualname, obj in callables.items():
        if qualname in excluded:
            continue
        if isinstance(obj, type) and issubclass(obj, BaseException):
            skipped.append(qualname)
            continue
        if _is_record(obj):
            skipped.append(qualname)
            continue
        if calibrator_base is not None and isinstance(obj, type) and issubclass(obj, calibrator_base):
            if obj is calibrator_base:
                skipped.append(qualname)
                continue
            targets.extend(_calibrator_targets(qualname, obj))
            continue
        short = qualname.rsplit(".", 1)[1]
        call = ADAPTERS.get(qualname, obj)
        targets.append(Target(qualname, call, inspect.signature(call), short))
    return targets, skipped


def baseline_value(qual: str, param: str) -> Any:
    gen = OVERRIDES.get(f"{qual}:{param}") or GENERATORS.get(param)
    if gen is None:
        raise LookupError(param)
    return gen.make()


def _gen(qual: str, param: str) -> Gen | None:
    return OVERRIDES.get(f"{qual}:{param}") or GENERATORS.get(param)


# --------------------------------------------------------------------------- comparison


def _flat_numbers(x: Any, out: list) -> None:
    if x is None or isinstance(x, (str, bytes, bool)):
        return
    if isinstance(x, (int, float, np.number)):
        out.append(float(x))
    elif isinstance(x, np.ndarray):
        if x.dtype.kind in "fiub":
            out.extend(np.asarray(x, dtype=np.float64).ravel()[:10000].tolist())
    elif isinstance(x, (pd.DataFrame, pd.Series)):
        _flat_numbers(x.select_dtypes("number").to_numpy() if isinstance(x, pd.DataFrame)
                      else (x.to_numpy() if x.dtype.kind in "fiub" else None), out)
    elif isinstance(x, dict):
        for v in x.values():
            _flat_numbers(v, out)
    elif isinstance(x, (tuple, list)):
        for v in x:
            _flat_numbers(v, out)
    elif dataclasses.is_dataclass(x):
        for f in dataclasses.fields(x):
            _flat_numbers(getattr(x, f.name), out)
    elif hasattr(x, "get_params"):  # a fitted estimator: its learned attributes
        for k, v in sorted(vars(x).items()):
            if k.endswith("_") and not k.startswith("_"):
                _flat_numbers(v, out)


def numbers_of(x: Any) -> np.ndarray:
    out: list = []
    _flat_numbers(x, out)
    return np.asarray(out, dtype=np.float64)


def same(a: Any, b: Any, rtol: float = 1e-9) -> bool:
    """Numbers of two results equal (NaN equal to NaN) within ``rtol``."""
    x, y = numbers_of(a), numbers_of(b)
    if x.shape != y.shape:
        return False
    return bool(np.allclose(x, y, rtol=rtol, atol=rtol * 1e-3, equal_nan=True))


def has_new_nan(result: Any, baseline: Any) -> bool:
    r = numbers_of(result)
    return bool(np.isnan(r).any()) and not bool(np.isnan(numbers_of(baseline)).any())


# --------------------------------------------------------------------------- running


@dataclass
class Outcome:
    target: str
    slot: str
    family: str
    verdict: str  # "error" | "same" | "ok" | "defect"
    detail: str = ""


def _call(target: Target, kwargs: dict[str, Any]):
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return target.call(**kwargs), None
            except Exception as exc:  # noqa: BLE001 - classified by the caller
                return None, exc
            finally:
                plt.close("all")


def _names_it(exc: BaseException, names: tuple[str, ...]) -> bool:
    msg = str(exc)
    return any(n in msg for n in names)


def _classify(target, slot, family, expect, result, exc, baseline, names, reference=None) -> Outcome:
    if exc is not None:
        if isinstance(exc, (ValueError, TypeError)) and not isinstance(exc, (IndexError, KeyError)):
            # an unknown keyword is Python's own TypeError; several arguments changed at once: any clear error
            if _names_it(exc, names) or (slot in ("**", "*") and expect != "same"):
                if expect in ("same", "same32"):
                    return Outcome(target, slot, family, "defect", f"valid input refused: {type(exc).__name__}: {exc}")
                return Outcome(target, slot, family, "error")
            return Outcome(target, slot, family, "defect",
                           f"{type(exc).__name__} does not name {names[0]!r}: {str(exc)[:200]}")
        return Outcome(target, slot, family, "defect", f"{type(exc).__name__}: {str(exc)[:200]}")
    if expect == "error":
        return Outcome(target, slot, family, "defect", "accepted silently (no error)")
    if expect in ("same", "same32"):
        ref = baseline if reference is None else reference
        # a fit is an optimisation: memory order changes its rounding, not its optimum
        rtol = 1e-5 if target.endswith((".fit", "(options)")) else 1e-9
        if not same(result, ref, rtol):
            return Outcome(target, slot, family, "defect", "result differs from the float64 baseline")
        return Outcome(target, slot, family, "same")
    if has_new_nan(result, baseline):
        return Outcome(target, slot, family, "defect", "result holds NaN")
    return Outcome(target, slot, family, "ok")


def run_target(target: Target) -> tuple[list[Outcome], int]:
    """Every family on every slot of one target; returns the outcomes and the number of calls."""
    params = [p for p in target.signature.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    base: dict[str, Any] = {}
    kinds: dict[str, str | None] = {}
    options = BASE_OPTIONS.get(target.qual, {})
    for p in params:
        gen = _gen(target.qual, p.name)
        if p.default is p.empty:
            if gen is None:
                return [Outcome(target.name, p.name, "-", "defect",
                                f"no baseline generator for required parameter {p.name!r}")], 0
            base[p.name] = gen.make()
            kinds[p.name] = gen.kind if p.name not in NOT_FUZZED else None
        else:
            if p.name in options:
                base[p.name] = options[p.name]
            elif p.name == "seed":
                base[p.name] = 0
            # options are fuzzed by the type of their default; optional arrays (default None) are not
            kinds[p.name] = option_kind(p.name, p.default)
    calls = 1
    baseline, exc = _call(target, base)
    if exc is not None:
        return [Outcome(target.name, "-", "baseline", "defect", f"baseline call fails: {type(exc).__name__}: {exc}")], calls
    outcomes: list[Outcome] = []
    # an unknown option
    result, exc = _call(target, {**base, "no_such_option": 1})
    calls += 1
    outcomes.append(_classify(target.name, "**", "unknown option", "error", result, exc, baseline, ("no_such_option",)))
    names_all = tuple(base)
    # validation helpers name the argument they are told to (their ``name``/``name_a``/``name_b``)
    label_names = tuple(str(base[n]) for n in ("name", "name_a", "name_b") if n in base)
    pair_second = {b: a for a, b in PAIRS if a in base and b in base}
    pair_first = {a: b for a, b in PAIRS if a in base and b in base}
    for p in params:
        kind = kinds.get(p.name)
        if kind is None or kind not in FAMILIES:
            continue
        value = base.get(p.name, p.default)
        fams = list(FAMILIES[kind])
        if kind == "opaque" and p.default is None:
            fams = []
        if kind in ("int", "float", "prob", "str", "bool", "bins", "seed") and p.default is None:
            fams = [f for f in fams if f[0] != "None"]
        for fam, make, expect in fams:
            if expect == "ok" and fam == "empty" and p.name in pair_first:
                expect = "error"
            try:
                bad = make(value)
            except Exception:  # noqa: BLE001 - the family does not apply to this value
                continue
            if bad is None and fam != "None":
                continue
            reference = None
            if expect == "same32":
                result0, exc0 = _call(target, {**base, p.name: np.asarray(bad, dtype=np.float64)})
                calls += 1
                if exc0 is not None:
                    outcomes.append(Outcome(target.name, p.name, fam, "defect",
                                            f"float64 cast of the float32 input fails: {type(exc0).__name__}: {exc0}"))
                    continue
                reference = result0
            result, exc = _call(target, {**base, p.name: bad})
            calls += 1
            partner = pair_second.get(p.name) or pair_first.get(p.name)
            names = ((p.name,) + ALIASES.get(f"{target.qual}:{p.name}", ()) + ((partner,) if partner else ())
                     + label_names)
            outcomes.append(_classify(target.name, p.name, fam, expect, result, exc, baseline, names, reference))
        # a shorter partner: lengths must match
        if (p.name in pair_second or p.name in pair_first) and len(_shape(base[p.name])) >= 1:
            bad = np.asarray(base[p.name])[:-1]
            result, exc = _call(target, {**base, p.name: bad})
            calls += 1
            partner = pair_second.get(p.name) or pair_first.get(p.name)
            outcomes.append(_classify(target.name, p.name, "one row short", "error", result, exc, baseline,
                                      (p.name, partner) + ALIASES.get(f"{target.qual}:{p.name}", ())))
    # whole-call families: one item, all correct, all wrong
    rows = [n for n in base if kinds.get(n) in ("conf", "correct", "probs", "labels", "logits", "human", "real2d",
                                                 "int2d") and len(_shape(base[n])) >= 1 and _shape(base[n])[0] == N]
    if rows:
        one = {n: np.asarray(base[n])[:1] for n in rows}
        result, exc = _call(target, {**base, **one})
        calls += 1
        outcomes.append(_classify(target.name, "*", "one item", "ok", result, exc, baseline, names_all))
    for fam, flag in (("all correct", True), ("all wrong", False)):
        change = {}
        for n in base:
            if kinds.get(n) == "correct" and _shape(base[n]) == (N,):
                change[n] = np.full(N, flag)
        src = next((base[n] for n in ("probs", "logits", "scores") if n in base and _shape(base[n]) == (N, K)), None)
        if src is not None:
            for n in base:
                if kinds.get(n) == "labels" and _shape(base[n]) == (N,):
                    top = np.asarray(src).argmax(1)
                    change[n] = top if flag else (top + 1) % K
        if change:
            result, exc = _call(target, {**base, **change})
            calls += 1
            outcomes.append(_classify(target.name, "*", fam, "ok", result, exc, baseline, names_all))
    return outcomes, calls


def run_harness(targets: list[Target]) -> tuple[list[Outcome], int]:
    outcomes, calls = [], 0
    for t in targets:
        o, c = run_target(t)
        outcomes.extend(o)
        calls += c
    return outcomes, calls


def describe(defects: list[Outcome]) -> str:
    return "\n".join(f"{d.target} [{d.slot} = {d.family}]: {d.detail}" for d in defects)
