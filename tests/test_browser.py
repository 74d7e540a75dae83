"""Notebook 04 in JupyterLab in a real headless Chromium, and its HTML report with the network off.

1. JupyterLab runs on 127.0.0.1 (a free port, no token, ``--allow-root``, root
   dir a temporary copy of ``notebooks/``, its own settings and workspaces);
   Playwright drives Debian's ``/usr/bin/chromium``. The test opens notebook
   04, runs every cell from the Run menu, moves the perturbation panel's
   slider one step with the keyboard, and checks that the panel's figure is
   the figure of the new value (pixel for pixel, against a render made here)
   and that the notebook, saved from the browser, holds no error output.
2. ``python -m calibnb.report`` writes notebook 04's page (quick parameters);
   the browser opens it from ``file://`` with every request that would leave
   the machine blocked, and checks that the page asked for nothing remote,
   that its formulas were typeset by the local MathJax, that every image
   loaded, and that the panel's animation changes frame when its scrub
   slider is moved with the keyboard.

3. Every panel of notebooks 01, 02, 03 and 05, built as those notebooks build it, on one page of
   JupyterLab at 1366 x 768: each one's height (controls, figure, readout) is at most the
   notebook's visible height, so its verdict shows without scrolling (04's are checked in 1.).

Every process started here (JupyterLab and its kernels, the report) is stopped
by its PID. The test is skipped, with the reason, only where no Chromium or no
Playwright is installed; ``.ci/run`` installs Debian's ``chromium``.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from chromium import free_port, launch, need_chromium, stop, wait_until_serving

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "04_sakai2024_hmr.ipynb"
# Sakai 2024, Example 1, System X: what notebook 04's panel is built on (checked below against the notebook).
SAKAI_X = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
SAKAI_CORRECT = [1, 1, 0, 1, 0, 1, 1, 1, 1]

pytestmark = pytest.mark.xdist_group("browser")


def _need_browser() -> None:
    # Notebook 04 needs no downloaded data (Sakai's examples are committed in data/).
    need_chromium()


def _env(tmp: Path) -> dict:
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # the kernel's inline backend, as for a user
    env.pop("CALIBNB_PANELS", None)  # live panels
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env[name] = str(tmp / name.lower())
    return env


@pytest.fixture()
def lab(tmp_path):
    """JupyterLab on 127.0.0.1 serving a copy of notebooks/; yields (base URL, root dir)."""
    _need_browser()
    root = tmp_path / "root"
    shutil.copytree(ROOT / "notebooks", root)
    port = free_port()
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
           "--allow-root", "--IdentityProvider.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}"]
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=_env(tmp_path), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        def failure():
            log.flush()
            return "JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:]

        wait_until_serving(base + "/api/status", proc, timeout=90, interval=0.5, failure=failure)
        yield base, root
    finally:
        stop(proc)
        log.close()


def _pixels(png: bytes) -> np.ndarray:
    import matplotlib.image as mpimg

    return mpimg.imread(io.BytesIO(png), format="png")


def _expected_png(new_conf: float) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    from calibnb.widgets import figure_png, perturbation_explorer

    panel = perturbation_explorer(SAKAI_X, SAKAI_CORRECT, instance=7, n_bins=3, binning="mass")
    panel.update(new_conf=new_conf, show=False)
    return figure_png(panel.figure)


def _img_png(locator) -> bytes:
    src = locator.get_attribute("src")
    assert src and src.startswith("data:image/png;base64,"), src and src[:40]
    return base64.b64decode(src.split(",", 1)[1])


def _open_in_lab(browser, base: str, name: str):
    """A 1366x768 page of JupyterLab showing notebook ``name`` with its kernel idle (Lab's kernel dialog answered)."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(f"{base}/lab/tree/{name}")
    page.locator(".jp-Notebook").wait_for(timeout=60_000)
    select = page.get_by_role("button", name="Select", exact=True)  # kernel dialog, if Lab asks
    page.get_by_text("Python 3 (ipykernel) | Idle").or_(select).first.wait_for(timeout=60_000)
    if select.is_visible():
        select.click()
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
    return page


def test_notebook_04_in_jupyterlab_panel_follows_the_keyboard(lab):
    from playwright.sync_api import expect, sync_playwright

    base, root = lab
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = _open_in_lab(browser, base, NOTEBOOK)

            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            # Run All executes the cells in order in a fresh kernel: it is done when the last code cell shows
            # the count of code cells (collapsed and off-screen cells may show no prompt text).
            page.wait_for_function("""() => {
                const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent.trim());
                return p.length > 0 && p[p.length - 1] === `[${p.length}]:`;
            }""", timeout=120_000)

            slider = page.locator(".widget-slider", has_text="new confidence of instance 7")
            assert slider.count() == 1
            box = slider.locator("xpath=ancestor::div[contains(@class, 'widget-vbox')][1]")
            image = box.locator(".widget-output img")
            slider.scroll_into_view_if_needed()
            # After Run All the panel already shows its figure (the notebook left it at System Y, 0.70).
            expect(slider.locator(".widget-readout")).to_have_text("0.70", timeout=30_000)
            expect(image).to_have_count(1, timeout=30_000)
            start = _img_png(image.first)
            same = np.array_equal(_pixels(start), _pixels(_expected_png(0.7)))
            assert same, "after Run All the panel does not show the figure of its slider's value (0.70)"
            assert box.get_by_text("instance 7 is correct: confidence 0.80 → 0.70").count() == 1

            # On a 1366 x 768 projector every panel (controls, figure and readout with its verdicts) fits the
            # notebook's visible height, so its verdict is visible without scrolling.
            visible = page.locator(".jp-NotebookPanel-notebook").first.bounding_box()["height"]
            panels = page.locator(".widget-vbox", has=page.locator(".widget-output img"))
            heights = [panels.nth(i).bounding_box()["height"] for i in range(panels.count())]
            assert len(heights) >= 2 and max(heights) <= visible, (heights, visible)
            track = slider.locator(".noUi-handle")
            assert track.bounding_box()["width"] > 0
            assert slider.locator(".noUi-target").bounding_box()["width"] >= 300  # a slider one can aim
            track.focus()
            page.keyboard.press("ArrowLeft")
            expect(slider.locator(".widget-readout")).to_have_text("0.69", timeout=30_000)
            expected = _pixels(_expected_png(0.69))
            deadline = time.monotonic() + 30
            while True:
                shown = _pixels(_img_png(image.first))
                if shown.shape == expected.shape and np.array_equal(shown, expected):
                    break
                if time.monotonic() > deadline:
                    lag = np.array_equal(shown, _pixels(start))
                    pytest.fail("after the move to 0.69 the panel shows "
                                + ("the figure of 0.70: it lags one move" if lag else "a figure of neither value"))
                time.sleep(0.25)
            assert image.count() == 1  # one figure, replaced, not appended
            assert box.get_by_text("confidence 0.80 → 0.69").count() == 1

            page.keyboard.press("Control+s")
            time.sleep(2)
        finally:
            browser.close()
    saved = json.loads((root / NOTEBOOK).read_text(encoding="utf-8"))
    code = [c for c in saved["cells"] if c["cell_type"] == "code"]
    assert all(c.get("execution_count") for c in code), "not every cell ran"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, [f"{e['ename']}: {e['evalue']}" for e in errors]
    source = "".join("".join(c["source"]) for c in code)
    assert "perturbation_explorer(conf_x, correct_x, instance=7, n_bins=3" in source


@pytest.fixture()
def report_page(tmp_path):
    """Notebook 04's report page (quick parameters), written by the report command."""
    _need_browser()
    out = tmp_path / "reports"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "calibnb.report", "--notebooks", f"notebooks/{NOTEBOOK}",
                             "--out", str(out), "--params", "params/quick.yaml", "--no-progress"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True)
    try:
        output, _ = proc.communicate(timeout=300)
    finally:
        stop(proc)
    assert proc.returncode == 0, output[-3000:]
    return out / NOTEBOOK.replace(".ipynb", ".html")


