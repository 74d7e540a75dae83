"""The audit command run as a subprocess, as users run it (shared by the tests of tests/apps/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: For runs whose checks need no interval and no fold count: the command's run without its bootstrap.
NO_BOOTSTRAP = ["--n-resamples", "0", "--heavy-resamples", "0", "--n-folds", "2"]


def audit_env() -> dict:
    """The environment of a command run: this checkout first on the path, figures without a display."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("MPLBACKEND", "Agg")
    return env


def run_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """``python -m calibnb.audit ARGS`` in a subprocess; its exit status, stdout and stderr."""
    return subprocess.run([sys.executable, "-m", "calibnb.audit", *map(str, args)], capture_output=True, text=True,
                          env=audit_env(), cwd=cwd, timeout=600)
