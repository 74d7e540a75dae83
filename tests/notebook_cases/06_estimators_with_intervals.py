"""Papermill cases of notebooks/06_estimators_with_intervals.ipynb (estimators with intervals as N grows)."""

from __future__ import annotations

import pandas as pd

from nbcase import Case

ESTIMATORS = ["binned ECE", "smooth ECE", "debiased ECE (L2)", "KS error"]
BINLESS = ["smooth ECE", "KS error"]
BIN_FREE = ["CORP MCB (Brier)", "TS loss gain (Brier)", "TS loss gain (log)"]


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
    # CORP MCB and the cross-fitted loss gain of temperature scaling (issue 29)
    free = frame(results, "bin_free")
    assert len(free) == 2 * len(sizes) * len(BIN_FREE)
    assert set(free["estimator"]) == set(BIN_FREE)
    assert (free[free.estimator == "CORP MCB (Brier)"]["estimate"] >= 0).all()
    assert (free["low"] <= free["high"]).all()
    g = free.set_index(["estimator", "system", "N"])
    # the raw network is overconfident: on all 5,000 images the cross-fitted temperature clearly helps
    assert g.loc[("TS loss gain (Brier)", "raw", max(sizes)), "low"] > 0
    assert g.loc[("TS loss gain (log)", "raw", max(sizes)), "low"] > 0
    # a second temperature on the temperature-scaled system removes next to nothing
    assert abs(g.loc[("TS loss gain (Brier)", "TS", max(sizes)), "estimate"]) < 1e-3
    kuiper = frame(results, "kuiper").set_index(["system", "N"])
    assert kuiper.loc[("raw", max(sizes)), "kuiper_p"] < 1e-6
    assert ((kuiper["kuiper_p"] >= 0) & (kuiper["kuiper_p"] <= 1)).all()
    # Brier = MCB - DSC + UNC, the decomposition's identity, on every row
    mcb = free[free.estimator == "CORP MCB (Brier)"].set_index(["system", "N"])["estimate"]
    rebuilt = mcb - kuiper["dsc"] + kuiper["unc"]
    assert (abs(rebuilt - kuiper["brier"]) < 1e-12).all()


#: Resamples of the more_bins case (the default run uses 200): its check compares point estimates only.
MORE_BINS_RESAMPLES = 20
# the columns of the estimates and bin_free tables that do not depend on the resamples
POINT = ["system", "N", "estimator", "estimate"]


def check_more_bins(results: dict, default: dict) -> None:
    """More bins move the binned and debiased ECE; the bin-free estimators and the tests stay.

    The case runs with MORE_BINS_RESAMPLES bootstrap resamples: an estimate is the estimator on the N items (the
    bootstrap does not touch it), the tests and the Kuiper/decomposition table carry no resamples, so all of these
    are compared with the default run exactly; the intervals (low, high, width), which depend on the number of
    resamples, are not compared.
    """
    assert results["results"]["settings"]["n_resamples"] == MORE_BINS_RESAMPLES
    a, b = frame(results, "estimates")[POINT], frame(default, "estimates")[POINT]
    for name in BINLESS:
        pd.testing.assert_frame_equal(a[a.estimator == name].reset_index(drop=True),
                                      b[b.estimator == name].reset_index(drop=True))
    for name in ["binned ECE", "debiased ECE (L2)"]:
        assert not a[a.estimator == name]["estimate"].reset_index(drop=True).equals(
            b[b.estimator == name]["estimate"].reset_index(drop=True)), name
    pd.testing.assert_frame_equal(frame(results, "tests"), frame(default, "tests"))
    # CORP, the loss gain and the Kuiper test use no bins
    pd.testing.assert_frame_equal(frame(results, "bin_free")[POINT], frame(default, "bin_free")[POINT])
    pd.testing.assert_frame_equal(frame(results, "kuiper"), frame(default, "kuiper"))


def check_other_seed(results: dict, default: dict) -> None:
    """Another seed: another split and other subsamples, so other numbers; the same structure."""
    a, b = frame(results, "estimates"), frame(default, "estimates")
    assert a[["system", "N", "estimator"]].equals(b[["system", "N", "estimator"]])
    assert not a["estimate"].equals(b["estimate"])
    assert results["results"]["settings"]["temperature"] != default["results"]["settings"]["temperature"]


CASES = [
    Case("more_bins", {"n_bins": 30, "n_resamples": MORE_BINS_RESAMPLES}, check_more_bins),
    Case("seed1", {"seed": 1}, check_other_seed),
]
