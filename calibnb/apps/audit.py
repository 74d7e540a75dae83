r"""Audit your own model: ``calibnb.audit(df)`` or ``python -m calibnb.audit FILE`` (this is the code).

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
import contextlib
import functools
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..scale.reader import PredictionFileError, check_header, file_shape, read_chunks
from ..validation import (
    ColumnError,
    conf_problem,
    correct_problem,
    count_problem,
    finite_problem,
    label_problem,
    mask_problem,
    seed_int,
    sum_problem,
    weight_problem,
)


def _summary():
    """:mod:`calibnb.apps.summary`, imported on first use: it brings scikit-learn and scipy.stats (about 0.7 s of
    CPU), which the command's own process does not need (notebook 00's kernel computes the audit; issue 31)."""
    from . import summary

    return summary


__all__ = [
    "audit",
    "AuditResult",
    "llm_provenance",
    "bin_free_table",
    "verdict_data",
    "verdict_text",
    "recommendation_data",
    "recommendation_text",
    "summarise_warnings",
    "source_comparison",
    "plot_sources",
    "picks_frame",
    "check_out",
    "secure_page",
    "render_report",
    "write_report",
    "AuditInputError",
    "Predictions",
    "ROLE_NAMES",
    "STREAM_THRESHOLD",
    "MAX_ROWS",
    "SETTING_NAMES",
    "notebook_defaults",
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

#: Options of an audit (keyword arguments of :func:`audit`, the command's flags, notebook 00's parameters of the
#: same names). Their defaults and help are written once, in notebook 00's parameters cell, and read from there
#: by :func:`notebook_defaults`; ``STREAM_THRESHOLD`` (values above which a file is streamed in chunks) and
#: ``MAX_ROWS`` (rows above which a streamed file's per-row arrays are a seeded sample) are two of them.
SETTING_NAMES = ("n_bins", "n_resamples", "heavy_resamples", "n_folds", "level", "seed", "sum_tol", "subsample",
                 "stream_threshold", "chunk_rows", "max_rows")


@functools.lru_cache(maxsize=None)
def notebook_defaults() -> dict:
    """Notebook 00's parameters: name -> {"default", "type", "help"}, read by ``papermill.inspect_notebook``.

    The one place where the audit's options and their defaults are written;
    the command's ``--help``, :func:`audit` and the notebook read them from
    there (papermill, of the ``calibnb[report]`` extra, is imported here only).

    Examples
    --------
    >>> notebook_defaults()["n_bins"]
    {'default': 15, 'type': 'int', 'help': 'bins of ECE, MCE and the reliability diagrams'}
    """
    import ast

    import papermill

    out = {}
    for name, p in papermill.inspect_notebook(str(NOTEBOOK)).items():
        out[name] = {"default": ast.literal_eval(p["default"]), "type": p["inferred_type_name"], "help": p["help"]}
    return out


def _default(name: str):
    return notebook_defaults()[name]["default"]


def __getattr__(name: str):
    """``STREAM_THRESHOLD`` and ``MAX_ROWS``, read from notebook 00 when first asked for (not at import)."""
    if name in ("STREAM_THRESHOLD", "MAX_ROWS"):
        return _default(name.lower())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: Per-cell timeout (s) of the audit notebook's run: a large file's bootstrap takes minutes on a busy machine.
AUDIT_TIMEOUT = 1800

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
#: Its provenance columns: how each confidence was read out (named on the page, never "ignored").
LLM_PROVENANCE = ("readout", "scored_answer", "context", "scale")
#: The tidy table's columns that are not audited (identity, provenance, the log's record number).
LLM_NOT_AUDITED = ("item_id", "model", "task", "answer", "confidence_source", *LLM_PROVENANCE, "record")


def llm_provenance(table: pd.DataFrame) -> list[str]:
    """One sentence per confidence source of calibnb.llm's tidy table: how its confidences were read out.

    Each names the source, and the distinct values (at most three, then "...") of its
    ``readout``, ``scored_answer``, ``context`` and ``scale`` columns, plus its
    model(s) and task(s); a column the table lacks is left out.

    Examples
    --------
    >>> t = pd.DataFrame({"confidence_source": ["verbalized"] * 2, "readout": ["'Confidence: N%'"] * 2,
    ...                   "scored_answer": ["generated"] * 2, "scale": ["0-100", "0-100"], "model": ["m", "m"]})
    >>> llm_provenance(t)
    ["confidence source 'verbalized' (model m): read out as 'Confidence: N%'; answer scored: generated; scale: 0-100"]
    """
    if "confidence_source" not in table.columns:
        return []

    def distinct(g, col):
        vals = [str(v) for v in dict.fromkeys(g[col].dropna().astype(str)) if str(v) != ""]
        return ", ".join(vals[:3]) + (", ..." if len(vals) > 3 else "")

    out = []
    for s_ in dict.fromkeys(table["confidence_source"].astype(str)):
        g = table[table["confidence_source"].astype(str) == s_]
        who = [f"{c} {distinct(g, c)}" for c in ("model", "task") if c in g.columns and distinct(g, c)]
        parts = [f"{label}: {distinct(g, c)}" if label != "read out as" else f"read out as {distinct(g, c)}"
                 for c, label in (("readout", "read out as"), ("scored_answer", "answer scored"),
                                  ("context", "context"), ("scale", "scale"))
                 if c in g.columns and distinct(g, c)]
        out.append(f"confidence source {s_!r}" + (f" ({'; '.join(who)})" if who else "") + ": "
                   + ("; ".join(parts) if parts else "no provenance recorded"))
    return out

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "00_audit_your_model.ipynb"


class AuditInputError(ColumnError):
    """A malformed predictions file; the message names the column, the problem, the rows.

    A :class:`calibnb.validation.ColumnError`: raised at a range of rows (by
    :func:`_fail`, from a problem record of :mod:`calibnb.validation`), it keeps
    where it was found, so that a reader of chunks can say it again at the rows
    of the whole file (:meth:`~calibnb.validation.ColumnError.at_rows`).
    """


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
    #: Rows of the file when only a seeded sample of them is held (:data:`MAX_ROWS`), else None.
    n_file: int | None = None

    @property
    def n(self) -> int:
        return int(self.conf.shape[0])

    @property
    def n_classes(self) -> int | None:
        return None if self.probs is None else int(self.probs.shape[1])


# ------------------------------------------------------------------- reading

def _fail(column: str, problem: str, mask: np.ndarray | None = None, values=None, *, record: dict | None = None,
          key: str = "bad") -> None:
    """Raise AuditInputError naming the column, the problem, how many rows and the first one.

    The rows are a problem ``record`` of :mod:`calibnb.validation` (its ``key``),
    or the rows of ``mask`` (with ``values`` to quote); neither: the whole column.
    """
    if record is None and mask is not None:
        record = mask_problem(mask, values)
        n = np.asarray(mask).size
    else:
        n = 0 if values is None else len(values)
    raise AuditInputError.at(column, problem, record, n, key=key)


@contextlib.contextmanager
def _file_errors():
    """The reader's errors (:class:`calibnb.scale.reader.PredictionFileError`) as AuditInputError naming the column."""
    try:
        yield
    except PredictionFileError as exc:
        raise AuditInputError(f"column {exc.column or '-'!r}: {exc}") from None


def _frame_columns(frame: pd.DataFrame, where: str) -> dict[str, np.ndarray]:
    with _file_errors():
        names = check_header([str(c) for c in frame.columns], where)
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
    with _file_errors():
        return next(read_chunks(path))


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
    p = finite_problem(a)
    if p:
        _fail(column, "missing or non-finite value (NaN/inf)", values=a, record=p, key="nonfinite")
    return a


def _label_keys(column: str, x: np.ndarray) -> np.ndarray:
    """Labels as comparable text keys: integers as '3' (also 3.0 from a CSV), text as it is."""
    x = np.asarray(x)
    if x.dtype.kind in "biuf":
        a = x.astype(np.float64)
        p = finite_problem(a)
        if p:
            _fail(column, "missing or non-finite label", values=a, record=p, key="nonfinite")
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
    for j, name in enumerate(names):
        p = conf_problem(mat[:, j])  # finite already: only the range can be wrong
        if p:
            hint = ""
            if not percent and mat.min() >= 0 and mat.max() <= 100:
                hint = " (every value lies in [0, 100]: if these are percentages, pass --percent)"
            elif percent:
                hint = " (after dividing by 100 for --percent)"
            _fail(name, f"{what} outside [0, 1]{hint}", values=mat[:, j], record=p, key="range")
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
                p = sum_problem(s_, tol=sum_tol)
                if p:
                    hint = " (a single column is a binary model's probability: give only it with --binary-prob)" \
                        if k == 2 else ""
                    _fail(_span(pnames), f"row does not sum to 1 within {sum_tol:g}{hint}", values=s_, record=p)
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
                p = label_problem(lab, k, shown=cols[label])
                if p:
                    rng_ = f"[0, {k})" if base != 1 else f"[1, {k}]"
                    _fail(label, f"label not an integer in {rng_}", values=lab, record=p)
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
            for j, name in enumerate(vnames):
                p = count_problem(votes[:, j])
                if p:
                    _fail(name, "vote count not a non-negative integer", values=votes[:, j], record=p)
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
        p = correct_problem(y)
        if p:
            _fail(correct_c, "correctness not 0/1", values=y, record=p)
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
        p = weight_problem(weights)  # finite already: only a negative weight can be wrong
        if p:
            _fail(weight_c, "negative weight", values=weights, record=p)
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
    with _file_errors():
        return file_shape(path)


def _chunks(path: Path, chunk_rows: int):
    with _file_errors():
        yield from read_chunks(path, chunk_rows=chunk_rows)


