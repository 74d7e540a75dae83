"""Unit tests of calibnb.papers.si2022 (Si et al. 2022 helpers)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from calibnb.papers.si2022 import (
    SUMMARY_COLUMNS,
    calibration_summary,
    calibration_summary_table,
    expert_agreement,
    expert_features,
    normalize_answer,
    relative_reduction,
    resample_indices,
    trust_scores,
)


# ------------------------------------------------------------ resample_indices

@pytest.mark.parametrize("accuracy", [0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("n_pos,n_neg", [(30, 70), (90, 10), (5, 200)])
def test_resample_hits_target_accuracy_without_replacement(accuracy, n_pos, n_neg):
    correct = np.r_[np.ones(n_pos, bool), np.zeros(n_neg, bool)]
    np.random.default_rng(1).shuffle(correct)
    idx = resample_indices(correct, accuracy, seed=3)
    assert len(np.unique(idx)) == len(idx)  # no index twice
    n = len(idx)
    assert correct[idx].sum() == round(accuracy * n)
    # default size is the largest drawable one: one more item would need too many of a group
    limits = [x for x in (n_pos / accuracy if accuracy > 0 else None, n_neg / (1 - accuracy) if accuracy < 1 else None) if x]
    assert n == int(np.floor(min(limits) + 1e-9))


def test_resample_is_seeded_and_seed_matters():
    correct = np.arange(200) % 3 == 0
    a = resample_indices(correct, 0.5, seed=7)
    b = resample_indices(correct, 0.5, seed=7)
    c = resample_indices(correct, 0.5, seed=8)
    assert_allclose(a, b)
    assert not np.array_equal(a, c)
    # a Generator is accepted and advanced
    rng = np.random.default_rng(0)
    assert not np.array_equal(resample_indices(correct, 0.5, seed=rng), resample_indices(correct, 0.5, seed=rng))


def test_resample_explicit_n_and_errors():
    correct = np.r_[np.ones(10, bool), np.zeros(10, bool)]
    idx = resample_indices(correct, 0.3, n=10, seed=0)
    assert len(idx) == 10 and correct[idx].sum() == 3
    with pytest.raises(ValueError, match="needs 18 correct and 2 wrong"):
        resample_indices(correct, 0.9, n=20, seed=0)
    with pytest.raises(ValueError, match="accuracy must be <= 1"):
        resample_indices(correct, 1.5)
    with pytest.raises(ValueError, match="no sample with accuracy 1"):
        resample_indices(np.zeros(5), 1.0)
    with pytest.raises(ValueError, match="correct must hold only 0/1"):
        resample_indices([0, 2, 1], 0.5)
    with pytest.raises(TypeError, match="n must be an integer"):
        resample_indices(correct, 0.5, n=3.5)


# ------------------------------------------------------------ trust_scores

def test_trust_scores_against_sklearn():
    from sklearn.metrics import f1_score, precision_score, recall_score

    rng = np.random.default_rng(0)
    for threshold in (0.3, 0.5, 0.8):
        conf = rng.random(300)
        correct = rng.random(300) < conf
        s = trust_scores(conf, correct, threshold=threshold)
        pred = conf >= threshold
        assert_allclose(s.precision, precision_score(correct, pred))
        assert_allclose(s.recall, recall_score(correct, pred))
        assert_allclose(s.f1, f1_score(correct, pred))
        assert s.n_trusted == pred.sum()


def test_trust_scores_edge_cases():
    # threshold is inclusive
    assert trust_scores([0.5], [1]).n_trusted == 1
    # nobody trusted: precision, recall and F1 are 0 by convention
    assert trust_scores([0.1, 0.2], [1, 0]) == (0.0, 0.0, 0.0, 0)
    # binary confidences equal to correctness: perfect reader
    assert trust_scores([1, 0, 1], [1, 0, 1])[:3] == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="conf has 1 value outside"):
        trust_scores([0.2, 1.2], [0, 1])
    with pytest.raises(ValueError, match="threshold must be <= 1"):
        trust_scores([0.2], [0], threshold=2)


# ------------------------------------------------------------ summary / table

def _reference_summary(c, y, n_bins):
    y = y.astype(bool)
    edges = np.linspace(0, 1, n_bins + 1)
    ece_w = 0.0
    for m in range(n_bins):
        inb = (c > edges[m]) & (c <= edges[m + 1]) if m else (c >= 0) & (c <= edges[1])
        if inb.any():
            ece_w += inb.mean() * abs(y[inb].mean() - c[inb].mean())
    order = np.argsort(c, kind="stable")
    ece_m = sum(len(g) / len(c) * abs(y[g].mean() - c[g].mean()) for g in np.array_split(order, n_bins) if len(g))
    pos = (1 - c[y]).mean() if y.any() else 0.0
    neg = c[~y].mean() if (~y).any() else 0.0
    return dict(accuracy=y.mean(), ece_width=ece_w, ece_mass=ece_m, ice=np.abs(y - c).mean(),
                ice_pos=pos, ice_neg=neg, macro_ce=(pos + neg) / 2)


@pytest.mark.parametrize("n_bins", [1, 5, 10, 15])
@pytest.mark.parametrize("seed", [0, 1])
def test_calibration_summary_matches_definitions(n_bins, seed):
    rng = np.random.default_rng(seed)
    c = rng.random(500) ** 0.5
    y = rng.random(500) < c**2
    got = calibration_summary(c, y, n_bins=n_bins)
    assert tuple(got) == SUMMARY_COLUMNS
    ref = _reference_summary(c, y, n_bins)
    for k in SUMMARY_COLUMNS:
        assert_allclose(got[k], ref[k], atol=1e-12, err_msg=k)


def test_average_confidence_gives_macro_ce_one_half():
    # Si et al. Table 7: the average baseline has MacroCE = 50.00 exactly
    rng = np.random.default_rng(0)
    y = rng.random(321) < 0.37
    s = calibration_summary(np.full(321, 0.123), y)
    assert_allclose(s["macro_ce"], 0.5, atol=1e-15)


def test_calibration_summary_table_layout_and_percent():
    rng = np.random.default_rng(0)
    c = rng.random(50)
    y = rng.random(50) < c
    t = calibration_summary_table({("a", "raw"): (c, y), ("a", "flat"): (np.full(50, y.mean()), y)}, n_bins=5, percent=True)
    assert list(t.columns) == [*SUMMARY_COLUMNS, "n"]
    assert list(t.index.names) == ["source", "method"]
    assert_allclose(t.loc[("a", "raw"), "macro_ce"], 100 * calibration_summary(c, y, n_bins=5)["macro_ce"])
    assert_allclose(t.loc[("a", "flat"), "ece_width"], 0.0, atol=1e-12)
    t1 = calibration_summary_table({"only": (c, y)}, percent=False)
    assert t1.index.name == "row" and t1.loc["only", "n"] == 50
    assert_allclose(t1.loc["only", "ice"], np.abs(y - c).mean())
    # fractions by default, as everywhere in calibnb
    assert_allclose(calibration_summary_table({"only": (c, y)}).loc["only", "ice"], np.abs(y - c).mean())
    with pytest.raises(ValueError, match="non-empty mapping"):
        calibration_summary_table({})
    with pytest.raises(TypeError, match="must be a \\(conf, correct\\) pair"):
        calibration_summary_table({"x": c})


def test_relative_reduction():
    assert_allclose(relative_reduction(0.5, 0.1), 0.8)
    assert_allclose(relative_reduction([0.2, 0.4], [0.3, 0.4]), [-0.5, 0.0])
    with pytest.raises(ValueError, match="before has 1 value"):
        relative_reduction(0.0, 0.1)
    with pytest.raises(ValueError, match="shape"):
        relative_reduction([0.1, 0.2], [0.1])


# ------------------------------------------------------------ agreement features

def test_normalize_answer():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("An apple, a day") == "apple day"
    assert normalize_answer(12) == "12"


def test_expert_agreement_and_features():
    answers = [["Urge Overkill", "urge overkill", "Neil Diamond", "the Urge Overkill"],
               ["1988", "1986", "1986", "1986"]]
    conf = [[0.9, 0.8, 0.3, 0.6], [0.2, 0.7, 0.5, 0.4]]
    a = expert_agreement(answers, 0)
    assert a.tolist() == [[True, True, False, True], [True, False, False, False]]
    assert expert_agreement(answers, 2)[:, 2].all()
    f = expert_features(answers, conf, 0)
    assert f.shape == (2, 9)
    assert_allclose(f[:, 0], [0.9, 0.2])                       # own confidence
    assert_allclose(f[:, 1:4], [[0.8, 0.3, 0.6], [0.7, 0.5, 0.4]])  # others' confidences
    assert_allclose(f[:, 4:7], [[1, 0, 1], [0, 0, 0]])          # agreement bits
    assert_allclose(f[:, 7], [0.75, 0.25])                      # frequency k/E
    assert_allclose(f[:, 8], [(0.9 + 0.8 + 0.6) / 3, 0.2])      # mean confidence of agreeing experts


def test_expert_agreement_errors():
    with pytest.raises(ValueError, match="expert must be in \\[0, 2\\)"):
        expert_agreement([["a", "b"]], 2)
    with pytest.raises(ValueError, match="2-D"):
        expert_agreement(["a", "b"], 0)
    with pytest.raises(ValueError, match="at least 2 experts"):
        expert_agreement([["a"]], 0)
    with pytest.raises(ValueError, match="confidences has shape"):
        expert_features([["a", "b"]], [[0.1, 0.2, 0.3]], 0)
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        expert_features([["a", "b"]], [[0.1, 1.3]], 0)


# ------------------------------------------------------------ TS under re-sampling

def _toy_logits(n=4000, seed=0, scale=4.0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 5)) * scale
    p = np.exp(z / scale * 1.5)  # the true probabilities are flatter than the logits say: overconfident
    p /= p.sum(1, keepdims=True)
    labels = (rng.random((n, 1)) < np.cumsum(p, 1)).argmax(1)
    return z, labels


def test_top_confidence_forms():
    from calibnb.papers.si2022 import top_confidence

    z, labels = _toy_logits(50)
    c, y = top_confidence(z, labels, temperature=2.0)
    p = np.exp(z / 2.0)
    p /= p.sum(1, keepdims=True)
    assert_allclose(c, p.max(1))
    assert np.array_equal(y, z.argmax(1) == labels)
    c1, y1 = top_confidence([0.9, 0.2], [True, False], temperature=1.0)
    assert_allclose(c1, [0.9, 0.2])
    with pytest.raises(ValueError, match="temperature must be > 0"):
        top_confidence([0.5], [1], temperature=0)
    with pytest.raises(ValueError, match="labels has length 3 but scores has 50 rows"):
        top_confidence(z, labels[:3])


def test_resampling_table_levels_and_stages():
    from calibnb.papers.si2022 import resampling_table

    z, labels = _toy_logits()
    t = resampling_table(z[:2000], labels[:2000], z[2000:], labels[2000:], accuracies=[0.2, 0.5, 0.8], seed=0)
    assert list(t.stage) == ["before", "after TS"] * 3
    assert (t.n > 0).all()
    before = t[t.stage == "before"]
    assert_allclose(before.temperature, 1.0)
    # uncalibrated MacroCE is (nearly) unchanged by re-sampling, ECE is not
    assert before.macro_ce.max() - before.macro_ce.min() < 0.03
    assert before.ece.max() - before.ece.min() > 0.2
    # TS lowers the dev-tuned ECE at the balanced level on this overconfident toy model
    mid = t[t.accuracy == 0.5].set_index("stage")
    assert mid.loc["after TS", "ece"] < mid.loc["before", "ece"]
    # seeded
    t2 = resampling_table(z[:2000], labels[:2000], z[2000:], labels[2000:], accuracies=[0.2, 0.5, 0.8], seed=0)
    assert_allclose(t.macro_ce, t2.macro_ce)


def test_accuracy_shift_table():
    from calibnb.papers.si2022 import accuracy_shift_table

    z, labels = _toy_logits()
    t = accuracy_shift_table(z[:2000], labels[:2000], z[2000:], labels[2000:], dev_accuracy=0.9,
                             test_accuracy=0.1, seed=1)
    assert list(t.split) == ["dev", "test"]
    assert t.temperature.nunique() == 1
    assert_allclose(t.accuracy, [0.9, 0.1])
    dev, test = t.iloc[0], t.iloc[1]
    assert abs(test.ece - dev.ece) > 0.2          # ECE jumps with the accuracy
    assert abs(test.macro_ce - dev.macro_ce) < 0.05  # MacroCE does not


def test_resampling_explorer_update_redraws():
    import matplotlib

    matplotlib.use("Agg")
    from calibnb.papers.si2022 import resampling_explorer

    rng = np.random.default_rng(0)
    conf = rng.random(2000) * 0.5 + 0.5
    correct = rng.random(2000) < conf
    panel = resampling_explorer(conf, correct, seed=0, n_bins=10, accuracy=0.5)
    assert abs(panel.readout["value"]["accuracy"] - 0.5) < 0.01
    low = panel.update(accuracy=0.1)["value"]
    assert abs(low["accuracy"] - 0.1) < 0.01
    assert "0.10" in panel.axes[0].get_title()
    panel.controls["accuracy"].value = 0.9  # through the widget
    assert abs(panel.readout["value"]["accuracy"] - 0.9) < 0.01
    assert panel.readout["value"]["ece"] != low["ece"]


def _checkpoint_tables(seed, n=300, c=5):
    """Prediction tables where agreement with the final checkpoint tracks correctness."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, n)
    final = np.where(rng.random(n) < 0.5, truth, (truth + 1) % 4)
    correct = final == truth
    stable = rng.random((n, c - 1)) < np.where(correct, 0.85, 0.45)[:, None]
    table = np.where(stable, final[:, None], (final[:, None] + 1 + rng.integers(0, 3, (n, c - 1))) % 4)
    return np.column_stack([table, final]), correct


