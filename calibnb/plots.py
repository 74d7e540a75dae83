"""The figures of the five papers, each in two parts: pure data, then drawing.

Every figure has a pure ``*_data`` function that computes what is plotted and
returns a small frozen dataclass, and a ``plot_*(data, *, ax=None, ...)``
function that only draws it on ``ax`` (a new figure when ``ax`` is None) and
returns the :class:`matplotlib.axes.Axes`. The drawing functions label both
axes, add a legend when there are several series, never call ``plt.show`` or
``savefig`` and never change matplotlib's global style. matplotlib is imported
inside the drawing functions, so ``import calibnb`` stays light.

Figures covered:

* risk-coverage (selective accuracy) curves of language-model confidences,
  with the best curve the same answers allow: :func:`risk_coverage_data`,
  :func:`plot_risk_coverage`;
* reliability diagram with per-bin counts, in the classic form (accuracy bars,
  gap to mean confidence) or Si et al. 2022 Figure 1 form (each bucket's share
  of predictions split into correct and wrong, with the accuracy line):
  :func:`reliability_diagram_data`, :func:`plot_reliability_diagram`;
* KS calibration graphs of Gupta et al. 2021 Figure 1 a-d:
  :func:`ks_graph_data`, :func:`plot_ks_graph`;
* overlaid histograms of instance-level values (Baan et al. 2022 Figures 1-2:
  DistCE, EntCE) and of per-class or k-th-guess probabilities (Baan Appendix B):
  :func:`histogram_data`, :func:`probability_histograms`,
  :func:`plot_histograms`;
* CORP reliability diagram (Dimitriadis, Gneiting & Jordan 2021, Figure 1):
  the PAV curve, its consistency band and the Brier decomposition:
  :func:`corp_reliability_data`, :func:`plot_corp_reliability`.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .validation import (
    check_1d_finite,
    check_bool,
    check_choice,
    check_conf_correct,
    check_n_bins,
    check_positive_int,
    check_probs,
    check_sample_weight,
    check_scalar_in_range,
)

__all__ = [
    "RiskCoverageData",
    "risk_coverage_data",
    "plot_risk_coverage",
    "ReliabilityDiagramData",
    "reliability_diagram_data",
    "plot_reliability_diagram",
    "KSGraphData",
    "ks_graph_data",
    "plot_ks_graph",
    "HistogramData",
    "histogram_data",
    "probability_histograms",
    "plot_histograms",
    "confidence_by_correctness_data",
    "plot_confidence_by_correctness",
    "distributions_data",
    "plot_distributions",
    "CORPDiagramData",
    "corp_reliability_data",
    "plot_corp_reliability",
]

# Si et al. 2022 Figure 1 colours: correct predictions green, wrong ones blue.
_CORRECT_COLOR = "tab:green"
_WRONG_COLOR = "tab:blue"


def _new_axes(ax: Any) -> Any:
    """Return ``ax``, or the Axes of a new figure when ``ax`` is None."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    return ax


# --------------------------------------------------------------------------
# Reliability diagram
# --------------------------------------------------------------------------


#: Narrowest bar of a reliability diagram (x units): a bin of tied confidences is drawn this wide.
_MIN_BAR_WIDTH = 0.02


@dataclass(frozen=True)
class ReliabilityDiagramData:
    """What a reliability diagram shows.

    Attributes
    ----------
    table : pandas.DataFrame
        :func:`calibnb.reliability_table` (non-empty bins only: ``bin, lower,
        upper, count, n_correct, mean_conf, accuracy, gap``) plus ``n_wrong``,
        ``frac_correct`` and ``frac_wrong`` (``n_correct / N`` and
        ``n_wrong / N``: the green and blue bars of Si 2022 Figure 1), and
        ``bar_left``, ``bar_right``: the x-extent of the bin's bar, its true
        extent (the bin edges for equal-width bins; for equal-mass bins their
        smallest and largest confidence, ``lower`` and ``upper``: a bin is
        never drawn wider than the confidences it holds, so a bin of 0.8-0.9
        is not shown from 0 and a reader sees where its predictions lie).
    n : int
        Number of predictions N.
    n_bins : int
        Number of bins requested (empty bins are not in ``table``).
    binning : str
        ``"width"`` or ``"mass"``.
    ece, mce : float
        :func:`calibnb.ece` and :func:`calibnb.mce` for the same bins.
    interval : str or None
        Per-bin interval of the accuracy (``acc_low``, ``acc_high`` columns).
    level : float
        Its confidence level.
    min_count : int
        Bins with fewer items are marked sparse (``sparse`` column).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Figure 1.
    """

    table: pd.DataFrame
    n: int
    n_bins: int
    binning: str
    ece: float
    mce: float
    interval: str | None = None
    level: float = 0.95
    min_count: int = 0


