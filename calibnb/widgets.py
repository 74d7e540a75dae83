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

__all__ = [
    "Panel", "build_panel", "temperature_slider", "temperature_explorer", "binning_explorer", "perturbation_explorer",
    "static_panels", "figure_png", "rounded_readout", "sweep_values",
]


#: Environment variable that switches panels to their static form: ``CALIBNB_PANELS=static``
#: makes ``display(panel)`` show a scrubbable animation and the readout instead of live
#: widgets. :func:`calibnb.report.run_notebook` sets it for every headless run (reports,
#: notebook tests), where no browser is there to move a slider.
STATIC_ENV = "CALIBNB_PANELS"

#: Width of every control of a panel (description, track and readout): a slider track of
#: about 400 px, wide enough to aim at 1366 x 768 (narrowed to the window by max_width).
CONTROL_WIDTH = "680px"

#: Most frames in the static animation of a panel's slider (each costs a redraw and a PNG).
MAX_FRAMES = 9

#: Environment variable that caps the frames of every static animation below MAX_FRAMES (an integer of at least 2;
#: unset or empty: MAX_FRAMES). The notebook tests' case runs set it (tests/test_notebooks.py, issue 31): no check
#: reads a frame, and the default run of each notebook keeps every frame.
FRAMES_ENV = "CALIBNB_PANEL_FRAMES"

#: Resolution (dots per inch) of the frames of a report page's animations: readable on a
#: projector (the inline backend draws at 72).
FRAME_DPI = 100.0


def static_panels() -> bool:
    """True when panels should be shown as static animations (``CALIBNB_PANELS=static``)."""
    import os

    return os.environ.get(STATIC_ENV, "").strip().lower() == "static"


def figure_png(fig: Any) -> bytes:
    """The PNG of ``fig`` exactly as JupyterLab's inline backend shows it (tight bounding box)."""
    from IPython.core.pylabtools import print_figure

    return print_figure(fig, "png", bbox_inches="tight")


def rounded_readout(readout: pd.DataFrame, digits: int) -> pd.DataFrame:
    """``readout`` for display: floats rounded to ``digits`` decimals, whole-number floats as integers.

    >>> rounded_readout(pd.DataFrame({"value": [20.0, 0.123456]}, index=["votes", "ECE"]), 3)
            value
    votes      20
    ECE     0.123
    """

    def cell(v: Any) -> Any:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (float, np.floating)):
            return v
        if not np.isfinite(v):
            return v
        if float(v).is_integer() and abs(v) < 1e15:
            return int(v)
        return round(float(v), digits)

    rows = [[cell(v) for v in row] for row in readout.itertuples(index=False)]
    return pd.DataFrame(rows, index=readout.index, columns=readout.columns, dtype=object)


#: How a readout's keys are shown on screen: the names the panels' titles and the papers use.
_DISPLAY_NAMES = {
    "ece": "ECE", "ece_width": "ECE", "ice": "ICE", "ice_pos": "ICE (correct)", "ice_neg": "ICE (wrong)",
    "macro_ce": "MacroCE", "rank_cs": "RankCS", "abs_ent_ce": "|EntCE|", "dist_ce": "DistCE",
    "confident_share": "share called confident", "confident_accuracy": "accuracy of those called confident",
    "tuned_n": "tuned n",
}
#: What a NaN in a readout means on screen: a mean over no items (e.g. the accuracy of the answers called
#: confident when none is).
_UNDEFINED = "undefined (no items)"


def _display_name(key: Any) -> Any:
    return _DISPLAY_NAMES.get(key, key) if isinstance(key, str) else key


def _digits_for(readout: pd.DataFrame, digits: int) -> int:
    """``digits``, or the fewest more (at most 12) that keep differing before/after values apart when printed."""
    if not {"before", "after"} <= set(readout.columns):
        return digits
    pairs = [(b, a) for b, a in zip(readout["before"], readout["after"])
             if isinstance(b, (float, np.floating)) and isinstance(a, (float, np.floating))
             and np.isfinite(b) and np.isfinite(a) and abs(a - b) > 1e-12]
    for d in range(digits, 13):
        if all(round(float(b), d) != round(float(a), d) for b, a in pairs):
            return d
    return 12


