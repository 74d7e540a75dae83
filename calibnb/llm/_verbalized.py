"""Verbalised confidence: a confidence the model states in its text ("Confidence: 85%")."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..validation import check_choice
from ._common import Record, as_path, check_str, correctness, exact_match, frame, get, iter_jsonl, load_json

__all__ = [
    "read_verbalized", "parse_verbalized_confidence", "DEFAULT_PATTERN", "DEFAULT_ANSWER_PATTERN",
    "check_pattern", "check_scale", "parse_one", "strip_statement", "statement_start", "answer_part", "resolve_scale",
]

#: The default pattern: the last "Confidence: 85%", "confidence = 0.85", "Confidence level: 85 %",
#: "**Confidence**: 85%" in a text (case-insensitive). Group ``value`` is the number, group ``percent`` the optional per-cent sign.
#: A number on another scale ("8/10", "9 out of 10") does not match (an error naming the record, not 8%).
DEFAULT_PATTERN = (r"(?i)\bconfidence(?:\s+(?:level|score))?\**\s*(?:[:=]|is)\s*\**\s*"
                   r"(?P<value>\d+(?:\.\d+)?)(?!\.?\d)\s*(?P<percent>%)?(?!\s*(?:/|out\s+of\b))")

#: The default answer pattern: the rest of the last line starting "Answer:" (HLE's "Exact Answer:" too).
DEFAULT_ANSWER_PATTERN = r"(?im)^\W*(?:exact\s+)?answer\s*:\s*(?P<answer>.*?)\s*$"

_SCALES = ("auto", "0-100", "0-1")


def check_pattern(pattern: Any, default: str = DEFAULT_PATTERN, group: str = "value", name: str = "pattern"):
    if pattern is None:
        pattern = default
    if isinstance(pattern, str):
        try:
            pattern = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{name} is not a valid regular expression: {exc}.") from None
    if not isinstance(pattern, re.Pattern):
        raise TypeError(f"{name} must be a regular expression (str or re.Pattern); got {type(pattern).__name__}.")
    if group not in pattern.groupindex and pattern.groups < 1:
        raise ValueError(f"{name} must have a group named {group!r} (or one group) for the number.")
    return pattern


def check_scale(scale: Any) -> str:
    return check_choice(scale, _SCALES, "scale")


def parse_one(text: Any, pattern: re.Pattern, where: Record, field: str) -> tuple[float, bool]:
    """(number, followed by '%') of the last match of ``pattern`` in ``text``; an error names the record."""
    return _parse(text, pattern, where, field)[:2]


def strip_statement(text: str, pattern: re.Pattern) -> str:
    """``text`` without its last confidence statement (the answer part of "Paris\nConfidence: 90%")."""
    matches = list(pattern.finditer(text))
    if not matches:
        return text.strip()
    m = matches[-1]
    return (text[:m.start()] + text[m.end():]).strip()


def statement_start(text: str, pattern: re.Pattern) -> int | None:
    """Where the last confidence statement in ``text`` starts (None without one)."""
    matches = list(pattern.finditer(text))
    return matches[-1].start() if matches else None


def answer_part(text: str, pattern: re.Pattern, answer_pattern: re.Pattern) -> str:
    """The answer in a text that states a confidence: the last ``answer_pattern`` match, else the text
    without its confidence statement."""
    found = list(answer_pattern.finditer(text))
    if found:
        m = found[-1]
        return (m.group("answer") if "answer" in answer_pattern.groupindex else m.group(1)).strip()
    return strip_statement(text, pattern)


def _parse(text, pattern, where, field):
    if not isinstance(text, str):
        raise where.error(field, f"must be text; got {type(text).__name__}.")
    matches = list(pattern.finditer(text))
    if not matches:
        snippet = text.strip().replace("\n", " ")[-60:]
        raise where.error(field, f"states no confidence matching {pattern.pattern!r} (text ends {snippet!r}).")
    m = matches[-1]
    raw = m.group("value") if "value" in pattern.groupindex else m.group(1)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise where.error(field, f"has a confidence {raw!r} that is not a number.") from None
    percent = "percent" in pattern.groupindex and bool(m.group("percent"))
    return value, percent, m


def resolve_scale(parsed: list[tuple[float, bool, str]], scale: str) -> list[tuple[float, str]]:
    """Confidences in [0, 1] and the scale each was read on, from (number, had '%', record).

    ``scale="auto"``: a number with '%' is per cent; the others are per cent
    if any of them exceeds 1 (the file uses 0-100), else fractions (0-1). A
    bare number strictly between 0 and 1 in a file whose other bare numbers
    exceed 1 is an error (0.9 could be 90% or 0.9%).
    """
    if scale == "auto":
        bare_percent = any(v > 1 for v, pc, _ in parsed if not pc)
        if bare_percent:
            # a bare fraction such as 0.9 among per-cent numbers is 90% or 0.9%: refuse to guess
            odd = next(((v, w) for v, pc, w in parsed if not pc and 0 < v < 1), None)
            if odd is not None:
                raise ValueError(f"{odd[1]}: stated confidence {odd[0]:g} is a fraction, but other confidences "
                                 "exceed 1 (per cent): the scale is ambiguous; pass scale='0-100' or '0-1'.")
    out = []
    for value, percent, where in parsed:
        on_100 = percent or (scale == "0-100") or (scale == "auto" and bare_percent)
        if percent and scale == "0-1":
            raise ValueError(f"{where}: confidence {value:g}% has a per-cent sign but scale='0-1'.")
        top = 100.0 if on_100 else 1.0
        if not 0.0 <= value <= top:
            raise ValueError(f"{where}: stated confidence {value:g} is outside [0, {top:g}] "
                             f"(scale {'0-100' if on_100 else '0-1'}).")
        out.append((value / top, "0-100" if on_100 else "0-1"))
    return out


def parse_verbalized_confidence(texts, *, pattern=None, scale: str = "auto") -> np.ndarray:
    """Stated confidences in [0, 1] parsed from free texts.

    The last match of ``pattern`` in each text gives the number (group
    ``value``, else the first group); a ``%`` after it (group ``percent``)
    marks per cent. ``scale``: ``"0-100"`` (per cent), ``"0-1"`` (fractions),
    or ``"auto"``: '%' means per cent, and numbers without it are per cent if
    any of them exceeds 1, else fractions (a bare number between 0 and 1
    beside such per-cent numbers is an error: pass ``scale``). The default pattern is
    :data:`calibnb.llm.DEFAULT_PATTERN`, e.g. ``Confidence: 85%``.

    Parameters
    ----------
    texts : list of str
    pattern : str or re.Pattern, optional
    scale : {"auto", "0-100", "0-1"}

    Returns
    -------
    ndarray of shape (len(texts),)

    Examples
    --------
    >>> parse_verbalized_confidence(["Answer: Paris\\nConfidence: 85%", "confidence = 0.3"]).tolist()
    [0.85, 0.3]
    >>> parse_verbalized_confidence(["Sure (7 out of 10)."], pattern=r"(\\d+) out of 10", scale="0-1")
    Traceback (most recent call last):
    ...
    ValueError: texts[0]: stated confidence 7 is outside [0, 1] (scale 0-1).
    """
    if isinstance(texts, str) or not hasattr(texts, "__len__"):
        raise TypeError("texts must be a list of str.")
    pattern = check_pattern(pattern)
    scale = check_scale(scale)
    if len(texts) == 0:
        raise ValueError("texts is empty.")
    parsed = []
    for i, t in enumerate(texts):
        v, pc = parse_one(t, pattern, Record(f"texts[{i}]"), "text")
        parsed.append((v, pc, f"texts[{i}]"))
    return np.array([c for c, _ in resolve_scale(parsed, scale)], dtype=np.float64)


def _records(path):
    """(record, dict) of a JSON-lines file, a CSV file, or HLE's judged JSON ``{question_id: {...}}``."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        import pandas as pd

        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        for i, row in enumerate(df.to_dict("records")):
            yield Record(f"{path.name} row {i + 2}"), row  # row 1 is the header
    elif suffix == ".json":
        data = load_json(path)
        if not isinstance(data, dict):
            raise ValueError(f"{path.name}: a .json file must map question ids to records (HLE's judged "
                             f"results); got {type(data).__name__}.")
        for qid, rec in data.items():
            where = Record(f"{path.name} question {qid}")
            if not isinstance(rec, dict):
                raise ValueError(f"{where.where}: must be an object; got {type(rec).__name__}.")
            judge = rec.get("judge_response") or {}
            row = dict(rec, item_id=qid)
            if "correct" not in row and isinstance(judge, dict) and "correct" in judge:
                row["correct"] = judge["correct"]
            if "answer" not in row and isinstance(judge, dict) and "model_answer" in judge:
                row["answer"] = judge["model_answer"]
            yield where, row
    else:
        for where, obj in iter_jsonl(path):
            if not isinstance(obj, dict):
                raise ValueError(f"{where.where}: a line must be a JSON object; got {type(obj).__name__}.")
            yield where, obj


