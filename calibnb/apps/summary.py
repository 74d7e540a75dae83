r"""Every applicable calibration metric of the five papers, with intervals, from arrays.

The generic layer behind ``python -m calibnb.audit`` (and usable on its own):

* :func:`metric_summary` -- accuracy and every metric that applies to the
  arrays given (top-1 confidences; class probabilities; human vote counts;
  per-row weights), each with a seeded bootstrap interval, the paper it comes
  from and a one-line plain-language reading.
* :func:`cross_fit` -- k-fold cross-fitted recalibration: each fold's outputs
  come from a calibrator fitted on the other folds only.
* :func:`recalibration_comparison` -- :func:`metric_summary` of every
  cross-fitted method in one long table, and :func:`metric_picks`, the method
  each metric would pick.
* :func:`reliability_intervals` -- per-bin accuracy with Wilson score intervals.

Every metric is a fraction; lower is better except for accuracy, R_O, R_U,
HMR and RankCS (``higher_is_better`` in the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from scipy import special
from sklearn.base import clone
from sklearn.model_selection import KFold

from ..metrics import (
    classwise_ks, expected_label, human_distribution, ks_error, majority_label, reliability_table, top_r, within_top_r,
)
from .. import calibrators
from ..metrics import registry
from ..uncertainty import bootstrap_ci, bootstrap_weights, percentile_interval
from ..validation import (
    as_rng, check_choice, check_conf_correct, check_human, check_n_bins, check_positive_int, check_probs,
    check_labels, check_logits, check_sample_weight, check_scalar_in_range, seed_int,
)

__all__ = [
    "PAPERS",
    "METHODS",
    "metric_summary",
    "row_reductions",
    "concat_reductions",
    "cross_fit",
    "recalibration_comparison",
    "metric_picks",
    "reliability_intervals",
    "applicable_methods",
    "Recalibrated",
]

#: The notebook that explains each paper's metrics (relative to ``notebooks/``).
PAPERS = {
    "Si 2022": "01_si2022_macroce_qa.ipynb",
    "Baan 2022": "02_baan2022_human_disagreement.ipynb",
    "Gupta 2021": "03_gupta2021_ks_splines.ipynb",
    "Sakai 2024": "04_sakai2024_hmr.ipynb",
    "Jiang 2024": "05_jiang2024_scalar_labels.ipynb",
    "Guo 2017": None,
    "Kumar 2019": None,
    "Blasiok 2023": None,
    "Dimitriadis 2021": "06_estimators_with_intervals.ipynb",
    "Berta 2025": "06_estimators_with_intervals.ipynb",
    "Arrieta-Ibarra 2022": None,
}

#: Recalibration methods, in table order, with what they need.
METHODS = {
    "uncalibrated": "the model's own outputs",
    "TS (NLL)": "temperature scaling, temperature minimising the NLL (Guo 2017)",
    "TS (ECE)": "temperature scaling, temperature minimising the 15-bin ECE (Si 2022 §2.2)",
    "vector scaling": "per-class scale and bias of the logits (Guo 2017); multi-class only",
    "Platt": "sigmoid of an affine map of the score's logit (Platt 1999); binary only",
    "spline": "natural cubic spline on the cumulative accuracy, 6 knots (Gupta 2021 §4)",
    "isotonic": "monotone step function (Zadrozny & Elkan 2002)",
    "histogram binning": "15 equal-width bins, each mapped to its accuracy (Zadrozny & Elkan 2001)",
}


# ----------------------------------------------------------------------- metrics

def _wmean(x, w) -> float:
    x = np.asarray(x, dtype=np.float64)
    return float(x.mean()) if w is None else float(np.average(x, weights=w))


@dataclass(frozen=True)
class _Spec:
    key: str
    name: str
    paper: str
    reading: str
    fn: Callable | None     # see ``kind``
    arrays: str             # which derived arrays it takes (see metric_summary)
    kind: str               # "binary": calibnb binary metric fn(conf, correct, sample_weight=, **options);
                            # "mean": fn(*arrays) -> per-row values, the metric is their weighted mean;
                            # "classwise": fn is a binary metric applied per class of (probs, labels), averaged;
                            # "loop": fn(*arrays) -> float, unweighted, bootstrapped by resampling rows
                            # "own": interval(*arrays, sample_weight=, n_resamples=, level=, seed=) gives all
    higher_is_better: bool = False
    options: tuple = ()
    interval: Callable | None = None


def _specs(n_bins: int) -> list[_Spec]:
    """The summary's rows: every metric of :mod:`calibnb.metrics.registry`, in its order."""
    out = []
    for m in registry.metrics():
        fn = m.per_item if m.form == "mean" else m.fn
        options = tuple(m.call_options(n_bins).items())
        out.append(_Spec(m.key, m.name.replace("{n_bins}", str(n_bins)), m.paper, m.reading, fn, m.inputs, m.form,
                         higher_is_better=m.higher_is_better, options=options, interval=m.interval))
    return out


