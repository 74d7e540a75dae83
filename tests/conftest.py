"""Shared test set-up.

* Matplotlib uses the Agg backend in tests (the Makefile also sets
  ``MPLBACKEND=Agg``; kernels started by papermill and nbval inherit it).
* ``CALIBNB_DATA_DIR``, when set to a relative path, is made absolute so that
  kernels running in ``notebooks/`` or a temporary folder find the data.
* nbval's cells of one notebook share one kernel, so they must run on one
  xdist worker, in order: under ``--dist loadgroup`` they are scheduled in the
  group ``<notebook stem>``, the group under which ``tests/test_notebooks.py``
  also runs that notebook's papermill cases.
* nbval's kernels run headless like the report's (``CALIBNB_PANELS=static``):
  see the repository's top-level ``conftest.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
if os.environ.get("CALIBNB_DATA_DIR"):
    os.environ["CALIBNB_DATA_DIR"] = os.path.abspath(os.environ["CALIBNB_DATA_DIR"])

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:  # `from nbcase import Case` in tests/notebook_cases/*.py
    sys.path.insert(0, str(TESTS_DIR))

# The case files are loaded by tests/test_notebooks.py, not collected (their
# names start with digits and they hold no tests of their own).
collect_ignore = ["notebook_cases"]


def pytest_unconfigure(config):
    """Freeze the session's objects out of the garbage collector as the process ends (each xdist worker and the
    controller): the interpreter's last collections would traverse every object the tests left, for nothing
    (calibnb.apps._command.run_command does the same for the commands)."""
    import gc

    gc.freeze()


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` that also keeps each notebook's nbval cells together.

    nbval's cells share one kernel, so a notebook's cells must run in order on
    one worker: they are scheduled under the group ``<notebook stem>``, the
    group of that notebook's papermill tests in ``tests/test_notebooks.py``.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class NotebookGroupScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            if path.endswith(".ipynb"):
                return Path(path).stem
            return super()._split_scope(nodeid)

    return NotebookGroupScheduling(config, log)

