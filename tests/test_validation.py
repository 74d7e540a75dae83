"""Every input error, through the public entry points and calibnb.validation."""

import numpy as np
import pytest

import calibnb as cb
from calibnb import validation as v

GOOD_CONF = [0.2, 0.9, 0.5]
GOOD_CORRECT = [1, 0, 1]
CONF_FUNCS = [cb.ece, cb.mce, cb.reliability_table, cb.ice, cb.macro_ce, cb.macro_ce_parts,
              cb.rewards, cb.hmr, cb.ks_error, cb.ks_curves, cb.brier_top]


@pytest.mark.parametrize("f", CONF_FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("conf, correct, exc, match", [
    ([0.2, 1.5, 7], [1, 0, 1], ValueError, r"conf has 2 values outside \[0, 1\]; first at index 1: 1.5"),
    ([-0.1, 0.5], [1, 0], ValueError, r"conf has 1 value outside \[0, 1\]; first at index 0: -0.1"),
    ([0.2, np.nan, 0.3], [1, 0, 1], ValueError, r"conf has 1 value that is NaN or infinite; first at index 1: nan"),
    ([0.2, np.inf], [1, 0], ValueError, r"conf has 1 value that is NaN or infinite; first at index 1: inf"),
    ([], [], ValueError, r"conf is empty; at least one value is needed"),
    ("0.5", [1], TypeError, r"conf must be an array of numbers, not a string"),
    (None, [1], TypeError, r"conf must be an array of numbers, not None"),
    (["a", "b"], [1, 0], TypeError, r"conf must hold numbers; got dtype <U1"),
    ([0.2, 0.3], [1, 0, 1], ValueError, r"correct has length 3 but conf has length 2; they must match"),
    ([0.2, 0.3], [1, 2], ValueError, r"correct must hold only 0/1 or bool; 1 value is not; first at index 1: 2"),
    ([0.2, 0.3, 0.4], [1, 0.5, 0.7], ValueError, r"correct must hold only 0/1 or bool; 2 values are not; first at index 1: 0.5"),
    ([0.2, 0.3], [1, -1], ValueError, r"correct must hold only 0/1 or bool; 1 value is not; first at index 1: -1"),
])
def test_conf_correct_errors(f, conf, correct, exc, match):
    with pytest.raises(exc, match=match):
        f(conf, correct)


@pytest.mark.parametrize("f", CONF_FUNCS, ids=lambda f: f.__name__)
def test_2d_conf_is_a_batch_or_refused(f):
    # the batch-axis metrics take (S, N) with correct of the same shape; the others want 1-D
    batch = f not in (cb.reliability_table, cb.ks_curves)
    match = r"correct has shape \(1,\) but conf has shape \(1, 2\)" if batch else r"conf must be 1-D; got an array of shape \(1, 2\)"
    with pytest.raises(ValueError, match=match):
        f([[0.2, 0.3]], [1])
    with pytest.raises(ValueError, match=r"conf must be 1-D \(N,\) or 2-D \(S, N\)" if batch else "conf must be 1-D"):
        f(np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))


@pytest.mark.parametrize("f", [cb.ece, cb.mce, cb.reliability_table, cb.bin_indices], ids=lambda f: f.__name__)
def test_bin_option_errors(f):
    args = (GOOD_CONF,) if f is cb.bin_indices else (GOOD_CONF, GOOD_CORRECT)
    with pytest.raises(ValueError, match="n_bins must be at least 1; got 0"):
        f(*args, n_bins=0)
    with pytest.raises(TypeError, match="n_bins must be an integer; got float 2.5"):
        f(*args, n_bins=2.5)
    with pytest.raises(TypeError, match="n_bins must be an integer; got bool True"):
        f(*args, n_bins=True)
    with pytest.raises(ValueError, match="binning must be one of 'width', 'mass'; got 'equal'"):
        f(*args, binning="equal")


def test_option_errors():
    with pytest.raises(ValueError, match="ties must be one of 'order', 'group'; got 'any'"):
        cb.ks_error(GOOD_CONF, GOOD_CORRECT, ties="any")
    with pytest.raises(ValueError, match="beta must be >= 0; got -1"):
        cb.hmr(GOOD_CONF, GOOD_CORRECT, beta=-1)
    with pytest.raises(TypeError, match="beta must be a real number; got str"):
        cb.hmr(GOOD_CONF, GOOD_CORRECT, beta="1")
    with pytest.raises(ValueError, match="beta must be finite; got nan"):
        cb.hmr(GOOD_CONF, GOOD_CORRECT, beta=float("nan"))


def test_bool_and_int_correct_accepted():
    for correct in ([True, False, True], np.array([1, 0, 1], dtype=np.int8), [1.0, 0.0, 1.0]):
        assert cb.ice(GOOD_CONF, correct) == pytest.approx(cb.ice(GOOD_CONF, GOOD_CORRECT))


