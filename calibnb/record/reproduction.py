"""The reproduction record: a notebook's claims, checked against its ledger by rules fixed in advance.

Every notebook reproducing a paper has a **claims ledger**,
``notebooks/claims/<notebook stem>.yaml`` (schema: :func:`load_ledger`): one
entry per checkable statement of the paper, with its wording, locator, how it
is recorded (``kind``), the **decision rule** that decides it (``rule``, one
of :data:`RULES`: value, direction, magnitude with the project-wide phrase
table :data:`PHRASES`, count), the paper's value, ``refuted_by`` (what we
would have to observe for the claim to be false; :func:`load_ledger` checks
that the rule rejects it), the sources the notebook checks it on and the
**expected status** with a one-line reason. The notebook builds one
:class:`Reproduction` from it and records every claim::

    rep = cn.Reproduction.from_ledger("claims/04_sakai2024_hmr.yaml", results_path=results_path)
    rep.check("hmr_x", ours=value, source="example1")                       # value
    rep.check("ts_lowers_ece", ours=d, interval=(lo, hi), source="cifar10")  # direction / magnitude with a CI
    rep.check("spline_best", ours=(k, n), source="cifar10")                 # count: k of n units
    rep.check("only_hmr_nbr_rank_x_first", ours=True, source="example1")    # a verdict (value rule)
    rep.identity("macroce_rewards", ours=a, expected=b, tol=1e-12)         # holds by construction
    rep.not_checkable("arch_resnet110", context={"resnet56 (ours)": v})    # context shown, never counted
    rep.add_result(key, value)                                              # key numbers/tables
    rep.finish()               # statuses, results JSON, claims table
    rep.did_not_reproduce()    # the generated section (its own cell)

Each check gives a per-source **outcome** ``holds``/``fails``/``inconclusive``
by the claim's rule (:func:`decide`); a claim's **status** (:func:`claim_status`,
table :data:`STATUS_TEXT`) is ``reproduces`` (every deciding source holds, at
least one decides), ``partly`` (some hold, some fail), ``does-not-reproduce``
(at least one fails, none holds), ``inconclusive`` (no source decides),
``not-checkable`` or ``by-construction`` (identities, and checks on
simulations built to exhibit the mechanism or on quantities unchanged in
expectation: shown, never counted). A paper claim that fails is a finding: it
is recorded, shown and counted, never an exception. :meth:`Reproduction.finish`
raises :class:`ReproductionError` only on a real error: a ledger claim or
listed source not recorded. A record that the ledger does not list (unknown
id, unlisted source, a second record of the same (id, source)) raises
``ValueError`` at once, and a failing identity raises
:class:`ReproductionError` at once: it is a bug, not a finding. The test
suite compares every computed status of a notebook's default run with the
ledger's ``expected`` (:func:`status_mismatches`).

Results JSON
------------
``Reproduction.finish`` writes (atomically: a temporary file in the same folder,
then :func:`os.replace`, so a reader never sees half a file)::

    {"paper": "...", "notebook": "<stem>", "ledger": "<path>",
     "counts": {"reproduces": n, "partly": n, "does-not-reproduce": n, "inconclusive": n,
                "not-checkable": n, "by-construction": n, "checkable": n},
     "claims": [{"id", "quote", "locator", "kind", "rule", "phrase", "threshold", "threshold_quote",
                 "measure_thresholds", "paper", "tol", "tol_reason", "refuted_by", "by_construction", "seed_sensitive",
                 "expected", "reason", "criterion", "status",
                 "sources": [{"source", "ours", "interval", "outcome"[, "context"]}, ...]}, ...],
     "results": {key: value, ...}}

in ledger order. A range, count or interval is a list ``[low, high]``, a count's
``ours`` is ``[k, n]`` (its ``interval`` the Clopper-Pearson interval); an
identity's source entry also has ``expected_value``, a not-checkable claim's
``context`` (our substitute's values, never counted).

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
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ..data import in_browser
from ..validation import check_choice, check_scalar_in_range

__all__ = [
    "CHECKABLE_STATUSES",
    "Ledger",
    "LedgerClaim",
    "LedgerError",
    "Markdown",
    "PHRASES",
    "RULES",
    "Reproduction",
    "ReproductionError",
    "STATUSES",
    "SourceRecord",
    "claim_status",
    "claims_table_html",
    "rule_target",
    "clopper_pearson",
    "criterion_text",
    "measure_thresholds_text",
    "decide",
    "did_not_reproduce_markdown",
    "findings_markdown",
    "interval_outcome",
    "load_ledger",
    "paper_summary",
    "restatus",
    "seed_split",
    "stability_text",
    "status_counts",
    "status_mismatches",
    "to_jsonable",
    "unmarked_flips",
    "from_json_float",
    "write_json_atomic",
    "write_text_atomic",
]

_UMASK = os.umask(0o022)
os.umask(_UMASK)

_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class ReproductionError(AssertionError):
    """A real error of a reproduction record (never a paper claim that fails).

    Raised by :meth:`Reproduction.finish` when a ledger claim or source was not
    recorded and by :meth:`Reproduction.identity` when an identity does not
    hold. A subclass of ``AssertionError`` so that it reads like the failed
    ``assert`` of a notebook cell.
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


# ------------------------------------------------------------------------- helpers


def _is_bool(x: Any) -> bool:
    return isinstance(x, (bool, np.bool_))


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not _is_bool(x)


# ------------------------------------------------------------------ the statuses

#: Outcome of one source: the rule decided for the claim, against it, or could not decide.
OUTCOMES = ("holds", "fails", "inconclusive")
#: Status of a claim (the one table of notebooks/README.md, "Statuses"):
#: ``reproduces`` every decisive source holds (at least one decides); ``partly`` some decisive sources hold,
#: some fail; ``does-not-reproduce`` at least one fails, none holds; ``inconclusive`` no source decides;
#: ``not-checkable`` the paper's data, model or network are not public (our substitute may be shown as
#: context, never counted); ``by-construction`` an identity, or a check on a simulation built to exhibit the
#: mechanism or on a quantity unchanged in expectation by the design (shown, never counted).
STATUSES = ("reproduces", "partly", "does-not-reproduce", "inconclusive", "not-checkable", "by-construction")
#: The statuses of a claim decided on our data (the ones the headline counts).
CHECKABLE_STATUSES = ("reproduces", "partly", "does-not-reproduce", "inconclusive")
#: Display order of the claims table: what does not reproduce comes first.
STATUS_ORDER = ("does-not-reproduce", "partly", "inconclusive", "not-checkable", "reproduces", "by-construction")
#: One-line meaning of each status (README table, report legend).
STATUS_TEXT = {
    "reproduces": "every source that decides holds (at least one decides)",
    "partly": "some deciding sources hold, some fail",
    "does-not-reproduce": "at least one source fails and none holds",
    "inconclusive": "no source decides (every interval straddles the rule's bound)",
    "not-checkable": "the paper's data, model or network are not public; our nearest substitute is shown as "
                     "context, never counted",
    "by-construction": "an identity, or a check on a simulation built to exhibit the mechanism or on a quantity "
                       "unchanged in expectation by the design: shown, never counted",
}


def claim_status(kind: str, outcomes: Sequence[str], *, by_construction: bool = False) -> str:
    """The status of a claim from the outcomes on its sources (table :data:`STATUS_TEXT`).

    ``identity`` kind or ``by_construction`` -> ``by-construction``;
    ``not-checkable`` -> ``not-checkable``; otherwise, counting only the
    deciding sources (``holds``/``fails``): none -> ``inconclusive``, all hold
    -> ``reproduces``, some hold -> ``partly``, none holds -> ``does-not-reproduce``.

    >>> claim_status("number", ["holds", "holds"]), claim_status("range", ["holds", "inconclusive"])
    ('reproduces', 'reproduces')
    >>> claim_status("verdict", ["fails", "inconclusive"]), claim_status("range", ["inconclusive"])
    ('does-not-reproduce', 'inconclusive')
    >>> claim_status("range", ["holds", "fails"]), claim_status("identity", ["holds"])
    ('partly', 'by-construction')
    """
    kind = check_choice(kind, KINDS, "kind")
    if not _is_bool(by_construction):
        raise TypeError(f"by_construction must be a bool; got {type(by_construction).__name__} {by_construction!r}.")
    if kind == "identity" or by_construction:
        return "by-construction"
    if kind == "not-checkable":
        return "not-checkable"
    if not outcomes:
        raise ValueError("outcomes must not be empty for a checkable claim.")
    for o in outcomes:
        check_choice(o, OUTCOMES, "outcomes")
    n_holds = sum(o == "holds" for o in outcomes)
    n_fails = sum(o == "fails" for o in outcomes)
    if n_holds + n_fails == 0:
        return "inconclusive"
    if n_fails == 0:
        return "reproduces"
    return "partly" if n_holds else "does-not-reproduce"


