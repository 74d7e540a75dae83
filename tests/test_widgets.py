"""Tests of calibnb.widgets without a browser: build each panel, set its controls'
values from Python, and check the readout and what was drawn."""

import copy

import matplotlib

matplotlib.use("Agg")

import ipywidgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402
from scipy import special  # noqa: E402

from calibnb import metrics  # noqa: E402
from calibnb.plots import reliability_diagram_data  # noqa: E402
from calibnb.widgets import (  # noqa: E402
    Panel,
    binning_explorer,
    perturbation_explorer,
    rounded_readout,
    sweep_values,
    temperature_explorer,
)

# Sakai 2024, Example 1 (papers README): System X; instances 3 and 5 (1-based) are wrong.
SAKAI_X = np.array([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8])
SAKAI_CORRECT = np.array([1, 1, 0, 1, 0, 1, 1, 1, 1])


@pytest.fixture(autouse=True)
def _close_figures(monkeypatch):
    monkeypatch.delenv("CALIBNB_PANELS", raising=False)  # live panels unless a test asks for static ones
    yield
    plt.close("all")


def _system(n, seed):
    rng = np.random.default_rng(seed)
    conf = rng.beta(5, 1, n)
    return conf, rng.uniform(size=n) < conf**3  # overconfident


def _bars(ax, gid):
    return [p for p in ax.patches if p.get_gid() == gid]


def _check_si_bars(ax, conf, correct, n_bins, binning):
    t = reliability_diagram_data(conf, correct, n_bins=n_bins, binning=binning).table
    assert_allclose([p.get_height() for p in _bars(ax, "correct")], t["frac_correct"])
    assert_allclose([p.get_height() for p in _bars(ax, "wrong")], t["frac_wrong"])


# --------------------------------------------------------------------------
# temperature explorer
# --------------------------------------------------------------------------

def test_temperature_explorer_binary_form_follows_the_slider():
    conf, correct = _system(500, 0)
    panel = temperature_explorer(conf, correct, n_bins=10)
    assert isinstance(panel, Panel) and set(panel.controls) == {"temperature"}
    r1 = panel.readout["value"]
    assert r1["temperature"] == 1.0
    assert r1["ECE"] == pytest.approx(metrics.ece(conf, correct))
    assert r1["MacroCE"] == pytest.approx(metrics.macro_ce(conf, correct))
    assert r1["KS"] == pytest.approx(metrics.ks_error(conf, correct))
    assert r1["HMR"] == pytest.approx(metrics.hmr(conf, correct))
    _check_si_bars(panel.axes[0], conf, correct, 10, "width")

    for tau in (3.0, 0.5):
        panel.controls["temperature"].value = tau
        scaled = special.expit(special.logit(conf) / tau)
        r = panel.readout["value"]
        assert r["temperature"] == pytest.approx(tau)
        assert r["mean confidence"] == pytest.approx(scaled.mean())
        assert r["accuracy"] == pytest.approx(correct.mean())
        assert r["ECE"] == pytest.approx(metrics.ece(scaled, correct))
        assert r["MacroCE"] == pytest.approx(metrics.macro_ce(scaled, correct))
        assert r["KS"] == pytest.approx(metrics.ks_error(scaled, correct))
        assert r["HMR"] == pytest.approx(metrics.hmr(scaled, correct))
        _check_si_bars(panel.axes[0], scaled, correct, 10, "width")
        assert panel.axes[0].get_title() == f"τ = {tau:.3g}"
    # This system is overconfident: a temperature above 1 lowers ECE, one below raises it.
    assert panel.update(temperature=3.0).loc["ECE", "value"] < r1["ECE"] < panel.update(temperature=0.5).loc["ECE", "value"]


