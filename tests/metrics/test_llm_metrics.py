"""RMS calibration error and selective prediction (calibnb.metrics.selective), against independent
computations written here and against HELM's definitions (``calibration.get_selective_stats``, used by
HELM's ``compute_calibration_metrics`` for ``selective_cov_acc_area`` and ``selective_acc@10``)."""

import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import calibnb as cn


def _helm_selective_stats(probs, correct):
    """HELM's definition, written out: sort descending, cumulative accuracies, their mean, index int(0.1 N)."""
    probs, correct = np.asarray(probs, float), np.asarray(correct, float)
    order = np.argsort(-probs)
    accs = np.cumsum(correct[order]) / np.arange(1, len(probs) + 1)
    return accs.mean(), accs[int(0.1 * len(probs))]


def _rms_by_loops(conf, correct, n_bins):
    """Equal-width bins by explicit loops over bins and items."""
    total, n = 0.0, len(conf)
    for m in range(n_bins):
        lo, hi = m / n_bins, (m + 1) / n_bins
        members = [i for i in range(n) if (lo < conf[i] <= hi) or (m == 0 and conf[i] == 0)]
        if members:
            gap = np.mean([conf[i] for i in members]) - np.mean([correct[i] for i in members])
            total += len(members) / n * gap ** 2
    return math.sqrt(total)


@pytest.mark.parametrize("n, seed", [(7, 0), (50, 1), (333, 2)])
@pytest.mark.parametrize("n_bins", [1, 5, 10, 15])
def test_rms_against_loops(n, seed, n_bins):
    rng = np.random.default_rng(seed)
    conf = np.round(rng.uniform(size=n), 3)
    correct = rng.uniform(size=n) < conf ** 2
    assert_allclose(cn.rms_calibration_error(conf, correct, n_bins=n_bins), _rms_by_loops(conf, correct, n_bins),
                    rtol=1e-12, atol=1e-15)


def test_rms_properties_and_debiased_form():
    rng = np.random.default_rng(3)
    conf = rng.uniform(size=400)
    correct = rng.uniform(size=400) < conf
    for binning in ("width", "mass"):
        rms = cn.rms_calibration_error(conf, correct, binning=binning)
        assert cn.ece(conf, correct, binning=binning) <= rms + 1e-15  # Jensen
        deb = cn.rms_calibration_error(conf, correct, binning=binning, debiased=True)
        assert deb == cn.debiased_ece(conf, correct, binning=binning)
        assert deb < rms
        # the debiased square, written out: sum_m n_m/N [(cbar - ybar)^2 - ybar(1 - ybar)/(n_m - 1)]
        idx = cn.bin_indices(conf, n_bins=10, binning=binning)
        sq = 0.0
        for m in np.unique(idx):
            c, y = conf[idx == m], correct[idx == m].astype(float)
            if len(c) >= 2:
                sq += len(c) / 400 * ((c.mean() - y.mean()) ** 2 - y.mean() * (1 - y.mean()) / (len(c) - 1))
        assert_allclose(deb, math.sqrt(max(sq, 0.0)), rtol=1e-12)
    # a perfectly calibrated population: the debiased square is centred on 0, the plug-in is not
    conf = rng.uniform(size=(300, 200))
    correct = rng.uniform(size=(300, 200)) < conf
    plug = np.mean([cn.rms_calibration_error(c, y) ** 2 for c, y in zip(conf, correct)])
    assert plug > 0.004
    # bins of 100 items, HLE's choice: equal mass with N / 100 bins
    conf1, y1 = conf[0], correct[0]
    assert cn.rms_calibration_error(conf1, y1, n_bins=2, binning="mass") == pytest.approx(
        math.sqrt(sum(0.5 * (np.sort(conf1)[s].mean() - y1[np.argsort(conf1, kind="stable")][s].mean()) ** 2
                      for s in (slice(0, 100), slice(100, 200)))))


