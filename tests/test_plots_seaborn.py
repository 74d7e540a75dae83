"""calibnb.plots' seaborn figures (issue 25): confidence by correctness; several distributions as ECDFs or KDEs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from calibnb.plots import confidence_by_correctness_data, plot_confidence_by_correctness  # noqa: E402


def _data(n_correct=570, n_wrong=23, seed=0):
    rng = np.random.default_rng(seed)
    conf = np.concatenate([rng.uniform(0.6, 1.0, n_correct), rng.uniform(0.3, 0.9, n_wrong)])
    correct = np.concatenate([np.ones(n_correct), np.zeros(n_wrong)])
    return conf, correct


def test_data_is_one_row_per_prediction():
    conf, correct = _data(5, 2)
    d = confidence_by_correctness_data(conf, correct, sample_weight=np.arange(1, 8))
    assert d["confidence"].tolist() == conf.tolist()
    assert d["outcome"].tolist() == ["correct"] * 5 + ["wrong"] * 2
    assert list(d["outcome"].cat.categories) == ["correct", "wrong"] and d["weight"].tolist() == list(range(1, 8))
    with pytest.raises(ValueError, match="conf"):
        confidence_by_correctness_data([0.5, 1.5], [1, 0])
    with pytest.raises(ValueError, match="sample_weight"):
        confidence_by_correctness_data([0.5, 0.6], [1, 0], sample_weight=[1.0, -1.0])


def test_each_outcome_is_normalised_on_its_own_and_style_is_untouched():
    conf, correct = _data()
    before = dict(matplotlib.rcParams)
    fig, ax = plt.subplots()
    out = plot_confidence_by_correctness(confidence_by_correctness_data(conf, correct), bins=10, ax=ax)
    assert out is ax
    assert dict(matplotlib.rcParams) == before  # seaborn drew without setting a theme
    # one step outline per outcome; each encloses area 1 (density of its own predictions)
    areas = []
    for poly in ax.collections:
        xy = poly.get_paths()[0].vertices
        x, y = xy[:, 0], xy[:, 1]
        areas.append(abs(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2)))
    assert len(areas) == 2 and np.allclose(areas, 1.0, atol=1e-6)
    plt.close(fig)


def test_ecdf_ends_at_one_for_each_outcome():
    conf, correct = _data(50, 7)
    fig, ax = plt.subplots()
    plot_confidence_by_correctness(confidence_by_correctness_data(conf, correct), kind="ecdf", ax=ax)
    ends = sorted(line.get_ydata()[-1] for line in ax.get_lines())
    assert ends == pytest.approx([1.0, 1.0])
    plt.close(fig)
    with pytest.raises(ValueError, match="kind"):
        plot_confidence_by_correctness(confidence_by_correctness_data(conf, correct), kind="kde")
    with pytest.raises(TypeError, match="data"):
        plot_confidence_by_correctness({"confidence": conf})


# ------------------------------------------------------------------ several distributions (notebook 02's Figure 2)

from calibnb.plots import distributions_data, plot_distributions  # noqa: E402


def test_distributions_data_keeps_series_order_and_lengths():
    d = distributions_data({"H1": [0.2, 0.1, 0.4], "H2": [0.3], "model": np.array([0.9, 0.8])})
    assert d["series"].tolist() == ["H1"] * 3 + ["H2"] + ["model"] * 2
    assert list(d["series"].cat.categories) == ["H1", "H2", "model"]
    assert d["value"].tolist() == [0.2, 0.1, 0.4, 0.3, 0.9, 0.8]
    with pytest.raises(ValueError, match=r"values_by_name\['H2'\]"):
        distributions_data({"H1": [0.1], "H2": [np.nan]})
    with pytest.raises(ValueError, match=r"values_by_name\['H2'\]"):
        distributions_data({"H1": [0.1], "H2": []})
    with pytest.raises(TypeError, match="values_by_name"):
        distributions_data([0.1, 0.2])


def test_each_ecdf_rises_to_one_and_style_is_untouched():
    rng = np.random.default_rng(1)
    values = {"H1": rng.uniform(0, 0.3, 400), "H2": rng.uniform(0, 0.3, 400), "model": rng.uniform(0.1, 0.8, 37)}
    before = dict(matplotlib.rcParams)
    fig, ax = plt.subplots()
    assert plot_distributions(distributions_data(values), xlabel="DistCE", ax=ax) is ax
    assert dict(matplotlib.rcParams) == before
    lines = ax.get_lines()
    assert len(lines) == 3 and all(line.get_ydata()[-1] == pytest.approx(1.0) for line in lines)
    # the small series is drawn whole: its ECDF's steps are 1/37
    steps = sorted({round(float(s), 9) for line in lines for s in np.diff(line.get_ydata()) if s > 0})
    assert round(1 / 37, 9) in steps and round(1 / 400, 9) in steps
    assert ax.get_xlabel() == "DistCE"
    plt.close(fig)


def test_kde_integrates_to_one_per_series():
    rng = np.random.default_rng(2)
    values = {"a": rng.normal(0.5, 0.1, 300), "b": rng.normal(0.3, 0.05, 30)}
    fig, ax = plt.subplots()
    plot_distributions(distributions_data(values), kind="kde", ax=ax)
    areas = [np.trapezoid(line.get_ydata(), line.get_xdata()) for line in ax.get_lines()]
    # each series on its own: the 30-value series keeps most of area 1 (a shared normalisation would leave it
    # 30/330 = 0.09); below 1 because the curves are cut at the data's range
    assert len(areas) == 2 and all(0.85 < a <= 1.0 for a in areas)
    plt.close(fig)
    with pytest.raises(ValueError, match="kind"):
        plot_distributions(distributions_data(values), kind="hist")
    with pytest.raises(TypeError, match="data"):
        plot_distributions({"value": [0.1]})
