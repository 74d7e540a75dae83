r"""Audit your own model: one command turns a file of predictions into a calibration report.

Usage::

    python -m calibnb.audit predictions.csv --out audit/

writes ``audit/audit.html`` (one offline page) and ``audit/audit.json`` (every
number). The command runs the notebook ``notebooks/00_audit_your_model.ipynb``
with papermill (the same notebook one can open and run by hand) and converts it
to HTML with :mod:`calibnb.report`, so both paths give the same report.

Input files
-----------
CSV, Parquet (``.parquet``/``.pq``, read with pyarrow) or NPZ. One row per
prediction, with one of

* class probabilities ``p0 .. p{K-1}`` (or ``--prob-prefix``) and ``label``;
* logits ``logit0 .. logit{K-1}`` (or ``--logit-prefix``) and ``label``;
* a binary ``conf`` (confidence of the prediction) and ``correct`` (0/1);

and optionally human vote counts ``h0 .. h{K-1}`` (``--vote-prefix``; enables
the metrics of Baan 2022 and Jiang 2024) and per-row weights ``weight``
(``--weight``). In an NPZ file a 2-D array ``probs`` counts as the columns
``probs0 .. probs{K-1}`` (likewise ``logits``, ``votes``). Column roles are
inferred from the names listed in :data:`ROLE_NAMES` when exactly one candidate
is present; otherwise give the option. What was inferred is printed at the top
of the report.

Bad input (missing column, NaN, probabilities outside [0, 1] or rows not
summing to 1 within ``--sum-tol``, labels outside [0, K), a single class
present, too few rows for the folds) exits with status 2 and a message naming
the column, the problem, how many rows and the first offending row (0-based
data row); nothing is written. The report is built in a temporary folder
beside ``--out`` and moved into place only when it is complete.

Large files
-----------
CSV and Parquet files with more than ``--stream-threshold`` values (rows x
columns, default :data:`STREAM_THRESHOLD` = 20,000,000, e.g. 200,000 rows of
100 classes) are read in chunks of ``--chunk-rows`` rows with a progress bar
(:func:`stream_predictions`): each chunk is validated (a bad value names its
row in the whole file) and reduced to a few numbers per row (top-1, top-2 and
within-top-2 confidence and correctness, the per-row terms of NBR and of the
human-vote metrics: :func:`calibnb.summary.row_reductions`), so the summary's
per-row metrics use every row without holding the probability matrix. The
rows of a seeded subsample of ``--subsample`` rows are kept whole: the
recalibration comparison is fitted and scored on them, and so are the metrics
that need whole rows of class probabilities (class-wise KS and ECE, RankCS);
the report says so and the summary's ``rows`` column gives each metric's row
count. The top-1 metrics are also accumulated in a
:class:`calibnb.stats.CalibrationStats` (mergeable sufficient statistics) as
the chunks go by; ``audit.json`` gives its values under ``streaming_stats``
(they equal the summary's estimates, which the tests check). The per-row
reductions are kept as well because the bootstrap intervals and the exact KS
need rows. NPZ files are read whole.
Without streaming, above ``--subsample`` rows the recalibration comparison
also uses a seeded subsample (stated in the report).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import summary as _summary

__all__ = [
    "AuditInputError",
    "Predictions",
    "ROLE_NAMES",
    "STREAM_THRESHOLD",
    "read_columns",
    "load_predictions",
    "predictions_from_arrays",
    "predictions_from_columns",
    "run_audit",
    "audit_json",
    "write_audit_json",
    "summary_frame",
    "comparison_frame",
    "notebook_parameters",
    "load_from_parameters",
    "parse_scalar_values",
    "file_size",
    "stream_predictions",
    "plot_reliability",
    "plot_ks",
    "plot_rewards",
    "plot_human",
    "main",
]

#: Values (rows x used columns) above which the file is streamed in chunks.
STREAM_THRESHOLD = 20_000_000

#: Names that identify a role when no option is given (case-insensitive).
ROLE_NAMES = {
    "prob_prefix": ("p", "prob", "probs", "proba", "probability"),
    "logit_prefix": ("logit", "logits", "z"),
    "vote_prefix": ("h", "votes", "vote", "human"),
    "label": ("label", "labels", "y", "target"),
    "conf": ("conf", "confidence"),
    "correct": ("correct", "is_correct"),
    "weight": ("weight", "weights", "sample_weight"),
}

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "00_audit_your_model.ipynb"


class AuditInputError(ValueError):
    """A malformed predictions file; the message names the column, the problem, the rows."""


@dataclass
class Predictions:
    """Validated predictions of one model.

    ``kind`` is ``"multiclass"`` (``probs``, ``logits``, ``labels``; K >= 2) or
    ``"binary"`` (``conf``, ``correct`` only). ``conf``/``correct`` are the
    top-1 confidence and correctness in both cases. ``roles`` maps each role to
    the columns used; ``notes`` says what was inferred or ignored.
    """

    kind: str
    conf: np.ndarray
    correct: np.ndarray
    probs: np.ndarray | None = None
    logits: np.ndarray | None = None
    labels: np.ndarray | None = None
    votes: np.ndarray | None = None
    weights: np.ndarray | None = None
    roles: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    source: str = ""
    #: Streaming (large files): probs/logits/labels/votes hold only the rows
    #: ``subsample_index`` (with weights ``sub_weights``); ``derived`` holds
    #: :func:`calibnb.summary.row_reductions` of every row.
    derived: dict | None = None
    subsample_index: np.ndarray | None = None
    sub_weights: np.ndarray | None = None
    #: Streaming: :class:`calibnb.stats.CalibrationStats` of the top-1 predictions, built chunk by chunk.
    stream_stats: Any = None

    @property
    def n(self) -> int:
        return int(self.conf.shape[0])

    @property
    def n_classes(self) -> int | None:
        return None if self.probs is None else int(self.probs.shape[1])


# ------------------------------------------------------------------- reading

def _fail(column: str, problem: str, mask: np.ndarray | None = None, values=None) -> None:
    """Raise AuditInputError naming the column, the problem, how many rows and the first one."""
    if mask is None:
        raise AuditInputError(f"column {column!r}: {problem}.")
    mask = np.asarray(mask, dtype=bool)
    rows = np.flatnonzero(mask)
    first = int(rows[0])
    shown = "" if values is None else f" (value {np.asarray(values)[first]!r})"
    raise AuditInputError(f"column {column!r}: {problem} in {rows.size} of {mask.size} rows; "
                          f"first offending row {first}{shown} (0-based data row).")


def read_columns(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """All columns of a CSV, Parquet or NPZ file as 1-D arrays (2-D NPZ arrays become ``name0..``).

    Raises
    ------
    AuditInputError
        Unreadable file or unknown extension.
    """
    path = Path(path)
    if not path.exists():
        raise AuditInputError(f"column '-': the predictions file {str(path)!r} does not exist.")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npz":
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
                        raise AuditInputError(f"column {name!r}: arrays must be 1-D or 2-D; got {a.ndim}-D.")
            return out
        if suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path, engine="pyarrow")
        elif suffix in (".csv", ".txt", ".gz"):
            frame = pd.read_csv(path)
        else:
            raise AuditInputError(f"column '-': unknown file type {suffix!r} of {str(path)!r}; "
                                  "give a .csv, .parquet or .npz file.")
    except AuditInputError:
        raise
    except Exception as exc:  # parser errors: a malformed file
        raise AuditInputError(f"column '-': cannot read {str(path)!r}: {type(exc).__name__}: {exc}") from None
    return {str(c): frame[c].to_numpy() for c in frame.columns}


def _groups(names) -> dict[str, int]:
    """Prefixes P with columns P0 .. P{K-1} (K >= 2, contiguous from 0) -> K."""
    found: dict[str, set] = {}
    for n in names:
        m = re.fullmatch(r"(.*?)(\d+)", n)
        if m:
            found.setdefault(m.group(1), set()).add(int(m.group(2)))
    out = {}
    for prefix, idx in found.items():
        k = 0
        while k in idx:
            k += 1
        if k >= 2:
            out[prefix] = k
    return out


def _pick(role: str, given, candidates: Sequence[str], notes: list, what: str):
    """The name for a role: the option if given, else the unique candidate present (None if none)."""
    if given is not None:
        return given
    lower = {c.lower(): c for c in candidates}
    hits = [lower[n] for n in ROLE_NAMES[role] if n in lower]
    if len(hits) > 1:
        raise AuditInputError(f"column '{hits[0]}': the {what} is ambiguous: columns {hits} all look like it; "
                              f"choose one with --{role.replace('_', '-')}.")
    if hits:
        notes.append(f"{what}: inferred {hits[0]!r} from its name")
        return hits[0]
    return None


def _numeric(column: str, x: np.ndarray) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        bad = np.array([not _is_number(v) for v in x])
        _fail(column, "non-numeric value", bad, x)
    nan = ~np.isfinite(a)
    if nan.any():
        _fail(column, "missing or non-finite value (NaN/inf)", nan, a)
    return a


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def _prefix_matrix(cols: dict, prefix: str, k: int) -> np.ndarray:
    return np.column_stack([_numeric(f"{prefix}{j}", cols[f"{prefix}{j}"]) for j in range(k)])


def load_predictions(
    path, *, prob_prefix=None, logit_prefix=None, label=None, conf=None, correct=None, vote_prefix=None,
    weight=None, sum_tol: float = 1e-3, n_folds: int = 5, min_fold_rows: int = 10,
) -> Predictions:
    """Read, infer column roles and validate a predictions file (see the module docstring).

    Raises
    ------
    AuditInputError
        Any malformed input, naming the column, the problem, the number of rows
        and the first offending row.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "p.csv")
    >>> pd.DataFrame({"p0": [.9, .2, .6, .3], "p1": [.1, .8, .4, .7], "label": [0, 1, 1, 1]}).to_csv(f, index=False)
    >>> d = load_predictions(f, n_folds=2, min_fold_rows=2)
    >>> d.kind, d.n_classes, d.conf.tolist()
    ('multiclass', 2, [0.9, 0.8, 0.6, 0.7])
    """
    cols = read_columns(path)
    pred = predictions_from_columns(cols, prob_prefix=prob_prefix, logit_prefix=logit_prefix, label=label,
                                    conf=conf, correct=correct, vote_prefix=vote_prefix, weight=weight,
                                    sum_tol=sum_tol, n_folds=n_folds, min_fold_rows=min_fold_rows)
    pred.source = str(path)
    return pred


def predictions_from_arrays(*, probs=None, logits=None, labels=None, conf=None, correct=None, votes=None,
                            weights=None, n_folds: int = 5, min_fold_rows: int = 10) -> Predictions:
    """Validated :class:`Predictions` from arrays (same checks as a file).

    Examples
    --------
    >>> d = predictions_from_arrays(conf=[.9, .6, .7, .8], correct=[1, 0, 1, 0], n_folds=2, min_fold_rows=2)
    >>> d.kind, d.n
    ('binary', 4)
    """
    cols: dict[str, np.ndarray] = {}
    kw: dict[str, Any] = {}
    for name, arr, key in (("p", probs, "prob_prefix"), ("logit", logits, "logit_prefix"),
                           ("h", votes, "vote_prefix")):
        if arr is not None:
            arr = np.asarray(arr)
            for k in range(arr.shape[1]):
                cols[f"{name}{k}"] = arr[:, k]
            kw[key] = name
    for name, arr in (("label", labels), ("conf", conf), ("correct", correct), ("weight", weights)):
        if arr is not None:
            cols[name] = np.asarray(arr)
            kw[name] = name
    return predictions_from_columns(cols, n_folds=n_folds, min_fold_rows=min_fold_rows, **kw)


def predictions_from_columns(
    cols: dict, *, prob_prefix=None, logit_prefix=None, label=None, conf=None, correct=None, vote_prefix=None,
    weight=None, sum_tol: float = 1e-3, n_folds: int = 5, min_fold_rows: int = 10, check_classes: bool = True,
) -> Predictions:
    """Infer roles and validate columns (1-D arrays by name); see :func:`load_predictions`.

    ``check_classes=False`` skips the checks that need every row (a single
    class present, too few rows): a chunk of a streamed file.
    """
    notes: list[str] = []
    names = list(cols)
    if not names:
        raise AuditInputError("column '-': the file has no columns.")
    n = len(next(iter(cols.values())))
    groups = _groups(names)
    given = {"prob_prefix": prob_prefix, "logit_prefix": logit_prefix, "vote_prefix": vote_prefix}
    prefixes = {}
    for role, what in (("prob_prefix", "class probabilities"), ("logit_prefix", "logits"),
                       ("vote_prefix", "human vote counts")):
        if given[role] is not None:
            if given[role] not in groups:
                raise AuditInputError(f"column '{given[role]}0': missing; --{role.replace('_', '-')} "
                                      f"{given[role]!r} needs columns {given[role]}0, {given[role]}1, ...")
            prefixes[role] = given[role]
        else:
            p = _pick(role, None, list(groups), notes, what)
            if p is not None:
                prefixes[role] = p
    label = _pick("label", label, names, notes, "label column")
    conf_c = _pick("conf", conf, names, notes, "confidence column")
    correct_c = _pick("correct", correct, names, notes, "correctness column")
    weight_c = _pick("weight", weight, names, notes, "weight column")
    for role, col in (("label", label), ("conf", conf_c), ("correct", correct_c), ("weight", weight_c)):
        if col is not None and col not in cols:
            raise AuditInputError(f"column {col!r}: missing (given as --{role}); the file has {names}.")
    roles: dict[str, Any] = {}
    probs = logits = labels = votes = weights = None
    if "prob_prefix" in prefixes or "logit_prefix" in prefixes:
        if label is None:
            raise AuditInputError("column 'label': missing; class probabilities or logits need a label column "
                                  "(name it 'label' or give --label).")
        if "prob_prefix" in prefixes:
            pp = prefixes["prob_prefix"]
            k = groups[pp]
            probs = _prefix_matrix(cols, pp, k)
            span = f"{pp}0..{pp}{k - 1}"
            out = (probs < 0) | (probs > 1)
            if out.any():
                j = int(np.flatnonzero(out.any(axis=0))[0])
                _fail(f"{pp}{j}", "probability outside [0, 1]", out[:, j], probs[:, j])
            s = probs.sum(axis=1)
            bad = np.abs(s - 1.0) > sum_tol
            if bad.any():
                _fail(span, f"row does not sum to 1 within {sum_tol:g}", bad, s)
            roles["probs"] = span
            probs = probs / probs.sum(axis=1, keepdims=True)  # rows summed to 1 within sum_tol: make it exact
            if "logit_prefix" in prefixes:
                notes.append(f"logits {prefixes['logit_prefix']}0.. ignored: probabilities are used")
        else:
            lp = prefixes["logit_prefix"]
            k = groups[lp]
            logits = _prefix_matrix(cols, lp, k)
            z = logits - logits.max(axis=1, keepdims=True)
            probs = np.exp(z)
            probs /= probs.sum(axis=1, keepdims=True)
            roles["logits"] = f"{lp}0..{lp}{k - 1}"
        lab = _numeric(label, cols[label])
        bad = (lab != np.round(lab)) | (lab < 0) | (lab >= k)
        if bad.any():
            _fail(label, f"label not an integer in [0, {k})", bad, lab)
        labels = lab.astype(np.int64)
        roles["label"] = label
        if check_classes and np.unique(labels).size < 2:
            _fail(label, f"a single class present (every label is {labels[0]}); calibration needs at least two",
                  np.ones(n, bool), labels)
        if logits is None:
            logits = np.log(np.maximum(probs, np.finfo(np.float64).tiny))
        c = probs.max(axis=1)
        y = (probs.argmax(axis=1) == labels).astype(np.float64)
        for other in (conf_c, correct_c):
            if other is not None:
                notes.append(f"column {other!r} ignored: the top-1 confidence and correctness come from the "
                             "class probabilities")
        kind = "multiclass"
        if "vote_prefix" in prefixes:
            vp = prefixes["vote_prefix"]
            if groups[vp] != k:
                raise AuditInputError(f"column '{vp}0': {groups[vp]} vote columns but {k} classes; they must match.")
            votes = _prefix_matrix(cols, vp, k)
            bad = (votes < 0) | (votes != np.round(votes))
            if bad.any():
                j = int(np.flatnonzero(bad.any(axis=0))[0])
                _fail(f"{vp}{j}", "vote count not a non-negative integer", bad[:, j], votes[:, j])
            zero = votes.sum(axis=1) == 0
            if zero.any():
                _fail(f"{vp}0..{vp}{k - 1}", "row without any vote", zero, votes.sum(axis=1))
            roles["votes"] = f"{vp}0..{vp}{k - 1}"
    else:
        if conf_c is None or correct_c is None:
            miss = "conf" if conf_c is None else "correct"
            raise AuditInputError(f"column {miss!r}: missing; give class probabilities (p0, p1, ... and label), "
                                  f"logits (logit0, ... and label) or conf and correct (or name them with options); "
                                  f"the file has {names}.")
        c = _numeric(conf_c, cols[conf_c])
        bad = (c < 0) | (c > 1)
        if bad.any():
            _fail(conf_c, "confidence outside [0, 1]", bad, c)
        y = _numeric(correct_c, cols[correct_c])
        bad = (y != 0) & (y != 1)
        if bad.any():
            _fail(correct_c, "correctness not 0/1", bad, y)
        if check_classes and np.unique(y).size < 2:
            _fail(correct_c, f"a single class present (every row is {int(y[0])}); calibration needs both correct "
                  "and wrong predictions", np.ones(n, bool), y)
        roles.update(conf=conf_c, correct=correct_c)
        kind = "binary"
        if "vote_prefix" in prefixes:
            notes.append("vote columns ignored: human votes need class probabilities")
    if weight_c is not None:
        weights = _numeric(weight_c, cols[weight_c])
        bad = weights < 0
        if bad.any():
            _fail(weight_c, "negative weight", bad, weights)
        if weights.sum() <= 0:
            _fail(weight_c, "weights sum to 0", np.ones(n, bool), weights)
        roles["weight"] = weight_c
    if check_classes and n < n_folds * min_fold_rows:
        raise AuditInputError(f"column '-': too few rows for the requested splits: {n} rows, but {n_folds} folds "
                              f"need at least {n_folds * min_fold_rows} ({min_fold_rows} per fold).")
    used = set()
    for v in roles.values():
        m = re.fullmatch(r"(.*?)0\.\.(.*?)(\d+)", v)
        used |= ({f"{m.group(1)}{j}" for j in range(int(m.group(3)) + 1)} if m else {v})
    ignored = [c_ for c_ in names if c_ not in used and not any(c_ == s for s in (conf_c, correct_c))]
    if ignored:
        notes.append(f"columns ignored: {ignored[:10]}{' ...' if len(ignored) > 10 else ''}")
    return Predictions(kind=kind, conf=np.asarray(c, np.float64), correct=np.asarray(y, np.float64),
                       probs=probs, logits=logits if kind == "multiclass" else None, labels=labels, votes=votes,
                       weights=weights, roles=roles, notes=notes)


# ----------------------------------------------------------------- streaming

def file_size(path) -> tuple[int, int] | None:
    """(rows, columns) of a CSV or Parquet file without reading its values; None for NPZ.

    Examples
    --------
    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "p.csv")
    >>> pd.DataFrame({"conf": [.9, .2, .6], "correct": [1, 0, 1]}).to_csv(f, index=False)
    >>> file_size(f)
    (3, 2)
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(path).metadata
            return int(meta.num_rows), int(meta.num_columns)
        if suffix in (".csv", ".txt"):
            columns = len(pd.read_csv(path, nrows=0).columns)
            lines = 0
            last = b"\n"
            with open(path, "rb") as fh:
                while block := fh.read(1 << 22):
                    lines += block.count(b"\n")
                    last = block[-1:]
            return lines - 1 + (last != b"\n"), columns
    except Exception as exc:
        raise AuditInputError(f"column '-': cannot read {str(path)!r}: {type(exc).__name__}: {exc}") from None
    return None


