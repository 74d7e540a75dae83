"""calibnb.plots.confidence_by_correctness_data / plot_confidence_by_correctness (seaborn, issue 25)."""

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
