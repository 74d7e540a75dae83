"""Issue 29's estimators in the metric registry (issue 25): Kuiper, CORP's MCB, the loss gain of temperature scaling.

Each is registered once, beside its function, and appears in ``metric_summary``, the audit's tables
(``audit.json``) and the scorers; not being mergeable, each is absent from the Dask list, which the
registry's ``not_mergeable`` says. The heavy ones (form ``"own"``) bring their own interval.
"""

from __future__ import annotations

import numpy as np
import pytest

import calibnb as cn
from calibnb.apps import summary
from calibnb.calibrators._base import scorer_metrics
from calibnb.metrics import registry
from calibnb.metrics.registry import Metric

NEW = ("kuiper", "corp_mcb_brier", "corp_mcb_log", "ts_gain_log", "ts_gain_brier")
OWN = ("corp_mcb_brier", "corp_mcb_log", "ts_gain_log", "ts_gain_brier")


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, n).round(3)
    return conf, rng.uniform(size=n) < conf - 0.15  # overconfident


def test_the_new_estimators_are_registered_beside_their_functions():
    m = {k: registry.get_metric(k) for k in NEW}
    assert m["kuiper"].fn is cn.kuiper_error and m["kuiper"].form == "binary"
    assert m["corp_mcb_brier"].fn is cn.corp_miscalibration and dict(m["corp_mcb_log"].options) == {"score": "log"}
    assert m["ts_gain_log"].fn is cn.calibration_loss_gain and dict(m["ts_gain_brier"].options) == {"loss": "brier"}
    assert all(m[k].form == "own" and callable(m[k].interval) for k in OWN)
    assert not any(m[k].higher_is_better for k in NEW)
    assert all(m[k].fn.__module__ in ("calibnb.corp", "calibnb.loss_gain", "calibnb.metrics.binary") for k in NEW)


def test_summary_rows_equal_the_functions_and_their_own_intervals():
    conf, correct = _data()
    t = cn.metric_summary(conf, correct, n_resamples=80, heavy_resamples=40, seed=3).set_index("key")
    assert set(NEW) <= set(t.index)
    assert t.loc["kuiper", "estimate"] == pytest.approx(cn.kuiper_error(conf, correct), abs=1e-15)
    assert t.loc["kuiper", "resamples"] == 80  # batch axis: the full row bootstrap
    for score in ("brier", "log"):
        row = t.loc[f"corp_mcb_{score}"]
        d = cn.score_decomposition(conf, correct, score=score, n_resamples=40, seed=3).mcb
        assert row["estimate"] == pytest.approx(cn.corp_miscalibration(conf, correct, score=score), abs=1e-15)
        assert (row["low"], row["high"], row["resamples"]) == (pytest.approx(d.low), pytest.approx(d.high), 40)
    g = cn.recalibration_gain(conf, correct, n_resamples=40, seed=3)
    for loss in ("log", "brier"):
        row = t.loc[f"ts_gain_{loss}"]
        ref = getattr(g, loss).gain
        assert (row["estimate"], row["low"], row["high"]) == (pytest.approx(ref.estimate), pytest.approx(ref.low),
                                                              pytest.approx(ref.high))
        assert row["estimate"] == pytest.approx(cn.calibration_loss_gain(conf, correct, loss=loss, seed=3))
        assert row["low"] > 0  # overconfident data: temperature scaling helps, and the interval says so


def test_own_intervals_take_the_weights():
    conf, correct = _data(400, seed=1)
    w = np.random.default_rng(2).integers(1, 4, conf.size).astype(float)
    t = cn.metric_summary(conf, correct, sample_weight=w, n_resamples=0, seed=0).set_index("key")
    rep = np.repeat(np.arange(conf.size), w.astype(int))
    assert t.loc["corp_mcb_brier", "estimate"] == pytest.approx(cn.corp_miscalibration(conf[rep], correct[rep]))
    assert t.loc["kuiper", "estimate"] == pytest.approx(cn.kuiper_error(conf[rep], correct[rep]))
    assert t.loc["ts_gain_log", "estimate"] == pytest.approx(
        cn.calibration_loss_gain(conf, correct, sample_weight=w, seed=0))
    assert t.loc[list(NEW), "weighted"].all()
    assert t.loc[list(OWN), "low"].isna().all()  # no resamples, no interval


def test_an_estimator_that_cannot_run_says_so_in_its_row():
    t = cn.metric_summary([0.6, 0.7, 0.8, 0.9], [1, 0, 1, 1], n_resamples=10, seed=0).set_index("key")
    row = t.loc["ts_gain_log"]
    assert np.isnan(row["estimate"]) and row["reading"].startswith("not computed: n_folds = 5 exceeds the 4 rows")
    assert np.isfinite(t.loc["corp_mcb_brier", "estimate"])  # PAV runs on four rows


