"""Papermill cases of notebooks/03_gupta2021_ks_splines.ipynb (Gupta et al. 2021).

``results`` is the parsed results JSON: ``results["results"]["methods"][network][method][metric]``
holds each network's test metrics (fractions) for every recalibration method.
"""

import math

from nbcase import Case

N_CIFAR10 = 9   # mirrored CIFAR-10 networks
N_CIFAR100 = 9  # mirrored CIFAR-100 networks


def _methods(results):
    return results["results"]["methods"]


def _check_spline_claims(results):
    """The issue's assertions, which must hold on any run."""
    for name, rows in _methods(results).items():
        unc, spline = rows["uncalibrated"], rows["spline"]
        if unc["ks_top1"] > 0.02:
            assert spline["ks_top1"] < unc["ks_top1"], (name, unc["ks_top1"], spline["ks_top1"])
        if name.startswith("cifar10/"):
            assert spline["ks_top1"] < 0.02, (name, spline["ks_top1"])
        assert spline["accuracy"] == unc["accuracy"], name
        assert rows["temperature"]["accuracy"] == unc["accuracy"], name
        for method, row in rows.items():
            for metric, value in row.items():
                assert math.isfinite(value) and 0.0 <= value <= 1.0, (name, method, metric, value)
    failed = [c["name"] for c in results["claims"] if c["status"] == "fails"]
    assert not failed, failed


def check_default(results):
    methods = _methods(results)
    assert len(methods) == N_CIFAR10 + N_CIFAR100, sorted(methods)
    assert set(next(iter(methods.values()))) == {"uncalibrated", "temperature", "vector", "isotonic", "histogram", "spline"}
    _check_spline_claims(results)
    eq8 = results["results"]["eq8"]
    assert abs(eq8["one_signed_ks"] - eq8["one_signed_ece_limit"]) < 1e-9
    assert eq8["two_signed_ks"] < eq8["two_signed_ece_limit"]
    prop = results["results"]["proposition_4_1"]
    assert prop["max_error_5000_6"] < 0.05 < prop["uncalibrated_max_error"]
    # CIFAR-100 networks are far more over-confident than CIFAR-10 ones before recalibration
    c10 = [r["uncalibrated"]["ks_top1"] for n, r in methods.items() if n.startswith("cifar10/")]
    c100 = [r["uncalibrated"]["ks_top1"] for n, r in methods.items() if n.startswith("cifar100/")]
    assert sorted(c100)[len(c100) // 2] > sorted(c10)[len(c10) // 2]
    names = {c["name"] for c in results["claims"]}
    assert any("Eq. 8" in n for n in names) and any("Prop. 4.1" in n for n in names)


def check_n_knots_10_cifar10(results, default):
    """More knots, one data set: same split, so the non-spline methods are unchanged."""
    _check_spline_claims(results)
    methods, base = _methods(results), _methods(default)
    assert len(methods) == N_CIFAR10 and all(n.startswith("cifar10/") for n in methods)
    assert results["results"]["params"]["n_knots"] == 10
    for name, rows in methods.items():
        for method in ("uncalibrated", "temperature", "vector", "isotonic", "histogram"):
            for metric, value in rows[method].items():
                assert math.isclose(value, base[name][method][metric], rel_tol=1e-9, abs_tol=1e-12), (name, method, metric)
    changed = [n for n in methods if methods[n]["spline"]["ks_top1"] != base[n]["spline"]["ks_top1"]]
    assert changed, "n_knots=10 left every spline KS unchanged"
    # the within-top-2 spline uses n_knots_within, which did not change
    for name in methods:
        assert math.isclose(methods[name]["spline"]["ks_within_top2"], base[name]["spline"]["ks_within_top2"], rel_tol=1e-12)


def check_cifar100_seed_1(results, default):
    """Another split of the CIFAR-100 networks: numbers move by sampling noise only."""
    _check_spline_claims(results)
    methods, base = _methods(results), _methods(default)
    assert len(methods) == N_CIFAR100 and all(n.startswith("cifar100/") for n in methods)
    moved = 0
    for name, rows in methods.items():
        a, b = rows["uncalibrated"]["ks_top1"], base[name]["uncalibrated"]["ks_top1"]
        moved += a != b
        assert abs(a - b) < 0.02, (name, a, b)
        assert abs(rows["uncalibrated"]["accuracy"] - base[name]["uncalibrated"]["accuracy"]) < 0.03, name
    assert moved, "seed=1 gave the same split as seed=0"


def check_subset_small_calibration(results, default):
    """Two architectures, 20% calibration: the spline still helps the over-confident nets."""
    _check_spline_claims(results)
    methods = _methods(results)
    assert set(methods) == {"cifar10/lenet_5", "cifar10/resnet56", "cifar100/lenet_5", "cifar100/resnet56"}, sorted(methods)
    assert results["results"]["params"]["calibration_fraction"] == 0.2
    for name in ("cifar10/resnet56", "cifar100/resnet56"):
        assert methods[name]["spline"]["ks_top1"] < 0.5 * methods[name]["uncalibrated"]["ks_top1"], name


CASES = [
    Case("n_knots_10_cifar10", {"n_knots": 10, "datasets": ["cifar10"]}, check_n_knots_10_cifar10),
    Case("cifar100_seed_1", {"datasets": ["cifar100"], "seed": 1}, check_cifar100_seed_1),
    Case("subset_small_calibration", {"models": ["resnet56", "lenet_5"], "calibration_fraction": 0.2},
         check_subset_small_calibration),
]