def _chunks(path: Path, chunk_rows: int):
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=chunk_rows):
            frame = batch.to_pandas()
            yield {str(c): frame[c].to_numpy() for c in frame.columns}
    else:
        for frame in pd.read_csv(path, chunksize=chunk_rows):
            yield {str(c): frame[c].to_numpy() for c in frame.columns}


def stream_predictions(path, *, chunk_rows: int = 100_000, subsample: int = 20_000, seed: int = 0,
                       n_bins: int = 15, scalar_values=None, progress: bool = True, sum_tol: float = 1e-3,
                       n_folds: int = 5, min_fold_rows: int = 10, **options) -> Predictions:
    """Read a large CSV/Parquet file in chunks: validate each, keep a few numbers per row and a subsample.

    Every chunk is validated as :func:`load_predictions` does (a bad value
    names its row in the whole file) and reduced to the top-1 confidence and
    correctness and :func:`calibnb.summary.row_reductions`; the rows of a
    seeded subsample of ``subsample`` rows are kept whole (for the
    recalibration comparison and the class-wise metrics). A tqdm progress bar
    counts rows on stderr.
    """
    from tqdm import tqdm

    from ..scale.stats import CalibrationStats
    from .summary import concat_reductions, row_reductions

    path = Path(path)
    size = file_size(path)
    if size is None:
        raise AuditInputError(f"column '-': only CSV and Parquet files can be streamed; got {str(path)!r}.")
    n_total = size[0]
    idx = np.sort(np.random.default_rng(seed).choice(n_total, min(subsample, n_total), replace=False))
    conf, correct, weights, reds = [], [], [], []
    keep: dict[str, list] = {"probs": [], "logits": [], "labels": [], "votes": [], "weights": []}
    first = None
    stats = CalibrationStats()
    labels_seen: set = set()
    start = 0
    bar = tqdm(total=n_total, unit="rows", desc="reading", disable=not progress, file=sys.stderr)
    for cols in _chunks(path, chunk_rows):
        n = len(next(iter(cols.values())))
        try:
            part = predictions_from_columns(cols, sum_tol=sum_tol, check_classes=False, **options)
        except AuditInputError as exc:
            msg = re.sub(r"first offending row (\d+)", lambda m: f"first offending row {int(m.group(1)) + start}",
                         str(exc))
            msg = re.sub(r"in (\d+) of (\d+) rows", rf"in \1 of the {n} rows {start}..{start + n - 1}", msg)
            bar.close()
            raise AuditInputError(msg) from None
        first = first or part
        stats.update(part.conf, part.correct, sample_weight=part.weights)
        conf.append(part.conf)
        correct.append(part.correct)
        if part.weights is not None:
            weights.append(part.weights)
        if part.kind == "multiclass":
            reds.append(row_reductions(part.probs, part.labels, part.votes, scalar_values=scalar_values,
                                       n_bins=n_bins))
            labels_seen |= set(np.unique(part.labels).tolist())
            local = idx[(idx >= start) & (idx < start + n)] - start
            for key, arr in (("probs", part.probs), ("logits", part.logits), ("labels", part.labels),
                             ("votes", part.votes), ("weights", part.weights)):
                if arr is not None:
                    keep[key].append(arr[local])
        start += n
        bar.update(n)
    bar.close()
    c, y = np.concatenate(conf), np.concatenate(correct)
    w = np.concatenate(weights) if weights else None
    roles, notes = first.roles, list(first.notes)
    if first.kind == "multiclass":
        if len(labels_seen) < 2:
            _fail(roles["label"], "a single class present; calibration needs at least two", np.ones(c.size, bool))
    elif np.unique(y).size < 2:
        _fail(roles["correct"], "a single class present; calibration needs both correct and wrong predictions",
              np.ones(c.size, bool), y)
    if c.size < n_folds * min_fold_rows:
        raise AuditInputError(f"column '-': too few rows for the requested splits: {c.size} rows.")
    notes.append(f"large file ({n_total} rows x {size[1]} columns): read in chunks of {chunk_rows} rows")
    if first.kind == "binary":
        return Predictions(kind="binary", conf=c, correct=y, weights=w, roles=roles, notes=notes,
                           source=str(path), subsample_index=idx, sub_weights=None if w is None else w[idx],
                           stream_stats=stats)

    def cat(key):
        return np.concatenate(keep[key]) if keep[key] else None

    return Predictions(kind="multiclass", conf=c, correct=y, probs=cat("probs"), logits=cat("logits"),
                       labels=cat("labels"), votes=cat("votes"), weights=w, roles=roles, notes=notes,
                       source=str(path), derived=concat_reductions(reds), subsample_index=idx,
                       sub_weights=cat("weights"), stream_stats=stats)


