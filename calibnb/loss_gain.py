"""Calibration error as the loss gain of post-hoc recalibration (Berta, Holzmüller, Jordan & Bach 2025).

:func:`recalibration_gain` cross-fits a calibrator (temperature scaling by
default) and reports, in log loss and Brier score, how much the loss drops
when the calibrator is applied -- the calibration error in the sense of
"refine, then calibrate" -- and the loss that remains, the *refinement* loss.

Conventions (``tests/test_loss_gain.py`` checks them):

* **folds**: :class:`sklearn.model_selection.KFold` with ``shuffle=True`` and
  ``random_state = seed_int(seed) % 2**32`` (probmetrics' ``CVSplitter`` uses
  a ``StratifiedKFold`` instead; the estimate differs by the fold noise only);
* **log loss**: probabilities clipped to :math:`[\\epsilon, 1-\\epsilon]`,
  :math:`\\epsilon` the float64 machine epsilon, as scikit-learn's
  ``log_loss`` does, so that a recalibrated probability of exactly 0 (isotonic
  regression, histogram binning) costs :math:`-\\log\\epsilon \\approx 36`
  instead of infinity;
* **Brier score**: for K-class logits the sum over classes
  :math:`\\sum_k (p_k - 1[y = k])^2` (scikit-learn's multiclass
  ``brier_score_loss`` with ``scale_by_half=False``; probmetrics' ``BrierLoss``;
  twice scikit-learn's binary value); for 1-D confidences the one-column
  :math:`(y - c)^2` (scikit-learn's binary ``brier_score_loss``);
* **temperature scaling**: calibnb's :class:`~calibnb.TemperatureScaling` (NLL,
  bounded Brent search on :math:`\\log\\tau`), not probmetrics' variant that
  mixes the scaled probabilities with the uniform distribution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .validation import (
    as_float_array, check_choice, check_conf, check_correct, check_labels, check_logits, check_positive_int,
    check_sample_weight, check_scalar_in_range, seed_int,
)
from . import calibrators as c
from .uncertainty import BootstrapResult
from .metrics.registry import Metric, register

__all__ = ["LossGain", "RecalibrationGain", "recalibration_gain", "calibration_loss_gain"]

_EPS = float(np.finfo(np.float64).eps)
_NAMES = ("temperature", "vector", "platt", "isotonic", "histogram")
_ONLY_LOGITS = ("vector",)
_ONLY_CONF = ("platt", "isotonic", "histogram")
_BATCH_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class LossGain:
    """One loss before and after cross-fitted recalibration.

    Attributes
    ----------
    loss : float
        Mean loss of the original forecasts.
    refinement : BootstrapResult
        Mean loss after recalibration (the refinement loss), with its interval.
    gain : BootstrapResult
        ``loss - refinement`` (the calibration error), with its paired interval.
    """

    loss: float
    refinement: BootstrapResult
    gain: BootstrapResult


@dataclass(frozen=True)
class RecalibrationGain:
    """What :func:`recalibration_gain` returns.

    Attributes
    ----------
    calibrator : str
        The calibrator's name (or class name).
    log, brier : LossGain
        Log loss and Brier score before and after recalibration.
    n_folds : int
    level : float
    recalibrated : ndarray
        The cross-fitted recalibrated forecasts, in the input's row order:
        ``(N, K)`` probabilities for logits, ``(N,)`` confidences otherwise.
    """

    calibrator: str
    log: LossGain
    brier: LossGain
    n_folds: int
    level: float
    recalibrated: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """One row per loss: ``loss, refinement, refinement_low, refinement_high, gain, gain_low, gain_high``."""
        rows = {}
        for name in ("log", "brier"):
            g = getattr(self, name)
            rows[name] = dict(loss=g.loss, refinement=g.refinement.estimate, refinement_low=g.refinement.low,
                              refinement_high=g.refinement.high, gain=g.gain.estimate, gain_low=g.gain.low,
                              gain_high=g.gain.high)
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("loss_name")


def _item_losses(p: np.ndarray, y: np.ndarray, binary: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per-item log loss and Brier score of probabilities ``p`` (1-D conf or (N, K)) for outcomes ``y``."""
    if binary:
        q = np.clip(p, _EPS, 1.0 - _EPS)
        log = -(y * np.log(q) + (1.0 - y) * np.log1p(-q))
        return log, (y - p) ** 2
    rows = np.arange(p.shape[0])
    log = -np.log(np.clip(p[rows, y], _EPS, 1.0 - _EPS))
    onehot = np.zeros_like(p)
    onehot[rows, y] = 1.0
    return log, np.sum((p - onehot) ** 2, axis=1)


