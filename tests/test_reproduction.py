"""Tests of calibnb.reproduction: claims, known gaps, JSON and the final check."""

from __future__ import annotations

import json
import math
import os
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from calibnb.record.reproduction import (
    Claim,
    Reproduction,
    ReproductionError,
    from_json_float,
    to_jsonable,
    write_json_atomic,
    write_text_atomic,
)


# ------------------------------------------------------------------ claim rules


@pytest.mark.parametrize(
    ("paper", "ours", "tol", "holds"),
    [
        (0.557, 0.5573, 0.0005, True),
        (0.557, 0.5576, 0.0005, False),
        (0.557, 0.5565, 0.0005, True),  # boundary is inclusive
        (0.557, 0.5564, 0.0005, False),
        (0.5, 0.5, 0.0, True),
        (0.5, 0.5 + 1e-9, 0.0, False),
        (0.3, 0.1 + 0.2, 0.0, True),
        (1, np.float64(1.0), 0.0, True),  # int paper, NumPy ours
        (0.2, float("nan"), 1.0, False),  # NaN never holds
        (0.2, float("inf"), 1.0, False),
    ],
)
def test_numeric_claim(paper, ours, tol, holds):
    rep = Reproduction("p")
    c = rep.claim("x", paper=paper, ours=ours, tol=tol)
    assert c.holds is holds
    assert c.status == ("holds" if holds else "fails")
    assert isinstance(c.ours, float)


@pytest.mark.parametrize(
    ("paper", "ours", "holds"),
    [(True, True, True), (True, False, False), (False, False, True), (False, np.bool_(True), False)],
)
def test_bool_claim(paper, ours, holds):
    c = Reproduction("p").claim("v", paper=paper, ours=ours)
    assert c.holds is holds
    assert c.difference is None


@pytest.mark.parametrize(
    ("ours", "holds", "difference"),
    [(0.45, True, 0.0), (0.4, True, 0.0), (0.5, True, 0.0), (0.39, False, -0.01), (0.55, False, 0.05)],
)
def test_range_claim(ours, holds, difference):
    c = Reproduction("p").claim("r", paper=(0.4, 0.5), ours=ours)
    assert c.holds is holds
    assert c.difference == pytest.approx(difference)


def test_difference_is_signed():
    rep = Reproduction("p")
    assert rep.claim("a", paper=0.5, ours=0.4, tol=0.2).difference == pytest.approx(-0.1)
    assert rep.claim("b", paper=0.5, ours=0.6, tol=0.2).difference == pytest.approx(0.1)


def test_claim_input_errors():
    rep = Reproduction("p")
    rep.claim("dup", paper=1.0, ours=1.0)
    with pytest.raises(ValueError, match="name 'dup' is already declared"):
        rep.claim("dup", paper=1.0, ours=1.0)
    with pytest.raises(ValueError, match="non-empty"):
        rep.claim("  ", paper=1.0, ours=1.0)
    with pytest.raises(TypeError, match="name must be a string"):
        rep.claim(3, paper=1.0, ours=1.0)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        rep.claim("t", paper=1.0, ours=1.0, tol=-0.1)
    with pytest.raises(ValueError, match="tol must be finite"):
        rep.claim("t", paper=1.0, ours=1.0, tol=float("nan"))
    with pytest.raises(TypeError, match="ours must be a bool when paper is a bool"):
        rep.claim("b", paper=True, ours=1.0)
    with pytest.raises(TypeError, match="ours must be a number when paper is a number"):
        rep.claim("n", paper=1.0, ours=True)
    with pytest.raises(TypeError, match="ours must be a number or a bool"):
        rep.claim("n", paper=1.0, ours="1.0")
    with pytest.raises(TypeError, match="paper must be a number, a bool or a"):
        rep.claim("n", paper="1.0", ours=1.0)
    with pytest.raises(ValueError, match="paper must be finite"):
        rep.claim("n", paper=float("inf"), ours=1.0)
    with pytest.raises(ValueError, match=r"low <= high; got \(0.5, 0.4\)"):
        rep.claim("r", paper=(0.5, 0.4), ours=0.45)
    with pytest.raises(ValueError, match="got 3 values"):
        rep.claim("r", paper=(0.1, 0.2, 0.3), ours=0.45)
    with pytest.raises(ValueError, match="tol must be 0 for a range claim"):
        rep.claim("r", paper=(0.1, 0.2), ours=0.15, tol=0.1)
    with pytest.raises(ValueError, match="tol must be 0 for a bool claim"):
        rep.claim("b", paper=True, ours=True, tol=0.1)
    with pytest.raises(TypeError, match="source must be a string"):
        rep.claim("s", paper=1.0, ours=1.0, source=5)
    # A refused claim is not recorded.
    assert [c.name for c in rep.claims] == ["dup"]