def _frames_cap() -> int:
    """MAX_FRAMES, or the cap of ``CALIBNB_PANEL_FRAMES`` (read at each call: a kernel inherits it)."""
    import os

    raw = os.environ.get(FRAMES_ENV, "").strip()
    if not raw:
        return MAX_FRAMES
    if not raw.isdigit() or int(raw) < 2:
        raise ValueError(f"{FRAMES_ENV} must be an integer of at least 2 (frames of a static panel); got {raw!r}.")
    return min(int(raw), MAX_FRAMES)


def sweep_values(control: Any, max_frames: int | None = None) -> list:
    """The values a static animation of ``control`` steps through: its whole range, start value included.

    Integer controls give every integer if there are at most ``max_frames``,
    else ``max_frames`` evenly spaced ones; float sliders every 1, 2 or 5 x
    10^j steps, at most ``max_frames`` round values and the end (logarithmically
    spaced for a log slider);
    option controls (toggle buttons, drop-downs) every option. ``max_frames``
    None: :data:`MAX_FRAMES`, or fewer where the environment variable
    ``CALIBNB_PANEL_FRAMES`` says so.
    """
    import ipywidgets as w

    if max_frames is None:
        max_frames = _frames_cap()
    start = control.value
    if _is_option_control(control):
        return [value for _, value in _options(control)]
    lo, hi = control.min, control.max
    if isinstance(control, w.FloatLogSlider):
        grid = np.logspace(lo, hi, max_frames, base=control.base)
        values = {float(f"{v:.3g}") for v in grid}
    elif isinstance(control.value, (int, np.integer)) and not isinstance(control.value, bool):
        lo, hi = int(lo), int(hi)
        if hi - lo + 1 <= max_frames:
            values = set(range(lo, hi + 1))
        else:
            values = {int(round(v)) for v in np.linspace(lo, hi, max_frames)}
    else:
        step = float(control.step) if control.step else (hi - lo) / (max_frames - 1)
        n_steps = int(round((hi - lo) / step))
        # Frames every 1, 2 or 5 x 10^j steps (round values), at most max_frames of them, and the end.
        needed = n_steps / max(max_frames - 1, 1)
        stride = min(m * 10**j for j in range(0, 12) for m in (1, 2, 5) if m * 10**j >= needed)
        k = sorted(set(range(0, n_steps + 1, stride)) | {n_steps})
        decimals = max(0, -int(np.floor(np.log10(step)))) + 1
        values = {round(lo + i * step, decimals) for i in k}
    values.add(start)
    return sorted(values)


def _options(control: Any) -> list:
    """(label, value) pairs of an option control."""
    labels = getattr(control, "_options_labels", None)
    values = getattr(control, "_options_values", None)
    if labels is not None and values is not None:
        return list(zip(labels, values))
    return [(str(v), v) for v in control.options]


def _is_option_control(control: Any) -> bool:
    return hasattr(control, "options")


