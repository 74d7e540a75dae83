r"""Consistency calibration, ConsCal (Si et al. 2022, §5.2, Appendix B, D, E).

The input is an ``(N, C)`` table of predictions: row i holds what each of C
model checkpoints predicted for instance i, in training order, the last column
being the final checkpoint. Predictions can be any comparable labels (class
indices, answer strings). The final prediction is the last column (Si App. B:
not a majority vote, because early checkpoints are less accurate). With

.. math:: k_i = \sum_{j=1}^{C} \mathbb 1[\hat y_{ij} = \hat y_{iC}]

(the final checkpoint included, so :math:`1 \le k_i \le C`):

* ``mode="binary"`` (§5.2): :math:`\hat c_i = \mathbb 1[k_i > n]`, with the
  threshold :math:`n \in \{0, \dots, C\}` chosen to minimise dev MacroCE
  when not given (ties: the smallest such n);
* ``mode="frequency"`` (App. D): :math:`\hat c_i = k_i / C`;
* ``mode="classifier"`` (App. D): logistic regression on the agreement bits
  :math:`\mathbb 1[\hat y_{ij} = \hat y_{iC}]`, j < C (all j for the
  majority-vote variant), fitted to the dev
  correctness; :math:`\hat c_i` is its predicted probability.

"ConsCal w/o training dynamics" (§5.3): the C columns are independently
seeded runs instead of checkpoints; the final prediction is their majority
vote (first column wins ties) and :math:`k_i` counts the runs agreeing with
it. Use :meth:`ConsCal.without_training_dynamics` (``reference="majority"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import check_choice, check_correct, check_positive_int, check_prediction_table
from ._base import Calibrator
from .. import metrics

__all__ = ["ConsCal", "majority_vote"]


def majority_vote(predictions: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Row-wise majority vote of an ``(N, C)`` prediction table and its count.

    .. math:: \hat y_i = \arg\max_{v} \sum_j \mathbb 1[\hat y_{ij} = v], \qquad
              k_i = \max_v \sum_j \mathbb 1[\hat y_{ij} = v]

    Ties go to the value that appears first in the row.

    >>> majority_vote([["a", "b", "b"], ["x", "y", "x"], [1, 2, 3]])[1]
    array([2, 2, 1])
    """
    table = check_prediction_table(predictions)
    counts = (table[:, :, None] == table[:, None, :]).sum(axis=2)
    j = np.argmax(counts, axis=1)
    rows = np.arange(table.shape[0])
    return table[rows, j], counts[rows, j]


