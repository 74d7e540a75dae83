"""Calibration metrics, one module per input type.

* :mod:`calibnb.metrics.binary` -- confidences and correctness ``(conf, correct)``:
  ECE, MCE, ICE, MacroCE, rewards, HMR, Brier, KS error, reliability tables
  (batch axis (S, N) -> (S,) and sample weights).
* :mod:`calibnb.metrics.estimators` -- smooth ECE and debiased ECE.
* :mod:`calibnb.metrics.multiclass` -- class probabilities and labels
  ``(probs, labels)``: top-r and within-top-r reductions, class-wise ECE, NBR.
* :mod:`calibnb.metrics.selective` -- RMS calibration error and selective
  prediction (risk-coverage curve, its area, accuracy at a coverage).
* :mod:`calibnb.metrics.human` -- class probabilities against human vote counts
  ``(probs, human)``: DistCE, EntCE, RankCS, the class-wise CE of Jiang et al.
* :mod:`calibnb.metrics.scalar` -- class probabilities against scalar labels.
* :mod:`calibnb.metrics.registry` -- the declaration of every metric (:func:`~calibnb.metrics.registry.metrics`).
* :mod:`calibnb.metrics.batch` -- :func:`batch_axis`, the mark of a metric that takes a batch axis.

Every metric validates its input once (:mod:`calibnb.validation`) and returns
fractions, not percentages.
"""

# (import order = registration order of the metrics: calibnb.metrics.registry)
from . import batch, binary, estimators, selective, multiclass, human, scalar, registry
from .batch import *  # noqa: F401,F403
from .binary import *  # noqa: F401,F403
from .estimators import *  # noqa: F401,F403
from .human import *  # noqa: F401,F403
from .multiclass import *  # noqa: F401,F403
from .scalar import *  # noqa: F401,F403
from .selective import *  # noqa: F401,F403

# Exactly the names of the modules, each once (tests/test_api.py checks).
__all__ = [*batch.__all__, *binary.__all__, *estimators.__all__, *multiclass.__all__,
           *human.__all__, *scalar.__all__,
           *selective.__all__]
