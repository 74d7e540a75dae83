"""Every notebook executed end to end with papermill, its results checked.

For each ``notebooks/<stem>.ipynb`` the file ``tests/notebook_cases/<stem>.py``
must define ``check_default(results)`` and ``CASES`` (at least two
:class:`nbcase.Case`). This module

1. runs the notebook at its defaults (its only run at the defaults in the
   suite: nbval does not collect ``notebooks/*.ipynb``, see
   ``test_each_notebook_runs_once_at_its_defaults``) in a temporary folder with
   ``results_path`` set, reads back the results JSON and calls
   ``check_default(results)``. A notebook with a claims ledger
   (``notebooks/claims/<stem>.yaml``) must record every ledger claim, and every
   computed status must equal the ledger's ``expected`` (a flipped finding fails
   here until the ledger is updated in the same commit);
2. runs it once per case with the case's parameters and calls
   ``case.check(results, default_results)`` (a ledger notebook's statuses may
   differ from ``expected`` in a case run; every claim must still be recorded).
   A case that sets only ``seed`` is the notebook's second seed: a claim recorded
   on the same sources and units in both runs whose status flips fails the test
   unless the ledger marks it ``seed_sensitive`` (issue 26). Every paper notebook
   declares a case with another seed (``test_every_paper_notebook_has_a_seed_case``);
   where that case also shrinks sizes (03, 04: fewer networks or systems, so a
   status may move for another reason), the five seeds of the committed table
   ``data/seed_stability.json`` carry the check (tests/record/test_seed_stability.py).
   A case run's kernel builds every figure but renders none to an image (``CASE_KERNEL_CONFIG``) and animates each
   static panel on ``CASE_PANEL_FRAMES`` frames (issue 31: the rendering was a fifth to a third of a case run's CPU
   and no check reads it); a case may lower the notebook's
   cost parameters (bootstrap resamples, draws) where its check compares only what does not depend on them, and
   two cases may share a run where their parameters are independent (see each case file).

The kernel is ``python3`` (the Makefile installs it into the venv) and runs in
the ``notebooks/`` folder, as in Jupyter and nbval; data are found through
``CALIBNB_DATA_DIR`` (inherited) by ``calibnb.data``. A notebook's tests share
one ``xdist_group``, so the default run is computed once per worker and reused
by the cases.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import sys
import warnings
from pathlib import Path
from types import ModuleType
from unittest import mock

import pytest

from calibnb.apps.report import DEFAULT_CELL_TIMEOUT, NotebookRun, run_notebook

TESTS_DIR = Path(__file__).resolve().parent
ROOT = TESTS_DIR.parent
NOTEBOOKS_DIR = ROOT / "notebooks"
CASES_DIR = TESTS_DIR / "notebook_cases"
#: A notebook at its defaults should run well within this (seconds); slower runs warn.
DEFAULT_RUN_BUDGET = 60.0
#: A cell running longer than this fails the run instead of hanging the suite.
CELL_TIMEOUT = DEFAULT_CELL_TIMEOUT  # 300 s, as in the report

if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from nbcase import (Case, assert_clean_outputs, assert_complete_record, assert_no_unmarked_flip,  # noqa: E402
                    assert_statuses_match_ledger)

CLAIMS_DIR = NOTEBOOKS_DIR / "claims"


# Notebooks that are not paper reproductions: no claims ledger, no claims; their results JSON is
# checked only by their case file (00_audit_your_model writes audit.json, see calibnb.audit;
# 07_llm_confidence is a methods notebook on LLM confidence that reproduces no paper's claim).
NO_LEDGER = {"00_audit_your_model", "07_llm_confidence"}


def ledger_path(stem: str) -> Path | None:
    """The notebook's claims ledger, or None (a notebook that is not a reproduction, e.g. the audit)."""
    path = CLAIMS_DIR / f"{stem}.yaml"
    return path if path.exists() else None


def notebook_stems() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS_DIR.glob("*.ipynb"))


