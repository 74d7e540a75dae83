"""Papermill cases of notebooks/07_llm_confidence.ipynb (Codex TriviaQA answers through calibnb.llm; no ledger).

The notebook reads Si et al.'s Codex log through the OpenAI adapter; these checks compare its numbers with
the log itself (loaded directly with calibnb.data, a path independent of the adapter) and with the log's own
summary line.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import calibnb as cn
from calibnb import data
from nbcase import Case

SOURCES = ["sequence-probability", "mean-token-logprob", "min-token", "first-token"]
BINLESS = ["mean confidence", "MacroCE", "HMR", "R_O (overconfidence reward)", "R_U (underconfidence reward)",
           "coverage-accuracy area"]


def metrics(results: dict) -> pd.DataFrame:
    return pd.DataFrame(**results["results"]["metrics"]).set_index(["source", "metric"])


def check_default(results: dict) -> None:
    r = results["results"]
    log = data.load_codex_triviaqa()
    assert r["accuracy"] == pytest.approx(0.62) == pytest.approx(log["correct"].mean())
    # the log's own closing line, "EM: 8347/11313=73.78...%" (Si et al.'s accuracy on all questions)
    assert r["log_accuracy_all"] == pytest.approx(8347 / 11313)
    lo, hi = r["accuracy_interval"]
    assert lo < 0.62 < hi < 8347 / 11313  # the first 100 questions are harder than the whole log
    m = metrics(results)
    assert set(m.index.get_level_values("source")) == set(SOURCES)
    assert (m["low"] <= m["estimate"] + 1e-12).all() and (m["estimate"] <= m["high"] + 1e-12).all()
    # Si et al.'s 'LM Prob' is the mean-token-logprob read-out: same numbers as the log, computed here directly
    conf, correct = log["confidence"].to_numpy(), log["correct"].to_numpy()
    one = m.xs("mean-token-logprob")
    assert one.loc["mean confidence", "estimate"] == pytest.approx(conf.mean())  # 0.749: overconfident
    assert one.loc["ECE", "estimate"] == pytest.approx(cn.ece(conf, correct))
    assert one.loc["MacroCE", "estimate"] == pytest.approx(cn.macro_ce(conf, correct))
    assert one.loc["HMR", "estimate"] == pytest.approx(cn.hmr(conf, correct))
    assert one.loc["RMS CE", "estimate"] == pytest.approx(cn.rms_calibration_error(conf, correct))
    # the product over an answer's tokens, from the token probabilities directly
    seq = np.array([np.prod(p) for p in log["token_probs"]])
    assert m.xs("sequence-probability").loc["ECE", "estimate"] == pytest.approx(cn.ece(seq, correct))
    assert m.xs("sequence-probability").loc["coverage-accuracy area", "estimate"] == pytest.approx(
        cn.coverage_accuracy_area(seq, correct))
    assert "mean-token-logprob" in r["overconfident_on_average"]
    # exercise 3 answered by the run: ECE with 5/10/20 bins, from the token probabilities directly
    assert all(f"{cn.ece(seq, correct, n_bins=b):.3f}" in r["exercise_answers"]["3"] for b in (5, 10, 20))
    paired = pd.DataFrame(**r["paired"])
    assert len(paired) == 3 * 3 and set(paired.source) == set(SOURCES) - {"mean-token-logprob"}


def check_more_bins(results: dict, default: dict) -> None:
    """More bins move ECE and RMS CE; the bin-free metrics stay."""
    a, b = metrics(results), metrics(default)
    for s in SOURCES:
        assert a.loc[(s, "ECE"), "estimate"] != b.loc[(s, "ECE"), "estimate"]
        for name in BINLESS:
            assert a.loc[(s, name), "estimate"] == pytest.approx(b.loc[(s, name), "estimate"], abs=1e-12)


def check_other_headline(results: dict, default: dict) -> None:
    """The paired comparison is against the chosen read-out; the per-source metrics do not change."""
    paired = pd.DataFrame(**results["results"]["paired"])
    assert "sequence-probability" not in set(paired.source) and "mean-token-logprob" in set(paired.source)
    pd.testing.assert_series_equal(metrics(results)["estimate"], metrics(default)["estimate"])


def check_coverage(results: dict, default: dict) -> None:
    a = pd.DataFrame(**results["results"]["selective"])
    b = pd.DataFrame(**default["results"]["selective"])
    pd.testing.assert_series_equal(a["area"], b["area"])
    assert not a["acc@top (ceil)"].equals(b["acc@top (ceil)"])


# Every check here compares point estimates (an estimate is the metric on all answers, the bootstrap does not touch
# it), the paired table's rows and the selective table (no resamples) with the default run, never an interval, so
# the cases run with CASE_RESAMPLES bootstrap resamples (the default run: 1,000).
CASE_RESAMPLES = 20

def check_bins_and_coverage(results: dict, default: dict) -> None:
    """n_bins and coverage in one run: independent parameters, each check compares only what the other leaves alone.

    check_more_bins reads the per-source metrics but none that depends on the coverage (the "accuracy on top X%"
    row is named after the coverage and is not in BINLESS); check_coverage reads the selective table, which uses
    no bins. Both hold exactly as in two runs.
    """
    check_more_bins(results, default)
    check_coverage(results, default)


CASES = [
    # two cases of old (more_bins, coverage_half) in one run: see check_bins_and_coverage
    Case("more_bins+coverage_half", {"n_bins": 20, "coverage": 0.5, "n_resamples": CASE_RESAMPLES},
         check_bins_and_coverage),
    Case("headline_sequence", {"headline": "sequence-probability", "n_resamples": CASE_RESAMPLES},
         check_other_headline),
]
