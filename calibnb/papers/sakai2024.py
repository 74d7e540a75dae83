"""Sakai 2024's worked examples (Tables 1, 4 and 9) as data, and random systems for its axioms.

The base system X of each example is transcribed in
``data/sakai2024_examples.json`` (the project's own small data, written from
the paper's tables). The perturbed systems Y, Z and W are *built* from X with
:func:`perturb_confidence`, following the recipe of Sakai's Section 4.1:

* Y lowers the top probability of one correct instance (underconfidence);
* Z raises the top probability of one wrong instance (overconfidence);
* W applies both.

The paper does not state how the other classes' probabilities change; the
tables show three patterns, recorded per perturbation in the JSON file:
``"runner_up"`` (Table 1: the largest other class absorbs the change),
``"uniform"`` (Tables 4 and 9 for Y: the other classes share the rest
equally) and, for Table 9's Z, the other classes' values as printed (the paper
moves 0.1 to the true class as well, which is what makes NBR prefer Z).
The file also holds Y, Z and W as printed (:attr:`SakaiExample.printed`), only
to check the built systems against the paper.

:func:`random_axiom_systems` applies the same perturbations to random systems,
stacked along the batch axis of calibnb's binary metrics, for notebook 04's
randomised audit of Sakai's axioms.
"""

from __future__ import annotations

import json
import numbers
from dataclasses import dataclass, field
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ..metrics.registry import get_metric
from ..validation import (as_rng, check_choice, check_conf_correct, check_positive_int, check_probs,
                          check_scalar_in_range)

__all__ = ["AxiomSystems", "SakaiExample", "load_sakai_example", "perturb_confidence", "random_axiom_systems",
           "sakai_examples_path", "overconfidence_underconfidence", "results_table", "worse_than_x", "violates",
           "ks_table", "example_table", "binned_scores", "better_than_x", "hmr_beta_table"]

_FILE = "sakai2024_examples.json"


def sakai_examples_path() -> Path:
    """Path of ``sakai2024_examples.json``.

    Looked up first as package data of ``calibnb.data`` (an installed wheel),
    then in the repository's ``data/`` folder next to the package (a checkout
    or an editable install).
    """
    try:
        from importlib.resources import files

        res = files("calibnb.data").joinpath(_FILE)
        if res.is_file():
            return Path(str(res))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - odd loaders
        pass
    path = Path(__file__).resolve().parents[2] / "data" / _FILE
    if not path.is_file():
        from calibnb.data import in_browser, project_data_path

        if in_browser():  # the JupyterLite site ships it in its data/ folder
            return project_data_path(_FILE)
        raise FileNotFoundError(
            f"{_FILE} not found as package data of calibnb.data nor at {path}."
        )
    return path


