r"""A **simulation** of retriever-reader outputs for open-domain QA (Si et al. 2022 §3.2).

No DPR retriever-reader predictions are public, so the joint-vs-pipeline
temperature-scaling section of the Si notebook runs on simulated scores. The
data here are **simulated**, never real model outputs; every name and
docstring says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import as_rng, check_choice, check_positive_int, check_scalar_in_range

__all__ = ["SimulatedODQA", "simulate_odqa"]


@dataclass(frozen=True)
class SimulatedODQA:
    """**Simulated** retriever-reader outputs: top passages × top spans per question.

    Attributes
    ----------
    passage_logits : ndarray, shape (Q, P)
        Simulated passage (retriever) scores :math:`z^{psg}(i)`, sorted
        descending within each question (column 0 is the top passage).
    start_logits, end_logits : ndarray, shape (Q, P, S)
        Simulated span start and end scores :math:`z^{start}(i, s)`,
        :math:`z^{end}(i, e)`; within each passage the spans are sorted by
        ``start + end``, descending.
    gold : ndarray of bool, shape (Q, P, S)
        Whether a candidate span is a correct answer (a question has zero,
        one or several correct candidates).
    answerable : ndarray of bool, shape (Q,)
        Whether any retrieved passage holds the answer.
    seed : int or None
    accuracy : float
        The requested top-1 accuracy of the joint prediction.
    signal : float
        The evidence strength found by bisection so that the realised joint
        accuracy is as close as possible to ``accuracy``.
    logit_scale : float
        Factor applied to every score (larger = more overconfident softmax).
    """

    passage_logits: np.ndarray
    start_logits: np.ndarray
    end_logits: np.ndarray
    gold: np.ndarray
    answerable: np.ndarray
    seed: int | None
    accuracy: float
    signal: float
    logit_scale: float

    def __len__(self) -> int:
        return int(self.passage_logits.shape[0])

    def candidates(self, mode: str = "joint") -> tuple[np.ndarray, np.ndarray]:
        r"""Candidate scores and gold mask of this **simulated** QA data (Si et al. 2022, §3.2).

        .. math::

            \text{joint: } z^{psg}(i) + z^{start}(i, s) + z^{end}(i, e)
            \quad\text{over all } P \times S \text{ candidates;}\qquad
            \text{pipeline: } z^{start}(i_{\max}, s) + z^{end}(i_{\max}, e)
            \quad\text{over the top passage's } S \text{ spans.}

        Parameters
        ----------
        mode : {"joint", "pipeline"}

        Returns
        -------
        scores : ndarray of float64, shape (Q, P*S) or (Q, S)
        gold : ndarray of bool, same shape
            Pass both to a temperature scaler (softmax over each row); the
            prediction is the row's argmax and it is correct iff its gold flag is set.

        References
        ----------
        .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §3.2.

        Examples
        --------
        >>> sim = simulate_odqa(50, seed=0, accuracy=0.4, n_passages=3, n_spans=4)
        >>> [a.shape for a in sim.candidates("joint")], [a.shape for a in sim.candidates("pipeline")]
        ([(50, 12), (50, 12)], [(50, 4), (50, 4)])
        """
        mode = check_choice(mode, ("joint", "pipeline"), "mode")
        q = len(self)
        if mode == "joint":
            scores = self.passage_logits[:, :, None] + self.start_logits + self.end_logits
            return scores.reshape(q, -1), self.gold.reshape(q, -1).copy()
        return self.start_logits[:, 0, :] + self.end_logits[:, 0, :], self.gold[:, 0, :].copy()


def _joint_accuracy(signal: float, bearing: np.ndarray, gold: np.ndarray, noise_p: np.ndarray,
                    noise_s: np.ndarray, noise_e: np.ndarray) -> float:
    """Top-1 accuracy of the joint argmax at a given signal strength (scale-free)."""
    total = (signal * bearing + noise_p)[:, :, None] + signal * gold + noise_s + noise_e
    q = total.shape[0]
    flat = total.reshape(q, -1)
    return float(np.mean(gold.reshape(q, -1)[np.arange(q), flat.argmax(axis=1)]))


def simulate_odqa(
    n_questions: int,
    *,
    seed: Any,
    accuracy: float,
    n_passages: int = 10,
    n_spans: int = 10,
    answerable: float = 0.95,
    p_bearing: float = 0.3,
    logit_scale: float = 3.0,
) -> SimulatedODQA:
    r"""**Simulate** retriever-reader outputs for open-domain QA (Si et al. 2022, §3.2).

    A documented generator, not real data: for each question, ``n_passages``
    retrieved passages with ``n_spans`` candidate spans each, with passage,
    span-start and span-end logits and a gold flag. It lets the Si notebook
    compare *joint* calibration (softmax over all passage × span candidates)
    with *pipeline* calibration (softmax over the top passage's spans).

    Generative model (``Q`` questions, ``P`` passages, ``S`` spans):

    .. math::

        A_q &\sim \mathrm{Bernoulli}(\text{answerable}),\qquad
        b_{qi} \sim \mathrm{Bernoulli}(p_\text{bearing})\ \text{if } A_q
        \text{ (at least one passage forced), else } 0,\\
        g_{qis} &= b_{qi}\,[s = s^*_{qi}],\quad s^*_{qi} \sim \mathrm{Uniform}\{1..S\},\\
        z^{psg}_{qi} &= c\,(\lambda\, b_{qi} + \varepsilon_{qi}),\qquad
        z^{start}_{qis} = c\,(\tfrac{\lambda}{2} g_{qis} + \eta_{qis}),\qquad
        z^{end}_{qis} = c\,(\tfrac{\lambda}{2} g_{qis} + \zeta_{qis}),

    with standard normal noises :math:`\varepsilon, \eta, \zeta`, gold flag
    :math:`g`, ``logit_scale`` :math:`c` and evidence strength
    :math:`\lambda` chosen by bisection so that the joint top-1 accuracy
    (the gold flag of the argmax of :math:`z^{psg} + z^{start} + z^{end}`)
    is as close as possible to ``accuracy``. Passages are then sorted by
    :math:`z^{psg}` and spans within a passage by :math:`z^{start} + z^{end}`.
    A large :math:`c` makes the raw softmax confidences overconfident, which
    temperature scaling (:math:`\tau \approx c`) should undo.

    Parameters
    ----------
    n_questions : int
    seed : None, int or numpy.random.Generator
        Seed of the simulation (keyword-only and required, so that a run says
        how it is seeded; None draws fresh entropy).
    accuracy : float in (0, 1)
        Target top-1 accuracy of the joint prediction; it must be below
        ``answerable``.
    n_passages, n_spans : int, default 10
        Retrieved passages per question and candidate spans per passage (Si et al.: 10 and 10).
    answerable : float in (0, 1], default 0.95
        Probability that a question's answer is in some retrieved passage.
    p_bearing : float in (0, 1], default 0.3
        Probability that each retrieved passage of an answerable question holds the answer.
    logit_scale : float > 0, default 3.0
        Scale of every logit (the overconfidence of the simulated reader).

    Returns
    -------
    SimulatedODQA
        The **simulated** scores and gold flags; use
        :meth:`SimulatedODQA.candidates` for joint or pipeline candidate sets.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §3.2.

    Examples
    --------
    >>> sim = simulate_odqa(400, seed=0, accuracy=0.35)
    >>> sim.start_logits.shape, sim.gold.dtype
    ((400, 10, 10), dtype('bool'))
    >>> scores, gold = sim.candidates("joint")
    >>> abs(float(gold[np.arange(400), scores.argmax(axis=1)].mean()) - 0.35) <= 0.01
    True
    """
    n_questions = check_positive_int(n_questions, "n_questions")
    n_passages = check_positive_int(n_passages, "n_passages")
    n_spans = check_positive_int(n_spans, "n_spans")
    answerable_p = check_scalar_in_range(answerable, "answerable", low=0.0, high=1.0, low_inclusive=False)
    accuracy = check_scalar_in_range(accuracy, "accuracy", low=0.0, high=1.0, low_inclusive=False,
                                     high_inclusive=False)
    if accuracy >= answerable_p:
        raise ValueError(f"accuracy ({accuracy:g}) must be below answerable ({answerable_p:g}): "
                         "unanswerable questions are always wrong.")
    p_bearing = check_scalar_in_range(p_bearing, "p_bearing", low=0.0, high=1.0, low_inclusive=False)
    logit_scale = check_scalar_in_range(logit_scale, "logit_scale", low=0.0, low_inclusive=False)
    rng = as_rng(seed)
    q, p, s = n_questions, n_passages, n_spans

    has_answer = rng.random(q) < answerable_p
    bearing = (rng.random((q, p)) < p_bearing) & has_answer[:, None]
    forced = has_answer & ~bearing.any(axis=1)
    bearing[forced, rng.integers(0, p, size=int(forced.sum()))] = True
    gold_span = rng.integers(0, s, size=(q, p))
    gold = (np.arange(s)[None, None, :] == gold_span[:, :, None]) & bearing[:, :, None]
    noise_p = rng.standard_normal((q, p))
    noise_s = rng.standard_normal((q, p, s))
    noise_e = rng.standard_normal((q, p, s))
    bearing_f = bearing.astype(np.float64)
    gold_f = gold.astype(np.float64)

    # Bisection on the evidence strength: the joint accuracy rises with it.
    lo, hi = 0.0, 64.0
    acc_hi = _joint_accuracy(hi, bearing_f, gold_f, noise_p, noise_s, noise_e)
    if acc_hi < accuracy:
        raise ValueError(
            f"accuracy {accuracy:g} cannot be reached with these settings (at most {acc_hi:.3f} for "
            f"{q} questions); raise answerable or n_questions."
        )
    best, best_gap = hi, abs(acc_hi - accuracy)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        acc = _joint_accuracy(mid, bearing_f, gold_f, noise_p, noise_s, noise_e)
        if abs(acc - accuracy) < best_gap:
            best, best_gap = mid, abs(acc - accuracy)
        if acc < accuracy:
            lo = mid
        else:
            hi = mid
    signal = best

    z_psg = logit_scale * (signal * bearing_f + noise_p)
    z_start = logit_scale * (0.5 * signal * gold_f + noise_s)
    z_end = logit_scale * (0.5 * signal * gold_f + noise_e)
    # Sort passages by retriever score, then spans within each passage by span score.
    order_p = np.argsort(-z_psg, axis=1, kind="stable")
    z_psg = np.take_along_axis(z_psg, order_p, axis=1)
    z_start, z_end, gold = (np.take_along_axis(a, order_p[:, :, None], axis=1) for a in (z_start, z_end, gold))
    order_s = np.argsort(-(z_start + z_end), axis=2, kind="stable")
    z_start, z_end, gold = (np.take_along_axis(a, order_s, axis=2) for a in (z_start, z_end, gold))
    return SimulatedODQA(
        passage_logits=z_psg,
        start_logits=z_start,
        end_logits=z_end,
        gold=gold,
        answerable=has_answer,
        seed=seed if seed is None or isinstance(seed, int) else None,
        accuracy=accuracy,
        signal=float(signal),
        logit_scale=logit_scale,
    )
