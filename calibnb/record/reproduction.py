"""The reproduction record: a notebook's claims, checked against its ledger, shown and saved.

Every notebook reproducing a paper has a **claims ledger**,
``notebooks/claims/<notebook stem>.yaml`` (schema: :func:`load_ledger`): one
entry per checkable statement of the paper, with its wording, locator, kind,
the paper's value, the tolerance and why, the sources the notebook checks it on
and the **expected status** with a one-line reason. The notebook builds one
:class:`Reproduction` from it and records every claim::

    rep = cn.Reproduction.from_ledger("claims/04_sakai2024_hmr.yaml", results_path=results_path)
    rep.check("hmr_x", ours=value, source="example1")                       # number
    rep.check("ts_lowers_ece", ours=d, interval=(lo, hi), source="cifar10")  # range with a CI
    rep.check("spline_best", ours=(k, n), source="cifar10")                 # count: k of n items
    rep.check("only_hmr_nbr_rank_x_first", ours=True, source="example1")    # verdict
    rep.identity("macroce_rewards", ours=a, expected=b, tol=1e-12)         # holds by construction
    rep.not_checkable("human_study")                                        # the reason is in the ledger
    rep.add_result(key, value)                                              # key numbers/tables
    rep.finish()               # statuses, results JSON, claims table
    rep.did_not_reproduce()    # the "What did not reproduce" section (its own cell)

Each check gives a per-source **outcome** ``holds``/``fails``/``inconclusive``
(see :meth:`Reproduction.check`); a claim's **status** (:func:`claim_status`)
is ``reproduces`` (holds on every source), ``partly`` (on some),
``does-not-reproduce`` (on none), ``not-checkable`` or ``identity``. A paper
claim that fails is a finding: it is recorded, shown and counted, never an
exception. :meth:`Reproduction.finish` raises :class:`ReproductionError` only
on a real error: a ledger claim or listed source not recorded. A record that
the ledger does not list (unknown id, unlisted source, a second record of the
same (id, source)) raises ``ValueError`` at once, and a failing identity
raises :class:`ReproductionError` at once: it is a bug, not a finding. The test
suite compares every computed status of a notebook's default run with the
ledger's ``expected`` (:func:`status_mismatches`).

The record without a ledger, ``Reproduction(paper)`` with
:meth:`Reproduction.claim` and :meth:`Reproduction.known_gap`, is
**deprecated**: it is kept while notebooks migrate, and its ``finish`` raises
when a claim fails.

Results JSON
------------
``Reproduction.finish`` writes (atomically: a temporary file in the same folder,
then :func:`os.replace`, so a reader never sees half a file)::

    {"paper": "...", "notebook": "<stem>", "ledger": "<path>",
     "counts": {"reproduces": n, "partly": n, "does-not-reproduce": n, "not-checkable": n,
                "identity": n, "checkable": n},
     "claims": [{"id", "quote", "locator", "kind", "paper", "tol", "tol_reason", "expected",
                 "reason", "status",
                 "sources": [{"source", "ours", "interval", "outcome"}, ...]}, ...],
     "results": {key: value, ...}}

in ledger order. A range, count or interval is a list ``[low, high]``, a count's
``ours`` is ``[k, n]``; an identity's source entry also has ``expected_value``.
The deprecated record writes ``{"paper", "claims": [{"name", "source",
"paper", "ours", "tol", "holds", "status", "difference", "reason"}],
"results"}`` with ``status`` ``"holds"``, ``"fails"`` or ``"known gap"``.

Values are made JSON-safe by :func:`to_jsonable`: NumPy scalars become Python
numbers, arrays become (nested) lists, a :class:`pandas.DataFrame` becomes
``{"index": [...], "columns": [...], "data": [[...], ...]}`` and a
:class:`pandas.Series` ``{"index": [...], "data": [...], "name": ...}`` (so
``pandas.DataFrame(**value)`` / ``pandas.Series(**value)`` rebuild them),
named tuples and dataclasses become objects, and the non-finite floats
``nan``, ``inf`` and ``-inf`` become the *strings* ``"nan"``, ``"inf"`` and
``"-inf"`` (strict JSON has no such numbers; :func:`from_json_float` reads them
back). The file is strict JSON (``allow_nan=False``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ..validation import check_choice, check_scalar_in_range

__all__ = [
    "Claim",
    "Ledger",
    "LedgerClaim",
    "LedgerError",
    "Markdown",
    "Reproduction",
    "ReproductionError",
    "SourceRecord",
    "claim_status",
    "claims_table_html",
    "did_not_reproduce_markdown",
    "interval_outcome",
    "load_ledger",
    "status_counts",
    "status_mismatches",
    "to_jsonable",
    "from_json_float",
    "write_json_atomic",
    "write_text_atomic",
]

STATUS_HOLDS = "holds"
STATUS_FAILS = "fails"
STATUS_GAP = "known gap"

_UMASK = os.umask(0o022)
os.umask(_UMASK)

_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class ReproductionError(AssertionError):
    """A real error of a reproduction record (never a paper claim that fails).

    Raised by :meth:`Reproduction.finish` when a ledger claim or source was not
    recorded, by :meth:`Reproduction.identity` when an identity does not hold
    and, for the deprecated record without a ledger, by ``finish`` when a claim
    does not hold. A subclass of ``AssertionError`` so that it reads like the
    failed ``assert`` of a notebook cell.
    """


# --------------------------------------------------------------------------- JSON


def _float_to_json(x: float) -> float | str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def from_json_float(value: Any) -> float:
    """Read back a number written by :func:`to_jsonable` (``"nan"``/``"inf"`` included).

    >>> from_json_float("inf"), from_json_float(0.25)
    (inf, 0.25)
    """
    if isinstance(value, str):
        if value in _NONFINITE:
            return _NONFINITE[value]
        raise ValueError(f"value must be a number or one of 'nan', 'inf', '-inf'; got {value!r}.")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"value must be a number; got {type(value).__name__} {value!r}.")
    return float(value)


def to_jsonable(value: Any, name: str = "value") -> Any:
    """Convert ``value`` into plain JSON types (see the module docstring).

    Parameters
    ----------
    value : object
        ``None``, bool, int, float, str, NumPy scalar or array, pandas
        DataFrame or Series, dict (keys str or integer), list, tuple, named
        tuple, dataclass instance or :class:`pathlib.Path`, nested freely.
    name : str
        Used in the error message for an unsupported value.

    Returns
    -------
    object
        Built from dict, list, str, int, float, bool and None only.

    Raises
    ------
    TypeError
        For any other type, naming ``name`` and the type.

    Examples
    --------
    >>> to_jsonable({"ece": np.float64(0.125), "bins": np.arange(3), "ks": float("inf")})
    {'ece': 0.125, 'bins': [0, 1, 2], 'ks': 'inf'}
    >>> to_jsonable(pd.DataFrame({"a": [1.0, np.nan]}, index=["x", "y"]))
    {'index': ['x', 'y'], 'columns': ['a'], 'data': [[1.0], ['nan']]}
    """
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _float_to_json(float(value))
    if isinstance(value, np.generic):  # complex, datetime, ...: not supported
        raise TypeError(f"{name} has unsupported NumPy type {type(value).__name__}.")
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"{name} is an array of unsupported dtype {value.dtype}.")
        return to_jsonable(value.tolist(), name)
    if isinstance(value, pd.DataFrame):
        return {
            "index": to_jsonable(list(value.index), f"{name}.index"),
            "columns": to_jsonable([str(c) for c in value.columns], f"{name}.columns"),
            "data": to_jsonable(value.to_numpy(dtype=object).tolist(), name),
        }
    if isinstance(value, pd.Series):
        return {
            "index": to_jsonable(list(value.index), f"{name}.index"),
            "data": to_jsonable(value.to_numpy(dtype=object).tolist(), name),
            "name": None if value.name is None else str(value.name),
        }
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, (bool, np.bool_)) or not isinstance(key, (str, numbers.Integral)):
                raise TypeError(f"{name} has a key of unsupported type {type(key).__name__}: {key!r}.")
            out[str(key)] = to_jsonable(item, f"{name}[{key!r}]")
        return out
    if isinstance(value, tuple) and hasattr(value, "_asdict"):  # named tuple
        return to_jsonable(dict(value._asdict()), name)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, name)
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item, f"{name}[{i}]") for i, item in enumerate(value)]
    raise TypeError(f"{name} has unsupported type {type(value).__name__}; use numbers, strings, "
                    "arrays, DataFrames, lists or dicts.")


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically and return the path.

    The text goes to a temporary file in the same folder, which is flushed,
    synced and then moved over ``path`` with :func:`os.replace`; if anything
    fails the temporary file is removed and an existing ``path`` is untouched.
    Missing parent folders are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the usual mode
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` (made JSON-safe by :func:`to_jsonable`) to ``path`` atomically."""
    text = json.dumps(to_jsonable(obj, "obj"), indent=2, allow_nan=False) + "\n"
    return write_text_atomic(path, text)


