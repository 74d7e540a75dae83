"""Where the tests find the shared data mirror (used by the data test modules).

CI sets ``CALIBNB_DATA_DIR`` to it; from a checkout beside ``shared/`` it is
also found without the variable. Tests that need it are skipped, with the
reason shown, only when it is truly absent.
"""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def find_mirror() -> Path | None:
    """The folder holding the mirror's ``MANIFEST.json``, or None."""
    for candidate in (os.environ.get("CALIBNB_DATA_DIR"), str(ROOT.parent / "shared" / "data")):
        if candidate and (Path(candidate) / "MANIFEST.json").is_file():
            return Path(candidate)
    return None


MIRROR = find_mirror()
needs_mirror = pytest.mark.skipif(
    MIRROR is None, reason="the shared data mirror is absent (set CALIBNB_DATA_DIR to it); CI always has it"
)