def load_case_module(stem: str) -> ModuleType:
    """Import ``tests/notebook_cases/<stem>.py`` (names may start with digits)."""
    path = CASES_DIR / f"{stem}.py"
    if not path.exists():
        raise FileNotFoundError(f"notebook {stem}.ipynb has no case file {path.relative_to(ROOT)}")
    spec = importlib.util.spec_from_file_location(f"notebook_cases_{stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases_or_none(stem: str) -> list[Case]:
    try:
        cases = getattr(load_case_module(stem), "CASES", [])
    except Exception:  # reported by test_notebook_declares_cases
        return []
    return [c for c in cases if isinstance(c, Case)]


def _group(stem: str):
    return pytest.mark.xdist_group(stem)


DEFAULT_PARAMS = [pytest.param(stem, marks=_group(stem), id=stem) for stem in notebook_stems()]
CASE_PARAMS = [
    pytest.param(stem, case, marks=_group(stem), id=f"{stem}-{case.id}")
    for stem in notebook_stems()
    for case in _cases_or_none(stem)
]


#: IPython configuration of the kernels of the case runs (issue 31): ``%matplotlib inline`` keeps no image format, so
#: every figure is still built by the notebook's plotting code (a ``plot_*`` that raises fails the case) but is shown
#: as its text repr, ``<Figure size ... with N Axes>``, instead of being rendered to a PNG (a tight bounding box draws
#: it twice). No result depends on the rendering, so every check, and the seed cases' status comparison, is what it
#: was; the default run renders every figure (its outputs are checked for the student view, assert_clean_outputs).
CASE_KERNEL_CONFIG = "c.InlineBackend.figure_formats = set()  # tests/test_notebooks.py: case runs render no figure\n"
#: Frames of each static panel animation in a case run (calibnb.widgets.FRAMES_ENV; the default run keeps all, up to
#: calibnb.widgets.MAX_FRAMES): the panel is still built, updated and rendered, at the ends of its slider and its start.
CASE_PANEL_FRAMES = 2
_FIGURE_REPR = re.compile(r"^<Figure size \d+x\d+ with \d+ Axes>$")


def rendered_figures(notebook) -> int:
    """Outputs of an executed notebook that are a matplotlib figure rendered as an image (path or nbformat node)."""
    import nbformat

    nb = notebook if hasattr(notebook, "cells") else nbformat.read(str(notebook), as_version=4)
    return sum(1 for cell in nb.cells if cell.get("cell_type") == "code" for out in cell.get("outputs", [])
               if out.get("output_type") in ("display_data", "execute_result")
               and any(m.startswith("image/") for m in out.get("data", {}))
               and _FIGURE_REPR.match(str(out.get("data", {}).get("text/plain", "")).strip()))


class NotebookRunner:
    """Runs notebooks into a temporary folder; caches each default run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._defaults: dict[str, NotebookRun] = {}
        # an IPython directory of its own for the case runs' kernels (CASE_KERNEL_CONFIG)
        self.case_ipython_dir = folder / "ipython_case_runs"
        profile = self.case_ipython_dir / "profile_default"
        profile.mkdir(parents=True, exist_ok=True)
        (profile / "ipython_kernel_config.py").write_text(CASE_KERNEL_CONFIG, encoding="utf-8")

    def run(self, stem: str, label: str, params: dict, *, case_run: bool = False) -> NotebookRun:
        """Execute ``stem`` with ``params``; a case run's kernel has CASE_KERNEL_CONFIG and CASE_PANEL_FRAMES."""
        from calibnb.widgets import FRAMES_ENV

        out = self.folder / f"{stem}.{label}"
        lean = {"IPYTHONDIR": str(self.case_ipython_dir), FRAMES_ENV: str(CASE_PANEL_FRAMES)}
        # the kernel started inside inherits the environment; patch.dict puts the old one back
        with mock.patch.dict(os.environ, lean) if case_run else contextlib.nullcontext():
            return run_notebook(NOTEBOOKS_DIR / f"{stem}.ipynb", f"{out}.ipynb", parameters=params,
                                results_path=f"{out}.json", kernel_name="python3", cwd=NOTEBOOKS_DIR,
                                timeout=CELL_TIMEOUT)

    def default(self, stem: str) -> NotebookRun:
        if stem not in self._defaults:
            self._defaults[stem] = self.run(stem, "default", {})
        return self._defaults[stem]


@pytest.fixture(scope="session")
def runner(tmp_path_factory) -> NotebookRunner:
    return NotebookRunner(tmp_path_factory.mktemp("notebook_runs"))


def results_of(run: NotebookRun, what: str) -> dict:
    """The run's results JSON, or a test failure that shows the notebook's error."""
    if not run.ok:
        pytest.fail(f"{run.stem} ({what}) failed: {run.error}\n{run.traceback or ''}\n"
                    f"(executed notebook: {run.output_path})", pytrace=False)
    if run.results is None:
        pytest.fail(f"{run.stem} ({what}) wrote no results JSON; it must pass results_path to "
                    "Reproduction(...) and call rep.finish().", pytrace=False)
    results = run.results
    if run.stem not in NO_LEDGER:
        assert set(results) >= {"paper", "claims", "results"}, f"results JSON keys: {sorted(results)}"
    return results


@pytest.mark.parametrize("stem", DEFAULT_PARAMS)
def test_notebook_declares_cases(stem):
    """Every notebook has a case file with check_default and at least two cases."""
    module = load_case_module(stem)
    assert callable(getattr(module, "check_default", None)), f"{stem}: define check_default(results)"
    cases = getattr(module, "CASES", None)
    assert isinstance(cases, list) and all(isinstance(c, Case) for c in cases), \
        f"{stem}: CASES must be a list of nbcase.Case"
    assert len(cases) >= 2, f"{stem}: declare at least two parameter sets (got {len(cases)})"
    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids), f"{stem}: case ids must be unique: {ids}"