def stream_predictions(path, *, chunk_rows: int | None = None, subsample: int | None = None, seed=None,
                       n_bins: int = 15, scalar_values=None, progress: bool = True, sum_tol: float | None = None,
                       n_folds: int = 5, min_fold_rows: int = 10, max_rows: int | None = None,
                       **options) -> Predictions:
    """Read a large CSV/Parquet file in chunks: validate each, keep a few numbers per row and a subsample.

    Every chunk is validated as :func:`load_predictions` does (a bad value
    names its row in the whole file) and reduced to the top-1 confidence and
    correctness and :func:`calibnb.summary.row_reductions`; the rows of a
    seeded subsample of ``subsample`` rows are kept whole (for the
    recalibration comparison and the class-wise metrics). A tqdm progress bar
    counts rows on stderr.

    ``chunk_rows``, ``subsample``, ``sum_tol`` and ``max_rows`` default to
    notebook 00's parameters (:func:`notebook_defaults`). Above ``max_rows``
    rows the per-row arrays are
    kept only for a seeded sample of ``max_rows`` rows, so that memory does
    not grow with the file: the top-1 metrics of every row are in
    ``stream_stats`` (exact), the intervals and the other metrics come from
    the sample (``n_file`` gives the file's rows).
    """
    from tqdm import tqdm

    from ..scale.stats import CalibrationStats
    from .summary import concat_reductions, row_reductions

    path = Path(path)
    size = file_size(path)
    if size is None:
        raise AuditInputError(f"column '-': only CSV and Parquet files can be streamed; got {str(path)!r}.")
    n_total = size[0]
    max_rows = _default("max_rows") if max_rows is None else int(max_rows)
    chunk_rows = _default("chunk_rows") if chunk_rows is None else chunk_rows
    subsample = _default("subsample") if subsample is None else subsample
    sum_tol = _default("sum_tol") if sum_tol is None else sum_tol
    rng = np.random.default_rng(seed)
    rowkeep = None
    if n_total > max_rows:  # memory bounded by max_rows, not by the file
        rowkeep = np.sort(rng.choice(n_total, max_rows, replace=False))
        idx_pos = np.sort(rng.choice(max_rows, min(subsample, max_rows), replace=False))
        idx = rowkeep[idx_pos]
    else:
        idx = idx_pos = np.sort(rng.choice(n_total, min(subsample, n_total), replace=False))
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
            bar.close()
            raise exc.at_rows(start) from None
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
        rows_ = slice(None) if rowkeep is None else rowkeep[(rowkeep >= start) & (rowkeep < start + n)] - start
        conf.append(part.conf[rows_])
        correct.append(part.correct[rows_])
        if part.weights is not None:
            weights.append(part.weights[rows_])
        if part.kind == "multiclass":
            reds.append(row_reductions(part.probs[rows_], part.labels[rows_],
                                       None if part.votes is None else part.votes[rows_],
                                       scalar_values=scalar_values, n_bins=n_bins))
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
    c, y = np.concatenate(conf), np.concatenate(correct)
    if start != n_total:  # quoted fields spanning lines made the line count differ from the row count
        n_total = start
        idx = idx[idx < start]
        idx_pos = idx_pos[idx_pos < c.size]
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
    n_file = None
    if rowkeep is not None:
        n_file = n_total
        notes.append(f"more than {max_rows:,} rows: the top-1 metrics of all {n_total:,} rows come from the "
                     f"streamed statistics (exact); the intervals, the verdict's tests, the figures and the other "
                     f"metrics use a seeded sample of {max_rows:,} rows, so that memory does not grow with the file")
    if first.kind == "binary":
        return Predictions(kind="binary", conf=c, correct=y, weights=w, roles=roles, notes=notes,
                           source=str(path), subsample_index=idx_pos,
                           sub_weights=None if w is None else w[idx_pos], stream_stats=stats, n_file=n_file)

    def cat(key):
        return np.concatenate(keep[key]) if keep[key] else None

    return Predictions(kind="multiclass", conf=c, correct=y, probs=cat("probs"), logits=cat("logits"),
                       labels=cat("labels"), votes=cat("votes"), weights=w, roles=roles, notes=notes,
                       source=str(path), derived=concat_reductions(reds), subsample_index=idx_pos,
                       sub_weights=cat("weights"), stream_stats=stats, n_file=n_file)


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


def _wmean_rows(x: np.ndarray, w) -> float:
    return float(np.mean(x)) if w is None else float(np.average(x, weights=w))


