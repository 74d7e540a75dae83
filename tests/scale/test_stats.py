"""CalibrationStats (calibnb.stats) and the streaming Parquet reader (calibnb.data.scan_predictions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import calibnb as cn
import calibnb.data
from calibnb.scale.stats import GRID, CalibrationStats

ROOT = Path(__file__).resolve().parents[2]
# Every bin count dividing the grid that people use, plus some that only divide it.
DIVISORS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 15, 16, 20, 25, 30, 40, 50, 100, 112, 1008, GRID]


def _data(n=200_000, seed=0):
    """Confidences with heavy ties, grid/bin edges, float noise off edges, 0, 1 and -0.0."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0, 1, n)
    k = n // 5
    conf[:k] = np.round(conf[:k], 2)  # every value is an edge of the grid
    conf[k:2 * k] = np.round(conf[k:2 * k], 3)  # ties off the edges
    conf[2 * k:3 * k] = conf[2 * k:3 * k].astype(np.float32)
    edges = np.array([0.1 + 0.2, 0.7 + 0.1, 1 / 3, 2 / 3, 1 / 7, 0.3, 0.5, 1.0, 0.0, -0.0, 5e-324,
                      np.nextafter(0.3, 1), np.nextafter(0.3, 0), np.nextafter(0.5, 1), np.nextafter(1.0, 0),
                      np.nextafter(1 / 3, 1), np.nextafter(1 / 7, 0), 1 / GRID, np.nextafter(1 / GRID, 1)])
    conf[3 * k:3 * k + 19 * 100] = np.tile(edges, 100)
    conf = rng.permutation(conf)
    correct = rng.uniform(size=n) < conf
    return conf, correct


@pytest.fixture(scope="module")
def data():
    conf, correct = _data()
    return conf, correct, CalibrationStats.from_arrays(conf, correct)


