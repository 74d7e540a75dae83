"""Recalibration methods: fit on a calibration split, apply to new data.

Every calibrator follows one protocol: ``fit(...)`` on calibration data
returns ``self``; ``transform(...)`` maps new scores to calibrated
probabilities or confidences; fitted attributes end in ``_``; ``transform``
before ``fit`` raises :class:`NotFittedError` (a ``ValueError``); inputs are
never modified.

* :class:`TemperatureScaling`, :func:`temperature_curve`, :func:`pad_candidates`
  -- Guo et al. 2017; Si et al. 2022 §2.2, §3.2 (candidate sets), App. A.
"""

from ._common import NotFittedError
from ._spline import SplineCalibrator, natural_spline_basis
from ._temperature import TemperatureScaling, pad_candidates, softmax, temperature_curve

__all__ = [
    "NotFittedError",
    "SplineCalibrator",
    "TemperatureScaling",
    "natural_spline_basis",
    "pad_candidates",
    "softmax",
    "temperature_curve",
]
