"""Input validation shared by every public entry point of calibnb.

Each checker converts its argument once, at the boundary, and returns a NumPy
array of a fixed dtype; metrics then work on clean arrays. Every problem raises
``ValueError`` or ``TypeError`` with a message that names the argument, says
what is wrong and how many values are affected, and gives the first offending
index and value, e.g.::

    conf has 3 values outside [0, 1]; first at index 7: 1.2

The fast paths cost a ``min``/``max`` pass over the data (NaN propagates through
both, so one comparison rejects NaN, +inf and out-of-range values together);
the slow, detailed path runs only when something is wrong. ``assert`` is never
used for user input.
"""

from __future__ import annotations

import numbers
import os
from typing import Any, Iterable

import numpy as np

__all__ = [
    "kernel_choice",
    "choose_compiled",
    "as_numeric_array",
    "as_float_array",
    "check_logits",
    "check_conf",
    "check_correct",
    "check_conf_correct",
    "check_conf_correct_batch",
    "check_sample_weight",
    "check_probs",
    "check_labels",
    "MAX_CLASSES",
    "MAX_BINS",
    "check_probs_labels",
    "check_human",
    "check_vote_counts",
    "check_enough_votes",
    "check_n_bins",
    "check_choice",
    "check_positive_int",
    "check_bool",
    "check_prediction_table",
    "check_scalar_in_range",
    "check_same_length",
    "check_1d_finite",
    "as_rng",
    "PARAMETER_TYPES",
    "parameter_type_error",
    "check_parameters",
    "seed_int",
    "check_unique_names",
    "check_yaml_text",
    "conf_problem",
    "correct_problem",
    "weight_problem",
    "merge_problems",
    "raise_problems",
    "finite_problem",
    "sum_problem",
    "count_problem",
    "label_problem",
    "mask_problem",
    "ColumnError",
]

#: Largest parameter file :func:`check_yaml_text` accepts (bytes) and most YAML aliases (``*name``) in it.
YAML_MAX_BYTES = 256 * 1024
YAML_MAX_ALIASES = 32


def _fmt(value: Any) -> str:
    """Short, stable text for a value in an error message."""
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def _first(mask: np.ndarray) -> int:
    """Flat index of the first True in ``mask``."""
    return int(np.flatnonzero(mask.ravel())[0])


def _describe_first(arr: np.ndarray, mask: np.ndarray) -> str:
    """'first at index i: v' (or 'row i' text for 2-D arrays)."""
    flat = _first(mask)
    if arr.ndim == 1:
        return f"first at index {flat}: {_fmt(arr[flat])}"
    idx = np.unravel_index(flat, arr.shape)
    return f"first at index {tuple(int(i) for i in idx)}: {_fmt(arr[idx])}"


def _values(n: int) -> str:
    return f"{n} value" if n == 1 else f"{n} values"


# ------------------------------------------------------------ located problems (one engine)
#
# Each check below finds the problems of one array, or of one chunk of a longer
# stream, as a record: how many values are bad and the first one, as (row, value)
# with the row counted from ``offset`` (where the chunk starts in the stream). Records
# of the chunks of one argument merge (counts add, the earliest row wins), so a
# chunked or parallel reader (calibnb.scale, calibnb.dask) raises exactly the message
# that the in-memory check raises on the whole array: :func:`raise_problems` writes
# both, naming the argument as the caller locates it (``conf``, ``conf column 'p'``).


def _record(key: str, values: np.ndarray, bad: np.ndarray, offset: int) -> dict:
    """``{key: count, key + "_first": (row, value)}`` of a mask with at least one True."""
    i = _first(bad)
    return {key: int(np.count_nonzero(bad)), key + "_first": (offset + i, _fmt(values[i]))}


def finite_problem(values: np.ndarray, *, offset: int = 0) -> dict | None:
    """NaN or infinite values of a float array, with rows from ``offset``; None if none.

    >>> finite_problem(np.array([0.5, np.nan, np.inf]), offset=10)
    {'nonfinite': 2, 'nonfinite_first': (11, 'nan')}
    """
    if values.size == 0:
        return None
    lo, hi = values.min(), values.max()
    if np.isfinite(lo) and np.isfinite(hi):
        return None
    return _record("nonfinite", values, ~np.isfinite(values), offset)


def conf_problem(conf: np.ndarray, *, offset: int = 0) -> dict | None:
    """Problems of 1-D float confidences (NaN/inf, outside [0, 1]) with rows from ``offset``; None if none.

    >>> conf_problem(np.array([0.2, 1.5, np.nan]), offset=100)
    {'nonfinite': 1, 'range': 1, 'nonfinite_first': (102, 'nan'), 'range_first': (101, '1.5')}
    """
    if conf.size == 0:
        return None
    lo, hi = conf.min(), conf.max()
    if lo >= 0.0 and hi <= 1.0:  # False for NaN as well
        return None
    nonfinite = ~np.isfinite(conf)
    out_range = (conf < 0.0) | (conf > 1.0)
    p: dict = {"nonfinite": int(np.count_nonzero(nonfinite)), "range": int(np.count_nonzero(out_range))}
    for key, mask in (("nonfinite", nonfinite), ("range", out_range)):
        if p[key]:
            p.update(_record(key, conf, mask, offset))
    return p


def correct_problem(correct: np.ndarray, *, offset: int = 0) -> dict | None:
    """Values of a 1-D numeric array that are not 0/1, with rows from ``offset``; None if none.

    >>> correct_problem(np.array([1, 0, 2, 3]), offset=10)
    {'bad': 2, 'bad_first': (12, '2')}
    """
    if correct.size == 0 or correct.dtype == np.bool_:
        return None
    lo, hi = correct.min(), correct.max()
    if correct.dtype.kind in "iu":
        ok = lo >= 0 and hi <= 1
    else:
        ok = lo >= 0.0 and hi <= 1.0 and not np.count_nonzero((correct != 0) & (correct != 1))
    if ok:
        return None
    return _record("bad", correct, (correct != 0) & (correct != 1), offset)


