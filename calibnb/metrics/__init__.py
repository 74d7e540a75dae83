"""Calibration metrics, one module per input type.

* :mod:`calibnb.metrics.binary` -- confidences and correctness ``(conf, correct)``:
  ECE, MCE, ICE, MacroCE, rewards, HMR, Brier, KS error, reliability tables.
* :mod:`calibnb.metrics.multiclass` -- class probabilities and labels
  ``(probs, labels)``: top-r and within-top-r reductions, class-wise ECE, NBR.
* :mod:`calibnb.metrics.human` -- class probabilities against human vote counts
  ``(probs, human)``: DistCE, EntCE, RankCS, the class-wise CE of Jiang et al.
* :mod:`calibnb.metrics.scalar` -- class probabilities against scalar labels.

Every metric validates its input once (:mod:`calibnb.validation`) and returns
fractions, not percentages.
"""

from .binary import (
    KSCurves,
    MacroCEParts,
    Rewards,
    bin_indices,
    brier_top,
    ece,
    hmr,
    ice,
    ks_curves,
    ks_error,
    macro_ce,
    macro_ce_parts,
    mce,
    reliability_table,
    rewards,
)
from .human import (
    dist_ce,
    ent_ce,
    entropy,
    human_classwise_ce,
    human_distribution,
    majority_label,
    rank_cs,
    ranking_ties,
    tvd,
)
from .multiclass import classwise_ece, nbr, top_r, within_top_r
from .scalar import expected_label, ranking_risk, scalar_mae, unli_inverse, unli_transform

__all__ = [
    # binary
    "bin_indices",
    "ece",
    "mce",
    "reliability_table",
    "ice",
    "macro_ce",
    "macro_ce_parts",
    "MacroCEParts",
    "rewards",
    "Rewards",
    "hmr",
    "brier_top",
    "ks_error",
    "ks_curves",
    "KSCurves",
    # multiclass
    "top_r",
    "within_top_r",
    "classwise_ece",
    "nbr",
    # human
    "human_distribution",
    "majority_label",
    "entropy",
    "tvd",
    "dist_ce",
    "ent_ce",
    "rank_cs",
    "ranking_ties",
    "human_classwise_ce",
    # scalar
    "expected_label",
    "scalar_mae",
    "ranking_risk",
    "unli_transform",
    "unli_inverse",
]
