"""Compiled kernels of the in-memory metrics (optional; not public API).

:func:`calibnb.ece`, :func:`calibnb.mce`, :func:`calibnb.reliability_table`
(equal-width and equal-mass bins), :func:`calibnb.macro_ce`, :func:`calibnb.ice`,
:func:`calibnb.rewards`, :func:`calibnb.hmr`, :func:`calibnb.brier_top` and
:func:`calibnb.ks_error` (after NumPy's sort) run
one compiled pass over the data instead of the NumPy passes of
:mod:`calibnb.metrics.binary` when :mod:`numba` is installed, the input has at
least :data:`MIN_ROWS` items and ``CALIBNB_KERNEL`` allows it. The variable
(``auto``, ``numpy`` or ``numba``) is read and checked in one place,
:func:`calibnb.validation.kernel_choice` and
:func:`calibnb.validation.choose_compiled`, which the streaming kernel of
:class:`calibnb.CalibrationStats` (``calibnb/scale/_kernel.py``) uses too, so
the two paths cannot disagree.

Each kernel does the floating-point operations of the NumPy path in the same
order, so the results are equal bit for bit (``tests/metrics/test_kernels_inmemory.py``):

* **Equal-width bins** (:func:`width_sums`, :func:`width_table`,
  :func:`width_rows`): the exact code of
  :func:`calibnb.metrics.binary._codes_into` per row (``k = ceil(c * M * (1 -
  2**-50))``, corrected by ``c > k / M`` when the scaled value is within
  ``2**-40 * M`` below an integer) and a sequential scatter in row order,
  which is the order of ``numpy.add.at`` and ``numpy.bincount``. Unweighted
  counts and numbers correct (sums of 0/1, exact in any order below 2**53)
  are tallied as integers per block of :data:`BLOCK` rows and then added to
  the float bins, which gives the same floats.
* **Equal-mass bins, after the sort** (``mass_stats``): the confidences are
  sorted by NumPy (one ``numpy.sort`` of int64 keys, as on the NumPy path);
  one pass then gives every bin's count, number correct (an exact integer,
  whatever the order of ties), smallest and largest confidence and the sum of
  its confidences in the order of ``numpy.add.reduceat`` (the first value plus
  NumPy's pairwise sum of the others: 8 partial sums per block of 128, halves
  of longer runs). The NumPy path restores the input order of tied items that
  mix correct and wrong ones; that order changes a sum only when such a group
  straddles a bin edge (checked at the edges first), and the sums are then
  made from the stably sorted arrays (``mass_sorted``).
* **The KS error** (``sort_keys``, ``ks_keys``): one pass makes the sort
  keys and checks the confidences (as the binned kernels do, so the NumPy
  validation pass is skipped); after the sort, one pass over the sorted
  keys makes the running sums of the NumPy path (a sequential ``cumsum``
  per chunk of :data:`CHUNK` items plus the carry of the chunks before) and
  keeps the largest in absolute value, over every item or over the last of
  each tie group; in "order" mode a tie group mixing correct and wrong items
  leaves the work to the stable order below. The sequential sum is the
  floor of that pass: 10^7 dependent additions, about 13 ms here.
* **Ties in input order** (``tie_fill``): after the sort, the items of tie
  groups that mix correct and wrong ones are written over their groups' runs
  in input order in one pass over the input (a hash table of the groups'
  values names each item's group), which is what a stable argsort gives; the
  NumPy path finds them chunk by chunk and sorts them by group.
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
(:func:`calibnb.jit.njit`).
"""

from __future__ import annotations

import importlib

from ..validation import choose_compiled, kernel_choice

__all__ = ["MIN_ROWS", "LANES", "CHUNK", "BLOCK", "EDGE_SHRINK", "NEAR", "NONNEG", "kernel_choice", "choose_compiled",
           "compiled_inmemory", "InMemoryKernels"]

#: Inputs shorter than this use the NumPy path under ``CALIBNB_KERNEL=auto``.
MIN_ROWS = 1 << 15
#: Interleaved lanes of every sum over items (NumPy path and kernels alike).
LANES = 256
#: Items per chunk of the sums over items (a multiple of :data:`LANES`).
CHUNK = 1 << 16

_cache: dict = {}