def weight_problem(weights: np.ndarray, *, offset: int = 0) -> dict | None:
    """Weights of a 1-D float array that are negative, NaN or infinite, with rows from ``offset``; None if none.

    >>> weight_problem(np.array([1.0, -1.0, np.inf]), offset=5)
    {'bad': 2, 'bad_first': (6, '-1.0')}
    """
    if weights.size == 0:
        return None
    lo, hi = weights.min(), weights.max()
    if lo >= 0.0 and np.isfinite(hi):
        return None
    return _record("bad", weights, ~(np.isfinite(weights) & (weights >= 0.0)), offset)


def sum_problem(sums: np.ndarray, *, tol: float, offset: int = 0) -> dict | None:
    """Row sums (of class probabilities) farther than ``tol`` from 1, with rows from ``offset``; None if none.

    >>> sum_problem(np.array([1.0, 0.9, 1.0005]), tol=1e-3, offset=3)
    {'bad': 1, 'bad_first': (4, '0.9')}
    """
    bad = np.abs(sums - 1.0) > tol
    return _record("bad", sums, bad, offset) if bad.any() else None


def count_problem(counts: np.ndarray, *, offset: int = 0) -> dict | None:
    """Values of a finite float array that are not whole non-negative numbers (vote counts); None if none.

    >>> count_problem(np.array([2.0, -1.0, 0.5]), offset=0)
    {'bad': 2, 'bad_first': (1, '-1.0')}
    """
    bad = (counts < 0) | (counts != np.round(counts))
    return _record("bad", counts, bad, offset) if bad.any() else None


def label_problem(labels: np.ndarray, n_classes: int, *, offset: int = 0, shown: np.ndarray | None = None
                  ) -> dict | None:
    """Labels (finite floats) that are not an integer in [0, n_classes), with rows from ``offset``; None if none.

    ``shown`` holds the values to quote (the labels as read), default ``labels``.

    >>> label_problem(np.array([0.0, 2.0, 1.5, 3.0]), 3, offset=0)
    {'bad': 2, 'bad_first': (2, '1.5')}
    """
    bad = (labels != np.round(labels)) | (labels < 0) | (labels >= n_classes)
    return _record("bad", labels if shown is None else shown, bad, offset) if bad.any() else None


def mask_problem(bad: np.ndarray, values: np.ndarray | None = None, *, offset: int = 0) -> dict | None:
    """The record of any check the caller wrote as a mask: count and first (row, value of ``values``); None if none.

    >>> mask_problem(np.array([False, True, True]), np.array(["a", "b", "c"]), offset=5)
    {'bad': 2, 'bad_first': (6, "'b'")}
    """
    bad = np.asarray(bad, dtype=bool)
    if not bad.any():
        return None
    if values is None:
        return {"bad": int(np.count_nonzero(bad)), "bad_first": (offset + _first(bad), None)}
    return _record("bad", np.asarray(values), bad, offset)


def merge_problems(a: dict | None, b: dict | None) -> dict | None:
    """Combine two problem records of the same argument (two chunks): counts add, the earliest row wins.

    >>> merge_problems({"bad": 1, "bad_first": (7, "2")}, {"bad": 2, "bad_first": (3, "5")})
    {'bad': 3, 'bad_first': (3, '5')}
    """
    if a is None:
        return b
    if b is None:
        return a
    out = {}
    for key in sorted(set(a) | set(b)):
        if key.endswith("_first"):
            out[key] = min(p[key] for p in (a, b) if key in p)
        else:
            out[key] = a.get(key, 0) + b.get(key, 0)
    return out


def raise_problems(problems: dict, names: dict | None = None) -> None:
    """Raise the message of the first problem (conf, then correct, then sample_weight); nothing if there is none.

    ``problems`` maps ``"conf"``, ``"correct"``, ``"sample_weight"`` to records
    of :func:`conf_problem`, :func:`correct_problem`, :func:`weight_problem`;
    ``names`` says how each argument is named where it was read (default: the
    key itself).

    >>> raise_problems({"conf": conf_problem(np.array([0.5, 2.0]), offset=40)}, {"conf": "conf column 'p'"})
    Traceback (most recent call last):
    ...
    ValueError: conf column 'p' has 1 value outside [0, 1]; first at index 41: 2.0.
    """
    names = names or {}
    p = problems.get("conf")
    name = names.get("conf", "conf")
    if p:
        if p.get("nonfinite"):
            n = p["nonfinite"]
            i, v = p["nonfinite_first"]
            raise ValueError(f"{name} has {_values(n)} that {'is' if n == 1 else 'are'} NaN or infinite; "
                             f"first at index {i}: {v}.")
        if p.get("range"):
            i, v = p["range_first"]
            raise ValueError(f"{name} has {_values(p['range'])} outside [0, 1]; first at index {i}: {v}.")
    p = problems.get("correct")
    name = names.get("correct", "correct")
    if p and p.get("bad"):
        n = p["bad"]
        i, v = p["bad_first"]
        raise ValueError(f"{name} must hold only 0/1 or bool; {_values(n)} {'is' if n == 1 else 'are'} not; "
                         f"first at index {i}: {v}.")
    p = problems.get("sample_weight")
    name = names.get("sample_weight", "sample_weight")
    if p and p.get("bad"):
        i, v = p["bad_first"]
        raise ValueError(f"{name} has {_values(p['bad'])} that are negative, NaN or infinite; "
                         f"first at index {i}: {v}; weights must be finite and >= 0.")


