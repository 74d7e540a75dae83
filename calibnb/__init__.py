"""calibnb: measure and repair the calibration of model confidence.

A thin library behind one executable notebook per paper (see ``notebooks/``).
``calibnb`` exposes the generic layer (metrics, calibrators, plot data/draw
pairs, the reproduction record); loaders are in :mod:`calibnb.data`, panels in
:mod:`calibnb.widgets`, and the code of one paper's notebook in
:mod:`calibnb.papers` (never re-exported here).

Conventions (the same in every module):

* **Arguments.** Data arguments come first and positional -- ``conf, correct``
  (1-D confidences and 0/1 correctness), ``probs, labels`` ((N, K)
  probabilities and integer labels), ``probs, human`` (``human``: (N, K) human
  vote counts, always under that name); options are keyword-only.
* **Seeds.** ``seed=None | int | numpy.random.Generator``: None draws fresh
  entropy, an int is reproducible, a Generator is used as is
  (:func:`calibnb.validation.as_rng`).
* **Units.** Results are fractions, never percentages; a ``percent=`` option
  exists only where a paper prints percentages.
* **Errors.** Bad input raises ``ValueError``/``TypeError`` naming the argument
  (:mod:`calibnb.validation` holds every check); ``transform`` before ``fit``
  raises :class:`NotFittedError` (a scikit-learn ``NotFittedError``).
* **Calibrators** are scikit-learn estimators (:class:`Calibrator`).
* **Figures** are pairs: a pure ``*_data`` function and a ``plot_*`` that draws.
"""

__version__ = "0.1.0"

# Every public name is imported from its module on first use (PEP 562), so that `import calibnb` costs a
# few milliseconds and a process loads only what it touches: scikit-learn and scipy.stats (about 0.7 s of
# CPU at import, 2026-11) come with the calibrators and the summary, not with `python -m calibnb.audit --help`
# or the git filter of calibnb.teaching (issue 31). `from calibnb import ece` and `cn.ece` work as before;
# submodules (`cn.metrics`, `cn.data`, `cn.widgets`) are imported when first reached, too.
_EXPORTS = {
    # metrics (calibnb.metrics: binary, multiclass, human, scalar; estimators beyond bins; selective prediction)
    ".metrics": (
        "KSCurves", "MacroCEParts", "Rewards", "auto_n_bins", "bin_indices", "binomial_interval", "debiased_ece",
        "smooth_ece", "smooth_ece_bandwidth", "sweep_n_bins", "brier_top", "classwise_ece", "classwise_ks", "dist_ce",
        "ece", "ent_ce", "entropy", "expected_label", "hmr", "human_classwise_ce", "human_distribution", "ice",
        "ks_curves", "ks_error", "kuiper_error", "macro_ce", "macro_ce_parts", "majority_label", "mce", "nbr",
        "rank_cs", "ranking_risk", "ranking_ties", "reliability_table", "rewards", "scalar_mae", "top_r", "tvd",
        "unli_inverse", "unli_transform", "within_top_r", "RiskCoverageCurve", "coverage_accuracy_area",
        "risk_coverage_curve", "rms_calibration_error", "selective_accuracy",
    ),
    # sampling uncertainty (calibnb.uncertainty)
    ".uncertainty": (
        "BootstrapResult", "CalibrationTest", "batch_axis", "bootstrap_ci", "cumulative_ks_test",
        "paired_bootstrap_ci", "spiegelhalter_test", "kuiper_test",
    ),
    # every metric with intervals, cross-fitted recalibration (calibnb.apps.summary)
    ".apps.summary": ("metric_summary", "cross_fit", "metric_picks", "recalibration_comparison"),
    # plots (calibnb.plots): *_data / plot_* pairs
    ".plots": (
        "HistogramData", "KSGraphData", "ReliabilityDiagramData", "histogram_data", "ks_graph_data",
        "plot_histograms", "plot_ks_graph", "plot_reliability_diagram", "probability_histograms",
        "reliability_diagram_data", "CORPDiagramData", "corp_reliability_data", "plot_corp_reliability",
        "RiskCoverageData", "plot_risk_coverage", "risk_coverage_data",
    ),
    # calibrators (calibnb.calibrators): scikit-learn estimators
    ".calibrators": (
        "AverageBaseline", "BinaryBaseline", "CalibrationWarning", "Calibrator", "ConsCal", "calibration_scorer",
        "CorrectnessClassifier", "HistogramBinning", "IsotonicCalibrator", "NotFittedError", "PlattScaling",
        "SplineCalibrator", "TemperatureScaling", "VectorScaling", "majority_vote", "pad_candidates", "softmax",
        "temperature_curve",
    ),
    # estimators beyond bins: CORP (calibnb.corp) and the loss gain of recalibration (calibnb.loss_gain)
    ".corp": ("CORPReliability", "ScoreDecomposition", "corp_reliability", "score_decomposition",
              "corp_miscalibration"),
    ".loss_gain": ("LossGain", "RecalibrationGain", "recalibration_gain", "calibration_loss_gain"),
    # mergeable statistics of large prediction streams (calibnb.scale.stats; calibnb.dask is imported on its own)
    ".scale.stats": ("CalibrationStats",),
    # reproduction record (calibnb.record)
    ".record": ("LedgerError", "Reproduction", "ReproductionError", "load_ledger"),
    # notebook parameters (calibnb.validation)
    ".validation": ("check_parameters",),
}
_ORIGIN = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name):
    import importlib

    module = _ORIGIN.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # later lookups are plain attribute reads
        return value
    if name in ("audit", "AuditResult"):
        # audit your own model: the module is also the call. Imported on first use, so that
        # `python -m calibnb.audit` runs the module once.
        audit = importlib.import_module(".audit", __name__)
        return audit if name == "audit" else audit.AuditResult
    if not name.startswith("__"):
        import importlib.util

        if importlib.util.find_spec(f"{__name__}.{name}") is not None:  # a submodule: cn.metrics, cn.data
            return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_ORIGIN) | {"audit", "AuditResult"})


