"""Compiled one-pass kernel of :meth:`calibnb.CalibrationStats.update` (optional; not public API).

The NumPy kernel of :class:`calibnb.CalibrationStats` makes about fifteen
passes over every chunk (scale, ceil, the side-table test, the cell index, two
``numpy.add.at`` scatters, a dot product). With :mod:`numba` installed (it comes
with the ``calibnb[dask]`` extra), chunks of at least :data:`MIN_ROWS` rows go
through one compiled loop instead, which does the same floating-point
operations in the same order per row:

* ``t = float64(conf) * (G * SHRINK)``, ``k = ceil(t)``, ``f = k - t``; the row
  goes to the side table when ``f < NEAR_ABS`` or ``f > 1 - NEAR_ABS``
  (:func:`calibnb._streaming.near_edge`, op for op), else to cell
  ``max(k - 1, 0)`` of its correctness row;
* count, ``conf`` (or ``weight * conf``) and weight are added to the scratch
  per-cell sums in row order, as ``numpy.add.at`` adds them,

so cells, counts and per-cell sums are bit for bit those of the NumPy kernel.
Only the sum of squares (the Brier term) is added in another order: a second,
vectorisable loop sums ``w * c * c`` over all rows (blocks of 1,024 rows in four
partial sums, compensated across blocks) and the side-table rows' squares are
then subtracted, which changes it by a few units in the last place. Float32 confidences are read as they are (a float32
times ``G`` is exact in float64), so a Parquet column is never copied to
float64.

``CALIBNB_KERNEL`` chooses: ``auto`` (default: numba when importable and the
chunk has at least :data:`MIN_ROWS` rows), ``numpy`` (never compile) or
``numba`` (always, an error when numba is missing). The variable is read and
checked in one place for the whole package, with the in-memory metrics' kernels
(:func:`calibnb.validation.kernel_choice`, :func:`calibnb.validation.choose_compiled`).
"""

from __future__ import annotations

from ..validation import choose_compiled, kernel_choice
from ._streaming import NEAR_ABS

__all__ = ["MIN_ROWS", "Kernels", "kernel_choice", "compiled_kernel"]

#: Chunks shorter than this use the NumPy kernel under ``CALIBNB_KERNEL=auto``
#: (compiling costs about half a second once per process and dtype).
MIN_ROWS = 1 << 16
_cache: dict = {}


def compiled_kernel(n_rows: int):
    """The compiled :class:`Kernels` for a chunk of ``n_rows`` rows, or None to use NumPy."""
    return choose_compiled(n_rows, MIN_ROWS, _cache, Kernels)


class Kernels:
    """The compiled functions, one specialisation per (weighted, packed) built on first use.

    ``squares(weighted)(c, w) -> (sq, sq_lo, n_bad)``: compensated sum of
    ``w * c * c`` (blocks of 1,024 rows in four partial sums) and the number of
    rows whose confidence is not in [0, 1] (NaN included) or whose weight is
    not finite and non-negative. It runs first: a chunk with ``n_bad > 0`` is
    refused before anything is scattered.

    ``scatter(weighted, packed)(c, y, y_off, w, g, scale, cnt, csum, wsum,
    near_idx) -> n_near``: adds every row to the scratch sums or lists it in
    ``near_idx[:n_near]`` for the side table. ``y`` holds one 0/1 byte per row,
    or with ``packed`` is an Arrow bit-packed boolean buffer whose row 0 is
    bit ``y_off`` (least significant bit first).
    """

    def __init__(self):
        self._fns: dict = {}

    def squares(self, weighted: bool):
        key = ("squares", bool(weighted))
        if key not in self._fns:
            self._fns[key] = _make_squares(bool(weighted))
        return self._fns[key]

    def scatter(self, weighted: bool, packed: bool):
        key = ("scatter", bool(weighted), bool(packed))
        if key not in self._fns:
            self._fns[key] = _make_scatter(bool(weighted), bool(packed))
        return self._fns[key]


# The factories close over their flags, which numba compiles as constants (one
# machine-code loop per variant, without the branches); calibnb.jit.njit keeps each
# variant on disk, in a file named by its key (flags, signature), which processes
# compiling at once cannot mix up.

_LO = NEAR_ABS
_HI = 1.0 - NEAR_ABS
_NONNEG = 0x7FFFFFFFFFFFFFFF


def _make_squares(weighted: bool):
    import numpy as np

    from ..jit import njit

    @njit(nogil=True, inline="always")
    def term(c, w, i):
        """(w * c * c, 1 if the row is invalid else 0) of row i."""
        x = np.float64(c[i])
        if weighted:
            wi = w[i]
            # bitwise & (no short-circuit branches); NaN fails every comparison
            return (x * wi) * x, np.int64((x >= 0.0) & (x <= 1.0) & (wi >= 0.0) & (wi < np.inf)) ^ 1
        return x * x, np.int64((x >= 0.0) & (x <= 1.0)) ^ 1

    @njit(nogil=True)
    def squares(c, w):
        n = c.shape[0]
        sq = 0.0
        sq_lo = 0.0
        bad = 0
        for b in range(0, n, 1024):
            e = min(b + 1024, n)
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            e4 = b + ((e - b) & ~3)
            for i in range(b, e4, 4):  # four partial sums
                q, z = term(c, w, i)
                s0 += q
                bad += z
                q, z = term(c, w, i + 1)
                s1 += q
                bad += z
                q, z = term(c, w, i + 2)
                s2 += q
                bad += z
                q, z = term(c, w, i + 3)
                s3 += q
                bad += z
            for i in range(e4, e):
                q, z = term(c, w, i)
                s0 += q
                bad += z
            part = (s0 + s1) + (s2 + s3)
            t = sq + part
            if abs(sq) >= abs(part):
                sq_lo += (sq - t) + part
            else:
                sq_lo += (part - t) + sq
            sq = t
        return sq, sq_lo, bad

    return squares


def _make_scatter(weighted: bool, packed: bool):
    import numpy as np

    from ..jit import njit

    @njit(nogil=True)
    def scatter(c, y, y_off, w, g, scale, cnt, csum, wsum, near_idx):
        n = c.shape[0]
        n_near = 0
        for i in range(n):
            ci = np.float64(c[i])
            t = ci * scale
            k = np.ceil(t)
            f = k - t
            if f < _LO or f > _HI:
                near_idx[n_near] = i
                n_near += 1
                continue
            j = np.int64(k) - 1
            if j < 0:
                j = 0
            if packed:
                p = (i + y_off) & _NONNEG
                yi = (np.int64(y[p >> 3]) >> (p & 7)) & 1
            else:
                yi = np.int64(y[i])
            # j >= 0 already; the mask tells the compiler so, which drops numba's
            # negative-index wraparound code from the scatter (about half its time).
            j = (j + g * yi) & _NONNEG
            cnt[j] += 1
            if weighted:
                wi = w[i]
                csum[j] += ci * wi
                wsum[j] += wi
            else:
                csum[j] += ci
        return n_near

    return scatter
