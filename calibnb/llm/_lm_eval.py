"""lm-evaluation-harness ``--log_samples`` files (``samples_<task>_<date>.jsonl``)."""

from __future__ import annotations

import re

import numpy as np

from ._common import (
    Record, as_path, check_str, correctness, finite_float, frame, get, iter_jsonl,
)
from ._verbalized import check_pattern, check_scale, parse_one, resolve_scale, strip_statement

__all__ = ["read_lm_eval"]

_READOUTS = ("acc", "acc_norm")
_READOUT_TEXT = {
    "acc": "lm-eval: softmax of the choices' summed log-likelihoods (filtered_resps), argmax as for acc",
    "acc_norm": "lm-eval: softmax of the choices' log-likelihoods per character, argmax as for acc_norm",
}


def _choice_strings(doc: dict, n: int, where: Record) -> list[str] | None:
    """The continuation of each choice, from ``arguments`` (dict or list form), or None."""
    args = doc.get("arguments")
    if isinstance(args, dict):
        keys = sorted(args, key=lambda k: int(re.sub(r"\D", "", k) or 0))
        conts = [args[k].get("arg_1") if isinstance(args[k], dict) else None for k in keys]
    elif isinstance(args, list):
        conts = [a[1] if isinstance(a, list) and len(a) > 1 else None for a in args]
    else:
        return None
    if len(conts) != n or not all(isinstance(c, str) for c in conts):
        return None
    return conts


def _loglikelihoods(doc: dict, where: Record) -> np.ndarray | None:
    """Per-choice log-likelihoods of a multiple-choice document, or None for a generated answer."""
    resps = get(doc, "filtered_resps", where, types=list)
    if resps and all(isinstance(r, list) and len(r) == 2 and not isinstance(r[0], list) for r in resps) and \
            not all(isinstance(r, str) for r in resps) and len(resps) > 1:
        return np.array([finite_float(r[0], f"filtered_resps.{i}.0", where) for i, r in enumerate(resps)])
    return None


def _generated_text(doc: dict, where: Record) -> str:
    resps = get(doc, "filtered_resps", where, types=list)
    cur = resps
    while isinstance(cur, list) and len(cur) == 1:
        cur = cur[0]
    if not isinstance(cur, str):
        raise where.error("filtered_resps", "is neither per-choice [loglik, is_greedy] pairs nor one generated text.")
    return cur


def _gold_indices(doc: dict, choices: list[str] | None, n: int, where: Record) -> set[int]:
    """The target choice(s): an index, a digit string, a choice's text, or a list of indices (several golds)."""
    target = get(doc, "target", where)
    targets = target if isinstance(target, list) else [target]
    if not targets:
        raise where.error("target", "is an empty list.")
    out = set()
    for t in targets:
        if isinstance(t, bool):
            raise where.error("target", "must be a choice index or a choice's text; got a bool.")
        if isinstance(t, (int, float)) or (isinstance(t, str) and t.strip().isdigit()):
            if float(t) != int(float(t)):
                raise where.error("target", f"must be a whole choice index; got {t!r}.")
            idx = int(float(t))
            if not 0 <= idx < n:
                raise where.error("target", f"is choice {idx}, but the document has {n} choices.")
            out.add(idx)
            continue
        if isinstance(t, str) and choices is not None:
            matches = [i for i, c in enumerate(choices) if c.strip() == t.strip()]
            if len(matches) == 1:
                out.add(matches[0])
                continue
        raise where.error("target", f"must be a choice index (0..{n - 1}) or the text of one choice; got {t!r}.")
    return out


