"""Sakai 2024's worked numbers, each taken from the paper's text and tables."""

import numpy as np
import pytest

import calibnb as cb
from calibnb.papers.sakai2024 import (load_sakai_example, perturb_confidence, random_axiom_systems,
                                      sakai_examples_path)


def _top(example, name):
    return load_sakai_example(example).top(name)


@pytest.mark.parametrize("number, num, den", [(1, 7, 9), (2, 5, 9), (3, 1, 3)])
def test_stated_accuracy_is_recomputed(number, num, den):
    ex = load_sakai_example(number)
    assert ex.stated_accuracy == (num, den)
    for name in "XYZW":
        _, correct = ex.top(name)
        assert int(correct.sum()) == num and correct.shape[0] == den


def test_example_files_found_from_the_package():
    assert sakai_examples_path().is_file()


def test_example1_tables_match_the_described_perturbations():
    ex = load_sakai_example(1)
    x, y, z, w = (ex.top(n)[0] for n in "XYZW")
    np.testing.assert_allclose(x, [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8])
    np.testing.assert_allclose(y[6], 0.7)  # Y lowers instance 7
    np.testing.assert_allclose(z[2], 0.6)  # Z raises instance 3
    np.testing.assert_allclose(w[[2, 6]], [0.6, 0.7])
    # the other classes as printed in Table 1
    np.testing.assert_allclose(ex.probs("Y")[6], [0.7, 0.2, 0.1])
    np.testing.assert_allclose(ex.probs("Z")[2], [0.6, 0.1, 0.3])
    np.testing.assert_allclose(ex.labels, np.array([1, 1, 3, 3, 2, 1, 1, 3, 1]) - 1)


# Example 1 (Section 4.1): 3 equal-mass bins for ECE and MCE.
EXAMPLE1 = [
    ("hmr", "X", 0.557), ("hmr", "W", 0.485),
    ("r_o", "X", 0.500), ("r_u", "X", 0.629),
    ("r_o", "W", 0.400), ("r_u", "W", 0.614),
    ("ece", "X", 0.178), ("ece", "Z", 0.156),
    ("mce", "X", 0.267), ("mce", "Z", 0.200),
]


def _measure(metric, conf, correct):
    if metric == "hmr":
        return cb.hmr(conf, correct)
    if metric == "r_o":
        return cb.rewards(conf, correct).r_o
    if metric == "r_u":
        return cb.rewards(conf, correct).r_u
    if metric == "ece":
        return cb.ece(conf, correct, n_bins=3, binning="mass")
    if metric == "mce":
        return cb.mce(conf, correct, n_bins=3, binning="mass")
    if metric == "ks":
        return cb.ks_error(conf, correct)
    raise AssertionError(metric)


@pytest.mark.parametrize("metric, system, paper", EXAMPLE1)
def test_example1_numbers(metric, system, paper):
    conf, correct = _top(1, system)
    assert round(_measure(metric, conf, correct), 3) == pytest.approx(paper, abs=1e-12)


def test_example1_O_and_U():
    conf, correct = _top(1, "X")
    assert np.sum(conf[~correct]) == pytest.approx(1.0)
    assert np.sum(1 - conf[correct]) == pytest.approx(2.6)
    conf, correct = _top(1, "W")
    assert np.sum(conf[~correct]) == pytest.approx(1.2)
    assert np.sum(1 - conf[correct]) == pytest.approx(2.7)


def test_example1_binwise_values():
    for name, gaps, means in [("X", [0.267, 0.067, 0.200], [0.400, 0.600, 0.800]),
                              ("Z", [0.200, 0.067, 0.200], [0.467, 0.600, 0.800])]:
        t = cb.reliability_table(*_top(1, name), n_bins=3, binning="mass")
        np.testing.assert_allclose(t["accuracy"], [2 / 3, 2 / 3, 1.0])
        np.testing.assert_allclose(t["mean_conf"].round(3), means)
        np.testing.assert_allclose(t["gap"].abs().round(3), gaps)
    # Y: bin 3's gap rises from 0.200 to 0.233 but MCE still looks at bin 1
    t = cb.reliability_table(*_top(1, "Y"), n_bins=3, binning="mass")
    assert round(abs(t["gap"].iloc[2]), 3) == 0.233
    assert round(cb.mce(*_top(1, "Y"), n_bins=3, binning="mass"), 3) == 0.267


