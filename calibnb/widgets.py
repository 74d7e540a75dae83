"""Interactive panels for the notebooks: thin ipywidgets adapters around calibnb.plots.

Each factory returns a :class:`Panel`: the controls (sliders, toggles), a
plain-Python ``update(**values)`` callback that recomputes the metrics, redraws
the figure with the two-part functions of :mod:`calibnb.plots` and returns the
readout as a DataFrame, the matplotlib figure and axes, and ``widget``, the
assembled ipywidgets box (displaying the panel displays it). Each control is
wired to the callback with ``observe``, so setting a control's ``.value`` from
Python (as the tests do, without a browser) redraws exactly as dragging it
would.

* :func:`temperature_explorer`: a temperature slider -> reliability diagram and
  ECE / MacroCE / KS / HMR readout (Si et al. 2022 §3, Figure 5).
* :func:`binning_explorer`: number of bins and equal-width/equal-mass -> ECE,
  MCE and the reliability diagram (the binning problem of Si 2022 §2.1,
  Jiang et al. 2024 §1).
* :func:`perturbation_explorer`: move one instance's confidence -> every
  metric before and after, and whether it moved the way Sakai 2024's axioms
  (Section 5.1) allow.

ipywidgets and matplotlib are imported when a panel is built, not on import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from . import plots
from .validation import (
    check_choice,
    check_conf_correct,
    check_labels,
    check_logits,
    check_n_bins,
    check_positive_int,
    check_scalar_in_range,
)

__all__ = ["Panel", "build_panel", "temperature_slider", "temperature_explorer", "binning_explorer", "perturbation_explorer"]


@dataclass
class Panel:
    """An interactive panel: controls, a plain callback, the figure and the readout.

    Attributes
    ----------
    controls : dict of str -> ipywidgets.Widget
        The controls, keyed by the name of the ``update`` argument they set.
    update : callable
        ``update(**values) -> pandas.DataFrame``: recompute and redraw for the
        given values (missing ones are taken from the controls) and return the
        readout. Callable without a browser.
    figure : matplotlib.figure.Figure
    axes : list of matplotlib.axes.Axes
    output : ipywidgets.Output
        Where the figure and readout are shown when a control changes.
    widget : ipywidgets.Widget
        Controls above output; what ``display(panel)`` shows (with a static
        PNG and HTML snapshot as fallbacks for HTML reports).
    readout : pandas.DataFrame or None
        The last readout returned by ``update``.
    """

    controls: dict
    update: Callable[..., pd.DataFrame]
    figure: Any
    axes: list
    output: Any = None
    widget: Any = None
    readout: pd.DataFrame | None = field(default=None)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        """The live widget, plus a static snapshot for viewers without widget state.

        Jupyter shows the widget view; a viewer that cannot (an HTML report
        made with nbconvert from a papermill run, which saves no widget state)
        falls back to the current figure as PNG and the readout as a table.
        """
        import base64
        import io

        data = dict(self.widget._repr_mimebundle_())
        buf = io.BytesIO()
        self.figure.savefig(buf, format="png", bbox_inches="tight")
        png = base64.b64encode(buf.getvalue()).decode("ascii")
        table = self.readout.to_html() if self.readout is not None else ""
        data["image/png"] = png
        data["text/html"] = f'<img src="data:image/png;base64,{png}"/>{table}'
        return data


def build_panel(controls: dict, draw: Callable[..., pd.DataFrame], n_axes: int, figsize: tuple) -> Panel:
    """Wire ``controls`` to ``draw(axes, **values)``: each change redraws into the panel's output.

    The building block of every widget in calibnb (also used by
    :mod:`calibnb.papers.baan2022` and :mod:`calibnb.papers.si2022`): ``controls`` maps the
    keyword names of ``draw`` to ipywidgets controls, ``draw`` draws on the
    list of ``n_axes`` axes and returns the readout DataFrame.

    ``observe`` is used rather than ``interactive_output`` because the latter
    writes terminal escape codes to stdout when no IPython kernel is running.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython import get_ipython
    from IPython.display import clear_output, display

    fig, axes = plt.subplots(1, n_axes, figsize=figsize, squeeze=False)
    plt.close(fig)  # shown only through the panel's output, never by the inline backend at cell end
    panel = Panel(controls=controls, update=None, figure=fig, axes=list(axes[0]))

    def update(**values: Any) -> pd.DataFrame:
        unknown = sorted(set(values) - set(controls))
        if unknown:
            raise TypeError(f"update got unknown argument(s) {unknown}; expected some of {sorted(controls)}.")
        merged = {name: control.value for name, control in controls.items()}
        merged.update(values)
        for ax in panel.axes:
            ax.clear()
        panel.readout = draw(panel.axes, **merged)
        fig.tight_layout()
        return panel.readout

    def on_change(change: Any = None) -> None:
        values = {name: control.value for name, control in controls.items()}
        if get_ipython() is None:  # plain Python (tests, scripts): recompute and redraw, nowhere to show
            update(**values)
            return
        with panel.output:
            clear_output(wait=True)
            display(fig)
            display(update(**values))

    panel.update = update
    panel.output = w.Output()
    for control in controls.values():
        control.observe(on_change, names="value")
    on_change()
    panel.widget = w.VBox([w.HBox(list(controls.values())), panel.output])
    return panel