PROBS = [[0.5, 0.5], [0.2, 0.8]]


@pytest.mark.parametrize("f", [cb.top_r, cb.within_top_r, cb.classwise_ece, cb.nbr], ids=lambda f: f.__name__)
@pytest.mark.parametrize("probs, labels, exc, match", [
    ([[0.5, 0.5], [0.2, 0.9]], [0, 1], ValueError,
     r"probs has 1 row that does not sum to 1 \(tolerance 1e-06\); first at row 1: sum 1.1"),
    ([[1.5, -0.5], [0.2, 0.8]], [0, 1], ValueError, r"probs has 1 value below 0; first at index \(0, 1\): -0.5"),
    ([[np.nan, 0.5], [0.2, 0.8]], [0, 1], ValueError, r"probs has 1 value that is NaN or infinite; first at index \(0, 0\): nan"),
    ([0.5, 0.5], [0], ValueError, r"probs must be 2-D with shape \(N, K\); got an array of shape \(2,\)"),
    ([[1.0], [1.0]], [0, 0], ValueError, r"probs must have at least 2 classes \(columns\); got shape \(2, 1\)"),
    (np.empty((0, 3)), [], ValueError, r"probs is empty"),
    (PROBS, [0, 2], ValueError, r"labels has 1 value outside \[0, 2\); first at index 1: 2"),
    (PROBS, [-1, 0], ValueError, r"labels has 1 value outside \[0, 2\); first at index 0: -1"),
    (PROBS, [0], ValueError, r"labels has length 1 but probs has 2 rows; they must match"),
    (PROBS, [0.0, 1.5], ValueError, r"labels must hold integer class indices; 1 value is not whole; first at index 1: 1.5"),
    (PROBS, ["a", "b"], TypeError, r"labels must hold numbers"),
])
def test_probs_labels_errors(f, probs, labels, exc, match):
    with pytest.raises(exc, match=match):
        f(probs, labels)


@pytest.mark.parametrize("f", [cb.dist_ce, cb.ent_ce, cb.rank_cs, cb.human_classwise_ce], ids=lambda f: f.__name__)
@pytest.mark.parametrize("human, match", [
    ([[1, 1], [0, 0]], r"human has 1 all-zero row\(s\) \(an item with no votes\); first at row 1"),
    ([[1, -1], [0, 2]], r"human has 1 value below 0; first at index \(0, 1\): -1.0"),
    ([[1, np.nan], [0, 2]], r"human has 1 value that is NaN or infinite"),
    ([[1, 1]], r"human has 1 rows but probs has 2; they must match"),
    ([[1, 1, 1], [1, 1, 1]], r"human has 3 classes \(columns\) but probs has 2; they must match"),
    ([1, 1], r"human must be 2-D with shape \(N, K\)"),
])
def test_human_errors(f, human, match):
    with pytest.raises(ValueError, match=match):
        f(PROBS, human)


def test_scalar_errors():
    with pytest.raises(ValueError, match=r"pred_scalar has 1 value that is NaN or infinite; first at index 1: inf"):
        cb.scalar_mae([0.1, np.inf], [0.0, 1.0])
    with pytest.raises(ValueError, match="pred_scalar is empty; at least one value is needed"):
        cb.ranking_risk([], [])
    with pytest.raises(ValueError, match="values must be 1-D"):
        cb.expected_label(PROBS, [[1.0, 0.0]])


def test_probs_normalize_option():
    p = v.check_probs([[1.0, 3.0]], normalize=True)
    np.testing.assert_allclose(p, [[0.25, 0.75]])
    with pytest.raises(ValueError, match=r"probs has 1 all-zero row\(s\) that cannot be normalised; first at row 0"):
        v.check_probs([[0.0, 0.0]], normalize=True)


def test_seed_and_choice_helpers():
    assert isinstance(v.as_rng(3), np.random.Generator)
    with pytest.raises(TypeError, match="seed must be None, an int or a numpy.random.Generator; got str"):
        v.as_rng("3")
    with pytest.raises(ValueError, match="x must be <= 1; got 2"):
        v.check_scalar_in_range(2, "x", high=1)


# ------------------------------------------------------------------ moved from tests/test_hardening.py (issue 14's defect classes)

import calibnb as cn  # noqa: E402
from calibnb.validation import check_probs  # noqa: E402


def test_probabilities_within_the_accepted_tolerance_are_clipped():
    p = np.array([[1 + 5e-7, 0.0], [0.4, 0.6]])
    assert check_probs(p).max() == 1.0
    conf, correct = cn.top_r(p, [0, 1])
    assert conf.max() == 1.0
    assert cn.ece(conf, correct) == pytest.approx(0.2)