def _panel_outputs(figure: Any, readout: pd.DataFrame | None, shell: Any, beside: bool = False) -> tuple:
    """The figure (PNG) and readout as the ``outputs`` state of an ``ipywidgets.Output``.

    Why the state and not ``with output: display(...)``: the context manager
    makes the output widget capture messages of the *executing request*, and a
    headless client (nbclient, under papermill and nbval) emulates that capture
    by sending the captured outputs back to the kernel as ``comm_msg`` requests
    on the shell channel while the cell still runs. Under ipykernel 7 (7.4
    here) a burst of such requests can leave the next request unread on the
    kernel's shell socket, idle, while the client waits for its reply: the
    headless hang of issue 30 (benchmarks/README.md, "Headless runs"). Setting
    the state is one kernel-to-frontend update and asks the client for nothing.
    """
    import base64

    png = base64.b64encode(figure_png(figure)).decode("ascii")
    if beside and readout is not None:
        # A readout with many rows (one per model) beside the figure, not under it: a 16:9 projector has width
        # to spare and no height (issue 30: every panel's verdict visible at 1366 x 768). Wraps under the figure
        # where the notebook is too narrow.
        # Compact rows (JupyterLab's table rows are 28 px high; these about 18 px), so that under the figure,
        # where a narrow notebook wraps it, the panel still fits.
        table = (readout.style.format(str, escape="html").format_index(str, escape="html", axis=0)
                 .format_index(str, escape="html", axis=1)
                 .set_table_styles([{"selector": "td, th", "props": "padding: 1px 8px; line-height: 1.25;"}]))
        html = (f'<div style="display: flex; flex-wrap: wrap; align-items: flex-start; column-gap: 16px">'
                f'<img src="data:image/png;base64,{png}" alt="the panel\'s figure"/>'
                f'<div>{table.to_html()}</div></div>')
        return ({"output_type": "display_data", "metadata": {},
                 "data": {"text/html": html, "text/plain": shell.display_formatter.format(readout)[0]["text/plain"]}},)
    items = [{"output_type": "display_data", "metadata": {},
              "data": {"image/png": png, "text/plain": "<the panel's figure>"}}]
    if readout is not None:
        data, metadata = shell.display_formatter.format(readout)
        items.append({"output_type": "display_data", "data": data, "metadata": metadata})
    return tuple(items)


def _control_label(control: Any) -> str:
    return control.description or type(control).__name__