#: Elements of a (resamples x rows) weight block drawn at once (memory bound of the bootstraps).
_BLOCK = 1_000_000  # 8 MB per float64 block: an audit's peak memory stays below 1 GiB (benchmarks/bench_audit.py)


def _weight_blocks(n: int, n_resamples: int, seed: int):
    """Bootstrap multiplicities in blocks of shape (S_b, n) (:func:`calibnb.uncertainty.bootstrap_weights`)."""
    return bootstrap_weights(n, n_resamples, seed=seed, block_elements=_BLOCK)


def _classwise_value(metric, p, y, w, options):
    """Mean over classes c of ``metric(p[:, c], y == c, sample_weight=w)``; w may be (S, N).

    Each class's rows are handed over sorted by its probability (stable, so tied
    rows keep their order): the metrics' per-row sorts then run on sorted data.
    """
    out = 0.0
    for c in range(p.shape[1]):
        order = np.argsort(p[:, c], kind="stable")
        wc = None if w is None else w[..., order]
        out = out + metric(np.clip(p[order, c], 0.0, 1.0), (y[order] == c).astype(np.float64),
                           sample_weight=wc, **options)
    return out / p.shape[1]


def _interval(spec: _Spec, arrays: tuple, w, n_resamples: int, level: float, seed: int, cache=None):
    """(estimate, low, high) of one metric; low/high None when n_resamples == 0."""
    options = dict(spec.options)
    if spec.kind == "own":  # the estimator's own estimate and interval (calibnb.metrics.registry, form "own")
        est, lo, hi = spec.interval(*arrays, sample_weight=w, n_resamples=n_resamples, level=level, seed=seed,
                                    cache={} if cache is None else cache, **options)
        return float(est), (None if lo is None else float(lo)), (None if hi is None else float(hi))
    if spec.kind == "binary":
        est = float(spec.fn(*arrays, sample_weight=w, **options))
        if n_resamples == 0:
            return est, None, None
        r = bootstrap_ci(spec.fn, *arrays, n_resamples=n_resamples, level=level, seed=seed, sample_weight=w,
                         **options)
        return est, float(r.low), float(r.high)
    if spec.kind == "loop":
        est = float(spec.fn(*arrays, **options))
        if n_resamples == 0:
            return est, None, None
        r = bootstrap_ci(spec.fn, *arrays, n_resamples=n_resamples, level=level, seed=seed, vectorized=False,
                         **options)
        return est, float(r.low), float(r.high)
    if spec.kind == "mean":
        v = np.asarray(spec.fn(*arrays), dtype=np.float64)
        est = _wmean(v, w)
        if n_resamples == 0:
            return est, None, None
        dist = []
        for m in _weight_blocks(v.shape[0], n_resamples, seed):
            if w is not None:
                m *= w
            dist.append(m @ v / m.sum(axis=1))
        lo, hi = percentile_interval(np.concatenate(dist), level=level)
        return est, lo, hi
    # class-wise: every class's binary metric with the batch axis of the multiplicities
    p, y = arrays
    if spec.fn is ks_error and w is None:
        est = float(classwise_ks(p, y))  # the library's class-wise KS (equal to the per-class mean below)
    else:
        est = float(_classwise_value(spec.fn, p, y, w, options))
    if n_resamples == 0:
        return est, None, None
    dist = []
    for m in _weight_blocks(p.shape[0], n_resamples, seed):
        if w is not None:
            m *= w
        dist.append(_classwise_value(spec.fn, p, y, m, options))
    lo, hi = percentile_interval(np.concatenate(dist), level=level)
    return est, lo, hi