@pytest.mark.parametrize("n_bins", DIVISORS)
def test_binned_metrics_equal_in_memory(data, n_bins):
    conf, correct, s = data
    assert s.ece(n_bins=n_bins) == pytest.approx(cn.ece(conf, correct, n_bins=n_bins), abs=1e-12)
    assert s.mce(n_bins=n_bins) == pytest.approx(cn.mce(conf, correct, n_bins=n_bins), abs=1e-12)
    if n_bins <= 1008:
        pd.testing.assert_frame_equal(s.reliability_table(n_bins=n_bins),
                                      cn.reliability_table(conf, correct, n_bins=n_bins), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_bins", [2, 3, 7, 10, 15, 16, 100])
def test_bin_membership_is_the_in_memory_one_near_every_edge(n_bins):
    """Values on and within a few ulps of every bin edge land in the bin calibnb.bin_indices gives."""
    edges = np.arange(n_bins + 1) / n_bins
    near = [edges]
    for k in range(1, 5):
        near += [np.nextafter(edges, 2.0), np.nextafter(edges, -1.0)]
        edges = near[-2]
    conf = np.clip(np.concatenate(near + [np.arange(1, n_bins) * (1.0 / n_bins) + 2e-16]), 0.0, 1.0)
    correct = np.zeros(conf.shape[0], dtype=bool)
    t = CalibrationStats.from_arrays(conf, correct).reliability_table(n_bins=n_bins)
    expected = np.bincount(cn.bin_indices(conf, n_bins=n_bins), minlength=n_bins)
    got = np.zeros(n_bins, dtype=np.int64)
    got[t["bin"].to_numpy()] = t["count"].to_numpy()
    np.testing.assert_array_equal(got, expected)


def test_instance_metrics_equal_in_memory(data):
    conf, correct, s = data
    assert s.ice() == pytest.approx(cn.ice(conf, correct), abs=1e-12)
    assert s.macro_ce() == pytest.approx(cn.macro_ce(conf, correct), abs=1e-12)
    assert s.rewards() == pytest.approx(tuple(cn.rewards(conf, correct)), abs=1e-12)
    assert isinstance(s.rewards(), cn.Rewards)
    for beta in (0.0, 0.5, 1.0, 2.0):
        assert s.hmr(beta=beta) == pytest.approx(cn.hmr(conf, correct, beta=beta), abs=1e-12)
    assert s.brier_top() == pytest.approx(cn.brier_top(conf, correct), abs=1e-12)


def test_ks_bounds_hold_and_are_narrow(data):
    conf, correct, s = data
    low, high = s.ks_bounds()
    for ties in ("order", "group"):
        assert low <= cn.ks_error(conf, correct, ties=ties) <= high
    counts = np.bincount(cn.bin_indices(conf, n_bins=GRID), minlength=GRID)
    assert high - low <= counts.max() / conf.shape[0] + 2e-12  # the documented width


def test_merged_state_equals_whole_state(data):
    conf, correct, whole = data
    cuts = [0, 1, 777, 50_000, 50_000, 123_457, conf.shape[0]]
    parts = [CalibrationStats.from_arrays(conf[a:b], correct[a:b]) for a, b in zip(cuts, cuts[1:]) if b > a]
    merged = parts[0].copy()
    for p in parts[1:]:
        merged.merge(p)
    total = sum(parts[1:], parts[0])
    streamed = CalibrationStats()
    for a, b in zip(cuts, cuts[1:]):
        if b > a:
            streamed.update(conf[a:b], correct[a:b])
    for m in (merged, total, streamed):
        np.testing.assert_array_equal(m.count, whole.count)
        np.testing.assert_array_equal(m.edge_values, whole.edge_values)
        np.testing.assert_array_equal(m.edge_count, whole.edge_count)
        np.testing.assert_allclose(m.conf_sum + m._conf_sum_lo, whole.conf_sum + whole._conf_sum_lo,
                                   rtol=1e-14, atol=1e-12)
        assert m.n == whole.n == conf.shape[0]
        assert m.ece(15) == pytest.approx(whole.ece(15), abs=1e-13)
        assert m.ks_bounds() == pytest.approx(whole.ks_bounds(), abs=1e-13)
        assert m.brier_top() == pytest.approx(whole.brier_top(), abs=1e-13)
    assert parts[0].n == 1  # + made a new state; merge() into a copy left the parts alone


def test_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(3)
    conf = np.round(rng.uniform(size=5_000), 2)
    correct = rng.uniform(size=5_000) < conf
    w = rng.integers(0, 4, size=5_000)
    ws = CalibrationStats.from_arrays(conf, correct, sample_weight=w)
    rep = CalibrationStats.from_arrays(np.repeat(conf, w), np.repeat(correct, w))
    for n_bins in (1, 10, 15):
        assert ws.ece(n_bins) == pytest.approx(rep.ece(n_bins), abs=1e-12)
        assert ws.mce(n_bins) == pytest.approx(rep.mce(n_bins), abs=1e-12)
        a, b = ws.reliability_table(n_bins), rep.reliability_table(n_bins)
        np.testing.assert_allclose(a["count"].to_numpy(), b["count"].to_numpy())
        np.testing.assert_allclose(a[["mean_conf", "accuracy", "gap"]], b[["mean_conf", "accuracy", "gap"]],
                                   atol=1e-12)
    for name in ("ice", "macro_ce", "hmr", "brier_top"):
        assert getattr(ws, name)() == pytest.approx(getattr(rep, name)(), abs=1e-12), name
    assert ws.total_weight == w.sum()
    # and the in-memory metrics with the same sample_weight
    assert ws.ece(15) == pytest.approx(cn.ece(conf, correct, n_bins=15, sample_weight=w), abs=1e-12)
    for name in ("ice", "macro_ce", "hmr", "brier_top"):
        assert getattr(ws, name)() == pytest.approx(getattr(cn, name)(conf, correct, sample_weight=w), abs=1e-12)
    assert ws.ks_bounds()[0] <= cn.ks_error(np.repeat(conf, w), np.repeat(correct, w), ties="group") \
        <= ws.ks_bounds()[1]


@pytest.mark.parametrize("fmt", ["npz", "json", "pickle"])
def test_serialisation_round_trip(data, tmp_path, fmt):
    import pickle

    conf, correct, s = data
    if fmt == "npz":
        path = tmp_path / "state.npz"
        s.to_npz(path)
        assert path.stat().st_size < 2_000_000
        back = CalibrationStats.from_npz(path)
    elif fmt == "json":
        back = CalibrationStats.from_json(s.to_json())
    else:
        back = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(back.count, s.count)
    for name in ("weight", "_weight_lo", "conf_sum", "_conf_sum_lo", "edge_values", "edge_count", "edge_weight"):
        np.testing.assert_array_equal(getattr(back, name), getattr(s, name), err_msg=name)
    assert (back.sq_sum, back._sq_lo, back.weighted) == (s.sq_sum, s._sq_lo, s.weighted)
    assert back.ece(15) == s.ece(15) and back.ks_bounds() == s.ks_bounds()


def test_bad_input_errors(tmp_path):
    with pytest.raises(ValueError, match=r"conf has 1 value outside \[0, 1\]; first at index 1: 1.5"):
        CalibrationStats.from_arrays([0.2, 1.5], [0, 1])
    with pytest.raises(ValueError, match="correct has length 1 but conf has length 2"):
        CalibrationStats.from_arrays([0.2, 0.5], [0])
    with pytest.raises(ValueError, match="sample_weight has 1 values? that are negative"):
        CalibrationStats.from_arrays([0.2, 0.5], [0, 1], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="sample_weight has length 3"):
        CalibrationStats.from_arrays([0.2, 0.5], [0, 1], sample_weight=[1, 1, 1])
    s = CalibrationStats.from_arrays([0.2, 0.5], [0, 1])
    with pytest.raises(ValueError, match=r"n_bins must divide the grid size 100800 .* got 11 \(nearest divisors: "
                                         r"10 and 12\)"):
        s.ece(n_bins=11)
    with pytest.raises(ValueError, match="binning='mass' needs the order"):
        s.ece(binning="mass")
    with pytest.raises(ValueError, match="binning must be one of"):
        s.mce(binning="equal")
    with pytest.raises(ValueError, match="is empty"):
        CalibrationStats().ece()
    with pytest.raises(ValueError, match="sum to 0"):
        CalibrationStats.from_arrays([0.2], [1], sample_weight=[0.0]).ice()
    with pytest.raises(ValueError, match="same grid"):
        s.merge(CalibrationStats(n_cells=100))
    with pytest.raises(TypeError, match="must be a CalibrationStats"):
        s.merge([1, 2])
    with pytest.raises(ValueError, match="not valid JSON"):
        CalibrationStats.from_json("{")
    with pytest.raises(ValueError, match="missing field"):
        CalibrationStats.from_json(json.dumps({"format": "calibnb.CalibrationStats/1"}))
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="not a CalibrationStats state"):
        CalibrationStats.from_npz(tmp_path / "other.npz")


