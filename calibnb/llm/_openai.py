"""OpenAI-style completions with log-probabilities (also vLLM and llama.cpp servers)."""

from __future__ import annotations

import math
from typing import Any

from ._verbalized import (
    DEFAULT_ANSWER_PATTERN, answer_part, check_pattern, check_scale, parse_one, resolve_scale, statement_start,
)
from ._common import (
    TOKEN_READOUT, TOKEN_SOURCES, Dropped, Record, as_path, check_on_missing, check_sources, check_str, correctness,
    exact_match, frame, get, iter_jsonl, logprob, normalize_answer, token_confidences,
)

__all__ = ["read_openai", "answer_tokens"]

_OPENAI_SOURCES = TOKEN_SOURCES + ("sample-agreement", "verbalized", "p-true")
_P_TRUE_TOKENS = (("true",), ("false",))


def _first_token_alternatives(choice: dict, where: Record) -> dict[str, float]:
    """{token: logprob} of the first generated token's top alternatives (chat or legacy completion)."""
    lp = choice.get("logprobs")
    if "message" in choice:
        top = get(choice, "logprobs.content.0.top_logprobs", where, types=list) if lp else None
        if not top:
            raise where.error("choices.0.logprobs.content.0.top_logprobs", "is missing or empty: P(true) needs the "
                              "first token's alternatives (request top_logprobs).")
        return {get(t, "token", where, types=str): logprob(get(t, "logprob", where), "top_logprobs.logprob", where)
                for t in top}
    top = get(choice, "logprobs.top_logprobs.0", where, types=dict) if lp else None
    if not top:
        raise where.error("choices.0.logprobs.top_logprobs", "is missing or empty: P(true) needs the first "
                          "token's alternatives (request logprobs=k).")
    return {str(t): logprob(v, "top_logprobs.0", where) for t, v in top.items()}


def _p_true(alternatives: dict[str, float], tokens, where: Record) -> float:
    yes = sum(math.exp(v) for t, v in alternatives.items() if t.strip().lower() in tokens[0])
    no = sum(math.exp(v) for t, v in alternatives.items() if t.strip().lower() in tokens[1])
    if yes + no == 0:
        raise where.error("top_logprobs", f"has none of the tokens {list(tokens[0]) + list(tokens[1])} among the "
                          f"first token's alternatives ({', '.join(map(repr, alternatives))}).")
    return yes / (yes + no)