# ------------------------------------------------------------------- the audit

#: Where metrics that disagree are explained (notebook of the paper).
DISAGREEMENT_NOTES = [
    ("macro_ce", "ece_width", "MacroCE vs ECE", "01_si2022_macroce_qa.ipynb",
     "ECE averages over bins and rewards a model that is right on average; MacroCE weighs the correct and the "
     "wrong predictions equally, so it can prefer another method (Si 2022)"),
    ("hmr", "ece_width", "HMR vs ECE", "04_sakai2024_hmr.ipynb",
     "HMR rewards low confidence on wrong and high confidence on right predictions separately; ECE only compares "
     "averages within bins (Sakai 2024)"),
    ("ece_mass", "ece_width", "equal-mass vs equal-width bins", "05_jiang2024_scalar_labels.ipynb",
     "binned ECE depends on the binning; the ranking of methods can change with it (Jiang 2024)"),
    ("ks_top1", "ece_width", "KS vs ECE", "03_gupta2021_ks_splines.ipynb",
     "KS has no bins: it compares cumulative accuracy with cumulative confidence (Gupta 2021)"),
    ("dist_ce", "ece_width", "human disagreement vs ECE", "02_baan2022_human_disagreement.ipynb",
     "when humans disagree, matching their distribution (DistCE) is not the same as matching accuracy (Baan 2022)"),
]


