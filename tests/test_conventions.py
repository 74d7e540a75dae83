"""Conventions in which calibnb differs from its peers, each stated in a docstring and checked here (issue 29).

* TemperatureScaling's search tolerance ``tol`` (scikit-learn's ``_TemperatureScaling`` test case);
* smooth_ece against relplot on strongly miscalibrated data (relplot cuts its kernel at distance 0.5);
* equal-width and equal-mass bin edges and counting against scikit-learn, relplot, MAPIE and netcal.
"""

import numpy as np
import pytest
from scipy import stats

import calibnb as cn


def _sklearn_case(n_classes):
    """sklearn/tests/test_calibration.py::test_temperature_scaling: an unpenalised logistic regression."""
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    X, y = make_classification(n_samples=1000, n_features=10, n_informative=10, n_redundant=0,
                               n_classes=n_classes, n_clusters_per_class=1, class_sep=2.0, random_state=42)
    X_train, _, y_train, _ = train_test_split(X, y, random_state=42)
    clf = LogisticRegression(C=np.inf, tol=1e-8, max_iter=200, random_state=0).fit(X_train, y_train)
    return clf.predict_proba(X_train), y_train


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_temperature_tol_reaches_sklearns_expected_precision(n_classes):
    """scikit-learn expects beta = 1/tau = 1 within 1e-6 on the training outputs; tol=1e-6 gets there."""
    from sklearn.calibration import _TemperatureScaling

    p, y = _sklearn_case(n_classes)
    assert _TemperatureScaling().fit(p, y).beta_ == pytest.approx(1.0, abs=1e-6)  # the peer's own case
    fine = cn.TemperatureScaling(tol=1e-6).fit(np.log(p), y)
    assert fine.temperature_ == pytest.approx(1.0, abs=1e-6)
    default = cn.TemperatureScaling().fit(np.log(p), y)
    assert default.tol == 1e-4 and default.temperature_ == pytest.approx(1.0, abs=1e-4)


def test_default_tol_misses_1e6_on_the_sklearn_case():
    """The reason ``tol`` is settable: the default stops short of 1e-6 on this case (for at least one K)."""
    errors = [abs(cn.TemperatureScaling().fit(np.log(p), y).temperature_ - 1.0)
              for p, y in (_sklearn_case(k) for k in (2, 3, 5))]
    assert max(errors) > 1e-6


def test_tol_is_a_validated_parameter():
    from sklearn.base import clone

    ts = cn.TemperatureScaling(tol=1e-7)
    assert clone(ts).get_params()["tol"] == 1e-7 and "tol=1e-07" in repr(ts)
    for bad in (0.0, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="tol"):
            cn.TemperatureScaling(tol=bad).fit(np.array([0.6, 0.7, 0.8]), [1, 0, 1])


def _direct_smooth_ece(conf, correct, sigma, grid=4001):
    """The definition evaluated directly: reflected Gaussian with its images, fine trapezoid rule."""
    t = np.linspace(0, 1, grid)[:, None]
    k = np.zeros((grid, len(conf)))
    for s in range(-3, 4):
        k += stats.norm.pdf(t - conf - 2 * s, scale=sigma) + stats.norm.pdf(t + conf - 2 * s, scale=sigma)
    return np.trapezoid(np.abs((k * (correct - conf)).mean(axis=1)), dx=1 / (grid - 1))