def test_report_page_works_with_the_network_off(report_page):
    from playwright.sync_api import sync_playwright

    remote: list[str] = []

    def gate(route):
        url = route.request.url
        if url.startswith(("file:", "data:", "blob:", "about:")):
            route.continue_()
        else:
            remote.append(url)
            route.abort()

    with sync_playwright() as p:
        browser = launch(p)
        try:
            context = browser.new_context(viewport={"width": 1366, "height": 768}, offline=True)
            context.route("**/*", gate)
            page = context.new_page()
            page.goto(report_page.as_uri(), wait_until="load")
            assert page.title().startswith("Sakai 2024")
            # MathJax 3 (local copy, TeX fonts as SVG paths) typesets every formula: each is an SVG
            # drawn from glyph paths, none is an error, and no font or other file was asked for.
            page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise"
                                   " && document.querySelectorAll('mjx-container svg').length > 0", timeout=60_000)
            page.evaluate("() => MathJax.startup.promise")
            math = page.evaluate("""() => [...document.querySelectorAll('mjx-container')].map(c => [
                c.querySelectorAll('svg path, svg use').length, !!c.querySelector('[data-mml-node=merror]')])""")
            assert len(math) >= 3 and all(glyphs > 0 and not err for glyphs, err in math), math
            assert "$" not in page.locator(".jp-MarkdownOutput").first.inner_text()
            # Every image loaded (static figures and animation frames are embedded).
            images = page.evaluate("() => [...document.images].map(i => [i.complete && i.naturalWidth > 0, i.src.slice(0, 30)])")
            executed = json.loads(report_page.with_suffix(".ipynb").read_text(encoding="utf-8"))
            static = sum("image/png" in o.get("data", {}) for c in executed["cells"] for o in c.get("outputs", []))
            animations = page.locator(".animation").count()
            assert animations >= 1  # notebook 04's panel
            assert len(images) == static + animations and all(ok for ok, _ in images), images
            # The panel is a scrubbable animation: it opens on the frame of the value its table shows
            # (the slider's start, 0.80), prints that value under the scrubber, and moving the scrub
            # slider changes the frame and the printed value.
            import re

            starts = re.findall(r"the table is the readout there \(([^)]*)\)", page.content())
            shown = [v.inner_text() for v in page.locator(".animation .anim-value").all()]
            assert len(starts) == len(shown) == animations
            assert all(v.endswith(f" = {start}") for v, start in zip(shown, starts)), list(zip(shown, starts))
            panel = page.locator(".animation", has_text="new confidence of instance 7")
            scrub = panel.locator("input[type=range]")
            frame = panel.locator("img")
            value = panel.locator(".anim-value")
            scrub.scroll_into_view_if_needed()
            assert value.inner_text() == "new confidence of instance 7 = 0.80" and scrub.input_value() == "4"
            buttons = panel.locator(".anim-buttons button")
            assert buttons.count() == 9 and all(buttons.nth(i).locator("svg path").count() == 1 for i in range(9))
            assert all(buttons.nth(i).bounding_box()["width"] >= 20 for i in range(9))
            before = frame.get_attribute("src")
            scrub.focus()
            page.keyboard.press("End")
            deadline = time.monotonic() + 10
            while frame.get_attribute("src") == before and time.monotonic() < deadline:
                time.sleep(0.1)
            after = frame.get_attribute("src")
            assert after != before, "moving the animation's slider did not change the figure"
            assert value.inner_text() == "new confidence of instance 7 = 1.00"
            # No machine path anywhere on the page (the injected parameters show the reader's only).
            text = page.locator("body").inner_text()
            assert "/tmp/" not in text and str(ROOT) not in text and "/home/" not in text and "/root/" not in text
            assert page.locator("text=Interactive panel, static copy.").count() >= 1
        finally:
            browser.close()
    assert remote == [], f"the page asked the network for {remote}"


