"""Streaming reader: a Parquet file or dataset of predictions into a CalibrationStats."""

from __future__ import annotations

import os

import numpy as np

from ..validation import mask_problem
from .reader import parquet_batches
from .stats import GRID, CalibrationStats

__all__ = ["open_predictions", "scan_predictions"]


def _column(batch, name: str, arg: str, offset: int):
    import pyarrow as pa

    col = batch.column(name)
    if col.null_count:
        p = mask_problem(np.asarray(col.is_null().to_numpy(zero_copy_only=False)), offset=offset)
        raise ValueError(f"{arg} column {name!r} has {p['bad']} missing (null) value(s) in a batch; "
                         f"first at row {p['bad_first'][0]}.")
    if arg == "correct" and pa.types.is_boolean(col.type):
        return col  # the state reads the bit-packed buffer as it is, one bit per row
    arr = col.to_numpy(zero_copy_only=False)
    if arr.dtype == object or arr.dtype.kind in "USVMmc":
        raise TypeError(f"{arg} column {name!r} must hold real numbers; got dtype {arr.dtype}.")
    return arr


class _BatchReader:
    """Record batches of a Parquet dataset, decoded one batch ahead by a background thread.

    Files are read in dataset order, each opened once, by
    :func:`calibnb.scale.reader.parquet_batches` (the reader the audit uses
    too: page checksums verified, no pre-buffering on a local disk); a queue
    of two batches stands between the reading thread and the consumer, so
    decoding (which releases the GIL) overlaps the state's kernel
    (which does too) and memory holds at most three batches. pyarrow's dataset
    scanner, used before, kept 300-500 MB of batches and buffers in flight
    whatever its read-ahead settings (peak RSS 0.6-1.06 GiB at 10^9 rows,
    varying run to run); this reader peaked at 380-410 MiB and was faster.
    """

    _END = object()

    def __init__(self, dataset, columns: list, batch_size: int, depth: int = 2):
        import queue
        import threading

        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, args=(dataset, columns, batch_size),
                                        name="calibnb-scan-reader", daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        import queue

        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self, dataset, columns, batch_size) -> None:
        try:
            for batch in parquet_batches(dataset, batch_size=batch_size, columns=columns, stop=self._stop):
                if not self._put(batch):
                    return
            self._put(self._END)
        except BaseException as exc:  # handed to the consumer, raised there
            self._put(exc)

    def __iter__(self):
        while True:
            item = self._queue.get()
            if item is self._END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self) -> None:
        """Stop the reading thread (the consumer stopped early, or finished) and wait for it."""
        self._stop.set()
        self._thread.join()


def open_predictions(path, *, conf: str = "conf", correct: str = "correct", sample_weight: str | None = None,
                     filesystem=None, allow_dataset: bool = False):
    """Open a Parquet file or dataset of predictions and check that it has the named columns.

    What :func:`scan_predictions` and :func:`calibnb.dask.scan_parquet` do
    before reading: the path must exist (unless a ``filesystem`` is given),
    the column names must be strings and name columns of the data.

    Parameters
    ----------
    path : str or path-like (or a pyarrow Dataset if ``allow_dataset``)
    conf, correct, sample_weight : str
        Column names (``sample_weight`` optional).
    filesystem : pyarrow.fs.FileSystem, optional
    allow_dataset : bool, default False
        Accept a :class:`pyarrow.dataset.Dataset` for ``path`` (returned as is).

    Returns
    -------
    (pyarrow.dataset.Dataset, dict)
        The dataset, and the column names by role (``conf``, ``correct`` and,
        if given, ``sample_weight``).

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, pyarrow.parquet as pq
    >>> path = os.path.join(tempfile.mkdtemp(), "p.parquet")
    >>> pq.write_table(pa.table({"p": [0.7, 0.2], "ok": [True, False]}), path)
    >>> ds, cols = open_predictions(path, conf="p", correct="ok")
    >>> ds.count_rows(), cols
    (2, {'conf': 'p', 'correct': 'ok'})
    >>> open_predictions(path)
    Traceback (most recent call last):
    ...
    ValueError: column(s) conf='conf', correct='correct' not in the Parquet data; it has ['p', 'ok'].
    """
    import pyarrow.dataset as pads

    opened = allow_dataset and isinstance(path, pads.Dataset)
    if not opened and not isinstance(path, (str, os.PathLike)):
        kinds = "a file or folder path or a pyarrow Dataset" if allow_dataset else "a file or folder path"
        raise TypeError(f"path must be {kinds}; got {type(path).__name__}.")
    if not opened and filesystem is None and not os.path.exists(path):
        raise ValueError(f"path {os.fspath(path)!r} does not exist.")
    columns = {"conf": conf, "correct": correct}
    if sample_weight is not None:
        columns["sample_weight"] = sample_weight
    for arg, name in columns.items():
        if not isinstance(name, str):
            raise TypeError(f"{arg} must be a column name (str); got {type(name).__name__}.")
    dataset = path if opened else pads.dataset(os.fspath(path), format="parquet", filesystem=filesystem)
    missing = [f"{arg}={name!r}" for arg, name in columns.items() if name not in dataset.schema.names]
    if missing:
        raise ValueError(f"column(s) {', '.join(missing)} not in the Parquet data; it has {dataset.schema.names}.")
    return dataset, columns


