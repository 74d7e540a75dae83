"""Shared helpers of the calibrators: input checks and the fitted-state guard."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import as_numeric_array, check_1d_finite, check_correct, check_labels

__all__: list[str] = []


class NotFittedError(ValueError, AttributeError):
    """Raised when ``transform`` (or another method needing a fit) is called before ``fit``.

    Subclasses ``ValueError`` and ``AttributeError``, as scikit-learn's does,
    so that ``except ValueError`` catches it.
    """


def check_is_fitted(obj: Any, attribute: str) -> None:
    """Raise :class:`NotFittedError` unless ``obj`` has the fitted ``attribute``."""
    if not hasattr(obj, attribute):
        name = type(obj).__name__
        raise NotFittedError(f"This {name} is not fitted yet; call {name}.fit(...) before using it.")


def as_float_array(x: Any, name: str, *, keep_float32: bool = False) -> np.ndarray:
    """Convert to a float64 ndarray (float32 kept as is if asked), refusing strings, objects and None."""
    arr = as_numeric_array(x, name)
    if keep_float32 and arr.dtype == np.float32:
        return arr
    return arr.astype(np.float64, copy=False)


def check_logits(logits: Any, name: str = "logits", *, keep_float32: bool = False) -> np.ndarray:
    """Return (N, K) logits as float64, K >= 2.

    NaN and +inf are refused. ``-inf`` is allowed (a log-probability of 0, or
    a padded slot of a candidate set, see :func:`pad_candidates`) as long as
    every row keeps at least one finite value.
    """
    arr = as_float_array(logits, name, keep_float32=keep_float32)
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
        i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), arr.shape)
        raise ValueError(
            f"{name} has {n_bad} value{'s' if n_bad != 1 else ''} that are NaN or +inf; "
            f"first at index ({i}, {j}): {arr[i, j]!r}."
        )
    if lo == -np.inf:
        empty = ~np.isfinite(arr).any(axis=1)
        if empty.any():
            raise ValueError(
                f"{name} has {int(empty.sum())} row(s) with no finite value (all -inf); "
                f"first at row {int(np.flatnonzero(empty)[0])}."
            )
    return arr


def check_scores_1d(scores: Any, name: str = "scores") -> np.ndarray:
    """Return a non-empty finite 1-D float64 array (any range)."""
    return check_1d_finite(scores, name)


def check_int_labels(labels: Any, n: int, n_classes: int, name: str = "labels") -> np.ndarray:
    """Integer labels in [0, n_classes) of length n."""
    return check_labels(labels, n, n_classes, name=name)


def check_binary(y: Any, n: int, name: str = "correct", other: str = "conf") -> np.ndarray:
    """0/1 (or bool) array of length n, as bool."""
    return check_correct(y, n, name=name, other=other)
