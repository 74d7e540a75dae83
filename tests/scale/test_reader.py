"""The one reader of prediction files (calibnb.scale.reader), shared by the audit and the Parquet scan."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from calibnb.scale.reader import PredictionFileError, file_shape, parquet_batches, read_chunks  # noqa: E402


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=1000)
    return pd.DataFrame({"p0": p[:, 0], "p1": p[:, 1], "p2": p[:, 2], "label": rng.integers(0, 3, 1000)})


def _write(frame, folder, kind):
    path = folder / f"p.{kind}"
    if kind == "csv":
        frame.to_csv(path, index=False, float_format="%.17g")
    elif kind == "parquet":
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=300,
                       write_page_checksum=True)
    else:
        np.savez(path, p=frame[["p0", "p1", "p2"]].to_numpy(), label=frame["label"].to_numpy())
    return path


@pytest.mark.parametrize("kind", ["csv", "parquet", "npz"])
@pytest.mark.parametrize("chunk_rows", [None, 1, 128, 1000, 5000])
def test_chunks_of_every_format_rebuild_the_file(tmp_path, frame, kind, chunk_rows):
    path = _write(frame, tmp_path, kind)
    chunks = list(read_chunks(path, chunk_rows=chunk_rows))
    sizes = [len(c["label"]) for c in chunks]
    assert sum(sizes) == len(frame)
    if chunk_rows is not None:
        assert max(sizes) <= chunk_rows
    else:
        assert len(chunks) == 1
    for j in range(3):
        got = np.concatenate([c[f"p{j}"] for c in chunks])
        np.testing.assert_array_equal(got, frame[f"p{j}"].to_numpy())
    np.testing.assert_array_equal(np.concatenate([c["label"] for c in chunks]), frame["label"].to_numpy())
    if kind != "npz":
        assert file_shape(path) == (len(frame), 4)
    else:
        assert file_shape(path) is None


def test_pyarrow_holds_no_buffers_of_the_row_groups_already_read(tmp_path):
    """With pyarrow's default pre-buffering, iter_batches kept every row group it had read (RSS grew with the file)."""
    n, group = 400_000, 20_000
    rng = np.random.default_rng(1)
    table = pa.table({f"p{j}": rng.uniform(size=n).astype(np.float32) for j in range(10)})
    path = tmp_path / "big.parquet"
    pq.write_table(table, path, row_group_size=group, write_page_checksum=True)
    del table
    base = pa.total_allocated_bytes()
    held = []
    for chunk in read_chunks(path, chunk_rows=group):
        held.append(pa.total_allocated_bytes() - base)
        del chunk
    for batch in parquet_batches(path, batch_size=group):
        held.append(pa.total_allocated_bytes() - base)
        del batch
    group_bytes = group * 10 * 4
    # flat: what pyarrow holds does not grow by a row group (800 kB) per row group read (it did: 16 MB at the end)
    assert max(held) - min(held) < 2 * group_bytes, held
    assert max(held) < n * 10 * 4 / 2, held


def test_a_corrupt_parquet_page_is_an_error_naming_the_file(tmp_path, frame):
    path = _write(frame, tmp_path, "parquet")
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 3] ^= 0x10  # one bit in the middle of the data pages
    path.write_bytes(bytes(raw))
    with pytest.raises(PredictionFileError, match=r"cannot read 'p\.parquet'") as info:
        for _ in read_chunks(path, chunk_rows=100):
            pass
    assert str(tmp_path) not in str(info.value)


def test_bad_files_are_errors_naming_the_file_and_column(tmp_path):
    (tmp_path / "dup.csv").write_text("label,p0,label\n1,0.5,0\n")
    with pytest.raises(PredictionFileError, match="'label' appears 2 times") as info:
        next(read_chunks(tmp_path / "dup.csv"))
    assert info.value.column == "label"
    (tmp_path / "empty.csv").write_text("\n\n")
    with pytest.raises(PredictionFileError, match="is empty"):
        next(read_chunks(tmp_path / "empty.csv"))
    with pytest.raises(PredictionFileError, match="does not exist"):
        next(read_chunks(tmp_path / "missing.csv"))
    (tmp_path / "p.xlsx").write_text("x")
    with pytest.raises(PredictionFileError, match="unknown file type"):
        next(read_chunks(tmp_path / "p.xlsx"))
    with pytest.raises(ValueError, match="chunk_rows"):
        next(read_chunks(tmp_path / "dup.csv", chunk_rows=0))