def _check_inputs(conf, correct, probs, labels, votes, sample_weight, n_bins, level, seed, logits=None):
    """Validated arrays (ValueError/TypeError naming the argument)."""
    conf, correct = check_conf_correct(conf, correct)
    correct = correct.astype(np.float64)
    n = conf.shape[0]
    check_n_bins(n_bins)
    check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    as_rng(seed)  # validates the seed
    w = None if sample_weight is None else check_sample_weight(sample_weight, (n,))
    p = y = h = z = None
    if logits is not None:
        z = check_logits(logits)
    if probs is not None or labels is not None:
        if probs is None or labels is None:
            raise TypeError("probs and labels go together; give both or neither.")
        p = check_probs(probs)
        y = check_labels(labels, p.shape[0], p.shape[1])
        if p.shape[0] != n:
            raise ValueError(f"probs has {p.shape[0]} rows but conf has {n}; they must match.")
    if votes is not None:
        if p is None:
            raise TypeError("votes need probs and labels (the model's class distribution).")
        h = check_human(votes, p.shape[0], p.shape[1], name="votes").astype(np.float64)
    return conf, correct, p, y, h, w, z


#: Array sets that need whole rows of class probabilities (a subsample when streaming).
_WHOLE_ROWS_ONLY = {"probs", "votes", "probs_majority"}


def _identity(v):
    return v


def row_reductions(probs, labels, votes=None, *, scalar_values=None, n_bins: int = 15) -> dict:
    r"""What the per-row metrics keep of K-class rows: a few numbers per row, not K.

    Top-2 and within-top-2 confidence and correctness (Gupta 2021), the
    per-row values whose mean is a metric (NBR's squared errors; with votes
    the agreement with the human majority, DistCE, \|EntCE\|, Jiang's CE and
    the absolute :math:`\psi_f` error), and :math:`\psi_f` of model and humans
    (for the ranking risk). Rows can be reduced chunk by chunk and the results
    concatenated (:func:`concat_reductions`): :func:`metric_summary` with
    ``derived=`` then gives the same numbers as on the whole arrays.

    Returns
    -------
    dict
        Keys ``"top2"``, ``"within2"``, ``"psi"`` (pairs of (N,) arrays) and
        ``"rows:<metric key>"`` (one (N,) array each).

    Examples
    --------
    >>> r = row_reductions(np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]]), np.array([0, 2]))
    >>> r["top2"][1].tolist(), np.round(r["rows:nbr"][0], 4).tolist()
    ([0.0, 1.0], [0.0467, 0.26])
    """
    p = check_probs(probs)
    y = check_labels(labels, p.shape[0], p.shape[1])
    check_n_bins(n_bins)
    out: dict[str, tuple] = {}
    c2, y2 = top_r(p, y, r=2)
    cw, yw = within_top_r(p, y, r=2)
    out["top2"] = (np.clip(np.asarray(c2, np.float64), 0, 1), np.asarray(y2, np.float64))
    out["within2"] = (np.clip(np.asarray(cw, np.float64), 0, 1), np.asarray(yw, np.float64))
    specs = [s_ for s_ in _specs(n_bins) if s_.kind == "mean"]
    for spec in specs:
        if spec.arrays == "probs":
            out[f"rows:{spec.key}"] = (np.asarray(spec.fn(p, y), dtype=np.float64),)
    if votes is not None:
        h = check_human(votes, p.shape[0], p.shape[1], name="votes").astype(np.float64)
        k = p.shape[1]
        v = np.linspace(1.0, 0.0, k) if scalar_values is None else np.asarray(scalar_values, dtype=np.float64)
        if v.shape != (k,):
            raise ValueError(f"scalar_values has length {v.shape[0]} but there are {k} classes; they must match.")
        out["psi"] = (expected_label(p, v), expected_label(human_distribution(h), v))
        for spec in specs:
            if spec.arrays == "votes":
                out[f"rows:{spec.key}"] = (np.asarray(spec.fn(p, h), dtype=np.float64),)
            elif spec.arrays == "psi":
                out[f"rows:{spec.key}"] = (np.asarray(spec.fn(*out["psi"]), dtype=np.float64),)
    return out


