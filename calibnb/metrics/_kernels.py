"""Compiled kernels of the in-memory metrics (optional; not public API).

:func:`calibnb.ece`, :func:`calibnb.mce`, :func:`calibnb.reliability_table`
(equal-width bins), :func:`calibnb.macro_ce`, :func:`calibnb.ice`,
:func:`calibnb.rewards`, :func:`calibnb.hmr` and :func:`calibnb.brier_top` run
one compiled pass over the data instead of the NumPy passes of
:mod:`calibnb.metrics.binary` when :mod:`numba` is installed, the input has at
least :data:`MIN_ROWS` items and ``CALIBNB_KERNEL`` allows it: the variable
the streaming kernel of :class:`calibnb.CalibrationStats` reads
(``calibnb/scale/_kernel.py``), with the same values ``auto``, ``numpy`` and
``numba`` and the same message for any other (:func:`kernel_choice`; a module
does not import another package's private names, so the few lines are here
twice).

Each kernel does the floating-point operations of the NumPy path in the same
order, so the results are equal bit for bit (``tests/test_kernels_inmemory.py``):

* **Equal-width bins** (:func:`width_sums`, :func:`width_table`,
  :func:`width_rows`): the exact code of
  :func:`calibnb.metrics.binary._codes_into` per row (``k = ceil(c * M * (1 -
  2**-50))``, corrected by ``c > k / M`` when the scaled value is within
  ``2**-40 * M`` below an integer) and a sequential scatter in row order,
  which is the order of ``numpy.add.at`` and ``numpy.bincount``.
* **Sums over items** (:func:`group_lanes`, :func:`brier_lanes`): the NumPy
  path sums every term in :data:`LANES` interleaved lanes (item ``i`` goes to
  lane ``i % LANES`` of its chunk of :data:`CHUNK` items: ``numpy.add.reduce``
  over axis 0 of the chunk viewed as rows of :data:`LANES`), adds the chunk's
  lanes to running lanes, and sums the lanes once at the end. The kernels keep
  the same lanes, which is also the order a vector unit wants.

The kernels check the confidences as they go (in [0, 1], no NaN) and report
whether one failed (correctness is checked by the caller, one byte per item,
without a copy for bool); the caller then runs
the NumPy validation, which raises the usual error naming the argument and the
first bad row. Nothing is compiled at import (``import calibnb`` never imports
numba); each variant is compiled on first use and cached on disk
(``cache=True``).
"""

from __future__ import annotations

import os

__all__ = ["MIN_ROWS", "LANES", "CHUNK", "kernel_choice", "compiled_inmemory", "InMemoryKernels"]

#: Inputs shorter than this use the NumPy path under ``CALIBNB_KERNEL=auto``.
MIN_ROWS = 1 << 15
#: Interleaved lanes of every sum over items (NumPy path and kernels alike).
LANES = 256
#: Items per chunk of the sums over items (a multiple of :data:`LANES`).
CHUNK = 1 << 16

_CHOICES = ("auto", "numpy", "numba")
_cache: dict = {}


def kernel_choice() -> str:
    """The value of ``CALIBNB_KERNEL`` (default ``auto``), checked as ``calibnb/scale/_kernel.py`` checks it."""
    v = os.environ.get("CALIBNB_KERNEL", "auto").strip().lower() or "auto"
    if v not in _CHOICES:
        raise ValueError(f"environment variable CALIBNB_KERNEL must be one of {', '.join(_CHOICES)}; got {v!r}.")
    return v


def compiled_inmemory(n_rows: int):
    """The compiled :class:`InMemoryKernels` for ``n_rows`` items, or None to use NumPy."""
    choice = kernel_choice()
    if choice == "numpy" or (choice == "auto" and n_rows < MIN_ROWS):
        return None
    if "kernels" not in _cache:
        try:
            import numba  # noqa: F401
        except ImportError:
            _cache["kernels"] = None
        else:
            _cache["kernels"] = InMemoryKernels()
    k = _cache["kernels"]
    if k is None and choice == "numba":
        raise ImportError("CALIBNB_KERNEL=numba but numba is not installed; install it "
                          "(pip install 'calibnb[dask]' or pip install numba) or unset CALIBNB_KERNEL.")
    return k