def _response(obj: dict, where: Record) -> tuple[str | None, dict]:
    """(custom id or None, the completion object) of one line: a completion or a Batch API output line."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where.where}: a line must be a JSON object; got {type(obj).__name__}.")
    if "response" in obj and isinstance(obj.get("response"), dict) and "body" in obj["response"]:
        if obj.get("error"):
            raise where.error("error", f"is set: the request failed ({obj['error']!r}).")
        return obj.get("custom_id"), get(obj, "response.body", where, types=dict)
    if "response" in obj:
        resp = get(obj, "response", where, types=dict)
    else:
        resp = obj
    if "completion_probabilities" in resp and "choices" not in resp:  # llama.cpp's native /completion
        resp = {"model": resp.get("model", ""), "id": resp.get("id"),
                "choices": [{"text": get(resp, "content", where, types=str),
                             "llama_cpp_probabilities": resp["completion_probabilities"]}]}
    return None, resp


def _llama_cpp_logprobs(entries: Any, where: Record) -> list[float] | None:
    """Token log-probabilities of llama.cpp's ``completion_probabilities`` (``logprob``, ``prob`` or the
    older ``{"content", "probs": [{"tok_str", "prob"}]}``)."""
    if not entries:
        return None
    if not isinstance(entries, list):
        raise where.error("completion_probabilities", f"must be a list; got {type(entries).__name__}.")
    out = []
    for j, e in enumerate(entries):
        field = f"completion_probabilities.{j}"
        if not isinstance(e, dict):
            raise where.error(field, f"must be an object; got {type(e).__name__}.")
        if "logprob" in e:
            out.append(logprob(e["logprob"], f"{field}.logprob", where))
        elif "prob" in e:
            out.append(_log_of_prob(e["prob"], f"{field}.prob", where))
        elif "probs" in e and "content" in e:
            match = [q for q in e["probs"] if isinstance(q, dict) and q.get("tok_str") == e["content"]]
            if not match:
                raise where.error(f"{field}.probs", f"does not list the generated token {e['content']!r}.")
            out.append(_log_of_prob(match[0].get("prob"), f"{field}.probs.prob", where))
        else:
            raise where.error(field, "has no 'logprob', 'prob' or 'probs' of the generated token.")
    return out


def _log_of_prob(value: Any, field: str, where: Record) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise where.error(field, f"must be a probability in (0, 1]; got {value!r}.")
    return math.log(value)


def _choice_tokens(choice: dict, field: str, where: Record) -> tuple[str, list[float] | None]:
    """(text, token log-probabilities or None when the response has none) of one choice."""
    if "message" in choice:  # chat completion
        text = get(choice, "message.content", where, types=str)
        lp = choice.get("logprobs")
        if lp is None:
            return text, None
        content = get(lp, "content", Record(f"{where.where}: {field}.logprobs"), required=False, types=list)
        if not content:
            return text, None
        return text, [logprob(get(t, "logprob", where), f"{field}.logprobs.content.{j}.logprob", where)
                      for j, t in enumerate(content)]
    if "llama_cpp_probabilities" in choice:
        return get(choice, "text", where, types=str), _llama_cpp_logprobs(choice["llama_cpp_probabilities"], where)
    if "text" in choice:  # legacy completion (vLLM /v1/completions, Codex)
        text = get(choice, "text", where, types=str)
        lp = choice.get("logprobs")
        if lp is None:
            return text, None
        tokens = lp.get("token_logprobs") if isinstance(lp, dict) else None
        if not tokens:
            return text, None
        return text, [logprob(v, f"{field}.logprobs.token_logprobs.{j}", where) for j, v in enumerate(tokens)]
    raise where.error(field, "has neither 'message' (chat completion) nor 'text' (completion).")


def _token_strings(choice: dict) -> list[str] | None:
    """The generated tokens' text of one choice (chat ``content[j].token``, legacy ``logprobs.tokens``)."""
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        return None
    if "message" in choice:
        content = lp.get("content")
        strs = [t.get("token") for t in content] if isinstance(content, list) else None
    else:
        strs = lp.get("tokens")
    if not isinstance(strs, list) or not all(isinstance(t, str) for t in strs):
        return None
    return strs


def answer_tokens(raw: str, tokens: list[float], strs: list[str] | None, start: int, where: Record) -> list[float]:
    """The log-probabilities of the tokens before the stated confidence (trailing white space dropped)."""
    if strs is None or len(strs) != len(tokens) or "".join(strs) != raw:
        raise where.error("choices.0.logprobs", "has token strings that do not spell the text, so the answer's "
                          "tokens cannot be told from the stated confidence's.")
    keep, pos = [], 0
    for j, (t, lp) in enumerate(zip(strs, tokens)):
        if pos + len(t) > start:
            # a token reaching into the statement (" Confidence") is not the answer's; one that also
            # holds answer text cannot be split between the two
            if t[:max(start - pos, 0)].strip():
                raise where.error("choices.0.logprobs", f"token {j} ({t!r}) spans the answer and the "
                                  "stated confidence, so its log-probability belongs to neither alone.")
            break
        keep.append((t, lp))
        pos += len(t)
    while keep and not keep[-1][0].strip():
        keep.pop()
    if not keep:
        raise where.error("choices.0.logprobs", "has no token before the stated confidence.")
    return [lp for _, lp in keep]


