"""The audit's memory (issue 27): bounded bootstrap blocks, and the environment of the audit's kernel.

The measured peaks are in benchmarks/README.md ("Peak memory and time of an
audit"); these tests pin what makes them hold: every bootstrap of
:func:`calibnb.metric_summary` works on blocks of resamples whose size does
not grow with the number of resamples, the intervals do not depend on the
block size, and the command's notebook kernel runs with NumPy's kernels and
glibc's fixed mmap threshold (which change no number of the audit).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from calibnb import uncertainty
from calibnb.apps import audit, report, summary


def _data(n=600, k=4, seed=3):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 2
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = np.where(rng.uniform(size=n) < 0.7, p.argmax(1), rng.integers(0, k, n))
    h = np.array([rng.multinomial(10, 0.5 * pi + 0.5 / k) for pi in p])
    return p, y, h


def _summary(p, y, h, **kw):
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    w = np.random.default_rng(0).uniform(0.5, 2.0, p.shape[0])
    return summary.metric_summary(conf, correct, probs=p, labels=y, votes=h, sample_weight=w, n_resamples=40,
                                  heavy_resamples=12, seed=5, **kw)


def test_summary_intervals_do_not_depend_on_the_block_size(monkeypatch):
    """The per-row-mean and class-wise rows draw their resamples in blocks: any block size, the same resamples.

    The draws are equal bit for bit (tests/test_uncertainty.py); the metric of
    each resample is too, except for the last bit of the rows whose resample
    values come from a matrix product over the block (BLAS rounds a product of
    3 rows and one of 40 differently): those agree to 1e-15. At the audit's
    fixed block size every number is reproducible bit for bit (tests/apps/test_audit.py).
    """
    p, y, h = _data()
    monkeypatch.setattr(summary, "_BLOCK", 10**9)  # every resample in one block
    whole = _summary(p, y, h)
    monkeypatch.setattr(summary, "_BLOCK", 3 * p.shape[0])  # three resamples per block
    small = _summary(p, y, h)
    kinds = {s.key: s.kind for s in summary._specs(15)}
    blocked = whole.key.map(kinds).isin(["mean", "classwise"])
    assert {"nbr", "dist_ce", "ks_classwise", "classwise_ece"} <= set(whole.key[blocked])
    assert whole["low"].notna().sum() > 15
    pd.testing.assert_frame_equal(whole[~blocked], small[~blocked], check_exact=True)
    pd.testing.assert_frame_equal(whole[blocked].drop(columns=["low", "high"]),
                                  small[blocked].drop(columns=["low", "high"]), check_exact=True)
    for c in ("low", "high"):
        np.testing.assert_allclose(whole.loc[blocked, c].astype(float), small.loc[blocked, c].astype(float),
                                   rtol=0, atol=1e-15)


def test_every_bootstrap_of_the_summary_works_on_bounded_blocks(monkeypatch):
    """No bootstrap of the summary holds more than its block of (resamples x rows) weights or indices at once."""
    p, y, h = _data(n=500)
    n = p.shape[0]
    bound = 4 * n  # elements: at most four resamples per block here, whatever n_resamples is
    monkeypatch.setattr(summary, "_BLOCK", bound)
    monkeypatch.setattr(uncertainty, "_BATCH_ELEMENTS", bound)
    sizes = []
    draw = uncertainty._multiplicities

    def recording_draw(rng, size, m):
        sizes.append((size, m))
        return draw(rng, size, m)

    monkeypatch.setattr(uncertainty, "_multiplicities", recording_draw)
    statistic = uncertainty._statistic
    shapes = []

    def recording_statistic(*args, **kwargs):
        f = statistic(*args, **kwargs)

        def g(i, axis=-1):
            shapes.append(np.shape(i))
            return f(i, axis=axis)

        return g

    monkeypatch.setattr(uncertainty, "_statistic", recording_statistic)
    t = _summary(p, y, h)
    assert t["low"].notna().sum() > 15
    assert sizes and shapes  # the weights path (calibnb metrics, means, class-wise) and scipy's indices (loops)
    assert sum(s for s, _ in sizes) >= 40  # every resample was drawn, in blocks
    assert max(s * m for s, m in sizes) <= bound, sizes
    assert max(int(np.prod(s)) for s in shapes) <= bound, shapes


@pytest.mark.parametrize("user", [None, "numba"])
def test_the_audit_kernel_gets_the_memory_environment(monkeypatch, tmp_path, user):
    """render_report starts the notebook's kernel with _KERNEL_ENVIRONMENT, keeps what the user set, restores it."""
    names = list(audit._KERNEL_ENVIRONMENT)
    assert names == ["CALIBNB_KERNEL", "MALLOC_MMAP_THRESHOLD_"]
    for k in names:
        monkeypatch.delenv(k, raising=False)
    if user is not None:
        monkeypatch.setenv("CALIBNB_KERNEL", user)
    seen = {}

    def fake_run_notebook(*args, **kwargs):  # what a kernel started here would inherit
        seen.update({k: os.environ.get(k) for k in names})
        return report.NotebookRun(stem="00", ok=False, error="stopped by the test", traceback=None, elapsed=0.0,
                                  results=None, output_path=tmp_path / "x.ipynb", parameters={})

    monkeypatch.setattr(report, "run_notebook", fake_run_notebook)
    with pytest.raises(RuntimeError, match="stopped by the test"):
        audit.render_report({"predictions_path": "x.csv"}, tmp_path / "run")
    assert seen == {"CALIBNB_KERNEL": user or "numpy", "MALLOC_MMAP_THRESHOLD_": "131072"}
    assert os.environ.get("CALIBNB_KERNEL") == user and "MALLOC_MMAP_THRESHOLD_" not in os.environ