def test_temperature_explorer_logits_form():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(400, 4)) * 3
    labels = rng.integers(0, 4, 400)
    panel = temperature_explorer(z, labels, style="classic", binning="mass", n_bins=5)
    correct = z.argmax(axis=1) == labels
    for tau in (0.3, 1.0, 4.0):
        r = panel.update(temperature=tau)["value"]
        conf = special.softmax(z / tau, axis=1).max(axis=1)
        assert r["accuracy"] == pytest.approx(correct.mean())  # temperature never changes the prediction
        assert r["mean confidence"] == pytest.approx(conf.mean())
        assert r["ECE"] == pytest.approx(metrics.ece(conf, correct, n_bins=5, binning="mass"))
        t = reliability_diagram_data(conf, correct, n_bins=5, binning="mass").table
        assert_allclose([p.get_height() for p in _bars(panel.axes[0], "accuracy")], t["accuracy"])
    assert panel.readout is not None and panel.readout.loc["temperature", "value"] == 4.0


def test_temperature_explorer_update_checks_its_arguments():
    panel = temperature_explorer([0.6, 0.7], [1, 0])
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['tau'\]"):
        panel.update(tau=2.0)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        panel.update(temperature=0.0)


# --------------------------------------------------------------------------
# binning explorer
# --------------------------------------------------------------------------

def test_binning_explorer_follows_bins_and_toggle():
    conf, correct = _system(300, 2)
    panel = binning_explorer(conf, correct)
    assert set(panel.controls) == {"n_bins", "binning"}
    ax = panel.axes[0]
    for n_bins, binning in [(10, "width"), (3, "width"), (3, "mass"), (25, "mass"), (1, "width")]:
        panel.controls["n_bins"].value = n_bins
        panel.controls["binning"].value = binning
        r = panel.readout["value"]
        assert (r["bins"], r["binning"]) == (n_bins, binning)
        assert r["ECE"] == pytest.approx(metrics.ece(conf, correct, n_bins=n_bins, binning=binning))
        assert r["MCE"] == pytest.approx(metrics.mce(conf, correct, n_bins=n_bins, binning=binning))
        t = reliability_diagram_data(conf, correct, n_bins=n_bins, binning=binning).table
        assert r["non-empty bins"] == len(t)
        assert_allclose([p.get_height() for p in _bars(ax, "accuracy")], t["accuracy"])
        assert f"{n_bins} equal-{binning}" in ax.get_xlabel()


def test_binning_explorer_bad_input():
    with pytest.raises(ValueError, match=r"n_bins must be at most max_bins \(5\)"):
        binning_explorer([0.5], [1], n_bins=6, max_bins=5)
    with pytest.raises(ValueError, match="binning must be one of"):
        binning_explorer([0.5], [1], binning="quantile")
    with pytest.raises(ValueError, match=r"conf has 1 value outside \[0, 1\]"):
        binning_explorer([0.5, -0.1], [1, 0])


# --------------------------------------------------------------------------
# perturbation explorer (Sakai 2024 Example 1)
# --------------------------------------------------------------------------

