r"""Peer recalibration methods users compare against (Gupta et al. 2021, §6, Table 1).

* :class:`VectorScaling` -- per-class scale and bias on the logits (Guo et al. 2017).
* :class:`PlattScaling` -- binary: sigmoid of an affine map of a score (Platt 1999).
* :class:`IsotonicCalibrator` -- monotone step function (Zadrozny & Elkan 2002),
  via :class:`sklearn.isotonic.IsotonicRegression`.
* :class:`HistogramBinning` -- bin accuracy as the confidence (Zadrozny & Elkan 2001).

Matrix scaling with ODIR and Dirichlet calibration (Kull et al. 2019), the
other Gupta baselines, are left out: they need off-diagonal and intercept
regularisation tuned by cross-validation to be usable on K = 100 classes, which
does not fit a small, well-tested implementation here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, special

from ..validation import (
    check_1d_finite,
    check_bool,
    check_choice,
    check_conf,
    check_correct,
    check_labels,
    check_logits,
    check_n_bins,
    check_positive_int,
    check_scalar_in_range,
)
from ._base import CalibrationWarning, Calibrator
from ._temperature import softmax

__all__ = ["VectorScaling", "PlattScaling", "IsotonicCalibrator", "HistogramBinning"]


class VectorScaling(Calibrator):
    r"""Per-class affine rescaling of the logits, fitted by NLL (Guo et al. 2017; Gupta et al. 2021 §6).

    .. math:: \hat p_i = \mathrm{softmax}(w \odot z_i + b), \qquad
              (w, b) = \arg\min -\frac1N \sum_i \log \hat p_{i y_i}
              + \lambda\big(\lVert w - 1\rVert^2 + \lVert b\rVert^2\big)

    with :math:`w, b \in \mathbb R^K` and :math:`\lambda` = ``l2``. With
    :math:`p_i = \hat p_i` and one-hot :math:`y_i`, the gradient is

    .. math:: \frac{\partial L}{\partial w_k} = \frac1N\sum_i (p_{ik} - y_{ik})\, z_{ik}, \qquad
              \frac{\partial L}{\partial b_k} = \frac1N\sum_i (p_{ik} - y_{ik})

    and the Hessian is that of multinomial logistic regression with the
    per-class features :math:`x_{ik} = (z_{ik}, 1)`,
    :math:`H_{kl} = \frac1N\sum_i (p_{ik}\delta_{kl} - p_{ik}p_{il})\, x_{ik} x_{il}^\top`.
    The fit starts at the temperature-scaling solution (:math:`w = 1/T`,
    :math:`b = 0`, T by a bounded 1-D search on the NLL, or ``init_temperature``
    when given) and takes damped
    Newton steps with a backtracking line search until the Newton decrement
    :math:`g^\top H^{-1} g / 2` falls below ``tol`` (the loss is convex, so
    this is the global optimum up to the shift of b shared by all classes,
    which leaves the probabilities unchanged; a tiny ridge fixes it). Each
    step costs one shifted ``exp`` of the ``(N, K)`` scores and one
    ``2K x 2K`` solve, all in float64; a few steps suffice (about 7 and
    0.2 s on 5,000 x 100 CIFAR-100 logits). The fit is deterministic (no
    randomness). Unlike temperature scaling it can change the predicted class.

    ``fit(logits, labels)`` takes ``(N, K)`` finite logits and integer labels.

    Parameters
    ----------
    l2 : float, default 0.0
        Ridge :math:`\lambda \ge 0` pulling w towards 1 and b towards 0.
    tol : float, default 1e-10
        Stop when half the Newton decrement is at most ``tol`` (a bound on
        how far the loss is from its minimum, near the optimum), after taking
        the Newton step computed there: the decrement does not bound the
        parameters along the loss's flat directions, and that last step
        pins them (fits of the same 5,000 CIFAR-100 rows from two starts
        give probabilities within about 1e-7 of each other).
    max_iter : int, default 100
        Maximum number of Newton steps.
    init_temperature : float > 0 or None, default None
        The temperature T of the starting point; None: the bounded search. A
        caller that has fitted :class:`TemperatureScaling` on the same data
        passes its ``temperature_`` and spares the search; the loss is convex,
        so the fit reaches the same optimum (within ``tol``) from any start.

    Attributes
    ----------
    weights_, bias_ : ndarray of shape (K,)
    temperature_init_ : float
        The temperature T of the starting point ``w = 1/T``.
    nll_ : float
        The minimised objective (the calibration NLL, plus the ``l2`` penalty).
    n_iter_ : int
        Newton steps taken.

    References
    ----------
    .. [1] Chuan Guo, Geoff Pleiss, Yu Sun, Kilian Q. Weinberger. 2017. "On Calibration of Modern Neural Networks". In Proceedings of the 34th International Conference on Machine Learning (ICML).
    .. [2] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). §6.

    Examples
    --------
    >>> z = np.array([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0], [0.0, 2.0]])
    >>> vs = VectorScaling().fit(z, [0, 1, 1, 0])   # logits carry no information
    >>> vs.transform(z).round(2)
    array([[0.5, 0.5],
           [0.5, 0.5],
           [0.5, 0.5],
           [0.5, 0.5]])
    """

    _fitted_attribute = "weights_"

    def __init__(self, *, l2: float = 0.0, tol: float = 1e-10, max_iter: int = 100,
                 init_temperature: float | None = None):
        self.l2 = l2
        self.tol = tol
        self.max_iter = max_iter
        self.init_temperature = init_temperature

    def fit(self, logits: Any, labels: Any) -> "VectorScaling":
        """Fit w and b by damped Newton on the NLL (plus ``l2 * ||w - 1||^2 + l2 * ||b||^2``)."""
        lam = check_scalar_in_range(self.l2, "l2", low=0.0)
        tol = check_scalar_in_range(self.tol, "tol", low=0.0, low_inclusive=False)
        max_iter = check_positive_int(self.max_iter, "max_iter")
        init_t = (None if self.init_temperature is None
                  else check_scalar_in_range(self.init_temperature, "init_temperature", low=0.0, low_inclusive=False))
        z = np.ascontiguousarray(_finite_logits(logits))  # one memory order: the same sums for any input layout
        n, k = z.shape
        # np.intp: the gradient's np.bincount casts its labels to it "safely", and on a 32-bit platform (the
        # browser site's Pyodide) int64 is not.
        y = check_labels(labels, n, k, other="logits").astype(np.intp)
        t = _temperature_start(z, y) if init_t is None else init_t
        theta = np.concatenate([np.full(k, 1.0 / t), np.zeros(k)])
        f, g, p = _vs_objective(theta, z, y, lam)
        ridge = 1e-12 * (1.0 + np.abs(z).max() ** 2)
        n_iter = 0
        converged = False
        for n_iter in range(1, max_iter + 1):
            h = _vs_hessian(p, z, lam)
            h[np.diag_indices_from(h)] += ridge
            step = np.linalg.solve(h, -g)
            decrement = float(-g @ step)
            if not np.isfinite(decrement) or decrement <= 0.0:
                step, decrement = -g, float(g @ g)  # never happens for a PD system; a safe fallback
            if decrement / 2.0 <= tol:
                # The step just solved for is taken too (one more loss evaluation, no Hessian): the decrement
                # bounds the loss's distance from its minimum, not the parameters along the loss's flat
                # directions, and near the optimum a Newton step squares the error. Without it, fits of the
                # same CIFAR-100 rows from two starts gave probabilities up to 3.9e-5 apart; with it, 5.5e-8.
                cand = theta + step
                f_new, g_new, p_new = _vs_objective(cand, z, y, lam)
                if f_new <= f:
                    theta, f, g, p = cand, f_new, g_new, p_new
                else:  # rounding: the step cannot lower the loss any more
                    n_iter -= 1
                converged = True
                break
            # backtracking (Armijo) line search; the loss is convex so a step that lowers it exists
            alpha = 1.0
            while True:
                cand = theta + alpha * step
                f_new, g_new, p_new = _vs_objective(cand, z, y, lam)
                if f_new <= f - 1e-4 * alpha * decrement or alpha < 1e-12:
                    break
                alpha *= 0.5
            if f_new > f:  # no progress possible in float64
                converged = True
                break
            theta, f, g, p = cand, f_new, g_new, p_new
        if not converged:
            import warnings

            warnings.warn(
                f"VectorScaling stopped at max_iter={max_iter} Newton steps before the NLL converged "
                f"(Newton decrement {decrement / 2.0:.3g} > tol={tol:g}); raise max_iter or tol, or add l2 "
                "regularisation if the logits separate the classes perfectly.",
                CalibrationWarning,
                stacklevel=2,
            )
        self.weights_, self.bias_ = theta[:k].copy(), theta[k:].copy()
        self._set_n_features_in(z)
        self.temperature_init_ = t
        self.nll_ = f
        self.n_iter_ = n_iter
        return self

    def transform(self, logits: Any) -> np.ndarray:
        """Calibrated ``(N, K)`` probabilities."""
        self._check_fitted()
        z = _finite_logits(logits)
        if z.shape[1] != self.weights_.size:
            raise ValueError(f"logits has {z.shape[1]} columns but the fit had {self.weights_.size}; they must match.")
        return softmax(z * self.weights_ + self.bias_)

def _vs_objective(theta: np.ndarray, z: np.ndarray, y: np.ndarray, lam: float):
    """Penalised vector-scaling NLL, its gradient and the softmax, from one shifted exp (in one (N, K) buffer).

    The gradient's one-hot part is a per-class sum over the labels (``bincount``), so no (N, K) residual is formed.
    """
    n, k = z.shape
    w, b = theta[:k], theta[k:]
    rows = np.arange(n)
    s = z * w
    s += b
    s -= s.max(axis=1)[:, None]
    s_true = s[rows, y]
    p = np.exp(s, out=s)
    total = p.sum(axis=1)
    f = float(np.mean(np.log(total) - s_true))
    p /= total[:, None]
    gw = (np.einsum("ij,ij->j", p, z) - np.bincount(y, weights=z[rows, y], minlength=k)) / n
    gb = (p.sum(axis=0) - np.bincount(y, minlength=k)) / n
    f += lam * (float(np.sum((w - 1.0) ** 2)) + float(np.sum(b**2)))
    grad = np.concatenate([gw + 2.0 * lam * (w - 1.0), gb + 2.0 * lam * b])
    return f, grad, p


def _vs_hessian(p: np.ndarray, z: np.ndarray, lam: float) -> np.ndarray:
    """Hessian of the penalised NLL in (w, b): diag terms minus A^T A with A = [p*z, p]/sqrt(N)."""
    n, k = z.shape
    # A is written in place (p*z into its left half, a view): the same values as concatenating two (N, K) arrays,
    # without the second copy of p*z (about an eighth of a Hessian at K = 100)
    a = np.empty((n, 2 * k))
    pz = np.multiply(p, z, out=a[:, :k])
    a[:, k:] = p
    h = -(a.T @ a) / n
    d = np.arange(k)
    h[d, d] += np.einsum("ij,ij->j", pz, z) / n
    cross = pz.sum(axis=0) / n
    h[d, k + d] += cross
    h[k + d, d] += cross
    h[k + d, k + d] += p.sum(axis=0) / n
    h[np.diag_indices_from(h)] += 2.0 * lam
    return h


def _temperature_start(z: np.ndarray, y: np.ndarray) -> float:
    """The NLL temperature, by a bounded search on log T in [-7, 7] (only a starting point)."""
    rows = np.arange(z.shape[0])
    zc = z - z.max(axis=1, keepdims=True)  # shift once; scaling keeps the max at 0
    zy = zc[rows, y]

    buf = np.empty_like(zc)  # one (N, K) buffer for every evaluation

    def nll(log_t: float) -> float:
        np.multiply(zc, np.exp(-log_t), out=buf)
        np.exp(buf, out=buf)
        return float(np.mean(np.log(buf.sum(axis=1)) - zy * np.exp(-log_t)))

    res = optimize.minimize_scalar(nll, bounds=(-7.0, 7.0), method="bounded", options={"xatol": 1e-4})
    return float(np.exp(res.x))


def _finite_logits(logits: Any) -> np.ndarray:
    z = check_logits(logits)
    if np.isneginf(z.min()):
        raise ValueError("logits has -inf values; vector scaling needs finite logits (w * -inf is undefined for w = 0).")
    return z


class PlattScaling(Calibrator):
    r"""Platt scaling of a binary score (Platt 1999; Gupta et al. 2021 §5).

    .. math:: \hat c_i = \sigma(a\, x_i + b), \qquad
              (a, b) = \arg\min -\frac1N \sum_i \big[y_i \log \hat c_i + (1 - y_i)\log(1 - \hat c_i)\big]

    where :math:`x_i` is the raw score, or :math:`\mathrm{logit}(c_i)` of a
    confidence with ``logit_input=True`` (then :math:`a = 1/\tau, b = 0` is
    binary temperature scaling). Plain maximum likelihood (no Platt target
    smoothing), by L-BFGS: the targets are the 0/1 outcomes, so the fit equals
    an unpenalised logistic regression on :math:`x`. scikit-learn's
    ``CalibratedClassifierCV(method="sigmoid")`` (``_sigmoid_calibration``)
    instead uses Platt's smoothed targets :math:`(N_+ + 1)/(N_+ + 2)` and
    :math:`1/(N_- + 2)` and the sign convention :math:`\sigma(-(A x + B))`, so its
    :math:`A` is about :math:`-a` and the two fits differ by the smoothing,
    most on small calibration sets (``tests/test_conventions.py``).

    Attributes
    ----------
    a_, b_ : float

    References
    ----------
    .. [1] John C. Platt. 1999. "Probabilistic Outputs for Support Vector Machines and Comparisons to Regularized Likelihood Methods". In Advances in Large Margin Classifiers, MIT Press.
    .. [2] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). §5.

    Examples
    --------
    >>> x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, -0.5, 0.5, 1.5])
    >>> y = np.array([0, 0, 1, 1, 1, 1, 0, 1])
    >>> ps = PlattScaling().fit(x, y)
    >>> bool(ps.a_ > 0), ps.transform([0.0, 3.0]).round(2).tolist()
    (True, [0.63, 0.99])
    """

    _fitted_attribute = "a_"

    def __init__(self, *, logit_input: bool = False):
        self.logit_input = logit_input

    def _x(self, scores: Any) -> np.ndarray:
        if check_bool(self.logit_input, "logit_input"):
            c = check_conf(scores, "scores")
            return special.logit(np.clip(c, 1e-12, 1 - 1e-12))
        return check_1d_finite(scores, "scores")

    def fit(self, scores: Any, correct: Any) -> "PlattScaling":
        """Fit a and b on 1-D scores and 0/1 outcomes."""
        x = self._x(scores)
        y = check_correct(correct, x.shape[0], other="scores").astype(np.float64)
        sign = 2 * y - 1

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            m = sign * (theta[0] * x + theta[1])
            f = float(np.mean(np.logaddexp(0.0, -m)))
            g = -sign * special.expit(-m) / x.size
            return f, np.array([np.sum(g * x), np.sum(g)])

        res = optimize.minimize(loss, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B")
        self.a_, self.b_ = float(res.x[0]), float(res.x[1])
        self._set_n_features_in(x)
        return self

    def transform(self, scores: Any) -> np.ndarray:
        """Calibrated 1-D probabilities."""
        self._check_fitted()
        return special.expit(self.a_ * self._x(scores) + self.b_)

class IsotonicCalibrator(Calibrator):
    r"""Isotonic regression of correctness on confidence (Zadrozny & Elkan 2002), via scikit-learn.

    .. math:: \hat\gamma = \arg\min_{\gamma \text{ non-decreasing}} \sum_i (y_i - \gamma(c_i))^2

    Scores outside the calibration range take the end values; outputs lie in
    [0, 1]. ``fit(conf, correct)`` takes a 1-D confidence (e.g. the top-1
    probability) and 0/1 correctness.

    References
    ----------
    .. [1] Bianca Zadrozny, Charles Elkan. 2002. "Transforming Classifier Scores into Accurate Multiclass Probability Estimates". In Proceedings of the 8th ACM SIGKDD International Conference on Knowledge Discovery and Data Mining (KDD).

    Examples
    --------
    >>> iso = IsotonicCalibrator().fit([0.1, 0.4, 0.6, 0.9], [0, 1, 0, 1])
    >>> iso.transform([0.0, 0.5, 1.0]).tolist()
    [0.0, 0.5, 1.0]
    """

    _fitted_attribute = "model_"

    def fit(self, conf: Any, correct: Any) -> "IsotonicCalibrator":
        """Fit the monotone map."""
        from sklearn.isotonic import IsotonicRegression

        c = check_conf(conf)
        y = check_correct(correct, c.shape[0]).astype(np.float64)
        self.model_ = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(c, y)
        self._set_n_features_in(c)
        return self

    def transform(self, conf: Any) -> np.ndarray:
        """Calibrated 1-D confidences."""
        self._check_fitted()
        return np.asarray(self.model_.predict(check_conf(conf)), dtype=np.float64)

class HistogramBinning(Calibrator):
    r"""Replace each confidence by the calibration accuracy of its bin (Zadrozny & Elkan 2001).

    .. math:: \hat c_i = \mathrm{acc}(B_{m(i)}) = \frac{1}{|B_m|}\sum_{j \in B_m} y_j

    Bins follow the project convention: ``binning="width"`` uses M equal-width
    bins, bin m holding (m/M, (m+1)/M] and the first also 0;
    ``binning="mass"`` places the edges at the calibration scores' quantiles.
    A bin with no calibration score maps each confidence to itself, so nothing
    is invented where there is no data.

    Attributes
    ----------
    edges_ : ndarray of shape (M + 1,)
    bin_accuracy_ : ndarray of shape (M,)  (NaN for empty bins)
    bin_count_ : ndarray of shape (M,)

    References
    ----------
    .. [1] Bianca Zadrozny, Charles Elkan. 2001. "Obtaining Calibrated Probability Estimates from Decision Trees and Naive Bayesian Classifiers". In Proceedings of the 18th International Conference on Machine Learning (ICML).

    Examples
    --------
    >>> hb = HistogramBinning(n_bins=2).fit([0.2, 0.3, 0.7, 0.9], [0, 1, 1, 1])
    >>> hb.transform([0.1, 0.5, 0.51, 1.0]).tolist()
    [0.5, 0.5, 1.0, 1.0]
    """

    _fitted_attribute = "bin_accuracy_"

    def __init__(self, *, n_bins: int = 15, binning: str = "width"):
        self.n_bins = n_bins
        self.binning = binning

    def _bin(self, c: np.ndarray) -> np.ndarray:
        # right-closed bins (e_m, e_{m+1}], the first bin also holds values <= e_1
        idx = np.searchsorted(self.edges_, c, side="left") - 1
        return np.clip(idx, 0, self.edges_.size - 2)

    def fit(self, conf: Any, correct: Any) -> "HistogramBinning":
        """Compute the per-bin accuracies."""
        m = check_n_bins(self.n_bins)
        check_choice(self.binning, ("width", "mass"), "binning")
        c = check_conf(conf)
        y = check_correct(correct, c.shape[0]).astype(np.float64)
        if self.binning == "width":
            edges = np.arange(m + 1) / m  # the float64 edges m / M of calibnb.bin_indices (linspace rounds some)
        else:
            edges = np.quantile(c, np.linspace(0.0, 1.0, m + 1))
            edges[0], edges[-1] = 0.0, 1.0
        self.edges_ = edges
        b = self._bin(c)
        count = np.bincount(b, minlength=m)
        hits = np.bincount(b, weights=y, minlength=m)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.bin_accuracy_ = np.where(count > 0, hits / np.maximum(count, 1), np.nan)
        self.bin_count_ = count
        self._set_n_features_in(c)
        return self

    def transform(self, conf: Any) -> np.ndarray:
        """The calibration accuracy of each confidence's bin (identity in empty bins)."""
        self._check_fitted()
        c = check_conf(conf)
        acc = self.bin_accuracy_[self._bin(c)]
        return np.where(np.isnan(acc), c, acc)
