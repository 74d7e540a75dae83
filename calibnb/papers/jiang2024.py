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
* :func:`annotation_cost_study`: the cost argument of §6;
* :func:`load_circa_examples`: Table 4's eleven Circa examples;
* :func:`f_neutral_explorer`, :func:`ece_bins_explorer`: the two panels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data import subsample_votes
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
    "annotation_cost_study",
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
    return subsample_votes(human, n_votes, n_groups=1, seed=seed)[0]


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


def annotation_cost_study(
    probs: Mapping[str, Any],
    human,
    values,
    *,
    votes: Sequence[int] = (1, 3, 5, 10),
    n_scalar_annotators: int = 3,
    noise: float = 0.05,
    n_repeats: int = 5,
    seed: Any = None,
) -> pd.DataFrame:
    r"""Cheap labels vs 100 votes: how well does each protocol rank the models? (Jiang et al. 2024 §6.)

    The reference is the ranking of the models by CE against all votes. Each
    repeat draws, for every item, ``k`` categorical votes (:func:`sample_votes`,
    for each ``k`` in ``votes``) and ``n_scalar_annotators`` simulated scalar
    labels (:func:`simulate_scalar_labels` around :math:`\psi_f` of the full
    vote distribution, averaged per item), then ranks the models by CE against
    the ``k`` votes, and by MAE and RR against the scalar labels; agreement is
    Kendall's :math:`\tau` with the reference ranking (:func:`ranking_agreement`).
    Cost is counted in annotations per item. A protocol whose scores tie every
    model has ranked nothing: its ``kendall tau`` is 0.0 (no agreement, never
    NaN) and its ``all tied`` column is True.

    Returns
    -------
    DataFrame with one row per (repeat, protocol): ``repeat``, ``protocol``,
    ``metric``, ``annotations per item``, ``kendall tau``, ``all tied``

    Raises
    ------
    ValueError
        If the reference (CE against all votes) ties every model in ``probs``.

    References
    ----------
    .. [1] Zhengping Jiang, Anqi Liu, Benjamin Van Durme. 2024. "Addressing the Binning Problem in Calibration Assessment through Scalar Annotations". Transactions of the Association for Computational Linguistics (TACL). §6.

    Examples
    --------
    >>> probs = {"good": [[0.8, 0.2], [0.3, 0.7]], "bad": [[0.2, 0.8], [0.7, 0.3]]}
    >>> out = annotation_cost_study(probs, [[8, 2], [3, 7]], [1.0, 0.0], votes=(10,), noise=0.0, n_repeats=1, seed=0)
    >>> out["kendall tau"].tolist()
    [1.0, 1.0, 1.0]
    """

    def agreement(score: np.ndarray) -> dict:
        if tie_ranks(score).max() == 0:
            return {"kendall tau": 0.0, "all tied": True}
        return {"kendall tau": ranking_agreement(score, reference), "all tied": False}

    models = _check_models(probs)
    names = list(models)
    n, k = next(iter(models.values())).shape
    c = check_human(human, n, k, name="human")
    v = check_1d_finite(values, "values")
    vote_sizes = [check_positive_int(x, "votes") for x in votes]
    n_repeats = check_positive_int(n_repeats, "n_repeats")
    n_scalar_annotators = check_positive_int(n_scalar_annotators, "n_scalar_annotators")
    rng = as_rng(seed)
    h = human_distribution(c)
    reference = np.array([human_classwise_ce(models[m], h) for m in names])
    if len(names) < 2 or tie_ranks(reference).max() == 0:
        raise ValueError("probs must hold at least 2 models whose CE against all votes differs; "
                         f"got {len(names)} model(s) with CE {np.unique(reference).tolist()}.")
    psi = {m: expected_label(models[m], v) for m in names}
    target = expected_label(h, v)
    rows = []
    for r in range(n_repeats):
        for size in vote_sizes:
            few = sample_votes(c, size, seed=rng)
            score = np.array([human_classwise_ce(models[m], few) for m in names])
            rows.append({"repeat": r, "protocol": f"{size} vote(s)", "metric": "CE",
                         "annotations per item": size, **agreement(score)})
        labels = simulate_scalar_labels(target, n_annotators=n_scalar_annotators, noise=noise, seed=rng).mean(axis=1)
        for metric, fn in (("MAE", scalar_mae), ("RR", ranking_risk)):
            score = np.array([fn(psi[m], labels) for m in names])
            rows.append({"repeat": r, "protocol": f"{n_scalar_annotators} scalar label(s)", "metric": metric,
                         "annotations per item": n_scalar_annotators,
                         **agreement(score)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Table 4 (Circa)


def circa_examples_path() -> Path:
    """Path of ``jiang2024_circa_examples.csv`` in the repository's ``data/`` folder."""
    path = Path(__file__).resolve().parents[2] / "data" / "jiang2024_circa_examples.csv"
    if not path.is_file():
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

    slider = w.FloatSlider(value=f_neutral, min=0.0, max=1.0, step=0.05, description="f(NEU)",
                           continuous_update=False)

    def draw(axes: list, *, f_neutral: float) -> pd.DataFrame:
        table = calibration_table(models, h, nli_values(f_neutral))
        x = np.arange(len(table))
        for j, col in enumerate(("CE", "MAE", "RR")):
            axes[0].bar(x + (j - 1) * 0.27, table[col], width=0.27, label=col)
        axes[0].set_xticks(x, table.index, rotation=60, ha="right", fontsize=8)
        axes[0].set_ylabel("error (lower is better)")
        axes[0].set_title(f"f = (1, {f_neutral:.2f}, 0)")
        axes[0].legend()
        out = table[["CE", "MAE", "RR"]].copy()
        for col in ("CE", "MAE", "RR"):
            out[f"rank {col}"] = table[col].rank(method="min").astype(int)
        return out

    return build_panel({"f_neutral": slider}, draw, 1, (8, 4))


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
        "n_bins": w.IntSlider(value=n_bins, min=1, max=max_bins, description="bins", continuous_update=False),
        "binning": w.ToggleButtons(options=[("equal width", "width"), ("equal mass", "mass")], value="width",
                                   description="binning"),
    }

    def draw(axes: list, *, n_bins: int, binning: str) -> pd.DataFrame:
        e = ece_table(models, majority, n_bins=(n_bins,), binnings=(binning,)).iloc[:, 0]
        x = np.arange(len(e))
        axes[0].bar(x - 0.2, e, width=0.4, label=f"ECE ({binning}, {n_bins} bins)")
        axes[0].bar(x + 0.2, ce[e.index], width=0.4, label="CE (no bins)")
        axes[0].set_xticks(x, e.index, rotation=60, ha="right", fontsize=8)
        axes[0].set_ylabel("calibration error (lower is better)")
        axes[0].legend()
        return pd.DataFrame({"ECE": e, "CE": ce[e.index], "rank ECE": e.rank(method="min").astype(int),
                             "rank CE": ce[e.index].rank(method="min").astype(int)})

    return build_panel(controls, draw, 1, (8, 4))