class InMemoryKernels:
    """The compiled functions, one specialisation per flag set, built on first use.

    ``width_sums(counts)(c, y, n_bins, diff, cnt) -> bad``: per code 0..M,
    ``diff[k] += c - y`` (and ``cnt[k] += 1``) in row order; 1-D, unweighted.

    ``width_table(weighted)(c, y, w, n_bins, cnt, csum, ncor) -> bad``: per
    bin (code 0 folded into bin 0), the three ``numpy.bincount`` sums of
    :func:`calibnb.reliability_table`.

    ``width_rows(weighted)(c, y, w, n_bins, diff, cnt)``: per row ``s`` of 2-D
    (S, N) arrays (broadcast views allowed) and bin, ``diff[s, b] += (c - y)
    * w`` and ``cnt[s, b] += w`` in item order (the flat ``numpy.bincount`` of
    the batched and weighted path); inputs already validated.

    ``group_lanes()(c, y) -> (lanes of c, lanes of c * y, bad)`` and
    ``brier_lanes()(c, y) -> (lanes of (c - y) ** 2, bad)``: the lane sums
    described in the module docstring; ``bad`` is True when a value is out of
    range (NaN included).

    ``row_lanes(weighted, brier)(c, y, w) -> (S, T, LANES)``: per row of 2-D
    (S, N) arrays (broadcast views allowed), the lane sums of T terms, those of
    the batched and weighted paths: ``1, c y, c`` (unweighted) or ``w, w y,
    (w y) c, w c`` (weighted), and for the Brier score ``(c - y)**2`` or
    ``w (c - y)**2, w``; inputs already validated.
    """

    def __init__(self):
        self._fns: dict = {}

    def _get(self, key, factory):
        if key not in self._fns:
            self._fns[key] = factory(*key[1:])
        return self._fns[key]

    def width_sums(self, counts: bool):
        return self._get(("width_sums", bool(counts)), _make_width_sums)

    def width_table(self, weighted: bool):
        return self._get(("width_table", bool(weighted)), _make_width_table)

    def width_rows(self, weighted: bool):
        return self._get(("width_rows", bool(weighted)), _make_width_rows)

    def group_lanes(self):
        return self._get(("group_lanes",), _make_group_lanes)

    def brier_lanes(self):
        return self._get(("brier_lanes",), _make_brier_lanes)

    def row_lanes(self, weighted: bool, brier: bool):
        return self._get(("row_lanes", bool(weighted), bool(brier)), _make_row_lanes)


# The constants of calibnb.metrics.binary._codes_into, repeated here so that
# this module never imports the metrics (they import it); a test checks they agree.
_EDGE_SHRINK = 1.0 - 2.0**-50
_NEAR = 2.0**-40
_NONNEG = 0x7FFFFFFFFFFFFFFF
# Rows per block of the equal-width kernels: codes first (vectorised), then the scatter.
_BLOCK = 1024


def _make_code():
    import numba
    import numpy as np

    @numba.njit(nogil=True, cache=True, inline="always")
    def invalid(x):
        """1 if x is not in [0, 1] (NaN included), else 0, without branches.

        ``x * (1 - x) >= 0`` exactly when ``0 <= x <= 1``: below 0 the product
        is negative (``1 - x >= 1``, no underflow), above 1 too (``1 - x < 0``),
        and every comparison with NaN is False.
        """
        return np.int64(not (x * (1.0 - x) >= 0.0))

    @numba.njit(nogil=True, cache=True)
    def block_codes(c, start, m, n_bins, codes):
        """Exact codes K of c[start:start + m] into codes[:m] (as _codes_into); the number of invalid values.

        A vectorisable pass (scale, ceil, the distance to the ceiling); the
        rows within rounding of an edge, if any, are corrected in a second pass.
        """
        scale = n_bins * _EDGE_SHRINK
        near = _NEAR * n_bins
        bad = 0
        n_near = 0
        for j in range(m):
            x = np.float64(c[(start + j) & _NONNEG])
            t = x * scale
            kf = np.ceil(t)
            n_near += np.int64(kf - t < near)
            bad += invalid(x)
            codes[j] = np.int64(kf)
        if n_near and not bad:
            for j in range(m):
                x = np.float64(c[start + j])
                t = x * scale
                kf = np.ceil(t)
                if kf - t < near and x > kf / n_bins:
                    codes[j] += 1
        return bad

    return invalid, block_codes


def _make_width_sums(counts: bool):
    import numba
    import numpy as np

    _, block_codes = _make_code()
    block = _BLOCK

    @numba.njit(nogil=True, cache=True)
    def width_sums(c, y, n_bins, diff, cnt):
        n = c.shape[0]
        codes = np.empty(block, dtype=np.int64)
        for start in range(0, n, block):
            m = min(block, n - start)
            if block_codes(c, start, m, n_bins, codes):
                return 1  # nothing of a bad block is scattered
            for j in range(m):
                i = (start + j) & _NONNEG
                k = codes[j] & _NONNEG
                diff[k] += np.float64(c[i]) - np.float64(y[i])
                if counts:
                    cnt[k] += 1.0
        return 0

    return width_sums


def _make_width_table(weighted: bool):
    import numba
    import numpy as np

    _, block_codes = _make_code()
    block = _BLOCK

    @numba.njit(nogil=True, cache=True)
    def width_table(c, y, w, n_bins, cnt, csum, ncor):
        n = c.shape[0]
        codes = np.empty(block, dtype=np.int64)
        for start in range(0, n, block):
            m = min(block, n - start)
            if block_codes(c, start, m, n_bins, codes):
                return 1
            for j in range(m):
                i = (start + j) & _NONNEG
                b = max(codes[j] - 1, 0) & _NONNEG  # code 0 (conf == 0) is in bin 0
                x = np.float64(c[i])
                if weighted:
                    wi = w[i]
                    cnt[b] += wi
                    csum[b] += wi * x
                    ncor[b] += wi * np.float64(y[i])
                else:
                    cnt[b] += 1.0
                    csum[b] += x
                    ncor[b] += np.float64(y[i])
        return 0

    return width_table


