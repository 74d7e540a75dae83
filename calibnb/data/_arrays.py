"""Arrays-only unpickling, pickle → ``.npz`` conversion, and array-level digests.

Some upstream files (the wasscal CIFAR logits ``*.p`` and Kumar et al.'s
``cifar_probs.dat``) are Python pickles of a ``(scores, labels)`` pair of NumPy
arrays. Unpickling runs arbitrary code named by the pickle, so calibnb never
calls :func:`pickle.load` on them: :class:`ArrayOnlyUnpickler` resolves only the
handful of globals that NumPy array reconstruction needs and refuses every
other global with :class:`UnsafePickleError`, naming it.

The converted arrays are stored with :func:`numpy.savez_compressed` under the
names the manifest gives (e.g. ``logits``, ``labels``). ``np.savez`` writes zip
members with the fixed 1980-01-01 timestamp, so with the same NumPy and zlib
the bytes equal the shared mirror's and its ``sha256`` verifies; a different
NumPy/zlib can compress differently, so converted files are also verified by
:func:`arrays_digest` (names, dtypes, shapes and raw bytes of every array),
recorded as ``arrays_sha256`` in ``data/manifest.json``. A file matching
neither digest is an error.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from typing import Any, Mapping

import numpy as np

__all__ = ["UnsafePickleError", "ArrayOnlyUnpickler", "load_array_pickle", "arrays_digest", "pickle_to_npz_bytes"]


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle names a global outside the NumPy-array allow-list."""


def _checked_dtype(*args: Any) -> np.dtype:
    """``numpy.dtype`` as called by array pickles, refusing object dtypes.

    An object array would unpickle arbitrary Python objects as its items.
    """
    dt = np.dtype(*args)
    if dt.hasobject:
        raise UnsafePickleError(f"pickle asks for an object dtype ({dt!r}); only plain numeric arrays are accepted.")
    return dt


def _checked_reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
    """``_reconstruct`` as called by array pickles, refusing object dtypes.

    ``_reconstruct(ndarray, shape, b"O")`` alone (no BUILD step) already yields
    an object array of ``None``s, so the dtype is checked here too, not only in
    ``numpy.dtype``.
    """
    from numpy._core import multiarray as _ma

    if subtype is not np.ndarray:
        raise UnsafePickleError(f"pickle asks to rebuild a {subtype!r}; only numpy.ndarray is accepted.")
    _checked_dtype(dtype.decode("latin1") if isinstance(dtype, bytes) else dtype)
    return _ma._reconstruct(subtype, shape, dtype)