class ColumnError(ValueError):
    """A bad value in a column of a table (a predictions file): the message names the column, the problem and the rows.

    :meth:`at` writes it from a problem record of this module (how many rows,
    the first one and its value) and keeps where it was found, so that a reader
    of chunks can say it again at the rows of the whole file (:meth:`at_rows`):

    >>> err = ColumnError.at("p1", "probability outside [0, 1]", conf_problem(np.array([0.5, 2.0])), 2, key="range")
    >>> print(err)
    column 'p1': probability outside [0, 1] in 1 of 2 rows; first offending row 1 (value 2.0) (0-based data row).
    >>> print(err.at_rows(400))
    column 'p1': probability outside [0, 1] in 1 of the 2 rows 400..401; first offending row 401 (value 2.0) (0-based data row).

    Without a record (a problem of the whole column) it names the column only.
    """

    def __init__(self, message: str, *, located: dict | None = None):
        super().__init__(message)
        self.located = located

    @classmethod
    def at(cls, column: str, problem: str, record: dict | None = None, n: int = 0, *, key: str = "bad",
           start: int | None = None) -> "ColumnError":
        """The error for ``record[key]`` offending rows of ``n`` (rows from 0; ``start``: a chunk from that file row)."""
        if record is None:
            return cls(f"column {column!r}: {problem}.")
        count, (row, value) = record[key], record[key + "_first"]
        where = f"{n} rows" if start is None else f"the {n} rows {start}..{start + n - 1}"
        shown = "" if value is None else f" (value {value})"
        message = (f"column {column!r}: {problem} in {count} of {where}; first offending row "
                   f"{(start or 0) + row}{shown} (0-based data row).")
        return cls(message, located=dict(column=column, problem=problem, record=record, n=n, key=key))

    def at_rows(self, start: int) -> "ColumnError":
        """The same error for a chunk that starts at row ``start`` of the file (itself if it names no rows)."""
        if self.located is None:
            return self
        return self.at(**self.located, start=start)


def _refuse_sparse(x: Any, name: str) -> None:
    """A scipy.sparse input raises TypeError (np.asarray would turn it into a 0-d object array)."""
    if hasattr(x, "tocsr") and hasattr(x, "nnz"):
        raise TypeError(f"{name} is a sparse {type(x).__name__}; sparse input is not supported: pass a dense "
                        "array (x.toarray()).")


def as_numeric_array(x: Any, name: str) -> np.ndarray:
    """Convert ``x`` to an ndarray of real numbers, refusing strings, objects, complex and None with TypeError.

    The first step of every checker here; public so that modules with inputs of
    their own shape (logits, candidate sets) convert them the same way.
    """
    if x is None:
        raise TypeError(f"{name} must be an array of numbers, not None.")
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, not a string.")
    _refuse_sparse(x, name)
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged nested lists and the like
        raise TypeError(f"{name} could not be converted to an array: {exc}") from None
    if arr.dtype == object or arr.dtype.kind in "USVMm":
        raise TypeError(f"{name} must hold numbers; got dtype {arr.dtype}.")
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must hold real numbers; got complex dtype {arr.dtype}.")
    return arr


def as_float_array(x: Any, name: str, *, keep_float32: bool = False) -> np.ndarray:
    """Convert to a float64 ndarray (float32 kept as is if asked), refusing strings, objects and None."""
    arr = as_numeric_array(x, name)
    if check_bool(keep_float32, "keep_float32") and arr.dtype == np.float32:
        return arr
    return arr.astype(np.float64, copy=False)


def check_logits(logits: Any, name: str = "logits", *, keep_float32: bool = False) -> np.ndarray:
    """Return (N, K) logits as float64, K >= 2.

    NaN and +inf are refused. ``-inf`` is allowed (a log-probability of 0, or
    a padded slot of a candidate set, see :func:`calibnb.calibrators.pad_candidates`) as long as
    every row keeps at least one finite value.
    """
    arr = as_float_array(logits, name, keep_float32=check_bool(keep_float32, "keep_float32"))
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D with shape (N, K); got an array of shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; at least one value is needed.")
    if arr.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 classes (columns); got shape {arr.shape}.")
    lo, hi = arr.min(), arr.max()
    if np.isnan(lo) or np.isnan(hi) or hi == np.inf:
        bad = np.isnan(arr) | (arr == np.inf)
        n_bad = int(bad.sum())
        verb = "is" if n_bad == 1 else "are"
        raise ValueError(
            f"{name} has {_values(n_bad)} that {verb} NaN or infinite (only -inf is allowed, not NaN or +inf); "
            f"{_describe_first(arr, bad)}."
        )
    if lo == -np.inf:
        empty = ~np.isfinite(arr).any(axis=1)
        if empty.any():
            raise ValueError(
                f"{name} has {int(empty.sum())} row(s) with no finite value (all -inf); "
                f"first at row {int(np.flatnonzero(empty)[0])}."
            )
    return arr


def _check_ndim(arr: np.ndarray, ndim: int, name: str, what: str) -> None:
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {what}; got an array of shape {arr.shape}.")


def _check_not_empty(arr: np.ndarray, name: str) -> None:
    if arr.size == 0:
        raise ValueError(f"{name} is empty; at least one value is needed.")


def _check_finite(arr: np.ndarray, name: str) -> None:
    """Raise if arr (float) holds NaN or infinities."""
    bad = ~np.isfinite(arr)
    n_bad = int(np.count_nonzero(bad))
    if n_bad:
        verb = "is" if n_bad == 1 else "are"
        raise ValueError(f"{name} has {_values(n_bad)} that {verb} NaN or infinite; {_describe_first(arr, bad)}.")