# ------------------------------------------------------------------------- claims


def _is_bool(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_))


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not _is_bool(x)


@dataclasses.dataclass(frozen=True)
class Claim:
    """One declared claim of a paper and its check.

    Attributes
    ----------
    name : str
        What is claimed, e.g. ``"Table 5: HMR(X)"``.
    paper : float or bool or tuple of float
        The paper's value: a number, a verdict, or a ``(low, high)`` range.
    ours : float or bool
        The value computed in this run.
    tol : float
        Allowed ``|ours - paper|`` for a number (0 for verdicts and ranges).
    source : str or None
        Where in the paper (``"Table 5"``, ``"§4.1.1"``).
    status : str
        ``"holds"``, ``"fails"`` or ``"known gap"``.
    reason : str or None
        Why a known gap is not reproducible.
    """

    name: str
    paper: Any
    ours: Any
    tol: float
    source: str | None
    status: str
    reason: str | None = None

    @property
    def holds(self) -> bool | None:
        """True/False for a claim; None for a known gap."""
        if self.status == STATUS_GAP:
            return None
        return self.status == STATUS_HOLDS

    @property
    def difference(self) -> float | None:
        """``ours - paper`` for a number; distance outside the range for a range.

        Signed: negative when ours is below the paper's value (or range).
        None for verdicts or when either side is not a number.
        """
        ours, paper = self.ours, self.paper
        if not _is_number(ours):
            return None
        if isinstance(paper, tuple):
            low, high = paper
            if ours < low:
                return float(ours - low)
            if ours > high:
                return float(ours - high)
            return 0.0
        if _is_number(paper):
            return float(ours - paper)
        return None

    def to_dict(self) -> dict:
        """The claim as a JSON-safe dict (the ``claims`` entries of the results JSON)."""
        paper = list(self.paper) if isinstance(self.paper, tuple) else self.paper
        return to_jsonable(
            {
                "name": self.name,
                "source": self.source,
                "paper": paper,
                "ours": self.ours,
                "tol": self.tol,
                "holds": self.holds,
                "status": self.status,
                "difference": self.difference,
                "reason": self.reason,
            },
            f"claim {self.name!r}",
        )


def _check_name(name: Any, existing: dict) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string; got {type(name).__name__} {name!r}.")
    if not name.strip():
        raise ValueError("name must be a non-empty string.")
    if name in existing:
        raise ValueError(f"name {name!r} is already declared; each claim needs its own name.")
    return name


def _check_source(source: Any) -> str | None:
    if source is not None and not isinstance(source, str):
        raise TypeError(f"source must be a string or None; got {type(source).__name__} {source!r}.")
    return source


def _scalar(value: Any, name: str) -> Any:
    """A claim value as a plain Python bool or float (NaN allowed for ours)."""
    if _is_bool(value):
        return bool(value)
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value.item()
        return _scalar(value, name)
    if _is_number(value):
        return float(value)
    raise TypeError(f"{name} must be a number or a bool; got {type(value).__name__} {value!r}.")


# ------------------------------------------------------------------------- ledger

KINDS = ("number", "range", "verdict", "count", "identity", "not-checkable")
STATUSES = ("reproduces", "partly", "does-not-reproduce", "not-checkable", "identity")
#: The statuses of a checkable claim (the ones that count towards "N of M reproduce").
CHECKABLE_STATUSES = ("reproduces", "partly", "does-not-reproduce")
OUTCOMES = ("holds", "fails", "inconclusive")
#: Display order of the claims table: what does not reproduce comes first.
STATUS_ORDER = ("does-not-reproduce", "partly", "not-checkable", "reproduces", "identity")

_REQUIRED_FIELDS = ("id", "quote", "locator", "kind", "expected", "reason")
_OPTIONAL_FIELDS = ("paper", "tol", "tol_reason", "sources")
_ID = re.compile(r"^[a-z][a-z0-9_]*$")


class LedgerError(ValueError):
    """A claims ledger (YAML) that does not follow the schema.

    The message names the file, the claim id (or position) and the field.
    """


@dataclasses.dataclass(frozen=True)
class LedgerClaim:
    """One entry of a claims ledger (see :func:`load_ledger` for the fields)."""

    id: str
    quote: str
    locator: str
    kind: str
    paper: Any
    tol: float | None
    tol_reason: str | None
    sources: tuple[str, ...]
    expected: str
    reason: str

    @property
    def checkable(self) -> bool:
        """True for the kinds checked against the paper (number, range, verdict, count)."""
        return self.kind not in ("identity", "not-checkable")

    def to_dict(self) -> dict:
        """The ledger fields as a JSON-safe dict."""
        return to_jsonable({"id": self.id, "quote": self.quote, "locator": self.locator, "kind": self.kind,
                            "paper": list(self.paper) if isinstance(self.paper, tuple) else self.paper,
                            "tol": self.tol, "tol_reason": self.tol_reason, "sources": list(self.sources),
                            "expected": self.expected, "reason": self.reason}, f"claim {self.id!r}")


@dataclasses.dataclass(frozen=True)
class Ledger:
    """A notebook's claims ledger: the paper, the notebook stem and the claims by id (file order)."""

    paper: str
    notebook: str
    claims: dict[str, LedgerClaim]
    path: Path

    def __len__(self) -> int:
        return len(self.claims)


def _where(path: Path, index: int, cid: Any) -> str:
    return f"ledger {path}, claim {cid!r}" if isinstance(cid, str) and cid else f"ledger {path}, claim #{index + 1}"


