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

The kernels check the input as they go (confidences in [0, 1], no NaN;
correctness 0 or 1) and report whether a row failed; the caller then runs
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

    ``width_sums(counts)(c, y, n_bins, diff, cnt) -> n_bad``: per code 0..M,
    ``diff[k] += c - y`` (and ``cnt[k] += 1``) in row order; 1-D, unweighted.

    ``width_table(weighted)(c, y, w, n_bins, cnt, csum, ncor) -> n_bad``: per
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


# The constants of calibnb.metrics.binary._codes_into, repeated here so that
# this module never imports the metrics (they import it); a test checks they agree.
_EDGE_SHRINK = 1.0 - 2.0**-50
_NEAR = 2.0**-40
_NONNEG = 0x7FFFFFFFFFFFFFFF


def _make_code():
    import numba
    import numpy as np

    @numba.njit(nogil=True, cache=True, inline="always")
    def code(x, n_bins, scale, near):
        """Exact code K in 0..M of confidence x (float64 in [0, 1]), as _codes_into computes it."""
        t = x * scale
        kf = np.ceil(t)
        if kf - t < near:
            if x > kf / n_bins:
                kf += 1.0
        return np.int64(kf)

    return code


def _make_width_sums(counts: bool):
    import numba
    import numpy as np

    code = _make_code()

    @numba.njit(nogil=True, cache=True)
    def width_sums(c, y, n_bins, diff, cnt):
        n = c.shape[0]
        scale = n_bins * _EDGE_SHRINK
        near = _NEAR * n_bins
        bad = 0
        for i in range(n):
            x = np.float64(c[i])
            yi = y[i]
            if not ((x >= 0.0) & (x <= 1.0) & (yi <= 1)):
                bad += 1
                continue
            k = code(x, n_bins, scale, near) & _NONNEG
            diff[k] += x - np.float64(yi)
            if counts:
                cnt[k] += 1.0
        return bad

    return width_sums


def _make_width_table(weighted: bool):
    import numba
    import numpy as np

    code = _make_code()

    @numba.njit(nogil=True, cache=True)
    def width_table(c, y, w, n_bins, cnt, csum, ncor):
        n = c.shape[0]
        scale = n_bins * _EDGE_SHRINK
        near = _NEAR * n_bins
        bad = 0
        for i in range(n):
            x = np.float64(c[i])
            yi = y[i]
            if not ((x >= 0.0) & (x <= 1.0) & (yi <= 1)):
                bad += 1
                continue
            b = code(x, n_bins, scale, near) - 1
            b = max(b, 0) & _NONNEG
            if weighted:
                wi = w[i]
                cnt[b] += wi
                csum[b] += wi * x
                ncor[b] += wi * np.float64(yi)
            else:
                cnt[b] += 1.0
                csum[b] += x
                ncor[b] += np.float64(yi)
        return bad

    return width_table


def _make_width_rows(weighted: bool):
    import numba
    import numpy as np

    code = _make_code()

    @numba.njit(nogil=True, cache=True)
    def width_rows(c, y, w, n_bins, diff, cnt):
        s_rows, n = c.shape
        scale = n_bins * _EDGE_SHRINK
        near = _NEAR * n_bins
        for s in range(s_rows):
            for i in range(n):
                x = np.float64(c[s, i])
                b = max(code(x, n_bins, scale, near) - 1, 0) & _NONNEG
                d = x - np.float64(y[s, i])
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

    lanes = LANES
    chunk = CHUNK

    @numba.njit(nogil=True, cache=True)
    def group_lanes(c, y):
        n = c.shape[0]
        tot = np.zeros(lanes)
        pos = np.zeros(lanes)
        pt = np.zeros(lanes)
        pp = np.zeros(lanes)
        lo = np.full(lanes, np.inf)
        hi = np.full(lanes, -np.inf)
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            pt[:] = 0.0
            pp[:] = 0.0
            full = start + (stop - start) // lanes * lanes
            for b in range(start, stop, lanes):
                m = min(lanes, stop - b)  # lanes, or the tail of the last chunk
                for j in range(m):
                    # i >= 0 already; the mask tells the compiler so, which drops numba's
                    # negative-index wraparound and lets it vectorise the loop over lanes
                    i = (b + j) & _NONNEG
                    x = np.float64(c[i])
                    pt[j] += x
                    pp[j] += x * np.float64(y[i])
                    lo[j] = min(lo[j], x)
                    hi[j] = max(hi[j], x)
            for j in range(lanes):
                tot[j] += pt[j]
                pos[j] += pp[j]
        # NaN propagates into a lane sum (min and max need not see it)
        bad = (lo.min() < 0.0) | (hi.max() > 1.0) | np.isnan(tot.sum())
        return tot, pos, bad

    return group_lanes


def _make_brier_lanes():
    import numba
    import numpy as np

    lanes = LANES
    chunk = CHUNK

    @numba.njit(nogil=True, cache=True)
    def brier_lanes(c, y):
        n = c.shape[0]
        tot = np.zeros(lanes)
        pt = np.zeros(lanes)
        lo = np.full(lanes, np.inf)
        hi = np.full(lanes, -np.inf)
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            pt[:] = 0.0
            for b in range(start, stop, lanes):
                m = min(lanes, stop - b)
                for j in range(m):
                    i = (b + j) & _NONNEG
                    x = np.float64(c[i])
                    d = x - np.float64(y[i])
                    pt[j] += d * d
                    lo[j] = min(lo[j], x)
                    hi[j] = max(hi[j], x)
            for j in range(lanes):
                tot[j] += pt[j]
        bad = (lo.min() < 0.0) | (hi.max() > 1.0) | np.isnan(tot.sum())
        return tot, bad

    return brier_lanes
