"""Tests of calibnb.record.reproduction: ledgers, decision rules, statuses, JSON and the generated section."""

from __future__ import annotations

import copy
import html
import json
import math
import os
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from calibnb.record.reproduction import (
    PHRASES,
    STATUSES,
    LedgerError,
    Reproduction,
    ReproductionError,
    claim_status,
    claims_table_html,
    clopper_pearson,
    decide,
    did_not_reproduce_markdown,
    from_json_float,
    interval_outcome,
    load_ledger,
    status_counts,
    status_mismatches,
    to_jsonable,
    write_json_atomic,
    write_text_atomic,
)

LEDGER_DIR = Path(__file__).resolve().parents[2] / "notebooks" / "claims"


def test_constructor_errors():
    with pytest.raises(TypeError, match="paper must be a non-empty string"):
        Reproduction("")
    with pytest.raises(TypeError, match="results_path must be a path or None"):
        Reproduction("p", results_path=3)
    with pytest.raises(ValueError, match="results_path must not be an empty string"):
        Reproduction("p", results_path="")


def test_deprecated_record_is_gone():
    """The ledger-free record (claim/known_gap, Claim) was removed (issue 26): only the ledger path is left."""
    import calibnb
    import calibnb.record.reproduction as module

    assert not hasattr(Reproduction, "claim") and not hasattr(Reproduction, "known_gap")
    assert not hasattr(module, "Claim") and not hasattr(calibnb, "Claim")
    old = Reproduction("p")
    for call in (lambda: old.check("a", ours=1.0, source="s"), lambda: old.identity("a", ours=1, expected=1),
                 lambda: old.not_checkable("a"), old.statuses, old.did_not_reproduce, old.finish):
        with pytest.raises(TypeError, match="needs a ledger: build the record with Reproduction.from_ledger"):
            call()
    assert old.missing() == []


def test_add_result_validates_at_once():
    rep = Reproduction("p")
    with pytest.raises(TypeError, match="table has unsupported type set"):
        rep.add_result("table", {1, 2})
    with pytest.raises(TypeError, match="key must be a non-empty string"):
        rep.add_result("", 1)
    rep.add_result("a", 1)
    rep.add_result("a", 2)  # last value wins
    assert rep.results == {"a": 2}


# ---------------------------------------------------------------- JSON helpers


def test_to_jsonable_types():
    Parts = namedtuple("Parts", ["r_o", "r_u"])

    @dataclass
    class Box:
        a: float
        b: np.ndarray

    df = pd.DataFrame({"hmr": [0.5, 0.4], "n": np.array([1, 2], dtype=np.int64)}, index=["X", "Y"])
    series = pd.Series([0.1, np.inf], index=[3, 4], name="ks")
    value = {
        "df": df,
        "series": series,
        "parts": Parts(np.float64(0.5), 0.25),
        "box": Box(1.0, np.arange(2)),
        "nested": [(1, 2), {"x": np.int32(3)}],
        1: "int key",
        "none": None,
        "bool": np.bool_(True),
        "matrix": np.eye(2),
    }
    out = to_jsonable(value)
    json.dumps(out, allow_nan=False)  # strictly serialisable
    assert out["df"] == {"index": ["X", "Y"], "columns": ["hmr", "n"], "data": [[0.5, 1], [0.4, 2]]}
    pd.testing.assert_frame_equal(pd.DataFrame(**out["df"]), df, check_dtype=False)
    assert out["series"] == {"index": [3, 4], "data": [0.1, "inf"], "name": "ks"}
    assert out["parts"] == {"r_o": 0.5, "r_u": 0.25}
    assert out["box"] == {"a": 1.0, "b": [0, 1]}
    assert out["nested"] == [[1, 2], {"x": 3}]
    assert out["1"] == "int key"
    assert out["bool"] is True
    assert out["matrix"] == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (object(), "x has unsupported type object"),
        ({(1, 2): 3}, "x has a key of unsupported type tuple"),
        (np.array(["a"]), "x is an array of unsupported dtype"),
        (np.complex128(1j), "unsupported NumPy type"),
        ({"inner": [1, {2}]}, r"x\['inner'\]\[1\] has unsupported type set"),
    ],
)
def test_to_jsonable_errors(value, match):
    with pytest.raises(TypeError, match=match):
        to_jsonable(value, "x")


def test_add_result_validates_at_once():
    rep = Reproduction("p")
    with pytest.raises(TypeError, match="table has unsupported type set"):
        rep.add_result("table", {1, 2})
    with pytest.raises(TypeError, match="key must be a non-empty string"):
        rep.add_result("", 1)
    rep.add_result("a", 1)
    rep.add_result("a", 2)  # last value wins
    assert rep.results == {"a": 2}


