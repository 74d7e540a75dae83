"""Reusable pieces of the Si et al. (2022) study (notebook ``01_si2022_macroce_qa``).

Si, Zhao, Min and Boyd-Graber (2022), *Re-Examining Calibration: The Case of
Question Answering*, Findings of EMNLP. The notebook needs these computations
more than once (on several data sources), and the tests need them too:

- :func:`resample_indices` -- seeded re-sampling of predictions to a target
  accuracy (Section 4.2, Table 5, Figure 2; Table 6 / Figure 3 for the
  dev/test accuracy shift);
- :func:`trust_scores` -- precision, recall and F1 of a reader who trusts an
  answer whenever its confidence is at least 0.5 (Section 5.4, Table 3's
  "always trust" row);
- :func:`calibration_summary` and :func:`calibration_summary_table` -- the per-source
  metric rows of Table 1 / Table 4 / Table 7 (accuracy, ECE with equal-width
  and equal-mass bins, ICE, ICE_pos, ICE_neg, MacroCE);
- :func:`relative_reduction` -- how much a calibrator cut a metric, relative to
  its value before (the "TS cuts ECE but not MacroCE" claim of Section 3-4);
- :func:`conscal_threshold_data`, :func:`plot_conscal_threshold` and
  :func:`conscal_explorer` -- ConsCal's binary threshold n (Section 5.2) as a
  table over every n, a figure, and a slider;
- :func:`normalize_answer`, :func:`expert_agreement` and
  :func:`expert_features` -- agreement of a chosen answer with the answers of
  other models, the stand-in for ConsCal's checkpoint agreement (Section 5.2)
  when no training dynamics are available, and the features of the
  feature-based correctness classifiers (Section 5.1);
- :func:`train_softmax_regression`, :func:`train_mlp`, :func:`training_dynamics` and
  :func:`load_bundled` -- small models trained for real (seeded Adam, optional label
  smoothing) whose checkpoints feed label smoothing (Section 5.1) and ConsCal (Section
  5.2-5.3); formerly ``calibnb.training``, used only by this notebook.

All metric values are fractions; the notebook prints them times 100, as the
paper does.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

import numpy as np

from ..validation import (
    as_float_array,
    as_rng,
    check_bool,
    check_choice,
    check_conf,
    check_conf_correct,
    check_logits,
    check_correct,
    check_labels,
    check_n_bins,
    check_positive_int,
    check_prediction_table,
    check_scalar_in_range,
    seed_int,
)
from .. import metrics
from ..metrics.batch import batch_axis
from ..calibrators import CalibrationWarning, ConsCal, softmax, TemperatureScaling
from ..metrics import ece, ice, macro_ce_parts
from ..plots import plot_reliability_diagram, reliability_diagram_data

__all__ = [
    "resample_indices",
    "TrustScores",
    "trust_scores",
    "trust_table",
    "calibration_summary",
    "calibration_summary_table",
    "relative_reduction",
    "normalize_answer",
    "expert_agreement",
    "expert_features",
    "top_confidence",
    "resampling_table",
    "accuracy_shift_table",
    "tau_on_bound",
    "TAU_BOUNDS",
    "resampling_explorer",
    "conscal_threshold_data",
    "plot_conscal_threshold",
    "conscal_explorer",
    "SUMMARY_COLUMNS",
    # training dynamics of a small model (Si §5.1-5.3)
    "TrainingRun", "TrainingDynamics", "train_softmax_regression", "train_mlp", "training_dynamics", "load_bundled",
    # notebook 01's helpers (Tables 1, 3 and 5)
    "ts_rows", "ts_margin", "relative_cut", "split_spread", "macro_ce_se", "rho_gap", "table7_methods",
    "resample_source", "nll_temperatures", "temperature_fall_ci",
]

#: Columns of :func:`calibration_summary` / :func:`calibration_summary_table`, in the
#: order of Si et al.'s Tables 1, 4 and 7.
SUMMARY_COLUMNS = ("accuracy", "ece_width", "ece_mass", "ice", "ice_pos", "ice_neg", "macro_ce")


# --------------------------------------------------------------------------
# Section 4.2: re-sampling predictions to a target accuracy
# --------------------------------------------------------------------------

def resample_indices(correct: Any, accuracy: float, *, n: int | None = None, seed: Any = None) -> np.ndarray:
    r"""Indices of a seeded sub-sample whose accuracy is ``accuracy``.

    Si et al. (2022, Section 4.2, Table 5 and Figure 2) "re-sample the
    predictions to vary the model accuracy (10%, 50%, 90%; same on both
    development and test sets)". This draws, without replacement,

    .. math::

        n_+ = \operatorname{round}(a\,n), \qquad n_- = n - n_+

    correct and wrong predictions, where :math:`a` is the target accuracy and
    :math:`n` the sample size, and returns their indices in a random order.
    Call it once on the dev split and once on the test split with the same
    ``accuracy`` to re-sample both (or with different accuracies for the
    dev/test accuracy shift of Table 6).

    Parameters
    ----------
    correct : array-like of shape (N,)
        0/1 or bool correctness of each prediction.
    accuracy : float
        Target accuracy :math:`a` in [0, 1].
    n : int, optional
        Sample size. By default the largest size that can be drawn without
        replacement, :math:`\lfloor \min(N_+ / a,\; N_- / (1 - a)) \rfloor`
        with :math:`N_+, N_-` the numbers of correct and wrong predictions
        available (terms with :math:`a = 0` or :math:`a = 1` are dropped).
    seed : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray of shape (n,), int
        Indices into ``correct``; ``correct[idx].mean()`` equals
        ``round(accuracy * n) / n``.

    Raises
    ------
    ValueError
        If there are not enough correct or wrong predictions for the sample.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2, Table 5, Figure 2.

    Examples
    --------
    >>> correct = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    >>> idx = resample_indices(correct, 0.5, seed=0)
    >>> len(idx), float(np.mean(np.asarray(correct)[idx]))
    (8, 0.5)
    >>> idx = resample_indices(correct, 0.25, n=4, seed=0)
    >>> int(np.asarray(correct)[idx].sum())
    1
    """
    y = check_correct(correct)
    a = check_scalar_in_range(accuracy, "accuracy", low=0.0, high=1.0)
    rng = as_rng(seed)
    pos = np.flatnonzero(y)
    neg = np.flatnonzero(~y)
    if n is None:
        limits = []
        if a > 0:
            limits.append(pos.size / a)
        if a < 1:
            limits.append(neg.size / (1.0 - a))
        n = int(np.floor(min(limits) + 1e-9))
        if n < 1:
            raise ValueError(
                f"correct has {pos.size} correct and {neg.size} wrong predictions; "
                f"no sample with accuracy {a:g} can be drawn."
            )
    else:
        n = check_positive_int(n, "n")
    n_pos = int(round(a * n))
    n_neg = n - n_pos
    if n_pos > pos.size or n_neg > neg.size:
        raise ValueError(
            f"a sample of n={n} at accuracy {a:g} needs {n_pos} correct and {n_neg} wrong predictions; "
            f"correct has only {pos.size} correct and {neg.size} wrong."
        )
    idx = np.concatenate([rng.choice(pos, n_pos, replace=False), rng.choice(neg, n_neg, replace=False)])
    return rng.permutation(idx)


def top_confidence(scores: Any, labels: Any, *, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Top-1 confidence and correctness of scores, after dividing by a temperature.

    Accepts the two forms of :class:`calibnb.TemperatureScaling`:
    ``(N, K)`` logits (or log-probabilities) with ``(N,)`` integer labels,
    giving :math:`c_i = \max_k \operatorname{softmax}(z_i/\tau)_k` and
    :math:`y_i = [\arg\max_k z_{ik} = \text{label}_i]`; or 1-D confidences
    with 0/1 correctness, giving :math:`c_i = \sigma(\operatorname{logit}(p_i)/\tau)`.

    Examples
    --------
    >>> c, y = top_confidence(np.log([[0.8, 0.2], [0.4, 0.6]]), [0, 0])
    >>> c.round(2).tolist(), y.tolist()
    ([0.8, 0.6], [True, False])
    >>> top_confidence([0.8, 0.5], [1, 0], temperature=2.0)[0].round(3).tolist()
    [0.667, 0.5]
    """
    from scipy import special

    tau = check_scalar_in_range(temperature, "temperature", low=0.0, low_inclusive=False)
    return _top(scores, labels, tau, ("scores", "labels"))


