"""CORP reliability diagrams and the decomposition of a proper score (Dimitriadis, Gneiting & Jordan 2021).

* :func:`corp_reliability` -- the CORP (Consistent, Optimally binned,
  Reproducible, PAV-based) reliability curve: the isotonic (PAV) regression of
  the outcomes on the confidences, which needs no bins, with consistency bands
  obtained by resampling outcomes under the hypothesis of calibration;
* :func:`score_decomposition` -- Brier or log score = MCB - DSC + UNC
  (miscalibration, discrimination, uncertainty), with bootstrap intervals.

Both take ``(conf, correct)``: for a binary problem ``conf`` is the predicted
probability of the positive class and ``correct`` the 0/1 outcome; for
top-label calibration of a K-class model ``conf`` is the top probability and
``correct`` whether the top class is the label. The mathematics is the same.

Conventions, compared with ``model-diagnostics`` 1.5 (its ``decompose`` and
``plot_reliability_diagram``; ``tests/test_corp.py`` checks agreement to 1e-10)
and scikit-learn:

* **ties**: items with equal confidence are pooled before PAV (their mean
  outcome is fitted once, with their total weight) -- what scikit-learn's
  ``IsotonicRegression`` does and what ``model-diagnostics`` inherits; so the
  curve takes one value per distinct confidence;
* **weights**: ``sample_weight`` weights every mean (PAV, the scores, the
  climatology); items of weight 0 are ignored;
* **log score**: confidences are clipped to :math:`[\\epsilon, 1 - \\epsilon]`
  with :math:`\\epsilon` the float64 machine epsilon before the score of the
  original forecast is taken (scikit-learn's ``log_loss`` convention), so a
  confident wrong answer costs :math:`-\\log\\epsilon \\approx 36` instead of
  infinity (``model-diagnostics``' ``LogLoss`` returns infinity there; the two
  agree everywhere else). The PAV values and the climatology are never clipped:
  a PAV value of 0 or 1 only occurs on a block whose outcomes are all 0 or all
  1, which scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .validation import (
    as_rng, check_choice, check_conf_correct, check_positive_int, check_sample_weight, check_scalar_in_range,
)
from .uncertainty import BootstrapResult
from .metrics.registry import Metric, register

__all__ = ["CORPReliability", "corp_reliability", "ScoreDecomposition", "score_decomposition", "corp_miscalibration"]

_EPS = float(np.finfo(np.float64).eps)
#: Elements of the (resamples x confidences) block over which the consistency band's quantiles are taken at once
#: (16 MB of float64): the band's memory stays bounded however many distinct confidences there are.
_BAND_BLOCK = 1 << 21


@dataclass(frozen=True)
class CORPReliability:
    """The CORP reliability curve with its consistency band.

    Attributes
    ----------
    x : ndarray of shape (G,)
        The distinct confidences (of positive weight), increasing.
    cep : ndarray of shape (G,)
        The conditional event probability estimated by PAV at each ``x``
        (non-decreasing; the recalibrated forecast).
    band_low, band_high : ndarray of shape (G,)
        Pointwise ``level`` consistency band: where the PAV curve of data that
        *are* calibrated would lie (NaN when ``n_resamples=0``).
    weight : ndarray of shape (G,)
        Total weight of the items at each ``x`` (their number without weights).
    n : int
        Number of items with positive weight.
    level : float
    n_resamples : int
    """

    x: np.ndarray
    cep: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    weight: np.ndarray
    n: int
    level: float
    n_resamples: int


class ScoreDecomposition(NamedTuple):
    """Score, MCB, DSC and UNC of :func:`score_decomposition`, each a :class:`calibnb.BootstrapResult`.

    Attributes
    ----------
    score : BootstrapResult
        The mean score of the forecasts.
    mcb : BootstrapResult
        Miscalibration: the score minus the score of the PAV-recalibrated forecasts.
    dsc : BootstrapResult
        Discrimination: UNC minus the score of the PAV-recalibrated forecasts.
    unc : BootstrapResult
        Uncertainty: the score of the constant forecast (the mean outcome).
    """

    score: BootstrapResult
    mcb: BootstrapResult
    dsc: BootstrapResult
    unc: BootstrapResult


# --------------------------------------------------------------------------
# shared pieces: pooling of ties, PAV, group-wise scores
# --------------------------------------------------------------------------


def _check_inputs(conf, correct, sample_weight):
    conf, correct = check_conf_correct(conf, correct)
    w = check_sample_weight(sample_weight, conf.shape)
    if w is not None and w.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D with one weight per item; got shape {w.shape}.")
    w = np.ones(conf.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    return conf, correct.astype(np.float64), w


class _Groups:
    """Items sorted by confidence and pooled into groups of equal confidence."""

    def __init__(self, conf, correct, w):
        keep = w > 0
        conf, correct, w = conf[keep], correct[keep], w[keep]
        if conf.shape[0] == 0:
            raise ValueError("sample_weight is 0 for every item; there is nothing to fit.")
        order = np.argsort(conf, kind="stable")
        xs = conf[order]
        new = np.r_[True, xs[1:] != xs[:-1]]
        self.group = np.empty(conf.shape[0], dtype=np.intp)
        self.group[order] = np.cumsum(new) - 1  # group of each (kept) item, in input order
        self.x = xs[new]
        self.g = self.x.shape[0]
        self.conf, self.correct, self.w = conf, correct, w
        self.weight = np.bincount(self.group, weights=w, minlength=self.g)
        self.hits = np.bincount(self.group, weights=w * correct, minlength=self.g)


def _pav(hits: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """PAV of the pooled means ``hits / weight`` with weights ``weight`` (groups of weight 0 get NaN)."""
    from sklearn.isotonic import isotonic_regression

    out = np.full(hits.shape[0], np.nan)
    pos = weight > 0
    if pos.any():
        out[pos] = np.clip(isotonic_regression(hits[pos] / weight[pos], sample_weight=weight[pos]), 0.0, 1.0)
    return out


def _group_score(p: np.ndarray, hits: np.ndarray, weight: np.ndarray, score: str) -> float:
    """Weighted mean score of the constant forecast ``p[g]`` on each group g (groups of weight 0 ignored)."""
    from scipy.special import xlogy

    pos = weight > 0
    p, hits, weight = p[pos], hits[pos], weight[pos]
    if score == "brier":
        total = np.sum(weight * p * p - 2.0 * p * hits + hits)  # sum_i w_i (y_i - p)^2 with y_i^2 = y_i
    else:
        total = -np.sum(xlogy(hits, p) + xlogy(weight - hits, 1.0 - p))
    return float(max(total, 0.0) / weight.sum())


def _decompose(x: np.ndarray, hits: np.ndarray, weight: np.ndarray, score: str,
               pav: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """(score, MCB, DSC, UNC) of the pooled groups (``pav``: their PAV values, if already computed)."""
    xf = np.clip(x, _EPS, 1.0 - _EPS) if score == "log" else x
    s = _group_score(xf, hits, weight, score)
    s_rc = _group_score(_pav(hits, weight) if pav is None else pav, hits, weight, score)
    pos = weight > 0
    ybar = float(np.sum(hits[pos]) / np.sum(weight[pos]))
    s_mg = _group_score(np.full(x.shape[0], ybar), hits, weight, score)
    return s, s - s_rc, s_mg - s_rc, s_mg


# --------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------


def corp_reliability(conf, correct, *, sample_weight=None, n_resamples: int = 1000, level: float = 0.9,
                     seed=None) -> CORPReliability:
    """CORP reliability curve by isotonic regression, with consistency bands (Dimitriadis et al. 2021).

    The recalibrated forecast (conditional event probability, CEP) is the
    isotonic regression of the outcomes on the confidences, computed by the
    pool-adjacent-violators algorithm (scikit-learn's
    :class:`~sklearn.isotonic.IsotonicRegression`):

    .. math::

        \\widehat{\\mathrm{CEP}} = \\arg\\min_{g \\text{ non-decreasing}}
        \\sum_{i=1}^{N} w_i\\,(y_i - g(c_i))^2

    with confidences :math:`c_i`, outcomes :math:`y_i \\in \\{0, 1\\}` and
    weights :math:`w_i` (1 without ``sample_weight``). PAV chooses the bins
    itself (its blocks), so the curve has no tuning parameter, and it is the
    same minimiser for every proper score (the paper's Theorem 1).

    Consistency band (the paper's resampling band, Section 3; Bröcker & Smith's
    consistency resampling): under the hypothesis of calibration, each of
    ``n_resamples`` resamples draws N items with replacement (their
    confidences :math:`c^*_i` and weights) and outcomes
    :math:`y^*_i \\sim \\mathrm{Bernoulli}(c^*_i)`, and PAV is refitted on it;
    a confidence absent from a resample takes the refitted value at the
    nearest smaller confidence present (the nearest larger one below the
    smallest). At every confidence the band runs between the
    :math:`(1-\\text{level})/2` and :math:`(1+\\text{level})/2` quantiles of
    the refitted curves. This is the algorithm of R ``reliabilitydiag``'s
    ``region.method = "resampling"``, ``region.position = "diagonal"`` (per its
    source; there ``n.boot = 100`` by default, and no weights) and of R
    ``triptych``'s ``resampling_Bernoulli`` (``resample_x = TRUE``). Keeping
    the confidences fixed instead would give a narrower band that ignores
    the sampling noise of the confidences themselves. A CEP outside the band
    is evidence of miscalibration at that confidence.

    Parameters
    ----------
    conf : array-like of shape (N,)
        Confidences in [0, 1]: P(positive) of a binary forecast, or the top-label probability.
    correct : array-like of shape (N,)
        0/1 outcomes (1: positive, or the top class is the label).
    sample_weight : array-like of shape (N,), optional
        Non-negative item weights.
    n_resamples : int >= 0, default 1000
        Resamples of the consistency band; 0 skips it (band of NaN).
    level : float in (0, 1), default 0.9
        Level of the pointwise band (the paper's and ``reliabilitydiag``'s 90 %).
    seed : None, int or numpy.random.Generator

    Returns
    -------
    CORPReliability
        One row per distinct confidence (ties pooled; see the module docstring).

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
       diagrams for probabilistic classifiers", PNAS 118(8):e2016191118, 2021,
       Sections 2-3 (CORP, consistency bands).
    .. [2] J. Bröcker and L. A. Smith, "Increasing the reliability of
       reliability diagrams", Weather and Forecasting 22(3):651-661, 2007
       (consistency resampling).

    Examples
    --------
    >>> r = corp_reliability([0.1, 0.3, 0.3, 0.6, 0.9], [0, 1, 0, 0, 1], n_resamples=0)
    >>> r.x.tolist(), r.cep.tolist()
    ([0.1, 0.3, 0.6, 0.9], [0.0, 0.3333333333333333, 0.3333333333333333, 1.0])
    """
    from sklearn.isotonic import IsotonicRegression

    conf, correct, w = _check_inputs(conf, correct, sample_weight)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=0)
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    rng = as_rng(seed)
    grp = _Groups(conf, correct, w)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    cep = iso.fit(grp.conf, grp.correct, sample_weight=grp.w).predict(grp.x)
    low = np.full(grp.g, np.nan)
    high = np.full(grp.g, np.nan)
    if n_resamples > 0:
        # Each refitted curve is a step function with few steps (PAV's blocks): it is kept as its steps (first
        # index and value of each), not as a row of a (n_resamples, G) matrix (160 MB at 200 resamples of 100,000
        # distinct confidences, and as much again for the quantiles' copy), and the band's quantiles are taken
        # over blocks of columns rebuilt from the steps: the same values, so the same band bit for bit.
        starts, values = [], []
        n = grp.conf.shape[0]
        pos = np.arange(grp.g)
        for k in range(n_resamples):
            # the items resampled with replacement (confidences and weights); intp: 32-bit Pyodide's
            # bincount refuses int64 indices (the draws are unchanged)
            idx = rng.integers(0, n, n).astype(np.intp, copy=False)
            ystar = rng.random(n) < grp.conf[idx]  # outcomes drawn under calibration
            g, wi = grp.group[idx], grp.w[idx]
            cur = _pav(np.bincount(g, weights=wi * ystar, minlength=grp.g),
                       np.bincount(g, weights=wi, minlength=grp.g))
            # confidences absent from the resample: the value at the nearest smaller one present, else larger
            have = ~np.isnan(cur)
            last = np.maximum.accumulate(np.where(have, pos, -1))
            curve = np.where(last >= 0, cur[np.maximum(last, 0)], cur[np.argmax(have)])
            bits = curve.view(np.uint64)  # steps where the bits change (NaN and -0.0 kept exactly)
            first = np.flatnonzero(np.concatenate(([True], bits[1:] != bits[:-1])))
            starts.append(first)
            values.append(curve[first])
        alpha = (1.0 - level) / 2.0
        step = max(1, _BAND_BLOCK // n_resamples)
        for j0 in range(0, grp.g, step):
            cols = pos[j0:j0 + step]
            block = np.empty((n_resamples, cols.size))
            for k in range(n_resamples):
                block[k] = values[k][np.searchsorted(starts[k], cols, side="right") - 1]
            low[j0:j0 + step], high[j0:j0 + step] = np.quantile(block, [alpha, 1.0 - alpha], axis=0)
    return CORPReliability(x=grp.x, cep=np.asarray(cep, dtype=np.float64), band_low=low, band_high=high,
                           weight=grp.weight, n=int(grp.conf.shape[0]), level=float(level),
                           n_resamples=n_resamples)


def score_decomposition(conf, correct, *, score: str = "brier", sample_weight=None, n_resamples: int = 1000,
                        level: float = 0.95, seed=None) -> ScoreDecomposition:
    """Decompose the Brier or log score into miscalibration, discrimination and uncertainty (CORP).

    With :math:`S` the mean score, :math:`\\hat c_i = \\widehat{\\mathrm{CEP}}(c_i)`
    the PAV-recalibrated forecasts (:func:`corp_reliability`) and
    :math:`\\bar y` the (weighted) mean outcome:

    .. math::

        \\mathrm{MCB} = S(c) - S(\\hat c),\\qquad
        \\mathrm{DSC} = S(\\bar y) - S(\\hat c),\\qquad
        \\mathrm{UNC} = S(\\bar y),\\qquad
        S(c) = \\mathrm{MCB} - \\mathrm{DSC} + \\mathrm{UNC}

    with :math:`S(p) = \\frac{\\sum_i w_i s(p_i, y_i)}{\\sum_i w_i}`,
    :math:`s(p, y) = (y - p)^2` (Brier) or :math:`-y\\log p - (1-y)\\log(1-p)`
    (log). MCB >= 0 and DSC >= 0 always (PAV is optimal among non-decreasing
    recalibrations for every proper score); the identity holds exactly, up to
    rounding. The interval of each term is a percentile bootstrap over items
    (each resample refits PAV; resamples are multiplicity weights, as in
    :func:`calibnb.bootstrap_ci`). MCB is an in-sample quantity bounded
    below by 0 and biased upwards (PAV fits the noise of the same items), so
    its percentile interval is a rough guide, not an exact confidence
    interval; R ``triptych`` warns likewise that bootstrapping may be
    unreliable for the MCB component. For an out-of-sample estimate use
    :func:`calibnb.recalibration_gain` with ``calibrator="isotonic"``.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        As in :func:`corp_reliability` (binary or top-label).
    score : {"brier", "log"}, default "brier"
        The Brier score is the one-column form (scikit-learn's
        ``brier_score_loss``), half the two-class Brier of probmetrics and
        torchmetrics. The log score clips ``conf`` as scikit-learn's
        ``log_loss`` does (module docstring).
    sample_weight : array-like of shape (N,), optional
    n_resamples : int >= 0, default 1000
        Bootstrap resamples; 0 gives no interval (``low = high = NaN``).
    level : float in (0, 1), default 0.95
    seed : None, int or numpy.random.Generator

    Returns
    -------
    ScoreDecomposition(score, mcb, dsc, unc)
        Each a :class:`calibnb.BootstrapResult` ``(estimate, low, high)``.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
       diagrams for probabilistic classifiers", PNAS 118(8):e2016191118, 2021,
       Section 4, Eq. 3 (CORP score decomposition).
    .. [2] T. Dimitriadis, T. Gneiting, A. I. Jordan and P. Vogel, "Evaluating
       probabilistic classifiers: The triptych", International Journal of
       Forecasting 40(3), 2024.

    Examples
    --------
    >>> d = score_decomposition([0.2, 0.2, 0.8, 0.8], [0, 0, 1, 0], n_resamples=0)
    >>> round(d.score.estimate, 4), round(d.mcb.estimate, 4), round(d.dsc.estimate, 4), round(d.unc.estimate, 4)
    (0.19, 0.065, 0.0625, 0.1875)
    """

    score = check_choice(score, ("brier", "log"), "score")
    return _decompositions(conf, correct, sample_weight, (score,), n_resamples, level, seed)[score]


def _decompositions(conf, correct, sample_weight, scores: tuple, n_resamples, level, seed) -> dict:
    """:func:`score_decomposition` of each of ``scores`` from the same resamples (identical to one call each)."""
    conf, correct, w = _check_inputs(conf, correct, sample_weight)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=0)
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    rng = as_rng(seed)
    grp = _Groups(conf, correct, w)
    fitted = _pav(grp.hits, grp.weight)
    est = {s: _decompose(grp.x, grp.hits, grp.weight, s, fitted) for s in scores}
    if n_resamples == 0:
        return {s: ScoreDecomposition(*(BootstrapResult(float(e), np.nan, np.nan) for e in est[s])) for s in scores}
    n = grp.conf.shape[0]
    dist = {s: np.empty((n_resamples, 4)) for s in scores}
    for b in range(n_resamples):
        m = np.bincount(rng.integers(0, n, n).astype(np.intp, copy=False), minlength=n) * grp.w  # multiplicity x weight
        hits = np.bincount(grp.group, weights=m * grp.correct, minlength=grp.g)
        weight = np.bincount(grp.group, weights=m, minlength=grp.g)
        fitted = _pav(hits, weight)  # the same PAV fit for every score
        for s in scores:
            dist[s][b] = _decompose(grp.x, hits, weight, s, fitted)
    alpha = (1.0 - level) / 2.0
    out = {}
    for s in scores:
        lo, hi = np.quantile(dist[s], [alpha, 1.0 - alpha], axis=0)
        out[s] = ScoreDecomposition(*(BootstrapResult(float(e), float(a), float(b_))
                                      for e, a, b_ in zip(est[s], lo, hi)))
    return out


def corp_miscalibration(conf, correct, *, score: str = "brier", sample_weight=None) -> float:
    """CORP miscalibration (MCB): how much PAV recalibration lowers the Brier or log score.

    The MCB term of :func:`score_decomposition` alone, as a float:

    .. math::

        \\mathrm{MCB} = S(c) - S(\\hat c),\\qquad
        \\hat c_i = \\widehat{\\mathrm{CEP}}(c_i)\\ \\text{(PAV, :func:`corp_reliability`)}

    with :math:`S` the (weighted) mean Brier or log score (Dimitriadis et al.
    2021, Section 4, Eq. 3). It is 0 exactly when the confidences are their
    own PAV recalibration, and it needs no bins. In-sample and biased upwards
    (PAV fits the noise of the same items); :func:`calibration_loss_gain` with
    ``calibrator="isotonic"`` is the cross-fitted counterpart. Conventions
    (ties pooled, log-score clipping): the module docstring.

    This is the registered metric ``corp_mcb_brier`` / ``corp_mcb_log``
    (:mod:`calibnb.metrics.registry`); :func:`calibnb.metric_summary` takes
    its interval from :func:`score_decomposition`'s bootstrap (which refits
    PAV in every resample).

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        As in :func:`corp_reliability` (binary or top-label).
    score : {"brier", "log"}, default "brier"
    sample_weight : array-like of shape (N,), optional

    Returns
    -------
    float >= 0

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
       diagrams for probabilistic classifiers", PNAS 118(8):e2016191118, 2021,
       Section 4, Eq. 3.

    Examples
    --------
    >>> round(corp_miscalibration([0.2, 0.2, 0.8, 0.8], [0, 0, 1, 0]), 4)
    0.065
    >>> round(corp_miscalibration([0.2, 0.2, 0.8, 0.8], [0, 0, 1, 0], score="log"), 4)
    0.2231
    """
    d = score_decomposition(conf, correct, score=score, sample_weight=sample_weight, n_resamples=0)
    return float(d.mcb.estimate)


def _mcb_interval(conf, correct, *, sample_weight=None, n_resamples: int, level: float, seed, cache: dict,
                  score: str):
    """(estimate, low, high) of the MCB by :func:`score_decomposition`'s bootstrap (the registry's interval).

    Both scores' decompositions come from one set of resamples, kept in ``cache`` for the sibling row.
    """
    key = ("corp.score_decomposition", n_resamples, level, seed)
    if key not in cache:
        cache[key] = _decompositions(conf, correct, sample_weight, ("brier", "log"), n_resamples, level, seed)
    d = cache[key][score].mcb
    if n_resamples == 0:
        return float(d.estimate), None, None
    return float(d.estimate), float(d.low), float(d.high)


# ---------------------------------------------------------------- registry declarations (calibnb.metrics.registry)
_PAV_NOT_MERGEABLE = ("PAV pools adjacent groups across the whole sorted sample, so partial results of chunks do not "
                      "merge; computed on rows held in memory (the audit: at most CORP_ROWS of them)")
for _score, _label in (("brier", "Brier score"), ("log", "log loss")):
    register(Metric(f"corp_mcb_{_score}", f"CORP miscalibration (MCB, {_label})", "Dimitriadis 2021",
                    f"how much {_label} the best monotone (PAV) recalibration removes, in sample (no bins)",
                    corp_miscalibration, form="own", interval=_mcb_interval, options=(("score", _score),),
                    aka=f'MCB of the CORP decomposition; corp_miscalibration(conf, correct, score="{_score}"), '
                        f'score_decomposition(...).mcb',
                    not_mergeable=_PAV_NOT_MERGEABLE))
