r"""The QA calibration baselines of Si et al. 2022 (§5.1, Appendix B).

* :class:`AverageBaseline` -- every test prediction gets the dev accuracy.
* :class:`BinaryBaseline` -- the top t of test predictions by confidence get
  confidence 1, the rest 0, with t the dev accuracy.
* :class:`CorrectnessClassifier` -- a scikit-learn classifier predicting, from
  features of a prediction, whether it is correct; its predicted probability is
  the confidence.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import (
    as_float_array, as_rng, check_bool, check_choice, check_conf, check_correct, check_scalar_in_range,
)
from ._base import Calibrator

__all__ = ["AverageBaseline", "BinaryBaseline", "CorrectnessClassifier"]


class _DevAccuracyBaseline(Calibrator):
    """Shared ``fit`` of the two Si et al. (2022) baselines: record the dev accuracy."""

    _fitted_attribute = "accuracy_"

    def fit(self, conf: Any, correct: Any):
        """Record the dev accuracy ``accuracy_``; returns self."""
        c = check_conf(conf)
        y = check_correct(correct, c.shape[0])
        self.accuracy_ = float(np.mean(y))
        self._set_n_features_in(c)
        return self


class AverageBaseline(_DevAccuracyBaseline):
    r"""Give every prediction the dev-set accuracy (Si et al. 2022, §5.1).

    .. math:: \hat c_i = \bar a = \frac{1}{N_\mathrm{dev}} \sum_{j \in \mathrm{dev}} y_j

    Its MacroCE is exactly 1/2 whatever :math:`\bar a` (when the test set has
    both correct and wrong predictions): :math:`\mathrm{ICE}_{pos} = 1 - \bar a`,
    :math:`\mathrm{ICE}_{neg} = \bar a` (Si Table 2 and Table 7, "50.00").
    Its ECE is small when the test accuracy matches the dev accuracy.

    ``fit(conf, correct)`` takes dev confidences in [0, 1] (only their length
    is used) and 0/1 correctness; ``transform(conf)`` returns a 1-D array.

    Attributes
    ----------
    accuracy_ : float
        The dev accuracy.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.1, Table 2, Table 7.

    Examples
    --------
    >>> AverageBaseline().fit([0.9, 0.2, 0.6, 0.7], [1, 0, 0, 1]).transform([0.1, 0.99])
    array([0.5, 0.5])
    """


    def transform(self, conf: Any) -> np.ndarray:
        """The dev accuracy for every prediction."""
        self._check_fitted()
        c = check_conf(conf)
        return np.full(c.shape[0], self.accuracy_)

class BinaryBaseline(_DevAccuracyBaseline):
    r"""Top t of predictions by confidence get 1, the rest 0; t = dev accuracy (Si et al. 2022, §5.1).

    .. math:: \hat c_i = \mathbb 1\big[\mathrm{rank}(c_i) \le \lfloor t N + \tfrac12 \rfloor\big],
              \qquad t = \frac{1}{N_\mathrm{dev}} \sum_{j \in \mathrm{dev}} y_j

    where :math:`\mathrm{rank}` orders the test confidences from highest to
    lowest (stable: among equal confidences the earlier instance ranks
    first), so exactly :math:`\mathrm{round}(tN)` predictions get 1.

    Attributes
    ----------
    accuracy_ : float
        The dev accuracy t.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.1.

    Examples
    --------
    >>> BinaryBaseline().fit([0.9, 0.2, 0.6, 0.7], [1, 0, 0, 1]).transform([0.1, 0.99, 0.5, 0.7])
    array([0., 1., 0., 1.])
    """


    def transform(self, conf: Any) -> np.ndarray:
        """1 for the round(accuracy_ * N) most confident predictions, else 0."""
        self._check_fitted()
        c = check_conf(conf)
        n_top = int(np.floor(self.accuracy_ * c.shape[0] + 0.5))
        order = np.argsort(-c, kind="stable")
        out = np.zeros(c.shape[0])
        out[order[:n_top]] = 1.0
        return out

def _check_features(features: Any, name: str = "features") -> np.ndarray:
    x = as_float_array(features, name)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (N, n_features); got shape {x.shape}.")
    if x.shape[0] == 0:
        raise ValueError(f"{name} is empty; at least one row is needed.")
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), x.shape)
        raise ValueError(
            f"{name} has {int(bad.sum())} value(s) that are NaN or infinite; first at index ({i}, {j}): {x[i, j]!r}."
        )
    return x


class CorrectnessClassifier(Calibrator):
    r"""Predict whether a prediction is correct from its features (Si et al. 2022, §5.1, Appendix B).

    .. math:: \hat c_i = P_\theta(\mathrm{correct} \mid x_i),
              \quad \theta = \arg\min_\theta\, \mathrm{loss}(\text{balanced dev data})

    Following Appendix B: 10% of the dev predictions are held out as a
    validation set; the rest is re-sampled to a balanced training set (the
    minority class drawn with replacement up to the size of the majority
    class); the model's capacity is chosen by the validation log-loss (the
    scikit-learn counterpart of the paper's early stopping): the inverse
    regularisation ``C`` for ``"logreg"`` and ``"svm"``, the maximum depth for
    ``"forest"``. The confidence is the predicted probability of "correct".
    Features are standardised with the training mean and standard deviation.

    Parameters
    ----------
    model : {"logreg", "svm", "forest"}
        ``LogisticRegression``, an RBF ``SVC`` with Platt-scaled outputs
        (``CalibratedClassifierCV(..., method="sigmoid", ensemble=False)``; Si
        et al. follow Kamath et al. 2020 in using an SVM) or
        ``RandomForestClassifier``.
    holdout : float, default 0.1
        Fraction held out for validation.
    balance : bool, default True
        Re-sample the training part to balanced classes.
    seed : None, int or numpy.random.Generator
        Seeds the split, the re-sampling and the model (None: fresh entropy).

    Attributes
    ----------
    model_ : the fitted scikit-learn estimator
    param_ : dict
        The chosen capacity parameter.
    validation_loss_ : float
        Validation log-loss of the chosen model.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.1, Appendix B.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(400, 2))
    >>> correct = rng.random(400) < 1 / (1 + np.exp(-3 * x[:, 0]))
    >>> clf = CorrectnessClassifier(model="logreg", seed=0).fit(x, correct)
    >>> conf = clf.transform([[2.0, 0.0], [-2.0, 0.0]])
    >>> bool(conf[0] > 0.8 and conf[1] < 0.2)
    True
    """

    _GRIDS = {
        "logreg": ("C", (0.01, 0.1, 1.0, 10.0, 100.0)),
        "svm": ("C", (0.1, 1.0, 10.0)),
        "forest": ("max_depth", (2, 4, 8, None)),
    }

    _fitted_attribute = "model_"

    def __init__(self, *, model: str = "logreg", holdout: float = 0.1, balance: bool = True, seed: Any = None):
        self.model = model
        self.holdout = holdout
        self.balance = balance
        self.seed = seed

    def _make(self, value: Any, seed: int):
        if self.model == "logreg":
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(C=value, max_iter=1000)
        if self.model == "svm":
            from sklearn.calibration import CalibratedClassifierCV
            from sklearn.svm import SVC

            # an RBF SVM with Platt-scaled outputs (what SVC(probability=True) did)
            return CalibratedClassifierCV(SVC(C=value, random_state=seed), method="sigmoid", cv=5, ensemble=False)
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=100, max_depth=value, min_samples_leaf=5, random_state=seed)

    def fit(self, features: Any, correct: Any) -> "CorrectnessClassifier":
        """Fit on dev features ``(N, n_features)`` (1-D = one feature) and 0/1 correctness."""
        from sklearn.metrics import log_loss

        check_choice(self.model, tuple(self._GRIDS), "model")
        frac = check_scalar_in_range(self.holdout, "holdout", low=0.0, high=0.5, low_inclusive=False)
        check_bool(self.balance, "balance")
        x = _check_features(features)
        y = check_correct(correct, x.shape[0], other="features").astype(np.int64)
        if y.min() == y.max():
            raise ValueError("correct holds only one class; a correctness classifier needs both correct and wrong.")
        rng = as_rng(self.seed)
        perm = rng.permutation(x.shape[0])
        n_val = max(1, int(round(frac * x.shape[0])))
        val, train = perm[:n_val], perm[n_val:]
        if np.unique(y[train]).size < 2:
            raise ValueError("the training part (after the hold-out) has only one class; give more data.")
        if self.balance:
            pos, neg = train[y[train] == 1], train[y[train] == 0]
            small, large = (pos, neg) if pos.size < neg.size else (neg, pos)
            extra = rng.choice(small, size=large.size - small.size, replace=True)
            train = rng.permutation(np.concatenate([large, small, extra]))
        self.mean_ = x[train].mean(axis=0)
        std = x[train].std(axis=0)
        self.scale_ = np.where(std > 0, std, 1.0)
        xs = (x - self.mean_) / self.scale_
        model_seed = int(rng.integers(2**31 - 1))
        name, grid = self._GRIDS[self.model]
        best = None
        for value in grid:
            est = self._make(value, model_seed).fit(xs[train], y[train])
            p = est.predict_proba(xs[val])[:, 1]
            loss = float(log_loss(y[val], p, labels=[0, 1]))
            if best is None or loss < best[0]:
                best = (loss, value, est)
        self.validation_loss_, value, self.model_ = best
        self.param_ = {name: value}
        self.n_features_ = x.shape[1]
        self._set_n_features_in(x)
        return self

    def transform(self, features: Any) -> np.ndarray:
        """Predicted probability that each prediction is correct."""
        self._check_fitted()
        x = _check_features(features)
        if x.shape[1] != self.n_features_:
            raise ValueError(f"features has {x.shape[1]} columns but the fit had {self.n_features_}; they must match.")
        return self.model_.predict_proba((x - self.mean_) / self.scale_)[:, 1]