def _mean_interval(d: np.ndarray, w, n_resamples: int, level: float, seed: int):
    """Percentile bootstrap (rows resampled with their weights) of the (weighted) mean of ``d``: (low, high)."""
    if n_resamples == 0 or d.size < 2:
        return None, None
    rng = np.random.default_rng(seed)
    n = d.size
    step = max(1, 2_000_000 // n)
    out = []
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        idx = rng.integers(0, n, (size, n))
        if w is None:
            out.append(d[idx].mean(axis=1))
        else:
            ww = w[idx]
            out.append((d[idx] * ww).sum(axis=1) / ww.sum(axis=1))
    lo, hi = np.quantile(np.concatenate(out), [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _top1_scores(conf: np.ndarray, correct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row top-1 log loss (inf where a confidence of 0 or 1 is wrong) and Brier score of the correctness."""
    with np.errstate(divide="ignore"):
        nll = -np.where(correct > 0.5, np.log(conf), np.log1p(-conf))
    return nll, (conf - correct) ** 2


def _gap_interval(conf, correct, w, level: float):
    """Mean confidence minus accuracy with a normal-approximation interval (a mean of N per-row differences)."""
    from scipy import stats as _st

    d = conf - correct
    gap = _wmean_rows(d, w)
    if w is None:
        se = float(np.std(d, ddof=1) / np.sqrt(d.size)) if d.size > 1 else np.nan
    else:
        wn = w / w.sum()
        n_eff = 1.0 / np.sum(wn ** 2)
        se = float(np.sqrt(np.sum(wn * (d - gap) ** 2) / max(n_eff - 1, 1)))
    z = _st.norm.ppf((1 + level) / 2)
    return gap, gap - z * se, gap + z * se


def verdict_data(pred: Predictions, reliability: pd.DataFrame, *, level: float = 0.95) -> dict:
    """The audit's verdict: over-, under- or well calibrated, by two tests and the reliability diagram.

    ``reliability`` is the equal-mass reliability table with Wilson intervals
    (:func:`calibnb.summary.reliability_intervals`). A bin is overconfident
    when its whole accuracy interval lies below its mean confidence,
    underconfident when above. The tests (Spiegelhalter's Z and the
    cumulative KS test of Arrieta-Ibarra et al. 2022) are two-sided, at
    ``1 - level``, unweighted.
    """
    import calibnb as cn

    w = pred.weights
    acc = _wmean_rows(pred.correct, w)
    mean_conf = _wmean_rows(pred.conf, w)
    gap, gap_lo, gap_hi = _gap_interval(pred.conf, pred.correct, w, level)
    alpha = 1 - level
    spiegel = cn.spiegelhalter_test(pred.conf, pred.correct)
    ks = cn.cumulative_ks_test(pred.conf, pred.correct)
    t = reliability
    over = t[t["acc_high"] < t["mean_conf"]]
    under = t[t["acc_low"] > t["mean_conf"]]
    rejected = min(spiegel.p_value, ks.p_value) < alpha
    gap_sig = gap_lo > 0 or gap_hi < 0
    # A bin outside its interval is expected by chance in about (1 - level) of the bins: the verdict rests on
    # the two tests and the overall gap, and the bins say where.
    if not rejected and not gap_sig:
        label = "well calibrated"
    elif not over.empty and not under.empty and rejected:
        label = "mixed"
    elif gap_sig or rejected:
        label = "overconfident" if gap > 0 else "underconfident"
    else:  # pragma: no cover (gap_sig or rejected holds here)
        label = "miscalibrated"
    flagged = pd.concat([over, under])
    pick = flagged if not flagged.empty else t
    worst = pick.loc[(pick["mean_conf"] - pick["accuracy"]).abs().idxmax()]
    region = {"low": float(worst["lower"]), "high": float(worst["upper"]), "count": int(worst["count"]),
              "accuracy": float(worst["accuracy"]), "acc_low": float(worst["acc_low"]),
              "acc_high": float(worst["acc_high"]), "mean_conf": float(worst["mean_conf"]),
              "beyond_noise": not flagged.empty}

    def regions(frame):
        return [_range_text(r.lower, r.upper) for r in frame.itertuples()]

    return {"label": label, "accuracy": acc, "n_bins": int(len(t)), "mean_confidence": mean_conf, "gap": gap, "gap_low": gap_lo,
            "gap_high": gap_hi, "level": level, "spiegelhalter_z": float(spiegel.statistic),
            "spiegelhalter_p": float(spiegel.p_value), "ks_statistic": float(ks.statistic),
            "ks_p": float(ks.p_value), "overconfident_bins": regions(over), "underconfident_bins": regions(under),
            "worst_region": region, "weighted": w is not None}


def _range_text(low: float, high: float) -> str:
    """'0.80-0.90', with as many decimals as it takes to tell the two ends apart (up to 6)."""
    d = 2
    while d < 6 and round(low, d) == round(high, d) and low != high:
        d += 1
    return f"{low:.{d}f}-{high:.{d}f}"


def _p_text(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict_text(v: dict) -> str:
    """The verdict paragraph in words (Markdown, no user strings)."""
    lvl = f"{v['level']:.0%}"
    gap = (f"mean confidence {v['mean_confidence']:.3f} against accuracy {v['accuracy']:.3f}: a gap of "
           f"{v['gap']:+.3f} ({lvl} interval {v['gap_low']:+.3f} to {v['gap_high']:+.3f})")
    tests = (f"Spiegelhalter's test {_p_text(v['spiegelhalter_p'])}, cumulative KS test {_p_text(v['ks_p'])}")
    r = v["worst_region"]
    region = (f"confidences {_range_text(r['low'], r['high'])} ({r['count']} predictions): accuracy {r['accuracy']:.3f} "
              f"({lvl} interval {r['acc_low']:.3f} to {r['acc_high']:.3f}) at mean confidence {r['mean_conf']:.3f}")
    bins = ""
    for key, where in (("overconfident_bins", "below"), ("underconfident_bins", "above")):
        b = v[key]
        if b:
            listed = ", ".join(b) if len(b) <= 4 else f"{', '.join(b[:2])}, ..., {b[-1]}"
            bins += (f" {len(b)} of the {v['n_bins']} equal-mass bins have their accuracy interval {where} their "
                     f"mean confidence ({listed}).")
    head = {
        "overconfident": "The model is **overconfident**: it is less often right than it claims.",
        "underconfident": "The model is **underconfident**: it is more often right than it claims.",
        "well calibrated": "The model is **well calibrated** as far as these data can tell: neither test rejects "
                           "calibration and the overall gap is within noise.",
        "mixed": "The model is **miscalibrated both ways**: overconfident in some confidence regions, "
                 "underconfident in others.",
        "miscalibrated": "The model is **miscalibrated**, though not on average: the tests reject calibration.",
    }[v["label"]]
    return (f"{head} Overall: {gap}; {tests} (two-sided, unweighted). Worst region"
            f"{'' if r['beyond_noise'] else ' (within noise)'}: {region}.{bins}")


def recommendation_data(scores: dict, comparison: pd.DataFrame, *, n_resamples: int, level: float, seed: int,
                        weights=None) -> dict:
    """The one recalibration method to use: the largest cross-fitted improvement of a proper score, beyond noise.

    ``scores`` maps each method to its cross-fitted (conf, correct) on the
    same rows. The score is the top-1 log loss (NLL of the correctness); when
    it is infinite for any method (a confidence of exactly 0 or 1 that is
    wrong), the top-1 Brier score. Each method is compared with
    ``uncalibrated`` by a paired percentile bootstrap of the mean per-row
    difference (rows resampled jointly).
    """
    per = {m: _top1_scores(c, y) for m, (c, y) in scores.items()}
    use_nll = bool(np.all(np.isfinite(per["uncalibrated"][0])))
    which = 0 if use_nll else 1
    score = "NLL" if use_nll else "Brier"
    base = per["uncalibrated"][which]
    rows = []
    for m, v in per.items():
        if m == "uncalibrated":
            continue
        d = v[which] - base
        if not np.all(np.isfinite(d)):  # a confidence of exactly 0 or 1 on a wrong prediction: infinite NLL
            rows.append({"method": m, "change": np.inf, "low": np.inf, "high": np.inf, "better": False,
                         "worse": True})
            continue
        lo, hi = _mean_interval(d, weights, n_resamples, level, seed)
        rows.append({"method": m, "change": _wmean_rows(d, weights), "low": lo, "high": hi,
                     "better": hi is not None and hi < 0, "worse": lo is not None and lo > 0})
    table = pd.DataFrame(rows, columns=["method", "change", "low", "high", "better", "worse"])
    better = table[table.better].sort_values("change", kind="stable")
    method = None if better.empty else str(better.iloc[0]["method"])
    tied = []
    for m in better["method"].iloc[1:]:  # as good as the pick? a paired interval of their difference
        lo, hi = _mean_interval(per[m][which] - per[method][which], weights, n_resamples, level, seed)
        if lo is not None and lo <= 0 <= hi:
            tied.append(str(m))
    ece = comparison[comparison.key == "ece_width"].set_index("method")["estimate"]
    out = {"score": score, "uncalibrated_score": _wmean_rows(base, weights), "method": method,
           "methods": table, "worse": table.loc[table.worse, "method"].tolist(), "level": level,
           "within_noise_of_pick": tied,
           "n_resamples": n_resamples,
           "ece_before": float(ece.get("uncalibrated", np.nan)),
           "ece_after": None if method is None else float(ece.get(method, np.nan))}
    out["nll_undefined_for"] = [m for m, v in per.items() if not np.all(np.isfinite(v[0]))]
    return out


def recommendation_text(r: dict) -> str:
    """The recommendation in words (Markdown; method names are calibnb's own)."""
    lvl = f"{r['level']:.0%}"
    name = "top-1 log loss (NLL)" if r["score"] == "NLL" else "top-1 Brier score"
    why = ""
    if r["score"] == "Brier":
        why = (" (the model's own NLL is undefined: it gives a confidence of exactly 1 to a prediction that is "
               "wrong, so the Brier score decides)")
    if r["n_resamples"] == 0:
        return (f"**No recommendation**: intervals are off (n_resamples = 0), so no method can be told apart from "
                f"leaving the model as it is.")
    t = r["methods"].set_index("method")
    if r["method"] is None:
        text = (f"**Recommendation: none distinguishable.** No recalibration method improves the {name}{why} "
                f"beyond noise under cross-fitting: every {lvl} paired interval against leaving the model as it is "
                "includes 0 or lies above it.")
    else:
        m = r["method"]
        text = (f"**Recommendation: {m}.** Under cross-fitting it changes the {name}{why} by {t.loc[m, 'change']:+.4f} "
                f"({lvl} paired interval {t.loc[m, 'low']:+.4f} to {t.loc[m, 'high']:+.4f}) against leaving the "
                f"model as it is ({r['uncalibrated_score']:.4f}), the largest improvement beyond noise; its "
                f"equal-width ECE goes from {r['ece_before']:.3f} to {r['ece_after']:.3f}.")
        if r.get("within_noise_of_pick"):
            text += (f" Within noise of it (paired {lvl} interval of the difference includes 0): "
                     f"{', '.join(r['within_noise_of_pick'])}.")
    if r["worse"]:
        parts = [f"{m} (infinite: it gives a confidence of exactly 0 or 1 to a prediction that is then wrong)"
                 if not np.isfinite(t.loc[m, "change"]) else
                 f"{m} ({t.loc[m, 'change']:+.4f}, interval {t.loc[m, 'low']:+.4f} to {t.loc[m, 'high']:+.4f})"
                 for m in r["worse"]]
        text += f" **Makes the model worse** on the {name}: {'; '.join(parts)}."
    return text


#: Plain-words summaries of the warnings the libraries raise during an audit (pattern, what to tell the reader).
WARNING_TEXTS = [
    (r"max_iter|converge", "an iterative fit stopped before converging (its result is used as it is; a method "
                           "that did not converge is not to be trusted more than its cross-fitted scores show)"),
    (r"bound", "a fitted parameter sits on its search bound (e.g. a temperature at its limit): the method's "
               "optimum may lie outside the range searched"),
    (r"divide by zero|invalid value|overflow", "a numerical edge case (division by zero or overflow) in a metric, "
                                                "typically an empty bin or a confidence of exactly 0 or 1"),
    (r"Degrees of freedom|ddof", "too few rows in some group for a variance"),
]


def summarise_warnings(caught) -> list[str]:
    """Caught warnings as a few sentences: one per kind, with how often it happened; no file paths."""
    counts: dict[str, int] = {}
    for w in caught:
        msg = str(getattr(w, "message", w))
        cat = getattr(getattr(w, "category", None), "__name__", "Warning")
        text = None
        who = re.match(r"(uncalibrated|TS \(NLL\)|TS \(ECE\)|vector scaling|Platt|spline|isotonic|"
                       r"histogram binning): ", msg)
        for pattern, words in WARNING_TEXTS:
            if re.search(pattern, msg, flags=re.IGNORECASE):
                text = (f"{who.group(1)}: " if who else "") + words
                break
        if text is None:
            first = re.sub(r"(/[^\s:]+)+", "<path>", msg.splitlines()[0] if msg else "")[:160]
            text = f"{cat}: {first}"
        counts[text] = counts.get(text, 0) + 1
    return [f"{text} ({n} time{'s' if n > 1 else ''})" for text, n in counts.items()]


def _flags(summary: pd.DataFrame) -> list[str]:
    """Estimates clipped at a bound and percentile intervals that exclude their estimate, in words."""
    out = []
    for r in summary.itertuples():
        if r.key == "debiased_ece" and r.estimate <= 0:
            out.append(f"{r.metric} is clipped at 0: the debiasing removed more than the binned estimate, so the "
                       "true value is small but not known to be 0.")
        if r.low is not None and not pd.isna(r.low) and not (r.low <= r.estimate <= r.high):
            out.append(f"{r.metric}: the percentile interval [{r.low:.4f}, {r.high:.4f}] excludes the estimate "
                       f"{r.estimate:.4f} (the bootstrap of a binned or clipped metric is biased); read the interval "
                       "as the size of the noise, not as a range around the estimate.")
    return out


def run_audit(pred: Predictions, *, n_bins: int | None = None, n_resamples: int | None = None,
              heavy_resamples: int | None = None, n_folds: int | None = None, level: float | None = None,
              seed: int | None = None, scalar_values=None, subsample: int | None = None) -> dict:
    """Every number of the report: verdict, recommendation, summary, reliability tables, comparison, picks.

    A setting left None takes notebook 00's parameter of the same name (:func:`notebook_defaults`).

    The recalibration methods are cross-fitted with ``n_folds`` seeded folds
    (:func:`calibnb.cross_fit`); above ``subsample`` rows they are fitted and
    scored on a seeded subsample of that many rows (stated in ``settings``).
    The summary is the comparison's ``uncalibrated`` rows when no subsample is
    drawn, else computed on every row. Warnings raised on the way are caught
    and summarised in words (``warnings``).

    Returns
    -------
    dict
        ``inputs``, ``settings``, ``verdict``, ``recommendation``, ``summary``
        (DataFrame), ``flags``, ``reliability`` ({"width", "mass"}: DataFrames),
        ``recalibration`` (DataFrame), ``picks`` (DataFrame), ``disagreements``,
        ``accuracy_change`` (DataFrame), ``warnings``, ``streaming_stats``.
    """
    import warnings as _warnings

    given = dict(n_bins=n_bins, n_resamples=n_resamples, heavy_resamples=heavy_resamples, n_folds=n_folds,
                 level=level, seed=seed, subsample=subsample)
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        out = _run_audit(pred, scalar_values=scalar_values,
                         **{k: _default(k) if v is None else v for k, v in given.items()})
    out["warnings"] = summarise_warnings(caught)
    return out


def _run_audit(pred: Predictions, *, n_bins, n_resamples, heavy_resamples, n_folds, level, seed, scalar_values,
               subsample) -> dict:
    import warnings as _warnings

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
    conf_r = pred.conf if idx is None else pred.conf[idx]
    correct_r = pred.correct if idx is None else pred.correct[idx]
    k = None if rec["logits"] is None else int(rec["logits"].shape[1])
    frames, scores = [], {}
    for m in _summary().applicable_methods(k):
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always")
            r = _summary().cross_fit(m, conf_r, correct_r, logits=rec["logits"], labels=rec["labels"],
                                   n_folds=n_folds, seed=seed)
        for w in caught:  # re-raised with the method's name, for the summary in words
            _warnings.warn(f"{m}: {w.message}", w.category if isinstance(w.category, type) else UserWarning,
                           stacklevel=1)
        t = _summary().metric_summary(r.conf, r.correct, probs=r.probs,
                                    labels=r.labels if r.probs is not None else None,
                                    votes=rec["votes"] if r.probs is not None else None,
                                    sample_weight=rec["sample_weight"], **common)
        t.insert(0, "method", m)
        frames.append(t)
        scores[m] = (np.clip(r.conf, 0.0, 1.0), r.correct)
    comparison = pd.concat(frames, ignore_index=True)
    if idx is None:
        summary = comparison[comparison.method == "uncalibrated"].drop(columns="method").reset_index(drop=True)
    else:
        summary = _summary().metric_summary(pred.conf, pred.correct, probs=pred.probs, labels=pred.labels,
                                          votes=pred.votes, sample_weight=pred.weights, derived=pred.derived,
                                          class_weight=pred.sub_weights, **common)
    if pred.n_file is not None and pred.stream_stats is not None:
        summary = _whole_file_estimates(summary, pred.stream_stats, n_bins, pred.n_file)
    picks = _summary().metric_picks(comparison)
    pick = dict(zip(picks.key, picks.pick))
    disagreements = []
    for a, b, title, notebook, why in DISAGREEMENT_NOTES:
        if a in pick and b in pick and pick[a] != pick[b]:
            disagreements.append({"metrics": [a, b], "title": title, "picks": [pick[a], pick[b]],
                                  "notebook": f"notebooks/{notebook}", "why": why})
    acc = comparison[comparison.key == "accuracy"][["method", "estimate", "low", "high"]].reset_index(drop=True)
    acc["change"] = acc["estimate"] - float(acc.loc[acc.method == "uncalibrated", "estimate"].iloc[0])
    # unweighted, as the diagrams: binomial intervals need integer counts per bin
    reliability = {b: _summary().reliability_intervals(pred.conf, pred.correct, n_bins=n_bins, binning=b, level=level)
                   for b in ("width", "mass")}
    verdict = verdict_data(pred, reliability["mass"], level=level)
    verdict["text"] = verdict_text(verdict)
    recommendation = recommendation_data(scores, comparison, n_resamples=n_resamples, level=level, seed=seed,
                                         weights=rec["sample_weight"])
    recommendation["text"] = recommendation_text(recommendation)
    corp = bin_free_table(pred, n_resamples=min(n_resamples, CORP_RESAMPLES), n_folds=n_folds, level=level, seed=seed)
    return {
        "corp": corp,
        "inputs": {"kind": pred.kind, "rows": pred.n if pred.n_file is None else pred.n_file,
                   "sample_rows": None if pred.n_file is None else pred.n, "classes": pred.n_classes, "roles": dict(pred.roles),
                   "notes": list(pred.notes), "source": _display_name(pred.source),
                   "weighted": pred.weights is not None, "votes": pred.votes is not None},
        "settings": {"n_bins": n_bins, "n_resamples": n_resamples, "heavy_resamples": heavy_resamples,
                     "n_folds": n_folds, "level": level, "seed": seed,
                     "scalar_values": None if scalar_values is None else list(map(float, scalar_values)),
                     "recalibration_rows": pred.n if idx is None else int(idx.size),
                     "subsampled": idx is not None, "streamed": pred.derived is not None or (
                         pred.subsample_index is not None)},
        "verdict": verdict,
        "recommendation": recommendation,
        "summary": summary,
        "flags": _flags(summary),
        "reliability": reliability,
        "recalibration": comparison,
        "picks": picks,
        "accuracy_change": acc,
        "disagreements": disagreements,
        "streaming_stats": _stream_estimates(pred.stream_stats, n_bins),
    }


def _whole_file_estimates(summary: pd.DataFrame, stats, n_bins: int, n_file: int) -> pd.DataFrame:
    """The summary with the top-1 metrics of every row of the file (from the streamed statistics)."""
    one = stats.reliability_table(n_bins=1)
    exact = {"accuracy": float(one["accuracy"].iloc[0]), "ice": stats.ice(), "macro_ce": stats.macro_ce(),
             "r_o": stats.rewards().r_o, "r_u": stats.rewards().r_u, "hmr": stats.hmr(),
             "brier_top1": stats.brier_top()}
    if stats.n_cells % n_bins == 0:
        exact.update(ece_width=stats.ece(n_bins=n_bins), mce=stats.mce(n_bins=n_bins))
    out = summary.copy()
    for key, value in exact.items():
        hit = out["key"] == key
        out.loc[hit, "estimate"] = float(value)
        out.loc[hit, "rows"] = int(n_file)
    return out


def _display_name(source) -> str:
    """A file's base name (never a folder path) for pages and JSON."""
    if not source:
        return ""
    return os.path.basename(str(source))


def _stream_estimates(stats, n_bins: int) -> dict | None:
    """The top-1 metrics from the streamed CalibrationStats (they equal the summary's estimates).

    Every metric of :mod:`calibnb.metrics.registry` with a streaming form; the binned ones when
    ``n_bins`` divides the state's grid.
    """
    from ..metrics import registry

    if stats is None:
        return None
    mergeable = [m for m in registry.metrics() if m.streaming is not None and m.inputs == "binary"]
    out = {"rows": stats.n}
    out.update({m.key: m.streaming(stats) for m in mergeable if not m.binned and not m.options})
    out["ks_top1_bounds"] = list(stats.ks_bounds())
    if stats.n_cells % n_bins == 0:
        out.update({m.key: m.streaming(stats, **m.call_options(n_bins)) for m in mergeable
                    if m.binned or m.options})
    return out


#: Resamples of the CORP band and of the decomposition's and loss gain's intervals (at most).
CORP_RESAMPLES = 200
#: Rows the CORP diagram and the loss gain use at most (a seeded sample beyond).
CORP_ROWS = 100_000


def _corp_rows(pred: Predictions, seed) -> tuple:
    c, y = np.asarray(pred.conf, dtype=np.float64), np.asarray(pred.correct)
    w = None if pred.weights is None or np.shape(pred.weights) != c.shape else np.asarray(pred.weights, float)
    if c.size > CORP_ROWS:
        keep = np.sort(np.random.default_rng(seed).choice(c.size, CORP_ROWS, replace=False))
        c, y, w = c[keep], y[keep], (None if w is None else w[keep])
    return c, y, w


def bin_free_table(pred: Predictions, *, n_resamples: int = CORP_RESAMPLES, n_folds: int = 5, level: float = 0.95,
                   seed=None) -> pd.DataFrame:
    """The bin-free estimates of the top-1 confidence: CORP's Brier decomposition and the loss gain of TS.

    Rows: the Brier score and its miscalibration (MCB), discrimination (DSC) and
    uncertainty (UNC) parts (:func:`calibnb.score_decomposition`, Dimitriadis et al.
    2021; MCB is the drop in Brier score that the in-sample PAV recalibration
    achieves), then the cross-fitted loss gain of temperature scaling of the top-1
    confidence in log loss and in Brier score, with its paired interval, and the
    refinement loss left after it (:func:`calibnb.recalibration_gain`, Berta et al.
    2025). At most :data:`CORP_ROWS` rows (a seeded sample beyond).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> p = rng.uniform(0.5, 1, 400)
    >>> pred = Predictions(kind="binary", conf=p, correct=(rng.uniform(size=400) < p - 0.2).astype(int))
    >>> t = bin_free_table(pred, n_resamples=50, n_folds=3, seed=0).set_index("measure")
    >>> bool(abs(t.loc["Brier score", "estimate"] - (t.loc["MCB (miscalibration)", "estimate"]
    ...      - t.loc["DSC (discrimination)", "estimate"] + t.loc["UNC (uncertainty)", "estimate"])) < 1e-12)
    True
    """
    import calibnb as cn

    seed = seed_int(seed)  # one seed for the sample, the decomposition and the loss gain
    c, y, w = _corp_rows(pred, seed)
    dec = cn.score_decomposition(c, y, score="brier", sample_weight=w, n_resamples=n_resamples, level=level,
                                 seed=seed)
    rows = [("Brier score", dec.score), ("MCB (miscalibration)", dec.mcb), ("DSC (discrimination)", dec.dsc),
            ("UNC (uncertainty)", dec.unc)]
    out = [{"measure": m, "estimate": float(r.estimate), "low": float(r.low), "high": float(r.high)} for m, r in rows]
    try:
        gain = cn.recalibration_gain(c, y, calibrator="temperature", sample_weight=w, n_folds=n_folds,
                                     n_resamples=n_resamples, level=level, seed=seed)
    except ValueError as exc:  # e.g. too few rows of one outcome for the folds
        out.append({"measure": f"loss gain of temperature scaling: not computed ({exc})", "estimate": None,
                    "low": None, "high": None})
    else:
        for name, label in (("log", "log loss"), ("brier", "Brier score")):
            g = getattr(gain, name)
            out.append({"measure": f"{label} gain of temperature scaling (cross-fitted)",
                        "estimate": float(g.gain.estimate), "low": float(g.gain.low), "high": float(g.gain.high)})
            out.append({"measure": f"{label} left after it (refinement)", "estimate": float(g.refinement.estimate),
                        "low": float(g.refinement.low), "high": float(g.refinement.high)})
    return pd.DataFrame(out, columns=["measure", "estimate", "low", "high"])


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
        nb = _summary().PAPERS.get(name)
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
    # each group as a share of its own predictions: 23 wrong beside 570 correct stay visible (seaborn's
    # stat="probability", common_norm=False)
    for mask, color, name in ((wrong, "tab:red", "wrong"), (~wrong, "tab:green", "correct")):
        if mask.any():
            axes[0].hist(pred.conf[mask], bins=bins, weights=np.full(int(mask.sum()), 1.0 / mask.sum()),
                         color=color, alpha=0.45, edgecolor=color, linewidth=1.2, histtype="stepfilled",
                         label=f"{name} ({int(mask.sum())})", gid=f"hist-{name}")
    axes[0].set_xlabel("confidence")
    axes[0].set_ylabel("share of the group's predictions")
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


# ------------------------------------------------------------- several confidence sources (calibnb.llm's table)

def source_comparison(frame: pd.DataFrame, *, n_resamples: int = 200, level: float = 0.95, seed=None,
                      n_bins: int = 15) -> dict | None:
    """Compare the confidence sources of calibnb.llm's tidy table on the same items (None if only one).

    Per source: accuracy, mean confidence, ECE, MacroCE (Si 2022), HMR
    (Sakai 2024) and the top-1 Brier score. Each source after the first is
    compared with the first on the items both have (joined on ``item_id``,
    ``model`` and ``task`` where present), with a paired percentile bootstrap
    interval of the difference (:func:`calibnb.paired_bootstrap_ci`).
    """
    import calibnb as cn

    seed = seed_int(seed)  # one seed for every paired interval
    if "confidence_source" not in frame.columns:
        return None
    sources = list(dict.fromkeys(frame["confidence_source"].astype(str)))
    if len(sources) < 2:
        return None
    keys = [c for c in ("item_id", "model", "task") if c in frame.columns]
    if not keys:
        raise AuditInputError("column 'item_id': several confidence sources need item_id (and model, task) to "
                              "pair the same items.")
    parts = {}
    for s_ in sources:
        g = frame[frame["confidence_source"].astype(str) == s_]
        if g.duplicated(keys).any():
            row = int(np.flatnonzero(g.duplicated(keys).to_numpy())[0])
            raise AuditInputError(f"column 'item_id': source {s_!r} has the same {'/'.join(keys)} twice "
                                  f"(row {row} of that source); each item needs one confidence per source.")
        c = _unit_columns(["confidence"], {"confidence": g["confidence"].to_numpy()}, False, "confidence")[:, 0]
        y = _numeric("correct", g["correct"].to_numpy())
        parts[s_] = pd.DataFrame({**{k: g[k].astype(str).to_numpy() for k in keys}, "conf": c, "correct": y})
    metrics = {"accuracy": lambda c, y, sample_weight=None: np.average(y, axis=-1, weights=sample_weight),
               "mean confidence": lambda c, y, sample_weight=None: np.average(c, axis=-1, weights=sample_weight),
               f"ECE ({n_bins} bins)": cn.ece, "MacroCE": cn.macro_ce, "HMR": cn.hmr, "top-1 Brier": cn.brier_top}
    rows = []
    for s_, g in parts.items():
        c, y = g["conf"].to_numpy(), g["correct"].to_numpy()
        row = {"source": s_, "items": len(g)}
        for name, fn in metrics.items():
            row[name] = float(fn(c, y, n_bins=n_bins) if name.startswith("ECE") else fn(c, y))
        rows.append(row)
    diffs = []
    first = sources[0]
    for s_ in sources[1:]:
        m = parts[first].merge(parts[s_], on=keys, suffixes=("_a", "_b"))
        if len(m) < 2:
            continue
        a = (m["conf_a"].to_numpy(), m["correct_a"].to_numpy())
        b = (m["conf_b"].to_numpy(), m["correct_b"].to_numpy())
        for name in ("accuracy", f"ECE ({n_bins} bins)", "MacroCE", "HMR", "top-1 Brier"):
            fn = metrics[name]
            opts = {"n_bins": n_bins} if name.startswith("ECE") else {}
            est = float(fn(*b, **opts) - fn(*a, **opts))
            lo = hi = None
            if n_resamples:
                r = cn.paired_bootstrap_ci(fn, b, a, n_resamples=n_resamples, level=level, seed=seed,
                                           vectorized=name in ("accuracy",) or None, **opts)
                lo, hi = float(r.low), float(r.high)
            diffs.append({"comparison": f"{s_} - {first}", "metric": name, "items": len(m), "difference": est,
                          "low": lo, "high": hi,
                          "beyond noise": None if lo is None else bool(lo > 0 or hi < 0)})
    return {"sources": sources, "keys": keys, "table": pd.DataFrame(rows), "differences": pd.DataFrame(diffs),
            "parts": {s_: (g["conf"].to_numpy(), g["correct"].to_numpy()) for s_, g in parts.items()}}


def plot_sources(comparison: dict, *, n_bins: int = 10, level: float = 0.95):
    """One equal-mass reliability diagram per confidence source (same axes)."""
    import matplotlib.pyplot as plt

    from ..plots import plot_reliability_diagram, reliability_diagram_data

    k = len(comparison["parts"])
    fig, axes = plt.subplots(1, k, figsize=(4.6 * k, 4.4), squeeze=False)
    for ax, (s_, (c, y)) in zip(axes[0], comparison["parts"].items()):
        d = reliability_diagram_data(c, y, n_bins=min(n_bins, max(1, c.size // 10)), binning="mass",
                                     interval="wilson", level=level)
        plot_reliability_diagram(d, ax=ax)
        ax.set_title(f"source: {s_[:40]}")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------- the Python API

def _check_settings(s: dict) -> dict:
    """Validate the settings before any work (AuditInputError naming the option)."""
    def integer(name, minimum):
        v = s[name]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
            raise AuditInputError(f"column '-': --{name.replace('_', '-')} must be an integer >= {minimum}; "
                                  f"got {v!r}.")
        return int(v)

    out = dict(s)
    for name, minimum in (("n_bins", 1), ("n_resamples", 0), ("heavy_resamples", 0), ("n_folds", 2), ("seed", 0),
                          ("subsample", 10), ("stream_threshold", 1), ("chunk_rows", 1), ("max_rows", 100)):
        out[name] = integer(name, minimum)
    out["level"] = _check_option_float(s["level"], "--level", low=0.5, high=0.999)
    out["sum_tol"] = _check_option_float(s["sum_tol"], "--sum-tol", low=0.0, high=1.0)
    if out["n_bins"] > 1000:
        raise AuditInputError(f"column '-': --n-bins must be at most 1000; got {out['n_bins']}.")
    if out["n_resamples"] > 100_000 or out["heavy_resamples"] > 100_000:
        raise AuditInputError("column '-': --n-resamples and --heavy-resamples must be at most 100000.")
    return out


class AuditResult:
    """The result of :func:`calibnb.audit`: verdict, recommendation, every metric, and the report.

    In a notebook it shows itself (verdict, recommendation, summary table).
    ``.verdict`` and ``.recommendation`` are dicts whose ``"text"`` is the
    paragraph the report opens with; ``.summary`` is the metric table
    (DataFrame); ``.to_json(path)`` writes every number and ``.to_html(path)``
    the report page (notebook 00 run with papermill on the same input and
    settings: the page ``python -m calibnb.audit`` writes).
    """

    def __init__(self, predictions: Predictions, result: dict, parameters: dict, *, frame=None,
                 sources: dict | None = None):
        self.predictions = predictions
        self.result = result
        self.parameters = dict(parameters)
        self.sources = sources
        self._frame = frame
        if sources is not None:
            result["sources"] = {k: v for k, v in sources.items() if k != "parts"}

    @property
    def verdict(self) -> dict:
        return self.result["verdict"]

    @property
    def recommendation(self) -> dict:
        return self.result["recommendation"]

    @property
    def summary(self) -> pd.DataFrame:
        return self.result["summary"]

    @property
    def comparison(self) -> pd.DataFrame:
        return self.result["recalibration"]

    @property
    def picks(self) -> pd.DataFrame:
        return self.result["picks"]

    def __repr__(self) -> str:
        v = self.verdict
        return (f"<AuditResult: {v['label']}, accuracy {v['accuracy']:.3f}, mean confidence "
                f"{v['mean_confidence']:.3f}; recommendation: {self.recommendation['method'] or 'none distinguishable'}>")

    def to_dict(self) -> dict:
        """Every number as plain JSON types (what ``audit.json`` holds)."""
        return audit_json(self.result)

    def to_json(self, path) -> Path:
        """Write :meth:`to_dict` atomically to ``path``."""
        return write_audit_json(self.result, path)

    # --- HTML (every string escaped; Markdown-style **bold** of our own texts only)
    def verdict_html(self) -> str:
        v, r, inp = self.verdict, self.recommendation, self.result["inputs"]
        table = pd.DataFrame({
            "": ["accuracy", "mean confidence", "gap (confidence - accuracy)", "Spiegelhalter's test",
                 "cumulative KS test"],
            "value": [f"{v['accuracy']:.4f}", f"{v['mean_confidence']:.4f}",
                      f"{v['gap']:+.4f} [{v['gap_low']:+.4f}, {v['gap_high']:+.4f}]",
                      f"z = {v['spiegelhalter_z']:.2f}, {_p_text(v['spiegelhalter_p'])}",
                      f"{_p_text(v['ks_p'])}"]})
        what = (f"{inp['rows']:,} predictions, " + (f"{inp['classes']} classes" if inp["classes"] else
                                                     "confidence and correctness only"))
        return ("<div class='calibnb-verdict'>"
                f"<p><b>Verdict: {_esc(v['label'])}</b> ({_esc(what)})</p>"
                f"<p>{_md(v['text'])}</p>{table.to_html(index=False, escape=True, border=0)}"
                f"<p>{_md(r['text'])}</p></div>")

    def inputs_html(self) -> str:
        inp = self.result["inputs"]
        roles = "; ".join(f"{k}: {v}" for k, v in inp["roles"].items())
        items = "".join(f"<li>{_esc(n)}</li>" for n in inp["notes"])
        st = self.result["settings"]
        settings = (f"Settings (given once, here): {st['n_bins']} bins, {st['n_resamples']} bootstrap resamples "
                    f"({min(st['n_resamples'], st['heavy_resamples'])} for the heavy metrics), {st['n_folds']} "
                    f"cross-fitting folds, {st['level']:.0%} intervals, seed {st['seed']}.")
        return (f"<p>Columns used: {_esc(roles)}.</p>" + (f"<ul>{items}</ul>" if items else "")
                + f"<p>{_esc(settings)}</p>")

    def warnings_html(self) -> str:
        w, f = self.result.get("warnings") or [], self.result.get("flags") or []
        out = ""
        if w:
            out += ("<p><b>Warnings raised while auditing</b> (caught; in words):</p><ul>"
                    + "".join(f"<li>{_esc(x)}</li>" for x in w) + "</ul>")
        if f:
            out += "<p><b>Read with care:</b></p><ul>" + "".join(f"<li>{_esc(x)}</li>" for x in f) + "</ul>"
        return out

    def summary_html(self) -> str:
        return summary_frame(self.summary, self.result["settings"]["level"]).to_html(index=False, escape=True,
                                                                                     border=0)

    def comparison_html(self) -> str:
        return comparison_frame(self.comparison).to_html(escape=True, border=0)

    def picks_html(self) -> str:
        return picks_frame(self.picks).to_html(index=False, escape=True, border=0)

    def sources_html(self) -> str:
        if self.sources is None:
            return ""
        t = self.sources["table"].copy()
        d = self.sources["differences"].copy()
        for col in t.columns[2:]:
            t[col] = t[col].map(lambda x: f"{x:.4f}")
        if not d.empty:
            d["interval"] = [("no interval" if lo is None or pd.isna(lo) else f"[{lo:+.4f}, {hi:+.4f}]")
                             for lo, hi in zip(d["low"], d["high"])]
            d["difference"] = d["difference"].map(lambda x: f"{x:+.4f}")
            d["beyond noise"] = d["beyond noise"].map({True: "yes", False: "within noise", None: "-"})
            d = d[["comparison", "metric", "items", "difference", "interval", "beyond noise"]]
        return (t.to_html(index=False, escape=True, border=0)
                + "<p>Paired differences (same items; percentile bootstrap):</p>"
                + d.to_html(index=False, escape=True, border=0))

    def _repr_html_(self) -> str:
        return self.verdict_html() + self.inputs_html() + self.warnings_html() + self.summary_html()

    # --- figures
    def plot_reliability(self):
        return plot_reliability(self.predictions, self.result)

    def plot_ks(self):
        return plot_ks(self.predictions)

    def plot_rewards(self):
        return plot_rewards(self.predictions, self.result)

    def plot_human(self):
        return None if self.predictions.votes is None else plot_human(self.predictions)

    def plot_corp(self):
        """CORP reliability diagram of the top-1 confidence (PAV curve, consistency band, decomposition)."""
        import matplotlib.pyplot as plt

        import calibnb as cn

        seed = self.result["settings"]["seed"]
        c, y, w = _corp_rows(self.predictions, seed)
        data = cn.corp_reliability_data(c, y, sample_weight=w, seed=seed,
                                        n_resamples=min(self.result["settings"]["n_resamples"], CORP_RESAMPLES))
        fig, ax = plt.subplots(figsize=(5.5, 5))
        cn.plot_corp_reliability(data, ax=ax)
        ax.set_title("CORP reliability diagram (top-1 confidence)")
        fig.tight_layout()
        return fig

    def corp_html(self) -> str:
        """The bin-free table (:func:`bin_free_table`) as HTML, every string escaped."""
        t = self.result["corp"].copy()
        t["interval"] = [("no interval" if r["low"] is None or pd.isna(r["low"]) else
                          f"[{_fmt(r['low'])}, {_fmt(r['high'])}]") for _, r in t.iterrows()]
        t["estimate"] = [_fmt(v) for v in t["estimate"]]
        return t[["measure", "estimate", "interval"]].to_html(index=False, escape=True, border=0)

    def plot_sources(self):
        return None if self.sources is None else plot_sources(self.sources, level=self.result["settings"]["level"])

    # --- the report page
    def to_html(self, path) -> Path:
        """Write the report page (notebook 00 run on the same input and settings, code hidden) to ``path``."""
        path = Path(path)
        _check_out_file(path)
        params = dict(self.parameters)
        with tempfile.TemporaryDirectory(prefix=".calibnb-audit-") as tmp:
            if self._frame is not None:
                data = Path(tmp) / "data.parquet"
                _frame_for_parquet(self._frame).to_parquet(data)
                # read whole, as the in-memory audit was (no streaming, no sample)
                params.update(predictions_path=str(data), stream_threshold=2 ** 62, max_rows=2 ** 62)
            files = render_report(params, Path(tmp) / "run")
            from ..record.reproduction import write_text_atomic

            write_text_atomic(path, files["audit.html"].read_text(encoding="utf-8"))
        return path


def _frame_for_parquet(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy(deep=False)
    out.columns = [str(c) for c in out.columns]
    return out.reset_index(drop=True)


def _esc(text) -> str:
    import html

    return html.escape(str(text), quote=True)


def _md(text: str) -> str:
    """Escape, then render our own **bold** (no links, no other Markdown)."""
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", _esc(text))


def picks_frame(picks: pd.DataFrame) -> pd.DataFrame:
    """The method each metric would pick, with the picks within noise of the runner-up marked."""
    sep = picks["separated"]
    return pd.DataFrame({
        "metric": picks["metric"], "pick": picks["pick"], "estimate": picks["estimate"].map(_fmt),
        "tied with": picks["tied_with"].fillna(""),
        "runner-up": picks["runner_up"].fillna(""),
        "beyond noise?": ["no interval" if s is None or pd.isna(s) else ("yes" if s else "within noise")
                          for s in sep]})


def _frame_input(data, options: dict, settings: dict):
    """(columns, frame to keep for to_html or None, path or None) of the data given to :func:`audit`."""
    if isinstance(data, pd.DataFrame):
        return read_columns(data), data, None
    if isinstance(data, dict):
        known = {"probs", "logits", "labels", "conf", "correct", "votes", "weights"}
        if not data or not set(data) <= known:
            raise AuditInputError(f"column '-': a dict of arrays must use the keys {sorted(known)}; got "
                                  f"{sorted(map(str, data))}.")
        pred = predictions_from_arrays(**data, n_folds=settings["n_folds"])  # validates, names the arrays
        frame = pd.DataFrame(_arrays_columns(data))
        return None, frame, pred
    if isinstance(data, (str, os.PathLike)):
        return None, None, Path(data)
    raise AuditInputError(f"column '-': data must be a pandas DataFrame, a path to a CSV/Parquet/NPZ file or a dict "
                          f"of arrays (probs/logits, labels, conf, correct, votes, weights); got "
                          f"{type(data).__name__}.")


def _arrays_columns(data: dict) -> dict:
    cols = {}
    for key, name in (("probs", "p"), ("logits", "logit"), ("votes", "h")):
        if data.get(key) is not None:
            a = np.asarray(data[key])
            if a.ndim == 1:
                cols["y_prob"] = a
            else:
                cols.update({f"{name}{j}": a[:, j] for j in range(a.shape[1])})
    for key, name in (("labels", "label"), ("conf", "conf"), ("correct", "correct"), ("weights", "weight")):
        if data.get(key) is not None:
            cols[name] = np.asarray(data[key])
    return cols


def audit(data=None, *, prob_prefix=None, logit_prefix=None, label=None, conf=None, correct=None, vote_prefix=None,
          weight=None, binary_prob=None, positive=None, prob_columns=None, classes=None, percent: bool = False,
          low_conf: bool = False, log_format=None, source=None, scalar_values=None, n_bins: int | None = None,
          n_resamples: int | None = None, heavy_resamples: int | None = None, n_folds: int | None = None,
          level: float | None = None, seed: int | None = None, sum_tol: float | None = None,
          subsample: int | None = None, stream_threshold: int | None = None, chunk_rows: int | None = None,
          max_rows: int | None = None, progress: bool = False,
          name: str | None = None) -> AuditResult:
    r"""Audit a model's calibration: a verdict with a test, one recommendation, every metric with an interval.

    ``calibnb.audit(df)`` in a notebook shows the verdict; ``python -m
    calibnb.audit FILE`` is the same call on a file and writes the report.

    Parameters
    ----------
    data : pandas.DataFrame, path, or dict of arrays
        One row per prediction (see :func:`predictions_from_columns` for the
        layouts: class probabilities and a label, a binary model's
        ``predict_proba[:, 1]`` and its label, logits, or ``conf`` and
        ``correct``; calibnb.llm's tidy table with ``confidence_source``);
        a CSV, Parquet or NPZ file; or a dict with keys ``probs`` (N, K) or
        (N,), ``logits``, ``labels``, ``conf``, ``correct``, ``votes``,
        ``weights``. ``None`` audits the CIFAR-10 ResNet-20 demo.
    prob_prefix, logit_prefix, label, conf, correct, vote_prefix, weight, binary_prob, positive, prob_columns, \
classes, percent, low_conf : optional
        Column roles (inferred from the names when not given).
    log_format : {"openai", "lm-eval", "helm", "inspect", "verbalized"}, optional
        ``data`` is a language model's evaluation log, read by ``calibnb.llm.read_log``.
    source : str, optional
        With several confidence sources, the one the verdict is about (default: the first).
    n_bins, n_resamples, heavy_resamples, n_folds, level, seed, sum_tol, subsample, stream_threshold, \
chunk_rows, max_rows : optional
        As the command's options (``python -m calibnb.audit --help``); None
        (the default) takes notebook 00's parameter of the same name
        (:func:`notebook_defaults`: 15 bins, 200 resamples, 5 folds, ...).

    Returns
    -------
    AuditResult

    Raises
    ------
    AuditInputError
        (a ``ValueError``) Any malformed input or option, naming the column or the option.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=300)                    # the model's P(class 1); the truth is nearer 0.5:
    >>> y = (rng.uniform(size=300) < 0.5 + 0.4 * (p - 0.5)).astype(int)   # overconfident
    >>> r = audit(pd.DataFrame({"y_prob": p, "y_true": y}), n_resamples=50, heavy_resamples=10, n_folds=3)
    >>> r.verdict["label"], bool(r.summary.set_index("key").loc["accuracy", "estimate"] == np.mean((p >= .5) == y))
    ('overconfident', True)
    """
    given = dict(n_bins=n_bins, n_resamples=n_resamples, heavy_resamples=heavy_resamples, n_folds=n_folds,
                 level=level, seed=seed, sum_tol=sum_tol, subsample=subsample, stream_threshold=stream_threshold,
                 chunk_rows=chunk_rows, max_rows=max_rows)
    settings = _check_settings({k: _default(k) if v is None else v for k, v in given.items()})
    options = dict(prob_prefix=prob_prefix, logit_prefix=logit_prefix, label=label, conf=conf, correct=correct,
                   vote_prefix=vote_prefix, weight=weight, binary_prob=binary_prob, positive=positive,
                   prob_columns=prob_columns, classes=classes)
    for key, value in options.items():
        if value is not None and not isinstance(value, (str, list, tuple)):
            raise AuditInputError(f"column '-': {key} must be a column name (str); got {type(value).__name__}.")
    if isinstance(prob_columns, (list, tuple)):
        options["prob_columns"] = ",".join(map(str, prob_columns))
    if isinstance(classes, (list, tuple)):
        options["classes"] = ",".join(map(str, classes))
    values = parse_scalar_values(",".join(map(str, scalar_values)) if isinstance(scalar_values, (list, tuple))
                                 else (scalar_values or ""))
    params = {"predictions_path": "", **{k: (v or "") for k, v in options.items()},
              "percent": bool(percent), "low_conf": bool(low_conf), "log_format": log_format or "",
              "source": source or "", "source_name": name or "",
              "scalar_values": "" if values is None else ",".join(map(str, values)), **settings}
    frame = None
    if data is None:  # the demo: a real network's outputs on the CIFAR-10 test set
        from .. import data as _data

        outputs = _data.load_cifar("cifar10", "resnet20")
        data = {"logits": outputs.logits, "labels": outputs.labels}
        name = name or "CIFAR-10 ResNet-20 (demo)"
        params["source_name"] = name
    if log_format:
        if not isinstance(data, (str, os.PathLike)):
            raise AuditInputError("column '-': log_format needs a path to the log file.")
        data = _read_log_frame(data, log_format)
        params["log_format"] = ""
    cols, frame, pathish = _frame_input(data, options, settings)
    sources = None
    llm_table = cols is not None and "confidence_source" in cols
    if llm_table:  # calibnb.llm's tidy table
        table = frame if frame is not None else pd.DataFrame(cols)
        sources = source_comparison(table, n_resamples=settings["n_resamples"], level=settings["level"],
                                    seed=settings["seed"], n_bins=min(settings["n_bins"], 15))
        names_ = list(dict.fromkeys(table["confidence_source"].astype(str)))
        chosen = source or names_[0]
        if chosen not in names_:
            raise AuditInputError(f"column 'confidence_source': --source {chosen!r} is not among {names_}.")
        sub = table[table["confidence_source"].astype(str) == chosen]
        keep = [c for c in sub.columns if c not in LLM_NOT_AUDITED]
        cols = read_columns(sub[keep].reset_index(drop=True))
        options.setdefault("conf", None)
        options["conf"] = options["conf"] or "confidence"
        options["correct"] = options["correct"] or "correct"
    read = dict(sum_tol=settings["sum_tol"], n_folds=settings["n_folds"], percent=bool(percent),
                low_conf=bool(low_conf) or llm_table, **options)
    if cols is not None:
        pred = predictions_from_columns(cols, **read)
        pred.source = name or "DataFrame"
        if llm_table:
            pred.notes.append(f"calibnb.llm's table: confidences below 0.5 accepted (answers with more than two "
                              "possible values)")
        if sources is not None:
            pred.notes.append(f"confidence source {chosen!r} of {len(sources['sources'])} "
                              f"({', '.join(sources['sources'])}); the sources are compared below")
        if llm_table:
            pred.notes.extend(llm_provenance(table))
    elif isinstance(pathish, Predictions):
        pred = pathish
        pred.source = name or "arrays"
    else:
        path = pathish
        params["predictions_path"] = str(path.absolute())
        pred = load_from_parameters({**params, "predictions_path": str(path)}, progress=progress)
        if name:
            pred.source = name
    if values is not None and pred.n_classes is not None and len(values) != pred.n_classes:
        raise AuditInputError(f"column '-': --scalar-values has {len(values)} values but there are "
                              f"{pred.n_classes} classes.")
    result = run_audit(pred, n_bins=settings["n_bins"], n_resamples=settings["n_resamples"],
                       heavy_resamples=settings["heavy_resamples"], n_folds=settings["n_folds"],
                       level=settings["level"], seed=settings["seed"], scalar_values=values,
                       subsample=settings["subsample"])
    if not params["source_name"] and pred.source:
        params["source_name"] = _display_name(pred.source)
    return AuditResult(pred, result, params, frame=frame, sources=sources)


# ------------------------------------------------------------------- writing the report

def _check_out_file(path: Path) -> None:
    if path.exists() and path.is_dir():
        raise AuditInputError(f"column '-': {path.name!r} is a folder; give a file name for the page.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise AuditInputError(f"column '-': the folder of {path.name!r} does not exist.")
    if not os.access(parent, os.W_OK):
        raise AuditInputError(f"column '-': cannot write into the folder of {path.name!r} (no permission).")


def check_out(out) -> Path:
    """Validate ``--out`` before any work: a folder (or a new name in a writable folder), not a file."""
    out = Path(out)
    if str(out).strip() == "":
        raise AuditInputError("column '-': --out is empty; give a folder.")
    out = out.absolute()
    if out.exists() and not out.is_dir():
        raise AuditInputError(f"column '-': --out {out.name!r} is a file, not a folder; give a folder for "
                              "audit.html and audit.json.")
    parent = out if out.exists() else out.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise AuditInputError(f"column '-': --out {out.name!r} cannot be created: {parent.name!r} above it is a "
                              "file, not a folder.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise AuditInputError(f"column '-': --out {out.name!r} cannot be written (no permission on its folder).")
    if out.exists() and not os.access(out, os.W_OK | os.X_OK):
        raise AuditInputError(f"column '-': --out {out.name!r} cannot be written (no permission).")
    _probe_writable(parent, out)
    return out


def _probe_writable(folder: Path, out: Path) -> None:
    """Create and remove a temporary folder in ``folder``: os.access says yes to root on a read-only mount or /proc."""
    import tempfile

    try:
        probe = tempfile.mkdtemp(prefix=".calibnb-audit-probe-", dir=folder)
    except OSError as exc:
        raise AuditInputError(f"column '-': --out {out.name!r} cannot be written: creating a folder there failed "
                              f"({exc.strerror or type(exc).__name__}).") from None
    os.rmdir(probe)


#: Files of one audit, swapped into --out together.
OUTPUT_FILES = ("audit.html", "audit.json", "audit.ipynb")

#: The page's Content-Security-Policy: no script, no network, images only as data: URLs.
CONTENT_SECURITY_POLICY = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
                           "script-src 'none'; base-uri 'none'; form-action 'none'")


def secure_page(page: str, *, paths=()) -> str:
    """Add the Content-Security-Policy meta tag; replace any given machine path by its base name."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
    page = re.sub(r"<head([^>]*)>", lambda m: f"<head{m.group(1)}>\n{meta}", page, count=1)
    for p in sorted({str(p) for p in paths if p}, key=len, reverse=True):
        page = page.replace(p, os.path.basename(p.rstrip("/")) or "-")
    return page


def _hide_code(nb_path: Path, out_path: Path) -> None:
    """A copy of the executed notebook whose code cells' inputs are removed at export (nbconvert's
    ``transient.remove_source``, as its TagRemovePreprocessor does); the cells and outputs stay."""
    import nbformat

    nb = nbformat.read(str(nb_path), as_version=4)
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell["id"] = "injected-parameters"  # papermill draws a random id: the page would differ run to run
        if cell.cell_type == "code":
            cell.metadata["transient"] = {"remove_source": True}  # what TagRemovePreprocessor sets
            cell.pop("execution_count", None)
            cell["execution_count"] = None
            cell["outputs"] = [o for o in cell.get("outputs", []) if o.get("output_type") != "stream"
                               or o.get("name") != "stderr"]
    nbformat.write(nb, str(out_path))


#: What the audit's notebook kernel gets in its environment, unless the caller's environment sets the same
#: variable (issue 27: an audit's peak memory under 1 GiB; measured in benchmarks/README.md).
_KERNEL_ENVIRONMENT = {
    # NumPy's path of the metrics: the same numbers bit for bit (tests/metrics/test_kernels_inmemory.py), without numba's
    # compiler and its compiled kernels in the kernel's memory (about 130 MiB at 10^5 rows)
    "CALIBNB_KERNEL": "numpy",
    # glibc: every allocation above 128 KiB (the bootstrap's blocks, the metrics' arrays) gets its own mapping,
    # returned to the system when freed; by default glibc raises this threshold after the first large free and then
    # keeps the freed arrays in its heaps (about 150 MiB of the audit's peak)
    "MALLOC_MMAP_THRESHOLD_": "131072",
}


@contextlib.contextmanager
def _kernel_environment(overrides: dict | None = None):
    """Set ``_KERNEL_ENVIRONMENT`` (or ``overrides``) in ``os.environ`` for a kernel started inside; restore after.

    A variable already set (by the user) is left as it is.

    Examples
    --------
    >>> import os
    >>> with _kernel_environment({"CALIBNB_DOCTEST_VAR": "1"}):
    ...     os.environ["CALIBNB_DOCTEST_VAR"]
    '1'
    >>> "CALIBNB_DOCTEST_VAR" in os.environ
    False
    """
    env = _KERNEL_ENVIRONMENT if overrides is None else overrides
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise TypeError(f"overrides must be a dict of str to str; got {type(env).__name__}.")
    added = [k for k in env if k not in os.environ]
    for k in added:
        os.environ[k] = env[k]
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def render_report(params: dict, folder: Path, *, timeout: float = AUDIT_TIMEOUT) -> dict:
    """Run notebook 00 with ``params`` into ``folder``: {"audit.ipynb", "audit.json", "audit.html": path}."""
    from .report import notebook_to_html, run_notebook

    folder.mkdir(parents=True, exist_ok=True)
    with _kernel_environment():
        run = run_notebook(NOTEBOOK, folder / "audit.ipynb", parameters=params, results_path=folder / "audit.json",
                           cwd=NOTEBOOK.parent, timeout=timeout)
    if not run.ok or run.results is None:
        if run.error and run.error.startswith("AuditInputError: "):  # bad input found by the kernel's read
            raise AuditInputError(run.error[len("AuditInputError: "):])
        raise RuntimeError(f"the audit notebook failed: {run.error}\n{run.traceback or ''}")
    hidden = folder / "hidden.ipynb"
    _hide_code(folder / "audit.ipynb", hidden)
    name = params.get("source_name") or _display_name(params.get("predictions_path")) or "predictions"
    page = notebook_to_html(hidden, title=f"Calibration audit of {name}")
    page = secure_page(page, paths=[params.get("predictions_path"), str(folder), str(folder.parent),
                                    str(NOTEBOOK.parent), str(Path.home())])
    (folder / "audit.html").write_text(page, encoding="utf-8")
    hidden.unlink()
    return {n: folder / n for n in OUTPUT_FILES}


class _OutLock:
    """An exclusive lock on ``--out`` (a file beside it): a second audit on the same folder fails clearly."""

    def __init__(self, out: Path):
        self.path = out.parent / f".{out.name}.calibnb-audit.lock"
        self.fd = None

    def __enter__(self):
        for _ in range(2):
            try:
                self.fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                os.write(self.fd, str(os.getpid()).encode())
                return self
            except FileExistsError:
                if not self._stale():
                    raise AuditInputError(
                        f"column '-': another audit is writing to --out {self.path.name[1:-len('.calibnb-audit.lock')]!r} "
                        f"right now (lock {self.path.name}); wait for it to finish or choose another --out.") from None
                self.path.unlink(missing_ok=True)
        raise AuditInputError(f"column '-': cannot lock --out (lock {self.path.name}).")

    def _stale(self) -> bool:
        try:
            pid = int(self.path.read_text() or "0")
        except (OSError, ValueError):
            return False
        if pid <= 0:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
        self.path.unlink(missing_ok=True)
        return False


def write_report(params: dict, out, *, timeout: float = AUDIT_TIMEOUT) -> Path:
    """Run the audit notebook and swap its three files into ``out`` together, under a lock on ``out``."""
    out = check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with _OutLock(out):
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            files = render_report(params, tmp / "run", timeout=timeout)
            out.mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=".incoming.", dir=out))
            for n in OUTPUT_FILES:
                shutil.copyfile(files[n], stage / n)
            for n in OUTPUT_FILES:
                os.replace(stage / n, out / n)
            stage.rmdir()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


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
    p.add_argument("--source", help="with several confidence sources (calibnb.llm's table), the one the verdict is "
                   "about (default: the first); all are compared")
    p.add_argument("--format", choices=LOG_FORMATS, help="an evaluation log of a language model, read by "
                   "calibnb.llm.read_log (one row per item and confidence source)")
    p.add_argument("--scalar-values", help="class values f_k for psi_f, comma-separated (default 1..0)")
    # the options of SETTING_NAMES: type, default and help from notebook 00's parameters cell, written only there
    types = {"int": int, "float": float}
    for name in SETTING_NAMES:
        spec = notebook_defaults()[name]
        p.add_argument("--" + name.replace("_", "-"), type=types[spec["type"]], default=spec["default"],
                       help=f"{spec['help']} (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=AUDIT_TIMEOUT,
                   help=f"seconds a notebook cell may run (default {AUDIT_TIMEOUT}); a cell over it fails the audit")
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
        "log_format": args.format or "", "source": args.source or "",
        "source_name": os.path.basename(str(args.predictions)),
        "scalar_values": args.scalar_values or "", "n_bins": args.n_bins, "n_resamples": args.n_resamples,
        "heavy_resamples": args.heavy_resamples, "n_folds": args.n_folds, "level": args.level, "seed": args.seed,
        "sum_tol": args.sum_tol, "subsample": args.subsample, "stream_threshold": args.stream_threshold,
        "chunk_rows": args.chunk_rows, "max_rows": args.max_rows,
    }


def load_from_parameters(params: dict, *, progress: bool = True) -> Predictions:
    """:func:`load_predictions`, or :func:`stream_predictions` above ``stream_threshold`` values, with the
    notebook's parameters ("" = infer; a missing setting: notebook 00's default)."""
    # only a missing setting is read from notebook 00: notebook 00 itself passes every one, so its kernel never
    # imports papermill (and nbformat, jsonschema) to read defaults it already has (about 2 s of CPU per audit)
    params = {**{k: _default(k) for k in SETTING_NAMES if k not in params}, **params}
    opt = {k: (params.get(k) or None) for k in INPUT_OPTIONS}
    opt.update(percent=bool(params.get("percent", False)), low_conf=bool(params.get("low_conf", False)))
    path = params["predictions_path"]
    if params.get("log_format"):
        return load_predictions(_read_log_frame(path, params["log_format"]), sum_tol=params["sum_tol"],
                                n_folds=params["n_folds"], **opt)
    size = file_size(path) if Path(path).exists() else None
    max_rows = params["max_rows"] or _default("max_rows")
    if size is not None and (size[0] * size[1] > params["stream_threshold"] or size[0] > max_rows):
        return stream_predictions(path, chunk_rows=params["chunk_rows"], subsample=params["subsample"],
                                  seed=params["seed"], n_bins=params["n_bins"],
                                  scalar_values=parse_scalar_values(params.get("scalar_values", "")),
                                  progress=progress, sum_tol=params["sum_tol"], n_folds=params["n_folds"],
                                  max_rows=max_rows, **opt)
    return load_predictions(path, sum_tol=params["sum_tol"], n_folds=params["n_folds"], **opt)


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
    """Run the audit; 0 on success, 2 on bad input or usage (nothing written), 1 if the notebook failed.

    Every option, ``--out`` and the whole input are validated before the
    notebook starts; the three output files are written to a temporary folder
    and swapped into ``--out`` together, under a lock (a second audit on the
    same ``--out`` fails with status 2 while the first runs).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    params = notebook_parameters(args)
    try:
        out = check_out(args.out)
        if not (np.isfinite(args.timeout) and args.timeout > 0):
            raise AuditInputError(f"column '-': --timeout must be a positive number of seconds; got {args.timeout}.")
        params.update(_check_settings({k: params[k] for k in SETTING_NAMES}))
        values = parse_scalar_values(args.scalar_values)
        pred = _validate_input(params)
        if values is not None and pred.n_classes is not None and len(values) != pred.n_classes:
            raise AuditInputError(f"column '-': --scalar-values has {len(values)} values but there are "
                                  f"{pred.n_classes} classes.")
    except AuditInputError as exc:
        print(f"calibnb.audit: error: {exc}", file=sys.stderr)
        return 2
    print(f"calibnb.audit: {pred.n_file or pred.n} rows, {pred.kind}"
          + (f", {pred.n_classes} classes" if pred.n_classes else "") + "; " + "; ".join(pred.notes), file=sys.stderr)
    del pred  # the notebook reads the file again: keep one copy in memory at a time
    _release_memory()
    start = time.perf_counter()
    try:
        write_report(params, out, timeout=args.timeout)
    except AuditInputError as exc:
        print(f"calibnb.audit: error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"calibnb.audit: {exc}", file=sys.stderr)
        return 1
    print(f"calibnb.audit: wrote {out.name}/audit.html and {out.name}/audit.json ({time.perf_counter() - start:.0f} s)")
    return 0


def _release_memory() -> None:
    """Give the freed heap back to the system (glibc keeps it otherwise) before the notebook's kernel starts."""
    import gc

    gc.collect()
    try:  # Arrow's own allocator (jemalloc/mimalloc) keeps freed Parquet buffers too
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except (ImportError, AttributeError):
        pass
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


def _validate_input(params: dict) -> Predictions:
    """Read and validate the input as the notebook will (nothing computed): AuditInputError naming the column.

    A file that the notebook will stream (more than ``max_rows`` rows or ``stream_threshold`` values) is checked
    here on its header and first rows only, so that the command never holds it twice; the notebook checks every
    chunk, and a bad value there still ends the command with status 2 and nothing written.
    """
    path = Path(params["predictions_path"])
    size = file_size(path) if not params.get("log_format") and path.is_file() else None
    if size is not None and (size[0] > (params.get("max_rows") or _default("max_rows"))
                             or size[0] * size[1] > params.get("stream_threshold", _default("stream_threshold"))):
        opt = {k: (params.get(k) or None) for k in INPUT_OPTIONS}
        first = next(iter(_chunks(path, min(int(params.get("chunk_rows") or _default("chunk_rows")), 10_000))), None)
        if first is None:
            raise AuditInputError(f"column '-': the file {path.name!r} has a header but no rows.")
        pred = predictions_from_columns(first, sum_tol=params["sum_tol"], check_classes=False,
                                        percent=bool(params.get("percent")), low_conf=bool(params.get("low_conf")),
                                        **opt)
        pred.n_file = size[0]
        pred.notes.append("large file: the first rows checked here, every chunk checked as it is read")
        return pred
    if params.get("log_format"):
        frame = _read_log_frame(params["predictions_path"], params["log_format"])
        if "confidence_source" in frame.columns:
            names_ = list(dict.fromkeys(frame["confidence_source"].astype(str)))
            chosen = params.get("source") or names_[0]
            if chosen not in names_:
                raise AuditInputError(f"column 'confidence_source': --source {chosen!r} is not among {names_}.")
            provenance = llm_provenance(frame)
            frame = frame[frame["confidence_source"].astype(str) == chosen]
            frame = frame[[c for c in frame.columns if c not in LLM_NOT_AUDITED]].reset_index(drop=True)
        else:
            provenance = []
        pred = load_predictions(frame, sum_tol=params["sum_tol"], n_folds=params["n_folds"],
                                low_conf=True, percent=bool(params.get("percent")),
                                **{k: (params.get(k) or None) for k in INPUT_OPTIONS})
        pred.notes.extend(provenance)
        return pred
    return load_from_parameters(params)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