@pytest.mark.parametrize("stem", DEFAULT_PARAMS)
def test_notebook_default(stem, runner):
    run = runner.default(stem)
    results = results_of(run, "defaults")
    if run.elapsed > DEFAULT_RUN_BUDGET:
        warnings.warn(f"{stem} took {run.elapsed:.0f} s at its defaults (budget {DEFAULT_RUN_BUDGET:.0f} s)",
                      stacklevel=1)
    ledger = ledger_path(stem)
    if stem in NO_LEDGER:
        assert ledger is None, f"{stem} is listed in NO_LEDGER but has a ledger {ledger}"
    elif ledger is None:
        pytest.fail(f"{stem} has no claims ledger notebooks/claims/{stem}.yaml (the ledger-free record was removed)")
    else:
        assert_statuses_match_ledger(results, ledger, f"{stem} at defaults")
    load_case_module(stem).check_default(results)
    # The student view (issue 30): no raw library warning, no machine path in what the notebook shows.
    assert_clean_outputs(run.output_path, f"{stem} at defaults")


@pytest.mark.parametrize(("stem", "case"), CASE_PARAMS)
def test_notebook_case(stem, case, runner):
    default = results_of(runner.default(stem), "defaults")
    run = runner.run(stem, case.id, case.params, case_run=True)
    results = results_of(run, f"case {case.id} {case.params}")
    if rendered_figures(run.output_path):  # a speed matter only (issue 31): warn, as for a slow default run
        warnings.warn(f"{stem} case {case.id} rendered figures although its kernel was configured not to "
                      f"(CASE_KERNEL_CONFIG); the case runs cost more CPU than they need", stacklevel=1)
    ledger = ledger_path(stem)
    if stem in NO_LEDGER:
        pass
    elif ledger is None:
        pytest.fail(f"{stem} has no claims ledger notebooks/claims/{stem}.yaml (the ledger-free record was removed)")
    else:
        assert_complete_record(results, ledger, f"{stem} case {case.id}")
        if set(case.params) == {"seed"}:  # a second seed alone: a status may flip only where the ledger marks it
            assert_no_unmarked_flip(results, default, ledger, f"{stem} case {case.id}")
    case.check(results, default)


#: Notebooks outside nbval's test paths that a test module runs itself (and checks what they show).
RUN_ELSEWHERE = {"notebooks/teaching/answers_01_02_03_05_06.ipynb": "tests/test_teaching.py"}