def test_smooth_ece_is_the_definition_where_relplot_cuts_its_kernel():
    """Strongly miscalibrated data: a large bandwidth, where relplot's kernel (cut at distance 0.5, reflected
    once) loses mass; calibnb agrees with the definition, relplot does not (smooth_ece docstring)."""
    relplot = pytest.importorskip("relplot", reason="relplot is not installed")
    rng = np.random.default_rng(0)
    conf = rng.uniform(0, 1, 300)
    correct = (rng.uniform(size=300) < 1 - conf).astype(float)  # anti-calibrated
    sigma = cn.smooth_ece_bandwidth(conf, correct)
    assert sigma > 0.3
    ours = cn.smooth_ece(conf, correct, bandwidth=sigma)
    assert ours == pytest.approx(_direct_smooth_ece(conf, correct, sigma), abs=1e-6)
    assert relplot.smECE_sigma(conf, correct, sigma) - ours > 0.05  # same bandwidth: the kernel differs
    for s in (0.05, 0.1, 0.3):
        assert cn.smooth_ece(conf, correct, bandwidth=s) == pytest.approx(_direct_smooth_ece(conf, correct, s), abs=1e-6)
    # at a small bandwidth the cut-off costs nothing: the two agree to 2e-3 (relplot's grid)
    assert abs(relplot.smECE_sigma(conf, correct, 0.05) - cn.smooth_ece(conf, correct, bandwidth=0.05)) < 2e-3


# ---- equal-width bin edges of the peers (bin_indices docstring) ----------------------------------

EDGE_VALUES = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0])


def test_bin_edges_equal_sklearn_calibration_curve():
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(0)
    for n_bins in (5, 10, 15):
        conf = np.r_[rng.uniform(size=500), np.arange(n_bins + 1) / n_bins]
        correct = rng.uniform(size=conf.size) < conf
        # sklearn's bin ids, as calibration_curve computes them, and its curve
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        assert np.array_equal(cn.bin_indices(conf, n_bins=n_bins), np.searchsorted(edges[1:-1], conf))
        acc, mean_conf = calibration_curve(correct, conf, n_bins=n_bins)
        t = cn.reliability_table(conf, correct, n_bins=n_bins)
        np.testing.assert_allclose(t["accuracy"], acc)
        np.testing.assert_allclose(t["mean_conf"], mean_conf)


def test_bin_edges_differ_from_relplot_mapie_and_binned_statistic_as_documented():
    ours = cn.bin_indices(EDGE_VALUES, n_bins=10)
    assert ours.tolist() == [0, 0, 1, 2, 4, 6, 9]  # right-closed (m/M, (m+1)/M], 0 in bin 0
    # relplot's binning: int(c / (1/M)), left-closed, 1.0 in an 11th bin
    relplot_metrics = pytest.importorskip("relplot.metrics", reason="relplot is not installed")
    r = relplot_metrics.binning(EDGE_VALUES, np.zeros(7), bin_size=0.1)
    assert r.shape == (11,) and r[10] == 1.0  # the residual of the item at 1.0 sits alone in bin 10
    assert ((EDGE_VALUES + 0) / 0.1).astype(int).tolist() == [0, 1, 2, 2, 5, 6, 10]
    # MAPIE: num_bins=10 means 10 edges, 9 bins of width 1/9 (and exactly 0 in bin 0)
    mapie = pytest.importorskip("mapie.metrics.calibration", reason="MAPIE is not installed")
    bins, _, _, sizes = mapie._calc_bins(np.zeros(7), EDGE_VALUES, 10, "uniform")
    assert len(bins) == 10 and bins[1] == pytest.approx(1 / 9)
    assert np.digitize(EDGE_VALUES, bins, right=True).tolist() == [0, 1, 2, 3, 5, 7, 9]
    # netcal's rule, scipy's binned_statistic_dd: left-closed, the last bin closed on both sides
    from scipy.stats import binned_statistic_dd

    b = binned_statistic_dd(EDGE_VALUES[:, None], np.zeros(7), "count", bins=[np.linspace(0, 1, 11)],
                            expand_binnumbers=True)
    assert (np.ravel(b.binnumber) - 1).tolist() == [0, 1, 2, 2, 5, 6, 9]


