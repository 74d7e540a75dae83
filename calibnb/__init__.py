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

# --- metrics (calibnb.metrics: binary, multiclass, human, scalar) ------------
from .metrics import (  # noqa: E402
    KSCurves, MacroCEParts, Rewards, auto_n_bins, bin_indices, binomial_interval, debiased_ece, smooth_ece, smooth_ece_bandwidth,
    sweep_n_bins, brier_top, classwise_ece, classwise_ks, dist_ce, ece, ent_ce, entropy,
    expected_label, hmr, human_classwise_ce, human_distribution, ice, ks_curves, ks_error, kuiper_error, macro_ce,
    macro_ce_parts, majority_label, mce, nbr, rank_cs, ranking_risk, ranking_ties, reliability_table, rewards,
    scalar_mae, top_r, tvd, unli_inverse, unli_transform, within_top_r,
)

# --- sampling uncertainty (calibnb.uncertainty) -----------------------------
from .uncertainty import (  # noqa: E402,F401
    BootstrapResult, CalibrationTest, batch_axis, bootstrap_ci, cumulative_ks_test, paired_bootstrap_ci,
    spiegelhalter_test,
)
from .uncertainty import kuiper_test  # noqa: E402

# --- every metric with intervals, cross-fitted recalibration (calibnb.apps.summary) --
from .apps.summary import metric_summary, cross_fit, metric_picks, recalibration_comparison  # noqa: E402

# --- plots (calibnb.plots) ----------------------------------------------------
from .plots import (  # noqa: E402,F401
    HistogramData, KSGraphData, ReliabilityDiagramData, histogram_data, ks_graph_data, plot_histograms,
    plot_ks_graph, plot_reliability_diagram, probability_histograms, reliability_diagram_data,
)
from .plots import CORPDiagramData, corp_reliability_data, plot_corp_reliability  # noqa: E402

# --- calibrators (calibnb.calibrators) ----------------------------------------
from .calibrators import (  # noqa: E402
    AverageBaseline, BinaryBaseline, CalibrationWarning, Calibrator, ConsCal, calibration_scorer, CorrectnessClassifier, HistogramBinning,
    IsotonicCalibrator, NotFittedError, PlattScaling, SplineCalibrator, TemperatureScaling, VectorScaling,
    majority_vote, pad_candidates, softmax, temperature_curve,
)
# --- RMS calibration error and selective prediction (calibnb.metrics.selective; plots) ---
from .metrics import (  # noqa: E402
    RiskCoverageCurve, coverage_accuracy_area, risk_coverage_curve, rms_calibration_error, selective_accuracy,
)
from .plots import RiskCoverageData, plot_risk_coverage, risk_coverage_data  # noqa: E402,F401
# --- estimators beyond bins: CORP (calibnb.corp) and the loss gain of recalibration (calibnb.loss_gain) ---
from .corp import CORPReliability, ScoreDecomposition, corp_reliability, score_decomposition  # noqa: E402
from .corp import corp_miscalibration  # noqa: E402
from .loss_gain import LossGain, RecalibrationGain, recalibration_gain  # noqa: E402
from .loss_gain import calibration_loss_gain  # noqa: E402

# --- mergeable statistics of large prediction streams (calibnb.scale.stats) -
# (`calibnb.dask` is imported explicitly: importing calibnb never imports Dask.)
from .scale.stats import CalibrationStats  # noqa: E402,F401

# --- reproduction record (calibnb.record) ------------------------------------
from .record import LedgerError, Reproduction, ReproductionError, load_ledger  # noqa: E402,F401

# --- notebook parameters (calibnb.validation) ---------------------------------
from .validation import check_parameters  # noqa: E402

# --- audit your own model (calibnb.audit: the module is also the call) --------
# Imported on first use, so that `python -m calibnb.audit` runs the module once.


def __getattr__(name):
    if name in ("audit", "AuditResult"):
        import importlib

        module = importlib.import_module(".audit", __name__)
        return module if name == "audit" else module.AuditResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# `calibnb.data`, `calibnb.widgets` and `calibnb.papers` are imported as submodules
# (`from calibnb import data`) so that importing calibnb stays light.

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
