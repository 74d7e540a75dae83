"""The compiled pass of ``paired_ks_difference_ci`` equals its NumPy path bit for bit (issue 31).

The interval is computed with ``CALIBNB_KERNEL=numba`` and ``CALIBNB_KERNEL=numpy`` and the
floats are compared by their bytes; the kernel itself is compared with the NumPy operations
on the whole (S, n) array, on resample counts that do and do not fill its groups of rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from calibnb.papers import gupta2021 as paper
from calibnb.uncertainty import bootstrap_weights

numba = pytest.importorskip("numba")
ROWS = paper._BOOT_ROWS


def make_resampled_ks():
    return paper._BootKernel().resampled_ks


def _inputs(n, seed, *, ties=False, dtype=np.float64):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.3, 1.0, n)
    if ties:
        s = np.round(s, 1)
    y = rng.random(n) < s ** 1.5
    return np.clip(s * 0.93 + 0.05, 0, 1).astype(dtype), s.astype(dtype), y


def _reference(w, order, d):
    """max |cumsum(w[:, order] * d)| per row, the NumPy operations on the whole array (float32)."""
    return np.max(np.abs(np.cumsum(w[:, order] * d, axis=1)), axis=1)


@pytest.mark.parametrize("n, n_resamples", [(1, 10), (2, 11), (37, 17), (300, ROWS * 3), (1000, ROWS * 5 + 3),
                                            (5000, 1000)])
def test_kernel_equals_the_numpy_operations(n, n_resamples):
    rng = np.random.default_rng(n)
    w = np.concatenate(list(bootstrap_weights(n, n_resamples, seed=n))).astype(np.float32)
    s = rng.uniform(0, 1, n)
    order = np.argsort(s, kind="stable")
    # values whose float32 sums round at every step, so another order of additions would show
    d = ((rng.random(n) < 0.7) - s[order] * (1 + 1e-3 * rng.random(n))).astype(np.float32)
    top = np.full(n_resamples, np.nan, dtype=np.float32)
    make_resampled_ks()(w, order, d, top)
    assert top.tobytes() == _reference(w, order, d).tobytes()


@pytest.mark.parametrize("n, n_resamples, ties, dtype", [
    (5000, 1000, False, np.float64), (5000, 1003, True, np.float64), (400, 10, True, np.float32),
    (3, 12, False, np.float64), (1500, 257, True, np.float64)])
def test_interval_is_the_same_floats_with_and_without_numba(monkeypatch, n, n_resamples, ties, dtype):
    a, b, y = _inputs(n, n_resamples, ties=ties, dtype=dtype)
    got = {}
    for mode in ("numba", "numpy"):
        monkeypatch.setenv("CALIBNB_KERNEL", mode)
        got[mode] = np.array(paper.paired_ks_difference_ci(a, b, y, n_resamples=n_resamples, seed=7)).tobytes()
    assert got["numba"] == got["numpy"]


def test_the_compiled_pass_is_what_runs_at_the_notebooks_size(monkeypatch):
    # under auto, 5,000 test items x 1,000 resamples (notebook 03's defaults) take the compiled pass;
    # under numpy, never
    a, b, y = _inputs(5000, 0)
    for mode, expected in (("numpy", False), ("auto", True)):
        monkeypatch.setattr(paper, "_boot_kernel", {})
        monkeypatch.setenv("CALIBNB_KERNEL", mode)
        paper.paired_ks_difference_ci(a, b, y, n_resamples=1000, seed=0)
        assert isinstance(paper._boot_kernel.get("kernels"), paper._BootKernel) is expected, mode
    # a small interval stays on NumPy under auto (compiling would cost more than it saves)
    monkeypatch.setattr(paper, "_boot_kernel", {})
    paper.paired_ks_difference_ci(a[:100], b[:100], y[:100], n_resamples=100, seed=0)
    assert "kernels" not in paper._boot_kernel