def _make_width_rows(weighted: bool):
    import numba
    import numpy as np

    _, block_codes = _make_code()
    block = _BLOCK

    @numba.njit(nogil=True, cache=True)
    def width_rows(c, y, w, n_bins, diff, cnt):
        s_rows, n = c.shape
        codes = np.empty(block, dtype=np.int64)
        for s in range(s_rows):
            cs = c[s]
            for start in range(0, n, block):
                m = min(block, n - start)
                block_codes(cs, start, m, n_bins, codes)  # validated by the caller
                for j in range(m):
                    i = (start + j) & _NONNEG
                    b = max(codes[j] - 1, 0) & _NONNEG
                    d = np.float64(cs[i]) - np.float64(y[s, i])
                    if weighted:
                        wi = w[s, i]
                        diff[s, b] += d * wi
                        cnt[s, b] += wi
                    else:
                        diff[s, b] += d
                        cnt[s, b] += 1.0

    return width_rows


def _make_group_lanes():
    import numba
    import numpy as np

    invalid, _ = _make_code()
    lanes = LANES
    chunk = CHUNK

    @numba.njit(nogil=True, cache=True)
    def group_lanes(c, y):
        n = c.shape[0]
        tot = np.zeros(lanes)
        pos = np.zeros(lanes)
        pt = np.zeros(lanes)
        pp = np.zeros(lanes)
        bad = 0
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            full = start + (stop - start) // lanes * lanes
            pt[:] = 0.0
            pp[:] = 0.0
            for b in range(start, full, lanes):
                for j in range(lanes):
                    # i >= 0 already; the mask tells the compiler so, which drops numba's
                    # negative-index wraparound and lets it vectorise the loop over lanes
                    i = (b + j) & _NONNEG
                    x = np.float64(c[i])
                    pt[j] += x
                    pp[j] += x * np.float64(y[i])
                    bad += invalid(x)
            for j in range(stop - full):  # the tail of the last chunk
                x = np.float64(c[full + j])
                pt[j] += x
                pp[j] += x * np.float64(y[full + j])
                bad += invalid(x)
            for j in range(lanes):
                tot[j] += pt[j]
                pos[j] += pp[j]
        return tot, pos, bad > 0

    return group_lanes


def _make_brier_lanes():
    import numba
    import numpy as np

    invalid, _ = _make_code()
    lanes = LANES
    chunk = CHUNK

    @numba.njit(nogil=True, cache=True)
    def brier_lanes(c, y):
        n = c.shape[0]
        tot = np.zeros(lanes)
        pt = np.zeros(lanes)
        bad = 0
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            full = start + (stop - start) // lanes * lanes
            pt[:] = 0.0
            for b in range(start, full, lanes):
                for j in range(lanes):
                    i = (b + j) & _NONNEG
                    x = np.float64(c[i])
                    d = x - np.float64(y[i])
                    pt[j] += d * d
                    bad += invalid(x)
            for j in range(stop - full):
                x = np.float64(c[full + j])
                d = x - np.float64(y[full + j])
                pt[j] += d * d
                bad += invalid(x)
            for j in range(lanes):
                tot[j] += pt[j]
        return tot, bad > 0

    return brier_lanes


def _make_row_lanes(weighted: bool, brier: bool):
    import numba
    import numpy as np

    lanes = LANES
    chunk = CHUNK
    n_terms = (2 if weighted else 1) if brier else (4 if weighted else 3)

    @numba.njit(nogil=True, cache=True)
    def row_lanes(c, y, w):
        s_rows, n = c.shape
        out = np.zeros((s_rows, n_terms, lanes))
        part = np.zeros((n_terms, lanes))
        for s in range(s_rows):
            for start in range(0, n, chunk):
                stop = min(start + chunk, n)
                part[:, :] = 0.0
                for b in range(start, stop, lanes):
                    for j in range(min(lanes, stop - b)):
                        i = (b + j) & _NONNEG
                        x = np.float64(c[s, i])
                        yi = np.float64(y[s, i])
                        if brier:
                            d = x - yi
                            if weighted:
                                wi = w[s, i]
                                part[0, j] += wi * (d * d)
                                part[1, j] += wi
                            else:
                                part[0, j] += d * d
                        elif weighted:
                            wi = w[s, i]
                            wy = wi * yi
                            part[0, j] += wi
                            part[1, j] += wy
                            part[2, j] += wy * x
                            part[3, j] += wi * x
                        else:
                            part[0, j] += yi
                            part[1, j] += x * yi
                            part[2, j] += x
                for t in range(n_terms):
                    for j in range(lanes):
                        out[s, t, j] += part[t, j]
        return out

    return row_lanes
