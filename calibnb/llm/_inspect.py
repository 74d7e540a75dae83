"""Inspect AI eval logs (``.json``, and the zipped ``.eval`` format), read by their documented schema."""

from __future__ import annotations

import json
import re
import zipfile

from ._common import (
    TOKEN_READOUT, TOKEN_SOURCES, Dropped, Record, as_path, check_on_missing, check_sources, check_str, correctness,
    frame, get, load_json, logprob, token_confidences,
)
from ._openai import answer_tokens
from ._verbalized import check_pattern, check_scale, parse_one, resolve_scale, statement_start

__all__ = ["read_inspect"]


def _load(path):
    """(header dict, list of samples) of a ``.json`` log or a zipped ``.eval`` log."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            head = "header.json" if "header.json" in names else "_journal/start.json"
            if head not in names:
                raise ValueError(f"{path.name}: a .eval archive without header.json or _journal/start.json.")
            header = json.loads(z.read(head))
            samples = []
            files = [x for x in names if x.startswith("samples/") and x.endswith(".json")]
            # samples/<id>_epoch_<n>.json, in id then epoch order (numeric where the ids are numbers)
            files.sort(key=lambda x: [(0, int(t), "") if t.isdigit() else (1, 0, t)
                                      for t in re.split(r"(\d+)", x.rsplit("/", 1)[-1])])
            for n in files:
                try:
                    samples.append(json.loads(z.read(n)))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path.name}: {n} is not valid JSON ({exc.msg}).") from None
            return header, samples, "sample file"
    log = load_json(path)
    if not isinstance(log, dict):
        raise ValueError(f"{path.name}: an Inspect log must be a JSON object; got {type(log).__name__}.")
    samples = log.get("samples")
    if not isinstance(samples, list):
        raise ValueError(f"{path.name}: field 'samples' is missing or not a list (was the log written with "
                         "samples?).")
    return log, samples, "sample"


def _text(output: dict, where: Record) -> str:
    content = get(output, "choices.0.message.content", where)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise where.error("output.choices.0.message.content", f"must be text; got {type(content).__name__}.")


def read_inspect(source, *, scorer: str | None = None, confidence_sources=None, pattern=None, scale: str = "auto",
                 on_missing: str = "raise"):
    """Read an Inspect AI eval log into calibnb's tidy table.

    Reads the log's JSON schema directly (the ``.json`` log, or the zipped
    ``.eval`` log's ``header.json`` and ``samples/*.json``); the
    ``inspect_ai`` package is not needed. Each sample gives: item id
    ``id`` (with ``#<epoch>`` when there are several epochs), model and task
    from ``eval``, the answer (the score's ``answer``, else the output's
    text), correctness from the score ``value`` (``C``/``I``, 0/1 or a bool;
    partial credit is an error), and the confidence from
    ``output.choices[0].logprobs.content`` (token readouts, as
    :func:`calibnb.llm.read_openai`) and/or ``verbalized`` (parsed from the
    output text with ``pattern``/``scale`` as
    :func:`calibnb.llm.read_verbalized`). With ``verbalized``, the token
    read-outs use only the tokens before the stated confidence where the
    logged tokens spell the output text (as in ``read_openai``).

    Parameters
    ----------
    source : path
    scorer : str, optional
        Which score to use; required when samples carry several.
    confidence_sources : str or list, optional
        Token readouts and/or ``verbalized``; default the four token readouts.
    pattern, scale
        For ``verbalized``.
    on_missing : {"raise", "drop"}
        A sample without log-probabilities.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`calibnb.llm.read_log`.
    """
    path = as_path(source)
    check_str(scorer, "scorer")
    sources = check_sources(confidence_sources, TOKEN_SOURCES + ("verbalized",), TOKEN_SOURCES)
    pat = check_pattern(pattern)
    scale = check_scale(scale)
    on_missing = check_on_missing(on_missing)
    header, samples, unit = _load(path)
    hw = Record(path.name)
    model = str(get(header, "eval.model", hw))
    task = str(get(header, "eval.task", hw))
    epochs = {s.get("epoch", 1) for s in samples if isinstance(s, dict)}
    rows, pending, dropped = [], [], Dropped()
    for i, s in enumerate(samples):
        where = Record(f"{path.name} {unit} {i}")
        if not isinstance(s, dict):
            raise ValueError(f"{where.where}: must be an object; got {type(s).__name__}.")
        sid = get(s, "id", where)
        epoch = s.get("epoch", 1)
        item_id = str(sid) if len(epochs) <= 1 else f"{sid}#{epoch}"
        where = Record(f"{path.name} {unit} {i} (id {sid})")
        scores = get(s, "scores", where, types=dict)
        if scorer is None:
            if len(scores) != 1:
                raise where.error("scores", f"has {len(scores)} scorers ({', '.join(scores)}); pass scorer=.")
            name = next(iter(scores))
        else:
            name = scorer
        score = get(scores, name, Record(f"{where.where}: scores"), types=dict)
        value = get(score, "value", where)
        correct = correctness(value, f"scores.{name}.value", where)
        output = get(s, "output", where, types=dict)
        text = _text(output, where)
        answer = score.get("answer") if isinstance(score.get("answer"), str) else text.strip()
        base = dict(item_id=item_id, model=model, task=task, answer=answer, correct=correct,
                    scored_answer="generated", context=f"epoch {epoch}" if len(epochs) > 1 else "",
                    record=where.where)
        tok = [x for x in sources if x in TOKEN_SOURCES]
        if tok:
            content = get(output, "choices.0.logprobs.content", where, required=False, types=list)
            if not content:
                exc = where.error("output.choices.0.logprobs", "is missing or empty (generate with logprobs=True).")
                if on_missing == "raise":
                    raise exc
                dropped.add(exc)
                continue
            lps = [logprob(get(t, "logprob", where), f"output.choices.0.logprobs.content.{j}.logprob", where)
                   for j, t in enumerate(content)]
            field = "output.choices[0].logprobs.content"
            strs = [t.get("token") if isinstance(t, dict) else None for t in content]
            start = statement_start(text, pat) if "verbalized" in sources else None
            if start is not None and all(isinstance(t, str) for t in strs) and "".join(strs) == text:
                # as read_openai: the answer's token read-outs leave out the stated confidence's tokens
                lps = answer_tokens(text, lps, strs, start, where)
                field += " (the tokens before the stated confidence)"
            conf = token_confidences(lps, tok)
            for x in tok:
                rows.append(dict(base, confidence=conf[x], confidence_source=x,
                                 readout=f"inspect: {TOKEN_READOUT[x]} of {field}", scale="logprob"))
        if "verbalized" in sources:
            v, pc = parse_one(text, pat, where, "output.choices.0.message.content")
            pending.append((dict(base, confidence_source="verbalized",
                                 readout=f"inspect: last match of {pat.pattern!r} in the output text"), v, pc))
    if pending:
        resolved = resolve_scale([(v, pc, row["record"]) for row, v, pc in pending], scale)
        rows += [dict(row, confidence=c, scale=label) for (row, _, _), (c, label) in zip(pending, resolved)]
    return frame(rows, what=path.name, dropped=dropped)
