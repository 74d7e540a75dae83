"""The audit shows the bin-free estimates of issue 29: CORP's Brier decomposition and the
cross-fitted loss gain of temperature scaling, in audit.json and on the page."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import calibnb as cn


@pytest.fixture(scope="module")
def overconfident():
    rng = np.random.default_rng(3)
    p = rng.uniform(size=600)
    y = (rng.uniform(size=600) < 0.5 + 0.4 * (p - 0.5)).astype(int)
    return pd.DataFrame({"y_prob": p, "y_true": y})


def test_audit_json_and_page_carry_the_decomposition_and_the_loss_gain(overconfident, tmp_path):
    r = cn.audit(overconfident, n_resamples=60, heavy_resamples=10, n_folds=3, seed=0)
    t = r.result["corp"].set_index("measure")
    conf, correct = r.predictions.conf, r.predictions.correct
    # the table's numbers are the library's, on the same rows and seed
    dec = cn.score_decomposition(conf, correct, score="brier", n_resamples=60, seed=0)
    assert t.loc["MCB (miscalibration)", "estimate"] == pytest.approx(dec.mcb.estimate, abs=1e-12)
    assert t.loc["Brier score", "estimate"] == pytest.approx(
        t.loc["MCB (miscalibration)", "estimate"] - t.loc["DSC (discrimination)", "estimate"]
        + t.loc["UNC (uncertainty)", "estimate"], abs=1e-12)
    gain = cn.recalibration_gain(conf, correct, n_folds=3, n_resamples=60, seed=0)
    row = t.loc["log loss gain of temperature scaling (cross-fitted)"]
    assert row["estimate"] == pytest.approx(gain.log.gain.estimate, abs=1e-12)
    # this model is overconfident: temperature scaling removes log loss beyond noise
    assert row["low"] > 0
    out = r.to_json(tmp_path / "audit.json")
    saved = json.loads(out.read_text())["corp"]
    assert "MCB (miscalibration)" in [d[0] for d in saved["data"]]
    page = r.to_html(tmp_path / "audit.html").read_text()
    assert "CORP reliability" in page and "MCB (miscalibration)" in page and "refinement" in page