# Table 3: delta_j for X and Z, and cp_j / cGOLD_j.
TABLE3 = {
    "X": dict(cp=[0.044, 0.089, 0.133, 0.200, 0.267, 0.333, 0.422, 0.511, 0.600],
              cgold=[0.111, 0.222, 0.222, 0.333, 0.333, 0.444, 0.556, 0.667, 0.778],
              delta=[0.067, 0.133, 0.089, 0.133, 0.067, 0.111, 0.133, 0.156, 0.178]),
    "Z": dict(cp=[0.044, 0.089, 0.156, 0.222, 0.289, 0.356, 0.444, 0.533, 0.622],
              cgold=[0.111, 0.222, 0.222, 0.333, 0.333, 0.444, 0.556, 0.667, 0.778],
              delta=[0.067, 0.133, 0.067, 0.111, 0.044, 0.089, 0.111, 0.133, 0.156]),
}
# Table 6 (Example 2): X and Y.
TABLE6 = {
    "X": dict(cp=[0.056, 0.111, 0.167, 0.233, 0.300, 0.367, 0.444, 0.522, 0.600],
              cgold=[0.111, 0.111, 0.111, 0.222, 0.222, 0.333, 0.444, 0.444, 0.556],
              delta=[0.056, 0.000, 0.056, 0.011, 0.078, 0.033, 0.000, 0.078, 0.044]),
    "Y": dict(cp=[0.044, 0.100, 0.156, 0.222, 0.289, 0.356, 0.433, 0.511, 0.589],
              cgold=[0.111, 0.111, 0.111, 0.222, 0.222, 0.333, 0.444, 0.444, 0.556],
              delta=[0.067, 0.011, 0.044, 0.000, 0.067, 0.022, 0.011, 0.067, 0.033]),
}


@pytest.mark.parametrize("example, table, system", [(1, TABLE3, "X"), (1, TABLE3, "Z"), (2, TABLE6, "X"), (2, TABLE6, "Y")])
def test_ks_tables(example, table, system):
    curves = cb.ks_curves(*_top(example, system))
    rows = table[system]
    np.testing.assert_allclose(curves.cum_score.round(3), rows["cp"], atol=1e-12)
    np.testing.assert_allclose(curves.cum_accuracy.round(3), rows["cgold"], atol=1e-12)
    np.testing.assert_allclose(np.abs(curves.gap).round(3), rows["delta"], atol=1e-12)
    assert round(cb.ks_error(*_top(example, system)), 3) == max(rows["delta"])


# Table 5: all twenty numbers of Example 2.
TABLE5 = {
    "hmr": [0.504, 0.498, 0.486, 0.480],
    "ece": [0.089, 0.078, 0.100, 0.089],
    "mce": [0.167, 0.133, 0.200, 0.167],
    "nbr": [0.196, 0.201, 0.198, 0.204],
    "ks": [0.078, 0.067, 0.089, 0.078],
}


@pytest.mark.parametrize("metric", sorted(TABLE5))
@pytest.mark.parametrize("i, system", list(enumerate("XYZW")))
def test_table5(metric, i, system):
    ex = load_sakai_example(2)
    if metric == "nbr":
        value = cb.nbr(ex.probs(system), ex.labels)
    else:
        value = _measure(metric, *ex.top(system))
    assert round(value, 3) == pytest.approx(TABLE5[metric][i], abs=1e-12)


