r"""Spline recalibration (Gupta et al. 2021, §4, Appendix B and C).

Sort the calibration scores :math:`s_1 \le \dots \le s_N` (stable sort) with
their correctness :math:`y_i`, and accumulate

.. math:: h_i = \frac1N \sum_{j \le i} y_j, \qquad
          \tilde h_i = \frac1N \sum_{j \le i} s_j, \qquad t_i = \frac iN

(Gupta Eq. 11). :math:`h(t) = P(Y = 1, S \le s(t))` has derivative
:math:`h'(t) = P(Y = 1 \mid S = s(t))` (Proposition 4.1), so the derivative
of a smooth fit of :math:`h` is the recalibration function. As in the
authors' reference code we fit the *difference*
:math:`g_i = h_i - \tilde h_i` (smaller, so better conditioned) and add the
score back: :math:`\tilde h` has slope exactly :math:`s_i` at :math:`t_i`,
hence

.. math:: \gamma(s_i) = g'(t_i) + s_i.

:math:`g` is a natural cubic spline (linear run-out) with ``n_knots`` knots
equally spaced on :math:`t \in [0, 1]`, fitted by linear least squares
(:math:`\min_{\hat v}\|A(t)\hat v - g\|^2`, Gupta §4.1); the basis
:math:`A` is built with :class:`scipy.interpolate.CubicSpline` on the
identity matrix. A new score :math:`\sigma` is located among the sorted
calibration scores by binary search and :math:`\gamma` is interpolated
linearly between its two neighbours (§4.2; clamped at the ends). Tied
calibration scores share the mean of their :math:`\gamma` values. The result is
clipped to [0, 1]. The derivative is left unconstrained, as in the paper's
reported experiments.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.interpolate import CubicSpline

from ..validation import (
    as_numeric_array, check_1d_finite, check_choice, check_conf, check_correct, check_labels, check_positive_int, check_probs,
)
from ._base import Calibrator
from .. import metrics

__all__ = ["SplineCalibrator", "natural_spline_basis"]


def natural_spline_basis(t: Any, knots: Any, *, derivative: int = 0) -> np.ndarray:
    r"""Design matrix of the natural cubic spline through ``knots``.

    Row :math:`i` holds :math:`a(t_i)` such that the natural spline with knot
    values :math:`\hat v` is :math:`v(t_i) = a(t_i)^\top \hat v` (Gupta et al.
    2021, §4.1 and Appendix C); ``derivative=1`` gives :math:`a'(t_i)`.

    .. math:: A_{ik} = \phi_k^{(d)}(t_i), \quad \phi_k = \text{natural spline with } \phi_k(\hat u_j) = \delta_{jk}.

    >>> natural_spline_basis([0.0, 0.5, 1.0], [0.0, 0.5, 1.0]).round(6)
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
    >>> natural_spline_basis([0.25], [0.0, 1.0], derivative=1)   # a straight line
    array([[-1.,  1.]])

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). §4.1, Appendix C.
    """
    x = check_1d_finite(t, "t")
    k = check_1d_finite(knots, "knots")
    if k.size < 2 or np.any(np.diff(k) <= 0):
        raise ValueError(f"knots must be at least 2 strictly increasing values; got {k.tolist()}.")
    d = check_positive_int(derivative, "derivative", minimum=0)
    if d > 3:
        raise ValueError(f"derivative must be 0, 1, 2 or 3 (a cubic spline); got {d}.")
    basis = CubicSpline(k, np.eye(k.size), bc_type="natural", extrapolate=True)
    return basis(x, d)


class SplineCalibrator(Calibrator):
    r"""Recalibrate top-r, within-top-r or class-k scores with a spline (Gupta et al. 2021).

    .. math:: \gamma(\sigma) = h'\big(s^{-1}(\sigma)\big), \qquad
              h(t) = P\big(Y = 1,\ S \le s(t)\big)

    where :math:`S` is the chosen score (the r-th largest probability, the sum
    of the r largest, or the probability of class k), :math:`Y` says whether
    it is "correct" (the r-th ranked class is the label; the label is among
    the top r; the label is k), and :math:`s(t)` is the t-th fractile of the
    calibration scores (Gupta Eq. 13-14, Proposition 4.1). See the module
    docstring for the fitting details.

    Parameters
    ----------
    n_knots : int, default 6
        Knots of the natural cubic spline, equally spaced in the fractile
        (the paper uses 6; 14 for within-top-2 in its Table 4).
    r : int, default 1
        Rank for ``mode="top"`` / ``"within"``.
    mode : {"top", "within", "class"}
        Top-r (Gupta Eq. 3-4), within-top-r (Eq. 5) or class ``k``.
    k : int, optional
        The class for ``mode="class"``.

    Attributes
    ----------
    scores_ : ndarray
        The distinct sorted calibration scores.
    calibrated_ : ndarray
        :math:`\gamma` at ``scores_`` (before clipping).
    knots_, knot_values_ : ndarray
        Knot fractiles and fitted values of :math:`g = h - \tilde h` there.
    n_calibration_ : int
        Number of calibration instances.

    Notes
    -----
    ``fit(probs, labels)`` takes ``(N, K)`` probabilities and integer labels;
    or a 1-D array of scores in [0, 1] with 0/1 correctness, used as given
    whatever the mode. ``transform`` takes the same kind of input and returns
    1-D calibrated scores in [0, 1]. For top-1, :meth:`recalibrate_top1`
    returns the unchanged predicted class with its recalibrated confidence.

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Eq. 13-14, Proposition 4.1, Eq. 3-4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 20000)
    >>> correct = rng.random(20000) < conf ** 2          # overconfident
    >>> cal = SplineCalibrator().fit(conf[:10000], correct[:10000])
    >>> out = cal.transform(np.array([0.6, 0.8, 0.95]))
    >>> bool(np.all(np.abs(out - np.array([0.6, 0.8, 0.95]) ** 2) < 0.05))
    True
    """

    _fitted_attribute = "calibrated_"

    def __init__(self, *, n_knots: int = 6, r: int = 1, mode: str = "top", k: int | None = None):
        self.n_knots = n_knots
        self.r = r
        self.mode = mode
        self.k = k

    def _check_params(self) -> None:
        check_positive_int(self.n_knots, "n_knots", minimum=2)
        check_positive_int(self.r, "r")
        check_choice(self.mode, ("top", "within", "class"), "mode")
        if self.mode == "class":
            if self.k is None:
                raise ValueError("mode='class' needs the class index k, e.g. SplineCalibrator(mode='class', k=3).")
            check_positive_int(self.k, "k", minimum=0)

    def _scores(self, probs: Any, labels: Any = None, *, fitting: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """(score, correct) for the chosen mode; correct is None when labels is None."""
        probs = as_numeric_array(probs, "probs")  # converted before its shape is inspected
        if probs.ndim == 1:
            scores = check_conf(probs, "probs")
            correct = None if labels is None else check_correct(labels, scores.shape[0], name="labels", other="probs")
            if fitting:
                self.n_classes_ = None
            elif getattr(self, "n_classes_", None) is not None:
                raise ValueError(f"this SplineCalibrator was fitted on (N, {self.n_classes_}) probs; got a 1-D array.")
            return scores, correct
        p = check_probs(probs)
        n_classes = p.shape[1]
        if fitting:
            self.n_classes_ = n_classes
        elif self.n_classes_ is None:
            raise ValueError("this SplineCalibrator was fitted on 1-D scores; got 2-D probs.")
        elif n_classes != self.n_classes_:
            raise ValueError(f"probs has {n_classes} classes but the fit had {self.n_classes_}; they must match.")
        if self.mode in ("top", "within") and self.r > n_classes:
            raise ValueError(f"r = {self.r} exceeds the number of classes ({n_classes}).")
        if self.mode == "class" and self.k >= n_classes:
            raise ValueError(f"k = {self.k} is not a class index in [0, {n_classes}).")
        # labels only matter for the correctness; transform passes a dummy label
        y = np.zeros(p.shape[0], dtype=np.int64) if labels is None else check_labels(labels, p.shape[0], n_classes)
        if self.mode == "class":
            scores, correct = p[:, self.k], y == self.k
        else:
            fn = metrics.top_r if self.mode == "top" else metrics.within_top_r
            scores, correct = fn(p, y, r=self.r)
            scores = np.clip(np.asarray(scores, dtype=np.float64), 0.0, 1.0)
        return scores, (None if labels is None else np.asarray(correct, dtype=bool))

    def fit(self, probs: Any, labels: Any) -> "SplineCalibrator":
        """Fit the recalibration function on calibration data (see the class Notes)."""
        self._check_params()
        if labels is None:
            raise TypeError("labels must be given: class indices (N,) for (N, K) probs, or 0/1 correctness for 1-D scores.")
        scores, correct = self._scores(probs, labels, fitting=True)
        n = scores.shape[0]
        if n < self.n_knots:
            raise ValueError(f"probs has {n} calibration row(s); need at least n_knots = {self.n_knots}.")
        order = np.argsort(scores, kind="stable")
        s = scores[order]
        g = (np.cumsum(correct[order]) - np.cumsum(s)) / n  # h_i - h~_i
        t = np.arange(1, n + 1) / n
        knots = np.linspace(0.0, 1.0, self.n_knots)
        design = natural_spline_basis(t, knots)
        coef, *_ = np.linalg.lstsq(design, g, rcond=None)
        gamma = natural_spline_basis(t, knots, derivative=1) @ coef + s
        # tied scores: one value each, the mean of the group's gamma
        starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
        counts = np.diff(np.append(starts, n))
        self.scores_ = s[starts]
        self.calibrated_ = np.add.reduceat(gamma, starts) / counts
        self.knots_ = knots
        self.knot_values_ = coef
        self.n_calibration_ = n
        self.n_features_in_ = 1 if self.n_classes_ is None else self.n_classes_
        return self

    def recalibration_function(self, scores: Any) -> np.ndarray:
        """:math:`\\gamma` at raw 1-D ``scores`` in [0, 1], clipped to [0, 1]."""
        self._check_fitted()
        s = check_conf(scores, "scores")
        return np.clip(np.interp(s, self.scores_, self.calibrated_), 0.0, 1.0)

    def transform(self, probs: Any) -> np.ndarray:
        """Calibrated scores (1-D, in [0, 1]) of the chosen mode for new data."""
        self._check_fitted()
        scores, _ = self._scores(probs, None, fitting=False)
        return np.clip(np.interp(scores, self.scores_, self.calibrated_), 0.0, 1.0)

    def recalibrate_top1(self, probs: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(predicted_class, calibrated_confidence)`` for top-1 recalibration.

        The predicted class is the argmax of ``probs`` (first index on ties),
        never changed by recalibration (Gupta §3, Remark): only its
        confidence is replaced.

        References
        ----------
        .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). §3.
        """
        self._check_fitted()
        if self.mode != "top" or self.r != 1:
            raise ValueError(f"recalibrate_top1 needs mode='top' and r=1; this calibrator has mode={self.mode!r}, r={self.r}.")
        p = check_probs(probs)
        return np.argmax(p, axis=1), self.transform(p)