def test_rms_mass_bins_and_hle_calib_err_differ_by_its_last_bin():
    # HLE's calib_err (Hendrycks et al.'s calibration_tools) as published: bins of beta sorted answers, the
    # remainder joined to the last, and a loop over range(len(bins) - 1) that leaves the last bin out
    def hle_calib_err(confidence, correct, beta=100):
        idx = np.argsort(confidence)
        confidence, correct = confidence[idx], correct[idx]
        bins = [[i * beta, (i + 1) * beta] for i in range(len(confidence) // beta)]
        bins[-1] = [bins[-1][0], len(confidence)]
        total = 0.0
        for i in range(len(bins) - 1):
            c, y = confidence[bins[i][0]:bins[i][1]], correct[bins[i][0]:bins[i][1]]
            total += len(c) / len(confidence) * (np.mean(c) - np.mean(y)) ** 2
        return math.sqrt(total)

    rng = np.random.default_rng(6)
    conf = rng.uniform(size=300)
    correct = (rng.uniform(size=300) < conf ** 2).astype(float)
    ours = cn.rms_calibration_error(conf, correct, n_bins=3, binning="mass")
    idx = np.argsort(conf)
    by_bin = [300 / 300 / 3 * (conf[idx][s].mean() - correct[idx][s].mean()) ** 2
              for s in (slice(0, 100), slice(100, 200), slice(200, 300))]
    assert ours == pytest.approx(math.sqrt(sum(by_bin)), rel=1e-12)
    assert hle_calib_err(conf, correct) == pytest.approx(math.sqrt(sum(by_bin[:2])), rel=1e-12)
    assert abs(ours - hle_calib_err(conf, correct)) > 1e-3  # the docstring's warning is not idle


def test_rms_interval_by_bootstrap():
    rng = np.random.default_rng(4)
    conf = rng.uniform(0.5, 1, size=300)
    correct = rng.uniform(size=300) < conf - 0.15
    res = cn.bootstrap_ci(cn.rms_calibration_error, conf, correct, n_resamples=400, seed=0)
    assert res.low < res.estimate < res.high
    assert res.estimate == cn.rms_calibration_error(conf, correct)
    assert 0.05 < res.low and res.high < 0.3


@pytest.mark.parametrize("n, seed", [(10, 0), (37, 1), (100, 2), (1000, 3)])
def test_selective_metrics_match_helm_without_ties(n, seed):
    rng = np.random.default_rng(seed)
    conf = rng.permutation(np.linspace(0.05, 0.99, n))  # distinct
    correct = rng.uniform(size=n) < conf
    area, acc10 = _helm_selective_stats(conf, correct)
    for ties in ("average", "order"):
        assert cn.coverage_accuracy_area(conf, correct, ties=ties) == pytest.approx(area, rel=1e-12)
        assert cn.selective_accuracy(conf, correct, coverage=0.1, ties=ties, rounding="helm") == pytest.approx(
            acc10, rel=1e-12)
    # HELM's selective_acc@10 covers int(0.1 N) + 1 answers; "ceil" covers ceil(0.1 N)
    order = np.argsort(-conf)
    k = math.ceil(0.1 * n)
    assert cn.selective_accuracy(conf, correct) == pytest.approx(correct[order][:k].mean())


def test_risk_coverage_curve_by_hand_and_ties():
    conf = [0.9, 0.8, 0.8, 0.8, 0.3]
    correct = [1, 0, 1, 1, 0]
    c = cn.risk_coverage_curve(conf, correct)
    # average over the orders of the three tied 0.8s (2 of them right): 1, 1 + 2/3, 1 + 4/3, 3, 3 correct
    assert_allclose(c.selective_accuracy, [1, (1 + 2 / 3) / 2, (1 + 4 / 3) / 3, 3 / 4, 3 / 5])
    assert_allclose(c.risk, 1 - c.selective_accuracy)
    assert_allclose(c.coverage, [0.2, 0.4, 0.6, 0.8, 1.0])
    assert_allclose(c.threshold, [0.9, 0.8, 0.8, 0.8, 0.3])
    # "average" is the mean of "order" over every permutation of the input
    perms = list(itertools.permutations(range(5)))
    mean_curve = np.mean([cn.risk_coverage_curve(np.array(conf)[list(p)], np.array(correct)[list(p)],
                                                 ties="order").selective_accuracy for p in perms], axis=0)
    assert_allclose(c.selective_accuracy, mean_curve, rtol=1e-12)
    # "order" keeps the input order of ties (a stable sort)
    assert_allclose(cn.risk_coverage_curve(conf, correct, ties="order").selective_accuracy,
                    [1, 1 / 2, 2 / 3, 3 / 4, 3 / 5])
    # the area ("average") does not depend on the input order
    rng = np.random.default_rng(0)
    conf2 = np.round(rng.uniform(size=60), 1)
    corr2 = rng.uniform(size=60) < conf2
    p = rng.permutation(60)
    assert cn.coverage_accuracy_area(conf2, corr2) == pytest.approx(cn.coverage_accuracy_area(conf2[p], corr2[p]))


def test_selective_accuracy_coverage_rounding_and_errors():
    conf = np.linspace(1, 0.01, 30)
    correct = np.arange(30) % 3 != 1
    # 0.1 * 30 = 3.0000000000000004 in floating point: still the 3 most confident
    assert cn.selective_accuracy(conf, correct, coverage=0.1) == pytest.approx(2 / 3)
    assert cn.selective_accuracy(conf, correct, coverage=1.0) == pytest.approx(correct.mean())
    assert cn.selective_accuracy(conf, correct, coverage=1.0, rounding="helm") == pytest.approx(correct.mean())
    assert cn.selective_accuracy(conf, correct, coverage=1e-6) == 1.0  # at least one answer
    with pytest.raises(ValueError, match="coverage must be > 0"):
        cn.selective_accuracy(conf, correct, coverage=0.0)
    with pytest.raises(ValueError, match="coverage must be <= 1"):
        cn.selective_accuracy(conf, correct, coverage=1.5)
    with pytest.raises(ValueError, match="ties must be one of"):
        cn.risk_coverage_curve(conf, correct, ties="random")
    with pytest.raises(ValueError, match="rounding must be one of"):
        cn.selective_accuracy(conf, correct, rounding="floor")


def test_risk_coverage_plot_draws_its_data():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(5)
    conf = rng.uniform(size=80)
    correct = rng.uniform(size=80) < conf
    d = cn.risk_coverage_data(conf, correct, label="sequence probability")
    assert d.area == pytest.approx(cn.coverage_accuracy_area(conf, correct))
    assert d.oracle_area >= d.area and d.oracle_accuracy[-1] == pytest.approx(d.accuracy)
    fig, ax = plt.subplots()
    cn.plot_risk_coverage(d, ax=ax, risk=True)
    lines = {ln.get_gid(): ln for ln in ax.get_lines()}
    assert_allclose(lines["curve"].get_ydata(), 1 - d.selective_accuracy)
    assert_allclose(lines["oracle"].get_ydata(), 1 - d.oracle_accuracy)
    assert "sequence probability" in ax.get_legend().get_texts()[0].get_text()
    plt.close(fig)
    with pytest.raises(TypeError, match="data must be a RiskCoverageData"):
        cn.plot_risk_coverage((conf, correct))


def test_summary_selective_acc_10_says_which_rounding_it_uses():
    # regression: metric_summary's selective_acc_10 was described as "HELM's selective_acc@10" but keeps
    # ceil(N/10) answers (HELM keeps int(N/10) + 1): with N = 100 and the 4th most confident wrong, 0.9 vs 10/11
    conf = np.linspace(1, 0.01, 100)
    correct = np.arange(100) != 3
    s = cn.metric_summary(conf, correct, n_resamples=20, seed=0).set_index("key")
    assert s.loc["selective_acc_10", "estimate"] == pytest.approx(0.9)
    assert cn.selective_accuracy(conf, correct, rounding="helm") == pytest.approx(10 / 11)
    assert "int(N/10) + 1" in s.loc["selective_acc_10", "reading"]