# ------------------------------------------------------------------- the rules
#
# Decision rules, fixed in advance by claim kind (notebooks/README.md, "Decision rules"). A ledger entry names
# its rule; it never invents a range. Everything below is the one place where an outcome is decided.

#: The four rules and what each decides.
RULES = {
    "value": "a value the paper prints: holds when the paper's value lies within our 95% interval widened by "
             "half a unit of the paper's last printed digit (tol), fails when outside; without an interval, "
             "abs(ours - paper) <= tol (the printed precision alone). A verdict the paper states about a value we "
             "compute exactly (its own data) is a value too: holds iff ours equals it.",
    "direction": "'A lowers B', 'A beats B': ours is the difference the paper signs, with its paired bootstrap "
                 "95% interval; the interval excludes 0 the paper's way -> holds, the other way -> fails, "
                 "otherwise inconclusive. Without an interval (an exact computation) the sign decides (0 is "
                 "inconclusive).",
    "magnitude": "a qualitative magnitude ('barely changes', 'much larger', 'stable', 'consistently'): the "
                 "phrase's threshold from the project-wide phrase table (PHRASES), or a per-claim threshold with "
                 "the paper's words that justify it; our interval inside the threshold -> holds, disjoint -> "
                 "fails, otherwise inconclusive (without an interval the point decides). A share of units gets "
                 "its 95% Clopper-Pearson interval.",
    "count": "a count over units ('9 of 13 networks'): our share k/n with its 95% Clopper-Pearson interval "
             "against the paper's share; holds iff the paper's share lies in our interval.",
}

#: The project-wide phrase table of the magnitude rule: phrase -> (measure, low, high). ``low``/``high`` bound
#: the measure (``inf`` where the phrase is one-sided). A ledger entry cites the phrase; the notebook records
#: the measure named here.
PHRASES: dict[str, tuple[str, float, float]] = {
    "significantly lowers": ("relative cut (before - after) / before", 0.30, math.inf),
    "much larger": ("ratio larger / smaller", 2.0, math.inf),
    "much larger margin": ("difference of two relative cuts (A's cut - B's cut)", 0.30, math.inf),
    "does not improve": ("relative change (after - before) / before", -0.10, 0.10),
    "barely changes": ("relative change (after - before) / before", -0.10, 0.10),
    # the largest spread Si et al. call stable is Table 5 after TS, 46.90 / 42.42 / 47.77: 0.117 of the mean
    "stable": ("relative range (max - min) / mean across the conditions", 0.0, 0.15),
    "highly sensitive": ("absolute range (max - min) across the conditions, in units of the metric", 0.20,
                         math.inf),
    "little difference": ("absolute difference, in units of the metric", 0.0, 0.02),
    "consistently": ("share of units", 0.80, 1.0),
    "usually": ("share of units", 0.50, 1.0),
    "rare": ("share of units", 0.0, 0.05),
    "consistent ranking": ("Kendall tau between the two rankings", 0.80, 1.0),
}

_Z95 = 0.95


def clopper_pearson(k: int, n: int, *, level: float = _Z95) -> tuple[float, float]:
    """The Clopper-Pearson (exact binomial) interval of the share ``k/n``.

    .. math::  [B^{-1}(\\alpha/2; k, n-k+1),\\; B^{-1}(1-\\alpha/2; k+1, n-k)]

    with :math:`B^{-1}` the Beta quantile and the ends 0 at k = 0, 1 at k = n
    (Clopper & Pearson 1934).

    >>> [round(v, 3) for v in clopper_pearson(9, 13)]
    [0.386, 0.909]
    """
    from scipy.stats import beta

    if isinstance(k, bool) or isinstance(n, bool) or not isinstance(k, numbers.Integral) \
            or not isinstance(n, numbers.Integral):
        raise TypeError(f"k and n must be integers; got {k!r} and {n!r}.")
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"k and n must have 0 <= k <= n and n > 0; got k={k}, n={n}.")
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0)
    alpha = 1.0 - level
    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def _slack(*values: float) -> float:
    finite = [abs(v) for v in values if math.isfinite(v)]
    return 4 * np.finfo(float).eps * max([1.0] + finite)


def _inside(x: float, lo: float, hi: float) -> bool:
    return lo - _slack(lo) <= x <= hi + _slack(hi)


def interval_outcome(interval: tuple[float, float], target: tuple[float, float]) -> str:
    """``holds`` iff ``interval`` lies inside ``target``, ``fails`` iff disjoint, else ``inconclusive``.

    >>> interval_outcome((0.2, 0.3), (0.0, 0.5)), interval_outcome((0.6, 0.7), (0.0, 0.5))
    ('holds', 'fails')
    >>> interval_outcome((0.4, 0.7), (0.0, 0.5))
    'inconclusive'
    """
    lo, hi = _interval_pair(interval, "interval")
    try:
        t_lo, t_hi = (float(v) for v in target)
    except (TypeError, ValueError):
        raise TypeError(f"target must be a pair (low, high) of numbers; got {target!r}.") from None
    if math.isnan(t_lo) or math.isnan(t_hi) or t_lo > t_hi:
        raise ValueError(f"target must be a pair (low, high) with low <= high; got {target!r}.")
    if _inside(lo, t_lo, t_hi) and _inside(hi, t_lo, t_hi):
        return "holds"
    if hi < t_lo - _slack(t_lo) or lo > t_hi + _slack(t_hi):
        return "fails"
    return "inconclusive"