def _make_calibrator(calibrator: Any, binary: bool):

    if isinstance(calibrator, str):
        check_choice(calibrator, _NAMES, "calibrator")
        if binary and calibrator in _ONLY_LOGITS:
            raise ValueError(f"calibrator {calibrator!r} needs (N, K) logits; scores is 1-D (confidences).")
        if not binary and calibrator in _ONLY_CONF:
            raise ValueError(
                f"calibrator {calibrator!r} recalibrates 1-D confidences; scores is (N, K) logits. Pass the "
                "top-label confidence and its correctness (or binary P(positive) and outcomes) instead.")
        est = {"temperature": lambda: c.TemperatureScaling(), "vector": lambda: c.VectorScaling(),
               "platt": lambda: c.PlattScaling(logit_input=True), "isotonic": lambda: c.IsotonicCalibrator(),
               "histogram": lambda: c.HistogramBinning()}[calibrator]()
        return calibrator, est
    if isinstance(calibrator, type) or not all(hasattr(calibrator, a) for a in ("fit", "transform", "get_params")):
        raise TypeError(
            f"calibrator must be one of {list(_NAMES)} or a calibrator instance with fit, transform and "
            f"get_params, so that scikit-learn's clone can copy it for each fold (e.g. "
            f"calibnb.TemperatureScaling()); got {calibrator!r}.")
    return type(calibrator).__name__, calibrator


