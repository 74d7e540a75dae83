"""Tests of the Si et al. 2022 baselines and ConsCal."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from calibnb import metrics
from calibnb.calibrators import (
    AverageBaseline,
    BinaryBaseline,
    ConsCal,
    CorrectnessClassifier,
    NotFittedError,
    majority_vote,
)


def sample(n, seed, acc=0.35):
    rng = np.random.default_rng(seed)
    correct = rng.random(n) < acc
    conf = np.clip(rng.normal(0.6 + 0.2 * correct, 0.15), 0, 1)
    return conf, correct


@pytest.mark.parametrize("seed", range(5))
def test_average_baseline_macro_ce_is_one_half(seed):
    conf, correct = sample(1000, seed, acc=0.1 + 0.2 * seed)
    out = AverageBaseline().fit(*sample(500, seed + 10, acc=0.05 + 0.2 * seed)).transform(conf)
    assert np.all(out == out[0])
    # exactly 1/2 up to floating-point summation (Si Table 7: 50.00)
    assert metrics.macro_ce(out, correct) == pytest.approx(0.5, abs=1e-12)


def test_average_baseline_value_is_dev_accuracy():
    dev_conf, dev_correct = sample(777, 1)
    ab = AverageBaseline().fit(dev_conf, dev_correct)
    assert ab.accuracy_ == dev_correct.mean()
    assert_allclose(ab.transform([0.0, 1.0]), dev_correct.mean())


@pytest.mark.parametrize("n_test", [1, 7, 100, 1001])
def test_binary_baseline_outputs_zero_one_with_right_count(n_test):
    dev_conf, dev_correct = sample(400, 2)
    bb = BinaryBaseline().fit(dev_conf, dev_correct)
    conf, _ = sample(n_test, 3)
    out = bb.transform(conf)
    assert set(np.unique(out)) <= {0.0, 1.0}
    assert out.sum() == int(np.floor(dev_correct.mean() * n_test + 0.5))
    if 0 < out.sum() < n_test:  # the ones are the most confident
        assert conf[out == 1].min() >= conf[out == 0].max()


def test_binary_baseline_ties_keep_input_order():
    bb = BinaryBaseline().fit([0.5, 0.5], [1, 0])
    assert bb.transform([0.7, 0.7, 0.7, 0.7]).tolist() == [1, 1, 0, 0]


def test_baselines_validate_and_need_fit():
    for cls in (AverageBaseline, BinaryBaseline):
        with pytest.raises(NotFittedError):
            cls().transform([0.5])
        with pytest.raises(ValueError, match="correct has length 1"):
            cls().fit([0.5, 0.2], [1])
        with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
            cls().fit([0.5, 2.0], [1, 0])
        with pytest.raises(ValueError, match="NaN"):
            cls().fit([0.5, 0.3], [1, 0]).transform([np.nan])


@pytest.mark.parametrize("model", ["logreg", "svm", "forest"])
def test_correctness_classifier_separates_and_is_seeded(model):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(600, 3))
    correct = rng.random(600) < 1 / (1 + np.exp(-3 * x[:, 0]))
    clf = CorrectnessClassifier(model=model, seed=1).fit(x[:400], correct[:400])
    conf = clf.transform(x[400:])
    assert conf.shape == (200,) and conf.min() >= 0 and conf.max() <= 1
    assert conf[correct[400:]].mean() > conf[~correct[400:]].mean() + 0.2
    again = CorrectnessClassifier(model=model, seed=1).fit(x[:400], correct[:400]).transform(x[400:])
    assert_allclose(conf, again)
    assert set(clf.param_) == {"max_depth" if model == "forest" else "C"}
    assert np.isfinite(clf.validation_loss_)


def test_correctness_classifier_balances_rare_correct():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(1000, 2))
    correct = rng.random(1000) < 1 / (1 + np.exp(-(x[:, 0] - 2.5)))  # ~10% correct
    balanced = CorrectnessClassifier(seed=0).fit(x, correct).transform(x)
    plain = CorrectnessClassifier(seed=0, balance=False).fit(x, correct).transform(x)
    assert plain.mean() == pytest.approx(correct.mean(), abs=0.05)
    assert balanced.mean() > plain.mean() + 0.2  # balanced training raises the prior towards 1/2


def test_correctness_classifier_errors():
    x = np.zeros((20, 2))
    with pytest.raises(ValueError, match="model must be one of"):
        CorrectnessClassifier(model="tree").fit(x, [0, 1] * 10)
    with pytest.raises(ValueError, match="only one class"):
        CorrectnessClassifier().fit(x, [1] * 20)
    with pytest.raises(ValueError, match="NaN"):
        CorrectnessClassifier().fit(np.full((20, 2), np.nan), [0, 1] * 10)
    with pytest.raises(ValueError, match="correct has length 3"):
        CorrectnessClassifier().fit(x, [0, 1, 1])
    with pytest.raises(NotFittedError):
        CorrectnessClassifier().transform(x)
    clf = CorrectnessClassifier().fit(np.random.default_rng(0).normal(size=(20, 2)), [0, 1] * 10)
    with pytest.raises(ValueError, match="3 columns but the fit had 2"):
        clf.transform(np.zeros((2, 3)))


# ConsCal ------------------------------------------------------------------

TABLE = np.array(
    [
        ["a", "a", "a", "a", "a"],  # k = 5
        ["b", "a", "a", "a", "a"],  # k = 4
        ["b", "b", "a", "c", "a"],  # k = 2
        ["a", "b", "c", "d", "e"],  # k = 1
        ["x", "x", "y", "x", "x"],  # k = 4
    ]
)
K = np.array([5, 4, 2, 1, 4])


def test_conscal_frequency_mode():
    out = ConsCal(mode="frequency").fit(TABLE, [1, 1, 0, 0, 1]).transform(TABLE)
    assert_allclose(out, K / 5)


@pytest.mark.parametrize("n", range(6))
def test_conscal_binary_mode_with_given_threshold(n):
    out = ConsCal(mode="binary", threshold=n).fit(TABLE, [1, 1, 0, 0, 1]).transform(TABLE)
    assert_allclose(out, (K > n).astype(float))


def test_conscal_classifier_mode():
    rng = np.random.default_rng(6)
    n = 400
    final = rng.integers(0, 3, n)
    stable = rng.random(n) < 0.5
    early = np.where(stable[:, None], final[:, None], rng.integers(3, 6, (n, 4)))
    table = np.column_stack([early, final])
    correct = stable & (rng.random(n) < 0.9) | (~stable & (rng.random(n) < 0.1))
    cc = ConsCal(mode="classifier").fit(table, correct)
    out = cc.transform(table)
    assert cc.classifier_.coef_.shape == (1, 4)  # the final column is dropped
    assert out[stable].min() > 0.7 and out[~stable].max() < 0.3
    # the hand-made table: all-agree rows above no-agree rows
    cc2 = ConsCal(mode="classifier").fit(TABLE, [1, 1, 0, 0, 1])
    o2 = cc2.transform(TABLE)
    assert o2[0] > o2[3]


def test_conscal_threshold_search_minimises_dev_macro_ce():
    rng = np.random.default_rng(7)
    n = 300
    k = rng.integers(1, 6, n)
    table = np.where(np.arange(5)[None, :] >= 5 - k[:, None], 7, rng.integers(0, 7, (n, 5)))
    table[:, -1] = 7
    k_true = (table == 7).sum(axis=1)
    correct = rng.random(n) < k_true / 6
    cc = ConsCal(mode="binary").fit(table, correct)
    scores = [metrics.macro_ce((k_true > t).astype(float), correct) for t in range(6)]
    assert_allclose(cc.threshold_scores_, scores)
    assert cc.threshold_ == int(np.argmin(scores))
    assert scores[cc.threshold_] < 0.5
    assert_allclose(cc.transform(table), (k_true > cc.threshold_).astype(float))


def test_conscal_without_training_dynamics_uses_majority_vote():
    runs = np.array([[1, 2, 1, 3, 1], [4, 4, 5, 5, 6], [0, 0, 0, 0, 9]])
    pred, count = majority_vote(runs)
    assert pred.tolist() == [1, 4, 0] and count.tolist() == [3, 2, 4]
    cc = ConsCal.without_training_dynamics(mode="frequency").fit(runs, [1, 0, 1])
    assert cc.predict(runs).tolist() == [1, 4, 0]
    assert_allclose(cc.transform(runs), [0.6, 0.4, 0.8])
    assert ConsCal().agreement(runs)[0].tolist() == [1, 6, 9]  # the final predictions, no fit needed
    with pytest.raises(NotFittedError):  # predict is scikit-learn's: after fit only
        ConsCal().predict(runs)
    assert_allclose(ConsCal.without_training_dynamics(threshold=3).fit(runs, [1, 0, 1]).transform(runs), [0, 0, 1])


def test_conscal_errors():
    with pytest.raises(NotFittedError):
        ConsCal().transform(TABLE)
    with pytest.raises(ValueError, match="mode must be one of"):
        ConsCal(mode="vote").fit(TABLE, [1, 1, 0, 0, 1])
    with pytest.raises(ValueError, match="2-D"):
        ConsCal().fit(np.array([1, 2, 3]), [1, 0, 1])
    with pytest.raises(ValueError, match="at least 2 checkpoints"):
        ConsCal().fit(np.zeros((3, 1)), [1, 0, 1])
    with pytest.raises(ValueError, match="correct has length 4"):
        ConsCal().fit(TABLE, [1, 0, 1, 1])
    with pytest.raises(ValueError, match="NaN"):
        ConsCal().fit(np.array([[1.0, np.nan], [1.0, 1.0]]), [1, 0])
    with pytest.raises(ValueError, match="missing"):
        ConsCal().fit(np.array([["a", None], ["b", "b"]], dtype=object), [1, 0])
    with pytest.raises(ValueError, match="at most the number of checkpoints"):
        ConsCal(threshold=6).fit(TABLE, [1, 1, 0, 0, 1])
    cc = ConsCal(threshold=1).fit(TABLE, [1, 1, 0, 0, 1])
    with pytest.raises(ValueError, match="3 checkpoints .* fit had 5"):
        cc.transform(TABLE[:, :3])


def test_inputs_not_mutated():
    table = TABLE.copy()
    correct = np.array([1, 1, 0, 0, 1])
    for mode in ("binary", "frequency", "classifier"):
        ConsCal(mode=mode).fit(table, correct).transform(table)
    conf = np.array([0.3, 0.9, 0.5])
    BinaryBaseline().fit(conf, [1, 0, 1]).transform(conf)
    assert np.array_equal(table, TABLE) and conf.tolist() == [0.3, 0.9, 0.5] and correct.tolist() == [1, 1, 0, 0, 1]