def reliability_diagram_data(
    conf: Any, correct: Any, *, n_bins: int = 10, binning: str = "width", interval: str | None = "wilson",
    level: float = 0.95, min_count: int = 10,
) -> ReliabilityDiagramData:
    r"""Per-bin accuracy, mean confidence and correct/wrong counts for a reliability diagram.

    For each non-empty bin :math:`B_m` (bins as in :func:`calibnb.reliability_table`)

    .. math::

        \mathrm{acc}(B_m) = \frac{1}{|B_m|}\sum_{i \in B_m} y_i, \qquad
        \mathrm{conf}(B_m) = \frac{1}{|B_m|}\sum_{i \in B_m} c_i, \qquad
        \mathrm{frac\_correct}_m = \frac{1}{N}\sum_{i \in B_m} y_i, \qquad
        \mathrm{frac\_wrong}_m = \frac{1}{N}\sum_{i \in B_m} (1 - y_i),

    with confidences :math:`c_i`, correctness :math:`y_i \in \{0, 1\}` and N
    predictions. The last two are the stacked bars of Si et al. 2022,
    Figure 1 (relative bucket sizes, correct in green and wrong in blue).

    Parameters
    ----------
    conf : array-like of shape (N,)
        Confidences in [0, 1].
    correct : array-like of shape (N,)
        1 (or True) where the prediction is correct.
    n_bins : int, default 10
        Number of bins.
    binning : {"width", "mass"}, default "width"
        Equal-width bins on [0, 1] or equal-mass bins.
    interval : {"wilson", "clopper-pearson"} or None, default "wilson"
        Binomial interval of each bin's accuracy (:func:`calibnb.reliability_table`),
        drawn as error bars by :func:`plot_reliability_diagram`.
    level : float in (0, 1), default 0.95
    min_count : int >= 0, default 10
        Bins with fewer predictions are marked sparse (too few to read their accuracy).

    Returns
    -------
    ReliabilityDiagramData

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Figure 1.

    Examples
    --------
    >>> d = reliability_diagram_data([0.1, 0.3, 0.8, 0.9], [0, 1, 1, 0], n_bins=2)
    >>> d.table[["count", "n_correct", "n_wrong", "accuracy"]].to_numpy().tolist()
    [[2.0, 1.0, 1.0, 0.5], [2.0, 1.0, 1.0, 0.5]]
    >>> round(d.ece, 3)
    0.325
    """
    from . import metrics

    c, y = check_conf_correct(conf, correct)
    n_bins = check_n_bins(n_bins)
    binning = check_choice(binning, ("width", "mass"), "binning")
    min_count = check_positive_int(min_count, "min_count", minimum=0)
    table = metrics.reliability_table(c, y, n_bins=n_bins, binning=binning, interval=interval,
                                      level=level).reset_index(drop=True)
    n = int(c.shape[0])
    # Each bin at its true extent: equal-width bins at their edges, equal-mass bins from their smallest to
    # their largest confidence (not stretched to fill [0, 1], which moved a bin of 0.8-0.9 to start at 0).
    bar_left, bar_right = table["lower"].to_numpy(float), table["upper"].to_numpy(float)
    table = table.assign(
        n_wrong=table["count"] - table["n_correct"],
        frac_correct=table["n_correct"] / n,
        frac_wrong=(table["count"] - table["n_correct"]) / n,
        bar_left=bar_left,
        bar_right=bar_right,
        sparse=table["count"].to_numpy() < min_count,
    )
    return ReliabilityDiagramData(
        table=table,
        n=n,
        n_bins=n_bins,
        binning=binning,
        ece=float(metrics.ece(c, y, n_bins=n_bins, binning=binning)),
        mce=float(metrics.mce(c, y, n_bins=n_bins, binning=binning)),
        interval=interval,
        level=float(level),
        min_count=min_count,
    )


def plot_reliability_diagram(
    data: ReliabilityDiagramData,
    *,
    ax: Any = None,
    style: str = "classic",
    show_counts: bool = True,
    show_ece: bool = True,
    show_intervals: bool = True,
) -> Any:
    """Draw a reliability diagram from :func:`reliability_diagram_data`.

    ``style="classic"``: one bar per bin (``bar_left`` to ``bar_right``, its true extent;
    a bin narrower than 0.02, e.g. one run of tied confidences,
    is drawn that wide centred on its values so that it stays visible) with height the
    bin's accuracy, a hatched bar from accuracy up (or down) to the bin's mean
    confidence (the gap), and the diagonal of perfect calibration.
    ``style="si"``: Si et al. 2022 Figure 1: each bin's share of all
    predictions as stacked bars, correct (green) below wrong (blue), with the
    bin accuracy as a dashed line at the bin's mean confidence, and the diagonal.

    Parameters
    ----------
    data : ReliabilityDiagramData
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.
    style : {"classic", "si"}, default "classic"
    show_counts : bool, default True
        Write each bin's number of predictions above its bar.
    show_ece : bool, default True
        Give ECE and MCE as the legend's title.
    show_intervals : bool, default True
        Draw each bin's accuracy interval (``acc_low`` to ``acc_high``, when the
        data have one) as an error bar at the bin's mean confidence (where
        its accuracy belongs against the diagonal). Sparse bins (fewer than ``min_count``
        predictions) are outlined in orange, their counts in orange italics.

    Returns
    -------
    matplotlib.axes.Axes
        Artists carry a ``gid``: bars ``"accuracy"``, ``"gap"``, ``"correct"``,
        ``"wrong"``, ``"sparse"``; lines ``"accuracy"``, ``"diagonal"``; error bars
        ``"interval"``; count texts ``"count"``.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Figure 1.
    """
    if not isinstance(data, ReliabilityDiagramData):
        raise TypeError(f"data must be a ReliabilityDiagramData (from reliability_diagram_data); got {type(data).__name__}.")
    style = check_choice(style, ("classic", "si"), "style")
    show_counts = check_bool(show_counts, "show_counts")
    show_ece = check_bool(show_ece, "show_ece")
    show_intervals = check_bool(show_intervals, "show_intervals")
    ax = _new_axes(ax)
    t = data.table
    left, right = t["bar_left"].to_numpy(float), t["bar_right"].to_numpy(float)
    width = right - left
    narrow = width < _MIN_BAR_WIDTH  # a run of ties (or a few close values): a visible bar centred on them
    left = np.where(narrow, np.clip((left + right - _MIN_BAR_WIDTH) / 2, 0.0, 1.0 - _MIN_BAR_WIDTH), left)
    width = np.where(narrow, _MIN_BAR_WIDTH, width)
    acc = t["accuracy"].to_numpy(float)
    mean_conf = t["mean_conf"].to_numpy(float)

    ax.plot([0, 1], [0, 1], color="0.5", linestyle=":", label="perfect calibration", gid="diagonal")
    if style == "classic":
        ax.bar(left, acc, width=width, align="edge", color="tab:blue", edgecolor="black",
               label="accuracy", gid="accuracy")
        ax.bar(left, mean_conf - acc, bottom=acc, width=width, align="edge", color="tab:red", alpha=0.3,
               edgecolor="tab:red", hatch="//", label="gap to mean confidence", gid="gap")
        tops = np.maximum(acc, mean_conf)
        ax.set_ylabel("accuracy")
    else:
        ax.bar(left, t["frac_correct"].to_numpy(float), width=width, align="edge", color=_CORRECT_COLOR,
               edgecolor="black", label="correct (share of all predictions)", gid="correct")
        ax.bar(left, t["frac_wrong"].to_numpy(float), bottom=t["frac_correct"].to_numpy(float), width=width,
               align="edge", color=_WRONG_COLOR, edgecolor="black", label="wrong (share of all predictions)",
               gid="wrong")
        ax.plot(mean_conf, acc, linestyle="--", marker="o", color="black", label="accuracy", gid="accuracy")
        tops = t["count"].to_numpy(float) / data.n
        ax.set_ylabel("accuracy / share of predictions")
    sparse = t["sparse"].to_numpy(bool) if "sparse" in t else np.zeros(len(t), bool)
    if show_intervals and "acc_low" in t:
        x = mean_conf  # the interval belongs to the bin's mean confidence, not to its bar's middle
        yerr = np.vstack([acc - t["acc_low"].to_numpy(float), t["acc_high"].to_numpy(float) - acc])
        bars = ax.errorbar(x, acc, yerr=np.maximum(yerr, 0.0), fmt="none", ecolor="black", elinewidth=1, capsize=3,
                           label=f"{data.level:.0%} {data.interval} interval", gid="interval")
        for artist in bars.get_children():
            artist.set_gid("interval")
        tops = np.maximum(tops, t["acc_high"].to_numpy(float))
    if sparse.any():
        ax.bar(left[sparse], np.maximum(acc, mean_conf)[sparse], width=width[sparse], align="edge", fill=False,
               edgecolor="tab:orange", linewidth=2, label=f"sparse bin (< {data.min_count} predictions)", gid="sparse")
    if show_counts:
        for x, top, count, thin in zip(left + width / 2, tops, t["count"].to_numpy(), sparse):
            ax.text(x, top + 0.01, f"{int(count)}", ha="center", va="bottom", fontsize="small", gid="count",
                    color="tab:orange" if thin else "black", style="italic" if thin else "normal")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel(f"confidence ({data.n_bins} {'equal-width' if data.binning == 'width' else 'equal-mass'} bins)")
    title = f"ECE = {data.ece:.3f}, MCE = {data.mce:.3f}" if show_ece else None
    # Below the axes, never on the bars: the bins can fill any corner of the square.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize="small", title=title,
              title_fontsize="small", frameon=False)
    return ax


