"""Recalibration methods: fit on a calibration split, apply to new data.

Every calibrator is a scikit-learn estimator built on :class:`Calibrator`
(``sklearn.base.BaseEstimator`` + ``TransformerMixin``): options are
keyword-only, so ``get_params``/``set_params``, :func:`sklearn.base.clone` and
``repr`` work and calibrators can be tuned with ``GridSearchCV``; ``fit(...)``
on calibration data returns ``self``; ``transform(...)`` maps new scores to
calibrated probabilities or confidences; ``fit_transform`` equals
``fit(...).transform(...)``; fitted attributes end in ``_``; ``transform``
before ``fit`` raises :class:`NotFittedError` (a subclass of
``sklearn.exceptions.NotFittedError``); inputs are never modified.
:func:`calibration_scorer` turns a calibnb metric into a scikit-learn scorer
for such searches.

* :class:`TemperatureScaling`, :func:`temperature_curve`, :func:`pad_candidates`
  -- Guo et al. 2017; Si et al. 2022 §2.2, §3.2 (candidate sets), App. A.
* :class:`SplineCalibrator` -- Gupta et al. 2021 §4 (top-r, within-top-r, class k).
* :class:`AverageBaseline`, :class:`BinaryBaseline`, :class:`CorrectnessClassifier`
  -- Si et al. 2022 §5.1, App. B.
* :class:`ConsCal`, :func:`majority_vote` -- Si et al. 2022 §5.2-5.3, App. B, D, E.
* :class:`VectorScaling`, :class:`PlattScaling`, :class:`IsotonicCalibrator`,
  :class:`HistogramBinning` -- the peers of Gupta et al. 2021 §6. Matrix
  scaling and Dirichlet calibration are left out (see ``_peers``).

Label smoothing is a training-time method: see :func:`calibnb.papers.si2022.train_softmax_regression`.
"""

from ._baselines import AverageBaseline, BinaryBaseline, CorrectnessClassifier
from ._base import CalibrationWarning, Calibrator, NotFittedError, calibration_scorer
from ._conscal import ConsCal, majority_vote
from ._peers import HistogramBinning, IsotonicCalibrator, PlattScaling, VectorScaling
from ._spline import SplineCalibrator, natural_spline_basis
from ._temperature import TemperatureScaling, pad_candidates, softmax, temperature_curve

__all__ = [
    "Calibrator",
    "CalibrationWarning",
    "calibration_scorer",
    "AverageBaseline",
    "BinaryBaseline",
    "ConsCal",
    "CorrectnessClassifier",
    "HistogramBinning",
    "IsotonicCalibrator",
    "PlattScaling",
    "VectorScaling",
    "majority_vote",
    "NotFittedError",
    "SplineCalibrator",
    "TemperatureScaling",
    "natural_spline_basis",
    "pad_candidates",
    "softmax",
    "temperature_curve",
]