def test_perturbation_explorer_sakai_z_and_y():
    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=3, n_bins=3, binning="mass")
    assert (panel.readout["Axiom O"] == "no change").all()  # the slider starts at the instance's own value
    # System Z: the wrong instance 3 raised from 0.4 to 0.6.
    panel.controls["new_conf"].value = 0.6
    r = panel.readout
    ece, mce = "ECE (3 equal-mass bins)", "MCE (3 equal-mass bins)"
    assert r.loc[ece, "before"] == pytest.approx(0.178, abs=5e-4)  # Sakai: ECE(X) = 0.178
    assert r.loc[ece, "after"] == pytest.approx(0.156, abs=5e-4)  # Sakai: ECE(Z) = 0.156
    assert r.loc[mce, "before"] == pytest.approx(0.267, abs=5e-4)
    assert r.loc[mce, "after"] == pytest.approx(0.200, abs=5e-4)
    assert r.loc[ece, "perturbed system is"] == "better" and r.loc[ece, "Axiom O"] == "violates"
    assert r.loc[mce, "Axiom O"] == "violates"
    assert r.loc["HMR", "before"] == pytest.approx(0.557, abs=5e-4)
    assert r.loc["HMR", "perturbed system is"] == "worse" and r.loc["HMR", "Axiom O"] == "satisfies"
    z = SAKAI_X.copy()
    z[2] = 0.6
    for name, fn in [("KS", metrics.ks_error), ("MacroCE", metrics.macro_ce), ("ICE", metrics.ice),
                     ("top-1 Brier", metrics.brier_top)]:
        assert r.loc[name, "before"] == pytest.approx(fn(SAKAI_X, SAKAI_CORRECT))
        assert r.loc[name, "after"] == pytest.approx(fn(z, SAKAI_CORRECT))
    _check_si_bars(panel.axes[0], SAKAI_X, SAKAI_CORRECT, 3, "mass")
    _check_si_bars(panel.axes[1], z, SAKAI_CORRECT, 3, "mass")

    # Choosing instance 7 (correct) starts its slider at 0.8; lowering it to 0.7 is System Y.
    panel.controls["instance"].value = 7
    assert panel.controls["new_conf"].value == pytest.approx(0.8)
    assert panel.controls["new_conf"].description == "new confidence of instance 7"
    assert (panel.readout["Axiom U"] == "no change").all()
    panel.controls["new_conf"].value = 0.7
    r = panel.readout
    assert r.loc["HMR", "Axiom U"] == "satisfies" and r.loc["HMR", "perturbed system is"] == "worse"
    assert r.loc["MacroCE", "Axiom U"] == "satisfies"
    assert set(r["Axiom U"]) <= {"satisfies", "violates"}


def test_perturbation_explorer_reverse_moves_must_not_make_it_worse():
    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=5)
    r = panel.update(new_conf=0.1)  # the wrong instance 5 made less confident: an improvement
    assert r.loc["HMR", "perturbed system is"] == "better"
    assert r.loc["MacroCE", "Axiom O"] == "satisfies" and r.loc["ICE", "Axiom O"] == "satisfies"
    r = panel.update(instance=1, new_conf=0.9)  # a correct instance made more confident
    assert "Axiom U" in r.columns
    assert r.loc["HMR", "perturbed system is"] == "better" and r.loc["HMR", "Axiom U"] == "satisfies"


def test_perturbation_explorer_bad_input():
    with pytest.raises(ValueError, match=r"instance must be at most the number of instances \(9\); got 10"):
        perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=10)
    with pytest.raises(ValueError, match="instance must be at least 1; got 0"):
        perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=0)
    with pytest.raises(TypeError, match="instance must be an integer"):
        perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=1.5)
    with pytest.raises(ValueError, match="correct has length 2"):
        perturbation_explorer(SAKAI_X, [1, 0])
    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT)
    with pytest.raises(ValueError, match="new_conf must be <= 1"):
        panel.update(new_conf=1.5)
    assert panel.controls["new_conf"].value == pytest.approx(0.4)  # a refused value leaves the controls as they were


# --------------------------------------------------------------------------
# shared behaviour
# --------------------------------------------------------------------------