@dataclass
class Panel:
    """An interactive panel: controls, a plain callback, the figure and the readout.

    Attributes
    ----------
    controls : dict of str -> ipywidgets.Widget
        The controls, keyed by the name of the ``update`` argument they set.
    update : callable
        ``update(**values) -> pandas.DataFrame``: move the controls to the
        given values (missing ones stay), recompute, redraw the figure and
        return the readout. Callable without a browser; in a notebook it also
        refreshes the panel where it is shown. ``update(show=False, ...)``
        only redraws the figure (the controls and the shown panel stay).
    figure : matplotlib.figure.Figure
    axes : list of matplotlib.axes.Axes
    output : ipywidgets.Output or None
        Where the figure and readout are shown (None in static mode).
    widget : ipywidgets.Widget or None
        Controls above the output; what ``display(panel)`` shows in a live
        notebook (None in static mode).
    readout : pandas.DataFrame or None
        The last readout returned by ``update``.
    beside : bool
        The readout is shown beside the figure (wrapping under it where the
        notebook is narrow), in compact rows: for a readout with a row per
        model, so that the panel fits a 1366 x 768 projector.
    digits : int
        Decimals of the readout as displayed (the papers' precision).
    sweep : str or None
        The control whose range the static animation steps through.
    """

    controls: dict
    update: Callable[..., pd.DataFrame]
    figure: Any
    axes: list
    output: Any = None
    widget: Any = None
    readout: pd.DataFrame | None = field(default=None)
    digits: int = 3
    sweep: str | None = None
    beside: bool = False

    def readout_view(self) -> pd.DataFrame | None:
        """The readout as shown: numbers rounded to :attr:`digits` decimals, or more where needed.

        Keys are shown under the names the panels' titles and the papers use
        (``macro_ce`` as "MacroCE", ``ece`` as "ECE", ...; :data:`_DISPLAY_NAMES`),
        and a NaN as a word, "undefined (no items)", never as ``NaN``. The
        readout itself (``panel.readout``) keeps its keys for code.

        A readout with ``before`` and ``after`` columns prints as many more
        decimals (up to 12) as it takes for every row whose values differ to
        print different numbers, so a verdict ("better", "worse") is never
        shown beside two equal-looking numbers.
        """
        if self.readout is None:
            return None
        view = rounded_readout(self.readout, _digits_for(self.readout, self.digits))
        view = view.rename(index=_display_name, columns=_display_name)
        rows = [[_UNDEFINED if isinstance(v, (float, np.floating)) and np.isnan(v) else v for v in row]
                for row in view.itertuples(index=False)]
        return pd.DataFrame(rows, index=view.index, columns=view.columns, dtype=object)

    def refresh(self) -> None:
        """Show the current figure and readout in the panel's output (live notebooks only).

        Called by ``update`` after the figure was redrawn, so what is shown is
        always the figure of the controls' current values.
        """
        if self.output is None:
            return
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:  # plain Python (tests, scripts): nowhere to show it
            return
        self.output.outputs = _panel_outputs(self.figure, self.readout_view(), shell, self.beside)

    def values(self) -> dict:
        """The controls' current values, keyed like ``update``'s arguments."""
        return {name: control.value for name, control in self.controls.items()}

    def animation_html(self, values: Any = None, *, fps: float = 2.0, dpi: float = FRAME_DPI) -> str:
        """A self-contained HTML animation of the figure over the range of the :attr:`sweep` control.

        Every frame is the panel's figure for one value of that control (the
        others at their current values), rendered with
        :meth:`matplotlib.animation.Animation.to_jshtml`: the frames are
        embedded as images with their own play/step/scrub controls, so the
        page needs no kernel and no network. The animation opens on the frame
        of the control's current value (the value the readout table shows),
        prints the value of the frame shown under its scrub slider, and draws
        its buttons as inline SVG (no icon font). The panel is redrawn at the
        controls' values afterwards.
        """
        import matplotlib as mpl
        from matplotlib.animation import FuncAnimation

        if self.sweep is None:
            raise ValueError("this panel has no control to sweep (sweep is None).")
        start = self.values()
        frames = list(values) if values is not None else sweep_values(self.controls[self.sweep])
        if not frames:
            raise ValueError("values must hold at least one value of the swept control.")

        def draw(value: Any) -> list:
            # The layout of the start value is kept: every frame the same size, and no
            # tight_layout per frame (two thirds of a redraw's time).
            self.update(**{**start, self.sweep: value}, show=False, _layout=False)
            return []

        try:
            with mpl.rc_context({"animation.embed_limit": 50.0, "savefig.dpi": dpi}):
                anim = FuncAnimation(self.figure, draw, frames=frames, init_func=lambda: [], blit=False,
                                     repeat=False, cache_frame_data=False)
                html = anim.to_jshtml(fps=fps, default_mode="once")
        finally:
            self.update(**start, show=False)
        control = self.controls[self.sweep]
        labels = [_value_label(control, v) for v in frames]
        opening = frames.index(start[self.sweep]) if start[self.sweep] in frames else 0
        return _offline_controls(html, labels=labels, start=opening, name=_control_label(control))

    def static_html(self) -> str:
        """The panel for a page without a kernel: caption, scrubbable animation, readout at the start value."""
        import html as _html

        parts = []
        if self.sweep is not None:
            control = self.controls[self.sweep]
            frames = sweep_values(control)
            label = _control_label(control)
            tip = getattr(control, "tooltip", None)
            parts.append(
                f"<p><b>Interactive panel, static copy.</b> Use the slider under the figure to step through "
                f"<i>{_html.escape(label)}</i> from {_html.escape(_value_label(control, frames[0]))} to "
                f"{_html.escape(_value_label(control, frames[-1]))} ({len(frames)} frames)"
                + (f": {_html.escape(tip)}" if tip else "") + ". "
                f"The animation opens on the start value and the table is the readout there "
                f"({_html.escape(_value_label(control, control.value))}); "
                "open the notebook in JupyterLab to move the controls freely.</p>")
            parts.append(self.animation_html(frames))
        else:
            parts.append(f'<img src="data:image/png;base64,{_b64(figure_png(self.figure))}"/>')
        view = self.readout_view()
        if view is not None:
            parts.append(view.to_html())
        return "\n".join(parts)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        """Live: the widget (controls over the figure and readout). Static mode: a scrubbable animation.

        In static mode (``CALIBNB_PANELS=static``, set by :mod:`calibnb.report`
        for headless runs) no widget view is displayed: an HTML report shows
        the animation of the figure over the slider's range and the readout,
        with no widget state to go stale.
        """
        if self.widget is None or static_panels():
            return {"text/html": self.static_html(), "text/plain": f"<calibnb Panel: {', '.join(self.controls)}>"}
        return dict(self.widget._repr_mimebundle_())


