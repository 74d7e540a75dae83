"""Confidence and correctness of language-model answers, from the logs people already have.

Readers turn each log format into **one tidy table** (a :class:`pandas.DataFrame`,
one row per item and confidence source) whose provenance columns say where each
confidence came from, because the same answers scored with two readouts are
calibrated differently (see ``notebooks/07_llm_confidence.ipynb``):

========================  ======================================================
format (``read_log``)      reader
========================  ======================================================
``"openai"``              :func:`read_openai`: chat/legacy completions with
                          ``logprobs`` (OpenAI, vLLM, llama.cpp servers; Batch
                          API output lines)
``"lm-eval"``             :func:`read_lm_eval`: lm-evaluation-harness
                          ``--log_samples`` JSONL
``"helm"``                :func:`read_helm`: a HELM run folder
                          (``per_instance_stats.json`` + ``run_spec.json``)
``"inspect"``             :func:`read_inspect`: an Inspect AI eval log
                          (``.json`` or ``.eval``)
``"verbalized"``          :func:`read_verbalized`: a confidence stated in the
                          text ("Confidence: 85%"), JSONL/CSV or HLE's judged JSON
========================  ======================================================

No reader downloads anything; every one validates its input and names the
record (line, entry, sample) and field of a problem. ``calibnb.llm`` is a
submodule: ``import calibnb.llm`` (it is not re-exported by ``calibnb``).
"""

from __future__ import annotations

from ..validation import check_choice as _check_choice
from ._common import COLUMNS, CONFIDENCE_SOURCES, exact_match, normalize_answer
from ._helm import read_helm
from ._inspect import read_inspect
from ._lm_eval import read_lm_eval
from ._openai import read_openai
from ._verbalized import DEFAULT_ANSWER_PATTERN, DEFAULT_PATTERN, parse_verbalized_confidence, read_verbalized

__all__ = [
    "read_log", "FORMATS", "COLUMNS", "CONFIDENCE_SOURCES",
    "read_openai", "read_lm_eval", "read_helm", "read_inspect", "read_verbalized",
    "parse_verbalized_confidence", "DEFAULT_PATTERN", "DEFAULT_ANSWER_PATTERN",
    "normalize_answer", "exact_match", "by_source",
]

#: ``format`` of :func:`read_log` -> its reader.
FORMATS = {
    "openai": read_openai,
    "lm-eval": read_lm_eval,
    "helm": read_helm,
    "inspect": read_inspect,
    "verbalized": read_verbalized,
}


def read_log(source, *, format: str, **options):
    """Read a language model's answer log into calibnb's tidy (confidence, correctness) table.

    Parameters
    ----------
    source : path
        The log file (a HELM run may also be its folder).
    format : {"openai", "lm-eval", "helm", "inspect", "verbalized"}
        Which reader (:data:`FORMATS`); no guessing from the file.
    **options
        Passed to that reader (e.g. ``gold=`` for ``openai``, ``pattern=`` and
        ``scale=`` for ``verbalized``); an option the reader does not take is a
        ``TypeError`` naming it.

    Returns
    -------
    pandas.DataFrame
        One row per (item, confidence source), columns in this order:

        ``item_id`` (str)
            the item (document, instance, sample, question) id;
        ``model``, ``task`` (str)
            as the log names them ('' when it does not);
        ``answer`` (str)
            the scored answer;
        ``confidence`` (float in [0, 1])
            the confidence in that answer;
        ``correct`` (bool)
            whether it is right, as the log scores it (or by exact match
            against gold answers);
        ``confidence_source`` (str)
            one of :data:`CONFIDENCE_SOURCES`: ``mc-softmax``,
            ``mc-softmax-norm``, ``sequence-probability``,
            ``mean-token-logprob``, ``min-token``, ``first-token``,
            ``verbalized``, ``p-true``, ``sample-agreement``;
        ``readout`` (str)
            how the number was read out of the log (fields and transform);
        ``scored_answer`` (str)
            ``generated`` (the model wrote it) or ``supplied`` (one of given
            choices or a proposed answer);
        ``context`` (str)
            the elicitation context the log records (few-shot, method, epoch);
        ``scale`` (str)
            the scale the raw number was on: ``logprob``, ``0-1`` or ``0-100``;
        ``record`` (str)
            where in the file the row came from (``file line 7 (item q7)``).

        ``item_id``, ``model``, ``task`` and ``confidence_source`` identify a
        row (one confidence per item and source), so the sources of one table
        pair on the same items. ``df.attrs["dropped"]`` lists records dropped
        with ``on_missing="drop"``.

    Examples
    --------
    >>> import tempfile, json, pathlib
    >>> line = {"item_id": "q1", "gold": "Paris", "response": {"model": "m", "choices": [
    ...     {"message": {"content": "Paris"}, "logprobs": {"content": [{"token": "Paris", "logprob": -0.5}]}}]}}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d, "log.jsonl"); _ = p.write_text(json.dumps(line))
    ...     df = read_log(p, format="openai", confidence_sources="sequence-probability")
    >>> df[["item_id", "answer", "confidence", "correct", "confidence_source"]].round(4).values.tolist()
    [['q1', 'Paris', 0.6065, True, 'sequence-probability']]
    """
    _check_choice(format, tuple(FORMATS), "format")
    return FORMATS[format](source, **options)


def by_source(table):
    """``{confidence_source: (conf, correct)}`` of a table from :func:`read_log`, in table order.

    The arrays for calibnb's metrics, one pair per confidence source. Each
    source's rows follow the order in which the items (``model``, ``task``,
    ``item_id``, where the table has them) first appear in the table, so the
    sources pair item by item even after the table was sorted or filtered.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"confidence": [0.9, 0.4], "correct": [True, False],
    ...                   "confidence_source": ["verbalized"] * 2})
    >>> {k: (c.tolist(), y.tolist()) for k, (c, y) in by_source(t).items()}
    {'verbalized': ([0.9, 0.4], [True, False])}
    """
    import pandas as pd

    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a DataFrame from calibnb.llm.read_log; got {type(table).__name__}.")
    missing = [c for c in ("confidence", "correct", "confidence_source") if c not in table.columns]
    if missing:
        raise ValueError(f"table has no column {missing[0]!r} (a table from calibnb.llm.read_log has it).")
    import numpy as np

    table = table.reset_index(drop=True)  # row positions as the index
    ids = [c for c in ("model", "task", "item_id") if c in table.columns]
    rank = None
    if "item_id" in ids:
        key = table[ids].astype(str).agg("\x1f".join, axis=1)
        rank = pd.Index(pd.unique(key)).get_indexer(key)
    out = {}
    for name, g in table.groupby("confidence_source", sort=False):
        if rank is not None:  # the items' order of first appearance
            g = g.iloc[np.argsort(rank[g.index.to_numpy()], kind="stable")]
        out[str(name)] = (g["confidence"].to_numpy(dtype=float), g["correct"].to_numpy(dtype=bool))
    return out
