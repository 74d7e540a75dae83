"""Fixtures shared by the audit tests: runs of ``python -m calibnb.audit`` that several tests check.

A subprocess run of the command costs seconds (interpreter, imports); where
tests of different modules run the same command with the same arguments, it is
run once here and each test checks its part. The tests that use a fixture are
marked with the same ``xdist_group``, so that under ``--dist loadgroup`` one
worker runs them and builds the fixture once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def audit_help() -> subprocess.CompletedProcess:
    """``python -m calibnb.audit --help`` (200 columns wide, so that each option's help is on one line)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="200")
    env.setdefault("MPLBACKEND", "Agg")
    return subprocess.run([sys.executable, "-m", "calibnb.audit", "--help"], capture_output=True, text=True,
                          env=env, timeout=300)
