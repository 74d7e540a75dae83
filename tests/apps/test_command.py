"""The set-up of a command's own process (calibnb/apps/_command.py): jsonschema's IRI grammars are skipped, and
the process's objects are frozen out of the garbage collector before the interpreter ends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from audit_cli import audit_env

from calibnb.apps import _command

ROOT = Path(__file__).resolve().parents[2]


def test_skip_iri_grammars_blocks_only_what_is_not_imported_yet(monkeypatch):
    modules = {k: v for k, v in sys.modules.items() if k not in ("jsonschema", _command.IRI_GRAMMAR_MODULE)}
    monkeypatch.setattr(sys, "modules", modules)
    assert _command.skip_iri_grammars() is True and sys.modules[_command.IRI_GRAMMAR_MODULE] is None
    assert _command.skip_iri_grammars() is False  # already set: nothing more to do
    del sys.modules[_command.IRI_GRAMMAR_MODULE]
    sys.modules["jsonschema"] = object()  # jsonschema imported first: too late, the process is left alone
    assert _command.skip_iri_grammars() is False and _command.IRI_GRAMMAR_MODULE not in sys.modules


def test_the_commands_import_jsonschema_without_the_iri_grammars_and_still_validate():
    # -X importtime lists every module the command imports: jsonschema yes (nbformat), its IRI grammars no
    # (the report's __main__ block makes the same call; its --help imports no jsonschema to see it by)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "calibnb.audit", "--help"], capture_output=True,
                          text=True, env=audit_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "jsonschema" in imported and "papermill" in imported
    # (importtime lists the refused import itself, in microseconds; neither its parser nor its grammars load)
    assert "lark" not in imported and f"{_command.IRI_GRAMMAR_MODULE}.syntax_helpers" not in imported
    # a process set up the same way validates notebooks and the claims ledgers as before
    code = ("from calibnb.apps._command import skip_iri_grammars; assert skip_iri_grammars()\n"
            "import glob, nbformat\n"
            "from calibnb.record import load_ledger\n"
            "for p in sorted(glob.glob('notebooks/*.ipynb')): nbformat.validate(nbformat.read(p, as_version=4))\n"
            "for p in sorted(glob.glob('notebooks/claims/*.yaml')): load_ledger(p)\n"
            "import calibnb.record.reproduction as R; print(R.LEDGER_SCHEMA_CHECKED)\n"
            "import pathlib, tempfile; bad = pathlib.Path(tempfile.mkdtemp()) / 'bad.yaml'\n"
            "bad.write_text('notebook: x\\nclaims: 3\\n')\n"
            "try: load_ledger(bad)\n"
            "except R.LedgerError as e: print('refused')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=audit_env(),
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "refused"]  # checked against their JSON Schema, which still refuses


def _run_in_a_report_kernel(folder: Path, cells: list[str]) -> list:
    """Run ``cells`` as a notebook in ``folder`` by run_notebook (a kernel as the report starts); the executed cells."""
    import nbformat

    from calibnb.apps.report import run_notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, folder / "k.ipynb")
    run = run_notebook(folder / "k.ipynb", folder / "out.ipynb", kernel_name="python3", cwd=folder)
    assert run.ok, run.error
    return nbformat.read(folder / "out.ipynb", as_version=4).cells


def test_the_reports_kernels_skip_the_grammars_and_still_refuse_a_bad_ledger(tmp_path):
    """Kernels started by run_notebook (the report, the audit, the tests' notebook runs) run the exec line first;
    jsonschema then imports without the grammars, and a ledger's schema check still works there."""
    import json

    from calibnb.apps.report import KERNEL_ARGUMENTS

    assert f"--IPKernelApp.exec_lines={_command.KERNEL_EXEC_LINE}" in KERNEL_ARGUMENTS
    bad = tmp_path / "bad.yaml"
    bad.write_text("notebook: x\nclaims: 3\n")
    cells = _run_in_a_report_kernel(tmp_path, [
        "import json, sys\n"
        "import jsonschema\n"
        "from calibnb.record.reproduction import LedgerError, load_ledger\n"
        "try:\n"
        f"    load_ledger({str(bad)!r}); refused = False\n"
        "except LedgerError:\n"
        "    refused = True\n"
        "print(json.dumps({'lark': 'lark' in sys.modules, 'refused': refused}))"])
    assert json.loads(cells[0].outputs[0]["text"]) == {"lark": False, "refused": True}


def test_the_reports_kernels_freeze_what_exists_after_a_cell_that_imported_modules(tmp_path):
    """In a kernel of run_notebook, a cell that imports a module is followed by gc.freeze() (KERNEL_FREEZE_LINE);
    a cell that imports nothing is not; the notebook's namespace gets no name from it."""
    import json

    from calibnb.apps.report import KERNEL_ARGUMENTS, KERNEL_FREEZE_LINE

    assert f"--IPKernelApp.exec_lines={KERNEL_FREEZE_LINE}" in KERNEL_ARGUMENTS
    (tmp_path / "calibnb_test_fresh_module.py").write_text("VALUE = 1\n")  # imported by no one before cell 2
    cells = _run_in_a_report_kernel(tmp_path, [
        "import gc, json\nbase = gc.get_freeze_count()",
        "import calibnb_test_fresh_module\nmade = [[i] for i in range(10_000)]",
        "after_import = gc.get_freeze_count()\nkept = [[i] for i in range(10_000)]",
        # frozen objects that die leave the count: compare with the 10,000 lists each cell makes
        "print(json.dumps({'froze_after_the_import': after_import >= base + 10_000,\n"
        "                  'not_after_a_cell_without_import': gc.get_freeze_count() < after_import + 10_000,\n"
        "                  'names': sorted(set(globals()) & {'modules', 'freeze_after_imports', 'ip', 'sys'})}))"])
    got = json.loads(cells[-1].outputs[0]["text"])
    assert got == {"froze_after_the_import": True, "not_after_a_cell_without_import": True,
                   "names": ["sys"]}  # sys: the jsonschema line's import (KERNEL_EXEC_LINE)


def test_the_reports_kernels_draw_a_figure_only_to_show_it(tmp_path):
    """In a kernel of run_notebook, pyplot's redraw after each cell is unhooked (KERNEL_DRAW_ONCE_LINE): a figure
    left open at the end of a cell is drawn as often as rendering it to the cell's PNG takes, and still shown; the
    notebook's namespace gets no name from the line."""
    import json

    from calibnb.apps.report import KERNEL_ARGUMENTS, KERNEL_DRAW_ONCE_LINE

    assert f"--IPKernelApp.exec_lines={KERNEL_DRAW_ONCE_LINE}" in KERNEL_ARGUMENTS
    cells = _run_in_a_report_kernel(tmp_path, [
        "%matplotlib inline\nimport json\nimport matplotlib.pyplot as plt\nfrom matplotlib.figure import Figure\n"
        "draws = []\n_draw = Figure.draw\n"
        "def counting_draw(self, renderer):\n    draws.append(self)\n    return _draw(self, renderer)\n"
        "Figure.draw = counting_draw",
        "fig, ax = plt.subplots()\nax.plot([0, 1], [0, 1])\nbefore = len(draws)",  # left open: shown after the cell
        "shown = sum(d is fig for d in draws[before:])\n"
        # what rendering a figure to the PNG of a cell's output takes, done here by hand on a second figure
        "fig2, ax2 = plt.subplots()\nax2.plot([0, 1], [0, 1])\nn = len(draws)\n"
        "get_ipython().display_formatter.format(fig2)\nrender = len(draws) - n\nplt.close(fig2)\n"
        "hooks = [getattr(f, '__name__', '') for f in get_ipython().events.callbacks['post_execute']]\n"
        "print(json.dumps({'shown': shown, 'render': render, 'redraw_hooked': '_draw_all_if_interactive' in hooks,\n"
        "                  'names': sorted(set(globals()) & {'drop_pyplot_redraw', 'ip', 'redraw'})}))"])
    got = json.loads(cells[-1].outputs[0]["text"])
    assert got["render"] >= 1 and got == {"shown": got["render"], "render": got["render"], "redraw_hooked": False,
                                          "names": []}  # the line's code runs in a namespace of its own
    assert any("image/png" in o.get("data", {}) for o in cells[1].outputs)  # the figure is still shown


def test_the_reports_kernels_freeze_their_objects_at_exit_instead_of_collecting_them():
    """run_notebook's kernels run KERNEL_EXIT_LINE: at exit, before IPython's own exit work (which ends in a
    garbage collection), every object is moved out of the collector's reach; handlers registered before it
    still run after it (a temporary folder's clean-up, here the check itself)."""
    from calibnb.apps.report import KERNEL_ARGUMENTS, KERNEL_EXIT_LINE

    assert f"--IPKernelApp.exec_lines={KERNEL_EXIT_LINE}" in KERNEL_ARGUMENTS
    assert KERNEL_ARGUMENTS.index(f"--IPKernelApp.exec_lines={KERNEL_EXIT_LINE}") > KERNEL_ARGUMENTS.index(
        f"--IPKernelApp.exec_lines={_command.KERNEL_EXEC_LINE}")
    code = ("import atexit, gc\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"  # runs after the line's
            "print('frozen before exit:', gc.get_freeze_count() > 0)\n"
            f"exec({KERNEL_EXIT_LINE!r})\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["frozen before exit: False", "frozen at exit: True"]


@pytest.mark.parametrize("module", ["calibnb.audit", "calibnb.report"])
def test_the_commands_freeze_their_objects_before_the_interpreter_ends(module):
    """``python -m calibnb.audit`` and ``.report`` end through run_command: the process's objects are frozen out
    of the garbage collector when the exit handlers run, also after argparse's own exit (``--help``)."""
    code = ("import atexit, gc, runpy, sys\n"
            "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
            f"sys.argv = [{module!r}, '--help']\n"
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "frozen at exit: True"
