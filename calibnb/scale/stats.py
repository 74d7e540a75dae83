"""Mergeable calibration statistics of one binary prediction stream.

:class:`CalibrationStats` keeps, on a fixed fine grid of confidence cells, the
sums that the binned and instance-level metrics of the five papers decompose
into. Its memory does not depend on the number of predictions ``N``, states of
different parts of a stream merge by addition, and the metrics computed from a
state equal the in-memory functions of :mod:`calibnb.metrics` up to
floating-point summation error (about 1e-15 relative; far below 1e-12).

The grid
--------
``GRID = 100_800 = 2^6 * 3^2 * 5^2 * 7`` cells; cell ``j`` holds the
confidences in :math:`(j/G, (j+1)/G]` (cell 0 also holds 0), the convention of
:func:`calibnb.metrics.bin_indices`. Every equal-width bin count ``M`` that
divides ``G`` (1-10, 12, 14, 15, 16, 18, 20, 24, 25, 28, 30, 32, 35, 36, 40,
42, 45, 48, 50, 56, 60, 63, 64, 70, 72, 75, 80, 84, 90, 96, 100, 112, 120, ...)
then has bins made of ``G / M`` whole cells.

A confidence whose product with ``G`` (as computed, ``conf * G * (1 - 2**-50)``)
lies within ``1e-7`` of an integer -- a value on a grid edge such as 0.3 or 1.0,
or one off an edge by float noise such as ``0.1 + 0.2`` -- is not put in a cell
but kept exactly, by value, in a small side table (one row per distinct such
value). The bin of those values is taken from
:func:`calibnb.metrics.bin_indices` itself, so bin membership is identical to
the in-memory functions for every ``M``, including values exactly on an edge
and the float-noise rule. Every other value has ``conf * G`` at least
``1e-7`` away from every integer, hence ``conf * M`` at least ``1e-7 * M / G``
away from every integer, far more than the rounding of either product
(below ``2**-49 * G``, about 2e-10, resp. ``2**-49 * M``); its cell therefore
nests inside its in-memory bin exactly. The side table has at most one row per
distinct edge value (in practice: rounded confidences such as 0.35, 0.5, 1.0).

Accumulators
------------
Per cell and per correctness (row 0 wrong, row 1 correct): the number of rows
(int64, exact), the sum of weights and the sum of ``weight * conf`` (float64
with a Neumaier compensation term per cell). Rows of :meth:`~CalibrationStats.update`
calls are first scattered into plain scratch sums, which are folded into the
compensated ones every 2**24 rows and before anything reads the state
(a metric, ``merge``, serialisation, pickling, the array attributes), so no
per-cell sum runs over more than 2**24 rows uncompensated and a stream of many
small updates pays for one fold per 2**24 rows. With :mod:`numba` installed
(the ``calibnb[dask]`` extra) the scatter is one compiled pass per chunk
(:mod:`calibnb._kernel`: about 2-4 ns per row against about 6 for NumPy);
``CALIBNB_KERNEL=numpy`` turns it off. Both kernels give the same cells, counts
and per-cell sums, bit for bit. The
Brier score comes from one compensated scalar :math:`\\sum_i w_i c_i^2`:
:math:`\\sum_i w_i (c_i - y_i)^2 = \\sum_i w_i c_i^2 - 2\\sum_{y_i = 1} w_i c_i
+ \\sum_{y_i = 1} w_i`. Without ``sample_weight`` every weight is 1 and the
weight sums are exact integers. The side table holds, per distinct value, the
rows and weights of wrong and correct predictions.
"""

from __future__ import annotations

import io
import json
import math
import numbers
import os
import tempfile
from typing import Any, NamedTuple

import numpy as np

from ._kernel import compiled_kernel
from ..metrics import Rewards, bin_indices
from ._streaming import NEAR_ABS, SHRINK, cell_of, reliability_frame
from ..validation import (
    as_numeric_array,
    check_choice,
    check_conf_correct,
    check_n_bins,
    check_positive_int,
    check_scalar_in_range,
    conf_problem,
    correct_problem,
    raise_problems,
    weight_problem,
)

__all__ = ["CalibrationStats", "GRID"]

#: Number of fine cells (2^6 * 3^2 * 5^2 * 7).
GRID = 100_800
# Rows per internal chunk: the temporaries stay in cache.
_CHUNK = 1 << 16
# Rows between two compensated folds of the scratch per-cell sums.
_FOLD = 1 << 24
# Side-table rows kept before they are merged into the state's table (bounds memory
# when most confidences are edge values, e.g. rounded to two decimals).
_EDGE_ROWS = 1 << 20
# Rows per call of the compiled kernel (calibnb._kernel).
_CCHUNK = 1 << 20
_FORMAT = "calibnb.CalibrationStats/1"
_ONE = np.zeros(1)  # placeholder weights of the compiled kernel's unweighted calls
# ks_bounds() widens its interval by this much for floating-point summation error.
_KS_SLACK = 1e-12


# --------------------------------------------------------------------------
# chunk kernels (shared with calibnb.dask and calibnb.data.scan_predictions)
# --------------------------------------------------------------------------


def _two_sum_at(hi: np.ndarray, lo: np.ndarray, flat: np.ndarray, x: np.ndarray, x_lo=None) -> None:
    """hi + lo += x (+ x_lo) at the flat indices ``flat`` (distinct), keeping each add's rounding error in lo.

    Neumaier's compensated summation, elementwise, for non-negative ``hi`` and
    ``x`` (sums of weights and of ``weight * conf``, which are): the larger of
    the two is then the larger in magnitude, so the error term is
    ``(max - s) + min`` exactly (Fast2Sum).
    """
    h = hi.reshape(-1)
    l_ = lo.reshape(-1)
    a = h[flat]
    s = a + x
    err = np.maximum(a, x)
    err -= s
    err += np.minimum(a, x)
    h[flat] = s
    if x_lo is not None:
        err += x_lo
    l_[flat] += err


def _two_sum(hi: float, lo: float, x: float, x_lo: float) -> tuple[float, float]:
    """(hi, lo) + (x, x_lo), Neumaier."""
    s = hi + x
    err = (hi - s) + x if abs(hi) >= abs(x) else (x - s) + hi
    return s, lo + err + x_lo


def _exact_sum(*parts) -> float:
    """``math.fsum`` of the arrays ``parts`` one after the other, its exact zeros left out.

    ``math.fsum`` returns the correctly rounded exact sum, to which a zero adds
    nothing, so the result is the same float; but it reads its input one Python
    float at a time (about 30 ns an item), and the per-cell arrays of a
    :class:`CalibrationStats` have 2 x 100,800 cells, most of them empty. The
    totals read by every metric (``total_weight``, the groups' sums) took 7 ms
    a call over the whole arrays (2026-11).
    """
    x = np.concatenate([np.ravel(p) for p in parts])
    return math.fsum(x[x != 0.0])