def perturb_confidence(probs: Any, index: int, new_top: float, *, others: Any = "runner_up") -> np.ndarray:
    """Return a copy of ``probs`` with the top probability of one row changed.

    Sakai 2024, Section 4.1 (systems Y, Z, W): the top probability of instance
    ``index`` becomes ``new_top``, the predicted class stays the same, and the
    row still sums to 1. With :math:`\\Delta = p_{top}' - p_{top}`:

    .. math::

        \\text{runner\\_up:}\\ p_r' = p_r - \\Delta\\ \\text{for the largest other class } r;
        \\qquad \\text{uniform:}\\ p_k' = \\frac{1 - p_{top}'}{M - 1}\\ \\text{for } k \\ne top.

    Parameters
    ----------
    probs : array-like of shape (N, M)
        Class probabilities (rows sum to 1).
    index : int
        Row to perturb (0-based).
    new_top : float in [0, 1]
        The new top probability.
    others : {"runner_up", "uniform"} or sequence of M - 1 floats
        How the other classes change: the largest other class (first index on
        ties) absorbs the whole change; the other classes share ``1 - new_top``
        equally; or their new values, in class order (must sum to
        ``1 - new_top`` within 1e-6).

    Returns
    -------
    ndarray of shape (N, M)

    Raises
    ------
    ValueError
        If the result has a negative probability or a different predicted
        class (argmax, first index on ties).

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Section 4.1, Table 1.

    Examples
    --------
    Sakai's Table 1, System Y, instance 7:

    >>> perturb_confidence([[0.8, 0.1, 0.1]], 0, 0.7).round(3).tolist()
    [[0.7, 0.2, 0.1]]
    >>> perturb_confidence([[0.5, 0.3, 0.2]], 0, 0.4, others="uniform").round(3).tolist()
    [[0.4, 0.3, 0.3]]
    """
    p = check_probs(probs).copy()
    n, m = p.shape
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
        raise TypeError(f"index must be an integer; got {type(index).__name__} {index!r}.")
    if not 0 <= index < n:
        raise ValueError(f"index must be in [0, {n}); got {int(index)}.")
    new_top = check_scalar_in_range(new_top, "new_top", low=0.0, high=1.0)
    row = p[index]
    top = int(np.argmax(row))
    rest = np.delete(np.arange(m), top)
    if isinstance(others, str):
        if others == "runner_up":
            r = rest[int(np.argmax(row[rest]))]
            row[r] -= new_top - row[top]
            row[top] = new_top
        elif others == "uniform":
            row[rest] = (1.0 - new_top) / (m - 1)
            row[top] = new_top
        else:
            raise ValueError(f"others must be one of 'runner_up', 'uniform' or a sequence; got {others!r}.")
    else:
        vals = np.asarray(others, dtype=np.float64)
        if vals.shape != (m - 1,):
            raise ValueError(f"others must hold M - 1 = {m - 1} values; got shape {vals.shape}.")
        if abs(vals.sum() + new_top - 1.0) > 1e-6:
            raise ValueError(f"others must sum to 1 - new_top = {1 - new_top:g}; they sum to {vals.sum():g}.")
        row[rest] = vals
        row[top] = new_top
    if (row < -1e-12).any():
        k = int(np.flatnonzero(row < -1e-12)[0])
        raise ValueError(f"the perturbation makes class {k} of row {index} negative: {row[k]:.6g}.")
    row[row < 0] = 0.0
    if int(np.argmax(row)) != top:
        raise ValueError(
            f"the perturbation changes the predicted class of row {index} from {top} to {int(np.argmax(row))}; "
            "Sakai's perturbations keep it."
        )
    return p


@dataclass(frozen=True)
class SakaiExample:
    """One of Sakai 2024's worked examples.

    Attributes
    ----------
    number : int
        1, 2 or 3.
    table : str
        Where the base system is printed ("Table 1", "Table 4", "Table 9").
    labels : ndarray (N,)
        True classes, 0-based (the paper's are 1-based).
    systems : dict[str, ndarray (N, M)]
        Class probabilities of X (transcribed) and of Y, Z, W (built with
        :func:`perturb_confidence`).
    stated_accuracy : tuple[int, int]
        The accuracy the paper states, as (numerator, denominator).
    perturbations : dict
        The recipe for each perturbed system, as in the JSON file.
    printed : dict[str, ndarray (N, M)]
        Y, Z and W as printed in the paper's table, transcribed only to check
        the built ``systems`` against (empty if the file has none).

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research.
    """

    number: int
    table: str
    labels: np.ndarray
    systems: dict = field(repr=False)
    stated_accuracy: tuple
    perturbations: dict = field(repr=False)
    printed: dict = field(default_factory=dict, repr=False)

    @property
    def n_classes(self) -> int:
        return int(self.systems["X"].shape[1])

    def probs(self, name: str) -> np.ndarray:
        """(N, M) class probabilities of system ``name`` ("X", "Y", "Z" or "W")."""
        if name not in self.systems:
            raise ValueError(f"name must be one of {', '.join(repr(k) for k in self.systems)}; got {name!r}.")
        return self.systems[name]

    def top(self, name: str):
        """(conf, correct): top probability of each instance and whether its class is true."""
        from ..metrics import top_r

        return top_r(self.probs(name), self.labels, r=1)