def test_import_calibnb_does_not_import_dask_or_numba():
    # numba is imported on the first chunk large enough for the compiled kernel, not before
    code = ("import sys, calibnb, calibnb.data, calibnb.scale.stats; "
            "calibnb.CalibrationStats.from_arrays([0.5, 0.7], [1, 0]).ece(); "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'numba', 'llvmlite')); "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert cn.CalibrationStats is CalibrationStats  # the lazy export (calibnb.__getattr__) is the class itself


# ------------------------------------------------------------------ scan_predictions


def _write_dataset(folder: Path, conf, correct, weight=None, n_files=3, row_group_size=7_000):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    cuts = np.linspace(0, conf.shape[0], n_files + 1).astype(int)
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        cols = {"p": conf[a:b].astype(np.float32), "ok": correct[a:b]}
        if weight is not None:
            cols["w"] = weight[a:b]
        pq.write_table(pa.table(cols), folder / f"part-{i:02d}.parquet", row_group_size=row_group_size)


def test_scan_predictions_equals_in_memory(tmp_path):
    conf, correct = _data(60_000, seed=5)
    _write_dataset(tmp_path / "ds", conf, correct)
    c32 = conf.astype(np.float32)  # what the files hold
    s = cn.data.scan_predictions(tmp_path / "ds", conf="p", correct="ok", batch_size=5_000, progress=False)
    assert s.n == conf.shape[0]
    for n_bins in (10, 15):
        assert s.ece(n_bins=n_bins) == pytest.approx(cn.ece(c32, correct, n_bins=n_bins), abs=1e-12)
    assert s.macro_ce() == pytest.approx(cn.macro_ce(c32, correct), abs=1e-12)
    one = cn.data.scan_predictions(tmp_path / "ds" / "part-00.parquet", conf="p", correct="ok", progress=True)
    assert one.n == 20_000


