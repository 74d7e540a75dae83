"""Headless Chromium and local servers for the browser tests: one launch code for
``tests/test_browser.py``, ``tests/test_site.py`` and ``tests/apps/test_audit_browser.py``.

Playwright drives Debian's ``/usr/bin/chromium`` (``CALIBNB_CHROMIUM`` overrides
the path); ``.ci/run`` installs it. A test that needs it calls
:func:`need_chromium`, which skips with the reason where Chromium or Playwright
is missing.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Callable

import pytest

CHROMIUM = os.environ.get("CALIBNB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]
# Every name resolves to nothing except 127.0.0.1: nothing can leave the machine, and what tries is logged.
OFFLINE_ARGS = ["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


def need_chromium() -> None:
    """Skip the calling test, with the reason, where Chromium or Playwright is not installed."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium; .ci/run installs it)")
    pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")


def launch(p, *, offline: bool = False):
    """Launch headless Chromium from a ``sync_playwright()`` handle ``p`` (``offline``: only 127.0.0.1 resolves)."""
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + (OFFLINE_ARGS if offline else []))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now.

    >>> 0 < free_port() < 65536
    True
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_serving(url: str, proc: subprocess.Popen, *, timeout: float, interval: float,
                       failure: Callable[[], str]) -> None:
    """Poll ``url`` until it answers; fail the test with ``failure()`` if ``proc`` exits or ``timeout`` s pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(failure())
            time.sleep(interval)


def stop(proc: subprocess.Popen) -> None:
    """Stop ``proc`` (started with ``start_new_session=True``) and everything in its process group, by PID."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    try:  # processes (JupyterLab's kernels) left in the group after the server stopped
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
