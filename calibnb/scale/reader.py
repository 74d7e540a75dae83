"""The one reader of prediction files: CSV, Parquet and NPZ, whole or in chunks, in bounded memory.

Used by the audit (:mod:`calibnb.apps.audit`: the command, ``calibnb.audit`` and
notebook 00) and by the scale path (:func:`calibnb.data.scan_predictions`,
:func:`calibnb.dask.scan_parquet`), so that every Parquet file calibnb reads is
opened the same way:

* page checksums verified (a page whose stored CRC does not match its bytes is
  an error, not a changed number);
* no pre-buffering on a local disk and a 1 MiB read buffer: with pyarrow's
  default pre-buffering, ``iter_batches`` kept the buffers of every row group
  it had read until the file was closed (the RSS of a bare loop over a 10^7 x
  10 file went from 61 to 731 MiB; with these settings it stays at 180 MiB,
  ``benchmarks/README.md``); remote file systems keep pre-buffering, which
  coalesces their high-latency reads;
* one file and one batch at a time, without reader threads.

A duplicated column name is an error for every format (pandas would silently
rename it). Errors are :class:`PredictionFileError` naming the file by its base
name only (never a machine path) and, where there is one, the column.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import numpy as np

from ..validation import check_positive_int, check_unique_names

__all__ = ["PredictionFileError", "PARQUET_SUFFIXES", "CSV_SUFFIXES", "READ_BUFFER", "parquet_file",
           "parquet_batches", "read_chunks", "file_shape", "check_header"]

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".txt", ".gz")
#: Bytes read at once from a local Parquet file (no pre-buffering: memory does not grow with the file).
READ_BUFFER = 1 << 20


class PredictionFileError(ValueError):
    """A predictions file that cannot be read as one: the message names the file (base name) and the problem.

    ``column`` is the column concerned (a duplicated header), or ``None`` for the whole file.
    """

    def __init__(self, message: str, column: str | None = None):
        super().__init__(message)
        self.column = column


def parquet_file(source, *, local: bool = True):
    """A :class:`pyarrow.parquet.ParquetFile` opened as calibnb reads Parquet (see the module's text).

    ``source`` is a path or an open file; ``local=False`` (remote storage) keeps pyarrow's pre-buffering.

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "p.parquet")
    >>> pq.write_table(pa.table({"conf": [0.7, 0.2]}), path, write_page_checksum=True)
    >>> parquet_file(path).metadata.num_rows
    2
    """
    import pyarrow.parquet as pq

    if local:
        return pq.ParquetFile(source, page_checksum_verification=True, pre_buffer=False, buffer_size=READ_BUFFER)
    return pq.ParquetFile(source, page_checksum_verification=True, pre_buffer=True)


def parquet_batches(source, *, batch_size: int, columns: list | None = None, filesystem=None,
                    stop=None) -> Iterator:
    """Record batches of a Parquet file or dataset, one file and one batch of at most ``batch_size`` rows at a time.

    Parameters
    ----------
    source : str, path-like or pyarrow.dataset.Dataset
        A Parquet file, or a dataset (its fragments in dataset order, each
        restricted to its selected row groups).
    batch_size : int
        Largest number of rows decoded at once.
    columns : list of str, optional
        Columns to read (all by default).
    filesystem : pyarrow.fs.FileSystem, optional
        With a path: the file system it lives on (local by default).
    stop : threading.Event, optional
        Checked between files: a set event ends the iteration early.

    Yields
    ------
    pyarrow.RecordBatch

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "p.parquet")
    >>> pq.write_table(pa.table({"conf": [0.7, 0.2, 0.9]}), path)
    >>> [b.num_rows for b in parquet_batches(path, batch_size=2)]
    [2, 1]
    """
    import pyarrow.dataset as pads
    from pyarrow.fs import LocalFileSystem

    batch_size = check_positive_int(batch_size, "batch_size")
    if not isinstance(source, pads.Dataset):
        if filesystem is None:
            yield from parquet_file(os.fspath(source)).iter_batches(batch_size=batch_size, columns=columns,
                                                                    use_threads=False)
            return
        source = pads.dataset(os.fspath(source), format="parquet", filesystem=filesystem)
    fs = source.filesystem
    local = isinstance(fs, LocalFileSystem)
    for frag in source.get_fragments():
        if stop is not None and stop.is_set():
            return
        groups = [rg.id for rg in frag.row_groups]
        with fs.open_input_file(frag.path) as fh:
            yield from parquet_file(fh, local=local).iter_batches(batch_size=batch_size, row_groups=groups,
                                                                  columns=columns, use_threads=False)


def _csv_header(path: Path) -> list[str]:
    """The header row of a CSV file as written (pandas renames a duplicated ``label`` to ``label.1``)."""
    import csv
    import gzip

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rt", newline="", encoding="utf-8", errors="replace") as fh:
        for row in csv.reader(fh):
            if any(cell.strip() for cell in row):
                return row
    return []


def check_header(names, where: str) -> list[str]:
    """Column names as str, refusing a duplicated one (PredictionFileError naming it; ``where`` names the source).

    Examples
    --------
    >>> check_header(["p0", "label"], "the file 'p.csv':")
    ['p0', 'label']
    >>> check_header(["label", "label"], "the DataFrame").column
    Traceback (most recent call last):
    ...
    calibnb.scale.reader.PredictionFileError: the DataFrame columns has a duplicated name: 'label' appears 2 times (positions 0, 1); rename one of them. A duplicated header is ambiguous (which one holds the values?): rename one of the columns.
    """
    try:
        return check_unique_names(names, "columns")
    except ValueError as exc:
        dup = str(exc).split("'")[1] if "'" in str(exc) else None
        raise PredictionFileError(f"{where} {exc} A duplicated header is ambiguous (which one holds the values?): "
                                  "rename one of the columns.", column=dup) from None


def _check_header(names, path: Path) -> list[str]:
    return check_header(names, f"the file {path.name!r}:")


def _check_path(path) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path; got {type(path).__name__}.")
    path = Path(path)
    if not path.exists():
        raise PredictionFileError(f"the predictions file {path.name!r} does not exist.")
    if path.is_dir():
        raise PredictionFileError(f"{path.name!r} is a folder; give a .csv, .parquet or .npz file.")
    suffix = path.suffix.lower()
    if suffix not in PARQUET_SUFFIXES + CSV_SUFFIXES + (".npz",):
        raise PredictionFileError(f"unknown file type {suffix!r} of {path.name!r}; give a .csv, .parquet or .npz "
                                  "file.")
    if suffix in PARQUET_SUFFIXES:
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise PredictionFileError(f"reading the Parquet file {path.name!r} needs pyarrow, which is not "
                                      "installed: pip install 'calibnb[report]' (or give a .csv or .npz file)."
                                      ) from None
    return path


def _unreadable(path: Path, exc: BaseException) -> PredictionFileError:
    text = str(exc).replace(str(path), path.name)
    if "CRC" in text or "checksum" in text.lower():
        text += " (a Parquet page's checksum does not match its bytes: the file is corrupt)"
    return PredictionFileError(f"cannot read {path.name!r}: {type(exc).__name__}: {text}")


def _frame_chunk(frame) -> dict[str, np.ndarray]:
    return {str(c): frame[c].to_numpy() for c in frame.columns}


def _npz_columns(path: Path) -> dict[str, np.ndarray]:
    out = {}
    with np.load(path, allow_pickle=False) as z:
        for name in z.files:
            a = z[name]
            if a.ndim == 1:
                out[name] = a
            elif a.ndim == 2:
                for k in range(a.shape[1]):
                    out[f"{name}{k}"] = a[:, k]
            else:
                raise PredictionFileError(f"arrays must be 1-D or 2-D; got {a.ndim}-D.", column=name)
    _check_header(list(out), path)
    return out


def _chunks(path: Path, chunk_rows: int | None):
    import pandas as pd

    suffix = path.suffix.lower()
    if suffix == ".npz":
        cols = _npz_columns(path)  # an NPZ member is read whole (NumPy cannot stream it): sliced below
        n = len(next(iter(cols.values()))) if cols else 0
        if chunk_rows is None or n == 0:
            yield cols
            return
        for start in range(0, n, chunk_rows):
            yield {k: v[start:start + chunk_rows] for k, v in cols.items()}
        return
    if suffix in PARQUET_SUFFIXES:
        pf = parquet_file(path)
        _check_header(pf.schema_arrow.names, path)
        if chunk_rows is None:
            yield _frame_chunk(pf.read(use_threads=False).to_pandas())
            return
        for batch in pf.iter_batches(batch_size=chunk_rows, use_threads=False):
            yield _frame_chunk(batch.to_pandas())
        return
    header = _csv_header(path)
    if not header:
        raise PredictionFileError(f"the file {path.name!r} is empty (no header row).")
    _check_header(header, path)
    if chunk_rows is None:
        yield _frame_chunk(pd.read_csv(path, skip_blank_lines=True))
        return
    for frame in pd.read_csv(path, chunksize=chunk_rows, skip_blank_lines=True):
        yield _frame_chunk(frame)


def read_chunks(path, *, chunk_rows: int | None = None) -> Iterator[dict[str, np.ndarray]]:
    """Columns of a CSV, Parquet or NPZ file of predictions, ``chunk_rows`` rows at a time (the whole file if None).

    Each chunk is a dict of 1-D arrays by column name (a 2-D NPZ array
    ``probs`` becomes ``probs0..``). Memory holds one chunk (an NPZ file is
    read whole: NumPy cannot stream it).

    Raises
    ------
    PredictionFileError
        A missing or unreadable file, an unknown extension, a duplicated
        header, an empty CSV, a Parquet page whose checksum does not match.

    Examples
    --------
    >>> import os, tempfile, pandas as pd
    >>> f = os.path.join(tempfile.mkdtemp(), "p.csv")
    >>> pd.DataFrame({"conf": [.9, .2, .6], "correct": [1, 0, 1]}).to_csv(f, index=False)
    >>> [c["conf"].tolist() for c in read_chunks(f, chunk_rows=2)]
    [[0.9, 0.2], [0.6]]
    >>> _ = open(f, "w").write("label,p0,label\\n1,0.5,0\\n")
    >>> next(read_chunks(f))
    Traceback (most recent call last):
    ...
    calibnb.scale.reader.PredictionFileError: the file 'p.csv': columns has a duplicated name: 'label' appears 2 times (positions 0, 2); rename one of them. A duplicated header is ambiguous (which one holds the values?): rename one of the columns.
    """
    path = _check_path(path)
    if chunk_rows is not None:
        chunk_rows = check_positive_int(chunk_rows, "chunk_rows")
    try:
        yield from _chunks(path, chunk_rows)
    except PredictionFileError:
        raise
    except Exception as exc:  # parser errors, a corrupt Parquet page (in any chunk): a malformed file
        raise _unreadable(path, exc) from None


def file_shape(path) -> tuple[int, int] | None:
    """(rows, columns) of a CSV or Parquet file without reading its values; None for NPZ.

    The rows of a CSV are its lines after the header (a quoted field spanning
    lines counts more than once: readers correct the count as they go).

    Examples
    --------
    >>> import os, tempfile, pandas as pd
    >>> f = os.path.join(tempfile.mkdtemp(), "p.csv")
    >>> pd.DataFrame({"conf": [.9, .2, .6], "correct": [1, 0, 1]}).to_csv(f, index=False)
    >>> file_shape(f)
    (3, 2)
    """
    path = _check_path(path)
    suffix = path.suffix.lower()
    try:
        if suffix in PARQUET_SUFFIXES:
            meta = parquet_file(path).metadata
            return int(meta.num_rows), int(meta.num_columns)
        if suffix in (".csv", ".txt"):
            columns = len(_csv_header(path))
            lines = 0
            last = b"\n"
            with open(path, "rb") as fh:
                while block := fh.read(1 << 22):
                    lines += block.count(b"\n")
                    last = block[-1:]
            return lines - 1 + (last != b"\n"), columns
    except Exception as exc:
        raise _unreadable(path, exc) from None
    return None
