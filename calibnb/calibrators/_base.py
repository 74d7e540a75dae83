"""The base class of every calibrator: a scikit-learn estimator and transformer."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

from ..metrics import registry
from ..validation import check_choice, check_correct, check_labels

__all__ = ["Calibrator", "NotFittedError", "CalibrationWarning", "calibration_scorer", "scorer_metrics"]


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


class Calibrator(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
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
    * ``fit`` sets ``n_features_in_``: 1 for 1-D scores, the number of
      columns of a 2-D input (classes, features or checkpoints);
    * ``fit_transform(X, y)`` equals ``fit(X, y).transform(X)``;
    * inputs are never modified;
    * ``transform`` keeps its documented signature (``ts.transform(logits=z)``
      works): scikit-learn's ``set_output`` wrapping, which would rename its
      argument ``X``, is switched off (``auto_wrap_output_keys=None``);
      calibrators return NumPy arrays.

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

    def __init_subclass__(cls, auto_wrap_output_keys=None, **kwargs: Any) -> None:
        # no set_output wrapping for any calibrator (it would rename transform's argument to X)
        super().__init_subclass__(auto_wrap_output_keys=auto_wrap_output_keys, **kwargs)

    def fit(self, X: Any, y: Any = None) -> "Calibrator":  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def transform(self, X: Any) -> np.ndarray:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """``fit(X, y, **fit_params).transform(X)``."""
        return self.fit(X, y, **fit_params).transform(X)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, self._fitted_attribute)

    def _set_n_features_in(self, X: np.ndarray) -> None:
        """Record ``n_features_in_`` of the validated fit input: 1 for 1-D scores, else its columns."""
        self.n_features_in_ = 1 if X.ndim == 1 else int(X.shape[1])

    def _check_fitted(self) -> None:
        """Raise :class:`NotFittedError` unless ``fit`` has been called."""
        if not self.__sklearn_is_fitted__():
            name = type(self).__name__
            raise NotFittedError(f"This {name} is not fitted yet; call {name}.fit(...) before using it.")


def scorer_metrics() -> dict[str, tuple[Any, bool]]:
    """The metrics :func:`calibration_scorer` accepts: name -> (function, higher_is_better).

    Every metric of :mod:`calibnb.metrics.registry` of ``(conf, correct)``
    (``inputs="binary"``, computed by a function, not a per-item mean), under
    its **registry key** with its declared options bound (``"ece_mass"`` is
    ``functools.partial(ece, binning="mass")``, ``"corp_mcb_log"`` is
    ``corp_miscalibration(..., score="log")``), so that metrics sharing one
    function are each reachable. The name of each public function (``"ece"``,
    ``"ks_error"``, ``"brier_top"``, ...) is kept as well, with the function's
    own defaults, where no registry key has that name.

    Examples
    --------
    >>> m = scorer_metrics()
    >>> m["ece_mass"][0].keywords, m["ece"][0].__name__
    ({'binning': 'mass'}, 'ece')
    >>> m["r_o"][1], m["kuiper"][1]
    (True, False)
    """
    import functools

    keys: dict[str, tuple[Any, bool]] = {}
    names: dict[str, tuple[Any, bool]] = {}
    for m in registry.metrics():
        if m.inputs != "binary" or m.form not in ("binary", "loop", "own"):
            continue
        fn = functools.partial(m.fn, **dict(m.options)) if m.options else m.fn
        if fn is not m.fn:
            functools.update_wrapper(fn, m.fn)
        keys[m.key] = (fn, m.higher_is_better)
        if not m.fn.__name__.startswith("_"):
            names.setdefault(m.fn.__name__, (m.fn, m.higher_is_better))
    return {**keys, **{k: v for k, v in names.items() if k not in keys}}


def calibration_scorer(metric: str = "ece", **options: Any):
    """A scikit-learn scorer ``scorer(calibrator, X, y)`` from a calibnb metric of the top-1 prediction.

    For ``GridSearchCV``, ``cross_validate`` and the like. The fitted
    calibrator transforms ``X``; the top-1 confidence and its correctness are
    then scored with ``calibnb.<metric>(conf, correct, **options)``:

    * ``transform`` returns ``(N, K)`` probabilities: ``conf`` is their row
      maximum and ``correct`` says whether its class is the label ``y``;
    * ``transform`` returns 1-D scores for ``(N, K)`` input (e.g.
      :class:`SplineCalibrator` in its default top-1 mode): ``conf`` is the
      output and ``correct`` says whether the argmax of ``X`` is ``y``;
    * 1-D input (the binary form): ``conf`` is the output, ``correct`` is ``y``.

    Scores follow scikit-learn's "greater is better": an error (ECE, MCE, ICE,
    MacroCE, top-1 Brier, KS error, ...) is negated, HMR is returned as is (the
    direction declared in :mod:`calibnb.metrics.registry`).

    Parameters
    ----------
    metric : str
        A metric of ``(conf, correct)`` in :mod:`calibnb.metrics.registry` (:func:`scorer_metrics`), by its
        registry key ("ece_width", "ece_mass", "r_o", "kuiper", "corp_mcb_brier", "ts_gain_log", ...; the
        declared options bound) or by its function's name ("ece", "mce", "ice", "macro_ce", "hmr",
        "ks_error", "brier_top", "smooth_ece", "debiased_ece", ...; the function's defaults). The loss gain
        ("ts_gain_log", "ts_gain_brier") draws folds: pass ``seed=`` for a repeatable score.
    **options
        Keyword options of the metric (e.g. ``n_bins=15``).

    Examples
    --------
    >>> from sklearn.model_selection import cross_val_score
    >>> from calibnb import TemperatureScaling
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(600, 3)) * 3
    >>> y = (rng.random((600, 1)) < np.cumsum(np.exp(z / 2) / np.exp(z / 2).sum(1, keepdims=True), 1)).argmax(1)
    >>> scores = cross_val_score(TemperatureScaling(), z, y, cv=3, scoring=calibration_scorer("ece", n_bins=10))
    >>> bool(np.all(scores <= 0))
    True
    """
    import functools
    import inspect

    known = scorer_metrics()
    check_choice(metric, tuple(known), "metric")
    fn, higher_is_better = known[metric]
    sign = 1.0 if higher_is_better else -1.0
    base, bound = (fn.func, set(fn.keywords)) if isinstance(fn, functools.partial) else (fn, set())
    accepted = [p.name for p in inspect.signature(base).parameters.values()
                if p.kind == p.KEYWORD_ONLY and p.name not in bound]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise TypeError(f"options has unknown option(s) {unknown} for calibnb.{metric}; it takes {accepted}.")

    def scorer(calibrator: Any, X: Any, y: Any) -> float:
        out = np.asarray(calibrator.transform(X))
        x = np.asarray(X)
        if out.ndim == 2:
            y = check_labels(y, out.shape[0], out.shape[1], name="y", other="X")
            conf, correct = out.max(axis=1), out.argmax(axis=1) == y
        elif x.ndim == 2:
            y = check_labels(y, x.shape[0], x.shape[1], name="y", other="X")
            conf, correct = out, x.argmax(axis=1) == y
        else:
            conf, correct = out, check_correct(y, out.shape[0], name="y", other="X")
        return sign * float(fn(conf, correct, **options))

    scorer.__name__ = f"{'neg_' if sign < 0 else ''}{metric}"
    return scorer

