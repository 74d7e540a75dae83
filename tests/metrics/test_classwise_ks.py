"""calibnb.classwise_ks (Gupta et al. 2021, §3) against a direct per-class loop."""

import numpy as np
import pytest

import calibnb as cn


def loop_classwise_ks(probs, labels, ties="order"):
    """Eqs. 9-12 class by class, item by item (no vectorisation)."""
    probs = np.asarray(probs, dtype=float)
    n, k = probs.shape
    per = []
    for cls in range(k):
        order = sorted(range(n), key=lambda i: probs[i, cls])  # Python's sort is stable
        h = h_tilde = 0.0
        best = 0.0
        for pos, i in enumerate(order):
            h += (labels[i] == cls) / n
            h_tilde += probs[i, cls] / n
            is_last = pos == n - 1 or probs[order[pos + 1], cls] != probs[i, cls]
            if ties == "order" or is_last:
                best = max(best, abs(h - h_tilde))
        per.append(best)
    return np.array(per)


def _data(seed, n=300, k=7, quantise=None):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k)) * 3
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    if quantise:  # many ties
        p = np.round(p * quantise) / quantise
    y = rng.integers(0, k, size=n)
    return p, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("ties", ["order", "group"])
@pytest.mark.parametrize("quantise", [None, 10])
def test_matches_the_loop(seed, ties, quantise):
    p, y = _data(seed, quantise=quantise)
    ref = loop_classwise_ks(p, y, ties)
    np.testing.assert_allclose(cn.classwise_ks(p, y, ties=ties, per_class=True), ref, atol=1e-12)
    assert cn.classwise_ks(p, y, ties=ties) == pytest.approx(ref.mean(), abs=1e-12)


def test_each_class_is_ks_error_of_that_class():
    p, y = _data(3, n=1000, k=5)
    per = cn.classwise_ks(p, y, per_class=True)
    for cls in range(5):
        assert per[cls] == pytest.approx(cn.ks_error(p[:, cls], y == cls), abs=1e-12)


def test_ties_matter_only_with_ties():
    p, y = _data(4)
    assert cn.classwise_ks(p, y, ties="order") == pytest.approx(cn.classwise_ks(p, y, ties="group"), abs=1e-12)
    pq, yq = _data(4, quantise=4)
    assert cn.classwise_ks(pq, yq, ties="order") > cn.classwise_ks(pq, yq, ties="group")


def test_calibrated_by_construction_is_small_and_shuffle_invariant():
    rng = np.random.default_rng(5)
    n, k = 20000, 4
    p = rng.dirichlet(np.ones(k), size=n)
    y = (rng.random((n, 1)) < np.cumsum(p, axis=1)).argmax(axis=1)  # y ~ p: calibrated
    assert cn.classwise_ks(p, y) < 0.02
    perm = rng.permutation(n)
    assert cn.classwise_ks(p[perm], y[perm]) == pytest.approx(cn.classwise_ks(p, y), abs=1e-12)
    # one-hot confident wrong predictions: every class KS is large
    wrong = np.eye(k)[(y + 1) % k]
    assert cn.classwise_ks(wrong, y) > 0.2


@pytest.mark.parametrize("probs, labels, exc, match", [
    ([0.2, 0.8], [0, 1], ValueError, "probs"),                       # 1-D probs
    ([[0.2, 0.8], [0.5, 0.5]], [0], ValueError, "labels"),          # wrong length
    ([[0.2, 0.8], [0.5, 0.5]], [0, 2], ValueError, "labels"),       # label out of range
    ([[0.2, 1.8], [0.5, 0.5]], [0, 1], ValueError, "probs"),        # probability > 1
    ([[0.2, np.nan], [0.5, 0.5]], [0, 1], ValueError, "probs"),     # NaN
    ([[0.2, 0.8], [0.5, 0.5]], [0.5, 1], (ValueError, TypeError), "labels"),  # non-integer labels
])
def test_bad_input_names_the_argument(probs, labels, exc, match):
    with pytest.raises(exc, match=match):
        cn.classwise_ks(probs, labels)