class ConsCal(Calibrator):
    r"""Confidence from prediction consistency across checkpoints (Si et al. 2022, §5.2).

    See the module docstring for the three modes; in short, with :math:`k_i`
    the number of the C checkpoints agreeing with the final prediction,

    .. math:: \hat c_i^{\,\mathrm{binary}} = \mathbb 1[k_i > n], \qquad
              \hat c_i^{\,\mathrm{frequency}} = k_i / C.

    Parameters
    ----------
    mode : {"binary", "frequency", "classifier"}
    threshold : int, optional
        n of the binary mode; tuned on the dev set by MacroCE when None.
    reference : {"last", "majority"}
        The final prediction: the last checkpoint (ConsCal) or the majority
        vote of independent runs ("w/o training dynamics").

    Attributes
    ----------
    threshold_ : int
        The threshold used (binary mode).
    threshold_scores_ : ndarray
        Dev MacroCE for n = 0..C (binary mode, tuned).
    n_checkpoints_ : int
    classifier_ : sklearn LogisticRegression (classifier mode)

    Notes
    -----
    ``fit(predictions, correct)`` takes the dev ``(N, C)`` table and 0/1
    correctness of the final prediction (last column, or majority vote with
    ``reference="majority"``). ``transform(predictions)`` returns 1-D
    confidences, :meth:`predict` the final predictions.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.2.

    Examples
    --------
    >>> dev = [[1, 1, 1], [2, 1, 1], [0, 2, 1], [3, 3, 3]]
    >>> cc = ConsCal(mode="binary", threshold=2).fit(dev, [1, 1, 0, 1])
    >>> cc.transform(dev)
    array([1., 0., 0., 1.])
    >>> ConsCal(mode="frequency").fit(dev, [1, 1, 0, 1]).transform(dev).round(3)
    array([1.   , 0.667, 0.333, 1.   ])
    """

    _fitted_attribute = "n_checkpoints_"

    def __init__(self, *, mode: str = "binary", threshold: int | None = None, reference: str = "last"):
        self.mode = mode
        self.threshold = threshold
        self.reference = reference

    @classmethod
    def without_training_dynamics(cls, *, mode: str = "binary", threshold: int | None = None) -> "ConsCal":
        """The "w/o training dynamics" variant (Si §5.3): columns are independent runs, final = majority vote."""
        return cls(mode=mode, threshold=threshold, reference="majority")

    def agreement(self, predictions: Any) -> tuple[np.ndarray, np.ndarray]:
        """(final predictions, (N, C) bool agreement with them)."""
        table = check_prediction_table(predictions)
        if self.reference == "last":
            final = table[:, -1]
        else:
            final, _ = majority_vote(table)
        return final, table == final[:, None]

    def predict(self, predictions: Any) -> np.ndarray:
        """The final prediction of each instance (last column, or majority vote); after ``fit``.

        A scikit-learn ``predict``, so it needs a fitted calibrator (:class:`NotFittedError`
        otherwise); :meth:`agreement` gives the same final predictions without a fit.
        """
        self._check_fitted()
        check_choice(self.reference, ("last", "majority"), "reference")
        return self.agreement(predictions)[0]

    def fit(self, predictions: Any, correct: Any) -> "ConsCal":
        """Tune the threshold (binary), or fit the classifier, on dev data."""
        check_choice(self.mode, ("binary", "frequency", "classifier"), "mode")
        check_choice(self.reference, ("last", "majority"), "reference")
        _, agree = self.agreement(predictions)
        y = check_correct(correct, agree.shape[0], other="predictions")
        c = agree.shape[1]
        self.n_checkpoints_ = c
        self._set_n_features_in(agree)
        if self.mode == "binary":
            if self.threshold is not None:
                self.threshold_ = check_positive_int(self.threshold, "threshold", minimum=0)
                if self.threshold_ > c:
                    raise ValueError(f"threshold must be at most the number of checkpoints ({c}); got {self.threshold_}.")
            else:
                k = agree.sum(axis=1)
                scores = np.array([metrics.macro_ce((k > n).astype(np.float64), y) for n in range(c + 1)])
                self.threshold_scores_ = scores
                self.threshold_ = int(np.argmin(scores))
        elif self.mode == "classifier":
            from sklearn.linear_model import LogisticRegression

            if y.min() == y.max():
                raise ValueError("correct holds only one class; the classifier mode needs correct and wrong dev predictions.")
            self.classifier_ = LogisticRegression(max_iter=1000).fit(self._bits(agree), y)
        return self

    def transform(self, predictions: Any) -> np.ndarray:
        """ConsCal confidences (1-D) for a new ``(N, C)`` prediction table."""
        self._check_fitted()
        _, agree = self.agreement(predictions)
        if agree.shape[1] != self.n_checkpoints_:
            raise ValueError(
                f"predictions has {agree.shape[1]} checkpoints (columns) but the fit had {self.n_checkpoints_}; they must match."
            )
        k = agree.sum(axis=1)
        if self.mode == "binary":
            return (k > self.threshold_).astype(np.float64)
        if self.mode == "frequency":
            return k / agree.shape[1]
        return self.classifier_.predict_proba(self._bits(agree))[:, 1]

    def _bits(self, agree: np.ndarray) -> np.ndarray:
        # the last checkpoint always agrees with itself: drop that constant column
        return (agree[:, :-1] if self.reference == "last" else agree).astype(np.float64)