def read_openai(source, *, gold=None, model: str | None = None, task: str = "", context: str = "",
                confidence_sources=None, on_missing: str = "raise", p_true_tokens=_P_TRUE_TOKENS,
                pattern=None, scale: str = "auto", answer_pattern=None):
    """Read OpenAI-style completions with log-probabilities into calibnb's tidy table.

    One JSON object per line, any of:

    * a chat completion (``{"id", "model", "choices": [{"message": {"content"},
      "logprobs": {"content": [{"token", "logprob", "top_logprobs"}]}}]}``),
      as returned by OpenAI with ``logprobs=true`` and by the OpenAI-compatible
      servers of vLLM and llama.cpp;
    * a legacy completion (``choices[i].text`` with ``choices[i].logprobs.
      token_logprobs``; vLLM's ``/v1/completions``);
    * llama.cpp's native ``/completion`` response (``content`` with
      ``completion_probabilities``: per token ``logprob``, or ``prob`` with
      ``post_sampling_probs``, or the older ``{"content", "probs"}``; the last
      two are probabilities after the server's sampler chain, not the model's,
      and the ``readout`` says so);
    * a Batch API output line ``{"custom_id", "response": {"body": <completion>}, "error"}``;
    * ``{"item_id", "response": <completion>, "gold": str | [str], "correct": 0/1}``
      (``gold`` and ``correct`` optional);
    * for ``p-true``: the same with ``"proposed_answer"``, the response being
      the model's reply to "Is the proposed answer true?".

    The scored answer is ``choices[0]``'s text; it is correct when it equals
    a gold answer after :func:`calibnb.llm.normalize_answer` (or as the line's
    ``correct`` says). Token readouts use all of ``choices[0]``'s tokens;
    ``sample-agreement`` (only with several choices, ``n > 1``) is the share of
    choices whose normalised text equals ``choices[0]``'s. ``p-true``
    (Kadavath et al. 2022) scores the line's supplied ``proposed_answer``: the
    probability of a "true" token among the first generated token's
    alternatives, :math:`P(\text{true}) / (P(\text{true}) + P(\text{false}))`
    over ``top_logprobs`` (tokens compared stripped and lower-cased).

    Parameters
    ----------
    source : path
        A JSON-lines file.
    gold : mapping of item id -> str or list of str, optional
        Gold answers; else each line's ``gold`` (or ``correct``).
    model, task, context : str
        Provenance; ``model`` defaults to each response's ``model``.
    confidence_sources : str or list of str, optional
        Any of ``sequence-probability``, ``mean-token-logprob``, ``min-token``,
        ``first-token``, ``sample-agreement``, ``verbalized``, or ``p-true`` (alone: a P(true)
        log answers another question); default: the four token readouts
        (and ``sample-agreement`` when every line has several choices).
    on_missing : {"raise", "drop"}
        A response without log-probabilities: an error naming the line, or
        dropped with a warning (listed in ``df.attrs["dropped"]``).
    pattern, scale, answer_pattern
        For ``verbalized`` (a confidence the text states, "Confidence: 85%"),
        as in :func:`calibnb.llm.read_verbalized`. With ``verbalized``, the
        answer is the text without its statement (or the ``Answer:`` line),
        and the token read-outs use only the tokens before the statement.
    p_true_tokens : (tuple of str, tuple of str)
        The "true" and "false" tokens of ``p-true`` (lower case), default
        ``(("true",), ("false",))``; e.g. ``(("a",), ("b",))`` for "(A) True (B) False".

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`calibnb.llm.read_log`, one row per (item, source).
    """
    path = as_path(source)
    check_str(model, "model")
    check_str(task, "task", allow_none=False)
    check_str(context, "context", allow_none=False)
    on_missing = check_on_missing(on_missing)
    if gold is not None and not hasattr(gold, "get"):
        raise TypeError(f"gold must be a mapping of item id to gold answer(s); got {type(gold).__name__}.")
    explicit = confidence_sources is not None
    sources = check_sources(confidence_sources, _OPENAI_SOURCES, TOKEN_SOURCES)
    if "p-true" in sources and len(sources) > 1:
        raise ValueError("confidence_sources: 'p-true' reads a log of P(true) queries and cannot be combined "
                         f"with other sources; got {list(sources)}.")
    if (not isinstance(p_true_tokens, (tuple, list)) or len(p_true_tokens) != 2
            or not all(isinstance(g, (tuple, list)) and g and all(isinstance(t, str) for t in g) for g in p_true_tokens)):
        raise TypeError("p_true_tokens must be two non-empty tuples of str: (true tokens, false tokens).")
    p_true_tokens = tuple(tuple(t.strip().lower() for t in g) for g in p_true_tokens)
    pat = check_pattern(pattern)
    ans_pat = check_pattern(answer_pattern, DEFAULT_ANSWER_PATTERN, "answer", "answer_pattern")
    scale = check_scale(scale)
    stated = "verbalized" in sources
    pending = []
    lines = list(iter_jsonl(path))
    if not explicit and lines and all(len(_response(o, w)[1].get("choices") or []) > 1 for w, o in lines):
        sources = sources + ("sample-agreement",)
    rows, dropped = [], Dropped()
    for where, obj in lines:
        custom_id, resp = _response(obj, where)
        item_id = obj.get("item_id", custom_id if custom_id is not None else resp.get("id"))
        if item_id is None:
            raise where.error("item_id", "is missing (give 'item_id', a Batch 'custom_id' or the response 'id').")
        where = Record(f"{where.where} (item {item_id})")
        choices = get(resp, "choices", where, types=list)
        if not choices:
            raise where.error("choices", "is empty.")
        texts, tokens, raw = [], None, ""
        for i, ch in enumerate(choices):
            if not isinstance(ch, dict):
                raise where.error(f"choices.{i}", f"must be an object; got {type(ch).__name__}.")
            text, lp = _choice_tokens(ch, f"choices.{i}", where)
            texts.append(answer_part(text, pat, ans_pat) if stated else text.strip())
            if i == 0:
                tokens, raw = lp, text
        answer = texts[0]
        if stated:
            value, percent = parse_one(raw, pat, where, "choices.0 text")
            if tokens is not None and any(x in TOKEN_SOURCES for x in sources):
                tokens = answer_tokens(raw, tokens, _token_strings(choices[0]), statement_start(raw, pat), where)
        if sources == ("p-true",):
            answer = get(obj, "proposed_answer", where, types=str).strip()
        if "correct" in obj:
            correct = correctness(obj["correct"], "correct", where)
        else:
            g = gold.get(item_id, gold.get(str(item_id))) if gold is not None else obj.get("gold")
            if g is None:
                raise where.error("gold", "is missing: pass gold={item_id: answer} or put 'gold' or 'correct' "
                                          "on the line.")
            try:
                correct = exact_match(answer, g)
            except TypeError as exc:
                raise where.error("gold", f"is not a str or a list of str ({exc}).") from None
        base = dict(item_id=str(item_id), model=model if model is not None else str(resp.get("model", "")),
                    task=task, answer=answer, correct=correct, scored_answer="generated", context=context,
                    record=where.where)
        if sources == ("p-true",):
            conf = _p_true(_first_token_alternatives(choices[0], where), p_true_tokens, where)
            rows.append(dict(base, confidence=conf, confidence_source="p-true", scored_answer="supplied",
                             readout=f"openai: P(true)/(P(true)+P(false)) over the first token's top_logprobs, "
                                     f"true {list(p_true_tokens[0])}, false {list(p_true_tokens[1])}",
                             scale="logprob"))
            continue
        wanted_tokens = [s for s in sources if s in TOKEN_SOURCES]
        if wanted_tokens and tokens is None:
            exc = where.error("choices.0.logprobs", "is missing or empty: the request was made without "
                                                   "logprobs=true (or the server returned none).")
            if on_missing == "raise":
                raise exc
            dropped.add(exc)
            continue
        if stated:
            pending.append((dict(base, confidence_source="verbalized",
                                 readout=f"openai: last match of {pat.pattern!r} in choices[0]'s text"), value, percent))
        field = ("choices[0].logprobs.content" if "message" in choices[0] else "completion_probabilities"
                 if "llama_cpp_probabilities" in choices[0] else "choices[0].logprobs.token_logprobs")
        if "llama_cpp_probabilities" in choices[0] and any(
                isinstance(e, dict) and "logprob" not in e for e in choices[0]["llama_cpp_probabilities"]):
            # 'prob' (post_sampling_probs) and the older 'probs' come after the sampler chain (temperature,
            # top-k/top-p): not the model's own token probabilities; say so in the readout
            field += " (post-sampling probabilities, after the server's sampler chain)"
        if stated:
            field += " (the tokens before the stated confidence)"
        for s in wanted_tokens:
            rows.append(dict(base, confidence=token_confidences(tokens, [s])[s], confidence_source=s,
                             readout=f"openai: {TOKEN_READOUT[s]} of {field}", scale="logprob"))
        if "sample-agreement" in sources:
            if len(texts) < 2:
                raise where.error("choices", "has one choice: sample-agreement needs several (n > 1).")
            ref = normalize_answer(answer)
            agree = sum(normalize_answer(t) == ref for t in texts) / len(texts)
            rows.append(dict(base, confidence=agree, confidence_source="sample-agreement",
                             readout=f"openai: share of the {len(texts)} choices equal to choices[0] (normalised)",
                             scale="0-1"))
    if pending:
        resolved = resolve_scale([(v, pc, row["record"]) for row, v, pc in pending], scale)
        rows += [dict(row, confidence=c, scale=label) for (row, _, _), (c, label) in zip(pending, resolved)]
    return frame(rows, what=path.name, dropped=dropped)
