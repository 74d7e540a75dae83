"""The reproduction record: a notebook's claims, checked, shown and saved.

Every notebook reproducing a paper builds one :class:`Reproduction`. Each number
(or verdict) the paper states is declared with :meth:`Reproduction.claim`,
giving the paper's value, the value computed in this run and a tolerance; what
the project knowingly cannot reproduce is declared with
:meth:`Reproduction.known_gap` and a reason, so that it is shown rather than
hidden. :meth:`Reproduction.finish` writes everything to a JSON file (the
notebook's ``results_path`` parameter), displays the summary table and raises
:class:`ReproductionError` if any claim failed.

Results JSON
------------
``Reproduction.finish`` writes (atomically: a temporary file in the same folder,
then :func:`os.replace`, so a reader never sees half a file)::

    {"paper": "...",
     "claims": [{"name", "source", "paper", "ours", "tol", "holds", "status",
                 "difference", "reason"}, ...],
     "results": {key: value, ...}}

``status`` is ``"holds"``, ``"fails"`` or ``"known gap"``; ``holds`` is
``true``/``false`` for a claim and ``null`` for a known gap. A ``(low, high)``
paper value is written as the list ``[low, high]``.

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
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .validation import check_scalar_in_range

__all__ = [
    "Claim",
    "Reproduction",
    "ReproductionError",
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
    """Raised by :meth:`Reproduction.finish` when a claim does not hold.

    A subclass of ``AssertionError`` so that a failed reproduction reads like the
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


class Reproduction:
    """The record of one notebook's reproduction of one paper.

    Parameters
    ----------
    paper : str
        Short name of the paper (e.g. ``"Sakai 2024"``).
    results_path : str or os.PathLike or None, keyword-only
        Where :meth:`finish` writes the results JSON; ``None`` writes nothing.

    Examples
    --------
    >>> rep = Reproduction("Sakai 2024")
    >>> rep.claim("HMR(X)", paper=0.557, ours=0.5573, tol=0.0005, source="§4.1.1").status
    'holds'
    >>> rep.claim("only HMR and NBR rank X first", paper=True, ours=True).holds
    True
    >>> rep.claim("KS(X) in range", paper=(0.07, 0.08), ours=0.0778).holds
    True
    >>> _ = rep.known_gap("Table 7", paper=None, ours=None, reason="lost in extraction")
    >>> rep.add_result("n", 9)
    >>> rep.summary()[["holds", "status"]]
                                  holds     status
    HMR(X)                         True      holds
    only HMR and NBR rank X first  True      holds
    KS(X) in range                 True      holds
    Table 7                        None  known gap
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
        self._claims: dict[str, Claim] = {}
        self._results: dict[str, Any] = {}

    # -- declaring -------------------------------------------------------------

    def claim(self, name: str, *, paper: Any, ours: Any, tol: float = 0.0,
              source: str | None = None) -> Claim:
        """Declare and check one claim of the paper; return the :class:`Claim`.

        The claim holds iff

        * ``paper`` is a number: :math:`|\\text{ours} - \\text{paper}| \\le \\text{tol}`
          (up to a few ulps of floating-point slack; a NaN ``ours`` never holds);
        * ``paper`` is a bool: ``ours == paper`` (``ours`` must be a bool);
        * ``paper`` is a ``(low, high)`` tuple: :math:`\\text{low} \\le \\text{ours} \\le \\text{high}`.

        A failed claim does not raise here; :meth:`finish` raises at the end so
        that the whole table is shown first. Notebooks also ``assert`` in the
        cell that checks the claim.
        """
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
            # A few ulps of slack so that a value printed as the paper's rounded
            # number (e.g. 0.5565 against 0.557 +- 0.0005) is not refused by
            # the binary representation of the decimals.
            slack = 4 * np.finfo(float).eps * max(1.0, abs(paper), abs(ours) if math.isfinite(ours) else 0.0)
            holds = bool(abs(ours - paper) <= tol + slack)
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
        """Declare a claim the project knowingly cannot reproduce, with the reason.

        ``paper`` and ``ours`` may be numbers, bools, ranges or ``None`` (not
        available). The gap is shown in the summary and written to the JSON with
        status ``"known gap"``; it never makes :meth:`finish` raise.
        """
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
        """The declared claims and known gaps, in declaration order."""
        return list(self._claims.values())

    @property
    def results(self) -> dict[str, Any]:
        """The recorded key results (already JSON-safe)."""
        return dict(self._results)

    @property
    def failed(self) -> list[Claim]:
        """The claims that do not hold."""
        return [c for c in self._claims.values() if c.status == STATUS_FAILS]

    def summary(self) -> pd.DataFrame:
        """The claims as a table: paper | ours | difference | tolerance | holds | source.

        Indexed by claim name, with two more columns: ``status`` (``"holds"``,
        ``"fails"``, ``"known gap"``) and ``reason`` (for known gaps).
        """
        columns = ["paper", "ours", "difference", "tolerance", "holds", "source", "status", "reason"]
        rows = [
            {"paper": c.paper, "ours": c.ours, "difference": c.difference, "tolerance": c.tol,
             "holds": c.holds, "source": c.source, "status": c.status, "reason": c.reason}
            for c in self._claims.values()
        ]
        frame = pd.DataFrame(rows, columns=columns, index=pd.Index(list(self._claims)))
        return frame.astype(object)

    def counts(self) -> dict[str, int]:
        """Numbers of claims by status plus ``total`` (claims, not counting gaps)."""
        statuses = [c.status for c in self._claims.values()]
        holds, fails, gaps = (statuses.count(s) for s in (STATUS_HOLDS, STATUS_FAILS, STATUS_GAP))
        return {"holds": holds, "fails": fails, "known_gaps": gaps, "total": holds + fails}

    def headline(self) -> str:
        """One line: how many claims hold."""
        n = self.counts()
        text = f"{self.paper}: {n['holds']} of {n['total']} claims hold"
        if n["known_gaps"]:
            text += f"; {n['known_gaps']} known gap" + ("s" if n["known_gaps"] != 1 else "")
        return text + "."

    def to_dict(self) -> dict:
        """The whole record as the results JSON object."""
        return {
            "paper": self.paper,
            "claims": [c.to_dict() for c in self._claims.values()],
            "results": dict(self._results),
        }

    def _repr_html_(self) -> str:
        import html

        table = self.summary().to_html(na_rep="", float_format=lambda x: f"{x:.4g}")
        return f"<p><b>{html.escape(self.headline())}</b></p>\n{table}"

    def __repr__(self) -> str:
        return f"<Reproduction {self.headline()}>"

    # -- finishing ---------------------------------------------------------------

    def write(self, path: str | os.PathLike | None = None) -> Path | None:
        """Write the results JSON atomically to ``path`` (default ``results_path``)."""
        target = self.results_path if path is None else Path(path)
        if target is None:
            return None
        return write_json_atomic(target, self.to_dict())

    def finish(self) -> None:
        """Write the JSON (if ``results_path``), show the summary, raise if a claim failed.

        Raises
        ------
        ReproductionError
            Listing every claim that does not hold, with both values.
        """
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
        failed = self.failed
        if failed:
            lines = [f"  {c.name}: paper {c.paper!r}, ours {c.ours!r}, tol {c.tol:g}"
                     + (f" ({c.source})" if c.source else "") for c in failed]
            raise ReproductionError(
                f"{len(failed)} of {self.counts()['total']} claims of {self.paper} do not hold:\n"
                + "\n".join(lines))