def concat_reductions(parts) -> dict:
    """Concatenate :func:`row_reductions` of consecutive chunks of rows.

    Examples
    --------
    >>> p = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]]); y = np.array([0, 2])
    >>> whole = row_reductions(p, y)
    >>> parts = concat_reductions([row_reductions(p[:1], y[:1]), row_reductions(p[1:], y[1:])])
    >>> all(np.array_equal(a, b) for k in whole for a, b in zip(whole[k], parts[k]))
    True
    """
    if not isinstance(parts, (list, tuple)) or not parts or not all(isinstance(x, dict) for x in parts):
        raise TypeError(f"parts must be a non-empty list of row_reductions dicts; got {type(parts).__name__}.")
    parts = list(parts)
    return {k: tuple(np.concatenate([part[k][i] for part in parts]) for i in range(len(parts[0][k])))
            for k in parts[0]}


def metric_summary(
    conf, correct, *, probs=None, labels=None, votes=None, sample_weight=None, scalar_values=None,
    n_bins: int = 15, n_resamples: int = 200, heavy_resamples: int = 50, level: float = 0.95, seed=None,
    include=None, derived=None, class_weight=None,
) -> pd.DataFrame:
    r"""Accuracy and every applicable calibration metric, each with a bootstrap interval.

    The top-1 metrics (ECE, MCE, ICE, MacroCE, R_O, R_U, HMR, KS, top-1
    Brier, smooth and debiased ECE) use ``conf``, ``correct``; with ``probs``
    and ``labels`` the class-level ones follow (KS top-2, within-top-2 and
    class-wise, class-wise ECE, NBR); with human ``votes`` (counts, (N, K))
    those of Baan 2022 (DistCE, |EntCE|, RankCS, class-wise ECE against the
    human majority) and Jiang 2024 (CE, and the MAE and ranking risk of
    :math:`\psi_f(p) = \sum_k p_k f_k` with ``scalar_values`` :math:`f`).
    Each interval is the seeded percentile bootstrap of
    :func:`calibnb.bootstrap_ci`, resampling rows (with their weights),
    except for the estimators that refit inside (registry form ``"own"``:
    CORP's miscalibration, the cross-fitted loss gain of temperature scaling),
    whose estimate and interval come from their own method
    (:func:`calibnb.score_decomposition`'s bootstrap,
    :func:`calibnb.recalibration_gain`'s paired bootstrap; the folds use
    ``seed``). Such a row that cannot be computed on the data (e.g. fewer rows
    than folds) has estimate NaN and a reading beginning "not computed".

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        Top-1 confidence and whether the top-1 prediction is correct.
    probs : array-like of shape (N, K), optional
    labels : array-like of shape (N,), optional
    votes : array-like of shape (N, K), optional
        Human vote counts per class.
    sample_weight : array-like of shape (N,), optional
        Per-row weights. Metrics that take no weights (smooth and debiased ECE,
        RankCS, RR) are computed unweighted; the column ``weighted`` says which.
    scalar_values : array-like of shape (K,), optional
        Class values :math:`f_k` for :math:`\psi_f`; default evenly spaced from
        1 (class 0) to 0 (class K-1).
    n_bins : int, default 15
    n_resamples : int >= 0, default 200
        0 gives no intervals (``low``/``high`` None).
    heavy_resamples : int >= 0, default 50
        Resamples for the metrics that cannot use the batch axis or loop over
        classes (smooth and debiased ECE, RankCS, RR, class-wise KS and ECE)
        and for those with their own interval (registry form ``"own"``: CORP's
        MCB, the loss gain of temperature scaling):
        ``min(n_resamples, heavy_resamples)``. The column ``resamples`` says
        how many each interval used.
    level : float, default 0.95
    seed : None, int or numpy.random.Generator, default None
        Every metric's bootstrap (and the folds of a cross-fitted metric) uses
        this seed (same resampled rows); None or a Generator: one int drawn
        from it. Pass an int to reproduce a table.
    include : collection of str, optional
        Only these metric keys.
    derived : dict, optional
        :func:`row_reductions` of every row of a file too large to hold
        (``python -m calibnb.audit`` streams it); ``probs``, ``labels``,
        ``votes`` are then a subsample, used only by the metrics that need
        whole rows (class-wise KS and ECE, RankCS), with ``class_weight`` as
        their weights. The column ``rows`` says how many rows each metric used.

    Returns
    -------
    pandas.DataFrame
        One row per metric: ``key, metric, estimate, low, high, resamples,
        rows, higher_is_better, weighted, paper, reading``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 200); correct = rng.uniform(size=200) < conf
    >>> t = metric_summary(conf, correct, n_resamples=0, seed=0)
    >>> t.set_index("key").loc["macro_ce", "paper"]
    'Si 2022'
    >>> bool(t.set_index("key").loc["ece_width", "estimate"] < 0.15)
    True
    """
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=0)
    heavy_resamples = check_positive_int(heavy_resamples, "heavy_resamples", minimum=0)
    if derived is None:
        conf, correct, p, y, h, w, _ = _check_inputs(conf, correct, probs, labels, votes, sample_weight, n_bins,
                                                      level, seed)
    else:  # streamed: the class-level arrays are a subsample, checked by the reader
        conf, correct = check_conf_correct(conf, correct)
        correct = correct.astype(np.float64)
        w = None if sample_weight is None else check_sample_weight(sample_weight, (conf.shape[0],))
        p = None if probs is None else np.asarray(probs, dtype=np.float64)
        y = None if labels is None else np.asarray(labels, dtype=np.int64)
        h = None if votes is None else np.asarray(votes, dtype=np.float64)
    seed = seed_int(seed)  # one seed for every metric: the same resampled rows
    arrays: dict[str, tuple] = {"binary": (conf, correct)}
    if p is not None:
        arrays["probs"] = (p, y)
        if h is not None:
            arrays["votes"] = (p, h)
            arrays["probs_majority"] = (p, majority_label(h))
        arrays.update(row_reductions(p, y, h, scalar_values=scalar_values, n_bins=n_bins))
    if derived is not None:
        arrays.update(derived)  # rows of the whole file (streaming) take precedence
    cw = w if class_weight is None else np.asarray(class_weight, dtype=np.float64)
    specs = {s_.key: s_ for s_ in _specs(n_bins)}
    rows = []
    shared: dict = {}  # the own-interval estimators' cache, per array set (calibnb.metrics.registry)
    for spec in specs.values():
        if include is not None and spec.key not in include:
            continue
        if spec.kind == "mean" and f"rows:{spec.key}" in arrays:
            spec = _Spec(**{**spec.__dict__, "fn": _identity, "arrays": f"rows:{spec.key}"})
        elif spec.arrays not in arrays:
            continue
        data = arrays[spec.arrays]
        ww = cw if spec.arrays in _WHOLE_ROWS_ONLY else w
        b = min(n_resamples, heavy_resamples) if spec.kind in ("loop", "classwise", "own") else n_resamples
        reading = spec.reading
        try:
            est, lo, hi = _interval(spec, data, ww, b, level, seed, cache=shared.setdefault(spec.arrays, {}))
        except ValueError as exc:
            if spec.kind != "own":
                raise
            # an estimator that refits (folds, PAV) may not apply to these rows (e.g. fewer rows than folds):
            # the row says so instead of failing the whole summary
            est, lo, hi, b = float("nan"), None, None, 0
            reading = f"not computed: {exc}"
        rows.append({"key": spec.key, "metric": spec.name, "estimate": est, "low": lo, "high": hi, "resamples": b,
                     "rows": int(np.shape(data[0])[0]), "higher_is_better": spec.higher_is_better,
                     "weighted": bool(ww is not None and spec.kind != "loop"),
                     "paper": spec.paper, "reading": reading})
    order = list(specs)
    rows.sort(key=lambda r: order.index(r["key"]))
    return pd.DataFrame(rows, columns=["key", "metric", "estimate", "low", "high", "resamples", "rows",
                                       "higher_is_better", "weighted",
                                       "paper", "reading"])