def run_audit(pred: Predictions, *, n_bins: int = 15, n_resamples: int = 200, heavy_resamples: int = 50,
              n_folds: int = 5, level: float = 0.95, seed: int = 0, scalar_values=None,
              subsample: int = 20_000) -> dict:
    """Every number of the report: summary, reliability tables, recalibration comparison, picks, notes.

    The recalibration methods are cross-fitted with ``n_folds`` seeded folds
    (:func:`calibnb.summary.cross_fit`); above ``subsample`` rows they are
    fitted and scored on a seeded subsample of that many rows (stated in
    ``settings``). The summary is the comparison's ``uncalibrated`` rows when
    no subsample is drawn, else computed on every row.

    Returns
    -------
    dict
        ``inputs`` (kind, rows, classes, roles, notes, source), ``settings``,
        ``summary`` (DataFrame), ``reliability`` ({"width", "mass"}: DataFrames),
        ``recalibration`` (DataFrame), ``picks`` (DataFrame), ``disagreements``
        (list of dicts), ``accuracy_change`` (DataFrame).
    """
    common = dict(n_bins=n_bins, n_resamples=n_resamples, heavy_resamples=heavy_resamples, level=level,
                  seed=seed, scalar_values=scalar_values)
    idx = pred.subsample_index
    if idx is None and pred.n > subsample:
        idx = np.sort(np.random.default_rng(seed).choice(pred.n, subsample, replace=False))
    if pred.derived is not None:  # streamed: the class-level arrays already hold only the subsample
        rec = dict(logits=pred.logits, labels=pred.labels, votes=pred.votes, sample_weight=pred.sub_weights)
    else:
        rec = {k: (a if a is None or idx is None else a[idx]) for k, a in
               (("logits", pred.logits), ("labels", pred.labels), ("votes", pred.votes),
                ("sample_weight", pred.weights))}
    comparison = _summary.recalibration_comparison(
        pred.conf if idx is None else pred.conf[idx], pred.correct if idx is None else pred.correct[idx],
        n_folds=n_folds, **rec, **common)
    if idx is None:
        summary = comparison[comparison.method == "uncalibrated"].drop(columns="method").reset_index(drop=True)
    else:
        summary = _summary.metric_summary(pred.conf, pred.correct, probs=pred.probs, labels=pred.labels,
                                          votes=pred.votes, sample_weight=pred.weights, derived=pred.derived,
                                          class_weight=pred.sub_weights, **common)
    picks = _summary.metric_picks(comparison)
    pick = dict(zip(picks.key, picks.pick))
    disagreements = []
    for a, b, title, notebook, why in DISAGREEMENT_NOTES:
        if a in pick and b in pick and pick[a] != pick[b]:
            disagreements.append({"metrics": [a, b], "title": title, "picks": [pick[a], pick[b]],
                                  "notebook": f"notebooks/{notebook}", "why": why})
    acc = comparison[comparison.key == "accuracy"][["method", "estimate", "low", "high"]].reset_index(drop=True)
    acc["change"] = acc["estimate"] - float(acc.loc[acc.method == "uncalibrated", "estimate"].iloc[0])
    # unweighted, as the diagrams: binomial intervals need integer counts per bin
    reliability = {b: _summary.reliability_intervals(pred.conf, pred.correct, n_bins=n_bins, binning=b, level=level)
                   for b in ("width", "mass")}
    return {
        "inputs": {"kind": pred.kind, "rows": pred.n, "classes": pred.n_classes, "roles": dict(pred.roles),
                   "notes": list(pred.notes), "source": os.path.basename(pred.source) if pred.source else "",
                   "weighted": pred.weights is not None, "votes": pred.votes is not None},
        "settings": {"n_bins": n_bins, "n_resamples": n_resamples, "heavy_resamples": heavy_resamples,
                     "n_folds": n_folds, "level": level, "seed": seed,
                     "scalar_values": None if scalar_values is None else list(map(float, scalar_values)),
                     "recalibration_rows": pred.n if idx is None else int(idx.size),
                     "subsampled": idx is not None, "streamed": pred.derived is not None or (
                         pred.subsample_index is not None)},
        "summary": summary,
        "reliability": reliability,
        "recalibration": comparison,
        "picks": picks,
        "accuracy_change": acc,
        "disagreements": disagreements,
        "streaming_stats": _stream_estimates(pred.stream_stats, n_bins),
    }


