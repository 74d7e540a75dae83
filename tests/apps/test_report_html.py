"""The report's HTML pages work offline and a stuck or dead kernel fails only its own notebook.

Tiny throwaway notebooks run through :mod:`calibnb.report`; the pages are read
as text here (what they load, their title, what a panel became). The
real-browser test (``tests/test_browser.py``) opens them with the network off.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import nbformat
import pytest

from calibnb.apps import report

pytestmark = pytest.mark.xdist_group("report")

PANEL = (
    "%matplotlib inline\n"
    "from calibnb.widgets import perturbation_explorer\n"
    "panel = perturbation_explorer([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8], [1, 1, 0, 1, 0, 1, 1, 1, 1],\n"
    "                              instance=7, n_bins=3, binning='mass')\n"
    "display(panel)\n"
)
FORMULA = "The ECE is $\\sum_m \\frac{|B_m|}{N} |\\mathrm{acc}(B_m) - \\mathrm{conf}(B_m)|$."
RAW_WIDGET = "import ipywidgets as w\ndisplay(w.IntSlider(description='plain widget'))\n"


def _notebook(folder, stem, *cells, title="Tiny report page"):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(f"# {title}\n\n{FORMULA}"))
    params = nbformat.v4.new_code_cell("seed: int = 0\nresults_path = None\n")
    params.metadata["tags"] = ["parameters"]
    nb.cells.append(params)
    nb.cells.extend(nbformat.v4.new_code_cell(c) for c in cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.ipynb"
    nbformat.write(nb, str(path))
    return path


def remote_references(page: str) -> list[str]:
    """Every src/href of a script, stylesheet, image or frame that points off this machine."""
    refs = re.findall(r'<(?:script|link|img|iframe)\b[^>]*?\b(?:src|href)\s*=\s*["\']([^"\']+)', page, flags=re.I)
    refs += re.findall(r'import\(\s*["\'](https?://[^"\']+)', page)
    return [r for r in refs if re.match(r"(?i)^(https?:)?//", r)]


def test_pages_load_nothing_from_the_network_and_panels_are_animations(tmp_path):
    nbs = tmp_path / "nbs"
    _notebook(nbs, "a_panel", PANEL, RAW_WIDGET, title="Sakai's perturbation panel")
    out = tmp_path / "reports"
    assert report.main(["--notebooks", str(nbs / "*.ipynb"), "--out", str(out), "--no-progress"]) == 0
    page = (out / "a_panel.html").read_text(encoding="utf-8")
    assert "<title>Sakai&#39;s perturbation panel</title>" in page or "<title>Sakai's perturbation panel</title>" in page
    assert remote_references(page) == []
    # MathJax 3's one-file TeX-to-SVG build (the TeX fonts inside as SVG paths), copied and checked.
    assert 'src="mathjax/tex-svg-full.js"' in page
    copied = out / "mathjax" / report.MATHJAX_FILE
    assert hashlib.sha256(copied.read_bytes()).hexdigest() == report.MATHJAX_SHA256
    assert (out / "mathjax" / "LICENSE").exists()
    # No machine path on the page: the injected parameters cell shows the reader's parameters only.
    assert str(tmp_path) not in page and "/tmp/" not in page and ".report-" not in page
    assert "results_path: set by the report to its own results file" in page
    # The panel: a scrubbable animation (one frame per slider value) and its readout, no widget view or state.
    assert "Interactive panel, static copy." in page
    assert 'type="range"' in page and page.count("data:image/png;base64,") >= 6
    assert "Axiom U" in page  # the readout table
    assert "application/vnd.jupyter.widget-view+json" not in page
    assert "application/vnd.jupyter.widget-state+json" not in page
    assert "open the notebook in JupyterLab to use it" in page  # the plain widget became a note
    executed = nbformat.read(str(out / "a_panel.ipynb"), as_version=4)
    panel_outputs = next(c for c in executed.cells if "perturbation_explorer" in c.source).outputs
    assert [o.output_type for o in panel_outputs] == ["display_data"]
    assert "application/vnd.jupyter.widget-view+json" not in panel_outputs[0].data


def test_a_stuck_cell_and_a_dead_kernel_fail_only_their_notebook(tmp_path, monkeypatch):
    """... and each run writes its executed notebook once (papermill's save before and after every cell is off,
    issue 31); a run stopped by the timeout or a dead kernel still leaves it, with what ran and where it stopped."""
    import papermill.execute
    import papermill.iorw

    writes = []
    real = papermill.iorw.write_ipynb
    for module in (papermill.iorw, papermill.execute):
        monkeypatch.setattr(module, "write_ipynb", lambda nb, path: (writes.append(Path(path).stem), real(nb, path)))
    nbs = tmp_path / "nbs"
    _notebook(nbs, "a_stuck", "print('ran first')", "import time\ntime.sleep(60)\n", "print('never')")
    _notebook(nbs, "b_dies", "print('ran first')", "import os\nos._exit(1)\n", "print('never')")
    _notebook(nbs, "c_fine", "x = 1\n", "print(x)")
    out = tmp_path / "reports"
    status = report.main(["--notebooks", str(nbs / "*.ipynb"), "--out", str(out), "--no-progress",
                          "--timeout", "3"])
    assert status == 1
    assert sorted(writes) == ["a_stuck", "b_dies", "c_fine"]
    entries = {e["stem"]: e for e in json.loads((out / "index.json").read_text())}
    assert entries["c_fine"]["ok"] is True
    assert not entries["a_stuck"]["ok"] and "timed out" in entries["a_stuck"]["error"].lower()
    assert not entries["b_dies"]["ok"] and "DeadKernelError" in entries["b_dies"]["error"]
    for stem in ("a_stuck", "b_dies"):
        assert entries[stem]["elapsed"] < 50
        cells = [c for c in nbformat.read(out / f"{stem}.failed.ipynb", as_version=4).cells if c.cell_type == "code"]
        assert cells[-3].outputs[0]["text"] == "ran first\n" and cells[-2].metadata.papermill.start_time
        assert cells[-1].execution_count is None and not cells[-1].outputs


def test_cli_help_documents_the_default_cell_timeout(capsys):
    with pytest.raises(SystemExit):
        report.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "per-cell execution timeout" in text and "default: 300 s" in text


def test_what_an_interactive_output_draws_is_in_the_report(tmp_path):
    """A notebook-level ``interactive_output`` run headless: its figure is a plain output of the cell."""
    nbs = tmp_path / "nbs"
    _notebook(nbs, "a_interactive", "%matplotlib inline\nimport ipywidgets as w\nimport matplotlib.pyplot as plt\n"
              "from IPython.display import display\n"
              "def draw(k):\n    plt.plot([0, 1], [0, k])\n    plt.show()\n"
              "k = w.IntSlider(value=2, min=1, max=5)\n"
              "display(k, w.interactive_output(draw, {'k': k}))\n")
    out = tmp_path / "reports"
    assert report.main(["--notebooks", str(nbs / "*.ipynb"), "--out", str(out), "--no-progress"]) == 0
    executed = nbformat.read(str(out / "a_interactive.ipynb"), as_version=4)
    outputs = next(c for c in executed.cells if "interactive_output" in c.source).outputs
    assert any("image/png" in o.get("data", {}) for o in outputs)
    page = (out / "a_interactive.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page and remote_references(page) == []


def test_reader_parameters_are_shown_and_no_temporary_path(tmp_path):
    nbs = tmp_path / "nbs"
    _notebook(nbs, "a_params", "print(seed)\n")
    out = tmp_path / "reports"
    assert report.main(["--notebooks", str(nbs / "*.ipynb"), "--out", str(out), "--no-progress", "-p", "seed", "7"]) == 0
    executed = nbformat.read(str(out / "a_params.ipynb"), as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "seed = 7" in injected[0].source
    assert "results_path =" not in injected[0].source
    page = (out / "a_params.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", page)  # the code is highlighted span by span
    assert str(tmp_path) not in page and "seed = 7" in text and "results_path = \"" not in text
    # The run still wrote its results where the report asked (the index reads them).
    assert json.loads((out / "index.json").read_text())[0]["ok"] is True


def test_copy_mathjax_refuses_a_different_build(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "MATHJAX_SHA256", "0" * 64)
    with pytest.raises(RuntimeError, match="not the expected build"):
        report.copy_mathjax(tmp_path)
    assert not (tmp_path / "mathjax").exists()