def _check_weight(sample_weight: Any, n: int, name: str = "sample_weight") -> np.ndarray | None:
    if sample_weight is None:
        return None
    w = as_numeric_array(sample_weight, name)
    if w.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {w.shape}.")
    if w.shape[0] != n:
        raise ValueError(f"{name} has length {w.shape[0]} but conf has length {n}; they must match.")
    w = w.astype(np.float64, copy=False)
    p = weight_problem(w, offset=0)
    if p:
        raise_problems({"sample_weight": p}, {"sample_weight": name})
    return w


def _divisors_near(n_cells: int, n_bins: int) -> tuple[int, int]:
    below = next(d for d in range(n_bins, 0, -1) if n_cells % d == 0)
    above = next(d for d in range(n_bins, n_cells + 1) if n_cells % d == 0)
    return below, above


class _Bits(NamedTuple):
    """A boolean column as Arrow stores it: bit ``offset + i`` (least significant first) of ``buffer`` is row ``i``.

    Lets :func:`calibnb.data.scan_predictions` hand a Parquet ``bool`` column
    (a ``pyarrow.BooleanArray`` without nulls) to the compiled kernel without
    unpacking it to one byte per row.
    """

    buffer: np.ndarray  # uint8
    offset: int
    length: int

    def unpack(self) -> np.ndarray:
        """The rows as a bool array."""
        a = self.offset
        bits = np.unpackbits(self.buffer[a >> 3:(a + self.length + 7) >> 3], bitorder="little")
        return bits[a & 7:(a & 7) + self.length].view(np.bool_)


def _as_bits(y):
    """A ``pyarrow.BooleanArray`` (no nulls) as :class:`_Bits`; anything else unchanged."""
    if isinstance(y, np.ndarray) or not hasattr(y, "buffers"):
        return y
    if y.null_count:
        raise ValueError("correct has missing (null) values.")
    return _Bits(np.frombuffer(y.buffers()[1], dtype=np.uint8), y.offset, len(y))