def test_constructor_errors():
    with pytest.raises(TypeError, match="paper must be a non-empty string"):
        Reproduction("")
    with pytest.raises(TypeError, match="results_path must be a path or None"):
        Reproduction("p", results_path=3)
    with pytest.raises(ValueError, match="results_path must not be an empty string"):
        Reproduction("p", results_path="")


def test_known_gap_never_raises_and_is_shown(tmp_path):
    path = tmp_path / "r.json"
    rep = Reproduction("p", results_path=path)
    rep.claim("ok", paper=1.0, ours=1.0)
    gap = rep.known_gap("Table 7", paper=0.25, ours=0.31, reason="numbers lost in extraction", source="Table 7")
    assert gap.holds is None and gap.status == "known gap"
    with pytest.raises(ValueError, match="reason must be a non-empty string"):
        rep.known_gap("g2", paper=None, ours=None, reason="")
    rep.finish()  # no failed claim: does not raise
    data = json.loads(path.read_text())
    assert [c["status"] for c in data["claims"]] == ["holds", "known gap"]
    assert data["claims"][1]["holds"] is None
    assert data["claims"][1]["reason"] == "numbers lost in extraction"
    summary = rep.summary()
    assert summary.loc["Table 7", "status"] == "known gap"
    assert summary.loc["Table 7", "reason"] == "numbers lost in extraction"
    assert rep.counts() == {"holds": 1, "fails": 0, "known_gaps": 1, "total": 1}


# ---------------------------------------------------------------------- summary


def test_summary_columns_and_values():
    rep = Reproduction("Sakai 2024")
    rep.claim("HMR(X)", paper=0.557, ours=0.5573, tol=0.0005, source="§4.1.1")
    rep.claim("verdict", paper=True, ours=False, source="§4.1")
    rep.claim("range", paper=(0.45, 0.5), ours=0.47)
    s = rep.summary()
    assert list(s.columns[:6]) == ["paper", "ours", "difference", "tolerance", "holds", "source"]
    assert list(s.index) == ["HMR(X)", "verdict", "range"]
    assert s.loc["HMR(X)", "difference"] == pytest.approx(0.0003)
    assert s.loc["HMR(X)", "tolerance"] == 0.0005
    assert s.loc["verdict", "holds"] is False or s.loc["verdict", "holds"] == False  # noqa: E712
    assert s.loc["range", "paper"] == (0.45, 0.5)
    html = rep._repr_html_()
    assert "<table" in html and "2 of 3 claims hold" in html
    assert rep.headline() == "Sakai 2024: 2 of 3 claims hold."


def test_empty_record_summary():
    rep = Reproduction("p")
    assert rep.summary().empty
    assert rep.headline() == "p: 0 of 0 claims hold."
    rep.finish()  # nothing to fail


# ------------------------------------------------------------------------ finish


def test_finish_writes_then_raises_on_failure(tmp_path, capsys):
    path = tmp_path / "sub" / "results.json"  # parent created
    rep = Reproduction("p", results_path=str(path))
    rep.claim("good", paper=0.5, ours=0.5, source="Table 1")
    rep.claim("bad", paper=0.5, ours=0.7, tol=0.01, source="Table 2")
    rep.add_result("ece", np.float64(0.125))
    with pytest.raises(ReproductionError, match=r"1 of 2 claims of p do not hold:\n  bad: paper 0.5, ours 0.7"):
        rep.finish()
    # Written before raising, and the summary was printed (no IPython kernel here).
    data = json.loads(path.read_text())
    assert data["paper"] == "p"
    assert data["results"] == {"ece": 0.125}
    assert {c["name"]: c["holds"] for c in data["claims"]} == {"good": True, "bad": False}
    assert data["claims"][1] == {
        "name": "bad", "source": "Table 2", "paper": 0.5, "ours": 0.7, "tol": 0.01,
        "holds": False, "status": "fails", "difference": pytest.approx(0.2), "reason": None,
    }
    out = capsys.readouterr().out
    assert "1 of 2 claims hold" in out and "bad" in out
    assert issubclass(ReproductionError, AssertionError)
    assert list(tmp_path.joinpath("sub").iterdir()) == [path]  # no temp file left