def test_conscal_threshold_data_matches_conscal():
    from calibnb import ConsCal, ece, macro_ce
    from calibnb.papers.si2022 import conscal_threshold_data

    p_dev, y_dev = _checkpoint_tables(0)
    p_test, y_test = _checkpoint_tables(1)
    df = conscal_threshold_data(p_dev, y_dev, p_test, y_test, n_bins=10)
    assert len(df) == 2 * 6 and df["tuned"].sum() == 2
    tuned = ConsCal(mode="binary").fit(p_dev, y_dev).threshold_
    assert (df.loc[df["tuned"], "n"] == tuned).all()
    for n in range(6):
        c_test = ConsCal(mode="binary", threshold=n).fit(p_dev, y_dev).transform(p_test)
        row = df[(df.split == "test") & (df.n == n)].iloc[0]
        assert row["macro_ce"] == pytest.approx(macro_ce(c_test, y_test))
        assert row["ece"] == pytest.approx(ece(c_test, y_test, n_bins=10))
        assert row["confident_share"] == pytest.approx(c_test.mean())
        if c_test.any():
            assert row["confident_accuracy"] == pytest.approx(y_test[c_test == 1].mean())
        else:
            assert np.isnan(row["confident_accuracy"])
    # n = C: nothing is confident; the tuned n minimises dev MacroCE
    assert df[(df.split == "dev") & (df.n == 5)]["confident_share"].item() == 0.0
    dev = df[df.split == "dev"]
    assert dev.loc[dev["tuned"], "macro_ce"].item() == dev["macro_ce"].min()
    with pytest.raises(ValueError, match="test_correct"):
        conscal_threshold_data(p_dev, y_dev, p_test, y_test[:-1])