def test_each_notebook_runs_once_at_its_defaults():
    """No notebook runs twice at the same parameters: papermill's default run here, or nbval (testpaths), not both.

    A cell that raises fails ``test_notebook_default`` as it would fail nbval (same headless kernel, same folder),
    so the notebooks run here must not also be collected by nbval; every other notebook (the answer keys of
    ``notebooks/teaching``) must be under a test path, or run by the test module RUN_ELSEWHERE names, or it would
    run nowhere.
    """
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    testpaths = [(ROOT / p).resolve() for p in config["testpaths"]]

    def collected_by_nbval(path: Path) -> bool:
        return any(path.resolve().is_relative_to(t) for t in testpaths)

    papermill = {NOTEBOOKS_DIR / f"{stem}.ipynb" for stem in notebook_stems()}
    twice = sorted(p.name for p in papermill if collected_by_nbval(p))
    assert not twice, f"run at their defaults by both nbval (testpaths) and test_notebook_default: {twice}"
    others = [p for p in NOTEBOOKS_DIR.rglob("*.ipynb") if p not in papermill and ".ipynb_checkpoints" not in p.parts]
    assert others, "the answer keys of notebooks/teaching are expected here"
    nowhere = sorted(str(p.relative_to(ROOT)) for p in others
                     if not collected_by_nbval(p) and str(p.relative_to(ROOT)) not in RUN_ELSEWHERE)
    assert not nowhere, f"notebooks that no test runs (add their folder to testpaths): {nowhere}"
    for notebook, module in RUN_ELSEWHERE.items():
        assert not collected_by_nbval(ROOT / notebook), f"{notebook} is run by {module}: nbval would run it again"
        assert Path(notebook).name in (ROOT / module).read_text(encoding="utf-8"), f"{module} does not run {notebook}"


@pytest.mark.parametrize("stem", [s for s in notebook_stems() if ledger_path(s) is not None])
def test_every_paper_notebook_has_a_seed_case(stem):
    """Every notebook with a ledger runs at two seeds at least: its default and a case that sets ``seed``."""
    cases = _cases_or_none(stem)
    assert any("seed" in c.params and c.params["seed"] != 0 for c in cases), (
        f"{stem}: declare a Case that sets another seed (quick sizes are fine), so that an unmarked status flip "
        "between seeds fails the suite")


def test_rendered_figures_counts_images_of_figures_only():
    """The speed guard of the case runs, without a kernel: a figure shown as an image counts, its text repr does not."""
    import nbformat

    def nb_with(*outputs):
        cell = nbformat.v4.new_code_cell("plt.show()")
        cell.outputs = [nbformat.v4.new_output("display_data", data=d) for d in outputs]
        return nbformat.v4.new_notebook(cells=[cell])

    figure = "<Figure size 640x480 with 1 Axes>"
    assert rendered_figures(nb_with({"image/png": "iVBORw0KGgo=", "text/plain": figure})) == 1
    assert rendered_figures(nb_with({"text/plain": figure})) == 0  # CASE_KERNEL_CONFIG: the repr only
    assert rendered_figures(nb_with({"image/png": "iVBORw0KGgo=", "text/plain": "<IPython.core.display.Image>"})) == 0


def test_case_runs_cap_the_frames_of_static_panels(monkeypatch):
    """CASE_PANEL_FRAMES reaches sweep_values through the environment (a kernel inherits it); a bad value is refused."""
    import ipywidgets as w

    from calibnb.widgets import FRAMES_ENV, MAX_FRAMES, sweep_values

    slider = w.FloatSlider(value=0.37, min=0.0, max=1.0, step=0.01)
    monkeypatch.delenv(FRAMES_ENV, raising=False)
    full = sweep_values(slider)
    assert CASE_PANEL_FRAMES + 1 < len(full) <= MAX_FRAMES + 1  # round values every 0.2, the start value
    monkeypatch.setenv(FRAMES_ENV, str(CASE_PANEL_FRAMES))
    capped = sweep_values(slider)
    assert capped == [0.0, 0.37, 1.0]  # the ends of the slider and its start value
    assert sweep_values(w.IntSlider(value=3, min=1, max=100)) == [1, 3, 100]
    for bad in ("1", "two", "-3"):
        monkeypatch.setenv(FRAMES_ENV, bad)
        with pytest.raises(ValueError, match=FRAMES_ENV):
            sweep_values(slider)


