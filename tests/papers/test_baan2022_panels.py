"""Notebook 02's marginal and error views as data + drawing pairs (calibnb.papers.baan2022, Figs. 4-15)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose, assert_array_equal  # noqa: E402

from calibnb import softmax  # noqa: E402
from calibnb.metrics import dist_ce, ece, ent_ce, entropy, human_distribution  # noqa: E402
from calibnb.papers.baan2022 import (  # noqa: E402
    error_panels_data,
    marginal_panels_data,
    plot_error_panels,
    plot_marginal_panels,
)


def _case(n=120, seed=0):
    rng = np.random.default_rng(seed)
    votes = rng.multinomial(100, [0.5, 0.3, 0.2], size=n)
    human = human_distribution(votes)
    p = softmax(np.log(human + 0.05) * 1.5 + rng.normal(scale=0.7, size=(n, 3)))
    return {"model": p, "model-TS": softmax(np.log(p) / 1.7)}, human, votes.argmax(axis=1)


def _fractions(values, bins, lo, hi):
    counts = np.histogram(values, bins=bins, range=(lo, hi))[0]
    return counts / len(values)


def test_marginal_data_holds_each_panel_computed_independently():
    probs, human, maj = _case()
    d = marginal_panels_data(probs, human, maj, n_bins=10, bins=20, title="T")
    assert d["title"] == "T" and len(d["panels"]) == 9
    sets = {"human": human, **probs}
    for k in range(3):
        by_class, by_guess = d["panels"][k], d["panels"][3 + k]
        assert [h.label for h in by_class["histograms"]] == list(sets)
        assert "class %d" % k in by_class["xlabel"] and f"guess {k + 1}" in by_guess["xlabel"]
        for h, p in zip(by_class["histograms"], sets.values()):
            assert_allclose(h.fraction, _fractions(p[:, k], 20, 0, 1))
        for h, p in zip(by_guess["histograms"], sets.values()):
            assert_allclose(h.fraction, _fractions(np.sort(p, axis=1)[:, ::-1][:, k], 20, 0, 1))
    ent = d["panels"][6]["histograms"]
    for h, p in zip(ent, sets.values()):
        assert_allclose(h.fraction, _fractions(entropy(p), 20, 0, np.log(3)))
    dist = d["panels"][7]
    assert [h.label for h in dist["histograms"]] == list(probs)  # no human series: its DistCE is 0
    assert dist["colour_offset"] == 1  # so each classifier keeps its colour
    assert_allclose(dist["histograms"][1].fraction, _fractions(dist_ce(probs["model-TS"], human), 20, 0, 1))
    rel = d["panels"][8]
    assert rel["title"] == "reliability with counts: model-TS"  # the last classifier, against the majority label
    p = probs["model-TS"]
    assert rel["reliability"].n == len(maj) and rel["reliability"].n_bins == 10
    assert rel["reliability"].ece == pytest.approx(ece(p.max(axis=1), p.argmax(axis=1) == maj, n_bins=10))


def test_error_data_holds_the_signed_and_absolute_errors():
    probs, human, _ = _case(seed=1)
    d = error_panels_data(probs, human, bins=20, title="E")
    assert len(d["panels"]) == 9 and d["alpha"] == 0.45
    p = probs["model"]
    for k in range(3):
        assert_allclose(d["panels"][k]["histograms"][0].fraction, _fractions(p[:, k] - human[:, k], 20, -1, 1))
        guess = np.sort(p, axis=1)[:, ::-1][:, k] - np.sort(human, axis=1)[:, ::-1][:, k]
        assert_allclose(d["panels"][3 + k]["histograms"][0].fraction, _fractions(guess, 20, -1, 1))
    lim = np.log(3)
    assert_allclose(d["panels"][6]["histograms"][0].fraction, _fractions(ent_ce(p, human), 20, -lim, lim))
    assert_allclose(d["panels"][7]["histograms"][0].fraction, _fractions(np.abs(ent_ce(p, human)), 20, 0, lim))
    assert_allclose(d["panels"][8]["histograms"][1].fraction,
                    _fractions(np.abs(probs["model-TS"] - human).ravel(), 20, 0, 1))


@pytest.mark.parametrize("which", ["marginal", "error"])
def test_plots_only_draw_the_data_on_the_given_axes(which):
    probs, human, maj = _case()
    if which == "marginal":
        data, plot = marginal_panels_data(probs, human, maj, title="M"), plot_marginal_panels
    else:
        data, plot = error_panels_data(probs, human, title="E"), plot_error_panels
    fig, axes = plt.subplots(3, 3)
    try:
        out = plot(data, axes=axes)
        assert out.shape == (3, 3) and out[0, 0] is axes[0, 0]
        assert fig._suptitle.get_text() == data["title"]
        for ax, panel in zip(axes.ravel(), data["panels"]):
            if "reliability" in panel:
                assert ax.get_title() == panel["title"]
                continue
            steps = [a for a in ax.patches if a.get_gid() == "histogram"]
            assert len(steps) == len(panel["histograms"])
            for step, h in zip(steps, panel["histograms"]):
                assert_array_equal(step.get_data().values, h.fraction)
            assert ax.get_xlabel() == panel["xlabel"]
        # the DistCE panel skips the human series' colour: the classifiers keep theirs across panels
        if which == "marginal":
            colour = [a.get_edgecolor() for a in axes[2, 0].patches if a.get_gid() == "histogram"]
            dist = [a.get_edgecolor() for a in axes[2, 1].patches if a.get_gid() == "histogram"]
            assert dist == colour[1:]
    finally:
        plt.close(fig)
    made = plot(data)  # no axes: a new 15 x 10 inch figure
    assert tuple(made[0, 0].figure.get_size_inches()) == (15.0, 10.0)
    plt.close(made[0, 0].figure)


def test_bad_input_names_the_argument():
    probs, human, maj = _case()
    with pytest.raises(ValueError, match="human"):
        marginal_panels_data(probs, human * 2, maj)  # counts, not the distribution
    with pytest.raises(ValueError, match="human has 4 classes.*needs 3"):
        error_panels_data({"m": softmax(np.zeros((5, 4)))}, human_distribution(np.ones((5, 4))))
    with pytest.raises(ValueError, match=r"probs_by_name\['m'\] has shape"):
        error_panels_data({"m": probs["model"][:10]}, human)
    with pytest.raises(TypeError, match="probs_by_name"):
        error_panels_data([probs["model"]], human)
    with pytest.raises(ValueError, match="'human'"):
        marginal_panels_data({"human": probs["model"]}, human, maj)
    with pytest.raises(ValueError, match="majority"):
        marginal_panels_data(probs, human, maj[:5])
    with pytest.raises(TypeError, match="marginal_panels_data"):
        plot_marginal_panels({"panels": []})
    fig, axes = plt.subplots(2, 2)
    with pytest.raises(ValueError, match="3 x 3"):
        plot_error_panels(error_panels_data(probs, human), axes=axes)
    plt.close(fig)