def test_bad_scores_for_temperature_explorer():
    with pytest.raises(ValueError, match=r"labels has 1 value outside \[0, 3\)"):
        temperature_explorer(np.zeros((2, 3)), [0, 3])
    with pytest.raises(ValueError, match="logits must have at least 2 classes"):
        temperature_explorer(np.zeros((2, 1)), [0, 0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        temperature_explorer([[0.0, np.nan]], [0])
    with pytest.raises(TypeError, match="temperatures must be a"):
        temperature_explorer([0.5], [1], temperatures=5)
    with pytest.raises(ValueError, match=r"temperatures\[0\] must be <= 1"):
        temperature_explorer([0.5], [1], temperatures=(2.0, 5.0))
    with pytest.raises(ValueError, match="style must be one of"):
        temperature_explorer([0.5], [1], style="fancy")


def test_panels_are_quiet_and_leave_global_state_alone(capsys):
    before = copy.deepcopy(dict(matplotlib.rcParams))
    figs_before = plt.get_fignums()
    panels = [temperature_explorer([0.6, 0.9], [0, 1]), binning_explorer([0.6, 0.9], [0, 1]),
              perturbation_explorer([0.6, 0.9], [0, 1])]
    panels[0].controls["temperature"].value = 2.0
    assert capsys.readouterr().out == ""  # nothing printed outside a notebook
    assert dict(matplotlib.rcParams) == before
    assert plt.get_fignums() == figs_before  # figures are shown through the panel only
    for p in panels:
        assert isinstance(p.widget, ipywidgets.VBox)
        assert isinstance(p.output, ipywidgets.Output)
        controls_box = p.widget.children[0]
        assert list(controls_box.children) == list(p.controls.values())
        bundle = p._repr_mimebundle_()
        assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == p.widget.model_id
        assert "text/html" not in bundle  # live: the widget only, whose output already holds the figure
        assert all(ax.figure is p.figure for ax in p.axes)
        for ax in p.axes:
            assert ax.get_xlabel() and ax.get_ylabel()


def test_static_mode_shows_a_scrubbable_animation_over_the_slider_and_the_readout(monkeypatch):
    monkeypatch.setenv("CALIBNB_PANELS", "static")
    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=7, n_bins=3, binning="mass")
    assert panel.widget is None and panel.output is None  # no live widget to go stale in a report
    assert panel.sweep == "new_conf"
    frames = sweep_values(panel.controls["new_conf"])
    assert frames[0] == 0.0 and frames[-1] == 1.0 and 0.8 in frames and len(frames) <= 10
    start = panel.readout.copy()
    bundle = panel._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    page = bundle["text/html"]
    assert page.count("data:image/png;base64,") == len(frames)  # one embedded image per frame
    assert 'type="range"' in page  # the animation's own scrub slider
    assert "http://" not in page and "https://" not in page  # nothing from the network (no icon font)
    assert rounded_readout(start, 3).to_html() in page  # the readout at the start value
    # It opens on the frame of the start value (0.8, frame 4) and prints the value shown under the scrubber.
    import re

    assert re.search(r"a\.set_frame\(4\);", page) and frames.index(0.8) == 4
    assert '>new confidence of instance 7 = 0.80</div>' in page
    assert '"new confidence of instance 7 = 0.00"' in page and '"new confidence of instance 7 = 1.00"' in page
    # Buttons need no font: inline SVG, no Font Awesome class and no media-control code points.
    assert 'class="fa' not in page and page.count("<svg") == 9
    assert not re.search("[\u23e9-\u23fa]", page)
    # The panel is left at its start value after rendering the frames.
    assert panel.readout.equals(start) and panel.controls["new_conf"].value == 0.8


def test_each_frame_of_a_static_panel_is_drawn_once(monkeypatch):
    """A frame is one draw of the figure: the panel's layout leaves no layout engine on the figure, which would
    make every savefig draw it once more first (issue 31: the frames of the reports' and tests' panels)."""
    from matplotlib.figure import Figure

    monkeypatch.setenv("CALIBNB_PANELS", "static")
    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=7, n_bins=3, binning="mass")
    assert panel.figure.get_layout_engine() is None
    draws = []
    real_draw = Figure.draw

    def counting_draw(self, renderer):
        draws.append(self)
        return real_draw(self, renderer)

    monkeypatch.setattr(Figure, "draw", counting_draw)
    frames = sweep_values(panel.controls[panel.sweep])
    page = panel.static_html()
    assert page.count("data:image/png;base64,") == len(frames)
    assert len(draws) == len(frames) and all(f is panel.figure for f in draws)