def _refuse_object_arrays(obj: Any, path: str = "the pickle") -> None:
    """Raise UnsafePickleError if ``obj`` (arrays inside tuples, lists, dicts) holds an object-dtype array."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise UnsafePickleError(f"{path} holds an object-dtype array ({obj.dtype!r}); only plain numeric "
                                    "arrays are accepted.")
    elif isinstance(obj, (tuple, list)):
        for i, item in enumerate(obj):
            _refuse_object_arrays(item, f"{path}[{i}]")
    elif isinstance(obj, dict):
        for key, item in obj.items():
            _refuse_object_arrays(item, f"{path}[{key!r}]")


def _latin1_encode(text: Any, encoding: str = "utf-8") -> bytes:
    """``_codecs.encode`` as used by protocol-2 NumPy pickles (``encode(str, 'latin1')``) only."""
    if not isinstance(text, str) or encoding != "latin1":
        raise UnsafePickleError(
            f"pickle calls _codecs.encode with ({type(text).__name__}, {encoding!r}); only (str, 'latin1') is accepted."
        )
    return text.encode("latin1")


def _allowed_globals() -> dict[tuple[str, str], Any]:
    """The globals that NumPy array pickles (NumPy 1.x and 2.x, protocols 2–5) refer to."""
    from numpy._core import multiarray as _ma  # the array reconstruction helpers

    allowed: dict[tuple[str, str], Any] = {}
    for module in ("numpy.core.multiarray", "numpy._core.multiarray"):
        allowed[(module, "_reconstruct")] = _checked_reconstruct
        allowed[(module, "scalar")] = _ma.scalar
    for module in ("numpy.core.numeric", "numpy._core.numeric"):
        allowed[(module, "_frombuffer")] = np._core.numeric._frombuffer  # protocol 5 (out-of-band buffers)
    allowed[("numpy", "ndarray")] = np.ndarray
    allowed[("numpy", "dtype")] = _checked_dtype
    allowed[("_codecs", "encode")] = _latin1_encode
    return allowed


class ArrayOnlyUnpickler(pickle.Unpickler):
    """An unpickler that can rebuild NumPy arrays and plain containers, nothing else.

    ``find_class`` permits only ``numpy(._core|.core).multiarray._reconstruct``
    and ``.scalar``, ``numpy(._core|.core).numeric._frombuffer``,
    ``numpy.ndarray``, ``numpy.dtype`` (non-object dtypes) and
    ``_codecs.encode(str, 'latin1')``; tuples, lists, dicts, strings and
    numbers need no global. Any other global raises :class:`UnsafePickleError`
    naming it.

    >>> import pickle
    >>> ArrayOnlyUnpickler(io.BytesIO(pickle.dumps(print))).load()
    Traceback (most recent call last):
    ...
    calibnb.data._arrays.UnsafePickleError: refused to unpickle the global 'builtins.print': only NumPy array reconstruction is allowed.
    """

    _ALLOWED: dict[tuple[str, str], Any] | None = None

    def find_class(self, module: str, name: str) -> Any:  # noqa: D102 (documented on the class)
        if ArrayOnlyUnpickler._ALLOWED is None:
            ArrayOnlyUnpickler._ALLOWED = _allowed_globals()
        try:
            return ArrayOnlyUnpickler._ALLOWED[(module, name)]
        except KeyError:
            raise UnsafePickleError(
                f"refused to unpickle the global '{module}.{name}': only NumPy array reconstruction is allowed."
            ) from None


def load_array_pickle(raw: bytes) -> Any:
    """Unpickle ``raw`` with :class:`ArrayOnlyUnpickler` (arrays and plain containers only).

    Every object dtype is refused, however the pickle asks for it (``numpy.dtype``,
    the ``_reconstruct`` type code, or an array in a container).
    """
    obj = ArrayOnlyUnpickler(io.BytesIO(raw), encoding="latin1").load()
    _refuse_object_arrays(obj)
    return obj


def arrays_digest(arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 of the content of named arrays, independent of the container's bytes.

    For each name in sorted order it hashes ``name``, the little-endian dtype
    string, the shape and the C-order bytes, each followed by a NUL byte.

    >>> a = {"x": np.arange(3, dtype="<i8")}
    >>> arrays_digest(a) == arrays_digest({"x": np.arange(3).astype(">i8")})
    True
    >>> arrays_digest(a) == arrays_digest({"x": np.arange(3, dtype="<i4")})
    False
    """
    h = hashlib.sha256()
    for name in sorted(arrays):
        arr = np.asarray(arrays[name])
        if arr.dtype.hasobject:
            raise TypeError(f"array {name!r} has an object dtype; it has no content digest.")
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
        h.update(name.encode("utf-8") + b"\0")
        h.update(arr.dtype.str.encode("ascii") + b"\0")
        h.update(repr(tuple(int(s) for s in arr.shape)).encode("ascii") + b"\0")
        h.update(arr.tobytes(order="C"))
        h.update(b"\0")
    return h.hexdigest()


def pickle_to_npz_bytes(raw: bytes, names: list[str], shapes: Mapping[str, Any], dtypes: Mapping[str, str]) -> bytes:
    """Convert a pickled sequence (or dict) of arrays to ``.npz`` bytes.

    ``names`` gives the array names in order (a tuple/list pickle is matched
    positionally, a dict pickle by key). Each array is brought to the
    manifest's shape (a ``(N, 1)`` column is flattened to ``(N,)``) and dtype
    (``same_kind`` casts only), then all are saved with
    :func:`numpy.savez_compressed`.
    """
    obj = load_array_pickle(raw)
    if isinstance(obj, Mapping):
        missing = [n for n in names if n not in obj]
        if missing:
            raise ValueError(f"the pickled dict lacks the arrays {missing}; it has keys {sorted(map(str, obj))}.")
        items = [obj[n] for n in names]
    elif isinstance(obj, (tuple, list)):
        if len(obj) != len(names):
            raise ValueError(f"the pickle holds {len(obj)} objects; expected {len(names)} arrays ({', '.join(names)}).")
        items = list(obj)
    else:
        raise ValueError(f"the pickle holds a {type(obj).__name__}; expected a tuple, list or dict of arrays.")
    out: dict[str, np.ndarray] = {}
    for name, item in zip(names, items):
        if not isinstance(item, np.ndarray):
            raise ValueError(f"pickled item {name!r} is a {type(item).__name__}, not a NumPy array.")
        shape = tuple(int(s) for s in shapes[name])
        arr = item
        if arr.shape != shape and arr.size == int(np.prod(shape)) and arr.ndim == 2 and 1 in arr.shape and len(shape) == 1:
            arr = arr.reshape(shape)
        if arr.shape != shape:
            raise ValueError(f"pickled array {name!r} has shape {arr.shape}; the manifest expects {shape}.")
        out[name] = arr.astype(np.dtype(dtypes[name]), casting="same_kind", copy=False)
    buf = io.BytesIO()
    np.savez_compressed(buf, **out)
    return buf.getvalue()