# matplotlib's animation controls use Font Awesome icons loaded from a CDN; offline they
# are blank buttons, and Unicode media symbols (U+23EE...) are empty boxes in common Linux
# fonts. Inline SVG needs no font and no network.
def _svg(path: str) -> str:
    return (f'<svg width="14" height="14" viewBox="0 0 16 16" aria-hidden="true" '
            f'style="vertical-align: middle"><path d="{path}" fill="currentColor"/></svg>')


_ICONS = {
    "fa-minus": _svg("M2 7h12v2H2z"),
    "fa-fast-backward": _svg("M2 2h2v12H2zM15 2v12L9 8zM9 2v12L3 8z"),
    "fa-step-backward": _svg("M3 2h2v12H3zM13 2v12L6 8z"),
    "fa-play fa-flip-horizontal": _svg("M13 2v12L3 8z"),
    "fa-pause": _svg("M3 2h4v12H3zM9 2h4v12H9z"),
    "fa-play": _svg("M3 2v12l10-6z"),
    "fa-step-forward": _svg("M11 2h2v12h-2zM3 2v12l7-6z"),
    "fa-fast-forward": _svg("M12 2h2v12h-2zM1 2v12l6-6zM7 2v12l6-6z"),
    "fa-plus": _svg("M7 2h2v5h5v2H9v5H7V9H2V7h5z"),
}


def _value_label(control: Any, value: Any) -> str:
    """``value`` of ``control`` as its readout prints it (an option's label for option controls)."""
    if _is_option_control(control):
        return next((str(label) for label, v in _options(control) if v == value), str(value))
    fmt = getattr(control, "readout_format", None)
    if fmt:
        try:
            return format(value, fmt)
        except (TypeError, ValueError):
            pass
    return _fmt(value)


def _offline_controls(html: str, *, labels: list | None = None, start: int = 0, name: str = "") -> str:
    """``to_jshtml`` output that works offline and opens on frame ``start``.

    The remote icon stylesheet is removed and the icons are inline SVG; with
    ``labels`` (one per frame), the value of the frame shown is printed under
    the scrub slider ("<name> = <label>") and kept in step with every button
    and with the slider.
    """
    import json
    import re

    html = re.sub(r'<link rel="stylesheet"\s+href="https?://[^"]*font-awesome[^"]*">', "", html)
    html = re.sub(r'<i class="fa ([^"]+)"></i>', lambda m: _ICONS.get(m.group(1), m.group(1)), html)
    if labels is None:
        return html
    import html as _html

    found = re.search(r'<input id="_anim_slider(\w+)"', html)
    if found is None:  # not matplotlib's template: leave it as it is
        return html
    uid = found.group(1)
    prefix = f"{name} = " if name else ""
    caption = (f'<div class="anim-value" id="_anim_value{uid}" aria-live="polite">'
               f'{_html.escape(prefix + str(labels[start]))}</div>')
    html = re.sub(r'(<input id="_anim_slider\w+"[^>]*>)', lambda m: m.group(1) + caption, html, count=1)
    hook = (f"var a = anim{uid}, shown = document.getElementById('_anim_value{uid}'), "
            f"labels = {json.dumps([prefix + str(v) for v in labels])}, set = a.set_frame.bind(a); "
            "a.set_frame = function(frame) { set(frame); shown.textContent = labels[this.current_frame]; }; "
            f"a.set_frame({int(start)});")
    html = re.sub(r"(anim\w+ = new Animation\([^;]*\);)", lambda m: m.group(1) + "\n        " + hook, html,
                  count=1)
    return html


