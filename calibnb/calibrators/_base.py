"""The base class of every calibrator: a scikit-learn estimator and transformer."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

__all__ = ["Calibrator", "NotFittedError", "CalibrationWarning"]


class CalibrationWarning(ConvergenceWarning):
    """A fit that did not find what it was asked for: an optimum on a search bound, an iteration limit.

    A subclass of :class:`sklearn.exceptions.ConvergenceWarning`, so
    ``warnings.filterwarnings("error", category=ConvergenceWarning)`` (or
    ``CalibrationWarning``) turns every such fit into an error, and
    ``"ignore"`` silences it. The message names the bound or limit that was
    hit and the option to change.

    Examples
    --------
    >>> import warnings
    >>> from sklearn.exceptions import ConvergenceWarning
    >>> issubclass(CalibrationWarning, ConvergenceWarning)
    True
    """


class NotFittedError(_SklearnNotFittedError):
    """Raised when ``transform`` (or another method needing a fit) is called before ``fit``.

    A subclass of :class:`sklearn.exceptions.NotFittedError` (itself a
    ``ValueError`` and an ``AttributeError``), so code catching either
    scikit-learn's or calibnb's error catches this one.
    """


class Calibrator(TransformerMixin, BaseEstimator):
    """Base class of calibnb's calibrators (scikit-learn estimator API).

    A calibrator is fitted on calibration data and maps new scores to
    calibrated probabilities or confidences:

    * options are keyword-only ``__init__`` arguments stored unchanged, so
      ``get_params``, ``set_params``, :func:`sklearn.base.clone` and ``repr``
      come from :class:`sklearn.base.BaseEstimator`; they are validated in
      ``fit``;
    * ``fit(X, y)`` returns ``self``; what it learns is stored in attributes
      ending in ``_``;
    * ``transform(X)`` before ``fit`` raises :class:`NotFittedError`;
    * ``fit_transform(X, y)`` equals ``fit(X, y).transform(X)``;
    * inputs are never modified.

    Subclasses implement ``fit`` and ``transform`` and name, in
    ``_fitted_attribute``, the attribute whose presence means "fitted".

    Examples
    --------
    >>> from sklearn.base import clone
    >>> from calibnb import TemperatureScaling
    >>> ts = TemperatureScaling(objective="ece", n_bins=15)
    >>> ts
    TemperatureScaling(n_bins=15, objective='ece')
    >>> clone(ts).get_params()["n_bins"]
    15
    """

    _fitted_attribute: str = ""

    def fit(self, X: Any, y: Any = None) -> "Calibrator":  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def transform(self, X: Any) -> np.ndarray:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """``fit(X, y, **fit_params).transform(X)``."""
        return self.fit(X, y, **fit_params).transform(X)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, self._fitted_attribute)

    def _check_fitted(self) -> None:
        """Raise :class:`NotFittedError` unless ``fit`` has been called."""
        if not self.__sklearn_is_fitted__():
            name = type(self).__name__
            raise NotFittedError(f"This {name} is not fitted yet; call {name}.fit(...) before using it.")