def test_finish_without_path_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rep = Reproduction("p")
    rep.claim("a", paper=1.0, ours=1.0)
    rep.finish()
    assert list(tmp_path.iterdir()) == []


def test_finish_is_strict_json_with_nonfinite(tmp_path):
    path = tmp_path / "r.json"
    rep = Reproduction("p", results_path=path)
    rep.claim("nan claim", paper=0.1, ours=float("nan"), tol=1.0)
    rep.add_result("kl", float("inf"))
    rep.add_result("arr", np.array([1.0, np.nan, -np.inf]))
    with pytest.raises(ReproductionError):
        rep.finish()
    text = path.read_text()
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert data["results"]["kl"] == "inf"
    assert data["results"]["arr"] == [1.0, "nan", "-inf"]
    assert data["claims"][0]["ours"] == "nan"
    assert math.isnan(from_json_float(data["claims"][0]["ours"]))


def test_claim_values_roundtrip_through_json(tmp_path):
    path = tmp_path / "r.json"
    rep = Reproduction("p", results_path=path)
    rep.claim("range", paper=(0.1, 0.2), ours=np.float32(0.15))
    rep.claim("bool", paper=np.bool_(False), ours=False)
    rep.finish()
    claims = json.loads(path.read_text())["claims"]
    assert claims[0]["paper"] == [0.1, 0.2]
    assert claims[0]["ours"] == pytest.approx(0.15)
    assert claims[1]["paper"] is False and claims[1]["ours"] is False


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


def test_claim_is_frozen():
    c = Reproduction("p").claim("a", paper=1.0, ours=1.0)
    assert isinstance(c, Claim)
    with pytest.raises(AttributeError):
        c.ours = 2.0


# ======================================================================= ledgers

import copy  # noqa: E402

import yaml  # noqa: E402

from calibnb.record.reproduction import (  # noqa: E402
    LedgerError,
    claim_status,
    claims_table_html,
    did_not_reproduce_markdown,
    interval_outcome,
    load_ledger,
    status_counts,
    status_mismatches,
)

