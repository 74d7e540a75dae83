"""Notebooks run through plain papermill check their parameters' types at once (issue 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_papermill_wrong_parameter_type_fails_in_the_import_cell(tmp_path):
    out = tmp_path / "out.ipynb"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", str(ROOT / "notebooks" / "04_sakai2024_hmr.ipynb"), str(out),
         "-p", "n_bins", "ten", "--cwd", str(ROOT / "notebooks")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode != 0
    assert "parameter n_bins must be an int; got 'ten' (str)" in proc.stderr + proc.stdout
    nb = json.loads(out.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    failed = [i for i, c in enumerate(code) if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    ran = [i for i, c in enumerate(code) if c.get("execution_count") is not None]
    # parameters, injected parameters, then the import cell fails: nothing after it ran
    assert failed == [2] and max(ran) == 2, (failed, ran)
    assert "check_parameters" in "".join(code[2]["source"])