# The panels of notebooks 01, 02, 03 and 05 built as those notebooks build them (same constructors and options), on
# simulated inputs of the notebooks' shapes: a panel's height depends on its figure size, its controls and the rows
# of its readout (05: one row per model of the notebook), not on the numbers.
PANELS_NOTEBOOK = r'''
%matplotlib inline
import numpy as np
from calibnb import widgets
from calibnb.papers import baan2022, jiang2024, si2022

rng = np.random.default_rng(0)
logits = rng.normal(size=(10000, 100)) * 3                      # 01: a CIFAR-100 network's test logits
labels = rng.integers(0, 100, size=10000)
display(widgets.temperature_explorer(logits, labels, n_bins=10))
conf = rng.beta(5, 1, 5000)
display(si2022.resampling_explorer(conf, rng.uniform(size=5000) < conf, seed=0, n_bins=10))
ck_dev, ck_test = rng.integers(0, 10, size=(500, 5)), rng.integers(0, 10, size=(500, 5))
y_dev, y_test = rng.integers(0, 10, size=500), rng.integers(0, 10, size=500)
table = si2022.conscal_threshold_data(ck_dev, ck_dev[:, -1] == y_dev, ck_test, ck_test[:, -1] == y_test, n_bins=10)
display(si2022.conscal_explorer(table))
counts = rng.multinomial(100, [0.5, 0.3, 0.2], size=1500)       # 02 and 05: ChaosNLI, 100 votes per item
display(baan2022.human_temperature_explorer(rng.normal(size=(1500, 3)) * 2, counts, n_bins=10, hist_bins=30))
display(baan2022.votes_explorer(rng.dirichlet([1, 1, 1], size=1500), counts, hist_bins=30, seed=0))
names = [f"{m}-{s}{ts}" for m, seeds in (("RoBERTa", (0, 1, 2)), ("BERT", (0, 1))) for s in seeds for ts in ("", "-TS")]
probs = {name: rng.dirichlet([1, 1, 1], size=1500) for name in names + ["random", "oracle"]}
display(jiang2024.f_neutral_explorer(probs, counts, f_neutral=0.5))
display(jiang2024.ece_bins_explorer(probs, counts, n_bins=5))

# 03: its two panels as notebook 03 wires them (cells 'gupta-15', 'gupta-19', 'gupta-51': controls that redraw an
# Output with paper.plot_graph_rows / paper.plot_spline_figure), on a CIFAR-10-shaped network; here the controls and
# the Output share one box so the page measures them together, and each Output is drawn once (in the notebook the
# figure shows there as soon as a control moves).
import ipywidgets as ipw
import matplotlib.pyplot as plt
from calibnb import softmax, top_r
from calibnb.papers import gupta2021

p10 = softmax(rng.normal(size=(10000, 10)) * 3)
y10 = (rng.random((10000, 1)) < np.cumsum(softmax(np.log(p10) / 2), axis=1)).argmax(axis=1)
cal, test = np.arange(5000), np.arange(5000, 10000)


def drawn_panel(draw, controls, box):
    out = ipw.Output()
    with out:
        draw(**{name: w.value for name, w in controls.items()})
    return ipw.VBox([box, out])


def draw_kind(network, kind_text):
    s_cal, c_cal = top_r(p10[cal], y10[cal], r=1)
    s_test, c_test = top_r(p10[test], y10[test], r=1)
    after = [gupta2021.spline_columns(s_cal[:, None], c_cal[:, None], s[:, None], n_knots=6)[:, 0] for s in (s_cal, s_test)]
    rows = [("uncalibrated, test", gupta2021.spline_graph_data(s_test, c_test, n_knots=6)),
            ("spline, calibration split", gupta2021.spline_graph_data(after[0], c_cal, n_knots=6)),
            ("spline, test split", gupta2021.spline_graph_data(after[1], c_test, n_knots=6))]
    gupta2021.plot_graph_rows(rows, title=f"{network}, {kind_text}: test KS 4.00% -> 1.00% after a 6-knot spline")
    plt.show()


def draw_spline(network, knots, calibration_size):
    d = gupta2021.spline_figure_data(p10, y10, calibration_index=cal, test_index=test, n_knots=knots,
                                     calibration_size=calibration_size, seed=0)
    gupta2021.plot_spline_figure(d, title=network)
    plt.show()


kind = {"network": ipw.Dropdown(options=["cifar10/wideresnet_16_4"], description="network"),
        "kind_text": ipw.Dropdown(options=["top-2 (Figures 3-4)"], description="score")}
display(drawn_panel(draw_kind, kind, ipw.HBox(list(kind.values()))))
spline = {"network": ipw.Dropdown(options=["cifar10/wideresnet_16_4"], description="network"),
          "knots": ipw.IntSlider(value=6, min=2, max=30, description="n_knots", continuous_update=False),
          "calibration_size": ipw.IntSlider(value=5000, min=100, max=5000, step=100, description="calibration",
                                            continuous_update=False)}
display(drawn_panel(draw_spline, spline, ipw.VBox(list(spline.values()))))
'''