BASE_CLAIMS = [
    {"id": "hmr_x", "quote": "HMR(X) = 0.557", "locator": "§4.1.1, Table 2", "kind": "number", "paper": 0.557,
     "tol": 0.0005, "tol_reason": "printed to 3 decimals", "sources": ["example1", "example2"],
     "expected": "partly", "reason": "holds on example1, not on example2"},
    {"id": "ts_lowers", "quote": "TS lowers ECE", "locator": "Table 1", "kind": "range", "paper": [0.0, 1.0],
     "sources": ["cifar10"], "expected": "reproduces", "reason": "the CI lies above 0"},
    {"id": "spline_best", "quote": "spline is best on most networks", "locator": "Table 3", "kind": "count",
     "paper": [0.5, 1.0], "sources": ["cifar10"], "expected": "does-not-reproduce", "reason": "3 of 8"},
    {"id": "only_x_first", "quote": "only HMR ranks X first", "locator": "§4.1", "kind": "verdict",
     "paper": True, "sources": ["example1"], "expected": "reproduces", "reason": "the paper's data"},
    {"id": "avg_half", "quote": "MacroCE = 50.00", "locator": "Table 2", "kind": "identity", "paper": 0.5,
     "expected": "identity", "reason": "(1 - a + a) / 2 for any accuracy a"},
    {"id": "avg_half_two", "quote": "MacroCE = 50.00", "locator": "Table 7", "kind": "identity",
     "sources": ["qa", "trained"], "expected": "identity", "reason": "as above, on two sources"},
    {"id": "human_study", "quote": "users trust ConsCal more", "locator": "§5.4", "kind": "not-checkable",
     "expected": "not-checkable", "reason": "the human study's answers are not public"},
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
    rep.check("spline_best", ours=(3, 8), source="cifar10")
    rep.check("only_x_first", ours=np.bool_(True), source="example1")
    rep.identity("avg_half", ours=np.float64(0.5), expected=0.5)
    rep.identity("avg_half_two", ours=0.5, expected=0.5, tol=1e-12, source="qa")
    rep.identity("avg_half_two", ours=0.5 + 1e-13, expected=0.5, tol=1e-12, source="trained")
    rep.not_checkable("human_study")
    rep.add_result("n", 3)


def test_load_ledger_reads_every_kind(tmp_path):
    ledger = load_ledger(write_ledger(tmp_path))
    assert ledger.paper == "Test 2024" and ledger.notebook == "nb" and len(ledger) == 7
    assert list(ledger.claims) == [c["id"] for c in BASE_CLAIMS]
    c = ledger.claims["hmr_x"]
    assert (c.paper, c.tol, c.sources, c.expected) == (0.557, 0.0005, ("example1", "example2"), "partly")
    assert ledger.claims["ts_lowers"].paper == (0.0, 1.0)
    assert ledger.claims["only_x_first"].paper is True
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
        (_mutate(1, paper=[0.5, 0.4]), r"claim 'ts_lowers', field 'paper': needs lo <= hi"),
        (_mutate(1, paper=0.5), r"claim 'ts_lowers', field 'paper': must be a list \[lo, hi\]"),
        (_mutate(2, paper=[0.5, 2.0]), r"claim 'spline_best', field 'paper': a count's paper value is a fraction"),
        (_mutate(3, paper="yes"), r"claim 'only_x_first', field 'paper': a verdict's paper value is true or false"),
        (_mutate(0, sources=_DELETE), r"claim 'hmr_x', field 'sources': missing"),
        (_mutate(0, sources=[]), r"claim 'hmr_x', field 'sources': must list at least one source"),
        (_mutate(0, sources=["a", "a"]), r"claim 'hmr_x', field 'sources': lists 'a' twice"),
        (_mutate(0, sources="example1"), r"claim 'hmr_x', field 'sources': must be a list of non-empty strings"),
        (_mutate(1, expected="partly"), r"claim 'ts_lowers', field 'expected': 'partly' needs at least two"),
        (_mutate(0, expected="identity"), r"claim 'hmr_x', field 'expected': a claim of kind 'number' is expected"),
        (_mutate(4, expected="reproduces"), r"claim 'avg_half', field 'expected': a claim of kind 'identity'"),
        (_mutate(6, expected="reproduces"), r"claim 'human_study', field 'expected': a claim of kind 'not-checkable'"),
        (_mutate(6, reason=_DELETE), r"claim 'human_study', field 'reason': missing"),
        (_mutate(6, reason="  "), r"claim 'human_study', field 'reason': must be a non-empty string"),
        (_mutate(6, sources=["a"]), r"claim 'human_study', field 'sources': a not-checkable claim is checked on no"),
        (_mutate(0, expected="not-checkable"), r"claim 'hmr_x', field 'expected': a claim of kind 'number'"),
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


# ----------------------------------------------------------------- outcome rules


@pytest.mark.parametrize(
    ("outcomes", "status"),
    [(["holds"], "reproduces"), (["holds", "holds"], "reproduces"), (["holds", "fails"], "partly"),
     (["inconclusive", "holds"], "partly"), (["fails"], "does-not-reproduce"),
     (["fails", "inconclusive"], "does-not-reproduce"), (["inconclusive"], "does-not-reproduce")],
)
def test_claim_status(outcomes, status):
    assert claim_status("number", outcomes) == status


def test_claim_status_special_kinds():
    assert claim_status("identity", ["holds"]) == "identity"
    assert claim_status("not-checkable", ["not-checkable"]) == "not-checkable"
    with pytest.raises(ValueError, match="outcomes must not be empty"):
        claim_status("range", [])


@pytest.mark.parametrize(
    ("interval", "outcome"),
    [((0.2, 0.3), "holds"), ((0.0, 0.5), "holds"), ((0.6, 0.7), "fails"), ((-0.3, -0.1), "fails"),
     ((0.4, 0.7), "inconclusive"), ((-0.1, 0.1), "inconclusive"), ((-1.0, 2.0), "inconclusive")],
)
def test_interval_outcome(interval, outcome):
    assert interval_outcome(interval, (0.0, 0.5)) == outcome


def one_claim_ledger(tmp_path, **claim):
    base = {"id": "c", "quote": "q", "locator": "l", "sources": ["s"], "expected": "reproduces", "reason": "r"}
    base.update(claim)
    return Reproduction.from_ledger(write_ledger(tmp_path, [base]))


@pytest.mark.parametrize(
    ("ours", "outcome"),
    [(0.5573, "holds"), (0.5565, "holds"), (0.5575, "holds"), (0.5576, "fails"), (0.5564, "fails"),
     (np.float32(0.557), "holds"), (np.array(0.557), "holds"), (float("nan"), "fails"), (float("inf"), "fails"),
     (1, "fails")],
)
def test_check_number(tmp_path, ours, outcome):
    rep = one_claim_ledger(tmp_path, kind="number", paper=0.557, tol=0.0005, tol_reason="3 decimals")
    assert rep.check("c", ours=ours, source="s") == outcome
    assert rep.statuses() == {"c": "reproduces" if outcome == "holds" else "does-not-reproduce"}


@pytest.mark.parametrize(
    ("ours", "interval", "outcome"),
    [(0.557, (0.5566, 0.5574), "holds"), (0.557, (0.550, 0.560), "inconclusive"), (0.6, (0.58, 0.62), "fails")],
)
def test_check_number_with_interval(tmp_path, ours, interval, outcome):
    rep = one_claim_ledger(tmp_path, kind="number", paper=0.557, tol=0.0005, tol_reason="3 decimals")
    assert rep.check("c", ours=ours, interval=interval, source="s") == outcome


@pytest.mark.parametrize(
    ("ours", "interval", "outcome"),
    [(0.45, None, "holds"), (0.4, None, "holds"), (0.5, None, "holds"), (0.39, None, "fails"), (0.55, None, "fails"),
     (0.45, (0.41, 0.49), "holds"), (0.45, (0.3, 0.49), "inconclusive"), (0.45, (0.51, 0.6), "fails")],
)
def test_check_range(tmp_path, ours, interval, outcome):
    rep = one_claim_ledger(tmp_path, kind="range", paper=[0.4, 0.5])
    assert rep.check("c", ours=ours, interval=interval, source="s") == outcome


@pytest.mark.parametrize(("ours", "outcome"), [((5, 8), "holds"), ((4, 8), "holds"), ((3, 8), "fails"),
                                               ((np.int64(8), np.int64(8)), "holds"), ([0, 3], "fails")])
def test_check_count(tmp_path, ours, outcome):
    rep = one_claim_ledger(tmp_path, kind="count", paper=[0.5, 1.0])
    assert rep.check("c", ours=ours, source="s") == outcome


@pytest.mark.parametrize(("paper", "ours", "outcome"), [(True, True, "holds"), (True, False, "fails"),
                                                        (False, np.bool_(False), "holds")])
def test_check_verdict(tmp_path, paper, ours, outcome):
    rep = one_claim_ledger(tmp_path, kind="verdict", paper=paper)
    assert rep.check("c", ours=ours, source="s") == outcome


def test_check_value_errors(tmp_path):
    rep = one_claim_ledger(tmp_path, kind="number", paper=0.5, tol=0.1, tol_reason="t")
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
    verdict = one_claim_ledger(tmp_path, kind="verdict", paper=True)
    with pytest.raises(TypeError, match="ours of verdict claim 'c' must be a bool; got int"):
        verdict.check("c", ours=1, source="s")
    with pytest.raises(ValueError, match="interval is for number and range claims; claim 'c' is of kind 'verdict'"):
        verdict.check("c", ours=True, interval=(0, 1), source="s")
    count = one_claim_ledger(tmp_path, kind="count", paper=[0.5, 1.0])
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


def test_finish_writes_statuses_and_json(tmp_path, capsys):
    path = tmp_path / "out" / "r.json"
    ledger_path = write_ledger(tmp_path)
    rep = Reproduction.from_ledger(ledger_path, results_path=path)
    record_all(rep)
    rep.finish()  # a claim that fails (spline_best, hmr_x on example2) never raises
    data = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(c))
    assert data["paper"] == "Test 2024" and data["notebook"] == "nb" and data["ledger"] == str(ledger_path)
    assert data["results"] == {"n": 3}
    assert data["counts"] == {"reproduces": 2, "partly": 1, "does-not-reproduce": 1, "not-checkable": 1,
                              "identity": 2, "checkable": 4}
    claims = {c["id"]: c for c in data["claims"]}
    assert [c["id"] for c in data["claims"]] == [c["id"] for c in BASE_CLAIMS]  # ledger order
    assert {k: c["status"] for k, c in claims.items()} == {c["id"]: c["expected"] for c in BASE_CLAIMS}
    hmr = claims["hmr_x"]
    assert set(hmr) == {"id", "quote", "locator", "kind", "paper", "tol", "tol_reason", "sources", "expected",
                        "reason", "status"}
    assert hmr["sources"] == [{"source": "example1", "ours": 0.5573, "interval": None, "outcome": "holds"},
                              {"source": "example2", "ours": 0.61, "interval": None, "outcome": "fails"}]
    assert claims["ts_lowers"]["sources"][0]["interval"] == [0.1, 0.5]
    assert claims["spline_best"]["sources"][0]["ours"] == [3, 8]
    assert claims["ts_lowers"]["paper"] == [0.0, 1.0] and claims["ts_lowers"]["tol"] is None
    assert claims["avg_half"]["sources"] == [{"source": None, "ours": 0.5, "interval": None, "outcome": "holds",
                                              "expected_value": 0.5}]
    assert [s["source"] for s in claims["avg_half_two"]["sources"]] == ["qa", "trained"]
    assert claims["human_study"]["sources"] == [{"source": None, "ours": None, "interval": None,
                                                 "outcome": "not-checkable"}]
    assert status_mismatches(data, ledger_path) == []
    out = capsys.readouterr().out  # no kernel: headline and summary printed
    assert "Test 2024: 2 of 4 checkable claims reproduce, 1 partly, 1 do not; 1 not checkable; 2 identities." in out
    assert list(path.parent.iterdir()) == [path]  # atomic: no temporary file left