def _check_unit_interval(arr: np.ndarray, name: str, offset: int = 0) -> None:
    """Raise unless every value is finite and in [0, 1]. Fast when they are."""
    if arr.ndim == 1:
        raise_problems({"conf": conf_problem(arr, offset=offset)}, {"conf": name})
        return
    lo = arr.min()
    hi = arr.max()
    if lo >= 0.0 and hi <= 1.0:  # False for NaN as well
        return
    _check_finite(arr, name)
    bad = (arr < 0.0) | (arr > 1.0)
    n_bad = int(np.count_nonzero(bad))
    raise ValueError(f"{name} has {_values(n_bad)} outside [0, 1]; {_describe_first(arr, bad)}.")


def _check_1d_of_length(x: Any, n: int | None, name: str, expected: str) -> np.ndarray:
    """A non-empty 1-D numeric array, of length ``n`` unless ``n`` is None (``expected`` says why)."""
    arr = as_numeric_array(x, name)
    _check_ndim(arr, 1, name, "1-D")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]} but {expected}; they must match.")
    _check_not_empty(arr, name)
    return arr


def check_1d_finite(x: Any, name: str) -> np.ndarray:
    """Return ``x`` as a non-empty, finite, 1-D float64 array.

    Used for real-valued scores (logits, scalar labels) that need no range.
    """
    arr = as_numeric_array(x, name)
    _check_ndim(arr, 1, name, "1-D")
    _check_not_empty(arr, name)
    arr = arr.astype(np.float64, copy=False)
    lo, hi = arr.min(), arr.max()
    if not (np.isfinite(lo) and np.isfinite(hi)):
        _check_finite(arr, name)
    return arr


def check_conf(conf: Any, name: str = "conf", *, offset: int = 0) -> np.ndarray:
    """Return confidences as a non-empty 1-D float64 array with values in [0, 1].

    ``name`` and ``offset`` locate the values in messages: the argument or
    column (``"conf column 'p'"``) and the row of the first value, for a chunk
    of a longer stream.

    >>> check_conf([0.2, 1.0])
    array([0.2, 1. ])
    >>> check_conf([0.2, 1.5, 7])
    Traceback (most recent call last):
    ...
    ValueError: conf has 2 values outside [0, 1]; first at index 1: 1.5.
    >>> check_conf([0.2, 1.5], "conf column 'p'", offset=1000)
    Traceback (most recent call last):
    ...
    ValueError: conf column 'p' has 1 value outside [0, 1]; first at index 1001: 1.5.
    """
    offset = check_positive_int(offset, "offset", minimum=0)
    arr = as_numeric_array(conf, name)
    _check_ndim(arr, 1, name, "1-D")
    _check_not_empty(arr, name)
    arr = arr.astype(np.float64, copy=False)
    _check_unit_interval(arr, name, offset)
    return arr


def check_correct(correct: Any, n: int | None = None, name: str = "correct", *, other: str = "conf",
                  offset: int = 0) -> np.ndarray:
    """Return 0/1 (or bool) correctness as a 1-D bool array.

    ``n``, when given, is the required length (that of ``other``); ``name`` and
    ``offset`` locate the values in messages (as in :func:`check_conf`).

    >>> check_correct([1, 0, True])
    array([ True, False,  True])
    >>> check_correct([1, 0.5])
    Traceback (most recent call last):
    ...
    ValueError: correct must hold only 0/1 or bool; 1 value is not; first at index 1: 0.5.
    """
    offset = check_positive_int(offset, "offset", minimum=0)
    arr = _check_1d_of_length(correct, n, name, f"{other} has length {n}")
    if arr.dtype == np.bool_:
        return arr
    raise_problems({"correct": correct_problem(arr, offset=offset)}, {"correct": name})
    return arr.astype(np.bool_)


