"""The split study of calibnb.papers.gupta2021 against the one-score calibrators and the library metrics."""

import matplotlib
import numpy as np
import pytest

import calibnb as cn
from calibnb.papers import gupta2021 as paper
from calibnb.papers.gupta2021 import _top_order
from figure_ticks import shown_ticks

matplotlib.use("Agg")


def _network(seed=0, n=3000, k=6, scale=4.0, quantise=None):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * scale
    p = np.exp(z / 2.5 - (z / 2.5).max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = (rng.random((n, 1)) < np.cumsum(p, axis=1)).argmax(axis=1)  # truth from softer probabilities
    if quantise:  # ties among the probabilities, as in float32 probability files
        z = np.log(np.maximum(np.round(np.exp(z - z.max(1, keepdims=True)) * quantise) / quantise, 1e-30))
    return z, y


def _scores(seed=1, n=2000, m=4, ties=False):
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.05, 1.0, (n, m))
    if ties:
        s = np.round(s, 2)
    c = rng.random((n, m)) < s ** 1.5
    return s, c, rng.uniform(0.0, 1.0, (n // 2, m))


@pytest.mark.parametrize("ties", [False, True])
def test_spline_columns_equal_the_spline_calibrator_per_column(ties):
    s, c, new = _scores(ties=ties)
    for knots in (3, 6, 14):
        out = paper.spline_columns(s, c, new, n_knots=knots)
        for j in range(s.shape[1]):
            ref = cn.SplineCalibrator(n_knots=knots).fit(s[:, j], c[:, j]).transform(new[:, j])
            np.testing.assert_allclose(out[:, j], ref, atol=1e-12)


@pytest.mark.parametrize("ties", [False, True])
def test_isotonic_columns_equal_the_isotonic_calibrator_per_column(ties):
    s, c, new = _scores(seed=2, ties=ties)
    out = paper.isotonic_columns(s, c, new)
    for j in range(s.shape[1]):
        ref = cn.IsotonicCalibrator().fit(s[:, j], c[:, j]).transform(new[:, j])
        np.testing.assert_allclose(out[:, j], ref, atol=1e-12)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n_bins", [2, 15, 25])
def test_histogram_columns_equal_histogram_binning_per_column(ties, n_bins):
    s, c, new = _scores(seed=3, ties=ties)
    s[:5, 0] = [0.0, 1.0, 0.2, 0.4, 0.6]  # bin edges and both ends
    new[:3, 1] = [0.0, 1.0, 0.5]
    out = paper.histogram_columns(s, c, new, n_bins=n_bins)
    for j in range(s.shape[1]):
        ref = cn.HistogramBinning(n_bins=n_bins).fit(s[:, j], c[:, j]).transform(new[:, j])
        np.testing.assert_array_equal(out[:, j], ref)
    with pytest.raises(ValueError, match="n_bins"):
        paper.histogram_columns(s, c, new, n_bins=0)


@pytest.mark.parametrize("quantise", [None, 20])
def test_top_order_is_the_stable_full_sort(quantise):
    z, _ = _network(quantise=quantise)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    full = np.argsort(-p, axis=1, kind="stable")
    for r in (1, 3, 5, 6):
        np.testing.assert_array_equal(_top_order(p, r), full[:, :r])
    # a hint (issue 31: the softmax's own order for temperature scaling) never changes the result: right, wrong
    # and partly right guesses, on tied and untied probabilities
    q = np.exp((z - z.max(1, keepdims=True)) / 1.7)
    q /= q.sum(1, keepdims=True)
    full_q = np.argsort(-q, axis=1, kind="stable")
    rng = np.random.default_rng(4)
    guesses = {"softmax order": full, "exact": full_q, "random": np.argsort(rng.random(q.shape), axis=1),
               "reversed": full_q[:, ::-1], "ties reversed": np.where(rng.random(q.shape) < 0.5, full, full_q)}
    for name, hint in guesses.items():
        for r in (1, 3, 5):
            np.testing.assert_array_equal(_top_order(q, r, hint), full_q[:, :r], err_msg=f"{name}, r={r}")


@pytest.mark.parametrize("quantise", [None, 20])
def test_evaluate_split_matches_the_library_metrics(quantise):
    z, y = _network(seed=3, quantise=quantise)
    net = paper.network_scores(z, y)
    cal, test = np.arange(1500), np.arange(1500, 3000)
    res = paper.evaluate_split(net, cal, test, classwise=True)
    p = net.probs
    # uncalibrated: every column is the library metric of the library reduction
    for r in range(1, 6):
        assert res["uncalibrated"][f"ks_top{r}"] == pytest.approx(cn.ks_error(*cn.top_r(p[test], y[test], r=r)), abs=1e-12)
    for r in (2, 3):
        assert res["uncalibrated"][f"ks_within_top{r}"] == pytest.approx(
            cn.ks_error(*cn.within_top_r(p[test], y[test], r=r)), abs=1e-12)
    assert res["uncalibrated"]["classwise_ks"] == pytest.approx(cn.classwise_ks(p[test], y[test]), abs=1e-12)
    # temperature scaling: the same metrics of the rescaled probabilities
    ts = cn.TemperatureScaling().fit(z[cal], y[cal])
    q = ts.transform(z[test])
    assert res["temperature"]["ks_top2"] == pytest.approx(cn.ks_error(*cn.top_r(q, y[test], r=2)), abs=1e-12)
    assert res["temperature"]["ece"] == pytest.approx(cn.ece(*cn.top_r(q, y[test], r=1), n_bins=25), abs=1e-12)
    # the spline: one SplineCalibrator per score
    for r in (1, 3):
        f = cn.SplineCalibrator(n_knots=6, r=r).fit(p[cal], y[cal])
        s, c = cn.top_r(p[test], y[test], r=r)
        assert res["spline"][f"ks_top{r}"] == pytest.approx(cn.ks_error(f.transform(p[test]), c), abs=1e-12)
    f = cn.SplineCalibrator(n_knots=14, r=2, mode="within").fit(p[cal], y[cal])
    assert res["spline"]["ks_within_top2"] == pytest.approx(
        cn.ks_error(f.transform(p[test]), cn.within_top_r(p[test], y[test], r=2)[1]), abs=1e-12)
    # top-1 recalibration never changes the prediction
    for method in ("temperature", "isotonic", "histogram", "spline"):
        assert res[method]["accuracy"] == res["uncalibrated"]["accuracy"]


def test_all_ranks_accuracy_equals_a_loop_of_spline_calibrators():
    z, y = _network(seed=4, k=5)
    net = paper.network_scores(z, y)
    cal, test = np.arange(1500), np.arange(1500, 3000)
    p = net.probs
    rec = np.column_stack([cn.SplineCalibrator(n_knots=6, r=r).fit(p[cal], y[cal]).transform(p[test]) for r in range(1, 6)])
    order = np.argsort(-p[test], axis=1, kind="stable")
    expected = np.mean(order[np.arange(test.size), rec.argmax(axis=1)] == y[test])
    got = paper.evaluate_split(net, cal, test, methods=("spline",))["spline"]["accuracy_all_ranks"]
    assert got == pytest.approx(expected, abs=1e-15)
    # only the top ranks: re-ranking among ranks 1..1 is the uncalibrated prediction
    one = paper.evaluate_split(net, cal, test, methods=("spline",), all_ranks_max=1)["spline"]
    assert one["accuracy_all_ranks"] == one["accuracy"]


def test_evaluate_split_options_and_bad_input():
    z, y = _network(seed=5)
    net = paper.network_scores(z, y)
    cal, test = np.arange(1500), np.arange(1500, 3000)
    res = paper.evaluate_split(net, cal, test, methods=("uncalibrated", "isotonic"), classwise=True, classwise_fits=False)
    assert set(res) == {"uncalibrated", "isotonic"}
    assert np.isnan(res["isotonic"]["classwise_ks"]) and 0 <= res["uncalibrated"]["classwise_ks"] <= 1
    with pytest.raises(TypeError, match="net must be a NetworkScores"):
        paper.evaluate_split((z, y), cal, test)
    with pytest.raises(ValueError, match="overlap"):
        paper.evaluate_split(net, cal, cal)
    with pytest.raises(ValueError, match="methods"):
        paper.evaluate_split(net, cal, test, methods=("platt",))
    with pytest.raises(ValueError, match="test_index"):
        paper.evaluate_split(net, cal, np.array([5000]))


def test_spline_columns_bad_input():
    s, c, new = _scores()
    with pytest.raises(ValueError, match="same shape"):
        paper.spline_columns(s, c[:, :2], new)
    with pytest.raises(ValueError, match="s_new"):
        paper.spline_columns(s, c, new[:, :2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        paper.spline_columns(s * 2, c, new)
    with pytest.raises(ValueError, match="n_knots"):
        paper.spline_columns(s[:3], c[:3], new, n_knots=6)
    for fn in (paper.isotonic_columns, paper.histogram_columns):
        with pytest.raises(ValueError, match="same shape"):
            fn(s, c[:-1], new)
        with pytest.raises(ValueError, match="s_new"):
            fn(s, c, new[:, :1])
        with pytest.raises(ValueError, match=r"s_new must hold finite scores in \[0, 1\]"):
            fn(s, c, new - 1.0)


def test_spline_graph_data_uses_the_spline_derivative_over_the_full_range():
    rng = np.random.default_rng(6)
    s = rng.uniform(0.29, 1.0, 4000)
    y = rng.random(4000) < s ** 2
    g = paper.spline_graph_data(s, y, n_knots=6)
    np.testing.assert_array_equal(g.score, np.sort(s))
    assert g.score[0] == s.min() and g.window_size == 0
    fit = cn.SplineCalibrator(n_knots=6).fit(s, y)
    np.testing.assert_allclose(g.probability, np.interp(np.sort(s), fit.scores_, fit.calibrated_), atol=1e-12)
    assert g.ks == pytest.approx(cn.ks_error(s, y), abs=1e-15)
    with pytest.raises(ValueError, match="conf"):
        paper.spline_graph_data(s + 1, y)


def test_plot_graph_rows_draws_four_panels_per_row():
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(7)
    s = rng.uniform(0.3, 1.0, 3000)
    g = paper.spline_graph_data(s, rng.random(3000) < s, n_knots=6)
    fig = paper.plot_graph_rows([("before", g), ("after", g)], title="t", max_points=200)
    assert len(fig.axes) == 8
    lines = [ln for ln in fig.axes[2].get_lines() if ln.get_gid() == "probability"]
    assert lines and lines[0].get_label() == "probability (spline derivative)"
    assert len(lines[0].get_xdata()) <= 203
    # at most _PANEL_TICKS + 1 labelled ticks an axis (matplotlib's default put 6 on some here): ticks are most of
    # these figures' drawing time (issue 31)
    shown = shown_ticks(fig.axes)
    assert 2 <= min(shown) and max(shown) <= paper._PANEL_TICKS + 1, shown
    plt.close(fig)
    with pytest.raises(ValueError, match="rows"):
        paper.plot_graph_rows([])
    with pytest.raises(TypeError, match="KSGraphData"):
        paper.plot_graph_rows([("x", object())])


def test_paired_ks_difference_ci_agrees_with_the_library_bootstrap():
    rng = np.random.default_rng(8)
    n = 1500
    s = rng.uniform(0.4, 1.0, n)
    y = rng.random(n) < s ** 1.3
    a, b = np.clip(s * 0.97, 0, 1), s
    est, lo, hi = paper.paired_ks_difference_ci(a, b, y, n_resamples=2000, seed=0)
    assert est == pytest.approx(cn.ks_error(a, y) - cn.ks_error(b, y), abs=1e-15)
    ref = cn.paired_bootstrap_ci(cn.ks_error, (a, y), (b, y), n_resamples=2000, seed=1)
    assert ref.estimate == pytest.approx(est, abs=1e-12)
    # two Monte Carlo estimates of the same percentile interval: close, not equal
    width = ref.high - ref.low
    assert abs(lo - ref.low) < 0.15 * width and abs(hi - ref.high) < 0.15 * width
    with pytest.raises(ValueError, match="length"):
        paper.paired_ks_difference_ci(a[:-1], b, y)
    with pytest.raises(ValueError, match="level"):
        paper.paired_ks_difference_ci(a, b, y, level=1.5)


# --- sort orders shared across splits (issue 31: notebook 03 within its CPU budget) ---


def _tied_network(n=3000, k=10, seed=0):
    from calibnb.papers.gupta2021 import network_scores

    rng = np.random.default_rng(seed)
    z = np.round(rng.normal(size=(n, k)) * 3, 1)  # rounded logits: many tied probabilities
    y = (rng.random((n, 1)) < np.cumsum(np.exp(z / 3) / np.exp(z / 3).sum(1, keepdims=True), axis=1)).argmax(1)
    return network_scores(z, y)


def test_sorted_split_equals_a_stable_sort_of_the_subset():
    from calibnb.metrics.multiclass import stable_row_sort
    from calibnb.papers import gupta2021 as g

    net = _tied_network()
    n, k = net.probs.shape
    onehot = net.labels[:, None] == np.arange(k)
    rng = np.random.default_rng(1)
    perm = rng.permutation(n)
    splits = [(np.sort(perm[:1200]), np.sort(perm[1200:])),  # every item in one half
              (np.sort(perm[:1000]), np.sort(perm[1500:2700]))]  # items in neither half
    for cal, test in splits:
        split = g._SortedSplit.of(net, ("class",), lambda: net.probs, lambda: onehot, cal, test)
        for rows, idx, name in ((net.probs[cal], cal, "cal"), (net.probs[test], test, "test")):
            order, values = stable_row_sort(np.ascontiguousarray(rows.T))
            hits = np.take_along_axis(np.ascontiguousarray(onehot[idx].T), order, axis=1)
            got = (split.s_cal, split.c_cal, split.cal_order()) if name == "cal" else (
                split.s_test, split.c_test, split.o_test)
            np.testing.assert_array_equal(got[0], values)
            np.testing.assert_array_equal(got[1], hits)
            np.testing.assert_array_equal(got[2], order)
        few = split.rows([3, 0])
        np.testing.assert_array_equal(few.s_test, split.s_test[[3, 0]])
        np.testing.assert_array_equal(few.cal_order(), split.cal_order()[[3, 0]])
    # a split whose indices are not increasing: no shared order (the fits sort, ties by position in the index)
    assert g._SortedSplit.of(net, ("class",), lambda: net.probs, lambda: onehot, perm[:1200], np.sort(perm[1200:])) is None


def test_evaluate_split_with_shared_orders_equals_sorting_each_time(monkeypatch):
    from calibnb.papers import gupta2021 as g

    net = _tied_network()
    rng = np.random.default_rng(2)
    splits = [(np.arange(0, 3000, 2), np.arange(1, 3000, 2)), (np.arange(1500), np.arange(1500, 3000)),
              (np.arange(0, 3000, 3), np.arange(1, 3000, 3)),  # a third of the items in neither split
              (rng.permutation(1500), np.arange(1500, 3000))]  # not increasing: sorted per fit
    kw = dict(classwise=True, all_ranks=True, n_knots_ece=5)
    shared = [g.evaluate_split(net, cal, test, **kw) for cal, test in splits]
    assert {k[0] for k in net._orders} == {"rank", "class", "ranks"}
    monkeypatch.setattr(g._SortedSplit, "of", classmethod(lambda cls, *a: None))  # every fit sorts its own columns
    fresh = [g.evaluate_split(g.network_scores(net.logits, net.labels), cal, test, **kw) for cal, test in splits]
    assert shared == fresh


def test_scaling_fit_is_fitted_once_per_split_and_equals_a_fresh_fit(monkeypatch):
    net = _tied_network()
    cal, test = np.arange(0, 3000, 2), np.arange(1, 3000, 2)
    def fresh(method, rows):
        # vector scaling starts from the temperature fit of the same rows (no search for a start)
        z, y = net.logits[rows], net.labels[rows]
        if method == "temperature":
            return cn.TemperatureScaling().fit(z, y)
        return cn.VectorScaling(init_temperature=cn.TemperatureScaling().fit(z, y).temperature_).fit(z, y)

    for method in ("temperature", "vector"):
        model = paper.scaling_fit(net, cal, method)
        np.testing.assert_array_equal(model.transform(net.logits[test]), fresh(method, cal).transform(net.logits[test]))
        assert paper.scaling_fit(net, list(cal), method) is model  # same rows: the same fitted model
        other = paper.scaling_fit(net, test, method)
        assert other is not model
        np.testing.assert_array_equal(other.transform(net.logits[cal]), fresh(method, test).transform(net.logits[cal]))
    # evaluate_split fits through it: a second call on the same split fits nothing
    fits = []
    for cls in (cn.TemperatureScaling, cn.VectorScaling):
        original = cls.fit
        monkeypatch.setattr(cls, "fit", lambda self, *a, _f=original, **kw: fits.append(type(self)) or _f(self, *a, **kw))
    first = paper.evaluate_split(net, cal, test, methods=("temperature", "vector"), all_ranks=False)
    assert fits == []  # fitted above already
    fresh_net = paper.network_scores(net.logits, net.labels)
    assert paper.evaluate_split(fresh_net, cal, test, methods=("temperature", "vector"), all_ranks=False) == first
    assert fits == [cn.TemperatureScaling, cn.VectorScaling]
    paper.evaluate_split(fresh_net, cal, test, methods=("temperature", "vector"), all_ranks=False)
    assert len(fits) == 2
    with pytest.raises(ValueError, match="method"):
        paper.scaling_fit(net, cal, "spline")
    with pytest.raises(TypeError, match="net"):
        paper.scaling_fit(net.logits, cal)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_first_argmax_of_fits_equals_the_argmax_of_every_fit(seed):
    """The all-ranks re-ranking interpolates only values that can win; the winner is that of every value.

    Forty fits on tied, clipped and constant scores; the new values include ties between columns, values
    outside every fit's range and items whose best value is 0 (a spline clipped at 0), so the bound is
    reached and a column that only ties the best must not win (argmax takes the first).
    """
    from calibnb.papers.gupta2021 import _first_argmax_of_fits, _interp_columns

    rng = np.random.default_rng(seed)
    n_fit, n, m = 400, 300, 40
    xp = np.sort(np.round(rng.uniform(0, 1, (m, n_fit)), 2), axis=1)  # ties inside each fit's scores
    fp = rng.uniform(-0.2, 1.2, (m, n_fit)) * rng.uniform(0, 1, (m, 1)) ** np.arange(m)[:, None] ** 0.5
    fp[3] = 0.25  # a constant fit
    fp[5] = -0.5  # a fit clipped to 0 everywhere
    x = np.round(rng.uniform(-0.1, 1.1, (n, m)), 2)
    x[:, 7] = x[:, 3]  # columns 3 and 7: the same new values
    fp[7], xp[7] = fp[3], xp[3]  # and the same fit: 7 ties 3 on every item and never wins
    expected = np.argmax(np.clip(_interp_columns(x, xp, fp), 0.0, 1.0), axis=1)
    got = _first_argmax_of_fits(x, xp, fp)
    np.testing.assert_array_equal(got, expected)
    assert not np.any(got == 7)
