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
from .validation import check_unique_names

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
    "prob_prefix": ("p", "prob", "probs", "proba", "probability", "prob_", "proba_", "p_", "probs_"),
    "logit_prefix": ("logit", "logits", "z", "logit_", "logits_"),
    "vote_prefix": ("h", "votes", "vote", "human", "votes_", "h_"),
    "label": ("label", "labels", "y", "target", "y_true", "true_label", "gold"),
    "binary_prob": ("y_prob", "y_proba", "y_score", "proba", "prob", "probability", "p", "score", "pred_proba",
                    "positive_prob", "prob_positive", "p_positive"),
    "conf": ("conf", "confidence"),
    "correct": ("correct", "is_correct"),
    "weight": ("weight", "weights", "sample_weight"),
}

#: Predicted-label columns: recognised so that they are not mistaken for the label, then ignored.
PREDICTION_NAMES = ("y_pred", "pred", "prediction", "predicted", "predicted_label")

#: Columns of the tidy table of ``calibnb.llm`` (one row per item, model and confidence source).
LLM_COLUMNS = ("item_id", "model", "task", "answer", "confidence", "correct", "confidence_source")

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "00_audit_your_model.ipynb"


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
    if values is None:
        shown = ""
    else:
        v = np.asarray(values)[first]
        shown = f" (value {v.item() if isinstance(v, np.generic) else v!r})"
    raise AuditInputError(f"column {column!r}: {problem} in {rows.size} of {mask.size} rows; "
                          f"first offending row {first}{shown} (0-based data row).")


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


def _check_header(names, where: str) -> list[str]:
    try:
        return check_unique_names(names, "columns")
    except ValueError as exc:
        name = re.search(r"'(.*?)'", str(exc))
        raise AuditInputError(f"column {name.group(0) if name else repr('-')}: {where} {exc} A duplicated header "
                              "is ambiguous (which one holds the values?): rename one of the columns.") from None


def _frame_columns(frame: pd.DataFrame, where: str) -> dict[str, np.ndarray]:
    names = _check_header([str(c) for c in frame.columns], where)
    return {n: frame.iloc[:, j].to_numpy() for j, n in enumerate(names)}


def read_columns(path) -> dict[str, np.ndarray]:
    """All columns of a CSV, Parquet or NPZ file (or a DataFrame) as 1-D arrays (2-D NPZ arrays become ``name0..``).

    A duplicated column name is an error (pandas would silently rename it).
    Parquet files are read with page-checksum verification on: a page whose
    stored CRC does not match its bytes is an error, not a changed number.

    Raises
    ------
    AuditInputError
        Unreadable file, unknown extension, duplicated header, no rows.
    """
    if isinstance(path, pd.DataFrame):
        return _frame_columns(path, "the DataFrame")
    path = Path(path)
    if not path.exists():
        raise AuditInputError(f"column '-': the predictions file {path.name!r} does not exist.")
    if path.is_dir():
        raise AuditInputError(f"column '-': {path.name!r} is a folder; give a .csv, .parquet or .npz file.")
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
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(path, page_checksum_verification=True)
            _check_header(pf.schema_arrow.names, f"the file {path.name!r}:")
            frame = pf.read().to_pandas()
        elif suffix in (".csv", ".txt", ".gz"):
            header = _csv_header(path)
            if not header:
                raise AuditInputError(f"column '-': the file {path.name!r} is empty (no header row).")
            _check_header(header, f"the file {path.name!r}:")
            frame = pd.read_csv(path, skip_blank_lines=True)
        else:
            raise AuditInputError(f"column '-': unknown file type {suffix!r} of {path.name!r}; "
                                  "give a .csv, .parquet or .npz file.")
    except AuditInputError:
        raise
    except Exception as exc:  # parser errors, a corrupt Parquet page: a malformed file
        text = str(exc).replace(str(path), path.name)
        if "CRC" in text or "checksum" in text.lower():
            text += " (a Parquet page's checksum does not match its bytes: the file is corrupt)"
        raise AuditInputError(f"column '-': cannot read {path.name!r}: {type(exc).__name__}: {text}") from None
    return {str(c): frame[c].to_numpy() for c in frame.columns}


def _groups(names) -> dict[str, tuple[int, int]]:
    """Prefixes P with columns P{b} .. P{b+K-1} (K >= 2, contiguous from b = 0 or 1) -> (K, b)."""
    found: dict[str, set] = {}
    for n in names:
        m = re.fullmatch(r"(.*?)(\d+)", n)
        if m and not (len(m.group(2)) > 1 and m.group(2).startswith("0")):
            found.setdefault(m.group(1), set()).add(int(m.group(2)))
    out = {}
    for prefix, idx in found.items():
        base = 0 if 0 in idx else 1
        k = 0
        while base + k in idx:
            k += 1
        if k >= 2:
            out[prefix] = (k, base)
    return out