# ------------------------------------------------------------------ reliability

def reliability_intervals(conf, correct, *, n_bins: int = 15, binning: str = "width", sample_weight=None,
                          level: float = 0.95):
    """Per-bin reliability table with a Wilson interval of each bin's accuracy.

    :func:`calibnb.reliability_table` with ``interval="wilson"`` (Wilson 1927):
    columns ``bin, lower, upper, count, n_correct, mean_conf, accuracy, gap,
    acc_low, acc_high``.

    Examples
    --------
    >>> t = reliability_intervals([0.2, 0.25, 0.9, 0.95], [0, 1, 1, 1], n_bins=2)
    >>> bool((t.acc_low <= t.accuracy).all() and (t.accuracy <= t.acc_high).all())
    True
    """
    check_choice(binning, ("width", "mass"), "binning")
    return reliability_table(conf, correct, n_bins=n_bins, binning=binning, sample_weight=sample_weight,
                             interval="wilson", level=level)


# ----------------------------------------------------------------- recalibration

@dataclass
class Recalibrated:
    """Cross-fitted outputs of one method.

    ``probs`` is None for methods that recalibrate only the top-1 confidence
    (spline, isotonic, histogram binning), whose class-level metrics are then
    not applicable.
    """

    method: str
    conf: np.ndarray
    correct: np.ndarray
    probs: np.ndarray | None
    labels: np.ndarray | None