# --------------------------------------------------------------------------
# KS calibration graphs (Gupta et al. 2021, Figure 1)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class KSGraphData:
    """What the four KS calibration graphs of Gupta et al. 2021 Figure 1 show.

    Attributes
    ----------
    fractile : ndarray of shape (N,)
        i/N for i = 1..N.
    scores : ndarray of shape (N,)
        Confidences sorted ascending (stable).
    cum_score, cum_accuracy : ndarray of shape (N,)
        :math:`\\tilde h_i` and :math:`h_i` (Gupta Eq. 11).
    score, probability : ndarray of shape (N,)
        Slopes of ``cum_score`` and ``cum_accuracy`` against the fractile, each
        a centred difference over ``window_size`` points: the non-cumulative
        score and the estimate of P(correct | score = s(t)) (Gupta Prop. 4.1).
    ks : float
        KS error, max_i |h_i - h̃_i| (Gupta Eq. 12).
    ks_index : int
        First index where the maximum is reached.
    window_size : int
        Points in each centred difference.

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Figure 1, Eq. 11, Eq. 12.
    """

    fractile: np.ndarray
    scores: np.ndarray
    cum_score: np.ndarray
    cum_accuracy: np.ndarray
    score: np.ndarray
    probability: np.ndarray
    ks: float
    ks_index: int
    window_size: int


