"""The declaration of a papermill test case for a notebook.

Each notebook ``notebooks/<stem>.ipynb`` has a file
``tests/notebook_cases/<stem>.py`` that defines::

    from nbcase import Case

    def check_default(results):
        ...  # asserts on the default run's parsed results JSON

    CASES = [
        Case("more_bins", {"n_bins": 15}, check_more_bins),
        Case("other_seed", {"seed": 1}, check_other_seed),
    ]

``tests/test_notebooks.py`` runs the notebook once at its defaults and once per
case with ``params`` injected by papermill (``results_path`` is always set by
the test), then calls ``check(results, default_results)`` with the parsed
results JSON of the case's run and of the default run. A check asserts how the
results should change (or not) with the parameters.

A notebook with a claims ledger (``notebooks/claims/<stem>.yaml``) is guarded
by :func:`assert_statuses_match_ledger`: every status computed in the default
run must equal the ledger's ``expected``, so a change that flips a finding fails
until the ledger's ``expected`` and ``reason`` are updated in the same commit.
Case runs are not compared with the ledger (other parameters may legitimately
change a status); :func:`assert_complete_record` only checks that every claim
was recorded with a valid status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["Case", "assert_statuses_match_ledger", "assert_complete_record", "assert_no_unmarked_flip",
           "comparable_claims", "output_problems", "assert_clean_outputs"]

_ID = re.compile(r"^[A-Za-z0-9_.=+-]+$")


@dataclass(frozen=True)
class Case:
    """One papermill run of a notebook with other parameters.

    Parameters
    ----------
    id : str
        Short name used in the test id (letters, digits, ``_.=+-``).
    params : dict
        Parameters injected into the notebook's ``parameters`` cell; must not
        contain ``results_path`` (the test sets it).
    check : callable
        ``check(results, default_results)``; raises ``AssertionError`` when the
        results did not change the way they should.
    """

    id: str
    params: dict[str, Any] = field(default_factory=dict)
    check: Callable[[dict, dict], None] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ID.match(self.id):
            raise ValueError(f"Case id must be a short name of letters, digits and _.=+-; got {self.id!r}.")
        if not isinstance(self.params, dict) or not all(isinstance(k, str) for k in self.params):
            raise TypeError(f"Case {self.id!r}: params must be a dict with string keys.")
        if not self.params:
            raise ValueError(f"Case {self.id!r}: params is empty; a case must change at least one parameter.")
        if "results_path" in self.params:
            raise ValueError(f"Case {self.id!r}: params must not set results_path; the test sets it.")
        if not callable(self.check):
            raise TypeError(f"Case {self.id!r}: check must be callable as check(results, default_results).")


def assert_complete_record(results: dict, ledger_path: str | Path, what: str) -> None:
    """Every claim of the ledger is in the ledger-based results JSON, with one of the statuses."""
    from calibnb.record.reproduction import STATUSES, load_ledger

    ledger = load_ledger(ledger_path)
    assert "ledger" in results, (f"{what}: the results JSON is not a ledger record; build the record with "
                                 f"Reproduction.from_ledger({str(Path('claims') / Path(ledger_path).name)!r}).")
    assert Path(results["ledger"]).name == Path(ledger_path).name, (
        f"{what}: the notebook used ledger {results['ledger']}, not {ledger_path}")
    statuses = {c["id"]: c.get("status") for c in results["claims"]}
    missing = [cid for cid in ledger.claims if cid not in statuses]
    assert not missing, f"{what}: claims of {ledger_path} missing from the results: {', '.join(missing)}"
    bad = {cid: s for cid, s in statuses.items() if s not in STATUSES}
    assert not bad, f"{what}: claims without a valid status: {bad}"


def assert_statuses_match_ledger(results: dict, ledger_path: str | Path, what: str = "default run") -> None:
    """Fail, naming each claim, both statuses and the ledger file, if a computed status differs from ``expected``."""
    from calibnb.record.reproduction import status_mismatches

    assert_complete_record(results, ledger_path, what)
    problems = status_mismatches(results, ledger_path)
    if problems:
        raise AssertionError(f"{what}: {len(problems)} computed status(es) differ from ledger {ledger_path}:\n  "
                             + "\n  ".join(problems))


def comparable_claims(results: dict, default: dict) -> list[str]:
    """Claims recorded on the same sources, over the same number of units, in both runs.

    A quick-size seed case may drop sources (fewer networks) or count over fewer units; a status can then differ
    for a reason other than the seed, so such claims are not compared.
    """
    def shape(c: dict):
        out = []
        for s in c.get("sources") or []:
            ours = s.get("ours")
            n = ours[1] if c.get("kind") == "count" and isinstance(ours, list) and len(ours) == 2 else None
            out.append((s.get("source"), n))
        return out

    a = {c["id"]: c for c in results["claims"]}
    b = {c["id"]: c for c in default["claims"]}
    return [cid for cid in a if cid in b and shape(a[cid]) == shape(b[cid])]


def assert_no_unmarked_flip(results: dict, default: dict, ledger_path: str | Path, what: str) -> None:
    """Fail on a claim whose status differs between two seeds while the ledger does not mark it seed_sensitive."""
    from calibnb.record.reproduction import load_ledger, seed_split, unmarked_flips

    a = {c["id"]: c["status"] for c in results["claims"]}
    b = {c["id"]: c["status"] for c in default["claims"]}
    splits = {cid: seed_split([b[cid], a[cid]]) for cid in comparable_claims(results, default)}
    problems = unmarked_flips(splits, load_ledger(ledger_path))
    if problems:
        raise AssertionError(f"{what}: {len(problems)} status(es) flip between the default seed and this seed:\n  "
                             + "\n  ".join(problems) + "\n  Mark them seed_sensitive in the ledger with the split "
                             "measured by benchmarks/seed_stability.py, or make the criterion stable.")


# A raw Python warning as the warnings module prints it ("path.py:12: SomeWarning: message"), or a traceback of one.
_RAW_WARNING = re.compile(r"\.py:\d+: \w*Warning\b|\bwarnings\.warn\(")
# A machine path: /work, /tmp, /home, /root at the start of a path (not inside a URL), or an installed package's path.
_MACHINE_PATH = re.compile(r"(?<![\w.:/-])/(?:work|tmp|home|root)/|site-packages")


def output_problems(notebook: Any) -> list[str]:
    """Raw warnings and machine paths in the text outputs of an executed notebook (issue 30, the student view).

    ``notebook`` is a path or an ``nbformat`` notebook. Streams, tracebacks and every ``text/*`` representation
    of a display are scanned (images and widget models are not); each problem names the cell and quotes the line.
    A warning that is a finding must be caught and said in words; a path must be said relative to the project.
    """
    import nbformat

    nb = notebook if hasattr(notebook, "cells") else nbformat.read(str(notebook), as_version=4)
    problems = []
    for k, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            texts = []
            if out.get("output_type") == "stream":
                texts.append(out.get("text", ""))
            elif out.get("output_type") == "error":
                texts.append("\n".join(out.get("traceback", [])))
            else:
                texts += [v if isinstance(v, str) else "".join(v) for m, v in out.get("data", {}).items()
                          if m.startswith("text/")]
            for text in texts:
                for line in text.splitlines():
                    for what, pattern in (("raw warning", _RAW_WARNING), ("machine path", _MACHINE_PATH)):
                        if pattern.search(line):
                            problems.append(f"cell {k} (id {cell.get('id')}): {what}: {line.strip()[:200]}")
    return problems


def assert_clean_outputs(notebook: Any, what: str) -> None:
    """Fail, quoting each line, if an executed notebook's outputs show a raw warning or a machine path."""
    problems = output_problems(notebook)
    assert not problems, f"{what}: {len(problems)} output line(s) a student should not see:\n  " + "\n  ".join(problems)