def _ledger_text(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise LedgerError(f"{where}, field {field!r}: must be a non-empty string; got {value!r}.")
    return value.strip()


def _ledger_number(value: Any, where: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise LedgerError(f"{where}, field {field!r}: must be a finite number; got {value!r}.")
    return float(value)


def _ledger_pair(value: Any, where: str, field: str, *, unit: bool = False) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise LedgerError(f"{where}, field {field!r}: must be a list [lo, hi]; got {value!r}.")
    lo, hi = (_ledger_number(v, where, field) for v in value)
    if lo > hi:
        raise LedgerError(f"{where}, field {field!r}: needs lo <= hi; got [{lo:g}, {hi:g}].")
    if unit and not (0.0 <= lo and hi <= 1.0):
        raise LedgerError(f"{where}, field {field!r}: a count's paper value is a fraction of items in [0, 1]; "
                          f"got [{lo:g}, {hi:g}].")
    return lo, hi


def _parse_ledger_claim(entry: Any, index: int, path: Path) -> LedgerClaim:
    if not isinstance(entry, dict):
        raise LedgerError(f"ledger {path}, claim #{index + 1}: must be a mapping of fields; got {entry!r}.")
    cid = entry.get("id")
    where = _where(path, index, cid)
    unknown = sorted(set(map(str, entry)) - set(_REQUIRED_FIELDS) - set(_OPTIONAL_FIELDS))
    if unknown:
        raise LedgerError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; the fields are "
                          f"{', '.join(_REQUIRED_FIELDS + _OPTIONAL_FIELDS)}.")
    for field in _REQUIRED_FIELDS:
        if field not in entry:
            raise LedgerError(f"{where}, field {field!r}: missing.")
    cid = _ledger_text(cid, where, "id")
    if not _ID.match(cid):
        raise LedgerError(f"{where}, field 'id': must be snake_case (a-z, 0-9, _; starting with a letter).")
    quote = _ledger_text(entry["quote"], where, "quote")
    locator = _ledger_text(entry["locator"], where, "locator")
    kind = entry["kind"]
    if kind not in KINDS:
        raise LedgerError(f"{where}, field 'kind': must be one of {', '.join(KINDS)}; got {kind!r}.")
    expected = entry["expected"]
    if expected not in STATUSES:
        raise LedgerError(f"{where}, field 'expected': must be one of {', '.join(STATUSES)}; got {expected!r}.")
    reason = _ledger_text(entry["reason"], where, "reason")
    # kind <-> expected
    if kind == "identity" and expected != "identity":
        raise LedgerError(f"{where}, field 'expected': a claim of kind 'identity' is expected 'identity'; "
                          f"got {expected!r}.")
    if kind == "not-checkable" and expected != "not-checkable":
        raise LedgerError(f"{where}, field 'expected': a claim of kind 'not-checkable' is expected "
                          f"'not-checkable'; got {expected!r}.")
    if kind in ("number", "range", "verdict", "count") and expected not in CHECKABLE_STATUSES:
        raise LedgerError(f"{where}, field 'expected': a claim of kind {kind!r} is expected one of "
                          f"{', '.join(CHECKABLE_STATUSES)}; got {expected!r} (use kind {expected!r} instead).")
    # paper value by kind
    paper = entry.get("paper")
    if kind == "number":
        if "paper" not in entry:
            raise LedgerError(f"{where}, field 'paper': missing (a number claim needs the paper's value).")
        paper = _ledger_number(paper, where, "paper")
    elif kind in ("range", "count"):
        if "paper" not in entry:
            raise LedgerError(f"{where}, field 'paper': missing (a {kind} claim needs [lo, hi]).")
        paper = _ledger_pair(paper, where, "paper", unit=kind == "count")
    elif kind == "verdict":
        if not isinstance(paper, bool):
            raise LedgerError(f"{where}, field 'paper': a verdict's paper value is true or false; got {paper!r}.")
    elif paper is not None:  # identity / not-checkable: the paper's value, for display only
        if isinstance(paper, (list, tuple)):
            paper = _ledger_pair(paper, where, "paper")
        elif not isinstance(paper, (bool, str)):
            paper = _ledger_number(paper, where, "paper")
    # tolerance: number kind only, with its reason
    tol = entry.get("tol")
    tol_reason = entry.get("tol_reason")
    if kind == "number":
        if tol is None:
            raise LedgerError(f"{where}, field 'tol': missing (a number claim needs a tolerance, 0 for exact).")
        tol = _ledger_number(tol, where, "tol")
        if tol < 0:
            raise LedgerError(f"{where}, field 'tol': must be >= 0; got {tol:g}.")
        tol_reason = _ledger_text(tol_reason, where, "tol_reason")
    else:
        if "tol" in entry:
            raise LedgerError(f"{where}, field 'tol': only a 'number' claim has a tolerance (kind is {kind!r}); "
                              "a range states its bounds in 'paper'.")
        if "tol_reason" in entry:
            raise LedgerError(f"{where}, field 'tol_reason': only a 'number' claim has a tolerance "
                              f"(kind is {kind!r}).")
    # sources
    sources = entry.get("sources")
    if kind == "not-checkable":
        if sources:
            raise LedgerError(f"{where}, field 'sources': a not-checkable claim is checked on no source; "
                              f"got {sources!r}.")
        sources = ()
    else:
        if sources is None:
            if kind != "identity":
                raise LedgerError(f"{where}, field 'sources': missing (list every source the notebook checks "
                                  "the claim on).")
            sources = ()
        if not isinstance(sources, (list, tuple)) or not all(isinstance(s, str) and s.strip() for s in sources):
            raise LedgerError(f"{where}, field 'sources': must be a list of non-empty strings; got {sources!r}.")
        if kind != "identity" and not sources:
            raise LedgerError(f"{where}, field 'sources': must list at least one source.")
        dup = sorted({s for s in sources if list(sources).count(s) > 1})
        if dup:
            raise LedgerError(f"{where}, field 'sources': lists {', '.join(map(repr, dup))} twice.")
        sources = tuple(sources)
    if expected == "partly" and len(sources) < 2:
        raise LedgerError(f"{where}, field 'expected': 'partly' needs at least two sources (holds on some, "
                          f"not others); the claim lists {len(sources)}.")
    return LedgerClaim(id=cid, quote=quote, locator=locator, kind=kind, paper=paper, tol=tol,
                       tol_reason=None if tol_reason is None else str(tol_reason).strip(), sources=sources,
                       expected=expected, reason=reason)


def load_ledger(path: str | os.PathLike) -> Ledger:
    """Read and validate a claims ledger (YAML).

    The file holds ``paper`` (str), ``notebook`` (the notebook's stem, equal to
    the file's stem) and ``claims``, a list of entries with the fields

    ``id`` (unique snake_case), ``quote`` (the paper's wording), ``locator``
    (section, table, figure, equation), ``kind`` (``number``, ``range``,
    ``verdict``, ``count``, ``identity``, ``not-checkable``), ``paper`` (a
    number; ``[lo, hi]`` for range, and for count as a fraction of items;
    ``true``/``false`` for verdict; optional for identity and not-checkable),
    ``tol`` and ``tol_reason`` (number kind only, both required there),
    ``sources`` (every source the notebook checks the claim on; none for
    not-checkable, optional for identity), ``expected`` (``reproduces``,
    ``partly``, ``does-not-reproduce``, ``not-checkable``, ``identity``) and
    ``reason`` (one line: why this status; for not-checkable, what is missing).

    Parameters
    ----------
    path : str or os.PathLike
        The YAML file.

    Returns
    -------
    Ledger

    Raises
    ------
    LedgerError
        (a ``ValueError``) naming the file, the claim and the field: unreadable
        or invalid YAML, unknown or missing fields, an unknown kind or status,
        duplicate ids, a ``tol`` on a non-number kind, a status that does not
        fit the kind, ``partly`` with fewer than two sources, an empty reason.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "nb.yaml").write_text('''
    ... paper: "Sakai 2024"
    ... notebook: nb
    ... claims:
    ...   - {id: hmr_x, quote: "HMR(X) = 0.557", locator: "Table 5", kind: number, paper: 0.557,
    ...      tol: 0.0005, tol_reason: "3 decimals", sources: [example1], expected: reproduces,
    ...      reason: "the paper's own data"}
    ... ''')
    >>> ledger = load_ledger(folder / "nb.yaml")
    >>> ledger.paper, list(ledger.claims), ledger.claims["hmr_x"].tol
    ('Sakai 2024', ['hmr_x'], 0.0005)
    """
    import yaml

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a path to a ledger YAML file; got {type(path).__name__}.")
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LedgerError(f"ledger {path} cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        raise LedgerError(f"ledger {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise LedgerError(f"ledger {path}: must be a mapping with paper, notebook and claims; "
                          f"got {type(data).__name__}.")
    unknown = sorted(set(map(str, data)) - {"paper", "notebook", "claims"})
    if unknown:
        raise LedgerError(f"ledger {path}: unknown top-level field(s) {', '.join(map(repr, unknown))}; "
                          "the fields are paper, notebook, claims.")
    for field in ("paper", "notebook", "claims"):
        if field not in data:
            raise LedgerError(f"ledger {path}, field {field!r}: missing.")
    paper = _ledger_text(data["paper"], f"ledger {path}", "paper")
    notebook = _ledger_text(data["notebook"], f"ledger {path}", "notebook")
    if notebook != path.stem:
        raise LedgerError(f"ledger {path}, field 'notebook': must be the notebook's stem, which is the file's "
                          f"stem {path.stem!r}; got {notebook!r}.")
    entries = data["claims"]
    if not isinstance(entries, list) or not entries:
        raise LedgerError(f"ledger {path}, field 'claims': must be a non-empty list of claims.")
    claims: dict[str, LedgerClaim] = {}
    for index, entry in enumerate(entries):
        item = _parse_ledger_claim(entry, index, path)
        if item.id in claims:
            raise LedgerError(f"ledger {path}, claim {item.id!r}, field 'id': duplicate id (claims "
                              f"#{list(claims).index(item.id) + 1} and #{index + 1}).")
        claims[item.id] = item
    return Ledger(paper=paper, notebook=notebook, claims=claims, path=path)


@dataclasses.dataclass(frozen=True)
class SourceRecord:
    """One recorded check of a ledger claim on one source.

    ``ours`` is our value (a float, a bool, ``(k, n)`` for a count, or for an
    identity the value compared); ``interval`` the ``(low, high)`` confidence
    interval if one was given; ``outcome`` ``holds``/``fails``/``inconclusive``;
    ``expected_value`` the value an identity was compared with.
    """

    source: str | None
    ours: Any
    interval: tuple[float, float] | None
    outcome: str
    expected_value: Any = None

    def to_dict(self) -> dict:
        out = {"source": self.source, "ours": list(self.ours) if isinstance(self.ours, tuple) else self.ours,
               "interval": None if self.interval is None else list(self.interval), "outcome": self.outcome}
        if self.expected_value is not None:
            out["expected_value"] = self.expected_value
        return to_jsonable(out, f"source {self.source!r}")


def claim_status(kind: str, outcomes: Sequence[str]) -> str:
    """The status of a claim from the outcomes on its sources.

    identity -> ``identity``; not-checkable -> ``not-checkable``; otherwise all
    sources hold -> ``reproduces``, some hold -> ``partly``, none holds ->
    ``does-not-reproduce`` (an ``inconclusive`` source does not hold).

    >>> claim_status("number", ["holds", "holds"]), claim_status("range", ["holds", "inconclusive"])
    ('reproduces', 'partly')
    >>> claim_status("verdict", ["fails", "inconclusive"])
    'does-not-reproduce'
    """
    kind = check_choice(kind, KINDS, "kind")
    if kind == "identity":
        return "identity"
    if kind == "not-checkable":
        return "not-checkable"
    if not outcomes:
        raise ValueError("outcomes must not be empty for a checkable claim.")
    n_holds = sum(o == "holds" for o in outcomes)
    if n_holds == len(outcomes):
        return "reproduces"
    return "partly" if n_holds else "does-not-reproduce"


def _interval_pair(value: Any, name: str) -> tuple[float, float]:
    """``(low, high)`` of two finite numbers with low <= high, or an error naming ``name``."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (low, high) of numbers; got {value!r}.") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"{name} must be a pair (low, high) of finite numbers with low <= high; got {value!r}.")
    return lo, hi


def interval_outcome(interval: tuple[float, float], target: tuple[float, float]) -> str:
    """``holds`` iff ``interval`` lies inside ``target``, ``fails`` iff disjoint, else ``inconclusive``.

    >>> interval_outcome((0.2, 0.3), (0.0, 0.5)), interval_outcome((0.6, 0.7), (0.0, 0.5))
    ('holds', 'fails')
    >>> interval_outcome((0.4, 0.7), (0.0, 0.5))
    'inconclusive'
    """
    lo, hi = _interval_pair(interval, "interval")
    t_lo, t_hi = _interval_pair(target, "target")
    if t_lo <= lo and hi <= t_hi:
        return "holds"
    if hi < t_lo or lo > t_hi:
        return "fails"
    return "inconclusive"


def _slack(*values: float) -> float:
    finite = [abs(v) for v in values if math.isfinite(v)]
    return 4 * np.finfo(float).eps * max([1.0] + finite)


def _fmt_short(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt_short(v) for v in value) + "]"
    return str(value)


def _criterion(kind: str, paper: Any, tol: Any) -> str:
    """The test a claim's value must pass, in words: the paper's number is in the
    claim's wording; for a range or a count the bounds are the ledger's reading of
    it (with its reason), not a number the paper printed."""
    if kind == "number":
        return f"{_fmt_short(paper)} ± {_fmt_short(tol)}" if tol is not None else _fmt_short(paper)
    if kind == "range" and isinstance(paper, (list, tuple)):
        return f"within [{_fmt_short(paper[0])}, {_fmt_short(paper[1])}]"
    if kind == "count" and isinstance(paper, (list, tuple)):
        return f"share in [{_fmt_short(paper[0])}, {_fmt_short(paper[1])}]"
    if kind == "verdict":
        return f"is {_fmt_short(paper)}"
    return _fmt_short(paper)


def _fmt_ours(kind: str, ours: Any) -> str:
    if kind == "count" and isinstance(ours, (list, tuple)) and len(ours) == 2:
        k, n = ours
        return f"{k}/{n} = {k / n:.3g}" if n else f"{k}/{n}"
    return _fmt_short(ours)


def status_mismatches(results: dict, ledger: Ledger | str | os.PathLike) -> list[str]:
    """Compare the computed statuses of a results JSON with a ledger's expected statuses.

    Parameters
    ----------
    results : dict
        A parsed results JSON written by :meth:`Reproduction.finish` of a
        ledger-based record.
    ledger : Ledger or path
        The ledger to compare with (usually the committed YAML file).

    Returns
    -------
    list of str
        One message per problem, naming the claim, both statuses and the ledger
        file to update; empty when every status is as expected. A ledger claim
        missing from the results, or a result claim missing from the ledger, is
        a problem too.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "nb.yaml").write_text(
    ...     "paper: p\\nnotebook: nb\\nclaims:\\n- {id: a, quote: q, locator: l, kind: verdict, paper: true,"
    ...     " sources: [s], expected: reproduces, reason: r}\\n")
    >>> status_mismatches({"claims": [{"id": "a", "status": "does-not-reproduce"}]}, folder / "nb.yaml")[0][:60]
    "claim 'a': computed status 'does-not-reproduce', ledger expe"
    """
    if not isinstance(ledger, Ledger):
        ledger = load_ledger(ledger)
    if not isinstance(results, dict) or not isinstance(results.get("claims"), list):
        raise ValueError("results must be a results JSON object with a 'claims' list.")
    computed = {c.get("id"): c.get("status") for c in results["claims"] if isinstance(c, dict)}
    problems = []
    for cid, item in ledger.claims.items():
        if cid not in computed:
            problems.append(f"claim {cid!r}: in ledger {ledger.path} but not in the results (not recorded?).")
        elif computed[cid] != item.expected:
            problems.append(f"claim {cid!r}: computed status {computed[cid]!r}, ledger expects {item.expected!r}; "
                            f"if the change is right, update 'expected' and 'reason' in {ledger.path}.")
    for cid in computed:
        if cid not in ledger.claims:
            problems.append(f"claim {cid!r}: in the results but not in ledger {ledger.path}.")
    return problems


class Markdown:
    """A markdown text that a notebook cell displays as markdown (and ``str()`` returns)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


_TABLE_CSS = """<style>
table.calibnb-claims { table-layout: fixed; width: 100%; max-width: 100%; border-collapse: collapse;
  font-size: 0.85em; }
table.calibnb-claims th, table.calibnb-claims td { border: 1px solid #ccc; padding: 0.25em 0.4em;
  vertical-align: top; text-align: left; white-space: normal; word-wrap: break-word;
  overflow-wrap: anywhere; }
table.calibnb-claims tr.does-not-reproduce td.status { color: #b00; font-weight: bold; }
table.calibnb-claims tr.partly td.status { color: #c60; font-weight: bold; }
table.calibnb-claims tr.not-checkable td.status { color: #777; }
table.calibnb-claims tr.reproduces td.status { color: #070; }
table.calibnb-claims tr.identity td.status { color: #557; }
table.calibnb-claims td.mismatch { background: #fee; }
</style>"""

#: Relative widths (percent) of the claims table's columns.
_TABLE_COLUMNS = [("claim (the paper's words)", 17), ("locator", 8), ("criterion", 8), ("ours", 13), ("interval", 10),
                  ("outcome", 8), ("status", 9), ("expected", 9), ("reason", 18)]


def claims_table_html(claims: Sequence[dict]) -> str:
    """The HTML claims table of a ledger-based results JSON's ``claims`` (with its CSS).

    One row per claim, non-reproducing claims first (order of
    :data:`STATUS_ORDER`, then ledger order); the per-source columns list one
    line per source. Cells wrap (``table-layout: fixed``, ``overflow-wrap``),
    so the table fits its container (no column cut off at 1280 px).
    """
    import html

    def cell(text: str, cls: str = "") -> str:
        attr = f" class='{cls}'" if cls else ""
        return f"<td{attr}>{text}</td>"

    def lines(values: Iterable[str]) -> str:
        return "<br>".join(html.escape(v) for v in values)

    order = {s: i for i, s in enumerate(STATUS_ORDER)}
    ranked = sorted(enumerate(claims), key=lambda ic: (order.get(ic[1].get("status"), len(order)), ic[0]))
    rows = []
    for _, c in ranked:
        sources = c.get("sources") or []
        tag = lambda s: f"{s['source']}: " if s.get("source") else ""  # noqa: E731
        paper = _criterion(c.get("kind"), c.get("paper"), c.get("tol"))
        ours = lines(tag(s) + _fmt_ours(c.get("kind"), s.get("ours")) for s in sources)
        interval = lines(tag(s) + _fmt_short(s.get("interval")) if s.get("interval") is not None else ""
                         for s in sources)
        outcome = lines(s.get("outcome", "") for s in sources)
        status, expected = str(c.get("status")), str(c.get("expected"))
        mismatch = "mismatch" if status != expected else ""
        rows.append(
            f"<tr class='{html.escape(status)}'>"
            + cell(f"<b>{html.escape(str(c.get('id')))}</b><br>{html.escape(str(c.get('quote', '')))}")
            + cell(html.escape(str(c.get("locator", "")))) + cell(html.escape(paper)) + cell(ours)
            + cell(interval) + cell(outcome) + cell(html.escape(status), f"status {mismatch}".strip())
            + cell(html.escape(expected), mismatch) + cell(html.escape(str(c.get("reason", "")))) + "</tr>")
    cols = "".join(f"<col style='width: {w}%'>" for _, w in _TABLE_COLUMNS)
    head = "".join(f"<th>{name}</th>" for name, _ in _TABLE_COLUMNS)
    return (f"{_TABLE_CSS}<table class='calibnb-claims'><colgroup>{cols}</colgroup><tr>{head}</tr>"
            + "".join(rows) + "</table>")


def status_counts(claims: Sequence[dict]) -> dict[str, int]:
    """Number of claims per status (every status of :data:`STATUSES`, zeros included)."""
    counts = {s: 0 for s in STATUSES}
    for c in claims:
        if c.get("status") in counts:
            counts[c["status"]] += 1
    return counts


def did_not_reproduce_markdown(results: dict) -> str:
    """The "What did not reproduce" section of a ledger-based results JSON, as markdown.

    Lists every claim that does not reproduce, then those that reproduce only
    partly (with the sources where they fail), with the paper's wording,
    locator, paper value, our values and the ledger's reason; then the claims
    that are not checkable with what is missing; then any claim whose computed
    status differs from the ledger's expectation.
    """
    claims = results["claims"]
    n = status_counts(claims)
    checkable = sum(n[s] for s in CHECKABLE_STATUSES)
    out = ["## What did not reproduce", "",
           f"{n['reproduces']} of {checkable} checkable claims of {results.get('paper', 'the paper')} reproduce; "
           f"{n['partly']} reproduce partly, {n['does-not-reproduce']} do not; {n['not-checkable']} cannot be "
           f"checked with public data; {n['identity']} identities hold by construction (not counted).", ""]

    def values(c: dict) -> str:
        parts = []
        for s in c.get("sources") or []:
            text = f"{s['source']}: {_fmt_ours(c.get('kind'), s.get('ours'))}"
            if s.get("interval") is not None:
                text += f" (interval {_fmt_short(s['interval'])})"
            parts.append(f"{text}, {s.get('outcome')}")
        return "; ".join(parts)

    def item(c: dict) -> str:
        paper = _criterion(c.get("kind"), c.get("paper"), c.get("tol"))
        return (f"- **{c['id']}** ({c.get('locator')}): “{c.get('quote')}” — paper {paper}; ours {values(c)}. "
                f"{c.get('reason')}")

    for status, title in (("does-not-reproduce", "Does not reproduce"), ("partly", "Reproduces partly")):
        chosen = [c for c in claims if c.get("status") == status]
        out.append(f"**{title}** ({len(chosen)}):")
        out.append("")
        out.extend([item(c) for c in chosen] or ["- none"])
        out.append("")
    gaps = [c for c in claims if c.get("status") == "not-checkable"]
    out.append(f"**Not checkable with public data** ({len(gaps)}):")
    out.append("")
    out.extend([f"- **{c['id']}** ({c.get('locator')}): “{c.get('quote')}” — {c.get('reason')}" for c in gaps]
               or ["- none"])
    surprises = [c for c in claims if c.get("status") != c.get("expected")]
    if surprises:
        out.append("")
        out.append(f"**Status differs from the ledger's expectation** ({len(surprises)}): "
                   + "; ".join(f"{c['id']} is {c.get('status')}, expected {c.get('expected')}" for c in surprises)
                   + ".")
    return "\n".join(out) + "\n"


# -------------------------------------------------------------------- the record


class Reproduction:
    """The record of one notebook's reproduction of one paper.

    Build it from the notebook's claims ledger with :meth:`from_ledger`; record
    every ledger claim with :meth:`check` (on each listed source),
    :meth:`identity` or :meth:`not_checkable`; add key results with
    :meth:`add_result`; end with :meth:`finish`, which computes every claim's
    status, writes the results JSON and shows the claims table, and raises only
    on a real error (a ledger claim or source not recorded). A paper claim that
    fails is a finding, never an exception. :meth:`did_not_reproduce` gives the
    "What did not reproduce" section for a notebook cell.

    ``Reproduction(paper, results_path=...)`` without a ledger is the
    **deprecated** record of :meth:`claim` and :meth:`known_gap` (kept until every
    notebook has a ledger); its :meth:`finish` raises when a claim fails.

    Parameters
    ----------
    paper : str
        Short name of the paper (e.g. ``"Sakai 2024"``).
    results_path : str or os.PathLike or None, keyword-only
        Where :meth:`finish` writes the results JSON; ``None`` writes nothing.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "nb.yaml").write_text('''
    ... paper: "Sakai 2024"
    ... notebook: nb
    ... claims:
    ...   - {id: hmr_x, quote: "HMR(X) = 0.557", locator: "§4.1.1", kind: number, paper: 0.557, tol: 0.0005,
    ...      tol_reason: "printed to 3 decimals", sources: [example1, example2], expected: partly,
    ...      reason: "holds on example1 only"}
    ...   - {id: ts_lowers, quote: "TS lowers ECE", locator: "Table 1", kind: range, paper: [0.0, 1.0],
    ...      sources: [cifar10], expected: reproduces, reason: "CI inside"}
    ...   - {id: avg_half, quote: "MacroCE = 50.00", locator: "Table 2", kind: identity,
    ...      expected: identity, reason: "(1 - a + a)/2"}
    ...   - {id: human, quote: "humans trust it", locator: "§5.4", kind: not-checkable,
    ...      expected: not-checkable, reason: "the human study's answers are not public"}
    ... ''')
    >>> rep = Reproduction.from_ledger(folder / "nb.yaml")
    >>> rep.check("hmr_x", ours=0.5573, source="example1")
    'holds'
    >>> rep.check("hmr_x", ours=0.61, source="example2")
    'fails'
    >>> rep.check("ts_lowers", ours=0.3, interval=(0.1, 0.5), source="cifar10")
    'holds'
    >>> rep.identity("avg_half", ours=0.5, expected=0.5)
    'holds'
    >>> rep.not_checkable("human")
    >>> rep.statuses()
    {'hmr_x': 'partly', 'ts_lowers': 'reproduces', 'avg_half': 'identity', 'human': 'not-checkable'}
    >>> rep.headline()
    'Sakai 2024: 1 of 2 checkable claims reproduce, 1 partly, 0 do not; 1 not checkable; 1 identity.'
    """

    def __init__(self, paper: str, *, results_path: str | os.PathLike | None = None) -> None:
        if not isinstance(paper, str) or not paper.strip():
            raise TypeError(f"paper must be a non-empty string; got {paper!r}.")
        if results_path is not None and not isinstance(results_path, (str, os.PathLike)):
            raise TypeError(f"results_path must be a path or None; got {type(results_path).__name__}.")
        if isinstance(results_path, str) and not results_path.strip():
            raise ValueError("results_path must not be an empty string; use None to write nothing.")
        self.paper = paper
        self.results_path = None if results_path is None else Path(results_path)
        self.ledger: Ledger | None = None
        self._claims: dict[str, Claim] = {}
        self._records: dict[str, dict[str | None, SourceRecord]] = {}
        self._results: dict[str, Any] = {}

    @classmethod
    def from_ledger(cls, path: str | os.PathLike, *,
                    results_path: str | os.PathLike | None = None) -> "Reproduction":
        """A record of the claims of the ledger at ``path`` (validated by :func:`load_ledger`).

        Parameters
        ----------
        path : str or os.PathLike
            The notebook's ledger, e.g. ``"claims/04_sakai2024_hmr.yaml"``
            (relative to the notebook's folder, where the kernel runs).
        results_path : str or os.PathLike or None, keyword-only
            Where :meth:`finish` writes the results JSON; ``None`` writes nothing.
        """
        ledger = load_ledger(path)
        rep = cls(ledger.paper, results_path=results_path)
        rep.ledger = ledger
        return rep

    # -- recording ledger claims -------------------------------------------------

    def _ledger_claim(self, cid: Any, method: str) -> LedgerClaim:
        if self.ledger is None:
            raise TypeError(f"{method}() needs a ledger: build the record with Reproduction.from_ledger(path).")
        if not isinstance(cid, str):
            raise TypeError(f"id must be a string; got {type(cid).__name__} {cid!r}.")
        if cid not in self.ledger.claims:
            raise ValueError(f"claim {cid!r} is not in ledger {self.ledger.path}; add it there (with quote, "
                             "locator, kind, paper, sources, expected and reason) before recording it.")
        item = self.ledger.claims[cid]
        wanted = {"check": item.checkable, "identity": item.kind == "identity",
                  "not_checkable": item.kind == "not-checkable"}[method]
        if not wanted:
            use = "check" if item.checkable else ("identity" if item.kind == "identity" else "not_checkable")
            raise ValueError(f"claim {cid!r} of ledger {self.ledger.path} is of kind {item.kind!r}; record it with "
                             f"rep.{use}(...), not rep.{method}(...).")
        return item

    def _source(self, item: LedgerClaim, source: Any) -> str | None:
        where = f"claim {item.id!r} of ledger {self.ledger.path}"
        if source is None:
            if item.sources:
                raise ValueError(f"source is required for {where}: one of {', '.join(item.sources)}.")
        else:
            if not isinstance(source, str):
                raise TypeError(f"source must be a string; got {type(source).__name__} {source!r}.")
            if source not in item.sources:
                listed = ", ".join(item.sources) if item.sources else "none (record it without source)"
                raise ValueError(f"source {source!r} is not listed for {where}; its sources are {listed}. "
                                 "Add the source to the ledger to check the claim there.")
        if source in self._records.get(item.id, {}):
            raise ValueError(f"{where} is already recorded" + (f" on source {source!r}" if source else "")
                             + "; record each (claim, source) once.")
        return source

    @staticmethod
    def _number(value: Any, name: str, cid: str) -> float:
        if isinstance(value, np.ndarray) and value.shape == ():
            value = value.item()
        if _is_bool(value) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} of claim {cid!r} must be a number; got {type(value).__name__} {value!r}.")
        return float(value)

    def check(self, id: str, *, ours: Any, source: str,
              interval: tuple[float, float] | None = None) -> str:
        """Record our value of a checkable ledger claim on one source; return the outcome.

        Parameters
        ----------
        id : str
            The claim's ledger id (kind ``number``, ``range``, ``verdict`` or ``count``).
        ours : float or bool or (int, int), keyword-only
            Our value: a number (number, range), a bool (verdict) or ``(k, n)``,
            k of n items (count).
        source : str, keyword-only
            One of the claim's ledger ``sources``; each (id, source) once.
        interval : (float, float), optional, keyword-only
            A confidence interval of ``ours`` (number and range kinds), e.g. from
            :func:`calibnb.bootstrap_ci`.

        Returns
        -------
        str
            ``"holds"``, ``"fails"`` or ``"inconclusive"``:

            * number: holds iff :math:`|ours - paper| \\le tol` (plus a few ulps);
            * range: holds iff :math:`lo \\le ours \\le hi`;
            * verdict: holds iff ``ours == paper``;
            * count: holds iff :math:`lo \\le k/n \\le hi`;
            * with an ``interval``, against the target :math:`[lo, hi]` (for a
              number :math:`[paper - tol, paper + tol]`): holds iff the interval
              lies inside the target, fails iff it is disjoint from it,
              inconclusive otherwise (within sampling noise).

            A NaN ``ours`` fails. A failing claim never raises; it is a finding.

        Raises
        ------
        ValueError, TypeError
            An id not in the ledger, a source not listed for it, a second record
            of the same (id, source), a value of the wrong type for the kind.
        """
        item = self._ledger_claim(id, "check")
        source = self._source(item, source)
        if interval is not None:
            if item.kind not in ("number", "range"):
                raise ValueError(f"interval is for number and range claims; claim {id!r} is of kind {item.kind!r}.")
            if not isinstance(interval, (tuple, list)) or len(interval) != 2:
                raise TypeError(f"interval of claim {id!r} must be a (low, high) pair; got {interval!r}.")
            low = check_scalar_in_range(interval[0], f"interval[0] (low) of claim {id!r}")
            high = check_scalar_in_range(interval[1], f"interval[1] (high) of claim {id!r}")
            if low > high:
                raise ValueError(f"interval of claim {id!r} must have low <= high; got ({low:g}, {high:g}).")
            interval = (low, high)
        if item.kind == "verdict":
            if not _is_bool(ours):
                raise TypeError(f"ours of verdict claim {id!r} must be a bool; got {type(ours).__name__} {ours!r}.")
            ours = bool(ours)
            outcome = "holds" if ours == item.paper else "fails"
        elif item.kind == "count":
            if (not isinstance(ours, (tuple, list)) or len(ours) != 2
                    or not all(isinstance(v, numbers.Integral) and not _is_bool(v) for v in ours)):
                raise TypeError(f"ours of count claim {id!r} must be (k, n), two integers; got {ours!r}.")
            k, n = int(ours[0]), int(ours[1])
            if n <= 0 or not 0 <= k <= n:
                raise ValueError(f"ours of count claim {id!r} must have 0 <= k <= n and n > 0; got ({k}, {n}).")
            ours = (k, n)
            lo, hi = item.paper
            outcome = "holds" if lo - _slack(lo) <= k / n <= hi + _slack(hi) else "fails"
        else:
            ours = self._number(ours, "ours", id)
            if item.kind == "number":
                target = (item.paper - item.tol, item.paper + item.tol)
                ok = abs(ours - item.paper) <= item.tol + _slack(item.paper, ours)
            else:
                target = item.paper
                ok = target[0] - _slack(target[0]) <= ours <= target[1] + _slack(target[1])
            if math.isnan(ours):
                outcome = "fails"
            elif interval is not None:
                outcome = interval_outcome(interval, (target[0] - _slack(target[0]), target[1] + _slack(target[1])))
            else:
                outcome = "holds" if ok else "fails"
        self._records.setdefault(id, {})[source] = SourceRecord(source, ours, interval, outcome)
        return outcome

    def identity(self, id: str, *, ours: Any, expected: Any, tol: float = 0.0, source: str | None = None) -> str:
        """Record an identity (true by construction) and check it; a failing identity raises.

        Parameters
        ----------
        id : str
            The ledger id of a claim of kind ``identity``.
        ours, expected : number, bool or array-like, keyword-only
            Our value and the value the identity gives; arrays are compared
            elementwise (same shape).
        tol : float, keyword-only
            Allowed :math:`\\max |ours - expected|` (numbers; bools must be equal).
        source : str, optional, keyword-only
            Required iff the ledger lists sources for the claim (then each once).

        Returns
        -------
        str
            ``"holds"``.

        Raises
        ------
        ReproductionError
            If the identity does not hold: that is a bug in the computation, not
            a finding about the paper.
        """
        item = self._ledger_claim(id, "identity")
        source = self._source(item, source)
        tol = check_scalar_in_range(tol, "tol", low=0.0)
        if _is_bool(ours) or _is_bool(expected):
            if not (_is_bool(ours) and _is_bool(expected)):
                raise TypeError(f"ours and expected of identity {id!r} must both be bools or both numbers.")
            ours_v, exp_v = bool(ours), bool(expected)
            holds = ours_v == exp_v
        else:
            a = np.asarray(ours, dtype=float) if not isinstance(ours, str) else None
            b = np.asarray(expected, dtype=float) if not isinstance(expected, str) else None
            if a is None or b is None:
                raise TypeError(f"ours and expected of identity {id!r} must be numbers, bools or arrays.")
            if a.shape != b.shape:
                raise ValueError(f"ours and expected of identity {id!r} must have the same shape; "
                                 f"got {a.shape} and {b.shape}.")
            diff = np.abs(a - b)
            worst = float(diff.max()) if diff.size else 0.0
            holds = bool(np.all(diff <= tol + _slack(float(np.nanmax(np.abs(b))) if b.size else 0.0)))
            if a.shape == ():
                ours_v, exp_v = float(a), float(b)
            else:
                ours_v, exp_v = {"max_abs_difference": worst, "shape": list(a.shape)}, None
        if not holds:
            where = f" on source {source!r}" if source else ""
            raise ReproductionError(f"identity {id!r} of ledger {self.ledger.path} fails{where}: ours {ours_v!r}, "
                                    f"expected {exp_v!r}, tol {tol:g}. An identity holds by construction, so this "
                                    "is a bug in the computation.")
        self._records.setdefault(id, {})[source] = SourceRecord(source, ours_v, None, "holds", exp_v)
        return "holds"

    def not_checkable(self, id: str) -> None:
        """Record that a ledger claim of kind ``not-checkable`` is shown as such (its reason is in the ledger)."""
        item = self._ledger_claim(id, "not_checkable")
        self._source(item, None)
        self._records.setdefault(id, {})[None] = SourceRecord(None, None, None, "not-checkable")

    # -- deprecated claims (no ledger) ------------------------------------------

    def claim(self, name: str, *, paper: Any, ours: Any, tol: float = 0.0,
              source: str | None = None) -> Claim:
        """Deprecated: declare and check one claim without a ledger; return the :class:`Claim`.

        Use a claims ledger and :meth:`check` instead (this method is removed
        once every notebook has a ledger). The claim holds iff

        * ``paper`` is a number: :math:`|\\text{ours} - \\text{paper}| \\le \\text{tol}`
          (up to a few ulps of floating-point slack; a NaN ``ours`` never holds);
        * ``paper`` is a bool: ``ours == paper`` (``ours`` must be a bool);
        * ``paper`` is a ``(low, high)`` tuple: :math:`\\text{low} \\le \\text{ours} \\le \\text{high}`.

        A failed claim does not raise here; :meth:`finish` raises at the end.
        """
        if self.ledger is not None:
            raise TypeError("claim() is the deprecated API without a ledger; this record has ledger "
                            f"{self.ledger.path}: use rep.check(id, ours=..., source=...).")
        name = _check_name(name, self._claims)
        source = _check_source(source)
        tol = check_scalar_in_range(tol, "tol", low=0.0)
        if _is_bool(paper):
            if not _is_bool(ours):
                raise TypeError(f"ours must be a bool when paper is a bool; got {type(ours).__name__} {ours!r}.")
            if tol != 0.0:
                raise ValueError(f"tol must be 0 for a bool claim; got {tol:g}.")
            paper, ours = bool(paper), bool(ours)
            holds = ours == paper
        elif isinstance(paper, tuple):
            if len(paper) != 2:
                raise ValueError(f"paper as a range must be a (low, high) tuple; got {len(paper)} values.")
            low = check_scalar_in_range(paper[0], "paper[0] (low)")
            high = check_scalar_in_range(paper[1], "paper[1] (high)")
            if low > high:
                raise ValueError(f"paper range must have low <= high; got ({low:g}, {high:g}).")
            if tol != 0.0:
                raise ValueError(f"tol must be 0 for a range claim (widen the range instead); got {tol:g}.")
            ours = self._number_ours(ours)
            paper = (low, high)
            holds = bool(low <= ours <= high)
        elif _is_number(paper) or (isinstance(paper, np.ndarray) and paper.shape == ()):
            paper = check_scalar_in_range(_scalar(paper, "paper"), "paper")
            ours = self._number_ours(ours)
            holds = bool(abs(ours - paper) <= tol + _slack(paper, ours))
        else:
            raise TypeError("paper must be a number, a bool or a (low, high) tuple; "
                            f"got {type(paper).__name__} {paper!r}.")
        item = Claim(name=name, paper=paper, ours=ours, tol=tol, source=source,
                     status=STATUS_HOLDS if holds else STATUS_FAILS)
        self._claims[name] = item
        return item

    @staticmethod
    def _number_ours(ours: Any) -> float:
        value = _scalar(ours, "ours")
        if isinstance(value, bool):
            raise TypeError(f"ours must be a number when paper is a number or a range; got bool {value!r}.")
        return value

    def known_gap(self, name: str, *, paper: Any, ours: Any, reason: str,
                  source: str | None = None) -> Claim:
        """Deprecated: declare a claim the project cannot reproduce, without a ledger.

        Use a ledger entry instead: ``does-not-reproduce`` with our number, or
        ``not-checkable`` naming the missing data. ``paper`` and ``ours`` may be
        numbers, bools, ranges or ``None``; the gap never makes :meth:`finish` raise.
        """
        if self.ledger is not None:
            raise TypeError("known_gap() is the deprecated API without a ledger; this record has ledger "
                            f"{self.ledger.path}: declare the claim there and record it with rep.check(...) "
                            "or rep.not_checkable(id).")
        name = _check_name(name, self._claims)
        source = _check_source(source)
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"reason must be a non-empty string saying why; got {reason!r}.")
        paper = tuple(float(v) for v in paper) if isinstance(paper, tuple) else (
            None if paper is None else _scalar(paper, "paper"))
        ours = None if ours is None else _scalar(ours, "ours")
        item = Claim(name=name, paper=paper, ours=ours, tol=0.0, source=source,
                     status=STATUS_GAP, reason=reason)
        self._claims[name] = item
        return item

    def add_result(self, key: str, value: Any) -> None:
        """Record a key result (number, dict, array, DataFrame, ...) for the JSON.

        The value is converted at once by :func:`to_jsonable`, so an unsupported
        type raises here, not at the end. A key given twice keeps the last value.
        """
        if not isinstance(key, str) or not key.strip():
            raise TypeError(f"key must be a non-empty string; got {key!r}.")
        self._results[key] = to_jsonable(value, key)

    # -- reading ---------------------------------------------------------------

    @property
    def claims(self) -> list[Claim]:
        """Deprecated record: the declared claims and known gaps, in declaration order."""
        return list(self._claims.values())

    @property
    def results(self) -> dict[str, Any]:
        """The recorded key results (already JSON-safe)."""
        return dict(self._results)

    @property
    def failed(self) -> list[Claim]:
        """Deprecated record: the claims that do not hold."""
        return [c for c in self._claims.values() if c.status == STATUS_FAILS]

    def missing(self) -> list[str]:
        """What the ledger lists but the notebook has not recorded: ``"id"`` or ``"id on source"``."""
        if self.ledger is None:
            return []
        out = []
        for cid, item in self.ledger.claims.items():
            recorded = self._records.get(cid, {})
            if not recorded:
                out.append(cid)
            else:
                out.extend(f"{cid} on {s}" for s in item.sources if s not in recorded)
        return out

    def _check_complete(self) -> None:
        missing = self.missing()
        if missing:
            raise ReproductionError(
                f"{len(missing)} claim(s) or source(s) of ledger {self.ledger.path} were not recorded: "
                + ", ".join(missing) + ". Record every ledger claim on every listed source (rep.check, "
                "rep.identity, rep.not_checkable), or remove it from the ledger.")

    def statuses(self) -> dict[str, str | None]:
        """Computed status per ledger claim (ledger order); ``None`` for a claim not (fully) recorded."""
        self._require_ledger("statuses")
        out: dict[str, str | None] = {}
        for cid, item in self.ledger.claims.items():
            recorded = self._records.get(cid, {})
            complete = bool(recorded) and all(s in recorded for s in item.sources)
            out[cid] = claim_status(item.kind, [r.outcome for r in recorded.values()]) if complete else None
        return out

    def _require_ledger(self, method: str) -> None:
        if self.ledger is None:
            raise TypeError(f"{method}() needs a ledger: build the record with Reproduction.from_ledger(path).")

    def claim_records(self) -> list[dict]:
        """The ``claims`` entries of the results JSON (ledger order; all claims must be recorded)."""
        self._require_ledger("claim_records")
        self._check_complete()
        statuses = self.statuses()
        out = []
        for cid, item in self.ledger.claims.items():
            entry = item.to_dict()
            recorded = self._records[cid]
            order = list(item.sources) or [None]
            entry["sources"] = [recorded[s].to_dict() for s in order if s in recorded]
            entry["status"] = statuses[cid]
            out.append(entry)
        return out

    def summary(self) -> pd.DataFrame:
        """The claims as a table.

        With a ledger: indexed by id, columns *quote, locator, kind, paper, tol,
        ours, interval, outcome, status, expected, reason* (per-source columns
        hold ``{source: value}``), non-reproducing claims first. Deprecated
        record: *paper | ours | difference | tolerance | holds | source | status
        | reason*, indexed by claim name.
        """
        if self.ledger is not None:
            order = {s: i for i, s in enumerate(STATUS_ORDER)}
            records = sorted(enumerate(self.claim_records()), key=lambda ic: (order[ic[1]["status"]], ic[0]))
            rows = {}
            for _, c in records:
                src = c["sources"]
                rows[c["id"]] = {
                    "quote": c["quote"], "locator": c["locator"], "kind": c["kind"], "paper": c["paper"],
                    "tol": c["tol"], "ours": {s["source"]: s["ours"] for s in src},
                    "interval": {s["source"]: s["interval"] for s in src if s["interval"] is not None},
                    "outcome": {s["source"]: s["outcome"] for s in src}, "status": c["status"],
                    "expected": c["expected"], "reason": c["reason"]}
            columns = ["quote", "locator", "kind", "paper", "tol", "ours", "interval", "outcome", "status",
                       "expected", "reason"]
            return pd.DataFrame.from_dict(rows, orient="index", columns=columns).astype(object)
        columns = ["paper", "ours", "difference", "tolerance", "holds", "source", "status", "reason"]
        rows = [
            {"paper": c.paper, "ours": c.ours, "difference": c.difference, "tolerance": c.tol,
             "holds": c.holds, "source": c.source, "status": c.status, "reason": c.reason}
            for c in self._claims.values()
        ]
        frame = pd.DataFrame(rows, columns=columns, index=pd.Index(list(self._claims)))
        return frame.astype(object)

    def counts(self) -> dict[str, int]:
        """Numbers of claims by status.

        With a ledger: one count per status of :data:`STATUSES` plus
        ``checkable`` (reproduces + partly + does-not-reproduce). Deprecated
        record: ``holds``, ``fails``, ``known_gaps`` and ``total`` (claims, not
        counting gaps).
        """
        if self.ledger is not None:
            self._check_complete()
            counts = status_counts([{"status": s} for s in self.statuses().values()])
            counts["checkable"] = sum(counts[s] for s in CHECKABLE_STATUSES)
            return counts
        statuses = [c.status for c in self._claims.values()]
        holds, fails, gaps = (statuses.count(s) for s in (STATUS_HOLDS, STATUS_FAILS, STATUS_GAP))
        return {"holds": holds, "fails": fails, "known_gaps": gaps, "total": holds + fails}

    def headline(self) -> str:
        """One line: how many claims reproduce (or, deprecated record, hold)."""
        n = self.counts()
        if self.ledger is not None:
            ident = f"{n['identity']} identit" + ("y" if n["identity"] == 1 else "ies")
            return (f"{self.paper}: {n['reproduces']} of {n['checkable']} checkable claims reproduce, "
                    f"{n['partly']} partly, {n['does-not-reproduce']} do not; {n['not-checkable']} not checkable; "
                    f"{ident}.")
        text = f"{self.paper}: {n['holds']} of {n['total']} claims hold"
        if n["known_gaps"]:
            text += f"; {n['known_gaps']} known gap" + ("s" if n["known_gaps"] != 1 else "")
        return text + "."

    def to_dict(self) -> dict:
        """The whole record as the results JSON object.

        With a ledger: ``{"paper", "notebook", "ledger", "counts", "claims",
        "results"}``, each claim with the ledger's fields (``id, quote, locator,
        kind, paper, tol, tol_reason, expected, reason``), ``sources: [{source,
        ours, interval, outcome}]`` and the computed ``status``.
        """
        if self.ledger is not None:
            return {"paper": self.paper, "notebook": self.ledger.notebook, "ledger": str(self.ledger.path),
                    "counts": self.counts(), "claims": self.claim_records(), "results": dict(self._results)}
        return {
            "paper": self.paper,
            "claims": [c.to_dict() for c in self._claims.values()],
            "results": dict(self._results),
        }

    def did_not_reproduce(self) -> Markdown:
        """The "What did not reproduce" section, generated from the record, as markdown.

        A notebook shows it in a cell of its own, after :meth:`finish` and before
        the exercises (:meth:`finish` shows the claims table, not this section).
        Raises :class:`ReproductionError` like :meth:`finish` if a ledger claim
        was not recorded.
        """
        self._require_ledger("did_not_reproduce")
        return Markdown(did_not_reproduce_markdown(self.to_dict()))

    def _repr_html_(self) -> str:
        import html

        if self.ledger is not None:
            return (f"<p><b>{html.escape(self.headline())}</b></p>\n"
                    + claims_table_html(self.claim_records()))
        table = self.summary().to_html(na_rep="", float_format=lambda x: f"{x:.4g}")
        return f"<p><b>{html.escape(self.headline())}</b></p>\n{table}"

    def __repr__(self) -> str:
        if self.ledger is not None and self.missing():
            return f"<Reproduction {self.paper}: ledger {self.ledger.path}, {len(self.missing())} not recorded yet>"
        return f"<Reproduction {self.headline()}>"

    # -- finishing ---------------------------------------------------------------

    def write(self, path: str | os.PathLike | None = None) -> Path | None:
        """Write the results JSON atomically to ``path`` (default ``results_path``)."""
        target = self.results_path if path is None else Path(path)
        if target is None:
            return None
        return write_json_atomic(target, self.to_dict())

    def finish(self) -> None:
        """Compute the statuses, write the results JSON (if ``results_path``) and show the claims table.

        With a ledger, raises only on a real error and then writes nothing:

        Raises
        ------
        ReproductionError
            A ledger claim, or one of its listed sources, was not recorded.
            (A record not in the ledger, on an unlisted source, recorded twice,
            or a failing identity raise at once, in the cell that records it.)
            Deprecated record: any claim that does not hold.
        """
        if self.ledger is not None:
            self._check_complete()
        self.write()
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:  # pragma: no cover - IPython comes with jupyterlab
            get_ipython = None
        if get_ipython is not None and get_ipython() is not None:
            display(self)
        else:
            print(self.headline())
            print(self.summary().to_string())
        if self.ledger is not None:
            return
        failed = self.failed
        if failed:
            lines = [f"  {c.name}: paper {c.paper!r}, ours {c.ours!r}, tol {c.tol:g}"
                     + (f" ({c.source})" if c.source else "") for c in failed]
            raise ReproductionError(
                f"{len(failed)} of {self.counts()['total']} claims of {self.paper} do not hold:\n"
                + "\n".join(lines))