def read_lm_eval(source, *, model: str = "", task: str | None = None, context: str = "",
                 readouts=None, verbalized_pattern=None, scale: str = "auto"):
    """Read an lm-evaluation-harness ``--log_samples`` JSON-lines file into calibnb's tidy table.

    Each line is one document: ``doc_id``, ``target``, ``arguments`` (the
    context and each choice's continuation), ``resps``/``filtered_resps`` and
    the metrics (``acc``, ``acc_norm``, ``exact_match``, ...).

    * **Multiple choice** (``filtered_resps`` = per-choice ``[loglik,
      is_greedy]``): confidence ``mc-softmax``, the softmax of the choices'
      log-likelihoods at the harness's answer (readout ``acc``), and
      ``mc-softmax-norm``, the softmax of the log-likelihoods divided by each
      choice's length in characters (readout ``acc_norm``, the harness's
      normalisation; the length is that
      of the logged continuation ``arguments.*.arg_1`` without its leading
      white space, the harness's default ``target_delimiter``). The answer is
      the argmax (the first on ties, as the harness's ``np.argmax``); it is
      correct when it is a ``target`` choice (an index, a choice's text, or a
      list of indices), which is checked against the logged
      ``acc``/``acc_norm`` (a disagreement is an error).
    * **Generated answers** (``filtered_resps`` = one text): the harness logs
      no probability, so the confidence is the one the text states
      (``verbalized``, parsed as :func:`calibnb.llm.read_verbalized` does);
      correctness is the logged ``exact_match`` (or ``acc``).

    Parameters
    ----------
    source : path
        ``samples_<task>_<date>.jsonl``.
    model, context : str
        Provenance (the samples file does not name the model).
    task : str, optional
        Default: taken from the file name ``samples_<task>_<date>.jsonl``.
    readouts : str or list of {"acc", "acc_norm"}, optional
        Default both, where the choices' texts are logged (``acc_norm`` needs them).
    verbalized_pattern, scale
        For generated answers: see :func:`calibnb.llm.read_verbalized`.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`calibnb.llm.read_log`.
    """
    path = as_path(source)
    check_str(model, "model", allow_none=False)
    check_str(context, "context", allow_none=False)
    check_str(task, "task")
    explicit = readouts is not None
    if readouts is None:
        readouts = _READOUTS
    if isinstance(readouts, str):
        readouts = (readouts,)
    if not isinstance(readouts, (list, tuple)) or not readouts or any(r not in _READOUTS for r in readouts):
        raise ValueError(f"readouts must be 'acc', 'acc_norm' or both; got {readouts!r}.")
    pattern = check_pattern(verbalized_pattern)
    scale = check_scale(scale)
    if task is None:
        m = re.match(r"samples_(.+?)_\d{4}-\d{2}-\d{2}T", path.name)
        task = m.group(1) if m else path.stem
    rows, pending = [], []
    for where, doc in iter_jsonl(path):
        if not isinstance(doc, dict):
            raise ValueError(f"{where.where}: a line must be a JSON object; got {type(doc).__name__}.")
        doc_id = get(doc, "doc_id", where)
        where = Record(f"{where.where} (doc_id {doc_id})")
        base = dict(item_id=str(doc_id), model=model, task=task, context=context, record=where.where)
        ll = _loglikelihoods(doc, where)
        logged = doc.get("metrics") if isinstance(doc.get("metrics"), list) else []
        if ll is not None and ("acc_mutual_info" in doc or "acc_mutual_info" in logged):
            # the harness then logs each choice's unconditional log-likelihood beside its conditional one:
            # a softmax over all of them would not be a distribution over the choices
            raise where.error("filtered_resps", "holds the unconditional log-likelihoods of acc_mutual_info "
                              "beside the choices' own; run the task without acc_mutual_info to read it.")
        if ll is not None:
            n = ll.shape[0]
            choices = _choice_strings(doc, n, where)
            gold = _gold_indices(doc, choices, n, where)
            for r in readouts:
                if r == "acc_norm" and choices is None:
                    if explicit:
                        raise where.error("arguments", "does not hold each choice's text, needed for acc_norm.")
                    continue
                # the harness divides by len(choice); the logged continuation is target_delimiter + choice
                lengths = np.array([len(c.lstrip()) for c in choices]) if choices is not None else None
                if r == "acc_norm" and (lengths == 0).any():
                    raise where.error("arguments", "holds an empty choice: acc_norm divides by its length.")
                score = ll / lengths if r == "acc_norm" else ll
                p = np.exp(score - score.max())
                p /= p.sum()
                pred = int(np.argmax(score))
                correct = pred in gold
                if r in doc and doc[r] is not None:
                    logged = correctness(doc[r], r, where)
                    if logged != correct:
                        raise where.error(r, f"is {doc[r]!r}, but the argmax of the log-likelihoods is choice "
                                             f"{pred} and the target is {sorted(gold) if len(gold) > 1 else next(iter(gold))}.")
                answer = choices[pred].strip() if choices is not None else str(pred)
                rows.append(dict(base, answer=answer, confidence=float(p[pred]), correct=correct,
                                 confidence_source="mc-softmax-norm" if r == "acc_norm" else "mc-softmax",
                                 readout=_READOUT_TEXT[r],
                                 scored_answer="supplied", scale="logprob"))
        else:
            text = _generated_text(doc, where)
            metric = next((m for m in ("exact_match", "acc") if doc.get(m) is not None), None)
            if metric is None:
                raise where.error("exact_match", "is missing: a generated answer needs its logged correctness.")
            correct = correctness(doc[metric], metric, where)
            value, percent = parse_one(text, pattern, where, "filtered_resps")
            pending.append((dict(base, answer=strip_statement(text, pattern), correct=correct, confidence_source="verbalized",
                                 readout=f"lm-eval: stated confidence in filtered_resps, pattern {pattern.pattern!r}",
                                 scored_answer="generated"), value, percent))
    if pending:
        values = resolve_scale([(v, pc, row["record"]) for row, v, pc in pending], scale)
        for (row, _, _), (conf, label) in zip(pending, values):
            rows.append(dict(row, confidence=conf, scale=label))
    return frame(rows, what=path.name)
