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

from calibnb.reproduction import (
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