def load_sakai_example(number: int) -> SakaiExample:
    """Load Sakai 2024's Example ``number`` (1: Table 1, 2: Table 4, 3: Table 9).

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Table 1, Table 4, Table 9.

    Examples
    --------
    >>> ex = load_sakai_example(1)
    >>> conf, correct = ex.top("Z")
    >>> conf.tolist()
    [0.4, 0.4, 0.6, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8]
    >>> int(correct.sum()), len(correct)
    (7, 9)
    """
    if isinstance(number, (bool, np.bool_)) or not isinstance(number, numbers.Integral):
        raise TypeError(f"number must be an integer; got {type(number).__name__} {number!r}.")
    with open(sakai_examples_path(), encoding="utf-8") as fh:
        spec = json.load(fh)["examples"]
    if str(number) not in spec:
        raise ValueError(f"number must be one of {', '.join(sorted(spec))}; got {int(number)}.")
    ex = spec[str(number)]
    x = check_probs(ex["X"], "X")
    labels = np.asarray(ex["true_class"], dtype=np.int64) - 1
    systems = {"X": x}
    for name, steps in ex["perturbations"].items():
        p = x
        for step in steps:
            p = perturb_confidence(p, step["instance"] - 1, step["new_top"], others=step["others"])
        systems[name] = p
    return SakaiExample(
        number=int(number),
        table=ex["table"],
        labels=labels,
        systems=systems,
        stated_accuracy=tuple(ex["stated_accuracy"]),
        perturbations=ex["perturbations"],
        printed={name: check_probs(rows, f"printed {name}") for name, rows in ex.get("printed", {}).items()},
    )