def _count_rows(dataset) -> int:
    """Rows of a dataset, counting only the selected row groups of its fragments (count_rows counts whole files)."""
    total = 0
    for frag in dataset.get_fragments():
        groups = getattr(frag, "row_groups", None)
        total += sum(rg.num_rows for rg in groups) if groups else frag.count_rows()
    return total


def scan_predictions(path, *, conf: str = "conf", correct: str = "correct", sample_weight: str | None = None,
                     n_cells: int = GRID, batch_size: int = 1 << 20, progress: bool = True,
                     filesystem=None, row_offset: int = 0) -> CalibrationStats:
    """Read a Parquet file or dataset of predictions into a :class:`calibnb.CalibrationStats`.

    Reads only the named columns, batch by batch (row groups, split into at
    most ``batch_size`` rows), file after file in dataset order, in a
    background thread that decodes one batch ahead while the state takes the
    previous one; memory stays at three batches plus the state (about 8 MB),
    whatever the size of the data.
    A ``bool`` correctness column is read bit by bit where it lies and a
    ``float32`` confidence column as it is, without copies; with :mod:`numba`
    installed each batch costs one compiled pass (see
    :meth:`calibnb.CalibrationStats.update`). The metrics of the result
    equal the in-memory functions on the whole columns (see
    :class:`calibnb.CalibrationStats`).

    Parameters
    ----------
    path : str, path-like or pyarrow.dataset.Dataset
        A ``.parquet`` file or a folder of them (a Parquet dataset), or a
        Parquet dataset already opened with :mod:`pyarrow.dataset` (for
        instance some of the row groups of a larger one, as
        :func:`calibnb.dask.scan_parquet` hands them to its tasks).
    conf, correct : str, default "conf", "correct"
        Column names: confidences in [0, 1] and 0/1 or bool correctness.
    sample_weight : str, optional
        Column of finite non-negative weights.
    n_cells : int, default GRID (100,800)
    batch_size : int, default 2**20
        Largest number of rows decoded at once.
    progress : bool, default True
        Show a :mod:`tqdm` progress bar (rows).
    filesystem : pyarrow.fs.FileSystem, optional
        For remote storage (S3, GCS, HDFS); local paths need none.
    row_offset : int, default 0
        Number of the first row in error messages (for a part of a larger
        dataset, so that a message names the row of the whole).

    Returns
    -------
    CalibrationStats

    Raises
    ------
    ValueError
        A missing column, a null, or a value the in-memory checks refuse
        (the message gives the row of the dataset, counted in scan order).

    Examples
    --------
    >>> import os, tempfile, numpy as np, pyarrow as pa, pyarrow.parquet as pq, calibnb as cn
    >>> rng = np.random.default_rng(0)
    >>> c = rng.uniform(size=5000).astype(np.float32)
    >>> y = rng.uniform(size=5000) < c
    >>> path = os.path.join(tempfile.mkdtemp(), "preds.parquet")
    >>> pq.write_table(pa.table({"conf": c, "correct": y}), path, row_group_size=1000)
    >>> s = scan_predictions(path, progress=False)
    >>> s.n, abs(s.ece(n_bins=15) - cn.ece(c, y, n_bins=15)) < 1e-12
    (5000, True)
    """
    import pyarrow.dataset as pads

    from ..validation import check_positive_int

    batch_size = check_positive_int(batch_size, "batch_size")
    row_offset = check_positive_int(row_offset, "row_offset", minimum=0)
    dataset, columns = open_predictions(path, conf=conf, correct=correct, sample_weight=sample_weight,
                                        filesystem=filesystem, allow_dataset=True)
    where = "the dataset" if isinstance(path, pads.Dataset) else repr(os.fspath(path))
    state = CalibrationStats(n_cells)
    total = _count_rows(dataset) if progress else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="rows", unit_scale=True, desc="scan_predictions")
    offset = row_offset
    reader = _BatchReader(dataset, list(columns.values()), batch_size)
    try:
        for batch in reader:
            m = batch.num_rows
            if m == 0:
                continue
            c = _column(batch, conf, "conf", offset)
            if c.dtype != np.float32:  # float32 goes to the kernel as it is (exact in float64)
                c = c.astype(np.float64, copy=False)
            y = _column(batch, correct, "correct", offset)
            w = None
            if sample_weight is not None:
                w = _column(batch, sample_weight, "sample_weight", offset).astype(np.float64, copy=False)
            state.update_chunk(c, y, sample_weight=w, offset=offset,
                               names={"conf": f"conf column {conf!r}", "correct": f"correct column {correct!r}",
                                      "sample_weight": f"sample_weight column {sample_weight!r}"})
            offset += m
            if bar is not None:
                bar.update(m)
    finally:
        reader.close()
        if bar is not None:
            bar.close()
    state.flush()
    if offset == row_offset:
        raise ValueError(f"path {where} holds no rows; at least one prediction is needed.")
    return state