def test_numpy_kernels_change_no_number_of_the_audit(monkeypatch):
    """The audit's numbers with CALIBNB_KERNEL=numpy (the command's kernel) equal those with numba's kernels."""
    pytest.importorskip("numba")
    p, y, _ = _data(n=800, k=3, seed=11)
    out = {}
    for choice in ("numba", "numpy"):
        monkeypatch.setenv("CALIBNB_KERNEL", choice)
        pred = audit.predictions_from_arrays(probs=p, labels=y)
        result = audit.run_audit(pred, n_resamples=20, heavy_resamples=6, n_folds=3, seed=2)
        result["warnings"] = []
        out[choice] = audit.audit_json(result)
    assert out["numba"] == out["numpy"]


def _band_as_before(conf, correct, w, n_resamples, level, seed):
    """The consistency band as corp_reliability computed it with the whole (n_resamples, G) matrix of curves."""
    from calibnb import corp

    grp = corp._Groups(*corp._check_inputs(conf, correct, w))
    rng = np.random.default_rng(seed)
    curves = np.empty((n_resamples, grp.g))
    n, pos = grp.conf.shape[0], np.arange(grp.g)
    for k in range(n_resamples):
        idx = rng.integers(0, n, n).astype(np.intp, copy=False)
        ystar = rng.random(n) < grp.conf[idx]
        g, wi = grp.group[idx], grp.w[idx]
        cur = corp._pav(np.bincount(g, weights=wi * ystar, minlength=grp.g), np.bincount(g, weights=wi, minlength=grp.g))
        have = ~np.isnan(cur)
        last = np.maximum.accumulate(np.where(have, pos, -1))
        curves[k] = np.where(last >= 0, cur[np.maximum(last, 0)], cur[np.argmax(have)])
    alpha = (1.0 - level) / 2.0
    return np.quantile(curves, [alpha, 1.0 - alpha], axis=0), rng


@pytest.mark.parametrize("block", [None, 7 * 50, 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_corp_band_in_bounded_blocks_is_the_band_of_the_whole_matrix(monkeypatch, block, weighted):
    """corp_reliability keeps each resampled curve as its steps and takes the quantiles in blocks of columns:
    the band (and the generator's state after it) equal the whole matrix's bit for bit, at any block size."""
    from calibnb import corp

    if block is not None:
        monkeypatch.setattr(corp, "_BAND_BLOCK", block)
    rng = np.random.default_rng(4)
    conf = np.round(rng.beta(5, 2, 3000), 3)  # ties: fewer distinct confidences than rows
    correct = rng.uniform(size=conf.size) < conf ** 1.5
    w = rng.uniform(0.2, 3.0, conf.size) if weighted else None
    gen = np.random.default_rng(9)
    r = corp.corp_reliability(conf, correct, sample_weight=w, n_resamples=50, level=0.9, seed=gen)
    (low, high), ref_gen = _band_as_before(conf, correct, w, 50, 0.9, 9)
    assert r.x.size > 300 and np.isfinite(r.band_low).all()
    np.testing.assert_array_equal(r.band_low, low, strict=True)
    np.testing.assert_array_equal(r.band_high, high, strict=True)
    assert gen.bit_generator.state == ref_gen.bit_generator.state  # the same draws consumed
