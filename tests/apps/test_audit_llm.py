"""The audit of a language model's evaluation log (issue 28): each of the five formats of
calibnb.llm audits from a fixture with one command and with one Python call, and the report
names each confidence's provenance (source, read-out, how the answer was scored, scale)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import calibnb
import calibnb.llm as llm
from calibnb.apps.audit import llm_provenance

FIXTURES = Path(__file__).resolve().parents[1] / "llm" / "fixtures"
#: format -> (fixture, the read-out words the page must carry for its first source)
CASES = {
    "openai": "openai_chat.jsonl",
    "lm-eval": "samples_trivia_mc_2026-11-25T10-00-00.000000.jsonl",
    "helm": "helm_run",
    "inspect": "inspect_trivia.json",
    "verbalized": "verbalized_unit.csv",
}
#: The checks here are of provenance and accuracy, not of intervals: the runs skip the bootstrap.
FAST = ["--n-folds", "2", "--n-resamples", "0", "--heavy-resamples", "0"]


def _expected_sentences(fmt: str) -> list[str]:
    return llm_provenance(llm.read_log(FIXTURES / CASES[fmt], format=fmt))


def test_provenance_sentences_name_every_source_and_readout():
    table = llm.read_log(FIXTURES / CASES["openai"], format="openai")
    sentences = llm_provenance(table)
    sources = list(dict.fromkeys(table["confidence_source"]))
    assert len(sentences) == len(sources) >= 2
    for s_, sentence in zip(sources, sentences):
        assert repr(s_) in sentence
        readouts = table.loc[table["confidence_source"] == s_, "readout"].dropna().unique()
        assert str(readouts[0]) in sentence
    assert llm_provenance(pd.DataFrame({"confidence": [0.5], "correct": [1]})) == []


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_each_log_format_audits_by_command_and_by_call_naming_its_provenance(fmt, tmp_path):
    expected = _expected_sentences(fmt)
    assert expected, fmt
    env = {**os.environ, "MPLBACKEND": "Agg"}
    out = tmp_path / "cli"
    proc = subprocess.run([sys.executable, "-m", "calibnb.audit", str(FIXTURES / CASES[fmt]), "--format", fmt,
                           "--out", str(out), *FAST], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "audit.json").read_text())
    notes = report["inputs"]["notes"]
    for sentence in expected:
        assert sentence in notes, (sentence, notes)
    assert not any("columns ignored" in n and "readout" in n for n in notes), notes
    page = (out / "audit.html").read_text()
    import html as _html

    for sentence in expected:
        assert _html.escape(sentence, quote=True) in page or _html.escape(sentence, quote=False) in page
    # the same log through the Python call
    result = calibnb.audit(llm.read_log(FIXTURES / CASES[fmt], format=fmt), n_resamples=0, heavy_resamples=0,
                           n_folds=2)
    table = report["summary"]  # pandas' split orientation
    ours = pd.DataFrame(table["data"], columns=table["columns"]).set_index("key")
    assert result.summary.set_index("key").loc["accuracy", "estimate"] == pytest.approx(ours.loc["accuracy", "estimate"])
    for sentence in expected:
        assert sentence in result.predictions.notes, (sentence, result.predictions.notes)