class _Accumulator:
    """Scratch per-cell sums in front of a :class:`CalibrationStats`, for a stream of chunks.

    Chunks are scattered into plain (uncompensated) scratch sums, by the
    compiled kernel of :mod:`calibnb._kernel` or by NumPy (cache-sized pieces,
    ``numpy.add.at``); every ``_FOLD`` rows, and at :meth:`close`, the scratch
    sums are folded into the state's compensated sums, so no per-cell sum runs
    over more than ``_FOLD`` rows without compensation and a stream of many
    small chunks pays for one fold per ``_FOLD`` rows, not one per chunk.
    The state is only complete after :meth:`close`.
    """

    def __init__(self, state: "CalibrationStats"):
        self.state = state
        g = state.n_cells
        self.cnt = np.zeros(2 * g, dtype=np.int32)  # < 2**31: folded every _FOLD = 2**24 rows
        self.csum = np.zeros(2 * g)
        self.wsum = None
        self.sq, self.sq_lo = 0.0, 0.0
        self.pending = 0
        self.edge_v, self.edge_y, self.edge_w = [], [], []
        self.edge_rows = 0
        self.near_idx = None
        self.buf = None

    def add_checked(self, c: np.ndarray, y, w: np.ndarray | None, offset: int, names: dict | None = None) -> None:
        """Validate one chunk (rows ``offset...`` of the stream) with the in-memory messages, then add it.

        ``y`` is an array, or a ``pyarrow.BooleanArray`` without nulls (read bit by bit). With the
        compiled kernel, the confidences and weights are checked by its first
        pass (the sum of squares), piece by piece of ``_CCHUNK`` rows, before
        the piece is scattered; if a later piece of a longer chunk is bad, the
        earlier ones are already in and the state refuses any further use.
        """
        n = c.shape[0]
        kernels = compiled_kernel(n)
        problems = {}
        y = _as_bits(y)
        if isinstance(y, _Bits):
            if kernels is None:
                y = y.unpack()
        else:
            problems["correct"] = correct_problem(y, offset=offset)
            y = y.astype(bool, copy=False) if not problems["correct"] else y
        if kernels is None or any(problems.values()):
            problems["conf"] = conf_problem(c, offset=offset)
            if w is not None:
                problems["sample_weight"] = weight_problem(w, offset=offset)
            if any(problems.values()):
                raise_problems(problems, names)
        self.add(c, y, w, check=(offset, names))

    def add(self, c: np.ndarray, y, w: np.ndarray | None, *, check: tuple | None = None) -> None:
        """Add rows: conf float32/float64, correct bool (or :class:`_Bits` / pyarrow.BooleanArray), weights float64 or None.

        Without ``check`` the rows must be valid. With ``check=(offset, names)``
        the compiled kernel checks conf and weights as it goes and a bad value
        raises the in-memory message (see :meth:`add_checked`).
        """
        n = c.shape[0]
        if n == 0:
            return
        if (w is not None) != (self.wsum is not None):
            # weighted after unweighted rows (or back): fold, so each scratch holds one kind
            self._fold()
            self.wsum = None if w is None else np.zeros(2 * self.state.n_cells)
        if w is not None:
            self.state.weighted = True
        kernels = compiled_kernel(n)
        y = _as_bits(y)
        if isinstance(y, _Bits):
            if kernels is None:
                y = y.unpack()
        else:
            y = y.view(np.uint8) if y.dtype == np.bool_ else y.astype(np.uint8)
        step = _CCHUNK if kernels is not None else _CHUNK
        for start in range(0, n, step):
            stop = min(start + step, n)
            ww = None if w is None else w[start:stop]
            if kernels is not None:
                bad = self._chunk_compiled(kernels, c[start:stop], y, start, ww)
                if bad:
                    if start:  # earlier rows of this chunk are in: the state is no longer one stream's
                        self.state._acc = None
                        self.state._incomplete = True
                    if check is None:
                        raise AssertionError("CalibrationStats: unchecked rows with invalid values reached the kernel.")
                    offset, names = check
                    problems = {"conf": conf_problem(c, offset=offset)}
                    if w is not None:
                        problems["sample_weight"] = weight_problem(w, offset=offset)
                    raise_problems(problems, names)
            else:
                self._chunk_numpy(c[start:stop], y[start:stop], ww)
            self.pending += stop - start
            if self.pending >= _FOLD:
                self._fold()

    def _chunk_numpy(self, cc: np.ndarray, yy: np.ndarray, ww: np.ndarray | None) -> None:
        g = self.state.n_cells
        m = cc.shape[0]
        if self.buf is None:
            # reused per chunk: fresh temporaries of this size would be page-faulted in every time
            self.buf = {"c": np.empty(_CHUNK), "t": np.empty(_CHUNK), "k": np.empty(_CHUNK),
                        "lo": np.empty(_CHUNK, dtype=bool), "hi": np.empty(_CHUNK, dtype=bool),
                        "i": np.empty(_CHUNK, dtype=np.intp), "yg": np.empty(_CHUNK, dtype=np.intp)}
        b = self.buf
        if cc.dtype != np.float64:
            np.copyto(b["c"][:m], cc)
            cc = b["c"][:m]
        tt, kk, ii = b["t"][:m], b["k"][:m], b["i"][:m]
        # cell = max(ceil(conf * G * shrink) - 1, 0), the in-memory bin formula at M = G;
        # "near": conf * G within NEAR_ABS of an integer (an edge, or float noise off one).
        np.multiply(cc, g * SHRINK, out=tt)
        np.ceil(tt, out=kk)
        np.subtract(kk, tt, out=tt)
        near = np.less(tt, NEAR_ABS, out=b["lo"][:m])
        near |= np.greater(tt, 1.0 - NEAR_ABS, out=b["hi"][:m])
        kk -= 1.0
        np.maximum(kk, 0.0, out=kk)
        np.copyto(ii, kk, casting="unsafe")
        yg = np.multiply(yy, np.intp(g), out=b["yg"][:m])
        ii += yg
        if near.any():
            far = ~near
            self._keep_edges(cc[near], yy[near], None if ww is None else ww[near])
            ii, cc = ii[far], cc[far]
            ww = None if ww is None else ww[far]
        np.add.at(self.cnt, ii, 1)
        # einsum, not dot: numpy's dot calls BLAS, whose idle threads spin on the other
        # cores (measured: twice the CPU time for the same wall time, taken from the reader)
        if ww is None:
            np.add.at(self.csum, ii, cc)
            q = float(np.einsum("i,i->", cc, cc))
        else:
            cw = cc * ww
            np.add.at(self.csum, ii, cw)
            np.add.at(self.wsum, ii, ww)
            q = float(np.einsum("i,i->", cw, cc))
        self.sq, self.sq_lo = _two_sum(self.sq, self.sq_lo, q, 0.0)

    def _chunk_compiled(self, kernels, cc: np.ndarray, y, start: int, ww: np.ndarray | None) -> int:
        """Rows ``start...`` of the chunk (``cc`` and ``ww`` already sliced; ``y`` whole).

        Returns the number of rows with an invalid confidence or weight; when
        it is not 0 nothing of these rows was added.
        """
        g = self.state.n_cells
        if cc.dtype not in (np.float32, np.float64):
            cc = cc.astype(np.float64)
        cc = np.ascontiguousarray(cc)
        m = cc.shape[0]
        weighted = ww is not None
        ww = np.ascontiguousarray(ww, dtype=np.float64) if weighted else _ONE
        hi, lo, n_bad = kernels.squares(weighted)(cc, ww)
        if n_bad:
            return n_bad
        if isinstance(y, _Bits):
            ybuf, y_off, packed = y.buffer, y.offset + start, True
        else:
            ybuf, y_off, packed = np.ascontiguousarray(y[start:start + m]), 0, False
        if self.near_idx is None or self.near_idx.shape[0] < m:
            self.near_idx = np.empty(m, dtype=np.int32)  # m <= _CCHUNK < 2**31
        k = kernels.scatter(weighted, packed)(cc, ybuf, y_off, ww, g, g * SHRINK, self.cnt, self.csum,
                                              self.wsum if weighted else _ONE, self.near_idx)
        self.sq, self.sq_lo = _two_sum(self.sq, self.sq_lo, hi, lo)
        if k:
            idx = self.near_idx[:k].astype(np.int64)
            v = cc[idx].astype(np.float64)
            if packed:
                bit = idx + y_off
                yv = (ybuf[bit >> 3] >> (bit & 7).astype(np.uint8)) & 1
            else:
                yv = ybuf[idx]
            wv = ww[idx] if weighted else None
            self._keep_edges(v, yv, wv)
            # squares() summed every row; the side-table rows are not part of sq_sum
            self.sq, self.sq_lo = _two_sum(self.sq, self.sq_lo, -math.fsum(v * wv * v if weighted else v * v), 0.0)
        return 0

    def _keep_edges(self, v: np.ndarray, yv: np.ndarray, wv: np.ndarray | None) -> None:
        self.edge_v.append(v.astype(np.float64, copy=False))
        self.edge_y.append(yv)
        if wv is not None:
            self.edge_w.append(wv)
        self.edge_rows += v.shape[0]
        if self.edge_rows >= _EDGE_ROWS:  # e.g. rounded confidences: every row is an edge value
            self._fold_edges()

    def _fold_edges(self) -> None:
        """Merge the side-table rows kept since the last fold into the state's side table."""
        if self.edge_v:
            v = np.concatenate(self.edge_v)
            yv = np.concatenate(self.edge_y).astype(np.intp)
            wv = np.concatenate(self.edge_w) if self.edge_w else None
            self.state._add_edges(v, yv, wv)
            self.edge_v, self.edge_y, self.edge_w = [], [], []
        self.edge_rows = 0

    def _fold(self) -> None:
        """Add the scratch sums into the state (compensated) and clear them."""
        st = self.state
        cnt, csum, wsum = self.cnt, self.csum, self.wsum
        used = np.flatnonzero(cnt)  # flat (correctness, cell) indices touched since the last fold
        if used.size:
            st._count.reshape(-1)[used] += cnt[used]
            if st.weighted:
                w = cnt[used].astype(np.float64) if wsum is None else wsum[used]
                _two_sum_at(st._weight, st._weight_lo, used, w)
            else:  # every weight is 1: the weight sums are integers, exact without compensation
                st._weight.reshape(-1)[used] += cnt[used]
            _two_sum_at(st._conf_sum, st._conf_sum_lo, used, csum[used])
            cnt[used] = 0
            csum[used] = 0.0
            if wsum is not None:
                wsum[used] = 0.0
        st._add_sq(self.sq, self.sq_lo)
        self.sq, self.sq_lo, self.pending = 0.0, 0.0, 0
        self._fold_edges()

    def close(self) -> "CalibrationStats":
        """Fold what is left and return the state."""
        self._fold()
        return self.state


# --------------------------------------------------------------------------
# the state
# --------------------------------------------------------------------------