def _pick(role: str, given, candidates: Sequence[str], notes: list, what: str, flag: str | None = None):
    """The name for a role: the option if given, else the unique candidate present (None if none)."""
    if given is not None:
        return given
    lower: dict[str, list] = {}
    for c in candidates:
        lower.setdefault(c.lower(), []).append(c)
    hits = [c for n in ROLE_NAMES[role] for c in lower.get(n, [])]
    if len(hits) > 1:
        raise AuditInputError(f"column '{hits[0]}': the {what} is ambiguous: columns {hits} all look like it; "
                              f"choose one with --{flag or role.replace('_', '-')}.")
    if hits:
        notes.append(f"{what}: inferred {hits[0]!r} from its name")
        return hits[0]
    return None


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def _numeric(column: str, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind == "c":
        bad = np.imag(x) != 0
        _fail(column, "complex value (calibration needs real numbers)", bad if bad.any() else np.ones(x.shape, bool),
              x)
    if x.dtype.kind == "b":
        return x.astype(np.float64)
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        bad = np.array([not _is_number(v) or isinstance(v, complex) for v in x])
        _fail(column, "non-numeric value", bad, x)
    if x.dtype == object and any(isinstance(v, complex) for v in x[:1000]):
        bad = np.array([isinstance(v, complex) for v in x])
        _fail(column, "complex value (calibration needs real numbers)", bad, x)
    nan = ~np.isfinite(a)
    if nan.any():
        _fail(column, "missing or non-finite value (NaN/inf)", nan, a)
    return a


def _label_keys(column: str, x: np.ndarray) -> np.ndarray:
    """Labels as comparable text keys: integers as '3' (also 3.0 from a CSV), text as it is."""
    x = np.asarray(x)
    if x.dtype.kind in "biuf":
        a = x.astype(np.float64)
        bad = ~np.isfinite(a)
        if bad.any():
            _fail(column, "missing or non-finite label", bad, a)
        if np.all(a == np.round(a)):
            return a.astype(np.int64).astype(str)
        return a.astype(str)
    keys = np.array(["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in x], dtype=object)
    bad = keys == ""
    if bad.any():
        _fail(column, "missing label", bad, x)
    return keys


def _unit_columns(names: Sequence[str], cols: dict, percent: bool, what: str) -> np.ndarray:
    """(N, len(names)) matrix of probabilities in [0, 1] (divided by 100 with ``percent``)."""
    mat = np.column_stack([_numeric(c, cols[c]) for c in names])
    if percent:
        mat = mat / 100.0
    out = (mat < 0) | (mat > 1)
    if out.any():
        j = int(np.flatnonzero(out.any(axis=0))[0])
        hint = ""
        if not percent and mat.min() >= 0 and mat.max() <= 100:
            hint = " (every value lies in [0, 100]: if these are percentages, pass --percent)"
        elif percent:
            hint = " (after dividing by 100 for --percent)"
        _fail(names[j], f"{what} outside [0, 1]{hint}", out[:, j], mat[:, j])
    return mat


def _span(names: Sequence[str]) -> str:
    if len(names) > 2:
        m0, m1 = re.fullmatch(r"(.*?)(\d+)", names[0]), re.fullmatch(r"(.*?)(\d+)", names[-1])
        if m0 and m1 and m0.group(1) == m1.group(1):
            return f"{names[0]}..{names[-1]}"
    return ", ".join(names)


def _parse_list(value, what: str) -> list[str] | None:
    if value is None or value == "" or (isinstance(value, (list, tuple)) and not value):
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
    elif isinstance(value, (list, tuple, np.ndarray, pd.Index)):
        items = [str(v).strip() for v in value]
    else:
        raise AuditInputError(f"column '-': {what} must be a comma-separated list; got {type(value).__name__}.")
    if any(not v for v in items):
        raise AuditInputError(f"column '-': {what} has an empty entry: {value!r}.")
    if len(set(items)) != len(items):
        raise AuditInputError(f"column '-': {what} repeats an entry: {value!r}.")
    return items


def _class_named_columns(names: Sequence[str], classes: Sequence[str], used: set) -> list[tuple[str, list[str]]]:
    """Prefixes P with a column P + c for every class c (``proba_setosa``, ...): [(P, columns in class order)]."""
    out = []
    prefixes = {n[: len(n) - len(c)] for n in names for c in classes if n.endswith(c) and n not in used}
    for prefix in sorted(prefixes):
        if prefix and all(prefix + c in names for c in classes):
            out.append((prefix, [prefix + c for c in classes]))
    return out


def load_predictions(path, **options) -> Predictions:
    """Read, infer column roles and validate a predictions file (see the module docstring).

    ``path`` is a CSV, Parquet or NPZ file or a pandas DataFrame; ``options``
    are those of :func:`predictions_from_columns`.

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
    pred = predictions_from_columns(cols, **options)
    pred.source = "DataFrame" if isinstance(path, pd.DataFrame) else str(path)
    return pred


def predictions_from_arrays(*, probs=None, logits=None, labels=None, conf=None, correct=None, votes=None,
                            weights=None, n_folds: int = 5, min_fold_rows: int = 10, **options) -> Predictions:
    """Validated :class:`Predictions` from arrays (same checks as a file).

    ``probs`` of shape (N,) is the probability of the positive class of a
    binary model (``predict_proba(X)[:, 1]``) with ``labels`` its 0/1 (or
    two-valued) labels.

    Examples
    --------
    >>> d = predictions_from_arrays(conf=[.9, .6, .7, .8], correct=[1, 0, 1, 0], n_folds=2, min_fold_rows=2)
    >>> d.kind, d.n
    ('binary', 4)
    >>> d = predictions_from_arrays(probs=[.9, .2, .3, .8], labels=[1, 0, 1, 1], n_folds=2, min_fold_rows=2)
    >>> d.kind, d.n_classes, d.correct.tolist()
    ('multiclass', 2, [1.0, 1.0, 0.0, 1.0])
    """
    cols: dict[str, np.ndarray] = {}
    kw: dict[str, Any] = dict(options)
    for name, arr, key in (("p", probs, "prob_prefix"), ("logit", logits, "logit_prefix"),
                           ("h", votes, "vote_prefix")):
        if arr is None:
            continue
        arr = np.asarray(arr)
        if arr.ndim == 1 and name == "p":
            cols["prob"] = arr
            kw["binary_prob"] = "prob"
            continue
        if arr.ndim != 2:
            raise AuditInputError(f"column {name!r}: {'probs' if name == 'p' else name + 's'} must be 2-D "
                                  f"(rows x classes); got shape {arr.shape}.")
        for k in range(arr.shape[1]):
            cols[f"{name}{k}"] = arr[:, k]
        kw[key] = name
    for name, arr in (("label", labels), ("conf", conf), ("correct", correct), ("weight", weights)):
        if arr is not None:
            cols[name] = np.asarray(arr)
            kw[name] = name
    lengths = {n: len(a) for n, a in cols.items()}
    if len(set(lengths.values())) > 1:
        raise AuditInputError(f"column '-': the arrays have different lengths: {lengths}.")
    return predictions_from_columns(cols, n_folds=n_folds, min_fold_rows=min_fold_rows, **kw)


def predictions_from_columns(
    cols: dict, *, prob_prefix=None, logit_prefix=None, label=None, conf=None, correct=None, vote_prefix=None,
    weight=None, binary_prob=None, positive=None, prob_columns=None, classes=None, percent: bool = False,
    low_conf: bool = False, sum_tol: float = 1e-3, n_folds: int = 5, min_fold_rows: int = 10,
    check_classes: bool = True,
) -> Predictions:
    """Infer roles and validate columns (1-D arrays by name).

    Layouts (each inferred from the names, or named by its option):

    * class probabilities: numbered columns ``p0..p{K-1}`` or ``p1..pK``
      (``prob_prefix``), an explicit list (``prob_columns``), or columns named
      after the classes of a text label (``proba_setosa``, ...; ``classes``
      gives their order, else the file's); and a ``label`` column
      (``label``/``y``/``target``/``y_true``...). ``classes`` also maps text
      labels (or 1-based numbers) to numbered columns;
    * logits ``logit0..`` and a label;
    * binary: one probability of the positive class (``binary_prob``, or a
      column named ``y_prob``/``proba``/``y_score``...) and a label with two
      values (0/1, or two texts: the positive class is ``positive``, else the
      second in sorted order, as scikit-learn's ``predict_proba[:, 1]``);
    * top-1 ``conf`` and 0/1 ``correct``: values below 0.5 are refused unless
      ``low_conf`` (a confidence below 0.5 is usually the probability of a
      class, not the confidence of the prediction made).

    ``percent`` divides probabilities and confidences by 100.
    ``check_classes=False`` skips the checks that need every row (a single
    class present, too few rows): a chunk of a streamed file.
    """
    notes: list[str] = []
    names = list(cols)
    if not names:
        raise AuditInputError("column '-': the file has no columns.")
    n = len(next(iter(cols.values())))
    if n == 0 and check_classes:
        raise AuditInputError(f"column '-': the file has a header ({', '.join(names[:8])}) but no rows.")
    sum_tol = _check_option_float(sum_tol, "--sum-tol", low=0.0, high=1.0)
    if not isinstance(percent, (bool, np.bool_)) or not isinstance(low_conf, (bool, np.bool_)):
        raise AuditInputError("column '-': --percent and --low-conf are switches (True/False).")
    classes = _parse_list(classes, "--classes")
    prob_columns = _parse_list(prob_columns, "--prob-columns")
    for opt, col in (("--label", label), ("--conf", conf), ("--correct", correct), ("--weight", weight),
                     ("--binary-prob", binary_prob)) + tuple(("--prob-columns", c) for c in prob_columns or ()):
        if col is not None and col not in cols:
            raise AuditInputError(f"column {col!r}: missing (given as {opt}); the file has {names[:20]}.")
    groups = _groups(names)
    prefixes = {}
    for role, what, given in (("prob_prefix", "class probabilities", prob_prefix),
                              ("logit_prefix", "logits", logit_prefix),
                              ("vote_prefix", "human vote counts", vote_prefix)):
        if given is not None:
            if given not in groups:
                raise AuditInputError(f"column '{given}0': missing; --{role.replace('_', '-')} "
                                      f"{given!r} needs columns {given}0, {given}1, ... (or {given}1, {given}2, ...)")
            prefixes[role] = given
        elif not (role == "prob_prefix" and prob_columns):
            p = _pick(role, None, list(groups), notes, what)
            if p is not None:
                prefixes[role] = p
    used_prefixed = {f"{pre}{groups[pre][1] + j}" for pre in prefixes.values() for j in range(groups[pre][0])}
    free = [c for c in names if c not in used_prefixed]
    label = _pick("label", label, free, notes, "label column")
    conf_c = _pick("conf", conf, free, notes, "confidence column")
    correct_c = _pick("correct", correct, free, notes, "correctness column")
    weight_c = _pick("weight", weight, free, notes, "weight column")
    llm_table = "confidence_source" in cols
    if binary_prob is None and label is not None and not prefixes and not prob_columns and not (conf_c or correct_c):
        binary_prob = _pick("binary_prob", None, [c for c in free if c != label], notes,
                            "probability of the positive class", flag="binary-prob")
    preds = [c for c in names if c.lower() in PREDICTION_NAMES]
    if preds:
        notes.append(f"column {preds[0]!r} (predicted labels) ignored: the predictions come from the probabilities")
    roles: dict[str, Any] = {}
    probs = logits = labels = votes = weights = None
    prob_names: list[str] | None = None
    label_keys = None
    if label is not None and (prefixes.get("prob_prefix") or prefixes.get("logit_prefix") or prob_columns
                              or binary_prob is not None):
        label_keys = _label_keys(label, cols[label])
    elif label is not None and not (conf_c and correct_c) and classes is None:
        # a text label and columns named after its classes (proba_setosa, ...)
        keys = _label_keys(label, cols[label])
        values = list(dict.fromkeys(keys.tolist()))
        if len(values) <= 1000:
            found = _class_named_columns(free, values, {label})
            if len(found) > 1:
                raise AuditInputError(f"column '{found[0][1][0]}': the class probabilities are ambiguous: prefixes "
                                      f"{[f[0] for f in found]} each have a column per class of {label!r}; "
                                      "choose with --prob-columns.")
            if found:
                prob_columns = [c for c in free if c in set(found[0][1])]  # the file's order
                classes = [c[len(found[0][0]):] for c in prob_columns]
                label_keys = keys
                notes.append(f"class probabilities: inferred the columns {_span(prob_columns)} from the classes of "
                             f"{label!r} (classes in the file's column order; --classes to set it)")
    if classes is not None and prob_columns is None and "prob_prefix" not in prefixes \
            and "logit_prefix" not in prefixes and label is not None:
        found = _class_named_columns(free, classes, {label})
        if len(found) == 1:
            prob_columns = found[0][1]
            notes.append(f"class probabilities: the columns {_span(prob_columns)} of --classes")
            label_keys = _label_keys(label, cols[label])
    multiclass = bool(prefixes.get("prob_prefix") or prefixes.get("logit_prefix") or prob_columns)
    if multiclass or binary_prob is not None:
        if label is None:
            raise AuditInputError("column 'label': missing; class probabilities or logits need a label column "
                                  "(name it 'label', 'y_true' or 'target', or give --label).")
        if label_keys is None:
            label_keys = _label_keys(label, cols[label])
        if binary_prob is not None and not multiclass:
            values = sorted(set(label_keys.tolist()), key=lambda v: (not _is_number(v), float(v) if _is_number(v)
                                                                     else 0.0, v))
            if len(values) > 2:
                _fail(label, f"{len(values)} different labels ({values[:5]}) but {binary_prob!r} is one probability "
                      "column (a binary model's); give one probability column per class (--prob-columns or "
                      "--prob-prefix)", np.isin(label_keys, values[2:]), cols[label])
            if positive is not None:
                pos = str(positive)
                if _is_number(pos) and float(pos) == int(float(pos)):
                    pos = str(int(float(pos)))
                if pos not in values and check_classes:
                    raise AuditInputError(f"column {label!r}: --positive {positive!r} is not among its values "
                                          f"{values}.")
            elif set(values) <= {"0", "1"}:
                pos = "1"
            elif len(values) == 2:
                pos = values[1]
                notes.append(f"positive class {pos!r} (the second of {values} in sorted order, the class of "
                             "scikit-learn's predict_proba[:, 1]); --positive to choose the other")
            else:
                pos = values[-1] if values else "1"
            p1 = _unit_columns([binary_prob], cols, percent, "probability")[:, 0]
            probs = np.column_stack([1.0 - p1, p1])
            labels = (label_keys == pos).astype(np.int64)
            acc = float(np.mean((p1 >= 0.5) == (labels == 1))) if n else 1.0
            if positive is None and len(values) == 2 and acc < 0.5 and check_classes:
                other = values[0] if pos == values[1] else values[1]
                raise AuditInputError(
                    f"column {binary_prob!r}: read as the probability of {label!r} = {pos!r}, the model's accuracy "
                    f"would be {acc:.3f}, below chance: {binary_prob!r} is most likely the probability of {other!r}. "
                    f"Say which class it is with --positive {other} (or --positive {pos} to keep this reading).")
            k = 2
            roles["binary_prob"] = binary_prob
            roles["positive"] = pos
            notes.append(f"binary model: {binary_prob!r} is the probability of class {pos!r}; the prediction is "
                         f"{pos!r} where it is at least 0.5, and the confidence of that prediction is max(p, 1 - p)")
        else:
            if prob_columns is not None:
                pnames = list(prob_columns)
                base = None
            elif "prob_prefix" in prefixes:
                pp = prefixes["prob_prefix"]
                k_, base = groups[pp]
                pnames = [f"{pp}{base + j}" for j in range(k_)]
            else:
                lp = prefixes["logit_prefix"]
                k_, base = groups[lp]
                pnames = [f"{lp}{base + j}" for j in range(k_)]
            k = len(pnames)
            if prob_columns is not None or "prob_prefix" in prefixes:
                probs = _unit_columns(pnames, cols, percent, "probability")
                s_ = probs.sum(axis=1)
                bad = np.abs(s_ - 1.0) > sum_tol
                if bad.any():
                    hint = " (a single column is a binary model's probability: give only it with --binary-prob)" \
                        if k == 2 else ""
                    _fail(_span(pnames), f"row does not sum to 1 within {sum_tol:g}{hint}", bad, s_)
                roles["probs"] = _span(pnames)
                probs = probs / probs.sum(axis=1, keepdims=True)  # rows summed to 1 within sum_tol: exact
                if "logit_prefix" in prefixes:
                    notes.append(f"logits {prefixes['logit_prefix']}.. ignored: probabilities are used")
            else:
                logits = np.column_stack([_numeric(c, cols[c]) for c in pnames])
                z = logits - logits.max(axis=1, keepdims=True)
                probs = np.exp(z)
                probs /= probs.sum(axis=1, keepdims=True)
                roles["logits"] = _span(pnames)
            # labels -> column index
            if classes is not None:
                if len(classes) != k:
                    raise AuditInputError(f"column {_span(pnames)!r}: --classes names {len(classes)} classes but "
                                          f"there are {k} probability columns; give one class per column, in order.")
                index = {c: j for j, c in enumerate(classes)}
                lab = np.array([index.get(v, -1) for v in label_keys.tolist()], dtype=np.int64)
                bad = lab < 0
                if bad.any():
                    _fail(label, f"label not among the classes {classes}", bad, cols[label])
                labels = lab
                roles["classes"] = ",".join(classes)
            else:
                numeric = all(_is_number(v) for v in label_keys[: min(n, 10000)].tolist()) and \
                    np.all([_is_number(v) for v in np.unique(label_keys)])
                if not numeric:
                    vals = list(dict.fromkeys(label_keys.tolist()))[:5]
                    raise AuditInputError(f"column {label!r}: the labels are text ({vals}) but the probability "
                                          f"columns {_span(pnames)} are numbered; say which class each column is "
                                          f"with --classes (e.g. --classes {','.join(map(str, sorted(vals)[:k]))}), "
                                          "in the order of the columns.")
                lab = label_keys.astype(np.float64)
                if base == 1:
                    if check_classes and (lab == 0).any():
                        _fail(label, f"label 0 but the columns {_span(pnames)} are numbered from 1: it is not "
                              f"clear which column is which class; give --classes (e.g. --classes "
                              f"{','.join(str(j) for j in range(k))})", lab == 0, lab)
                    lab = lab - 1
                    notes.append(f"the columns {_span(pnames)} are numbered from 1: label j is column {pnames[0][:-1]}j")
                bad = (lab != np.round(lab)) | (lab < 0) | (lab >= k)
                if bad.any():
                    rng_ = f"[0, {k})" if base != 1 else f"[1, {k}]"
                    _fail(label, f"label not an integer in {rng_}", bad, label_keys)
                labels = lab.astype(np.int64)
        roles["label"] = label
        if check_classes and np.unique(labels).size < 2:
            _fail(label, f"a single class present (every label is {label_keys[0]}); calibration needs at least two",
                  np.ones(n, bool), label_keys)
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
            kv, bv = groups[vp]
            if kv != k:
                raise AuditInputError(f"column '{vp}{bv}': {kv} vote columns but {k} classes; they must match.")
            vnames = [f"{vp}{bv + j}" for j in range(k)]
            votes = np.column_stack([_numeric(c_, cols[c_]) for c_ in vnames])
            bad = (votes < 0) | (votes != np.round(votes))
            if bad.any():
                j = int(np.flatnonzero(bad.any(axis=0))[0])
                _fail(vnames[j], "vote count not a non-negative integer", bad[:, j], votes[:, j])
            zero = votes.sum(axis=1) == 0
            if zero.any():
                _fail(_span(vnames), "row without any vote", zero, votes.sum(axis=1))
            roles["votes"] = _span(vnames)
    else:
        if conf_c is None or correct_c is None:
            miss = "conf" if conf_c is None else "correct"
            raise AuditInputError(
                f"column {miss!r}: missing; give class probabilities (p0, p1, ... and label), a binary model's "
                f"probability of the positive class (y_prob and y_true, or --binary-prob and --label), logits "
                f"(logit0, ... and label) or conf and correct (or name them with options); the file has "
                f"{names[:20]}.")
        c = _unit_columns([conf_c], cols, percent, "confidence")[:, 0]
        y = _numeric(correct_c, cols[correct_c])
        bad = (y != 0) & (y != 1)
        if bad.any():
            _fail(correct_c, "correctness not 0/1", bad, y)
        low = c < 0.5
        if low.any() and not (low_conf or llm_table) and low.mean() > 0.01:
            lab_like = correct_c.lower() in ROLE_NAMES["label"]
            _fail(conf_c, f"{low.mean():.0%} of the confidences are below 0.5: a top-1 confidence of a binary "
                  f"prediction is at least 0.5, so {conf_c!r} looks like the probability of one class. For a binary "
                  f"model give --binary-prob {conf_c} --label {correct_c if lab_like else 'LABEL'}; if these are "
                  "confidences of answers that can be below 0.5 (more than two possible answers), pass --low-conf",
                  low, c)
        if check_classes and np.unique(y).size < 2:
            _fail(correct_c, f"a single class present (every row is {int(y[0])}); calibration needs both correct "
                  "and wrong predictions", np.ones(n, bool), y)
        roles.update(conf=conf_c, correct=correct_c)
        kind = "binary"
        if "vote_prefix" in prefixes:
            notes.append("vote columns ignored: human votes need class probabilities")
    if percent:
        notes.append("probabilities and confidences given in percent: divided by 100 (--percent)")
    if weight_c is not None:
        weights = _numeric(weight_c, cols[weight_c])
        bad = weights < 0
        if bad.any():
            _fail(weight_c, "negative weight", bad, weights)
        with np.errstate(over="ignore"):
            total = weights.sum()
        if not np.isfinite(total):
            _fail(weight_c, f"the weights sum to more than the largest float ({np.finfo(np.float64).max:.3g}); "
                  "divide them by their maximum (only their ratios matter)", weights == weights.max(), weights)
        if total <= 0 and check_classes:
            _fail(weight_c, "weights sum to 0", np.ones(n, bool), weights)
        roles["weight"] = weight_c
    if check_classes and n < n_folds * min_fold_rows:
        raise AuditInputError(f"column '-': too few rows for the requested splits: {n} rows, but {n_folds} folds "
                              f"need at least {n_folds * min_fold_rows} ({min_fold_rows} per fold).")
    used = {v for key, v in roles.items() if key not in ("probs", "logits", "votes", "positive", "classes")}
    for key in ("probs", "logits", "votes"):
        if key in roles:
            text = roles[key]
            m = re.fullmatch(r"(.*?)(\d+)\.\.(.*?)(\d+)", text)
            used |= ({f"{m.group(1)}{j}" for j in range(int(m.group(2)), int(m.group(4)) + 1)} if m
                     else set(text.split(", ")))
    ignored = [c_ for c_ in names if c_ not in used and c_ not in (conf_c, correct_c) and c_ not in preds]
    if ignored:
        notes.append(f"columns ignored: {ignored[:10]}{' ...' if len(ignored) > 10 else ''}")
    return Predictions(kind=kind, conf=np.asarray(c, np.float64), correct=np.asarray(y, np.float64),
                       probs=probs, logits=logits if kind == "multiclass" else None, labels=labels, votes=votes,
                       weights=weights, roles=roles, notes=notes)


def _check_option_float(value, flag: str, *, low: float, high: float) -> float:
    """A finite float option within [low, high] (NaN is refused), else AuditInputError naming the flag."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise AuditInputError(f"column '-': {flag} must be a number; got {value!r}.") from None
    if not np.isfinite(v) or not low <= v <= high:
        raise AuditInputError(f"column '-': {flag} must be a finite number in [{low:g}, {high:g}]; got {value!r}.")
    return v


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

            meta = pq.ParquetFile(path, page_checksum_verification=True).metadata
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
        raise AuditInputError(f"column '-': cannot read {path.name!r}: {type(exc).__name__}: "
                              f"{str(exc).replace(str(path), path.name)}") from None
    return None


def _chunks(path: Path, chunk_rows: int):
    try:
        yield from _read_chunks(path, chunk_rows)
    except AuditInputError:
        raise
    except Exception as exc:  # a corrupt page (CRC), a parser error in a later chunk
        text = str(exc).replace(str(path), path.name)
        if "CRC" in text or "checksum" in text.lower():
            text += " (a Parquet page's checksum does not match its bytes: the file is corrupt)"
        raise AuditInputError(f"column '-': cannot read {path.name!r}: {type(exc).__name__}: {text}") from None


def _read_chunks(path: Path, chunk_rows: int):
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path, page_checksum_verification=True)
        _check_header(pf.schema_arrow.names, f"the file {path.name!r}:")
        for batch in pf.iter_batches(batch_size=chunk_rows):
            frame = batch.to_pandas()
            yield {str(c): frame[c].to_numpy() for c in frame.columns}
    else:
        _check_header(_csv_header(path), f"the file {path.name!r}:")
        for frame in pd.read_csv(path, chunksize=chunk_rows, skip_blank_lines=True):
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

    from .stats import CalibrationStats
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
        if first is None:
            first = part
            # later chunks map labels and columns as the first did (a chunk may lack a class)
            for key, opt in (("positive", "positive"), ("binary_prob", "binary_prob"), ("classes", "classes")):
                if key in part.roles and options.get(opt) is None:
                    options[opt] = part.roles[key]
            if "probs" in part.roles and options.get("prob_columns") is None and options.get("prob_prefix") is None \
                    and "classes" in part.roles:
                options["prob_columns"] = part.roles["probs"].split(", ")
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
    if first is None:
        raise AuditInputError(f"column '-': the file {path.name!r} has a header but no rows.")
    if start != n_total:  # quoted fields spanning lines made the line count differ from the row count
        n_total = start
        idx = idx[idx < start]
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
    from .reproduction import to_jsonable

    return to_jsonable(result, "audit")


def write_audit_json(result: dict, path) -> Path:
    """Write :func:`audit_json` atomically to ``path``."""
    from .reproduction import write_json_atomic

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

    from .plots import plot_reliability_diagram, reliability_diagram_data

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

    from .plots import ks_graph_data, plot_ks_graph

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

    from .metrics import ent_ce, human_distribution

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
    p.add_argument("--binary-prob", help="a binary model's probability of the positive class "
                   "(predict_proba[:, 1]; default: inferred from y_prob, proba, y_score, ... with a two-valued label)")
    p.add_argument("--positive", help="the label value of the positive class of --binary-prob (default: 1, or the "
                   "second of two text labels in sorted order, as scikit-learn)")
    p.add_argument("--prob-columns", help="the class-probability columns, comma-separated, in class order")
    p.add_argument("--classes", help="the label value of each probability column, comma-separated, in column order "
                   "(text labels, 1-based columns, class-named columns such as proba_setosa)")
    p.add_argument("--percent", action="store_true", help="probabilities and confidences are in percent (0-100)")
    p.add_argument("--low-conf", action="store_true", help="accept --conf values below 0.5 (confidences of answers "
                   "with more than two possible values, e.g. a language model's stated confidence)")
    p.add_argument("--format", choices=LOG_FORMATS, help="an evaluation log of a language model, read by "
                   "calibnb.llm.read_log (one row per item and confidence source)")
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
        "binary_prob": args.binary_prob or "", "positive": args.positive or "", "prob_columns": args.prob_columns or "",
        "classes": args.classes or "", "percent": bool(args.percent), "low_conf": bool(args.low_conf),
        "log_format": args.format or "",
        "scalar_values": args.scalar_values or "", "n_bins": args.n_bins, "n_resamples": args.n_resamples,
        "heavy_resamples": args.heavy_resamples, "n_folds": args.n_folds, "level": args.level, "seed": args.seed,
        "sum_tol": args.sum_tol, "subsample": args.subsample, "stream_threshold": args.stream_threshold,
        "chunk_rows": args.chunk_rows,
    }


def load_from_parameters(params: dict, *, progress: bool = True) -> Predictions:
    """:func:`load_predictions`, or :func:`stream_predictions` above ``stream_threshold`` values, with the
    notebook's parameters ("" = infer)."""
    opt = {k: (params.get(k) or None) for k in INPUT_OPTIONS}
    opt.update(percent=bool(params.get("percent", False)), low_conf=bool(params.get("low_conf", False)))
    path = params["predictions_path"]
    if params.get("log_format"):
        return load_predictions(_read_log_frame(path, params["log_format"]), sum_tol=params.get("sum_tol", 1e-3),
                                n_folds=params.get("n_folds", 5), **opt)
    size = file_size(path) if Path(path).exists() else None
    if size is not None and size[0] * size[1] > params.get("stream_threshold", STREAM_THRESHOLD):
        return stream_predictions(path, chunk_rows=params.get("chunk_rows", 100_000),
                                  subsample=params.get("subsample", 20_000), seed=params.get("seed", 0),
                                  n_bins=params.get("n_bins", 15),
                                  scalar_values=parse_scalar_values(params.get("scalar_values", "")),
                                  progress=progress, sum_tol=params.get("sum_tol", 1e-3),
                                  n_folds=params.get("n_folds", 5), **opt)
    return load_predictions(path, sum_tol=params.get("sum_tol", 1e-3), n_folds=params.get("n_folds", 5), **opt)


#: The options of the column roles (notebook parameters of the same names; "" = infer).
INPUT_OPTIONS = ("prob_prefix", "logit_prefix", "label", "conf", "correct", "vote_prefix", "weight", "binary_prob",
                 "positive", "prob_columns", "classes")

#: Evaluation-log formats of language models, read by ``calibnb.llm.read_log``.
LOG_FORMATS = ("openai", "lm-eval", "helm", "inspect", "verbalized")


def _read_log_frame(path, log_format: str) -> pd.DataFrame:
    """A language model's evaluation log as calibnb.llm's tidy table (``calibnb.llm.read_log``, imported lazily)."""
    if log_format not in LOG_FORMATS:
        raise AuditInputError(f"column '-': --format must be one of {list(LOG_FORMATS)}; got {log_format!r}.")
    try:
        import importlib

        llm = importlib.import_module("calibnb.llm")
        read_log = llm.read_log
    except (ImportError, AttributeError):
        raise AuditInputError(f"column '-': --format {log_format} needs calibnb.llm.read_log, which this "
                              "installation does not have.") from None
    try:
        frame = read_log(path, format=log_format)
    except (ValueError, TypeError, OSError) as exc:
        raise AuditInputError(f"column '-': cannot read {Path(str(path)).name!r} as a {log_format} log: "
                              f"{str(exc).replace(str(path), Path(str(path)).name)}") from None
    if not isinstance(frame, pd.DataFrame):
        raise AuditInputError(f"column '-': calibnb.llm.read_log returned {type(frame).__name__}, not a DataFrame.")
    return frame


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
    from .reproduction import write_text_atomic

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