def test_a_toy_own_metric_gets_the_summarys_arguments():
    calls = []

    def toy_interval(conf, correct, *, sample_weight=None, n_resamples, level, seed, cache, shift):
        calls.append((len(conf), sample_weight is not None, n_resamples, level, seed, type(cache)))
        return float(np.mean(conf)) + shift, 0.0, 1.0

    registry.register(Metric("toy_own", "toy own", "-", "mean confidence plus a shift",
                             lambda conf, correct, *, shift=0.0: float(np.mean(conf)) + shift, form="own",
                             interval=toy_interval, options=(("shift", 0.5),), not_mergeable="a toy"))
    try:
        conf, correct = _data(50)
        t = cn.metric_summary(conf, correct, n_resamples=30, heavy_resamples=7, level=0.9, seed=5,
                              sample_weight=np.ones(50)).set_index("key")
        assert calls == [(50, True, 7, 0.9, 5, dict)]
        assert t.loc["toy_own", "estimate"] == pytest.approx(conf.mean() + 0.5)
        assert (t.loc["toy_own", "low"], t.loc["toy_own", "high"]) == (0.0, 1.0)
        assert registry.not_mergeable()["toy_own"] == "a toy"
        assert scorer_metrics()["toy_own"][0](conf, correct) == pytest.approx(conf.mean() + 0.5)
    finally:
        registry.unregister("toy_own")


def test_the_registry_refuses_inconsistent_own_and_mergeable_declarations():
    with pytest.raises(ValueError, match="goes with form 'own'"):
        registry.register(Metric("x", "x", "-", "x", cn.ice, form="own"))
    with pytest.raises(ValueError, match="goes with form 'own'"):
        registry.register(Metric("x", "x", "-", "x", cn.ice, interval=lambda *a, **k: (0.0, None, None)))
    with pytest.raises(ValueError, match="not_mergeable must be empty"):
        registry.register(Metric("x", "x", "-", "x", cn.ice, streaming=lambda s: s.ice(), not_mergeable="why"))
    with pytest.raises(TypeError, match="interval must be callable"):
        registry.register(Metric("x", "x", "-", "x", cn.ice, form="own", interval="bootstrap"))
    assert "x" not in {m.key for m in registry.metrics()}


def test_not_mergeable_metrics_are_absent_from_the_dask_list_which_says_why():
    pytest.importorskip("dask")
    import calibnb.dask as cdask

    fns = cdask.metric_functions(n_bins=15)
    reasons = registry.not_mergeable()
    for key in NEW:
        assert key not in fns and len(reasons[key]) > 20, key
    # and no metric is both in the Dask list and declared not mergeable
    assert not set(fns) & set(reasons)


def test_the_audit_json_has_the_new_rows():
    from calibnb.apps import audit

    conf, correct = _data(300)
    pred = audit.Predictions(kind="binary", conf=conf, correct=correct.astype(int))
    result = audit.run_audit(pred, n_resamples=20, heavy_resamples=10, n_folds=3, seed=0)
    js = audit.audit_json(result)
    key = js["summary"]["columns"].index("key")
    est = js["summary"]["columns"].index("estimate")
    rows = {r[key]: r[est] for r in js["summary"]["data"]}
    assert set(NEW) <= set(rows)
    assert rows["kuiper"] == pytest.approx(cn.kuiper_error(conf, correct))
    assert rows["corp_mcb_brier"] == pytest.approx(cn.corp_miscalibration(conf, correct))
    rec = js["recalibration"]
    methods = {(r[rec["columns"].index("method")], r[rec["columns"].index("key")]) for r in rec["data"]}
    assert {("uncalibrated", k) for k in NEW} | {("isotonic", k) for k in NEW} <= methods


def test_scorers_are_keyed_by_registry_key_with_options_bound():
    known = scorer_metrics()
    binary = [m.key for m in registry.metrics() if m.inputs == "binary" and m.form != "mean"]
    assert set(binary) <= set(known)
    conf, correct = _data(300)
    iso = cn.IsotonicCalibrator().fit(conf, correct)
    c = iso.transform(conf)
    assert cn.calibration_scorer("ece_mass", n_bins=10)(iso, conf, correct) == pytest.approx(
        -cn.ece(c, correct, n_bins=10, binning="mass"))
    assert cn.calibration_scorer("ece", n_bins=10)(iso, conf, correct) == pytest.approx(-cn.ece(c, correct, n_bins=10))
    assert cn.calibration_scorer("r_o")(iso, conf, correct) == pytest.approx(cn.rewards(c, correct).r_o)
    assert cn.calibration_scorer("corp_mcb_log")(iso, conf, correct) == pytest.approx(
        -cn.corp_miscalibration(c, correct, score="log"))
    assert cn.calibration_scorer("ts_gain_brier", seed=0)(iso, conf, correct) == pytest.approx(
        -cn.calibration_loss_gain(c, correct, loss="brier", seed=0))
    with pytest.raises(TypeError, match="unknown option"):
        cn.calibration_scorer("ece_mass", binning="width")  # a declared option is part of the key