def _legend_off_the_data(ax: Any) -> None:
    """Move a legend drawn inside ``ax`` below it (same entries and title), off the data.

    A legend already anchored elsewhere (e.g. beside the axes) is left alone.
    """
    legend = ax.get_legend()
    if legend is None or tuple(legend.get_bbox_to_anchor().bounds) != tuple(ax.bbox.bounds):
        return
    handles, labels = ax.get_legend_handles_labels()
    title = legend.get_title().get_text() or None
    ax.legend(handles, labels, title=title, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
              fontsize="small", title_fontsize="small", frameon=False)


def _legend_below_the_labels(ax: Any, renderer: Any) -> None:
    """Move a legend anchored below ``ax`` under its tick labels and x label, so no text overlaps.

    An anchor at a fixed fraction of the axes height (e.g. -0.14) lands on the x
    label when the axes are short; the anchor is set from where the label ends.
    """
    legend = ax.get_legend()
    if legend is None:
        return
    x0, y0, _, _ = legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted()).bounds
    if y0 >= 0:
        return
    label_bottom = ax.xaxis.get_tightbbox(renderer).y0  # display units
    gap = 4 * ax.figure.dpi / 72  # 4 points
    y = ax.transAxes.inverted().transform((0, label_bottom - gap))[1]
    legend.set_bbox_to_anchor((0.5, y), transform=ax.transAxes)


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.3g}"
    return str(value)


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")