def test_platt_targets_and_sign_differ_from_sklearn_sigmoid_as_documented():
    from sklearn.calibration import _sigmoid_calibration
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    y = (rng.uniform(size=60) < 1 / (1 + np.exp(-2 * x))).astype(int)
    ours = cn.PlattScaling().fit(x, y)
    lr = LogisticRegression(C=np.inf, tol=1e-12, max_iter=1000).fit(x[:, None], y)
    assert ours.a_ == pytest.approx(lr.coef_[0, 0], rel=1e-4) and ours.b_ == pytest.approx(lr.intercept_[0], abs=1e-4)
    a, b = _sigmoid_calibration(x, y)  # Platt's targets, sigma(-(a x + b))
    assert a < 0 < ours.a_
    assert abs(-a - ours.a_) > 1e-3  # the smoothed targets move the fit on 60 items
    # Platt's targets written out: maximum likelihood against them is sklearn's fit
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(theta):
        z = theta[0] * x + theta[1]
        return np.mean(np.logaddexp(0, z) - t * z)

    from scipy.optimize import minimize

    th = minimize(loss, [1.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
    assert th[0] == pytest.approx(-a, rel=1e-3) and th[1] == pytest.approx(-b, abs=1e-3)


def test_equal_mass_bins_against_sklearn_and_mapie_quantile_as_documented():
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(0)
    conf = rng.uniform(size=300)  # no ties, N a multiple of M: scikit-learn's quantile bins are ours
    correct = rng.uniform(size=300) < conf
    for m in (5, 10, 15):
        edges = np.percentile(conf, np.linspace(0, 100, m + 1))
        assert np.array_equal(np.searchsorted(edges[1:-1], conf), cn.bin_indices(conf, n_bins=m, binning="mass"))
        acc, mean_conf = calibration_curve(correct, conf, n_bins=m, strategy="quantile")
        t = cn.reliability_table(conf, correct, n_bins=m, binning="mass")
        np.testing.assert_allclose(t["accuracy"], acc)
        np.testing.assert_allclose(t["mean_conf"], mean_conf)
    # N not a multiple of M: the extra items go to calibnb's first bins, to interpolated edges in scikit-learn
    c7 = rng.uniform(size=307)
    ours = np.bincount(cn.bin_indices(c7, n_bins=10, binning="mass"))
    edges = np.percentile(c7, np.linspace(0, 100, 11))
    theirs = np.bincount(np.searchsorted(edges[1:-1], c7), minlength=10)
    assert ours.tolist() == [31] * 7 + [30] * 3 and ours.tolist() != theirs.tolist() and theirs.sum() == 307
    # ties: calibnb splits a tied group at a cut; scikit-learn keeps it in one bin
    tied = np.r_[np.full(5, 0.5), np.full(5, 0.7)]
    assert np.bincount(cn.bin_indices(tied, n_bins=3, binning="mass")).tolist() == [4, 3, 3]
    edges = np.percentile(tied, np.linspace(0, 100, 4))
    assert np.bincount(np.searchsorted(edges[1:-1], tied)).tolist() == [5, 5]
    # MAPIE: num_bins percentile edges = num_bins - 1 bins, plus a bin holding only the minimum
    mapie = pytest.importorskip("mapie.metrics.calibration", reason="MAPIE is not installed")
    c9 = np.linspace(0.1, 0.9, 9)
    bins, _, _, sizes = mapie._calc_bins(np.zeros(9), c9, 4, "quantile")
    assert len(bins) == 4 and sizes.tolist() == [1.0, 2.0, 3.0, 3.0]
    assert np.bincount(cn.bin_indices(c9, n_bins=3, binning="mass")).tolist() == [3, 3, 3]


def test_cumulative_ks_p_value_is_two_sided_as_documented():
    """P(max |B| >= G) lies between the one-sided 2 (1 - Phi(G)) and twice it, approaching twice it for large G."""
    rng = np.random.default_rng(0)
    ratios = []
    for shift in (0.0, 0.05, 0.1, 0.15, 0.2):
        conf = rng.uniform(0.2, 0.8, 2000)
        correct = rng.uniform(size=2000) < np.clip(conf - shift, 0, 1)
        r = cn.cumulative_ks_test(conf, correct)
        one_sided = 2 * stats.norm.sf(r.statistic)
        assert one_sided <= r.p_value <= 2 * one_sided + 1e-300
        ratios.append(r.p_value / one_sided)
    assert ratios[-1] == pytest.approx(2.0, rel=1e-6)  # strongly miscalibrated: both tails count, each once