def applicable_methods(n_classes: int | None = None) -> list[str]:
    """Methods for top-1 data (``n_classes=None``: conf and correct only) or K-class probabilities.

    Examples
    --------
    >>> applicable_methods(None)
    ['uncalibrated', 'TS (NLL)', 'TS (ECE)', 'Platt', 'spline', 'isotonic', 'histogram binning']
    >>> applicable_methods(10)[:4]
    ['uncalibrated', 'TS (NLL)', 'TS (ECE)', 'vector scaling']
    """
    if n_classes is not None:
        n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    out = ["uncalibrated", "TS (NLL)", "TS (ECE)"]
    if n_classes is not None and n_classes >= 3:
        out.append("vector scaling")
    if n_classes is None or n_classes == 2:
        out.append("Platt")
    return out + ["spline", "isotonic", "histogram binning"]


#: The estimator of each method, cloned for every fold (:func:`cross_fit`).
_ESTIMATORS = {
    "TS (NLL)": calibrators.TemperatureScaling(objective="nll", n_bins=15),
    "TS (ECE)": calibrators.TemperatureScaling(objective="ece", n_bins=15),
    "vector scaling": calibrators.VectorScaling(),
    "Platt": calibrators.PlattScaling(logit_input=True),
    "spline": calibrators.SplineCalibrator(),
    "isotonic": calibrators.IsotonicCalibrator(),
    "histogram binning": calibrators.HistogramBinning(n_bins=15),
}


def _fit_data(method: str, logits, labels, conf, correct):
    """(X, y, output) the method's estimator is fitted on and applied to; output: "conf", "probs" or "p1".

    With K-class logits, temperature and vector scaling map the logits, Platt
    scaling p(class 1) (two classes), the spline the softmax probabilities (to
    the top-1 confidence); isotonic regression and histogram binning, and every
    method on top-1 data, map the top-1 confidence.
    """
    if logits is None or method in ("isotonic", "histogram binning"):
        if method == "vector scaling":
            raise ValueError(f"method {method!r} does not apply to confidences without class probabilities.")
        return conf, correct, "conf"
    if method == "Platt":
        if logits.shape[1] != 2:
            raise ValueError(f"method 'Platt' needs two classes; logits has {logits.shape[1]}.")
        return np.clip(special.softmax(logits, axis=1)[:, 1], 0, 1), labels == 1, "p1"
    if method == "spline":
        return special.softmax(logits, axis=1), labels, "conf"
    return logits, labels, "probs"