def read_verbalized(source, *, pattern=None, scale: str = "auto", answer_pattern=None, gold=None,
                    text_field: str = "response", model: str | None = None, task: str = "", context: str = ""):
    """Read answers whose confidence is stated in the text into calibnb's tidy table.

    Input: a JSON-lines or CSV file with one answer per record (fields
    ``item_id``, the model's text in ``text_field``, and ``correct`` (0/1,
    yes/no, C/I) or ``gold`` (str or list; scored by exact match), optional
    ``model``, ``task``, ``answer``), or Humanity's Last Exam judged results
    (a ``.json`` mapping each question id to ``{"model", "response",
    "judge_response": {"model_answer", "correct": "yes"|"no", ...}}``).

    The confidence is the last match of ``pattern`` in the text (see
    :func:`calibnb.llm.parse_verbalized_confidence`; default
    :data:`calibnb.llm.DEFAULT_PATTERN`, e.g. ``Confidence: 85%``), on the
    scale ``scale``; the answer is the record's ``answer`` or the last match
    of ``answer_pattern`` (default: the line ``Answer: ...``), else the whole
    text. A record without a stated confidence is an error naming it.

    Parameters
    ----------
    source : path
    pattern : str or re.Pattern, optional
    scale : {"auto", "0-100", "0-1"}
    answer_pattern : str or re.Pattern, optional
        With a group named ``answer``.
    gold : mapping of item id -> str or list of str, optional
    text_field : str, default "response"
    model, task, context : str
        Provenance; a record's own ``model``/``task`` wins.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`calibnb.llm.read_log`; ``scale`` says whether a
        number was read as per cent (``0-100``) or a fraction (``0-1``).
    """
    path = as_path(source)
    pat = check_pattern(pattern)
    scale = check_scale(scale)
    ans = check_pattern(answer_pattern, DEFAULT_ANSWER_PATTERN, "answer", "answer_pattern")
    check_str(text_field, "text_field", allow_none=False)
    check_str(model, "model")
    check_str(task, "task", allow_none=False)
    check_str(context, "context", allow_none=False)
    if gold is not None and not hasattr(gold, "get"):
        raise TypeError(f"gold must be a mapping of item id to gold answer(s); got {type(gold).__name__}.")
    pending = []
    for where, rec in _records(path):
        item_id = rec.get("item_id", rec.get("id"))
        if item_id is None or item_id == "":
            raise where.error("item_id", "is missing.")
        where = Record(f"{where.where} (item {item_id})")
        text = get(rec, text_field, where, types=str)
        value, percent = parse_one(text, pat, where, text_field)
        answer = rec.get("answer")
        if not isinstance(answer, str) or not answer:
            answer = answer_part(text, pat, ans)
        if "correct" in rec and rec["correct"] not in (None, ""):
            correct = correctness(rec["correct"], "correct", where)
        else:
            g = gold.get(item_id, gold.get(str(item_id))) if gold is not None else rec.get("gold")
            if g in (None, ""):
                raise where.error("correct", "is missing (give 'correct', or 'gold' to score by exact match).")
            correct = exact_match(answer, g)
        row = dict(item_id=str(item_id), model=str(rec.get("model") or (model or "")), task=str(rec.get("task") or task),
                   answer=answer, correct=correct, confidence_source="verbalized",
                   readout=f"verbalized: last match of {pat.pattern!r} in {text_field!r}",
                   scored_answer="generated", context=context, record=where.where)
        pending.append((row, value, percent))
    if not pending:
        raise ValueError(f"{path.name}: no records.")
    resolved = resolve_scale([(v, pc, row["record"]) for row, v, pc in pending], scale)
    rows = [dict(row, confidence=c, scale=label) for (row, _, _), (c, label) in zip(pending, resolved)]
    return frame(rows, what=path.name)
