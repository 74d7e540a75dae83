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
from calibnb.metrics import _kernels_numba as kn
from calibnb.scale import _kernel as sk
keys = [_jit._dependencies(f.py_func) for f in (sk._make_squares(True), kn.make_width_table(True))]
print(json.dumps({"equal": out, "hits": hits, "misses": misses, "problem": _jit.CACHE_PROBLEM,
                  "uncached": _jit.UNCACHED, "keys": keys}))
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
    from calibnb.metrics import _kernels_numba as kn
    from calibnb.scale import _kernel as sk

    keys = [_jit._dependencies(f.py_func) for f in (sk._make_squares(True), kn.make_width_table(True))]
    for r in first:
        assert r["problem"] is None and r["uncached"] == {}
        assert r["keys"] == keys  # the cache keys' text is the same in every process
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
    assert (tmp_path / _jit._data_file_name("f-1.py311", ("sigA",))).is_file()
    # numba's own numbering under the same interleaving of writes (A's data written last) loads A's code
    # for B's signature: the failure this module exists for
    c = IndexDataCacheFile(str(tmp_path / "numbered"), "f-1.py311", source_stamp=(1.0, 10))
    (tmp_path / "numbered").mkdir()
    c._save_index({("sigA",): c._data_name(1)})  # A took number 1 in its index ...
    c._save_index({("sigB",): c._data_name(1)})  # ... and B, which read the index first, took it too
    c._save_data(c._data_name(1), "code of B")
    c._save_data(c._data_name(1), "code of A")
    assert c.load(("sigB",)) == "code of A"


def test_njit_options_are_checked_and_the_cache_is_not_one():
    with pytest.raises(TypeError, match="unexpected keyword argument 'cache'"):
        _jit.njit(cache=True)
    with pytest.raises(TypeError, match="nogil must be a bool; got str"):
        _jit.njit(nogil="yes")
    with pytest.raises(ValueError, match="inline must be 'never' or 'always'; got 'sometimes'"):
        _jit.njit(inline="sometimes")


_FACTORY = '''
import numpy as np
from calibnb.jit import njit

def make(wide):
    @njit()
    def k(x):
        if wide:
            out = np.empty(3, dtype=np.float64)
            out[:] = x.sum()
        else:
            out = np.empty(3, dtype=np.int32)
            out[:] = 1
        return out
    return k
'''

_MIXED = r'''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import fac
order = json.loads(sys.argv[2])
made = {wide: fac.make(wide) for wide in order}
out = {}
for wide in order:
    k = made[wide]
    r = k(np.ones(4))
    (cres,) = k.overloads.values()
    out[str(wide)] = {"result": r.tolist(), "dtype": str(r.dtype), "hits": sum(k.stats.cache_hits.values()),
                      "uid": cres.fndesc.uid, "env": cres.fndesc.env_name, "qualname": k.py_func.__qualname__}
print(json.dumps(out))
'''


def _mixed(folder: Path, order: list[bool]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("NUMBA_CACHE_DIR", None)  # the cache next to fac.py, in this test's folder
    p = subprocess.run([sys.executable, "-c", _MIXED, str(folder), json.dumps(order)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_process_that_compiles_one_variant_and_loads_another_gets_each_its_own_code(tmp_path):
    """The collision of calibnb/jit.py's docstring (2.): process 1 compiles the wide variant and caches it;
    process 2 compiles the narrow one first (its counter at the same number as process 1's was), then loads
    the wide one. With numba's cache=True the wide one came back as int32 ones (the narrow one's
    environment); here each variant has its own qualified name and symbols, and returns its own result."""
    (tmp_path / "fac.py").write_text(_FACTORY)
    first = _mixed(tmp_path, [True])
    assert first["True"]["result"] == [4.0, 4.0, 4.0] and first["True"]["hits"] == 0
    second = _mixed(tmp_path, [False, True])
    narrow, wide = second["False"], second["True"]
    assert wide["hits"] == 1 and narrow["hits"] == 0  # the dangerous mix: one loaded, one compiled here
    assert wide["uid"] == narrow["uid"] == first["True"]["uid"]  # the counters met, as in the failure
    assert wide["qualname"].endswith("k__wide_1") and narrow["qualname"].endswith("k__wide_0")
    assert wide["env"] != narrow["env"]
    assert wide["result"] == [4.0, 4.0, 4.0] and wide["dtype"] == "float64"
    assert narrow["result"] == [1, 1, 1] and narrow["dtype"] == "int32"


def test_a_cache_key_names_what_the_kernel_reads():
    from calibnb.metrics import _kernels_numba as kn
    from calibnb.scale import _kernel as sk

    squares = sk._make_squares(True)
    deps = _jit._dependencies(squares.py_func)
    assert "cell term=jit _make_squares.<locals>.term__weighted_1" in deps and "cell weighted=True" in deps
    table = kn.make_width_table(False)
    deps = _jit._dependencies(table.py_func)
    assert "global BLOCK=" in deps and "global block_codes=jit block_codes" in deps and "global invalid=" in deps
    # the same text in other processes: the children of the concurrent test print it
    # (test_processes_compiling_at_once_then_loading_from_the_cache_get_their_own_variant)


def test_a_kernel_that_reads_a_value_without_a_stable_description_is_refused_when_defined():
    box = [1.0]

    def reads_a_list(x):
        return x + box[0]

    with pytest.raises(TypeError, match=r"reads_a_list uses 'box', a list"):
        _jit.njit()(reads_a_list)