def _window_slope(values: np.ndarray, w: int) -> np.ndarray:
    """Mean of ``values`` over a centred window of ``w`` points (one-sided at the ends).

    This is the slope of the cumulative sum of ``values``/N against i/N over the
    window, i.e. a smoothed difference; vectorised through one cumulative sum.
    """
    n = values.shape[0]
    w = min(w, n)
    c = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
    lo = np.clip(np.arange(n) - w // 2, 0, n - w)
    return (c[lo + w] - c[lo]) / w


def ks_graph_data(conf: Any, correct: Any, *, window: float = 0.1) -> KSGraphData:
    r"""Curves of the KS calibration graphs (Gupta et al. 2021, Figure 1 a-d).

    With confidences sorted ascending (stable), :math:`s_1 \le \dots \le s_N`
    and correctness :math:`y_i` in that order (Gupta Eq. 11),

    .. math::

        h_i = \frac{1}{N}\sum_{j \le i} y_j, \qquad
        \tilde h_i = \frac{1}{N}\sum_{j \le i} s_j, \qquad
        \mathrm{KS} = \max_i |h_i - \tilde h_i| \quad \text{(Eq. 12)}.

    The non-cumulative curves of panels c and d are the slopes of
    :math:`\tilde h` and :math:`h` against the fractile :math:`t = i/N`; by
    Gupta's Proposition 4.1 the slope of :math:`h` estimates
    :math:`P(\text{correct} \mid \text{score} = s(t))`. They are estimated by
    a centred difference over :math:`w = \max(1, \mathrm{round}(\text{window}\cdot N))`
    points,

    .. math::

        \hat h'(t_i) = \frac{h_{l+w} - h_{l}}{w / N} = \frac{1}{w}\sum_{j=l+1}^{l+w} y_j,
        \qquad l = \min(\max(i - \lfloor w/2 \rfloor - 1, 0), N - w),

    and likewise for the score (Gupta fit a spline instead; see
    :class:`calibnb.SplineCalibrator`).

    Parameters
    ----------
    conf : array-like of shape (N,)
        Confidences (scores) in [0, 1].
    correct : array-like of shape (N,)
        1 (or True) where the prediction is correct.
    window : float in (0, 1], default 0.1
        Fraction of the N points in each centred difference.

    Returns
    -------
    KSGraphData

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Figure 1, Eq. 11, Proposition 4.1.

    Examples
    --------
    >>> d = ks_graph_data([0.9, 0.6, 0.8, 0.7], [1, 0, 1, 1], window=0.5)
    >>> d.scores.tolist(), d.cum_accuracy.tolist()
    ([0.6, 0.7, 0.8, 0.9], [0.0, 0.25, 0.5, 0.75])
    >>> round(d.ks, 3), d.ks_index
    (0.15, 0)
    >>> d.probability.tolist()
    [0.5, 0.5, 1.0, 1.0]
    """
    from . import metrics

    c, y = check_conf_correct(conf, correct)
    window = check_scalar_in_range(window, "window", low=0.0, high=1.0, low_inclusive=False)
    curves = metrics.ks_curves(c, y)
    scores = np.asarray(curves.scores, dtype=np.float64)
    ordered_correct = np.asarray(curves.correct, dtype=np.float64)
    n = scores.shape[0]
    w = max(1, int(round(window * n)))
    gap = np.abs(np.asarray(curves.gap, dtype=np.float64))
    k = int(np.argmax(gap))
    return KSGraphData(
        fractile=np.asarray(curves.fractile, dtype=np.float64),
        scores=scores,
        cum_score=np.asarray(curves.cum_score, dtype=np.float64),
        cum_accuracy=np.asarray(curves.cum_accuracy, dtype=np.float64),
        score=_window_slope(scores, w),
        probability=_window_slope(ordered_correct, w),
        ks=float(gap[k]),
        ks_index=k,
        window_size=min(w, n),
    )


_KS_PANELS = {
    # panel: (x field, (y fields), x label, y label)
    "a": ("fractile", ("cum_score", "cum_accuracy"), "fractile", "cumulative score / accuracy"),
    "b": ("cum_score", ("cum_score", "cum_accuracy"), "cumulative score", "cumulative score / accuracy"),
    "c": ("fractile", ("score", "probability"), "fractile", "score / probability"),
    "d": ("score", ("score", "probability"), "score", "probability"),
}
_KS_LABELS = {
    "cum_score": "cumulative score",
    "cum_accuracy": "cumulative accuracy",
    "score": "score",
    "probability": "probability (smoothed)",
}


def plot_ks_graph(data: KSGraphData, *, panel: str = "a", ax: Any = None) -> Any:
    """Draw one panel of Gupta et al. 2021 Figure 1 from :func:`ks_graph_data`.

    Panels: ``"a"`` cumulative score and cumulative accuracy against the
    fractile, with the KS error marked where the two are furthest apart;
    ``"b"`` the same against the cumulative score (the score curve becomes the
    diagonal); ``"c"`` the (smoothed) non-cumulative score and probability
    against the fractile; ``"d"`` the same against the score (the score curve
    becomes the diagonal, the probability curve is the calibration curve).
    Score is drawn in blue and probability/accuracy in orange, as in the paper.

    Parameters
    ----------
    data : KSGraphData
    panel : {"a", "b", "c", "d"}, default "a"
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.

    Returns
    -------
    matplotlib.axes.Axes
        Lines carry the ``gid`` of the :class:`KSGraphData` field they plot
        (``"cum_score"``, ``"cum_accuracy"``, ``"score"``, ``"probability"``);
        the KS marker of panels a and b has ``gid="ks"``.

    References
    ----------
    .. [1] Kartik Gupta, Amir Rahimi, Thalaiyasingam Ajanthan, Thomas Mensink, Cristian Sminchisescu, Richard Hartley. 2021. "Calibration of Neural Networks using Splines". In International Conference on Learning Representations (ICLR). Figure 1.
    """
    if not isinstance(data, KSGraphData):
        raise TypeError(f"data must be a KSGraphData (from ks_graph_data); got {type(data).__name__}.")
    panel = check_choice(panel, tuple(_KS_PANELS), "panel")
    ax = _new_axes(ax)
    x_field, y_fields, x_label, y_label = _KS_PANELS[panel]
    x = getattr(data, x_field)
    for field, color in zip(y_fields, ("tab:blue", "tab:orange")):
        ax.plot(x, getattr(data, field), color=color, label=_KS_LABELS[field], gid=field)
    if panel in ("a", "b"):
        k = data.ks_index
        ax.plot([x[k], x[k]], [data.cum_score[k], data.cum_accuracy[k]], color="black", linestyle="--",
                marker="_", label=f"KS error = {100 * data.ks:.2f}%", gid="ks")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.legend(loc="upper left", fontsize="small")
    return ax


# --------------------------------------------------------------------------
# Risk-coverage curve (selective prediction; Geifman & El-Yaniv 2017, HELM)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class RiskCoverageData:
    """What :func:`plot_risk_coverage` draws.

    Attributes
    ----------
    coverage, selective_accuracy : ndarray (N,)
        :func:`calibnb.risk_coverage_curve` of the confidences.
    oracle_accuracy : ndarray (N,)
        The curve of a confidence that ranks every right answer first: the
        best any confidence can do with these answers.
    accuracy : float
        Overall accuracy (the curve's value at coverage 1).
    area, oracle_area : float
        :func:`calibnb.coverage_accuracy_area` of the curve and of the oracle.
    label : str or None
    """

    coverage: np.ndarray
    selective_accuracy: np.ndarray
    oracle_accuracy: np.ndarray
    accuracy: float
    area: float
    oracle_area: float
    label: str | None = None


def risk_coverage_data(conf: Any, correct: Any, *, ties: str = "average", label: str | None = None
                       ) -> RiskCoverageData:
    """Risk-coverage curve of ``conf`` with the oracle curve of the same answers.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    ties : {"average", "order"}, default "average"
        See :func:`calibnb.risk_coverage_curve`.
    label : str, optional
        Legend entry.

    Returns
    -------
    RiskCoverageData

    Examples
    --------
    >>> d = risk_coverage_data([0.9, 0.6, 0.8, 0.2], [1, 1, 0, 0])
    >>> d.selective_accuracy.tolist(), d.oracle_accuracy.tolist()
    ([1.0, 0.5, 0.6666666666666666, 0.5], [1.0, 1.0, 0.6666666666666666, 0.5])
    """
    from .metrics.selective import risk_coverage_curve

    conf, correct = check_conf_correct(conf, correct)
    if label is not None and not isinstance(label, str):
        raise TypeError(f"label must be a str or None; got {type(label).__name__}.")
    curve = risk_coverage_curve(conf, correct, ties=ties)
    k = np.arange(1, conf.shape[0] + 1)
    n_right = int(correct.sum())
    oracle = np.minimum(k, n_right) / k
    return RiskCoverageData(coverage=curve.coverage, selective_accuracy=curve.selective_accuracy,
                            oracle_accuracy=oracle, accuracy=float(correct.mean()),
                            area=float(curve.selective_accuracy.mean()), oracle_area=float(oracle.mean()),
                            label=label)


def plot_risk_coverage(data: RiskCoverageData, *, ax: Any = None, risk: bool = False, oracle: bool = True,
                       color: Any = None) -> Any:
    """Draw a risk-coverage curve from :func:`risk_coverage_data`.

    Selective accuracy (or risk, ``risk=True``) against coverage, with the
    overall accuracy as a dotted line and, when ``oracle``, the best curve the
    same answers allow (dashed, grey). Call it again on the same ``ax`` to
    compare confidence sources; the legend gives each curve's area.

    Parameters
    ----------
    data : RiskCoverageData
    ax : matplotlib.axes.Axes, optional
    risk : bool, default False
    oracle : bool, default True
    color : matplotlib colour, optional

    Returns
    -------
    matplotlib.axes.Axes
        The curve has ``gid="curve"``, the oracle ``gid="oracle"``, the
        overall accuracy ``gid="accuracy"``.
    """
    if not isinstance(data, RiskCoverageData):
        raise TypeError(f"data must be a RiskCoverageData (from risk_coverage_data); got {type(data).__name__}.")
    risk = check_bool(risk, "risk")
    oracle = check_bool(oracle, "oracle")
    ax = _new_axes(ax)

    def tr(y):
        return 1.0 - np.asarray(y) if risk else y

    name = data.label if data.label is not None else "confidence"
    what = "risk" if risk else "accuracy"
    ax.plot(data.coverage, tr(data.selective_accuracy), color=color, gid="curve",
            label=f"{name} (area under accuracy {data.area:.3f})")
    if oracle:
        ax.plot(data.coverage, tr(data.oracle_accuracy), color="grey", linestyle="--", gid="oracle",
                label=f"oracle ranking (area {data.oracle_area:.3f})")
    ax.axhline(tr(data.accuracy), color="grey", linestyle=":", linewidth=1, gid="accuracy")
    ax.set_xlim(0, 1)
    ax.set_xlabel("coverage (share of answers kept, most confident first)")
    ax.set_ylabel(f"selective {what}")
    ax.legend(fontsize="small")
    return ax


# --------------------------------------------------------------------------
# Confidence by correctness (seaborn; each outcome normalised on its own)
# --------------------------------------------------------------------------

_OUTCOMES = ("correct", "wrong")


def confidence_by_correctness_data(conf: Any, correct: Any, *, sample_weight: Any = None) -> pd.DataFrame:
    """The confidences of correct and of wrong predictions, as a tidy table for a distribution figure.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        Top-1 confidence in [0, 1] and 0/1 correctness.
    sample_weight : array-like of shape (N,), optional
        Non-negative weights (default 1 each).

    Returns
    -------
    pandas.DataFrame
        Columns ``confidence``, ``outcome`` ("correct" or "wrong", a categorical with both
        categories) and ``weight``; one row per prediction, in input order.

    Examples
    --------
    >>> d = confidence_by_correctness_data([0.9, 0.6, 0.8], [1, 0, 1])
    >>> d["outcome"].tolist(), d["weight"].tolist()
    (['correct', 'wrong', 'correct'], [1.0, 1.0, 1.0])
    """
    c, y = check_conf_correct(conf, correct)
    w = np.ones(c.shape[0]) if sample_weight is None else check_sample_weight(sample_weight, c.shape)
    if w.shape != c.shape:
        raise ValueError(f"sample_weight must have shape {c.shape} (one weight per prediction); got {w.shape}.")
    outcome = pd.Categorical(np.where(y.astype(bool), _OUTCOMES[0], _OUTCOMES[1]), categories=list(_OUTCOMES))
    return pd.DataFrame({"confidence": c, "outcome": outcome, "weight": np.asarray(w, dtype=np.float64)})


def plot_confidence_by_correctness(data: pd.DataFrame, *, kind: str = "hist", bins: int = 20, ax: Any = None) -> Any:
    """Distribution of the confidence of correct and of wrong predictions, each normalised on its own.

    Drawn with seaborn (``histplot`` with ``stat="density"`` and
    ``common_norm=False``, or ``ecdfplot``) on the given ``ax``, without
    changing any global style: each outcome's curve has area (or final value)
    1 however few predictions it holds, so 23 wrong predictions stay visible
    beside 570 correct ones (a shared normalisation would flatten them).
    Colours as in Si et al. (2022, Figure 1): correct green, wrong blue.

    Parameters
    ----------
    data : pandas.DataFrame
        From :func:`confidence_by_correctness_data`.
    kind : {"hist", "ecdf"}, default "hist"
    bins : int >= 1, default 20
        Equal-width bins over [0, 1] (``kind="hist"``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. Figure 1.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> d = confidence_by_correctness_data([0.9, 0.6, 0.8, 0.95], [1, 0, 1, 1])
    >>> plot_confidence_by_correctness(d, kind="ecdf").get_xlabel()
    'confidence'
    """
    if not isinstance(data, pd.DataFrame) or not {"confidence", "outcome", "weight"} <= set(data.columns):
        raise TypeError("data must be the DataFrame of confidence_by_correctness_data (columns confidence, outcome, "
                        f"weight); got {type(data).__name__}.")
    kind = check_choice(kind, ("hist", "ecdf"), "kind")
    bins = check_n_bins(bins, "bins")
    import seaborn as sns

    ax = _new_axes(ax)
    present = [o for o in _OUTCOMES if (data["outcome"] == o).any()]
    palette = {_OUTCOMES[0]: _CORRECT_COLOR, _OUTCOMES[1]: _WRONG_COLOR}
    common = dict(data=data, x="confidence", hue="outcome", weights="weight", hue_order=present, palette=palette, ax=ax)
    if kind == "hist":
        sns.histplot(stat="density", common_norm=False, bins=bins, binrange=(0.0, 1.0), element="step",
                     **common)
        ax.set_ylabel("density (each outcome on its own)")
    else:
        sns.ecdfplot(**common)
        ax.set_ylabel("share of the outcome's predictions")
    ax.set_xlabel("confidence")
    ax.set_xlim(0.0, 1.0)
    return ax


def distributions_data(values_by_name: Any) -> pd.DataFrame:
    """Instance-level values of several classifiers (or annotator groups), as a tidy table for one figure.

    Parameters
    ----------
    values_by_name : mapping of str to array-like of shape (n_i,)
        One finite 1-D array per series, e.g. the per-item DistCE of
        sub-sampled humans and of a model (Baan et al. 2022, Figure 2). The
        series may have different lengths.

    Returns
    -------
    pandas.DataFrame
        Columns ``value`` and ``series`` (a categorical in the mapping's order);
        one row per value.

    Examples
    --------
    >>> d = distributions_data({"H1": [0.1, 0.3], "model": [0.5]})
    >>> d["series"].tolist(), d["value"].tolist()
    (['H1', 'H1', 'model'], [0.1, 0.3, 0.5])
    """
    if not isinstance(values_by_name, Mapping) or not values_by_name:
        raise TypeError("values_by_name must be a non-empty mapping of series name to values; "
                        f"got {type(values_by_name).__name__}.")
    names, parts = [], []
    for name, values in values_by_name.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"values_by_name must have non-empty string keys; got {name!r}.")
        v = check_1d_finite(values, f"values_by_name[{name!r}]")  # also refuses an empty series
        names.append(name)
        parts.append(v)
    series = pd.Categorical(np.repeat(names, [len(v) for v in parts]), categories=names)
    return pd.DataFrame({"value": np.concatenate(parts), "series": series})


