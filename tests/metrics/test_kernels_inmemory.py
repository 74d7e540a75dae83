"""The compiled kernels of the in-memory metrics equal the NumPy path bit for bit (issue 31).

Every metric is computed twice, with ``CALIBNB_KERNEL=numba`` (the kernel, at any size) and
``CALIBNB_KERNEL=numpy``, and the floats are compared by their bytes (so 0.0 and -0.0, or
one unit in the last place, differ). Inputs: exact bin edges, 0 and 1, the doubles next to
edges, float32, bool/int8/uint8 correctness, weights, (S, N) batches, chunk and lane tails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calibnb as cn
from calibnb.metrics import binary
from calibnb.metrics import _kernels as K

ROOT = Path(__file__).resolve().parents[2]

numba = None
try:  # optional: the NumPy path runs without it
    import numba  # noqa: F401
except ImportError:  # pragma: no cover
    pass
needs_numba = pytest.mark.skipif(numba is None, reason="numba is not installed")


def _bytes(x):
    if isinstance(x, pd.DataFrame):
        return {c: np.asarray(x[c]).tobytes() for c in x.columns}
    if isinstance(x, tuple):
        return tuple(_bytes(v) for v in x)
    return np.asarray(x, dtype=np.float64).tobytes()


def _both(monkeypatch, fn, *args, **kw):
    monkeypatch.setenv("CALIBNB_KERNEL", "numba")
    compiled = fn(*args, **kw)
    monkeypatch.setenv("CALIBNB_KERNEL", "numpy")
    plain = fn(*args, **kw)
    return compiled, plain


def _edge_values(n_bins):
    edges = np.arange(n_bins + 1) / n_bins
    return np.unique(np.clip(np.concatenate([
        edges, np.nextafter(edges, 2.0), np.nextafter(edges, -1.0), [0.0, 1.0, 0.1 + 0.2, 0.7 + 0.1, 0.6 + 0.1],
        np.float32(edges).astype(np.float64),
    ]), 0.0, 1.0))


METRICS = [
    ("ece", {"n_bins": 10}), ("ece", {"n_bins": 15}), ("ece", {"n_bins": 7}), ("ece", {"n_bins": "auto"}),
    ("mce", {"n_bins": 10}), ("mce", {"n_bins": 15}), ("reliability_table", {"n_bins": 10}),
    ("reliability_table", {"n_bins": 15, "interval": "wilson"}),
    ("macro_ce", {}), ("macro_ce_parts", {}), ("ice", {}), ("rewards", {}), ("hmr", {}), ("hmr", {"beta": 2.0}),
    ("brier_top", {}), ("ks_error", {}), ("ks_error", {"ties": "group"}),
]


def _data(n, seed, edges=True, dtype=np.float64):
    rng = np.random.default_rng(seed)
    conf = rng.random(n)
    if edges:
        ev = np.concatenate([_edge_values(m) for m in (7, 10, 15)])
        pick = rng.integers(0, n, size=min(n, 4 * ev.size))
        conf[pick] = rng.choice(ev, size=pick.size)
    correct = rng.random(n) < conf
    return conf.astype(dtype), correct


@needs_numba
@pytest.mark.parametrize("name,kw", METRICS)
@pytest.mark.parametrize("n", [1, 5, 255, 256, 257, 1000, (1 << 16) + 77])
def test_kernel_equals_numpy_bit_for_bit(monkeypatch, name, kw, n):
    conf, correct = _data(n, seed=n)
    compiled, plain = _both(monkeypatch, getattr(cn, name), conf, correct, **kw)
    assert _bytes(compiled) == _bytes(plain)


@needs_numba
@pytest.mark.parametrize("name,kw", METRICS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ydtype", [np.bool_, np.int8, np.uint8, np.int64, np.float64])
def test_dtypes_and_edges(monkeypatch, name, kw, dtype, ydtype):
    conf, correct = _data(3000, seed=1, dtype=dtype)
    conf[:4] = [0.0, 1.0, -0.0, 0.5]
    compiled, plain = _both(monkeypatch, getattr(cn, name), conf, correct.astype(ydtype), **kw)
    assert _bytes(compiled) == _bytes(plain)
    # float32 confidences are binned and summed by the value they hold, as their float64 cast
    c64, p64 = _both(monkeypatch, getattr(cn, name), conf.astype(np.float64), correct, **kw)
    assert _bytes(c64) == _bytes(compiled)


MASS = [("ece", {"n_bins": 10}), ("ece", {"n_bins": 15}), ("ece", {"n_bins": "sweep"}), ("mce", {"n_bins": 7}),
        ("reliability_table", {"n_bins": 15}), ("reliability_table", {"n_bins": 10, "interval": "wilson"})]


@needs_numba
@pytest.mark.parametrize("name,kw", MASS)
@pytest.mark.parametrize("n,ties", [(1, None), (9, None), (1000, None), (1000, "edges"), (1000, "pure"),
                                    ((1 << 16) + 77, None), ((1 << 16) + 77, 3), (200_003, "pure")])
def test_equal_mass_kernel_equals_numpy_bit_for_bit(monkeypatch, name, kw, n, ties):
    """binning="mass" after the sort: the kernel's bins (count, sums, range) are NumPy's, bytes for bytes.

    ``ties``: None, distinct confidences (the kernel decides); "edges": bin edges of the equal-width tests
    repeated; an int: confidences rounded to that many decimals, so tie groups mixing correct and wrong
    items straddle bin edges (NumPy's input order of ties decides); "pure": rounded to 2 decimals with
    correctness a function of the confidence, so many tie groups straddle edges but none mixes (the
    kernel decides).
    """
    conf, correct = _data(n, seed=n, edges=ties == "edges")
    if ties == "pure":
        conf = np.round(conf, 2)
        correct = (np.round(conf * 100) % 3) == 0
    elif isinstance(ties, int):
        conf = np.round(conf, ties)
    conf[: min(n, 3)] = [0.0, -0.0, 1.0][: min(n, 3)]
    compiled, plain = _both(monkeypatch, getattr(cn, name), conf, correct, binning="mass", **kw)
    assert _bytes(compiled) == _bytes(plain)


@needs_numba
def test_equal_mass_kernel_decides_unless_a_mixed_tie_straddles_an_edge(monkeypatch):
    """The kernel leaves the bins to NumPy exactly when a tie group mixing correct and wrong items straddles
    a bin edge (its items' input order then decides which bin holds the correct ones)."""
    kernel = K.InMemoryKernels().mass_stats()

    def run(conf, correct, n_bins):
        keys = binary._sort_keys(np.asarray(conf, dtype=np.float64), np.asarray(correct, dtype=bool))
        sizes = binary._mass_sizes(keys.shape[0], n_bins)
        out = [np.zeros(n_bins) for _ in range(5)]
        before = keys.copy()
        straddle = kernel(keys, keys.view(np.float64), sizes, *out)
        assert np.array_equal(keys, before >> 1) if straddle == 0 else np.array_equal(keys, before)  # untouched
        return straddle, out

    conf = [0.1, 0.2, 0.5, 0.5, 0.5, 0.5, 0.8, 0.9]  # a tie group at positions 2-5; 2 bins: the edge at 4
    assert run(conf, [0, 1, 1, 1, 1, 1, 0, 1], 2)[0] == 0  # straddles the edge, all correct: decided
    assert run(conf, [0, 1, 1, 0, 1, 1, 0, 1], 2)[0] == 1  # mixed and straddling: NumPy decides
    conf = [0.1, 0.2, 0.5, 0.5, 0.8, 0.9]  # 3 bins: edges at 2 and 4, the mixed group inside bin 1
    straddle, stats = run(conf, [0, 1, 1, 0, 1, 1], 3)
    assert straddle == 0
    monkeypatch.setenv("CALIBNB_KERNEL", "numpy")
    expect = binary._mass_stats(np.array(conf), np.array([0, 1, 1, 0, 1, 1], dtype=bool), 3)  # the NumPy path here
    assert [a.tobytes() for a in stats] == [np.asarray(a, dtype=np.float64).tobytes() for a in expect]
    assert stats[2].tolist() == [1.0, 1.0, 2.0] and stats[3].tolist() == [0.1, 0.5, 0.8]


@needs_numba
@pytest.mark.parametrize("ties", ["order", "group"])
@pytest.mark.parametrize("n,kind", [(1, None), (5, 2), (1000, None), (1000, "pure"), (1000, 1), ((1 << 16) + 77, None),
                                    ((1 << 16) + 77, "pure"), ((1 << 16) + 77, 3), (2 * (1 << 16) + 5, "boundary")])
def test_ks_kernel_equals_numpy_bit_for_bit(monkeypatch, ties, n, kind):
    """ks_error after the sort: the kernel's running sums (per chunk, plus the carry) are NumPy's, bytes for bytes.

    ``kind``: None, distinct confidences; an int: rounded to that many decimals, so tie groups mix correct and
    wrong items (in "order" mode the kernel then leaves the work to NumPy); "pure": rounded to 2 decimals with
    correctness a function of the confidence (ties, none mixed: the kernel decides in both modes); "boundary":
    tie groups at the sorted positions around the chunk edges.
    """
    conf, correct = _data(n, seed=n, edges=False)
    if kind == "pure":
        conf = np.round(conf, 2)
        correct = (np.round(conf * 100) % 3) == 0
    elif isinstance(kind, int):
        conf = np.round(conf, kind)
    elif kind == "boundary":
        conf = np.sort(conf)
        for edge in (1 << 16, 2 * (1 << 16)):
            conf[edge - 2:edge + 2] = conf[edge - 2]
        conf, correct = conf[::-1].copy(), correct[::-1].copy()
    conf[: min(n, 3)] = [0.0, -0.0, 1.0][: min(n, 3)]
    compiled, plain = _both(monkeypatch, cn.ks_error, conf, correct, ties=ties)
    assert _bytes(compiled) == _bytes(plain)


@needs_numba
@pytest.mark.parametrize("ties", ["order", "group"])
def test_ks_kernel_equals_numpy_on_many_small_tied_samples(monkeypatch, ties):
    """Few distinct confidences, so that within a tie group the running sum often goes beyond its value at the
    group's ends: a kernel that counted an item it should skip ("group"), or missed one ("order"), at any
    position would differ from the NumPy path on some of these 400 samples."""
    rng = np.random.default_rng(31)
    for _ in range(400):
        n = int(rng.integers(1, 120))
        conf = rng.choice(np.array([0.05, 0.3, 0.5, 0.55, 0.9, 1.0]), size=n)
        correct = rng.random(n) < 0.5
        if ties == "order":  # tie groups of one kind each, so that the kernel decides
            correct = conf > 0.52
        compiled, plain = _both(monkeypatch, cn.ks_error, conf, correct, ties=ties)
        assert _bytes(compiled) == _bytes(plain), (conf, correct)


@needs_numba
@pytest.mark.parametrize("ydtype", [np.bool_, np.int8, np.int64])
@pytest.mark.parametrize("n,decimals", [(6, 1), (1000, 2), ((1 << 16) + 77, 3), (200_003, 4)])
def test_tie_order_kernel_equals_numpy(monkeypatch, n, decimals, ydtype):
    """Ties mixing correct and wrong items put back in input order: the compiled pass (a hash table of the groups,
    each item written at its group's next place) gives the NumPy path's sorted correctness, item for item, and so
    the same KS error ("order") and equal-mass bins; -0.0 ties with 0.0."""
    conf, correct = _data(n, seed=n, edges=False)
    conf = np.round(conf, decimals)
    conf[: min(n, 4)] = [0.0, -0.0, 1.0, 0.0][: min(n, 4)]
    correct = correct.astype(ydtype)
    compiled, plain = _both(monkeypatch, lambda c, y: cn.ks_curves(c, y).correct, conf, correct)
    np.testing.assert_array_equal(compiled, plain)
    np.testing.assert_array_equal(plain, np.asarray(correct, bool)[np.argsort(conf, kind="stable")])
    for fn in (cn.ks_error, lambda c, y: cn.ece(c, y, n_bins=7, binning="mass")):
        compiled, plain = _both(monkeypatch, fn, conf, correct)
        assert _bytes(compiled) == _bytes(plain)


@pytest.mark.parametrize("kernel", ["numba", "numpy"])
@pytest.mark.parametrize("flushed", [False, True])
def test_sort_keys_are_the_integer_sort_of_the_keys(monkeypatch, kernel, flushed):
    """The sort keys, made by the compiled pass or NumPy's and sorted through their float64 view, are the int64
    sort of ``(bits << 1) | correct`` (-0.0 folded into 0.0), with the values whose keys read as subnormal doubles
    (0.0 and subnormal confidences) among them; ``flushed``: the int64 sort taken when this thread compares
    subnormals as zero."""
    if kernel == "numba":
        pytest.importorskip("numba")
    monkeypatch.setenv("CALIBNB_KERNEL", kernel)
    if flushed:
        monkeypatch.setattr(binary, "_SUBNORMALS", np.array([0.0, 0.0]))
    rng = np.random.default_rng(11)
    special = np.array([0.0, -0.0, 5e-324, 1e-310, 2.0**-1022, np.nextafter(2.0**-1022, 0.0), 1e-300, 0.5,
                        np.nextafter(1.0, 0.0), 1.0])
    conf = np.concatenate([np.repeat(special, 5), np.round(rng.random(3000), 2), rng.random(3000)])
    rng.shuffle(conf)
    correct = np.zeros(2 * conf.shape[0], dtype=bool)
    correct[::2] = rng.random(conf.shape[0]) < 0.5  # a strided view
    y = correct[::2]
    keys = binary._sort_keys(conf, y)
    expect = np.sort(((conf.view(np.int64) & 0x7FFF_FFFF_FFFF_FFFF) << 1) | y)
    assert keys.dtype == np.int64 and np.array_equal(keys, expect)
    assert keys[0] == 0 and keys[-1] >> 1 == np.float64(1.0).view(np.int64)


@needs_numba
def test_ks_kernel_leaves_mixed_ties_to_numpy_in_order_mode():
    """The kernel reports a tie group mixing correct and wrong items ("order" only; "group" does not need their
    order), and otherwise gives the NumPy path's largest running sum."""
    def run(conf, correct, group):
        keys = binary._sort_keys(np.asarray(conf, dtype=np.float64), np.asarray(correct, dtype=bool))
        return K.InMemoryKernels().ks_keys(group)(keys)

    conf = [0.1, 0.5, 0.5, 0.5, 0.9]
    assert run(conf, [0, 1, 0, 1, 1], False)[1] == 1  # mixed: NumPy restores the input order
    best, mixed = run(conf, [0, 1, 1, 1, 1], False)  # one group, all correct: decided
    assert mixed == 0 and best == binary._ks_from_keys(binary._sort_keys(np.array(conf), np.array([0, 1, 1, 1, 1],
                                                                                                   dtype=bool)), 5, "order") * 5
    best, mixed = run(conf, [0, 1, 0, 1, 1], True)
    assert mixed == 0 and best == pytest.approx(5 * cn.ks_error(conf, [0, 1, 0, 1, 1], ties="group"), abs=1e-15)


@needs_numba
@pytest.mark.parametrize("name,kw", [m for m in METRICS if m[0] != "reliability_table"])
@pytest.mark.parametrize("form", ["batch", "weights1d", "weights2d", "batch_weights1d", "batch_weights2d"])
def test_batched_and_weighted_forms(monkeypatch, name, kw, form):
    rng = np.random.default_rng(3)
    s, n = 4, 2000
    conf = np.stack([_data(n, seed=i)[0] for i in range(s)])
    correct = rng.random((s, n)) < conf
    w1 = rng.integers(0, 4, size=n).astype(float)
    w2 = rng.random((s, n)) * 3
    args = {
        "batch": (conf, correct, None), "weights1d": (conf[0], correct[0], w1),
        "weights2d": (conf[0], correct[0], w2), "batch_weights1d": (conf, correct, w1),
        "batch_weights2d": (conf, correct, w2),
    }[form]
    compiled, plain = _both(monkeypatch, getattr(cn, name), args[0], args[1], sample_weight=args[2], **kw)
    assert _bytes(compiled) == _bytes(plain)


@needs_numba
def test_weighted_reliability_table(monkeypatch):
    conf, correct = _data(5000, seed=4)
    w = np.random.default_rng(4).integers(0, 3, size=conf.size).astype(float)
    compiled, plain = _both(monkeypatch, cn.reliability_table, conf, correct, n_bins=15, sample_weight=w)
    assert _bytes(compiled) == _bytes(plain)


@needs_numba
def test_chunk_tails_and_lane_tails(monkeypatch):
    # sizes around the chunk (65,536) and lane (256) boundaries, one value in every lane of a tail
    for n in [K.CHUNK - 1, K.CHUNK, K.CHUNK + 1, 2 * K.CHUNK + K.LANES - 1]:
        conf, correct = _data(n, seed=n, edges=False)
        for name in ("macro_ce", "brier_top", "ece"):
            compiled, plain = _both(monkeypatch, getattr(cn, name), conf, correct)
            assert _bytes(compiled) == _bytes(plain), (name, n)


@needs_numba
@pytest.mark.parametrize("name", ["ece", "mce", "reliability_table", "macro_ce", "ice", "hmr", "rewards",
                                  "macro_ce_parts", "brier_top", "ks_error"])
@pytest.mark.parametrize("bad,match", [
    (("conf", 17, np.nan), "conf has 1 value that is NaN or infinite; first at index 17: nan"),
    (("conf", 70_000, 1.5), "conf has 1 value outside \\[0, 1\\]; first at index 70000: 1.5"),
    (("conf", 3, -1e-300), "conf has 1 value outside \\[0, 1\\]"),
    (("conf", 5, np.inf), "NaN or infinite"),
    (("correct", 9, 2), "correct must hold only 0/1 or bool; 1 value is not; first at index 9: 2"),
    (("correct", 9, -1), "correct must hold only 0/1 or bool"),
])
@pytest.mark.parametrize("kernel", ["numba", "numpy"])
def test_bad_values_rejected_as_before(monkeypatch, name, bad, match, kernel):
    conf, correct = _data(80_000, seed=5, edges=False)
    correct = correct.astype(np.int8)
    which, i, value = bad
    (conf if which == "conf" else correct)[i] = value
    monkeypatch.setenv("CALIBNB_KERNEL", kernel)
    with pytest.raises(ValueError, match=match):
        getattr(cn, name)(conf, correct)


@needs_numba
@pytest.mark.parametrize("conf_ok", [True, False])
def test_ks_error_checks_ties_after_conf_on_the_compiled_path(monkeypatch, conf_ok):
    """The compiled KS path (conf checked while its keys are made) reports a bad ``ties`` by name, and a bad
    confidence first, as the NumPy path does."""
    conf, correct = _data(80_000, seed=6, edges=False)
    if not conf_ok:
        conf[40_000] = np.nan
    for kernel in ("numba", "numpy"):
        monkeypatch.setenv("CALIBNB_KERNEL", kernel)
        with pytest.raises(ValueError, match="^ties must be one of" if conf_ok else "^conf has 1 value that is NaN"):
            cn.ks_error(conf, correct, ties="stable")


def test_constants_agree_with_the_numpy_path():
    assert K.EDGE_SHRINK == binary._EDGE_SHRINK and K.NEAR == binary._NEAR
    assert K.CHUNK == binary._CHUNK and K.CHUNK % K.LANES == 0


def test_lane_sums_are_sequential_per_lane():
    # the NumPy definition the kernels repeat: lane j adds items j, j + 256, ... in order
    x = np.random.default_rng(0).random(3 * K.LANES + 5) * np.logspace(-8, 8, 3 * K.LANES + 5)
    out = np.zeros(K.LANES)
    binary._lane_sums(x, out)
    expect = np.zeros(K.LANES)
    for i, v in enumerate(x):
        expect[i % K.LANES] += v
    assert out.tobytes() == expect.tobytes()


def test_kernel_choice_and_threshold(monkeypatch):
    monkeypatch.setenv("CALIBNB_KERNEL", "numpy")
    assert K.compiled_inmemory(10**9) is None
    monkeypatch.setenv("CALIBNB_KERNEL", "auto")
    assert K.compiled_inmemory(K.MIN_ROWS - 1) is None
    monkeypatch.setenv("CALIBNB_KERNEL", "sometimes")
    with pytest.raises(ValueError, match="CALIBNB_KERNEL must be one of auto, numpy, numba"):
        cn.ece(np.full(10, 0.5), np.ones(10))


def _run_without_numba(code: str, kernel: str):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CALIBNB_KERNEL": kernel}
    prelude = "import sys; sys.modules['numba'] = None\n"  # import numba now raises ImportError
    return subprocess.run([sys.executable, "-c", prelude + code], cwd=ROOT, capture_output=True, text=True, env=env)


def test_without_numba_the_numpy_path_runs():
    code = ("import numpy as np, calibnb as cn\n"
            "rng = np.random.default_rng(0); c = rng.random(100_000); y = rng.random(100_000) < c\n"
            "print(repr(cn.ece(c, y, n_bins=15)), repr(cn.macro_ce(c, y)), repr(cn.brier_top(c, y)))\n"
            "assert 'numba' not in [m.split('.')[0] for m in sys.modules if sys.modules[m] is not None]\n")
    auto = _run_without_numba(code, "auto")
    assert auto.returncode == 0, auto.stderr
    rng = np.random.default_rng(0)
    c = rng.random(100_000)
    y = rng.random(100_000) < c
    os.environ.get("CALIBNB_KERNEL")
    expect = f"{cn.ece(c, y, n_bins=15)!r} {cn.macro_ce(c, y)!r} {cn.brier_top(c, y)!r}"
    assert auto.stdout.strip() == expect
    forced = _run_without_numba(code, "numba")
    assert forced.returncode != 0 and "CALIBNB_KERNEL=numba but numba is not installed" in forced.stderr


def test_import_calibnb_does_not_import_numba():
    code = ("import sys, numpy as np, calibnb as cn; cn.ece(np.full(10, 0.5), np.ones(10)); "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')); "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_kernel_choice_matches_the_streaming_kernel(monkeypatch):
    from calibnb.scale import _kernel as streaming

    # one reading of CALIBNB_KERNEL for the package: the streaming kernel uses the in-memory kernels' rule
    assert streaming.kernel_choice is K.kernel_choice
    monkeypatch.setattr(streaming, "_cache", {})
    monkeypatch.setenv("CALIBNB_KERNEL", "numpy")
    assert streaming.compiled_kernel(10**9) is None and K.compiled_inmemory(10**9) is None
    monkeypatch.setenv("CALIBNB_KERNEL", "auto")
    assert streaming.compiled_kernel(streaming.MIN_ROWS - 1) is None

    for value in ["", "auto", " NUMPY ", "numba"]:
        monkeypatch.setenv("CALIBNB_KERNEL", value)
        assert K.kernel_choice() == streaming.kernel_choice()
    monkeypatch.setenv("CALIBNB_KERNEL", "gpu")
    with pytest.raises(ValueError) as a:
        K.kernel_choice()
    with pytest.raises(ValueError) as b:
        streaming.kernel_choice()
    assert str(a.value) == str(b.value)
