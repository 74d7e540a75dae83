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

Every metric validates its input once (:mod:`calibnb.validation`) and returns
fractions, not percentages.
"""

from . import binary, estimators, human, multiclass, scalar
from .binary import *  # noqa: F401,F403
from .estimators import *  # noqa: F401,F403
from .human import *  # noqa: F401,F403
from .multiclass import *  # noqa: F401,F403
from .scalar import *  # noqa: F401,F403
from . import selective  # noqa: E402  (RMS calibration error, selective prediction)
from .selective import *  # noqa: F401,F403

# Exactly the names of the modules, each once (tests/test_api.py checks).
__all__ = [*binary.__all__, *estimators.__all__, *multiclass.__all__, *human.__all__, *scalar.__all__,
           *selective.__all__]
