"""python -m calibnb.audit (as a subprocess, on files written here) and calibnb.summary."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import calibnb as cn
from calibnb.apps import audit, summary

from audit_cli import NO_BOOTSTRAP, run_cli

ROOT = Path(__file__).resolve().parents[2]
FAST = ["--n-resamples", "20", "--heavy-resamples", "10", "--n-folds", "3"]


def multiclass_frame(n=240, k=3, seed=0, votes=True, weights=True):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    p = np.exp(z)
    p /= p.sum(1, keepdims=True)
    y = np.where(rng.uniform(size=n) < 0.7, p.argmax(1), rng.integers(0, k, n))
    df = pd.DataFrame({f"p{j}": p[:, j] for j in range(k)})
    df["label"] = y
    if votes:
        h = np.array([rng.multinomial(20, 0.5 * pi + 0.5 / k) for pi in p])
        for j in range(k):
            df[f"h{j}"] = h[:, j]
    if weights:
        df["weight"] = rng.uniform(0.5, 2.0, n)  # non-integer weights
    return df


def binary_frame(n=200, seed=1):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, n)  # a top-1 confidence of a binary prediction is at least 0.5
    return pd.DataFrame({"conf": conf, "correct": (rng.uniform(size=n) < conf ** 2).astype(int)})


def read_json(out: Path) -> dict:
    return json.loads((out / "audit.json").read_text())


def frame(d: dict, key: str) -> pd.DataFrame:
    return pd.DataFrame(**d[key])


# ------------------------------------------------------------- the command

@pytest.fixture(scope="module")
def multiclass_run(tmp_path_factory):
    """One CLI run on a multi-class CSV with votes and weights, and the notebook run directly on it."""
    d = tmp_path_factory.mktemp("mc")
    path = d / "preds.csv"
    multiclass_frame().to_csv(path, index=False)
    proc = run_cli(path, "--out", d / "out", *FAST)
    return d, path, proc


@pytest.mark.xdist_group("audit_multiclass_run")  # one worker runs the command once (issue 31)
def test_multiclass_csv_with_votes_and_weights(multiclass_run):
    d, path, proc = multiclass_run
    assert proc.returncode == 0, proc.stderr
    out = d / "out"
    assert sorted(p.name for p in out.iterdir()) == ["audit.html", "audit.ipynb", "audit.json"]
    res = read_json(out)
    assert res["inputs"]["kind"] == "multiclass" and res["inputs"]["classes"] == 3
    assert res["inputs"]["roles"] == {"probs": "p0..p2", "label": "label", "votes": "h0..h2", "weight": "weight"}
    s = frame(res, "summary").set_index("key")
    every = ["accuracy", "ece_width", "ece_mass", "mce", "ice", "macro_ce", "r_o", "r_u", "hmr", "ks_top1",
             "kuiper", "brier_top1", "smooth_ece", "debiased_ece", "rms_ce", "selective_cov_acc_area",
             "selective_acc_10", "ks_top2", "ks_within_top2", "ks_classwise",
             "classwise_ece", "nbr", "human_accuracy", "dist_ce", "ent_ce", "rank_cs", "classwise_ece_human",
             "jiang_ce", "psi_mae", "psi_rr", "corp_mcb_brier", "corp_mcb_log", "ts_gain_log", "ts_gain_brier"]
    assert list(s.index) == every
    assert s["low"].notna().all() and (s["low"] <= s["high"]).all()
    assert s.loc["ece_width", "weighted"] and not s.loc["smooth_ece", "weighted"]
    # the weighted accuracy is the weighted share of correct top-1 predictions
    df = pd.read_csv(path)
    p = df[["p0", "p1", "p2"]].to_numpy()
    correct = p.argmax(1) == df["label"].to_numpy()
    assert s.loc["accuracy", "estimate"] == pytest.approx(np.average(correct, weights=df["weight"]))
    rec = frame(res, "recalibration")
    assert set(rec.method) == {"uncalibrated", "TS (NLL)", "TS (ECE)", "vector scaling", "spline", "isotonic",
                               "histogram binning"}
    # class-level metrics only for methods with class probabilities
    assert set(rec.loc[rec.key == "nbr", "method"]) == {"uncalibrated", "TS (NLL)", "TS (ECE)", "vector scaling"}
    assert len(frame(res, "picks")) == len(every)
    # the page: what was inferred, the summary, four figures (reliability, KS, rewards, human panels)
    page = (out / "audit.html").read_text()
    assert "inferred 'p' from its name" in page and "MacroCE" in page and "DistCE" in page
    assert page.count("<img") >= 4
    assert "cross-fitted" in page
    import re
    assert not [src for src in re.findall(r'<script[^>]*src="([^"]*)"', page) if "://" in src]  # offline


@pytest.mark.xdist_group("audit_multiclass_run")  # one worker runs the command once (issue 31)
def test_notebook_and_command_give_the_same_json(multiclass_run, tmp_path):
    from calibnb.apps.report import run_notebook

    d, path, proc = multiclass_run
    assert proc.returncode == 0, proc.stderr
    args = audit._parser().parse_args([str(path), *FAST])
    run = run_notebook(audit.NOTEBOOK, tmp_path / "nb.ipynb", parameters=audit.notebook_parameters(args),
                       results_path=tmp_path / "nb.json", cwd=audit.NOTEBOOK.parent)
    assert run.ok, run.error
    assert run.results == read_json(d / "out")


def test_binary_parquet_streamed(tmp_path):
    """A binary Parquet file, read in chunks (threshold lowered), and said so in the report."""
    path = tmp_path / "preds.parquet"
    binary_frame().to_parquet(path)
    proc = run_cli(path, "--out", tmp_path / "out", *NO_BOOTSTRAP, "--stream-threshold", "100", "--chunk-rows", "64",
                   "--subsample", "150")
    assert proc.returncode == 0, proc.stderr
    # the command checks the first rows only (the notebook streams and checks every chunk: read once)
    assert "large file: the first rows checked here" in proc.stderr
    res = read_json(tmp_path / "out")
    assert res["inputs"]["kind"] == "binary"
    assert res["settings"]["streamed"] and res["settings"]["recalibration_rows"] == 150
    page = (tmp_path / "out" / "audit.html").read_text()
    assert "read in chunks of 64 rows" in page and "seeded subsample of 150 of the 200 rows" in page
    keys = set(frame(res, "summary").key)
    assert "hmr" in keys and "nbr" not in keys and "dist_ce" not in keys
    assert set(frame(res, "recalibration").method) == {"uncalibrated", "TS (NLL)", "TS (ECE)", "Platt", "spline",
                                                       "isotonic", "histogram binning"}


def test_npz_logits(tmp_path):
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(150, 4)) * 3
    labels = np.where(rng.uniform(size=150) < 0.6, logits.argmax(1), rng.integers(0, 4, 150))
    path = tmp_path / "preds.npz"
    np.savez(path, logits=logits, labels=labels)
    proc = run_cli(path, "--out", tmp_path / "out", *NO_BOOTSTRAP)
    assert proc.returncode == 0, proc.stderr
    res = read_json(tmp_path / "out")
    assert res["inputs"]["roles"] == {"logits": "logits0..logits3", "label": "labels"}
    s = frame(res, "summary").set_index("key")
    probs = cn.softmax(logits)
    assert s.loc["nbr", "estimate"] == pytest.approx(cn.nbr(probs, labels))


# ----------------------------------------------------------------- bad input

def _bad(kind):
    df = multiclass_frame(votes=False, weights=False)
    if kind == "missing":
        return df.drop(columns="label"), "'label'", "missing"
    if kind == "nan":
        df.loc[7, "p1"] = np.nan
        return df, "'p1'", "first offending row 7"
    if kind == "outside":
        df.loc[3, "p0"] = 1.5
        return df, "'p0'", "first offending row 3"
    if kind == "sum":
        df.loc[5, "p2"] += 0.2
        df.loc[9, "p2"] += 0.2
        return df, "'p0..p2'", "in 2 of 240 rows; first offending row 5"
    if kind == "label":
        df.loc[11, "label"] = 3
        return df, "'label'", "first offending row 11"
    if kind == "single":
        df["label"] = 1
        return df, "'label'", "a single class present"
    if kind == "few":
        return df.iloc[:12], "too few rows", "12 rows"
    if kind == "text":
        df["p0"] = df["p0"].astype(object)
        df.loc[4, "p0"] = "high"
        return df, "'p0'", "first offending row 4"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["missing", "nan", "outside", "sum", "label", "single", "few", "text"])
def test_bad_input_exits_2_and_writes_nothing(kind, tmp_path):
    df, column, detail = _bad(kind)
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("previous report")
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli(path, "--out", out, *FAST)
    assert proc.returncode == 2, proc.stderr
    assert column in proc.stderr and detail in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no temporary folder left
    assert [p.name for p in out.iterdir()] == ["keep.txt"] and (out / "keep.txt").read_text() == "previous report"


def test_bad_binary_and_votes_messages():
    with pytest.raises(audit.AuditInputError, match=r"'correct': correctness not 0/1 in 1 of 200 rows; first offending row 0"):
        df = binary_frame()
        df.loc[0, "correct"] = 2
        audit.predictions_from_columns({c: df[c].to_numpy() for c in df})
    with pytest.raises(audit.AuditInputError, match="'correct': a single class present"):
        df = binary_frame()
        df["correct"] = 1
        audit.predictions_from_columns({c: df[c].to_numpy() for c in df})
    df = multiclass_frame(weights=False)
    df.loc[2, "h1"] = -1
    with pytest.raises(audit.AuditInputError, match="'h1': vote count not a non-negative integer.*row 2"):
        audit.predictions_from_columns({c: df[c].to_numpy() for c in df})
    df = multiclass_frame()
    df["prob0"] = df["p0"]
    df["prob1"] = df["p1"]
    with pytest.raises(audit.AuditInputError, match="ambiguous.*--prob-prefix"):
        audit.predictions_from_columns({c: df[c].to_numpy() for c in df})


# ------------------------------------------------------------- calibnb.summary

def _data(n=400, k=4, seed=3):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    p = cn.softmax(z)
    y = np.where(rng.uniform(size=n) < 0.6, p.argmax(1), rng.integers(0, k, n))
    h = np.array([rng.multinomial(10, 0.5 * pi + 0.5 / k) for pi in p])
    return z, p, y, h


def test_summary_equals_the_library_metrics():
    z, p, y, h = _data()
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    t = summary.metric_summary(conf, correct, probs=p, labels=y, votes=h, n_resamples=0).set_index("key")
    v = np.linspace(1.0, 0.0, 4)  # the default class values
    expected = {
        "ece_width": cn.ece(conf, correct, n_bins=15), "ece_mass": cn.ece(conf, correct, n_bins=15, binning="mass"),
        "mce": cn.mce(conf, correct, n_bins=15), "ice": cn.ice(conf, correct), "macro_ce": cn.macro_ce(conf, correct),
        "r_o": cn.rewards(conf, correct).r_o, "hmr": cn.hmr(conf, correct), "ks_top1": cn.ks_error(conf, correct),
        "brier_top1": cn.brier_top(conf, correct), "smooth_ece": cn.smooth_ece(conf, correct),
        "ks_top2": cn.ks_error(*cn.top_r(p, y, r=2)), "ks_classwise": cn.classwise_ks(p, y), "classwise_ece": cn.classwise_ece(p, y, n_bins=15),
        "nbr": cn.nbr(p, y), "dist_ce": cn.dist_ce(p, h).mean(), "ent_ce": np.abs(cn.ent_ce(p, h)).mean(),
        "rank_cs": cn.rank_cs(p, h), "classwise_ece_human": cn.classwise_ece(p, cn.majority_label(h), n_bins=15),
        "jiang_ce": cn.human_classwise_ce(p, h),
        "psi_mae": cn.scalar_mae(cn.expected_label(p, v), cn.expected_label(cn.human_distribution(h), v)),
        "psi_rr": cn.ranking_risk(cn.expected_label(p, v), cn.expected_label(cn.human_distribution(h), v)),
    }
    for key, value in expected.items():
        assert t.loc[key, "estimate"] == pytest.approx(value, abs=1e-12), key
    assert t["low"].isna().all()


def test_integer_weights_equal_repeated_rows_and_intervals_cover():
    z, p, y, h = _data(n=200)
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    w = np.random.default_rng(0).integers(1, 4, p.shape[0])
    rep = np.repeat(np.arange(p.shape[0]), w)
    keys = ["accuracy", "ece_width", "ice", "macro_ce", "hmr", "nbr", "classwise_ece", "ks_classwise", "dist_ce",
            "jiang_ce"]
    a = summary.metric_summary(conf, correct, probs=p, labels=y, votes=h, sample_weight=w, n_resamples=0,
                                    include=keys).set_index("key")["estimate"]
    b = summary.metric_summary(conf[rep], correct[rep], probs=p[rep], labels=y[rep], votes=h[rep],
                                    n_resamples=0, include=keys).set_index("key")["estimate"]
    pd.testing.assert_series_equal(a, b, atol=1e-12)
    t = summary.metric_summary(conf, correct, probs=p, labels=y, n_resamples=100, heavy_resamples=30, seed=1)
    t2 = summary.metric_summary(conf, correct, probs=p, labels=y, n_resamples=100, heavy_resamples=30, seed=1)
    pd.testing.assert_frame_equal(t, t2)  # seeded
    inside = (t.low <= t.estimate) & (t.estimate <= t.high)
    assert inside[t.key.isin(["accuracy", "hmr", "macro_ce", "nbr", "ks_top2"])].all()
    assert set(t.loc[t.key.isin(["smooth_ece", "ks_classwise"]), "resamples"]) == {30}


def test_cross_fit_never_sees_its_test_fold():
    """Each fold's outputs come from a clone fitted on the other folds: scikit-learn's KFold(shuffle, seed)."""
    from sklearn.model_selection import KFold

    z, p, y, h = _data(n=300)
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    r = summary.cross_fit("histogram binning", conf, correct, n_folds=3, seed=5)
    folds = list(KFold(3, shuffle=True, random_state=5).split(conf))
    assert sorted(np.concatenate([test for _, test in folds]).tolist()) == list(range(300))
    for train, test in folds:
        assert not np.isin(test, train).any()
        fitted = cn.HistogramBinning(n_bins=15).fit(conf[train], correct[train])
        np.testing.assert_array_equal(r.conf[test], fitted.transform(conf[test]))
    ts = summary.cross_fit("TS (NLL)", conf, correct, logits=z, labels=y, n_folds=3, seed=5)
    for train, test in folds:
        fitted = cn.TemperatureScaling(objective="nll").fit(z[train], y[train])
        np.testing.assert_allclose(ts.probs[test], fitted.transform(z[test]))
    np.testing.assert_array_equal(ts.correct, correct)  # temperature scaling keeps the predicted class
    # the same seed, the same folds; another seed, other folds (so other outputs)
    again = summary.cross_fit("histogram binning", conf, correct, n_folds=3, seed=5)
    np.testing.assert_array_equal(again.conf, r.conf)
    other = summary.cross_fit("histogram binning", conf, correct, n_folds=3, seed=6)
    assert not np.array_equal(other.conf, r.conf)
    # a Generator seed draws the folds from it (reproducible from the same state)
    g1 = summary.cross_fit("isotonic", conf, correct, n_folds=3, seed=np.random.default_rng(9))
    g2 = summary.cross_fit("isotonic", conf, correct, n_folds=3, seed=np.random.default_rng(9))
    np.testing.assert_array_equal(g1.conf, g2.conf)
    with pytest.raises(ValueError, match="'Platt' needs two classes"):
        summary.cross_fit("Platt", conf, correct, logits=z, labels=y, n_folds=3, seed=5)


def test_metric_picks_and_comparison():
    z, p, y, h = _data(n=300)
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    t = summary.recalibration_comparison(conf, correct, logits=z, labels=y, n_folds=3, n_resamples=0,
                                         methods=["uncalibrated", "TS (NLL)", "isotonic"])
    picks = summary.metric_picks(t).set_index("key")
    ece = t[t.key == "ece_width"].set_index("method")["estimate"]
    assert picks.loc["ece_width", "pick"] == ece.idxmin()
    hmr = t[t.key == "hmr"].set_index("method")["estimate"]
    assert picks.loc["hmr", "pick"] == hmr.idxmax()
    assert picks.loc["accuracy", "tied_with"] == "TS (NLL), isotonic"  # none changes the predicted class
    assert "nbr" in picks.index and set(t.loc[t.key == "nbr", "method"]) == {"uncalibrated", "TS (NLL)"}


def test_reliability_intervals_are_wilson():
    rng = np.random.default_rng(4)
    conf = rng.uniform(size=500)
    correct = rng.uniform(size=500) < conf
    t = summary.reliability_intervals(conf, correct, n_bins=5)
    for _, row in t.iterrows():
        ci = stats.binomtest(int(row["n_correct"]), int(row["count"])).proportion_ci(0.95, method="wilson")
        assert row["acc_low"] == pytest.approx(ci.low) and row["acc_high"] == pytest.approx(ci.high)


# ------------------------------------------------------------------ streaming

def test_streaming_equals_reading_whole(tmp_path):
    """Above the threshold the file is read in chunks: per-row metrics equal the whole-file ones."""
    df = multiclass_frame(n=600, k=4, seed=6)
    path = tmp_path / "big.csv"
    df.to_csv(path, index=False)
    params = {"predictions_path": str(path), "n_folds": 3, "subsample": 200, "chunk_rows": 128, "seed": 0}
    whole = audit.load_from_parameters(params)
    streamed = audit.load_from_parameters({**params, "stream_threshold": 100}, progress=False)
    assert whole.derived is None and streamed.derived is not None
    assert streamed.probs.shape == (200, 4) and streamed.n == 600
    np.testing.assert_array_equal(streamed.probs, whole.probs[streamed.subsample_index])
    kw = dict(n_bins=10, n_resamples=30, heavy_resamples=10, n_folds=3, seed=0, subsample=200)
    a = audit.run_audit(whole, **kw)["summary"].set_index("key")
    b = audit.run_audit(streamed, **kw)["summary"].set_index("key")
    per_row = ["accuracy", "ece_width", "hmr", "ks_top1", "ks_top2", "ks_within_top2", "nbr", "dist_ce", "ent_ce",
               "jiang_ce", "psi_mae", "psi_rr", "human_accuracy"]
    pd.testing.assert_frame_equal(a.loc[per_row, ["estimate", "low", "high"]], b.loc[per_row, ["estimate", "low", "high"]])
    assert (b.loc[per_row, "rows"] == 600).all() and (b.loc[["classwise_ece", "rank_cs"], "rows"] == 200).all()
    # the CalibrationStats accumulated chunk by chunk give the same top-1 metrics
    st = audit.run_audit(streamed, **kw)["streaming_stats"]
    assert st["rows"] == 600
    for key in ("ece_width", "mce", "ice", "macro_ce", "r_o", "r_u", "hmr", "brier_top1"):
        assert st[key] == pytest.approx(b.loc[key, "estimate"], abs=1e-12), key
    assert st["ks_top1_bounds"][0] <= b.loc["ks_top1", "estimate"] <= st["ks_top1_bounds"][1]
    # a bad value in a later chunk names its row in the whole file
    df.loc[300, "p2"] = np.nan
    df.to_csv(path, index=False)
    with pytest.raises(audit.AuditInputError, match=r"'p2'.*first offending row 300"):
        audit.load_from_parameters({**params, "stream_threshold": 100}, progress=False)