def _range_by_hand(conf, correct, ties):
    """max - min of C_0 = 0, C_1, ..., C_N, walked item by item (C_k kept only at a group's end for "group")."""
    order = sorted(range(len(conf)), key=lambda i: conf[i])  # Python's sort is stable
    c, values = 0.0, [0.0]
    for pos, i in enumerate(order):
        c += (float(correct[i]) - conf[i]) / len(conf)
        if ties == "order" or pos == len(order) - 1 or conf[order[pos + 1]] != conf[i]:
            values.append(c)
    return max(values) - min(values)


def test_kuiper_error_is_the_range_by_hand_and_between_ks_and_twice_ks():
    rng = np.random.default_rng(4)
    for _ in range(20):
        conf = rng.uniform(0.05, 0.95, 80).round(2)  # ties
        correct = rng.uniform(size=80) < conf + rng.normal(0, 0.2)
        sigma = np.sqrt(np.sum(conf * (1 - conf))) / conf.size
        for ties in ("order", "group"):
            k = cn.kuiper_error(conf, correct, ties=ties)
            assert k == pytest.approx(_range_by_hand(conf.tolist(), correct.tolist(), ties), abs=1e-12)
            assert k == pytest.approx(cn.kuiper_test(conf, correct, ties=ties).statistic * sigma, abs=1e-14)
            ks = cn.ks_error(conf, correct, ties=ties)
            assert ks - 1e-15 <= k <= 2 * ks + 1e-15


def test_kuiper_error_batch_axis_and_weights():
    rng = np.random.default_rng(5)
    conf = rng.uniform(size=(4, 50)).round(2)
    correct = rng.uniform(size=(4, 50)) < conf
    batch = cn.kuiper_error(conf, correct)
    assert batch.shape == (4,) and np.allclose(batch, [cn.kuiper_error(c, y) for c, y in zip(conf, correct)])
    w = rng.integers(0, 4, size=50)
    rep = np.repeat(np.arange(50), w)
    for ties in ("order", "group"):
        assert cn.kuiper_error(conf[0], correct[0], sample_weight=w, ties=ties) == pytest.approx(
            cn.kuiper_error(conf[0][rep], correct[0][rep], ties=ties), abs=1e-14)
    # "group" does not depend on the input order of tied confidences
    perm = rng.permutation(50)
    assert cn.kuiper_error(conf[0][perm], correct[0][perm], ties="group") == pytest.approx(
        cn.kuiper_error(conf[0], correct[0], ties="group"), abs=1e-14)


def test_the_new_functions_name_a_bad_argument():
    with pytest.raises(ValueError, match="conf must be 1-D"):
        cn.calibration_loss_gain(np.full((10, 3), 0.3), np.ones(10))
    with pytest.raises(ValueError, match="loss"):
        cn.calibration_loss_gain([0.2, 0.7], [0, 1], loss="hinge")
    with pytest.raises(ValueError, match="score"):
        cn.corp_miscalibration([0.2, 0.7], [0, 1], score="spherical")
    with pytest.raises(ValueError, match="ties"):
        cn.kuiper_error([0.2, 0.7], [0, 1], ties="random")


def test_summary_specs_carry_the_interval():
    spec = next(s for s in summary._specs(15) if s.key == "ts_gain_log")
    assert spec.kind == "own" and spec.interval is registry.get_metric("ts_gain_log").interval


def test_sibling_rows_share_one_computation(monkeypatch):
    """ts_gain_log/ts_gain_brier cross-fit once and corp_mcb_brier/corp_mcb_log resample once per summary call."""
    from calibnb import corp, loss_gain

    counts = {"gain": 0, "corp": 0}
    gain, decomp = loss_gain.recalibration_gain, corp._decompositions

    def counted_gain(*a, **k):
        counts["gain"] += 1
        return gain(*a, **k)

    def counted_decomp(*a, **k):
        counts["corp"] += 1
        return decomp(*a, **k)

    monkeypatch.setattr(loss_gain, "recalibration_gain", counted_gain)
    monkeypatch.setattr(corp, "_decompositions", counted_decomp)
    conf, correct = _data(300)
    t = cn.metric_summary(conf, correct, include=OWN, n_resamples=20, seed=1).set_index("key")
    assert counts == {"gain": 1, "corp": 1} and list(t.index) == list(OWN)
    # the shared resamples give what separate calls give
    for score in ("brier", "log"):
        d = cn.score_decomposition(conf, correct, score=score, n_resamples=20, seed=1).mcb
        assert (t.loc[f"corp_mcb_{score}", "low"], t.loc[f"corp_mcb_{score}", "high"]) == (d.low, d.high)


def test_every_conf_correct_metric_left_out_of_the_dask_list_says_why():
    pytest.importorskip("dask")
    import calibnb.dask as cdask

    fns = cdask.metric_functions(n_bins=15)
    left_out = {m.key for m in registry.metrics() if m.inputs == "binary" and m.form != "mean"} - set(fns)
    assert left_out == set(registry.not_mergeable())  # exactly those, each with its reason
    assert {"kuiper", "smooth_ece", "selective_acc_10"} <= left_out