def test_conscal_explorer_slider_sets_readout():
    import matplotlib

    matplotlib.use("Agg")
    from calibnb import ConsCal, macro_ce
    from calibnb.papers.si2022 import conscal_explorer, conscal_threshold_data

    p_dev, y_dev = _checkpoint_tables(0)
    p_test, y_test = _checkpoint_tables(1)
    panel = conscal_explorer(conscal_threshold_data(p_dev, y_dev, p_test, y_test))
    tuned = ConsCal(mode="binary").fit(p_dev, y_dev).threshold_
    slider = panel.controls["n"]
    assert slider.value == tuned and (panel.readout["n"] == tuned).all() and (panel.readout["tuned_n"] == tuned).all()
    ax = panel.axes[0]
    assert "(tuned)" in ax.get_title()
    other = 0 if tuned != 0 else 3
    slider.value = other  # through the widget, as a user would
    r = panel.readout
    assert (r["n"] == other).all() and (r["tuned_n"] == tuned).all()
    for split, (p, y) in {"dev": (p_dev, y_dev), "test": (p_test, y_test)}.items():
        c = ConsCal(mode="binary", threshold=other).fit(p_dev, y_dev).transform(p)
        assert r.loc[split, "macro_ce"] == pytest.approx(macro_ce(c, y))
        assert r.loc[split, "confident_accuracy"] == pytest.approx(y[c == 1].mean())
    assert "(tuned)" not in ax.get_title() and f"n = {other}" in ax.get_title()
    # the tuned n stays marked in the figure whatever the slider says
    labels = [line.get_label() for line in ax.get_lines()]
    assert f"tuned on dev: n = {tuned}" in labels and f"slider: n = {other}" in labels
    with pytest.raises(ValueError, match="n must be in"):
        panel.update(n=99)
    with pytest.raises(TypeError, match="table must be the DataFrame"):
        conscal_explorer(p_dev)