def _top(scores: Any, labels: Any, tau: float, names: tuple[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`top_confidence` with the caller's argument names in its error messages."""
    from scipy import special

    if np.ndim(scores) == 1:
        c = check_conf(scores, names[0])
        y = check_correct(labels, c.shape[0], name=names[1], other=names[0])
        with np.errstate(divide="ignore"):
            return special.expit(special.logit(c) / tau), y
    z = check_logits(scores, names[0])
    lab = check_labels(labels, z.shape[0], z.shape[1], name=names[1], other=names[0])
    p = softmax(z, temperature=tau)
    return p.max(axis=1), p.argmax(axis=1) == lab


def _take(scores: Any, labels: Any, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(scores)[idx], np.asarray(labels)[idx]


#: Search interval of the dev-ECE temperature in Tables 5-6: wide enough that the
#: ECE-optimal tau of a re-sampled set is not cut off by the search (the library
#: default (0.01, 100) binds at 10% accuracy on raw CIFAR logits).
TAU_BOUNDS = (1e-3, 1e4)


def tau_on_bound(tau: float, bounds: tuple[float, float] = TAU_BOUNDS, *, rtol: float = 1e-3) -> bool:
    """Whether a fitted temperature sits on an end of its search interval (then it is a cut-off, not an optimum).

    >>> tau_on_bound(1e4), tau_on_bound(2.5)
    (True, False)
    """
    tau = check_scalar_in_range(tau, "tau", low=0.0, low_inclusive=False)
    try:
        lo, hi = (check_scalar_in_range(b, "bounds", low=0.0, low_inclusive=False) for b in bounds)
    except TypeError:
        raise TypeError(f"bounds must be a pair (low, high) of positive numbers; got {bounds!r}.") from None
    rtol = check_scalar_in_range(rtol, "rtol", low=0.0)
    return bool(abs(np.log(tau) - np.log(lo)) <= rtol or abs(np.log(tau) - np.log(hi)) <= rtol)


def _fit_tau(scores: np.ndarray, labels: np.ndarray, n_bins: int) -> float:
    import warnings

    # TAU_BOUNDS are wide on purpose: a τ on a bound is a finding, which the tables record in
    # their tau_on_bound column and notebook 01 states in words; the calibrator's own warning
    # ("widen bounds", with a source path) would only repeat it as raw library output.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=CalibrationWarning, message=r".*search bound")
        return TemperatureScaling(objective="ece", n_bins=n_bins, bounds=TAU_BOUNDS).fit(scores, labels).temperature_


def _max_size(correct: np.ndarray, accuracies: np.ndarray) -> int:
    # largest sample drawable without replacement at every accuracy (resample_indices' default n, minimised)
    n_pos, n_neg = int(correct.sum()), int((~correct).sum())
    sizes = [min(n_pos / a if a > 0 else np.inf, n_neg / (1 - a) if a < 1 else np.inf) for a in accuracies]
    return int(np.floor(min(sizes)))


def _stage_row(conf: np.ndarray, correct: np.ndarray, n_bins: int) -> dict[str, float]:
    s = calibration_summary(conf, correct, n_bins=n_bins)
    return {"ece": s["ece_width"], "ice": s["ice"], "ice_pos": s["ice_pos"], "ice_neg": s["ice_neg"],
            "macro_ce": s["macro_ce"], "n": int(conf.shape[0])}


def _resampler(dev: tuple[Any, Any], test: tuple[Any, Any], *, seed: Any, n_bins: int, sizes=(None, None)):
    """``resample(dev_accuracy, test_accuracy) -> ((dev scores, labels), (test scores, labels), tau)``.

    Each call re-samples the dev and the test predictions to the given
    accuracies (:func:`resample_indices`, one Generator for all calls) and fits
    the dev-ECE temperature on the dev sample.
    """
    rng = as_rng(seed)
    n_bins = check_n_bins(n_bins)
    y_dev = _top(*dev, 1.0, ("dev_scores", "dev_labels"))[1]
    y_test = _top(*test, 1.0, ("test_scores", "test_labels"))[1]

    def resample(dev_accuracy: float, test_accuracy: float):
        dev_accuracy = check_scalar_in_range(dev_accuracy, "dev_accuracy", low=0.0, high=1.0)
        test_accuracy = check_scalar_in_range(test_accuracy, "test_accuracy", low=0.0, high=1.0)
        d_idx = resample_indices(y_dev, dev_accuracy, n=sizes[0], seed=rng)
        t_idx = resample_indices(y_test, test_accuracy, n=sizes[1], seed=rng)
        ds, dl = _take(*dev, d_idx)
        return (ds, dl), _take(*test, t_idx), _fit_tau(ds, dl, n_bins)

    return resample


def resampling_table(dev_scores: Any, dev_labels: Any, test_scores: Any, test_labels: Any, *,
                     accuracies: Any = (0.1, 0.5, 0.9), seed: Any = None, n_bins: int = 10,
                     sample_fraction: float = 0.5, return_samples: bool = False):
    r"""Temperature scaling at re-sampled accuracy levels (Si et al. 2022, Table 5, Figure 2).

    For each target accuracy :math:`a`, the dev and the test predictions are
    re-sampled to accuracy :math:`a` with :func:`resample_indices` (same
    :math:`a` on both), :math:`\tau` is chosen to minimise dev ECE
    (:class:`calibnb.TemperatureScaling` with ``objective="ece"``, as in
    Section 3.2, searched in :data:`TAU_BOUNDS`), and ECE, ICE, ICE_pos,
    ICE_neg and MacroCE of the test sample are reported before
    (:math:`\tau = 1`) and after temperature scaling.

    Every level draws the same sample size on a split,
    ``floor(sample_fraction * n_max)`` with ``n_max`` the largest size
    drawable at every level; with ``sample_fraction < 1`` each level draws a
    fresh subset of the wrong (and of the correct) predictions, so the
    stability of MacroCE is not forced by re-using one group whole.

    Parameters
    ----------
    dev_scores, dev_labels, test_scores, test_labels :
        Either form of :func:`top_confidence` (logits with labels, or 1-D
        confidences with correctness).
    accuracies : sequence of float
        Target accuracies.
    seed : None, int or numpy.random.Generator
        Re-sampling randomness (one Generator drives all draws).
    n_bins : int
        ECE bins (also of the dev-ECE objective).
    sample_fraction : float in (0, 1]
        Share of the largest common sample size drawn at each level.
    return_samples : bool
        Also return ``{accuracy: (test scores, test labels)}``, the re-sampled
        test sets the rows were computed on (for bootstrap intervals).

    Returns
    -------
    pandas.DataFrame
        Columns ``accuracy, stage ("before"/"after TS"), temperature, ece, ice,
        ice_pos, ice_neg, macro_ce, n, tau_on_bound`` (fractions).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Table 5, Figure 2.
    """
    import pandas as pd

    n_bins = check_n_bins(n_bins)
    levels = as_float_array(accuracies, "accuracies").ravel()
    for a in levels:
        check_scalar_in_range(a, "accuracies", low=0.0, high=1.0)
    frac = check_scalar_in_range(sample_fraction, "sample_fraction", low=0.0, high=1.0, low_inclusive=False)
    return_samples = check_bool(return_samples, "return_samples")
    sizes = tuple(max(1, int(frac * _max_size(_top(sc, lb, 1.0, names)[1], levels)))
                  for sc, lb, names in ((dev_scores, dev_labels, ("dev_scores", "dev_labels")),
                                        (test_scores, test_labels, ("test_scores", "test_labels"))))
    resample = _resampler((dev_scores, dev_labels), (test_scores, test_labels), seed=seed, n_bins=n_bins, sizes=sizes)
    rows, samples = [], {}
    for a in levels:
        _, (ts, tl), tau = resample(float(a), float(a))
        for stage, t in (("before", 1.0), ("after TS", tau)):
            c, y = top_confidence(ts, tl, temperature=t)
            rows.append({"accuracy": float(a), "stage": stage, "temperature": t, **_stage_row(c, y, n_bins),
                         "tau_on_bound": stage == "after TS" and tau_on_bound(tau)})
        samples[float(a)] = (ts, tl)
    return (pd.DataFrame(rows), samples) if return_samples else pd.DataFrame(rows)


def accuracy_shift_table(dev_scores: Any, dev_labels: Any, test_scores: Any, test_labels: Any, *,
                         dev_accuracy: float, test_accuracy: float, seed: Any = None, n_bins: int = 10):
    r"""Temperature scaling under a dev/test accuracy shift (Si et al. 2022, Table 6, Figure 3).

    The dev predictions are re-sampled to ``dev_accuracy`` and the test
    predictions to ``test_accuracy`` (:func:`resample_indices`); :math:`\tau`
    minimises the dev ECE; the metrics of both samples at that :math:`\tau`
    are returned.

    Returns
    -------
    pandas.DataFrame
        Two rows (``split`` = "dev", "test") with columns ``split, accuracy,
        temperature, ece, ice, ice_pos, ice_neg, macro_ce, n``.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Table 6, Figure 3.
    """
    import pandas as pd

    n_bins = check_n_bins(n_bins)
    resample = _resampler((dev_scores, dev_labels), (test_scores, test_labels), seed=seed, n_bins=n_bins)
    dev, test, tau = resample(dev_accuracy, test_accuracy)
    rows = []
    for split, (s, l), a in (("dev", dev, dev_accuracy), ("test", test, test_accuracy)):
        c, y = top_confidence(s, l, temperature=tau)
        rows.append({"split": split, "accuracy": float(a), "temperature": tau, **_stage_row(c, y, n_bins),
                     "tau_on_bound": tau_on_bound(tau)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------
# Section 5.4: a reader who trusts confident answers
# --------------------------------------------------------------------------

class TrustScores(NamedTuple):
    """Precision, recall and F1 of trusting answers with confidence >= threshold."""

    precision: float
    recall: float
    f1: float
    n_trusted: int


def trust_scores(conf: Any, correct: Any, *, threshold: float = 0.5) -> TrustScores:
    r"""Precision, recall and F1 of a reader who trusts confident answers.

    Si et al. (2022, Section 5.4, Table 3) score human judgements of whether a
    QA answer is correct by precision, recall and F1, with "judged correct"
    as the positive decision; their "ConsCal (Always Trust)" row is a reader
    who follows the confidence. Here the reader trusts an answer iff
    :math:`c_i \ge t`:

    .. math::

        P = \frac{\sum_i [c_i \ge t]\, y_i}{\sum_i [c_i \ge t]}, \qquad
        R = \frac{\sum_i [c_i \ge t]\, y_i}{\sum_i y_i}, \qquad
        F_1 = \frac{2 P R}{P + R},

    with :math:`c_i` the confidence, :math:`y_i \in \{0, 1\}` the correctness
    and :math:`t` the threshold (0.5 by default). When no answer is trusted,
    or no answer is correct, or :math:`P + R = 0`, the undefined quantity is
    0 (scikit-learn's ``zero_division=0`` convention).

    Parameters
    ----------
    conf : array-like of shape (N,)
        Confidences in [0, 1].
    correct : array-like of shape (N,)
        0/1 or bool correctness.
    threshold : float, default 0.5
        Trust an answer when its confidence is at least this value.

    Returns
    -------
    TrustScores
        ``(precision, recall, f1, n_trusted)``.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 5.4, Table 3.

    Examples
    --------
    >>> trust_scores([0.9, 0.8, 0.6, 0.2], [1, 0, 1, 1])
    TrustScores(precision=0.6666666666666666, recall=0.6666666666666666, f1=0.6666666666666666, n_trusted=3)
    """
    c, y = check_conf_correct(conf, correct)
    t = check_scalar_in_range(threshold, "threshold", low=0.0, high=1.0)
    trusted = c >= t
    n_trusted = int(np.count_nonzero(trusted))
    tp = int(np.count_nonzero(trusted & y))
    n_pos = int(np.count_nonzero(y))
    precision = tp / n_trusted if n_trusted else 0.0
    recall = tp / n_pos if n_pos else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return TrustScores(precision, recall, f1, n_trusted)


def trust_table(methods: Any, *, n_bins: int = 10, threshold: float = 0.5):
    r"""Si et al.'s Table 3 computed: which calibration metric agrees with a trusting reader's F1?

    For each method (its confidences and correctness on the same kind of
    items) the row holds ECE (``n_bins`` equal-width bins) and MacroCE, in
    percent, beside the precision, recall and F1 of the reader who trusts
    answers with confidence at least ``threshold`` (:func:`trust_scores`).
    Across methods, :math:`\rho_m = \mathrm{Spearman}(-m, F_1)` says how well
    the ranking by metric :math:`m` (lower is better) agrees with the ranking
    by F1 (Si et al. 2022, Section 5.4: MacroCE agrees, ECE does not).

    Parameters
    ----------
    methods : mapping of str to (conf, correct)
        Two or more methods; each value a pair of array-likes of shape (N_i,).
    n_bins : int, default 10
        Equal-width bins of ECE.
    threshold : float, default 0.5
        The reader trusts an answer when its confidence is at least this.

    Returns
    -------
    table : pandas.DataFrame
        Index ``method``; columns ``ECE``, ``MacroCE`` (percent), ``precision``,
        ``recall``, ``F1``.
    rho : dict
        ``{"ECE": rho, "MacroCE": rho}``; NaN where a column is constant
        (Spearman's correlation is then undefined).

    Examples
    --------
    >>> table, rho = trust_table({"a": ([0.9, 0.8, 0.3], [1, 1, 0]), "b": ([0.9, 0.9, 0.9], [1, 0, 0]),
    ...                           "c": ([0.6, 0.4, 0.7], [1, 0, 1])})
    >>> table["F1"].round(3).tolist(), {k: round(v, 3) for k, v in rho.items()}
    ([1.0, 0.5, 1.0], {'ECE': 0.866, 'MacroCE': 0.866})
    """
    import pandas as pd
    from scipy import stats

    if not isinstance(methods, Mapping) or len(methods) < 2:
        raise TypeError(f"methods must be a mapping of two or more method names to (conf, correct) pairs; "
                        f"got {type(methods).__name__}" + (f" of {len(methods)}" if isinstance(methods, Mapping) else "")
                        + ".")
    n_bins = check_n_bins(n_bins)
    threshold = check_scalar_in_range(threshold, "threshold", low=0.0, high=1.0)
    rows = []
    for name, pair in methods.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"methods[{name!r}] must be a (conf, correct) pair; got {type(pair).__name__}.")
        c = check_conf(pair[0], f"methods[{name!r}] conf")
        y = check_correct(pair[1], c.shape[0], name=f"methods[{name!r}] correct", other=f"methods[{name!r}] conf")
        ts = trust_scores(c, y, threshold=threshold)
        rows.append({"method": name, "ECE": 100 * ece(c, y, n_bins=n_bins), "MacroCE": 100 * metrics.macro_ce(c, y),
                     "precision": ts.precision, "recall": ts.recall, "F1": ts.f1})
    table = pd.DataFrame(rows).set_index("method")
    rho = {}
    for m in ("ECE", "MacroCE"):
        if table[m].nunique() < 2 or table["F1"].nunique() < 2:
            rho[m] = float("nan")  # Spearman's correlation of a constant column is undefined
        else:
            rho[m] = float(stats.spearmanr(-table[m], table["F1"]).statistic)
    return table, rho


# --------------------------------------------------------------------------
# Tables 1, 4, 7: the per-source metric rows
# --------------------------------------------------------------------------

def calibration_summary(conf: Any, correct: Any, *, n_bins: int = 10) -> dict[str, float]:
    r"""The metrics of one row of Si et al.'s Tables 1, 4 and 7.

    .. math::

        \mathrm{ICE} = \frac1N \sum_i |y_i - c_i|, \quad
        \mathrm{ICE}_{pos} = \frac{1}{n_p}\sum_{i: y_i = 1} (1 - c_i), \quad
        \mathrm{ICE}_{neg} = \frac{1}{n_n}\sum_{i: y_i = 0} c_i, \quad
        \mathrm{MacroCE} = \tfrac12(\mathrm{ICE}_{pos} + \mathrm{ICE}_{neg})

    (Si et al. 2022, Section 4.2), next to the accuracy and the ECE of
    Section 2.1 with equal-width and equal-mass bins (Table 4). The metrics
    are those of :mod:`calibnb.metrics`; an empty group (no correct or no
    wrong prediction) contributes 0, as there.

    Parameters
    ----------
    conf, correct :
        As in :func:`calibnb.ece`.
    n_bins : int, default 10
        Number of bins of both ECE variants.

    Returns
    -------
    dict
        Keys :data:`SUMMARY_COLUMNS` (``accuracy``, ``ece_width``,
        ``ece_mass``, ``ice``, ``ice_pos``, ``ice_neg``, ``macro_ce``), as
        fractions.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2.

    Examples
    --------
    >>> s = calibration_summary([0.9, 0.9, 0.9, 0.9], [1, 1, 1, 0], n_bins=2)
    >>> {k: round(v, 3) for k, v in s.items()}
    {'accuracy': 0.75, 'ece_width': 0.15, 'ece_mass': 0.25, 'ice': 0.3, 'ice_pos': 0.1, 'ice_neg': 0.9, 'macro_ce': 0.5}
    """
    c, y = check_conf_correct(conf, correct)
    n_bins = check_n_bins(n_bins)
    parts = macro_ce_parts(c, y)
    return {
        "accuracy": float(np.mean(y)),
        "ece_width": float(ece(c, y, n_bins=n_bins, binning="width")),
        "ece_mass": float(ece(c, y, n_bins=n_bins, binning="mass")),
        "ice": float(ice(c, y)),
        "ice_pos": float(parts.ice_pos),
        "ice_neg": float(parts.ice_neg),
        "macro_ce": float(parts.macro_ce),
    }


def calibration_summary_table(rows: Mapping[Any, tuple[Any, Any]], *, n_bins: int = 10, percent: bool = False):
    """A table of :func:`calibration_summary` rows, one per (source, method).

    Parameters
    ----------
    rows : mapping
        ``{key: (conf, correct)}``. Keys are row labels; tuple keys (e.g.
        ``("cifar10_resnet20", "TS")``) give a two-level index named
        ``source`` and ``method``.
    n_bins : int, default 10
        Number of ECE bins.
    percent : bool, default False
        Multiply every metric by 100, as Si et al. print them (the default
        gives fractions, as everywhere in calibnb).

    Returns
    -------
    pandas.DataFrame
        One row per key, columns :data:`SUMMARY_COLUMNS` plus ``n`` (the
        number of predictions).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022.

    Examples
    --------
    >>> t = calibration_summary_table({("toy", "raw"): ([0.9, 0.6], [1, 0]), ("toy", "flat"): ([0.5, 0.5], [1, 0])})
    >>> t["macro_ce"].round(3).tolist()
    [0.35, 0.5]
    >>> list(t.index.names)
    ['source', 'method']
    """
    import pandas as pd

    if not isinstance(rows, Mapping) or len(rows) == 0:
        raise ValueError("rows must be a non-empty mapping {key: (conf, correct)}.")
    scale = 100.0 if check_bool(percent, "percent") else 1.0
    records = []
    for key, pair in rows.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"rows[{key!r}] must be a (conf, correct) pair; got {type(pair).__name__}.")
        summary = calibration_summary(pair[0], pair[1], n_bins=n_bins)
        record = {k: v * scale for k, v in summary.items()}
        record["n"] = int(np.asarray(pair[0]).shape[0])
        records.append(record)
    keys = list(rows.keys())
    if all(isinstance(k, tuple) and len(k) == 2 for k in keys):
        index = pd.MultiIndex.from_tuples(keys, names=["source", "method"])
    else:
        index = pd.Index(keys, name="row")
    return pd.DataFrame.from_records(records, index=index, columns=[*SUMMARY_COLUMNS, "n"])


def relative_reduction(before: Any, after: Any) -> np.ndarray | float:
    r"""Relative reduction of a metric by a calibrator, :math:`(b - a) / b`.

    Si et al. (2022, Tables 1 and 4) show temperature scaling cutting ECE by
    85-95% of its value while MacroCE moves by a few percent either way; this
    is the quantity compared. Negative values mean the calibrator made the
    metric worse.

    Parameters
    ----------
    before, after : float or array-like
        Metric values before and after calibration; ``before`` must be > 0.

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022.

    Examples
    --------
    >>> round(relative_reduction(0.271, 0.040), 4)
    0.8524
    >>> relative_reduction([0.4, 0.2], [0.3, 0.3]).round(2).tolist()
    [0.25, -0.5]
    """
    b = as_float_array(before, "before")
    a = as_float_array(after, "after")
    if b.shape != a.shape:
        raise ValueError(f"before has shape {b.shape} but after has shape {a.shape}; they must match.")
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(a))):
        raise ValueError("before and after must be finite.")
    bad = b <= 0
    if np.any(bad):
        first = float(b.ravel()[np.flatnonzero(bad.ravel())[0]])
        raise ValueError(f"before has {int(bad.sum())} value(s) <= 0 (relative reduction undefined); first: {first!r}.")
    out = (b - a) / b
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------
# Section 5.1-5.3 on the QA experts: agreement features
# --------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b", flags=re.UNICODE)
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: Any) -> str:
    """SQuAD-style answer normalisation used for exact match.

    Lower-case, remove punctuation, the articles *a*, *an*, *the*, and
    collapse white space (the normalisation of the SQuAD evaluation script,
    which exact match in open-domain QA uses).

    Examples
    --------
    >>> normalize_answer("  The Cuban  Missile-Crisis. ")
    'cuban missilecrisis'
    >>> normalize_answer(None)
    ''
    """
    if text is None:
        return ""
    s = str(text).lower().translate(_PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _answers_array(answers: Any) -> np.ndarray:
    arr = np.asarray(answers, dtype=object)
    if arr.ndim != 2:
        raise ValueError(f"answers must be 2-D with shape (N, n_experts); got an array of shape {arr.shape}.")
    if arr.shape[0] == 0:
        raise ValueError("answers is empty; at least one question is needed.")
    if arr.shape[1] < 2:
        raise ValueError(f"answers must hold at least 2 experts (columns); got shape {arr.shape}.")
    return arr


def expert_agreement(answers: Any, expert: int) -> np.ndarray:
    r"""Which experts give the same (normalised) answer as ``expert``.

    ConsCal (Si et al. 2022, Section 5.2) counts how many of :math:`N`
    checkpoints make the same prediction as the final model. Without
    checkpoints, the QA data offer :math:`E` prompting "experts" answering
    the same questions; the agreement of the chosen expert's answer with the
    others plays the role of checkpoint agreement:

    .. math::

        A_{ij} = \bigl[\operatorname{norm}(a_{ij}) = \operatorname{norm}(a_{i e})\bigr],

    with :math:`a_{ij}` expert :math:`j`'s answer to question :math:`i`,
    :math:`e` the chosen expert and norm :func:`normalize_answer`. Column
    :math:`e` is therefore all ``True``; ``A.sum(1)`` is ConsCal's count
    :math:`k` and ``A.mean(1)`` its "frequency" confidence :math:`k/E`.

    Parameters
    ----------
    answers : array-like of shape (N, E)
        Answer strings, one column per expert.
    expert : int
        Column of the chosen expert.

    Returns
    -------
    numpy.ndarray of shape (N, E), bool

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 5.2.

    Examples
    --------
    >>> expert_agreement([["Paris", "paris.", "Lyon"], ["1988", "1986", "1986"]], 1)
    array([[ True,  True, False],
           [False,  True,  True]])
    """
    arr = _answers_array(answers)
    e = check_positive_int(expert, "expert", minimum=0)
    if e >= arr.shape[1]:
        raise ValueError(f"expert must be in [0, {arr.shape[1]}); got {e}.")
    norm = np.vectorize(normalize_answer, otypes=[object])(arr)
    return norm == norm[:, [e]]


def expert_features(answers: Any, confidences: Any, expert: int) -> np.ndarray:
    r"""Features for predicting whether the chosen expert's answer is correct.

    The feature-based classifiers of Si et al. (2022, Section 5.1 and
    Appendix B) use the model's scores and how often the predicted answer
    recurs among the top candidates. On the QA experts the analogous,
    label-free features per question are:

    - the chosen expert's confidence :math:`c_{ie}`;
    - the other experts' confidences :math:`c_{ij}, j \ne e`;
    - the agreement bits :math:`A_{ij}, j \ne e` of :func:`expert_agreement`;
    - the agreement frequency :math:`k_i / E`;
    - the mean confidence of the agreeing experts.

    No correctness label of any expert is used.

    Parameters
    ----------
    answers : array-like of shape (N, E)
        Answer strings, one column per expert.
    confidences : array-like of shape (N, E)
        Each expert's confidence in its own answer, in [0, 1].
    expert : int
        Column of the chosen expert.

    Returns
    -------
    numpy.ndarray of shape (N, 2 E + 1), float

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 5.1, Appendix B.

    Examples
    --------
    >>> expert_features([["a", "a", "b"]], [[0.9, 0.7, 0.2]], 0).round(3).tolist()
    [[0.9, 0.7, 0.2, 1.0, 0.0, 0.667, 0.8]]
    """
    agree = expert_agreement(answers, expert)
    conf = as_float_array(confidences, "confidences")
    if conf.shape != agree.shape:
        raise ValueError(f"confidences has shape {conf.shape} but answers has shape {agree.shape}; they must match.")
    if not np.all(np.isfinite(conf)) or conf.min() < 0 or conf.max() > 1:
        bad = ~(np.isfinite(conf) & (conf >= 0) & (conf <= 1))
        i = np.unravel_index(np.flatnonzero(bad.ravel())[0], conf.shape)
        raise ValueError(
            f"confidences has {int(bad.sum())} value(s) outside [0, 1] or not finite; "
            f"first at index {tuple(int(j) for j in i)}: {conf[i]!r}."
        )
    e = int(expert)
    others = np.delete(np.arange(conf.shape[1]), e)
    freq = agree.mean(axis=1)
    agree_conf = (conf * agree).sum(axis=1) / agree.sum(axis=1)
    return np.column_stack([conf[:, e], conf[:, others], agree[:, others].astype(np.float64), freq, agree_conf])


# --------------------------------------------------------------------------
# Widget: the accuracy re-sampling slider (Section 4.2)
# --------------------------------------------------------------------------

def resampling_explorer(conf: Any, correct: Any, *, seed: Any = None, n_bins: int = 10,
                        accuracy: float = 0.5) -> Any:
    """An accuracy slider that re-samples predictions (Si et al. 2022, Section 4.2).

    Moving the slider re-samples ``(conf, correct)`` to the chosen accuracy
    with :func:`resample_indices` (seeded, so a value always gives the same
    sample) and redraws the Figure 1-style reliability diagram with ECE, ICE
    and MacroCE: ECE and ICE follow the accuracy, MacroCE does not.

    Returns
    -------
    calibnb.widgets.Panel
        Control ``"accuracy"``; ``update(accuracy=...)`` returns the readout
        (column ``value``, rows ``accuracy``, ``n``, ``ece``, ``ice``, ``macro_ce``).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 4.2.
    """
    import ipywidgets as w
    import pandas as pd

    from ..widgets import build_panel

    c, y = check_conf_correct(conf, correct)
    n_bins = check_n_bins(n_bins)
    a = check_scalar_in_range(accuracy, "accuracy", low=0.0, high=1.0)
    seed = seed_int(seed)  # the same sample every time a slider value comes back
    slider = w.FloatSlider(value=a, min=0.05, max=0.95, step=0.05, description="accuracy after re-sampling",
                           continuous_update=False, readout_format=".2f",
                           tooltip="Share of correct answers (0 to 1) in the re-sampled test set; the "
                                   "predictions keep their confidences (Si et al. 2022, Section 4.2)")

    def draw(axes: list, *, accuracy: float) -> pd.DataFrame:
        idx = resample_indices(y, accuracy, seed=seed)
        cs, ys = c[idx], y[idx]
        s = calibration_summary(cs, ys, n_bins=n_bins)
        plot_reliability_diagram(reliability_diagram_data(cs, ys, n_bins=n_bins), ax=axes[0], style="si")
        axes[0].set_title(f"re-sampled to accuracy {s['accuracy']:.2f}: ECE {s['ece_width']:.3f}, "
                          f"ICE {s['ice']:.3f}, MacroCE {s['macro_ce']:.3f}", fontsize="small")
        return pd.DataFrame({"value": {"accuracy": s["accuracy"], "n": int(idx.size), "ece": s["ece_width"],
                                       "ice": s["ice"], "macro_ce": s["macro_ce"]}})

    return build_panel({"accuracy": slider}, draw, 1, (5, 3.5))


# --------------------------------------------------------------------------
# Widget: ConsCal's threshold n (Section 5.2)
# --------------------------------------------------------------------------

def _agreement_counts(predictions: Any, reference: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(final prediction, k = number of columns agreeing with it, C) of a prediction table."""
    cc = ConsCal(mode="binary", reference=reference)
    final, agree = cc.agreement(predictions)
    return final, agree.sum(axis=1), agree.shape[1]


def conscal_threshold_data(
    dev_predictions: Any,
    dev_correct: Any,
    test_predictions: Any,
    test_correct: Any,
    *,
    n_bins: int = 10,
    reference: str = "last",
) -> "pd.DataFrame":  # noqa: F821
    r"""Binary ConsCal at every threshold n, on dev and test (Si et al. 2022, Section 5.2).

    With :math:`k_i` the number of the C checkpoints that agree with the
    final prediction of instance i, binary ConsCal gives confidence

    .. math:: \hat c_i(n) = \mathbb 1[k_i > n], \qquad n = 0, \dots, C,

    and :class:`calibnb.ConsCal` tunes n to minimise dev MacroCE. For every n
    this returns, per split, MacroCE, ECE (``n_bins`` equal-width buckets),
    the share of answers it calls confident (:math:`\hat c_i = 1`), and the
    accuracy of those confident answers (NaN when none is confident), with a
    column ``tuned`` marking the n ConsCal picks on dev.

    Parameters
    ----------
    dev_predictions, test_predictions : array-like of shape (N, C)
        Prediction tables, one column per checkpoint (last = final model), or
        per independent run with ``reference="majority"``.
    dev_correct, test_correct : array-like of shape (N,)
        Correctness of the final prediction.
    n_bins : int
    reference : {"last", "majority"}
        As in :class:`calibnb.ConsCal`.

    Returns
    -------
    pandas.DataFrame
        One row per (split, n): columns ``split``, ``n``, ``macro_ce``,
        ``ece``, ``confident_share``, ``confident_accuracy``, ``tuned``.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 5.2.

    Examples
    --------
    >>> dev = [[0, 0, 0], [1, 2, 2], [0, 1, 2], [1, 1, 1]]
    >>> df = conscal_threshold_data(dev, [1, 1, 0, 1], dev, [1, 0, 0, 1])
    >>> df[df.split == "dev"][["n", "macro_ce", "tuned"]].to_dict("list")
    {'n': [0, 1, 2, 3], 'macro_ce': [0.5, 0.0, 0.16666666666666666, 0.5], 'tuned': [False, True, False, False]}
    """
    import pandas as pd

    n_bins = check_n_bins(n_bins)
    for pred_name, corr_name, pred, corr in (("dev_predictions", "dev_correct", dev_predictions, dev_correct),
                                             ("test_predictions", "test_correct", test_predictions, test_correct)):
        check_correct(corr, check_prediction_table(pred, pred_name).shape[0], name=corr_name, other=pred_name)
    tuned = ConsCal(mode="binary", reference=reference).fit(dev_predictions, dev_correct).threshold_
    rows = []
    for split, pred, corr in (("dev", dev_predictions, dev_correct), ("test", test_predictions, test_correct)):
        _, k, c = _agreement_counts(pred, reference)
        y = check_correct(corr, k.shape[0], name=f"{split}_correct", other=f"{split}_predictions")
        for n in range(c + 1):
            conf = (k > n).astype(np.float64)
            confident = conf == 1.0
            rows.append({
                "split": split, "n": n,
                "macro_ce": float(metrics.macro_ce(conf, y)), "ece": float(metrics.ece(conf, y, n_bins=n_bins)),
                "confident_share": float(confident.mean()),
                "confident_accuracy": float(y[confident].mean()) if confident.any() else float("nan"),
                "tuned": n == tuned,
            })
    return pd.DataFrame(rows)


def plot_conscal_threshold(data: "pd.DataFrame", *, n: int | None = None, ax: Any = None) -> Any:  # noqa: F821
    """Draw :func:`conscal_threshold_data`: MacroCE and ECE against n, per split.

    The tuned n is marked by a dotted vertical line and star markers; ``n``
    (the slider's value) by a solid grey line. Returns the Axes.
    """
    import matplotlib.pyplot as plt

    import pandas as pd
    need = {"split", "n", "macro_ce", "ece", "tuned"}
    if not isinstance(data, pd.DataFrame) or not need <= set(data.columns):
        raise TypeError(f"data must be the DataFrame of conscal_threshold_data (columns {sorted(need)}); "
                        f"got {type(data).__name__}.")

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    for split, style in (("dev", "--"), ("test", "-")):
        d = data[data["split"] == split]
        for metric, color in (("macro_ce", "C0"), ("ece", "C1")):
            ax.plot(d["n"], d[metric], style, color=color, marker="o", ms=3, label=f"{metric} ({split})")
            t = d[d["tuned"]]
            ax.plot(t["n"], t[metric], "*", color=color, ms=11)
    tuned = int(data.loc[data["tuned"], "n"].iloc[0])
    ax.axvline(tuned, color="k", ls=":", lw=1, label=f"tuned on dev: n = {tuned}")
    if n is not None:
        ax.axvline(n, color="0.5", lw=2, alpha=0.6, label=f"slider: n = {n}")
    ax.set_xlabel("threshold n (confident iff k > n checkpoints agree)")
    ax.set_ylabel("calibration error")
    ax.set_xticks(sorted(data["n"].unique()))
    ax.legend(fontsize="x-small")
    return ax


def conscal_explorer(table: Any, *, n: int | None = None) -> Any:
    """A slider for binary ConsCal's threshold n (Si et al. 2022, Section 5.2).

    Moving the slider shows MacroCE, ECE and the accuracy of the answers
    ConsCal calls confident, on dev and test, for that n; the n tuned on dev
    MacroCE (:class:`calibnb.ConsCal`) is marked in the figure and is the
    slider's start unless ``n`` is given.

    Parameters
    ----------
    table : pandas.DataFrame
        The output of :func:`conscal_threshold_data` (the data part of this
        figure; :func:`plot_conscal_threshold` draws it).
    n : int, optional
        The slider's start; default the tuned n.

    Returns
    -------
    calibnb.widgets.Panel
        Control ``"n"``; ``update(n=...)`` returns the readout: one row per
        split (``dev``, ``test``), columns ``macro_ce``, ``ece``,
        ``confident_share``, ``confident_accuracy``, ``n``, ``tuned_n``.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Section 5.2.
    """
    import ipywidgets as w
    import pandas as pd

    from ..widgets import build_panel

    needed = {"split", "n", "tuned", "macro_ce", "ece", "confident_share", "confident_accuracy"}
    if not isinstance(table, pd.DataFrame) or not needed <= set(table.columns):
        raise TypeError("table must be the DataFrame returned by conscal_threshold_data.")
    tuned = int(table.loc[table["tuned"], "n"].iloc[0])
    c = int(table["n"].max())
    start = tuned if n is None else check_positive_int(n, "n", minimum=0)
    if start > c:
        raise ValueError(f"n must be in [0, {c}]; got {start}.")
    slider = w.IntSlider(value=start, min=0, max=c, step=1, description=f"threshold n (0 to {c} checkpoints)",
                         continuous_update=False,
                         tooltip="An answer is called confident when more than n of the checkpoints agree "
                                 "with the final model (binary ConsCal, Si et al. 2022, Section 5.2)")
    cols = ["macro_ce", "ece", "confident_share", "confident_accuracy"]

    def draw(axes: list, *, n: int) -> pd.DataFrame:
        n = check_positive_int(n, "n", minimum=0)
        if n > c:
            raise ValueError(f"n must be in [0, {c}]; got {n}.")
        readout = table[table["n"] == n].set_index("split")[cols].copy()
        readout["n"], readout["tuned_n"] = n, tuned
        plot_conscal_threshold(table, n=n, ax=axes[0])
        t = readout.loc["test"]
        axes[0].set_title(f"n = {n}{' (tuned)' if n == tuned else ''}: test MacroCE {t['macro_ce']:.3f}, "
                          f"ECE {t['ece']:.3f}, acc. of confident {t['confident_accuracy']:.3f}", fontsize="small")
        return readout

    return build_panel({"n": slider}, draw, 1, (5.5, 3.8))


# ----------------------------------------------------------------------
# training dynamics of a small model (formerly calibnb/training.py)
#
# Train small models for real: label smoothing and training dynamics (Si et al. 2022, §5.1-5.3).
#
# Si et al. fine-tune DPR-BERT; their checkpoints are not public. This module
# trains a small model on a data set that ships with scikit-learn (no
# download), so that label smoothing (§5.1) and ConsCal (§5.2), which needs the
# predictions of several checkpoints of one training run and of several
# independently seeded runs, run on a real model's real checkpoints.
#
# :func:`train_softmax_regression` is a NumPy multinomial logistic regression
# trained by seeded mini-batch Adam, optionally with label smoothing, returning
# the logits of every checkpoint on the given evaluation sets.
# :func:`training_dynamics` wraps it for a bundled data set.
#
# Why digits at 2 x 2 pixels: Si et al.'s QA models are right 25-40% of the time,
# while a linear model on the full 8 x 8 digits is right about 96% of the time,
# which leaves too few wrong predictions for MacroCE and ConsCal to say
# anything. Averaging each image into 2 x 2 blocks of 4 x 4 pixels (4 features)
# is an honest way to make the task hard: the labels are untouched (no label
# noise), and a linear model reaches roughly 50-55% test accuracy.


@dataclass(frozen=True)
class TrainingRun:
    """Result of :func:`train_softmax_regression`.

    Attributes
    ----------
    epochs : ndarray of shape (C,)
        The epoch after which each checkpoint was taken (1-based).
    logits : dict of str -> ndarray of shape (C, N_set, K)
        Logits of every checkpoint on each evaluation set.
    train_loss : ndarray of shape (n_epochs,)
        Mean training loss (smoothed cross-entropy) of each epoch.
    weights, bias : ndarray
        The final parameters, shapes (n_features, K) and (K,).
    """

    epochs: np.ndarray
    logits: dict[str, np.ndarray]
    train_loss: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    def predictions(self, name: str) -> np.ndarray:
        """(N_set, C) table of each checkpoint's predicted class (the input of :class:`calibnb.ConsCal`)."""
        return self.logits[name].argmax(axis=2).T


def _check_X(X: Any, name: str) -> np.ndarray:
    x = as_float_array(X, name)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (N, n_features); got shape {x.shape}.")
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), x.shape)
        raise ValueError(f"{name} has {int(bad.sum())} value(s) that are NaN or infinite; first at index ({i}, {j}).")
    return x


def train_softmax_regression(
    X: Any,
    y: Any,
    *,
    label_smoothing: float = 0.0,
    epochs: int = 10,
    seed: Any = None,
    checkpoint_every: int = 1,
    eval_sets: Mapping[str, Any] | None = None,
    n_classes: int | None = None,
    learning_rate: float = 0.05,
    batch_size: int = 16,
    l2: float = 0.0,
) -> TrainingRun:
    r"""Multinomial logistic regression trained by seeded mini-batch Adam.

    Minimises the cross-entropy against label-smoothed targets (Si et al.
    2022, §5.1, App. B: "KL divergence with the label smoothed gold
    distribution", which differs from this loss by a constant):

    .. math:: L = -\frac1B\sum_{i \in \mathrm{batch}} \sum_k q_{ik} \log \mathrm{softmax}(x_i W + b)_k
              + \lambda \lVert W \rVert^2, \qquad
              q_{ik} = \begin{cases} 1 - \alpha & k = y_i \\ \alpha/(K-1) & k \ne y_i \end{cases}

    (Si et al. give the gold class :math:`1-\alpha` and the others
    :math:`\alpha/(|Y|-1)`; their "gold label probability α" is read as the
    smoothing mass.) The data are shuffled every epoch with ``seed``;
    weights start at zero, so a run is fully determined by ``seed``.

    Parameters
    ----------
    X : (N, n_features) array; y : (N,) int labels in [0, K)
    label_smoothing : float in [0, 1)
    epochs : int
    seed : None, int or numpy.random.Generator
    checkpoint_every : int
        A checkpoint is taken after every ``checkpoint_every`` epochs (and
        always after the last).
    eval_sets : mapping name -> (N_set, n_features) array, optional
        Sets whose logits are recorded at every checkpoint ("train" is
        always included).
    n_classes : int, optional
        K (default ``max(y) + 1``).
    learning_rate, batch_size, l2 :
        Adam step size, mini-batch size, L2 penalty on W.

    Returns
    -------
    TrainingRun

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = (X[:, 0] > 0).astype(int)
    >>> run = train_softmax_regression(X, y, epochs=4, seed=0, checkpoint_every=2)
    >>> run.epochs.tolist(), run.logits["train"].shape
    ([2, 4], (2, 300, 2))
    >>> bool((run.predictions("train")[:, -1] == y).mean() > 0.95)
    True
    """
    x, labels, k, sets, opts = _check_train_args(X, y, n_classes, label_smoothing, epochs, checkpoint_every,
                                                 learning_rate, batch_size, l2, eval_sets)
    return _train_adam(x, labels, k, sets, as_rng(seed), hidden=0, **opts)


def _train_adam(x, labels, k, sets, rng, *, hidden, alpha, epochs, every, lr, bs, lam) -> TrainingRun:
    # seeded mini-batch Adam on smoothed cross-entropy; hidden = 0: softmax regression, else one tanh layer
    n, d = x.shape
    targets = np.full((n, k), alpha / (k - 1))
    targets[np.arange(n), labels] = 1.0 - alpha
    if hidden:
        # Glorot-uniform initial weights drawn from the run's generator (the non-convex case needs a random start)
        lim1, lim2 = np.sqrt(6.0 / (d + hidden)), np.sqrt(6.0 / (hidden + k))
        params = [rng.uniform(-lim1, lim1, (d, hidden)), np.zeros(hidden), rng.uniform(-lim2, lim2, (hidden, k)), np.zeros(k)]
    else:
        params = [np.zeros((d, k)), np.zeros(k)]

    def forward(a):
        if hidden:
            h = np.tanh(a @ params[0] + params[1])
            return h @ params[2] + params[3], h
        return a @ params[0] + params[1], None

    # Adam is elementwise: the parameters (and their gradients) are views of one flat vector, so each step
    # updates all of them in one pass of a few array operations instead of one pass per parameter. The
    # operations and their order are those of the textbook update, so the floats are the same (tested).
    flat = np.concatenate([p_.ravel() for p_ in params])
    grad_flat = np.empty_like(flat)
    bounds = np.cumsum([0] + [p_.size for p_ in params])
    params = [flat[a:b].reshape(p_.shape) for a, b, p_ in zip(bounds[:-1], bounds[1:], params)]
    grad_views = [grad_flat[a:b].reshape(p_.shape) for a, b, p_ in zip(bounds[:-1], bounds[1:], params)]
    m, v = np.zeros_like(flat), np.zeros_like(flat)
    m_hat, update = np.empty_like(flat), np.empty_like(flat)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    ckpt_epochs: list[int] = []
    ckpt_logits: dict[str, list[np.ndarray]] = {name: [] for name in sets}
    losses = np.zeros(epochs)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n)
        total = 0.0
        for start in range(0, n, bs):
            idx = order[start : start + bs]
            xb, qb = x[idx], targets[idx]
            s, h = forward(xb)
            s = s - s.max(axis=1, keepdims=True)
            logp = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
            total += float(-(qb * logp).sum())
            grad_s = (np.exp(logp) - qb) / idx.size
            if hidden:
                grad_h = (grad_s @ params[2].T) * (1.0 - h * h)
                grads = [xb.T @ grad_h + 2.0 * lam * params[0], grad_h.sum(axis=0),
                         h.T @ grad_s + 2.0 * lam * params[2], grad_s.sum(axis=0)]
            else:
                grads = [xb.T @ grad_s + 2.0 * lam * params[0], grad_s.sum(axis=0)]
            step += 1
            for view, g in zip(grad_views, grads):
                view[...] = g
            g = grad_flat
            # m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
            m *= beta1
            np.multiply(1 - beta1, g, out=update)
            m += update
            v *= beta2
            np.multiply(1 - beta2, g, out=update)
            update *= g
            v += update
            # theta -= lr * m_hat / (sqrt(v_hat) + eps), m_hat = m / (1 - beta1**step), v_hat = v / (1 - beta2**step)
            np.divide(m, 1 - beta1**step, out=m_hat)
            m_hat *= lr
            np.divide(v, 1 - beta2**step, out=update)
            np.sqrt(update, out=update)
            update += eps
            m_hat /= update
            flat -= m_hat
        losses[epoch - 1] = total / n
        if epoch % every == 0 or epoch == epochs:
            ckpt_epochs.append(epoch)
            for name, arr in sets.items():
                ckpt_logits[name].append(forward(arr)[0])
    return TrainingRun(
        epochs=np.array(ckpt_epochs),
        logits={name: np.stack(v_) for name, v_ in ckpt_logits.items()},
        train_loss=losses,
        weights=params[-2].copy(),
        bias=params[-1].copy(),
    )