def _stream_estimates(stats, n_bins: int) -> dict | None:
    """The top-1 metrics from the streamed CalibrationStats (they equal the summary's estimates)."""
    if stats is None:
        return None
    r = stats.rewards()
    out = {"rows": stats.n, "ice": stats.ice(), "macro_ce": stats.macro_ce(), "r_o": r.r_o, "r_u": r.r_u,
           "hmr": stats.hmr(), "brier_top1": stats.brier_top(), "ks_top1_bounds": list(stats.ks_bounds())}
    if stats.n_cells % n_bins == 0:
        out.update(ece_width=stats.ece(n_bins=n_bins), mce=stats.mce(n_bins=n_bins))
    return out


def audit_json(result: dict) -> dict:
    """The audit as plain JSON types (DataFrames as {"index", "columns", "data"})."""
    from ..record.reproduction import to_jsonable

    return to_jsonable(result, "audit")


def write_audit_json(result: dict, path) -> Path:
    """Write :func:`audit_json` atomically to ``path``."""
    from ..record.reproduction import write_json_atomic

    return write_json_atomic(path, result)


# ------------------------------------------------------------------- tables

def _fmt(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.4f}"


def _interval_text(row) -> str:
    if row["low"] is None or pd.isna(row["low"]):
        return "no interval"
    return f"[{_fmt(row['low'])}, {_fmt(row['high'])}]"


