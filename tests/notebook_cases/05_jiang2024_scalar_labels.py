"""Papermill cases for notebooks/05_jiang2024_scalar_labels.ipynb (Jiang, Liu, Van Durme 2024)."""

from nbcase import Case

BAAN_MODELS = ["RoBERTa-0", "RoBERTa-1", "RoBERTa-2", "BERT-0", "BERT-1"]
NOT_CHECKABLE = {"table3_joint_training", "table2_ce_roberta_base", "table2_ce_bert", "table2_ce_random",
                 "table2_maeb_roberta_base", "table2_unli"}


def _frame(value):
    import pandas as pd

    return pd.DataFrame(**value)


def _claims(results):
    return {c["id"]: c for c in results["claims"]}


def _ours(claim):
    (source,) = claim["sources"]
    return source["ours"]


def _cost(results):
    t = _frame(results["results"]["cost_summary"])
    return {(row.protocol, row.metric): row.mean for row in t.itertuples()}


def _common(results):
    """What must hold at every parameter setting (statuses are compared with the ledger only at the defaults)."""
    claims = _claims(results)
    r = results["results"]
    assert r["n_items"] == 1514
    # the bound holds on every item and for every model: recorded as identities (a failure would have raised)
    assert claims["scalar_bound_itemwise"]["status"] == claims["mae_bound"]["status"] == "identity"
    assert _ours(claims["scalar_bound_itemwise"]) == max(0.0, r["bound_max_slack"])
    assert r["bound_max_slack"] <= 1e-12
    calib = r["calibration_table"]
    calib = _frame(calib)
    assert (calib["MAE"] <= calib["MAE bound"] + 1e-12).all()
    # RR and MAE rank every RoBERTa seed above the random baseline; the oracle is perfect
    for metric in ("MAE", "RR"):
        assert calib.loc[["RoBERTa-0", "RoBERTa-1", "RoBERTa-2"], metric].max() < calib.loc["random", metric]
    assert calib.loc["oracle"].abs().max() < 1e-12
    return calib


def check_default(results):
    assert results["paper"] == "Jiang et al. 2024"
    calib = _common(results)
    claims = _claims(results)
    assert {i for i, c in claims.items() if c["status"] == "not-checkable"} == NOT_CHECKABLE
    r = results["results"]
    # the recorded values are the computed ones
    assert _ours(claims["kendall_ce_mae"]) == r["kendall_tau_untuned"]["MAE"]
    assert _ours(claims["kendall_ce_rr"]) == r["kendall_tau_untuned"]["RR"]
    assert _ours(claims["ece_grows_with_bins"]) == [12, 12]
    assert _ours(claims["ece_5_vs_100_rankings_differ"]) is (r["ece_w5_w100_flips"] > 0)
    # the ECE ranking changes with the bins: asserted on the default models (6 flips between ECE-5 and ECE-100)
    assert r["ece_w5_w100_flips"] > 0
    changes = _frame(r["ece_ranking_changes"])
    assert changes["discordant pairs"].sum() > 0 and len(changes) == 15
    ece = _frame(r["ece_table"])
    # TS lowers ECE-5 of every Baan model; the oracle is worst-but-one by ECE although perfect by CE
    for m in BAAN_MODELS:
        assert ece.loc[f"{m}-TS", "width-5"] < ece.loc[m, "width-5"]
        assert calib.loc[f"{m}-TS", "CE"] < calib.loc[m, "CE"]
    assert ece.loc["oracle", "width-5"] > ece.loc["RoBERTa-0", "width-5"]
    # MAE agrees with CE (tau >= 0.8), RR much less
    assert r["kendall_tau_untuned"]["MAE"] >= 0.8 > r["kendall_tau_untuned"]["RR"]
    assert abs(r["kendall_tau_paper"]["MAE"] - 1.0) < 1e-12
    # cost argument: more votes rank better; 3 scalar labels beat 3 votes
    cost = _cost(results)
    assert cost[("1 vote(s)", "CE")] < cost[("3 vote(s)", "CE")] < cost[("5 vote(s)", "CE")] < cost[("10 vote(s)", "CE")]
    assert cost[("3 scalar label(s)", "MAE")] > cost[("3 vote(s)", "CE")]
    # back-mapping is closer to the human distribution than the uniform guess
    assert r["backmap_tvd"]["Beta back-mapping"] < r["backmap_tvd"]["uniform"]
    assert 0.5 < r["scalar_label_r"]["mean"] < 1.0


def check_f_neutral(results, default):
    calib, d = _common(results), _frame(default["results"]["calibration_table"])
    r = results["results"]
    assert r["f_neutral"] == 0.2
    # CE does not depend on f; the bound's right side neither (max f - min f is still 1); MAE does
    assert (abs(calib["CE"] - d["CE"]) < 1e-12).all()
    assert (abs(calib["MAE bound"] - d["MAE bound"]) < 1e-12).all()
    assert (abs(calib["MAE"] - d["MAE"]) > 1e-6).any()
    # ECE does not depend on f
    assert r["ece_table"] == default["results"]["ece_table"]


def check_noisy_single_annotator(results, default):
    _common(results)
    r, d = results["results"], default["results"]
    # everything but the simulation is unchanged
    assert r["calibration_table"] == d["calibration_table"] and r["ece_table"] == d["ece_table"]
    # one very noisy annotator per item: lower correlation, worse ranking by MAE than three careful ones
    assert r["scalar_label_r"]["mean"] < d["scalar_label_r"]["mean"]
    cost, dcost = _cost(results), _cost(default)
    assert cost[("1 scalar label(s)", "MAE")] < dcost[("3 scalar label(s)", "MAE")]
    # the vote-based rows do not depend on the scalar settings' values, only on the draws
    assert ("1 vote(s)", "CE") in cost


def check_other_seed(results, default):
    _common(results)
    r, d = results["results"], default["results"]
    calib, dcalib = _frame(r["calibration_table"]), _frame(d["calibration_table"])
    # the Baan models do not depend on the seed; the random baseline does
    assert (abs(calib.loc[BAAN_MODELS, "CE"] - dcalib.loc[BAAN_MODELS, "CE"]) < 1e-12).all()
    assert calib.loc["random", "CE"] != dcalib.loc["random", "CE"]
    assert r["cost_summary"] != d["cost_summary"]


CASES = [
    Case("f_neutral=0.2", {"f_neutral": 0.2}, check_f_neutral),
    Case("noisy_single_annotator", {"scalar_noise": 0.3, "n_scalar_annotators": 1}, check_noisy_single_annotator),
    Case("seed1", {"seed": 1}, check_other_seed),
]
