"""scikit-learn's own estimator checks on every calibrator (issue 25).

Every check runs (``parametrize_with_checks``); the ones that cannot apply to a
calibrator are listed below with the reason, per calibrator, and are strict
expected failures: a listed check that starts passing fails this test, so the
list stays exact. What is left after the list passes, among it pickling,
cloning, ``get_params``/``set_params``, ``n_features_in_``, idempotent fits,
inputs left unmodified, fit returning self, ``NotFittedError`` before ``fit``,
sparse input refused with a clear message and non-array inputs (lists,
pandas) converted before inspection.
"""

from __future__ import annotations

import functools

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import calibnb as cn

REASONS = {
    "one_d": "fit/transform take one score per prediction (1-D), like every binary calibrator of calibnb; "
             "the check passes a 2-D feature matrix, which is refused with 'conf must be 1-D'",
    "binary_y": "y is the 0/1 correctness of a prediction; the check passes multiclass y, refused with "
                "'correct must hold only 0/1'",
    "probs": "X must be class probabilities (values in [0, 1], rows summing to 1); the check passes arbitrary "
             "real features, refused with 'probs has ... values below 0'",
    "labels": "y must be class indices of X's K columns (logits); the check's y has more classes than X has "
              "columns, refused with 'labels ... not class indices'",
    "arg_names": "fit names its data arguments after what they are (logits, labels), as every calibnb function "
                 "does, instead of X, y",
    "messages": "the error names the argument and the problem in calibnb's words (e.g. 'logits is empty', "
                "'logits has 3 columns but the fit had 4'); the check looks for scikit-learn's wording",
    "dtype": "object, string and complex input raise TypeError naming the argument (calibnb.validation, used by "
             "every public function); the check expects a ValueError in scikit-learn's wording",
}

_GENERIC = ["check_dict_unchanged", "check_dont_overwrite_parameters", "check_estimators_dtypes",
            "check_estimators_fit_returns_self", "check_estimators_overwrite_params", "check_f_contiguous_array_estimator",
            "check_fit2d_predict1d", "check_fit_score_takes_y", "check_methods_sample_order_invariance",
            "check_methods_subset_invariance", "check_n_features_in_after_fitting", "check_readonly_memmap_input",
            "check_positive_only_tag_during_fit"]
_TRANSFORMING = ["check_estimators_pickle", "check_fit_check_is_fitted", "check_fit_idempotent", "check_n_features_in",
                 "check_pipeline_consistency", "check_transformer_data_not_an_array", "check_transformer_general",
                 "check_transformer_preserve_dtypes"]
_DTYPE = ["check_complex_data", "check_dtype_object"]
_ONE_D = {"one_d": _GENERIC + _TRANSFORMING + ["check_estimators_nan_inf"], "dtype": _DTYPE,
          "messages": ["check_estimators_empty_data_messages", "check_fit2d_1feature", "check_fit2d_1sample"]}

#: calibrator class -> {reason key: the checks that fail for that reason}
EXPECTED_FAILURES = {
    "TemperatureScaling": {
        "arg_names": ["check_fit_score_takes_y"],
        "labels": ["check_estimators_fit_returns_self", "check_estimators_overwrite_params", "check_readonly_memmap_input"],
        "messages": ["check_n_features_in_after_fitting", "check_estimators_empty_data_messages", "check_fit2d_1feature",
                     "check_fit2d_predict1d"],
        "dtype": _DTYPE},
    "SplineCalibrator": {"probs": _GENERIC + _TRANSFORMING + ["check_estimators_nan_inf"], "dtype": _DTYPE,
                         "messages": ["check_estimators_empty_data_messages", "check_fit2d_1feature", "check_fit2d_1sample"]},
    "PlattScaling": _ONE_D, "IsotonicCalibrator": _ONE_D, "HistogramBinning": _ONE_D, "AverageBaseline": _ONE_D,
    "BinaryBaseline": _ONE_D,
    "CorrectnessClassifier": {"binary_y": _GENERIC, "dtype": _DTYPE,
                              "messages": ["check_fit2d_1feature"]},
    "ConsCal": {"binary_y": _GENERIC + ["check_dtype_object", "check_estimators_nan_inf"],
                "messages": ["check_complex_data", "check_estimators_empty_data_messages", "check_fit2d_1feature"]},
}
EXPECTED_FAILURES["VectorScaling"] = EXPECTED_FAILURES["TemperatureScaling"]

ESTIMATORS = [cn.TemperatureScaling(), cn.VectorScaling(), cn.SplineCalibrator(), cn.PlattScaling(),
              cn.IsotonicCalibrator(), cn.HistogramBinning(), cn.AverageBaseline(), cn.BinaryBaseline(),
              cn.CorrectnessClassifier(seed=0),  # seeded: calibnb's seed=None draws fresh entropy on every fit
              cn.ConsCal()]


def expected_failed_checks(estimator) -> dict[str, str]:
    table = EXPECTED_FAILURES[type(estimator).__name__]
    return {check: REASONS[reason] for reason, checks in table.items() for check in checks}


def test_every_calibrator_is_checked():
    calibrators = {n for n in cn.__all__ if isinstance(getattr(cn, n), type) and issubclass(getattr(cn, n), cn.Calibrator)
                   and getattr(cn, n) is not cn.Calibrator}
    assert calibrators == {type(e).__name__ for e in ESTIMATORS} == set(EXPECTED_FAILURES)
    for table in EXPECTED_FAILURES.values():
        checks = [c for cs in table.values() for c in cs]
        assert len(checks) == len(set(checks)), "a check is listed under two reasons"


def check_name(check) -> str:
    """The name ``expected_failed_checks`` lists a check by: its function's, without the bound arguments."""
    return (check.func if isinstance(check, functools.partial) else check).__name__


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    """A check passes, or fails where EXPECTED_FAILURES lists it (strictly: a listed check that passes fails).

    The expected failures are marked here, not by ``parametrize_with_checks(expected_failed_checks=...)``: pytest
    formats the traceback of every failure it reports, xfailed ones too, and for scikit-learn's checks it parsed
    ``estimator_checks.py`` again for each frame, about 45 s of the suite's CPU for the 228 listed checks.
    """
    reason = expected_failed_checks(estimator).get(check_name(check))
    if reason is None:
        check(estimator)
        return
    try:
        check(estimator)
    except Exception:  # noqa: BLE001 - any failure is the expected one (what the strict marker accepted)
        pass
    else:
        pytest.fail(f"{check_name(check)} is listed as an expected failure of {type(estimator).__name__} "
                    f"({reason}) and passed: remove it from EXPECTED_FAILURES")
    pytest.xfail(reason)  # outside the except block: no failure chained to format


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_n_features_in_is_set_by_fit(estimator):
    import numpy as np

    rng = np.random.default_rng(0)
    n = 60
    name = type(estimator).__name__
    if name in ("TemperatureScaling", "VectorScaling"):
        X, y, k = rng.normal(size=(n, 3)), np.arange(n) % 3, 3
    elif name == "SplineCalibrator":
        z = rng.normal(size=(n, 4))
        X, y, k = np.exp(z) / np.exp(z).sum(1, keepdims=True), np.arange(n) % 4, 4
    elif name == "CorrectnessClassifier":
        X, y, k = rng.normal(size=(n, 2)), np.arange(n) % 2, 2
    elif name == "ConsCal":
        X, y, k = rng.integers(0, 3, size=(n, 5)), np.arange(n) % 2, 5
    else:
        X, y, k = rng.uniform(size=n), np.arange(n) % 2, 1
    assert estimator.fit(X, y).n_features_in_ == k
