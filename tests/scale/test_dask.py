"""calibnb.dask on a real two-process distributed.LocalCluster: every function equals the in-memory one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibnb as cn

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

import calibnb.dask as cdask  # noqa: E402

# One xdist worker runs every test here, so one cluster serves them all.
pytestmark = pytest.mark.xdist_group("dask_cluster")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                       dashboard_address="127.0.0.1:0", memory_limit="2GiB")  # a free local port
    cl = distributed.Client(cluster)
    try:
        yield cl
    finally:
        cl.close()
        cluster.close()


def _data(n, seed):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.0, 1.0, n)
    k = n // 3
    conf[:k] = np.round(conf[:k], 2)  # tie groups on grid edges (0.5, 0.37, ...)
    conf[k:2 * k] = np.round(conf[k:2 * k], 3)  # tie groups inside grid cells
    conf = rng.permutation(conf)
    correct = rng.uniform(size=n) < conf
    return conf, correct


CHUNKINGS = {
    "uneven": (1, 999, 20_000, 0, 7_000, 31_000, 41_000),  # includes an empty chunk
    "single": (100_000,),
    "even": (12_500,) * 8,
}


@pytest.fixture(scope="module")
def arrays():
    return _data(100_000, seed=7)


def _dask(arr, chunks):
    return da.from_array(arr, chunks=(chunks,))


@pytest.mark.parametrize("chunking", list(CHUNKINGS))
def test_every_function_equals_in_memory(client, arrays, chunking):
    conf, correct = arrays
    c, y = _dask(conf, CHUNKINGS[chunking]), _dask(correct, CHUNKINGS[chunking])
    for ties in ("order", "group"):
        assert cdask.ks_error(c, y, ties=ties) == pytest.approx(cn.ks_error(conf, correct, ties=ties), abs=1e-12)
    for binning, n_bins in (("width", 15), ("width", 13), ("mass", 15), ("mass", 1)):
        kw = dict(n_bins=n_bins, binning=binning)  # 13 does not divide the grid: its bins are the cells
        assert cdask.ece(c, y, **kw) == pytest.approx(cn.ece(conf, correct, **kw), abs=1e-12), kw
    for binning in ("width", "mass"):
        kw = dict(n_bins=10, binning=binning)
        assert cdask.mce(c, y, **kw) == pytest.approx(cn.mce(conf, correct, **kw), abs=1e-12), kw
        pd.testing.assert_frame_equal(cdask.reliability_table(c, y, **kw), cn.reliability_table(conf, correct, **kw),
                                      rtol=1e-12, atol=1e-12)
    assert cdask.ice(c, y) == pytest.approx(cn.ice(conf, correct), abs=1e-12)
    assert cdask.macro_ce(c, y) == pytest.approx(cn.macro_ce(conf, correct), abs=1e-12)
    assert cdask.rewards(c, y) == pytest.approx(tuple(cn.rewards(conf, correct)), abs=1e-12)
    assert cdask.hmr(c, y, beta=2.0) == pytest.approx(cn.hmr(conf, correct, beta=2.0), abs=1e-12)
    assert cdask.brier_top(c, y) == pytest.approx(cn.brier_top(conf, correct), abs=1e-12)


def test_tie_groups_across_chunk_boundaries(client):
    """Mixed tie groups whose members sit in different chunks: order mode follows input order."""
    conf = np.array([0.4, 0.4, 0.3, 0.4, 0.4, 0.123, 0.123, 0.9, 0.123, 0.4, 0.123, 0.5])
    correct = np.array([1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 0])
    order = np.random.default_rng(0).permutation(conf.shape[0])
    for c_np, y_np in ((conf, correct), (conf[order], correct[order])):
        for chunks in ((1,) * 12, (3, 0, 4, 5)):
            c, y = _dask(c_np, chunks), _dask(y_np, chunks)
            for ties in ("order", "group"):
                assert cdask.ks_error(c, y, ties=ties) == pytest.approx(cn.ks_error(c_np, y_np, ties=ties),
                                                                        abs=1e-15)
            pd.testing.assert_frame_equal(cdask.reliability_table(c, y, n_bins=5, binning="mass"),
                                          cn.reliability_table(c_np, y_np, n_bins=5, binning="mass"))


def test_dataframe_columns(client, arrays):
    conf, correct = arrays
    df = dd.from_pandas(pd.DataFrame({"conf": conf.astype(np.float32), "correct": correct}), npartitions=5)
    c32 = conf.astype(np.float32)
    assert cdask.ece(df["conf"], df["correct"], n_bins=15) == pytest.approx(cn.ece(c32, correct, n_bins=15),
                                                                            abs=1e-12)
    assert cdask.ks_error(df["conf"], df["correct"]) == pytest.approx(cn.ks_error(c32, correct), abs=1e-12)
    assert cdask.ece(df["conf"], df["correct"], binning="mass") == pytest.approx(
        cn.ece(c32, correct, binning="mass"), abs=1e-12)
    with pytest.raises(TypeError, match="not a DataFrame"):
        cdask.ece(df, df["correct"])


def test_merged_state_equals_whole_state(client, arrays):
    conf, correct = arrays
    whole = cdask.calibration_stats(_dask(conf, CHUNKINGS["uneven"]), _dask(correct, CHUNKINGS["uneven"]),
                                    split_every=2)
    a = cdask.calibration_stats(_dask(conf[:30_000], 7_000), _dask(correct[:30_000], 7_000))
    b = cn.CalibrationStats.from_arrays(conf[30_000:], correct[30_000:])
    merged = a + b
    np.testing.assert_array_equal(merged.count, whole.count)
    np.testing.assert_array_equal(merged.edge_count, whole.edge_count)
    assert merged.ece(15) == pytest.approx(whole.ece(15), abs=1e-14)
    assert merged.ks_bounds() == pytest.approx(whole.ks_bounds(), abs=1e-14)


def test_integer_weights_equal_repeated_rows(client):
    rng = np.random.default_rng(2)
    conf = np.round(rng.uniform(size=3_000), 3)
    correct = rng.uniform(size=3_000) < conf
    w = rng.integers(0, 5, size=3_000)
    s = cdask.calibration_stats(_dask(conf, 700), _dask(correct, 1000), sample_weight=_dask(w, 300))
    rep_c, rep_y = np.repeat(conf, w), np.repeat(correct, w)
    assert s.ece(15) == pytest.approx(cn.ece(rep_c, rep_y, n_bins=15), abs=1e-12)
    assert s.macro_ce() == pytest.approx(cn.macro_ce(rep_c, rep_y), abs=1e-12)
    assert s.brier_top() == pytest.approx(cn.brier_top(rep_c, rep_y), abs=1e-12)


def _in_memory_message(fn, *args, **kw):
    with pytest.raises((ValueError, TypeError)) as info:
        fn(*args, **kw)
    return str(info.value)


def test_bad_input_errors_match_in_memory(client):
    rng = np.random.default_rng(0)
    conf = rng.uniform(size=1000)
    correct = rng.uniform(size=1000) < conf
    cases = []
    bad = conf.copy()
    bad[[300, 700]] = [1.5, -0.5]
    cases.append((bad, correct))
    nan = conf.copy()
    nan[[650, 20]] = [np.nan, np.inf]
    cases.append((nan, correct))
    y = correct.astype(float)
    y[555] = 0.5
    cases.append((conf, y))
    cases.append((conf, correct[:999]))
    for c_np, y_np in cases:
        expected = _in_memory_message(cn.ece, c_np, y_np)
        with pytest.raises(ValueError) as info:
            cdask.ece(_dask(c_np, 128), _dask(y_np, 128))
        assert str(info.value) == expected
    for fn in (cdask.ks_error, cdask.macro_ce):
        with pytest.raises(ValueError, match=r"conf has 2 values outside \[0, 1\]; first at index 300: 1.5"):
            fn(_dask(cases[0][0], 77), _dask(correct, 77))
    # unknown lengths (a Series): the length error comes from the reduction, same message
    s = dd.from_pandas(pd.Series(conf), npartitions=3)
    t = dd.from_pandas(pd.Series(correct[:999]), npartitions=3)
    with pytest.raises(ValueError, match="correct has length 999 but conf has length 1000"):
        cdask.ece(s, t)
    with pytest.raises(ValueError, match="conf is empty"):
        cdask.ece(da.zeros(0, chunks=1), da.zeros(0, chunks=1))
    with pytest.raises(ValueError, match="conf must be 1-D"):
        cdask.ece(da.zeros((4, 2), chunks=2), da.zeros(4, chunks=2))
    with pytest.raises(TypeError, match="conf must hold real numbers; got complex"):
        cdask.ece(da.zeros(4, dtype=complex, chunks=2), da.zeros(4, chunks=2))
    with pytest.raises(ValueError, match="n_bins must be at least 1"):
        cdask.ece(_dask(conf, 100), _dask(correct, 100), n_bins=0)
    with pytest.raises(ValueError, match="ties must be one of 'order', 'group'"):
        cdask.ks_error(_dask(conf, 100), _dask(correct, 100), ties="first")
    w = np.ones(1000)
    w[[5, 905]] = [-1.0, np.nan]
    with pytest.raises(ValueError, match="sample_weight has 2 values that are negative, NaN or infinite; "
                                         "first at index 5: -1.0"):
        cdask.calibration_stats(_dask(conf, 100), _dask(correct, 100), sample_weight=_dask(w, 100))


def test_exact_on_twenty_million_predictions_with_ties(client):
    """2 x 10^7 predictions with ties: every function within 1e-10 of the in-memory one.

    2% of the confidences are rounded to 2 decimals (tie groups of ~4000 on grid edges), 10% to
    4 decimals (groups of ~200 inside grid cells, across blocks), the rest are continuous.
    """
    n_blocks, size = 10, 2_000_000

    def block(i):
        rng = np.random.default_rng([11, i])
        conf = rng.uniform(size=size)
        a, b = size // 50, size // 50 + size // 10
        conf[:a] = np.round(conf[:a], 2)
        conf[a:b] = np.round(conf[a:b], 4)
        conf = rng.permutation(conf)
        return conf, rng.uniform(size=size) < conf

    # The workers make their blocks themselves (no 180 MB graph); the test process makes the same data.
    from dask import delayed

    made = [delayed(block, pure=True)(i) for i in range(n_blocks)]
    c = da.concatenate([da.from_delayed(m[0], shape=(size,), dtype=np.float64) for m in made]).persist()
    y = da.concatenate([da.from_delayed(m[1], shape=(size,), dtype=bool) for m in made]).persist()
    parts = [block(i) for i in range(n_blocks)]
    conf = np.concatenate([p[0] for p in parts])
    correct = np.concatenate([p[1] for p in parts])
    del parts
    distributed.wait([c, y])
    for ties in ("order", "group"):
        assert abs(cdask.ks_error(c, y, ties=ties) - cn.ks_error(conf, correct, ties=ties)) <= 1e-10
    assert abs(cdask.ece(c, y, n_bins=15, binning="mass") - cn.ece(conf, correct, n_bins=15, binning="mass")) <= 1e-10
    s = cdask.calibration_stats(c, y)
    assert abs(s.ece(15) - cn.ece(conf, correct, n_bins=15)) <= 1e-10
    assert abs(s.mce(15) - cn.mce(conf, correct, n_bins=15)) <= 1e-10
    assert abs(s.macro_ce() - cn.macro_ce(conf, correct)) <= 1e-10
    assert abs(s.hmr() - cn.hmr(conf, correct)) <= 1e-10
    assert abs(s.ice() - cn.ice(conf, correct)) <= 1e-10
    assert abs(s.brier_top() - cn.brier_top(conf, correct)) <= 1e-10


# ------------------------------------------------------------------ Parquet read by the workers


def _parquet(folder, conf, correct, cuts, row_group_size):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir()
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        pq.write_table(pa.table({"conf": conf[a:b].astype(np.float32), "correct": correct[a:b]}),
                       folder / f"part-{i:02d}.parquet", row_group_size=row_group_size)


def test_scan_parquet_equals_in_memory_and_the_streaming_reader(client, arrays, tmp_path):
    import calibnb.data

    conf, correct = arrays
    _parquet(tmp_path / "ds", conf, correct, (0, 1, 30_000, 30_000 + 999, 100_000), row_group_size=4_000)
    c32 = conf.astype(np.float32)
    ref = cn.CalibrationStats.from_arrays(c32, correct)
    # tasks of whole row groups that cut files and span them; a one-row file; fan-in 2
    for rows_per_task in (1, 9_000, 10**9):
        s = cdask.scan_parquet(tmp_path / "ds", rows_per_task=rows_per_task, split_every=2)
        np.testing.assert_array_equal(s.count, ref.count)
        np.testing.assert_array_equal(s.edge_count, ref.edge_count)
        assert s.ece(15) == pytest.approx(cn.ece(c32, correct, n_bins=15), abs=1e-12)
        assert s.brier_top() == pytest.approx(cn.brier_top(c32, correct), abs=1e-12)
        assert s.ks_bounds()[0] <= cn.ks_error(c32, correct) <= s.ks_bounds()[1]
    stream = calibnb.data.scan_predictions(tmp_path / "ds", progress=False)
    assert s.macro_ce() == pytest.approx(stream.macro_ce(), abs=1e-14)


def test_scan_parquet_errors(client, tmp_path):
    conf, correct = _data(20_000, seed=3)
    conf[17_321] = -0.25
    _parquet(tmp_path / "bad", conf, correct, (0, 5_000, 20_000), row_group_size=1_000)
    # the row is numbered in the whole dataset, although another task read it
    with pytest.raises(ValueError, match=r"has 1 value outside \[0, 1\]; first at index 17321: -0.25"):
        cdask.scan_parquet(tmp_path / "bad", rows_per_task=2_000)
    with pytest.raises(ValueError, match=r"column\(s\) correct='ok' not in the Parquet data"):
        cdask.scan_parquet(tmp_path / "bad", correct="ok")
    with pytest.raises(ValueError, match="does not exist"):
        cdask.scan_parquet(tmp_path / "nothing")
    with pytest.raises(ValueError, match="rows_per_task must be at least 1"):
        cdask.scan_parquet(tmp_path / "bad", rows_per_task=0)
    with pytest.raises(TypeError, match="path must be a file or folder path"):
        cdask.scan_parquet(3)


def test_arrow_backed_partitions_read_without_pandas_copies(client, arrays, tmp_path):
    conf, correct = arrays
    _parquet(tmp_path / "ds", conf, correct, (0, 50_000, 100_000), row_group_size=7_000)
    c32 = conf.astype(np.float32)
    df = dd.read_parquet(tmp_path / "ds", dtype_backend="pyarrow")
    assert isinstance(df["correct"].dtype, pd.ArrowDtype)
    assert cdask.ece(df["conf"], df["correct"], n_bins=15) == pytest.approx(cn.ece(c32, correct, n_bins=15),
                                                                            abs=1e-12)
    assert cdask.ks_error(df["conf"], df["correct"], ties="group") == pytest.approx(
        cn.ks_error(c32, correct, ties="group"), abs=1e-12)
    # nulls in an Arrow-backed column take the NumPy path and its message
    pdf = pd.DataFrame({"conf": pd.array([0.5, None, 0.7], dtype="float32[pyarrow]"),
                        "correct": pd.array([True, False, True], dtype="bool[pyarrow]")})
    ddf = dd.from_pandas(pdf, npartitions=1)
    with pytest.raises((ValueError, TypeError), match="conf"):
        cdask.ece(ddf["conf"], ddf["correct"])


def test_columns_of_one_frame_are_read_together(client, arrays):
    from calibnb.scale.dask import _fused_partitions

    conf, correct = arrays
    pdf = pd.DataFrame({"conf": conf, "correct": correct})
    df = dd.from_pandas(pdf, npartitions=4)
    fused = _fused_partitions({"conf": df["conf"], "correct": df["correct"]})
    assert fused is not None and len(fused["conf"]) == len(fused["correct"]) == 4
    # columns of two different frames keep their positional blocks (no index alignment)
    other = dd.from_pandas(pd.DataFrame({"correct": correct[::-1]}, index=np.arange(100_000)[::-1]), npartitions=4)
    assert _fused_partitions({"conf": df["conf"], "correct": other["correct"]}) is None
    assert _fused_partitions({"conf": da.from_array(conf), "correct": df["correct"]}) is None
    assert cdask.ece(df["conf"], df["correct"], n_bins=15) == pytest.approx(cn.ece(conf, correct, n_bins=15),
                                                                            abs=1e-12)
