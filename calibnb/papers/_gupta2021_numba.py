"""The compiled pass of :func:`calibnb.papers.gupta2021.paired_ks_difference_ci` (imported only when it is used).

``make_resampled_ks()`` returns ``resampled_ks(w, order, d, top)``: for each
row ``r`` of the float32 bootstrap multiplicities ``w`` (S, n), the largest
``|sum_{j <= i} w[r, order[j]] * d[j]|`` over ``i``, written to ``top[r]``.
Each row's running sum is the float32 sequence of the NumPy path (``take``,
``multiply``, a sequential ``cumsum``, ``abs``, ``max``): one product and one
addition per item in item order, so the results are equal bit for bit
(``tests/papers/test_gupta2021_kernel.py``). :data:`ROWS` rows are summed side
by side, so the additions of one row do not wait on each other's latency; the
NumPy path wrote and read the (S, n) products five times.
"""

from __future__ import annotations

import numpy as np

from ..jit import njit

__all__ = ["ROWS", "make_resampled_ks"]

#: Resamples summed side by side in the compiled pass.
ROWS = 8


def make_resampled_ks():
    """The compiled ``resampled_ks(w, order, d, top)`` described in the module's docstring."""

    @njit(nogil=True)
    def resampled_ks(w, order, d, top):
        s, n = w.shape
        acc = np.zeros(ROWS, dtype=np.float32)
        big = np.zeros(ROWS, dtype=np.float32)
        for r0 in range(0, s - s % ROWS, ROWS):
            acc[:] = 0.0
            big[:] = 0.0
            for i in range(n):
                o = order[i]
                di = d[i]
                for q in range(ROWS):
                    a = acc[q] + w[r0 + q, o] * di
                    acc[q] = a
                    big[q] = max(big[q], abs(a))
            top[r0:r0 + ROWS] = big
        for r in range(s - s % ROWS, s):  # the last rows, one at a time
            a = np.float32(0.0)
            b = np.float32(0.0)
            for i in range(n):
                a += w[r, order[i]] * d[i]
                b = max(b, abs(a))
            top[r] = b

    return resampled_ks