def _check_train_args(X, y, n_classes, label_smoothing, epochs, checkpoint_every, learning_rate, batch_size, l2, eval_sets):
    x = _check_X(X, "X")
    n, d = x.shape
    if n_classes is not None:
        n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    labels = check_labels(y, n, n_classes, name="y", other="X")
    k = n_classes if n_classes is not None else max(int(labels.max()) + 1, 2)
    out = dict(
        alpha=check_scalar_in_range(label_smoothing, "label_smoothing", low=0.0, high=1.0, high_inclusive=False),
        epochs=check_positive_int(epochs, "epochs"),
        every=check_positive_int(checkpoint_every, "checkpoint_every"),
        lr=check_scalar_in_range(learning_rate, "learning_rate", low=0.0, low_inclusive=False),
        bs=check_positive_int(batch_size, "batch_size"),
        lam=check_scalar_in_range(l2, "l2", low=0.0),
    )
    sets = {"train": x}
    for name, arr in (eval_sets or {}).items():
        e = _check_X(arr, f"eval_sets[{name!r}]")
        if e.shape[1] != d:
            raise ValueError(f"eval_sets[{name!r}] has {e.shape[1]} features but X has {d}; they must match.")
        sets[name] = e
    return x, labels, k, sets, out


def train_mlp(
    X: Any,
    y: Any,
    *,
    hidden: int = 16,
    label_smoothing: float = 0.0,
    epochs: int = 10,
    seed: Any = None,
    checkpoint_every: int = 1,
    eval_sets: Mapping[str, Any] | None = None,
    n_classes: int | None = None,
    learning_rate: float = 0.01,
    batch_size: int = 16,
    l2: float = 0.0,
) -> TrainingRun:
    r"""A one-hidden-layer tanh network trained by seeded mini-batch Adam (non-convex).

    The same loss as :func:`train_softmax_regression` (cross-entropy against
    label-smoothed targets :math:`q`), on logits of a hidden layer of
    ``hidden`` tanh units:

    .. math:: z_i = 	anh(x_i W_1 + b_1)\,W_2 + b_2, \qquad
              L = -rac1B\sum_{i} \sum_k q_{ik} \log \mathrm{softmax}(z_i)_k
              + \lambda (\lVert W_1
Vert^2 + \lVert W_2 
Vert^2)

    :math:`W_1, W_2` start Glorot-uniform from ``seed`` (biases at zero), so
    independently seeded runs start in different places and end in different
    local minima: their checkpoints disagree because of training dynamics,
    not only optimiser noise (Si et al. 2022 §5.2 use DPR-BERT checkpoints).
    Parameters are those of :func:`train_softmax_regression` plus
    ``hidden`` (number of hidden units, >= 1). ``TrainingRun.weights`` and
    ``bias`` hold the output layer.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.1-5.2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)   # XOR: no linear model fits it
    >>> run = train_mlp(X, y, hidden=8, epochs=30, seed=0, checkpoint_every=10, learning_rate=0.02)
    >>> run.epochs.tolist(), run.logits["train"].shape
    ([10, 20, 30], (3, 400, 2))
    >>> bool((run.predictions("train")[:, -1] == y).mean() > 0.9)
    True
    """
    hidden = check_positive_int(hidden, "hidden")
    x, labels, k, sets, opts = _check_train_args(X, y, n_classes, label_smoothing, epochs, checkpoint_every,
                                                 learning_rate, batch_size, l2, eval_sets)
    return _train_adam(x, labels, k, sets, as_rng(seed), hidden=hidden, **opts)