@dataclass(frozen=True)
class AxiomSystems:
    """Random systems X and their Sakai perturbations Y, Z, W, stacked along a batch axis.

    Attributes
    ----------
    labels : ndarray of shape (S, N)
        True class of every instance of every system (shared by X, Y, Z, W).
    probs : dict[str, ndarray of shape (S, N, M)]
        Class probabilities of "X", "Y", "Z" and "W".
    index_u, index_o : ndarray of shape (S,)
        The instance whose top probability Y lowers (correct) and Z raises (wrong).
    """

    labels: np.ndarray = field(repr=False)
    probs: dict = field(repr=False)
    index_u: np.ndarray = field(repr=False)
    index_o: np.ndarray = field(repr=False)

    @property
    def shape(self) -> tuple[int, int, int]:
        """(S, N, M): systems, instances, classes."""
        return tuple(int(d) for d in self.probs["X"].shape)

    def top(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(conf, correct) of system ``name``, each of shape (S, N): the batch input of calibnb's binary metrics."""
        if name not in self.probs:
            raise ValueError(f"name must be one of {', '.join(repr(k) for k in self.probs)}; got {name!r}.")
        p = self.probs[name]
        return p.max(axis=2), p.argmax(axis=2) == self.labels


def random_axiom_systems(n_systems: int, n_instances: int, n_classes: int, *, seed=None) -> AxiomSystems:
    """Draw random systems X and build Sakai's perturbations Y, Z and W of each.

    Sakai 2024, Section 5.1 (Axioms U, O, UO), applied to random systems instead
    of the paper's three examples. Each system X has Dirichlet class
    probabilities with its own concentration :math:`\\alpha \\sim U(0.3, 3)`; an
    instance is correct with probability :math:`p_{top}^{s}` with its own skill
    :math:`s \\sim U(0.4, 2.5)` (so systems differ in miscalibration), and every
    system has at least one correct and one wrong instance. Then

    * Y lowers the top probability of one random correct instance to a value in
      :math:`(1/M, p_{top})`, keeping its class on top (underconfidence);
    * Z raises the top probability of one random wrong instance to a value in
      :math:`(p_{top}, 1)` (overconfidence);
    * W applies both.

    The other classes of a perturbed row are redrawn at random (Dirichlet, an
    equal split if a redrawn class would overtake the top one), as Sakai's own
    perturbations change them freely (Table 9).

    Parameters
    ----------
    n_systems : int >= 1
        Number S of systems.
    n_instances : int >= 2
        Instances N per system.
    n_classes : int >= 2
        Classes M per instance.
    seed : None, int or numpy.random.Generator, keyword-only
        Randomness (None: fresh entropy).

    Returns
    -------
    AxiomSystems

    References
    ----------
    T. Sakai. Evaluating System Responses Based On Overconfidence and
    Underconfidence. EMTCIR '24 (CEUR Workshop Proceedings), 2024, Section 5.1.

    Examples
    --------
    >>> sys_ = random_axiom_systems(3, 10, 4, seed=0)
    >>> sys_.shape
    (3, 10, 4)
    >>> conf_x, correct = sys_.top("X")
    >>> conf_y, _ = sys_.top("Y")
    >>> bool(((conf_y < conf_x).sum(axis=1) == 1).all())   # one correct instance lowered per system
    True
    """
    s = check_positive_int(n_systems, "n_systems")
    n = check_positive_int(n_instances, "n_instances", minimum=2)
    m = check_positive_int(n_classes, "n_classes", minimum=2)
    rng = as_rng(seed)
    rows = np.arange(s)

    alpha = rng.uniform(0.3, 3.0, size=(s, 1, 1))
    probs_x = rng.gamma(np.broadcast_to(alpha, (s, n, m)))
    probs_x /= probs_x.sum(axis=2, keepdims=True)
    pred = probs_x.argmax(axis=2)
    top_x = probs_x.max(axis=2)
    skill = rng.uniform(0.4, 2.5, size=(s, 1))              # correct with probability top**skill
    hit = rng.random((s, n)) < top_x ** skill
    other = (pred + rng.integers(1, m, size=(s, n))) % m
    hit[hit.all(axis=1), 0] = False                         # every system has a wrong ...
    hit[~hit.any(axis=1), 1] = True                         # ... and a correct instance
    labels = np.where(hit, pred, other)

    def pick(mask):
        # One random True position per row.
        return np.where(mask, rng.random(mask.shape), -1.0).argmax(axis=1)

    j_u, j_o = pick(hit), pick(~hit)

    def redraw_others(row, top_class, new_top):
        w = rng.dirichlet(np.ones(m - 1), size=s) * (1 - new_top)[:, None]
        w = np.where((w.max(axis=1) < new_top)[:, None], w, ((1 - new_top) / (m - 1))[:, None])
        out = np.empty_like(row)
        others = np.ones_like(row, dtype=bool)
        others[rows, top_class] = False
        out[others] = w.ravel()
        out[rows, top_class] = new_top
        return out

    row_u = probs_x[rows, j_u]
    new_u = 1 / m + rng.uniform(0.05, 0.95, s) * (row_u.max(axis=1) - 1 / m)  # above 1/M the class stays on top
    row_u_new = redraw_others(row_u, pred[rows, j_u], new_u)
    row_o = probs_x[rows, j_o]
    top_o = row_o.max(axis=1)
    new_o = top_o + rng.uniform(0.05, 0.95, s) * (1 - top_o)
    row_o_new = redraw_others(row_o, pred[rows, j_o], new_o)

    probs = {"X": probs_x}
    for name, changes in {"Y": [(j_u, row_u_new)], "Z": [(j_o, row_o_new)],
                          "W": [(j_u, row_u_new), (j_o, row_o_new)]}.items():
        p = probs_x.copy()
        for j, r in changes:
            p[rows, j] = r
        probs[name] = p
    return AxiomSystems(labels=labels, probs=probs, index_u=j_u, index_o=j_o)


# ------------------------------------------------------------------ the measures of notebook 04's tables

#: Sakai's binning for ECE and MCE in Examples 1 and 2: 3 equal-mass bins of three instances (§4.1.2).
PAPER_BINS = MappingProxyType({"n_bins": 3, "binning": "mass"})
#: Each measure of the results tables and its key in calibnb's metric registry, where its direction
#: is declared once (MCE with Sakai's equal-mass bins has the direction of ``"mce"``).
REGISTRY_KEYS = MappingProxyType({"HMR": "hmr", "ECE": "ece_mass", "MCE": "mce", "NBR": "nbr", "KS": "ks_top1"})
#: The measures where a higher value is better, from the registry (HMR is a reward; ECE, MCE, NBR and
#: KS are errors).
HIGHER_IS_BETTER = frozenset(m for m, key in REGISTRY_KEYS.items() if get_metric(key).higher_is_better)
#: Sakai's axioms and the system of each example that tests them: U (underconfidence) by Y, O
#: (overconfidence) by Z, UO (both) by W.
AXIOMS = MappingProxyType({"U": "Y", "O": "Z", "UO": "W"})
#: The measures of Sakai's tables, in the paper's order.
MEASURES = ("HMR", "ECE", "MCE", "NBR", "KS")


def _check_example(example: Any) -> "SakaiExample":
    if not isinstance(example, SakaiExample):
        raise TypeError(f"example must be a SakaiExample (load_sakai_example); got {type(example).__name__}.")
    return example


def overconfidence_underconfidence(conf: Any, correct: Any) -> tuple[float, float]:
    r"""Sakai's summed overconfidence :math:`O` and underconfidence :math:`U` (Sakai 2024, Eq. 5).

    .. math:: O = \sum_{j:\ \mathrm{wrong}} p_j, \qquad U = \sum_{j:\ \mathrm{correct}} (1 - p_j)

    where :math:`p_j` is the top probability of instance :math:`j`. HMR
    (:func:`calibnb.hmr`) is built from their normalised forms
    :math:`R_O, R_U` (:func:`calibnb.rewards`).

    Parameters
    ----------
    conf : array-like (N,)
        Top probabilities, in [0, 1].
    correct : array-like (N,)
        Whether each top class is the true class (0/1 or bool).

    Returns
    -------
    tuple of float
        ``(O, U)``.

    Examples
    --------
    >>> o, u = overconfidence_underconfidence([0.9, 0.6, 0.8], [1, 0, 1])
    >>> round(o, 3), round(u, 3)
    (0.6, 0.3)
    """
    c, y = check_conf_correct(conf, correct)
    return float(c[~y].sum()), float((1.0 - c[y]).sum())


def _measures(example: "SakaiExample", system: str, bins: Any) -> dict[str, float]:
    from .. import metrics

    conf, correct = example.top(system)
    row = {"HMR": metrics.hmr(conf, correct)}
    if bins is not None:
        row["ECE"] = metrics.ece(conf, correct, **bins)
        row["MCE"] = metrics.mce(conf, correct, **bins)
    row["NBR"] = metrics.nbr(example.probs(system), example.labels)
    row["KS"] = metrics.ks_error(conf, correct)
    return row


def results_table(example: Any, *, bins: Any = PAPER_BINS) -> pd.DataFrame:
    """HMR, ECE, MCE, NBR and KS of every system of a worked example (Sakai 2024, Tables 2, 5 and 10).

    The paper's summary layout: measures as rows, systems (X, Y, Z, W) as
    columns. HMR is :func:`calibnb.hmr`, NBR :func:`calibnb.nbr`, KS
    :func:`calibnb.ks_error`; ECE and MCE use ``bins``.

    Parameters
    ----------
    example : SakaiExample
        From :func:`load_sakai_example`.
    bins : mapping or None, keyword-only
        Options of :func:`calibnb.ece` and :func:`calibnb.mce`; default
        :data:`PAPER_BINS` (3 equal-mass bins, Sakai §4.1.2). ``None`` leaves
        ECE and MCE out (Table 10 of Example 3 has none).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> table = results_table(load_sakai_example(1))
    >>> list(table.index), list(table.columns)
    (['HMR', 'ECE', 'MCE', 'NBR', 'KS'], ['X', 'Y', 'Z', 'W'])
    >>> round(float(table.loc["HMR", "X"]), 3)
    0.557
    """
    example = _check_example(example)
    if bins is not None:
        if not isinstance(bins, Mapping):
            raise TypeError(f"bins must be a mapping of ece/mce options or None; got {type(bins).__name__}.")
        unknown = sorted(set(map(str, bins)) - {"n_bins", "binning"})
        if unknown:
            raise ValueError(f"bins has unknown option(s) {', '.join(map(repr, unknown))}; "
                             "the options are 'n_bins' and 'binning'.")
        bins = dict(bins)
    return pd.DataFrame({s: _measures(example, s, bins) for s in example.systems})


def _check_results(table: Any, name: str = "table") -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"{name} must be a DataFrame from results_table; got {type(table).__name__}.")
    if "X" not in table.columns:
        raise ValueError(f"{name} has no column 'X' (the base system); its columns are {list(table.columns)}.")
    values = table.to_numpy(dtype=float, na_value=np.nan) if table.size else np.empty((0, 0))
    if not np.isfinite(values).all():
        raise ValueError(f"{name} holds values that are NaN or infinite.")
    return table