# --------------------------------------------------------------------------
# temperature explorer
# --------------------------------------------------------------------------


def _scaled_top1(scores: np.ndarray, tau: float) -> np.ndarray:
    r"""Top-1 confidence after temperature scaling, as :class:`calibnb.calibrators.TemperatureScaling` computes it.

    (N, K) logits: :math:`\max_k \mathrm{softmax}(z_i/\tau)_k` (with
    :func:`calibnb.calibrators.softmax`); 1-D confidences, the binary form:
    :math:`\sigma(\mathrm{logit}(c_i)/\tau)`.
    """
    if scores.ndim == 2:
        from .calibrators import softmax

        return softmax(scores, temperature=tau).max(axis=1)
    from scipy import special

    with np.errstate(divide="ignore"):
        return special.expit(special.logit(scores) / tau)


def _check_scores(scores: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """(N, K) logits with integer labels, or 1-D confidences with 0/1 correctness."""
    if np.ndim(scores) == 2:
        z = check_logits(scores)
        y = check_labels(labels, z.shape[0], z.shape[1])
        return z, z.argmax(axis=1) == y
    return check_conf_correct(scores, labels)


def temperature_slider(*, temperatures: Any = (0.1, 10.0)) -> Any:
    """A log-scale τ slider starting at τ = 1, for every temperature panel.

    ``temperatures`` is the ``(low, high)`` range, with ``0 < low <= 1 <= high``
    so that the slider can start at the uncalibrated τ = 1.
    """
    if not isinstance(temperatures, (tuple, list)) or len(temperatures) != 2:
        raise TypeError(f"temperatures must be a (low, high) pair; got {temperatures!r}.")
    lo = check_scalar_in_range(temperatures[0], "temperatures[0]", low=0.0, high=1.0, low_inclusive=False)
    hi = check_scalar_in_range(temperatures[1], "temperatures[1]", low=1.0)
    import ipywidgets as w

    return w.FloatLogSlider(value=1.0, base=10, min=np.log10(lo), max=np.log10(hi), step=0.01,
                            description="temperature τ", continuous_update=False, readout_format=".3g",
                            style={"description_width": "initial"})


def temperature_explorer(
    logits_or_conf: Any,
    labels_or_correct: Any,
    *,
    temperatures: tuple[float, float] = (0.1, 10.0),
    n_bins: int = 10,
    binning: str = "width",
    style: str = "si",
) -> Panel:
    r"""A temperature slider over a reliability diagram and an ECE / MacroCE / KS / HMR readout.

    For (N, K) logits :math:`z` the top-1 confidence at temperature :math:`\tau` is
    :math:`\max_k \mathrm{softmax}(z_i/\tau)_k` and correctness is
    :math:`\arg\max_k z_{ik} = y_i` (unchanged by :math:`\tau`); for 1-D
    confidences :math:`c` it is :math:`\sigma(\mathrm{logit}(c_i)/\tau)` against
    the given 0/1 correctness. This is Si et al. 2022's temperature scaling
    (§3.2) and their Figure 5 (ECE falls with :math:`\tau` while MacroCE does not).

    Parameters
    ----------
    logits_or_conf : array-like of shape (N, K) or (N,)
    labels_or_correct : array-like of shape (N,)
        Integer labels for logits; 0/1 correctness for confidences.
    temperatures : (float, float), default (0.1, 10)
        Range of the logarithmic temperature slider (starts at 1).
    n_bins : int, default 10
    binning : {"width", "mass"}, default "width"
    style : {"si", "classic"}, default "si"
        Reliability diagram style, see :func:`calibnb.plot_reliability_diagram`.

    Returns
    -------
    Panel
        Control ``"temperature"``; ``update(temperature=...)`` returns a
        one-column DataFrame (index: temperature, accuracy, mean confidence,
        ECE, MacroCE, KS, HMR).

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §3.2.

    Examples
    --------
    >>> panel = temperature_explorer([0.9, 0.8, 0.7, 0.95], [1, 0, 1, 1], n_bins=5)
    >>> panel.controls["temperature"].value = 2.0
    >>> round(float(panel.readout.loc["mean confidence", "value"]), 3)   # sigmoid(logit(c) / 2)
    0.709
    """
    from . import metrics

    scores, correct = _check_scores(logits_or_conf, labels_or_correct)
    n_bins = check_n_bins(n_bins)
    binning = check_choice(binning, ("width", "mass"), "binning")
    style = check_choice(style, ("si", "classic"), "style")
    slider = temperature_slider(temperatures=temperatures)

    def draw(axes: list, *, temperature: float) -> pd.DataFrame:
        tau = check_scalar_in_range(temperature, "temperature", low=0.0, low_inclusive=False)
        conf = _scaled_top1(scores, tau)
        data = plots.reliability_diagram_data(conf, correct, n_bins=n_bins, binning=binning)
        plots.plot_reliability_diagram(data, ax=axes[0], style=style)
        axes[0].set_title(f"τ = {tau:.3g}")
        values = {
            "temperature": tau,
            "accuracy": float(correct.mean()),
            "mean confidence": float(conf.mean()),
            "ECE": data.ece,
            "MacroCE": float(metrics.macro_ce(conf, correct)),
            "KS": float(metrics.ks_error(conf, correct)),
            "HMR": float(metrics.hmr(conf, correct)),
        }
        return pd.DataFrame({"value": values})

    return build_panel({"temperature": slider}, draw, 1, (6, 4.5))


# --------------------------------------------------------------------------
# binning explorer
# --------------------------------------------------------------------------


def binning_explorer(conf: Any, correct: Any, *, n_bins: int = 10, max_bins: int = 50, binning: str = "width",
                     style: str = "classic") -> Panel:
    r"""Number of bins and equal-width/equal-mass -> ECE, MCE and the reliability diagram.

    .. math::

        \mathrm{ECE} = \sum_m \frac{|B_m|}{N} |\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|, \qquad
        \mathrm{MCE} = \max_m |\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|

    both depend on the bins :math:`B_m` (Si et al. 2022 §2.1; Jiang et al.
    2024's binning problem); this panel shows how much.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
    n_bins : int, default 10
        Initial number of bins.
    max_bins : int, default 50
        Largest value of the bins slider.
    binning : {"width", "mass"}, default "width"
        Initial binning.
    style : {"classic", "si"}, default "classic"

    Returns
    -------
    Panel
        Controls ``"n_bins"`` and ``"binning"``; the readout's index is
        bins, binning, non-empty bins, ECE, MCE.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §2.1.
    .. [2] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL).

    Examples
    --------
    >>> panel = binning_explorer([0.1, 0.3, 0.8, 0.9], [0, 1, 1, 0], n_bins=2)
    >>> round(panel.readout.loc["ECE", "value"], 3)
    0.325
    >>> panel.controls["n_bins"].value = 1
    >>> round(panel.readout.loc["ECE", "value"], 3)
    0.025
    """
    c, y = check_conf_correct(conf, correct)
    max_bins = check_positive_int(max_bins, "max_bins")
    n_bins = check_n_bins(n_bins)
    if n_bins > max_bins:
        raise ValueError(f"n_bins must be at most max_bins ({max_bins}); got {n_bins}.")
    binning = check_choice(binning, ("width", "mass"), "binning")
    style = check_choice(style, ("classic", "si"), "style")
    import ipywidgets as w

    controls = {
        "n_bins": w.IntSlider(value=n_bins, min=1, max=max_bins, description="bins", continuous_update=False),
        "binning": w.ToggleButtons(options=[("equal width", "width"), ("equal mass", "mass")], value=binning,
                                   description="binning"),
    }

    def draw(axes: list, *, n_bins: int, binning: str) -> pd.DataFrame:
        data = plots.reliability_diagram_data(c, y, n_bins=n_bins, binning=binning)
        plots.plot_reliability_diagram(data, ax=axes[0], style=style)
        values = {"bins": n_bins, "binning": binning, "non-empty bins": len(data.table), "ECE": data.ece,
                  "MCE": data.mce}
        return pd.DataFrame({"value": pd.Series(values, dtype=object)})

    return build_panel(controls, draw, 1, (6, 4.5))


# --------------------------------------------------------------------------
# perturbation explorer
# --------------------------------------------------------------------------


def _metric_table(n_bins: int, binning: str) -> list[tuple[str, Callable, bool]]:
    """(name, fn(conf, correct), higher is better) for every (conf, correct) metric of calibnb."""
    from . import metrics

    kind = "width" if binning == "width" else "mass"
    return [
        (f"ECE ({n_bins} equal-{kind} bins)", lambda c, y: metrics.ece(c, y, n_bins=n_bins, binning=binning), False),
        (f"MCE ({n_bins} equal-{kind} bins)", lambda c, y: metrics.mce(c, y, n_bins=n_bins, binning=binning), False),
        ("KS", lambda c, y: metrics.ks_error(c, y), False),
        ("top-1 Brier", metrics.brier_top, False),
        ("ICE", metrics.ice, False),
        ("MacroCE", metrics.macro_ce, False),
        ("HMR", metrics.hmr, True),
    ]


def _perturbation_verdicts(conf: np.ndarray, correct: np.ndarray, index: int, new_conf: float,
                           n_bins: int, binning: str) -> pd.DataFrame:
    """Every metric before/after setting ``conf[index] = new_conf``, judged by Sakai's axioms.

    Axiom U (O): lowering the confidence of a correct (raising that of a wrong)
    instance must not make the system better; by symmetry, the reverse move
    must not make it worse. A tie is allowed (Sakai 2024 §5.1).
    """
    after = conf.copy()
    after[index] = new_conf
    is_correct = bool(correct[index])
    delta = new_conf - conf[index]
    # +1: the move reduces miscalibration (raise a correct / lower a wrong one); -1: it adds some.
    direction = 0 if delta == 0 else (1 if (delta > 0) == is_correct else -1)
    axiom = "U" if is_correct else "O"
    rows = []
    for name, fn, higher_better in _metric_table(n_bins, binning):
        b, a = float(fn(conf, correct)), float(fn(after, correct))
        gain = (a - b) if higher_better else (b - a)  # > 0: the metric says the perturbed system is better
        moved = "same" if abs(gain) <= 1e-12 else ("better" if gain > 0 else "worse")
        if direction == 0:
            verdict = "no change"
        elif direction < 0:
            verdict = "violates" if moved == "better" else "satisfies"
        else:
            verdict = "violates" if moved == "worse" else "satisfies"
        rows.append({"metric": name, "before": b, "after": a, "perturbed system is": moved,
                     f"Axiom {axiom}": verdict})
    return pd.DataFrame(rows).set_index("metric")


def perturbation_explorer(conf: Any, correct: Any, *, index: int = 0, n_bins: int = 10,
                          binning: str = "width") -> Panel:
    r"""Move one instance's confidence and see every metric's verdict (Sakai 2024, §5.1).

    Sakai's Axiom U: lowering the confidence of a *correct* instance must not
    make a system better; Axiom O: raising the confidence of a *wrong*
    instance must not make it better (ties are allowed; the reverse moves
    must not make it worse). For the system after setting
    :math:`c_j \leftarrow c'` the readout lists, for ECE, MCE, KS, top-1
    Brier, ICE, MacroCE and HMR, the value before and after, whether the
    perturbed system scores better, worse or the same, and whether that
    satisfies or violates the axiom. HMR satisfies both (Sakai's Theorems
    U-HMR and O-HMR); binned metrics can violate them.

    Parameters
    ----------
    conf, correct : array-like of shape (N,)
        The base system (e.g. Sakai's System X).
    index : int, default 0
        Initially selected instance (0-based).
    n_bins : int, default 10
    binning : {"width", "mass"}, default "width"
        Bins of ECE and MCE and of the reliability diagrams (Sakai: 3, "mass").

    Returns
    -------
    Panel
        Controls ``"index"`` and ``"new_conf"`` (starting at the instance's
        confidence); axes: reliability diagrams before and after; readout
        indexed by metric.

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. §5.1.

    Examples
    --------
    >>> x = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]   # Sakai 2024, Example 1, System X
    >>> y = [1, 1, 0, 1, 0, 1, 1, 1, 1]
    >>> panel = perturbation_explorer(x, y, index=6, n_bins=3, binning="mass")
    >>> panel.controls["new_conf"].value = 0.7                # System Y
    >>> panel.readout.loc["HMR", "Axiom U"]
    'satisfies'
    """
    c, y = check_conf_correct(conf, correct)
    n = c.shape[0]
    index = check_positive_int(index, "index", minimum=0)
    if index >= n:
        raise ValueError(f"index must be below the number of instances ({n}); got {index}.")
    n_bins = check_n_bins(n_bins)
    binning = check_choice(binning, ("width", "mass"), "binning")
    import ipywidgets as w

    controls = {
        "index": w.BoundedIntText(value=index, min=0, max=n - 1, description="instance"),
        "new_conf": w.FloatSlider(value=float(c[index]), min=0.0, max=1.0, step=0.01, description="new conf",
                                  continuous_update=False),
    }
    label = w.Label()

    def draw(axes: list, *, index: int, new_conf: float) -> pd.DataFrame:
        i = check_positive_int(index, "index", minimum=0)
        if i >= n:
            raise ValueError(f"index must be below the number of instances ({n}); got {i}.")
        new = check_scalar_in_range(new_conf, "new_conf", low=0.0, high=1.0)
        after = c.copy()
        after[i] = new
        for ax, system, title in zip(axes, (c, after), ("before", f"after: conf[{i}] = {new:.3g}")):
            data = plots.reliability_diagram_data(system, y, n_bins=n_bins, binning=binning)
            plots.plot_reliability_diagram(data, ax=ax, style="si")
            ax.set_title(title)
        label.value = (f"instance {i} is {'correct' if y[i] else 'wrong'}, confidence {c[i]:.3g} -> {new:.3g}")
        return _perturbation_verdicts(c, y, i, new, n_bins, binning)

    def reset_conf(change: dict) -> None:
        controls["new_conf"].value = float(c[change["new"]])

    # Choosing another instance starts its slider at that instance's own confidence.
    controls["index"].observe(reset_conf, names="value")
    panel = build_panel(controls, draw, 2, (11, 4.5))
    panel.widget.children = (panel.widget.children[0], label, panel.output)
    return panel