_DATASETS = ("digits", "wine", "breast_cancer", "iris")


def load_bundled(dataset: str = "digits", *, resolution: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of a data set bundled with scikit-learn (no download).

    ``"digits"`` images (8 x 8) are averaged into ``resolution x resolution``
    blocks (``resolution`` must divide 8; 8 keeps every pixel).

    >>> X, y = load_bundled("digits", resolution=2)
    >>> X.shape, int(y.max())
    ((1797, 4), 9)
    """
    from sklearn import datasets

    check_choice(dataset, _DATASETS, "dataset")
    if dataset == "digits":
        resolution = check_positive_int(resolution, "resolution")
        if 8 % resolution:
            raise ValueError(f"resolution must divide 8 (1, 2, 4 or 8); got {resolution}.")
        X, y = datasets.load_digits(return_X_y=True)
        block = 8 // resolution
        X = X.reshape(-1, resolution, block, resolution, block).mean(axis=(2, 4)).reshape(len(y), -1)
        return X, y
    loader = {"wine": datasets.load_wine, "breast_cancer": datasets.load_breast_cancer, "iris": datasets.load_iris}
    X, y = loader[dataset](return_X_y=True)
    return X.astype(np.float64), y


@dataclass(frozen=True)
class TrainingDynamics:
    """Checkpoints of one run and final predictions of independent runs (see :func:`training_dynamics`).

    Attributes
    ----------
    dataset : str
    n_classes : int
    epochs : ndarray (C,)
        Epoch of each checkpoint of the main run.
    labels : dict "dev"/"test" -> (N,) int
    checkpoint_logits : dict "dev"/"test" -> (C, N, K)
        Logits of each checkpoint of the main run.
    checkpoint_predictions : dict "dev"/"test" -> (N, C)
        Predicted class per checkpoint; the last column is the final model.
    run_logits : dict "dev"/"test" -> (S, N, K)
        Final logits of S independently seeded runs.
    run_predictions : dict "dev"/"test" -> (N, S)
        Their predicted classes (input of ``ConsCal.without_training_dynamics``).
    checkpoint_accuracy : dict "dev"/"test" -> (C,)
    seeds : dict
        The seeds actually used (main run, independent runs, split).
    epoch_predictions : dict "dev"/"test" -> (N, E)
        Predicted class of the main run after every epoch 1..E (E = C x
        epochs per checkpoint); :meth:`spaced_checkpoints` takes other N from it.
    model : str
        ``"softmax regression"`` or ``"MLP (h tanh units)"``.
    """

    dataset: str
    n_classes: int
    epochs: np.ndarray
    labels: dict[str, np.ndarray]
    checkpoint_logits: dict[str, np.ndarray]
    checkpoint_predictions: dict[str, np.ndarray]
    run_logits: dict[str, np.ndarray]
    run_predictions: dict[str, np.ndarray]
    checkpoint_accuracy: dict[str, np.ndarray]
    seeds: dict[str, Any] = field(default_factory=dict)
    epoch_predictions: dict[str, np.ndarray] = field(default_factory=dict)
    model: str = "softmax regression"

    def spaced_checkpoints(self, n_checkpoints: int, split: str = "test") -> np.ndarray:
        """(N, n_checkpoints) predictions of the SAME main run at evenly spaced epochs ending at its last epoch.

        Only the number of checkpoints changes; the final model (last column)
        is the one of :attr:`checkpoint_predictions` (Si et al. 2022, App. E).
        Epoch ``round(E * j / n)`` for ``j = 1..n``; ``n`` must not exceed E.
        """
        n_checkpoints = check_positive_int(n_checkpoints, "n_checkpoints")
        check_choice(split, tuple(self.epoch_predictions), "split")
        table = self.epoch_predictions[split]
        n_epochs = table.shape[1]
        if n_checkpoints > n_epochs:
            raise ValueError(f"n_checkpoints must be at most the {n_epochs} epochs of the main run; got {n_checkpoints}.")
        epochs = np.round(np.arange(1, n_checkpoints + 1) * n_epochs / n_checkpoints).astype(int)
        return table[:, epochs - 1]


def training_dynamics(
    dataset: str = "digits",
    *,
    n_checkpoints: int = 5,
    n_seeds: int = 5,
    seed: Any = None,
    epochs_per_checkpoint: int = 2,
    label_smoothing: float = 0.0,
    resolution: int = 2,
    split: tuple[float, float] = (0.25, 0.25),
    learning_rate: float = 0.1,
    batch_size: int = 16,
    hidden: int = 0,
) -> TrainingDynamics:
    r"""Train a small model on a bundled data set and return real training dynamics.

    A seeded split puts ``split[0]`` of the data in dev, ``split[1]`` in test
    and the rest in train; features are standardised with the training mean
    and standard deviation. One main run (seed ``seed``) is trained for
    ``n_checkpoints * epochs_per_checkpoint`` epochs with a checkpoint every
    ``epochs_per_checkpoint`` epochs: its per-checkpoint predictions are
    ConsCal's input (Si et al. 2022 §5.2, N = 5 checkpoints). ``n_seeds``
    further runs with independent seeds give the final predictions for
    "ConsCal w/o training dynamics" (§5.3). See the module docstring for why
    the default is digits at 2 x 2 pixels. ``hidden = 0`` trains softmax
    regression (:func:`train_softmax_regression`, convex); ``hidden > 0`` a
    one-hidden-layer tanh network (:func:`train_mlp`, non-convex).

    .. math:: \hat y^{(c)}_i = \arg\max_k (x_i W^{(c)} + b^{(c)})_k, \quad c = 1..C

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.2.

    Examples
    --------
    >>> td = training_dynamics(n_checkpoints=3, n_seeds=2, seed=0)
    >>> td.checkpoint_predictions["dev"].shape[1], td.run_predictions["test"].shape[1]
    (3, 2)
    >>> bool(0.4 < td.checkpoint_accuracy["test"][-1] < 0.7)
    True
    >>> td.spaced_checkpoints(3, "dev").shape == td.checkpoint_predictions["dev"].shape
    True
    """
    n_checkpoints = check_positive_int(n_checkpoints, "n_checkpoints")
    n_seeds = check_positive_int(n_seeds, "n_seeds")
    per = check_positive_int(epochs_per_checkpoint, "epochs_per_checkpoint")
    try:
        f_dev, f_test = split
    except (TypeError, ValueError):
        raise TypeError(f"split must be a pair (dev fraction, test fraction); got {split!r}.") from None
    f_dev = check_scalar_in_range(f_dev, "split[0]", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    f_test = check_scalar_in_range(f_test, "split[1]", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if f_dev + f_test >= 1.0:
        raise ValueError(f"split leaves no training data: dev {f_dev:g} + test {f_test:g} >= 1.")
    X, y = load_bundled(dataset, resolution=resolution)
    n_classes = int(y.max()) + 1
    seed_value = seed_int(seed)
    seq = np.random.SeedSequence(seed_value)
    split_seq, main_seq, *run_seqs = seq.spawn(2 + n_seeds)
    perm = np.random.default_rng(split_seq).permutation(len(y))
    n_dev, n_test = int(round(f_dev * len(y))), int(round(f_test * len(y)))
    parts = {"dev": perm[:n_dev], "test": perm[n_dev : n_dev + n_test]}
    train = perm[n_dev + n_test :]
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    Z = (X - mean) / std
    evals = {name: Z[idx] for name, idx in parts.items()}
    hidden = check_scalar_in_range(hidden, "hidden", low=0)
    if int(hidden) != hidden:
        raise ValueError(f"hidden must be a whole number of units (0 = softmax regression); got {hidden!r}.")
    hidden = int(hidden)
    common = dict(
        label_smoothing=label_smoothing, eval_sets=evals, n_classes=n_classes,
        learning_rate=learning_rate, batch_size=batch_size,
    )

    def fit(every, rng):
        total = n_checkpoints * per
        if hidden:
            return train_mlp(Z[train], y[train], hidden=hidden, epochs=total, checkpoint_every=every, seed=rng, **common)
        return train_softmax_regression(Z[train], y[train], epochs=total, checkpoint_every=every, seed=rng, **common)

    # the main run keeps every epoch; its N checkpoints are every `per`-th epoch
    main = fit(1, np.random.default_rng(main_seq))
    keep = np.flatnonzero(main.epochs % per == 0)
    runs = [fit(n_checkpoints * per, np.random.default_rng(s)) for s in run_seqs]
    labels = {name: y[idx] for name, idx in parts.items()}
    epoch_pred = {name: main.predictions(name) for name in parts}
    ckpt_pred = {name: epoch_pred[name][:, keep] for name in parts}
    return TrainingDynamics(
        dataset=dataset,
        n_classes=n_classes,
        epochs=main.epochs[keep],
        labels=labels,
        checkpoint_logits={name: main.logits[name][keep] for name in parts},
        checkpoint_predictions=ckpt_pred,
        run_logits={name: np.stack([r.logits[name][-1] for r in runs]) for name in parts},
        run_predictions={name: np.stack([r.logits[name][-1].argmax(axis=1) for r in runs], axis=1) for name in parts},
        checkpoint_accuracy={name: (ckpt_pred[name] == labels[name][:, None]).mean(axis=0) for name in parts},
        seeds={"seed": seed_value, "entropy": seq.entropy},
        epoch_predictions=epoch_pred,
        model=f"MLP ({hidden} tanh units)" if hidden else "softmax regression",
    )


# --------------------------------------------------------------------------
# Notebook 01's helpers around Tables 1, 3 and 5 (moved from the notebook, issue 25 item 8)
# --------------------------------------------------------------------------

def ts_rows(name: str, scores: Any, labels: Any, *, split_seed: Any = None, frac: float = 0.5,
            n_bins: int = 10) -> tuple[dict, float]:
    r"""Test-split confidences before and after temperature scaling tuned on the dev split's ECE (Si et al. 2022, Table 1).

    .. math:: \hat\tau = \arg\min_\tau \mathrm{ECE}_{\mathrm{dev}}\big(\max_k \mathrm{softmax}(z / \tau)_k\big)

    The items are split by :func:`calibnb.data.calibration_test_split`
    (``frac`` of them to dev, seeded by ``split_seed``); :math:`\tau` is fit
    on dev (:class:`calibnb.TemperatureScaling` with ``objective="ece"``) and
    the test split's top confidence and correctness are returned raw and at
    :math:`\hat\tau` (:func:`top_confidence`), keyed for
    :func:`calibration_summary_table`.

    Parameters
    ----------
    name : str
        The source's name, the first level of the returned keys.
    scores : array-like (N, K) or (N,)
        Logits (or log-probabilities) of each item's classes, or 1-D
        confidences (the two forms of :func:`top_confidence`).
    labels : array-like (N,)
        True class of each item, or 0/1 correctness with 1-D ``scores``.
    split_seed : None, int or numpy.random.Generator, keyword-only
        Seed of the dev/test split.
    frac : float, keyword-only
        Share of the items in the dev split.
    n_bins : int, keyword-only
        Equal-width bins of the dev ECE that TS minimises.

    Returns
    -------
    tuple
        ``({(name, "raw"): (conf, correct), (name, "TS"): (conf, correct)}, temperature)``.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Section 3 and Table 1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(200, 3))
    >>> y = np.argmax(z + 3 * rng.normal(size=z.shape), axis=1)  # the logits are overconfident
    >>> rows, tau = ts_rows("toy", z, y, split_seed=0, n_bins=10)
    >>> sorted(rows), bool(tau > 1)
    ([('toy', 'TS'), ('toy', 'raw')], True)
    """
    from ..data import calibration_test_split

    if not isinstance(name, str):
        raise TypeError(f"name must be a str; got {type(name).__name__}.")
    if np.ndim(scores) == 1:   # the two forms of top_confidence, validated; then used as given
        c = check_conf(scores, "scores")
        check_correct(labels, c.shape[0], name="labels", other="scores")
    else:
        z = check_logits(scores, "scores")
        check_labels(labels, z.shape[0], z.shape[1], name="labels", other="scores")
    z, y = np.asarray(scores), np.asarray(labels)
    n_bins = check_n_bins(n_bins)
    dev, test = calibration_test_split(len(y), seed=split_seed, frac=frac)
    ts = TemperatureScaling(objective="ece", n_bins=n_bins).fit(z[dev], y[dev])
    raw = top_confidence(z[test], y[test])
    cal = top_confidence(z[test], y[test], temperature=ts.temperature_)
    return {(name, "raw"): raw, (name, "TS"): cal}, ts.temperature_


def ts_margin(table: Any, name: str) -> float:
    r"""How much more temperature scaling cuts ECE than MacroCE, relatively (Si et al. 2022, Table 1).

    .. math:: \frac{\mathrm{ECE}_{raw} - \mathrm{ECE}_{TS}}{\mathrm{ECE}_{raw}}
              - \frac{\mathrm{MacroCE}_{raw} - \mathrm{MacroCE}_{TS}}{\mathrm{MacroCE}_{raw}}

    (:func:`relative_reduction`), from the rows ``(name, "raw")`` and
    ``(name, "TS")`` of a :func:`calibration_summary_table`.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`calibration_summary_table`, with columns ``ece_width`` and ``macro_ce``.
    name : str
        The source whose raw and TS rows are compared.

    Returns
    -------
    float

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Table 1.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"ece_width": [20.0, 5.0], "macro_ce": [40.0, 38.0]},
    ...                  index=pd.MultiIndex.from_tuples([("m", "raw"), ("m", "TS")]))
    >>> round(ts_margin(t, "m"), 3)
    0.7
    """
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a DataFrame from calibration_summary_table; got {type(table).__name__}.")
    missing = [c for c in ("ece_width", "macro_ce") if c not in table.columns]
    if missing:
        raise ValueError(f"table has no column(s) {missing}; its columns are {list(table.columns)}.")
    for stage in ("raw", "TS"):
        if (name, stage) not in table.index:
            raise ValueError(f"table has no row ({name!r}, {stage!r}); name must be a source of the table.")
    before, after = table.loc[(name, "raw")], table.loc[(name, "TS")]
    return float(relative_reduction(before["ece_width"], after["ece_width"])
                 - relative_reduction(before["macro_ce"], after["macro_ce"]))


def relative_cut(metric: Any) -> Any:
    r"""``(conf_before, conf_after, correct) -> (m(before) - m(after)) / m(before)``, a statistic to bootstrap.

    .. math:: \mathrm{cut}_m = \frac{m(c_0, y) - m(c_1, y)}{m(c_0, y)}

    for a metric :math:`m` of (conf, correct), the same items scored before
    (:math:`c_0`) and after (:math:`c_1`) a calibrator (Si et al. 2022,
    Tables 1 and 2; :func:`relative_reduction`). The returned function takes
    its three arrays positionally, as :func:`calibnb.bootstrap_ci` passes them.
    If ``metric`` is marked with :func:`calibnb.batch_axis`, so is the
    returned function: arrays of shape (S, N) give the S cuts at once, and
    :func:`calibnb.bootstrap_ci` evaluates many resamples per call.

    Parameters
    ----------
    metric : callable
        ``metric(conf, correct) -> float``, e.g. :func:`calibnb.macro_ce`.

    Returns
    -------
    callable
        Returns a float for arrays of shape (N,).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Tables 1 and 2.

    Examples
    --------
    >>> cut = relative_cut(metrics.ice)
    >>> round(cut(np.array([0.9, 0.9]), np.array([0.7, 0.7]), np.array([1, 0])), 3)
    0.0
    >>> c0, c1, y = np.array([[0.9, 0.9], [0.8, 0.6]]), np.array([[0.7, 0.7], [0.6, 0.6]]), np.array([[1, 0], [1, 0]])
    >>> cut(c0, c1, y).tolist() == [cut(c0[s], c1[s], y[s]) for s in range(2)]  # one cut per row, at once
    True
    """
    from ..metrics.batch import BATCH_ATTR, batch_axis

    if not callable(metric):
        raise TypeError(f"metric must be a callable metric(conf, correct); got {type(metric).__name__}.")

    def cut(c0, c1, y):
        return relative_reduction(metric(c0, y), metric(c1, y))

    return batch_axis(cut) if getattr(metric, BATCH_ATTR, False) else cut


def split_spread(values: Any, *, target: Any) -> dict[str, float]:
    r"""Median, 10% and 90% quantiles of a quantity over repeated splits, and the share inside the paper's range.

    .. math:: \text{share} = \frac{1}{S} \sum_{s=1}^{S} \mathbb{1}[\ell \le v_s \le h]

    over the values :math:`v_s` of S dev/test splits and the claim's target
    range :math:`[\ell, h]`. Notebook 01 uses it for the Codex TriviaQA
    margins and cuts (Si et al. 2022, Table 1 on another model).

    Parameters
    ----------
    values : array-like (S,)
        One finite value per split.
    target : tuple of float, keyword-only
        ``(low, high)``, the claim's range (``Reproduction.target``).

    Returns
    -------
    dict
        ``n_splits``, ``median``, ``q10``, ``q90``, ``share_holding``.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Table 1.

    Examples
    --------
    >>> split_spread([0.1, 0.5, 0.6, 0.9], target=(0.4, 1.0))["share_holding"]
    0.75
    """
    from ..validation import check_1d_finite

    v = check_1d_finite(values, "values")
    try:
        lo, hi = (float(t) for t in target)
    except (TypeError, ValueError):
        raise TypeError(f"target must be a pair of numbers (low, high); got {target!r}.") from None
    if not (lo <= hi):
        raise ValueError(f"target must have low <= high; got {target!r}.")
    return {"n_splits": int(v.size), "median": float(np.median(v)), "q10": float(np.quantile(v, 0.1)),
            "q90": float(np.quantile(v, 0.9)), "share_holding": float(np.mean((v >= lo) & (v <= hi)))}


def macro_ce_se(conf: Any, correct: Any) -> float:
    r"""Standard error of MacroCE from the spreads of its two groups (Si et al. 2022, Table 5).

    .. math:: \mathrm{SE} = \frac12 \sqrt{\frac{s^2_{+}}{n_{+}} + \frac{s^2_{-}}{n_{-}}}

    with :math:`s^2_{+}` the sample variance (ddof 1) of :math:`1 - p_i` over
    the :math:`n_{+}` correct predictions and :math:`s^2_{-}` that of
    :math:`p_i` over the :math:`n_{-}` wrong ones (MacroCE = (ICE_pos +
    ICE_neg) / 2, :func:`calibnb.macro_ce`).

    Parameters
    ----------
    conf : array-like (N,)
        Confidences in [0, 1].
    correct : array-like (N,)
        0/1 or bool; at least two correct and two wrong predictions.

    Returns
    -------
    float

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Section 4.2 and Table 5.

    Examples
    --------
    >>> round(macro_ce_se([0.9, 0.7, 0.4, 0.2], [1, 1, 0, 0]), 4)
    0.0707
    """
    c, y = check_conf_correct(conf, correct)
    if y.sum() < 2 or (~y).sum() < 2:
        raise ValueError(f"correct must hold at least two correct and two wrong predictions for a standard error; "
                         f"got {int(y.sum())} correct and {int((~y).sum())} wrong.")
    pos, neg = 1 - c[y], c[~y]
    return float(0.5 * np.sqrt(pos.var(ddof=1) / pos.size + neg.var(ddof=1) / neg.size))


@batch_axis
def rho_gap(*arrays: Any, n_bins: int = 10) -> float:
    r"""Spearman(-MacroCE, F1) minus Spearman(-ECE, F1) over methods (Si et al. 2022, Table 3).

    .. math:: \rho_{\mathrm{MacroCE}} - \rho_{\mathrm{ECE}}, \qquad \rho_m = \mathrm{Spearman}(-m, F_1)

    across the methods, with F1 of the trusting reader (:func:`trust_scores`)
    and ECE with ``n_bins`` equal-width bins. The arrays are the methods'
    (conf, correct) in turn, so :func:`calibnb.bootstrap_ci` resamples all
    methods with the same items. Where F1 or a metric is constant across the
    methods there is no ranking; that Spearman counts as 0.

    Parameters
    ----------
    *arrays : array-like (N,), or all (S, N)
        ``conf_1, correct_1, conf_2, correct_2, ...``: at least two methods.
        Arrays of shape (S, N) (marked :func:`calibnb.batch_axis`: the
        resamples of :func:`calibnb.bootstrap_ci`) give one value per row,
        equal to the 1-D call on that row.
    n_bins : int, keyword-only
        Equal-width bins of ECE.

    Returns
    -------
    float, or ndarray of shape (S,) for 2-D arrays

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Section 5.4 and Table 3.

    Examples
    --------
    >>> y = np.array([1, 1, 0, 0, 1])
    >>> a, b, c = np.array([.9, .8, .3, .2, .7]), np.array([.6, .6, .6, .6, .6]), np.array([.9, .9, .9, .9, .9])
    >>> round(rho_gap(a, y, b, y, c, y, n_bins=5), 3)  # ECE ranks the constant 0.6 first, MacroCE the sharp a (F1's best)
    0.866
    """
    from scipy import stats

    if len(arrays) < 4 or len(arrays) % 2:
        raise ValueError(f"arrays must be conf, correct pairs of at least two methods; got {len(arrays)} array(s).")
    n_bins = check_n_bins(n_bins)
    if np.ndim(arrays[0]) == 2:
        return _rho_gap_rows(arrays, n_bins)
    pairs = []
    for i in range(0, len(arrays), 2):
        c = check_conf(arrays[i], f"arrays[{i}]")
        pairs.append((c, check_correct(arrays[i + 1], c.shape[0], name=f"arrays[{i + 1}]", other=f"arrays[{i}]")))
    f1 = np.array([trust_scores(c, y).f1 for c, y in pairs])
    rhos = [np.nan_to_num(stats.spearmanr(-np.array([m(c, y) for c, y in pairs]), f1).statistic)
            for m in (metrics.macro_ce, lambda c, y: ece(c, y, n_bins=n_bins))]
    return float(rhos[0] - rhos[1])


def _rho_gap_rows(arrays: tuple, n_bins: int) -> np.ndarray:
    """:func:`rho_gap` of each row of (S, N) arrays (the resamples of :func:`calibnb.bootstrap_ci`), the same floats.

    MacroCE and ECE take the rows at once (their batched forms equal the 1-D ones bit for bit), F1 of the trusting
    reader is :func:`trust_scores`'s arithmetic on integer counts per row; only the two Spearman correlations over
    the methods are computed row by row, by the same scipy call. Issue 31: notebook 01's two intervals of 1,000
    resamples spent 5 s in 2,000 calls of 1-D rho_gap.
    """
    from scipy import stats

    from ..validation import check_conf_correct_batch

    pairs = []
    for i in range(0, len(arrays), 2):
        if np.ndim(arrays[i]) != 2 or np.shape(arrays[i + 1]) != np.shape(arrays[i]) \
                or np.shape(arrays[i]) != np.shape(arrays[0]):
            raise ValueError(f"arrays must all be 1-D, or all 2-D of one shape (S, N); arrays[0] has shape "
                             f"{np.shape(arrays[0])}, arrays[{i}] {np.shape(arrays[i])} and arrays[{i + 1}] "
                             f"{np.shape(arrays[i + 1])}.")
        pairs.append(check_conf_correct_batch(arrays[i], arrays[i + 1]))
    f1 = np.array([_trust_f1_rows(c, y) for c, y in pairs])          # (M, S)
    macro = np.array([metrics.macro_ce(c, y) for c, y in pairs])     # (M, S)
    binned = np.array([ece(c, y, n_bins=n_bins) for c, y in pairs])  # (M, S)
    out = np.empty(f1.shape[1])
    for s in range(out.shape[0]):
        rho_macro = np.nan_to_num(stats.spearmanr(-macro[:, s], f1[:, s]).statistic)
        rho_ece = np.nan_to_num(stats.spearmanr(-binned[:, s], f1[:, s]).statistic)
        out[s] = float(rho_macro - rho_ece)
    return out


def _trust_f1_rows(conf: np.ndarray, correct: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """F1 of :func:`trust_scores` for each row of (S, N) arrays: the same operations on the same integer counts."""
    trusted = conf >= threshold
    n_trusted = np.count_nonzero(trusted, axis=1)
    tp = np.count_nonzero(trusted & correct, axis=1)
    n_pos = np.count_nonzero(correct, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(n_trusted > 0, tp / n_trusted, 0.0)
        recall = np.where(n_pos > 0, tp / n_pos, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return f1


def table7_methods(dyn: Any, dyn_ls: Any, *, n_bins: int = 10) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    r"""Test-split (conf, correct) of every method of Si et al.'s Table 7 on a trained model's checkpoints.

    From the last checkpoint of ``dyn``: no calibration; temperature scaling
    (:math:`\tau` minimising dev ECE with ``n_bins`` equal-width bins);
    the binary and the average baseline fit on dev. From ``dyn_ls`` (the same
    model trained with label smoothing): label smoothing, and label smoothing
    + TS. ConsCal (binary, frequency, classifier) on the checkpoints'
    predictions (the last checkpoint last), and ConsCal without training
    dynamics (binary, frequency) on the independent runs' predictions, whose
    final prediction is their majority vote (so its correctness is its own).

    .. math:: \mathrm{ConsCal}_{\mathrm{binary}}(x) = \mathbb{1}\big[\#\{c : \hat y_c(x) = \hat y_C(x)\} > n\big]

    with :math:`n` tuned on dev (:class:`calibnb.ConsCal`).

    Parameters
    ----------
    dyn : TrainingDynamics
        From :func:`training_dynamics`.
    dyn_ls : TrainingDynamics
        The same, trained with label smoothing (``label_smoothing=0.1``).
    n_bins : int, keyword-only
        Equal-width bins of the dev ECE that TS minimises.

    Returns
    -------
    dict
        Method name -> ``(conf, correct)`` on the test split, for
        :func:`calibration_summary_table`.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Section 5 and Table 7.

    Examples
    --------
    >>> dyn = training_dynamics(n_checkpoints=2, n_seeds=2, epochs_per_checkpoint=1, seed=0)
    >>> dyn_ls = training_dynamics(n_checkpoints=2, n_seeds=2, epochs_per_checkpoint=1, seed=0, label_smoothing=0.1)
    >>> methods = table7_methods(dyn, dyn_ls, n_bins=10)
    >>> len(methods), float(np.ptp(methods["Average baseline"][0]))
    (11, 0.0)
    """
    from ..calibrators import AverageBaseline, BinaryBaseline

    for name, d in (("dyn", dyn), ("dyn_ls", dyn_ls)):
        if not isinstance(d, TrainingDynamics):
            raise TypeError(f"{name} must be a TrainingDynamics (training_dynamics); got {type(d).__name__}.")
    n_bins = check_n_bins(n_bins)
    z_dev, z_test = dyn.checkpoint_logits["dev"][-1], dyn.checkpoint_logits["test"][-1]
    l_dev, l_test = dyn.labels["dev"], dyn.labels["test"]
    raw_dev, y_dev = top_confidence(z_dev, l_dev)
    raw_test, y_test = top_confidence(z_test, l_test)
    ts = TemperatureScaling(objective="ece", n_bins=n_bins).fit(z_dev, l_dev)
    out = {"No calibration": (raw_test, y_test),
           "Temperature scaling": top_confidence(z_test, l_test, temperature=ts.temperature_)}
    zl_dev, zl_test = dyn_ls.checkpoint_logits["dev"][-1], dyn_ls.checkpoint_logits["test"][-1]
    ts_ls = TemperatureScaling(objective="ece", n_bins=n_bins).fit(zl_dev, dyn_ls.labels["dev"])
    out["Label smoothing"] = top_confidence(zl_test, dyn_ls.labels["test"])
    out["Label smoothing + TS"] = top_confidence(zl_test, dyn_ls.labels["test"], temperature=ts_ls.temperature_)
    out["Binary baseline"] = (BinaryBaseline().fit(raw_dev, y_dev).transform(raw_test), y_test)
    out["Average baseline"] = (AverageBaseline().fit(raw_dev, y_dev).transform(raw_test), y_test)
    # prediction tables (N, C): one column per checkpoint, the last checkpoint last
    p_dev, p_test = dyn.checkpoint_predictions["dev"], dyn.checkpoint_predictions["test"]
    for mode in ("binary", "frequency", "classifier"):
        out[f"ConsCal ({mode})"] = (ConsCal(mode=mode).fit(p_dev, y_dev).transform(p_test), y_test)
    # without training dynamics: N independent seeds, final prediction = majority vote
    s_dev, s_test = dyn.run_predictions["dev"], dyn.run_predictions["test"]
    for mode in ("binary", "frequency"):
        cc = ConsCal.without_training_dynamics(mode=mode)
        yv_dev = cc.agreement(s_dev)[0] == l_dev
        yv_test = cc.agreement(s_test)[0] == l_test
        out[f"ConsCal w/o TD ({mode})"] = (cc.fit(s_dev, yv_dev).transform(s_test), yv_test)
    return out


def resample_source(name: str, scores: Any, labels: Any, *, accuracies: Any = (0.1, 0.5, 0.9), split_seed: Any = None,
                    seed: Any = None, frac: float = 0.5, n_bins: int = 10):
    r"""Tables 5 and 6 of Si et al. 2022 for one source, and the standard error of MacroCE at Table 5's size.

    The items are split into dev and test (:func:`calibnb.data.calibration_test_split`,
    ``frac`` to dev, seeded by ``split_seed``). Table 5: :func:`resampling_table`
    at each accuracy of ``accuracies``; Table 6: :func:`accuracy_shift_table`
    from the highest to the lowest accuracy and back. The standard error
    (:func:`macro_ce_se`) is that of MacroCE on a test set re-sampled
    (:func:`resample_indices`) to each accuracy at the size Table 5 drew; the
    largest over the accuracies is returned.

    .. math:: \mathrm{SE} = \max_a \tfrac12 \sqrt{s^2_{+,a}/n_{+,a} + s^2_{-,a}/n_{-,a}}

    Parameters
    ----------
    name : str
        The source's name, a ``source`` column of both tables.
    scores : array-like (N, K) or (N,)
        Logits, or 1-D confidences (the two forms of :func:`top_confidence`).
    labels : array-like (N,)
        True classes, or 0/1 correctness with 1-D ``scores``.
    accuracies : sequence of float, keyword-only
        Accuracy levels of Table 5 (at least two for Table 6's shift).
    split_seed : None, int or numpy.random.Generator, keyword-only
        Seed of the dev/test split.
    seed : None or int, keyword-only
        Seed of the re-sampling.
    frac : float, keyword-only
        Share of the items in the dev split.
    n_bins : int, keyword-only
        Equal-width bins of ECE.

    Returns
    -------
    tuple
        ``(table5, table6, se, samples)``: the two DataFrames, the largest
        standard error, and Table 5's re-sampled sets (``return_samples`` of
        :func:`resampling_table`).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. Section 4.2, Tables 5 and 6.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(600, 3))
    >>> y = np.argmax(z + 3 * rng.normal(size=z.shape), axis=1)
    >>> t5, t6, se, samples = resample_source("toy", z, y, accuracies=(0.3, 0.6), split_seed=0, seed=1)
    >>> sorted(set(t5.accuracy)), sorted(set(t6.source)), bool(0 < se < 0.1)
    ([0.3, 0.6], ['toy'], True)
    """
    import pandas as pd

    from ..data import calibration_test_split

    if not isinstance(name, str):
        raise TypeError(f"name must be a str; got {type(name).__name__}.")
    if np.ndim(scores) == 1:
        c = check_conf(scores, "scores")
        check_correct(labels, c.shape[0], name="labels", other="scores")
    else:
        z = check_logits(scores, "scores")
        check_labels(labels, z.shape[0], z.shape[1], name="labels", other="scores")
    scores, labels = np.asarray(scores), np.asarray(labels)
    try:
        levels = [float(a) for a in accuracies]
    except (TypeError, ValueError):
        raise TypeError(f"accuracies must be a sequence of numbers; got {accuracies!r}.") from None
    if len(levels) < 2:
        raise ValueError(f"accuracies needs at least two levels (Table 6 shifts between them); got {accuracies!r}.")
    dev, test = calibration_test_split(len(labels), seed=split_seed, frac=frac)
    t5, samples = resampling_table(scores[dev], labels[dev], scores[test], labels[test], accuracies=accuracies,
                                   seed=seed, n_bins=n_bins, return_samples=True)
    # SE of MacroCE on a re-sampled test set of the size drawn in Table 5 (the largest over the levels)
    c_all, y_all = top_confidence(scores[test], labels[test])
    ses = []
    for a in accuracies:
        idx = resample_indices(y_all, a, n=int(t5.n.iloc[0]), seed=seed)   # the size Table 5 drew
        ses.append(macro_ce_se(c_all[idx], y_all[idx]))
    shift = pd.concat([accuracy_shift_table(scores[dev], labels[dev], scores[test], labels[test],
                                            dev_accuracy=a, test_accuracy=b, seed=seed, n_bins=n_bins)
                       .assign(setting=f"dev {a:.0%} → test {b:.0%}")
                       for a, b in [(max(accuracies), min(accuracies)), (min(accuracies), max(accuracies))]])
    return t5.assign(source=name), shift.assign(source=name), max(ses), samples


# --------------------------------------------------------------------------
# Section 4.2, Table 5: the tuned temperature against accuracy, with a bootstrap interval
# --------------------------------------------------------------------------

#: Most safeguarded Newton steps of :func:`nll_temperatures` (each a Newton step inside the bracket of the
#: minimiser, else a geometric bisection of it); Newton converges in a handful, bisection alone in about 60.
_TAU_ITERATIONS = 100
#: Bound on (replicates x items x classes) held at once by :func:`nll_temperatures`.
_TAU_BLOCK = 2 ** 22
#: Confidences are clipped to [clip, 1 - clip] before the logit of the binary NLL, as TemperatureScaling's NLL
#: does (the tests compare the two fits).
_NLL_CLIP = 1e-15


def _nll_logits(scores: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """(N, K) logits, shifted so each row's largest is 0, and the (N,) true-class indices; binary -> [0, logit(c)]."""
    from scipy import special

    if np.ndim(scores) == 1:
        c = check_conf(scores, "scores")
        y = check_correct(labels, c.shape[0], name="labels", other="scores")
        z = np.column_stack([np.zeros(c.shape[0]), special.logit(np.clip(c, _NLL_CLIP, 1.0 - _NLL_CLIP))])
        lab = y.astype(np.intp)
    else:
        z = check_logits(scores, "scores").astype(float)
        lab = check_labels(labels, z.shape[0], z.shape[1], name="labels", other="scores").astype(np.intp)
        if not np.isfinite(z).all():
            raise ValueError("scores must be finite logits for nll_temperatures (pad_candidates' -inf is not "
                             "supported); use TemperatureScaling for candidate sets.")
    return z - z.max(axis=1, keepdims=True), lab


