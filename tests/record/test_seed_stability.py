"""The seed table (benchmarks/seed_stability.py) and the record's seed and per-paper helpers, without a kernel."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from calibnb.record.reproduction import (
    Reproduction,
    paper_summary,
    restatus,
    seed_split,
    stability_text,
    unmarked_flips,
)

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("seed_stability", ROOT / "benchmarks" / "seed_stability.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LEDGER = {"paper": "Tiny 2024", "notebook": "tiny", "claims": [
    {"id": "lowers", "quote": "A lowers B", "locator": "§3", "kind": "range", "rule": "direction", "paper": "higher",
     "refuted_by": -0.1, "sources": ["a"], "expected": "reproduces", "reason": "r"},
    {"id": "cell1", "quote": "x = 0.5", "locator": "Table 1", "kind": "number", "rule": "value", "paper": 0.5,
     "tol": 0.005, "tol_reason": "2 decimals", "refuted_by": 0.6, "sources": ["a"], "expected": "reproduces",
     "reason": "r", "table": "Table 1"},
    {"id": "cell2", "quote": "y = 0.7", "locator": "Table 1", "kind": "number", "rule": "value", "paper": 0.7,
     "tol": 0.005, "tol_reason": "2 decimals", "refuted_by": 0.8, "sources": ["a"], "expected": "reproduces",
     "reason": "r", "table": "Table 1"},
    {"id": "half", "quote": "MacroCE = 50.00", "locator": "Table 2", "kind": "identity",
     "expected": "by-construction", "reason": "identity"}]}


def _run(folder: Path, seed: int, diff_interval, cell2: float) -> dict:
    ledger = folder / "claims" / "tiny.yaml"
    rep = Reproduction.from_ledger(ledger, results_path=folder / "runs" / f"tiny.seed{seed}.json")
    rep.check("lowers", ours=sum(diff_interval) / 2, interval=diff_interval, source="a")
    rep.check("cell1", ours=0.5, source="a")
    rep.check("cell2", ours=cell2, source="a")
    rep.identity("half", ours=0.5, expected=0.5)
    rep.write()
    return rep.to_dict()


@pytest.fixture()
def tiny(tmp_path):
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "tiny.yaml").write_text(yaml.safe_dump(LEDGER, sort_keys=False))
    (tmp_path / "tiny.ipynb").write_text("{}")
    (tmp_path / "runs").mkdir()
    return tmp_path


def test_parse_seeds():
    parse = _script().parse_seeds
    assert parse("0-4") == [0, 1, 2, 3, 4] and parse("0,3") == [0, 3] and parse("2") == [2]
    for bad in ("4-0", "1,1", "", "-1"):
        with pytest.raises(ValueError):
            parse(bad)


def test_table_from_stored_runs_rescored_under_the_current_ledger(tiny):
    runs = [_run(tiny, 0, (0.1, 0.3), 0.7), _run(tiny, 1, (-0.1, 0.3), 0.7), _run(tiny, 2, (0.1, 0.3), 0.9)]
    script = _script()
    table = script.build_table(["tiny"], [0, 1, 2, 3], None, tiny / "runs", tiny)
    entry = table["notebooks"]["tiny"]
    assert entry["ran"] == [0, 1, 2] and set(entry["failed"]) == {"3"}
    lowers = entry["claims"]["lowers"]
    assert lowers["statuses"] == ["reproduces", "inconclusive", "reproduces"]
    assert lowers["split"] == {"reproduces": 2, "inconclusive": 1}
    assert lowers["text"] == "flips: reproduces 2/3, inconclusive 1/3"
    assert entry["claims"]["half"]["text"] == "stable 3/3"
    # the ledger does not mark the flipping claims: both are reported, with the measured split
    splits = {cid: c["split"] for cid, c in entry["claims"].items()}
    problems = unmarked_flips(splits, tiny / "claims" / "tiny.yaml")
    assert len(problems) == 2 and "claim 'lowers'" in problems[0] and "claim 'cell2'" in problems[1]
    # a rule change is applied to the stored runs without a re-run: a wider tolerance for cell2
    ledger = yaml.safe_load((tiny / "claims" / "tiny.yaml").read_text())
    ledger["claims"][2].update(tol=0.25, refuted_by=1.0)
    (tiny / "claims" / "tiny.yaml").write_text(yaml.safe_dump(ledger, sort_keys=False))
    assert restatus(runs[2], tiny / "claims" / "tiny.yaml")["cell2"] == "reproduces"
    # marked with the measured split, a flip is no longer a problem
    ledger["claims"][0]["seed_sensitive"] = {"reproduces": 2, "inconclusive": 1}
    (tiny / "claims" / "tiny.yaml").write_text(yaml.safe_dump(ledger, sort_keys=False))
    assert unmarked_flips({"lowers": lowers["split"]}, tiny / "claims" / "tiny.yaml") == []


def test_paper_summary_counts_a_table_once_and_seed_sensitive_apart(tiny):
    results = _run(tiny, 0, (0.1, 0.3), 0.9)  # cell2 fails: Table 1 is one claim, partly
    summary = paper_summary(results, {"lowers": {"reproduces": 3, "inconclusive": 2}})
    assert summary["counts"]["partly"] == 1 and summary["counts"]["reproduces"] == 0  # lowers is seed-sensitive
    assert summary["seed_sensitive"] == ["lowers"] and summary["mismatches"] == ["cell2"]
    assert summary["line"] == (
        "Tiny 2024: 0 of 1 seed-stable decided claims reproduce, 1 partly, 0 do not, 0 could not be decided; "
        "1 seed-sensitive (lowers flips: reproduces 3/5, inconclusive 2/5); 0 not checkable; 1 by construction "
        "(not counted); tables counted once: Table 1 (1 of 2 cells reproduce); differs from the ledger's "
        "expectation: cell2.")
    assert seed_split(["reproduces", None, "reproduces"]) == {"reproduces": 2}
    assert stability_text(None) == "" and stability_text({"partly": 4}) == "stable 4/4"


def test_committed_seed_table_matches_the_ledgers():
    """The committed table (if any) covers every ledger claim, and every flip it measured is marked in the ledger."""
    path = ROOT / "data" / "seed_stability.json"
    if not path.exists():
        pytest.skip("no committed seed table yet (run benchmarks/seed_stability.py)")
    table = json.loads(path.read_text())
    assert table["seeds"] and len(table["seeds"]) >= 2
    for stem, entry in table["notebooks"].items():
        ledger = ROOT / "notebooks" / "claims" / f"{stem}.yaml"
        assert ledger.exists(), stem
        problems = unmarked_flips({cid: c["split"] for cid, c in entry["claims"].items()}, ledger)
        assert not problems, "\n".join(problems)