def _paper_text(paper: str) -> str:
    """"Si 2022" -> "Si 2022 (notebook 01_si2022_macroce_qa)"."""
    parts = []
    for name in str(paper).split("; "):
        nb = _summary.PAPERS.get(name)
        parts.append(f"{name} (notebook {nb[:-6]})" if nb else name)
    return "; ".join(parts)


def summary_frame(summary: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The summary as the report shows it: metric, estimate, interval, resamples, rows, better, paper, reading."""
    return pd.DataFrame({
        "metric": summary["metric"],
        "estimate": summary["estimate"].map(_fmt),
        f"{level:.0%} interval": [_interval_text(r) for _, r in summary.iterrows()],
        "resamples": summary["resamples"],
        "rows": summary["rows"],
        "better": np.where(summary["higher_is_better"], "higher", "lower"),
        "paper": summary["paper"].map(_paper_text),
        "what it says": summary["reading"],
    })


def comparison_frame(comparison: pd.DataFrame) -> pd.DataFrame:
    """Methods as columns, metrics as rows, ``estimate [low, high]`` cells (blank: not applicable)."""
    cell = comparison.apply(lambda r: f"{_fmt(r['estimate'])} {_interval_text(r)}", axis=1)
    t = comparison.assign(cell=cell).pivot(index="key", columns="method", values="cell")
    order = list(dict.fromkeys(comparison["key"]))
    names = dict(zip(comparison["key"], comparison["metric"]))
    t = t.loc[order, list(dict.fromkeys(comparison["method"]))].fillna("")
    t.index = [names[k] for k in t.index]
    t.columns.name = None
    return t


# ------------------------------------------------------------------- figures

def plot_reliability(pred: Predictions, result: dict):
    """Reliability diagrams (equal-width and equal-mass bins) with per-bin Wilson intervals and counts."""
    import matplotlib.pyplot as plt

    from ..plots import plot_reliability_diagram, reliability_diagram_data

    settings = result["settings"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, binning in zip(axes, ("width", "mass")):
        data = reliability_diagram_data(pred.conf, pred.correct, n_bins=settings["n_bins"], binning=binning,
                                        interval="wilson", level=settings["level"])
        plot_reliability_diagram(data, ax=ax, show_counts=True, show_intervals=True)
        ax.set_title(f"equal-{binning} bins, {settings['level']:.0%} Wilson interval per bin")
    fig.tight_layout()
    return fig


def plot_ks(pred: Predictions):
    """Gupta 2021 Figure 1 (a, b): cumulative accuracy and confidence against the fractile."""
    import matplotlib.pyplot as plt

    from ..plots import ks_graph_data, plot_ks_graph

    data = ks_graph_data(pred.conf, pred.correct)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_ks_graph(data, panel="a", ax=axes[0])
    plot_ks_graph(data, panel="b", ax=axes[1])
    fig.tight_layout()
    return fig


def plot_rewards(pred: Predictions, result: dict):
    """Sakai 2024's split: confidence of the wrong (overconfidence) and correct (underconfidence) predictions."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    wrong = pred.correct == 0
    bins = np.linspace(0, 1, 21)
    axes[0].hist(pred.conf[wrong], bins=bins, color="tab:red", alpha=0.7, label=f"wrong ({wrong.sum()})")
    axes[0].hist(pred.conf[~wrong], bins=bins, color="tab:green", alpha=0.5, label=f"correct ({(~wrong).sum()})")
    axes[0].set_xlabel("confidence")
    axes[0].set_ylabel("predictions")
    axes[0].legend()
    axes[0].set_title("confidence of wrong vs correct predictions")
    t = result["recalibration"]
    t = t[t.key.isin(["r_o", "r_u"])]
    methods = list(dict.fromkeys(t.method))
    x = np.arange(len(methods))
    for off, key, color in ((-0.2, "r_o", "tab:red"), (0.2, "r_u", "tab:green")):
        g = t[t.key == key].set_index("method").loc[methods]
        err = None
        if g["low"].notna().all():
            # a percentile interval need not contain the estimate: draw the part that is there
            err = [np.maximum(g["estimate"] - g["low"], 0), np.maximum(g["high"] - g["estimate"], 0)]
        axes[1].bar(x + off, g["estimate"], 0.4, yerr=err, color=color, capsize=2,
                    label="R_O (1 = never confident when wrong)" if key == "r_o" else "R_U (1 = fully confident when right)")
    axes[1].set_xticks(x, methods, rotation=30, ha="right", fontsize=8)
    axes[1].set_ylim(0, 1)
    axes[1].legend(fontsize=8)
    axes[1].set_title("Sakai's rewards per method (cross-fitted)")
    fig.tight_layout()
    return fig


def plot_human(pred: Predictions):
    """Baan 2022's panels: DistCE and EntCE histograms; model vs human probability of each class."""
    import matplotlib.pyplot as plt

    from ..metrics import ent_ce, human_distribution

    h = human_distribution(pred.votes)
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    axes[0].hist(0.5 * np.abs(pred.probs - h).sum(1), bins=30, range=(0, 1), color="tab:blue")
    axes[0].set_xlabel("DistCE (TVD to the human distribution)")
    axes[0].set_ylabel("items")
    axes[1].hist(ent_ce(pred.probs, pred.votes), bins=30, color="tab:purple")
    axes[1].set_xlabel("EntCE = H(model) - H(humans)  (< 0: too sure)")
    for k in range(min(pred.n_classes, 10)):
        axes[2].scatter(h[:, k], pred.probs[:, k], s=4, alpha=0.4, label=f"class {k}")
    axes[2].plot([0, 1], [0, 1], color="grey", lw=1)
    axes[2].set_xlabel("human probability")
    axes[2].set_ylabel("model probability")
    axes[2].legend(fontsize=7, markerscale=3)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------- CLI

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m calibnb.audit",
        description="Audit a model's calibration from a file of predictions: writes audit.html and audit.json.")
    p.add_argument("predictions", help="CSV, Parquet or NPZ file, one row per prediction")
    p.add_argument("--out", default="audit", help="output folder (default: ./audit)")
    p.add_argument("--prob-prefix", help="prefix of the probability columns (default: inferred, e.g. p0..pK-1)")
    p.add_argument("--logit-prefix", help="prefix of the logit columns")
    p.add_argument("--label", help="label column")
    p.add_argument("--conf", help="confidence column (binary input)")
    p.add_argument("--correct", help="0/1 correctness column (binary input)")
    p.add_argument("--vote-prefix", help="prefix of the human vote-count columns")
    p.add_argument("--weight", help="per-row weight column")
    p.add_argument("--scalar-values", help="class values f_k for psi_f, comma-separated (default 1..0)")
    p.add_argument("--n-bins", type=int, default=15)
    p.add_argument("--n-resamples", type=int, default=200, help="bootstrap resamples (0: no intervals)")
    p.add_argument("--heavy-resamples", type=int, default=50,
                   help="resamples for smooth/debiased ECE, RankCS, RR and class-wise metrics")
    p.add_argument("--n-folds", type=int, default=5, help="cross-fitting folds of the recalibration")
    p.add_argument("--level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sum-tol", type=float, default=1e-3, help="tolerance of probability rows summing to 1")
    p.add_argument("--subsample", type=int, default=20_000,
                   help="rows above which recalibration uses a seeded subsample of this size")
    p.add_argument("--stream-threshold", type=int, default=STREAM_THRESHOLD,
                   help="values (rows x columns) above which a CSV/Parquet file is read in chunks "
                        f"(default {STREAM_THRESHOLD:,})")
    p.add_argument("--chunk-rows", type=int, default=100_000, help="rows per chunk when streaming")
    return p