def test_finish_raises_only_on_unrecorded_claims_and_writes_nothing(tmp_path):
    path = tmp_path / "r.json"
    rep = Reproduction.from_ledger(write_ledger(tmp_path), results_path=path)
    rep.check("hmr_x", ours=0.557, source="example1")
    rep.check("spline_best", ours=(0, 8), source="cifar10")
    with pytest.raises(ReproductionError, match=r"6 claim\(s\) or source\(s\) of ledger .*nb.yaml were not recorded: "
                                                r"hmr_x on example2, ts_lowers, only_x_first, avg_half, "
                                                r"avg_half_two, human_study"):
        rep.finish()
    assert not path.exists()
    assert rep.statuses()["hmr_x"] is None and rep.statuses()["spline_best"] == "does-not-reproduce"
    with pytest.raises(ReproductionError, match="not recorded"):
        rep.did_not_reproduce()
    assert "6 not recorded yet" in repr(rep)


def test_summary_orders_non_reproducing_first(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    record_all(rep)
    s = rep.summary()
    assert list(s.index) == ["spline_best", "hmr_x", "human_study", "ts_lowers", "only_x_first", "avg_half",
                             "avg_half_two"]
    assert s.loc["hmr_x", "ours"] == {"example1": 0.5573, "example2": 0.61}
    assert s.loc["hmr_x", "outcome"] == {"example1": "holds", "example2": "fails"}
    assert s.loc["ts_lowers", "interval"] == {"cifar10": [0.1, 0.5]}
    assert list(s.columns) == ["quote", "locator", "kind", "paper", "tol", "ours", "interval", "outcome", "status",
                               "expected", "reason"]


def test_claims_table_html(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    record_all(rep)
    page = rep._repr_html_()
    assert "2 of 4 checkable claims reproduce" in page
    assert "table-layout: fixed" in page and "overflow-wrap: anywhere" in page
    # non-reproducing first, every column present, values per source
    assert page.index("spline_best") < page.index("hmr_x") < page.index("ts_lowers") < page.index("avg_half")
    for header in ("claim (the paper's words)", "locator", "criterion", "ours", "interval", "outcome", "status",
                   "expected", "reason"):
        assert f"<th>{header}</th>" in page
    # the criterion column states the test in words, so a range is never read as a number the paper printed
    assert "within [" in page and "± 0.0005" in page
    assert "example1: 0.5573<br>example2: 0.61" in page and "cifar10: 3/8 = 0.375" in page
    assert "0.557 ± 0.0005" in page and "cifar10: [0.1, 0.5]" in page
    # a status that differs from the expectation is marked
    claims = rep.to_dict()["claims"]
    claims[0]["expected"] = "reproduces"
    assert "class='status mismatch'" in claims_table_html(claims)
    assert "mismatch" not in claims_table_html(rep.to_dict()["claims"]).split("</style>")[1]
    escaped = claims_table_html([dict(claims[0], quote="a <b> & c")])
    assert "a &lt;b&gt; &amp; c" in escaped


def test_did_not_reproduce_section(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    record_all(rep)
    section = rep.did_not_reproduce()
    text = section._repr_markdown_()
    assert text == str(section) and text.startswith("## What did not reproduce\n")
    assert "2 of 4 checkable claims of Test 2024 reproduce; 1 reproduce partly, 1 do not; 1 cannot be checked" in text
    dnr, partly, gaps = (text.split("**Does not reproduce**")[1], text.split("**Reproduces partly**")[1],
                         text.split("**Not checkable with public data**")[1])
    assert "spline_best" in dnr.split("**Reproduces partly**")[0] and "cifar10: 3/8 = 0.375, fails" in dnr
    assert "hmr_x" in partly and "example2: 0.61, fails" in partly and "holds on example1, not on example2" in partly
    assert "human_study" in gaps and "the human study's answers are not public" in gaps
    assert "ts_lowers" not in text and "avg_half" not in text
    assert "differs from the ledger" not in text
    results = rep.to_dict()
    results["claims"][1]["status"] = "reproduces"
    assert "ts_lowers is reproduces, expected reproduces" not in did_not_reproduce_markdown(results)
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
    (tmp_path / "fewer").mkdir()
    fewer = write_ledger(tmp_path / "fewer", BASE_CLAIMS[:-1])
    assert status_mismatches(results, fewer) == [f"claim 'human_study': in the results but not in ledger {fewer}."]
    more = copy.deepcopy(BASE_CLAIMS) + [dict(BASE_CLAIMS[0], id="new_claim")]
    (tmp_path / "more").mkdir()
    more_path = write_ledger(tmp_path / "more", more)
    assert status_mismatches(results, more_path) == [
        f"claim 'new_claim': in ledger {more_path} but not in the results (not recorded?)."]
    with pytest.raises(ValueError, match="results must be a results JSON object"):
        status_mismatches({"paper": "p"}, ledger_path)


def test_status_counts():
    assert status_counts([{"status": "partly"}, {"status": "partly"}, {"status": "identity"}, {}]) == {
        "reproduces": 0, "partly": 2, "does-not-reproduce": 0, "not-checkable": 0, "identity": 1}


def test_ledger_and_deprecated_apis_do_not_mix(tmp_path):
    rep = Reproduction.from_ledger(write_ledger(tmp_path))
    with pytest.raises(TypeError, match=r"claim\(\) is the deprecated API .* use rep.check"):
        rep.claim("x", paper=1.0, ours=1.0)
    with pytest.raises(TypeError, match=r"known_gap\(\) is the deprecated API"):
        rep.known_gap("x", paper=1.0, ours=None, reason="r")
    old = Reproduction("p")
    for call in (lambda: old.check("a", ours=1.0, source="s"), lambda: old.identity("a", ours=1, expected=1),
                 lambda: old.not_checkable("a"), old.statuses, old.did_not_reproduce):
        with pytest.raises(TypeError, match="needs a ledger: build the record with Reproduction.from_ledger"):
            call()
    assert old.missing() == []


def test_real_ledgers_are_valid():
    """Every committed ledger loads (schema, ids, kinds, statuses) and names its notebook."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[1] / "notebooks" / "claims"
    for path in sorted(folder.glob("*.yaml")):
        ledger = load_ledger(path)
        assert (folder.parent / f"{ledger.notebook}.ipynb").exists(), path
