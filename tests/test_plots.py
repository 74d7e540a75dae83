"""Tests of calibnb.plots: the pure data functions against independent
computations, and the drawn artists against the data functions (Agg backend)."""

import copy
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose, assert_array_equal  # noqa: E402

from calibnb import metrics  # noqa: E402
from calibnb.plots import (  # noqa: E402
    HistogramData,
    KSGraphData,
    ReliabilityDiagramData,
    histogram_data,
    ks_graph_data,
    plot_histograms,
    plot_ks_graph,
    plot_reliability_diagram,
    probability_histograms,
    reliability_diagram_data,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _system(n, seed, skew=1.0):
    """A random (conf, correct) system; ``skew`` < 1 makes it overconfident."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0, 1, n)
    correct = rng.uniform(0, 1, n) < conf**(1 / skew)
    return conf, correct


def _patches(ax, gid):
    return [p for p in ax.patches if p.get_gid() == gid]


def _lines(ax, gid):
    return [line for line in ax.lines if line.get_gid() == gid]


def _texts(ax, gid):
    return [t for t in ax.texts if t.get_gid() == gid]


# --------------------------------------------------------------------------
# reliability diagram
# --------------------------------------------------------------------------

def _width_bins_by_hand(conf, correct, n_bins):
    """Equal-width bins of the papers page, by a loop: (m/M, (m+1)/M], 0 in bin 0."""
    rows = []
    for m in range(n_bins):
        lo, hi = m / n_bins, (m + 1) / n_bins
        inside = [(c, y) for c, y in zip(conf, correct) if (lo < c <= hi) or (m == 0 and c == 0)]
        if inside:
            cs, ys = zip(*inside)
            rows.append((m, len(inside), sum(ys), np.mean(cs), np.mean(ys)))
    return rows


@pytest.mark.parametrize("n, n_bins, seed", [(1, 10, 0), (7, 3, 1), (200, 10, 2), (1000, 15, 3), (50, 1, 4)])
def test_reliability_data_matches_hand_binning(n, n_bins, seed):
    conf, correct = _system(n, seed)
    d = reliability_diagram_data(conf, correct, n_bins=n_bins)
    expected = _width_bins_by_hand(conf, correct.astype(int), n_bins)
    t = d.table
    assert len(t) == len(expected)
    assert_array_equal(t["bin"], [r[0] for r in expected])
    assert_array_equal(t["count"], [r[1] for r in expected])
    assert_array_equal(t["n_correct"], [r[2] for r in expected])
    assert_array_equal(t["n_wrong"], [r[1] - r[2] for r in expected])
    assert_allclose(t["mean_conf"], [r[3] for r in expected])
    assert_allclose(t["accuracy"], [r[4] for r in expected])
    assert_allclose(t["frac_correct"] + t["frac_wrong"], t["count"] / n)
    assert_allclose(t["frac_correct"].sum() + t["frac_wrong"].sum(), 1.0)
    ece_by_hand = sum(r[1] / n * abs(r[4] - r[3]) for r in expected)
    assert d.ece == pytest.approx(ece_by_hand)
    assert d.mce == pytest.approx(max(abs(r[4] - r[3]) for r in expected))
    assert (d.n, d.n_bins, d.binning) == (n, n_bins, "width")


@pytest.mark.parametrize("binning", ["width", "mass"])
@pytest.mark.parametrize("n_bins", [3, 10])
def test_reliability_data_agrees_with_metrics(binning, n_bins):
    conf, correct = _system(300, 5, skew=0.5)
    d = reliability_diagram_data(conf, correct, n_bins=n_bins, binning=binning)
    assert d.ece == pytest.approx(metrics.ece(conf, correct, n_bins=n_bins, binning=binning))
    assert d.mce == pytest.approx(metrics.mce(conf, correct, n_bins=n_bins, binning=binning))
    assert int(d.table["count"].sum()) == 300
    assert int(d.table["n_correct"].sum()) == int(correct.sum())


@pytest.mark.parametrize("style", ["classic", "si"])
@pytest.mark.parametrize("binning", ["width", "mass"])
@pytest.mark.parametrize("n, n_bins, seed", [(30, 5, 0), (500, 10, 1), (2000, 15, 2)])
def test_reliability_plot_draws_the_data(style, binning, n, n_bins, seed):
    conf, correct = _system(n, seed, skew=0.6)
    d = reliability_diagram_data(conf, correct, n_bins=n_bins, binning=binning)
    t = d.table
    fig, ax = plt.subplots()
    out = plot_reliability_diagram(d, ax=ax, style=style)
    assert out is ax
    lefts = t["bar_left"].to_numpy(float)
    if style == "classic":
        acc_bars = _patches(ax, "accuracy")
        gap_bars = _patches(ax, "gap")
        assert_allclose([p.get_height() for p in acc_bars], t["accuracy"])
        assert_allclose([p.get_x() for p in acc_bars], lefts)
        assert_allclose([p.get_y() + p.get_height() for p in gap_bars], t["mean_conf"])
        assert_allclose([p.get_y() for p in gap_bars], t["accuracy"])
        assert ax.get_ylabel() == "accuracy"
    else:
        ok, bad = _patches(ax, "correct"), _patches(ax, "wrong")
        assert_allclose([p.get_height() for p in ok], t["n_correct"] / n)
        assert_allclose([p.get_height() for p in bad], t["n_wrong"] / n)
        assert_allclose([p.get_y() for p in bad], t["n_correct"] / n)
        (acc_line,) = _lines(ax, "accuracy")
        assert_allclose(acc_line.get_xdata(), t["mean_conf"])
        assert_allclose(acc_line.get_ydata(), t["accuracy"])
        assert acc_line.get_linestyle() == "--"
    (diag,) = _lines(ax, "diagonal")
    assert_allclose(diag.get_xydata(), [[0, 0], [1, 1]])
    assert [int(x.get_text()) for x in _texts(ax, "count")] == t["count"].astype(int).tolist()
    assert ax.get_xlabel().startswith("confidence") and ax.get_ylabel()
    legend = ax.get_legend()
    assert legend is not None
    assert legend.get_title().get_text() == f"ECE = {d.ece:.3f}, MCE = {d.mce:.3f}"


@pytest.mark.parametrize("n, n_bins, seed", [(9, 3, 0), (100, 10, 1), (40, 7, 2)])
def test_reliability_bars_span_their_bins_true_extent(n, n_bins, seed):
    """Equal-mass bins are drawn from their smallest to their largest confidence (issue 27), never stretched."""
    conf, correct = _system(n, seed)
    conf = np.round(conf, 1)  # ties across bins
    t = reliability_diagram_data(conf, correct, n_bins=n_bins, binning="mass").table
    assert_allclose(t["bar_left"], t["lower"])
    assert_allclose(t["bar_right"], t["upper"])
    assert ((t["bar_left"] <= t["mean_conf"]) & (t["mean_conf"] <= t["bar_right"])).all()
    w = reliability_diagram_data(conf, correct, n_bins=n_bins, binning="width").table
    assert_allclose(w["bar_left"], w["lower"])
    assert_allclose(w["bar_right"], w["upper"])


def test_equal_mass_first_bin_sits_at_its_confidences():
    """Issue 27: a first bin of confidences 0.8-0.9 is drawn there (not from x = 0), its interval at its mean."""
    rng = np.random.default_rng(5)
    conf = np.r_[rng.uniform(0.8, 0.9, 200), rng.uniform(0.9, 1.0, 200)]
    correct = (rng.uniform(size=400) < 0.5).astype(float)  # the low bin is badly overconfident
    d = reliability_diagram_data(conf, correct, n_bins=2, binning="mass")
    fig, ax = plt.subplots()
    plot_reliability_diagram(d, ax=ax)
    first = _patches(ax, "accuracy")[0]
    assert first.get_x() == pytest.approx(conf.min()) and first.get_x() + first.get_width() <= 0.9 + 1e-12
    (segments,) = [c for c in ax.collections if c.get_gid() == "interval"]
    xs = np.array(segments.get_segments())[:, 0, 0]
    assert_allclose(xs, d.table["mean_conf"], atol=1e-12)
    assert xs[0] > 0.8
    plt.close(fig)


def test_sakai_mass_bins_are_drawn_at_their_values():
    """Sakai 2024 Example 1, 3 equal-mass bins of tied values 0.4, 0.6, 0.8: narrow bars centred on them."""
    x = [0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    d = reliability_diagram_data(x, [1, 1, 0, 1, 0, 1, 1, 1, 1], n_bins=3, binning="mass")
    ax = plot_reliability_diagram(d, style="si")
    bars = _patches(ax, "correct")
    assert_allclose([p.get_x() + p.get_width() / 2 for p in bars], [0.4, 0.6, 0.8])
    assert all(0 < p.get_width() <= 0.05 for p in bars)


def test_reliability_plot_options():
    conf, correct = _system(100, 7)
    d = reliability_diagram_data(conf, correct)
    ax = plot_reliability_diagram(d, show_counts=False, show_ece=False)
    assert _texts(ax, "count") == []
    assert ax.get_legend().get_title().get_text() == ""


def test_reliability_si_split_changes_with_correctness():
    """Flipping one wrong prediction to correct moves 1/N from the blue to the green bar."""
    conf = np.array([0.05, 0.35, 0.36, 0.95])
    correct = np.array([0, 0, 1, 1])
    before = reliability_diagram_data(conf, correct, n_bins=10)
    after = reliability_diagram_data(conf, [0, 1, 1, 1], n_bins=10)
    row = before.table["bin"].tolist().index(3)
    assert before.table["frac_wrong"][row] == pytest.approx(0.25)
    assert after.table["frac_wrong"][row] == pytest.approx(0.0)
    assert after.table["frac_correct"][row] == pytest.approx(0.5)


# --------------------------------------------------------------------------
# KS graphs
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n, seed, window", [(1, 0, 0.1), (2, 1, 1.0), (10, 2, 0.3), (500, 3, 0.1), (3000, 4, 0.02)])
def test_ks_data_matches_direct_computation(n, seed, window):
    conf, correct = _system(n, seed, skew=0.5)
    conf[: n // 3] = np.round(conf[: n // 3], 1)  # some ties
    d = ks_graph_data(conf, correct, window=window)
    order = np.argsort(conf, kind="stable")
    s, y = conf[order], correct[order].astype(float)
    assert_allclose(d.fractile, np.arange(1, n + 1) / n)
    assert_allclose(d.scores, s)
    assert_allclose(d.cum_score, np.cumsum(s) / n)
    assert_allclose(d.cum_accuracy, np.cumsum(y) / n)
    assert d.ks == pytest.approx(np.max(np.abs(np.cumsum(y - s))) / n)
    assert d.ks == pytest.approx(metrics.ks_error(conf, correct, ties="order"))
    assert abs(d.cum_accuracy[d.ks_index] - d.cum_score[d.ks_index]) == pytest.approx(d.ks)
    w = max(1, min(n, int(round(window * n))))
    assert d.window_size == w
    for i in range(n):  # the centred window, by a loop
        lo = min(max(i - w // 2, 0), n - w)
        assert d.probability[i] == pytest.approx(y[lo:lo + w].mean())
        assert d.score[i] == pytest.approx(s[lo:lo + w].mean())


def test_ks_probability_is_slope_of_cumulative_accuracy():
    """Gupta Prop. 4.1: the slope of h against the fractile; with a 1-point window it is y itself."""
    conf, correct = _system(400, 8)
    d = ks_graph_data(conf, correct, window=1 / 400)
    assert d.window_size == 1
    assert_allclose(d.probability, np.diff(np.concatenate(([0], d.cum_accuracy))) * 400)
    assert_allclose(d.score, d.scores)


def test_ks_probability_tracks_score_when_calibrated_and_not_when_overconfident():
    conf, correct = _system(20000, 9)
    calibrated = ks_graph_data(conf, correct, window=0.05)
    assert np.max(np.abs(calibrated.probability - calibrated.score)) < 0.08  # binomial noise, sd ~0.016
    over = ks_graph_data(conf, _system(20000, 9, skew=0.5)[1], window=0.05)
    assert np.mean(over.probability - over.score) < -0.1
    assert over.ks > 5 * calibrated.ks


@pytest.mark.parametrize("panel, x_field, y_fields", [
    ("a", "fractile", ("cum_score", "cum_accuracy")),
    ("b", "cum_score", ("cum_score", "cum_accuracy")),
    ("c", "fractile", ("score", "probability")),
    ("d", "score", ("score", "probability")),
])
@pytest.mark.parametrize("n, seed", [(5, 0), (800, 1)])
def test_ks_plot_draws_the_data(panel, x_field, y_fields, n, seed):
    conf, correct = _system(n, seed, skew=0.7)
    d = ks_graph_data(conf, correct)
    fig, ax = plt.subplots()
    assert plot_ks_graph(d, panel=panel, ax=ax) is ax
    for field in y_fields:
        (line,) = _lines(ax, field)
        assert_allclose(line.get_xdata(), getattr(d, x_field))
        assert_allclose(line.get_ydata(), getattr(d, field))
    ks_lines = _lines(ax, "ks")
    if panel in "ab":
        (ks,) = ks_lines
        assert_allclose(np.abs(np.diff(ks.get_ydata())), [d.ks])
        assert ks.get_label() == f"KS error = {100 * d.ks:.2f}%"
    else:
        assert ks_lines == []
    assert ax.get_xlabel() and ax.get_ylabel()
    assert len(ax.get_legend().get_texts()) == len(y_fields) + (panel in "ab")


def test_ks_plot_without_ax_makes_a_figure():
    ax = plot_ks_graph(ks_graph_data([0.2, 0.9], [0, 1]), panel="b")
    assert ax.figure is not None and ax.get_xlabel() == "cumulative score"


# --------------------------------------------------------------------------
# histograms
# --------------------------------------------------------------------------

@pytest.mark.parametrize("bins, rng_", [(30, (0.0, 1.0)), (7, (-1.1, 1.1)), (1, (0, 2)), (12, None)])
def test_histogram_data_matches_numpy(bins, rng_):
    v = np.random.default_rng(bins).normal(0.3, 0.5, 1000)
    h = histogram_data(v, bins=bins, range=rng_, label="x")
    lo, hi = (v.min(), v.max()) if rng_ is None else rng_
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    assert_array_equal(h.counts, counts)
    assert_allclose(h.edges, edges)
    assert_allclose(h.fraction, counts / 1000)
    assert h.n == 1000 and h.n_outside == 1000 - counts.sum() and h.label == "x"
    if rng_ is None:
        assert h.n_outside == 0


def test_histogram_of_constant_values_without_range():
    h = histogram_data([0.5, 0.5], bins=3, range=None)
    assert h.counts.sum() == 2 and h.edges[0] < 0.5 < h.edges[-1]


@pytest.mark.parametrize("stat", ["fraction", "count"])
@pytest.mark.parametrize("k", [1, 2, 4])
def test_plot_histograms_overlays_each_series(stat, k):
    rng = np.random.default_rng(k)
    datas = [histogram_data(rng.beta(1 + i, 3, 200 + 50 * i), bins=30, label=f"s{i}") for i in range(k)]
    fig, ax = plt.subplots()
    assert plot_histograms(datas if k > 1 else datas[0], ax=ax, stat=stat, xlabel="DistCE") is ax
    steps = _patches(ax, "histogram")
    assert len(steps) == k
    for step, d in zip(steps, datas):
        values, edges, _ = step.get_data()
        assert_allclose(values, d.fraction if stat == "fraction" else d.counts)
        assert_allclose(edges, d.edges)
        assert step.get_label() == d.label
    assert ax.get_xlabel() == "DistCE"
    assert ax.get_ylabel() == ("share of instances" if stat == "fraction" else "number of instances")
    assert (ax.get_legend() is not None) == (k > 1)


def test_plot_histograms_custom_labels():
    datas = [histogram_data([0.1, 0.2]), histogram_data([0.5])]
    ax = plot_histograms(datas, labels=["model", "human"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["model", "human"]
    ax2 = plot_histograms([histogram_data([0.1]), histogram_data([0.4])])
    assert [t.get_text() for t in ax2.get_legend().get_texts()] == ["series 0", "series 1"]


@pytest.mark.parametrize("by", ["class", "guess"])
def test_probability_histograms(by):
    rng = np.random.default_rng(3)
    probs = rng.dirichlet([1, 2, 3], 500)
    hs = probability_histograms(probs, by=by, bins=20, label="model")
    assert len(hs) == 3
    cols = probs if by == "class" else -np.sort(-probs, axis=1)
    for k, h in enumerate(hs):
        assert_array_equal(h.counts, np.histogram(cols[:, k], bins=20, range=(0, 1))[0])
        assert h.label == (f"model, class {k}" if by == "class" else f"model, guess {k + 1}")
    if by == "guess":  # the first guess is at least 1/K
        assert hs[0].counts[: int(20 / 3)].sum() == 0


# --------------------------------------------------------------------------
# global state, laziness, bad input
# --------------------------------------------------------------------------

def test_no_global_style_change():
    before = copy.deepcopy(dict(matplotlib.rcParams))
    conf, correct = _system(100, 1)
    for style in ("classic", "si"):
        plot_reliability_diagram(reliability_diagram_data(conf, correct), style=style)
    for panel in "abcd":
        plot_ks_graph(ks_graph_data(conf, correct), panel=panel)
    plot_histograms(probability_histograms(np.c_[conf, 1 - conf], by="guess"))
    assert dict(matplotlib.rcParams) == before


def test_import_does_not_import_matplotlib():
    code = "import sys, calibnb.plots; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("call, exc, match", [
    (lambda: reliability_diagram_data([0.5, 1.2], [1, 0]), ValueError, r"conf has 1 value outside \[0, 1\]"),
    (lambda: reliability_diagram_data([0.5, 0.2], [1, 0, 1]), ValueError, "correct has length 3"),
    (lambda: reliability_diagram_data([0.5], [1], n_bins=0), ValueError, "n_bins must be at least 1"),
    (lambda: reliability_diagram_data([0.5], [1], binning="equal"), ValueError, "binning must be one of"),
    (lambda: plot_reliability_diagram(reliability_diagram_data([0.5], [1]), style="bar"), ValueError,
     "style must be one of"),
    (lambda: plot_reliability_diagram({"table": None}), TypeError, "ReliabilityDiagramData"),
    (lambda: ks_graph_data([], []), ValueError, "conf is empty"),
    (lambda: ks_graph_data([0.2], [2]), ValueError, "correct must hold only 0/1"),
    (lambda: ks_graph_data([0.2], [1], window=0), ValueError, "window must be > 0"),
    (lambda: ks_graph_data([0.2], [1], window=1.5), ValueError, "window must be <= 1"),
    (lambda: plot_ks_graph(ks_graph_data([0.2], [1]), panel="e"), ValueError, "panel must be one of"),
    (lambda: plot_ks_graph(None), TypeError, "KSGraphData"),
    (lambda: histogram_data([0.1, np.nan]), ValueError, "values has 1 value that is NaN"),
    (lambda: histogram_data([0.1], bins=0), ValueError, "bins must be at least 1"),
    (lambda: histogram_data([0.1], range=(1, 0)), ValueError, r"range\[1\] must be > 1"),
    (lambda: histogram_data([0.1], range=0.5), TypeError, "range must be a"),
    (lambda: plot_histograms([]), ValueError, "datas is empty"),
    (lambda: plot_histograms([histogram_data([0.1]), [1, 2]]), TypeError, r"datas\[1\] must be a HistogramData"),
    (lambda: plot_histograms([histogram_data([0.1]), histogram_data([0.1], bins=3)]), ValueError,
     "different bins"),
    (lambda: plot_histograms([histogram_data([0.1])], labels=["a", "b"]), ValueError, "labels has 2 entries"),
    (lambda: plot_histograms(histogram_data([0.1]), stat="density"), ValueError, "stat must be one of"),
    (lambda: probability_histograms([[0.5, 0.6]]), ValueError, "does not sum to 1"),
    (lambda: probability_histograms([[0.5, 0.5]], by="rank"), ValueError, "by must be one of"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_dataclasses_are_frozen():
    d = ks_graph_data([0.3, 0.6], [0, 1])
    with pytest.raises(AttributeError):
        d.ks = 0.0
    assert isinstance(d, KSGraphData)
    assert isinstance(reliability_diagram_data([0.3], [1]), ReliabilityDiagramData)
    assert isinstance(histogram_data([0.3]), HistogramData)


# ---- per-bin intervals, counts and sparse bins (issue 18) -------------------------

@pytest.mark.parametrize("style", ["classic", "si"])
@pytest.mark.parametrize("interval", ["wilson", "clopper-pearson"])
def test_reliability_diagram_shows_intervals_counts_and_sparse_bins_by_default(style, interval):
    conf, correct = _system(400, 3, skew=0.6)
    d = reliability_diagram_data(conf, correct, n_bins=12, interval=interval, min_count=30)
    t = d.table
    ref = metrics.reliability_table(conf, correct, n_bins=12, interval=interval)
    assert_allclose(t["acc_low"], ref["acc_low"], rtol=0, atol=0)
    assert_allclose(t["acc_high"], ref["acc_high"], rtol=0, atol=0)
    assert t["sparse"].tolist() == (t["count"] < 30).tolist()
    assert t["sparse"].any() and not t["sparse"].all()
    fig, ax = plt.subplots()
    plot_reliability_diagram(d, ax=ax, style=style)
    segments = [c for c in ax.collections if c.get_gid() == "interval"]
    assert len(segments) == 1
    drawn = np.array(segments[0].get_segments())  # one vertical segment per bin: (x, low) -> (x, high)
    assert_allclose(drawn[:, 0, 1], t["acc_low"], atol=1e-12)
    assert_allclose(drawn[:, 1, 1], t["acc_high"], atol=1e-12)
    assert_allclose(drawn[:, 0, 0], t["mean_conf"], atol=1e-12)  # at the bin's mean confidence (issue 27)
    assert len(_patches(ax, "sparse")) == int(t["sparse"].sum())
    texts = _texts(ax, "count")
    assert [int(x.get_text()) for x in texts] == t["count"].astype(int).tolist()
    assert [x.get_color() == "tab:orange" for x in texts] == t["sparse"].tolist()
    labels = [x.get_text() for x in ax.get_legend().get_texts()]
    assert f"95% {interval} interval" in labels and "sparse bin (< 30 predictions)" in labels
    plt.close(fig)


def test_reliability_diagram_without_intervals():
    conf, correct = _system(200, 4)
    d = reliability_diagram_data(conf, correct, interval=None, min_count=0)
    assert "acc_low" not in d.table and not d.table["sparse"].any()
    fig, ax = plt.subplots()
    plot_reliability_diagram(d, ax=ax)
    assert not [c for c in ax.collections if c.get_gid() == "interval"] and not _patches(ax, "sparse")
    d2 = reliability_diagram_data(conf, correct)
    fig2, ax2 = plt.subplots()
    plot_reliability_diagram(d2, ax=ax2, show_intervals=False)
    assert not [c for c in ax2.collections if c.get_gid() == "interval"]
    plt.close(fig)
    plt.close(fig2)
    with pytest.raises(ValueError, match="min_count must be at least 0"):
        reliability_diagram_data(conf, correct, min_count=-1)
    with pytest.raises(ValueError, match="interval must be one of"):
        reliability_diagram_data(conf, correct, interval="normal")
