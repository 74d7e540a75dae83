"""Loaders for the real data the notebooks use, and the project's own small data.

Third-party files are never committed: ``data/manifest.json`` records where each
comes from (URL, commit, checksums, licence), and :func:`fetch` finds it in the
cache folder (``cache_dir``, else ``$CALIBNB_DATA_DIR``, else
``~/.cache/calibnb``) or downloads and verifies it. See ``data/README.md``.
"""

from ._arrays import UnsafePickleError
from ._registry import (
    ChecksumMismatchError,
    DataUnavailableError,
    data_dir,
    fetch,
    manifest_entry,
    registry,
)