def recalibration_gain(scores, labels, *, calibrator: Any = "temperature", sample_weight=None, n_folds: int = 5,
                       n_resamples: int = 1000, level: float = 0.95, seed=None) -> RecalibrationGain:
    """Cross-fitted loss gain of a calibrator, with a paired interval, and the refinement loss.

    The rows are split into ``n_folds`` folds (:class:`sklearn.model_selection.KFold`,
    shuffled); for each fold a copy of the calibrator
    (:func:`sklearn.base.clone`) is fitted on the other folds and applied to
    it, so every recalibrated forecast :math:`\\hat g(f(x_i))` comes from a fit
    that did not see item i. For a proper loss :math:`\\ell` (log loss, Brier):

    .. math::

        \\mathrm{CalErr}_\\ell = \\frac1N \\sum_{i=1}^{N}
        \\big[\\ell(f(x_i), y_i) - \\ell(\\hat g(f(x_i)), y_i)\\big],\\qquad
        \\mathrm{Refinement}_\\ell = \\frac1N \\sum_{i=1}^{N} \\ell(\\hat g(f(x_i)), y_i)

    (weighted means :math:`\\sum_i w_i \\ell_i / \\sum_i w_i` with ``sample_weight``;
    the calibrator itself is fitted unweighted, as in
    :func:`calibnb.recalibration_comparison`),
    so that loss = calibration error + refinement (Berta et al. 2025, Eq. 2
    and Section 3, with the calibration error estimated by the loss a
    recalibration removes). The interval of the gain is a paired percentile
    bootstrap over items (the same resampled items before and after), that of
    the refinement a percentile bootstrap; both take the cross-fitted
    forecasts as given (refitting is not resampled). A gain whose interval
    contains 0 is no evidence that recalibration helps; a negative gain means
    the calibrator overfits.

    Parameters
    ----------
    scores : array-like of shape (N, K) or (N,)
        Logits (or log-probabilities: ``np.log(probs)``) of a K-class model, or
        1-D confidences in [0, 1] (binary P(positive), or top-label confidences).
    labels : array-like of shape (N,)
        Class indices for logits; 0/1 outcomes (or correctness) for 1-D scores.
    calibrator : str or calibnb calibrator, default "temperature"
        ``"temperature"`` (:class:`calibnb.TemperatureScaling`, NLL; both
        forms), ``"vector"`` (:class:`calibnb.VectorScaling`; logits),
        ``"platt"`` (:class:`calibnb.PlattScaling` on the logit;
        ``"isotonic"`` (:class:`calibnb.IsotonicCalibrator`), ``"histogram"``
        (:class:`calibnb.HistogramBinning`) -- the last three for 1-D scores --
        or any estimator with ``fit(scores, labels)`` and ``transform(scores)``
        returning probabilities of the same form (cloned for each fold).
    sample_weight : array-like of shape (N,), optional
        Non-negative item weights of the losses and of the bootstrap (integer
        weights equal repeated rows in the losses).
    n_folds : int >= 2, default 5
    n_resamples : int >= 0, default 1000
        Bootstrap resamples; 0 gives no intervals (``low = high = NaN``).
    level : float in (0, 1), default 0.95
    seed : None, int or numpy.random.Generator
        Sets the folds and the bootstrap.

    Returns
    -------
    RecalibrationGain
        ``.log`` and ``.brier`` (each ``loss``, ``refinement``, ``gain``),
        ``.to_frame()`` as a table.

    References
    ----------
    .. [1] E. Berta, D. Holzmüller, M. I. Jordan and F. Bach, "Rethinking
       Early Stopping: Refine, Then Calibrate", arXiv:2501.19195, 2025,
       Sections 2-3 (calibration error as the loss a recalibration removes;
       refinement error).
    .. [2] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On Calibration of
       Modern Neural Networks", ICML 2017 (temperature scaling).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(3000, 3)) * 2
    >>> p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    >>> y = (rng.random((3000, 1)) < np.cumsum(p, 1)).argmax(1)
    >>> g = recalibration_gain(3 * z, y, n_resamples=200, seed=0)   # overconfident logits
    >>> bool(g.log.gain.low > 0), bool(abs(g.log.loss - g.log.gain.estimate - g.log.refinement.estimate) < 1e-12)
    (True, True)
    """
    from sklearn.base import clone
    from sklearn.model_selection import KFold


    binary = np.ndim(as_float_array(scores, "scores")) == 1
    if binary:
        x = check_conf(scores, "scores")
        y = check_correct(labels, x.shape[0], name="labels", other="scores").astype(np.float64)
        before = x
    else:
        x = check_logits(scores, "scores")
        if x.size and np.all((x >= 0) & (x <= 1)) and np.allclose(x.sum(axis=1), 1.0, atol=1e-6):
            raise ValueError("scores look like probabilities (rows in [0, 1] summing to 1), but (N, K) scores are "
                             "logits; pass np.log(probs) (log-probabilities are logits up to a constant per row).")
        y = check_labels(labels, x.shape[0], x.shape[1], name="labels", other="scores")
        from scipy.special import softmax

        before = softmax(x, axis=1)
    w = check_sample_weight(sample_weight, (x.shape[0],))
    if w is not None and w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D with one weight per item; got shape {w.shape}.")
    name, base = _make_calibrator(calibrator, binary)
    n_folds = check_positive_int(n_folds, "n_folds", minimum=2)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=0)
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    s = seed_int(seed)
    n = x.shape[0]
    if n_folds > n:
        raise ValueError(f"n_folds = {n_folds} exceeds the {n} rows of scores; use fewer folds.")
    after = np.empty_like(before)
    for train, test in KFold(n_folds, shuffle=True, random_state=s % 2**32).split(x):
        est = clone(base)
        est.fit(x[train], y[train] if not binary else y[train].astype(bool))  # fit need not return self
        out = np.asarray(est.transform(x[test]), dtype=np.float64)
        if out.shape != before[test].shape:
            raise ValueError(
                f"calibrator {name} returned shape {out.shape} for scores of shape {x[test].shape}; "
                f"recalibration_gain needs probabilities of shape {before[test].shape}.")
        after[test] = out
    log0, brier0 = _item_losses(before, y, binary)
    log1, brier1 = _item_losses(after, y, binary)
    items = np.stack([log0 - log1, log1, brier0 - brier1, brier1])
    wt = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    est_ = items @ wt / wt.sum()
    lo = hi = np.full(4, np.nan)
    if n_resamples > 0:
        rng = np.random.default_rng([s, 1])
        dist = np.empty((4, n_resamples))
        batch = max(1, _BATCH_ELEMENTS // n)
        for start in range(0, n_resamples, batch):
            b = min(batch, n_resamples - start)
            idx = rng.integers(0, n, (b, n))
            wi = wt[idx]
            total = wi.sum(axis=1)
            total[total == 0] = np.nan  # a resample of weight-0 items only has no mean
            dist[:, start:start + b] = (items[:, idx] * wi).sum(axis=2) / total
        alpha = (1.0 - level) / 2.0
        lo, hi = np.nanquantile(dist, [alpha, 1.0 - alpha], axis=1)

    def gain(k: int) -> LossGain:
        loss = float(np.dot(log0 if k == 0 else brier0, wt) / wt.sum())
        return LossGain(loss=loss, refinement=BootstrapResult(float(est_[k + 1]), float(lo[k + 1]), float(hi[k + 1])),
                        gain=BootstrapResult(loss - float(est_[k + 1]), float(lo[k]), float(hi[k])))

    return RecalibrationGain(calibrator=name, log=gain(0), brier=gain(2), n_folds=n_folds, level=float(level),
                             recalibrated=after)


def calibration_loss_gain(conf, correct, *, loss: str = "log", calibrator: Any = "temperature", sample_weight=None,
                          n_folds: int = 5, seed=None) -> float:
    """Calibration error as the cross-fitted loss gain of recalibrating the confidences, as a float.

    The ``gain`` of :func:`recalibration_gain` for 1-D confidences (binary
    P(positive), or top-label confidence and its correctness) in one loss:

    .. math::

        \\mathrm{CalErr}_\\ell = \\frac{\\sum_i w_i\\,[\\ell(c_i, y_i) - \\ell(\\hat g(c_i), y_i)]}{\\sum_i w_i}

    with :math:`\\hat g` the calibrator fitted on the other folds (Berta et al.
    2025, Eq. 2 and Section 3). Negative when the calibrator overfits.
    The folds depend on ``seed`` (``seed=None``: fresh folds at every call);
    the conventions (folds, clipping of the log loss, one-column Brier score)
    are those of :func:`recalibration_gain` (module docstring).

    This is the registered metric ``ts_gain_log`` / ``ts_gain_brier``
    (:mod:`calibnb.metrics.registry`); :func:`calibnb.metric_summary` takes
    its estimate and interval from :func:`recalibration_gain` (its paired
    bootstrap over items, with the summary's seed for the folds), not from a
    row bootstrap that would refit the calibrator in every resample.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        Confidences in [0, 1] and 0/1 outcomes.
    loss : {"log", "brier"}, default "log"
    calibrator : str or calibnb calibrator, default "temperature"
        A 1-D calibrator of :func:`recalibration_gain` ("temperature", "platt",
        "isotonic", "histogram") or an instance.
    sample_weight : array-like of shape (N,), optional
        Weights of the losses (the calibrator is fitted unweighted).
    n_folds : int >= 2, default 5
    seed : None, int or numpy.random.Generator
        Sets the folds.

    Returns
    -------
    float

    References
    ----------
    .. [1] E. Berta, D. Holzmüller, M. I. Jordan and F. Bach, "Rethinking
       Early Stopping: Refine, Then Calibrate", arXiv:2501.19195, 2025,
       Sections 2-3.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 2000); correct = rng.uniform(size=2000) < conf - 0.15   # overconfident
    >>> bool(calibration_loss_gain(conf, correct, seed=0) > 0.02)
    True
    >>> calibration_loss_gain(conf, correct, seed=0) == recalibration_gain(conf, correct, n_resamples=0, seed=0).log.gain.estimate
    True
    """
    loss = check_choice(loss, ("log", "brier"), "loss")
    if np.ndim(as_float_array(conf, "conf")) != 1:
        raise ValueError(f"conf must be 1-D confidences; got shape {np.shape(conf)} (for (N, K) logits use "
                         "calibnb.recalibration_gain).")
    conf = check_conf(conf, "conf")
    correct = check_correct(correct, conf.shape[0], name="correct", other="conf")
    g = recalibration_gain(conf, correct, calibrator=calibrator, sample_weight=sample_weight, n_folds=n_folds,
                           n_resamples=0, seed=seed)
    return float(getattr(g, loss).gain.estimate)


def _gain_interval(conf, correct, *, sample_weight=None, n_resamples: int, level: float, seed, cache: dict,
                   loss: str, calibrator: Any = "temperature"):
    """(estimate, low, high): :func:`recalibration_gain`'s gain and paired bootstrap interval (the registry's).

    One cross-fitting gives both losses: it is kept in ``cache`` for the sibling row.
    """
    key = ("loss_gain.recalibration_gain", repr(calibrator), n_resamples, level, seed)
    if key not in cache:
        cache[key] = recalibration_gain(conf, correct, calibrator=calibrator, sample_weight=sample_weight,
                                        n_resamples=n_resamples, level=level, seed=seed)
    g = getattr(cache[key], loss).gain
    if n_resamples == 0:
        return float(g.estimate), None, None
    return float(g.estimate), float(g.low), float(g.high)


# ---------------------------------------------------------------- registry declarations (calibnb.metrics.registry)
for _loss, _label in (("log", "log loss"), ("brier", "Brier score")):
    register(Metric(f"ts_gain_{_loss}", f"{_label} gain of temperature scaling (cross-fitted)", "Berta 2025",
                    f"how much {_label} temperature scaling fitted on other folds removes: the calibration error "
                    "that recalibration can fix (0 or below: nothing to fix)",
                    calibration_loss_gain, form="own", interval=_gain_interval, options=(("loss", _loss),),
                    aka=f'calibration error as loss gain (refine, then calibrate); calibration_loss_gain(conf, '
                        f'correct, loss="{_loss}"), recalibration_gain(...).{_loss}.gain',
                    not_mergeable="refits temperature scaling on cross-fitted folds of all rows; the per-item loss "
                                  "differences need every row's out-of-fold forecast"))