def plot_distributions(data: pd.DataFrame, *, kind: str = "ecdf", xlabel: str = "value", ax: Any = None) -> Any:
    """Several distributions on one axis, each normalised on its own: ECDFs or KDEs (seaborn).

    Overlapping histograms of several series hide each other and depend on
    the bins; an empirical CDF (``seaborn.ecdfplot``) shows every series
    whole, without bins, each rising to 1; ``kind="kde"`` draws kernel
    density estimates (``seaborn.kdeplot`` with ``common_norm=False``, cut
    at the data's range). Drawn on the given ``ax``; no global style is
    changed.

    Parameters
    ----------
    data : pandas.DataFrame
        From :func:`distributions_data`.
    kind : {"ecdf", "kde"}, default "ecdf"
    xlabel : str, default "value"
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernandez. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of EMNLP 2022. Figure 2.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> d = distributions_data({"H1": [0.1, 0.3, 0.2], "model": [0.5, 0.4]})
    >>> plot_distributions(d, xlabel="DistCE").get_ylabel()
    'share of the series at or below x'
    """
    if not isinstance(data, pd.DataFrame) or not {"value", "series"} <= set(data.columns):
        raise TypeError("data must be the DataFrame of distributions_data (columns value, series); "
                        f"got {type(data).__name__}.")
    kind = check_choice(kind, ("ecdf", "kde"), "kind")
    if not isinstance(xlabel, str):
        raise TypeError(f"xlabel must be a string; got {type(xlabel).__name__}.")
    import seaborn as sns

    ax = _new_axes(ax)
    order = [s for s in data["series"].cat.categories if (data["series"] == s).any()] \
        if isinstance(data["series"].dtype, pd.CategoricalDtype) else list(dict.fromkeys(data["series"]))
    common = dict(data=data, x="value", hue="series", hue_order=order, ax=ax)
    if kind == "ecdf":
        sns.ecdfplot(**common)
        ax.set_ylabel("share of the series at or below x")
    else:
        sns.kdeplot(common_norm=False, cut=0, **common)
        ax.set_ylabel("density (each series on its own)")
    ax.set_xlabel(xlabel)
    return ax


