"""The numba functions behind :mod:`calibnb.metrics._kernels` (imported only when a kernel is used).

Helpers are module-level jitted functions and the factories close over
booleans only. Compiled variants are cached on disk by :func:`calibnb.jit.njit`,
which gives each variant of a factory its own qualified name and names each
data file by its key: numba's own cache let a process that compiled one
variant and loaded another (compiled elsewhere) link both under one symbol
("NRT_adapt_ndarray_to_python: 'descr' is NULL" in notebook 00's kernel), and
these kernels were compiled in every process from 2026-11-25 to 11-26.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit

from ._kernels import BLOCK, EDGE_SHRINK, NEAR, NONNEG, CHUNK, LANES

__all__ = ["invalid", "block_codes", "pairwise_sum", "make_width_sums", "make_width_table", "make_width_rows",
           "make_group_lanes", "make_brier_lanes", "make_row_lanes", "make_mass_stats", "make_mass_sorted",
           "make_ks_keys", "make_sort_keys", "make_tie_fill"]


@njit(nogil=True, inline="always")
def invalid(x):
    """1 if x is not in [0, 1] (NaN included), else 0, without branches.

    ``x * (1 - x) >= 0`` exactly when ``0 <= x <= 1``: below 0 the product
    is negative (``1 - x >= 1``, no underflow), above 1 too (``1 - x < 0``),
    and every comparison with NaN is False.
    """
    return np.int64(not (x * (1.0 - x) >= 0.0))

@njit(nogil=True)
def block_codes(c, start, m, n_bins, codes):
    """Exact codes K of c[start:start + m] into codes[:m] (as _codes_into); the number of invalid values.

    A vectorisable pass (scale, ceil, the distance to the ceiling); the
    rows within rounding of an edge, if any, are corrected in a second pass.
    """
    scale = n_bins * EDGE_SHRINK
    near = NEAR * n_bins
    bad = 0
    n_near = 0
    for j in range(m):
        x = np.float64(c[(start + j) & NONNEG])
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




def make_width_sums(counts: bool):

    @njit(nogil=True)
    def width_sums(c, y, n_bins, diff, cnt):
        n = c.shape[0]
        codes = np.empty(BLOCK, dtype=np.int64)
        tally = np.zeros(n_bins + 1 if counts else 0, dtype=np.int64)  # ECE counts nothing
        for start in range(0, n, BLOCK):
            m = min(BLOCK, n - start)
            if block_codes(c, start, m, n_bins, codes):
                return 1  # nothing of a bad block is scattered
            cs = c[start:start + m]
            ys = y[start:start + m]
            for j in range(m):
                u = np.uint64(j)  # unsigned: no negative-index wraparound, contiguous loads
                k = np.uint64(codes[u])
                diff[k] += np.float64(cs[u]) - np.float64(ys[u])
                if counts:
                    tally[k] += 1
            if counts:  # see width_table: an integer count, the same float as adding 1.0 row by row
                for k in range(n_bins + 1):
                    cnt[k] += np.float64(tally[k])
                    tally[k] = 0
        return 0

    return width_sums


def make_width_table(weighted: bool):

    @njit(nogil=True)
    def width_table(c, y, w, n_bins, cnt, csum, ncor):
        n = c.shape[0]
        codes = np.empty(BLOCK, dtype=np.int64)
        tally = np.zeros(n_bins, dtype=np.int64)
        for start in range(0, n, BLOCK):
            m = min(BLOCK, n - start)
            if block_codes(c, start, m, n_bins, codes):
                return 1
            cs = c[start:start + m]
            ys = y[start:start + m]
            for j in range(m):
                u = np.uint64(j)
                b = np.uint64(max(codes[u] - 1, 0))  # code 0 (conf == 0) is in bin 0
                x = np.float64(cs[u])
                if weighted:
                    i = np.uint64(start + j)
                    wi = w[i]
                    cnt[b] += wi
                    csum[b] += wi * x
                    ncor[b] += wi * np.float64(ys[u])
                else:
                    csum[b] += x
                    # the count and the number correct of the block in one integer per bin (count in
                    # the low 32 bits, correct in the high ones; a block has 1024 rows): one scatter
                    # instead of two. Sums of 0/1 below 2**53 are exact in floating point whatever
                    # the order, so adding them per block gives the floats of adding 1.0 and y row by
                    # row (numpy.bincount's order); 5.2x numpy.sum against 6.4x (2026-11-27)
                    tally[b] += 1 + (np.int64(ys[u]) << 32)
            if not weighted:
                for k in range(n_bins):
                    t = tally[k]
                    cnt[k] += np.float64(t & 0xFFFFFFFF)
                    ncor[k] += np.float64(t >> 32)
                    tally[k] = 0
        return 0

    return width_table


def make_width_rows(weighted: bool):

    @njit(nogil=True)
    def width_rows(c, y, w, n_bins, diff, cnt):
        s_rows, n = c.shape
        codes = np.empty(BLOCK, dtype=np.int64)
        for s in range(s_rows):
            cs = c[s]
            for start in range(0, n, BLOCK):
                m = min(BLOCK, n - start)
                block_codes(cs, start, m, n_bins, codes)  # validated by the caller
                for j in range(m):
                    i = (start + j) & NONNEG
                    b = max(codes[j] - 1, 0) & NONNEG
                    d = np.float64(cs[i]) - np.float64(y[s, i])
                    if weighted:
                        wi = w[s, i]
                        diff[s, b] += d * wi
                        cnt[s, b] += wi
                    else:
                        diff[s, b] += d
                        cnt[s, b] += 1.0

    return width_rows


def make_group_lanes():

    @njit(nogil=True)
    def group_lanes(c, y):
        n = c.shape[0]
        tot = np.zeros(LANES)
        pos = np.zeros(LANES)
        pt = np.zeros(LANES)
        pp = np.zeros(LANES)
        bad = 0
        n_pos = 0
        for start in range(0, n, CHUNK):
            stop = min(start + CHUNK, n)
            full = start + (stop - start) // LANES * LANES
            pt[:] = 0.0
            pp[:] = 0.0
            for b in range(start, full, LANES):
                # one row of lanes as views, indexed by an unsigned integer: numba then drops its
                # negative-index wraparound and the loads stay contiguous; `(b + j) & NONNEG` into
                # the whole array made LLVM gather c and insert y byte by byte (2026-11-27)
                cb = c[b:b + LANES]
                yb = y[b:b + LANES]
                for j in range(LANES):
                    u = np.uint64(j)
                    x = np.float64(cb[u])
                    hit = yb[u] != 0
                    pt[u] += x
                    # x * y for y in {0, 1}: the same sum (the lanes start at +0.0, so a -0.0
                    # term adds nothing either way), without converting y to a double
                    pp[u] += x if hit else 0.0
                    n_pos += np.int64(hit)
                    bad += invalid(x)
            for j in range(stop - full):  # the tail of the last chunk
                x = np.float64(c[full + j])
                hit = y[full + j] != 0
                pt[j] += x
                pp[j] += x if hit else 0.0
                n_pos += np.int64(hit)
                bad += invalid(x)
            for j in range(LANES):
                tot[j] += pt[j]
                pos[j] += pp[j]
        return tot, pos, bad > 0, n_pos

    return group_lanes


def make_brier_lanes():

    @njit(nogil=True)
    def brier_lanes(c, y):
        n = c.shape[0]
        tot = np.zeros(LANES)
        pt = np.zeros(LANES)
        bad = 0
        for start in range(0, n, CHUNK):
            stop = min(start + CHUNK, n)
            full = start + (stop - start) // LANES * LANES
            pt[:] = 0.0
            for b in range(start, full, LANES):
                for j in range(LANES):
                    i = (b + j) & NONNEG
                    x = np.float64(c[i])
                    d = x - np.float64(y[i])
                    pt[j] += d * d
                    bad += invalid(x)
            for j in range(stop - full):
                x = np.float64(c[full + j])
                d = x - np.float64(y[full + j])
                pt[j] += d * d
                bad += invalid(x)
            for j in range(LANES):
                tot[j] += pt[j]
        return tot, bad > 0

    return brier_lanes


def make_row_lanes(weighted: bool, brier: bool):
    n_terms = (2 if weighted else 1) if brier else (4 if weighted else 3)

    @njit(nogil=True)
    def row_lanes(c, y, w):
        s_rows, n = c.shape
        out = np.zeros((s_rows, n_terms, LANES))
        part = np.zeros((n_terms, LANES))
        for s in range(s_rows):
            for start in range(0, n, CHUNK):
                stop = min(start + CHUNK, n)
                part[:, :] = 0.0
                for b in range(start, stop, LANES):
                    for j in range(min(LANES, stop - b)):
                        i = (b + j) & NONNEG
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
                    for j in range(LANES):
                        out[s, t, j] += part[t, j]
        return out

    return row_lanes



@njit(nogil=True)
def pairwise_sum(a, start, n):
    """``numpy.add.reduce(a[start:start + n])`` for float64 ``a``, bit for bit: NumPy's pairwise sum
    (``pairwise_sum`` in ``numpy/_core/src/umath/loops_utils.h.src``): fewer than 8 values in a row, up to
    128 values in 8 partial sums combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) and the rest
    added in a row, longer runs split in halves (a multiple of 8 first) summed recursively."""
    if n < 8:
        res = 0.0
        for i in range(start, start + n):
            res += a[i]
        return res
    if n <= 128:
        r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
        r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
        i = 8
        stop = n - (n % 8)
        while i < stop:
            j = start + i
            r0 += a[j]
            r1 += a[j + 1]
            r2 += a[j + 2]
            r3 += a[j + 3]
            r4 += a[j + 4]
            r5 += a[j + 5]
            r6 += a[j + 6]
            r7 += a[j + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[start + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return pairwise_sum(a, start, n2) + pairwise_sum(a, start + n2, n - n2)


def make_mass_stats():

    @njit(nogil=True)
    def mass_stats(keys, fvals, sizes, count, sum_conf, n_correct, lower, upper):
        # keys: the sorted int64 keys (bits(conf) << 1) | correct of binary._sort_keys, shifted in place to the
        # sorted confidences' bits (keys >> 1), which fvals, its float64 view, then reads; sizes: the non-empty
        # equal-mass bins' sizes. Returns 1, with nothing written (keys untouched), when a tie group of equal
        # confidences that mixes correct and wrong items straddles a bin edge: which of them fall in which bin
        # then depends on their input order, which the keys have lost (the caller restores it, then calls
        # mass_sorted).
        n = keys.shape[0]
        start = 0
        for b in range(sizes.shape[0]):  # the bin edges first: a straddle costs no pass over the data
            v = keys[start] >> 1
            if start > 0 and (keys[start - 1] >> 1) == v:
                lo = start - 1
                while lo > 0 and (keys[lo - 1] >> 1) == v:
                    lo -= 1
                hi = start
                while hi + 1 < n and (keys[hi + 1] >> 1) == v:
                    hi += 1
                if (keys[lo] & 1) == 0 and (keys[hi] & 1) == 1:  # wrong ones first within a group
                    return 1
            start += sizes[b]
        start = 0
        for b in range(sizes.shape[0]):
            m = sizes[b]
            hits = 0
            for i in range(start, start + m):
                k = keys[i]
                hits += k & 1
                keys[i] = k >> 1
            _mass_bin(fvals, start, m, hits, b, count, sum_conf, n_correct, lower, upper)
            start += m
        return 0

    return mass_stats


@njit(nogil=True, inline="always")
def _mass_bin(fvals, start, m, hits, b, count, sum_conf, n_correct, lower, upper):
    count[b] = m
    n_correct[b] = hits  # an exact integer, as NumPy's float sum of 0/1 values
    # numpy.add.reduceat: the bin's first value plus the pairwise sum of the others
    sum_conf[b] = fvals[start] + pairwise_sum(fvals, start + 1, m - 1) if m > 1 else fvals[start]
    lower[b] = fvals[start]
    upper[b] = fvals[start + m - 1]


def make_mass_sorted():

    @njit(nogil=True)
    def mass_sorted(fvals, y, sizes, count, sum_conf, n_correct, lower, upper):
        # The sums of mass_stats from sorted confidences fvals and correctness y (uint8) in the same order, ties
        # already in input order (binary._fix_tie_order): binary._mass_stats's NumPy sums, bit for bit.
        start = 0
        for b in range(sizes.shape[0]):
            m = sizes[b]
            hits = 0
            for i in range(start, start + m):
                hits += y[i]
            _mass_bin(fvals, start, m, hits, b, count, sum_conf, n_correct, lower, upper)
            start += m

    return mass_sorted


def make_ks_keys(group: bool):

    @njit(nogil=True)
    def ks_keys(keys):
        # The KS error's largest |running sum of correct - conf| from the sorted int64 keys of binary._sort_keys,
        # as binary._ks_from_keys makes it: within each chunk of CHUNK items a sequential sum s from 0 plus the
        # carry of the chunks before, over every item ("order") or over the last item of each group of equal
        # confidences ("group"). One pass, whose only chain of dependent additions is s; each item's confidence
        # is its key's bits >> 1 read as a float64. A chunk's largest and smallest s get the carry added once:
        # rounding is monotone, so max(fl(s_i + carry)) = fl(max(s_i) + carry), the same floats as adding it to
        # every item. Returns (largest, mixed): mixed is 1, with nothing decided, in "order" mode when a tie
        # group mixes wrong and correct items (keys 2v then 2v + 1), whose input order the keys have lost (the
        # caller's NumPy path restores it).
        n = keys.shape[0]
        best = 0.0
        carry = 0.0
        prev = np.int64(-2)  # "order": the key before (no key is negative: the first is never one step after it)
        for start in range(0, n, CHUNK):
            stop = min(start + CHUNK, n)
            s = 0.0
            hi = -np.inf
            lo = np.inf
            if group:
                last = stop if stop < n else n - 1  # the items before `last` have a next item to compare with
                for i in range(start, last):
                    k = keys[i]
                    val = k >> 1
                    s += float(k & 1) - np.int64(val).view(np.float64)
                    if (keys[i + 1] >> 1) != val:  # the last item of its tie group
                        hi = max(hi, s)
                        lo = min(lo, s)
                if last < stop:  # the last item of all ends its group
                    k = keys[last]
                    s += float(k & 1) - np.int64(k >> 1).view(np.float64)
                    hi = max(hi, s)
                    lo = min(lo, s)
            else:
                for i in range(start, stop):
                    k = keys[i]
                    if k - prev == 1 and (prev & 1) == 0:
                        return 0.0, 1
                    prev = k
                    s += float(k & 1) - np.int64(k >> 1).view(np.float64)
                    hi = max(hi, s)
                    lo = min(lo, s)
            if hi >= lo:  # some item counted
                best = max(best, hi + carry, -(lo + carry))
            carry = s + carry
        return best, 0

    return ks_keys


def make_sort_keys():

    @njit(nogil=True)
    def sort_keys(conf, y, keys):
        # The unsorted keys of binary._sort_keys, (bits << 1) | y, in one pass (the NumPy path takes two ufunc
        # passes a chunk). conf: float32 or float64 confidences (their float64 bits, the sign cleared, so that
        # -0.0 is 0.0); y: the correctness as uint8 0/1. Returns the number of confidences outside [0, 1] (NaN
        # included): the keys are then of no use.
        bad = 0
        for i in range(conf.shape[0]):
            x = np.float64(conf[i])
            bad += invalid(x)
            keys[i] = ((np.float64(x).view(np.int64) & 0x7FFF_FFFF_FFFF_FFFF) << 1) | np.int64(y[i])
        return bad

    return sort_keys


def make_tie_fill():

    @njit(nogil=True)
    def tie_fill(ivals, correct, mixed, table_bits, fill, y):
        # The correctness of the items of tie groups that mix correct and wrong ones, written over their groups'
        # runs of the sorted correctness y in input order (what a stable sort gives), in one pass over the input.
        # ivals: the confidences' int64 bits, input order; correct: uint8, input order; mixed: the mixed groups'
        # values (bits, sign cleared, ascending); fill: each group's first position in y, advanced as its items
        # are written. The groups' values are kept in an open-addressing table of 2**table_bits slots (linear
        # probing, Fibonacci hashing of the bits; -1 marks an empty slot, as no value's bits are negative), so
        # each item costs about one look-up. Returns the number of items written.
        size = 1 << table_bits
        mask = size - 1
        shift = np.uint64(64 - table_bits)
        table = np.full(size, -1, dtype=np.int64)
        group = np.zeros(size, dtype=np.int64)
        for g in range(mixed.shape[0]):
            h = np.int64((np.uint64(mixed[g]) * np.uint64(0x9E3779B97F4A7C15)) >> shift)
            while table[h] != -1:
                h = (h + 1) & mask
            table[h] = mixed[g]
            group[h] = g
        placed = 0
        for i in range(ivals.shape[0]):
            b = ivals[i] & 0x7FFF_FFFF_FFFF_FFFF  # -0.0 as 0.0
            h = np.int64((np.uint64(b) * np.uint64(0x9E3779B97F4A7C15)) >> shift)
            while True:
                t = table[h]
                if t == b:
                    g = group[h]
                    y[fill[g]] = correct[i] != 0
                    fill[g] += 1
                    placed += 1
                    break
                if t == -1:
                    break
                h = (h + 1) & mask
        return placed

    return tie_fill
