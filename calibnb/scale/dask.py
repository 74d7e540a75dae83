"""Calibration metrics on Dask arrays and Dask DataFrame columns (map-reduce, any scheduler).

Every function takes ``conf`` and ``correct`` as :class:`dask.array.Array`
(1-D), :class:`dask.dataframe.Series` columns, or in-memory arrays, computes
with the current Dask scheduler (threads, processes, or a
``distributed.Client`` -- local or a multi-node cluster: only the scheduler
address changes) and returns the same value as the in-memory function of
:mod:`calibnb.metrics` on the concatenated data, up to floating-point summation
error (below 1e-12 in the tests).

How
---
Pass 1 maps every block to a :class:`calibnb.CalibrationStats` (per-cell sums on
a fine grid, memory independent of the block size) and tree-reduces them with
:meth:`CalibrationStats.merge`; validation runs in the same pass and raises the
in-memory messages (NaN, range, 0/1, lengths) with global indices. ECE, MCE,
reliability tables (equal-width bins), ICE, MacroCE, the rewards, HMR and the
Brier score come from that state alone.

* ``ks_error`` (exact, ``ties="group"`` or ``"order"``): pass 1 gives the
  running gap at every cell end and a bound of it inside every cell
  (:meth:`CalibrationStats.ks_bounds`); pass 2 collects only the items of the
  cells whose bound exceeds the best cell-end gap, sorts them (stably, by
  value then input position) and evaluates the gap exactly there.
* ``binning="mass"`` (exact): pass 1 counts the items per cell, which locates
  the cells holding the first and last item of every equal-mass bin; pass 2
  collects those cells' items, sorted stably, so ties at a bin edge split in
  input order as :func:`numpy.array_split` on the stable sort does.

The second pass reads the data again: ``persist()`` the inputs first when they
fit in the cluster's memory and are expensive to produce. Its memory on the
client is the items of the collected cells (a few per bin or per candidate
cell for spread-out confidences; a whole tie group when one large group of
equal confidences sits on a bin edge).

``import calibnb`` does not import Dask; ``import calibnb.dask`` needs the
``calibnb[dask]`` extra (``dask[array,dataframe]``, ``distributed``, ``pyarrow``).

Examples
--------
>>> import numpy as np, dask.array as da, calibnb as cn
>>> import calibnb.dask as cdask
>>> rng = np.random.default_rng(0)
>>> conf = rng.uniform(0.5, 1.0, 20_000).round(3)
>>> correct = rng.uniform(size=20_000) < conf
>>> c, y = da.from_array(conf, chunks=3_000), da.from_array(correct, chunks=3_000)
>>> abs(cdask.ece(c, y, n_bins=15) - cn.ece(conf, correct, n_bins=15)) < 1e-12
True
>>> abs(cdask.ks_error(c, y, ties="group") - cn.ks_error(conf, correct, ties="group")) < 1e-12
True
>>> abs(cdask.ece(c, y, binning="mass") - cn.ece(conf, correct, binning="mass")) < 1e-12
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dask
import dask.array as da
from dask.delayed import delayed

from ..metrics import Rewards
from ._streaming import cell_of, near_edge, reliability_frame
from .stats import GRID, CalibrationStats
from ..validation import (
    as_numeric_array,
    check_choice,
    check_n_bins,
    check_positive_int,
    check_scalar_in_range,
    conf_problem,
    correct_problem,
    merge_problems,
    raise_problems,
    weight_problem,
)

__all__ = [
    "calibration_stats",
    "metric_functions",
    "scan_parquet",
    "ece",
    "mce",
    "reliability_table",
    "ice",
    "macro_ce",
    "rewards",
    "hmr",
    "brier_top",
    "ks_error",
]

_SPLIT_EVERY = 8


# --------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------


def _is_series(x) -> bool:
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - the extra installs it
        return False
    return isinstance(x, dd.Series)


def _is_frame(x) -> bool:
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover
        return False
    return isinstance(x, dd.DataFrame)


def _check_dtype(dtype, name: str) -> None:
    dtype = np.dtype(dtype) if not hasattr(dtype, "kind") else dtype
    if getattr(dtype, "kind", "O") in "OUSVMm":
        raise TypeError(f"{name} must hold numbers; got dtype {dtype}.")
    if dtype.kind == "c":
        raise TypeError(f"{name} must hold real numbers; got complex dtype {dtype}.")


def _blocks(x, name: str):
    """(list of delayed blocks, known total length or None) of one input column."""
    if x is None:
        raise TypeError(f"{name} must be an array of numbers, not None.")
    if _is_frame(x):
        raise TypeError(f"{name} must be one column (a dask Series or a 1-D array), not a DataFrame; "
                        f"select the column, e.g. df[{name!r}].")
    if _is_series(x):
        _check_dtype(x.dtype, name)
        return list(x.to_delayed()), None
    if not isinstance(x, da.Array):
        x = as_numeric_array(x, name)
        if x.ndim != 1:
            raise ValueError(f"{name} must be 1-D; got an array of shape {x.shape}.")
        x = da.from_array(x, chunks=max(x.shape[0], 1))
    _check_dtype(x.dtype, name)
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {x.shape}.")
    n = x.shape[0]
    return list(x.to_delayed().ravel()), (None if np.isnan(n) else int(n)), x


def _prepare(conf, correct, sample_weight=None):
    """Validate what can be checked without computing; return aligned lists of delayed blocks."""
    inputs = {"conf": conf, "correct": correct}
    if sample_weight is not None:
        inputs["sample_weight"] = sample_weight
    arrays = {k: v for k, v in inputs.items() if not _is_series(v)}
    out: dict[str, Any] = {}
    lengths: dict[str, int | None] = {}
    for name, x in inputs.items():
        res = _blocks(x, name)
        out[name] = res[0]
        lengths[name] = res[1]
        if len(res) == 3:
            arrays[name] = res[2]
    n = lengths["conf"]
    for name in ("correct", "sample_weight"):
        if name in lengths and n is not None and lengths[name] is not None and lengths[name] != n:
            raise ValueError(f"{name} has length {lengths[name]} but conf has length {n}; they must match.")
    if n == 0:
        raise ValueError("conf is empty; at least one value is needed.")
    # Align the blocks of dask arrays with known chunks (Series keep their partitions).
    if len(arrays) == len(inputs) and all(not np.isnan(a.shape[0]) for a in arrays.values()):
        chunks = arrays["conf"].chunks
        for name in inputs:
            if name != "conf" and arrays[name].chunks != chunks:
                out[name] = list(arrays[name].rechunk(chunks).to_delayed().ravel())
    counts = {name: len(b) for name, b in out.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"conf and correct must be split alike; got {counts} blocks/partitions "
                         "(rechunk or repartition one of them like the other).")
    if not arrays and len(inputs) > 1:
        out = _fused_partitions(inputs) or out
    return out


def _fused_partitions(inputs: dict) -> dict | None:
    """Blocks of Series columns of one Dask DataFrame, taken from one frame of them; else None.

    ``df["conf"]`` and ``df["correct"]`` alone are two graphs: each partition
    is read once per column and the two pieces meet in the leaf task, often
    after one crossed between workers. Assigned into one frame (Dask's
    optimiser then reads both columns in one task), every leaf gets both
    columns from one partition on one worker.
    """
    # Only columns of one and the same frame (the same index, so assigning by
    # index pairs rows as the blocks would, by position); anything else keeps
    # its positional blocks.
    parents = set()
    for v in inputs.values():
        expr = getattr(v, "expr", None)
        if type(expr).__name__ != "Projection" or not hasattr(expr, "frame"):
            return None
        parents.add(getattr(expr.frame, "_name", None))
    if len(parents) != 1 or None in parents:
        return None
    frame = inputs["conf"].to_frame(name="conf").assign(**{k: v for k, v in inputs.items() if k != "conf"})
    parts = frame.to_delayed()
    out = {k: [p[k] for p in parts] for k in inputs}
    out["frame"] = frame  # pass 1 maps the leaf over it, fused with the read (see _pass1)
    return out


def _numpy(x) -> np.ndarray:
    if hasattr(x, "to_numpy"):
        x = x.to_numpy()
    return np.asarray(x)


# --------------------------------------------------------------------------
# pass 1: states
# --------------------------------------------------------------------------


def _arrow(x):
    """The pyarrow ChunkedArray without nulls behind an Arrow-backed pandas Series, else None.

    ``dd.read_parquet(..., dtype_backend="pyarrow")`` gives such partitions:
    their float32 values are then read without a copy and a bool column bit
    by bit, as :func:`calibnb.data.scan_predictions` reads them.
    """
    import pandas as pd

    if not isinstance(getattr(x, "dtype", None), pd.ArrowDtype):
        return None
    import pyarrow as pa

    arr = pa.array(x.array)  # the Arrow data itself (the __arrow_array__ protocol)
    if not isinstance(arr, pa.ChunkedArray):
        arr = pa.chunked_array([arr], type=arr.type)
    if arr.null_count:
        return None  # nulls: the NumPy path gives the in-memory messages
    return arr


def _arrow_leaf(block: int, ca, ya, n_cells: int):
    """Leaf of float32 / bool Arrow columns: chunk by chunk, no copies; None if the chunks do not pair up."""
    import pyarrow as pa

    if not (pa.types.is_float32(ca.type) and pa.types.is_boolean(ya.type)):
        return None
    if [len(k) for k in ca.chunks] != [len(k) for k in ya.chunks]:
        return None
    state = CalibrationStats(n_cells)
    offset = 0
    try:
        for ck, yk in zip(ca.chunks, ya.chunks):
            # the kernel checks conf as it goes; on a bad value the block's messages are made below
            state.update_chunk(ck.to_numpy(), yk, offset=offset)
            offset += len(ck)
    except ValueError:
        c = ca.to_numpy()
        problems = {"conf": _tag(conf_problem(c, offset=0), block)}
        return CalibrationStats(n_cells), problems, {block: (len(ca), len(ya), None)}
    return state, {}, {block: (len(ca), len(ya), None)}


def _leaf(block: int, c, y, w, n_cells: int):
    ca, ya = _arrow(c), _arrow(y)
    if ca is not None and ya is not None and w is None:
        out = _arrow_leaf(block, ca, ya, n_cells)
        if out is not None:
            return out
    c, y = _numpy(c), _numpy(y)
    w = None if w is None else _numpy(w)
    for arr, name in ((c, "conf"), (y, "correct"), (w, "sample_weight")):
        if arr is not None:
            _check_dtype(arr.dtype, name)
            if arr.ndim != 1:
                raise ValueError(f"{name} must be 1-D; got a block of shape {arr.shape}.")
    lens = {block: (c.shape[0], y.shape[0], None if w is None else w.shape[0])}
    # float32 stays float32 (the state's kernel reads it exactly); anything else becomes float64
    c64 = c if c.dtype == np.float32 else c.astype(np.float64, copy=False)
    w64 = None if w is None else w.astype(np.float64, copy=False)
    problems = {"conf": conf_problem(c64, offset=0), "correct": correct_problem(y, offset=0),
                "sample_weight": None if w64 is None else weight_problem(w64, offset=0)}
    problems = {k: _tag(p, block) for k, p in problems.items() if p}
    state = CalibrationStats(n_cells)
    if not problems and c.shape[0] == y.shape[0] and (w is None or w.shape[0] == c.shape[0]):
        state.update_chunk(c64, y.astype(bool, copy=False), sample_weight=w64)
    return state, problems, lens


def _tag(p: dict, block: int) -> dict:
    """Make the 'first' entries (block, local index, value) so the earliest block wins."""
    return {k: ((block,) + v if k.endswith("_first") else v) for k, v in p.items()}


def _leaf_partition(part, n_cells: int, partition_info=None):
    """:func:`_leaf` of one DataFrame partition, wrapped in a one-item Series (what map_partitions may return)."""
    import pandas as pd

    block = partition_info["number"] if partition_info else 0
    w = part["sample_weight"] if "sample_weight" in part.columns else None
    out = pd.Series([None], dtype=object)
    out.iloc[0] = _leaf(block, part["conf"], part["correct"], w, n_cells)
    return out


def _unwrap(part):
    """A leaf result, unwrapped from the Series of :func:`_leaf_partition` if it is one."""
    return part.iloc[0] if hasattr(part, "iloc") else part


def _combine(*parts):
    parts = [_unwrap(p) for p in parts]
    state = CalibrationStats(parts[0][0].n_cells)
    problems: dict = {}
    lens: dict = {}
    for s, p, ln in parts:
        state.merge(s)
        for k in set(problems) | set(p):
            problems[k] = merge_problems(problems.get(k), p.get(k))
        lens.update(ln)
    return state, problems, lens


def _pass1(blocks: dict, n_cells: int, split_every: int = _SPLIT_EVERY):
    """Run pass 1; raise the in-memory validation errors; return (state, block offsets)."""
    w_blocks = blocks.get("sample_weight")
    leaf = delayed(_leaf, pure=True)
    combine = delayed(_combine, pure=True)
    if "frame" in blocks:
        # columns of one DataFrame: the leaf runs in the task that reads the partition
        # (Dask fuses map_partitions with the read), so no partition waits in worker memory
        import pandas as pd

        level = list(blocks["frame"].map_partitions(_leaf_partition, n_cells, meta=pd.Series([], dtype=object))
                     .to_delayed())
    else:
        level = [leaf(i, c, y, None if w_blocks is None else w_blocks[i], n_cells)
                 for i, (c, y) in enumerate(zip(blocks["conf"], blocks["correct"]))]
    while len(level) > 1:
        level = [combine(*level[i:i + split_every]) for i in range(0, len(level), split_every)]
    (state, problems, lens), = (_unwrap(x) for x in dask.compute(level[0]))
    order = sorted(lens)
    n_conf = [lens[b][0] for b in order]
    offsets = np.concatenate(([0], np.cumsum(n_conf)[:-1])).astype(np.int64)
    total = int(sum(n_conf))
    for j, name in ((1, "correct"), (2, "sample_weight")):
        if name not in blocks:
            continue
        other = int(sum(lens[b][j] for b in order))
        if other != total:
            raise ValueError(f"{name} has length {other} but conf has length {total}; they must match.")
        bad = [b for b in order if lens[b][j] != lens[b][0]]
        if bad:
            b = bad[0]
            raise ValueError(f"conf and {name} must be split alike; block {b} has {lens[b][0]} and "
                             f"{lens[b][j]} rows (rechunk or repartition one like the other).")
    if total == 0:
        raise ValueError("conf is empty; at least one value is needed.")
    if problems:
        glob = {}
        for key, p in problems.items():
            glob[key] = {k: ((int(offsets[v[0]]) + v[1], v[2]) if k.endswith("_first") else v) for k, v in p.items()}
        raise_problems(glob)
    return state, offsets


def calibration_stats(conf, correct, *, sample_weight=None, n_cells: int = GRID,
                      split_every: int = _SPLIT_EVERY) -> CalibrationStats:
    """The :class:`calibnb.CalibrationStats` of a Dask column pair, by map-reduce.

    Parameters
    ----------
    conf, correct : dask.array.Array, dask.dataframe.Series or array-like, shape (N,)
        Confidences in [0, 1] and 0/1 (or bool) correctness, split alike.
    sample_weight : same kind, optional
        Finite non-negative weights.
    n_cells : int, default GRID (100,800)
    split_every : int, default 8
        Fan-in of the tree reduction.

    Returns
    -------
    CalibrationStats

    Examples
    --------
    >>> import dask.array as da, calibnb as cn
    >>> s = calibration_stats(da.from_array([0.2, 0.25, 0.9], chunks=2), da.from_array([0, 1, 1], chunks=2))
    >>> s.n, round(s.ece(n_bins=2), 4)
    (3, 0.2167)
    """
    split_every = check_positive_int(split_every, "split_every", minimum=2)
    blocks = _prepare(conf, correct, sample_weight)
    return _pass1(blocks, n_cells, split_every)[0]


# --------------------------------------------------------------------------
# Parquet files read by the workers themselves
# --------------------------------------------------------------------------


def _scan_task(fragments, schema, fmt, filesystem, offset: int, columns: dict, n_cells: int) -> CalibrationStats:
    """One task of :func:`scan_parquet`: its row groups, scanned as :func:`calibnb.data.scan_predictions` does."""
    import pyarrow.dataset as pads

    from ..data import scan_predictions

    part = pads.FileSystemDataset(fragments, schema, fmt, filesystem)
    return scan_predictions(part, conf=columns["conf"], correct=columns["correct"],
                            sample_weight=columns.get("sample_weight"), n_cells=n_cells, progress=False,
                            row_offset=offset)


def _merge_states(*states: CalibrationStats) -> CalibrationStats:
    out = CalibrationStats(states[0].n_cells)
    for s in states:
        out.merge(s)
    return out


def scan_parquet(path, *, conf: str = "conf", correct: str = "correct", sample_weight: str | None = None,
                 n_cells: int = GRID, rows_per_task: int = 1 << 25, split_every: int = _SPLIT_EVERY,
                 filesystem=None) -> CalibrationStats:
    """The :class:`calibnb.CalibrationStats` of a Parquet dataset, read by the Dask workers themselves.

    Where :func:`calibration_stats` takes Dask columns (so Dask reads the
    Parquet files into pandas first), this function splits the dataset's row
    groups into tasks of about ``rows_per_task`` rows (a task never splits a
    row group; it may span files), and each task runs
    :func:`calibnb.data.scan_predictions` on its row groups in the worker:
    Arrow batches go to the state without pandas, float32 confidences and
    bool correctness without copies. The states are tree-reduced with
    :meth:`CalibrationStats.merge` (fan-in ``split_every``) on the current
    Dask scheduler. The workers must see the files (a shared file system, or
    object storage through ``filesystem``). Equal to
    ``scan_predictions(path)`` and to the in-memory metrics up to summation
    error; an invalid value raises the message of ``scan_predictions`` with
    the row numbered in the whole dataset.

    Parameters
    ----------
    path : str or path-like
        A ``.parquet`` file or a folder of them.
    conf, correct, sample_weight : str
        Column names, as in :func:`calibnb.data.scan_predictions`.
    n_cells : int, default GRID (100,800)
    rows_per_task : int, default 2**25
        Target rows per task (whole row groups).
    split_every : int, default 8
        Fan-in of the tree reduction.
    filesystem : pyarrow.fs.FileSystem, optional
        For remote storage; must be picklable (pyarrow's are).

    Returns
    -------
    CalibrationStats

    Examples
    --------
    >>> import os, tempfile, numpy as np, pyarrow as pa, pyarrow.parquet as pq, calibnb as cn
    >>> c = np.random.default_rng(1).random(6000, dtype=np.float32)   # a folder of two files
    >>> y = np.random.default_rng(2).random(6000) < c
    >>> folder = tempfile.mkdtemp()
    >>> for i in (0, 1):
    ...     part = pa.table({"conf": c[i * 3000:(i + 1) * 3000], "correct": y[i * 3000:(i + 1) * 3000]})
    ...     pq.write_table(part, os.path.join(folder, f"p{i}.parquet"), row_group_size=700)
    >>> s = scan_parquet(folder, rows_per_task=2000)
    >>> s.n, abs(s.ece(n_bins=15) - cn.ece(c, y, n_bins=15)) < 1e-12
    (6000, True)
    """
    import os

    from ..data import open_predictions

    rows_per_task = check_positive_int(rows_per_task, "rows_per_task")
    split_every = check_positive_int(split_every, "split_every", minimum=2)
    dataset, columns = open_predictions(path, conf=conf, correct=correct, sample_weight=sample_weight,
                                        filesystem=filesystem)
    # tasks of whole row groups, in dataset order, each with the number of its first row
    tasks, current, rows, start, total = [], [], 0, 0, 0
    for frag in dataset.get_fragments():
        for group in frag.split_by_row_group():
            m = group.row_groups[0].num_rows
            if current and rows + m > rows_per_task:
                tasks.append((current, start))
                current, rows, start = [], 0, total
            current.append(group)
            rows += m
            total += m
    if current:
        tasks.append((current, start))
    if total == 0:
        raise ValueError(f"path {os.fspath(path)!r} holds no rows; at least one prediction is needed.")
    task = delayed(_scan_task, pure=True)
    merge = delayed(_merge_states, pure=True)
    level = [task(frags, dataset.schema, dataset.format, dataset.filesystem, offset, columns, n_cells)
             for frags, offset in tasks]
    while len(level) > 1:
        level = [merge(*level[i:i + split_every]) for i in range(0, len(level), split_every)]
    (state,) = dask.compute(level[0])
    return state


# --------------------------------------------------------------------------
# pass 2: collect the items of a few cells
# --------------------------------------------------------------------------


def _gather_leaf(c, y, offset: int, cells: np.ndarray, n_cells: int, grid_only: bool = False):
    """Items of this block in ``cells`` (only the grid items, without side-table values, if ``grid_only``)."""
    c = _numpy(c).astype(np.float64, copy=False)
    y = _numpy(y)
    if cells.shape[0] == 0 or c.shape[0] == 0:
        return np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.intp)
    cell = cell_of(c, n_cells)
    pos = np.minimum(np.searchsorted(cells, cell), cells.shape[0] - 1)
    mask = cells[pos] == cell
    if grid_only:
        mask &= ~near_edge(c, n_cells)
    sel = np.flatnonzero(mask)
    return c[sel] + 0.0, y[sel].astype(bool), offset + sel.astype(np.int64), cell[sel]


def _walk_leaf(c, y, values: np.ndarray):
    """Per value in ``values`` (sorted): rows in this block, sum of (y - v), and the max and min of its partial sums."""
    k = values.shape[0]
    out = np.zeros((4, k))
    out[2] = -np.inf
    out[3] = np.inf
    c = _numpy(c).astype(np.float64, copy=False) + 0.0
    if k == 0 or c.shape[0] == 0:
        return out
    y = _numpy(y)
    pos = np.minimum(np.searchsorted(values, c), k - 1)
    sel = np.flatnonzero(values[pos] == c)
    if sel.size == 0:
        return out
    idx = pos[sel]
    order = np.argsort(idx, kind="stable")  # by value, input order within a value
    idx = idx[order]
    d = y[sel][order].astype(np.float64) - values[idx]
    starts = np.flatnonzero(np.concatenate(([True], idx[1:] != idx[:-1])))
    walk = _segment_cumsum(d, starts)
    ids = idx[starts]
    out[0, ids] = np.diff(np.append(starts, d.shape[0]))
    out[1, ids] = np.add.reduceat(d, starts)
    out[2, ids] = np.maximum.reduceat(walk, starts)
    out[3, ids] = np.minimum.reduceat(walk, starts)
    return out


def _gather(blocks: dict, offsets: np.ndarray, cells: np.ndarray, n_cells: int, grid_only: bool = False):
    """Items of ``cells`` sorted by (value, input position): conf, correct, cell, segment starts."""
    leaf = delayed(_gather_leaf, pure=True)
    parts = dask.compute(*[leaf(c, y, int(offsets[i]), cells, n_cells, grid_only)
                           for i, (c, y) in enumerate(zip(blocks["conf"], blocks["correct"]))])
    c = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    pos = np.concatenate([p[2] for p in parts])
    cell = np.concatenate([p[3] for p in parts])
    order = np.lexsort((pos, c))  # stable: ties keep input order
    c, y, cell = c[order], y[order], cell[order]
    starts = np.flatnonzero(np.concatenate(([True], cell[1:] != cell[:-1]))) if c.size else np.zeros(0, np.intp)
    return c, y, cell, starts


def _segment_cumsum(x: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Cumulative sums restarting at every segment start."""
    cs = np.cumsum(x)
    base = cs[starts] - x[starts]
    lengths = np.diff(np.append(starts, x.shape[0]))
    return cs - np.repeat(base, lengths)


# --------------------------------------------------------------------------
# equal-mass bins (exact)
# --------------------------------------------------------------------------


def _mass_table(blocks: dict, n_bins: int):
    """Per non-empty equal-mass bin: index, count, sum conf, n correct, lower, upper (exact)."""
    state, offsets = _pass1(blocks, GRID)
    rows, w_pos, c_pos, c_neg = state.cell_sums()
    n = state.n
    q, r = divmod(n, n_bins)
    sizes = np.full(n_bins, q, dtype=np.int64)
    sizes[:r] += 1
    bins = np.flatnonzero(sizes > 0)
    sizes = sizes[bins]
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    ends = starts + sizes  # exclusive
    cum = np.cumsum(rows)  # exclusive end position of each cell
    first_cell = np.searchsorted(cum, starts, side="right")
    last_cell = np.searchsorted(cum, ends - 1, side="right")
    need = np.unique(np.concatenate((first_cell, last_cell)))
    gc, gy, gcell, gstarts = _gather(blocks, offsets, need, GRID)
    seg_conf = _segment_cumsum(gc, gstarts)
    seg_y = _segment_cumsum(gy.astype(np.int64), gstarts)
    seg_of_cell = dict(zip(gcell[gstarts].tolist(), gstarts.tolist()))
    cell_conf = c_pos + c_neg
    conf_before = np.concatenate(([0.0], np.cumsum(cell_conf)))  # sum over cells < j
    y_before = np.concatenate(([0], np.cumsum(np.rint(w_pos).astype(np.int64))))
    pos_before = np.concatenate(([0], cum))

    def prefix(p: int):
        """(sum conf, n correct) over the first p sorted items."""
        if p >= n:
            return conf_before[-1], int(y_before[-1])
        j = int(np.searchsorted(cum, p, side="right"))
        k = p - int(pos_before[j])
        s_c, s_y = conf_before[j], int(y_before[j])
        if k:
            i = seg_of_cell[j] + k - 1
            s_c, s_y = s_c + seg_conf[i], s_y + int(seg_y[i])
        return s_c, s_y

    def value_at(p: int) -> float:
        j = int(np.searchsorted(cum, p, side="right"))
        return float(gc[seg_of_cell[j] + p - int(pos_before[j])])

    pre = [prefix(int(p)) for p in np.append(starts, n)]
    sum_conf = np.array([pre[i + 1][0] - pre[i][0] for i in range(len(bins))])
    n_correct = np.array([pre[i + 1][1] - pre[i][1] for i in range(len(bins))], dtype=np.float64)
    lower = np.array([value_at(int(p)) for p in starts])
    upper = np.array([value_at(int(p) - 1) for p in ends])
    return bins, sizes.astype(np.float64), sum_conf, n_correct, lower, upper, n


# --------------------------------------------------------------------------
# public metrics
# --------------------------------------------------------------------------


def _width_state(conf, correct, n_bins: int) -> CalibrationStats:
    """Pass-1 state on a grid whose cells nest in the ``n_bins`` bins (GRID, or the bins themselves)."""
    blocks = _prepare(conf, correct)
    n_cells = GRID if GRID % n_bins == 0 else n_bins
    return _pass1(blocks, n_cells)[0]


def _check_binning(n_bins, binning) -> int:
    n_bins = check_n_bins(n_bins)
    check_choice(binning, ("width", "mass"), "binning")
    return n_bins


def ece(conf, correct, *, n_bins: int = 10, binning: str = "width") -> float:
    """Expected calibration error of Dask columns (exact; see :func:`calibnb.ece`).

    .. math::

        \\mathrm{ECE} = \\frac{1}{N}\\sum_{m=1}^{M}\\Big|\\sum_{i \\in B_m}(c_i - y_i)\\Big|

    Equal-width bins in one pass (any ``n_bins``); equal-mass bins in two
    passes, exact, ties at a bin edge split in input order. Guo et al. 2017;
    Si et al. 2022 Eq. 1; Sakai 2024 Eq. 1.

    Examples
    --------
    >>> import dask.array as da
    >>> conf = da.from_array([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8], chunks=4)
    >>> correct = da.from_array([1, 1, 0, 1, 0, 1, 1, 1, 1], chunks=4)
    >>> round(ece(conf, correct, n_bins=3, binning="mass"), 3)
    0.178
    """
    n_bins = _check_binning(n_bins, binning)
    if binning == "width":
        return _width_state(conf, correct, n_bins).ece(n_bins)
    _, _, sum_conf, n_correct, _, _, n = _mass_table(_prepare(conf, correct), n_bins)
    return float(np.abs(sum_conf - n_correct).sum() / n)


def mce(conf, correct, *, n_bins: int = 10, binning: str = "width") -> float:
    """Maximum calibration error of Dask columns (exact; see :func:`calibnb.mce`).

    .. math::

        \\mathrm{MCE} = \\max_{m:\\,|B_m| > 0}|\\mathrm{acc}(B_m) - \\mathrm{conf}(B_m)|

    Examples
    --------
    >>> import dask.array as da
    >>> conf = da.from_array([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8], chunks=4)
    >>> correct = da.from_array([1, 1, 0, 1, 0, 1, 1, 1, 1], chunks=4)
    >>> round(mce(conf, correct, n_bins=3, binning="mass"), 3)
    0.267
    """
    n_bins = _check_binning(n_bins, binning)
    if binning == "width":
        return _width_state(conf, correct, n_bins).mce(n_bins)
    _, count, sum_conf, n_correct, _, _, _ = _mass_table(_prepare(conf, correct), n_bins)
    return float(np.max(np.abs(sum_conf - n_correct) / count))


def reliability_table(conf, correct, *, n_bins: int = 10, binning: str = "width"):
    """Per-bin statistics of Dask columns, as :func:`calibnb.reliability_table`.

    Columns ``bin, lower, upper, count, n_correct, mean_conf, accuracy, gap``
    (:math:`\\mathrm{gap}_m = \\mathrm{conf}(B_m) - \\mathrm{acc}(B_m)`).

    Examples
    --------
    >>> import dask.array as da
    >>> t = reliability_table(da.from_array([0.2, 0.25, 0.9], chunks=2), da.from_array([0, 1, 1], chunks=2),
    ...                       n_bins=2)
    >>> t[["bin", "count", "accuracy"]].to_string(index=False)
    ' bin  count  accuracy\\n   0      2       0.5\\n   1      1       1.0'
    """
    n_bins = _check_binning(n_bins, binning)
    if binning == "width":
        return _width_state(conf, correct, n_bins).reliability_table(n_bins)
    bins, count, sum_conf, n_correct, lower, upper, _ = _mass_table(_prepare(conf, correct), n_bins)
    return reliability_frame(bins, lower, upper, count, n_correct, sum_conf, integer=True)


def _state(conf, correct) -> CalibrationStats:
    return _pass1(_prepare(conf, correct), GRID)[0]


def ice(conf, correct) -> float:
    """Instance-level calibration error :math:`\\frac1N\\sum_i|y_i - c_i|` of Dask columns (Si et al. 2022).

    Examples
    --------
    >>> import dask.array as da
    >>> ice(da.from_array([0.9, 0.2], chunks=1), da.from_array([1, 1], chunks=1))
    0.45
    """
    return _state(conf, correct).ice()


def macro_ce(conf, correct) -> float:
    """MacroCE :math:`\\tfrac12(\\mathrm{ICE}_{pos} + \\mathrm{ICE}_{neg})` of Dask columns (Si et al. 2022).

    Examples
    --------
    >>> import dask.array as da
    >>> macro_ce(da.from_array([0.75] * 4, chunks=3), da.from_array([1, 1, 1, 0], chunks=3))
    0.5
    """
    return _state(conf, correct).macro_ce()


def rewards(conf, correct) -> Rewards:
    """Sakai 2024's rewards :math:`(R_O, R_U)` of Dask columns (Eqs. 5-7).

    Examples
    --------
    >>> import dask.array as da
    >>> r = rewards(da.from_array([0.8, 0.6, 0.5], chunks=2), da.from_array([1, 1, 0], chunks=2))
    >>> round(r.r_o, 3), round(r.r_u, 3)
    (0.5, 0.7)
    """
    return _state(conf, correct).rewards()


def hmr(conf, correct, *, beta: float = 1.0) -> float:
    """Harmonic mean of rewards :math:`(\\beta^2+1)R_O R_U/(\\beta^2 R_O + R_U)` of Dask columns (Sakai 2024).

    Examples
    --------
    >>> import dask.array as da
    >>> conf = da.from_array([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8], chunks=4)
    >>> round(hmr(conf, da.from_array([1, 1, 0, 1, 0, 1, 1, 1, 1], chunks=4)), 3)
    0.557
    """
    beta = check_scalar_in_range(beta, "beta", low=0.0)
    return _state(conf, correct).hmr(beta)


def brier_top(conf, correct) -> float:
    """Top-label Brier score :math:`\\frac1N\\sum_i(c_i - y_i)^2` of Dask columns (Gupta et al. 2021).

    Examples
    --------
    >>> import dask.array as da
    >>> brier_top(da.from_array([0.9, 0.2], chunks=1), da.from_array([1, 0], chunks=1))
    0.025
    """
    return _state(conf, correct).brier_top()


def ks_error(conf, correct, *, ties: str = "order") -> float:
    """Exact KS calibration error of Dask columns (see :func:`calibnb.ks_error`).

    .. math::

        \\mathrm{KS} = \\max_i\\Big|\\frac1N\\sum_{j \\le i}(y_{(j)} - c_{(j)})\\Big|

    over the stable ascending sort (Gupta et al. 2021, Eqs. 11-12; Sakai 2024,
    Eqs. 3-4). Pass 1 bounds the gap in every grid cell; pass 2 sorts only the
    cells whose bound exceeds the largest gap at a cell end.

    Parameters
    ----------
    conf, correct : dask.array.Array, dask.dataframe.Series or array-like
    ties : {"order", "group"}, default "order"
        As in :func:`calibnb.ks_error`: every position (ties in input order),
        or only the last item of each group of equal confidences.

    Examples
    --------
    >>> import dask.array as da
    >>> conf = da.from_array([0.5, 0.5, 0.5, 0.6, 0.6, 0.6, 0.7, 0.7, 0.7], chunks=2)
    >>> correct = da.from_array([1, 0, 0, 1, 0, 1, 1, 0, 1], chunks=2)
    >>> round(ks_error(conf, correct), 3), round(ks_error(conf, correct, ties="group"), 3)
    (0.078, 0.056)
    """
    check_choice(ties, ("order", "group"), "ties")
    blocks = _prepare(conf, correct)
    state, offsets = _pass1(blocks, GRID)
    n = state.n
    seg = state.ks_segments()
    best = float(np.max(np.abs(seg["end"])))
    cand = (seg[f"upper_{ties}"] > best) & ~seg[f"exact_{ties}"] & (seg["rows"] > 0)
    grid = cand & (seg["kind"] == 0)
    edge = cand & (seg["kind"] == 1)
    if grid.any():
        # Grid items of the candidate cells, sorted; the gap restarts from the end of the previous segment.
        cells = seg["ref"][grid]
        prev_of_cell = dict(zip(cells.tolist(), seg["prev"][grid].tolist()))
        gc, gy, gcell, gstarts = _gather(blocks, offsets, cells, GRID, grid_only=True)
        if gc.size:
            d = gy - gc
            lengths = np.diff(np.append(gstarts, d.shape[0]))
            base = np.array([prev_of_cell[j] for j in gcell[gstarts].tolist()])
            gap = _segment_cumsum(d, gstarts) + np.repeat(base, lengths)
            if ties == "group":
                gap = gap[np.concatenate((gc[1:] != gc[:-1], [True]))]
            best = max(best, float(np.max(np.abs(gap))))
    if edge.any():
        # One tie group mixing correct and wrong items (order mode): its gap is a walk in input
        # order; each block reports its rows, total step and the extremes of its partial walk.
        rows_e = seg["ref"][edge]
        values = state.edge_values[rows_e]
        leaf = delayed(_walk_leaf, pure=True)
        parts = dask.compute(*[leaf(c, y, values) for c, y in zip(blocks["conf"], blocks["correct"])])
        running = seg["prev"][edge].copy()
        for p in parts:  # blocks in input order
            hit = p[0] > 0
            best = max(best, float(np.max(np.abs(running[hit] + p[2][hit]), initial=0.0)),
                       float(np.max(np.abs(running[hit] + p[3][hit]), initial=0.0)))
            running[hit] += p[1][hit]
    return float(best / n)


# --------------------------------------------------------------------------
# the metrics of the registry on Dask columns
# --------------------------------------------------------------------------


def metric_functions(*, n_bins: int = 10) -> dict:
    """Every registered metric that Dask columns support, as ``key -> f(conf, correct)``.

    Driven by :mod:`calibnb.metrics.registry`: a metric of ``(conf, correct)``
    whose function has an exact Dask version in this module (``ece``, ``mce``,
    ``hmr``, ``ks_error``, ...) gets it, with the declared options; any other
    with a streaming form (``Metric.streaming``) is computed from the
    :func:`calibration_stats` of the columns. ``n_bins`` is given to the
    binned ones. A metric with neither is left out; when it has no mergeable
    form at all, its declaration says why
    (:func:`calibnb.metrics.registry.not_mergeable`: e.g. CORP's
    miscalibration and the cross-fitted loss gain).

    Examples
    --------
    >>> import dask.array as da
    >>> fns = metric_functions(n_bins=2)
    >>> sorted(fns)[:4]
    ['brier_top1', 'ece_mass', 'ece_width', 'hmr']
    >>> conf, correct = da.from_array([0.2, 0.25, 0.9], chunks=2), da.from_array([0, 1, 1], chunks=2)
    >>> round(fns["ece_width"](conf, correct), 4)
    0.2167
    """
    import functools

    from ..metrics import registry

    n_bins = check_n_bins(n_bins)
    here = globals()
    out = {}
    for m in registry.metrics():
        if m.inputs != "binary" or m.form not in ("binary", "loop"):
            continue
        options = m.call_options(n_bins)
        own = here.get(m.fn.__name__) if m.fn is not None else None
        if own is not None and m.fn.__name__ in __all__:
            out[m.key] = functools.partial(own, **options)
        elif m.streaming is not None:
            out[m.key] = functools.partial(_from_state, m.streaming, options)
    return out


def _from_state(streaming, options: dict, conf, correct) -> float:
    return float(streaming(_state(conf, correct), **options))
