"""The tidy table every reader of :mod:`calibnb.llm` returns, and what the readers share."""

from __future__ import annotations

import json
import math
import re
import string
import warnings
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from ..validation import check_choice

# What the readers share (this module is private; calibnb.llm re-exports the public names).
__all__ = [
    "COLUMNS", "CONFIDENCE_SOURCES", "TOKEN_SOURCES", "TOKEN_READOUT", "ON_MISSING", "normalize_answer", "exact_match",
    "Record", "Dropped", "as_path", "iter_jsonl", "load_json", "get", "finite_float", "logprob", "token_confidences",
    "check_sources", "check_str", "check_on_missing", "correctness", "frame",
]

#: The columns of every table :mod:`calibnb.llm` returns, in this order.
COLUMNS = (
    "item_id", "model", "task", "answer", "confidence", "correct",
    "confidence_source", "readout", "scored_answer", "context", "scale", "record",
)

#: The confidence sources a reader may report (column ``confidence_source``).
CONFIDENCE_SOURCES = {
    "mc-softmax": "softmax over the answer choices' log-likelihoods; the confidence of the highest",
    "mc-softmax-norm": "the same with each log-likelihood divided by its choice's length (lm-eval's acc_norm)",
    "sequence-probability": "probability of the whole generated answer: exp(sum of its token log-probabilities)",
    "mean-token-logprob": "exp(mean token log-probability) of the generated answer (its geometric-mean token probability)",
    "min-token": "probability of the least likely token of the generated answer",
    "first-token": "probability of the first token of the generated answer",
    "verbalized": "a confidence the model stated in its text (e.g. 'Confidence: 85%')",
    "p-true": "the model's probability that a proposed answer is true (Kadavath et al. 2022)",
    "sample-agreement": "share of sampled answers equal to the scored answer",
}

TOKEN_SOURCES = ("sequence-probability", "mean-token-logprob", "min-token", "first-token")
ON_MISSING = ("raise", "drop")


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation, the articles a/an/the and extra white space (SQuAD's normalisation).

    >>> normalize_answer("The  Cuban Missile-Crisis!")
    'cuban missilecrisis'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}.")
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(answer: str, gold) -> bool:
    """Whether ``answer`` equals one of the gold answers after :func:`normalize_answer`.

    The exact match (EM) of SQuAD and of Si et al.'s TriviaQA logs.

    >>> exact_match("Photographer.", ["Photographist", "photographer"])
    True
    >>> exact_match("Ross Bagdasarian", "David Seville")
    False
    """
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a str; got {type(answer).__name__}.")
    golds = [gold] if isinstance(gold, str) else gold
    if not isinstance(golds, (list, tuple)) or not golds or not all(isinstance(g, str) for g in golds):
        raise TypeError("gold must be a str or a non-empty list of str.")
    a = normalize_answer(answer)
    return any(a == normalize_answer(g) for g in golds)


# --------------------------------------------------------------------------- reading files


class Record:
    """Where a value came from: ``file line 7`` / ``file sample 3``; names it in every error."""

    def __init__(self, where: str):
        self.where = where

    def error(self, field: str, problem: str) -> ValueError:
        return ValueError(f"{self.where}: field {field!r} {problem}")


def as_path(source: Any, name: str = "source") -> Path:
    """``source`` as an existing path (no URL: calibnb.llm never downloads)."""
    if not isinstance(source, (str, Path)):
        raise TypeError(f"{name} must be a path (str or pathlib.Path); got {type(source).__name__}.")
    text = str(source)
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        raise ValueError(f"{name} must be a local file; calibnb.llm does not download ({text!r}).")
    path = Path(source)
    if not path.exists():
        raise ValueError(f"{name}: no such file or folder: {path.name!r}.")
    return path