def test_an_unmarked_flip_between_seeds_fails(tmp_path):
    """The guard of seed stability, without a kernel: a status that flips between two seeds fails unless marked."""
    import yaml

    entry = {"id": "lowers", "quote": "A lowers B", "locator": "§3", "kind": "range", "rule": "direction",
             "paper": "higher", "refuted_by": -0.1, "sources": ["a"], "expected": "reproduces", "reason": "r"}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({"paper": "Tiny", "notebook": "tiny", "claims": [entry]}, sort_keys=False))
    seed0 = {"claims": [{"id": "lowers", "kind": "range", "status": "reproduces", "sources": [{"source": "a"}]}]}
    seed1 = {"claims": [{"id": "lowers", "kind": "range", "status": "inconclusive", "sources": [{"source": "a"}]}]}
    assert_no_unmarked_flip(seed0, seed0, path, "same seed")  # no flip
    with pytest.raises(AssertionError, match=r"claim 'lowers' .* flips between seeds \(flips: reproduces 1/2, "
                                             r"inconclusive 1/2\)"):
        assert_no_unmarked_flip(seed1, seed0, path, "seed 1")
    marked = dict(entry, seed_sensitive={"reproduces": 3, "inconclusive": 2})
    path.write_text(yaml.safe_dump({"paper": "Tiny", "notebook": "tiny", "claims": [marked]}, sort_keys=False))
    assert_no_unmarked_flip(seed1, seed0, path, "seed 1, marked")
    # a claim counted over other units (a quick size) is not compared
    seed1["claims"][0]["sources"] = [{"source": "b"}]
    path.write_text(yaml.safe_dump({"paper": "Tiny", "notebook": "tiny", "claims": [entry]}, sort_keys=False))
    assert_no_unmarked_flip(seed1, seed0, path, "other sources")


def test_flipped_ledger_status_fails(tmp_path):
    """The guard of the findings, without a kernel: a ledger copy with one expected status flipped fails."""
    import shutil

    import yaml

    from calibnb import Reproduction

    ledger = {"paper": "Tiny 2024", "notebook": "tiny", "claims": [
        {"id": "value", "quote": "x = 0.5", "locator": "Table 1", "kind": "number", "rule": "value", "paper": 0.5,
         "tol": 0.005, "tol_reason": "2 decimals", "refuted_by": 0.6, "sources": ["a", "b"], "expected": "partly",
         "reason": "fails on b"},
        {"id": "better", "quote": "A beats B", "locator": "§3", "kind": "verdict", "rule": "value", "paper": True,
         "refuted_by": False, "sources": ["a"], "expected": "does-not-reproduce", "reason": "B wins on a"}]}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(ledger, sort_keys=False))
    rep = Reproduction.from_ledger(path, results_path=tmp_path / "tiny.json")
    rep.check("value", ours=0.501, source="a")
    rep.check("value", ours=0.6, source="b")
    rep.check("better", ours=False, source="a")
    rep.finish()
    results = json.loads((tmp_path / "tiny.json").read_text())
    assert_statuses_match_ledger(results, path)  # the committed ledger: passes

    altered_dir = tmp_path / "altered"
    altered_dir.mkdir()
    ledger["claims"][1]["expected"] = "reproduces"  # deliberately flipped
    altered = altered_dir / "tiny.yaml"
    altered.write_text(yaml.safe_dump(ledger, sort_keys=False))
    with pytest.raises(AssertionError) as info:
        assert_statuses_match_ledger(results, altered)
    message = str(info.value)
    assert "claim 'better'" in message and "computed status 'does-not-reproduce'" in message
    assert "ledger expects 'reproduces'" in message and str(altered) in message
    assert "claim 'value'" not in message

    # a claim of the ledger that the run did not record fails too
    shutil.copy(path, altered)
    results["claims"] = results["claims"][:1]
    with pytest.raises(AssertionError, match="missing from the results: better"):
        assert_statuses_match_ledger(results, altered)