def test_resampling_table_draws_fresh_wrong_predictions_and_flags_bounds():
    from calibnb.papers import si2022
    from calibnb.papers.si2022 import TAU_BOUNDS, resampling_table, tau_on_bound

    z, labels = _toy_logits()
    t = resampling_table(z[:2000], labels[:2000], z[2000:], labels[2000:], accuracies=[0.2, 0.5, 0.8], seed=0)
    assert t.n.nunique() == 1  # one sample size at every level
    assert "tau_on_bound" in t and not t.tau_on_bound[t.stage == "before"].any()
    # with sample_fraction < 1 the wrong predictions drawn at two levels are different subsets
    drawn = []
    orig = si2022.resample_indices

    def spy(correct, accuracy, **kw):
        idx = orig(correct, accuracy, **kw)
        drawn.append(set(idx[~np.asarray(correct, bool)[idx]].tolist()))
        return idx

    si2022.resample_indices = spy
    try:
        resampling_table(z[:2000], labels[:2000], z[2000:], labels[2000:], accuracies=[0.2, 0.8], seed=0)
    finally:
        si2022.resample_indices = orig
    test_wrong_02, test_wrong_08 = drawn[1], drawn[3]
    small, large = sorted((test_wrong_02, test_wrong_08), key=len)
    assert not small <= large  # not one group re-used whole
    assert tau_on_bound(TAU_BOUNDS[1]) and tau_on_bound(TAU_BOUNDS[0]) and not tau_on_bound(1.0)
    with pytest.raises(ValueError, match="sample_fraction"):
        resampling_table(z[:2000], labels[:2000], z[2000:], labels[2000:], sample_fraction=0.0)


def test_resampling_table_returns_the_samples_it_scored():
    from calibnb.metrics import macro_ce
    from calibnb.papers.si2022 import resampling_table, top_confidence

    z, labels = _toy_logits()
    t, samples = resampling_table(z[:2000], labels[:2000], z[2000:], labels[2000:], accuracies=[0.2, 0.8], seed=0,
                                  return_samples=True)
    assert sorted(samples) == [0.2, 0.8]
    for a, (s, l) in samples.items():
        c, y = top_confidence(s, l)
        assert abs(y.mean() - a) < 0.01
        row = t[(t.accuracy == a) & (t.stage == "before")].iloc[0]
        assert abs(row.macro_ce - macro_ce(c, y)) < 1e-12 and row.n == len(y)


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

from calibnb.papers import si2022  # noqa: E402


@pytest.mark.parametrize("bad", [3, -1, 1.5, np.nan, 2**40, "a"])
def test_top_confidence_validates_labels(bad):
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    labels = np.array([0, 1, 2], dtype=object if isinstance(bad, str) else float)
    labels[0] = bad
    with pytest.raises((ValueError, TypeError), match="labels"):
        si2022.top_confidence(np.log(p), labels)