__all__ = [
    # metrics: binary (conf, correct)
    "bin_indices", "ece", "mce", "reliability_table", "ice", "macro_ce", "macro_ce_parts", "MacroCEParts",
    "rewards", "Rewards", "hmr", "brier_top", "ks_error", "kuiper_error", "ks_curves", "KSCurves", "auto_n_bins", "sweep_n_bins", "binomial_interval",
    # metrics: estimators beyond binned ECE
    "smooth_ece", "smooth_ece_bandwidth", "debiased_ece",
    # metrics: CORP reliability (PAV) and score decomposition (MCB - DSC + UNC)
    "CORPReliability", "corp_reliability", "ScoreDecomposition", "score_decomposition", "corp_miscalibration",
    # metrics: calibration error as the cross-fitted loss gain of recalibration (and the refinement loss)
    "LossGain", "RecalibrationGain", "recalibration_gain", "calibration_loss_gain",
    # sampling uncertainty: bootstrap intervals and calibration tests
    "BootstrapResult", "bootstrap_ci", "paired_bootstrap_ci", "batch_axis", "CalibrationTest",
    "spiegelhalter_test", "cumulative_ks_test", "kuiper_test",
    # metrics: multiclass (probs, labels)
    "top_r", "within_top_r", "classwise_ece", "classwise_ks", "nbr",
    # metrics: human vote counts (probs, human)
    "human_distribution", "majority_label", "entropy", "tvd", "dist_ce", "ent_ce", "rank_cs", "ranking_ties",
    "human_classwise_ce",
    # metrics: scalar labels
    "expected_label", "scalar_mae", "ranking_risk", "unli_transform", "unli_inverse",
    # every applicable metric with intervals; cross-fitted recalibration comparison
    "metric_summary", "cross_fit", "recalibration_comparison", "metric_picks",
    # plots: *_data / plot_* pairs
    "ReliabilityDiagramData", "reliability_diagram_data", "plot_reliability_diagram",
    "KSGraphData", "ks_graph_data", "plot_ks_graph",
    "HistogramData", "histogram_data", "probability_histograms", "plot_histograms",
    "CORPDiagramData", "corp_reliability_data", "plot_corp_reliability",
    # calibrators
    "Calibrator", "NotFittedError", "CalibrationWarning", "calibration_scorer", "TemperatureScaling", "temperature_curve", "pad_candidates", "softmax",
    "SplineCalibrator", "VectorScaling", "PlattScaling", "IsotonicCalibrator", "HistogramBinning",
    "AverageBaseline", "BinaryBaseline", "CorrectnessClassifier", "ConsCal", "majority_vote",
    # metrics: RMS calibration error and selective prediction (language-model evaluations), and their figure
    "rms_calibration_error", "risk_coverage_curve", "RiskCoverageCurve", "coverage_accuracy_area", "selective_accuracy",
    "RiskCoverageData", "risk_coverage_data", "plot_risk_coverage",
    # mergeable statistics of large prediction streams (calibnb.dask is imported on its own)
    "CalibrationStats",
    # reproduction record
    "Reproduction", "ReproductionError", "LedgerError", "load_ledger",
    # notebooks: check the parameters papermill injected (first statement of the import cell)
    "check_parameters",
    # audit your own model: calibnb.audit(df) -> AuditResult (also python -m calibnb.audit FILE)
    "audit", "AuditResult",
]