def build_panel(controls: dict, draw: Callable[..., pd.DataFrame], n_axes: int, figsize: tuple, *,
                digits: int = 3, sweep: str | None = None, extra: Any = (), beside: bool = False) -> Panel:
    """Wire ``controls`` to ``draw(axes, **values)``: compute, redraw, then show.

    The building block of every panel of calibnb (also used by the paper modules in
    :mod:`calibnb.papers`): ``controls`` maps the
    keyword names of ``draw`` to ipywidgets controls, ``draw`` draws on the
    list of ``n_axes`` axes and returns the readout DataFrame.

    Order of work on every change (a control moved in the browser, or
    ``panel.update(...)`` called from Python): clear the axes, ``draw`` the
    new values, lay the figure out, and only then replace what the panel's
    output shows with the new figure (as PNG) and readout. The panel is drawn
    once when built, so it shows its figure and readout as soon as it is
    displayed.

    In static mode (:func:`static_panels`) no output or box widget is
    created and ``display(panel)`` shows :meth:`Panel.static_html`.

    Parameters
    ----------
    controls : dict of str -> ipywidgets.Widget
    draw : callable
        ``draw(axes, **values) -> pandas.DataFrame``.
    n_axes : int
    figsize : (float, float)
    digits : int, default 3
        Decimals of the readout as displayed.
    sweep : str, optional
        The control of the static animation; default the first slider, else
        the first number box, else the first control.
    extra : sequence of ipywidgets.Widget
        Shown between the controls and the output (e.g. a caption label).
    beside : bool, default False
        Show the readout beside the figure instead of under it (a readout
        with a row per model, so that the panel fits a 1366 x 768 projector).

    ``observe`` is used rather than ``interactive_output`` because the latter
    writes terminal escape codes to stdout when no IPython kernel is running.
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.layout_engine import TightLayoutEngine

    if not controls:
        raise ValueError("controls must hold at least one control.")
    if sweep is None:
        ranked = sorted(controls, key=lambda n: (not type(controls[n]).__name__.endswith("Slider"),
                                                  _is_option_control(controls[n])))
        sweep = ranked[0]
    elif sweep not in controls:
        raise ValueError(f"sweep must be one of {sorted(controls)}; got {sweep!r}.")
    for control in controls.values():
        if not control.layout.width:
            control.layout.width = CONTROL_WIDTH
            control.layout.max_width = "100%"
        if hasattr(control, "style") and hasattr(control.style, "description_width"):
            control.style.description_width = "initial"

    fig, axes = plt.subplots(1, n_axes, figsize=figsize, squeeze=False)
    plt.close(fig)  # shown only through the panel, never by the inline backend at cell end
    panel = Panel(controls=controls, update=None, figure=fig, axes=list(axes[0]), digits=digits, sweep=sweep,
                  beside=bool(beside))
    params = fig.subplotpars
    start_layout = {k: getattr(params, k) for k in ("left", "right", "bottom", "top", "wspace", "hspace")}

    holding = [False]  # True while update() itself moves the controls: not a user's change

    def set_controls(values: dict) -> None:
        holding[0] = True
        try:
            for name, control in controls.items():  # in order: a control may reset later ones
                if name in values and control.value != values[name]:
                    try:
                        control.value = values[name]
                    except Exception:  # a value the control cannot hold; draw() reports it
                        pass
        finally:
            holding[0] = False

    def update(*, show: bool = True, _layout: bool = True, **values: Any) -> pd.DataFrame:
        unknown = sorted(set(values) - set(controls))
        if unknown:
            raise TypeError(f"update got unknown argument(s) {unknown}; expected some of {sorted(controls)}.")
        before = {name: control.value for name, control in controls.items()}
        if show:  # the controls follow the values drawn, so the panel never contradicts itself
            set_controls(values)
        merged = {name: control.value for name, control in controls.items()}
        merged.update(values)
        try:
            for ax in panel.axes:
                ax.clear()
            panel.readout = draw(panel.axes, **merged)  # 1. compute and 2. redraw ...
            for ax in panel.axes:
                _legend_off_the_data(ax)
        except Exception:
            if show:
                set_controls(before)
            raise
        if _layout:
            # From the same start every time: tight_layout depends on the positions it starts from
            # (a legend below the axes moves with them), and a panel must look the same for the
            # same values whatever was shown before.
            fig.subplots_adjust(**start_layout)
            # fig.tight_layout()'s adjustment, without the layout engine it leaves on the figure: with an
            # engine set, every savefig draws the figure once more before drawing it (to run the engine),
            # so each frame of animation_html was drawn twice.
            TightLayoutEngine().execute(fig)
        # After the layout (which must not shrink the axes to make room for it): a legend below the
        # axes goes under the x label, never on it; the PNG's tight bounding box takes it in.
        renderer = RendererAgg(fig.bbox.width, fig.bbox.height, fig.dpi)  # text extents only, nothing shown
        for ax in panel.axes:
            _legend_below_the_labels(ax, renderer)
        if show:
            panel.refresh()  # 3. ... and only then show
        return panel.readout

    def on_change(change: Any = None) -> None:
        if not holding[0]:
            update()

    panel.update = update
    if not static_panels():
        panel.output = w.Output()
        panel.widget = w.VBox([w.HBox(list(controls.values()), layout=w.Layout(flex_flow="row wrap")),
                               *extra, panel.output])
    for control in controls.values():
        control.observe(on_change, names="value")
    update()
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
        z = check_logits(scores, "logits")
        y = check_labels(labels, z.shape[0], z.shape[1], other="logits")
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
                            description="temperature τ (no unit)", continuous_update=False,
                            readout_format=".3g", style={"description_width": "initial"},
                            tooltip="Temperature scaling divides the logits by τ before the softmax: τ > 1 "
                                    "lowers every confidence, τ < 1 raises it, τ = 1 is the model as trained.")


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

    return build_panel({"temperature": slider}, draw, 1, (6, 3.6))


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
        "n_bins": w.IntSlider(value=n_bins, min=1, max=max_bins, description="number of bins",
                              continuous_update=False,
                              tooltip="How many confidence bins ECE and MCE compare accuracy and confidence in"),
        "binning": w.ToggleButtons(options=[("equal width", "width"), ("equal mass", "mass")], value=binning,
                                   description="bin edges",
                                   tooltip="equal width: bins of the same confidence range; "
                                           "equal mass: bins holding the same number of predictions"),
    }

    def draw(axes: list, *, n_bins: int, binning: str) -> pd.DataFrame:
        data = plots.reliability_diagram_data(c, y, n_bins=n_bins, binning=binning)
        plots.plot_reliability_diagram(data, ax=axes[0], style=style)
        values = {"bins": n_bins, "binning": binning, "non-empty bins": len(data.table), "ECE": data.ece,
                  "MCE": data.mce}
        return pd.DataFrame({"value": pd.Series(values, dtype=object)})

    return build_panel(controls, draw, 1, (6, 3.6))


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


def perturbation_explorer(conf: Any, correct: Any, *, instance: int = 1, n_bins: int = 10,
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
    instance : int, default 1
        Initially selected instance, numbered from 1 as in the papers.
    n_bins : int, default 10
    binning : {"width", "mass"}, default "width"
        Bins of ECE and MCE and of the reliability diagrams (Sakai: 3, "mass").

    Returns
    -------
    Panel
        Controls ``"instance"`` (1 to N) and ``"new_conf"`` (starting at the
        instance's confidence); axes: reliability diagrams before and after;
        readout indexed by metric.

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. §5.1.

    Examples
    --------
    >>> x = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]   # Sakai 2024, Example 1, System X
    >>> y = [1, 1, 0, 1, 0, 1, 1, 1, 1]
    >>> panel = perturbation_explorer(x, y, instance=7, n_bins=3, binning="mass")
    >>> panel.controls["new_conf"].value = 0.7                # System Y
    >>> panel.readout.loc["HMR", "Axiom U"]
    'satisfies'
    """
    c, y = check_conf_correct(conf, correct)
    n = c.shape[0]
    instance = check_positive_int(instance, "instance", minimum=1)
    if instance > n:
        raise ValueError(f"instance must be at most the number of instances ({n}); got {instance}.")
    n_bins = check_n_bins(n_bins)
    binning = check_choice(binning, ("width", "mass"), "binning")
    import ipywidgets as w

    controls = {
        "instance": w.BoundedIntText(value=instance, min=1, max=n, description=f"instance (1 to {n})", layout=w.Layout(width="220px"),
                                     tooltip="Which prediction to move, numbered from 1 as in the paper"),
        "new_conf": w.FloatSlider(value=float(c[instance - 1]), min=0.0, max=1.0, step=0.01,
                                  description=f"new confidence of instance {instance}", continuous_update=False,
                                  readout_format=".2f",
                                  tooltip="The model's confidence (probability, 0 to 1) in this prediction "
                                          "after the move; it starts at the instance's own confidence"),
    }
    label = w.Label()

    def draw(axes: list, *, instance: int, new_conf: float) -> pd.DataFrame:
        k = check_positive_int(instance, "instance", minimum=1)
        if k > n:
            raise ValueError(f"instance must be at most the number of instances ({n}); got {k}.")
        i = k - 1
        new = check_scalar_in_range(new_conf, "new_conf", low=0.0, high=1.0)
        after = c.copy()
        after[i] = new
        for ax, system, title in zip(axes, (c, after), ("before", f"after: confidence of instance {k} = {new:.2f}")):
            data = plots.reliability_diagram_data(system, y, n_bins=n_bins, binning=binning)
            plots.plot_reliability_diagram(data, ax=ax, style="si")
            ax.set_title(title)
        label.value = (f"instance {k} is {'correct' if y[i] else 'wrong'}: confidence {c[i]:.2f} → {new:.2f}")
        return _perturbation_verdicts(c, y, i, new, n_bins, binning)

    def reset_conf(change: dict) -> None:
        k = int(change["new"])
        if 1 <= k <= n:
            controls["new_conf"].description = f"new confidence of instance {k}"
            controls["new_conf"].value = float(c[k - 1])

    # Choosing another instance starts its slider at that instance's own confidence.
    controls["instance"].observe(reset_conf, names="value")
    return build_panel(controls, draw, 2, (11, 3.3), extra=[label], sweep="new_conf")
