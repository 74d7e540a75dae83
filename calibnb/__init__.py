"""calibnb: measure and repair the calibration of model confidence.

A thin library behind one executable notebook per paper (see ``notebooks/``).
The public API is flat: every metric, calibrator, plot and loader is importable
from ``calibnb`` directly. Metrics return fractions (not percentages).
"""

__version__ = "0.1.0"

# --- metrics (calibnb.metrics, calibnb.human, calibnb.scalar) ---------------
from .metrics import (  # noqa: E402
    KSCurves, MacroCEParts, Rewards, bin_indices, brier_top, classwise_ece, classwise_ks, ece, hmr, ice,
    ks_curves, ks_error, macro_ce, macro_ce_parts, mce, nbr, reliability_table, rewards,
    top_r, within_top_r,
)
from .human import (  # noqa: E402
    dist_ce, ent_ce, entropy, human_distribution, majority_label, rank_cs, ranking_ties, tvd,
)
from .scalar import (  # noqa: E402
    classwise_ce, expected_label, ranking_risk, scalar_mae, unli_inverse, unli_transform,
)

# --- plots (calibnb.plots) ----------------------------------------------------
from .plots import (  # noqa: E402,F401
    HistogramData,
    KSGraphData,
    ReliabilityDiagramData,
    histogram_data,
    ks_graph_data,
    plot_histograms,
    plot_ks_graph,
    plot_reliability_diagram,
    probability_histograms,
    reliability_diagram_data,
)

# --- calibrators (calibnb.calibrators, calibnb.training) ---------------------
from .calibrators import (  # noqa: E402
    AverageBaseline,
    BinaryBaseline,
    ConsCal,
    CorrectnessClassifier,
    HistogramBinning,
    IsotonicCalibrator,
    NotFittedError,
    PlattScaling,
    SplineCalibrator,
    TemperatureScaling,
    VectorScaling,
    majority_vote,
    pad_candidates,
    softmax,
    temperature_curve,
)
from .training import train_softmax_regression, training_dynamics  # noqa: E402

# --- reproduction record (calibnb.reproduction) ------------------------------
from .reproduction import Claim, Reproduction, ReproductionError  # noqa: E402,F401

# --- disagreement (calibnb.disagreement) ---
from .disagreement import (  # noqa: E402,F401
    classwise_ece_reference, histogram_divergence, human_calibration_summary, human_temperature_explorer,
    kth_guess, ranking_stability, subsample_votes, votes_explorer, votes_stability,
)

# --- recalibration study (calibnb.recalibration) ---
from .recalibration import (  # noqa: E402,F401
    SplineFigureData, SplineRecovery, SyntheticPopulation, evaluate_methods, plot_spline_figure, spline_figure_data,
    spline_recovery_error,
)

# --- QA study (calibnb.qa) ---
from .qa import (  # noqa: E402,F401
    TrustScores, accuracy_shift_table, calibration_summary, calibration_table, expert_agreement, expert_features,
    normalize_answer, relative_reduction, resample_indices, resampling_explorer, resampling_table, top_confidence,
    trust_scores, conscal_threshold_data, plot_conscal_threshold, conscal_explorer,
)

# --- scalar annotation study (calibnb.annotation) ---
from .annotation import (  # noqa: E402,F401
    CIRCA_VALUES, annotation_cost_study, barycentric, calibration_table, ece_bins_explorer, ece_table,
    f_neutral_explorer, fit_beta, load_circa_examples, nli_values, quantize_beta, random_logit_baseline,
    ranking_agreement, ranking_changes, sample_votes, simulate_scalar_labels,
)

# `calibnb.data` and `calibnb.widgets` are imported as submodules
# (`from calibnb import data`) so that importing calibnb stays light.