# --------------------------------------------------------------------------
# Histograms (Baan et al. 2022, Figures 1-2 and Appendix B)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class HistogramData:
    """A histogram of instance-level values.

    Attributes
    ----------
    edges : ndarray of shape (bins + 1,)
    counts : ndarray of shape (bins,), int
        Values in each bin (the last bin is closed, as in ``numpy.histogram``).
    fraction : ndarray of shape (bins,)
        ``counts / n``: the share of *all* n values in each bin.
    n : int
        Number of values, including any outside the range.
    n_outside : int
        Values outside ``[edges[0], edges[-1]]`` (counted in no bin).
    label : str or None
        Series name used by :func:`plot_histograms`.
    """

    edges: np.ndarray
    counts: np.ndarray
    fraction: np.ndarray
    n: int
    n_outside: int
    label: str | None = None


def histogram_data(values: Any, *, bins: int = 30, range: tuple[float, float] | None = (0.0, 1.0),
                   label: str | None = None) -> HistogramData:
    r"""Histogram of instance-level values such as DistCE or EntCE (Baan et al. 2022, Figs. 1-2).

    With edges :math:`e_0 < \dots < e_B` equally spaced over ``range``,

    .. math::

        \mathrm{count}_b = |\{i : e_b \le v_i < e_{b+1}\}| \ (\text{last bin closed}), \qquad
        \mathrm{fraction}_b = \mathrm{count}_b / n .

    Baan compare 30-bin DistCE histograms on [0, 1] (Table 2), the default
    here. Values outside ``range`` are counted in ``n_outside``, not dropped
    silently.

    Parameters
    ----------
    values : array-like of shape (n,)
        Finite values.
    bins : int, default 30
    range : (float, float) or None, default (0, 1)
        Histogram range; None uses the values' minimum and maximum.
    label : str, optional
        Series name for the legend.

    Returns
    -------
    HistogramData

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP).

    Examples
    --------
    >>> h = histogram_data([0.1, 0.2, 0.9, 1.0, 1.5], bins=2)
    >>> h.counts.tolist(), h.fraction.tolist(), h.n_outside
    ([2, 2], [0.4, 0.4], 1)
    """
    v = check_1d_finite(values, "values")
    bins = check_n_bins(bins, "bins")
    if range is None:
        lo, hi = float(v.min()), float(v.max())
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
    else:
        if not isinstance(range, (tuple, list)) or len(range) != 2:
            raise TypeError(f"range must be a (low, high) pair or None; got {range!r}.")
        lo = check_scalar_in_range(range[0], "range[0]")
        hi = check_scalar_in_range(range[1], "range[1]", low=lo, low_inclusive=False)
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    n = int(v.shape[0])
    return HistogramData(
        edges=edges,
        counts=counts.astype(np.int64),
        fraction=counts / n,
        n=n,
        n_outside=n - int(counts.sum()),
        label=label,
    )