def test_trust_table_rows_and_rank_agreement_against_direct_computations():
    from scipy import stats

    from calibnb.metrics import ece, macro_ce

    rng = np.random.default_rng(5)
    methods = {}
    for name, shift in (("sharp", 0.3), ("flat", 0.0), ("under", -0.2)):
        correct = rng.random(300) < 0.6
        conf = np.clip(0.6 + shift * (correct - 0.5) + rng.normal(0, 0.1, 300), 0, 1)
        methods[name] = (conf, correct)
    table, rho = si2022.trust_table(methods, n_bins=15, threshold=0.6)
    assert list(table.index) == ["sharp", "flat", "under"]
    for name, (c, y) in methods.items():
        t = si2022.trust_scores(c, y, threshold=0.6)
        assert table.loc[name, "ECE"] == pytest.approx(100 * ece(c, y, n_bins=15))
        assert table.loc[name, "MacroCE"] == pytest.approx(100 * macro_ce(c, y))
        assert (table.loc[name, "precision"], table.loc[name, "recall"], table.loc[name, "F1"]) == (t.precision, t.recall, t.f1)
    for m in ("ECE", "MacroCE"):
        assert rho[m] == pytest.approx(stats.spearmanr(-table[m], table["F1"]).statistic)
    # a constant column: Spearman is undefined, and says so with NaN (not a number that looks like an answer)
    same = {k: methods["flat"] for k in ("a", "b", "c")}
    assert all(np.isnan(v) for v in si2022.trust_table(same)[1].values())
    with pytest.raises(TypeError, match="two or more"):
        si2022.trust_table({"only": methods["flat"]})
    with pytest.raises(ValueError, match=r"methods\['flat'\] correct"):
        si2022.trust_table({"sharp": methods["sharp"], "flat": (methods["flat"][0], methods["flat"][1][:-1])})


# ---- notebook 01's helpers, moved into si2022 (issue 25, item 8)

import pandas as pd  # noqa: E402
from scipy import stats as _stats  # noqa: E402

import calibnb as _cb  # noqa: E402
from calibnb.data import calibration_test_split as _split  # noqa: E402


@pytest.mark.parametrize("one_d", [False, True])
def test_ts_rows_fits_tau_on_dev_ece_and_scores_the_test_split(one_d):
    rng = np.random.default_rng(0)
    z = 3 * rng.normal(size=(300, 4))
    lab = np.argmax(z + 3 * rng.normal(size=z.shape), axis=1)   # informative but overconfident logits
    scores, labels = (si2022.top_confidence(z, lab) if one_d else (z, lab))
    rows, tau = si2022.ts_rows("m", scores, labels, split_seed=5, frac=0.4, n_bins=12)
    dev, test = _split(300, seed=5, frac=0.4)
    ts = _cb.TemperatureScaling(objective="ece", n_bins=12).fit(scores[dev], labels[dev])
    assert tau == ts.temperature_
    for key, t in ((("m", "raw"), 1.0), (("m", "TS"), tau)):
        c, y = si2022.top_confidence(scores[test], labels[test], temperature=t)
        np.testing.assert_array_equal(rows[key][0], c)
        np.testing.assert_array_equal(rows[key][1], y)
    with pytest.raises(ValueError, match="labels"):
        si2022.ts_rows("m", z, lab[:-1], split_seed=0)
    with pytest.raises(TypeError, match="name must be a str"):
        si2022.ts_rows(3, z, lab, split_seed=0)


def test_ts_margin_and_relative_cut_are_relative_reductions():
    rng = np.random.default_rng(1)
    c0, y = rng.uniform(0.6, 1.0, 200), rng.random(200) < 0.6
    c1 = np.clip(c0 - 0.2, 0, 1)
    table = si2022.calibration_summary_table({("s", "raw"): (c0, y), ("s", "TS"): (c1, y)}, n_bins=10, percent=True)
    e0, e1 = _cb.ece(c0, y, n_bins=10), _cb.ece(c1, y, n_bins=10)
    m0, m1 = _cb.macro_ce(c0, y), _cb.macro_ce(c1, y)
    expected = (e0 - e1) / e0 - (m0 - m1) / m0
    assert si2022.ts_margin(table, "s") == pytest.approx(expected, abs=1e-12)
    cut = si2022.relative_cut(_cb.macro_ce)
    assert cut(c0, c1, y) == pytest.approx((m0 - m1) / m0, abs=1e-15)
    with pytest.raises(ValueError, match="no row"):
        si2022.ts_margin(table, "other")
    with pytest.raises(ValueError, match="no column"):
        si2022.ts_margin(table.drop(columns="macro_ce"), "s")
    with pytest.raises(TypeError, match="metric must be a callable"):
        si2022.relative_cut("ece")