def test_sweep_values_cover_each_kind_of_control():
    w = ipywidgets
    assert sweep_values(w.IntSlider(value=3, min=1, max=5)) == [1, 2, 3, 4, 5]
    assert sweep_values(w.IntSlider(value=3, min=0, max=8)) == list(range(9))
    many = sweep_values(w.IntSlider(value=7, min=1, max=100))
    assert many[0] == 1 and many[-1] == 100 and 7 in many and len(many) <= 10
    log = sweep_values(w.FloatLogSlider(value=1.0, min=-1, max=1))
    assert log[0] == pytest.approx(0.1) and log[-1] == pytest.approx(10) and 1.0 in log
    assert sweep_values(w.ToggleButtons(options=[("equal width", "width"), ("equal mass", "mass")])) == ["width", "mass"]


def test_rounded_readout_prints_counts_as_integers_and_rounds_the_rest():
    import pandas as pd

    r = rounded_readout(pd.DataFrame({"value": [20.0, 0.1234567, True, "mass"]}), 3)
    assert list(r["value"]) == [20, 0.123, True, "mass"]
    assert "20.000" not in r.to_string()


def test_update_moves_the_controls_so_the_panel_never_contradicts_itself():
    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=7, n_bins=3, binning="mass")
    panel.update(instance=3, new_conf=0.6)  # System Z
    assert panel.controls["instance"].value == 3 and panel.controls["new_conf"].value == pytest.approx(0.6)
    assert panel.axes[1].get_title() == "after: confidence of instance 3 = 0.60"
    panel.update(instance=7)  # another instance: its slider starts at its own confidence
    assert panel.controls["new_conf"].value == pytest.approx(0.8)
    assert (panel.readout["Axiom U"] == "no change").all()


def test_controls_are_wide_and_explained():
    for p in [temperature_explorer([0.6, 0.9], [0, 1]), binning_explorer([0.6, 0.9], [0, 1]),
              perturbation_explorer([0.6, 0.9], [0, 1])]:
        for control in p.controls.values():
            # a slider wide enough to aim at 1366 x 768; a number box only as wide as its label and number
            wide = 300 if type(control).__name__.endswith("Slider") else 200
            assert int(control.layout.width.rstrip("px")) >= wide
            assert control.tooltip and len(control.description) > 8


def test_a_readout_prints_enough_digits_for_its_verdict():
    """Moving 0.80 to 0.79 changes the top-1 Brier score in the 4th decimal: the view must show it."""
    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=7, n_bins=3, binning="mass")
    readout = panel.update(new_conf=0.79)
    view = panel.readout_view()
    for metric, row in readout.iterrows():
        if row["perturbed system is"] != "same":
            shown = view.loc[metric]
            assert shown["before"] != shown["after"], (metric, shown.to_dict())
    moved = readout[readout["perturbed system is"] != "same"]
    assert len(moved) >= 1 and (moved["before"].round(3) == moved["after"].round(3)).any()  # the case 3 digits hid


def test_readouts_show_the_titles_names_and_no_bare_nan():
    """Projector view (issue 30 item 4): 'MacroCE', not 'macro_ce'; a NaN said in words."""
    import pandas as pd

    from calibnb.papers import baan2022, si2022

    conf, correct = _system(400, 0)
    panel = si2022.resampling_explorer(conf, correct, seed=0)
    view = panel.readout_view()
    assert {"ECE", "ICE", "MacroCE"} <= set(view.index) and not {"ece", "macro_ce"} & set(view.index)
    assert "macro_ce" in panel.readout.index  # code keeps its keys
    assert view.loc["MacroCE", "value"] == round(panel.readout.loc["macro_ce", "value"], panel.digits)
    rng = np.random.default_rng(0)
    temp = baan2022.human_temperature_explorer(rng.normal(size=(40, 3)), rng.multinomial(20, [0.5, 0.3, 0.2], size=40))
    assert {"ECE", "RankCS", "DistCE", "|EntCE|"} <= set(temp.readout_view().index)
    panel.readout = pd.DataFrame({"confident_accuracy": [0.8, np.nan]}, index=["dev", "test"])
    view = panel.readout_view()
    assert view.loc["test", "accuracy of those called confident"] == "undefined (no items)"
    assert "NaN" not in view.to_html() and "nan" not in view.to_string()
