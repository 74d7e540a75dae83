"""One registry of calibnb's metrics: each declared once, beside its function.

A declaration (:class:`Metric`) says what a metric is for every consumer:
its direction, the arrays it takes, the paper, its streaming (mergeable) form,
its per-item form and the names it is also known by. The metrics modules
(:mod:`calibnb.metrics.binary`, ``estimators``, ``multiclass``, ``human``,
``scalar``, ``selective``), :mod:`calibnb.corp` and :mod:`calibnb.loss_gain`
:func:`register` theirs at import time (the readers below import them first:
:data:`DECLARING_MODULES`); from :func:`metrics` come

* :func:`calibnb.metric_summary`'s rows (and so the audit's tables),
* the metric names :func:`calibnb.calibration_scorer` accepts,
* the metrics ``calibnb.dask`` computes on Dask columns
  (:func:`calibnb.dask.metric_functions`).

Adding a metric is its function, its :func:`register` call and its test.

**How an interval is obtained.** :func:`calibnb.metric_summary` gives every
metric a percentile bootstrap over rows: the ``binary`` form evaluates all
resamples at once through the batch axis, ``mean`` and ``classwise`` reweight
per-item values, ``loop`` calls the function once per resample. Estimators
that refit something inside (PAV of CORP's miscalibration, the cross-fitted
calibrator of the loss gain) declare ``form="own"`` and an ``interval``
function instead: ``interval(conf, correct, *, sample_weight, n_resamples,
level, seed, cache, **options)`` returns ``(estimate, low, high)`` by the
estimator's own method (e.g. :func:`calibnb.recalibration_gain`'s paired
bootstrap of per-item loss differences; ``low = high = None`` when
``n_resamples`` is 0), and the summary uses it as given (with
``min(n_resamples, heavy_resamples)`` resamples, as for the loop form). The
estimate of such a metric depends on ``seed`` when the estimator draws folds.
``cache`` is a dict that lives for one summary call and is shared by the rows
computed from the same arrays, weights, resamples and seed: an estimator that
yields several registered numbers from one computation (the loss gain in log
loss and in Brier score from one cross-fitting; CORP's MCB of both scores
from one set of resamples) keeps it there under its own key, so it runs once.

**Mergeable or not.** ``streaming`` is the mergeable form (from a
:class:`calibnb.CalibrationStats`); a metric without one that is still left
out of the Dask list and of the streamed audit's whole-file estimates says
why in ``not_mergeable`` (e.g. "PAV needs every row at once"), which
:func:`not_mergeable` lists.

Examples
--------
>>> from calibnb.metrics import registry
>>> m = registry.get_metric("ece_mass")
>>> m.fn.__name__, dict(m.options), m.aka
('ece', {'binning': 'mass'}, 'adaptive ECE; ece(conf, correct, binning="mass")')
>>> [m.key for m in registry.metrics()][:3]
['accuracy', 'ece_width', 'ece_mass']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Metric", "register", "unregister", "metrics", "get_metric", "not_mergeable", "INPUTS", "FORMS"]

#: The arrays a metric takes (``Metric.inputs``), as :func:`calibnb.metric_summary` derives them.
INPUTS = {
    "binary": "(conf, correct): top-1 confidence and 0/1 correctness",
    "top2": "(conf, correct) of the second-highest probability (Gupta 2021's top-2)",
    "within2": "(conf, correct) of the top-2 probability mass (within-top-2)",
    "probs": "(probs, labels): (N, K) class probabilities and integer labels",
    "probs_majority": "(probs, labels) with the human majority as the label",
    "votes": "(probs, human): class probabilities and (N, K) human vote counts",
    "psi": "(psi_model, psi_human): expected scalar label of the model and of the humans",
}
#: How a metric is computed from its arrays (``Metric.form``).
FORMS = {
    "binary": "fn(conf, correct, sample_weight=, **options), with a batch axis (calibnb.metrics.batch_axis)",
    "mean": "the (weighted) mean of per_item(*arrays), one value per item",
    "classwise": "fn, a binary metric, applied to each class k of (probs, labels == k), averaged over classes",
    "loop": "fn(*arrays, **options) -> float, unweighted, bootstrapped by resampling rows",
    "own": "fn(conf, correct, sample_weight=, **options) -> float; estimate and interval from "
           "interval(conf, correct, sample_weight=, n_resamples=, level=, seed=, cache=, **options), the "
           "estimator's own method (no row bootstrap around it)",
}


@dataclass(frozen=True)
class Metric:
    """The declaration of one metric (see :func:`register`).

    Attributes
    ----------
    key : str
        Unique key, e.g. ``"ece_mass"`` (the row key of the summary and of ``audit.json``).
    name : str
        Display name; ``{n_bins}`` is replaced by the number of bins.
    paper : str
        Where it comes from, e.g. ``"Si 2022; Jiang 2024"``.
    reading : str
        One plain-language line: what the number says.
    fn : callable or None
        The metric function (``form`` "binary", "classwise" or "loop"), or the public function that
        computes it, if any (``form`` "mean").
    inputs : str
        One of :data:`INPUTS`.
    form : str
        One of :data:`FORMS`.
    per_item : callable or None
        Per-item values whose (weighted) mean is the metric; required for ``form="mean"``.
    higher_is_better : bool
        The direction: False for an error (lower is better).
    binned : bool
        Takes ``n_bins`` (given by the caller, e.g. ``metric_summary(n_bins=15)``).
    options : tuple of (name, value)
        Fixed keyword options of ``fn`` (e.g. ``(("binning", "mass"),)``).
    streaming : callable or None
        Mergeable form: ``streaming(stats, **options)`` computes it from a
        :class:`calibnb.CalibrationStats` (with ``n_bins`` among the options when ``binned``).
    aka : str
        Other names, e.g. ``'adaptive ECE; ece(conf, correct, binning="mass")'``.
    interval : callable or None
        Required for (and only for) ``form="own"``: ``interval(conf, correct, *, sample_weight,
        n_resamples, level, seed, cache, **options) -> (estimate, low, high)``, the estimator's own
        interval (``low``, ``high`` None when ``n_resamples`` is 0; ``cache`` a dict shared by the
        rows of one summary call); see the module docstring.
    not_mergeable : str
        For a metric without ``streaming`` form: why it has none (shown by :func:`not_mergeable`;
        such a metric is absent from the Dask list and from the streamed whole-file estimates).
    """

    key: str
    name: str
    paper: str
    reading: str
    fn: Callable | None = None
    inputs: str = "binary"
    form: str = "binary"
    per_item: Callable | None = None
    higher_is_better: bool = False
    binned: bool = False
    options: tuple = ()
    streaming: Callable | None = None
    aka: str = ""
    interval: Callable | None = None
    not_mergeable: str = ""

    def call_options(self, n_bins: int | None = None) -> dict[str, Any]:
        """The keyword options of ``fn``: the fixed ``options``, plus ``n_bins`` when ``binned``."""
        out = {"n_bins": n_bins} if self.binned and n_bins is not None else {}
        out.update(self.options)
        return out


_REGISTRY: dict[str, Metric] = {}

#: The modules that declare calibnb's metrics, in the order of their rows: :mod:`calibnb.metrics` (its own
#: modules, in its import order), then the estimators that refit inside (CORP, the loss gain). ``import calibnb``
#: imports a module only when one of its names is first used (PEP 562), so every reader of the whole registry
#: imports these first: a summary computed before anything touched ``calibnb.corp`` would otherwise lack CORP's
#: rows, silently. (An import by name at call time: the declaring modules import this one.)
DECLARING_MODULES = ("calibnb.metrics", "calibnb.corp", "calibnb.loss_gain")


def _declared() -> list[Metric]:
    """Every registered metric, the declaring modules imported first; in :data:`DECLARING_MODULES` order, then
    registration order (metrics registered elsewhere come last), whichever module was imported first."""
    import importlib

    for name in DECLARING_MODULES:
        importlib.import_module(name)

    def rank(metric: Metric) -> int:
        module = getattr(metric.fn, "__module__", None) or DECLARING_MODULES[0]
        return next((k for k, d in enumerate(DECLARING_MODULES) if module == d or module.startswith(d + ".")),
                    len(DECLARING_MODULES))

    return sorted(_REGISTRY.values(), key=rank)  # stable: registration order within a rank


def register(metric: Metric, *, replace: bool = False) -> Metric:
    """Add ``metric`` to the registry (in order: :func:`metrics` lists calibnb's by declaring module, each module's
    in registration order, then the others in registration order).

    Raises
    ------
    TypeError
        ``metric`` is not a :class:`Metric`, or a callable field is not callable.
    ValueError
        Its key is taken (unless ``replace``), or ``inputs``/``form`` is unknown, or a
        ``form="mean"`` metric has no ``per_item``, or ``interval`` is missing for
        ``form="own"`` (or given for another form), or ``not_mergeable`` is given beside ``streaming``.

    Examples
    --------
    >>> import numpy as np
    >>> toy = Metric("toy_gap", "toy gap", "-", "mean confidence minus accuracy",
    ...              form="mean", per_item=lambda conf, correct: conf - correct)
    >>> register(toy).key
    'toy_gap'
    >>> unregister("toy_gap").key
    'toy_gap'
    """
    if not isinstance(metric, Metric):
        raise TypeError(f"metric must be a calibnb.metrics.registry.Metric; got {type(metric).__name__}.")
    if not isinstance(metric.key, str) or not metric.key:
        raise ValueError(f"metric.key must be a non-empty string; got {metric.key!r}.")
    if metric.inputs not in INPUTS:
        raise ValueError(f"metric.inputs must be one of {sorted(INPUTS)}; got {metric.inputs!r}.")
    if metric.form not in FORMS:
        raise ValueError(f"metric.form must be one of {sorted(FORMS)}; got {metric.form!r}.")
    for field in ("fn", "per_item", "streaming", "interval"):
        value = getattr(metric, field)
        if value is not None and not callable(value):
            raise TypeError(f"metric.{field} must be callable or None; got {type(value).__name__}.")
    if metric.form == "mean" and metric.per_item is None:
        raise ValueError(f"metric {metric.key!r} has form 'mean' but no per_item function.")
    if metric.form != "mean" and metric.fn is None:
        raise ValueError(f"metric {metric.key!r} has form {metric.form!r} but no fn.")
    if (metric.form == "own") != (metric.interval is not None):
        raise ValueError(f"metric {metric.key!r}: an interval function goes with form 'own' and only with it "
                         f"(form {metric.form!r}, interval {'given' if metric.interval is not None else 'None'}).")
    if not isinstance(metric.not_mergeable, str):
        raise TypeError(f"metric.not_mergeable must be a string; got {type(metric.not_mergeable).__name__}.")
    if metric.not_mergeable and metric.streaming is not None:
        raise ValueError(f"metric {metric.key!r} has a streaming form, so not_mergeable must be empty.")
    if metric.key in _REGISTRY and not replace:
        raise ValueError(f"a metric with key {metric.key!r} is already registered; pass replace=True to replace it.")
    _REGISTRY[metric.key] = metric
    return metric


def unregister(key: str) -> Metric:
    """Remove and return the metric registered under ``key`` (``KeyError``-free: ValueError if unknown)."""
    if key not in _REGISTRY:
        raise ValueError(f"key {key!r} is not a registered metric; known: {sorted(_REGISTRY)}.")
    return _REGISTRY.pop(key)


def metrics() -> tuple[Metric, ...]:
    """Every registered metric: calibnb's in :data:`DECLARING_MODULES` order, then any registered elsewhere."""
    return tuple(_declared())


def get_metric(key: str) -> Metric:
    """The metric registered under ``key`` (ValueError naming the known keys otherwise)."""
    if key not in _REGISTRY:
        _declared()  # a key declared in a module not imported yet
    if key not in _REGISTRY:
        raise ValueError(f"key {key!r} is not a registered metric; known: {sorted(_REGISTRY)}.")
    return _REGISTRY[key]


def not_mergeable() -> dict[str, str]:
    """Metrics with no mergeable form, and why: ``key -> reason`` (``Metric.not_mergeable``).

    These are left out of :func:`calibnb.dask.metric_functions` and of the
    streamed audit's whole-file estimates; only declarations that state a
    reason are listed.

    Examples
    --------
    >>> import calibnb
    >>> "corp_mcb_brier" in not_mergeable()
    True
    """
    return {m.key: m.not_mergeable for m in _declared() if m.not_mergeable}