def test_relative_cut_of_a_batched_metric_bootstraps_in_batches_to_the_same_interval():
    """A batch-axis metric's cut is batch-axis too: bootstrap_ci draws the same resamples, one call per batch."""
    from calibnb.metrics.batch import BATCH_ATTR

    rng = np.random.default_rng(3)
    c0, y = rng.uniform(0.5, 1.0, 300), rng.random(300) < 0.7
    c1 = np.clip(c0 - 0.15, 0, 1)
    ece15 = _cb.batch_axis(lambda c, t: _cb.ece(c, t, n_bins=15))
    for metric in (_cb.macro_ce, _cb.ice, ece15):
        cut = si2022.relative_cut(metric)
        assert getattr(cut, BATCH_ATTR, False)
        batched = _cb.bootstrap_ci(cut, c0, c1, y, n_resamples=300, seed=4)
        looped = _cb.bootstrap_ci(cut, c0, c1, y, n_resamples=300, seed=4, vectorized=False)
        assert batched == looped  # the same numbers, bit for bit
        rows = np.stack([c0, c0[::-1]]), np.stack([c1, c1[::-1]]), np.stack([y, y[::-1]])
        assert cut(*rows).tolist() == [cut(rows[0][s], rows[1][s], rows[2][s]) for s in range(2)]
    assert not getattr(si2022.relative_cut(lambda c, t: float(np.mean(c))), BATCH_ATTR, False)


def test_split_spread_summarises_the_splits():
    v = np.arange(1, 11) / 10
    s = si2022.split_spread(v, target=(0.25, 0.55))
    assert s == {"n_splits": 10, "median": float(np.median(v)), "q10": float(np.quantile(v, 0.1)),
                 "q90": float(np.quantile(v, 0.9)), "share_holding": 0.3}
    assert si2022.split_spread(v, target=(0.3, 0.3))["share_holding"] == 0.1   # closed range
    with pytest.raises(ValueError, match="low <= high"):
        si2022.split_spread(v, target=(0.5, 0.1))
    with pytest.raises(ValueError, match="values"):
        si2022.split_spread([0.1, np.nan], target=(0, 1))


def test_macro_ce_se_against_a_simulation():
    rng = np.random.default_rng(2)
    conf, correct = rng.uniform(0.2, 1.0, 400), rng.random(400) < 0.55
    pos, neg = 1 - conf[correct], conf[~correct]
    by_hand = 0.5 * np.sqrt(np.var(pos, ddof=1) / len(pos) + np.var(neg, ddof=1) / len(neg))
    assert si2022.macro_ce_se(conf, correct) == pytest.approx(by_hand, rel=1e-12)
    # the standard error is the spread of MacroCE over fresh draws of the two groups
    draws = [_cb.macro_ce(np.r_[rng.choice(conf[correct], len(pos)), rng.choice(conf[~correct], len(neg))],
                          np.r_[np.ones(len(pos), bool), np.zeros(len(neg), bool)]) for _ in range(2000)]
    assert np.std(draws) == pytest.approx(by_hand, rel=0.1)
    with pytest.raises(ValueError, match="at least two correct and two wrong"):
        si2022.macro_ce_se([0.9, 0.8, 0.2], [1, 1, 0])


def test_rho_gap_is_the_difference_of_the_two_spearman_agreements():
    rng = np.random.default_rng(3)
    y = rng.random(150) < 0.6
    methods = [np.clip(np.where(y, 0.8, 0.3) + rng.normal(0, s, 150), 0, 1) for s in (0.05, 0.2, 0.4)]
    methods.append(np.full(150, y.mean()))
    arrays = [a for c in methods for a in (c, y)]
    f1 = [si2022.trust_scores(c, y).f1 for c in methods]
    rho_m = _stats.spearmanr([-_cb.macro_ce(c, y) for c in methods], f1).statistic
    rho_e = _stats.spearmanr([-_cb.ece(c, y, n_bins=15) for c in methods], f1).statistic
    assert si2022.rho_gap(*arrays, n_bins=15) == pytest.approx(rho_m - rho_e, abs=1e-12)
    with pytest.raises(ValueError, match="at least two methods"):
        si2022.rho_gap(methods[0], y)
    with pytest.raises(ValueError, match=r"arrays\[2\]"):
        si2022.rho_gap(methods[0], y, methods[1] + 2, y)


