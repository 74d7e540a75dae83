"""Scalar annotation study (Jiang, Liu, Van Durme 2024), used by notebook 05.

Jiang et al. argue that one scalar label per item ("how likely is the
hypothesis, 0-1") measures instance-level calibration almost as well as 100
categorical votes, at the cost of a few annotations. The UNLI scalar labels are
not public here, so ``notebooks/05_jiang2024_scalar_labels.ipynb`` demonstrates
the argument on ChaosNLI-SNLI with this module:

* :func:`simulate_scalar_labels`: seeded noisy scalar annotators around
  :math:`\\psi_f` of the human distribution, on UNLI's slider;
* :func:`sample_votes`: ``k`` categorical votes per item drawn from the 100;
* :func:`fit_beta` and :func:`quantize_beta`: §5's closed-form back-mapping of
  a continuous label distribution into K classes;
* :func:`barycentric`: simplex coordinates for the Figure 1 analogue;
* :func:`calibration_table`, :func:`ece_table`, :func:`ranking_changes`,
  :func:`ranking_agreement`: the model comparisons;
* :func:`gap_weighted_regret`, :func:`kpartite_ranking_risk`,
  :func:`theorem1_table`: Theorem 1 on real models;
* :func:`metric_agreement`: Kendall's tau between CE and MAE/RR per model set;
* :func:`fit_annotator_noise`, :func:`like_for_like_cost_study`,
  :func:`cost_intervals`: the cost argument, scalar labels vs votes on the
  same metric and target, with annotators fitted to the paper's r;
* :func:`pair_share`: Figure 1's "high ENT and high CON are rare";
* :func:`load_circa_examples`: Table 4's eleven Circa examples;
* :func:`f_neutral_explorer`, :func:`ece_bins_explorer`: the two panels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..metrics import ece
from ..metrics import human_distribution
from ..metrics import human_classwise_ce, expected_label, ranking_risk, scalar_mae, unli_inverse, unli_transform
from ..metrics.scalar import tie_ranks
from ..widgets import build_panel
from ..validation import (
    as_float_array,
    as_rng,
    check_1d_finite,
    check_choice,
    check_human,
    check_labels,
    check_n_bins,
    check_positive_int,
    check_probs,
    check_enough_votes,
    check_scalar_in_range,
)

__all__ = [
    "CIRCA_VALUES",
    "nli_values",
    "simulate_scalar_labels",
    "sample_votes",
    "fit_beta",
    "quantize_beta",
    "barycentric",
    "random_logit_baseline",
    "calibration_table",
    "ece_table",
    "ranking_agreement",
    "ranking_changes",
    "gap_weighted_regret",
    "kpartite_ranking_risk",
    "theorem1_table",
    "scalar_label_correlation",
    "fit_annotator_noise",
    "metric_agreement",
    "like_for_like_cost_study",
    "cost_intervals",
    "pair_share",
    "load_circa_examples",
    "circa_examples_path",
    "f_neutral_explorer",
    "ece_bins_explorer",
]

#: Jiang et al. 2024 §6.3's value f of each Circa label (N, Prob.N, M, Prob.Y, Y
#: equally spaced; N/A and Unsure in the middle; Cond slightly towards yes).
CIRCA_VALUES = {"N": 0.0, "PN": 0.25, "M": 0.5, "PY": 0.75, "Y": 1.0, "N/A": 0.5, "Unsure": 0.5, "Cond": 0.6}


def nli_values(f_neutral: float = 0.5) -> np.ndarray:
    """The NLI scalar values f in ChaosNLI's class order [entailment, neutral, contradiction].

    f(ENT) = 1, f(CON) = 0 and f(NEU) = ``f_neutral`` (papers README §5; the
    paper's UNLI reading "probability that the hypothesis is true").

    Examples
    --------
    >>> nli_values(0.2).tolist()
    [1.0, 0.2, 0.0]
    """
    v = check_scalar_in_range(f_neutral, "f_neutral", low=0.0, high=1.0)
    return np.array([1.0, v, 0.0])


# --------------------------------------------------------------------------- simulated annotators


def simulate_scalar_labels(target, *, n_annotators: int = 3, noise: float = 0.05, seed: Any = None) -> np.ndarray:
    r"""Noisy scalar annotators who answer on UNLI's slider around a target label.

    Noise model: annotator :math:`j` of item :math:`i` aims the slider at the
    position of the target label and misses by a Gaussian error measured in
    slider widths; the label recorded is UNLI's transform of the clipped
    position,

    .. math::

        s_{ij} = \mathrm{clip}\big(g^{-1}(u_i) + 10^4\,\sigma\,\varepsilon_{ij},\ 0,\ 10^4\big),
        \qquad \varepsilon_{ij} \sim \mathcal N(0, 1)\ \text{i.i.d.},\qquad
        \hat u_{ij} = g(s_{ij}),

    where :math:`g` is :func:`calibnb.unli_transform` (UNLI's logistic slider
    map, Jiang et al. 2024 §6.1 after Chen et al. 2020), :math:`u_i` the target
    (in the notebook :math:`\psi_f` of the 100-vote ChaosNLI distribution) and
    :math:`\sigma` = ``noise``. Because :math:`g` is steep just left of the
    slider's middle, the same slider error moves a label below 1/2 further
    than one above it.

    Parameters
    ----------
    target : array-like of shape (N,)
        Target labels in [0, 1].
    n_annotators : int, default 3
        Labels per item.
    noise : float, default 0.05
        Standard deviation of the slider error, as a fraction of the slider's
        width (0 = exact annotators).
    seed : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of shape (N, n_annotators), values in [0, 1]

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). §6.1.
    .. [2] Tongfei Chen, Zhengping Jiang, Adam Poliak, Keisuke Sakaguchi, Benjamin Van Durme. 2020. "Uncertain Natural Language Inference". In Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics (ACL).

    Examples
    --------
    >>> simulate_scalar_labels([0.0, 0.25, 1.0], n_annotators=2, noise=0.0, seed=0).round(6).tolist()
    [[0.0, 0.0], [0.25, 0.25], [1.0, 1.0]]
    >>> simulate_scalar_labels([0.5], n_annotators=4, noise=0.05, seed=0).shape
    (1, 4)
    """
    u = check_1d_finite(target, "target")
    bad = (u < 0) | (u > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"target has {int(bad.sum())} value(s) outside [0, 1]; first at index {i}: {float(u[i])!r}.")
    n_annotators = check_positive_int(n_annotators, "n_annotators")
    noise = check_scalar_in_range(noise, "noise", low=0.0)
    rng = as_rng(seed)
    aim = unli_inverse(u)[:, None]
    slider = np.clip(aim + 10000.0 * noise * rng.standard_normal((u.shape[0], n_annotators)), 0.0, 10000.0)
    return unli_transform(slider.ravel()).reshape(slider.shape)


def sample_votes(human, n_votes: int, *, seed: Any = None) -> np.ndarray:
    r"""``n_votes`` categorical votes per item, drawn without replacement from its votes.

    The cheap categorical protocol of Jiang et al. 2024's cost argument: an item
    annotated by ``n_votes`` annotators instead of ChaosNLI's 100. Each item's
    votes are shuffled and the first ``n_votes`` kept (multivariate
    hypergeometric), so the estimate

    .. math:: \hat\pi_k(x) = \frac{1}{n}\sum_{t=1}^{n} [y_t = k]

    is ``result / n_votes``.

    Parameters
    ----------
    human : array-like of shape (N, K)
        Integer vote counts; every item needs at least ``n_votes`` votes.
    n_votes : int
    seed : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (N, K), each row summing to ``n_votes``

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL).

    Examples
    --------
    >>> sample_votes([[3, 0, 1], [0, 5, 0]], 2, seed=0)[1].tolist()
    [0, 2, 0]
    >>> sample_votes([[3, 0, 1], [0, 5, 0]], 4, seed=0)[0].tolist()
    [3, 0, 1]
    """
    n_votes = check_positive_int(n_votes, "n_votes")
    c, totals = check_enough_votes(human, n_votes)
    rng = as_rng(seed)
    left = c.astype(np.int64)
    out = np.zeros_like(left)
    rows = np.arange(left.shape[0])
    for t in range(n_votes):   # one vote per step, each remaining vote equally likely
        pick = rng.random(left.shape[0]) * (totals - t)
        cls = (pick[:, None] >= np.cumsum(left, axis=1)).sum(axis=1)
        left[rows, cls] -= 1
        out[rows, cls] += 1
    return out


# --------------------------------------------------------------------------- §5 back-mapping


def fit_beta(labels, *, min_var: float = 1e-3, eps: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    r"""Method-of-moments Beta fit to each item's scalar labels.

    .. math::

        \bar u = \frac1n\sum_j u_j,\quad
        v = \frac1{n-1}\sum_j (u_j - \bar u)^2,\quad
        \alpha = \bar u\,c,\ \ \beta = (1 - \bar u)\,c,\ \ c = \frac{\bar u(1-\bar u)}{v} - 1

    With the two or three labels an item gets, the sample moments are often
    degenerate, so :math:`\bar u` is clipped to :math:`[\epsilon, 1-\epsilon]`
    and :math:`v` to :math:`[v_{\min},\ (1-\epsilon)\,\bar u(1-\bar u)]`
    (a Beta needs :math:`v < \bar u(1-\bar u)`); with one label per item
    :math:`v = v_{\min}`. This is the "parametrized distribution of scalar
    annotations" that Jiang et al. 2024 §5 quantise.

    Parameters
    ----------
    labels : array-like of shape (N, n)
        Scalar labels in [0, 1], ``n`` per item.
    min_var : float, default 1e-3
        Smallest variance allowed (and the variance used when ``n == 1``).
    eps : float, default 1e-3

    Returns
    -------
    alpha, beta : ndarray of shape (N,)

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). §5.

    Examples
    --------
    >>> a, b = fit_beta([[0.2, 0.4, 0.6]])
    >>> round(float(a[0]), 3), round(float(b[0]), 3)
    (2.0, 3.0)
    """
    u = as_float_array(labels, "labels")
    if u.ndim != 2 or u.shape[0] == 0 or u.shape[1] == 0:
        raise ValueError(f"labels must be a non-empty 2-D array (items x labels); got shape {u.shape}.")
    flat = check_1d_finite(u.ravel(), "labels")
    bad = (flat < 0) | (flat > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"labels has {int(bad.sum())} value(s) outside [0, 1]; first at flat index {i}: {float(flat[i])!r}.")
    min_var = check_scalar_in_range(min_var, "min_var", low=0.0, high=0.25, low_inclusive=False, high_inclusive=False)
    eps = check_scalar_in_range(eps, "eps", low=0.0, high=0.5, low_inclusive=False, high_inclusive=False)
    m = np.clip(u.mean(axis=1), eps, 1.0 - eps)
    v = u.var(axis=1, ddof=1) if u.shape[1] > 1 else np.full(u.shape[0], min_var)
    upper = (1.0 - eps) * m * (1.0 - m)
    v = np.minimum(np.maximum(v, min(min_var, 0.5 * upper.min())), upper)
    common = m * (1.0 - m) / v - 1.0
    return m * common, (1.0 - m) * common


def quantize_beta(alpha, beta, cutoffs) -> np.ndarray:
    r"""Closed-form quantisation of Beta distributions into K ordered classes.

    .. math::

        q_k = F(c_k) - F(c_{k-1}),\qquad k = 1..K,\qquad c_0 = 0,\ c_K = 1,

    with :math:`F` the Beta CDF (``scipy.stats.beta``) and
    :math:`c_1 < \dots < c_{K-1}` the interior cut-offs (Jiang et al. 2024,
    §5 "Closed Form Solution"). Class 1 is the lowest scalar (for NLI,
    contradiction); reverse the columns for ChaosNLI's [e, n, c] order.

    Parameters
    ----------
    alpha, beta : array-like of shape (N,)
        Positive Beta parameters (e.g. from :func:`fit_beta`).
    cutoffs : array-like of shape (K - 1,)
        Strictly increasing interior cut-offs in (0, 1).

    Returns
    -------
    ndarray of shape (N, K), rows summing to 1

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). §5.

    Examples
    --------
    >>> quantize_beta([1.0], [1.0], [0.25, 0.5]).round(3).tolist()   # uniform
    [[0.25, 0.25, 0.5]]
    """
    from scipy import stats

    a = check_1d_finite(alpha, "alpha")
    b = check_1d_finite(beta, "beta")
    if a.shape != b.shape:
        raise ValueError(f"alpha has length {a.shape[0]} but beta has {b.shape[0]}; they must match.")
    for arr, name in ((a, "alpha"), (b, "beta")):
        bad = arr <= 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{name} has {int(bad.sum())} value(s) <= 0; first at index {i}: {float(arr[i])!r}.")
    c = check_1d_finite(cutoffs, "cutoffs")
    if (c <= 0).any() or (c >= 1).any():
        raise ValueError(f"cutoffs must lie strictly inside (0, 1); got {c.tolist()}.")
    if (np.diff(c) <= 0).any():
        raise ValueError(f"cutoffs must be strictly increasing; got {c.tolist()}.")
    cdf = stats.beta.cdf(c[None, :], a[:, None], b[:, None])
    edges = np.concatenate([np.zeros((a.shape[0], 1)), cdf, np.ones((a.shape[0], 1))], axis=1)
    return np.diff(edges, axis=1)


def barycentric(probs, *, vertices=None) -> np.ndarray:
    r"""Points of the probability simplex in the plane (barycentric coordinates).

    .. math:: (x, y) = \sum_{k=1}^{K} p_k\, v_k

    with :math:`v_k` the corner of class :math:`k`; by default the corners of
    an equilateral triangle (0, 0), (1, 0), (1/2, √3/2) for K = 3 (the floor of
    Jiang et al. 2024's Figure 1).

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Figure 1.

    Examples
    --------
    >>> barycentric([[1, 0, 0], [0, 0, 1], [1/3, 1/3, 1/3]]).round(3).tolist()
    [[0.0, 0.0], [0.5, 0.866], [0.5, 0.289]]
    """
    p = check_probs(probs)
    if vertices is None:
        if p.shape[1] != 3:
            raise ValueError(f"default vertices are for 3 classes; probs has {p.shape[1]}. Pass vertices.")
        v = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3.0) / 2.0]])
    else:
        v = np.asarray(vertices, dtype=np.float64)
        if v.shape != (p.shape[1], 2):
            raise ValueError(f"vertices must have shape ({p.shape[1]}, 2); got {v.shape}.")
        check_1d_finite(v.ravel(), "vertices")
    return p @ v


def random_logit_baseline(n: int, *, n_classes: int = 3, scale: float = 1.0, seed: Any = None) -> np.ndarray:
    r"""Logits of a random classifier: i.i.d. :math:`\mathcal N(0, \text{scale}^2)`.

    Our stand-in for Jiang et al. 2024's "random" model (an encoder with a
    randomly initialised classifier head, Table 2): its outputs carry no
    information about the item.

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL).

    Examples
    --------
    >>> random_logit_baseline(4, n_classes=3, seed=0).shape
    (4, 3)
    """
    n = check_positive_int(n, "n")
    n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    scale = check_scalar_in_range(scale, "scale", low=0.0)
    return scale * as_rng(seed).standard_normal((n, n_classes))


# --------------------------------------------------------------------------- model comparisons


def _check_models(probs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    if not isinstance(probs, Mapping) or not probs:
        raise TypeError("probs must be a non-empty mapping of model name -> (N, K) probabilities.")
    out = {str(name): check_probs(p, name=f"probs[{name!r}]") for name, p in probs.items()}
    shapes = {p.shape for p in out.values()}
    if len(shapes) != 1:
        raise ValueError(f"every model must give probabilities of the same shape; got {sorted(shapes)}.")
    return out


def calibration_table(probs: Mapping[str, Any], human, values, *, target=None) -> pd.DataFrame:
    r"""Instance-level calibration of several models: CE, MAE and RR (Jiang et al. 2024, Table 2).

    .. math::

        \mathrm{CE} = \frac1N\sum_i \frac1K\sum_k |f_k(x_i) - \bar\pi_k(x_i)|,\quad
        \mathrm{MAE} = \frac1N\sum_i |\psi_f(f(x_i)) - s_i|,\quad
        \mathrm{RR} = \Pr_{i<j}\big[\text{order of } \psi_f(f(x)) \ne \text{order of } s\big]

    (Definition 1, Definition 2, §4) with :math:`s` = ``target`` (default
    :math:`\psi_f(\bar\pi)`, the scalar the human distribution implies).
    Also reports the bound :math:`(\max f - \min f)\,\mathbb E[\mathrm{TVD}(f(x), \bar\pi(x))]`
    on the MAE against :math:`\psi_f(\bar\pi)`.

    Parameters
    ----------
    probs : mapping of str -> array-like of shape (N, K)
    human : array-like of shape (N, K)
        Vote counts or distributions.
    values : array-like of shape (K,)
        f per class.
    target : array-like of shape (N,), optional
        Scalar labels; default ``expected_label(human_distribution(human), values)``.

    Returns
    -------
    DataFrame indexed by model, columns ``CE``, ``MAE``, ``RR``, ``MAE bound``

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Table 2.

    Examples
    --------
    >>> t = calibration_table({"m": [[0.9, 0.1], [0.2, 0.8]]}, [[6, 4], [0, 10]], [1.0, 0.0])
    >>> t.round(3).loc["m"].tolist()
    [0.25, 0.25, 0.0, 0.25]
    """
    models = _check_models(probs)
    n, k = next(iter(models.values())).shape
    h = human_distribution(check_human(human, n, k))
    v = check_1d_finite(values, "values")
    s = expected_label(h, v) if target is None else check_1d_finite(target, "target")
    if s.shape[0] != n:
        raise ValueError(f"target has length {s.shape[0]} but probs have {n} rows; they must match.")
    spread = float(v.max() - v.min())
    rows = {}
    for name, p in models.items():
        psi = expected_label(p, v)
        rows[name] = {
            "CE": human_classwise_ce(p, h),
            "MAE": scalar_mae(psi, s),
            "RR": ranking_risk(psi, s),
            "MAE bound": spread * float(0.5 * np.abs(p - h).sum(axis=1).mean()),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def ece_table(probs: Mapping[str, Any], labels, *, n_bins: Sequence[int] = (5, 20, 100),
              binnings: Sequence[str] = ("width", "mass")) -> pd.DataFrame:
    r"""Top-label ECE of several models for several binnings (Jiang et al. 2024, Table 3's ECE-# rows).

    .. math:: \mathrm{ECE}_M = \sum_{m=1}^{M} \frac{|B_m|}{N}\,|\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|

    with equal-width or equal-mass bins :math:`B_m` (see :func:`calibnb.ece`).

    Returns
    -------
    DataFrame indexed by model, with columns ``"<binning>-<M>"`` (e.g. ``"width-5"``)

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Table 3.

    Examples
    --------
    >>> t = ece_table({"m": [[0.9, 0.1], [0.6, 0.4]]}, [0, 1], n_bins=(1, 4), binnings=("width",))
    >>> t.round(2).loc["m"].tolist()
    [0.25, 0.35]
    """
    models = _check_models(probs)
    n, k = next(iter(models.values())).shape
    y = check_labels(labels, n, k)
    if isinstance(n_bins, (str, bytes)) or not isinstance(n_bins, Sequence):
        raise TypeError(f"n_bins must be a sequence of bin counts, e.g. (5, 20, 100); got {n_bins!r}.")
    if isinstance(binnings, (str, bytes)) or not isinstance(binnings, Sequence):
        raise TypeError(f"binnings must be a sequence such as ('width', 'mass'); got {binnings!r}.")
    bins = [check_n_bins(b) for b in n_bins]
    kinds = [check_choice(b, ("width", "mass"), "binnings") for b in binnings]
    rows = {}
    for name, p in models.items():
        conf, correct = p.max(axis=1), p.argmax(axis=1) == y
        rows[name] = {f"{kind}-{b}": ece(conf, correct, n_bins=b, binning=kind) for kind in kinds for b in bins}
    return pd.DataFrame.from_dict(rows, orient="index")


def ranking_agreement(a, b) -> float:
    r"""Kendall's :math:`\tau_b` between two scorings of the same models (1 = same ranking).

    .. math:: \tau_b = \frac{P - Q}{\sqrt{(P + Q + T_a)(P + Q + T_b)}}

    with :math:`P`/:math:`Q` concordant/discordant pairs and :math:`T` ties in
    only one scoring (``scipy.stats.kendalltau``). Values within rounding
    noise of each other are ties (:func:`calibnb.metrics.scalar.tie_ranks`).

    Raises
    ------
    ValueError
        If ``a`` or ``b`` ties every model (a constant scoring ranks nothing,
        and :math:`\tau_b` is 0/0): never a silent NaN.

    Examples
    --------
    >>> ranking_agreement([1, 2, 3], [10, 20, 30]), ranking_agreement([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    """
    from scipy import stats

    x = check_1d_finite(a, "a")
    y = check_1d_finite(b, "b")
    if x.shape != y.shape or x.shape[0] < 2:
        raise ValueError(f"a and b must have the same length, at least 2; got {x.shape[0]} and {y.shape[0]}.")
    rx, ry = tie_ranks(x, "a"), tie_ranks(y, "b")
    for name, r in (("a", rx), ("b", ry)):
        if r.max() == 0:
            raise ValueError(f"{name} gives every model the same value; Kendall's tau is undefined for a constant "
                             "scoring (nothing is ranked).")
    return float(stats.kendalltau(rx, ry).statistic)


def ranking_changes(table: pd.DataFrame) -> pd.DataFrame:
    r"""How often the ranking of models changes between the columns of a metric table.

    For every pair of columns (settings) :math:`(a, b)`, count the model pairs
    :math:`(i, j)` ordered strictly oppositely,

    .. math:: D_{ab} = \#\{i < j : (t_{ia} - t_{ja})(t_{ib} - t_{jb}) < 0\},

    and give Kendall's :math:`\tau_b` between the two columns (Jiang et al.
    2024 §1-2: ECE-5/20/100 "provide different values and inconsistent
    rankings").

    Parameters
    ----------
    table : DataFrame
        Models as rows, settings as columns (e.g. :func:`ece_table`).

    Returns
    -------
    DataFrame with one row per column pair: ``setting a``, ``setting b``,
    ``discordant pairs``, ``kendall tau``, ``flipped`` (the model pairs whose order flips, as
    ``"i/j"`` text).

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). §1-2.

    Examples
    --------
    >>> t = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [2.0, 1.0, 3.0]}, index=["x", "y", "z"])
    >>> ranking_changes(t)[["discordant pairs", "flipped"]].values.tolist()
    [[1, 'x/y']]
    """
    if not isinstance(table, pd.DataFrame) or table.shape[0] < 2 or table.shape[1] < 2:
        raise TypeError("table must be a DataFrame with at least 2 models (rows) and 2 settings (columns).")
    t = table.to_numpy(dtype=np.float64)
    check_1d_finite(t.ravel(), "table")
    for j, col in enumerate(table.columns):
        if tie_ranks(t[:, j]).max() == 0:
            raise ValueError(f"table column {col!r} gives every model the same value; there is no ranking to compare.")
    names = np.asarray(table.index, dtype=object)
    iu, ju = np.triu_indices(t.shape[0], k=1)
    rows = []
    cols = list(table.columns)
    for a in range(len(cols)):
        for b in range(a + 1, len(cols)):
            flip = (t[iu, a] - t[ju, a]) * (t[iu, b] - t[ju, b]) < 0
            rows.append({
                "setting a": cols[a],
                "setting b": cols[b],
                "discordant pairs": int(flip.sum()),
                "kendall tau": ranking_agreement(t[:, a], t[:, b]),
                "flipped": ", ".join(f"{names[i]}/{names[j]}" for i, j in zip(iu[flip], ju[flip])),
            })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Theorem 1 (ranking risk)


def gap_weighted_regret(pred_scalar, target_scalar) -> float:
    r"""Pairwise ranking regret weighted by the target gap.

    .. math::

        R(\hat s; s) = \binom{N}{2}^{-1} \sum_{i<j} |s_i - s_j|\,
        \Big([(\hat s_i - \hat s_j)(s_i - s_j) < 0] + \tfrac12 [\hat s_i = \hat s_j,\ s_i \ne s_j]\Big)

    A pair ordered against the target costs its gap :math:`|s_i - s_j|`
    (half of it when the prediction ties it). Because such a pair has
    :math:`|s_i - s_j| \le |\hat s_i - s_i| + |\hat s_j - s_j|`,
    :math:`R \le 2\,\mathrm{MAE}(\hat s, s)`: the bipartite ranking-regret bound
    (Clémençon et al. 2008) that Jiang et al. 2024's Theorem 1 carries to K
    ordered classes (the theorem's own statement was lost in our copy of the
    paper; see :func:`theorem1_table`).

    Parameters
    ----------
    pred_scalar, target_scalar : array-like of shape (N,)
        Predicted and target scalars, N >= 2.

    Returns
    -------
    float

    Examples
    --------
    >>> round(gap_weighted_regret([0.1, 0.2, 0.3], [0.3, 0.2, 0.1]), 6)   # every pair reversed: mean gap
    0.133333
    >>> gap_weighted_regret([1, 2, 3], [0.0, 0.5, 1.0])
    0.0
    """
    a = check_1d_finite(pred_scalar, "pred_scalar")
    s = check_1d_finite(target_scalar, "target_scalar")
    if a.shape != s.shape or a.shape[0] < 2:
        raise ValueError(f"pred_scalar and target_scalar must have the same length, at least 2; "
                         f"got {a.shape[0]} and {s.shape[0]}.")
    iu, ju = np.triu_indices(a.shape[0], k=1)
    d, g = a[iu] - a[ju], s[iu] - s[ju]
    cost = (d * g < 0) + 0.5 * ((d == 0) & (g != 0))
    return float(np.mean(np.abs(g) * cost))


def kpartite_ranking_risk(pred_scalar, human, values) -> float:
    r"""K-partite ranking risk of a scoring rule when each item's label is drawn from its human distribution.

    .. math::

        L(\hat s) = \binom{N}{2}^{-1} \sum_{i<j} \Pr\big[(\hat s_i - \hat s_j)(f(Y_i) - f(Y_j)) < 0\big],
        \qquad Y_i \sim \bar\pi(x_i)\ \text{independently}

    (a pair tied by :math:`\hat s` costs half of
    :math:`\Pr[f(Y_i) \ne f(Y_j)]`). This is the ranking risk of Jiang et al.
    2024 §4 (after Clémençon et al. 2013) on the empirical distribution of
    the items; Theorem 1 bounds the regret :math:`L(\hat s) - L(s)` with
    :math:`s = \psi_f(\bar\pi)`.

    Parameters
    ----------
    pred_scalar : array-like of shape (N,)
    human : array-like of shape (N, K)
        Vote counts or distributions.
    values : array-like of shape (K,)
        f per class.

    Returns
    -------
    float

    Examples
    --------
    >>> h = [[1.0, 0.0], [0.0, 1.0]]          # item 0 surely class 0 (f = 1), item 1 class 1 (f = 0)
    >>> kpartite_ranking_risk([1.0, 0.0], h, [1.0, 0.0]), kpartite_ranking_risk([0.0, 1.0], h, [1.0, 0.0])
    (0.0, 1.0)
    """
    a = check_1d_finite(pred_scalar, "pred_scalar")
    v = check_1d_finite(values, "values")
    h = human_distribution(check_human(human, a.shape[0], v.shape[0]))
    if a.shape[0] < 2:
        raise ValueError(f"pred_scalar needs at least 2 items; got {a.shape[0]}.")
    below = (v[:, None] < v[None, :]).astype(np.float64)       # below[a, b] = [f(a) < f(b)]
    n = a.shape[0]
    # ranked order (highest scalar first), items with equal scalars grouped: a pair across groups costs
    # h_i' B h_j (i above j), a pair inside a group half of h_i' B h_j + h_j' B h_i; prefix sums make it O(N K^2)
    order = np.argsort(-a, kind="stable")
    vals, start = np.unique(-a[order], return_index=True)
    group_sum = np.add.reduceat(h[order], start, axis=0)                  # (G, K)
    above = np.cumsum(group_sum, axis=0) - group_sum                     # mass of the groups ranked above
    cross = np.einsum("gk,kl,gl->", above, below, group_sum)
    self_pairs = np.einsum("ik,kl,il->", h, below, h)                    # the i = j terms (0 when f is strict)
    within = 0.5 * (np.einsum("gk,kl,gl->", group_sum, below, group_sum) - self_pairs)
    return float((cross + within) / (n * (n - 1) / 2))


def theorem1_table(probs: Mapping[str, Any], human, values) -> pd.DataFrame:
    r"""Theorem 1 of Jiang et al. 2024 on real models: observed ranking risks and the calibration-error bound.

    For each model with scalar :math:`\hat s = \psi_f(\hat\pi)` and target
    :math:`s = \psi_f(\bar\pi)` (the human distribution), with
    :math:`\Delta f = \max f - \min f` and K classes:

    .. math::

        R(\hat s; s) \;\le\; 2\,\mathrm{MAE}(\hat s, s) \;\le\; 2\,\Delta f\,\mathbb E[\mathrm{TVD}(\hat\pi, \bar\pi)]
        \;=\; K\,\Delta f\,\mathrm{CE}

    (:func:`gap_weighted_regret`; CE is Definition 1,
    :func:`calibnb.human_classwise_ce`, and :math:`\mathrm{TVD} = \tfrac K2` times the
    item's CE). The chain holds for any input (it is the theorem's proof, not
    a finding). Also reported: the unweighted ranking risk RR
    (:func:`calibnb.ranking_risk`, the paper's Table 2 metric) and the
    K-partite regret :math:`L(\hat s) - L(s)` (:func:`kpartite_ranking_risk`),
    which the chain does not bound by construction.

    Returns
    -------
    DataFrame indexed by model: ``CE``, ``MAE``, ``RR``, ``gap regret``,
    ``2 MAE``, ``bound`` (:math:`K\,\Delta f\,\mathrm{CE}`), ``L regret``

    Examples
    --------
    >>> t = theorem1_table({"m": [[0.9, 0.1], [0.2, 0.8]]}, [[6, 4], [0, 10]], [1.0, 0.0])
    >>> t.round(3).loc["m", ["CE", "MAE", "gap regret", "bound"]].tolist()
    [0.25, 0.25, 0.0, 0.5]
    """
    models = _check_models(probs)
    n, k = next(iter(models.values())).shape
    h = human_distribution(check_human(human, n, k))
    v = check_1d_finite(values, "values")
    if v.shape[0] != k:
        raise ValueError(f"values must have one entry per class ({k}); got {v.shape[0]}.")
    s = expected_label(h, v)
    base = kpartite_ranking_risk(s, h, v)
    spread = float(v.max() - v.min())
    rows = {}
    for name, p in models.items():
        psi = expected_label(p, v)
        ce = human_classwise_ce(p, h)
        mae = scalar_mae(psi, s)
        rows[name] = {"CE": ce, "MAE": mae, "RR": ranking_risk(psi, s), "gap regret": gap_weighted_regret(psi, s),
                      "2 MAE": 2.0 * mae, "bound": k * spread * ce, "L regret": kpartite_ranking_risk(psi, h, v) - base}
    return pd.DataFrame.from_dict(rows, orient="index")


def pair_share(human, *, threshold: float = 0.3) -> pd.Series:
    r"""Share of items whose human distribution puts at least ``threshold`` on each of two classes.

    .. math:: \mathrm{share}(a, b) = \frac1N \sum_i [\bar\pi_a(x_i) \ge t]\,[\bar\pi_b(x_i) \ge t]

    for every pair of classes (Jiang et al. 2024 §3, Figure 1: "it is rare for
    an instance to have a high contradiction and entailment probability at the
    same time").

    Returns
    -------
    Series indexed by ``"a+b"`` (class indices), one entry per pair

    Examples
    --------
    >>> pair_share([[5, 5, 0], [4, 0, 6], [10, 0, 0]]).round(3).tolist()
    [0.333, 0.333, 0.0]
    """
    h = human_distribution(check_human(human))
    t = check_scalar_in_range(threshold, "threshold", low=0.0, high=1.0, low_inclusive=False)
    k = h.shape[1]
    high = h >= t
    return pd.Series({f"{a}+{b}": float((high[:, a] & high[:, b]).mean()) for a in range(k) for b in range(a + 1, k)})


# --------------------------------------------------------------------------- annotators and the cost study


def scalar_label_correlation(target, noise: float, *, n_annotators: int = 3, seed: Any = None) -> float:
    r"""Pearson r between the mean of ``n_annotators`` simulated labels and the target.

    .. math:: r = \mathrm{corr}\Big(\tfrac1n \textstyle\sum_j \hat u_{ij},\ u_i\Big)

    with :math:`\hat u_{ij}` from :func:`simulate_scalar_labels`. Jiang et al.
    2024 (footnote to §3) report r = 0.703 between UNLI's labels and
    :math:`\psi_f` of ChaosNLI.

    Examples
    --------
    >>> u = [0.1, 0.4, 0.6, 0.9]
    >>> scalar_label_correlation(u, 0.0, seed=0)
    1.0
    """
    u = check_1d_finite(target, "target")
    labels = simulate_scalar_labels(u, n_annotators=n_annotators, noise=noise, seed=seed).mean(axis=1)
    if np.ptp(labels) == 0 or np.ptp(u) == 0:
        raise ValueError("the correlation is undefined: the target or the simulated labels are constant.")
    return float(round(np.corrcoef(labels, u)[0, 1], 15))


def fit_annotator_noise(target, r: float, *, n_annotators: int = 3, seed: Any = None,
                        bounds: tuple[float, float] = (1e-4, 1.0), xtol: float = 1e-6) -> tuple[float, float]:
    r"""The annotator noise at which the mean of ``n_annotators`` simulated labels correlates with the target at ``r``.

    Solves :math:`r(\sigma) = r^\star` by Brent's method, where
    :math:`r(\sigma)` is :func:`scalar_label_correlation` with the same seed
    at every :math:`\sigma` (common random numbers, so :math:`r(\sigma)` is a
    continuous, decreasing function of :math:`\sigma` on one draw).

    Parameters
    ----------
    target : array-like of shape (N,)
        Target labels in [0, 1] (in notebook 05, :math:`\psi_f` of ChaosNLI).
    r : float
        Wanted correlation, in (0, 1); Jiang et al. 2024 report 0.703.
    n_annotators : int, default 3
    seed : None, int or numpy.random.Generator, default None
        None (fresh entropy) or a Generator is used to draw one integer seed,
        then the fit is deterministic; pass an int to reproduce it.
    bounds : (float, float)
        Noise interval searched; r must be bracketed by its ends.
    xtol : float

    Returns
    -------
    noise, achieved_r : float, float

    Examples
    --------
    >>> u = np.linspace(0.05, 0.95, 200)
    >>> noise, got = fit_annotator_noise(u, 0.7, seed=0)
    >>> abs(got - 0.7) < 1e-3
    True
    """
    from scipy import optimize

    u = check_1d_finite(target, "target")
    r = check_scalar_in_range(r, "r", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    n_annotators = check_positive_int(n_annotators, "n_annotators")
    if seed is None or isinstance(seed, np.random.Generator):
        seed = int(np.random.default_rng(seed).integers(2**31))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be None, an int or a numpy Generator (the fit needs common random numbers); "
                        f"got {seed!r}.")
    lo, hi = (check_scalar_in_range(b, "bounds", low=0.0, low_inclusive=False) for b in bounds)
    if not lo < hi:
        raise ValueError(f"bounds must be increasing; got {bounds!r}.")
    xtol = check_scalar_in_range(xtol, "xtol", low=0.0, low_inclusive=False)

    def gap(noise: float) -> float:
        return scalar_label_correlation(u, noise, n_annotators=n_annotators, seed=int(seed)) - r

    g_lo, g_hi = gap(lo), gap(hi)
    if g_lo < 0 or g_hi > 0:
        raise ValueError(f"r={r} is not reached within bounds={bounds!r}: r runs from {g_lo + r:.3f} to {g_hi + r:.3f}.")
    noise = float(optimize.brentq(gap, lo, hi, xtol=xtol))
    return noise, gap(noise) + r


def _ce_rows(p: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Definition 1 per model: p (M, N, K), target (N, K) -> (M,)."""
    return np.abs(p - target[None]).mean(axis=(1, 2))


def _tied_pairs_sorted(*keys: np.ndarray) -> int:
    """Pairs equal in every key, counted from runs of a lexicographic sort."""
    order = np.lexsort(keys[::-1])
    change = np.zeros(order.shape[0] - 1, dtype=bool)
    for k in keys:
        ks = k[order]
        change |= ks[1:] != ks[:-1]
    runs = np.diff(np.flatnonzero(np.concatenate(([True], change, [True]))))
    return int((runs * (runs - 1) // 2).sum())


def _ranking_risk_fast(pred: np.ndarray, target: np.ndarray) -> float:
    r""":func:`calibnb.ranking_risk` through scipy's compiled Kendall count (same value, about 3x faster).

    With :math:`n_0 = \binom N2`, :math:`n_1`, :math:`n_2`, :math:`n_3` the pairs
    tied in the prediction, in the target and in both, scipy's
    :math:`\tau_b = (C - D)/\sqrt{(n_0 - n_1)(n_0 - n_2)}` and
    :math:`C + D = n_0 - n_1 - n_2 + n_3` give the discordant count :math:`D`
    (rounded to the integer it is), and
    :math:`\mathrm{RR} = (D + (n_1 - n_3)/2) / (n_0 - n_2)`.
    """
    from scipy import stats

    n = pred.shape[0]
    n0 = n * (n - 1) // 2
    n1, n2, n3 = _tied_pairs_sorted(pred), _tied_pairs_sorted(target), _tied_pairs_sorted(pred, target)
    if n0 == n2:
        raise ValueError("target_scalar has no two different values; the ranking risk is undefined.")
    if n0 == n1:   # a constant prediction: every pair it orders is a tie
        return 0.5
    tau = stats.kendalltau(pred, target).statistic
    discordant = round(((n0 - n1 - n2 + n3) - tau * np.sqrt(float(n0 - n1) * float(n0 - n2))) / 2.0)
    return float((discordant + 0.5 * (n1 - n3)) / (n0 - n2))


def metric_agreement(probs: Mapping[str, Any], human, values, model_sets: Mapping[str, Sequence[str]], *,
                     n_resamples: int = 50, level: float = 0.95, seed: Any = None) -> pd.DataFrame:
    r"""Kendall's :math:`\tau` between CE and MAE, and between CE and RR, per set of models, with item-bootstrap intervals.

    For each model set :math:`S` and metric :math:`M \in \{\mathrm{MAE}, \mathrm{RR}\}`
    (against :math:`s = \psi_f(\bar\pi)`),
    :math:`\tau\big(\mathrm{CE}(m), M(m)\big)_{m \in S}` (Jiang et al. 2024
    §6.1: the metrics "give a consistent ranking of models"). The interval is
    the percentile interval of :math:`\tau` over ``n_resamples`` resamples of
    the items with replacement (the same resample for every model and metric).

    Parameters
    ----------
    probs : mapping of str -> array-like of shape (N, K)
    human : array-like of shape (N, K)
    values : array-like of shape (K,)
    model_sets : mapping of str -> sequence of model names
        Each set needs at least 2 models of ``probs``.
    n_resamples : int, default 50
    level : float, default 0.95
    seed : None, int or numpy.random.Generator

    Returns
    -------
    DataFrame with one row per (set, metric): ``model set``, ``metric``,
    ``models``, ``tau``, ``low``, ``high``

    Examples
    --------
    >>> h = np.array([[8, 2], [3, 7], [5, 5], [9, 1]])
    >>> probs = {"a": h / 10, "b": [[0.7, 0.3], [0.4, 0.6], [0.5, 0.5], [0.8, 0.2]], "c": [[0.5, 0.5]] * 4}
    >>> t = metric_agreement(probs, h, [1.0, 0.0], {"all": ["a", "b", "c"]}, n_resamples=20, seed=0)
    >>> t.round(3)[["metric", "tau"]].values.tolist()
    [['MAE', 1.0], ['RR', 0.816]]
    """
    models = _check_models(probs)
    names = list(models)
    p = np.stack([models[m] for m in names])
    _, n, k = p.shape
    h = human_distribution(check_human(human, n, k))
    v = check_1d_finite(values, "values")
    if v.shape[0] != k:
        raise ValueError(f"values must have one entry per class ({k}); got {v.shape[0]}.")
    if not isinstance(model_sets, Mapping) or not model_sets:
        raise TypeError("model_sets must be a non-empty mapping of set name -> model names.")
    sets = {}
    for label, members in model_sets.items():
        members = list(members)
        unknown = sorted(set(members) - set(names))
        if unknown or len(members) < 2:
            raise ValueError(f"model_sets[{label!r}] must name at least 2 models of probs; unknown {unknown}, "
                             f"got {len(members)}.")
        sets[str(label)] = [names.index(m) for m in members]
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    s = expected_label(h, v)
    psi = p @ v

    def scores(idx: np.ndarray) -> dict[str, np.ndarray]:
        return {"CE": np.abs(p[:, idx] - h[idx]).mean(axis=(1, 2)),
                "MAE": np.abs(psi[:, idx] - s[idx]).mean(axis=1),
                "RR": np.array([_ranking_risk_fast(q[idx], s[idx]) for q in psi])}

    rng = as_rng(seed)
    full = scores(np.arange(n))
    draws: dict[tuple[str, str], list[float]] = {(lab, m): [] for lab in sets for m in ("MAE", "RR")}
    for _ in range(n_resamples):
        b = scores(rng.integers(0, n, size=n))
        for lab, rows in sets.items():
            for m in ("MAE", "RR"):
                draws[(lab, m)].append(ranking_agreement(b["CE"][rows], b[m][rows]))
    a = (1.0 - level) / 2.0
    out = []
    for lab, rows in sets.items():
        for m in ("MAE", "RR"):
            lo, hi = np.quantile(draws[(lab, m)], [a, 1.0 - a])
            out.append({"model set": lab, "metric": m, "models": len(rows),
                        "tau": ranking_agreement(full["CE"][rows], full[m][rows]), "low": float(lo), "high": float(hi)})
    return pd.DataFrame(out)


def like_for_like_cost_study(
    probs: Mapping[str, Any],
    human,
    values,
    *,
    budgets: Sequence[int] = (1, 3, 5, 10),
    noise: float = 0.1,
    n_draws: int = 20,
    cutoffs: Sequence[float] = (1 / 3, 2 / 3),
    seed: Any = None,
) -> pd.DataFrame:
    r"""Scalar labels vs categorical votes at the same budget, on the same metric and the same target.

    Each draw resamples the N items with replacement (the item bootstrap) and
    draws fresh annotations (a new seed). For every budget :math:`n` (labels per
    item) the models are scored three ways on the resampled items, by each
    metric :math:`M \in \{\mathrm{CE}, \mathrm{MAE}, \mathrm{RR}\}`:

    * **reference**: against all votes, :math:`\bar\pi` (CE) or :math:`s = \psi_f(\bar\pi)` (MAE, RR);
    * **votes**: against :math:`n` votes per item (:func:`sample_votes`),
      :math:`\hat\pi_n` (CE) or :math:`\psi_f(\hat\pi_n)` (MAE, RR);
    * **scalar**: against :math:`n` simulated scalar labels per item
      (:func:`simulate_scalar_labels` around :math:`s`): their mean :math:`\bar u`
      (MAE, RR), or for CE the §5 closed-form back-mapping of the labels into a
      distribution (:func:`fit_beta`, :func:`quantize_beta` with ``cutoffs``,
      classes in ascending order of f).

    A protocol's score is Kendall's :math:`\tau` (:func:`ranking_agreement`)
    between the models' ranking under it and the reference ranking by the same
    metric; the comparison is the paired difference
    :math:`\tau_{\text{scalar}} - \tau_{\text{votes}}` (Jiang et al. 2024 §1/§7:
    scalar labels are "significantly more cost-effective").

    Parameters
    ----------
    probs : mapping of str -> array-like of shape (N, K)
        At least two models.
    human : array-like of shape (N, K)
        Integer vote counts; every item needs ``max(budgets)`` votes.
    values : array-like of shape (K,)
        f per class, strictly monotone (needed for the back-mapping's class order).
    budgets : sequence of int
        Labels per item.
    noise : float
        Annotator noise of :func:`simulate_scalar_labels`.
    n_draws : int
        Draws (item resample + annotation seed).
    cutoffs : sequence of K - 1 floats
        Back-mapping cut-offs in (0, 1).
    seed : None, int or numpy.random.Generator

    Returns
    -------
    DataFrame with one row per (draw, budget, metric): ``draw``, ``budget``,
    ``metric``, ``tau votes``, ``tau scalar``, ``difference``, ``votes tied``,
    ``scalar tied``. A protocol whose scores tie every model ranks nothing: its
    :math:`\tau` is recorded as 0 (no agreement, never NaN) and its ``... tied``
    flag is True.

    Raises
    ------
    ValueError
        If the reference scores of a metric tie every model on a draw (there is
        no ranking to agree with).

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). §6.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> yes = rng.integers(0, 11, size=40)
    >>> counts = np.stack([yes, 10 - yes], axis=1)
    >>> truth = counts / 10
    >>> probs = {"oracle": truth, "flat": 0.5 * truth + 0.25, "reversed": truth[:, ::-1]}
    >>> out = like_for_like_cost_study(probs, counts, [1.0, 0.0], budgets=(5,), noise=0.0, n_draws=2,
    ...                                cutoffs=[0.5], seed=0)
    >>> out.columns.tolist()
    ['draw', 'budget', 'metric', 'tau votes', 'tau scalar', 'difference', 'votes tied', 'scalar tied']
    >>> out.set_index("metric").loc["MAE", "tau scalar"].tolist()   # exact scalar labels: the reference ranking
    [1.0, 1.0]
    """

    def agreement(score: np.ndarray, reference: np.ndarray, metric: str, draw: int) -> tuple[float, bool]:
        # a protocol that ties every model ranks nothing: tau 0 (no agreement), flagged; a reference
        # that ties every model leaves nothing to agree with: the study cannot be run on these models
        if tie_ranks(reference, "reference").max() == 0:
            raise ValueError(f"the reference {metric} scores tie every model on draw {draw} "
                             f"({np.asarray(reference).tolist()}); Kendall's tau against a constant ranking is "
                             "undefined. Use models that differ, or more items.")
        if tie_ranks(score, "score").max() == 0:
            return 0.0, True
        return float(ranking_agreement(score, reference)), False

    def protocol_rr(scores: np.ndarray, target: np.ndarray) -> np.ndarray:
        # few labels on few items can give every item the same target: RR ranks nothing, every model ties
        if tie_ranks(target, "target").max() == 0:
            return np.zeros(scores.shape[0])
        return np.array([_ranking_risk_fast(q, target) for q in scores])

    models = _check_models(probs)
    if len(models) < 2:
        raise ValueError(f"probs must hold at least 2 models to rank; got {len(models)}.")
    p = np.stack(list(models.values()))
    _, n, k = p.shape
    c = check_human(human, n, k, name="human")
    v = check_1d_finite(values, "values")
    if v.shape[0] != k:
        raise ValueError(f"values must have one entry per class ({k}); got {v.shape[0]}.")
    if not ((np.diff(v) > 0).all() or (np.diff(v) < 0).all()):
        raise ValueError(f"values must be strictly monotone for the back-mapping; got {v.tolist()}.")
    sizes = sorted({check_positive_int(b, "budgets") for b in budgets})
    if not sizes:
        raise ValueError("budgets must name at least one budget.")
    cut = check_1d_finite(cutoffs, "cutoffs")
    if cut.shape[0] != k - 1:
        raise ValueError(f"cutoffs must have K - 1 = {k - 1} entries; got {cut.shape[0]}.")
    noise = check_scalar_in_range(noise, "noise", low=0.0)
    n_draws = check_positive_int(n_draws, "n_draws")
    rng = as_rng(seed)
    ascending = np.argsort(v)                      # back-mapped classes come in ascending f
    h = human_distribution(c)
    s = expected_label(h, v)
    psi = p @ v                                    # (M, N)
    rows = []
    for draw in range(n_draws):
        idx = rng.integers(0, n, size=n)
        ref = {"CE": _ce_rows(p[:, idx], h[idx]),
               "MAE": np.abs(psi[:, idx] - s[idx]).mean(axis=1),
               "RR": np.array([_ranking_risk_fast(q[idx], s[idx]) for q in psi])}
        for size in sizes:
            votes = sample_votes(c, size, seed=rng)[idx] / size
            labels = simulate_scalar_labels(s, n_annotators=size, noise=noise, seed=rng)[idx]
            pseudo = np.empty_like(votes)
            pseudo[:, ascending] = quantize_beta(*fit_beta(labels), cut)
            t_votes, t_scalar = votes @ v, labels.mean(axis=1)
            scores = {
                "CE": (_ce_rows(p[:, idx], votes), _ce_rows(p[:, idx], pseudo)),
                "MAE": (np.abs(psi[:, idx] - t_votes).mean(axis=1), np.abs(psi[:, idx] - t_scalar).mean(axis=1)),
                "RR": (protocol_rr(psi[:, idx], t_votes), protocol_rr(psi[:, idx], t_scalar)),
            }
            for metric, (by_votes, by_scalar) in scores.items():
                tv, votes_tied = agreement(by_votes, ref[metric], metric, draw)
                ts, scalar_tied = agreement(by_scalar, ref[metric], metric, draw)
                rows.append({"draw": draw, "budget": size, "metric": metric, "tau votes": tv,
                             "tau scalar": ts, "difference": ts - tv,
                             "votes tied": votes_tied, "scalar tied": scalar_tied})
    return pd.DataFrame(rows)


def cost_intervals(study: pd.DataFrame, *, level: float = 0.95) -> pd.DataFrame:
    r"""Percentile intervals of a cost study's paired differences, per budget and metric.

    .. math:: [\,\Delta_{(\alpha/2)},\ \Delta_{(1-\alpha/2)}\,],\qquad \alpha = 1 - \text{level}

    over the draws of :func:`like_for_like_cost_study` (each draw a bootstrap
    resample of the items with fresh annotations), with
    :math:`\Delta = \tau_{\text{scalar}} - \tau_{\text{votes}}`.

    Returns
    -------
    DataFrame indexed by (``budget``, ``metric``): ``tau votes``, ``tau scalar``
    (means), ``difference`` (mean), ``low``, ``high``, ``draws``

    Examples
    --------
    >>> t = pd.DataFrame({"draw": [0, 1], "budget": [3, 3], "metric": ["MAE", "MAE"],
    ...                   "tau votes": [0.5, 0.7], "tau scalar": [0.9, 0.9], "difference": [0.4, 0.2]})
    >>> cost_intervals(t, level=0.5).round(2).loc[(3, "MAE"), ["difference", "low", "high"]].tolist()
    [0.3, 0.25, 0.35]
    """
    need = {"budget", "metric", "tau votes", "tau scalar", "difference"}
    if not isinstance(study, pd.DataFrame) or not need <= set(study.columns) or study.empty:
        raise TypeError(f"study must be a non-empty DataFrame from like_for_like_cost_study (columns {sorted(need)}).")
    level = check_scalar_in_range(level, "level", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    a = (1.0 - level) / 2.0
    g = study.groupby(["budget", "metric"], sort=True)
    out = g[["tau votes", "tau scalar", "difference"]].mean()
    out["low"] = g["difference"].quantile(a)
    out["high"] = g["difference"].quantile(1.0 - a)
    out["draws"] = g.size()
    return out


# --------------------------------------------------------------------------- Table 4 (Circa)


def circa_examples_path() -> Path:
    """Path of ``jiang2024_circa_examples.csv`` in the repository's ``data/`` folder."""
    path = Path(__file__).resolve().parents[2] / "data" / "jiang2024_circa_examples.csv"
    if not path.is_file():
        from calibnb.data import in_browser, project_data_path

        if in_browser():  # the JupyterLite site ships it in its data/ folder
            return project_data_path("jiang2024_circa_examples.csv")
        raise FileNotFoundError(f"jiang2024_circa_examples.csv not found at {path}.")
    return path


def load_circa_examples() -> pd.DataFrame:
    """Jiang et al. 2024 Table 4: eleven scalar-annotated Circa examples, transcribed from the paper.

    Returns
    -------
    DataFrame with columns ``question``, ``answer``, ``scalar`` (the paper's
    scalar label), ``category`` (Circa's label: Y, PY, M, PN, N) and
    ``category value`` (:data:`CIRCA_VALUES`, the paper's f).

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). Table 4.

    Examples
    --------
    >>> t = load_circa_examples()
    >>> len(t), t["category"].tolist()[:3], float(t["scalar"].max())
    (11, ['Y', 'PY', 'PY'], 1.0)
    """
    table = pd.read_csv(circa_examples_path())
    unknown = sorted(set(table["category"]) - set(CIRCA_VALUES))
    if unknown:
        raise ValueError(f"jiang2024_circa_examples.csv has unknown categories {unknown}.")
    table["category value"] = table["category"].map(CIRCA_VALUES).astype(float)
    return table


# --------------------------------------------------------------------------- panels


def f_neutral_explorer(probs: Mapping[str, Any], human, *, f_neutral: float = 0.5) -> Any:
    r"""An f(NEU) slider re-ranking the models by MAE and RR against :math:`\psi_f(\bar\pi)`.

    :math:`f = (1, f_{\mathrm{NEU}}, 0)` in ChaosNLI's [e, n, c] order; CE does
    not depend on f, MAE and RR do (:func:`calibration_table`).

    Returns
    -------
    calibnb.widgets.Panel
        Control ``"f_neutral"``; the readout is the calibration table with the
        rank of each model under CE, MAE and RR.
    """
    models = _check_models(probs)
    n, k = next(iter(models.values())).shape
    if k != 3:
        raise ValueError(f"f_neutral_explorer is for 3-class NLI probabilities; got {k} classes.")
    h = check_human(human, n, k)
    f_neutral = check_scalar_in_range(f_neutral, "f_neutral", low=0.0, high=1.0)
    import ipywidgets as w

    slider = w.FloatSlider(value=f_neutral, min=0.0, max=1.0, step=0.05, description="scalar value f(neutral)",
                           continuous_update=False, readout_format=".2f",
                           tooltip="Where a 'neutral' vote sits on the 0 (contradiction) to 1 (entailment) "
                                   "scale; f(entailment) = 1 and f(contradiction) = 0 stay fixed")

    def draw(axes: list, *, f_neutral: float) -> pd.DataFrame:
        table = calibration_table(models, h, nli_values(f_neutral))
        x = np.arange(len(table))
        for j, col in enumerate(("CE", "MAE", "RR")):
            axes[0].bar(x + (j - 1) * 0.27, table[col], width=0.27, label=col)
        axes[0].set_xticks(x, table.index, rotation=45, ha="right", fontsize=9)
        axes[0].set_ylabel("error (lower is better)")
        axes[0].set_title(f"f = (1, {f_neutral:.2f}, 0)")
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # off the bars
        out = table[["CE", "MAE", "RR"]].copy()
        for col in ("CE", "MAE", "RR"):
            out[f"rank {col}"] = table[col].rank(method="min").astype(int)
        return out

    return build_panel({"f_neutral": slider}, draw, 1, (6.4, 2.5), beside=True)  # a row per model: beside


def ece_bins_explorer(probs: Mapping[str, Any], human, *, n_bins: int = 10, max_bins: int = 100) -> Any:
    r"""A bins slider for each model's ECE (against the human majority) beside its fixed CE.

    ECE changes with the number and kind of bins; the class-wise CE against
    the human distribution (Definition 1) has no such parameter.

    Returns
    -------
    calibnb.widgets.Panel
        Controls ``"n_bins"`` and ``"binning"``; the readout gives ECE, CE and
        the rank of each model under both.
    """
    models = _check_models(probs)
    n, k = next(iter(models.values())).shape
    h = check_human(human, n, k)
    majority = h.argmax(axis=1)
    max_bins = check_positive_int(max_bins, "max_bins")
    n_bins = check_n_bins(n_bins)
    if n_bins > max_bins:
        raise ValueError(f"n_bins must be at most max_bins ({max_bins}); got {n_bins}.")
    ce = pd.Series({m: human_classwise_ce(p, h) for m, p in models.items()})
    import ipywidgets as w

    controls = {
        "n_bins": w.IntSlider(value=n_bins, min=1, max=max_bins, description="number of ECE bins",
                              continuous_update=False,
                              tooltip="How many confidence bins ECE uses; CE (no bins) does not change"),
        "binning": w.ToggleButtons(options=[("equal width", "width"), ("equal mass", "mass")], value="width",
                                   description="bin edges",
                                   tooltip="equal width: bins of the same confidence range; "
                                           "equal mass: bins holding the same number of items"),
    }

    def draw(axes: list, *, n_bins: int, binning: str) -> pd.DataFrame:
        e = ece_table(models, majority, n_bins=(n_bins,), binnings=(binning,)).iloc[:, 0]
        x = np.arange(len(e))
        axes[0].bar(x - 0.2, e, width=0.4, label=f"ECE ({binning}, {n_bins} bins)")
        axes[0].bar(x + 0.2, ce[e.index], width=0.4, label="CE (no bins)")
        axes[0].set_xticks(x, e.index, rotation=45, ha="right", fontsize=9)
        axes[0].set_ylabel("calibration error (lower is better)")
        axes[0].set_title(f"ECE with {n_bins} equal-{binning} bins vs CE")
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # off the bars
        return pd.DataFrame({"ECE": e, "CE": ce[e.index], "rank ECE": e.rank(method="min").astype(int),
                             "rank CE": ce[e.index].rank(method="min").astype(int)})

    return build_panel(controls, draw, 1, (6.4, 2.5), beside=True)  # a row per model: beside
