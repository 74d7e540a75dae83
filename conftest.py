"""Settings for every test run from the repository root, notebooks included.

nbval executes ``notebooks/*.ipynb`` (``testpaths`` in pyproject.toml); its
kernels run headless like the report's, with ``CALIBNB_PANELS=static``, so
calibnb panels display static animations rather than live widgets. This hook
lives here, not in ``tests/conftest.py``, so that it also applies when only
``notebooks/`` is collected.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Run nbval's notebook cells with ``CALIBNB_PANELS=static`` (their kernel inherits it)."""
    if not type(item).__module__.startswith("nbval"):
        yield
        return
    previous = os.environ.get("CALIBNB_PANELS")
    os.environ["CALIBNB_PANELS"] = "static"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("CALIBNB_PANELS", None)
        else:
            os.environ["CALIBNB_PANELS"] = previous