def worse_than_x(table: Any, *, eps: float = 1e-12) -> pd.DataFrame:
    """For each measure and perturbed system: does the measure say the system is strictly worse than X?

    Sakai's axioms say it should for every perturbed system (Y, Z, W are
    built from X by adding under- or overconfidence). "Worse" is a difference
    beyond ``eps`` in the measure's bad direction (lower for HMR, higher for
    the errors; :data:`HIGHER_IS_BETTER`).

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`results_table`: measures as rows, X and the perturbed
        systems as columns.
    eps : float, keyword-only
        Differences up to ``eps`` are floating-point noise, not a verdict.

    Returns
    -------
    pandas.DataFrame
        Booleans, measures as rows, the perturbed systems as columns.

    Examples
    --------
    >>> verdict = worse_than_x(results_table(load_sakai_example(1)))
    >>> verdict.loc["HMR"].tolist(), verdict.loc["MCE"].tolist()
    ([True, True, True], [False, False, False])
    """
    table = _check_results(table)
    eps = check_scalar_in_range(eps, "eps", low=0.0)
    perturbed = [s for s in table.columns if s != "X"]
    out = {}
    for m, row in table.iterrows():
        sign = -1 if m in HIGHER_IS_BETTER else 1
        out[m] = {s: bool(sign * (row[s] - row["X"]) > eps) for s in perturbed}
    return pd.DataFrame(out, index=perturbed).T