def test_bad_options():
    with pytest.raises(ValueError, match="ties"):
        cn.classwise_ks([[0.2, 0.8]], [1], ties="mean")
    with pytest.raises(TypeError, match="per_class"):
        cn.classwise_ks([[0.2, 0.8]], [1], per_class="yes")


@pytest.mark.parametrize("levels", [None, 3, 50, "few"])
def test_stable_row_sort_is_the_stable_argsort(levels):
    from calibnb.metrics.multiclass import stable_row_sort

    rng = np.random.default_rng(9)
    x = rng.random((7, 600))
    if levels == "few":  # a few ties per row (re-sorted alone), among them runs of three and runs at both ends
        x[:, 10:13] = x[:, [5]]
        x[:, 40] = x[:, 300]
        x[2, [0, 599]] = x[2, 100]
        x[3, :3] = -1.0
        x[4, -2:] = 2.0
        assert 8 * np.count_nonzero(np.diff(np.sort(x, axis=1), axis=1) == 0) < x.size  # few: the sparse path
    else:
        if levels:
            x = np.round(x * levels) / levels  # many ties (each tied row re-sorted by its dense ranks)
        x[0] = 0.25  # a constant row
    order, s = stable_row_sort(x)
    np.testing.assert_array_equal(order, np.argsort(x, axis=1, kind="stable"))
    np.testing.assert_array_equal(s, np.sort(x, axis=1))


@pytest.mark.parametrize("levels", [None, 3, 50, 100_000])
def test_stable_row_sort_with_a_hint_is_the_stable_argsort_for_any_hint(levels):
    """issue 31: a hint (a guess at the order) only speeds the sort up; good, poor and adversarial guesses."""
    from calibnb.metrics.multiclass import stable_row_sort

    rng = np.random.default_rng(11)
    base = rng.random((7, 600))
    x = np.round(base * levels) / levels if levels else base.copy()  # a monotone map of base (with ties)
    if levels != 100_000:  # 100,000 levels: a few ties only
        x[0] = 0.25  # a constant row
    x[1, ::7] = 1.0 - x[1, ::7]  # a row the map does not keep in order
    expected = np.argsort(x, axis=1, kind="stable")
    close = np.argsort(base, axis=1, kind="stable")  # the order of the scores x was made from
    hints = {"close": close, "exact": expected, "identity": np.tile(np.arange(600), (7, 1)),
             "reversed": close[:, ::-1], "random": np.argsort(rng.random((7, 600)), axis=1),
             "int32": close.astype(np.int32)}
    for name, hint in hints.items():
        order, s = stable_row_sort(x, hint=hint)
        np.testing.assert_array_equal(order, expected, err_msg=name)
        np.testing.assert_array_equal(s, np.sort(x, axis=1), err_msg=name)
        assert order.dtype == np.intp
    float32 = x.astype(np.float32)
    np.testing.assert_array_equal(stable_row_sort(float32, hint=close)[0], np.argsort(float32, axis=1, kind="stable"))


def test_stable_row_sort_refuses_a_hint_that_is_not_a_permutation_per_row():
    from calibnb.metrics.multiclass import stable_row_sort

    x = np.array([[0.5, 0.2, 0.5], [0.1, 0.3, 0.2]])
    with pytest.raises(ValueError, match="hint must have the shape of rows"):
        stable_row_sort(x, hint=[[0, 1, 2]])
    with pytest.raises(TypeError, match="hint must hold integer positions"):
        stable_row_sort(x, hint=[[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match="hint must hold positions in 0..2"):
        stable_row_sort(x, hint=[[0, 1, 3], [0, 1, 2]])
    with pytest.raises(ValueError, match="hint must hold positions in 0..2"):
        stable_row_sort(x, hint=[[0, 1, 2], [-1, 1, 2]])
    with pytest.raises(ValueError, match="row 1 repeats a position"):
        stable_row_sort(x, hint=[[2, 1, 0], [0, 0, 2]])