class CalibrationStats:
    """Mergeable sufficient statistics of a binary prediction stream.

    Holds, on a grid of ``n_cells`` confidence cells (default
    :data:`GRID` = 100,800), per cell and correctness the row count, the sum of
    weights and the weighted sum of confidences (each with a compensation
    term), a compensated sum of squares for the Brier score, and an exact side
    table of the confidences that lie on (or within float noise of) a grid
    edge. Memory is about 8 MB whatever the number of predictions, plus 40
    bytes per distinct edge value (a ``.npz`` file keeps only the non-empty
    cells). See the module docstring for the exactness
    argument.

    Every metric method equals the in-memory function of the same name on the
    concatenated data (equal-width bins of any ``n_bins`` dividing the grid):

    .. math::

        \\mathrm{ECE} = \\frac{1}{W}\\sum_{m}\\Big|\\sum_{i \\in B_m} w_i (c_i - y_i)\\Big|,
        \\qquad W = \\sum_i w_i

    (Guo et al. 2017; Si et al. 2022 Eq. 1; Sakai 2024 Eq. 1), and likewise
    MCE, ICE, MacroCE, the rewards, HMR and the top-label Brier score, with
    sample weights where given (weight ``k`` on a row counts as ``k`` copies).
    The KS error needs the order of the predictions inside a cell, so
    :meth:`ks_bounds` gives a guaranteed interval; :func:`calibnb.dask.ks_error`
    makes it exact with a second pass over the data.

    Parameters
    ----------
    n_cells : int, default GRID (100,800)
        Number of grid cells; only states with the same grid merge.

    Examples
    --------
    >>> import numpy as np, calibnb as cn
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(0.5, 1.0, 10_000)
    >>> correct = rng.uniform(size=10_000) < conf
    >>> s = cn.CalibrationStats.from_arrays(conf[:6000], correct[:6000])
    >>> s.update(conf[6000:], correct[6000:])
    CalibrationStats(n=10000, cells=100800, edge_values=0)
    >>> abs(s.ece(n_bins=15) - cn.ece(conf, correct, n_bins=15)) < 1e-12
    True
    >>> low, high = s.ks_bounds()
    >>> low <= cn.ks_error(conf, correct) <= high
    True
    """

    def __init__(self, n_cells: int = GRID):
        if isinstance(n_cells, (bool, np.bool_)) or not isinstance(n_cells, numbers.Integral) or n_cells < 1:
            raise ValueError(f"n_cells must be a positive integer; got {n_cells!r}.")
        g = int(n_cells)
        self.n_cells = g
        self.weighted = False
        self._count = np.zeros((2, g), dtype=np.int64)
        self._weight = np.zeros((2, g))
        self._weight_lo = np.zeros((2, g))
        self._conf_sum = np.zeros((2, g))
        self._conf_sum_lo = np.zeros((2, g))
        self._sq_sum = 0.0
        self._sq_lo = 0.0
        self._edge_values = np.zeros(0)
        self._edge_count = np.zeros((0, 2), dtype=np.int64)
        self._edge_weight = np.zeros((0, 2))
        self._acc = None  # open _Accumulator of update() calls, folded on the next read
        self._incomplete = False

    # ------------------------------------------------------------ building

    @classmethod
    def from_arrays(cls, conf, correct, *, sample_weight=None, n_cells: int = GRID) -> "CalibrationStats":
        """State of the predictions ``conf`` (in [0, 1]) and ``correct`` (0/1 or bool).

        Validation and messages are those of the in-memory metrics; ``sample_weight``
        (optional) must be finite and non-negative.

        Examples
        --------
        >>> s = CalibrationStats.from_arrays([0.3, 0.9, 0.9], [0, 1, 0])
        >>> s.n, round(s.ece(n_bins=10), 4)
        (3, 0.3667)
        """
        out = cls(n_cells)
        out.update(conf, correct, sample_weight=sample_weight)
        return out

    def update(self, conf, correct, *, sample_weight=None) -> "CalibrationStats":
        """Add predictions to this state in place (streaming) and return it.

        The whole input is validated first (a refused update leaves the state
        as it was). Many small updates are cheap: their rows wait in scratch
        sums until 2**24 rows have come or something reads the state.
        """
        c, y = check_conf_correct(conf, correct)
        w = _check_weight(sample_weight, c.shape[0])
        self._add(c, y, w)
        return self

    def _add(self, c: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> None:
        """Accumulate validated conf (float32 or float64), bool correct and optional float64 weights."""
        self._stream().add(c, y, w)

    def update_chunk(self, conf: np.ndarray, correct, *, sample_weight: np.ndarray | None = None, offset: int = 0,
                     names: dict | None = None) -> "CalibrationStats":
        """Add one chunk of a longer stream (rows ``offset...``), validated where it is, and return the state.

        For readers of large files (:func:`calibnb.data.scan_predictions`,
        :mod:`calibnb.dask`): ``conf`` is a float32 or float64 array (float32 is
        taken as it is), ``correct`` an array of 0/1 values or a
        ``pyarrow.BooleanArray`` without nulls (read bit by bit, no copy),
        ``sample_weight`` float64 or None. A bad value raises the in-memory
        message with its row counted from the start of the stream
        (``offset + i``) and the argument named as in ``names`` (e.g.
        ``{"conf": "conf column 'p'"}``). Unlike :meth:`update`, a chunk refused
        part-way may leave the state incomplete (it then refuses any use):
        the compiled kernel checks the confidences as it adds them.

        Examples
        --------
        >>> s = CalibrationStats().update_chunk(np.array([0.3, 0.9]), np.array([False, True]), offset=10)
        >>> s.n
        2
        >>> CalibrationStats().update_chunk(np.array([0.3, 1.5]), np.array([0, 1]), offset=10)
        Traceback (most recent call last):
        ...
        ValueError: conf has 1 value outside [0, 1]; first at index 11: 1.5.
        """
        offset = check_positive_int(offset, "offset", minimum=0)
        self._stream().add_checked(conf, correct, sample_weight, offset, names)
        return self

    def _stream(self) -> _Accumulator:
        """The open accumulator of this state (scratch sums, folded on the next read)."""
        if self._incomplete:
            self.flush()  # raises
        if self._acc is None:
            self._acc = _Accumulator(self)
        return self._acc

    def flush(self) -> "CalibrationStats":
        """Fold the rows of pending updates into the compensated sums and return the state (every read does this first).

        Raises RuntimeError if a refused :meth:`update_chunk` left the state incomplete.

        >>> CalibrationStats().update([0.2, 0.8], [0, 1]).flush().n
        2
        """
        if self._incomplete:
            raise RuntimeError("this CalibrationStats is incomplete: a chunk with an invalid value was refused "
                               "part-way through; build the state again from valid data.")
        acc, self._acc = self._acc, None
        if acc is not None:
            acc.close()
        return self

    # The accumulated sums, read-only views for inspection; reading one folds
    # the rows of pending update() calls first.
    @property
    def count(self) -> np.ndarray:
        """Rows per (correctness, cell), int64 of shape (2, n_cells); row 0 wrong, row 1 correct."""
        self.flush()
        return self._count

    @property
    def weight(self) -> np.ndarray:
        """Sum of weights per (correctness, cell) (without its compensation term)."""
        self.flush()
        return self._weight

    @property
    def conf_sum(self) -> np.ndarray:
        """Sum of ``weight * conf`` per (correctness, cell) (without its compensation term)."""
        self.flush()
        return self._conf_sum

    @property
    def sq_sum(self) -> float:
        """Sum of ``weight * conf**2`` over the rows kept in cells (without its compensation term)."""
        self.flush()
        return self._sq_sum

    @property
    def edge_values(self) -> np.ndarray:
        """Sorted distinct confidences of the side table (on or within float noise of a grid edge)."""
        self.flush()
        return self._edge_values

    @property
    def edge_count(self) -> np.ndarray:
        """Rows per side-table value and correctness, int64 of shape (k, 2)."""
        self.flush()
        return self._edge_count

    @property
    def edge_weight(self) -> np.ndarray:
        """Weight sums per side-table value and correctness, shape (k, 2)."""
        self.flush()
        return self._edge_weight

    def _add_sq(self, hi: float, lo: float) -> None:
        """sq_sum += hi + lo (Neumaier)."""
        s = self._sq_sum + hi
        if abs(self._sq_sum) >= abs(hi):
            err = (self._sq_sum - s) + hi
        else:
            err = (hi - s) + self._sq_sum
        self._sq_sum = s
        self._sq_lo += err + lo

    def _add_edges(self, v: np.ndarray, yv: np.ndarray, wv: np.ndarray | None) -> None:
        """Merge rows (value, correct, weight) into the exact side table."""
        uniq, inv = np.unique(v + 0.0, return_inverse=True)  # + 0.0: -0.0 -> +0.0
        k = uniq.shape[0]
        key = inv.reshape(-1) * 2 + yv
        cnt = np.bincount(key, minlength=2 * k).reshape(k, 2).astype(np.int64)
        wt = cnt.astype(np.float64) if wv is None else np.bincount(key, weights=wv, minlength=2 * k).reshape(k, 2)
        self._merge_edges(uniq, cnt, wt)

    def _merge_edges(self, values: np.ndarray, cnt: np.ndarray, wt: np.ndarray) -> None:
        """Add a side table (sorted distinct values with per-correctness counts and weights) into this one."""
        if self._edge_values.shape[0] == 0:
            self._edge_values, self._edge_count, self._edge_weight = values.copy(), cnt.copy(), wt.copy()
            return
        uniq, inv = np.unique(np.concatenate((self._edge_values, values)), return_inverse=True)
        k = uniq.shape[0]
        inv = inv.reshape(-1)
        new_cnt = np.zeros((k, 2), dtype=np.int64)
        new_wt = np.zeros((k, 2))
        for j in (0, 1):
            new_cnt[:, j] = np.bincount(inv, weights=np.concatenate((self._edge_count[:, j], cnt[:, j])),
                                        minlength=k).astype(np.int64)
            new_wt[:, j] = np.bincount(inv, weights=np.concatenate((self._edge_weight[:, j], wt[:, j])), minlength=k)
        self._edge_values, self._edge_count, self._edge_weight = uniq, new_cnt, new_wt

    # ------------------------------------------------------------ merging

    def _check_other(self, other) -> None:
        if not isinstance(other, CalibrationStats):
            raise TypeError(f"other must be a CalibrationStats; got {type(other).__name__}.")
        if other.n_cells != self.n_cells:
            raise ValueError(f"other has a grid of {other.n_cells} cells but this state has {self.n_cells}; "
                             "only states on the same grid merge.")

    def merge(self, other: "CalibrationStats") -> "CalibrationStats":
        """Add the state ``other`` into this one in place and return this state.

        The result is the state of the two streams concatenated (in this
        order: the KS and equal-mass computations of :mod:`calibnb.dask` only
        use the order through their second pass over the data).
        """
        self._check_other(other)
        exact_weights = not (self.weighted or other.weighted)  # integer weight sums: plain adds are exact
        self.weighted = self.weighted or other.weighted
        used = np.flatnonzero(other.count.reshape(-1))  # a cell without rows has zero sums
        if used.size:
            self.count.reshape(-1)[used] += other.count.reshape(-1)[used]
            if exact_weights:
                self.weight.reshape(-1)[used] += other.weight.reshape(-1)[used]
            else:
                _two_sum_at(self.weight, self._weight_lo, used, other.weight.reshape(-1)[used],
                            other._weight_lo.reshape(-1)[used])
            _two_sum_at(self.conf_sum, self._conf_sum_lo, used, other.conf_sum.reshape(-1)[used],
                        other._conf_sum_lo.reshape(-1)[used])
        self._add_sq(other.sq_sum, other._sq_lo)
        if other.edge_values.shape[0]:
            self._merge_edges(other.edge_values, other.edge_count, other.edge_weight)
        return self

    def copy(self) -> "CalibrationStats":
        """An independent copy of this state."""
        out = CalibrationStats(self.n_cells)
        return out.merge(self)

    def __add__(self, other):
        if not isinstance(other, CalibrationStats):
            return NotImplemented
        return self.copy().merge(other)

    def __iadd__(self, other):
        if not isinstance(other, CalibrationStats):
            return NotImplemented
        return self.merge(other)

    def __repr__(self) -> str:
        return f"CalibrationStats(n={self.n}, cells={self.n_cells}, edge_values={self.edge_values.shape[0]})"

    # ------------------------------------------------------------ totals

    @property
    def n(self) -> int:
        """Number of rows (predictions) added."""
        return int(self.count.sum() + self.edge_count.sum())

    @property
    def total_weight(self) -> float:
        """Sum of the sample weights (``n`` without weights)."""
        return _exact_sum(self.weight, self._weight_lo, self.edge_weight)

    def _require_data(self) -> float:
        if self.n == 0:
            raise ValueError("this CalibrationStats is empty; at least one prediction is needed.")
        w = self.total_weight
        if w <= 0:
            raise ValueError("the sample weights of this CalibrationStats sum to 0; at least one positive weight "
                             "is needed.")
        return w

    def _group_sums(self):
        """(W_pos, W_neg, sum conf over correct, sum conf over wrong), each summed exactly (fsum)."""
        ev = self.edge_values
        w_neg = _exact_sum(self.weight[0], self._weight_lo[0], self.edge_weight[:, 0])
        w_pos = _exact_sum(self.weight[1], self._weight_lo[1], self.edge_weight[:, 1])
        c_neg = _exact_sum(self.conf_sum[0], self._conf_sum_lo[0], ev * self.edge_weight[:, 0])
        c_pos = _exact_sum(self.conf_sum[1], self._conf_sum_lo[1], ev * self.edge_weight[:, 1])
        return w_pos, w_neg, c_pos, c_neg

    def _ice_parts(self) -> tuple[float, float]:
        w_pos, w_neg, c_pos, c_neg = self._group_sums()
        ice_pos = (w_pos - c_pos) / w_pos if w_pos > 0 else 0.0
        ice_neg = c_neg / w_neg if w_neg > 0 else 0.0
        return max(ice_pos, 0.0), max(ice_neg, 0.0)

    # ------------------------------------------------------------ binned

    def _check_bins(self, n_bins, binning: str) -> int:
        n_bins = check_n_bins(n_bins)
        check_choice(binning, ("width", "mass"), "binning")
        if binning == "mass":
            raise ValueError("binning='mass' needs the order of the predictions inside a grid cell, which "
                             "CalibrationStats does not keep; use calibnb.dask.ece(..., binning='mass') "
                             "(two passes over the data) or the in-memory calibnb.ece.")
        if self.n_cells % n_bins:
            below, above = _divisors_near(self.n_cells, n_bins)
            raise ValueError(f"n_bins must divide the grid size {self.n_cells} of CalibrationStats; got {n_bins} "
                             f"(nearest divisors: {below} and {above}).")
        return n_bins

    def _bin_sums(self, n_bins: int):
        """Per equal-width bin: rows, weight, weight of correct, weighted conf sum (numpy arrays)."""
        r = self.n_cells // n_bins
        count = self.count.reshape(2, n_bins, r).sum(axis=2)
        weight = (self.weight.reshape(2, n_bins, r).sum(axis=2)
                  + self._weight_lo.reshape(2, n_bins, r).sum(axis=2))
        conf = (self.conf_sum.reshape(2, n_bins, r).sum(axis=2).sum(axis=0)
                + self._conf_sum_lo.reshape(2, n_bins, r).sum(axis=2).sum(axis=0))
        if self.edge_values.shape[0]:
            b = bin_indices(self.edge_values, n_bins=n_bins)
            np.add.at(count.T, b, self.edge_count)
            np.add.at(weight.T, b, self.edge_weight)
            np.add.at(conf, b, self.edge_values * self.edge_weight.sum(axis=1))
        return count.sum(axis=0), weight.sum(axis=0), weight[1], conf

    def ece(self, n_bins: int = 10, binning: str = "width") -> float:
        """Expected calibration error with ``n_bins`` equal-width bins (see :func:`calibnb.ece`).

        .. math::

            \\mathrm{ECE} = \\frac{1}{W}\\sum_{m=1}^{M}\\Big|\\sum_{i \\in B_m} w_i(c_i - y_i)\\Big|

        ``n_bins`` must divide the grid size; ``binning="mass"`` raises (see
        :func:`calibnb.dask.ece`).

        Examples
        --------
        >>> s = CalibrationStats.from_arrays([0.2, 0.25, 0.9], [0, 1, 1])
        >>> round(s.ece(n_bins=2), 4)
        0.2167
        """
        n_bins = self._check_bins(n_bins, binning)
        total = self._require_data()
        _, _, w_pos, conf = self._bin_sums(n_bins)
        return float(np.abs(conf - w_pos).sum() / total)

    def mce(self, n_bins: int = 10, binning: str = "width") -> float:
        """Maximum calibration error over non-empty equal-width bins (see :func:`calibnb.mce`).

        .. math::

            \\mathrm{MCE} = \\max_{m:\\,W_m > 0}\\frac{|\\sum_{i \\in B_m} w_i(c_i - y_i)|}{W_m}

        Examples
        --------
        >>> s = CalibrationStats.from_arrays([0.2, 0.25, 0.9], [0, 1, 1])
        >>> round(s.mce(n_bins=2), 4)
        0.275
        """
        n_bins = self._check_bins(n_bins, binning)
        self._require_data()
        _, weight, w_pos, conf = self._bin_sums(n_bins)
        keep = weight > 0
        return float(np.max(np.abs(conf[keep] - w_pos[keep]) / weight[keep]))

    def reliability_table(self, n_bins: int = 10, binning: str = "width"):
        """Per-bin statistics, as :func:`calibnb.reliability_table` (empty bins omitted).

        Columns ``bin, lower, upper, count, n_correct, mean_conf, accuracy, gap``;
        with sample weights ``count`` and ``n_correct`` are weight sums (floats)
        and the means are weighted.

        Examples
        --------
        >>> s = CalibrationStats.from_arrays([0.2, 0.25, 0.9], [0, 1, 1])
        >>> s.reliability_table(n_bins=2)[["bin", "count", "accuracy"]].to_string(index=False)
        ' bin  count  accuracy\\n   0      2       0.5\\n   1      1       1.0'
        """
        n_bins = self._check_bins(n_bins, binning)
        self._require_data()
        _, weight, w_pos, conf = self._bin_sums(n_bins)
        bins = np.flatnonzero(weight > 0)
        return reliability_frame(bins, bins / n_bins, (bins + 1) / n_bins, weight[bins], w_pos[bins], conf[bins],
                                  integer=not self.weighted)

    # ------------------------------------------------------------ instance level

    def ice(self) -> float:
        """Instance-level calibration error :math:`\\frac{1}{W}\\sum_i w_i|y_i - c_i|` (Si et al. 2022, §4.2).

        Examples
        --------
        >>> CalibrationStats.from_arrays([0.9, 0.2], [1, 1]).ice()
        0.45
        """
        total = self._require_data()
        w_pos, w_neg, c_pos, c_neg = self._group_sums()
        return float(((w_pos - c_pos) + c_neg) / total)

    def macro_ce(self) -> float:
        """MacroCE :math:`\\tfrac12(\\mathrm{ICE}_{pos} + \\mathrm{ICE}_{neg})` (Si et al. 2022, §4.2).

        Examples
        --------
        >>> CalibrationStats.from_arrays([0.75] * 4, [1, 1, 1, 0]).macro_ce()
        0.5
        """
        self._require_data()
        pos, neg = self._ice_parts()
        return float((pos + neg) / 2)

    def rewards(self) -> Rewards:
        """Sakai 2024's rewards :math:`R_O = 1 - O/|I^-|`, :math:`R_U = 1 - U/|I^+|` (Eqs. 5-7).

        Examples
        --------
        >>> r = CalibrationStats.from_arrays([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8],
        ...                                  [1, 1, 0, 1, 0, 1, 1, 1, 1]).rewards()
        >>> round(r.r_o, 3), round(r.r_u, 3)
        (0.5, 0.629)
        """
        self._require_data()
        pos, neg = self._ice_parts()
        return Rewards(float(1.0 - neg), float(1.0 - pos))

    def hmr(self, beta: float = 1.0) -> float:
        """Harmonic mean of rewards :math:`(\\beta^2+1)R_O R_U/(\\beta^2 R_O + R_U)` (Sakai 2024, Eq. 8).

        Examples
        --------
        >>> s = CalibrationStats.from_arrays([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8],
        ...                                  [1, 1, 0, 1, 0, 1, 1, 1, 1])
        >>> round(s.hmr(), 3)
        0.557
        """
        beta = check_scalar_in_range(beta, "beta", low=0.0)
        self._require_data()
        pos, neg = self._ice_parts()
        r_o, r_u = 1.0 - neg, 1.0 - pos
        b2 = beta * beta
        den = b2 * r_o + r_u
        if den <= 0.0:
            return 0.0
        return float((b2 + 1.0) * r_o * r_u / den)

    def brier_top(self) -> float:
        """Top-label Brier score :math:`\\frac{1}{W}\\sum_i w_i(c_i - y_i)^2` (Gupta et al. 2021).

        Examples
        --------
        >>> CalibrationStats.from_arrays([0.9, 0.2], [1, 0]).brier_top()
        0.025
        """
        total = self._require_data()
        w_pos, _, c_pos, _ = self._group_sums()
        ev = self.edge_values
        sq = _exact_sum([self.sq_sum, self._sq_lo], ev * ev * self.edge_weight.sum(axis=1))
        # sum w (c - y)^2 = sum w c^2 - 2 sum_{y=1} w c + sum_{y=1} w
        return float(max(sq - 2.0 * c_pos + w_pos, 0.0) / total)

    # ------------------------------------------------------------ KS

    def cell_sums(self):
        """Per cell of the fine grid, side-table values folded in: (rows, weight of correct, conf sum over correct,
        conf sum over wrong), four arrays of length ``n_cells``; what the exact equal-mass bins of
        :mod:`calibnb.dask` are cut from.

        >>> rows, w_pos, c_pos, c_neg = CalibrationStats(10).update([0.25, 0.95], [0, 1]).cell_sums()
        >>> rows.tolist(), float(c_pos.sum()), float(c_neg.sum())
        ([0, 0, 1, 0, 0, 0, 0, 0, 0, 1], 0.95, 0.25)
        """
        g = self.n_cells
        rows = self.count.sum(axis=0)
        w_pos = self.weight[1] + self._weight_lo[1]
        c_pos = self.conf_sum[1] + self._conf_sum_lo[1]
        c_neg = self.conf_sum[0] + self._conf_sum_lo[0]
        if self.edge_values.shape[0]:
            ev = self.edge_values
            cell = cell_of(ev, g)
            rows = rows + np.bincount(cell, weights=self.edge_count.sum(axis=1), minlength=g).astype(np.int64)
            w_pos = w_pos + np.bincount(cell, weights=self.edge_weight[:, 1], minlength=g)
            c_pos = c_pos + np.bincount(cell, weights=ev * self.edge_weight[:, 1], minlength=g)
            c_neg = c_neg + np.bincount(cell, weights=ev * self.edge_weight[:, 0], minlength=g)
        return rows, w_pos, c_pos, c_neg

    def ks_segments(self):
        r"""The sorted stream as consecutive segments, with the exact gap at each segment end and a bound inside.

        Segments, in ascending order of confidence: per cell, the side-table
        values just above the cell's lower edge, then the cell's grid items,
        then the side-table values at its upper edge (grid items lie at least
        1e-7 cell widths inside the cell, side-table values within 1e-7 of an
        edge). Returns a dict of arrays: ``kind`` (0 grid cell, 1 side-table
        value), ``ref`` (cell index or side-table row), ``rows``, ``end``
        (unnormalised running gap :math:`\sum w(y - c)` after the segment),
        ``upper`` (bound of :math:`|\text{gap}|` inside the segment, any order:
        the gap stays in ``[prev - A, prev + P]`` with
        :math:`P = \sum_{\text{correct}} w(1 - c)`,
        :math:`A = \sum_{\text{wrong}} w c`), ``exact_group`` and
        ``exact_order`` (the bound is the exact maximum for ``ties="group"`` /
        ``"order"``: a single value, or a single value of one correctness,
        whose gap is monotone).
        """
        g = self.n_cells
        rows_g = self.count.sum(axis=0)
        used = np.flatnonzero(rows_g > 0)
        ev = self.edge_values
        cell_e = cell_of(ev, g)
        key = np.concatenate((3 * used + 1, 3 * cell_e + np.where(ev * g < cell_e + 0.5, 0, 2)))
        sub = np.concatenate((np.zeros(used.shape[0]), ev))
        order = np.lexsort((sub, key))
        kind = np.concatenate((np.zeros(used.shape[0], dtype=np.int8), np.ones(ev.shape[0], dtype=np.int8)))[order]
        ref = np.concatenate((used, np.arange(ev.shape[0])))[order]
        rows = np.concatenate((rows_g[used], self.edge_count.sum(axis=1)))[order]
        w_pos = np.concatenate((self.weight[1, used] + self._weight_lo[1, used], self.edge_weight[:, 1]))[order]
        c_pos = np.concatenate((self.conf_sum[1, used] + self._conf_sum_lo[1, used], ev * self.edge_weight[:, 1]))
        c_neg = np.concatenate((self.conf_sum[0, used] + self._conf_sum_lo[0, used], ev * self.edge_weight[:, 0]))
        c_pos, c_neg = c_pos[order], c_neg[order]
        end = np.cumsum(w_pos - c_pos - c_neg)
        prev = np.concatenate(([0.0], end[:-1]))
        upper = np.maximum(np.maximum(np.abs(prev + (w_pos - c_pos)), np.abs(prev - c_neg)), np.abs(end))
        mono = np.concatenate((np.zeros(used.shape[0], dtype=bool), (self.edge_count == 0).any(axis=1)))[order]
        exact_group = kind == 1
        exact_order = exact_group & mono
        upper = np.where(exact_group, np.abs(end), upper)
        upper_order = np.where(exact_order, np.maximum(np.abs(prev), np.abs(end)), upper)
        upper_order = np.where(exact_group & ~mono, np.maximum(np.abs(prev + (w_pos - c_pos)), np.abs(prev - c_neg)),
                               upper_order)
        upper_order = np.maximum(upper_order, np.abs(end))
        return {"kind": kind, "ref": ref, "rows": rows, "end": end, "prev": prev,
                "upper_group": upper, "upper_order": upper_order,
                "exact_group": exact_group, "exact_order": exact_order}

    def ks_bounds(self) -> tuple[float, float]:
        """Guaranteed ``(low, high)`` bounds of the KS error of the stream.

        .. math::

            \\mathrm{KS} = \\frac{1}{W}\\max_i\\Big|\\sum_{j \\le i} w_{(j)}(y_{(j)} - c_{(j)})\\Big|

        (Gupta et al. 2021 Eqs. 11-12; Sakai 2024 Eqs. 3-4), for both
        ``ties="order"`` and ``ties="group"`` of :func:`calibnb.ks_error`.
        ``low`` is the largest gap at a cell end (every cell end is the end of
        a tie group, so both variants evaluate it); ``high`` adds, in the cell
        where it is reached, at most the weight of that cell's correct items
        times ``1 - conf`` or of its wrong items times ``conf``. Hence
        ``high - low`` is at most the largest fraction of the weight in one
        cell, about ``1/100800`` for confidences spread over [0, 1] (exactly 0
        with ``ties="group"`` in cells holding a single confidence value, which
        the width bound still counts). :func:`calibnb.dask.ks_error` closes the
        gap with a second pass over the few cells whose bound exceeds ``low``.

        Examples
        --------
        >>> import numpy as np, calibnb as cn
        >>> conf = np.linspace(0.01, 0.99, 999)
        >>> correct = np.arange(999) % 3 != 0
        >>> low, high = CalibrationStats.from_arrays(conf, correct).ks_bounds()
        >>> low <= cn.ks_error(conf, correct) <= high, high - low < 1e-3
        (True, True)
        """
        total = self._require_data()
        seg = self.ks_segments()
        low = float(np.max(np.abs(seg["end"])) / total) - _KS_SLACK
        high = float(np.max(seg["upper_order"]) / total) + _KS_SLACK
        return max(low, 0.0), min(high, 1.0)

    # ------------------------------------------------------------ serialisation

    def _arrays(self) -> dict[str, np.ndarray]:
        """Sparse arrays of the state (non-empty cells only)."""
        used = np.flatnonzero(self.count.sum(axis=0) > 0)
        return {
            "format": np.array(_FORMAT),
            "n_cells": np.array(self.n_cells, dtype=np.int64),
            "weighted": np.array(self.weighted),
            "cells": used.astype(np.int64),
            "count": self.count[:, used],
            "weight": self.weight[:, used],
            "weight_lo": self._weight_lo[:, used],
            "conf_sum": self.conf_sum[:, used],
            "conf_sum_lo": self._conf_sum_lo[:, used],
            "sq_sum": np.array([self.sq_sum, self._sq_lo]),
            "edge_values": self.edge_values,
            "edge_count": self.edge_count,
            "edge_weight": self.edge_weight,
        }

    @classmethod
    def _from_mapping(cls, d, source: str) -> "CalibrationStats":
        try:
            fmt = str(np.asarray(d["format"]))
            if fmt != _FORMAT:
                raise ValueError(f"{source} is not a CalibrationStats state (format {fmt!r}, expected {_FORMAT!r}).")
            out = cls(int(np.asarray(d["n_cells"])))
            out.weighted = bool(np.asarray(d["weighted"]))
            cells = np.asarray(d["cells"], dtype=np.int64)
            if cells.size and (cells.min() < 0 or cells.max() >= out.n_cells):
                raise ValueError(f"{source} has cell indices outside the grid of {out.n_cells} cells.")
            out.count[:, cells] = np.asarray(d["count"], dtype=np.int64).reshape(2, -1)
            out.weight[:, cells] = np.asarray(d["weight"], dtype=np.float64).reshape(2, -1)
            out._weight_lo[:, cells] = np.asarray(d["weight_lo"], dtype=np.float64).reshape(2, -1)
            out.conf_sum[:, cells] = np.asarray(d["conf_sum"], dtype=np.float64).reshape(2, -1)
            out._conf_sum_lo[:, cells] = np.asarray(d["conf_sum_lo"], dtype=np.float64).reshape(2, -1)
            out._sq_sum, out._sq_lo = (float(x) for x in np.asarray(d["sq_sum"], dtype=np.float64))
            out._edge_values = np.asarray(d["edge_values"], dtype=np.float64).reshape(-1)
            out._edge_count = np.asarray(d["edge_count"], dtype=np.int64).reshape(-1, 2)
            out._edge_weight = np.asarray(d["edge_weight"], dtype=np.float64).reshape(-1, 2)
        except KeyError as exc:
            raise ValueError(f"{source} is not a CalibrationStats state: missing field {exc}.") from None
        return out

    def to_npz(self, path) -> None:
        """Write the state to a compressed ``.npz`` file (written to a temporary file, then renamed).

        Examples
        --------
        >>> import os, tempfile
        >>> s = CalibrationStats.from_arrays([0.3, 0.9], [0, 1])
        >>> path = os.path.join(tempfile.mkdtemp(), "part.npz")
        >>> s.to_npz(path)
        >>> CalibrationStats.from_npz(path).ece() == s.ece()
        True
        """
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(suffix=".npz", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(fh, **self._arrays())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def from_npz(cls, path) -> "CalibrationStats":
        """Read a state written by :meth:`to_npz`."""
        with np.load(os.fspath(path), allow_pickle=False) as d:
            return cls._from_mapping({k: d[k] for k in d.files}, f"file {os.fspath(path)!r}")

    def to_json(self) -> str:
        """The state as a JSON string (non-empty cells only; floats written exactly, as ``repr``).

        Examples
        --------
        >>> s = CalibrationStats.from_arrays([0.3, 0.9], [0, 1])
        >>> CalibrationStats.from_json(s.to_json()).macro_ce() == s.macro_ce()
        True
        """
        obj = {}
        for k, v in self._arrays().items():
            obj[k] = v.tolist() if v.ndim else v.item()
        return json.dumps(obj, separators=(",", ":"), allow_nan=True)

    @classmethod
    def from_json(cls, text: str) -> "CalibrationStats":
        """Read a state written by :meth:`to_json`."""
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"text must be a JSON string; got {type(text).__name__}.")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"text is not valid JSON: {exc}.") from None
        if not isinstance(obj, dict):
            raise ValueError("text is not a CalibrationStats state (a JSON object is expected).")
        return cls._from_mapping(obj, "text")

    def __getstate__(self):
        # the sparse arrays themselves: pickle protocol 5 (Dask's) sends them without copies;
        # an unweighted state's weight sums are its counts, so they are left out (40% less to send)
        d = self._arrays()
        if not self.weighted:
            del d["weight"], d["weight_lo"]
        return d

    def __setstate__(self, state):
        if isinstance(state, bytes):  # pickled by calibnb before the arrays were sent as they are
            with np.load(io.BytesIO(state), allow_pickle=False) as d:
                state = {k: d[k] for k in d.files}
        if "weight" not in state and not bool(np.asarray(state.get("weighted", True))):
            state = dict(state, weight=np.asarray(state["count"], dtype=np.float64),
                         weight_lo=np.zeros(np.shape(state["count"])))
        other = CalibrationStats._from_mapping(state, "pickle")
        self.__dict__.update(other.__dict__)