def notebook_parameters(args: argparse.Namespace) -> dict:
    """The notebook's papermill parameters for parsed command-line arguments."""
    return {
        "predictions_path": str(Path(args.predictions).absolute()),
        "prob_prefix": args.prob_prefix or "", "logit_prefix": args.logit_prefix or "",
        "label": args.label or "", "conf": args.conf or "", "correct": args.correct or "",
        "vote_prefix": args.vote_prefix or "", "weight": args.weight or "",
        "scalar_values": args.scalar_values or "", "n_bins": args.n_bins, "n_resamples": args.n_resamples,
        "heavy_resamples": args.heavy_resamples, "n_folds": args.n_folds, "level": args.level, "seed": args.seed,
        "sum_tol": args.sum_tol, "subsample": args.subsample, "stream_threshold": args.stream_threshold,
        "chunk_rows": args.chunk_rows,
    }


def load_from_parameters(params: dict, *, progress: bool = True) -> Predictions:
    """:func:`load_predictions`, or :func:`stream_predictions` above ``stream_threshold`` values, with the
    notebook's parameters ("" = infer)."""
    opt = {k: (params.get(k) or None) for k in ("prob_prefix", "logit_prefix", "label", "conf", "correct",
                                                 "vote_prefix", "weight")}
    path = params["predictions_path"]
    size = file_size(path) if Path(path).exists() else None
    if size is not None and size[0] * size[1] > params.get("stream_threshold", STREAM_THRESHOLD):
        return stream_predictions(path, chunk_rows=params.get("chunk_rows", 100_000),
                                  subsample=params.get("subsample", 20_000), seed=params.get("seed", 0),
                                  n_bins=params.get("n_bins", 15),
                                  scalar_values=parse_scalar_values(params.get("scalar_values", "")),
                                  progress=progress, sum_tol=params.get("sum_tol", 1e-3),
                                  n_folds=params.get("n_folds", 5), **opt)
    return load_predictions(path, sum_tol=params.get("sum_tol", 1e-3), n_folds=params.get("n_folds", 5), **opt)