def violates(table: Any, measure: str, axiom: str, *, eps: float = 1e-12) -> bool:
    """Whether an example's results are a counterexample to Sakai's axiom ``axiom`` for ``measure`` (Table 8).

    Axioms U and O: the perturbed system (:data:`AXIOMS`: Y for U, Z for O)
    must not be scored *better* than X. Axiom UO: W, which carries both
    perturbations, must be scored strictly *worse* than X; a tie violates it.
    A measure the table does not hold (ECE and MCE of Example 3) is no
    counterexample.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`results_table`.
    measure : str
        One of :data:`MEASURES` ("HMR", "ECE", "MCE", "NBR", "KS").
    axiom : str
        "U", "O" or "UO".
    eps : float, keyword-only
        Differences up to ``eps`` count as ties.

    Returns
    -------
    bool

    Examples
    --------
    >>> table = results_table(load_sakai_example(1))
    >>> violates(table, "HMR", "O"), violates(table, "ECE", "O"), violates(table, "MCE", "UO")
    (False, True, True)
    """
    table = _check_results(table)
    measure = check_choice(measure, MEASURES, "measure")
    axiom = check_choice(axiom, tuple(AXIOMS), "axiom")
    eps = check_scalar_in_range(eps, "eps", low=0.0)
    system = AXIOMS[axiom]
    if system not in table.columns:
        raise ValueError(f"table has no column {system!r}, the system that tests axiom {axiom}.")
    if measure not in table.index:
        return False
    sign = -1 if measure in HIGHER_IS_BETTER else 1
    diff = sign * (table.loc[measure, system] - table.loc[measure, "X"])  # > 0: the system is worse than X
    return bool(diff < -eps) if axiom != "UO" else bool(diff <= eps)


