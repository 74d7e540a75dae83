"""``numba.njit`` with an on-disk cache that concurrent processes cannot mix up (used only where numba is).

numba's own cache (``cache=True``) has two hazards for calibnb's kernels, whose
factories close over flags (one machine-code loop per variant), in a fresh
clone where pytest-xdist workers and notebook kernels compile at once:

1. **Numbered data files.** numba keeps one index file per function and names
   each compiled variant's data file by a counter (``<function>.1.nbc``, ...).
   Two processes that add *different* variants at the same time both take
   number 1; the index of one and the data of the other survive, and the next
   process loads one variant's machine code for the other's signature.
2. **Colliding symbols.** Every closure a factory makes has the same
   ``__qualname__``, and numba names a compiled function's machine code and
   its environment (the constants its code reads, such as the dtype of an
   array it returns) by qualname, argument types and a per-process counter.
   A process that compiles one variant and then loads another variant,
   compiled in another process whose counter stood at the same number, links
   two bodies under one symbol: the loaded variant reads the other's
   environment. Seen here in notebook 00's kernel (2026-11-25 and 11-26,
   "NRT_adapt_ndarray_to_python: 'descr' is NULL"); reproduced by
   ``tests/metrics/test_jit_cache.py``, where the same sequence with plain
   ``cache=True`` returns another variant's result silently (numba#10486
   reports the same collision for forked processes).

:func:`njit` removes both: each data file is named by a hash of its index key
(a lost index entry, from two processes rewriting the index at once, costs one
compilation later, never a wrong load), and a closure's ``__qualname__`` gets
its variant appended (``width_table__weighted_1``), so no two variants share a
symbol. The index key itself is computed here, deterministically, from the
function's code and the values of its closure cells and of the globals it
reads (numba's hashes a pickle of the cells, which for a compiled function
differs per process, and ignores globals: a constant imported from another
module could change without invalidating the cache). Files are written as
numba writes them (a temporary file, then ``os.replace``), the data file
before its index entry.

The classes extend two classes of ``numba.core.caching`` (``FunctionCache``,
``IndexDataCacheFile``, the same since numba 0.49). If a numba release
changes them, :func:`njit` compiles without a disk cache and says why in
:data:`CACHE_PROBLEM` (checked by ``tests/metrics/test_jit_cache.py``).
"""

from __future__ import annotations

import hashlib
import types

import numba
import numpy as np

__all__ = ["njit", "CACHE_PROBLEM", "UNCACHED"]

#: None when the key-named disk cache is in use; otherwise why functions compile without a cache.
CACHE_PROBLEM: str | None = None
#: Functions that numba would not cache (qualified name -> numba's reason); they compile per process.
UNCACHED: dict[str, str] = {}

try:
    from numba.core.caching import FunctionCache, IndexDataCacheFile
except ImportError as exc:  # pragma: no cover - a numba without the module
    FunctionCache = IndexDataCacheFile = None
    CACHE_PROBLEM = f"numba.core.caching cannot be imported ({exc})"


def _data_file_name(filename_base: str, key) -> str:
    """The data file of one compiled variant: ``<filename_base>.<24 hex digits of sha256(repr(key))>.nbc``."""
    return f"{filename_base}.{hashlib.sha256(repr(key).encode()).hexdigest()[:24]}.nbc"


if CACHE_PROBLEM is None:

    class _KeyNamedCacheFile(IndexDataCacheFile):
        """numba's index and data files, each data file named by its key (see the module's docstring)."""

        def __init__(self, cache_path, filename_base, source_stamp):
            super().__init__(cache_path, filename_base, source_stamp)
            self._filename_base = filename_base

        def save(self, key, data):
            name = _data_file_name(self._filename_base, key)
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

        def _index_key(self, sig, codegen):
            code = hashlib.sha256(self._py_func.__code__.co_code).hexdigest()
            deps = hashlib.sha256(_dependencies(self._py_func).encode()).hexdigest()
            return (sig, codegen.magic_tuple(), (code, deps))