def nll_temperatures(scores: Any, labels: Any, *, weights: Any = None,
                     bounds: tuple[float, float] = TAU_BOUNDS) -> np.ndarray:
    r"""The NLL temperature of every row of a weights matrix at once (bootstrap refits in one pass).

    Temperature scaling tuned on the negative log-likelihood (Si et al. 2022,
    §2.2: "For classification, the temperature scalar τ is tuned to optimize
    negative log likelihood (NLL) on the dev set"; Guo et al. 2017), with
    item weights :math:`w_{bi}` (a bootstrap resample's multiplicities):

    .. math::

        \tau_b = 1/\beta_b, \qquad
        \beta_b = \arg\min_{\beta} \sum_i w_{bi}\Big(\log\sum_k e^{\beta z_{ik}} - \beta z_{i y_i}\Big)

    The objective is convex in :math:`\beta`: its derivative
    :math:`\sum_i w_{bi}(\mathbb E_{p_i(\beta)}[z_i] - z_{iy_i})` increases
    with :math:`\beta` (its slope is a weighted variance), so every row is
    solved at once by Newton's method on :math:`\beta`, safeguarded by a
    bracket of the minimiser (a step leaving it bisects it), with :math:`\tau`
    kept in ``bounds`` (a minimiser beyond a bound gives the bound, as
    :class:`calibnb.TemperatureScaling` does). Equal to the scalar
    ``TemperatureScaling(objective="nll", bounds=bounds)`` fit on the items
    repeated by their weights (``tests/papers/test_si2022.py``).

    Parameters
    ----------
    scores : array-like (N, K) or (N,)
        Finite logits, or 1-D confidences in [0, 1] (binary form
        :math:`\sigma(\mathrm{logit}(c)/\tau)`, logit clipped as in
        :class:`calibnb.TemperatureScaling`).
    labels : array-like (N,)
        True classes, or 0/1 correctness with 1-D ``scores``.
    weights : None or array-like (B, N) or (N,), keyword-only
        Non-negative item weights, one row per fit; None fits once with
        weight 1 on every item.
    bounds : (float, float), keyword-only
        Search interval of :math:`\tau` (default :data:`TAU_BOUNDS`).

    Returns
    -------
    numpy.ndarray (B,)
        The temperature of each row (shape (1,) for ``weights=None`` or 1-D).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. §2.2, §4.2, Table 5.
    .. [2] Chuan Guo, Geoff Pleiss, Yu Sun, Kilian Q. Weinberger. 2017. "On Calibration of Modern Neural Networks". ICML.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(2000, 3))
    >>> y = (rng.random((2000, 1)) < np.cumsum(softmax(z), axis=1)).argmax(axis=1)
    >>> nll_temperatures(2 * z, y).round(1).tolist()                  # twice as overconfident
    [2.0]
    >>> nll_temperatures(2 * z, y, weights=np.ones((3, 2000))).shape
    (3,)
    """
    z, lab = _nll_logits(scores, labels)
    n = z.shape[0]
    if weights is None:
        w = np.ones((1, n))
    else:
        w = as_float_array(weights, "weights")
        if w.ndim == 1:
            w = w[None, :]
        if w.ndim != 2 or w.shape[1] != n:
            raise ValueError(f"weights must have shape (B, {n}) (one row of item weights per fit); got {w.shape}.")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("weights must be finite and non-negative.")
        if (w.sum(axis=1) <= 0).any():
            raise ValueError("weights has a row summing to 0: every fit needs some weight.")
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError(f"bounds must be a pair (low, high); got {bounds!r}.") from None
    lo = check_scalar_in_range(lo, "bounds[0]", low=0.0, low_inclusive=False)
    hi = check_scalar_in_range(hi, "bounds[1]", low=lo, low_inclusive=False)
    z_true = z[np.arange(n), lab]

    def moments(beta: np.ndarray, wr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # first and second derivative of the weighted NLL in beta: sum_i w_bi (E_p[z_i] - z_iy), sum_i w_bi Var_p(z_i)
        a = beta[:, None, None] * z[None, :, :]                       # (b, N, K), every entry <= 0
        p = np.exp(a - a.max(axis=2, keepdims=True))
        p /= p.sum(axis=2, keepdims=True)
        mean_z = (p * z[None]).sum(axis=2)                            # (b, N)
        var_z = (p * z[None] ** 2).sum(axis=2) - mean_z ** 2
        return ((mean_z - z_true[None, :]) * wr).sum(axis=1), (np.maximum(var_z, 0.0) * wr).sum(axis=1)

    beta_lo, beta_hi = 1.0 / hi, 1.0 / lo
    out = np.empty(w.shape[0])
    step = max(1, _TAU_BLOCK // max(1, z.size))
    for start in range(0, w.shape[0], step):
        wr = w[start:start + step]
        m = wr.shape[0]
        g_lo, _ = moments(np.full(m, beta_lo), wr)
        g_hi, _ = moments(np.full(m, beta_hi), wr)
        beta = np.clip(np.ones(m), beta_lo, beta_hi)
        beta[g_lo >= 0] = beta_lo                                      # rising from the smallest beta: tau = hi
        beta[g_hi <= 0] = beta_hi                                      # still falling at the largest: tau = lo
        active = (g_lo < 0) & (g_hi > 0)
        left, right = np.full(m, beta_lo), np.full(m, beta_hi)
        for _ in range(_TAU_ITERATIONS):
            if not active.any():
                break
            idx = np.flatnonzero(active)
            g, h = moments(beta[idx], wr[idx])
            up = g > 0                                                 # past the minimum: beta too large
            right[idx] = np.where(up, beta[idx], right[idx])
            left[idx] = np.where(up, left[idx], beta[idx])
            with np.errstate(divide="ignore", invalid="ignore"):
                newton = beta[idx] - g / h
            inside = np.isfinite(newton) & (newton >= left[idx]) & (newton <= right[idx])
            new = np.where(inside, newton, np.sqrt(left[idx] * right[idx]))   # else bisect (geometric)
            # converged: a Newton step below 1e-12 relative, or a bracket that narrow
            done = (inside & (np.abs(newton - beta[idx]) <= 1e-12 * beta[idx])) | (g == 0) \
                | (right[idx] - left[idx] <= 1e-12 * right[idx])
            beta[idx] = np.where(done & ~inside, beta[idx], new)
            active[idx[done]] = False
        out[start:start + m] = np.clip(1.0 / beta, lo, hi)
    return out


def temperature_fall_ci(samples: Mapping[float, tuple[Any, Any]], *, n_resamples: int = 1000, seed: Any = None,
                        bounds: tuple[float, float] = TAU_BOUNDS, level: float = 0.95):
    r"""How the NLL temperature falls with accuracy, with a bootstrap interval (Si et al. 2022, Table 5).

    With :math:`\tau_a` the NLL temperature (:func:`nll_temperatures`) of the
    set re-sampled to accuracy :math:`a` and the levels
    :math:`a_1 < \dots < a_L`,

    .. math:: D = \min_{j} \big(\log\tau_{a_j} - \log\tau_{a_{j+1}}\big)

    is positive iff the temperature falls strictly from each level to the
    next (the paper's Temp 10.00 / 4.27 / 0.47 at 10 / 50 / 90%). Each
    level's items are resampled on their own (the levels are independent
    sets; :func:`calibnb.uncertainty.bootstrap_weights`), every replicate
    refitted, and the percentile interval of :math:`D^*` returned.

    Parameters
    ----------
    samples : mapping accuracy -> (scores, labels)
        At least two levels; each a form of :func:`nll_temperatures`.
    n_resamples : int, keyword-only
    seed : None, int or numpy.random.Generator, keyword-only
    bounds : (float, float), keyword-only
        Search interval of :math:`\tau`.
    level : float in (0, 1), keyword-only
        Level of the interval.

    Returns
    -------
    calibnb.uncertainty.BootstrapResult
        ``(estimate, low, high)`` of :math:`D`.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". Findings of EMNLP. §4.2, Table 5.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = 3 * rng.normal(size=(300, 3))
    >>> y = (rng.random((300, 1)) < np.cumsum(softmax(z), axis=1)).argmax(axis=1)
    >>> r = temperature_fall_ci({0.2: (4 * z, y), 0.8: (z, y)}, n_resamples=200, seed=0)
    >>> bool(r.low > 0)                                  # 4x the logits: a 4x temperature
    True
    """
    from ..uncertainty import BootstrapResult, bootstrap_weights, percentile_interval

    if not isinstance(samples, Mapping):
        raise TypeError(f"samples must be a mapping accuracy -> (scores, labels); got {type(samples).__name__}.")
    if len(samples) < 2:
        raise ValueError(f"samples needs at least two accuracy levels; got {len(samples)}.")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    rng = as_rng(seed)
    levels = sorted(samples, key=float)
    point, draws = [], []
    for a in levels:
        try:
            s, lab = samples[a]
        except (TypeError, ValueError):
            raise TypeError(f"samples[{a!r}] must be a pair (scores, labels).") from None
        point.append(float(nll_temperatures(s, lab, bounds=bounds)[0]))
        w = np.concatenate(list(bootstrap_weights(len(lab), n_resamples, seed=rng)))
        draws.append(nll_temperatures(s, lab, weights=w, bounds=bounds))
    logs, dlogs = np.log(point), np.log(np.vstack(draws))              # (L,), (L, B)
    estimate = float(np.min(logs[:-1] - logs[1:]))
    low, high = percentile_interval(np.min(dlogs[:-1] - dlogs[1:], axis=0), level=level)
    return BootstrapResult(estimate, float(low), float(high))
