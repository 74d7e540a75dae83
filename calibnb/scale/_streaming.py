"""Chunk kernels shared by calibnb.stats and calibnb.dask (not public API).

Cell of a confidence on the fine grid, the side-table test and the
reliability-table frame. (The per-chunk validation records that merge across
chunks are :mod:`calibnb.validation`'s, the same that check in-memory input.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["SHRINK", "NEAR_ABS", "cell_of", "near_edge", "reliability_frame"]

# Same factor as the in-memory equal-width binning (calibnb.metrics): an edge
# value j/G lands in the cell it closes.
SHRINK = 1.0 - 2.0**-50
# A value with conf*G within this distance of an integer goes to the exact side
# table (the rounding of conf*G is below 2**-49 * G, about 2e-10).
NEAR_ABS = 1e-7


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