def cross_fit(method: str, conf, correct, *, logits=None, labels=None, n_folds: int = 5, seed=None) -> Recalibrated:
    r"""Cross-fitted recalibration: every row's output comes from a fit on the other folds.

    The rows are split into ``n_folds`` folds by scikit-learn's shuffled
    ``KFold`` (``random_state`` = ``seed``, an int below 2**32, else an int
    drawn from it); for each fold f a clone
    of the method's estimator is fitted on the rows outside f and applied to
    the rows of f. No method sees its own test rows, so the metrics of the
    concatenated outputs estimate the method's calibration on new data.

    Parameters
    ----------
    method : str
        One of :data:`METHODS` (see :func:`applicable_methods`).
    conf, correct : array-like of shape (N,)
        Top-1 confidence and correctness.
    logits : array-like of shape (N, K), optional
        Logits (or log-probabilities) of K-class predictions; without them the
        methods work on ``conf`` alone (binary forms).
    labels : array-like of shape (N,), optional
        Needed with ``logits``.
    n_folds : int >= 2, default 5
    seed : None, int or numpy.random.Generator, default None
        Draws the folds; pass an int to reproduce them.

    Returns
    -------
    Recalibrated
        Outputs in the original row order.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1, 300); correct = rng.uniform(size=300) < conf ** 2
    >>> r = cross_fit("isotonic", conf, correct, n_folds=3, seed=0)
    >>> r.conf.shape, bool(np.array_equal(r.correct, correct))
    ((300,), True)
    """
    check_choice(method, list(METHODS), "method")
    n_folds = check_positive_int(n_folds, "n_folds", minimum=2)
    if (logits is None) != (labels is None):
        raise TypeError("logits and labels go together; give both or neither.")
    conf, correct, _, labels_, _, _, logits = _check_inputs(conf, correct, None, None, None, None, 10, 0.5, seed,
                                                            logits=logits if labels is not None else None)
    if logits is not None:
        labels = check_labels(labels, logits.shape[0], logits.shape[1])
        if logits.shape[0] != conf.shape[0]:
            raise ValueError(f"logits has {logits.shape[0]} rows but conf has {conf.shape[0]}; they must match.")
    n = conf.shape[0]
    if n_folds > n:
        raise ValueError(f"n_folds = {n_folds} exceeds the {n} rows.")
    if method == "uncalibrated":
        probs = None if logits is None else special.softmax(logits, axis=1)
        return Recalibrated(method, conf.copy(), correct.copy(), probs, labels)
    x, y, output = _fit_data(method, logits, labels, conf, correct)
    out_conf = np.empty(n)
    out_correct = correct.copy()
    out_probs = None if output == "conf" else np.empty((n, logits.shape[1]))
    for train, test in KFold(n_folds, shuffle=True, random_state=seed_int(seed) % 2**32).split(conf):
        out = clone(_ESTIMATORS[method]).fit(x[train], y[train]).transform(x[test])
        if output == "conf":
            out_conf[test] = out
            continue
        out_probs[test] = out if output == "probs" else np.column_stack([1.0 - out, out])
    if out_probs is not None:
        out_conf = out_probs.max(axis=1)
        out_correct = (out_probs.argmax(axis=1) == labels).astype(np.float64)
    return Recalibrated(method, out_conf, out_correct, out_probs, labels)