def _describe(owner: str, name: str, value, seen: frozenset) -> str:
    """A text that is the same in every process for the same value (bool, int, float, str, module, or a
    function compiled by :func:`njit`); a TypeError naming ``owner`` and ``name`` for anything else."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return float(value).hex()
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    py_func = getattr(value, "py_func", None)
    if getattr(value, "_calibnb_jit", False) and py_func is not None:
        if py_func in seen:  # recursion (pairwise_sum calls itself)
            return f"jit {py_func.__qualname__}"
        code = hashlib.sha256(py_func.__code__.co_code).hexdigest()
        return f"jit {py_func.__qualname__} {code} ({_dependencies(py_func, seen)})"
    raise TypeError(f"calibnb.jit.njit: {owner} uses {name!r}, a {type(value).__name__}; a compiled kernel "
                    "may use only bools, numbers, strings, modules and other calibnb.jit.njit functions from "
                    "its closure and globals, so that its cache key is the same in every process.")


def _dependencies(py_func, seen: frozenset = frozenset()) -> str:
    """The closure cells and the globals ``py_func`` reads, described by :func:`_describe`, in a fixed order."""
    seen = seen | {py_func}
    owner = py_func.__qualname__
    code = py_func.__code__
    parts = [f"cell {n}={_describe(owner, n, c.cell_contents, seen)}"
             for n, c in zip(code.co_freevars, py_func.__closure__ or ())]
    names = sorted({n for n in _global_names(code) if n in py_func.__globals__})
    parts += [f"global {n}={_describe(owner, n, py_func.__globals__[n], seen)}" for n in names]
    return "; ".join(parts)


def _global_names(code) -> set:
    """The names ``code`` and the functions nested in it may read from globals (a superset: co_names also
    holds attribute names, which are only used when a global of that name exists)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _variant_suffix(py_func) -> str:
    """'' for a function without closure cells; else ``__`` and each cell but modules as ``name_value`` (bools
    as 0/1, ints as digits, anything else as 8 hex digits of its description), so that closures of one factory with
    different flags get different qualified names."""
    owner = py_func.__qualname__
    parts = []
    for name, cell in zip(py_func.__code__.co_freevars, py_func.__closure__ or ()):
        value = cell.cell_contents
        if isinstance(value, types.ModuleType):
            continue  # a module (numpy imported inside the factory) is the same in every variant
        if isinstance(value, (bool, np.bool_)):
            parts.append(f"{name}_{int(value)}")
        elif isinstance(value, (int, np.integer)):
            parts.append(f"{name}_{int(value)}".replace("-", "m"))
        else:
            text = _describe(owner, name, value, frozenset())
            parts.append(f"{name}_{hashlib.sha256(text.encode()).hexdigest()[:8]}")
    return "__" + "_".join(parts) if parts else ""


def njit(*, nogil: bool = False, inline: str = "never"):
    """``numba.njit(nogil=nogil, inline=inline)`` whose compiled variants are cached on disk, in key-named files.

    The two options are the ones calibnb's kernels use (numba's meaning); the cache is this module's, so
    ``cache=`` is not an option. A closure's ``__qualname__`` and ``__name__`` get its variant appended
    (``width_table__weighted_1``; see the module's docstring), and a function whose closure or globals hold
    a value without a stable description is refused with a TypeError when it is defined. Without a usable
    ``numba.core.caching`` the function is compiled per process, uncached (:data:`CACHE_PROBLEM`).
    """
    if not isinstance(nogil, bool):
        raise TypeError(f"nogil must be a bool; got {type(nogil).__name__}.")
    if inline not in ("never", "always"):
        raise ValueError(f"inline must be 'never' or 'always'; got {inline!r}.")

    def wrap(py_func):
        _dependencies(py_func)  # a TypeError now, at definition, for a value that cannot be keyed
        suffix = _variant_suffix(py_func)
        if suffix:
            py_func.__qualname__ += suffix  # see the module's docstring (2.): one symbol per variant
            py_func.__name__ += suffix
        dispatcher = numba.njit(nogil=nogil, inline=inline, cache=False)(py_func)
        dispatcher._calibnb_jit = True
        if CACHE_PROBLEM is None:
            try:
                dispatcher._cache = _KeyNamedFunctionCache(dispatcher.py_func)
            except RuntimeError as exc:  # numba's "cannot cache function ..." (no writable cache folder, ...)
                UNCACHED[py_func.__qualname__] = str(exc)
        return dispatcher

    return wrap