def _interval_pair(value: Any, name: str) -> tuple[float, float]:
    """``(low, high)`` of two finite numbers with low <= high, or an error naming ``name``."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (low, high) of numbers; got {value!r}.") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"{name} must be a pair (low, high) of finite numbers with low <= high; got {value!r}.")
    return lo, hi


def rule_target(item: "LedgerClaim") -> tuple[float, float] | None:
    """The bounds our measure must lie in for ``item`` to hold, or None where the rule has none.

    magnitude: the phrase table's bounds or the ledger's quoted threshold;
    direction: ``(0, inf)`` (paper ``higher``) or ``(-inf, 0)``; value of a
    number: the paper's value ± tol; count and verdicts: None (a count's bound
    is our interval, a verdict has no range).
    """
    if not isinstance(item, LedgerClaim):
        raise TypeError(f"item must be a LedgerClaim (an entry of a loaded ledger); got {type(item).__name__}.")
    if item.rule == "magnitude":
        if item.threshold is not None:
            return item.threshold
        _, lo, hi = PHRASES[item.phrase]
        return lo, hi
    if item.rule == "direction":
        return (0.0, math.inf) if item.paper == "higher" else (-math.inf, 0.0)
    if item.rule == "value" and item.kind == "number":
        return item.paper - item.tol, item.paper + item.tol
    return None


def decide(item: "LedgerClaim", ours: Any, interval: tuple[float, float] | None = None) -> str:
    """The outcome of ``item``'s rule (:data:`RULES`) at our value ``ours`` (and its ``interval``).

    ``ours`` is a number (value, direction, magnitude), a bool (a verdict of
    the value rule) or ``(k, n)`` (count, or a magnitude over units). A NaN
    fails. Used by :meth:`Reproduction.check`, by :func:`load_ledger` at the
    entry's ``refuted_by`` (which must fail) and by the tests.
    """
    rule = item.rule
    if rule is None:
        raise ValueError(f"claim {item.id!r} of kind {item.kind!r} has no decision rule.")
    if isinstance(ours, (tuple, list)):  # (k, n): a share of units
        k, n = int(ours[0]), int(ours[1])
        if rule == "count":
            pk, pn = item.paper
            lo, hi = clopper_pearson(k, n)
            return "holds" if _inside(pk / pn, lo, hi) else "fails"
        if rule == "magnitude":
            return interval_outcome(clopper_pearson(k, n), rule_target(item))
        raise ValueError(f"claim {item.id!r}: rule {rule!r} takes a number, not a count {ours!r}.")
    if _is_bool(ours):
        if rule != "value" or not isinstance(item.paper, bool):
            raise ValueError(f"claim {item.id!r}: a bool is decided only by the value rule of a verdict.")
        return "holds" if bool(ours) == item.paper else "fails"
    ours = float(ours)
    if math.isnan(ours):
        return "fails"
    if rule == "value":
        p, tol = float(item.paper), float(item.tol)
        if interval is not None:
            lo, hi = interval
            return "holds" if _inside(p, lo - tol, hi + tol) else "fails"
        return "holds" if abs(ours - p) <= tol + _slack(p, ours) else "fails"
    if rule == "direction":
        sign = 1.0 if item.paper == "higher" else -1.0
        lo, hi = (ours, ours) if interval is None else interval
        lo, hi = sorted((sign * lo, sign * hi))
        if lo > 0:
            return "holds"
        if hi < 0:
            return "fails"
        return "inconclusive"
    if rule == "magnitude":
        t_lo, t_hi = rule_target(item)
        if interval is not None:
            return interval_outcome(interval, (t_lo, t_hi))
        return "holds" if _inside(ours, t_lo, t_hi) else "fails"
    raise ValueError(f"claim {item.id!r}: rule {rule!r} takes (k, n), not a number.")


def measure_thresholds_text(item: "LedgerClaim | dict") -> str:
    """The numbers that define a claim's measure, each shown as the paper's words or labelled as ours ("" if none).

    >>> measure_thresholds_text({"measure_thresholds": [{"value": 0.02, "defines": "an over-confident network: "
    ...     "top-1 KS above 2%", "ours": "our reading of several percent"}]})
    'the measure counts an over-confident network: top-1 KS above 2% (0.02; our threshold: our reading of several percent)'
    """
    items = item.get("measure_thresholds") if isinstance(item, dict) else getattr(item, "measure_thresholds", ())
    parts = []
    for m in items or ():
        label = f"the paper's “{m['quote']}”" if m.get("quote") else f"our threshold: {m['ours']}"
        parts.append(f"{m['defines']} ({_fmt_short(m['value'])}; {label})")
    return ("the measure counts " + "; ".join(parts)) if parts else ""


def criterion_text(item: "LedgerClaim | dict") -> str:
    """Our criterion in words, labelled as ours (never as the paper's), with the numbers that define its measure."""
    text = _criterion_rule_text(item)
    extra = measure_thresholds_text(item)
    return f"{text}; {extra}" if text and extra else (text or extra)


def _criterion_rule_text(item: "LedgerClaim | dict") -> str:
    get = (lambda k: item.get(k)) if isinstance(item, dict) else (lambda k: getattr(item, k))
    rule, paper, kind = get("rule"), get("paper"), get("kind")
    if rule == "value":
        if isinstance(paper, bool):
            return f"our rule (value): ours is {_fmt_short(paper)}"
        return (f"our rule (value): the paper's {_fmt_short(paper)} within ± {_fmt_short(get('tol'))} (half a printed "
                "unit) of our value, or of our 95% interval when we have one")
    if rule == "direction":
        return f"our rule (direction): our difference {'> 0' if paper == 'higher' else '< 0'}, its interval " \
               "excluding 0"
    if rule == "magnitude":
        threshold, phrase = get("threshold"), get("phrase")
        if threshold is not None:
            return (f"our rule (magnitude): measure in [{_fmt_short(threshold[0])}, {_fmt_short(threshold[1])}], "
                    f"a per-claim threshold justified by the paper's “{get('threshold_quote')}”")
        measure, lo, hi = PHRASES.get(phrase, ("?", math.nan, math.nan))
        return f"our rule (magnitude, phrase “{phrase}”): {measure} in [{_fmt_short(lo)}, {_fmt_short(hi)}]"
    if rule == "count":
        return (f"our rule (count): the paper's {int(paper[0])} of {int(paper[1])} within the 95% interval of "
                "our share")
    if kind == "identity":
        return "identity (by construction)"
    return ""


# ------------------------------------------------------------------------- ledger

KINDS = ("number", "range", "verdict", "count", "identity", "not-checkable")
#: Which rules each kind of record may use.
_KIND_RULES = {"number": ("value",), "verdict": ("value",), "range": ("direction", "magnitude"),
               "count": ("count", "magnitude")}

#: The ledger's JSON Schema (package data): fields, types and closed lists; load_ledger checks the rest.
_SCHEMA_FILE = "ledger.schema.json"


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
    rule: str | None = None
    phrase: str | None = None
    threshold: tuple[float, float] | None = None
    threshold_quote: str | None = None
    refuted_by: Any = None
    by_construction: str | None = None
    seed_sensitive: dict | None = None
    table: str | None = None
    measure_thresholds: tuple[dict, ...] = ()

    @property
    def checkable(self) -> bool:
        """True for the kinds checked against the paper (number, range, verdict, count)."""
        return self.kind not in ("identity", "not-checkable")

    def to_dict(self) -> dict:
        """The ledger fields as a JSON-safe dict."""
        return to_jsonable({"id": self.id, "quote": self.quote, "locator": self.locator, "kind": self.kind,
                            "rule": self.rule, "phrase": self.phrase,
                            "threshold": None if self.threshold is None else list(self.threshold),
                            "threshold_quote": self.threshold_quote,
                            "paper": list(self.paper) if isinstance(self.paper, tuple) else self.paper,
                            "tol": self.tol, "tol_reason": self.tol_reason, "sources": list(self.sources),
                            "refuted_by": list(self.refuted_by) if isinstance(self.refuted_by, tuple)
                            else self.refuted_by, "by_construction": self.by_construction,
                            "seed_sensitive": self.seed_sensitive, "table": self.table,
                            "measure_thresholds": [dict(m) for m in self.measure_thresholds],
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


def _ledger_number(value: Any, where: str, field: str, *, infinite: bool = False) -> float:
    if isinstance(value, str) and infinite and value.strip() in ("inf", "-inf", ".inf", "-.inf"):
        return math.inf if not value.strip().startswith("-") else -math.inf
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(float(value)) \
            or (not infinite and math.isinf(float(value))):
        raise LedgerError(f"{where}, field {field!r}: must be a finite number; got {value!r}.")
    return float(value)


def _ledger_pair(value: Any, where: str, field: str, *, infinite: bool = False) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise LedgerError(f"{where}, field {field!r}: must be a list [lo, hi]; got {value!r}.")
    lo, hi = (_ledger_number(v, where, field, infinite=infinite) for v in value)
    if lo > hi:
        raise LedgerError(f"{where}, field {field!r}: needs lo <= hi; got [{lo:g}, {hi:g}].")
    return lo, hi


def _ledger_count(value: Any, where: str, field: str) -> tuple[int, int]:
    if (not isinstance(value, (list, tuple)) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or value[1] <= 0 or not 0 <= value[0] <= value[1]):
        raise LedgerError(f"{where}, field {field!r}: must be a count [k, n], integers with 0 <= k <= n, n > 0; "
                          f"got {value!r}.")
    return int(value[0]), int(value[1])


def _ledger_schema() -> dict:
    """The ledger's JSON Schema, read from the package (``calibnb/record/ledger.schema.json``)."""
    from importlib import resources

    return json.loads(resources.files(__package__).joinpath(_SCHEMA_FILE).read_text(encoding="utf-8"))


def _schema_error_message(error: Any, data: Any, path: Path, schema: dict) -> str:
    """The message of one schema violation, naming the file, the claim (id or position) and the field."""
    at = list(error.absolute_path)
    kind = error.validator
    if len(at) < 2 or at[0] != "claims":  # the top level, or the claims list itself
        if not at and kind == "type":
            return f"ledger {path}: must be a mapping with paper, notebook and claims; got {type(data).__name__}."
        if not at and kind == "additionalProperties":
            unknown = sorted(set(map(str, data)) - set(schema["properties"]))
            return (f"ledger {path}: unknown top-level field(s) {', '.join(map(repr, unknown))}; "
                    f"the fields are {', '.join(schema['properties'])}.")
        if not at and kind == "required":
            field = next(f for f in error.validator_value if f not in data)
            return f"ledger {path}, field {field!r}: missing."
        if at == ["claims"]:
            return f"ledger {path}, field 'claims': must be a non-empty list of claims."
        return f"ledger {path}, field {at[0]!r}: must be a non-empty string; got {data[at[0]]!r}."
    index = at[1]
    entry = data["claims"][index]
    claim = schema["$defs"]["claim"]
    if len(at) == 2 and kind == "type":
        return f"ledger {path}, claim #{index + 1}: must be a mapping of fields; got {entry!r}."
    where = _where(path, index, entry.get("id"))
    fields = list(claim["properties"])
    if len(at) == 2 and kind == "additionalProperties":
        unknown = sorted(set(map(str, entry)) - set(fields))
        return f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; the fields are {', '.join(fields)}."
    if len(at) == 2 and kind == "required":
        field = next(f for f in error.validator_value if f not in entry)
        return f"{where}, field {field!r}: missing."
    field, value = at[2], entry[at[2]]
    if field == "id" and kind == "pattern":
        return f"{where}, field 'id': must be snake_case (a-z, 0-9, _; starting with a letter)."
    if "enum" in claim["properties"][field]:
        return f"{where}, field {field!r}: must be one of {', '.join(claim['properties'][field]['enum'])}; got {value!r}."
    if field == "tol" and kind == "minimum":
        return f"{where}, field 'tol': must be >= 0; got {value:g}."
    if field == "tol":
        return f"{where}, field 'tol': must be a finite number; got {value!r}."
    if field == "sources" and kind == "uniqueItems":
        dup = sorted({s for s in value if value.count(s) > 1})
        return f"{where}, field 'sources': lists {', '.join(map(repr, dup))} twice."
    if field == "sources":
        return f"{where}, field 'sources': must be a list of non-empty strings; got {value!r}."
    if field == "measure_thresholds":
        return (f"{where}, field 'measure_thresholds': must be a list of mappings with 'value' (a number), "
                f"'defines' (what it defines) and exactly one of 'quote' (the paper's words) or 'ours' (why, "
                f"labelled as ours); got {value!r}.")
    if field == "seed_sensitive":
        return (f"{where}, field 'seed_sensitive': must map two or more statuses to the number of seeds that gave "
                f"them (the measured split); got {value!r}.")
    return f"{where}, field {field!r}: must be a non-empty string; got {value!r}."


#: False once a ledger was loaded without its JSON Schema check (only in a browser kernel without
#: jsonschema, see :func:`load_ledger`).
LEDGER_SCHEMA_CHECKED = True


def _check_ledger_schema(data: Any, path: Path) -> None:
    """Validate ``data`` against the ledger schema; raise :class:`LedgerError` for the first violation.

    "First" is the file's order: the top level, then the claims in order; within
    a claim its type, unknown fields, missing fields, then the fields in the
    schema's order.

    In the browser site (Pyodide) jsonschema cannot be installed: its
    dependency rpds-py has no build in the site's verified package set. There
    the schema check is left out and said so in :data:`LEDGER_SCHEMA_CHECKED`;
    the ledgers the site carries are the committed ones, which the test suite
    validates on every commit, and the checks of several fields still run.
    """
    global LEDGER_SCHEMA_CHECKED
    try:
        import jsonschema
    except ImportError:
        if in_browser():
            LEDGER_SCHEMA_CHECKED = False
            return
        raise ImportError("calibnb.load_ledger validates a ledger with jsonschema, which is not installed: "
                          "pip install 'calibnb[notebooks]' (or jsonschema).") from None

    schema = _ledger_schema()
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if not errors:
        return
    fields = list(schema["$defs"]["claim"]["properties"])
    rank = {"type": 0, "additionalProperties": 1, "required": 2}

    def order(error: Any) -> tuple:
        at = list(error.absolute_path)
        if len(at) < 2 or at[0] != "claims":
            return (0, list(schema["properties"]).index(at[0]) if at else -1, rank.get(error.validator, 3))
        if len(at) == 2:
            return (1, at[1], -1, rank.get(error.validator, 3))
        return (1, at[1], fields.index(at[2]), rank.get(error.validator, 3))

    raise LedgerError(_schema_error_message(min(errors, key=order), data, path, schema))


def _parse_ledger_claim(entry: Any, index: int, path: Path) -> LedgerClaim:
    # The schema has checked the fields, their types and the closed lists (kind, expected); what follows
    # depends on several fields at once.
    cid = entry["id"]
    where = _where(path, index, cid)
    quote = entry["quote"].strip()
    locator = entry["locator"].strip()
    kind = entry["kind"]
    expected = entry["expected"]
    reason = entry["reason"].strip()
    by_construction = entry.get("by_construction")
    if by_construction is not None:
        by_construction = by_construction.strip()
        if kind not in _KIND_RULES:
            raise LedgerError(f"{where}, field 'by_construction': only a checked kind (number, range, verdict, "
                              f"count) can be a check by construction; kind is {kind!r}.")
    # kind <-> expected
    if (kind == "identity" or by_construction) and expected != "by-construction":
        raise LedgerError(f"{where}, field 'expected': an identity or a check by construction is expected "
                          f"'by-construction'; got {expected!r}.")
    if kind == "not-checkable" and expected != "not-checkable":
        raise LedgerError(f"{where}, field 'expected': a claim of kind 'not-checkable' is expected "
                          f"'not-checkable'; got {expected!r}.")
    if kind in _KIND_RULES and not by_construction and expected not in CHECKABLE_STATUSES:
        raise LedgerError(f"{where}, field 'expected': a claim of kind {kind!r} is expected one of "
                          f"{', '.join(CHECKABLE_STATUSES)}; got {expected!r}.")
    # the rule
    rule = entry.get("rule")
    if kind in _KIND_RULES:
        if rule is None:
            raise LedgerError(f"{where}, field 'rule': missing (name the decision rule: "
                              f"{', '.join(_KIND_RULES[kind])}).")
        if rule not in _KIND_RULES[kind]:
            raise LedgerError(f"{where}, field 'rule': a claim of kind {kind!r} is decided by "
                              f"{' or '.join(_KIND_RULES[kind])}; got {rule!r}.")
    elif rule is not None:
        raise LedgerError(f"{where}, field 'rule': a claim of kind {kind!r} has no decision rule; got {rule!r}.")
    phrase = entry.get("phrase")
    threshold = entry.get("threshold")
    threshold_quote = entry.get("threshold_quote")
    if rule == "magnitude":
        if (phrase is None) == (threshold is None):
            raise LedgerError(f"{where}, field 'phrase': a magnitude claim cites exactly one of 'phrase' (a key of "
                              f"the phrase table: {', '.join(PHRASES)}) or 'threshold' (with 'threshold_quote').")
        if phrase is not None and phrase not in PHRASES:
            raise LedgerError(f"{where}, field 'phrase': {phrase!r} is not in the phrase table; the phrases are "
                              f"{', '.join(PHRASES)} (or give 'threshold' with the paper's words in "
                              "'threshold_quote').")
        if threshold is not None:
            threshold = _ledger_pair(threshold, where, "threshold", infinite=True)
            threshold_quote = _ledger_text(threshold_quote, where, "threshold_quote")
        elif threshold_quote is not None:
            raise LedgerError(f"{where}, field 'threshold_quote': only with a per-claim 'threshold'.")
    else:
        for field in ("phrase", "threshold", "threshold_quote"):
            if field in entry:
                raise LedgerError(f"{where}, field {field!r}: only a claim of rule 'magnitude' has one "
                                  f"(rule is {rule!r}).")
    # paper value by rule
    paper = entry.get("paper")
    if rule == "value" and kind == "number":
        if "paper" not in entry:
            raise LedgerError(f"{where}, field 'paper': missing (a value claim needs the paper's value).")
        paper = _ledger_number(paper, where, "paper")
    elif rule == "value":
        if not isinstance(paper, bool):
            raise LedgerError(f"{where}, field 'paper': a verdict's paper value is true or false; got {paper!r}.")
    elif rule == "direction":
        if paper not in ("higher", "lower"):
            raise LedgerError(f"{where}, field 'paper': a direction claim's paper value is 'higher' (our "
                              f"difference > 0) or 'lower' (< 0); got {paper!r}.")
    elif rule == "count":
        paper = _ledger_count(paper, where, "paper")
    elif rule == "magnitude":
        if paper is not None and not isinstance(paper, str):
            paper = _ledger_number(paper, where, "paper") if not isinstance(paper, (list, tuple)) else \
                _ledger_pair(paper, where, "paper")
    elif paper is not None:  # identity / not-checkable: the paper's value, for display only
        if isinstance(paper, (list, tuple)):
            paper = _ledger_pair(paper, where, "paper")
        elif not isinstance(paper, (bool, str)):
            paper = _ledger_number(paper, where, "paper")
    # tolerance: the value rule of a number only, with its reason
    tol = entry.get("tol")
    tol_reason = entry.get("tol_reason")
    if kind == "number":
        if tol is None:
            raise LedgerError(f"{where}, field 'tol': missing (a number claim needs a tolerance, 0 for exact).")
        tol = _ledger_number(tol, where, "tol")  # the schema has checked tol >= 0; this refuses NaN and inf
        tol_reason = _ledger_text(tol_reason, where, "tol_reason")
    else:
        if "tol" in entry:
            raise LedgerError(f"{where}, field 'tol': only a 'number' claim has a tolerance (kind is {kind!r}); "
                              "a magnitude cites its phrase or threshold.")
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
        if kind != "identity" and not sources:
            raise LedgerError(f"{where}, field 'sources': must list at least one source.")
        sources = tuple(sources)
    if expected == "partly" and len(sources) < 2:
        raise LedgerError(f"{where}, field 'expected': 'partly' needs at least two sources (holds on some, "
                          f"not others); the claim lists {len(sources)}.")
    # seed sensitivity: the measured split of statuses over seeds
    seed_sensitive = entry.get("seed_sensitive")
    if seed_sensitive is not None:
        seed_sensitive = {str(s): int(v) for s, v in seed_sensitive.items()}
    table = entry.get("table")
    if table is not None:
        table = table.strip()
    # numbers that define the measure: each the paper's words or labelled ours (issue 26 item 2)
    measure_thresholds = tuple(
        {"value": float(m["value"]), "defines": m["defines"].strip(),
         **({"quote": m["quote"].strip()} if "quote" in m else {"ours": m["ours"].strip()})}
        for m in entry.get("measure_thresholds") or ())
    if measure_thresholds and not (kind in _KIND_RULES or by_construction):
        raise LedgerError(f"{where}, field 'measure_thresholds': only a checked claim has a measure to define "
                          f"(kind is {kind!r}).")
    item = LedgerClaim(id=cid, quote=quote, locator=locator, kind=kind, paper=paper, tol=tol,
                       tol_reason=None if tol_reason is None else str(tol_reason).strip(), sources=sources,
                       expected=expected, reason=reason, rule=rule, phrase=phrase, threshold=threshold,
                       threshold_quote=threshold_quote, by_construction=by_construction,
                       seed_sensitive=seed_sensitive, table=table, measure_thresholds=measure_thresholds)
    # refuted_by: what we would have to observe for the claim to be false; the rule must reject it
    refuted = entry.get("refuted_by")
    if kind in _KIND_RULES and not by_construction:
        if "refuted_by" not in entry:
            raise LedgerError(f"{where}, field 'refuted_by': missing (the value that would refute the claim; "
                              "its rule must reject it).")
        if rule in ("count",) or (rule == "magnitude" and kind == "count"):
            refuted = _ledger_count(refuted, where, "refuted_by")
        elif rule == "value" and kind == "verdict":
            if not isinstance(refuted, bool):
                raise LedgerError(f"{where}, field 'refuted_by': a verdict is refuted by true or false; "
                                  f"got {refuted!r}.")
        else:
            refuted = _ledger_number(refuted, where, "refuted_by")
        outcome = decide(item, refuted)
        if outcome != "fails":
            raise LedgerError(f"{where}, field 'refuted_by': the rule cannot reject the claim: at refuted_by "
                              f"{_fmt_short(refuted)} it gives {outcome!r}, not 'fails'. A criterion that "
                              "cannot fail is not a check.")
    elif refuted is not None:
        raise LedgerError(f"{where}, field 'refuted_by': only a checked claim (not by construction) has one.")
    return dataclasses.replace(item, refuted_by=refuted)


def load_ledger(path: str | os.PathLike) -> Ledger:
    """Read and validate a claims ledger (YAML).

    The fields, their types and the closed lists (kinds, statuses) are checked
    against the JSON Schema ``calibnb/record/ledger.schema.json`` (with
    ``jsonschema``, in the ``notebooks`` extra); what depends on several fields
    at once (the rule a kind takes, the paper value a rule needs, a
    ``refuted_by`` the rule must reject) is checked after it.

    The file holds ``paper`` (str), ``notebook`` (the notebook's stem, equal to
    the file's stem) and ``claims``, a list of entries with the fields

    ``id`` (unique snake_case), ``quote`` (the paper's wording), ``locator``
    (section, table, figure, equation), ``kind`` (how the notebook records it:
    ``number``, ``range``, ``verdict``, ``count``, ``identity``,
    ``not-checkable``), ``rule`` (how it is decided, :data:`RULES`: ``value``
    for number and verdict, ``direction`` or ``magnitude`` for range,
    ``count`` or ``magnitude`` for count), ``paper`` (value: a number or
    true/false; direction: ``higher``/``lower``; count: ``[k, n]``),
    ``phrase`` (magnitude: a key of :data:`PHRASES`) or ``threshold`` with
    ``threshold_quote`` (a per-claim threshold and the paper's words that
    justify it, verbatim: "..." for an omission, our remarks in [square
    brackets]), ``measure_thresholds`` (numbers that define the measure, each
    ``{value, defines, quote | ours}``: the paper's words or labelled ours;
    :func:`criterion_text` prints them), ``tol`` and ``tol_reason`` (number kind: half a unit of the
    paper's last printed digit), ``sources``, ``refuted_by`` (every checked
    claim not by construction: what we would have to observe for the claim to
    be false; the rule must give ``fails`` there), ``by_construction`` (a
    check on a simulation built to exhibit the mechanism, or on a quantity
    unchanged in expectation: why; status ``by-construction``),
    ``seed_sensitive`` (the measured split of statuses over seeds, e.g.
    ``{reproduces: 3, does-not-reproduce: 2}``), ``table`` (the claim is one
    cell of this printed table; the index counts the table as one claim),
    ``expected`` (a status of :data:`STATUSES`) and ``reason``.

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
        or invalid YAML, unknown or missing fields, an unknown kind, rule,
        phrase or status, duplicate ids, a ``tol`` on a non-number kind, a
        status that does not fit the kind, ``partly`` with fewer than two
        sources, an empty reason, a ``refuted_by`` that the rule does not reject.

    Examples
    --------
    >>> import tempfile, pathlib, yaml
    >>> claim = dict(id="hmr_x", quote="HMR(X) = 0.557", locator="Table 5", kind="number", rule="value",
    ...              paper=0.557, tol=0.0005, tol_reason="3 decimals", refuted_by=0.558, sources=["example1"],
    ...              expected="reproduces", reason="the paper's own data")
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "nb.yaml"
    >>> _ = path.write_text(yaml.safe_dump({"paper": "Sakai 2024", "notebook": "nb", "claims": [claim]}))
    >>> ledger = load_ledger(path)
    >>> ledger.paper, list(ledger.claims), ledger.claims["hmr_x"].tol
    ('Sakai 2024', ['hmr_x'], 0.0005)

    A violation names the file, the claim and the field:

    >>> _ = path.write_text(yaml.safe_dump({"paper": "Sakai 2024", "notebook": "nb", "claims": [dict(claim, tol=-1)]}))
    >>> load_ledger(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    calibnb.record.reproduction.LedgerError: ledger .../nb.yaml, claim 'hmr_x', field 'tol': must be >= 0; got -1.
    """
    import yaml

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a path to a ledger YAML file; got {type(path).__name__}.")
    path = Path(path)
    try:
        # libyaml's parser where PyYAML has it (the same objects as yaml.safe_load, tested; about 10x faster, and a
        # notebook reads its ledger several times), the pure-Python one elsewhere (e.g. a browser kernel)
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as exc:
        raise LedgerError(f"ledger {path} cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        raise LedgerError(f"ledger {path} is not valid YAML: {exc}") from None
    _check_ledger_schema(data, path)
    paper = data["paper"].strip()
    notebook = data["notebook"].strip()
    if notebook != path.stem:
        raise LedgerError(f"ledger {path}, field 'notebook': must be the notebook's stem, which is the file's "
                          f"stem {path.stem!r}; got {notebook!r}.")
    entries = data["claims"]
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
    interval if one was given (for a count, the Clopper-Pearson interval the
    rule used); ``outcome`` ``holds``/``fails``/``inconclusive`` (or
    ``not-checkable``); ``expected_value`` the value an identity was compared
    with; ``context`` our nearest substitute's values beside a not-checkable
    claim (shown, never counted).
    """

    source: str | None
    ours: Any
    interval: tuple[float, float] | None
    outcome: str
    expected_value: Any = None
    context: Any = None

    def to_dict(self) -> dict:
        out = {"source": self.source, "ours": list(self.ours) if isinstance(self.ours, tuple) else self.ours,
               "interval": None if self.interval is None else list(self.interval), "outcome": self.outcome}
        if self.expected_value is not None:
            out["expected_value"] = self.expected_value
        if self.context is not None:
            out["context"] = self.context
        return to_jsonable(out, f"source {self.source!r}")


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


def _criterion(c: dict) -> str:
    """The criterion column: ours, labelled as ours (the paper's value is in the claim's words)."""
    return criterion_text(c)


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
        A parsed results JSON written by :meth:`Reproduction.finish`.
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
    ...     "paper: p\\nnotebook: nb\\nclaims:\\n- {id: a, quote: q, locator: l, kind: verdict, rule: value,"
    ...     " paper: true, refuted_by: false, sources: [s], expected: reproduces, reason: r}\\n")
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
table.calibnb-claims tr.inconclusive td.status { color: #a80; }
table.calibnb-claims tr.not-checkable td.status { color: #777; }
table.calibnb-claims tr.reproduces td.status { color: #070; }
table.calibnb-claims tr.by-construction td.status { color: #557; }
table.calibnb-claims td.mismatch { background: #fee; }
</style>"""

#: Relative widths (percent) of the claims table's columns.
_TABLE_COLUMNS = [("claim (the paper's words)", 17), ("locator", 8), ("criterion (ours)", 12), ("ours", 12),
                  ("interval", 9), ("outcome", 7), ("status", 9), ("expected", 8), ("reason", 18)]


def _ours_text(c: dict, s: dict) -> str:
    if s.get("context") is not None:
        return "context: " + _fmt_short(s["context"]) if not isinstance(s["context"], dict) else \
            "context: " + ", ".join(f"{k} {_fmt_short(v)}" for k, v in s["context"].items())
    return _fmt_ours(c.get("kind"), s.get("ours"))


def claims_table_html(claims: Sequence[dict]) -> str:
    """The HTML claims table of a results JSON's ``claims`` (with its CSS).

    One row per claim, non-reproducing claims first (order of
    :data:`STATUS_ORDER`, then ledger order); the per-source columns list one
    line per source. The criterion column names our rule (labelled as ours); a
    claim with ``seed_stability`` (the report's claims) shows it under its status.
    Cells wrap (``table-layout: fixed``, ``overflow-wrap``), so the table fits
    its container (no column cut off at 1280 px).
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
        criterion = _criterion(c)
        ours = lines(tag(s) + _ours_text(c, s) for s in sources)
        interval = lines(tag(s) + _fmt_short(s.get("interval")) if s.get("interval") is not None else ""
                         for s in sources)
        outcome = lines(s.get("outcome", "") for s in sources)
        status, expected = str(c.get("status")), str(c.get("expected"))
        mismatch = "mismatch" if status != expected else ""
        rows.append(
            f"<tr class='{html.escape(status)}'>"
            + cell(f"<b>{html.escape(str(c.get('id')))}</b><br>{html.escape(str(c.get('quote', '')))}")
            + cell(html.escape(str(c.get("locator", "")))) + cell(html.escape(criterion)) + cell(ours)
            + cell(interval) + cell(outcome)
            + cell(html.escape(status) + (f"<br><small>{html.escape(c['seed_stability']['text'])}</small>"
                                          if (c.get("seed_stability") or {}).get("text") else ""),
                   f"status {mismatch}".strip())
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


#: Headings of the generated section, per status (in this order).
SECTION_HEADINGS = (
    ("erratum", "Errors in the paper"),
    ("does-not-reproduce", "Does not reproduce"),
    ("partly", "Reproduces partly"),
    ("inconclusive", "Could not be decided"),
    ("not-checkable", "Not checkable with public data"),
)


def _is_erratum(c: dict) -> bool:
    return c.get("status") == "does-not-reproduce" and "error in the paper" in str(c.get("reason", "")).lower()


def _values(c: dict) -> str:
    parts = []
    for s in c.get("sources") or []:
        text = f"{s['source']}: {_fmt_ours(c.get('kind'), s.get('ours'))}" if s.get("source") else \
            _fmt_ours(c.get("kind"), s.get("ours"))
        if s.get("interval") is not None:
            text += f" (95% interval {_fmt_short(s['interval'])})"
        parts.append(f"{text}, {s.get('outcome')}")
    return "; ".join(parts)


def _section_item(c: dict) -> str:
    if c.get("status") == "not-checkable":
        context = [s.get("context") for s in c.get("sources") or [] if s.get("context") is not None]
        extra = f" Our nearest substitute, as context only: {_fmt_short(context[0]) if not isinstance(context[0], dict) else ', '.join(f'{k} {_fmt_short(v)}' for k, v in context[0].items())}." if context else ""  # noqa: E501
        return f"- **{c['id']}** ({c.get('locator')}): the paper says “{c.get('quote')}”. {c.get('reason')}.{extra}"
    return (f"- **{c['id']}** ({c.get('locator')}): the paper says “{c.get('quote')}”. Ours: {_values(c)}. "
            f"Criterion — {_criterion(c)}. Why: {c.get('reason')}")


def findings_markdown(results: dict, *, limit: int = 5) -> str:
    """A "Findings" paragraph: the three to five results that matter most, generated from the record.

    Chosen in this order: errors in the paper, claims that do not reproduce,
    claims that reproduce only partly, then claims that could not be decided;
    each one sentence with our values. Nothing is typed in.
    """
    claims = results["claims"]
    n = status_counts(claims)
    checkable = sum(n[s] for s in CHECKABLE_STATUSES)
    lines = [f"**Findings.** Of {checkable} claims of {results.get('paper', 'the paper')} decided on our data, "
             f"{n['reproduces']} reproduce, {n['partly']} partly, {n['does-not-reproduce']} do not and "
             f"{n['inconclusive']} could not be decided; {n['not-checkable']} are not checkable and "
             f"{n['by-construction']} hold by construction (shown, not counted)."]
    ranked = ([c for c in claims if _is_erratum(c)]
              + [c for c in claims if c.get("status") == "does-not-reproduce" and not _is_erratum(c)]
              + [c for c in claims if c.get("status") == "partly"]
              + [c for c in claims if c.get("status") == "inconclusive"])
    for c in ranked[:limit]:
        label = "error in the paper" if _is_erratum(c) else str(c.get("status")).replace("-", " ")
        lines.append(f"*{c['id']}* ({label}): “{c.get('quote')}” — ours {_values(c)}.")
    return " ".join(lines)


def did_not_reproduce_markdown(results: dict) -> str:
    """The generated section of a results JSON, as markdown: findings, then the claims per status.

    A "Findings" paragraph (:func:`findings_markdown`), then headings per
    status (:data:`SECTION_HEADINGS`: "Errors in the paper", "Does not
    reproduce", "Reproduces partly", "Could not be decided", "Not checkable
    with public data"), each item the paper's words, our values, our criterion
    (labelled as ours) and why; then any claim whose computed status differs
    from the ledger's expectation.
    """
    claims = results["claims"]
    n = status_counts(claims)
    checkable = sum(n[s] for s in CHECKABLE_STATUSES)
    out = ["## What did not reproduce", "", findings_markdown(results), "",
           f"{n['reproduces']} of {checkable} decided claims of {results.get('paper', 'the paper')} reproduce; "
           f"{n['partly']} reproduce partly, {n['does-not-reproduce']} do not, {n['inconclusive']} could not be "
           f"decided; {n['not-checkable']} cannot be checked with public data; {n['by-construction']} hold by "
           "construction (identities and simulations built to show the mechanism; not counted).", ""]
    for key, title in SECTION_HEADINGS:
        if key == "erratum":
            chosen = [c for c in claims if _is_erratum(c)]
        elif key == "does-not-reproduce":
            chosen = [c for c in claims if c.get("status") == key and not _is_erratum(c)]
        else:
            chosen = [c for c in claims if c.get("status") == key]
        out.append(f"### {title} ({len(chosen)})")
        out.append("")
        out.extend([_section_item(c) for c in chosen] or ["- none"])
        out.append("")
    surprises = [c for c in claims if c.get("status") != c.get("expected")]
    if surprises:
        out.append(f"**Status differs from the ledger's expectation** ({len(surprises)}): "
                   + "; ".join(f"{c['id']} is {c.get('status')}, expected {c.get('expected')}" for c in surprises)
                   + ".")
    return "\n".join(out) + "\n"


# -------------------------------------------------------------------- the record


class Reproduction:
    """The record of one notebook's reproduction of one paper, against its claims ledger.

    Build it from the notebook's claims ledger with :meth:`from_ledger`; record
    every ledger claim with :meth:`check` (on each listed source),
    :meth:`identity` or :meth:`not_checkable`; add key results with
    :meth:`add_result`; end with :meth:`finish`, which computes every claim's
    status, writes the results JSON and shows the claims table, and raises only
    on a real error (a ledger claim or source not recorded). A paper claim that
    fails is a finding, never an exception. :meth:`did_not_reproduce` gives the
    generated section for a notebook cell.

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
    ...   - {id: hmr_x, quote: "HMR(X) = 0.557", locator: "§4.1.1", kind: number, rule: value, paper: 0.557,
    ...      tol: 0.0005, tol_reason: "printed to 3 decimals", refuted_by: 0.56, sources: [example1, example2],
    ...      expected: partly, reason: "holds on example1 only"}
    ...   - {id: ts_lowers, quote: "TS lowers ECE", locator: "Table 1", kind: range, rule: direction,
    ...      paper: higher, refuted_by: -0.1, sources: [cifar10], expected: reproduces, reason: "CI above 0"}
    ...   - {id: avg_half, quote: "MacroCE = 50.00", locator: "Table 2", kind: identity,
    ...      expected: by-construction, reason: "(1 - a + a)/2"}
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
    {'hmr_x': 'partly', 'ts_lowers': 'reproduces', 'avg_half': 'by-construction', 'human': 'not-checkable'}
    >>> rep.headline()
    'Sakai 2024: 1 of 2 decided claims reproduce, 1 partly, 0 do not, 0 inconclusive; 1 not checkable; 1 by construction.'
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

    def _require_ledger(self, method: str) -> None:
        if self.ledger is None:
            raise TypeError(f"{method}() needs a ledger: build the record with Reproduction.from_ledger(path).")

    def _ledger_claim(self, cid: Any, method: str) -> LedgerClaim:
        self._require_ledger(method)
        if not isinstance(cid, str):
            raise TypeError(f"id must be a string; got {type(cid).__name__} {cid!r}.")
        if cid not in self.ledger.claims:
            raise ValueError(f"claim {cid!r} is not in ledger {self.ledger.path}; add it there (with quote, "
                             "locator, kind, rule, paper, sources, expected and reason) before recording it.")
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
            k of n units (count).
        source : str, keyword-only
            One of the claim's ledger ``sources``; each (id, source) once.
        interval : (float, float), optional, keyword-only
            The 95% confidence interval of ``ours`` (number and range kinds),
            e.g. from :func:`calibnb.bootstrap_ci` (paired, for a direction).

        Returns
        -------
        str
            ``"holds"``, ``"fails"`` or ``"inconclusive"``, by the claim's rule
            (:data:`RULES`, :func:`decide`). A NaN ``ours`` fails. A failing
            claim never raises; it is a finding.

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
        elif item.kind == "count":
            if (not isinstance(ours, (tuple, list)) or len(ours) != 2
                    or not all(isinstance(v, numbers.Integral) and not _is_bool(v) for v in ours)):
                raise TypeError(f"ours of count claim {id!r} must be (k, n), two integers; got {ours!r}.")
            k, n = int(ours[0]), int(ours[1])
            if n <= 0 or not 0 <= k <= n:
                raise ValueError(f"ours of count claim {id!r} must have 0 <= k <= n and n > 0; got ({k}, {n}).")
            ours = (k, n)
            interval = clopper_pearson(k, n)
        else:
            ours = self._number(ours, "ours", id)
        outcome = decide(item, ours, None if item.kind == "count" else interval)
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

    def not_checkable(self, id: str, *, context: Any = None) -> None:
        """Record a ledger claim of kind ``not-checkable`` (its reason is in the ledger).

        ``context`` (optional, keyword-only): our nearest substitute's value(s),
        e.g. ``{"resnet56 (ours)": 0.031}`` beside the paper's ResNet-110; shown
        beside the claim, never decided or counted.
        """
        item = self._ledger_claim(id, "not_checkable")
        self._source(item, None)
        context = None if context is None else to_jsonable(context, f"context of claim {id!r}")
        self._records.setdefault(id, {})[None] = SourceRecord(None, None, None, "not-checkable", context=context)

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
    def results(self) -> dict[str, Any]:
        """The recorded key results (already JSON-safe)."""
        return dict(self._results)

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
        self._require_ledger("finish")
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
            out[cid] = claim_status(item.kind, [r.outcome for r in recorded.values()],
                                    by_construction=bool(item.by_construction)) if complete else None
        return out

    def target(self, id: str) -> tuple[float, float] | None:
        """The bounds our measure must lie in for claim ``id`` (:func:`rule_target`), e.g. to shade a figure."""
        self._require_ledger("target")
        if id not in self.ledger.claims:
            raise ValueError(f"claim {id!r} is not in ledger {self.ledger.path}.")
        return rule_target(self.ledger.claims[id])

    def value(self, id: str, source: str | None = None) -> Any:
        """Our recorded value of claim ``id`` on ``source`` (for result sentences generated from the run)."""
        self._require_ledger("value")
        recorded = self._records.get(id, {})
        if source not in recorded:
            raise KeyError(f"claim {id!r} is not recorded on source {source!r}.")
        return recorded[source].ours

    def claim_records(self) -> list[dict]:
        """The ``claims`` entries of the results JSON (ledger order; all claims must be recorded)."""
        self._require_ledger("claim_records")
        self._check_complete()
        statuses = self.statuses()
        out = []
        for cid, item in self.ledger.claims.items():
            entry = item.to_dict()
            entry["criterion"] = criterion_text(item)
            recorded = self._records[cid]
            order = list(item.sources) or [None]
            entry["sources"] = [recorded[s].to_dict() for s in order if s in recorded]
            entry["status"] = statuses[cid]
            out.append(entry)
        return out

    def summary(self) -> pd.DataFrame:
        """The claims as a table.

        Indexed by id, columns *quote, locator, kind, rule, criterion, ours,
        interval, outcome, status, expected, reason* (per-source columns hold
        ``{source: value}``), non-reproducing claims first.
        """
        order = {s: i for i, s in enumerate(STATUS_ORDER)}
        records = sorted(enumerate(self.claim_records()), key=lambda ic: (order[ic[1]["status"]], ic[0]))
        rows = {}
        for _, c in records:
            src = c["sources"]
            rows[c["id"]] = {
                "quote": c["quote"], "locator": c["locator"], "kind": c["kind"], "rule": c["rule"],
                "criterion": c["criterion"], "ours": {s["source"]: s["ours"] for s in src},
                "interval": {s["source"]: s["interval"] for s in src if s["interval"] is not None},
                "outcome": {s["source"]: s["outcome"] for s in src}, "status": c["status"],
                "expected": c["expected"], "reason": c["reason"]}
        columns = ["quote", "locator", "kind", "rule", "criterion", "ours", "interval", "outcome", "status",
                   "expected", "reason"]
        return pd.DataFrame.from_dict(rows, orient="index", columns=columns).astype(object)

    def counts(self) -> dict[str, int]:
        """Numbers of claims by status: one count per status of :data:`STATUSES` plus ``checkable``
        (the decided statuses :data:`CHECKABLE_STATUSES`)."""
        self._check_complete()
        counts = status_counts([{"status": s} for s in self.statuses().values()])
        counts["checkable"] = sum(counts[s] for s in CHECKABLE_STATUSES)
        return counts

    def headline(self) -> str:
        """One line: how many decided claims reproduce."""
        n = self.counts()
        return (f"{self.paper}: {n['reproduces']} of {n['checkable']} decided claims reproduce, "
                f"{n['partly']} partly, {n['does-not-reproduce']} do not, {n['inconclusive']} inconclusive; "
                f"{n['not-checkable']} not checkable; {n['by-construction']} by construction.")

    def to_dict(self) -> dict:
        """The whole record as the results JSON object.

        ``{"paper", "notebook", "ledger", "counts", "claims", "results"}``, each
        claim with the ledger's fields (``id, quote, locator, kind, rule,
        phrase, threshold, threshold_quote, paper, tol, tol_reason, refuted_by,
        by_construction, seed_sensitive, expected, reason``), our
        ``criterion`` in words, ``sources: [{source, ours, interval, outcome}]``
        and the computed ``status``.
        """
        self._require_ledger("to_dict")
        return {"paper": self.paper, "notebook": self.ledger.notebook, "ledger": str(self.ledger.path),
                "counts": self.counts(), "claims": self.claim_records(), "results": dict(self._results)}

    def did_not_reproduce(self) -> Markdown:
        """The generated section (findings, then claims per status), as markdown.

        A notebook shows it in a cell of its own, after :meth:`finish` and before
        the exercises (:meth:`finish` shows the claims table, not this section).
        Raises :class:`ReproductionError` like :meth:`finish` if a ledger claim
        was not recorded.
        """
        self._require_ledger("did_not_reproduce")
        return Markdown(did_not_reproduce_markdown(self.to_dict()))

    def _repr_html_(self) -> str:
        import html

        self._require_ledger("_repr_html_")
        return (f"<p><b>{html.escape(self.headline())}</b></p>\n"
                + claims_table_html(self.claim_records()))

    def __repr__(self) -> str:
        if self.ledger is None:
            return f"<Reproduction {self.paper}: no ledger>"
        if self.missing():
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

        Raises only on a real error and then writes nothing:

        Raises
        ------
        ReproductionError
            A ledger claim, or one of its listed sources, was not recorded.
            (A record not in the ledger, on an unlisted source, recorded twice,
            or a failing identity raise at once, in the cell that records it.)
        """
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


# ------------------------------------------------------------ seed stability and the per-paper index


def restatus(results: dict, ledger: Ledger | str | os.PathLike) -> dict[str, str | None]:
    """Statuses of a results JSON's claims re-decided under ``ledger``'s current rules.

    Each source's outcome is recomputed from its recorded ``ours`` and
    ``interval`` by :func:`decide` (a count's interval is recomputed from
    ``(k, n)``), so a table of runs stays valid when a rule or threshold
    changes. A claim of the ledger that the results do not have gets ``None``.
    """
    if not isinstance(ledger, Ledger):
        ledger = load_ledger(ledger)
    if not isinstance(results, dict) or not isinstance(results.get("claims"), list):
        raise ValueError("results must be a results JSON object with a 'claims' list.")
    by_id = {c.get("id"): c for c in results["claims"] if isinstance(c, dict)}
    out: dict[str, str | None] = {}
    for cid, item in ledger.claims.items():
        c = by_id.get(cid)
        if c is None:
            out[cid] = None
            continue
        outcomes = []
        for src in c.get("sources") or []:
            if not item.checkable:
                outcomes.append(src.get("outcome"))
                continue
            ours, interval = src.get("ours"), src.get("interval")
            if item.kind == "count":
                outcomes.append(decide(item, (int(ours[0]), int(ours[1]))))
            elif item.kind == "verdict":
                outcomes.append(decide(item, bool(ours)))
            else:
                outcomes.append(decide(item, from_json_float(ours),
                                       None if interval is None else tuple(from_json_float(v) for v in interval)))
        out[cid] = claim_status(item.kind, outcomes, by_construction=bool(item.by_construction)) \
            if (outcomes or not item.checkable) else None
    return out


def seed_split(statuses: Sequence[str | None]) -> dict[str, int]:
    """How many seeds gave each status (``None``, not recorded at that seed, is left out).

    >>> seed_split(["reproduces", "reproduces", "partly"])
    {'reproduces': 2, 'partly': 1}
    """
    out: dict[str, int] = {}
    for s in statuses:
        if s is not None:
            out[s] = out.get(s, 0) + 1
    return out


def stability_text(split: dict[str, int] | None) -> str:
    """``"stable 5/5"`` or ``"flips: reproduces 3/5, does-not-reproduce 2/5"``; ``""`` when not measured.

    >>> stability_text({"reproduces": 5}), stability_text({"reproduces": 3, "partly": 2})
    ('stable 5/5', 'flips: reproduces 3/5, partly 2/5')
    """
    if not split:
        return ""
    n = sum(split.values())
    if len(split) == 1:
        return f"stable {n}/{n}"
    ranked = sorted(split.items(), key=lambda kv: (-kv[1], STATUSES.index(kv[0]) if kv[0] in STATUSES else 99))
    return "flips: " + ", ".join(f"{s} {k}/{n}" for s, k in ranked)


def unmarked_flips(splits: dict[str, dict[str, int]], ledger: Ledger | str | os.PathLike) -> list[str]:
    """Claims whose status differs between seeds while the ledger does not mark them ``seed_sensitive``.

    ``splits`` maps a claim id to its :func:`seed_split`. A claim marked
    ``seed_sensitive`` that turns out stable is reported too (the mark must be
    the measured split).
    """
    if not isinstance(ledger, Ledger):
        ledger = load_ledger(ledger)
    problems = []
    for cid, split in splits.items():
        item = ledger.claims.get(cid)
        if item is None or not split:
            continue
        if len(split) > 1 and not item.seed_sensitive:
            problems.append(f"claim {cid!r} of {ledger.path}: its status flips between seeds ({stability_text(split)}) "
                            "but the ledger does not mark it seed_sensitive with the measured split.")
    return problems


def paper_summary(results: dict, stability: dict[str, dict[str, int]] | None = None) -> dict:
    """One paper's line of the index: statuses by claim, with a printed table as one claim.

    Parameters
    ----------
    results : dict
        A results JSON (or the claims.json entry) with ``paper`` and ``claims``.
    stability : dict, optional
        Claim id -> :func:`seed_split` over the seeds of the committed seed table.

    Returns
    -------
    dict
        ``{"paper", "claims": [{"id", "status", "cells", "stability", "seed_sensitive", "expected_differs"}],
        "counts": {status: n}, "seed_sensitive": [...], "mismatches": [...], "line": str}``. A claim with
        ``table`` set is one cell; the cells of one table make one claim whose status is theirs when all agree,
        ``partly`` when some reproduce and some do not, and whose ``cells`` is ``[k reproduce, n]``. ``counts``
        counts only seed-stable (or not measured) decided claims; seed-sensitive ones are listed apart.
    """
    claims = [c for c in results.get("claims") or [] if isinstance(c, dict)]
    units: dict[str, list[dict]] = {}
    for c in claims:
        key = f"table:{c['table']}" if c.get("table") else c["id"]
        units.setdefault(key, []).append(c)
    stability = stability or {}
    rows = []
    for key, members in units.items():
        statuses = [m.get("status") for m in members]
        if len(members) == 1:
            status = statuses[0]
        elif len(set(statuses)) == 1:
            status = statuses[0]
        elif any(s == "reproduces" for s in statuses) and any(s in ("does-not-reproduce", "partly") for s in statuses):
            status = "partly"
        elif any(s == "does-not-reproduce" for s in statuses):
            status = "does-not-reproduce"
        else:
            status = "inconclusive"
        splits = [stability.get(m["id"]) for m in members if stability.get(m["id"])]
        flips = [sp for sp in splits if len(sp) > 1]
        if len(members) == 1:
            stab = stability_text(splits[0]) if splits else ""
        else:
            stab = (f"flips in {len(flips)} of {len(members)} cells" if flips else
                    (stability_text(splits[0]) if splits else ""))
        rows.append({"id": key.removeprefix("table:") if len(members) > 1 else key, "status": status,
                     "cells": [sum(s == "reproduces" for s in statuses), len(members)] if len(members) > 1 else None,
                     "stability": stab, "seed_sensitive": bool(flips),
                     "expected_differs": [m["id"] for m in members if m.get("expected") and
                                          m.get("status") != m.get("expected")]})
    counts = {s: 0 for s in STATUSES}
    for r in rows:
        if r["status"] in counts and not (r["seed_sensitive"] and r["status"] in CHECKABLE_STATUSES):
            counts[r["status"]] += 1
    sensitive = [r for r in rows if r["seed_sensitive"] and r["status"] in CHECKABLE_STATUSES]
    mismatches = [cid for r in rows for cid in r["expected_differs"]]
    decided = sum(counts[s] for s in CHECKABLE_STATUSES)
    line = (f"{results.get('paper', '?')}: {counts['reproduces']} of {decided} seed-stable decided claims reproduce, "
            f"{counts['partly']} partly, {counts['does-not-reproduce']} do not, {counts['inconclusive']} could not "
            f"be decided; {len(sensitive)} seed-sensitive"
            + (f" ({'; '.join(r['id'] + ' ' + r['stability'] for r in sensitive)})" if sensitive else "")
            + f"; {counts['not-checkable']} not checkable; {counts['by-construction']} by construction (not counted)")
    tables = [r for r in rows if r["cells"]]
    if tables:
        line += "; tables counted once: " + ", ".join(f"{r['id']} ({r['cells'][0]} of {r['cells'][1]} cells "
                                                      "reproduce)" for r in tables)
    if mismatches:
        line += f"; differs from the ledger's expectation: {', '.join(mismatches)}"
    return {"paper": results.get("paper"), "claims": rows, "counts": counts,
            "seed_sensitive": [r["id"] for r in sensitive], "mismatches": mismatches, "line": line + "."}