def test_example2_binwise_values():
    t = cb.reliability_table(*_top(2, "X"), n_bins=3, binning="mass")
    np.testing.assert_allclose(t["accuracy"], [1 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(t["mean_conf"], [0.5, 0.6, 0.7])
    np.testing.assert_allclose(t["gap"].abs().round(3), [0.167, 0.067, 0.033])


def _squared_errors(probs, labels):
    onehot = np.eye(probs.shape[1])[labels]
    return ((probs - onehot) ** 2).sum(axis=1)


def test_example3_squared_errors():
    ex = load_sakai_example(3)
    se = {name: _squared_errors(ex.probs(name), ex.labels) for name in "XYZW"}
    assert round(se["X"][2], 2) == 0.32 and round(se["Y"][2], 2) == 0.30
    assert round(se["X"][1], 2) == 0.68 and round(se["Z"][1], 2) == 0.62
    # "NBR rates Y, Z and W higher than X"
    x = cb.nbr(ex.probs("X"), ex.labels)
    assert all(cb.nbr(ex.probs(n), ex.labels) < x for n in "YZW")
    # HMR rates all three lower
    h = {n: cb.hmr(*ex.top(n)) for n in "XYZW"}
    assert all(h[n] < h["X"] for n in "YZW")


def test_example1_verdicts_of_table2():
    """Only HMR and NBR rank X above Y, Z and W in Example 1 (Section 4.1)."""
    ex = load_sakai_example(1)
    h = {n: cb.hmr(*ex.top(n)) for n in "XYZW"}
    nb = {n: cb.nbr(ex.probs(n), ex.labels) for n in "XYZW"}
    assert all(h[n] < h["X"] for n in "YZW")
    assert all(nb[n] > nb["X"] for n in "YZW")
    ece = {n: cb.ece(*ex.top(n), n_bins=3, binning="mass") for n in "XYZW"}
    mce = {n: cb.mce(*ex.top(n), n_bins=3, binning="mass") for n in "XYZW"}
    ks = {n: cb.ks_error(*ex.top(n)) for n in "XYZW"}
    assert not all(ece[n] > ece["X"] for n in "YZW")
    assert not all(mce[n] > mce["X"] for n in "YZW")
    assert not all(ks[n] > ks["X"] for n in "YZW")


def test_hmr_footnote_example():
    # R_O = R_U = 0.5 gives 0.500; R_O = 0.9, R_U = 0.1 gives 0.180 (Section 3).
    conf = np.array([0.5, 0.5])
    assert cb.hmr(conf, [1, 0]) == pytest.approx(0.5)
    assert round(cb.hmr([0.1, 0.1], [1, 0]), 3) == 0.180


def test_perturb_confidence_rules_and_errors():
    p = np.array([[0.4, 0.3, 0.3]])
    np.testing.assert_allclose(perturb_confidence(p, 0, 0.6), [[0.6, 0.1, 0.3]])
    np.testing.assert_allclose(perturb_confidence(p, 0, 0.6, others="uniform"), [[0.6, 0.2, 0.2]])
    np.testing.assert_allclose(perturb_confidence(p, 0, 0.5, others=[0.3, 0.2]), [[0.5, 0.3, 0.2]])
    assert p.tolist() == [[0.4, 0.3, 0.3]]  # input untouched
    with pytest.raises(ValueError, match="changes the predicted class"):
        perturb_confidence(p, 0, 0.2, others="uniform")
    with pytest.raises(ValueError, match="negative"):
        perturb_confidence(p, 0, 0.8)
    with pytest.raises(ValueError, match="index must be in"):
        perturb_confidence(p, 3, 0.5)
    with pytest.raises(ValueError, match="others must sum to"):
        perturb_confidence(p, 0, 0.5, others=[0.1, 0.1])
    with pytest.raises(ValueError, match="others must be one of"):
        perturb_confidence(p, 0, 0.5, others="spread")
    with pytest.raises(ValueError, match="number must be one of"):
        load_sakai_example(4)


@pytest.mark.parametrize("number", [1, 2, 3])
def test_built_systems_equal_the_printed_tables(number):
    # Y, Z, W are built from X by the recipe; the paper's Tables 1, 4 and 9 print them: they must agree.
    ex = load_sakai_example(number)
    assert sorted(ex.printed) == ["W", "Y", "Z"]
    for name in "YZW":
        np.testing.assert_allclose(ex.probs(name), ex.printed[name], atol=1e-12, rtol=0)


def test_random_axiom_systems_follow_sakais_perturbations():
    sys_ = random_axiom_systems(300, 12, 3, seed=5)
    assert sys_.shape == (300, 12, 3)
    rows = np.arange(300)
    conf = {s: sys_.top(s)[0] for s in "XYZW"}
    correct = {s: sys_.top(s)[1] for s in "XYZW"}
    pred = sys_.probs["X"].argmax(axis=2)
    for s in "XYZW":
        p = sys_.probs[s]
        np.testing.assert_allclose(p.sum(axis=2), 1.0)
        assert (p >= 0).all() and (p.argmax(axis=2) == pred).all()  # predictions kept
        np.testing.assert_array_equal(correct[s], correct["X"])
    # every system has a correct and a wrong instance
    assert correct["X"].any(axis=1).all() and (~correct["X"]).any(axis=1).all()
    ju, jo = sys_.index_u, sys_.index_o
    assert correct["X"][rows, ju].all() and not correct["X"][rows, jo].any()
    # Y lowers one correct instance's top probability, Z raises one wrong instance's; W does both
    assert (conf["Y"][rows, ju] < conf["X"][rows, ju]).all() and (conf["Z"][rows, jo] > conf["X"][rows, jo]).all()
    for s, changed in [("Y", [ju]), ("Z", [jo]), ("W", [ju, jo])]:
        mask = np.zeros((300, 12), dtype=bool)
        for j in changed:
            mask[rows, j] = True
        np.testing.assert_array_equal(conf[s][~mask], conf["X"][~mask])
    np.testing.assert_array_equal(sys_.probs["W"][rows, ju], sys_.probs["Y"][rows, ju])
    np.testing.assert_array_equal(sys_.probs["W"][rows, jo], sys_.probs["Z"][rows, jo])
    # HMR satisfies Sakai's axioms on every system (Theorems U-, O-, UO-HMR), through the metrics' batch axis
    hmr = {s: cb.hmr(conf[s], correct[s]) for s in "XYZW"}
    assert hmr["X"].shape == (300,)
    assert (hmr["Y"] <= hmr["X"]).all() and (hmr["Z"] <= hmr["X"]).all() and (hmr["W"] < hmr["X"]).all()
    # ... while ECE with 10 equal-width bins violates Axiom U on some of them
    ece = {s: cb.ece(conf[s], correct[s], n_bins=10) for s in "XY"}
    assert (ece["Y"] < ece["X"]).any()


def test_random_axiom_systems_seed_and_errors():
    a, b = random_axiom_systems(5, 6, 4, seed=1), random_axiom_systems(5, 6, 4, seed=1)
    for s in "XYZW":
        np.testing.assert_array_equal(a.probs[s], b.probs[s])
    c = random_axiom_systems(5, 6, 4, seed=np.random.default_rng(2))
    assert not np.array_equal(a.probs["X"], c.probs["X"])
    two = random_axiom_systems(50, 4, 2, seed=0)  # binary: the lowered class must stay above 1/2
    assert (two.top("Y")[0] > 0.5).all()
    with pytest.raises(ValueError, match="n_instances must be at least 2"):
        random_axiom_systems(5, 1, 3)
    with pytest.raises(ValueError, match="n_classes must be at least 2"):
        random_axiom_systems(5, 4, 1)
    with pytest.raises(TypeError, match="n_systems must be an integer"):
        random_axiom_systems(2.5, 4, 3)
    with pytest.raises(ValueError, match="name must be one of"):
        a.top("V")


# ------------------------------------------------------------------ notebook 04's table helpers, now in the paper module

import pandas as pd  # noqa: E402

from calibnb.papers import sakai2024  # noqa: E402


def test_overconfidence_underconfidence_against_a_loop():
    rng = np.random.default_rng(3)
    conf, correct = rng.uniform(0.3, 1.0, 50), rng.random(50) < 0.7
    o = sum(c for c, y in zip(conf, correct) if not y)
    u = sum(1 - c for c, y in zip(conf, correct) if y)
    assert sakai2024.overconfidence_underconfidence(conf, correct) == pytest.approx((o, u), abs=1e-12)
    with pytest.raises(ValueError, match="correct"):
        sakai2024.overconfidence_underconfidence(conf, correct[:-1])


@pytest.mark.parametrize("number", [1, 2, 3])
def test_results_table_is_the_library_metrics_per_system(number):
    ex = sakai2024.load_sakai_example(number)
    bins = None if number == 3 else sakai2024.PAPER_BINS
    table = sakai2024.results_table(ex, bins=bins)
    assert list(table.columns) == ["X", "Y", "Z", "W"]
    assert list(table.index) == (["HMR", "NBR", "KS"] if bins is None else ["HMR", "ECE", "MCE", "NBR", "KS"])
    for s in table.columns:
        conf, correct = ex.top(s)
        assert table.loc["HMR", s] == cb.hmr(conf, correct)
        assert table.loc["NBR", s] == cb.nbr(ex.probs(s), ex.labels)
        assert table.loc["KS", s] == cb.ks_error(conf, correct)
        if bins is not None:
            assert table.loc["ECE", s] == cb.ece(conf, correct, n_bins=3, binning="mass")
            assert table.loc["MCE", s] == cb.mce(conf, correct, n_bins=3, binning="mass")
    with pytest.raises(ValueError, match="bins has unknown option"):
        sakai2024.results_table(ex, bins={"n_bin": 3})
    with pytest.raises(TypeError, match="example must be a SakaiExample"):
        sakai2024.results_table(ex.probs("X"))


def _toy_table(**columns):
    return pd.DataFrame(columns, index=["HMR", "ECE"])


def test_worse_than_x_reads_each_measure_in_its_direction_and_ignores_noise():
    table = _toy_table(X=[0.5, 0.2], Y=[0.4, 0.2 + 1e-14], Z=[0.6, 0.3])
    verdict = sakai2024.worse_than_x(table)
    assert list(verdict.columns) == ["Y", "Z"]
    assert verdict.loc["HMR"].tolist() == [True, False]   # HMR: lower is worse
    assert verdict.loc["ECE"].tolist() == [False, True]   # ECE: higher is worse; 1e-14 is noise
    assert sakai2024.worse_than_x(table, eps=0.0).loc["ECE", "Y"]
    with pytest.raises(ValueError, match="table has no column 'X'"):
        sakai2024.worse_than_x(table.drop(columns="X"))
    with pytest.raises(ValueError, match="NaN"):
        sakai2024.worse_than_x(table.assign(Y=[np.nan, 0.1]))


def test_violates_follows_the_axioms_and_their_tie_rules():
    # U and O: the perturbed system must not be better than X; UO: W must be strictly worse (a tie violates)
    table = _toy_table(X=[0.5, 0.2], Y=[0.6, 0.2], Z=[0.4, 0.1], W=[0.5, 0.3])
    assert sakai2024.violates(table, "HMR", "U")        # Y has a higher HMR: better, a counterexample
    assert not sakai2024.violates(table, "HMR", "O")    # Z has a lower HMR: worse
    assert sakai2024.violates(table, "ECE", "O")        # Z has a lower ECE: better, a counterexample
    assert sakai2024.violates(table, "HMR", "UO")       # W ties X on HMR
    assert not sakai2024.violates(table, "ECE", "UO")   # W has a higher ECE: worse
    assert not sakai2024.violates(table, "NBR", "U")    # a measure the table does not hold
    with pytest.raises(ValueError, match="axiom must be one of"):
        sakai2024.violates(table, "HMR", "X")
    with pytest.raises(ValueError, match="measure must be one of"):
        sakai2024.violates(table, "hmr", "U")


def test_ks_table_ends_at_the_means_and_peaks_at_ks():
    ex = sakai2024.load_sakai_example(1)
    for s in ["X", "Z"]:
        t = sakai2024.ks_table(ex, s)
        conf, correct = ex.top(s)
        assert t["delta_j"].max() == pytest.approx(cb.ks_error(conf, correct), abs=1e-15)
        assert t["cp_j"].iloc[-1] == pytest.approx(conf.mean()) and t["cGOLD_j"].iloc[-1] == pytest.approx(correct.mean())
        assert t.index[0] == 1 and t.index.name == "j"
    with pytest.raises(ValueError, match="system must be one of"):
        sakai2024.ks_table(ex, "V")


# ---- notebook 04's remaining helpers, moved into sakai2024 (issue 25, item 8)

@pytest.mark.parametrize("number", [1, 2, 3])
def test_example_table_is_the_papers_layout_of_each_system(number):
    ex = sakai2024.load_sakai_example(number)
    t = sakai2024.example_table(ex)
    n, m = ex.probs("X").shape
    assert list(t.columns) == list(range(1, n + 1)) and t.columns.name == "instance j"
    assert t.loc[("", "true class")].tolist() == (ex.labels + 1).tolist()
    assert t.loc[("", "correct")].tolist() == ex.top("X")[1].astype(int).tolist()
    for s in "XYZW":
        for k in range(m):
            np.testing.assert_array_equal(t.loc[(s, f"p{k + 1}")].to_numpy(float), ex.probs(s)[:, k])
        np.testing.assert_array_equal(t.loc[(s, "top")].to_numpy(float), ex.probs(s).max(axis=1))
    with pytest.raises(TypeError, match="example must be a SakaiExample"):
        sakai2024.example_table(ex.probs("X"))


@pytest.mark.parametrize("n_bins,binning", [(3, "mass"), (3, "width"), (10, "width"), (9, "mass")])
def test_binned_scores_are_the_library_ece_and_mce(n_bins, binning):
    ex = sakai2024.load_sakai_example(1)
    t = sakai2024.binned_scores(ex, n_bins=n_bins, binning=binning)
    assert list(t.index) == ["ECE", "MCE"] and list(t.columns) == ["X", "Y", "Z", "W"]
    for s in t.columns:
        assert t.loc["ECE", s] == cb.ece(*ex.top(s), n_bins=n_bins, binning=binning)
        assert t.loc["MCE", s] == cb.mce(*ex.top(s), n_bins=n_bins, binning=binning)
    if (n_bins, binning) == (3, "mass"):  # the paper's binning: Table 2's ECE and MCE rows
        pd.testing.assert_frame_equal(t, sakai2024.results_table(ex).loc[["ECE", "MCE"]])
    with pytest.raises(ValueError, match="binning must be one of"):
        sakai2024.binned_scores(ex, binning="equal")
    with pytest.raises(ValueError, match="n_bins"):
        sakai2024.binned_scores(ex, n_bins=0)


def test_better_than_x_reads_the_measures_direction_and_ignores_noise():
    table = _toy_table(X=[0.5, 0.2], Y=[0.6, 0.2 - 1e-14], Z=[0.4, 0.1])
    assert sakai2024.better_than_x(table, "HMR", "Y")          # HMR: higher is better
    assert not sakai2024.better_than_x(table, "HMR", "Z")
    assert sakai2024.better_than_x(table, "ECE", "Z")          # ECE: lower is better
    assert not sakai2024.better_than_x(table, "ECE", "Y")      # 1e-14 is noise
    assert sakai2024.better_than_x(table, "ECE", "Y", eps=0.0)
    assert not sakai2024.better_than_x(table, "ECE", "X")      # X is never better than itself
    with pytest.raises(ValueError, match="measure must be one of"):
        sakai2024.better_than_x(table, "KS", "Y")
    with pytest.raises(ValueError, match="system must be one of"):
        sakai2024.better_than_x(table, "ECE", "W")
    with pytest.raises(ValueError, match="eps"):
        sakai2024.better_than_x(table, "ECE", "Y", eps=-1.0)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 3.0])
def test_hmr_beta_table_holds_the_rewards_and_hmr_beta(beta):
    ex = sakai2024.load_sakai_example(2)
    t = sakai2024.hmr_beta_table(ex, beta=beta)
    label = f"HMR_beta (beta={beta:g})"
    assert list(t.index) == ["R_O", "R_U", label]
    for s in t.columns:
        conf, correct = ex.top(s)
        r = cb.rewards(conf, correct)
        assert (t.loc["R_O", s], t.loc["R_U", s]) == (r.r_o, r.r_u)
        assert t.loc[label, s] == cb.hmr(conf, correct, beta=beta)
    if beta == 0.0:  # Sakai's footnote: beta = 0 scores overconfidence only
        np.testing.assert_allclose(t.loc[label].to_numpy(float), t.loc["R_O"].to_numpy(float), atol=1e-12)
    with pytest.raises(ValueError, match="beta"):
        sakai2024.hmr_beta_table(ex, beta=-1.0)