def probability_histograms(probs: Any, *, by: str = "class", bins: int = 30,
                           label: str | None = None) -> list[HistogramData]:
    r"""One probability histogram per class, or per guess rank (Baan et al. 2022, Appendix B).

    ``by="class"``: histogram k holds :math:`p_{ik}` over instances i (the
    top row of Baan's Figures 4-5). ``by="guess"``: histogram k holds the k-th
    largest probability of each instance, :math:`p_{i(k)}` (the k-th guess;
    second row), whatever its class. Both use ``bins`` equal bins on [0, 1].
    Pass model probabilities and human distributions (see
    :func:`calibnb.human_distribution`) separately and overlay the results
    with :func:`plot_histograms`.

    Parameters
    ----------
    probs : array-like of shape (N, K)
        Rows sum to 1.
    by : {"class", "guess"}, default "class"
    bins : int, default 30
    label : str, optional
        Prefix of each series' label, e.g. "model" gives "model, class 0".

    Returns
    -------
    list of HistogramData
        K histograms, for class (or guess) 0, 1, ..., K-1.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Appendix B.

    Examples
    --------
    >>> hs = probability_histograms([[0.7, 0.3], [0.2, 0.8]], by="guess", bins=2)
    >>> [h.counts.tolist() for h in hs], hs[0].label
    ([[0, 2], [2, 0]], 'guess 1')
    """
    p = check_probs(probs)
    by = check_choice(by, ("class", "guess"), "by")
    if by == "guess":
        p = -np.sort(-p, axis=1)
        names = [f"guess {k + 1}" for k in np.arange(p.shape[1])]
    else:
        names = [f"class {k}" for k in np.arange(p.shape[1])]
    prefix = f"{label}, " if label else ""
    return [histogram_data(p[:, k], bins=bins, range=(0.0, 1.0), label=prefix + names[k])
            for k in np.arange(p.shape[1])]


def plot_histograms(datas: HistogramData | Sequence[HistogramData], *, ax: Any = None,
                    labels: Sequence[str] | None = None, stat: str = "fraction", alpha: float = 0.5,
                    xlabel: str = "value") -> Any:
    """Overlay one or several histograms sharing the same bins (Baan et al. 2022, Figure 2).

    Each series is drawn as a filled step outline (``Axes.stairs``), translucent
    so that overlaps stay visible.

    Parameters
    ----------
    datas : HistogramData or sequence of HistogramData
        All with identical ``edges``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.
    labels : sequence of str, optional
        Legend labels, one per series; by default each series' ``label``
        (or "series i").
    stat : {"fraction", "count"}, default "fraction"
        Plot the share of all values per bin or the raw count.
    alpha : float in [0, 1], default 0.5
    xlabel : str, default "value"
        The x-axis label, e.g. "DistCE".

    Returns
    -------
    matplotlib.axes.Axes
        One ``StepPatch`` per series, in order, with ``gid="histogram"``.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP). Figure 2.
    """
    if not isinstance(datas, (HistogramData, list, tuple)):
        raise TypeError(f"datas must be a HistogramData or a sequence of them; got {type(datas).__name__}.")
    series = [datas] if isinstance(datas, HistogramData) else list(datas)
    if not series:
        raise ValueError("datas is empty; at least one HistogramData is needed.")
    for i, d in enumerate(series):
        if not isinstance(d, HistogramData):
            raise TypeError(f"datas[{i}] must be a HistogramData (from histogram_data); got {type(d).__name__}.")
        if d.edges.shape != series[0].edges.shape or not np.allclose(d.edges, series[0].edges):
            raise ValueError(f"datas[{i}] has different bins from datas[0]; overlaid histograms must share bins and range.")
    if labels is not None:
        labels = list(labels)
        if len(labels) != len(series):
            raise ValueError(f"labels has {len(labels)} entries but datas has {len(series)}; they must match.")
    else:
        labels = [d.label if d.label is not None else f"series {i}" for i, d in enumerate(series)]
    stat = check_choice(stat, ("fraction", "count"), "stat")
    alpha = check_scalar_in_range(alpha, "alpha", low=0.0, high=1.0)
    ax = _new_axes(ax)
    for d, lab in zip(series, labels):
        ax.stairs(d.fraction if stat == "fraction" else d.counts, d.edges, fill=True, alpha=alpha,
                  label=lab, gid="histogram")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of instances" if stat == "fraction" else "number of instances")
    if len(series) > 1:
        ax.legend(fontsize="small")
    return ax