def recalibration_comparison(
    conf, correct, *, logits=None, labels=None, votes=None, sample_weight=None, scalar_values=None,
    methods=None, n_folds: int = 5, n_bins: int = 15, n_resamples: int = 200, heavy_resamples: int = 50,
    level: float = 0.95, seed=None,
) -> pd.DataFrame:
    """Every metric of :func:`metric_summary` for every cross-fitted method.

    Parameters are those of :func:`cross_fit` and :func:`metric_summary`;
    ``methods`` defaults to :func:`applicable_methods`. Recalibration is fitted
    unweighted; the metrics use ``sample_weight``.

    Returns
    -------
    pandas.DataFrame
        The summary's columns plus ``method`` (first column); metrics a method
        cannot be scored on (class-level ones for top-1-only methods) are absent.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> conf = rng.uniform(0.5, 1, 200); correct = rng.uniform(size=200) < conf ** 2
    >>> t = recalibration_comparison(conf, correct, methods=["uncalibrated", "isotonic"], n_folds=2,
    ...                              n_resamples=0, seed=0)
    >>> sorted(set(t.method))
    ['isotonic', 'uncalibrated']
    """
    if (logits is None) != (labels is None):
        raise TypeError("logits and labels go together; give both or neither.")
    conf, correct, _, _, _, sample_weight, _ = _check_inputs(conf, correct, None, None, None, sample_weight, n_bins,
                                                             level, seed)
    seed = seed_int(seed)  # one seed for every method's folds and resamples
    if votes is not None and logits is None:
        raise TypeError("votes need logits and labels (the model's class distribution).")
    k = None if logits is None else int(np.shape(logits)[1])
    methods = applicable_methods(k) if methods is None else list(methods)
    for m in methods:
        check_choice(m, applicable_methods(k), "methods")
    frames = []
    for m in methods:
        r = cross_fit(m, conf, correct, logits=logits, labels=labels, n_folds=n_folds, seed=seed)
        t = metric_summary(r.conf, r.correct, probs=r.probs, labels=r.labels if r.probs is not None else None,
                                votes=votes if r.probs is not None else None, sample_weight=sample_weight,
                                scalar_values=scalar_values, n_bins=n_bins, n_resamples=n_resamples,
                                heavy_resamples=heavy_resamples, level=level, seed=seed)
        t.insert(0, "method", m)
        frames.append(t)
    return pd.concat(frames, ignore_index=True)


def metric_picks(comparison: pd.DataFrame) -> pd.DataFrame:
    """The method each metric would pick (best estimate), and whether its interval separates it.

    ``separated`` is True when the best method's interval does not overlap
    the runner-up's (None without intervals); ``tied_with`` lists methods
    with the same estimate (e.g. temperature scaling leaves the accuracy as it
    is), the pick among tied ones being the first in table order. Accuracy is included: a method
    that changes the predicted class can change it.

    Examples
    --------
    >>> t = pd.DataFrame({"method": ["a", "b"], "key": ["ece_width"] * 2, "metric": ["ECE"] * 2,
    ...                   "estimate": [0.1, 0.05], "low": [0.08, 0.03], "high": [0.12, 0.07],
    ...                   "higher_is_better": [False, False]})
    >>> metric_picks(t)[["key", "pick", "separated"]].values.tolist()
    [['ece_width', 'b', True]]
    """
    if not isinstance(comparison, pd.DataFrame) or not {"method", "key", "estimate"} <= set(comparison.columns):
        raise TypeError("comparison must be the DataFrame of recalibration_comparison (columns method, key, estimate, "
                        f"...); got {type(comparison).__name__}.")
    rows = []
    for key, g in comparison.groupby("key", sort=False):
        g = g.sort_values("estimate", ascending=not bool(g["higher_is_better"].iloc[0]), kind="stable")
        best = g.iloc[0]
        separated = None
        if len(g) > 1 and best["low"] is not None and not pd.isna(best["low"]):
            second = g.iloc[1]
            separated = bool(best["high"] < second["low"] or best["low"] > second["high"])
        tied = [m for m, e in zip(g["method"].iloc[1:], g["estimate"].iloc[1:])
                if abs(e - best["estimate"]) <= 1e-12]
        rows.append({"key": key, "metric": best["metric"], "pick": best["method"], "estimate": best["estimate"],
                     "tied_with": ", ".join(tied), "runner_up": g.iloc[1]["method"] if len(g) > 1 else None,
                     "separated": separated})
    return pd.DataFrame(rows)