def check_conf_correct(conf: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate a (conf, correct) pair: see :func:`check_conf` and :func:`check_correct`."""
    c = check_conf(conf)
    y = check_correct(correct, c.shape[0])
    return c, y


def check_same_length(a: Any, b: Any, name_a: str, name_b: str) -> None:
    """Raise if the first dimensions of ``a`` and ``b`` differ (both converted with :func:`as_numeric_array`)."""
    a, b = as_numeric_array(a, name_a), as_numeric_array(b, name_b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"{name_a if a.ndim == 0 else name_b} must be an array, not a scalar.")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"{name_b} has length {b.shape[0]} but {name_a} has length {a.shape[0]}; they must match.")


def check_probs(probs: Any, name: str = "probs", *, normalize: bool = False, atol: float = 1e-6) -> np.ndarray:
    """Return an (N, K) float64 array of class probabilities.

    Values must be finite and non-negative, with K >= 2 classes; each row must
    sum to 1 within ``atol``, and values above 1 by at most ``atol`` are
    clipped to 1 (so a top probability of ``1 + 5e-7`` is a confidence of 1,
    never a later "outside [0, 1]" error). With ``normalize=True`` rows are
    divided by their sums instead (an all-zero row is still an error).

    >>> check_probs([[0.5, 0.5], [0.2, 0.9]])
    Traceback (most recent call last):
    ...
    ValueError: probs has 1 row that does not sum to 1 (tolerance 1e-06); first at row 1: sum 1.1.
    """
    atol = check_scalar_in_range(atol, "atol", low=0.0)
    normalize = check_bool(normalize, "normalize")
    arr = as_numeric_array(probs, name)
    _check_ndim(arr, 2, name, "2-D with shape (N, K)")
    _check_not_empty(arr, name)
    if arr.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 classes (columns); got shape {arr.shape}.")
    arr = arr.astype(np.float64, copy=False)
    lo, hi = arr.min(), arr.max()
    if not (np.isfinite(lo) and np.isfinite(hi)):
        _check_finite(arr, name)
    if lo < 0:
        bad = arr < 0
        raise ValueError(
            f"{name} has {_values(int(np.count_nonzero(bad)))} below 0; {_describe_first(arr, bad)}."
        )
    sums = arr.sum(axis=1)
    if normalize:
        zero = sums <= 0
        if zero.any():
            raise ValueError(
                f"{name} has {int(zero.sum())} all-zero row(s) that cannot be normalised; first at row {_first(zero)}."
            )
        return arr / sums[:, None]
    bad = np.abs(sums - 1.0) > atol
    n_bad = int(np.count_nonzero(bad))
    if n_bad:
        i = _first(bad)
        rows = "row that does" if n_bad == 1 else "rows that do"
        raise ValueError(
            f"{name} has {n_bad} {rows} not sum to 1 (tolerance {atol:g}); first at row {i}: sum {sums[i]:.6g}."
        )
    if hi > 1.0:  # within the tolerance just accepted: clip, so that no later check sees conf > 1
        arr = np.minimum(arr, 1.0)
    return arr


def check_labels(
    labels: Any, n: int | None = None, n_classes: int | None = None, name: str = "labels", *,
    other: str = "probs", max_classes: int | None = None,
) -> np.ndarray:
    """Return integer class labels as a 1-D int64 array with values in [0, n_classes).

    Float arrays are accepted when every value is a whole number. ``n`` is the
    required length (the number of rows of the argument called ``other``).
    Without ``n_classes`` (the class count is inferred from the labels) the
    labels must stay below ``max_classes`` (default :data:`MAX_CLASSES`), so
    that a stray label such as ``2**40`` is an error naming ``labels``, not a
    request for terabytes of memory.

    >>> check_labels([0, 2, 1], 3, 3).tolist()
    [0, 2, 1]
    >>> check_labels([0, 3], n_classes=3)
    Traceback (most recent call last):
    ...
    ValueError: labels has 1 value outside [0, 3); first at index 1: 3.
    """
    arr = _check_1d_of_length(labels, n, name, f"{other} has {n} rows")
    if arr.dtype == np.bool_:
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "f":
        _check_finite(arr, name)
        frac = arr != np.floor(arr)
        if frac.any():
            raise ValueError(
                f"{name} must hold integer class indices; {_values(int(frac.sum()))} "
                f"{'is' if frac.sum() == 1 else 'are'} not whole; {_describe_first(arr, frac)}."
            )
        if np.abs(arr).max() >= 2.0**62:
            bad = np.abs(arr) >= 2.0**62
            raise ValueError(f"{name} has {_values(int(bad.sum()))} too large for a class index; "
                             f"{_describe_first(arr, bad)}.")
    arr = arr.astype(np.int64, copy=False)
    upper = n_classes if n_classes is not None else (MAX_CLASSES if max_classes is None else max_classes)
    bad = (arr < 0) | (arr >= upper)
    if bad.any():
        limit = "" if n_classes is not None else " (the class count is inferred from the labels; at most " \
            f"{upper} classes)"
        raise ValueError(
            f"{name} has {_values(int(bad.sum()))} outside [0, {upper}){limit}; {_describe_first(arr, bad)}."
        )
    return arr


#: Largest class count inferred from labels (:func:`check_labels` without ``n_classes``).
MAX_CLASSES = 100_000

#: Largest number of bins any binned metric or calibrator accepts (:func:`check_n_bins`).
MAX_BINS = 10**6


def check_probs_labels(probs: Any, labels: Any, *, normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Validate an ((N, K) probs, (N,) labels) pair."""
    p = check_probs(probs, normalize=normalize)
    y = check_labels(labels, p.shape[0], p.shape[1])
    return p, y


def check_human(human: Any, n: int | None = None, n_classes: int | None = None, name: str = "human") -> np.ndarray:
    """Return human vote counts or distributions as an (N, K) float64 array.

    Values must be finite and non-negative and no row may be all zero. Rows are
    *not* normalised here; see :func:`calibnb.human_distribution`.
    """
    arr = as_numeric_array(human, name)
    _check_ndim(arr, 2, name, "2-D with shape (N, K)")
    _check_not_empty(arr, name)
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} rows but probs has {n}; they must match.")
    if n_classes is not None and arr.shape[1] != n_classes:
        raise ValueError(f"{name} has {arr.shape[1]} classes (columns) but probs has {n_classes}; they must match.")
    arr = arr.astype(np.float64, copy=False)
    _check_finite(arr, name)
    neg = arr < 0
    if neg.any():
        raise ValueError(f"{name} has {_values(int(neg.sum()))} below 0; {_describe_first(arr, neg)}.")
    zero = ~(arr > 0).any(axis=1)
    if zero.any():
        raise ValueError(
            f"{name} has {int(zero.sum())} all-zero row(s) (an item with no votes); first at row {_first(zero)}."
        )
    return arr


def check_vote_counts(human: Any, name: str = "human") -> np.ndarray:
    """Return vote counts as an (N, K) int64 array of whole, non-negative numbers."""
    arr = check_human(human, name=name)
    frac = arr != np.floor(arr)
    if frac.any():
        flat = int(np.flatnonzero(frac.ravel())[0])
        idx = np.unravel_index(flat, arr.shape)
        raise ValueError(
            f"{name} must hold whole vote counts; {int(frac.sum())} value(s) are not; "
            f"first at index {tuple(int(i) for i in idx)}: {arr[idx].item()!r}."
        )
    return arr.astype(np.int64)


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int, requiring an integral value >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(value).__name__} {_fmt(value)}.")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}; got {int(value)}.")
    return int(value)


