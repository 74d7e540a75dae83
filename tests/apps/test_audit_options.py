"""The audit's options are written once, in notebook 00's parameters cell (issue 25, item 4).

The command's --help, ``calibnb.audit``'s defaults and the notebook agree because
the first two read the third (``papermill.inspect_notebook``); these tests read
the notebook independently (nbformat + ast) and compare.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from calibnb.apps import audit as audit_app

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "00_audit_your_model.ipynb"


def _cell_defaults() -> dict:
    """Name -> default of every assignment in notebook 00's cell tagged ``parameters``, parsed on its own."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    out = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            out[target.id] = ast.literal_eval(node.value)
    return out


def test_every_setting_is_a_notebook_parameter_with_the_same_default():
    cell = _cell_defaults()
    read = audit_app.notebook_defaults()
    assert set(audit_app.SETTING_NAMES) <= set(cell)
    assert {k: read[k]["default"] for k in cell} == cell
    assert audit_app.MAX_ROWS == cell["max_rows"] and audit_app.STREAM_THRESHOLD == cell["stream_threshold"]


@pytest.mark.xdist_group("audit_help")  # the --help run is shared with tests/apps/test_audit_api.py
def test_cli_help_defaults_equal_the_notebook_parameters(audit_help):
    proc = audit_help
    assert proc.returncode == 0, proc.stderr
    text = re.sub(r"\s+", " ", proc.stdout)
    cell = _cell_defaults()
    for name in audit_app.SETTING_NAMES:
        flag = "--" + name.replace("_", "-")
        m = re.search(re.escape(f"{flag} {name.upper()} ") + r"(.*?)\(default: ([^)]*)\)", text)
        assert m, f"{flag} has no default in --help"
        assert ast.literal_eval(m.group(2)) == cell[name], flag


def test_the_python_call_takes_the_notebook_defaults(monkeypatch):
    """calibnb.audit / run_audit with a setting left out use the notebook's value (seen by the settings check)."""
    seen = {}

    def spy(settings):
        seen.update(settings)
        raise audit_app.AuditInputError("column '-': stop here")

    monkeypatch.setattr(audit_app, "_check_settings", spy)
    with pytest.raises(audit_app.AuditInputError, match="stop here"):
        audit_app.audit({"conf": [0.9, 0.8], "correct": [1, 0]}, n_bins=7)
    cell = _cell_defaults()
    assert seen == {**{k: cell[k] for k in audit_app.SETTING_NAMES}, "n_bins": 7}


def test_notebook_00_passing_every_setting_does_not_read_the_defaults_again(monkeypatch, tmp_path):
    """The notebook's kernel has every setting from its parameters cell: reading notebook 00 again there would
    import papermill (about 2 s of CPU per audit run) for values it already holds."""
    import pandas as pd

    cell = _cell_defaults()
    path = tmp_path / "p.csv"
    pd.DataFrame({"conf": [0.9, 0.8, 0.7, 0.6] * 15, "correct": [1, 0, 1, 1] * 15}).to_csv(path, index=False)

    def refuse():
        raise AssertionError("notebook 00's defaults were read although every setting was given")

    monkeypatch.setattr(audit_app, "notebook_defaults", refuse)
    params = {"predictions_path": str(path), **{k: cell[k] for k in audit_app.SETTING_NAMES}}
    assert audit_app.load_from_parameters(params, progress=False).n == 60
    with pytest.raises(AssertionError, match="defaults were read"):  # a missing setting still reads them
        audit_app.load_from_parameters({"predictions_path": str(path)}, progress=False)
