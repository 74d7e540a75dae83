"""HELM run folders: ``per_instance_stats.json`` (``max_prob``, ``exact_match``) with ``run_spec.json``."""

from __future__ import annotations

from pathlib import Path

from ..validation import check_choice
from ._common import Record, as_path, check_on_missing, check_str, Dropped, finite_float, frame, get, load_json

__all__ = ["read_helm"]

_SEPARATE = ("multiple_choice_separate_original", "multiple_choice_separate_calibrated")
_FRACTIONAL = ("raise", "floor")


def _stat(stats: list, name: str, where: Record, index: int):
    """The mean of the unperturbed stat ``name`` of one instance, or None."""
    found = [s for s in stats if isinstance(s, dict) and isinstance(s.get("name"), dict)
             and s["name"].get("name") == name and s["name"].get("perturbation") is None]
    if not found:
        return None
    if len(found) > 1:
        raise where.error(f"stats[name={name}]", "appears more than once.")
    return finite_float(get(found[0], "mean", where), f"stats[name={name}].mean", where)


def read_helm(source, *, method: str | None = None, fractional: str = "raise", on_missing: str = "raise"):
    """Read a HELM run folder into calibnb's tidy table.

    ``source`` is a run folder (``benchmark_output/runs/<suite>/<run>/``) or
    its ``per_instance_stats.json``. Each unperturbed entry (``perturbation``
    absent) of ``per_instance_stats.json`` gives one row: confidence = the
    stat ``max_prob``, correct = the stat ``exact_match`` (HELM's own inputs
    to ``ece_10_bin`` and ``selective_cov_acc_area``). ``run_spec.json``
    gives the model, the task (the run name up to its first ':'), and the
    adapter method, hence the provenance: ``max_prob`` is the softmax over
    the references' scores for the ``multiple_choice_separate_*`` methods
    (``mc-softmax``) and ``exp(logprob)`` of the generated completion
    otherwise (``sequence-probability``). The answers are read from
    ``scenario_state.json`` where the folder has it (else left empty).
    Several training trials give item ids ``<instance_id>@<trial>``.

    Parameters
    ----------
    source : path
    method : str, optional
        The adapter method, when the folder has no ``run_spec.json``.
    fractional : {"raise", "floor"}
        HELM's separate multiple choice scores a tie of several references as
        a fraction; ``"floor"`` counts it wrong, as HELM's calibration metrics
        do (``int(exact_match)``); ``"raise"`` refuses it.
    on_missing : {"raise", "drop"}
        An instance without ``max_prob`` or ``exact_match`` (HELM skips it).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`calibnb.llm.read_log`.
    """
    path = as_path(source)
    check_str(method, "method")
    check_choice(fractional, _FRACTIONAL, "fractional")
    on_missing = check_on_missing(on_missing)
    folder = path if path.is_dir() else path.parent
    stats_path = folder / "per_instance_stats.json" if path.is_dir() else path
    if not stats_path.exists():
        raise ValueError(f"source: the folder {folder.name!r} has no per_instance_stats.json.")
    entries = load_json(stats_path)
    if not isinstance(entries, list):
        raise ValueError(f"{stats_path.name}: must be a list of per-instance entries; got {type(entries).__name__}.")
    model, task, context = "", folder.name, ""
    spec_path = folder / "run_spec.json"
    if spec_path.exists():
        spec = load_json(spec_path)
        where = Record(spec_path.name)
        adapter = get(spec, "adapter_spec", where, types=dict)
        model = str(adapter.get("model") or adapter.get("model_deployment") or "")
        name = str(get(spec, "name", where, types=str))
        task = name.split(":", 1)[0]
        spec_method = str(adapter.get("method", ""))
        if method is not None and method != spec_method:
            raise ValueError(f"method={method!r} contradicts {spec_path.name}'s adapter_spec.method {spec_method!r}.")
        method = spec_method
        shots = adapter.get("max_train_instances")
        context = f"{name}; method {method}" + (f", {shots} in-context examples" if shots is not None else "")
    elif method is None:
        raise ValueError(f"source: {folder.name!r} has no run_spec.json; pass method= (the adapter method) so that "
                         "the confidence's provenance is known.")
    else:
        context = f"method {method}"
    source_name = "mc-softmax" if method in _SEPARATE else "sequence-probability"
    readout = ("helm: max_prob = max softmax of the references' scores" if source_name == "mc-softmax"
               else "helm: max_prob = exp(logprob) of the generated completion")
    answers = _answers(folder)
    trials = {e.get("train_trial_index", 0) for e in entries if isinstance(e, dict)}
    rows, dropped = [], Dropped()
    for i, entry in enumerate(entries):
        where = Record(f"{stats_path.name} entry {i}")
        if not isinstance(entry, dict):
            raise ValueError(f"{where.where}: must be an object; got {type(entry).__name__}.")
        if entry.get("perturbation") is not None:
            continue
        iid = get(entry, "instance_id", where)
        trial = entry.get("train_trial_index", 0)
        where = Record(f"{stats_path.name} entry {i} (instance {iid})")
        stats = get(entry, "stats", where, types=list)
        conf = _stat(stats, "max_prob", where, i)
        em = _stat(stats, "exact_match", where, i)
        if conf is None or em is None:
            exc = where.error("stats", f"has no {'max_prob' if conf is None else 'exact_match'} stat.")
            if on_missing == "raise":
                raise exc
            dropped.add(exc)
            continue
        if em not in (0.0, 1.0):
            if fractional == "raise" or not 0.0 <= em <= 1.0:
                raise where.error("stats[name=exact_match].mean", f"is {em!r}, not 0 or 1 (a tie between "
                                  "references; fractional='floor' counts it wrong, as HELM does).")
            em = float(int(em))
        item_id = str(iid) if len(trials) == 1 else f"{iid}@{trial}"
        rows.append(dict(item_id=item_id, model=model, task=task, answer=answers.get((str(iid), trial), ""),
                         confidence=conf, correct=bool(em), confidence_source=source_name, readout=readout,
                         scored_answer="supplied" if "multiple_choice" in str(method) else "generated",
                         context=context, scale="0-1", record=where.where))
    return frame(rows, what=stats_path.name, dropped=dropped)


def _answers(folder: Path) -> dict:
    """(instance id, trial) -> the first completion's text, from scenario_state.json where present."""
    path = folder / "scenario_state.json"
    if not path.exists():
        return {}
    state = load_json(path)
    out = {}
    for j, rs in enumerate(state.get("request_states", []) if isinstance(state, dict) else []):
        where = Record(f"{path.name} request_states.{j}")
        if not isinstance(rs, dict) or rs.get("reference_index") is not None:
            continue
        iid = get(rs, "instance.id", where, required=False)
        text = get(rs, "result.completions.0.text", where, required=False)
        if iid is not None and isinstance(text, str):
            out[(str(iid), rs.get("train_trial_index", 0))] = text.strip()
    return out