def compiled_inmemory(n_rows: int):
    """The compiled :class:`InMemoryKernels` for ``n_rows`` items, or None to use NumPy."""
    return choose_compiled(n_rows, MIN_ROWS, _cache, InMemoryKernels)


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

    ``group_lanes()(c, y) -> (lanes of c, lanes of c * y, bad, number of y != 0)`` and
    ``brier_lanes()(c, y) -> (lanes of (c - y) ** 2, bad)``: the lane sums
    described in the module docstring; ``bad`` is True when a value is out of
    range (NaN included).

    ``mass_stats()(keys, fvals, sizes, count, sum_conf, n_correct, lower,
    upper) -> straddle``: per equal-mass bin of the sorted keys of
    :func:`calibnb.metrics.binary._sort_keys` (shifted in place to the sorted
    confidences' bits, read through ``fvals``, their float64 view), the sums of
    ``binary._mass_stats``; 1 (nothing written) when a tie group mixing correct
    and wrong items straddles a bin edge. ``mass_sorted()(fvals, y, sizes,
    count, sum_conf, n_correct, lower, upper)``: the same sums from the sorted
    confidences and correctness (uint8) with ties in input order.

    ``ks_keys(group)(keys) -> (largest, mixed)``: the largest absolute
    running sum of ``correct - conf`` over the sorted keys, as
    ``binary._ks_from_keys`` makes it (over the last item of each tie group
    when ``group``), in one fused pass; ``mixed`` 1 (nothing decided, "order"
    only) when a tie group mixes correct and wrong items.

    ``sort_keys()(conf, y, keys) -> bad``: the unsorted keys of
    :func:`calibnb.metrics.binary._sort_keys`, ``(bits << 1) | y``, written
    into ``keys`` (``conf`` float32 or float64, read as float64 bits with
    the sign cleared; ``y`` uint8 0/1); ``bad`` counts the confidences
    outside [0, 1] (NaN included), checked as it goes.

    ``tie_fill()(ivals, correct, mixed, table_bits, fill, y) -> placed``:
    the correctness of the items of tie groups mixing correct and wrong ones,
    written in input order over their groups' runs of the sorted ``y`` (from
    each group's first position, ``fill``), in one pass over the input; the
    groups' values are looked up in a hash table of ``2**table_bits`` slots.

    ``row_lanes(weighted, brier)(c, y, w) -> (S, T, LANES)``: per row of 2-D
    (S, N) arrays (broadcast views allowed), the lane sums of T terms, those of
    the batched and weighted paths: ``1, c y, c`` (unweighted) or ``w, w y,
    (w y) c, w c`` (weighted), and for the Brier score ``(c - y)**2`` or
    ``w (c - y)**2, w``; inputs already validated.
    """

    def __init__(self):
        self._fns: dict = {}

    def _get(self, key, factory_name):
        if key not in self._fns:
            # the numba half of this module, imported on first use (it imports numba)
            numba_half = importlib.import_module(f"{__package__}._kernels_numba")
            self._fns[key] = getattr(numba_half, factory_name)(*key[1:])
        return self._fns[key]

    def width_sums(self, counts: bool):
        return self._get(("width_sums", bool(counts)), "make_width_sums")

    def width_table(self, weighted: bool):
        return self._get(("width_table", bool(weighted)), "make_width_table")

    def width_rows(self, weighted: bool):
        return self._get(("width_rows", bool(weighted)), "make_width_rows")

    def group_lanes(self):
        return self._get(("group_lanes",), "make_group_lanes")

    def brier_lanes(self):
        return self._get(("brier_lanes",), "make_brier_lanes")

    def row_lanes(self, weighted: bool, brier: bool):
        return self._get(("row_lanes", bool(weighted), bool(brier)), "make_row_lanes")

    def mass_stats(self):
        return self._get(("mass_stats",), "make_mass_stats")

    def mass_sorted(self):
        return self._get(("mass_sorted",), "make_mass_sorted")

    def ks_keys(self, group: bool):
        return self._get(("ks_keys", bool(group)), "make_ks_keys")

    def sort_keys(self):
        return self._get(("sort_keys",), "make_sort_keys")

    def tie_fill(self):
        return self._get(("tie_fill",), "make_tie_fill")


# The constants of calibnb.metrics.binary._codes_into, repeated here so that
# this module never imports the metrics (they import it); a test checks they agree.
EDGE_SHRINK = 1.0 - 2.0**-50
NEAR = 2.0**-40
NONNEG = 0x7FFFFFFFFFFFFFFF
# Rows per block of the equal-width kernels: codes first (vectorised), then the scatter.
BLOCK = 1024