@pytest.mark.filterwarnings("ignore:An input array is constant")
def test_rho_gap_on_resample_rows_equals_each_row_and_bootstraps_to_the_same_interval():
    """rho_gap is marked batch_axis (issue 31): on (S, N) rows it must give the 1-D value of every row, bit for bit,
    including rows where F1 or a metric is constant across the methods (Spearman undefined, counted 0), a method
    that trusts nothing (F1 0) and rows with no correct answer."""
    rng = np.random.default_rng(5)
    n, s_rows = 120, 60
    y = rng.random((s_rows, n)) < 0.55
    y[3] = False                        # no correct answer: recall 0 for every method
    methods = [np.clip(np.where(y, 0.8, 0.3) + rng.normal(0, sd, (s_rows, n)), 0, 1) for sd in (0.05, 0.2, 0.45)]
    methods.append(np.full((s_rows, n), 0.2))  # trusts nothing: F1 0
    methods[0][7] = methods[1][7]              # two methods tie on one row
    for m in methods:
        m[11] = 0.9                            # every method the same on one row: constant F1 and metrics
    methods[2][5, :40] = 0.5                   # confidences at the trust threshold (trusted: c >= 0.5)
    arrays = [a for c in methods for a in (c, y)]
    got = si2022.rho_gap(*arrays, n_bins=15)
    want = np.array([si2022.rho_gap(*[a[r] for a in arrays], n_bins=15) for r in range(s_rows)])
    assert got.shape == (s_rows,) and got.tobytes() == want.tobytes()
    assert want[11] == 0.0  # both correlations undefined, each counted 0
    # the per-row F1 is trust_scores' float, threshold ties included
    f1_rows = si2022._trust_f1_rows(methods[2], y)
    assert f1_rows.tobytes() == np.array([si2022.trust_scores(methods[2][r], y[r]).f1 for r in range(s_rows)]).tobytes()
    # through the bootstrap: the batched path and the row-by-row one give the same interval
    flat = [a[0] for a in arrays]
    batched = _cb.bootstrap_ci(si2022.rho_gap, *flat, n_resamples=200, seed=4, n_bins=15)
    one_by_one = _cb.bootstrap_ci(lambda *a, n_bins: si2022.rho_gap(*a, n_bins=n_bins), *flat, n_resamples=200,
                                  seed=4, n_bins=15)
    assert tuple(batched) == tuple(one_by_one)
    with pytest.raises(ValueError, match=r"all 2-D of one shape"):
        si2022.rho_gap(methods[0], y, methods[1][:, :50], y[:, :50])


def test_table7_methods_are_the_calibrators_on_the_last_checkpoint():
    dyn = si2022.training_dynamics(n_checkpoints=3, n_seeds=3, epochs_per_checkpoint=1, seed=0)
    dyn_ls = si2022.training_dynamics(n_checkpoints=3, n_seeds=3, epochs_per_checkpoint=1, seed=0, label_smoothing=0.1)
    m = si2022.table7_methods(dyn, dyn_ls, n_bins=10)
    assert list(m) == ["No calibration", "Temperature scaling", "Label smoothing", "Label smoothing + TS",
                       "Binary baseline", "Average baseline", "ConsCal (binary)", "ConsCal (frequency)",
                       "ConsCal (classifier)", "ConsCal w/o TD (binary)", "ConsCal w/o TD (frequency)"]
    z_dev, z_test = dyn.checkpoint_logits["dev"][-1], dyn.checkpoint_logits["test"][-1]
    raw = si2022.top_confidence(z_test, dyn.labels["test"])
    tau = _cb.TemperatureScaling(objective="ece", n_bins=10).fit(z_dev, dyn.labels["dev"]).temperature_
    for name, (c, y) in m.items():
        assert c.shape == y.shape == (len(dyn.labels["test"]),)
        if "w/o TD" not in name and "Label smoothing" not in name:
            np.testing.assert_array_equal(y, raw[1])   # one network's last checkpoint: its own correctness
    np.testing.assert_array_equal(m["No calibration"][0], raw[0])
    np.testing.assert_array_equal(m["Temperature scaling"][0],
                                  si2022.top_confidence(z_test, dyn.labels["test"], temperature=tau)[0])
    dev_acc = si2022.top_confidence(z_dev, dyn.labels["dev"])[1].mean()
    np.testing.assert_allclose(m["Average baseline"][0], dev_acc)   # every prediction gets the dev accuracy
    assert set(np.unique(m["ConsCal (binary)"][0])) <= {0.0, 1.0}
    with pytest.raises(TypeError, match="dyn_ls must be a TrainingDynamics"):
        si2022.table7_methods(dyn, {"dev": None})


def test_resample_source_is_tables_5_and_6_of_the_split_and_the_largest_se():
    rng = np.random.default_rng(4)
    z = 3 * rng.normal(size=(800, 3))
    lab = np.argmax(z + 3 * rng.normal(size=z.shape), axis=1)
    t5, t6, se, samples = si2022.resample_source("s", z, lab, accuracies=(0.3, 0.7), split_seed=2, seed=9,
                                                 frac=0.5, n_bins=10)
    dev, test = _split(800, seed=2, frac=0.5)
    ref5, ref_samples = si2022.resampling_table(z[dev], lab[dev], z[test], lab[test], accuracies=(0.3, 0.7), seed=9,
                                                n_bins=10, return_samples=True)
    pd.testing.assert_frame_equal(t5.drop(columns="source"), ref5)
    ref6 = si2022.accuracy_shift_table(z[dev], lab[dev], z[test], lab[test], dev_accuracy=0.7, test_accuracy=0.3,
                                       seed=9, n_bins=10)
    first = t6[t6.setting == "dev 70% → test 30%"].drop(columns=["setting", "source"])
    pd.testing.assert_frame_equal(first, ref6)
    assert set(t5.source) == set(t6.source) == {"s"} and len(samples) == len(ref_samples)
    c, y = si2022.top_confidence(z[test], lab[test])
    ses = [si2022.macro_ce_se(c[i], y[i]) for i in (si2022.resample_indices(y, a, n=int(ref5.n.iloc[0]), seed=9)
                                                      for a in (0.3, 0.7))]
    assert se == max(ses)
    with pytest.raises(ValueError, match="at least two levels"):
        si2022.resample_source("s", z, lab, accuracies=(0.5,), split_seed=0, seed=0)


