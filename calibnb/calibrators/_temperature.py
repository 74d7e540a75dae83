r"""Temperature scaling (Guo et al. 2017; Si et al. 2022 §2.2 and §3.2).

Three input forms share one estimator, :class:`TemperatureScaling`:

* **multi-class**: ``(N, K)`` logits (or log-probabilities) and ``(N,)`` integer
  labels; ``transform`` returns ``softmax(z / tau)``.
* **candidate sets** (Si §3.2, open-domain QA): every question has its own,
  variable-length list of candidate answers with a raw score each. Pad them
  into an ``(N, C_max)`` array with ``-inf`` in the unused slots using
  :func:`pad_candidates`; the softmax then runs over each question's own
  candidates only (``exp(-inf) = 0``). Labels are either the gold candidate's
  index, with ``-1`` when no candidate is correct, or an ``(N, C_max)``
  boolean mask marking every correct candidate (several spans can hold the
  right answer string). *Joint* calibration pads the ``k x n`` scores
  ``z_psg(i) + z_start(i, s) + z_end(i, e)`` of all retrieved passages;
  *pipeline* calibration pads the ``n`` scores ``z_start + z_end`` of the
  top passage's spans only. Since some questions have no correct candidate,
  Si et al. tune tau to minimise dev ECE (``objective="ece"``).
* **binary**: a 1-D array of confidences in [0, 1] with 0/1 correctness;
  ``conf' = sigmoid(logit(conf) / tau)``.

The temperature is searched on :math:`\log\tau` inside ``bounds``. For the
smooth NLL objective a bounded Brent search
(``scipy.optimize.minimize_scalar(method="bounded")``) is run directly.

ECE and MacroCE are not smooth in tau: ECE jumps whenever a confidence crosses
a bin edge, and on a dev set of a few hundred items its curve is jagged, with
many local minima a few per cent of tau apart whose values differ by little.
A local search then returns whichever local minimum its starting bracket
happens to hold, so the fitted tau (and everything scored with it) would depend
on arbitrary search settings: with a coarse grid of 41 instead of 25 points, a
model's dev-ECE temperature moved from 1.79 to 2.10 and its test ECE with it.
The search is therefore made to depend on the data only, in three stages:

1. a coarse grid of ``n_grid`` log-spaced temperatures locates the basin (the
   best point and its two grid neighbours);
2. every point of a **fixed lattice** :math:`\log\tau \in \{j\,\delta\}`,
   :math:`\delta = 0.01` (1 % steps in tau, anchored at tau = 1, independent of
   ``n_grid`` and ``bounds``) inside that bracket is evaluated, and the first
   lattice point (smallest tau) whose value is within a relative
   :math:`10^{-9}` of the lattice minimum is taken, so that values that differ
   only by rounding are treated as ties and broken the same way every time;
3. a bounded Brent search between that point's two lattice neighbours refines
   it; its result is kept only if it is better by more than the tie tolerance.

Whenever the global minimum lies within one coarse step of the best coarse
point (true of every data set tried here), the result does not depend on
``n_grid`` at all.

Reproducibility: the row sums inside the objective use NumPy's own pairwise
reduction (``np.add.reduce(..., axis=1)``), whose order of operations is fixed
by the data's shape, rather than a BLAS matrix-vector product, whose kernel
(and so its last bits) OpenBLAS picks at run time for the CPU. A seeded fit is
bit-identical across processes, ``PYTHONHASHSEED`` values and BLAS thread
counts (``tests/calibrators/test_temperature.py`` checks this in
sub-processes).

Speed: the row maximum :math:`m_i = \max_k z_{ik}` is subtracted once
(:math:`\max_k z_{ik}/\tau = m_i/\tau` for every :math:`\tau > 0`), so each
evaluation is one multiply, one ``exp`` and one row sum. For large inputs
(``N * K >= 10**6``) the search runs in float32 (about 1e-6 relative error
in the objective); ``transform`` always computes in float64.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import optimize, special

from ..validation import (
    as_float_array,
    as_numeric_array,
    check_choice,
    check_conf,
    check_correct,
    check_logits,
    check_n_bins,
    check_positive_int,
    check_scalar_in_range,
)
from .. import metrics
from ._base import CalibrationWarning, Calibrator, scorer_metrics

__all__ = ["TemperatureScaling", "temperature_curve", "pad_candidates", "softmax"]

_FLOAT32_SIZE = 1_000_000
_NLL_CLIP = 1e-15
#: Step of the fixed lattice on log(tau) searched by the ECE/MacroCE fits.
_LATTICE_STEP = 0.01
#: Objective values within this relative distance of the minimum are ties.
_TIE_RTOL = 1e-9
# A fitted log(tau) this close to log(bound) is "on the bound": 2.5x the Brent tolerance ``tol`` on log(tau).
_BOUND_FACTOR = 2.5


def softmax(logits: Any, *, temperature: float = 1.0) -> np.ndarray:
    r"""Row-wise softmax of ``logits / temperature``, computed stably.

    .. math:: p_{ik} = \frac{\exp((z_{ik} - m_i)/\tau)}{\sum_j \exp((z_{ij} - m_i)/\tau)},
              \quad m_i = \max_j z_{ij}.

    ``-inf`` entries (padding, or log-probabilities of zero) get probability 0.

    >>> softmax([[0.0, 0.0], [0.0, np.log(3.0)]]).round(3)
    array([[0.5 , 0.5 ],
           [0.25, 0.75]])
    """
    z = check_logits(logits)
    tau = check_scalar_in_range(temperature, "temperature", low=0.0, low_inclusive=False)
    return _softmax(z, tau)


def _softmax(z: np.ndarray, tau: float) -> np.ndarray:
    d = (z - z.max(axis=1, keepdims=True)) / tau
    np.exp(d, out=d)
    d /= d.sum(axis=1, keepdims=True)
    return d


def pad_candidates(
    scores: Any, offsets: Any = None, *, correct: Any = None, gold: Any = None
) -> tuple[np.ndarray, np.ndarray | None]:
    r"""Pack per-question candidate scores of varying length into padded logits.

    Si et al. 2022 §3.2 apply temperature scaling over a per-question
    candidate set :math:`\mathcal C_q`:

    .. math:: \mathrm{conf}_q = \max_{c \in \mathcal C_q}
              \frac{\exp(z_c/\tau)}{\sum_{c' \in \mathcal C_q} \exp(z_{c'}/\tau)}.

    Padding unused slots with ``-inf`` makes an ordinary row softmax compute
    exactly this.

    Parameters
    ----------
    scores : list of 1-D arrays, or a flat 1-D array with ``offsets``
        Raw candidate scores of each question (e.g. passage + start + end
        logits for joint calibration).
    offsets : 1-D int array of length Q + 1, optional
        With a flat ``scores``: question q owns ``scores[offsets[q]:offsets[q+1]]``.
        ``offsets[0] == 0``, non-decreasing, ``offsets[-1] == len(scores)``;
        every question needs at least one candidate.
    correct : same layout as ``scores``, optional
        0/1 flags, one per candidate (several may be correct, or none).
        Returned as a padded ``(Q, C_max)`` boolean mask.
    gold : 1-D int array of length Q, optional
        The index of the gold candidate within each question, ``-1`` if none
        is correct. Returned unchanged (validated). Give at most one of
        ``correct`` and ``gold``.

    Returns
    -------
    logits : ndarray of shape (Q, C_max)
        Scores, ``-inf`` in unused slots.
    labels : ndarray or None
        The mask (from ``correct``) or gold indices (from ``gold``), ready for
        :meth:`TemperatureScaling.fit`; ``None`` if neither was given.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §3.2.

    Examples
    --------
    >>> logits, labels = pad_candidates([[2.0, 1.0, 0.0], [0.5]], gold=[1, -1])
    >>> logits
    array([[ 2. ,  1. ,  0. ],
           [ 0.5, -inf, -inf]])
    >>> labels
    array([ 1, -1])
    """
    if correct is not None and gold is not None:
        raise ValueError("give at most one of correct and gold, not both.")
    if offsets is None:
        if isinstance(scores, np.ndarray) and scores.ndim == 1 and scores.dtype != object:
            raise ValueError("scores is a flat array; pass offsets to say where each question starts.")
        try:
            parts = [as_float_array(s, f"scores[{q}]").ravel() for q, s in enumerate(scores)]
        except TypeError as exc:
            raise TypeError(f"scores must be a list of 1-D arrays or a flat array with offsets: {exc}") from None
        if not parts:
            raise ValueError("scores is empty; at least one question is needed.")
        lengths = np.array([p.size for p in parts], dtype=np.int64)
        flat = np.concatenate(parts)
        offsets_arr = np.concatenate([[0], np.cumsum(lengths)])
        flat_correct = None
        if correct is not None:
            cparts = [np.asarray(c).ravel() for c in correct]
            if len(cparts) != len(parts):
                raise ValueError(f"correct has {len(cparts)} questions but scores has {len(parts)}; they must match.")
            clen = np.array([c.size for c in cparts])
            if np.any(clen != lengths):
                q = int(np.flatnonzero(clen != lengths)[0])
                raise ValueError(
                    f"correct[{q}] has {clen[q]} flags but scores[{q}] has {lengths[q]} candidates; they must match."
                )
            flat_correct = np.concatenate(cparts) if cparts else np.zeros(0)
    else:
        flat = as_float_array(scores, "scores")
        if flat.ndim != 1:
            raise ValueError(f"scores must be 1-D when offsets are given; got shape {flat.shape}.")
        offsets_arr = np.asarray(offsets)
        if offsets_arr.ndim != 1 or offsets_arr.dtype.kind not in "iu" or offsets_arr.size < 2:
            raise ValueError("offsets must be a 1-D integer array of length Q + 1 (Q >= 1).")
        if offsets_arr[0] != 0 or offsets_arr[-1] != flat.size:
            raise ValueError(
                f"offsets must start at 0 and end at len(scores) = {flat.size}; "
                f"got {int(offsets_arr[0])} and {int(offsets_arr[-1])}."
            )
        lengths = np.diff(offsets_arr).astype(np.int64)
        flat_correct = None if correct is None else np.asarray(correct)
        if flat_correct is not None and flat_correct.shape != flat.shape:
            raise ValueError(f"correct has shape {flat_correct.shape} but scores has {flat.shape}; they must match.")
    if np.any(lengths < 1):
        q = int(np.flatnonzero(lengths < 1)[0])
        raise ValueError(f"question {q} has no candidate; every question needs at least one.")
    bad = ~np.isfinite(flat)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"scores has {int(bad.sum())} value(s) that are NaN or infinite; first at flat index {i}.")
    n_q = lengths.size
    c_max = int(lengths.max())
    rows = np.repeat(np.arange(n_q), lengths)
    cols = np.arange(flat.size) - np.repeat(offsets_arr[:-1], lengths)
    logits = np.full((n_q, max(c_max, 2)), -np.inf)
    logits[rows, cols] = flat
    labels: np.ndarray | None = None
    if flat_correct is not None:
        fc = check_correct(flat_correct, flat.size, name="correct", other="scores")
        labels = np.zeros(logits.shape, dtype=bool)
        labels[rows, cols] = fc
    elif gold is not None:
        g = as_float_array(gold, "gold")
        if g.ndim != 1 or g.shape[0] != n_q:
            raise ValueError(f"gold must be 1-D with one index per question ({n_q}); got shape {g.shape}.")
        if np.any(~np.isfinite(g)) or np.any(g != np.floor(g)):
            raise ValueError("gold must hold whole-number indices.")
        labels = g.astype(np.int64)
        bad = (labels < -1) | (labels >= lengths)
        if bad.any():
            q = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"gold has {int(bad.sum())} index(es) outside [-1, n_candidates); "
                f"first at question {q}: {labels[q]} with {lengths[q]} candidates."
            )
    return logits, labels


class _Problem:
    """Everything about (logits, labels) that does not depend on tau."""

    def __init__(self, logits: Any, labels: Any, objective: str, names: tuple[str, str] = ("logits", "labels")):
        zname, lname = names
        logits = as_numeric_array(logits, zname)  # converted before its shape is inspected
        self.binary = logits.ndim == 1
        if self.binary:
            conf = check_conf(logits, zname)
            correct = check_correct(labels, conf.shape[0], name=lname, other=zname)
            self.correct = correct
            self.n = conf.shape[0]
            # logit(conf); +-inf for confidences of exactly 1 or 0
            with np.errstate(divide="ignore"):
                self.x = special.logit(conf)
            if objective == "nll":
                self.x_nll = special.logit(np.clip(conf, _NLL_CLIP, 1.0 - _NLL_CLIP))
                self.sign = np.where(correct, 1.0, -1.0)
            return
        z = check_logits(logits, zname, keep_float32=True)
        n, k = z.shape
        self.n = n
        pred = np.argmax(z, axis=1)
        if labels is None:
            raise TypeError(f"{lname} must be given with {zname}.")
        labels_arr = np.asarray(labels)
        mask = lab = None
        if labels_arr.ndim == 2:
            if labels_arr.shape != z.shape:
                raise ValueError(f"{lname} (a correct-candidate mask) has shape {labels_arr.shape} but {zname} has {z.shape}.")
            mask = check_correct(labels_arr.ravel(), labels_arr.size, name=lname, other=zname).reshape(z.shape)
            correct = mask[np.arange(n), pred]
            if objective == "nll" and (~mask.any(axis=1)).any():
                none = ~mask.any(axis=1)
                raise ValueError(
                    f"{lname} marks no correct candidate in {int(none.sum())} rows, first row {int(np.flatnonzero(none)[0])}; "
                    "NLL is undefined there. Use objective='ece'."
                )
        else:
            lab = as_float_array(labels_arr, lname)
            if lab.ndim != 1:
                raise ValueError(f"{lname} must be 1-D (class indices) or a 2-D mask; got shape {lab.shape}.")
            if lab.shape[0] != n:
                raise ValueError(f"{lname} has length {lab.shape[0]} but {zname} has {n} rows; they must match.")
            bad = ~np.isfinite(lab) | (lab != np.floor(lab)) | (lab < -1) | (lab >= k)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"{lname} has {int(bad.sum())} value(s) that are not class indices in [-1, {k}); "
                    f"first at index {i}: {labels_arr[i]!r}."
                )
            lab = lab.astype(np.int64)
            correct = lab == pred
            if objective == "nll" and np.any(lab < 0):
                i = int(np.flatnonzero(lab < 0)[0])
                raise ValueError(
                    f"{lname} has {int((lab < 0).sum())} rows with no correct class (-1), first at index {i}; "
                    "NLL is undefined there. Use objective='ece' (as Si et al. 2022 do for QA)."
                )
        self.correct = correct
        dtype = np.float32 if z.size >= _FLOAT32_SIZE else np.float64
        # d = z - row max, computed in float64 in blocks of rows, stored in `dtype`
        zmax = z.max(axis=1).astype(np.float64)
        self.d = np.empty(z.shape, dtype=dtype)
        block = max(1, 2_000_000 // k)
        for start in range(0, n, block):
            stop = min(start + block, n)
            np.subtract(z[start:stop], zmax[start:stop, None], out=self.d[start:stop], dtype=np.float64, casting="same_kind")
        self.buf = np.empty_like(self.d)
        self.single = self.gold_d = None
        if objective == "nll":
            rows = np.arange(n)
            if lab is not None:
                self.single = z[rows, lab].astype(np.float64) - zmax  # d of the true class, float64
            elif np.all(mask.sum(axis=1) == 1):
                self.single = z[rows, mask.argmax(axis=1)].astype(np.float64) - zmax
            else:
                self.gold_d = np.where(mask, self.d, -np.inf).astype(dtype)
            if self.single is not None and np.isneginf(self.single).any():
                i = int(np.flatnonzero(np.isneginf(self.single))[0])
                raise ValueError(f"the true class has logit -inf at row {i}; its NLL is infinite for every temperature.")

    def log_sum(self, d: np.ndarray, tau: float) -> np.ndarray:
        np.multiply(d, d.dtype.type(1.0 / tau), out=self.buf)
        np.exp(self.buf, out=self.buf)
        # NumPy's pairwise row sum: a fixed order of operations on every CPU and thread count
        # (a BLAS matrix-vector product would pick its kernel, and so its rounding, at run time)
        return np.log(np.add.reduce(self.buf, axis=1).astype(np.float64))

    def conf(self, tau: float) -> np.ndarray:
        """Top-1 confidence after scaling (the max entry of d is 0, so p_max = 1 / S)."""
        if self.binary:
            return special.expit(self.x / tau)
        return np.exp(-self.log_sum(self.d, tau))

    def nll(self, tau: float) -> float:
        if self.binary:
            return float(np.mean(np.logaddexp(0.0, -self.sign * self.x_nll / tau)))
        lse = self.log_sum(self.d, tau)
        if self.single is not None:
            return float(np.mean(lse - self.single / tau))
        return float(np.mean(lse - self.log_sum(self.gold_d, tau)))


def _objective_fn(problem: _Problem, objective: str, n_bins: int, binning: str) -> Callable[[float], float]:
    if objective == "nll":
        return problem.nll

    correct = problem.correct
    if objective == "ece":
        return lambda tau: float(metrics.ece(problem.conf(tau), correct, n_bins=n_bins, binning=binning))
    return lambda tau: float(metrics.macro_ce(problem.conf(tau), correct))


def _first_min(values: np.ndarray) -> int:
    """Index of the first value within a relative ``_TIE_RTOL`` of the minimum (ties -> smallest tau)."""
    best = float(values.min())
    return int(np.flatnonzero(values <= best + _TIE_RTOL * abs(best))[0])


def _search_non_smooth(g: Callable[[float], float], a: float, b: float, n_grid: int,
                       tol: float = 1e-4) -> tuple[float, float]:
    """Minimise g on [a, b] (log tau): coarse grid, fixed lattice in the best bracket, Brent (module docstring)."""
    grid = np.linspace(a, b, n_grid)
    i = _first_min(np.array([g(x) for x in grid]))
    left, right = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    # lattice points j * step inside [left, right], plus the bracket's ends if they are bounds
    j = np.arange(np.ceil(left / _LATTICE_STEP), np.floor(right / _LATTICE_STEP) + 1)
    lattice = j * _LATTICE_STEP
    lattice = np.unique(np.concatenate([[a] if i == 0 else [], lattice, [b] if i == grid.size - 1 else []]))
    if lattice.size == 0:
        lattice = np.array([grid[i]])
    values = np.array([g(x) for x in lattice])
    k = _first_min(values)
    best_x, best_f = float(lattice[k]), float(values[k])
    lo = max(a, best_x - _LATTICE_STEP)
    hi = min(b, best_x + _LATTICE_STEP)
    if hi > lo:
        res = optimize.minimize_scalar(g, bounds=(lo, hi), method="bounded", options={"xatol": tol})
        if res.fun < best_f - _TIE_RTOL * abs(best_f):
            best_x, best_f = float(res.x), float(res.fun)
    return best_x, best_f


class TemperatureScaling(Calibrator):
    r"""Temperature scaling: divide the logits by one scalar :math:`\tau > 0`.

    .. math:: \hat p_{ik} = \mathrm{softmax}(z_i / \tau)_k, \qquad
              \tau^\star = \arg\min_{\tau} L(\tau)

    where :math:`z_i` are the logits of instance :math:`i` and :math:`L` is
    the objective on the calibration (dev) set: the negative log-likelihood
    :math:`-\frac1N\sum_i \log \hat p_{i y_i}` (Guo et al. 2017; Gupta et al.
    2021 §6 baseline), ECE (Si et al. 2022 §3.2, tuned on dev ECE; Baan et al.
    2022's "oracle" temperature), or MacroCE (Si et al. 2022 §4.2). Accuracy
    never changes: dividing by :math:`\tau` keeps each row's argmax. The
    binary form maps a 1-D confidence :math:`c` to
    :math:`\sigma(\mathrm{logit}(c)/\tau)`.

    Parameters
    ----------
    objective : {"nll", "ece", "macro_ce"}
        What the temperature minimises on the calibration data.
    n_bins, binning :
        Binning of the ECE objective (see :func:`calibnb.ece`).
    bounds : (float, float)
        Search interval for :math:`\tau`, default (0.01, 100).
    n_grid : int
        Size of the coarse grid on :math:`\log\tau` that locates the basin
        of the non-smooth objectives (ECE, MacroCE) before the fixed 1 %
        lattice and the local search (see the module docstring).
    tol : float > 0, default 1e-4
        Absolute tolerance on :math:`\log\tau` of the bounded Brent search
        (``scipy.optimize.minimize_scalar(method="bounded", options={"xatol": tol})``),
        i.e. a relative tolerance of about ``tol`` on :math:`\tau`; a fit within
        ``2.5 * tol`` of a bound counts as on the bound. The default keeps fits
        fast and is far below the sampling noise of any calibration set;
        scikit-learn's ``_TemperatureScaling`` (its inverse temperature
        :math:`\beta = 1/\tau`, fitted by L-BFGS on the log loss) is tested to
        reproduce :math:`\beta = 1` within 1e-6 on the training outputs of an
        unpenalised logistic regression; ``tol=1e-6`` meets that and the
        default does not (``tests/test_conventions.py``).

    Attributes
    ----------
    temperature_ : float
        The fitted temperature, always within ``bounds``. When the optimum
        lies on a bound, ``fit`` warns with :class:`CalibrationWarning` (a
        ``sklearn.exceptions.ConvergenceWarning``) naming the bound.
    objective_value_ : float
        The objective at ``temperature_`` on the fit data.
    n_classes_ : int or None
        K for logits; None in the binary form.

    Notes
    -----
    ``fit(logits, labels)`` takes ``(N, K)`` logits or log-probabilities
    (``-inf`` allowed, see :func:`pad_candidates` for QA candidate sets) with
    ``(N,)`` integer labels (``-1`` = no correct candidate, allowed for
    ECE/MacroCE only) or an ``(N, K)`` boolean mask of correct candidates
    (NLL is then the marginal :math:`-\log\sum_{c\ \mathrm{correct}} \hat p_c`);
    or a 1-D array of confidences in [0, 1] with 0/1 correctness (binary form).
    ``transform`` returns ``(N, K)`` probabilities, or 1-D confidences in the
    binary form.

    References
    ----------
    .. [1] Chuan Guo, Geoff Pleiss, Yu Sun, Kilian Q. Weinberger. 2017. "On Calibration of Modern Neural Networks". In Proceedings of the 34th International Conference on Machine Learning (ICML).
    .. [2] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). §6.
    .. [3] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §3.2, §4.2.
    .. [4] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(2000, 3)) * 3.0
    >>> labels = (rng.random((2000, 1)) < np.cumsum(softmax(z), axis=1)).argmax(axis=1)
    >>> ts = TemperatureScaling().fit(2.0 * z, labels)   # twice as overconfident
    >>> round(ts.temperature_, 1)
    2.0
    >>> ts.transform(2.0 * z).shape
    (2000, 3)
    """

    _fitted_attribute = "temperature_"

    def __init__(
        self,
        *,
        objective: str = "nll",
        n_bins: int = 10,
        binning: str = "width",
        bounds: tuple[float, float] = (0.01, 100.0),
        n_grid: int = 25,
        tol: float = 1e-4,
    ):
        self.objective = objective
        self.n_bins = n_bins
        self.binning = binning
        self.bounds = bounds
        self.n_grid = n_grid
        self.tol = tol

    def _check_params(self) -> tuple[float, float]:
        check_choice(self.objective, ("nll", "ece", "macro_ce"), "objective")
        check_n_bins(self.n_bins)
        check_choice(self.binning, ("width", "mass"), "binning")
        check_positive_int(self.n_grid, "n_grid", minimum=3)
        check_scalar_in_range(self.tol, "tol", low=0.0, low_inclusive=False, high=1.0)
        try:
            lo, hi = self.bounds
        except (TypeError, ValueError):
            raise TypeError(f"bounds must be a pair (low, high); got {self.bounds!r}.") from None
        lo = check_scalar_in_range(lo, "bounds[0]", low=0.0, low_inclusive=False)
        hi = check_scalar_in_range(hi, "bounds[1]", low=lo, low_inclusive=False)
        return lo, hi

    def fit(self, logits: Any, labels: Any) -> "TemperatureScaling":
        """Choose the temperature on calibration data; see the class docstring for the forms."""
        lo, hi = self._check_params()
        logits = as_numeric_array(logits, "logits")  # converted before its shape is inspected
        problem = _Problem(logits, labels, self.objective)
        f = _objective_fn(problem, self.objective, self.n_bins, self.binning)

        def g(log_tau: float) -> float:
            return f(float(np.exp(log_tau)))

        a, b = np.log(lo), np.log(hi)
        if self.objective == "nll":
            res = optimize.minimize_scalar(g, bounds=(a, b), method="bounded", options={"xatol": float(self.tol)})
            best_x, best_f = float(res.x), float(res.fun)
        else:
            best_x, best_f = _search_non_smooth(g, a, b, self.n_grid, float(self.tol))
        # exp(log(hi)) may round above hi (100.00000000000004): tau stays within its bounds
        tau = min(max(float(np.exp(best_x)), lo), hi)
        bound_atol = _BOUND_FACTOR * float(self.tol)
        at = "lower" if best_x - a <= bound_atol else "upper" if b - best_x <= bound_atol else None
        if at is not None:
            import warnings

            bound = lo if at == "lower" else hi
            hint = ("the labels carry no signal the logits could fit (near-uninformative labels push tau up), "
                    "or the logits are on a much larger scale than the labels warrant"
                    if at == "upper" else "the logits are on a much smaller scale than the labels warrant")
            warnings.warn(
                f"TemperatureScaling({self.objective!r}): the optimum lies on the {at} search bound tau = {bound:g} "
                f"(bounds={(lo, hi)!r}), so the true minimiser may lie beyond it; widen bounds (e.g. "
                f"bounds={(lo / 100, hi) if at == 'lower' else (lo, hi * 100)!r}) or check the data: {hint}.",
                CalibrationWarning,
                stacklevel=2,
            )
            tau = bound
        self.temperature_ = tau
        self.objective_value_ = best_f if tau == float(np.exp(best_x)) else f(tau)
        self.n_classes_ = None if problem.binary else int(logits.shape[1])
        self._set_n_features_in(logits)
        return self

    def transform(self, logits: Any) -> np.ndarray:
        """Scaled probabilities ``softmax(logits / temperature_)`` (or 1-D confidences, binary form)."""
        self._check_fitted()
        logits = as_numeric_array(logits, "logits")  # converted before its shape is inspected
        if logits.ndim == 1:
            if self.n_classes_ is not None:
                raise ValueError(
                    f"this TemperatureScaling was fitted on (N, {self.n_classes_}) logits; got a 1-D array."
                )
            conf = check_conf(logits, "logits")
            with np.errstate(divide="ignore"):
                return special.expit(special.logit(conf) / self.temperature_)
        z = check_logits(logits)
        if self.n_classes_ is None:
            raise ValueError("this TemperatureScaling was fitted in the binary form (1-D conf); got 2-D logits.")
        if z.shape[1] != self.n_classes_:
            raise ValueError(f"logits has {z.shape[1]} columns but the fit had {self.n_classes_}; they must match.")
        return _softmax(z, self.temperature_)

_BUILTIN_CURVE = ("nll", "accuracy", "mean_conf")
# The metrics temperature_curve accepts by name: those of calibration_scorer, i.e. every public
# (conf, correct) metric of calibnb.metrics.registry (scorer_metrics).


def temperature_curve(
    scores: Any,
    labels: Any,
    temperatures: Any,
    *,
    metrics: Sequence[str] | Mapping[str, Callable[[np.ndarray, np.ndarray], float]] = ("ece", "macro_ce"),
) -> "pd.DataFrame":  # noqa: F821
    r"""Calibration metrics of the top-1 prediction as a function of the temperature.

    For each :math:`\tau` the top-1 confidence :math:`\max_k \mathrm{softmax}(z_i/\tau)_k`
    (or :math:`\sigma(\mathrm{logit}(c_i)/\tau)` in the binary form) is scored
    against the fixed correctness of the prediction. This is Si et al. 2022,
    Appendix A, Figure 5 ("calibration errors after temperature scaling").

    .. math:: \mathrm{row}(\tau) = \big(\tau,\ M_1(c(\tau), y),\ \dots,\ M_m(c(\tau), y)\big)

    Parameters
    ----------
    scores, labels :
        Any input form of :meth:`TemperatureScaling.fit`.
    temperatures : 1-D array of positive floats
    metrics : sequence of names, or mapping name -> callable(conf, correct)
        Names are a fixed list: the metrics of :mod:`calibnb.metrics` returning
        a float of ``(conf, correct)`` -- ``"ece"``, ``"mce"``, ``"ice"``,
        ``"macro_ce"``, ``"hmr"``, ``"brier_top"``, ``"ks_error"`` (the
        binned ones at their defaults) -- and ``"nll"`` (of the true class;
        requires every row to have one), ``"accuracy"``, ``"mean_conf"``. Any
        other function goes in a mapping.

    Returns
    -------
    pandas.DataFrame
        One row per temperature: column ``temperature`` then one per metric.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Appendix A, Figure 5.

    Examples
    --------
    >>> df = temperature_curve([0.9, 0.8, 0.6], [1, 0, 1], [1.0, 2.0], metrics=["mean_conf", "accuracy"])
    >>> df.round(3).to_dict("list")
    {'temperature': [1.0, 2.0], 'mean_conf': [0.767, 0.656], 'accuracy': [0.667, 0.667]}
    """
    import pandas as pd

    taus = as_float_array(temperatures, "temperatures")
    if taus.ndim != 1 or taus.size == 0:
        raise ValueError(f"temperatures must be a non-empty 1-D array; got shape {taus.shape}.")
    bad = ~np.isfinite(taus) | (taus <= 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"temperatures has {int(bad.sum())} value(s) that are not positive and finite; first at index {i}: {taus[i]!r}."
        )
    if isinstance(metrics, Mapping):
        fns = dict(metrics)
        for name, fn in fns.items():
            if not callable(fn):
                raise TypeError(f"metrics[{name!r}] must be callable(conf, correct); got {type(fn).__name__}.")
    else:
        if isinstance(metrics, str):
            metrics = [metrics]
        fns = {}
        for name in metrics:
            if name in _BUILTIN_CURVE:
                fns[name] = None
                continue
            known = scorer_metrics()
            if isinstance(name, str) and name in known:
                fns[name] = known[name][0]
            else:
                raise ValueError(
                    f"metrics has an unknown name {name!r}; use one of "
                    f"{', '.join(repr(b) for b in tuple(known) + _BUILTIN_CURVE)}, "
                    "or pass a mapping name -> callable(conf, correct)."
                )
    need_nll = "nll" in fns and fns["nll"] is None
    problem = _Problem(scores, labels, "nll" if need_nll else "ece", names=("scores", "labels"))
    rows = []
    for tau in taus:
        conf = problem.conf(float(tau))
        row = {"temperature": float(tau)}
        for name, fn in fns.items():
            if fn is not None:
                row[name] = float(fn(conf, problem.correct))
            elif name == "nll":
                row[name] = problem.nll(float(tau))
            elif name == "accuracy":
                row[name] = float(np.mean(problem.correct))
            else:
                row[name] = float(np.mean(conf))
        rows.append(row)
    return pd.DataFrame(rows, columns=["temperature", *fns])
