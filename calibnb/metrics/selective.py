"""Metrics language-model evaluations report: RMS calibration error and selective prediction.

* :func:`rms_calibration_error` -- the binned L2 (root-mean-square) calibration
  error, the headline of Humanity's Last Exam, plain or debiased (Kumar et al. 2019);
* :func:`risk_coverage_curve` -- accuracy (and risk) of the k most confident
  predictions for every k (Geifman & El-Yaniv 2017);
* :func:`coverage_accuracy_area` -- the area under the coverage-accuracy
  curve, HELM's ``selective_cov_acc_area`` (Liang et al. 2023);
* :func:`selective_accuracy` -- the accuracy on the most confident fraction
  of the predictions, HELM's ``selective_acc@10`` at ``coverage=0.1``.

**Ties.** Which items are "the k most confident" is undefined when confidences
tie across the cut (a language model's answers often share a probability, and
verbalised confidences are round numbers). ``ties="average"`` (the default)
gives the expected value over every order of the tied items -- the number of
correct answers among the first k grows linearly through a group of equal
confidences -- and does not depend on the input order; ``ties="order"``
ranks tied items in input order (a stable sort), as a reader of a log in a
fixed order would. HELM sorts with ``numpy.argsort(-conf)`` (not stable), so
its value under ties depends on NumPy's sort; without ties all agree.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..validation import check_choice, check_conf_correct, check_n_bins, check_scalar_in_range
from .binary import bin_indices
from .estimators import debiased_ece
from .registry import Metric, register

__all__ = [
    "rms_calibration_error", "RiskCoverageCurve", "risk_coverage_curve", "coverage_accuracy_area",
    "selective_accuracy",
]

_TIES = ("average", "order")
_ROUNDING = ("ceil", "helm")


class RiskCoverageCurve(NamedTuple):
    """The risk-coverage curve: the k most confident predictions, for k = 1..N.

    Attributes
    ----------
    coverage : ndarray (N,)
        ``k / N``.
    selective_accuracy : ndarray (N,)
        Accuracy of the k most confident predictions.
    risk : ndarray (N,)
        ``1 - selective_accuracy`` (selective risk under 0/1 loss).
    threshold : ndarray (N,)
        The k-th largest confidence (predictions with at least this
        confidence are answered).
    """

    coverage: np.ndarray
    selective_accuracy: np.ndarray
    risk: np.ndarray
    threshold: np.ndarray


def rms_calibration_error(conf, correct, *, n_bins: int = 10, binning: str = "width",
                          debiased: bool = False) -> float:
    """Root-mean-square (L2) calibration error over confidence bins.

    .. math::

        \\mathrm{RMSCE} = \\sqrt{\\sum_{m=1}^{M} \\frac{n_m}{N}\\,(\\bar c_m - \\bar y_m)^2}

    where bin :math:`m` holds :math:`n_m` of the :math:`N` predictions, with
    mean confidence :math:`\\bar c_m` and accuracy :math:`\\bar y_m` (the bins
    of :func:`calibnb.ece`; empty bins are skipped). It weighs large gaps more
    than the ECE does (:math:`\\mathrm{ECE} \\le \\mathrm{RMSCE}` by Jensen's
    inequality) and is the calibration error Humanity's Last Exam reports for
    verbalised confidence (Phan et al. 2025). HLE's ``calib_err`` (taken from
    Hendrycks et al.'s ``calibration_tools``) sorts the answers into bins of
    100 (the remainder joins the last bin) and its loop stops one bin early,
    so the last, most confident bin is left out of its sum; ``binning="mass"``
    with ``n_bins=N // 100`` gives the same bins when N is a multiple of 100
    but counts every bin, so it does not reproduce HLE's printed numbers
    exactly. The plug-in value is biased upwards by about
    :math:`\\sum_m \\bar y_m(1-\\bar y_m)/N`; ``debiased=True`` returns Kumar et
    al.'s estimator (:func:`calibnb.debiased_ece`, Definition 5.2), which
    subtracts that bias bin by bin. For an interval, bootstrap it:
    ``cn.bootstrap_ci(cn.rms_calibration_error, conf, correct, seed=0)``.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        Confidences in [0, 1] and 0/1 correctness.
    n_bins : int, default 10
    binning : {"width", "mass"}, default "width"
    debiased : bool, default False

    Returns
    -------
    float

    References
    ----------
    .. [1] A. Kumar, P. Liang, T. Ma. 2019. "Verified Uncertainty Calibration". NeurIPS. Section 5.
    .. [2] L. Phan et al. 2025. "Humanity's Last Exam". arXiv:2501.14249. Section 4 (calibration error).

    Examples
    --------
    Two bins: (0.9, 0.9 | correct, wrong) has gap 0.4; (0.2 | wrong) has gap 0.2:

    >>> round(rms_calibration_error([0.9, 0.9, 0.2], [1, 0, 0], n_bins=2), 12)
    0.346410161514
    >>> round(float(np.sqrt(2 / 3 * 0.4**2 + 1 / 3 * 0.2**2)), 12)
    0.346410161514
    """
    conf, correct = check_conf_correct(conf, correct)
    n_bins = check_n_bins(n_bins)
    check_choice(binning, ("width", "mass"), "binning")
    if not isinstance(debiased, (bool, np.bool_)):
        raise TypeError(f"debiased must be True or False; got {type(debiased).__name__}.")
    if debiased:
        return debiased_ece(conf, correct, n_bins=n_bins, binning=binning)
    idx = bin_indices(conf, n_bins=n_bins, binning=binning)
    count = np.bincount(idx, minlength=n_bins).astype(np.float64)
    gap = np.bincount(idx, weights=conf - correct, minlength=n_bins)
    keep = count > 0
    return float(np.sqrt(np.sum(gap[keep] ** 2 / count[keep]) / conf.shape[0]))


def _sorted(conf: np.ndarray, correct: np.ndarray, ties: str):
    """Confidences descending and the expected number correct among the first k, k = 0..N."""
    order = np.argsort(-conf, kind="stable")
    c = conf[order]
    y = correct[order].astype(np.float64)
    n = c.shape[0]
    cum = np.concatenate([[0.0], np.cumsum(y)])
    if ties == "average":
        # group ends: positions k where c[k-1] != c[k], plus N; linear within each group of ties
        ends = np.concatenate([[0], np.flatnonzero(c[1:] != c[:-1]) + 1, [n]])
        cum = np.interp(np.arange(n + 1), ends, cum[ends])
    return c, cum


def risk_coverage_curve(conf, correct, *, ties: str = "average") -> RiskCoverageCurve:
    """Selective accuracy and risk of the k most confident predictions, for every k.

    .. math::

        \\mathrm{acc}(k) = \\frac{1}{k}\\sum_{i=1}^{k} y_{(i)}, \\qquad
        \\mathrm{risk}(k) = 1 - \\mathrm{acc}(k), \\qquad \\mathrm{coverage} = k/N

    with :math:`y_{(1)}, y_{(2)}, \\dots` the correctness of the predictions in
    order of decreasing confidence (Geifman & El-Yaniv 2017, Section 2). A
    model whose confidence ranks its right answers first has a curve that
    starts high and falls to the overall accuracy at coverage 1. Ties: see
    the module notes (``"average"`` or ``"order"``).

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    ties : {"average", "order"}, default "average"

    Returns
    -------
    RiskCoverageCurve

    References
    ----------
    .. [1] Y. Geifman, R. El-Yaniv. 2017. "Selective Classification for Deep Neural Networks". NeurIPS.

    Examples
    --------
    >>> curve = risk_coverage_curve([0.9, 0.8, 0.8, 0.3], [1, 1, 0, 0])
    >>> curve.selective_accuracy.tolist()
    [1.0, 0.75, 0.6666666666666666, 0.5]
    >>> risk_coverage_curve([0.9, 0.8, 0.8, 0.3], [1, 1, 0, 0], ties="order").selective_accuracy.tolist()
    [1.0, 1.0, 0.6666666666666666, 0.5]
    """
    conf, correct = check_conf_correct(conf, correct)
    check_choice(ties, _TIES, "ties")
    c, cum = _sorted(conf, correct, ties)
    k = np.arange(1, c.shape[0] + 1, dtype=np.float64)
    acc = cum[1:] / k
    return RiskCoverageCurve(coverage=k / c.shape[0], selective_accuracy=acc, risk=1.0 - acc, threshold=c)


def coverage_accuracy_area(conf, correct, *, ties: str = "average") -> float:
    """Area under the coverage-accuracy curve: HELM's ``selective_cov_acc_area``.

    .. math::

        \\mathrm{AUC} = \\frac{1}{N}\\sum_{k=1}^{N} \\mathrm{acc}(k)

    the mean of :func:`risk_coverage_curve`'s selective accuracy over the N
    coverages :math:`k/N` (HELM, Liang et al. 2023, computed by the
    ``calibration`` package's ``get_selective_stats``). One minus it is the
    area under the risk-coverage curve (AURC, Geifman et al. 2019). Higher is
    better: 1 when every prediction is right; a confidence that ranks all right
    answers first reaches the maximum for that accuracy.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    ties : {"average", "order"}, default "average"

    Returns
    -------
    float

    References
    ----------
    .. [1] P. Liang et al. 2023. "Holistic Evaluation of Language Models". TMLR. Section 4.4 (calibration
       and uncertainty: selective classification).

    Examples
    --------
    >>> coverage_accuracy_area([0.9, 0.7, 0.4, 0.2], [1, 0, 1, 0])  # (1 + 1/2 + 2/3 + 2/4) / 4
    0.6666666666666666
    """
    curve = risk_coverage_curve(conf, correct, ties=ties)
    return float(curve.selective_accuracy.mean())


def selective_accuracy(conf, correct, *, coverage: float = 0.1, ties: str = "average",
                       rounding: str = "ceil") -> float:
    """Accuracy on the most confident ``coverage`` share of the predictions (HELM's ``selective_acc@10``).

    .. math::

        \\mathrm{acc}@c = \\mathrm{acc}(k), \\qquad k = \\lceil c N \\rceil

    (``rounding="ceil"``: the smallest number of predictions covering the
    share :math:`c`). HELM's ``selective_acc@10`` reads the cumulative
    accuracy at index ``int(0.1 * N)`` (0-based), i.e.
    :math:`k = \\lfloor cN \\rfloor + 1` predictions -- 11 of 100;
    ``rounding="helm"`` reproduces that.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    coverage : float in (0, 1], default 0.1
    ties : {"average", "order"}, default "average"
    rounding : {"ceil", "helm"}, default "ceil"

    Returns
    -------
    float

    References
    ----------
    .. [1] P. Liang et al. 2023. "Holistic Evaluation of Language Models". TMLR. Section 4.4.

    Examples
    --------
    >>> conf = np.linspace(1, 0.01, 100)
    >>> correct = np.arange(100) != 3   # the 4th most confident is wrong
    >>> selective_accuracy(conf, correct), selective_accuracy(conf, correct, rounding="helm")
    (0.9, 0.9090909090909091)
    """
    conf, correct = check_conf_correct(conf, correct)
    coverage = check_scalar_in_range(coverage, "coverage", low=0.0, high=1.0, low_inclusive=False)
    check_choice(ties, _TIES, "ties")
    check_choice(rounding, _ROUNDING, "rounding")
    n = conf.shape[0]
    share = round(coverage * n, 9)  # 0.1 * 30 is 3.0000000000000004
    k = max(1, math.ceil(share)) if rounding == "ceil" else min(n, int(share) + 1)
    _, cum = _sorted(conf, correct, ties)
    return float(cum[k] / k)


register(Metric("rms_ce", "RMS calibration error ({n_bins} equal-width bins)", "Kumar 2019; Phan 2025",
                "root-mean-square gap between accuracy and confidence over bins: large gaps weigh more than in ECE",
                rms_calibration_error, form="loop", binned=True,
                aka="RMS CE, l2 calibration error; rms_calibration_error(conf, correct)",
                not_mergeable="mergeable in principle (per-bin counts and sums of the equal-width bins), but no "
                              "streaming form is written yet"))
register(Metric("selective_cov_acc_area", "area under the coverage-accuracy curve", "Liang 2023",
                "mean accuracy of the k most confident predictions over k = 1..N (HELM's selective_cov_acc_area)",
                coverage_accuracy_area, form="loop", higher_is_better=True,
                aka="HELM selective_cov_acc_area; coverage_accuracy_area(conf, correct)",
                not_mergeable="needs every row ranked by confidence; calibnb.dask has no sorted version of it"))
register(Metric("selective_acc_10", "accuracy on the 10% most confident", "Liang 2023",
                "accuracy of the ceil(N/10) most confident predictions (HELM's selective_acc@10 keeps int(N/10) + 1: "
                "selective_accuracy(..., rounding='helm'))",
                selective_accuracy, form="loop", higher_is_better=True,
                aka="HELM selective_acc@10 (with rounding='helm'); selective_accuracy(conf, correct)",
                not_mergeable="needs the most confident rows of the whole file (a ranking); calibnb.dask has no "
                              "sorted version of it"))
