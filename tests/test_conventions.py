"""Conventions in which calibnb differs from its peers, each stated in a docstring and checked here (issue 29).

* TemperatureScaling's search tolerance ``tol`` (scikit-learn's ``_TemperatureScaling`` test case);
* smooth_ece against relplot on strongly miscalibrated data (relplot cuts its kernel at distance 0.5).
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