# ------------------------------------------------ nll_temperatures / temperature_fall_ci (Table 5, issue 26)

def _tau_data(n=240, k=4, scale=2.5, seed=0):
    from calibnb import softmax

    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 3.0
    labels = (rng.random((n, 1)) < np.cumsum(softmax(z), axis=1)).argmax(axis=1)
    return scale * z, labels


@pytest.mark.parametrize("binary", [False, True])
def test_nll_temperatures_equal_the_scalar_fit_on_each_replicate(binary):
    """Each row of the vectorised fit equals TemperatureScaling('nll') on the items repeated by that row's weights."""
    import warnings

    from calibnb import TemperatureScaling, softmax
    from calibnb.papers.si2022 import TAU_BOUNDS, nll_temperatures
    from calibnb.uncertainty import bootstrap_weights

    z, labels = _tau_data()
    if binary:
        p = softmax(z)
        scores, lab = p.max(axis=1), p.argmax(axis=1) == labels
    else:
        scores, lab = z, labels
    w = np.concatenate(list(bootstrap_weights(len(lab), 6, seed=1)))
    ours = nll_temperatures(scores, lab, weights=w)
    assert ours.shape == (6,) and len(np.unique(ours.round(8))) > 1     # the replicates differ
    for row, tau in zip(w.astype(int), ours):
        idx = np.repeat(np.arange(len(lab)), row)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = TemperatureScaling(objective="nll", bounds=TAU_BOUNDS, tol=1e-9).fit(scores[idx], lab[idx])
        assert tau == pytest.approx(ref.temperature_, rel=1e-6)
    # no weights: one fit with weight 1 on every item; a constant weight does not move it
    one = nll_temperatures(scores, lab)
    assert one.shape == (1,)
    assert nll_temperatures(scores, lab, weights=np.full(len(lab), 3.0))[0] == pytest.approx(one[0], rel=1e-9)


def test_nll_temperatures_recover_a_known_scale_and_stop_at_the_bounds():
    from calibnb.papers.si2022 import nll_temperatures

    z, labels = _tau_data(n=4000, scale=1.0)
    assert nll_temperatures(3.0 * z, labels)[0] == pytest.approx(3.0, rel=0.1)
    # labels the logits cannot explain (always the least likely class): the minimiser is beyond the upper bound
    worst = np.argmin(z, axis=1)
    assert nll_temperatures(z, worst, bounds=(0.5, 20.0))[0] == 20.0
    # labels always the arg max: sharpening without end, the lower bound
    assert nll_temperatures(z, np.argmax(z, axis=1), bounds=(0.5, 20.0))[0] == 0.5


def test_nll_temperatures_refuse_bad_weights_and_bounds():
    from calibnb.papers.si2022 import nll_temperatures

    z, labels = _tau_data(n=20)
    with pytest.raises(ValueError, match="weights must have shape"):
        nll_temperatures(z, labels, weights=np.ones((2, 19)))
    with pytest.raises(ValueError, match="weights must be finite and non-negative"):
        nll_temperatures(z, labels, weights=-np.ones(20))
    with pytest.raises(ValueError, match="weights has a row summing to 0"):
        nll_temperatures(z, labels, weights=np.zeros((1, 20)))
    with pytest.raises(ValueError, match="bounds"):
        nll_temperatures(z, labels, bounds=(2.0, 1.0))
    with pytest.raises(ValueError, match="scores must be finite"):
        nll_temperatures(np.where(z > 0, -np.inf, z), labels)


def test_temperature_fall_ci_signs_the_fall_and_can_fail():
    from calibnb.papers.si2022 import nll_temperatures, temperature_fall_ci

    z, labels = _tau_data(n=300, scale=1.0)
    falls = temperature_fall_ci({0.1: (4 * z, labels), 0.5: (2 * z, labels), 0.9: (z, labels)}, n_resamples=300, seed=0)
    taus = [nll_temperatures(s * z, labels)[0] for s in (4, 2, 1)]
    assert falls.estimate == pytest.approx(min(np.log(taus[0] / taus[1]), np.log(taus[1] / taus[2])))
    assert 0 < falls.low <= falls.estimate <= falls.high
    # the temperature rising with accuracy gives the opposite sign: the direction rule can reject the claim
    rises = temperature_fall_ci({0.1: (z, labels), 0.9: (4 * z, labels)}, n_resamples=300, seed=0)
    assert rises.high < 0
    # the same seed gives the same interval; the order of the mapping does not matter
    again = temperature_fall_ci({0.9: (z, labels), 0.5: (2 * z, labels), 0.1: (4 * z, labels)}, n_resamples=300, seed=0)
    assert again.estimate == pytest.approx(falls.estimate)
    with pytest.raises(ValueError, match="at least two accuracy levels"):
        temperature_fall_ci({0.1: (z, labels)})
