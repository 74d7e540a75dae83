"""simulate_odqa: the documented **simulation** of retriever-reader outputs (Si et al. 2022 §3.2)."""

from __future__ import annotations

import numpy as np
import pytest

from calibnb.data import SimulatedODQA, simulate_odqa


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _top1(scores, gold, temperature=1.0):
    probs = _softmax(scores / temperature)
    pick = probs.argmax(axis=1)
    return probs.max(axis=1), gold[np.arange(len(gold)), pick]


@pytest.fixture(scope="module")
def sim():
    return simulate_odqa(1000, seed=0, accuracy=0.33)


def test_shapes_and_types(sim):
    assert isinstance(sim, SimulatedODQA) and len(sim) == 1000
    assert sim.passage_logits.shape == (1000, 10)
    assert sim.start_logits.shape == sim.end_logits.shape == sim.gold.shape == (1000, 10, 10)
    assert sim.gold.dtype == bool and sim.answerable.dtype == bool
    small = simulate_odqa(30, seed=1, accuracy=0.3, n_passages=4, n_spans=3)
    assert small.start_logits.shape == (30, 4, 3)
    assert small.candidates("joint")[0].shape == (30, 12) and small.candidates("pipeline")[0].shape == (30, 3)


def test_seeded_and_reproducible():
    a = simulate_odqa(200, seed=5, accuracy=0.4)
    b = simulate_odqa(200, seed=5, accuracy=0.4)
    c = simulate_odqa(200, seed=6, accuracy=0.4)
    np.testing.assert_array_equal(a.start_logits, b.start_logits)
    np.testing.assert_array_equal(a.gold, b.gold)
    assert not np.array_equal(a.start_logits, c.start_logits)
    with pytest.raises(TypeError):
        simulate_odqa(10, accuracy=0.3)  # seed is required


@pytest.mark.parametrize("target", [0.1, 0.33, 0.5, 0.9])
def test_joint_accuracy_hits_the_target(target):
    sim = simulate_odqa(1000, seed=2, accuracy=target)
    scores, gold = sim.candidates("joint")
    _, correct = _top1(scores, gold)
    assert abs(correct.mean() - target) <= 0.01


def test_sorted_by_retriever_then_span_score(sim):
    assert (np.diff(sim.passage_logits, axis=1) <= 0).all()
    assert (np.diff(sim.start_logits + sim.end_logits, axis=2) <= 0).all()


def test_gold_structure(sim):
    per_passage = sim.gold.sum(axis=2)
    assert per_passage.max() == 1  # at most one gold span per passage
    has_gold = sim.gold.any(axis=(1, 2))
    np.testing.assert_array_equal(has_gold, sim.answerable)  # answerable <=> some passage holds the answer
    assert 0.9 < sim.answerable.mean() <= 1.0
    n_gold = sim.gold.sum(axis=(1, 2))
    assert n_gold.max() > 1  # several correct candidates happen (Si: "zero, one, or more")


def test_pipeline_is_the_top_passage(sim):
    scores, gold = sim.candidates("pipeline")
    np.testing.assert_array_equal(scores, sim.start_logits[:, 0] + sim.end_logits[:, 0])
    np.testing.assert_array_equal(gold, sim.gold[:, 0])
    joint_scores, joint_gold = sim.candidates("joint")
    np.testing.assert_array_equal(
        joint_scores[:, :10], sim.passage_logits[:, :1] + sim.start_logits[:, 0] + sim.end_logits[:, 0]
    )
    gold[:] = False  # candidates() returns copies
    assert sim.gold[:, 0].any()


def test_raw_scores_are_overconfident_and_pipeline_more_so(sim):
    """As in Si et al. Table 1: both overconfident before TS, pipeline more than joint."""
    gaps = {}
    for mode in ("joint", "pipeline"):
        conf, correct = _top1(*sim.candidates(mode))
        gaps[mode] = conf.mean() - correct.mean()
        assert gaps[mode] > 0.2
    assert gaps["pipeline"] > gaps["joint"]


def test_a_temperature_near_the_logit_scale_reduces_the_overconfidence(sim):
    scores, gold = sim.candidates("joint")
    conf, correct = _top1(scores, gold)
    conf_ts, correct_ts = _top1(scores, gold, temperature=sim.logit_scale)
    np.testing.assert_array_equal(correct, correct_ts)  # TS never changes the prediction
    assert abs(conf_ts.mean() - correct.mean()) < 0.5 * abs(conf.mean() - correct.mean())


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(accuracy=0.96), ValueError, r"accuracy \(0.96\) must be below answerable \(0.95\)"),
        (dict(accuracy=1.0), ValueError, "accuracy must be < 1"),
        (dict(accuracy=0.0), ValueError, "accuracy must be > 0"),
        (dict(accuracy=0.3, n_spans=0), ValueError, "n_spans must be at least 1"),
        (dict(accuracy=0.3, logit_scale=-1.0), ValueError, "logit_scale must be > 0"),
        (dict(accuracy=0.3, seed="x"), TypeError, "seed must be None, an int"),
        # One question, unanswerable under seed 0 (its first uniform draw is 0.64 > 0.4): accuracy is 0.
        (dict(accuracy=0.3, answerable=0.4, n_questions=1), ValueError, r"cannot be reached.*at most 0.000"),
    ],
)
def test_invalid_arguments(kwargs, error, match):
    kwargs = {"n_questions": 50, "seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        simulate_odqa(kwargs.pop("n_questions"), **kwargs)


def test_candidates_rejects_unknown_mode(sim):
    with pytest.raises(ValueError, match="mode must be one of 'joint', 'pipeline'"):
        sim.candidates("reader")