# --------------------------------------------------------------------------
# CORP reliability diagram (Dimitriadis, Gneiting & Jordan 2021)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CORPDiagramData:
    """What a CORP reliability diagram shows.

    Attributes
    ----------
    curve : calibnb.CORPReliability
        The PAV curve and its consistency band (:func:`calibnb.corp_reliability`).
    decomposition : calibnb.ScoreDecomposition
        The Brier score's MCB, DSC and UNC (:func:`calibnb.score_decomposition`,
        without intervals), printed in the diagram as in the paper's Figure 1.
    histogram : pandas.DataFrame
        ``lower, upper, count``: the confidences in ``bins`` equal-width bins
        of [0, 1] (weighted counts with ``sample_weight``), drawn as the
        inset histogram.
    """

    curve: Any
    decomposition: Any
    histogram: pd.DataFrame


def corp_reliability_data(conf: Any, correct: Any, *, sample_weight: Any = None, n_resamples: int = 1000,
                          level: float = 0.9, bins: int = 20, seed: Any = None) -> CORPDiagramData:
    r"""The data of a CORP reliability diagram: PAV curve, consistency band, Brier decomposition, histogram.

    The curve is :func:`calibnb.corp_reliability` (isotonic regression of
    outcomes on confidences, :math:`\widehat{\mathrm{CEP}}`, with its
    ``level`` consistency band) and the decomposition
    :math:`\bar S = \mathrm{MCB} - \mathrm{DSC} + \mathrm{UNC}` of the
    Brier score is :func:`calibnb.score_decomposition`.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        Binary or top-label confidences and 0/1 outcomes.
    sample_weight : array-like of shape (N,), optional
    n_resamples : int >= 0, default 1000
        Resamples of the consistency band (0: no band).
    level : float in (0, 1), default 0.9
    bins : int >= 1, default 20
        Bins of the confidence histogram.
    seed : None, int or numpy.random.Generator

    Returns
    -------
    CORPDiagramData

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
       diagrams for probabilistic classifiers", PNAS 118(8):e2016191118, 2021,
       Figure 1.

    Examples
    --------
    >>> d = corp_reliability_data([0.1, 0.3, 0.3, 0.6, 0.9], [0, 1, 0, 0, 1], n_resamples=0, bins=2)
    >>> d.curve.cep.round(3).tolist(), d.histogram["count"].tolist()
    ([0.0, 0.333, 0.333, 1.0], [3.0, 2.0])
    """
    from .corp import corp_reliability, score_decomposition

    bins = check_n_bins(bins, "bins")
    curve = corp_reliability(conf, correct, sample_weight=sample_weight, n_resamples=n_resamples, level=level,
                             seed=seed)
    dec = score_decomposition(conf, correct, sample_weight=sample_weight, n_resamples=0)
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.minimum(np.searchsorted(edges, curve.x, side="right") - 1, bins - 1)
    counts = np.bincount(idx, weights=curve.weight, minlength=bins)
    hist = pd.DataFrame({"lower": edges[:-1], "upper": edges[1:], "count": counts})
    return CORPDiagramData(curve=curve, decomposition=dec, histogram=hist)


def plot_corp_reliability(data: CORPDiagramData, *, ax: Any = None, show_band: bool = True,
                          show_histogram: bool = True, show_decomposition: bool = True) -> Any:
    """Draw a CORP reliability diagram from :func:`corp_reliability_data`.

    The PAV curve as a step line (the recalibrated probability against the
    confidence), the consistency band as a shaded region, the diagonal, an
    inset histogram of the confidences along the bottom, and the Brier score's
    MCB, DSC, UNC in the corner (as the paper's Figure 1).

    Parameters
    ----------
    data : CORPDiagramData
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure is made when None.
    show_band, show_histogram, show_decomposition : bool, default True

    Returns
    -------
    matplotlib.axes.Axes
        Artists carry a ``gid``: ``"cep"`` (the PAV curve), ``"band"``,
        ``"diagonal"``, ``"histogram"``, ``"decomposition"``.

    References
    ----------
    .. [1] T. Dimitriadis, T. Gneiting and A. I. Jordan, "Stable reliability
       diagrams for probabilistic classifiers", PNAS 118(8):e2016191118, 2021,
       Figure 1.
    """
    if not isinstance(data, CORPDiagramData):
        raise TypeError(f"data must be a CORPDiagramData (from corp_reliability_data); got {type(data).__name__}.")
    show_band = check_bool(show_band, "show_band")
    show_histogram = check_bool(show_histogram, "show_histogram")
    show_decomposition = check_bool(show_decomposition, "show_decomposition")
    ax = _new_axes(ax)
    c = data.curve
    ax.plot([0, 1], [0, 1], color="0.5", linestyle=":", label="perfect calibration", gid="diagonal")
    if show_histogram:
        h = data.histogram
        top = float(h["count"].max())
        if top > 0:
            ax.bar(h["lower"], 0.2 * h["count"] / top, width=h["upper"] - h["lower"], align="edge", color="0.8",
                   edgecolor="0.6", label="confidences (histogram)", gid="histogram")
    if show_band and c.n_resamples > 0:
        ax.fill_between(c.x, c.band_low, c.band_high, step="post", color="tab:orange", alpha=0.3,
                        label=f"{c.level:.0%} consistency band", gid="band")
    ax.step(c.x, c.cep, where="post", color="tab:red", linewidth=2, label="CEP (PAV-calibrated)", gid="cep")
    if show_decomposition:
        d = data.decomposition
        ax.text(0.03, 0.97, f"BS {d.score.estimate:.4f}\nMCB {d.mcb.estimate:.4f}\nDSC {d.dsc.estimate:.4f}\n"
                f"UNC {d.unc.estimate:.4f}", transform=ax.transAxes, ha="left", va="top", family="monospace",
                fontsize="small", gid="decomposition")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("conditional event probability")
    ax.legend(loc="lower right", fontsize="small")
    return ax
