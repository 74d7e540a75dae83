"""Shared test set-up.

* Matplotlib uses the Agg backend in tests (the Makefile also sets
  ``MPLBACKEND=Agg``; kernels started by papermill and nbval inherit it).
* ``CALIBNB_DATA_DIR``, when set to a relative path, is made absolute so that
  kernels running in ``notebooks/`` or a temporary folder find the data.
* nbval's cells of one notebook share one kernel, so they must run on one
  xdist worker: each is marked ``xdist_group(<notebook stem>)``, the group
  under which ``tests/test_notebooks.py`` also runs that notebook's papermill
  cases (``pytest -n 2 --dist loadgroup`` keeps a group together).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
if os.environ.get("CALIBNB_DATA_DIR"):
    os.environ["CALIBNB_DATA_DIR"] = os.path.abspath(os.environ["CALIBNB_DATA_DIR"])

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:  # `from nbcase import Case` in tests/notebook_cases/*.py
    sys.path.insert(0, str(TESTS_DIR))

# The case files are loaded by tests/test_notebooks.py, not collected (their
# names start with digits and they hold no tests of their own).
collect_ignore = ["notebook_cases"]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if type(item).__module__.startswith("nbval"):
            item.add_marker(pytest.mark.xdist_group(Path(str(item.fspath)).stem))