def ks_table(example: Any, system: str) -> pd.DataFrame:
    """The KS computation of one system of a worked example, one row per instance (Sakai 2024, Tables 3 and 6).

    Instances sorted by top probability :math:`p_j`; :math:`cp_j` and
    :math:`cGOLD_j` are the running means of :math:`p_j` and of correctness,
    :math:`\\delta_j = |cp_j - cGOLD_j|`, and KS is the largest
    :math:`\\delta_j` (:func:`calibnb.ks_curves`, :func:`calibnb.ks_error`).

    Parameters
    ----------
    example : SakaiExample
        From :func:`load_sakai_example`.
    system : str
        "X", "Y", "Z" or "W".

    Returns
    -------
    pandas.DataFrame
        Columns ``p_j``, ``cp_j``, ``GOLD_j``, ``cGOLD_j``, ``delta_j``; index ``j`` from 1.

    Examples
    --------
    >>> t = ks_table(load_sakai_example(1), "X")
    >>> list(t.columns), len(t)
    (['p_j', 'cp_j', 'GOLD_j', 'cGOLD_j', 'delta_j'], 9)
    """
    from ..metrics import ks_curves

    example = _check_example(example)
    system = check_choice(system, tuple(example.systems), "system")
    k = ks_curves(*example.top(system))
    return pd.DataFrame({"p_j": k.scores, "cp_j": k.cum_score, "GOLD_j": k.correct.astype(int),
                         "cGOLD_j": k.cum_accuracy, "delta_j": np.abs(k.gap)},
                        index=pd.RangeIndex(1, len(k.scores) + 1, name="j"))


def example_table(example: Any) -> pd.DataFrame:
    """A worked example in the paper's layout: the class probabilities of every system (Sakai 2024, Tables 1, 4, 9).

    One column per instance :math:`j`; rows: the true class (numbered from
    1, as printed), whether X's top class is correct, then for each system
    (X, Y, Z, W) its probabilities :math:`p_1 \\dots p_M` and its top
    probability. The perturbations keep every prediction, so one
    "correct" row serves all systems.

    Parameters
    ----------
    example : SakaiExample
        From :func:`load_sakai_example`.

    Returns
    -------
    pandas.DataFrame
        Two-level row index (system, column), columns ``instance j`` from 1.

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Tables 1, 4 and 9.

    Examples
    --------
    >>> t = example_table(load_sakai_example(1))
    >>> t.shape
    (18, 9)
    >>> t.loc[("", "true class")].tolist()[:4], t.loc[("X", "top")].tolist()[:4]
    ([1.0, 1.0, 3.0, 3.0], [0.4, 0.4, 0.4, 0.6])
    """
    example = _check_example(example)
    correct = example.top("X")[1]
    frame = {("", "true class"): example.labels + 1, ("", "correct"): correct.astype(int)}
    for s in example.systems:
        p = example.probs(s)
        for m in range(p.shape[1]):
            frame[(s, f"p{m + 1}")] = p[:, m]
        frame[(s, "top")] = example.top(s)[0]
    out = pd.DataFrame(frame, index=pd.RangeIndex(1, len(correct) + 1, name="instance j"))
    return out.T


def binned_scores(example: Any, *, n_bins: int = 3, binning: str = "mass") -> pd.DataFrame:
    r"""ECE and MCE of every system of a worked example under one binning (Sakai 2024, §2 and §4.1.2).

    .. math:: \mathrm{ECE} = \sum_m \frac{|B_m|}{N} |\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|, \qquad
              \mathrm{MCE} = \max_m |\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|

    over the bins :math:`B_m` of the top probabilities (:func:`calibnb.ece`,
    :func:`calibnb.mce`). Notebook 04 compares the paper's binning (3
    equal-mass bins, the default) with others to show how the verdicts of
    ECE and MCE on Examples 1 and 2 depend on it.

    Parameters
    ----------
    example : SakaiExample
        From :func:`load_sakai_example`.
    n_bins : int, keyword-only
        Number of bins (default 3, the paper's).
    binning : {"mass", "width"}, keyword-only
        Equal-mass (default, the paper's) or equal-width bins.

    Returns
    -------
    pandas.DataFrame
        Rows ``ECE`` and ``MCE``, one column per system.

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Section 2, Eqs. 1 and 2.

    Examples
    --------
    >>> t = binned_scores(load_sakai_example(1), n_bins=3, binning="mass")
    >>> list(t.index), list(t.columns)
    (['ECE', 'MCE'], ['X', 'Y', 'Z', 'W'])
    >>> round(float(t.loc["ECE", "X"]), 3), round(float(t.loc["ECE", "Z"]), 3)
    (0.178, 0.156)
    """
    from .. import metrics

    example = _check_example(example)
    n_bins = check_positive_int(n_bins, "n_bins")
    binning = check_choice(binning, ("mass", "width"), "binning")
    options = {"n_bins": n_bins, "binning": binning}
    return pd.DataFrame({s: {"ECE": metrics.ece(*example.top(s), **options), "MCE": metrics.mce(*example.top(s), **options)}
                         for s in example.systems})


