"""Tests of VectorScaling's Newton fit: recovery, held-out NLL, gradient/Hessian, determinism, errors."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import logsumexp

from calibnb.calibrators import VectorScaling, softmax
from calibnb.calibrators._peers import _vs_hessian, _vs_objective
from data_mirror import MIRROR, needs_mirror
from synthetic import distorted_logits, nll

W_TRUE = np.array([0.5, 0.8, 1.0, 1.3, 1.7])
B_TRUE = np.array([-0.6, 0.3, 0.0, 0.5, -0.2])


def synthetic(n, seed, w=W_TRUE, b=B_TRUE):
    """Logits z whose labels are drawn from softmax(w * z + b)."""
    return distorted_logits(n, seed, w, b)


def test_recovers_known_per_class_weights_and_biases():
    z, y = synthetic(40000, 0)
    vs = VectorScaling().fit(z, y)
    assert_allclose(vs.weights_, W_TRUE, atol=0.05)
    # b is identified up to a shared shift
    assert_allclose(vs.bias_ - vs.bias_.mean(), B_TRUE - B_TRUE.mean(), atol=0.05)
    assert vs.n_iter_ < 30


def test_lowers_held_out_nll_versus_uncalibrated():
    z, y = synthetic(10000, 1)
    vs = VectorScaling().fit(z[:5000], y[:5000])
    assert nll(vs.transform(z[5000:]), y[5000:]) < nll(softmax(z[5000:]), y[5000:]) - 0.02
    assert_allclose(vs.transform(z[:4]).sum(axis=1), 1.0)


def test_fit_is_stationary_point_and_matches_reported_nll():
    z, y = synthetic(3000, 2)
    vs = VectorScaling().fit(z, y)
    theta = np.concatenate([vs.weights_, vs.bias_])
    f, g, _ = _vs_objective(theta, z, y, 0.0)
    assert np.abs(g).max() < 1e-6
    assert f == pytest.approx(vs.nll_, abs=1e-12)
    # a perturbation never lowers the (convex) loss
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert _vs_objective(theta + 1e-3 * rng.normal(size=theta.size), z, y, 0.0)[0] >= f


@pytest.mark.parametrize("lam", [0.0, 0.1])
def test_gradient_and_hessian_match_finite_differences(lam):
    z, y = synthetic(200, 3)
    rng = np.random.default_rng(4)
    theta = np.concatenate([1 + 0.3 * rng.normal(size=5), 0.5 * rng.normal(size=5)])
    f, g, p = _vs_objective(theta, z, y, lam)
    # the objective itself against a direct logsumexp formula
    s = z * theta[:5] + theta[5:]
    direct = np.mean(logsumexp(s, axis=1) - s[np.arange(len(y)), y])
    direct += lam * (np.sum((theta[:5] - 1) ** 2) + np.sum(theta[5:] ** 2))
    assert f == pytest.approx(direct, rel=1e-12)
    eps = 1e-6
    num_g = np.empty_like(theta)
    num_h = np.empty((theta.size, theta.size))
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = eps
        fp, gp, _ = _vs_objective(theta + e, z, y, lam)
        fm, gm, _ = _vs_objective(theta - e, z, y, lam)
        num_g[j] = (fp - fm) / (2 * eps)
        num_h[:, j] = (gp - gm) / (2 * eps)
    assert_allclose(g, num_g, atol=1e-7)
    h = _vs_hessian(p, z, lam)
    assert_allclose(h, num_h, atol=1e-6)
    assert_allclose(h, h.T, atol=1e-12)


@pytest.mark.parametrize("k", [3, 10, 100])
def test_hessian_is_the_floats_of_the_textbook_concatenation(k):
    """The Hessian's A = [p*z, p] is written into one buffer; its floats are those of np.concatenate, bit for bit
    (the fits, and every notebook number built on them, are unchanged by the layout)."""
    rng = np.random.default_rng(k)
    z = rng.normal(size=(3001, k)) * 4
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    for lam in (0.0, 0.3):
        n = z.shape[0]
        pz = p * z
        a = np.concatenate([pz, p], axis=1)
        h = -(a.T @ a) / n
        d = np.arange(k)
        h[d, d] += np.einsum("ij,ij->j", pz, z) / n
        cross = pz.sum(axis=0) / n
        h[d, k + d] += cross
        h[k + d, d] += cross
        h[k + d, k + d] += p.sum(axis=0) / n
        h[np.diag_indices_from(h)] += 2.0 * lam
        assert np.array_equal(_vs_hessian(p, z, lam), h)


def test_l2_shrinks_towards_identity():
    z, y = synthetic(2000, 5)
    free = VectorScaling().fit(z, y)
    shrunk = VectorScaling(l2=1.0).fit(z, y)
    assert np.sum((shrunk.weights_ - 1) ** 2) < np.sum((free.weights_ - 1) ** 2)
    assert np.sum(shrunk.bias_**2) < np.sum((free.bias_ - free.bias_.mean()) ** 2) + 1e-12


def test_fit_is_deterministic_and_may_change_predictions():
    z, y = synthetic(5000, 6, b=np.array([-2.0, 0.0, 0.0, 0.0, 2.0]))
    a = VectorScaling().fit(z, y)
    b = VectorScaling().fit(z.copy(), y.copy())
    assert np.array_equal(a.weights_, b.weights_) and np.array_equal(a.bias_, b.bias_)
    # the biases re-rank classes: the argmax changes on some rows (unlike temperature scaling)
    assert (a.transform(z).argmax(axis=1) != z.argmax(axis=1)).any()


def test_starts_from_temperature_and_converges_from_any_scale():
    z, y = synthetic(4000, 7, w=np.full(5, 0.5), b=np.zeros(5))
    vs = VectorScaling().fit(z, y)
    assert vs.temperature_init_ == pytest.approx(2.0, rel=0.1)
    # scaling the logits by 10 rescales the optimal w by 1/10 and leaves the loss unchanged
    vs10 = VectorScaling().fit(10 * z, y)
    assert_allclose(vs10.weights_ * 10, vs.weights_, rtol=1e-5)
    assert vs10.nll_ == pytest.approx(vs.nll_, abs=1e-9)


def test_bad_input_errors():
    z, y = synthetic(50, 8)
    with pytest.raises(ValueError, match="l2 must be >= 0"):
        VectorScaling(l2=-1.0).fit(z, y)
    with pytest.raises(ValueError, match="tol must be > 0"):
        VectorScaling(tol=0.0).fit(z, y)
    with pytest.raises(TypeError, match="max_iter must be an integer"):
        VectorScaling(max_iter=2.5).fit(z, y)
    with pytest.raises(ValueError, match="NaN"):
        VectorScaling().fit(np.where(np.eye(50, 5, dtype=bool), np.nan, z), y)
    with pytest.raises(ValueError, match="-inf"):
        VectorScaling().fit(np.array([[0.0, -np.inf], [0.0, 1.0]]), [0, 1])
    with pytest.raises(ValueError, match="labels"):
        VectorScaling().fit(z, np.full(50, 5))
    with pytest.raises(ValueError, match="2-D"):
        VectorScaling().fit(z[:, 0], y)
    vs = VectorScaling().fit(z, y)
    with pytest.raises(ValueError, match="4 columns but the fit had 5"):
        vs.transform(z[:, :4])


def test_separable_data_stops_at_max_iter_with_finite_output():
    z = np.array([[3.0, 0.0], [0.0, 3.0], [2.0, 0.0], [0.0, 2.0]])
    vs = VectorScaling(max_iter=20).fit(z, [0, 1, 0, 1])
    assert np.isfinite(vs.weights_).all() and vs.n_iter_ <= 20
    p = vs.transform(z)
    assert np.isfinite(p).all() and (p.argmax(axis=1) == [0, 1, 0, 1]).all()


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

import warnings  # noqa: E402

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from calibnb.calibrators import CalibrationWarning  # noqa: E402

from synthetic import calibrated_logits  # noqa: E402


def test_vector_scaling_warns_at_max_iter():
    z, y = calibrated_logits(2000, 4, 7, scale=3.0)
    with pytest.warns(CalibrationWarning, match="VectorScaling stopped at max_iter=1"):
        vs = VectorScaling(max_iter=1).fit(z, y)
    assert vs.n_iter_ == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        VectorScaling().fit(z, y)


def test_a_given_starting_temperature_reaches_the_same_optimum_and_bad_ones_are_refused():
    """init_temperature (e.g. a TemperatureScaling fit of the same rows) replaces the search for a start; the
    loss is convex, so the fit is the same up to the Newton tolerance; a temperature that is not > 0 is named."""
    from calibnb.calibrators import TemperatureScaling

    z, y = synthetic(6000, 5)
    free = VectorScaling().fit(z, y)
    t = TemperatureScaling().fit(z, y).temperature_
    warm = VectorScaling(init_temperature=t).fit(z, y)
    assert warm.temperature_init_ == t and abs(free.temperature_init_ - t) < 1e-3 * t
    assert abs(warm.nll_ - free.nll_) < 1e-10
    assert_allclose(warm.transform(z), free.transform(z), atol=1e-6)
    far = VectorScaling(init_temperature=50.0).fit(z, y)  # a poor start: more steps, the same optimum
    assert abs(far.nll_ - free.nll_) < 1e-10 and far.n_iter_ >= free.n_iter_
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="init_temperature"):
            VectorScaling(init_temperature=bad).fit(z, y)
    with pytest.raises(TypeError, match="init_temperature"):
        VectorScaling(init_temperature="2").fit(z, y)


@needs_mirror
def test_fits_from_two_starts_give_the_same_probabilities_on_cifar100():
    """The fit ends with the Newton step computed at the stopping test, so two starts agree on the probabilities
    (to about 1e-7), not only on the loss. On these rows (notebook 03's split4 of a CIFAR-100
    DenseNet) the two fits were 3.9e-5 apart when the fit stopped before that step, and 5.5e-8 with it."""
    from calibnb.calibrators import TemperatureScaling
    from calibnb.data import calibration_test_split, load_cifar

    out = load_cifar("cifar100", "densenet_bc_100", cache_dir=MIRROR)
    cal, test = calibration_test_split(out.labels.size, seed=4, frac=0.5)
    z, y = out.logits[cal], out.labels[cal]
    t = TemperatureScaling().fit(z, y).temperature_
    a = VectorScaling(init_temperature=t).fit(z, y)
    b = VectorScaling(init_temperature=1.3 * t).fit(z, y)
    assert abs(a.nll_ - b.nll_) < 1e-12
    assert np.abs(a.transform(out.logits[test]) - b.transform(out.logits[test])).max() < 1e-6