def check_prediction_table(predictions: Any, name: str = "predictions") -> np.ndarray:
    """Return an (N, C) table of per-checkpoint predictions (any labels: ints or strings), C >= 2.

    Missing predictions (NaN, None) are refused.

    >>> check_prediction_table([[0, 1], [2, 2]]).shape
    (2, 2)
    """
    if predictions is None or isinstance(predictions, (str, bytes)):
        raise TypeError(f"{name} must be an (N, C) array of per-checkpoint predictions.")
    _refuse_sparse(predictions, name)
    try:
        arr = np.asarray(predictions)
    except Exception as exc:
        raise TypeError(f"{name} could not be converted to an array: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D with shape (N, C) (instances x checkpoints); got shape {arr.shape}.")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} is empty; at least one instance is needed.")
    if arr.shape[1] < 2:
        raise ValueError(f"{name} needs at least 2 checkpoints (columns); got shape {arr.shape}.")
    if arr.dtype.kind == "f":
        bad = np.isnan(arr)
        if bad.any():
            i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), arr.shape)
            raise ValueError(f"{name} has {int(bad.sum())} NaN value(s); first at index ({i}, {j}).")
    elif arr.dtype == object:
        none = np.vectorize(lambda v: v is None or (isinstance(v, float) and v != v), otypes=[bool])(arr)
        if none.any():
            i, j = np.unravel_index(int(np.flatnonzero(none.ravel())[0]), arr.shape)
            raise ValueError(f"{name} has {int(none.sum())} missing (None/NaN) value(s); first at index ({i}, {j}).")
    return arr


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` if it is a bool (or numpy bool); a TypeError naming ``name`` otherwise.

    Strings such as ``"no"`` are truthy, so an option taking ``True``/``False``
    refuses them rather than reading them as ``True``.

    >>> check_bool(False, "percent")
    False
    >>> check_bool("no", "percent")
    Traceback (most recent call last):
    ...
    TypeError: percent must be True or False; got str 'no'.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {type(value).__name__} {_fmt(value)}.")
    return bool(value)


def check_n_bins(n_bins: Any, name: str = "n_bins") -> int:
    """Return a positive integer number of bins, at most :data:`MAX_BINS` (10**6).

    The upper limit keeps a typo such as ``n_bins=10**12`` an error naming
    the argument instead of an attempt to allocate terabytes.

    >>> check_n_bins(0)
    Traceback (most recent call last):
    ...
    ValueError: n_bins must be at least 1; got 0.
    >>> check_n_bins(10**12)
    Traceback (most recent call last):
    ...
    ValueError: n_bins must be at most 1000000; got 1000000000000.
    """
    n = check_positive_int(n_bins, name)
    if n > MAX_BINS:
        raise ValueError(f"{name} must be at most {MAX_BINS}; got {n}.")
    return n


def check_choice(value: Any, choices: Iterable[str], name: str) -> str:
    """Return ``value`` if it is one of ``choices``; otherwise a ValueError listing them.

    >>> check_choice("mass", ("width", "mass"), "binning")
    'mass'
    >>> check_choice("equal", ("width", "mass"), "binning")
    Traceback (most recent call last):
    ...
    ValueError: binning must be one of 'width', 'mass'; got 'equal'.
    """
    choices = tuple(choices)
    if value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}; got {_fmt(value)}.")
    return value


def check_scalar_in_range(
    value: Any, name: str, *, low: float | None = None, high: float | None = None,
    low_inclusive: bool = True, high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite float within the given bounds."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} {_fmt(value)}.")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite; got {v}.")
    if low is not None and (v < low or (v == low and not low_inclusive)):
        raise ValueError(f"{name} must be {'>=' if low_inclusive else '>'} {low:g}; got {v:g}.")
    if high is not None and (v > high or (v == high and not high_inclusive)):
        raise ValueError(f"{name} must be {'<=' if high_inclusive else '<'} {high:g}; got {v:g}.")
    return v


def as_rng(seed: Any = None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from a seed, a Generator, or None.

    The one seed convention of calibnb: ``seed=None`` draws fresh entropy from
    the operating system, an int (>= 0) gives a reproducible stream, a
    ``numpy.random.Generator`` is used as is (and advanced). calibnb never
    uses NumPy's global random state.

    Examples
    --------
    >>> bool(as_rng(0).integers(10) == as_rng(0).integers(10))
    True
    >>> g = np.random.default_rng(1)
    >>> as_rng(g) is g
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative int; got {seed}.")
        return np.random.default_rng(int(seed))
    raise TypeError(f"seed must be None, an int or a numpy.random.Generator; got {type(seed).__name__}.")


def check_sample_weight(sample_weight: Any, shape: tuple, name: str = "sample_weight") -> np.ndarray | None:
    """Return sample weights as a float64 array broadcastable to ``shape``, or None.

    Weights must be finite and non-negative, with shape ``(N,)`` or ``(S, N)``
    matching the items axis, and every row must have a positive total.

    >>> check_sample_weight([1, 2, 0], (3,))
    array([1., 2., 0.])
    >>> check_sample_weight([1, -2, 0], (3,))
    Traceback (most recent call last):
    ...
    ValueError: sample_weight has 1 value below 0; first at index 1: -2.0.
    """
    if not isinstance(shape, tuple) or not shape:
        raise TypeError(f"shape must be the non-empty shape tuple of the arrays weighted; got {shape!r}.")
    if sample_weight is None:
        return None
    arr = as_numeric_array(sample_weight, name)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D (N,) or 2-D (S, N); got an array of shape {arr.shape}.")
    if arr.shape[-1] != shape[-1]:
        raise ValueError(f"{name} has {arr.shape[-1]} items but conf has {shape[-1]}; they must match.")
    if arr.ndim == 2 and len(shape) == 2 and arr.shape[0] != shape[0]:
        raise ValueError(f"{name} has {arr.shape[0]} rows but conf has {shape[0]}; they must match.")
    arr = arr.astype(np.float64, copy=False)
    lo = arr.min()
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing total is reported below
        total = arr.sum(axis=-1)  # finite totals and lo >= 0: every weight is finite
    if not (np.isfinite(lo) and np.all(np.isfinite(total))):
        _check_finite(arr, name)
        # every weight finite but their total is not: the sums every weighted metric takes would be inf/NaN
        raise ValueError(f"{name} sums to more than the largest float ({np.finfo(np.float64).max:.3g}); "
                         f"largest weight {_fmt(float(np.max(arr)))}. Rescale the weights (divide them by their "
                         "maximum): only their ratios matter.")
    if lo < 0:
        neg = arr < 0
        raise ValueError(f"{name} has {_values(int(neg.sum()))} below 0; {_describe_first(arr, neg)}.")
    if np.any(total <= 0):
        where = "" if arr.ndim == 1 else f"; first at row {_first(np.atleast_1d(total <= 0))}"
        raise ValueError(f"{name} must have a positive total (all weights are 0{where}).")
    return arr


def check_conf_correct_batch(conf: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate (conf, correct) of shape (N,) or (S, N) (S systems of N items).

    1-D input goes through :func:`check_conf_correct`; 2-D input gets the same
    checks, with errors naming the (row, column) of the first bad value.

    >>> c, y = check_conf_correct_batch([[0.2, 0.9], [0.5, 0.5]], [[0, 1], [1, 1]])
    >>> c.shape, y.dtype
    ((2, 2), dtype('bool'))
    """
    c = as_numeric_array(conf, "conf")
    if c.ndim == 1:
        return check_conf_correct(c, correct)
    if c.ndim != 2:
        raise ValueError(f"conf must be 1-D (N,) or 2-D (S, N); got an array of shape {c.shape}.")
    _check_not_empty(c, "conf")
    c = c.astype(np.float64, copy=False)
    _check_unit_interval(c, "conf")
    y = as_numeric_array(correct, "correct")
    if y.shape != c.shape:
        raise ValueError(f"correct has shape {y.shape} but conf has shape {c.shape}; they must match.")
    if y.dtype != np.bool_:
        bad = (y != 0) & (y != 1)
        if np.any(bad):
            n_bad = int(np.count_nonzero(bad))
            raise ValueError(
                f"correct must hold only 0/1 or bool; {_values(n_bad)} {'is' if n_bad == 1 else 'are'} not; "
                f"{_describe_first(y, bad)}."
            )
        y = y.astype(np.bool_)
    return c, y


# ------------------------------------------------------------ notebook parameters

#: Parameter types a notebook's parameters cell may annotate, by name.
PARAMETER_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "bool": (bool,),
    "list": (list, tuple),
    "dict": (dict,),
}


def parameter_type_error(name: str, value: Any, type_name: str | None, *, default: Any = None) -> str | None:
    """The problem with ``value`` for a parameter annotated ``type_name``, or None if it fits.

    ``type_name`` is one of :data:`PARAMETER_TYPES` (``int`` refuses bools and
    floats; ``float`` takes ints; ``list`` takes tuples); any other name (an
    unannotated parameter) accepts every value. ``None`` is accepted where the
    default is ``None``.

    >>> parameter_type_error("n_bins", "ten", "int")
    "parameter n_bins must be an int; got 'ten' (str)"
    >>> parameter_type_error("seed", 1, "int") is None
    True
    """
    types = PARAMETER_TYPES.get(type_name or "")
    if types is None or (value is None and default is None):
        return None
    ok = isinstance(value, types) and not (isinstance(value, bool) and type_name != "bool")
    if ok:
        return None
    article = "an" if type_name[0] in "aeiou" else "a"
    return f"parameter {name} must be {article} {type_name}; got {value!r} ({type(value).__name__})"


def check_parameters(namespace: dict) -> None:
    """Check a notebook's parameters against the types its parameters cell annotates.

    Call it once, right after the parameters cell (papermill injects its values
    just after that cell), as ``cn.check_parameters(globals())``: every name
    annotated ``int``, ``float``, ``str``, ``bool``, ``list`` or ``dict`` in the
    notebook must hold a value of that type, so that ``-p n_bins ten`` fails at
    once with a message naming ``n_bins`` instead of deep inside a later cell.

    Raises
    ------
    TypeError
        Naming every parameter whose value does not fit its annotation.

    >>> check_parameters({"__annotations__": {"n_bins": int}, "n_bins": 10})
    >>> check_parameters({"__annotations__": {"n_bins": int}, "n_bins": "ten"})
    Traceback (most recent call last):
    ...
    TypeError: parameter n_bins must be an int; got 'ten' (str)
    """
    if not isinstance(namespace, dict):
        raise TypeError(f"namespace must be a dict (pass globals()); got {type(namespace).__name__}.")
    problems = []
    for name, annotation in dict(namespace.get("__annotations__", {})).items():
        type_name = getattr(annotation, "__name__", annotation if isinstance(annotation, str) else None)
        if name in namespace:
            problem = parameter_type_error(name, namespace[name], type_name)
            if problem:
                problems.append(problem)
    if problems:
        raise TypeError("; ".join(problems))


def seed_int(seed: Any = None) -> int:
    """An int seed that re-creates the same stream every time it is used.

    An int is returned as is; for ``None`` (fresh entropy) or a
    ``numpy.random.Generator`` one int is drawn once. Interactive panels use
    it so that a control value always redraws the same sample.

    Examples
    --------
    >>> seed_int(7)
    7
    >>> isinstance(seed_int(None), int)
    True
    """
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool):
        as_rng(seed)  # the same checks
        return int(seed)
    return int(as_rng(seed).integers(2**63 - 1))


def check_enough_votes(human: Any, n_votes: Any, *, what: str | None = None,
                       name: str = "human") -> tuple[np.ndarray, np.ndarray]:
    """Vote counts (as :func:`check_vote_counts`) and their per-item totals, every item with ``n_votes`` or more.

    ``what`` names where the requirement comes from in the message (default
    ``"n_votes=<n_votes>"``).

    >>> counts, totals = check_enough_votes([[3, 1], [2, 2]], 4)
    >>> totals.tolist()
    [4, 4]
    >>> check_enough_votes([[3, 1], [1, 1]], 4)
    Traceback (most recent call last):
    ...
    ValueError: human has 1 item(s) with fewer than n_votes=4 votes; first at row 1: 2 votes.
    """
    counts = check_vote_counts(human, name=name)
    n_votes = check_positive_int(n_votes, "n_votes")
    totals = counts.sum(axis=1)
    short = totals < n_votes
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise ValueError(f"{name} has {int(short.sum())} item(s) with fewer than {what or f'n_votes={n_votes}'} "
                         f"votes; first at row {i}: {int(totals[i])} votes.")
    return counts, totals


def check_unique_names(names: Iterable[Any], name: str = "columns") -> list[str]:
    """Return ``names`` as a list of str, refusing duplicates (a duplicated header is ambiguous).

    >>> check_unique_names(["p0", "p1", "label"])
    ['p0', 'p1', 'label']
    >>> check_unique_names(["label", "p0", "label"])
    Traceback (most recent call last):
    ...
    ValueError: columns has a duplicated name: 'label' appears 2 times (positions 0, 2); rename one of them.
    """
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise TypeError(f"{name} must be a sequence of names; got {type(names).__name__}.")
    out = [str(n) for n in names]
    seen: dict[str, list[int]] = {}
    for i, n in enumerate(out):
        seen.setdefault(n, []).append(i)
    dup = [(n, pos) for n, pos in seen.items() if len(pos) > 1]
    if dup:
        n, pos = dup[0]
        raise ValueError(f"{name} has a duplicated name: {n!r} appears {len(pos)} times "
                         f"(positions {', '.join(map(str, pos))}); rename one of them.")
    return out


def check_yaml_text(text: Any, name: str = "parameters", *, max_bytes: int = YAML_MAX_BYTES,
                    max_aliases: int = YAML_MAX_ALIASES) -> str:
    r"""Refuse a YAML text that is too large or uses too many aliases, before anything parses it into objects.

    A few hundred bytes of nested aliases (``b: [*a, *a, ...]``, "billion laughs")
    expand to 10^8 items when loaded; the text is scanned event by event (no
    alias is expanded) and refused when it holds more than ``max_aliases``
    aliases or more than ``max_bytes`` bytes. Used on every parameter file
    before papermill sees it (``calibnb.report --params``, ``calibnb.audit``).

    Returns
    -------
    str
        The text, unchanged.

    >>> check_yaml_text("all: {seed: 0}")
    'all: {seed: 0}'
    >>> check_yaml_text("a: &x [1, 2]\nb: [*x, *x]", max_aliases=1)
    Traceback (most recent call last):
    ...
    ValueError: parameters uses 2 YAML aliases (*name); at most 1 are allowed (aliases can expand a small file into a huge one).
    """
    import yaml

    if isinstance(text, bytes):
        raw = text
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{name} is not UTF-8 text: {exc}") from None
    elif isinstance(text, str):
        raw = None
    else:
        raise TypeError(f"{name} must be YAML text (str or bytes); got {type(text).__name__}.")
    max_bytes = check_positive_int(max_bytes, "max_bytes")
    max_aliases = check_positive_int(max_aliases, "max_aliases", minimum=0)
    size = len(raw) if raw is not None else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ValueError(f"{name} is {size:,} bytes; at most {max_bytes:,} are allowed for a parameter file.")
    aliases = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                aliases += 1
    except yaml.YAMLError as exc:
        raise ValueError(f"{name} is not valid YAML: {exc}") from None
    if aliases > max_aliases:
        raise ValueError(f"{name} uses {aliases} YAML aliases (*name); at most {max_aliases} are allowed "
                         "(aliases can expand a small file into a huge one).")
    return text


# ---------------------------------------------------------------------------
# CALIBNB_KERNEL: the one reading of the variable for every compiled kernel
# ---------------------------------------------------------------------------

_KERNEL_CHOICES = ("auto", "numpy", "numba")


def kernel_choice() -> str:
    """The value of the environment variable ``CALIBNB_KERNEL`` (default ``auto``), checked.

    ``auto``: numba's kernels when numba is importable and the input is large
    enough; ``numpy``: never compile; ``numba``: always, an error when numba is
    missing (:func:`choose_compiled`). Read here only, for the in-memory
    metrics' kernels (``calibnb/metrics/_kernels.py``) and the streaming
    kernel of :class:`calibnb.CalibrationStats` (``calibnb/scale/_kernel.py``).

    >>> kernel_choice() in ("auto", "numpy", "numba")
    True
    """
    v = os.environ.get("CALIBNB_KERNEL", "auto").strip().lower() or "auto"
    if v not in _KERNEL_CHOICES:
        raise ValueError(f"environment variable CALIBNB_KERNEL must be one of {', '.join(_KERNEL_CHOICES)}; got {v!r}.")
    return v


def choose_compiled(n_rows: int, min_rows: int, cache: dict, factory):
    """The compiled kernels ``factory()`` (built once into ``cache``) that ``CALIBNB_KERNEL`` allows, or None for NumPy.

    ``numpy``: None. ``auto``: None below ``min_rows`` rows or without numba.
    ``numba``: the kernels at any size, an ImportError naming the fix when
    numba is missing. Each caller keeps its own threshold and cache.

    >>> choose_compiled(10, 1 << 15, {}, dict) is None  # below the threshold under auto
    True
    """
    choice = kernel_choice()
    if choice == "numpy" or (choice == "auto" and n_rows < min_rows):
        return None
    if "kernels" not in cache:
        try:
            import numba  # noqa: F401
        except ImportError:
            cache["kernels"] = None
        else:
            cache["kernels"] = factory()
    k = cache["kernels"]
    if k is None and choice == "numba":
        raise ImportError("CALIBNB_KERNEL=numba but numba is not installed; install it "
                          "(pip install 'calibnb[dask]' or pip install numba) or unset CALIBNB_KERNEL.")
    return k