def better_than_x(table: Any, measure: str, system: str, *, eps: float = 1e-12) -> bool:
    """Whether ``measure`` scores ``system`` strictly better than the base system X (Sakai 2024, §4).

    "Better" is a difference beyond ``eps`` in the measure's good direction
    (higher for HMR, lower for the errors; :data:`HIGHER_IS_BETTER`). The
    paper's point on Examples 1 and 2 is that ECE and MCE can call a
    perturbed system better than X.

    Parameters
    ----------
    table : pandas.DataFrame
        Measures as rows, systems as columns, with a column X
        (:func:`results_table`, :func:`binned_scores`).
    measure : str
        A row of ``table``.
    system : str
        A column of ``table``.
    eps : float, keyword-only
        Differences up to ``eps`` are floating-point noise, not a verdict.

    Returns
    -------
    bool

    Examples
    --------
    >>> t = binned_scores(load_sakai_example(1))
    >>> better_than_x(t, "ECE", "Z"), better_than_x(t, "ECE", "Y")
    (True, False)
    """
    table = _check_results(table)
    measure = check_choice(measure, [str(m) for m in table.index], "measure")
    system = check_choice(system, [str(s) for s in table.columns], "system")
    eps = check_scalar_in_range(eps, "eps", low=0.0)
    sign = 1 if measure in HIGHER_IS_BETTER else -1
    return bool(sign * (table.loc[measure, system] - table.loc[measure, "X"]) > eps)


def hmr_beta_table(example: Any, *, beta: float = 1.0) -> pd.DataFrame:
    r"""Sakai's rewards and :math:`\mathrm{HMR}_\beta` of every system of a worked example (Sakai 2024, Eq. 8, footnote 1).

    .. math:: \mathrm{HMR}_\beta = \frac{(1 + \beta^2)\, R_O R_U}{\beta^2 R_O + R_U}

    with the rewards :math:`R_O, R_U` of :func:`calibnb.rewards`;
    :math:`\beta = 1` is HMR, :math:`\beta = 0` gives :math:`R_O` and a large
    :math:`\beta` tends to :math:`R_U` (:func:`calibnb.hmr`).

    Parameters
    ----------
    example : SakaiExample
        From :func:`load_sakai_example`.
    beta : float, keyword-only
        :math:`\beta \ge 0` (default 1).

    Returns
    -------
    pandas.DataFrame
        Rows ``R_O``, ``R_U`` and ``HMR_beta (beta=<beta>)``; one column per system.

    References
    ----------
    .. [1] Tetsuya Sakai. 2024. "Evaluating System Responses Based On Overconfidence and Underconfidence". In EMTCIR '24: The First Workshop on Evaluation Methodologies, Testbeds and Community for Information Access Research. Eq. 8 and footnote 1.

    Examples
    --------
    >>> t = hmr_beta_table(load_sakai_example(1), beta=1.0)
    >>> list(t.index)
    ['R_O', 'R_U', 'HMR_beta (beta=1)']
    >>> round(float(t.loc["HMR_beta (beta=1)", "X"]), 3)
    0.557
    """
    from .. import metrics

    example = _check_example(example)
    beta = check_scalar_in_range(beta, "beta", low=0.0)
    rows = {}
    for s in example.systems:
        c, y = example.top(s)
        r = metrics.rewards(c, y)
        rows[s] = {"R_O": r.r_o, "R_U": r.r_u, f"HMR_beta (beta={beta:g})": metrics.hmr(c, y, beta=beta)}
    return pd.DataFrame(rows)
