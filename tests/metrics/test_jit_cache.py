"""calibnb.jit: the compiled kernels are cached on disk, and processes compiling at once cannot mix them up.

numba's own cache numbers its data files in order, so two processes adding different variants of one
function at once could leave one variant's code under the other's index entry (seen here in a fresh clone;
see calibnb/jit.py). These tests run processes that compile different variants at the same moment into one
empty cache folder, then processes that must load every variant from it, and compare each result with the
NumPy path bit for bit.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

numba = pytest.importorskip("numba")

from calibnb import jit as _jit  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

#: Each process computes these (conf dtype, correctness dtype, weighted, binning) in its own order, so the
#: processes add different variants and signatures of the same kernels at the same time.
VARIANTS = [("float64", "bool", False, "width"), ("float32", "int8", False, "width"),
            ("float64", "bool", True, "width"), ("float32", "bool", False, "mass"),
            ("float64", "uint8", True, "mass"), ("float64", "bool", False, "mass")]

_CHILD = r"""
import json, os, sys
import numpy as np
import calibnb as cn
from calibnb import jit as _jit
from calibnb.metrics import _kernels as K

order = json.loads(sys.argv[1])
rng = np.random.default_rng(7)
n = 1 << 16  # above calibnb.metrics._kernels.MIN_ROWS: the compiled path
out = []
for conf_dtype, y_dtype, weighted, binning in order:
    c = rng.uniform(size=n).astype(conf_dtype)
    y = (rng.uniform(size=n) < c).astype(y_dtype)
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    got = []
    for kernel in ("numba", "numpy"):
        os.environ["CALIBNB_KERNEL"] = kernel
        got.append([np.float64(cn.ece(c, y, n_bins=15, binning=binning, sample_weight=w)).tobytes().hex(),
                    np.asarray(cn.reliability_table(c, y, n_bins=7, binning=binning, sample_weight=w)
                               .to_numpy(dtype=float)).tobytes().hex()])
    out.append(got[0] == got[1])
hits = misses = 0
for kernels in K._cache.values():
    for fn in kernels._fns.values():
        hits += sum(fn.stats.cache_hits.values())
        misses += sum(fn.stats.cache_misses.values())
print(json.dumps({"equal": out, "hits": hits, "misses": misses, "problem": _jit.CACHE_PROBLEM,
                  "uncached": _jit.UNCACHED}))
"""


def _run_together(cache_dir: Path, orders: list[list]) -> list[dict]:
    """Start one process per order at once (numba's cache folder: cache_dir); their reports."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(o)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for o in orders]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def test_processes_compiling_at_once_then_loading_from_the_cache_get_their_own_variant(tmp_path):
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    orders = [VARIANTS, VARIANTS[::-1], VARIANTS[2:] + VARIANTS[:2]]
    first = _run_together(cache, orders)
    for r in first:
        assert r["problem"] is None and r["uncached"] == {}
        assert all(r["equal"]) and r["misses"] > 0  # compiled (nothing was cached yet), equal to NumPy
    names = sorted(p.name for p in cache.rglob("*.nbc"))
    assert names and all(re.search(r"\.[0-9a-f]{24}\.nbc$", n) for n in names), names  # named by key
    # every process now loads every variant from the folder the first three wrote concurrently
    second = _run_together(cache, orders)
    for r in second:
        # loaded (an entry lost to two processes rewriting one index at once is compiled again: a miss, never
        # a wrong load), and equal to NumPy
        assert all(r["equal"]) and r["hits"] > r["misses"], r


def test_a_data_file_holds_only_the_variant_its_name_says(tmp_path):
    """Two caches of one function that read the index before either wrote it (the race) keep both variants
    apart: each key's file holds that key's data, and the entry the slower index write lost is a miss."""
    from numba.core.caching import IndexDataCacheFile

    from calibnb.jit import _KeyNamedCacheFile

    a = _KeyNamedCacheFile(str(tmp_path), "f-1.py311", source_stamp=(1.0, 10))
    b = _KeyNamedCacheFile(str(tmp_path), "f-1.py311", source_stamp=(1.0, 10))
    stale = {}
    b._load_index = lambda: dict(stale)  # b read the index before a wrote it
    a.save(("sigA",), "code of A")
    b.save(("sigB",), "code of B")
    fresh = _KeyNamedCacheFile(str(tmp_path), "f-1.py311", source_stamp=(1.0, 10))
    assert fresh.load(("sigB",)) == "code of B"
    assert fresh.load(("sigA",)) is None  # lost from the index: compiled again, not loaded wrong
    assert (tmp_path / _jit.data_file_name("f-1.py311", ("sigA",))).is_file()
    # numba's own numbering under the same interleaving of writes (A's data written last) loads A's code
    # for B's signature: the failure this module exists for
    c = IndexDataCacheFile(str(tmp_path / "numbered"), "f-1.py311", source_stamp=(1.0, 10))
    (tmp_path / "numbered").mkdir()
    c._save_index({("sigA",): c._data_name(1)})  # A took number 1 in its index ...
    c._save_index({("sigB",): c._data_name(1)})  # ... and B, which read the index first, took it too
    c._save_data(c._data_name(1), "code of B")
    c._save_data(c._data_name(1), "code of A")
    assert c.load(("sigB",)) == "code of A"


def test_njit_refuses_a_cache_argument():
    with pytest.raises(TypeError, match="sets the cache itself"):
        _jit.njit(cache=True)