def parse_scalar_values(text: str):
    """"1,0.5,0" -> [1.0, 0.5, 0.0]; "" -> None."""
    if not text:
        return None
    try:
        return [float(v) for v in str(text).split(",")]
    except ValueError:
        raise AuditInputError(f"column '-': --scalar-values must be comma-separated numbers; got {text!r}.") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the audit; 0 on success, 2 on bad input or usage (nothing written), 1 if the notebook failed."""
    from .report import notebook_to_html, run_notebook
    from ..record.reproduction import write_text_atomic

    parser = _parser()
    args = parser.parse_args(argv)
    params = notebook_parameters(args)
    try:
        for name in ("n_bins", "n_folds"):
            if getattr(args, name) < (2 if name == "n_folds" else 1):
                raise AuditInputError(f"column '-': --{name.replace('_', '-')} must be >= "
                                      f"{2 if name == 'n_folds' else 1}; got {getattr(args, name)}.")
        if args.n_resamples < 0 or args.heavy_resamples < 0:
            raise AuditInputError("column '-': --n-resamples and --heavy-resamples must be >= 0.")
        parse_scalar_values(args.scalar_values)
        pred = load_from_parameters(params)  # validate fully before running anything
        if args.scalar_values and pred.n_classes is not None and len(parse_scalar_values(args.scalar_values)) != pred.n_classes:
            raise AuditInputError(f"column '-': --scalar-values has {len(parse_scalar_values(args.scalar_values))} "
                                  f"values but there are {pred.n_classes} classes.")
    except AuditInputError as exc:
        print(f"calibnb.audit: error: {exc}", file=sys.stderr)
        return 2
    print(f"calibnb.audit: {pred.n} rows, {pred.kind}" + (f", {pred.n_classes} classes" if pred.n_classes else "")
          + "; " + "; ".join(pred.notes), file=sys.stderr)
    out = Path(args.out).absolute()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        run = run_notebook(NOTEBOOK, tmp / "audit.ipynb", parameters=params, results_path=tmp / "audit.json",
                           cwd=NOTEBOOK.parent)
        if not run.ok or run.results is None:
            print(f"calibnb.audit: the audit notebook failed: {run.error}\n{run.traceback or ''}", file=sys.stderr)
            return 1
        write_text_atomic(tmp / "audit.html", notebook_to_html(tmp / "audit.ipynb",
                                                               title=f"Calibration audit of {Path(args.predictions).name}"))
        out.mkdir(parents=True, exist_ok=True)
        for name in ("audit.ipynb", "audit.json", "audit.html"):
            os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"calibnb.audit: wrote {out / 'audit.html'} and {out / 'audit.json'} ({run.elapsed:.0f} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
