"""Every calibrator is a scikit-learn estimator: clone, get/set_params, repr, search, NotFittedError."""

import inspect

import numpy as np
import pytest
import sklearn.exceptions
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

import calibnb as cn
from calibnb import calibrators

CALIBRATORS = [getattr(calibrators, name) for name in calibrators.__all__
               if inspect.isclass(getattr(calibrators, name))
               and issubclass(getattr(calibrators, name), calibrators.Calibrator)
               and getattr(calibrators, name) is not calibrators.Calibrator]


def _logits(seed=0, n=1500, k=4, scale=3.0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * scale
    p = cn.softmax(z / 2.0)  # the true probabilities: the logits are twice too sharp
    labels = (rng.random((n, 1)) < np.cumsum(p, axis=1)).argmax(axis=1)
    return z, labels


def _fit_data(cls):
    """Calibration data of the form each calibrator's fit takes."""
    rng = np.random.default_rng(1)
    z, labels = _logits()
    conf = cn.softmax(z).max(axis=1)
    correct = z.argmax(axis=1) == labels
    if cls in (calibrators.TemperatureScaling, calibrators.VectorScaling):
        return z, labels
    if cls is calibrators.SplineCalibrator:
        return cn.softmax(z), labels
    if cls is calibrators.ConsCal:
        table = np.where(rng.random((200, 5)) < 0.7, 1, rng.integers(0, 3, (200, 5)))
        return table, rng.random(200) < 0.6
    if cls is calibrators.CorrectnessClassifier:
        return np.column_stack([conf, rng.normal(size=conf.size)]), correct
    return conf, correct


def test_every_calibrator_is_found():
    assert len(CALIBRATORS) == 10


@pytest.mark.parametrize("cls", CALIBRATORS, ids=lambda c: c.__name__)
def test_clone_get_set_params_and_repr(cls):
    est = cls()
    params = est.get_params()
    twin = clone(est)
    assert type(twin) is cls and twin is not est and twin.get_params() == params
    assert repr(est) == f"{cls.__name__}()"  # defaults are not repeated
    for name, value in params.items():  # every option is keyword-only
        kind = inspect.signature(cls).parameters[name].kind
        assert kind is inspect.Parameter.KEYWORD_ONLY, name
        assert est.set_params(**{name: value}) is est


@pytest.mark.parametrize("cls", CALIBRATORS, ids=lambda c: c.__name__)
def test_fit_returns_self_and_fit_transform_equals_fit_then_transform(cls):
    X, y = _fit_data(cls)
    est = cls(seed=0) if "seed" in cls().get_params() else cls()  # seed=None would draw fresh entropy
    assert est.fit(X, y) is est
    fitted = sorted(a for a in vars(est) if a not in est.get_params())
    assert fitted and all(a.endswith("_") for a in fitted), fitted
    np.testing.assert_array_equal(clone(est).fit_transform(X, y), est.transform(X))
    # a clone is unfitted
    with pytest.raises(sklearn.exceptions.NotFittedError):
        clone(est).transform(X)


@pytest.mark.parametrize("cls", CALIBRATORS, ids=lambda c: c.__name__)
def test_transform_before_fit_raises_both_not_fitted_errors(cls):
    X, _ = _fit_data(cls)
    with pytest.raises(cn.NotFittedError, match=f"This {cls.__name__} is not fitted yet") as info:
        cls().transform(X)
    assert isinstance(info.value, sklearn.exceptions.NotFittedError)
    assert isinstance(info.value, ValueError)


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        cn.TemperatureScaling("ece")
    with pytest.raises(TypeError):
        cn.SplineCalibrator(6)


def _neg_top1_ece(est, X, y):
    """Calibration scorer: minus the ECE (15 bins) of the top-1 prediction after recalibration."""
    out = est.transform(X)
    conf = out.max(axis=1) if out.ndim == 2 else out
    return -cn.ece(conf, np.asarray(X).argmax(axis=1) == y, n_bins=15)


def test_grid_search_over_temperature_scaling_objective():
    z, labels = _logits(seed=2, n=3000)
    search = GridSearchCV(cn.TemperatureScaling(), {"objective": ["nll", "ece"], "n_bins": [10, 15]},
                          scoring=_neg_top1_ece, cv=KFold(3, shuffle=True, random_state=0))
    search.fit(z, labels)
    assert set(search.best_params_) == {"objective", "n_bins"}
    assert search.best_estimator_.temperature_ == pytest.approx(2.0, rel=0.2)
    # the search scores are those of a hand-written loop over the same folds
    folds = list(KFold(3, shuffle=True, random_state=0).split(z))
    by_hand = np.mean([_neg_top1_ece(cn.TemperatureScaling(objective="nll", n_bins=10).fit(z[a], labels[a]),
                                     z[b], labels[b]) for a, b in folds])
    i = search.cv_results_["params"].index({"objective": "nll", "n_bins": 10})
    assert search.cv_results_["mean_test_score"][i] == pytest.approx(by_hand)


def test_cross_validate_spline_knots_beats_no_recalibration():
    z, labels = _logits(seed=3, n=4000)
    p = cn.softmax(z)
    cv = KFold(4, shuffle=True, random_state=1)
    search = GridSearchCV(cn.SplineCalibrator(), {"n_knots": [4, 6, 10]}, scoring=_neg_top1_ece, cv=cv).fit(p, labels)
    assert search.best_params_["n_knots"] in (4, 6, 10)
    res = cross_validate(cn.SplineCalibrator(n_knots=search.best_params_["n_knots"]), p, labels,
                         scoring=_neg_top1_ece, cv=cv)
    raw = np.mean([-cn.ece(p[b].max(axis=1), p[b].argmax(axis=1) == labels[b], n_bins=15) for _, b in cv.split(p)])
    assert res["test_score"].mean() > raw  # the spline recalibrates the too-sharp probabilities


def test_calibration_scorer_matches_a_hand_written_scorer_for_every_output_form():
    z, labels = _logits(seed=4, n=1200)
    p = cn.softmax(z)
    scorer = cn.calibration_scorer("ece", n_bins=15)
    ts = cn.TemperatureScaling().fit(z, labels)  # (N, K) -> (N, K)
    assert scorer(ts, z, labels) == pytest.approx(_neg_top1_ece(ts, z, labels))
    sp = cn.SplineCalibrator().fit(p, labels)  # (N, K) -> (N,)
    assert scorer(sp, p, labels) == pytest.approx(_neg_top1_ece(sp, p, labels))
    conf, correct = p.max(axis=1), p.argmax(axis=1) == labels
    iso = cn.IsotonicCalibrator().fit(conf, correct)  # (N,) -> (N,)
    assert scorer(iso, conf, correct) == pytest.approx(-cn.ece(iso.transform(conf), correct, n_bins=15))
    assert cn.calibration_scorer("hmr")(iso, conf, correct) == pytest.approx(cn.hmr(iso.transform(conf), correct))
    search = GridSearchCV(cn.SplineCalibrator(), {"n_knots": [4, 8]}, scoring=scorer, cv=3).fit(p, labels)
    assert search.best_params_["n_knots"] in (4, 8)
    with pytest.raises(ValueError, match="metric must be one of"):
        cn.calibration_scorer("accuracy")