def test_scan_predictions_weights_and_errors(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    conf = rng.uniform(size=1000)
    correct = rng.uniform(size=1000) < conf
    w = rng.integers(0, 3, size=1000).astype(float)
    _write_dataset(tmp_path / "ds", conf, correct, w, n_files=2, row_group_size=100)
    s = cn.data.scan_predictions(tmp_path / "ds", conf="p", correct="ok", sample_weight="w", progress=False)
    rep = CalibrationStats.from_arrays(np.repeat(conf.astype(np.float32), w.astype(int)), np.repeat(correct, w.astype(int)))
    assert s.ece() == pytest.approx(rep.ece(), abs=1e-12)
    with pytest.raises(ValueError, match=r"column\(s\) conf='conf' not in the Parquet data"):
        cn.data.scan_predictions(tmp_path / "ds", correct="ok", progress=False)
    with pytest.raises(ValueError, match="does not exist"):
        cn.data.scan_predictions(tmp_path / "nope", progress=False)
    bad = conf.copy()
    bad[777] = 1.25
    pq.write_table(pa.table({"conf": bad, "correct": correct}), tmp_path / "bad.parquet", row_group_size=100)
    with pytest.raises(ValueError, match=r"conf column 'conf' has 1 value outside \[0, 1\]; first at index 777: 1.25"):
        cn.data.scan_predictions(tmp_path / "bad.parquet", progress=False)
    nulls = pa.table({"conf": pa.array([0.5, None, 0.2]), "correct": pa.array([True, False, True])})
    pq.write_table(nulls, tmp_path / "nulls.parquet")
    with pytest.raises(ValueError, match=r"missing \(null\) value\(s\) in a batch; first at row 1"):
        cn.data.scan_predictions(tmp_path / "nulls.parquet", progress=False)


# ------------------------------------------------------------------ compiled kernel (numba) and lazy folding

numba = None
try:  # the compiled kernel is optional (calibnb[dask] installs numba)
    import numba  # noqa: F401
except ImportError:  # pragma: no cover - CI installs it
    pass
needs_numba = pytest.mark.skipif(numba is None, reason="numba is not installed")


def _kernel_state(kernel, monkeypatch, conf, correct, weight=None, min_rows=None):
    import calibnb.scale._kernel as K

    monkeypatch.setenv("CALIBNB_KERNEL", kernel)
    if min_rows is not None:
        monkeypatch.setattr(K, "MIN_ROWS", min_rows)
    return CalibrationStats.from_arrays(conf, correct, sample_weight=weight)


def _assert_same_sums(a: CalibrationStats, b: CalibrationStats):
    """Cells, counts, per-cell sums and side table bit for bit; the sum of squares to summation error."""
    np.testing.assert_array_equal(a.count, b.count)
    np.testing.assert_array_equal(a.weight, b.weight)
    np.testing.assert_array_equal(a._weight_lo, b._weight_lo)
    np.testing.assert_array_equal(a.conf_sum, b.conf_sum)
    np.testing.assert_array_equal(a._conf_sum_lo, b._conf_sum_lo)
    np.testing.assert_array_equal(a.edge_values, b.edge_values)
    np.testing.assert_array_equal(a.edge_count, b.edge_count)
    np.testing.assert_array_equal(a.edge_weight, b.edge_weight)
    assert a.sq_sum + a._sq_lo == pytest.approx(b.sq_sum + b._sq_lo, rel=1e-14)
    assert a.brier_top() == pytest.approx(b.brier_top(), abs=1e-14)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
def test_compiled_kernel_equals_numpy_kernel(monkeypatch, dtype, weighted):
    conf, correct = _data(300_000, seed=11)  # a third on grid edges (rounded), a third tied inside cells
    conf = conf.astype(dtype)
    conf[:4] = [0.0, 1.0, 0.1 + 0.2, 0.5]
    w = np.random.default_rng(3).uniform(0, 3, conf.shape[0]) if weighted else None
    slow = _kernel_state("numpy", monkeypatch, conf, correct, w)
    fast = _kernel_state("numba", monkeypatch, conf, correct, w)
    _assert_same_sums(slow, fast)
    c64 = conf.astype(np.float64)
    assert fast.ece(15) == pytest.approx(cn.ece(c64, correct, n_bins=15, sample_weight=w), abs=1e-12)
    assert fast.brier_top() == pytest.approx(cn.brier_top(c64, correct, sample_weight=w), abs=1e-12)


@needs_numba
def test_compiled_kernel_on_tiny_inputs_and_chunk_edges(monkeypatch):
    import calibnb.scale.stats as st

    monkeypatch.setattr(st, "_CCHUNK", 1000)  # many kernel calls, chunk edges inside the data,
    monkeypatch.setattr(st, "_CHUNK", 1000)  # the NumPy kernel's chunks alike (same fold points),
    monkeypatch.setattr(st, "_FOLD", 2500)  # and folds between them
    rng = np.random.default_rng(0)
    for n in (1, 3, 999, 1000, 1001, 7_777):
        conf = rng.uniform(size=n)
        conf[: n // 3] = np.round(conf[: n // 3], 2)  # grid edges
        conf[n // 3: 2 * n // 3] = np.round(conf[n // 3: 2 * n // 3], 3)  # ties inside cells
        correct = rng.uniform(size=n) < conf
        slow = _kernel_state("numpy", monkeypatch, conf, correct)
        fast = _kernel_state("numba", monkeypatch, conf, correct, min_rows=0)
        _assert_same_sums(slow, fast)


def test_kernel_choice_is_checked(monkeypatch):
    import calibnb.scale._kernel as K

    monkeypatch.setenv("CALIBNB_KERNEL", "fast")
    with pytest.raises(ValueError, match="CALIBNB_KERNEL must be one of auto, numpy, numba; got 'fast'"):
        CalibrationStats.from_arrays([0.5] * 10, [1] * 10)
    # numba missing: auto falls back to NumPy, an explicit "numba" is an error naming the fix
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.setattr(K, "_cache", {})
    monkeypatch.setenv("CALIBNB_KERNEL", "auto")
    conf, correct = _data(70_000, seed=2)
    assert CalibrationStats.from_arrays(conf, correct).ece(15) == pytest.approx(cn.ece(conf, correct, n_bins=15),
                                                                                abs=1e-12)
    monkeypatch.setenv("CALIBNB_KERNEL", "numba")
    with pytest.raises(ImportError, match=r"CALIBNB_KERNEL=numba but numba is not installed"):
        CalibrationStats.from_arrays(conf, correct)


@pytest.mark.parametrize("kernel", ["numpy", pytest.param("numba", marks=needs_numba)])
def test_many_small_updates_equal_one_state(monkeypatch, kernel):
    import pickle

    import calibnb.scale.stats as st

    monkeypatch.setenv("CALIBNB_KERNEL", kernel)
    monkeypatch.setattr(st, "_FOLD", 10_000)
    conf, correct = _data(50_000, seed=9)
    whole = CalibrationStats.from_arrays(conf, correct)
    s = CalibrationStats()
    for a in range(0, 50_000, 3_000):
        s.update(conf[a:a + 3_000], correct[a:a + 3_000])
    assert s._acc is not None  # rows wait in the scratch sums ...
    np.testing.assert_array_equal(s.count, whole.count)  # ... and every read folds them first
    assert s._acc is None
    np.testing.assert_array_equal(s.edge_count, whole.edge_count)
    # other chunk boundaries, other rounding: equal to summation error
    np.testing.assert_allclose(s.conf_sum + s._conf_sum_lo, whole.conf_sum + whole._conf_sum_lo, rtol=1e-14, atol=0)
    assert s.ece(15) == pytest.approx(whole.ece(15), abs=1e-14)
    assert s.brier_top() == pytest.approx(whole.brier_top(), abs=1e-14)
    s.update(conf[:10], correct[:10])
    back = pickle.loads(pickle.dumps(s))  # pickling folds too
    assert back.n == s.n == 50_010
    assert (s + whole).n == 100_010
    # a refused update leaves the state as it was
    with pytest.raises(ValueError, match="conf has 1 value outside"):
        s.update([0.5, 1.5], [1, 0])
    assert s.n == 50_010


@needs_numba
def test_bad_value_deep_in_a_long_chunk_leaves_the_state_unusable(monkeypatch):
    import calibnb.scale.stats as st

    monkeypatch.setenv("CALIBNB_KERNEL", "numba")
    monkeypatch.setattr(st, "_CCHUNK", 1000)
    conf, correct = _data(5_000, seed=1)
    conf[3_500] = np.nan
    s = CalibrationStats()
    with pytest.raises(ValueError, match=r"conf column 'p' has 1 value that is NaN or infinite; first at index 103500: nan"):
        s.update_chunk(conf, correct, offset=100_000, names={"conf": "conf column 'p'"})
    with pytest.raises(RuntimeError, match="is incomplete"):
        s.ece()
    # in the first piece nothing was added yet: the state stays usable
    ok = CalibrationStats()
    conf[3_500] = 0.5
    conf[10] = -0.5
    with pytest.raises(ValueError, match="first at index 10: -0.5"):
        ok.update_chunk(conf, correct)
    assert ok.n == 0


@pytest.mark.parametrize("kernel", ["numpy", pytest.param("numba", marks=needs_numba)])
def test_scan_reads_bool_bits_at_any_offset(tmp_path, monkeypatch, kernel):
    import calibnb.scale._kernel as K

    monkeypatch.setenv("CALIBNB_KERNEL", kernel)
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    conf, correct = _data(40_000, seed=4)
    _write_dataset(tmp_path / "ds", conf, correct, n_files=2, row_group_size=6_999)
    c32 = conf.astype(np.float32)
    # batches of 1,237 rows start at bit offsets that are not multiples of 8
    s = cn.data.scan_predictions(tmp_path / "ds", conf="p", correct="ok", batch_size=1_237, progress=False)
    ref = CalibrationStats.from_arrays(c32, correct)
    np.testing.assert_array_equal(s.count, ref.count)
    np.testing.assert_array_equal(s.edge_count, ref.edge_count)
    assert s.ece(15) == pytest.approx(cn.ece(c32, correct, n_bins=15), abs=1e-12)
    assert s.brier_top() == pytest.approx(cn.brier_top(c32, correct), abs=1e-12)


@pytest.mark.parametrize("kernel", ["numpy", pytest.param("numba", marks=needs_numba)])
def test_scan_errors_name_the_dataset_row(tmp_path, monkeypatch, kernel):
    import pyarrow as pa
    import pyarrow.parquet as pq

    import calibnb.scale._kernel as K

    monkeypatch.setenv("CALIBNB_KERNEL", kernel)
    monkeypatch.setattr(K, "MIN_ROWS", 0)
    conf, correct = _data(12_000, seed=8)
    conf, correct = conf[:3_000], correct[:3_000]
    for i, (a, b) in enumerate(((0, 1_000), (1_000, 3_000))):
        c = conf[a:b].copy()
        if i == 1:
            c[1_234] = 1.5
        pq.write_table(pa.table({"conf": c.astype(np.float32), "correct": correct[a:b]}),
                       tmp_path / f"p{i}.parquet", row_group_size=300)
    with pytest.raises(ValueError, match=r"has 1 value outside \[0, 1\]; first at index 2234: 1.5"):
        cn.data.scan_predictions(tmp_path, progress=False)
    with pytest.raises(ValueError, match=r"first at index 12234: 1.5"):
        cn.data.scan_predictions(tmp_path, progress=False, row_offset=10_000)
    with pytest.raises(ValueError, match="row_offset must be at least 0"):
        cn.data.scan_predictions(tmp_path, progress=False, row_offset=-1)


def test_scan_reader_thread_ends_with_the_scan(tmp_path):
    import threading

    import pyarrow as pa
    import pyarrow.parquet as pq

    conf, correct = _data(60_000, seed=6)
    conf[45_000] = 2.0
    pq.write_table(pa.table({"conf": conf, "correct": correct}), tmp_path / "p.parquet", row_group_size=5_000)
    with pytest.raises(ValueError, match="first at index 45000: 2.0"):
        cn.data.scan_predictions(tmp_path / "p.parquet", batch_size=2_000, progress=False)
    assert not [t for t in threading.enumerate() if t.name == "calibnb-scan-reader"]
    # and the rows before the bad one were read in order: the same data without it is exact
    conf[45_000] = 0.5
    pq.write_table(pa.table({"conf": conf, "correct": correct}), tmp_path / "p.parquet", row_group_size=5_000)
    s = cn.data.scan_predictions(tmp_path / "p.parquet", batch_size=2_000, progress=False)
    assert s.ece(15) == pytest.approx(cn.ece(conf, correct, n_bins=15), abs=1e-12)
    assert not [t for t in threading.enumerate() if t.name == "calibnb-scan-reader"]


def test_exact_sums_leave_out_zeros_and_return_the_float_of_fsum_over_every_cell():
    """The totals skip empty cells (issue 31: 7 ms a call over 2 x 100,800 cells); the float must not change."""
    import math

    from calibnb.scale import stats as st

    rng = np.random.default_rng(3)
    for trial in range(200):
        parts = [np.zeros(rng.integers(0, 400)) for _ in range(3)]
        for p in parts:
            k = rng.integers(0, p.size + 1)
            idx = rng.choice(p.size, size=k, replace=False)
            # every scale from 1e-300 to 1e300, both signs: a sum whose rounding depends on the order and on
            # cancellation, where np.sum (or any order-dependent sum) differs from the exactly rounded one
            p[idx] = rng.choice([-1, 1], size=k) * 10.0 ** rng.uniform(-300, 300, size=k)
        full = math.fsum(np.concatenate(parts))
        got = st._exact_sum(*parts)
        assert got == full and math.copysign(1, got) == math.copysign(1, full), (trial, got, full)
    assert st._exact_sum(np.array([1e16, 0.0, 1.0, 0.0, -1e16])) == 1.0  # np.sum gives 0.0 here
    assert math.isnan(st._exact_sum(np.array([0.0, np.nan]))) and st._exact_sum(np.array([0.0, np.inf])) == np.inf
    assert st._exact_sum(np.zeros(5), np.zeros(0)) == 0.0
    # a CalibrationStats' totals equal fsum over all of its cells
    conf = rng.uniform(size=5000)
    w = rng.uniform(0, 3, size=5000)
    s = CalibrationStats.from_arrays(conf, rng.uniform(size=5000) < conf, sample_weight=w)
    assert s.total_weight == math.fsum(np.concatenate((s.weight.ravel(), s._weight_lo.ravel(),
                                                       s.edge_weight.ravel())))
