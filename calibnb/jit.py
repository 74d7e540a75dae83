"""``numba.njit`` with an on-disk cache that concurrent processes cannot mix up (used only where numba is).

numba's own cache (``cache=True``) keeps one index file per function and names
each compiled variant's data file by a counter: ``<function>.1.nbc``,
``<function>.2.nbc``, ... A process adding a variant reads the index, takes the
first free number, and writes the index and the data file. Two processes that
add *different* variants of one function at the same time (pytest-xdist
workers and notebook kernels in a fresh clone: another argument type, or
another flag of a factory's closure) both take number 1; the index of one and
the data of the other survive, and the next process loads one variant's
machine code for the other's signature. That was seen here (2026-11-25,
"NRT_adapt_ndarray_to_python: 'descr' is NULL"), and the in-memory kernels
then compiled in every process (about 2 s of CPU per notebook kernel that uses
them).

:func:`njit` names each data file by a hash of its index key (the signature,
the target, the hashes of the function's code and of its closure's values),
so a data file can only ever hold the variant its name says; a lost index
entry (two processes rewriting the index at once) costs one compilation
later, never a wrong load. Files are written as numba writes them (a
temporary file, then ``os.replace``), the data file before its index entry.

The class extends two classes of ``numba.core.caching`` (``FunctionCache``,
``IndexDataCacheFile``, the same since numba 0.49). If a numba release
changes them, :func:`njit` compiles without a disk cache and says why in
:data:`CACHE_PROBLEM` (checked by ``tests/metrics/test_jit_cache.py``).
"""

from __future__ import annotations

import hashlib

import numba

__all__ = ["njit", "CACHE_PROBLEM", "UNCACHED", "data_file_name"]

#: None when the key-named disk cache is in use; otherwise why functions compile without a cache.
CACHE_PROBLEM: str | None = None
#: Functions that numba would not cache (qualified name -> numba's reason); they compile per process.
UNCACHED: dict[str, str] = {}

try:
    from numba.core.caching import FunctionCache, IndexDataCacheFile
except ImportError as exc:  # pragma: no cover - a numba without the module
    FunctionCache = IndexDataCacheFile = None
    CACHE_PROBLEM = f"numba.core.caching cannot be imported ({exc})"


def data_file_name(filename_base: str, key) -> str:
    """The data file of one compiled variant: ``<filename_base>.<24 hex digits of sha256(repr(key))>.nbc``."""
    return f"{filename_base}.{hashlib.sha256(repr(key).encode()).hexdigest()[:24]}.nbc"


if CACHE_PROBLEM is None:

    class _KeyNamedCacheFile(IndexDataCacheFile):
        """numba's index and data files, each data file named by its key (see the module's docstring)."""

        def __init__(self, cache_path, filename_base, source_stamp):
            super().__init__(cache_path, filename_base, source_stamp)
            self._filename_base = filename_base

        def save(self, key, data):
            name = data_file_name(self._filename_base, key)
            self._save_data(name, data)  # first the data, so that an index entry never names a missing file
            overloads = self._load_index()
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)

    class _KeyNamedFunctionCache(FunctionCache):
        def __init__(self, py_func):
            super().__init__(py_func)
            self._cache_file = _KeyNamedCacheFile(cache_path=self._cache_path,
                                                  filename_base=self._impl.filename_base,
                                                  source_stamp=self._impl.locator.get_source_stamp())


def njit(**options):
    """``numba.njit(**options)`` whose compiled variants are cached on disk under key-named files.

    ``cache`` must not be given (the cache is this module's). Without a usable
    ``numba.core.caching`` the function is compiled per process, uncached.
    """
    if "cache" in options:
        raise TypeError("calibnb.jit.njit sets the cache itself; do not pass cache=")

    def wrap(py_func):
        dispatcher = numba.njit(cache=False, **options)(py_func)
        if CACHE_PROBLEM is None:
            try:
                dispatcher._cache = _KeyNamedFunctionCache(dispatcher.py_func)
            except RuntimeError as exc:  # numba's "cannot cache function ..." (no writable cache folder, ...)
                UNCACHED[py_func.__qualname__] = str(exc)
        return dispatcher

    return wrap