def iter_jsonl(path: Path) -> Iterator[tuple[Record, Any]]:
    """(record, object) for each non-blank line of a JSON-lines file; a bad line names its number."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = Record(f"{path.name} line {number}")
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where.where}: not valid JSON ({exc.msg} at column {exc.colno}).") from None
            yield where, obj


def load_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path.name}: not valid JSON ({exc.msg} at line {exc.lineno}).") from None


def get(obj: Any, dotted: str, where: Record, *, required: bool = True, types=None):
    """The value at a dotted path (``choices.0.logprobs``) of ``obj``; errors name the record and field."""
    cur = obj
    for part in dotted.split("."):
        if isinstance(cur, list) and part.isdigit():
            i = int(part)
            if i >= len(cur):
                if required:
                    raise where.error(dotted, f"is missing (list {part!r} has {len(cur)} entries).")
                return None
            cur = cur[i]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            if required:
                raise where.error(dotted, "is missing.")
            return None
    if cur is None and required:
        raise where.error(dotted, "is null.")
    if types is not None and cur is not None and not isinstance(cur, types):
        raise where.error(dotted, f"must be {_type_names(types)}; got {type(cur).__name__}.")
    return cur


def _type_names(types) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(t.__name__ for t in types)


def finite_float(value: Any, field: str, where: Record) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise where.error(field, f"must be a number; got {type(value).__name__}.")
    try:
        x = float(value)
    except ValueError:
        raise where.error(field, f"must be a number; got {value!r}.") from None
    if not math.isfinite(x):
        raise where.error(field, f"must be finite; got {value!r}.")
    return x


def logprob(value: Any, field: str, where: Record) -> float:
    x = finite_float(value, field, where)
    if x > 1e-9:
        raise where.error(field, f"is a log-probability and must be <= 0; got {x!r}.")
    return min(x, 0.0)


def token_confidences(logprobs: list[float], sources: Iterable[str]) -> dict[str, float]:
    """The token readouts of one generated answer from its token log-probabilities."""
    lp = np.asarray(logprobs, dtype=np.float64)
    out = {}
    for s in sources:
        if s == "sequence-probability":
            out[s] = float(np.exp(lp.sum()))
        elif s == "mean-token-logprob":
            out[s] = float(np.exp(lp.mean()))
        elif s == "min-token":
            out[s] = float(np.exp(lp.min()))
        elif s == "first-token":
            out[s] = float(np.exp(lp[0]))
    return out


TOKEN_READOUT = {
    "sequence-probability": "exp(sum of token logprobs)",
    "mean-token-logprob": "exp(mean of token logprobs)",
    "min-token": "exp(min of token logprobs)",
    "first-token": "exp(first token logprob)",
}


def check_sources(sources, allowed: tuple[str, ...], default: tuple[str, ...], name: str = "confidence_sources"):
    if sources is None:
        return default
    if isinstance(sources, str):
        sources = (sources,)
    if not isinstance(sources, (list, tuple)) or not sources:
        raise TypeError(f"{name} must be a source name or a non-empty list of them.")
    for s in sources:
        if s not in allowed:
            raise ValueError(f"{name}: {s!r} is not available for this format; choose from {', '.join(allowed)}.")
    if len(set(sources)) != len(sources):
        raise ValueError(f"{name} lists a source twice: {list(sources)}.")
    return tuple(sources)


def check_str(value: Any, name: str, *, allow_none: bool = True) -> str | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str; got {type(value).__name__}.")
    return value


def check_on_missing(on_missing: Any) -> str:
    return check_choice(on_missing, ON_MISSING, "on_missing")


class Dropped:
    """Records skipped with ``on_missing='drop'``; they are warned about and kept in ``df.attrs['dropped']``."""

    def __init__(self):
        self.items: list[str] = []

    def add(self, exc: ValueError) -> None:
        self.items.append(str(exc))


def correctness(value: Any, field: str, where: Record) -> bool:
    """0/1, bool, 'C'/'I' (Inspect), 'yes'/'no' (HLE's judge) or 'true'/'false' as a bool."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value in (0, 1):
            return bool(value)
        raise where.error(field, f"must be 0 or 1 (correct or not); got {value!r}.")
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("c", "correct", "yes", "true", "1", "1.0"):
            return True
        if v in ("i", "incorrect", "no", "false", "0", "0.0"):
            return False
        raise where.error(field, f"must be correct/incorrect (C/I, yes/no, true/false, 1/0); got {value!r}.")
    raise where.error(field, f"must be 0/1, a bool or C/I; got {type(value).__name__}.")


def frame(rows: list[dict], *, what: str, dropped: Dropped | None = None):
    """The tidy DataFrame of ``rows`` (one dict per (item, confidence source)), validated."""
    import pandas as pd

    if not rows:
        raise ValueError(f"{what}: no records with a confidence and a correctness were found.")
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    conf = df["confidence"].to_numpy(dtype=np.float64)
    bad = ~np.isfinite(conf) | (conf < 0) | (conf > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{df['record'].iloc[i]}: confidence {conf[i]!r} is outside [0, 1].")
    # (item_id, model, task, confidence_source) identifies a row: one confidence per item and source
    dup = df[["item_id", "model", "task", "confidence_source"]].astype(str).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise ValueError(f"{df['record'].iloc[i]}: item_id {df['item_id'].iloc[i]!r} appears twice "
                         f"(for confidence_source {df['confidence_source'].iloc[i]!r}).")
    df["confidence"] = conf
    df["correct"] = df["correct"].astype(bool)
    for c in ("item_id", "model", "task", "answer", "confidence_source", "readout", "scored_answer", "context",
              "scale", "record"):
        df[c] = df[c].astype(str)
    df.attrs["dropped"] = list(dropped.items) if dropped is not None else []
    if dropped is not None and dropped.items:
        warnings.warn(f"{what}: dropped {len(dropped.items)} record(s) (on_missing='drop'); first: "
                      f"{dropped.items[0]} (all in df.attrs['dropped']).", UserWarning, stacklevel=3)
    return df
