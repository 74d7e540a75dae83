"""Chunk kernels shared by calibnb.stats and calibnb.dask (not public API).

Cell of a confidence on the fine grid, the side-table test, per-chunk
validation records that merge across chunks and raise the in-memory messages
with global indices, and the reliability-table frame.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SHRINK", "NEAR_ABS", "cell_of", "near_edge", "conf_problem", "correct_problem", "weight_problem",
           "merge_problems", "raise_problems", "reliability_frame"]

# Same factor as the in-memory equal-width binning (calibnb.metrics): an edge
# value j/G lands in the cell it closes.
SHRINK = 1.0 - 2.0**-50
# A value with conf*G within this distance of an integer goes to the exact side
# table (the rounding of conf*G is below 2**-49 * G, about 2e-10).
NEAR_ABS = 1e-7


def _fmt(value) -> str:
    """Short text for a value in an error message (as calibnb.validation writes it)."""
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def _values(n: int) -> str:
    return f"{n} value" if n == 1 else f"{n} values"


def cell_of(conf: np.ndarray, n_cells: int) -> np.ndarray:
    """Cell ``max(ceil(conf * G * shrink) - 1, 0)`` of every confidence (the kernel's formula).

    Monotone in ``conf`` (a float product and ``ceil`` are), so ties share a cell
    and every item of cell ``j`` is below every item of cell ``j + 1``.
    """
    k = np.ceil(conf * (n_cells * SHRINK))
    k -= 1.0
    np.maximum(k, 0.0, out=k)
    return k.astype(np.intp)



def near_edge(conf: np.ndarray, n_cells: int) -> np.ndarray:
    """True where ``conf`` goes to the side table: the kernel's test in :meth:`CalibrationStats._add`, op for op."""
    t = conf * (n_cells * SHRINK)
    k = np.ceil(t)
    f = k - t
    return (f < NEAR_ABS) | (f > 1.0 - NEAR_ABS)



def conf_problem(c: np.ndarray, offset: int) -> dict | None:
    """Range/NaN problems of one chunk of float confidences, with global indices."""
    if c.size == 0:
        return None
    lo, hi = c.min(), c.max()
    if lo >= 0.0 and hi <= 1.0:
        return None
    nonfinite = ~np.isfinite(c)
    out_range = (c < 0.0) | (c > 1.0)
    p: dict = {"nonfinite": int(np.count_nonzero(nonfinite)), "range": int(np.count_nonzero(out_range))}
    for key, mask in (("nonfinite", nonfinite), ("range", out_range)):
        if p[key]:
            i = int(np.flatnonzero(mask)[0])
            p[key + "_first"] = (offset + i, _fmt(c[i]))
    return p



def correct_problem(y: np.ndarray, offset: int) -> dict | None:
    """0/1 problems of one chunk of correctness values (any numeric dtype)."""
    if y.size == 0 or y.dtype == np.bool_:
        return None
    lo, hi = y.min(), y.max()
    if y.dtype.kind in "iu":
        ok = lo >= 0 and hi <= 1
    else:
        ok = lo >= 0.0 and hi <= 1.0 and not np.count_nonzero((y != 0) & (y != 1))
    if ok:
        return None
    bad = (y != 0) & (y != 1)
    i = int(np.flatnonzero(bad)[0])
    return {"bad": int(np.count_nonzero(bad)), "bad_first": (offset + i, _fmt(y[i]))}



def weight_problem(w: np.ndarray, offset: int) -> dict | None:
    if w.size == 0:
        return None
    lo, hi = w.min(), w.max()
    if lo >= 0.0 and np.isfinite(hi):
        return None
    bad = ~(np.isfinite(w) & (w >= 0.0))
    i = int(np.flatnonzero(bad)[0])
    return {"bad": int(np.count_nonzero(bad)), "bad_first": (offset + i, _fmt(w[i]))}



def merge_problems(a: dict | None, b: dict | None) -> dict | None:
    """Combine two problem records of the same argument: counts add, the earliest index wins."""
    if a is None:
        return b
    if b is None:
        return a
    out = {}
    for key in set(a) | set(b):
        if key.endswith("_first"):
            cands = [p[key] for p in (a, b) if key in p]
            out[key] = min(cands)
        else:
            out[key] = a.get(key, 0) + b.get(key, 0)
    return out



def raise_problems(problems: dict, names: dict | None = None) -> None:
    """Raise the error the in-memory checks raise (conf first, then correct, then weights)."""
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



def reliability_frame(bins, lower, upper, weight, w_pos, conf, *, integer: bool):
    """The DataFrame of :func:`calibnb.reliability_table` from per-bin sums (counts as int64 when ``integer``)."""
    import pandas as pd

    mean_conf = conf / weight
    accuracy = w_pos / weight
    if integer:
        count, n_correct = np.rint(weight).astype(np.int64), np.rint(w_pos).astype(np.int64)
    else:
        count, n_correct = weight, w_pos
    return pd.DataFrame({"bin": np.asarray(bins).astype(np.int64), "lower": lower, "upper": upper, "count": count,
                         "n_correct": n_correct, "mean_conf": mean_conf, "accuracy": accuracy,
                         "gap": mean_conf - accuracy})