def test_from_json_float():
    assert from_json_float("-inf") == -math.inf
    assert from_json_float(3) == 3.0
    with pytest.raises(ValueError, match="one of 'nan', 'inf', '-inf'"):
        from_json_float("big")
    with pytest.raises(TypeError, match="value must be a number"):
        from_json_float(True)


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"good": 1})

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(path, "half")
    monkeypatch.undo()
    assert json.loads(path.read_text()) == {"good": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # temp file removed


def test_atomic_write_unserialisable_leaves_nothing(tmp_path):
    path = tmp_path / "r.json"
    with pytest.raises(TypeError):
        write_json_atomic(path, {"bad": object()})
    assert list(tmp_path.iterdir()) == []



# ======================================================================= ledgers

BASE_CLAIMS = [
    {"id": "hmr_x", "quote": "HMR(X) = 0.557", "locator": "§4.1.1, Table 2", "kind": "number", "rule": "value",
     "paper": 0.557, "tol": 0.0005, "tol_reason": "printed to 3 decimals", "refuted_by": 0.56,
     "sources": ["example1", "example2"], "expected": "partly", "reason": "holds on example1, not on example2"},
    {"id": "ts_lowers", "quote": "TS lowers ECE", "locator": "Table 1", "kind": "range", "rule": "direction",
     "paper": "higher", "refuted_by": -0.05, "sources": ["cifar10"], "expected": "reproduces",
     "reason": "the CI lies above 0"},
    {"id": "spline_best", "quote": "spline is best on 9 of 13 networks", "locator": "Table 3", "kind": "count",
     "rule": "count", "paper": [9, 13], "refuted_by": [0, 20], "sources": ["cifar10"],
     "expected": "does-not-reproduce", "reason": "1 of 8"},
    {"id": "only_x_first", "quote": "only HMR ranks X first", "locator": "§4.1", "kind": "verdict", "rule": "value",
     "paper": True, "refuted_by": False, "sources": ["example1"], "expected": "reproduces",
     "reason": "the paper's data"},
    {"id": "avg_half", "quote": "MacroCE = 50.00", "locator": "Table 2", "kind": "identity", "paper": 0.5,
     "expected": "by-construction", "reason": "(1 - a + a) / 2 for any accuracy a"},
    {"id": "avg_half_two", "quote": "MacroCE = 50.00", "locator": "Table 7", "kind": "identity",
     "sources": ["qa", "trained"], "expected": "by-construction", "reason": "as above, on two sources"},
    {"id": "human_study", "quote": "users trust ConsCal more", "locator": "§5.4", "kind": "not-checkable",
     "expected": "not-checkable", "reason": "the human study's answers are not public"},
    {"id": "stable", "quote": "MacroCE remains stable", "locator": "Table 5", "kind": "range", "rule": "magnitude",
     "phrase": "stable", "refuted_by": 0.5, "sources": ["cifar10", "qa"], "expected": "inconclusive",
     "reason": "both intervals straddle the phrase's bound"},
    {"id": "simulated", "quote": "TS lowers ECE (simulation)", "locator": "§3", "kind": "range",
     "rule": "direction", "paper": "higher", "by_construction": "a simulation built to show the mechanism",
     "sources": ["sim"], "expected": "by-construction", "reason": "shown, not counted"},
]


def write_ledger(folder, claims=None, *, stem="nb", paper="Test 2024", **top):
    data = {"paper": paper, "notebook": stem, "claims": copy.deepcopy(BASE_CLAIMS if claims is None else claims)}
    data.update(top)
    path = folder / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def record_all(rep):
    rep.check("hmr_x", ours=0.5573, source="example1")
    rep.check("hmr_x", ours=0.61, source="example2")
    rep.check("ts_lowers", ours=0.3, interval=(0.1, 0.5), source="cifar10")
    rep.check("spline_best", ours=(1, 8), source="cifar10")
    rep.check("only_x_first", ours=np.bool_(True), source="example1")
    rep.identity("avg_half", ours=np.float64(0.5), expected=0.5)
    rep.identity("avg_half_two", ours=0.5, expected=0.5, tol=1e-12, source="qa")
    rep.identity("avg_half_two", ours=0.5 + 1e-13, expected=0.5, tol=1e-12, source="trained")
    rep.not_checkable("human_study", context={"resnet56 (ours)": 0.03})
    rep.check("stable", ours=0.12, interval=(0.05, 0.2), source="cifar10")
    rep.check("stable", ours=0.1, interval=(0.1, 0.3), source="qa")
    rep.check("simulated", ours=-0.2, interval=(-0.3, -0.1), source="sim")  # fails, but only shown
    rep.add_result("n", 3)


def test_load_ledger_reads_every_kind(tmp_path):
    ledger = load_ledger(write_ledger(tmp_path))
    assert ledger.paper == "Test 2024" and ledger.notebook == "nb" and len(ledger) == len(BASE_CLAIMS)
    assert list(ledger.claims) == [c["id"] for c in BASE_CLAIMS]
    c = ledger.claims["hmr_x"]
    assert (c.paper, c.tol, c.sources, c.expected, c.rule) == (0.557, 0.0005, ("example1", "example2"), "partly",
                                                                "value")
    assert ledger.claims["ts_lowers"].paper == "higher" and ledger.claims["ts_lowers"].refuted_by == -0.05
    assert ledger.claims["spline_best"].paper == (9, 13) and ledger.claims["spline_best"].refuted_by == (0, 20)
    assert ledger.claims["only_x_first"].paper is True
    assert ledger.claims["stable"].phrase == "stable"
    assert ledger.claims["simulated"].by_construction and ledger.claims["simulated"].refuted_by is None
    assert ledger.claims["avg_half"].sources == () and ledger.claims["human_study"].sources == ()
    assert not ledger.claims["avg_half"].checkable and ledger.claims["spline_best"].checkable


def _mutate(index, **changes):
    claims = copy.deepcopy(BASE_CLAIMS)
    for key, value in changes.items():
        if value is _DELETE:
            del claims[index][key]
        else:
            claims[index][key] = value
    return claims


_DELETE = object()


@pytest.mark.parametrize(
    ("claims", "match"),
    [
        (_mutate(0, kind="ordering"), r"claim 'hmr_x', field 'kind': must be one of number, range"),
        (_mutate(0, expected="holds"), r"claim 'hmr_x', field 'expected': must be one of reproduces"),
        (_mutate(0, expected="identity"), r"claim 'hmr_x', field 'expected': must be one of reproduces"),
        (_mutate(0, quote=_DELETE), r"claim 'hmr_x', field 'quote': missing"),
        (_mutate(0, reason=""), r"claim 'hmr_x', field 'reason': must be a non-empty string"),
        (_mutate(0, id=_DELETE), r"claim #1, field 'id': missing"),
        (_mutate(0, id="HMR X"), r"field 'id': must be snake_case"),
        (_mutate(0, expcted="reproduces"), r"claim 'hmr_x': unknown field\(s\) 'expcted'"),
        (_mutate(1, id="hmr_x"), r"claim 'hmr_x', field 'id': duplicate id \(claims #1 and #2\)"),
        (_mutate(1, tol=0.01), r"claim 'ts_lowers', field 'tol': only a 'number' claim has a tolerance"),
        (_mutate(3, tol_reason="x"), r"claim 'only_x_first', field 'tol_reason': only a 'number' claim"),
        (_mutate(0, tol=_DELETE), r"claim 'hmr_x', field 'tol': missing"),
        (_mutate(0, tol=-0.1), r"claim 'hmr_x', field 'tol': must be >= 0"),
        (_mutate(0, tol_reason=_DELETE), r"claim 'hmr_x', field 'tol_reason': must be a non-empty string"),
        (_mutate(0, paper="0.557"), r"claim 'hmr_x', field 'paper': must be a finite number"),
        (_mutate(0, paper=_DELETE), r"claim 'hmr_x', field 'paper': missing"),
        # the rule
        (_mutate(0, rule=_DELETE), r"claim 'hmr_x', field 'rule': missing \(name the decision rule: value\)"),
        (_mutate(0, rule="direction"), r"claim 'hmr_x', field 'rule': a claim of kind 'number' is decided by value"),
        (_mutate(1, rule="count"), r"claim 'ts_lowers', field 'rule': .* decided by direction or magnitude"),
        (_mutate(4, rule="value"), r"claim 'avg_half', field 'rule': a claim of kind 'identity' has no decision"),
        (_mutate(1, paper=[0.0, 1.0]), r"claim 'ts_lowers', field 'paper': a direction claim's paper value is "
                                      r"'higher'"),
        (_mutate(2, paper=[0.5, 1.0]), r"claim 'spline_best', field 'paper': must be a count \[k, n\]"),
        (_mutate(2, paper=[14, 13]), r"claim 'spline_best', field 'paper': must be a count \[k, n\]"),
        (_mutate(3, paper="yes"), r"claim 'only_x_first', field 'paper': a verdict's paper value is true or false"),
        (_mutate(7, phrase="quite stable"), r"claim 'stable', field 'phrase': 'quite stable' is not in the phrase"),
        (_mutate(7, phrase=_DELETE), r"claim 'stable', field 'phrase': a magnitude claim cites exactly one of"),
        (_mutate(7, threshold=[0.0, 0.2], threshold_quote="q"), r"cites exactly one of 'phrase'"),
        (_mutate(7, phrase=_DELETE, threshold=[0.0, 0.2]),
         r"claim 'stable', field 'threshold_quote': must be a non-empty string"),
        (_mutate(1, phrase="stable"), r"claim 'ts_lowers', field 'phrase': only a claim of rule 'magnitude'"),
        (_mutate(7, threshold_quote="q"), r"field 'threshold_quote': only with a per-claim 'threshold'"),
        # refuted_by: required on every checked claim not by construction, and the rule must reject it
        (_mutate(0, refuted_by=_DELETE), r"claim 'hmr_x', field 'refuted_by': missing"),
        (_mutate(0, refuted_by=0.5572), r"claim 'hmr_x', field 'refuted_by': the rule cannot reject the claim"),
        (_mutate(1, refuted_by=0.2), r"claim 'ts_lowers', field 'refuted_by': the rule cannot reject"),
        (_mutate(2, refuted_by=[9, 13]), r"claim 'spline_best', field 'refuted_by': the rule cannot reject"),
        (_mutate(3, refuted_by=True), r"claim 'only_x_first', field 'refuted_by': the rule cannot reject"),
        (_mutate(3, refuted_by=0), r"claim 'only_x_first', field 'refuted_by': a verdict is refuted by true or"),
        (_mutate(4, refuted_by=0.4), r"claim 'avg_half', field 'refuted_by': only a checked claim"),
        (_mutate(8, refuted_by=-0.1), r"claim 'simulated', field 'refuted_by': only a checked claim"),
        # statuses by kind
        (_mutate(0, sources=_DELETE), r"claim 'hmr_x', field 'sources': missing"),
        (_mutate(0, sources=[]), r"claim 'hmr_x', field 'sources': must list at least one source"),
        (_mutate(0, sources=["a", "a"]), r"claim 'hmr_x', field 'sources': lists 'a' twice"),
        (_mutate(0, sources="example1"), r"claim 'hmr_x', field 'sources': must be a list of non-empty strings"),
        (_mutate(1, expected="partly"), r"claim 'ts_lowers', field 'expected': 'partly' needs at least two"),
        (_mutate(0, expected="by-construction"), r"claim 'hmr_x', field 'expected': a claim of kind 'number'"),
        (_mutate(4, expected="reproduces"), r"claim 'avg_half', field 'expected': an identity or a check by "
                                            r"construction is expected 'by-construction'"),
        (_mutate(8, expected="reproduces"), r"claim 'simulated', field 'expected': an identity or a check by"),
        (_mutate(6, expected="reproduces"), r"claim 'human_study', field 'expected': a claim of kind 'not-checkable'"),
        (_mutate(6, by_construction="x"), r"claim 'human_study', field 'by_construction': only a checked kind"),
        (_mutate(6, reason=_DELETE), r"claim 'human_study', field 'reason': missing"),
        (_mutate(6, reason="  "), r"claim 'human_study', field 'reason': must be a non-empty string"),
        (_mutate(6, sources=["a"]), r"claim 'human_study', field 'sources': a not-checkable claim is checked on no"),
        (_mutate(0, expected="not-checkable"), r"claim 'hmr_x', field 'expected': a claim of kind 'number'"),
        (_mutate(0, seed_sensitive={"reproduces": 3}), r"field 'seed_sensitive': must map two or more statuses"),
        (_mutate(0, seed_sensitive={"reproduces": 3, "holds": 2}), r"field 'seed_sensitive'"),
        ([], r"field 'claims': must be a non-empty list"),
        (["just text"], r"claim #1: must be a mapping of fields"),
    ],
)
def test_load_ledger_errors_name_file_claim_and_field(tmp_path, claims, match):
    path = write_ledger(tmp_path, claims)
    with pytest.raises(LedgerError, match=match) as info:
        load_ledger(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_deliberately_unfalsifiable_entry_is_caught(tmp_path):
    """The guard of item 3 of issue 26: a criterion that cannot fail is refused.

    Three ways of writing an entry that cannot fail: a per-claim threshold over the whole real line, a tolerance
    wider than any value the claim could take, and a refuted_by chosen inside the criterion. Each is caught by
    load_ledger, naming the claim and the field, because the rule does not reject its refuted_by value.
    """
    whole_line = dict(BASE_CLAIMS[7], phrase=None, threshold=[float("-inf"), float("inf")],
                      threshold_quote="stable", refuted_by=1e9)
    del whole_line["phrase"]
    huge_tol = dict(BASE_CLAIMS[0], tol=1e12, refuted_by=1e6)
    inside = dict(BASE_CLAIMS[1], refuted_by=0.01)
    for entry in (whole_line, huge_tol, inside):
        path = write_ledger(tmp_path, [entry])
        with pytest.raises(LedgerError, match=rf"claim '{entry['id']}', field 'refuted_by': the rule cannot reject"):
            load_ledger(path)
    # the same entries with a criterion that can fail load
    load_ledger(write_ledger(tmp_path, [dict(huge_tol, tol=0.0005, refuted_by=0.56)]))


def test_ledger_schema_is_package_data_and_lists_the_record_kinds_and_statuses():
    """The JSON Schema ships with the package, is a valid Draft 2020-12 schema, and its closed lists are the record's."""
    import importlib.resources

    import jsonschema

    from calibnb.record.reproduction import KINDS, STATUSES

    text = importlib.resources.files("calibnb.record").joinpath("ledger.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    claim = schema["$defs"]["claim"]["properties"]
    assert tuple(claim["kind"]["enum"]) == KINDS
    assert tuple(claim["expected"]["enum"]) == STATUSES
    assert tuple(claim["seed_sensitive"]["propertyNames"]["enum"]) == STATUSES
    # every real ledger is valid against the schema alone too
    for path in sorted(LEDGER_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert not list(jsonschema.Draft202012Validator(schema).iter_errors(data)), path.name


@pytest.mark.parametrize(("top", "match"), [
    ({"paper": "  "}, r"nb.yaml, field 'paper': must be a non-empty string"),
    ({"claims": "x"}, r"nb.yaml, field 'claims': must be a non-empty list of claims"),
    ({"paper": _DELETE}, r"nb.yaml, field 'paper': missing"),
])
def test_load_ledger_top_level_errors_name_the_field(tmp_path, top, match):
    data = {"paper": "Sakai 2024", "notebook": "nb", "claims": [dict(BASE_CLAIMS[0])]}
    data.update(top)
    data = {k: v for k, v in data.items() if v is not _DELETE}
    path = tmp_path / "nb.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(LedgerError, match=match):
        load_ledger(path)


def test_load_ledger_reports_the_first_problem_in_file_order(tmp_path):
    """Two bad claims: the message names the first one; within it, an unknown field before a missing one."""
    first = {k: v for k, v in BASE_CLAIMS[0].items() if k != "quote"}
    first["qoute"] = "typo"
    second = dict(BASE_CLAIMS[1], kind="ordering")
    path = write_ledger(tmp_path, [first, second])
    with pytest.raises(LedgerError, match=r"claim 'hmr_x': unknown field\(s\) 'qoute'"):
        load_ledger(path)


def test_load_ledger_file_level_errors(tmp_path):
    with pytest.raises(LedgerError, match="cannot be read"):
        load_ledger(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("claims: [\n")
    with pytest.raises(LedgerError, match="bad.yaml is not valid YAML"):
        load_ledger(bad)
    bad.write_text("- 1\n")
    with pytest.raises(LedgerError, match="must be a mapping with paper, notebook and claims"):
        load_ledger(bad)
    with pytest.raises(LedgerError, match=r"field 'notebook': must be the notebook's stem.*'other'"):
        load_ledger(write_ledger(tmp_path, stem="nb2", notebook="other"))
    path = write_ledger(tmp_path, stem="nb3", extra=1)
    with pytest.raises(LedgerError, match=r"unknown top-level field\(s\) 'extra'"):
        load_ledger(path)
    path.write_text("paper: p\nnotebook: nb3\n")
    with pytest.raises(LedgerError, match=r"nb3.yaml, field 'claims': missing"):
        load_ledger(path)
    with pytest.raises(TypeError, match="path must be a path"):
        load_ledger(3)


# ----------------------------------------------------------------- the statuses


@pytest.mark.parametrize(
    ("outcomes", "status"),
    [(["holds"], "reproduces"), (["holds", "holds"], "reproduces"), (["holds", "fails"], "partly"),
     (["inconclusive", "holds"], "reproduces"), (["fails"], "does-not-reproduce"),
     (["fails", "inconclusive"], "does-not-reproduce"), (["inconclusive"], "inconclusive"),
     (["inconclusive", "inconclusive"], "inconclusive"), (["holds", "fails", "inconclusive"], "partly")],
)
def test_claim_status(outcomes, status):
    assert claim_status("number", outcomes) == status


def test_claim_status_special_kinds():
    assert claim_status("identity", ["holds"]) == "by-construction"
    assert claim_status("range", ["fails"], by_construction=True) == "by-construction"
    assert claim_status("not-checkable", ["not-checkable"]) == "not-checkable"
    assert STATUSES == ("reproduces", "partly", "does-not-reproduce", "inconclusive", "not-checkable",
                        "by-construction")
    with pytest.raises(ValueError, match="outcomes must not be empty"):
        claim_status("range", [])
    with pytest.raises(ValueError, match="outcomes"):
        claim_status("range", ["maybe"])


@pytest.mark.parametrize(
    ("interval", "outcome"),
    [((0.2, 0.3), "holds"), ((0.0, 0.5), "holds"), ((0.6, 0.7), "fails"), ((-0.3, -0.1), "fails"),
     ((0.4, 0.7), "inconclusive"), ((-0.1, 0.1), "inconclusive"), ((-1.0, 2.0), "inconclusive")],
)
def test_interval_outcome(interval, outcome):
    assert interval_outcome(interval, (0.0, 0.5)) == outcome


def test_clopper_pearson():
    lo, hi = clopper_pearson(9, 13)
    assert lo == pytest.approx(0.3857, abs=1e-4) and hi == pytest.approx(0.9091, abs=1e-4)
    assert clopper_pearson(0, 5)[0] == 0.0 and clopper_pearson(5, 5)[1] == 1.0
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson(3, 2)
    with pytest.raises(TypeError, match="integers"):
        clopper_pearson(0.5, 2)


# ------------------------------------------------------------------- the rules


def one_claim_ledger(tmp_path, **claim):
    base = {"id": "c", "quote": "q", "locator": "l", "sources": ["s"], "expected": "reproduces", "reason": "r"}
    base.update(claim)
    return Reproduction.from_ledger(write_ledger(tmp_path, [base]))


VALUE = {"kind": "number", "rule": "value", "paper": 0.557, "tol": 0.0005, "tol_reason": "3 decimals",
         "refuted_by": 0.56}


@pytest.mark.parametrize(
    ("ours", "outcome"),
    [(0.5573, "holds"), (0.5565, "holds"), (0.5575, "holds"), (0.5576, "fails"), (0.5564, "fails"),
     (np.float32(0.557), "holds"), (np.array(0.557), "holds"), (float("nan"), "fails"), (float("inf"), "fails"),
     (1, "fails")],
)
def test_value_rule_without_interval_is_the_printed_precision(tmp_path, ours, outcome):
    rep = one_claim_ledger(tmp_path, **VALUE)
    assert rep.check("c", ours=ours, source="s") == outcome
    assert rep.statuses() == {"c": "reproduces" if outcome == "holds" else "does-not-reproduce"}


@pytest.mark.parametrize(
    ("ours", "interval", "outcome"),
    # the paper's value within our interval widened by half a printed unit: holds; outside: fails (never inconclusive)
    [(0.557, (0.5566, 0.5574), "holds"), (0.54, (0.530, 0.5566), "holds"), (0.50, (0.40, 0.5564), "fails"),
     (0.6, (0.58, 0.62), "fails"), (0.557, (0.1, 0.9), "holds")],
)
def test_value_rule_with_interval(tmp_path, ours, interval, outcome):
    rep = one_claim_ledger(tmp_path, **VALUE)
    assert rep.check("c", ours=ours, interval=interval, source="s") == outcome


@pytest.mark.parametrize(
    ("paper", "ours", "interval", "outcome"),
    [("higher", 0.3, (0.1, 0.5), "holds"), ("higher", 0.1, (-0.1, 0.3), "inconclusive"),
     ("higher", -0.3, (-0.5, -0.1), "fails"), ("lower", -0.3, (-0.5, -0.1), "holds"),
     ("lower", 0.3, (0.1, 0.5), "fails"), ("higher", 0.2, None, "holds"), ("higher", 0.0, None, "inconclusive"),
     ("lower", 0.2, None, "fails")],
)
def test_direction_rule(tmp_path, paper, ours, interval, outcome):
    rep = one_claim_ledger(tmp_path, kind="range", rule="direction", paper=paper,
                           refuted_by=-0.1 if paper == "higher" else 0.1)
    assert rep.check("c", ours=ours, interval=interval, source="s") == outcome


@pytest.mark.parametrize(
    ("ours", "interval", "outcome"),
    [(0.05, (0.01, 0.12), "holds"), (0.12, (0.05, 0.2), "inconclusive"), (0.3, (0.2, 0.4), "fails"),
     (0.1, None, "holds"), (0.2, None, "fails")],
)
def test_magnitude_rule_uses_the_phrase_table(tmp_path, ours, interval, outcome):
    assert PHRASES["stable"][1:] == (0.0, 0.15)
    rep = one_claim_ledger(tmp_path, kind="range", rule="magnitude", phrase="stable", refuted_by=0.5)
    assert rep.check("c", ours=ours, interval=interval, source="s") == outcome


@pytest.mark.parametrize(("ours", "outcome"), [((18, 18), "holds"), ((15, 18), "inconclusive"),
                                               ((3, 18), "fails")])
def test_magnitude_over_units_gets_a_binomial_interval(tmp_path, ours, outcome):
    """'consistently' = in at least 80% of the units, decided on the Clopper-Pearson interval of our share."""
    rep = one_claim_ledger(tmp_path, kind="count", rule="magnitude", phrase="consistently", refuted_by=[20, 100])
    assert rep.check("c", ours=ours, source="s") == outcome
    recorded = rep.to_dict()["claims"][0]["sources"][0]
    assert recorded["interval"] == pytest.approx(list(clopper_pearson(*ours)))


def test_per_claim_threshold_needs_its_quote_and_is_shown(tmp_path):
    rep = one_claim_ledger(tmp_path, kind="range", rule="magnitude", threshold=[150, 170],
                           threshold_quote="are 150-170x bigger", refuted_by=10)
    assert rep.check("c", ours=160.0, source="s") == "holds"
    rep.finish()
    text = did_not_reproduce_markdown(rep.to_dict())
    assert html.escape("a per-claim threshold justified by the paper's “are 150-170x bigger”") in claims_table_html(
        rep.to_dict()["claims"])
    assert "a per-claim threshold justified by the paper's “are 150-170x bigger”" not in text  # reproduces: not listed


@pytest.mark.parametrize(("ours", "outcome"), [((9, 13), "holds"), ((13, 18), "holds"), ((17, 18), "fails"),
                                               ((1, 18), "fails"), ((np.int64(8), np.int64(13)), "holds")])
def test_count_rule_puts_the_papers_share_in_our_interval(tmp_path, ours, outcome):
    rep = one_claim_ledger(tmp_path, kind="count", rule="count", paper=[9, 13], refuted_by=[0, 20])
    assert rep.check("c", ours=ours, source="s") == outcome


@pytest.mark.parametrize(("paper", "ours", "outcome"), [(True, True, "holds"), (True, False, "fails"),
                                                        (False, np.bool_(False), "holds")])
def test_verdict_is_a_value(tmp_path, paper, ours, outcome):
    rep = one_claim_ledger(tmp_path, kind="verdict", rule="value", paper=paper, refuted_by=not paper)
    assert rep.check("c", ours=ours, source="s") == outcome


def test_check_value_errors(tmp_path):
    rep = one_claim_ledger(tmp_path, **dict(VALUE, paper=0.5, tol=0.1, refuted_by=0.8))
    with pytest.raises(TypeError, match="ours of claim 'c' must be a number; got bool"):
        rep.check("c", ours=True, source="s")
    with pytest.raises(TypeError, match="ours of claim 'c' must be a number; got str"):
        rep.check("c", ours="0.5", source="s")
    with pytest.raises(ValueError, match=r"interval of claim 'c' must have low <= high; got \(0.6, 0.4\)"):
        rep.check("c", ours=0.5, interval=(0.6, 0.4), source="s")
    with pytest.raises(TypeError, match=r"interval of claim 'c' must be a \(low, high\) pair"):
        rep.check("c", ours=0.5, interval=(0.4,), source="s")
    with pytest.raises(ValueError, match=r"interval\[1\] \(high\) of claim 'c' must be finite"):
        rep.check("c", ours=0.5, interval=(0.4, float("nan")), source="s")
    assert rep.missing() == ["c"]  # refused checks are not recorded
    verdict = one_claim_ledger(tmp_path, kind="verdict", rule="value", paper=True, refuted_by=False)
    with pytest.raises(TypeError, match="ours of verdict claim 'c' must be a bool; got int"):
        verdict.check("c", ours=1, source="s")
    with pytest.raises(ValueError, match="interval is for number and range claims; claim 'c' is of kind 'verdict'"):
        verdict.check("c", ours=True, interval=(0, 1), source="s")
    count = one_claim_ledger(tmp_path, kind="count", rule="count", paper=[1, 2], refuted_by=[20, 20])
    with pytest.raises(TypeError, match=r"ours of count claim 'c' must be \(k, n\), two integers"):
        count.check("c", ours=0.5, source="s")
    with pytest.raises(TypeError, match=r"must be \(k, n\), two integers"):
        count.check("c", ours=(True, 2), source="s")
    with pytest.raises(ValueError, match=r"must have 0 <= k <= n and n > 0; got \(3, 2\)"):
        count.check("c", ours=(3, 2), source="s")
    with pytest.raises(ValueError, match=r"got \(0, 0\)"):
        count.check("c", ours=(0, 0), source="s")


def test_record_errors_raise_at_the_call(tmp_path):
    path = write_ledger(tmp_path)
    rep = Reproduction.from_ledger(path)
    with pytest.raises(ValueError, match=rf"claim 'nope' is not in ledger {path}"):
        rep.check("nope", ours=1.0, source="example1")
    with pytest.raises(ValueError, match=r"source 'example3' is not listed for claim 'hmr_x' .*example1, example2"):
        rep.check("hmr_x", ours=0.557, source="example3")
    with pytest.raises(ValueError, match="source is required for claim 'hmr_x'"):
        rep.check("hmr_x", ours=0.557, source=None)
    with pytest.raises(TypeError, match="source must be a string"):
        rep.check("hmr_x", ours=0.557, source=1)
    rep.check("hmr_x", ours=0.557, source="example1")
    with pytest.raises(ValueError, match="claim 'hmr_x' .* is already recorded on source 'example1'"):
        rep.check("hmr_x", ours=0.557, source="example1")
    with pytest.raises(ValueError, match=r"claim 'avg_half' .* is of kind 'identity'; record it with rep.identity"):
        rep.check("avg_half", ours=0.5, source="example1")
    with pytest.raises(ValueError, match=r"claim 'hmr_x' .* is of kind 'number'; record it with rep.check"):
        rep.identity("hmr_x", ours=0.5, expected=0.5)
    with pytest.raises(ValueError, match=r"is of kind 'not-checkable'; record it with rep.not_checkable"):
        rep.check("human_study", ours=True, source="x")
    with pytest.raises(ValueError, match=r"is of kind 'number'; record it with rep.check\(...\), not rep.not_checkable"):
        rep.not_checkable("hmr_x")
    with pytest.raises(ValueError, match=r"source 'qa' is not listed for claim 'avg_half' .*none"):
        rep.identity("avg_half", ours=0.5, expected=0.5, source="qa")
    with pytest.raises(ValueError, match="source is required for claim 'avg_half_two'"):
        rep.identity("avg_half_two", ours=0.5, expected=0.5)
    with pytest.raises(TypeError, match="context of claim 'human_study' has unsupported type set"):
        rep.not_checkable("human_study", context={1, 2})
    rep.not_checkable("human_study")
    with pytest.raises(ValueError, match="claim 'human_study' .* is already recorded; record each"):
        rep.not_checkable("human_study")
    with pytest.raises(TypeError, match="id must be a string"):
        rep.check(3, ours=1.0, source="example1")


def test_identity(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    with pytest.raises(ReproductionError, match=r"identity 'avg_half' .* fails: ours 0.51, expected 0.5, tol 0.001"):
        rep.identity("avg_half", ours=0.51, expected=0.5, tol=1e-3)
    with pytest.raises(ReproductionError, match="fails on source 'qa'"):
        rep.identity("avg_half_two", ours=float("nan"), expected=0.5, tol=1.0, source="qa")
    with pytest.raises(ReproductionError, match="fails"):
        rep.identity("avg_half", ours=np.array([1.0, 2.0]), expected=[1.0, 2.1], tol=0.01)
    with pytest.raises(ReproductionError, match="fails"):
        rep.identity("avg_half", ours=True, expected=False)
    with pytest.raises(ValueError, match="must have the same shape"):
        rep.identity("avg_half", ours=np.zeros(2), expected=np.zeros(3))
    with pytest.raises(TypeError, match="must both be bools or both numbers"):
        rep.identity("avg_half", ours=True, expected=1.0)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        rep.identity("avg_half", ours=0.5, expected=0.5, tol=-1)
    assert "avg_half" in rep.missing() and "avg_half_two" in rep.missing()  # failing identities: not recorded
    assert rep.identity("avg_half", ours=np.array([1.0, 2.0]), expected=[1.0, 2.0 + 1e-13], tol=1e-12) == "holds"
    assert rep.identity("avg_half_two", ours=True, expected=np.bool_(True), source="qa") == "holds"


# ---------------------------------------------------------------- finish, JSON


EXPECTED_COUNTS = {"reproduces": 2, "partly": 1, "does-not-reproduce": 1, "inconclusive": 1, "not-checkable": 1,
                   "by-construction": 3, "checkable": 5}


def test_finish_writes_statuses_and_json(tmp_path, capsys):
    path = tmp_path / "out" / "r.json"
    ledger_path = write_ledger(tmp_path)
    rep = Reproduction.from_ledger(ledger_path, results_path=path)
    record_all(rep)
    rep.finish()  # a claim that fails (spline_best, hmr_x on example2) never raises
    data = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(c))
    assert data["paper"] == "Test 2024" and data["notebook"] == "nb" and data["ledger"] == str(ledger_path)
    assert data["results"] == {"n": 3}
    assert data["counts"] == EXPECTED_COUNTS
    claims = {c["id"]: c for c in data["claims"]}
    assert [c["id"] for c in data["claims"]] == [c["id"] for c in BASE_CLAIMS]  # ledger order
    assert {k: c["status"] for k, c in claims.items()} == {c["id"]: c["expected"] for c in BASE_CLAIMS}
    assert {c["status"] for c in data["claims"]} <= set(STATUSES)
    hmr = claims["hmr_x"]
    assert set(hmr) == {"id", "quote", "locator", "kind", "rule", "phrase", "threshold", "threshold_quote",
                        "measure_thresholds", "paper", "tol", "tol_reason", "refuted_by", "by_construction", "seed_sensitive", "table", "sources",
                        "expected", "reason", "criterion", "status"}
    assert hmr["rule"] == "value" and hmr["refuted_by"] == 0.56 and hmr["criterion"].startswith("our rule (value)")
    assert hmr["sources"] == [{"source": "example1", "ours": 0.5573, "interval": None, "outcome": "holds"},
                              {"source": "example2", "ours": 0.61, "interval": None, "outcome": "fails"}]
    assert claims["ts_lowers"]["sources"][0]["interval"] == [0.1, 0.5]
    assert claims["spline_best"]["sources"][0]["ours"] == [1, 8]
    assert claims["spline_best"]["paper"] == [9, 13] and claims["spline_best"]["refuted_by"] == [0, 20]
    assert claims["ts_lowers"]["paper"] == "higher" and claims["ts_lowers"]["tol"] is None
    assert claims["avg_half"]["sources"] == [{"source": None, "ours": 0.5, "interval": None, "outcome": "holds",
                                              "expected_value": 0.5}]
    assert [s["source"] for s in claims["avg_half_two"]["sources"]] == ["qa", "trained"]
    assert claims["human_study"]["sources"] == [{"source": None, "ours": None, "interval": None,
                                                 "outcome": "not-checkable", "context": {"resnet56 (ours)": 0.03}}]
    assert claims["simulated"]["sources"][0]["outcome"] == "fails" and claims["simulated"]["status"] == \
        "by-construction"
    assert status_mismatches(data, ledger_path) == []
    out = capsys.readouterr().out  # no kernel: headline and summary printed
    assert ("Test 2024: 2 of 5 decided claims reproduce, 1 partly, 1 do not, 1 inconclusive; 1 not checkable; "
            "3 by construction.") in out
    assert list(path.parent.iterdir()) == [path]  # atomic: no temporary file left


def test_finish_is_strict_json_with_nonfinite(tmp_path):
    path = tmp_path / "r.json"
    rep = one_claim_ledger(tmp_path, **VALUE)
    rep.results_path = path
    rep.check("c", ours=float("nan"), source="s")
    rep.add_result("kl", float("inf"))
    rep.add_result("arr", np.array([1.0, np.nan, -np.inf]))
    rep.finish()
    data = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert data["results"]["kl"] == "inf" and data["results"]["arr"] == [1.0, "nan", "-inf"]
    assert math.isnan(from_json_float(data["claims"][0]["sources"][0]["ours"]))
    assert data["claims"][0]["status"] == "does-not-reproduce"


def test_finish_raises_only_on_unrecorded_claims_and_writes_nothing(tmp_path):
    path = tmp_path / "r.json"
    rep = Reproduction.from_ledger(write_ledger(tmp_path), results_path=path)
    rep.check("hmr_x", ours=0.557, source="example1")
    rep.check("spline_best", ours=(0, 8), source="cifar10")
    with pytest.raises(ReproductionError, match=r"8 claim\(s\) or source\(s\) of ledger .*nb.yaml were not recorded: "
                                                r"hmr_x on example2, ts_lowers, only_x_first, avg_half, "
                                                r"avg_half_two, human_study, stable, simulated"):
        rep.finish()
    assert not path.exists()
    assert rep.statuses()["hmr_x"] is None and rep.statuses()["spline_best"] == "does-not-reproduce"
    with pytest.raises(ReproductionError, match="not recorded"):
        rep.did_not_reproduce()
    assert "not recorded yet" in repr(rep)


def test_summary_orders_non_reproducing_first(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    record_all(rep)
    s = rep.summary()
    assert list(s.index) == ["spline_best", "hmr_x", "stable", "human_study", "ts_lowers", "only_x_first",
                             "avg_half", "avg_half_two", "simulated"]
    assert s.loc["hmr_x", "ours"] == {"example1": 0.5573, "example2": 0.61}
    assert s.loc["hmr_x", "outcome"] == {"example1": "holds", "example2": "fails"}
    assert s.loc["ts_lowers", "interval"] == {"cifar10": [0.1, 0.5]}
    assert list(s.columns) == ["quote", "locator", "kind", "rule", "criterion", "ours", "interval", "outcome",
                               "status", "expected", "reason"]


def test_claims_table_html(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    record_all(rep)
    page = rep._repr_html_()
    assert "2 of 5 decided claims reproduce" in page
    assert "table-layout: fixed" in page and "overflow-wrap: anywhere" in page
    assert page.index("spline_best") < page.index("hmr_x") < page.index("ts_lowers") < page.index("avg_half")
    for header in ("claim (the paper's words)", "locator", "criterion (ours)", "ours", "interval", "outcome",
                   "status", "expected", "reason"):
        assert f"<th>{header}</th>" in page
    # the criterion is labelled as ours, never as the paper's ("paper within [..]" was the mislabelled form)
    assert "paper within" not in page and "our rule (value): the paper&#x27;s 0.557 within ± 0.0005 (half a printed unit) of our value" in page
    assert "our rule (magnitude, phrase “stable”)" in page and "our rule (count): the paper&#x27;s 9 of 13" in page
    assert "example1: 0.5573<br>example2: 0.61" in page and "cifar10: 1/8 = 0.125" in page
    assert "context: resnet56 (ours) 0.03" in page
    claims = rep.to_dict()["claims"]
    claims[0]["expected"] = "reproduces"
    assert "class='status mismatch'" in claims_table_html(claims)
    assert "mismatch" not in claims_table_html(rep.to_dict()["claims"]).split("</style>")[1]
    escaped = claims_table_html([dict(claims[0], quote="a <b> & c")])
    assert "a &lt;b&gt; &amp; c" in escaped


def test_generated_section_headings_and_findings(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    record_all(rep)
    section = rep.did_not_reproduce()
    text = section._repr_markdown_()
    assert text == str(section) and text.startswith("## What did not reproduce\n")
    assert text.index("**Findings.**") < text.index("### Errors in the paper") < text.index("### Does not reproduce") \
        < text.index("### Reproduces partly") < text.index("### Could not be decided") \
        < text.index("### Not checkable with public data")
    findings = text.split("**Findings.**")[1].split("\n")[0]
    assert "Of 5 claims of Test 2024 decided on our data, 2 reproduce, 1 partly, 1 do not and 1 could not be" in \
        findings and "*spline_best* (does not reproduce)" in findings
    dnr = text.split("### Does not reproduce")[1].split("###")[0]
    assert "spline_best" in dnr and "cifar10: 1/8 = 0.125 (95% interval" in dnr and "Criterion — our rule (count)" in dnr
    undecided = text.split("### Could not be decided")[1].split("###")[0]
    assert "stable" in undecided and "inconclusive" in undecided
    gaps = text.split("### Not checkable with public data")[1]
    assert "human_study" in gaps and "the human study's answers are not public" in gaps
    assert "Our nearest substitute, as context only: resnet56 (ours) 0.03" in gaps
    assert "ts_lowers" not in text.split("**Findings.**")[1] and "simulated" not in text.split("###")[1]
    assert "differs from the ledger" not in text
    results = rep.to_dict()
    results["claims"][2]["reason"] = "error in the paper: the table's sum is 1.1"
    errata = did_not_reproduce_markdown(results).split("### Errors in the paper (1)")[1].split("###")[0]
    assert "spline_best" in errata
    results["claims"][1]["expected"] = "partly"
    assert "**Status differs from the ledger's expectation** (1): ts_lowers is reproduces, expected partly." in \
        did_not_reproduce_markdown(results)


def test_status_mismatches_with_a_flipped_ledger(tmp_path):
    """A deliberately altered ledger (one expected status flipped) is caught, naming claim, statuses and file."""
    ledger_path = write_ledger(tmp_path)
    rep = Reproduction.from_ledger(ledger_path, results_path=tmp_path / "r.json")
    record_all(rep)
    rep.finish()
    results = json.loads((tmp_path / "r.json").read_text())
    assert status_mismatches(results, ledger_path) == []
    altered = tmp_path / "altered"
    altered.mkdir()
    flipped = _mutate(2, expected="reproduces")  # spline_best computes does-not-reproduce
    altered_path = write_ledger(altered, flipped)
    problems = status_mismatches(results, altered_path)
    assert problems == [f"claim 'spline_best': computed status 'does-not-reproduce', ledger expects 'reproduces'; "
                        f"if the change is right, update 'expected' and 'reason' in {altered_path}."]
    with pytest.raises(ValueError, match="results must be a results JSON object"):
        status_mismatches({"paper": "p"}, ledger_path)


def test_status_counts():
    assert status_counts([{"status": "partly"}, {"status": "partly"}, {"status": "by-construction"}, {}]) == {
        "reproduces": 0, "partly": 2, "does-not-reproduce": 0, "inconclusive": 0, "not-checkable": 0,
        "by-construction": 1}


# -------------------------------------------------------- the committed ledgers


def _ledgers():
    return sorted(LEDGER_DIR.glob("*.yaml"))


@pytest.mark.parametrize("path", _ledgers(), ids=lambda p: p.stem)
def test_real_ledgers_are_valid(path):
    """Every committed ledger loads (schema, rules, statuses), names its notebook, and can fail.

    load_ledger already refuses an entry whose rule does not reject its refuted_by; this test states it once more
    over every entry, so that a change of the rules that made a committed criterion unfalsifiable fails here.
    """
    ledger = load_ledger(path)
    assert (LEDGER_DIR.parent / f"{ledger.notebook}.ipynb").exists(), path
    for item in ledger.claims.values():
        if item.checkable and not item.by_construction:
            assert item.rule is not None and item.refuted_by is not None, item.id
            assert decide(item, item.refuted_by) == "fails", f"{path.name}: {item.id} cannot be refuted"
        else:
            assert item.refuted_by is None, item.id
        if item.kind == "identity" or item.by_construction:
            assert item.expected == "by-construction", item.id


def test_no_ledger_compares_another_network_with_the_papers():
    """Same model or not checkable (issue 26, item 4): no checked claim of notebook 03 is about one of the paper's
    networks compared with a different network of ours; those are not-checkable (our value only as context)."""
    ledger = load_ledger(LEDGER_DIR / "03_gupta2021_ks_splines.yaml")
    arch = [c for c in ledger.claims.values() if c.id.startswith("arch_")]
    assert len(arch) == 28 and all(c.kind == "not-checkable" for c in arch)
    for c in ledger.claims.values():
        if c.kind == "number":
            assert "different trained network" not in (c.tol_reason or ""), c.id


def test_readme_tables_are_the_records():
    """The tables of notebooks/README.md (statuses, rules, phrases) are the ones the record uses, row for row."""
    import re

    from calibnb.record.reproduction import RULES, STATUS_TEXT

    text = (LEDGER_DIR.parent / "README.md").read_text(encoding="utf-8")

    def rows(heading):
        section = text.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
        return [[cell.strip() for cell in line.strip().strip("|").split("|")]
                for line in section.splitlines() if line.startswith("| ") and not line.startswith("| ---")][1:]

    statuses = rows("Statuses")
    assert [r[0].strip("`") for r in statuses] == list(STATUS_TEXT)
    assert [r[1] for r in statuses] == list(STATUS_TEXT.values())
    rules = rows("Decision rules")
    assert [r[0].strip("`") for r in rules] == list(RULES) and [r[2] for r in rules] == list(RULES.values())
    phrases = rows("Phrase table")
    assert [r[0] for r in phrases] == list(PHRASES)
    for (name, measure, bounds), (m, lo, hi) in zip(phrases, PHRASES.values()):
        assert measure == m, name
        lo_t, hi_t = re.match(r"\[(.*), (.*)\]", bounds).groups()
        parse = lambda t: math.inf if t == "∞" else (-math.inf if t == "−∞" else float(t))  # noqa: E731
        assert (parse(lo_t), parse(hi_t)) == (lo, hi), name


def test_ledger_schema_check_without_jsonschema(tmp_path, monkeypatch):
    # The browser site cannot carry jsonschema (rpds-py has no Pyodide build there): there the committed
    # ledger loads without the schema check and says so; anywhere else a missing jsonschema is an error.
    import sys

    import calibnb.record.reproduction as module

    path = write_ledger(tmp_path)
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema -> ImportError
    monkeypatch.setattr(module, "LEDGER_SCHEMA_CHECKED", True)
    with pytest.raises(ImportError, match="jsonschema"):
        load_ledger(path)
    monkeypatch.setattr(module, "in_browser", lambda: True)
    ledger = load_ledger(path)
    assert len(ledger) == len(BASE_CLAIMS) and module.LEDGER_SCHEMA_CHECKED is False


@pytest.mark.parametrize("ledger", sorted((Path(__file__).resolve().parents[2] / "notebooks" / "claims").glob("*.yaml")),
                         ids=lambda p: p.stem)
def test_ledger_reads_the_same_with_libyaml_and_without(ledger, monkeypatch):
    """load_ledger parses with libyaml's CSafeLoader where PyYAML has it: the same ledger as the pure-Python loader."""
    import yaml

    from calibnb.record.reproduction import load_ledger

    text = ledger.read_text(encoding="utf-8")
    if getattr(yaml, "CSafeLoader", None) is not None:
        assert yaml.load(text, Loader=yaml.CSafeLoader) == yaml.safe_load(text)
    fast = load_ledger(ledger)
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)  # a PyYAML without libyaml (e.g. a browser kernel)
    assert load_ledger(ledger) == fast