def test_every_paper_panel_fits_a_projector(lab):
    """At 1366 x 768 each panel of 01, 02, 03 and 05 (controls, figure, readout) fits the notebook's visible height."""
    import nbformat
    from playwright.sync_api import sync_playwright

    base, root = lab
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PANELS_NOTEBOOK.strip())],
                                  metadata=nbformat.read(ROOT / "notebooks" / NOTEBOOK, as_version=4).metadata)
    nbformat.write(nb, root / "panels.ipynb")
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = _open_in_lab(browser, base, "panels.ipynb")
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            page.wait_for_function("() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                                   ".some(e => e.textContent.trim() === '[1]:')", timeout=180_000)
            panels = page.locator(".widget-vbox", has=page.locator(".widget-output img"))
            page.wait_for_function("() => document.querySelectorAll('.widget-output img').length >= 9", timeout=60_000)
            visible = page.locator(".jp-NotebookPanel-notebook").first.bounding_box()["height"]
            heights = {}
            for i in range(panels.count()):
                panel = panels.nth(i)
                label = panel.locator(".widget-label").first.text_content() or f"panel {i}"
                heights[f"{i}: {label}"] = panel.bounding_box()["height"]
        finally:
            browser.close()
    print(f"visible {visible:.0f} px; panel heights", {k: round(h) for k, h in heights.items()})
    assert len(heights) >= 9, (heights, visible)
    too_tall = {k: round(h) for k, h in heights.items() if h > visible}
    assert not too_tall, f"taller than the visible notebook ({visible:.0f} px) at 1366 x 768: {too_tall}"
