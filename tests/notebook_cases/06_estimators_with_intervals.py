"""Papermill cases of notebooks/06_estimators_with_intervals.ipynb (estimators with intervals as N grows)."""

from __future__ import annotations

import pandas as pd

from nbcase import Case

ESTIMATORS = ["binned ECE", "smooth ECE", "debiased ECE (L2)", "KS error"]
BINLESS = ["smooth ECE", "KS error"]


def frame(results: dict, key: str) -> pd.DataFrame:
    return pd.DataFrame(**results["results"][key])


def check_default(results: dict) -> None:
    assert {c["id"]: c["status"] for c in results["claims"]} == {"raw_overconfident": "reproduces",
                                                                "ts_lowers_ece": "reproduces"}
    gap = results["results"]["overconfidence"]
    assert gap["low"] > 0 and gap["low"] <= gap["high"]
    settings = results["results"]["settings"]
    sizes = settings["sizes"]
    assert settings["model"] == "resnet56" and settings["temperature"] > 1  # the raw network is overconfident
    est = frame(results, "estimates")
    assert len(est) == 2 * len(sizes) * len(ESTIMATORS)
    assert set(est["estimator"]) == set(ESTIMATORS) and set(est["system"]) == {"raw", "TS"}
    assert (est["low"] <= est["high"]).all() and (est["low"] >= 0).all()
    for (system, name), t in est.groupby(["system", "estimator"]):
        t = t.set_index("N")
        # the interval narrows as N grows (1/sqrt(N))
        assert t.loc[max(sizes), "width"] < t.loc[min(sizes), "width"], (system, name)
    paired = frame(results, "paired")
    # on all 5,000 test images, every estimator separates the raw network from the temperature-scaled one
    assert paired[paired["N"] == max(sizes)]["separates"].all()
    assert (paired[paired["N"] == max(sizes)]["difference"] > 0).all()
    tests = frame(results, "tests").set_index(["system", "N"])
    assert tests.loc[("raw", max(sizes)), "spiegelhalter_p"] < 1e-6
    assert tests.loc[("raw", max(sizes)), "cumulative_ks_p"] < 1e-6
    assert ((tests["spiegelhalter_p"] >= 0) & (tests["spiegelhalter_p"] <= 1)).all()


def check_more_bins(results: dict, default: dict) -> None:
    """More bins move the binned and debiased ECE; the bin-free estimators and the tests stay."""
    a, b = frame(results, "estimates"), frame(default, "estimates")
    for name in BINLESS:
        pd.testing.assert_frame_equal(a[a.estimator == name].reset_index(drop=True),
                                      b[b.estimator == name].reset_index(drop=True))
    for name in ["binned ECE", "debiased ECE (L2)"]:
        assert not a[a.estimator == name]["estimate"].reset_index(drop=True).equals(
            b[b.estimator == name]["estimate"].reset_index(drop=True)), name
    pd.testing.assert_frame_equal(frame(results, "tests"), frame(default, "tests"))


def check_other_seed(results: dict, default: dict) -> None:
    """Another seed: another split and other subsamples, so other numbers; the same structure."""
    a, b = frame(results, "estimates"), frame(default, "estimates")
    assert a[["system", "N", "estimator"]].equals(b[["system", "N", "estimator"]])
    assert not a["estimate"].equals(b["estimate"])
    assert results["results"]["settings"]["temperature"] != default["results"]["settings"]["temperature"]


CASES = [
    Case("more_bins", {"n_bins": 30}, check_more_bins),
    Case("seed1", {"seed": 1}, check_other_seed),
]
