"""Typed loaders for the registered real data (ChaosNLI, Baan et al.'s predictions, CIFAR, CIFAR-10H, QA).

Every loader goes through :func:`calibnb.data.fetch`, so files are verified
against ``data/manifest.json`` before they are read, and takes ``cache_dir``
(default ``$CALIBNB_DATA_DIR``, else ``~/.cache/calibnb``).

Class orders: ChaosNLI and everything returned here for NLI use **[e, n, c]**
(entailment, neutral, contradiction). Baan et al.'s prediction files store
[e, c, n]; :func:`load_chaosnli_predictions` re-orders them.
"""

from __future__ import annotations

import json
import os
import re
import string
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..validation import as_rng, check_choice, check_positive_int, check_scalar_in_range
from ._registry import fetch, manifest_entry, registry

__all__ = [
    "NLI_CLASSES",
    "QA_EXPERTS",
    "ChaosNLI",
    "ChaosNLIPredictions",
    "CifarOutputs",
    "load_chaosnli",
    "chaosnli_prediction_models",
    "load_chaosnli_predictions",
    "cifar_models",
    "load_cifar",
    "calibration_test_split",
    "load_cifar10h",
    "qa_datasets",
    "load_qa_confidences",
    "load_qa_dev_confidences",
    "load_codex_triviaqa",
    "read_text",
]

PathLike = str | os.PathLike | None

#: ChaosNLI's class order, used for every NLI array calibnb returns.
NLI_CLASSES: tuple[str, ...] = ("e", "n", "c")
#: The four MoRE prompting experts, in the order of ``gpt_preds.json``'s ``EMs``.
QA_EXPERTS: tuple[str, ...] = ("factual", "multihop", "math", "commonsense")

_CHAOS_FILES = {"snli": "chaosNLI_snli.jsonl", "mnli": "chaosNLI_mnli_m.jsonl", "alphanli": "chaosNLI_alphanli.jsonl"}
# Baan et al.'s files use [e, c, n]; column j of the [e, n, c] array is column _BAAN_TO_CHAOS[j] of theirs.
# The permutation is its own inverse, so it also maps their label indices to ours.
_BAAN_TO_CHAOS = np.array([0, 2, 1])


def _read_jsonl(path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# A line's "uid" member: the key, then a JSON string (escapes allowed). Inside another member's string value the
# quotes would be escaped (\"uid\"), so this matches only a key.
_UID_MEMBER = re.compile(r'"uid"\s*:\s*("(?:[^"\\]|\\.)*")')


def _read_jsonl_uids(path, wanted) -> list[tuple[str, dict[str, Any] | None]]:
    """(uid, row) of every line of a JSON-lines file, the row parsed only where its uid is in ``wanted`` (else None).

    The prediction files have about 10,000 lines of which ChaosNLI uses 1,500; finding each line's uid with a
    regular expression and decoding only the rows needed took :func:`load_chaosnli_predictions` from 100 to
    57 ms a call (issue 31: notebook 02 makes eleven calls per run). A line whose uid member is not found exactly
    once is decoded whole; a decoded row whose "uid" is not the one found raises.
    """
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            found = _UID_MEMBER.findall(line)
            if len(found) != 1:
                row = json.loads(line)
                out.append((row["uid"], row if row["uid"] in wanted else None))
                continue
            literal = found[0]
            uid = literal[1:-1] if "\\" not in literal else json.loads(literal)  # no escape: the text itself
            if uid not in wanted:
                out.append((uid, None))
                continue
            row = json.loads(line)
            if row.get("uid") != uid:
                raise ValueError(f"line {number} of {os.path.basename(path)}: its uid member reads {uid!r} but the "
                                 f"decoded row has uid {row.get('uid')!r}.")
            out.append((uid, row))
    return out


# --- ChaosNLI --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChaosNLI:
    """ChaosNLI v1.0 (Nie et al. 2020): 100 human votes for each item of one subset.

    Attributes
    ----------
    subset : str
        ``"snli"`` (1,514 items), ``"mnli"`` (MNLI-matched, 1,599) or ``"alphanli"`` (1,532).
    classes : tuple of str
        Column order of ``counts``: ``("e", "n", "c")`` for SNLI/MNLI,
        ``("1", "2")`` (hypothesis 1 or 2) for αNLI.
    uid : ndarray of str, shape (N,)
        Item ids, in file order (the order every other NLI loader aligns to).
    counts : ndarray of int64, shape (N, K)
        Human vote counts (each row sums to 100).
    majority_label : ndarray of int64, shape (N,)
        ``argmax(counts)``, first class wins ties (the project's convention).
    chaosnli_majority_label : ndarray of int64, shape (N,)
        ChaosNLI's own ``majority_label`` field; it differs from
        ``majority_label`` on a few tied items.
    old_label : ndarray of int64, shape (N,)
        The original SNLI/MNLI/αNLI gold label (which is not the ChaosNLI
        majority on about a quarter of the SNLI items).
    text : pandas.DataFrame
        One row per item: ``uid``, ``premise``, ``hypothesis``, ``source`` and
        ``old_labels`` (the original five annotations, a list) for SNLI/MNLI;
        ``uid``, ``obs1``, ``obs2``, ``hyp1``, ``hyp2``, ``source`` for αNLI.

    References
    ----------
    .. [1] Yixin Nie, Xiang Zhou, Mohit Bansal. 2020. "What Can We Learn from Collective Human Opinions on Natural Language Inference Data?". In Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP).
    """

    subset: str
    classes: tuple[str, ...]
    uid: np.ndarray
    counts: np.ndarray
    majority_label: np.ndarray
    chaosnli_majority_label: np.ndarray
    old_label: np.ndarray
    text: Any = field(repr=False)

    def __len__(self) -> int:
        return int(self.uid.shape[0])

    @property
    def distribution(self) -> np.ndarray:
        """The human label distribution (maximum-likelihood: ``counts / counts.sum(1)``), shape (N, K)."""
        return self.counts / self.counts.sum(axis=1, keepdims=True)


def load_chaosnli(subset: str, *, cache_dir: PathLike = None) -> ChaosNLI:
    """Load one ChaosNLI subset with its vote counts in class order [e, n, c].

    Parameters
    ----------
    subset : {"snli", "mnli", "alphanli"}
    cache_dir : path-like, optional
        See :func:`calibnb.data.fetch`.

    Returns
    -------
    ChaosNLI
        ``uid``, ``counts`` (N, K), ``majority_label``, ``old_label``, ``text``;
        see :class:`ChaosNLI`. Licence: CC BY-NC 4.0.

    Examples
    --------
    With the data available (see ``CALIBNB_DATA_DIR``)::

        chaos = load_chaosnli("snli")
        len(chaos), chaos.classes, chaos.counts.sum(axis=1).max()
        # -> (1514, ('e', 'n', 'c'), 100)
    """
    import pandas as pd

    subset = check_choice(subset, tuple(_CHAOS_FILES), "subset")
    rows = _read_jsonl(fetch(f"chaosnli/{_CHAOS_FILES[subset]}", cache_dir=cache_dir))
    if subset == "alphanli":
        classes: tuple[str, ...] = ("1", "2")
        index = {1: 0, 2: 1, "1": 0, "2": 1}
        text_cols = ["uid", "obs1", "obs2", "hyp1", "hyp2", "source"]
    else:
        classes = NLI_CLASSES
        index = {c: i for i, c in enumerate(NLI_CLASSES)}
        text_cols = ["uid", "premise", "hypothesis", "source"]
    counts = np.array([r["label_count"] for r in rows], dtype=np.int64)
    if counts.shape != (len(rows), len(classes)):
        raise ValueError(f"ChaosNLI-{subset}: label_count has shape {counts.shape}; expected ({len(rows)}, {len(classes)}).")
    text = pd.DataFrame([{c: r["example"][c] for c in text_cols} for r in rows], columns=text_cols)
    if subset != "alphanli":
        text["old_labels"] = [list(r["old_labels"]) for r in rows]
    uid = np.array([r["uid"] for r in rows], dtype=object)
    return ChaosNLI(
        subset=subset,
        classes=classes,
        uid=uid,
        counts=counts,
        majority_label=counts.argmax(axis=1).astype(np.int64),
        chaosnli_majority_label=np.array([index[r["majority_label"]] for r in rows], dtype=np.int64),
        old_label=np.array([index[r["old_label"]] for r in rows], dtype=np.int64),
        text=text,
    )


# --- Baan et al. 2022 model predictions ---------------------------------------------------------


_PRED_RE = re.compile(r"chaosnli/predictions/(SNLI|MNLI)_(dev|test)_(.+)_(\d+)\.json$")


def chaosnli_prediction_models() -> list[tuple[str, str, int]]:
    """The available ``(subset, model, seed)`` triples of Baan et al.'s model outputs.

    >>> chaosnli_prediction_models()[:2]
    [('mnli', 'roberta-base', 0), ('mnli', 'roberta-base', 1)]
    >>> len(chaosnli_prediction_models())
    8

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP).
    """
    found = set()
    for name in registry()["file"]:
        m = _PRED_RE.match(name)
        if m:
            found.add((m.group(1).lower(), m.group(3), int(m.group(4))))
    return sorted(found)


@dataclass(frozen=True)
class ChaosNLIPredictions:
    """A fine-tuned model's outputs on ChaosNLI (Baan et al. 2022), aligned to :func:`load_chaosnli`.

    Rows follow ``load_chaosnli(subset)``'s order, restricted to the items
    that have a prediction (``mask``); all arrays use class order [e, n, c].

    Attributes
    ----------
    subset, model : str
    seed : int
    classes : tuple of str
        ``("e", "n", "c")``.
    uid : ndarray of str, shape (n,)
        ``load_chaosnli(subset).uid[mask]``.
    mask : ndarray of bool, shape (N,)
        Which ChaosNLI items have a prediction (all 1,514 for SNLI; 1,569 of
        1,599 for MNLI).
    missing_uids : tuple of str
        The ChaosNLI items with no prediction, in ChaosNLI order.
    logits : ndarray of float64, shape (n, 3)
    probs : ndarray of float64, shape (n, 3)
        The file's softmax probabilities (rows re-normalised to sum to 1).
    true : ndarray of int64, shape (n,)
        The file's ``true`` label (the original SNLI/MNLI label), re-ordered.
    pred : ndarray of int64, shape (n,)
        The file's ``pred`` (its argmax), re-ordered.
    split : ndarray of str, shape (n,)
        ``"dev"`` or ``"test"``: which prediction file the row came from.

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP).
    """

    subset: str
    model: str
    seed: int
    classes: tuple[str, ...]
    uid: np.ndarray
    mask: np.ndarray
    missing_uids: tuple[str, ...]
    logits: np.ndarray
    probs: np.ndarray
    true: np.ndarray
    pred: np.ndarray
    split: np.ndarray

    def __len__(self) -> int:
        return int(self.uid.shape[0])


def load_chaosnli_predictions(subset: str, model: str, seed: int, *, cache_dir: PathLike = None) -> ChaosNLIPredictions:
    """Load a model's ChaosNLI predictions, dev and test merged, aligned by uid, in class order [e, n, c].

    Baan et al. (2022) released the outputs of RoBERTa-base (seeds 0–2, SNLI
    and MNLI) and BERT-base-uncased (seeds 0–1, SNLI) on the full SNLI/MNLI
    dev and test sets; ChaosNLI's items are among them. The files' class
    order [e, c, n] is re-ordered to ChaosNLI's [e, n, c] (columns of
    ``logits``/``probs`` and the label indices ``true``/``pred``).

    Parameters
    ----------
    subset : {"snli", "mnli"}
    model : str
        ``"roberta-base"`` or ``"bert-base-uncased"`` (see :func:`chaosnli_prediction_models`).
    seed : int
    cache_dir : path-like, optional

    Returns
    -------
    ChaosNLIPredictions
        Arrays over the ChaosNLI items that have a prediction, with ``mask``
        and ``missing_uids`` saying which have none (30 for MNLI).

    References
    ----------
    .. [1] Joris Baan, Wilker Aziz, Barbara Plank, Raquel Fernández. 2022. "Stop Measuring Calibration When Humans Disagree". In Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing (EMNLP).

    Examples
    --------
    With the data available (see ``CALIBNB_DATA_DIR``)::

        p = load_chaosnli_predictions("snli", "roberta-base", 0)
        p.probs.shape, p.mask.all()
        # -> ((1514, 3), True)
    """
    subset = check_choice(subset, ("snli", "mnli"), "subset")
    available = chaosnli_prediction_models()
    models = sorted({m for s, m, _ in available if s == subset})
    model = check_choice(model, models, "model")
    seed = check_positive_int(seed, "seed", minimum=0)
    seeds = sorted(k for s, m, k in available if s == subset and m == model)
    if seed not in seeds:
        raise ValueError(f"seed {seed} is not available for {model} on {subset}; available seeds: {seeds}.")

    chaos = load_chaosnli(subset, cache_dir=cache_dir)
    wanted = set(chaos.uid.tolist())
    by_uid: dict[str, tuple[str, dict[str, Any] | None]] = {}  # every uid of the files; rows of ChaosNLI's only
    for split in ("dev", "test"):
        name = f"chaosnli/predictions/{subset.upper()}_{split}_{model}_{seed}.json"
        for uid, row in _read_jsonl_uids(fetch(name, cache_dir=cache_dir), wanted):
            if uid in by_uid:
                raise ValueError(f"uid {uid!r} appears in more than one prediction file of {model} seed {seed}.")
            by_uid[uid] = (split, row)
    mask = np.array([u in by_uid for u in chaos.uid], dtype=bool)
    uid = chaos.uid[mask]
    rows = [by_uid[u][1] for u in uid]
    logits = np.array([r["logits"] for r in rows], dtype=np.float64)[:, _BAAN_TO_CHAOS]
    probs = np.array([r["probs"] for r in rows], dtype=np.float64)[:, _BAAN_TO_CHAOS]
    probs /= probs.sum(axis=1, keepdims=True)
    return ChaosNLIPredictions(
        subset=subset,
        model=model,
        seed=seed,
        classes=NLI_CLASSES,
        uid=uid,
        mask=mask,
        missing_uids=tuple(chaos.uid[~mask]),
        logits=logits,
        probs=probs,
        true=_BAAN_TO_CHAOS[np.array([r["true"] for r in rows], dtype=np.int64)],
        pred=_BAAN_TO_CHAOS[np.array([r["pred"] for r in rows], dtype=np.int64)],
        split=np.array([by_uid[u][0] for u in uid], dtype=object),
    )


# --- CIFAR -------------------------------------------------------------------------------------------


_CIFAR_RE = re.compile(r"cifar/(cifar10|cifar100)_(.+?)(_probs)?\.npz$")


def _cifar_files() -> dict[tuple[str, str], str]:
    out = {}
    for name in registry()["file"]:
        m = _CIFAR_RE.match(name)
        if m:
            out[(m.group(1), m.group(2))] = name
    return out


def cifar_models() -> list[tuple[str, str]]:
    """The available ``(dataset, model)`` pairs of CIFAR test-set outputs.

    >>> models = cifar_models()
    >>> len(models), ("cifar10", "resnet20") in models, ("cifar100", "densenet_bc_100") in models
    (18, True, True)
    """
    return sorted(_cifar_files())


@dataclass(frozen=True)
class CifarOutputs:
    """A pretrained network's outputs on the 10,000 CIFAR test images (test order).

    Attributes
    ----------
    dataset : {"cifar10", "cifar100"}
    model : str
    logits : ndarray of float64, shape (10000, K)
        Logits when the file has them (``scores == "logits"``), else natural-log
        probabilities (``scores == "log_probs"``; probabilities are clipped
        below at the smallest normal float32, 1.2e-38, before the log, so the
        values are finite). Either way ``softmax(logits)`` gives the model's
        probabilities.
    labels : ndarray of int64, shape (10000,)
    scores : {"logits", "log_probs"}
    source : str
        The registry file it came from (see its licence in ``registry()``).
    """

    dataset: str
    model: str
    logits: np.ndarray
    labels: np.ndarray
    scores: str
    source: str

    @property
    def probs(self) -> np.ndarray:
        """Softmax of ``logits``, shape (10000, K)."""
        z = self.logits - self.logits.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    @property
    def n_classes(self) -> int:
        return int(self.logits.shape[1])


def load_cifar(dataset: str, model: str, *, cache_dir: PathLike = None) -> CifarOutputs:
    """Load a pretrained network's CIFAR-10/100 test-set outputs.

    Parameters
    ----------
    dataset : {"cifar10", "cifar100"}
    model : str
        One of :func:`cifar_models` for ``dataset``: logits of ``resnet20``,
        ``resnet56``, ``vgg16_bn``, ``mobilenetv2_x1_4``,
        ``shufflenetv2_x2_0``, ``repvgg_a2`` (chenyaofo/pytorch-cifar-models via
        kwekuka/wasscal); probabilities of ``lenet_5``, ``wideresnet_16_4``,
        ``densenet_bc_100`` (netcal examples, Apache-2.0) and ``vgg_kumar``
        (Kumar et al. 2019, MIT).
    cache_dir : path-like, optional

    Returns
    -------
    CifarOutputs
        ``logits`` (logits, or log-probabilities for probability files) and
        ``labels``; see :class:`CifarOutputs`. Use
        :func:`calibration_test_split` for a seeded calibration/test split.

    References
    ----------
    .. [1] Ananya Kumar, Percy Liang, Tengyu Ma. 2019. "Verified Uncertainty Calibration". In Advances in Neural Information Processing Systems (NeurIPS).

    Examples
    --------
    With the data available (see ``CALIBNB_DATA_DIR``)::

        out = load_cifar("cifar10", "resnet20")
        out.logits.shape, out.scores, round(float((out.logits.argmax(1) == out.labels).mean()), 4)
        # -> ((10000, 10), 'logits', 0.926)
    """
    dataset = check_choice(dataset, ("cifar10", "cifar100"), "dataset")
    files = _cifar_files()
    model = check_choice(model, sorted(m for d, m in files if d == dataset), "model")
    name = files[(dataset, model)]
    with np.load(fetch(name, cache_dir=cache_dir), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    labels = np.asarray(arrays.get("labels", arrays.get("ground_truth")), dtype=np.int64)
    if "logits" in arrays:
        logits = arrays["logits"].astype(np.float64)
        scores = "logits"
    else:
        probs = arrays.get("probs", arrays.get("predictions")).astype(np.float64)
        logits = np.log(np.maximum(probs, np.finfo(np.float32).tiny))
        scores = "log_probs"
    return CifarOutputs(dataset=dataset, model=model, logits=logits, labels=labels, scores=scores, source=name)


def calibration_test_split(n: int, *, seed: Any = None, frac: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split of ``n`` items into calibration and test index sets.

    The calibration set takes ``round(frac * n)`` items drawn by a random
    permutation from ``calibnb.validation.as_rng(seed)``; the test set takes the
    rest. Both index arrays are returned sorted.

    Parameters
    ----------
    n : int
        Number of items (>= 2).
    seed : None, int or numpy.random.Generator
        Source of randomness (None: fresh entropy).
    frac : float, default 0.5
        Fraction for calibration, in (0, 1); both parts must be non-empty.

    Returns
    -------
    calibration, test : ndarray of int64

    Examples
    --------
    >>> cal, test = calibration_test_split(10, seed=0)
    >>> len(cal), len(test), sorted(np.concatenate([cal, test]).tolist()) == list(range(10))
    (5, 5, True)
    """
    n = check_positive_int(n, "n", minimum=2)
    rng = as_rng(seed)
    frac = check_scalar_in_range(frac, "frac", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    n_cal = int(round(frac * n))
    if not 1 <= n_cal <= n - 1:
        raise ValueError(f"frac={frac:g} of n={n} gives {n_cal} calibration items; both parts must be non-empty.")
    perm = rng.permutation(n)
    return np.sort(perm[:n_cal]).astype(np.int64), np.sort(perm[n_cal:]).astype(np.int64)


def load_cifar10h(*, cache_dir: PathLike = None) -> np.ndarray:
    """CIFAR-10H human label counts (Peterson et al. 2019), shape (10000, 10), CIFAR-10 test order.

    About 50 people labelled each test image (row sums 47–63); columns are the
    CIFAR-10 classes in their usual order. Licence: CC BY-NC-SA 4.0.

    With the data available (see ``CALIBNB_DATA_DIR``)::

        counts = load_cifar10h()
        counts.shape, counts.dtype
        # -> ((10000, 10), dtype('int64'))

    References
    ----------
    .. [1] Joshua C. Peterson, Ruairidh M. Battleday, Thomas L. Griffiths, Olga Russakovsky. 2019. "Human Uncertainty Makes Classification More Robust". In Proceedings of the IEEE/CVF International Conference on Computer Vision (ICCV).
    """
    counts = np.load(fetch("cifar10h/cifar10h-counts.npy", cache_dir=cache_dir), allow_pickle=False)
    return np.asarray(counts, dtype=np.int64)


# --- QA ----------------------------------------------------------------------------------------------


def _normalize_answer(text: str) -> str:
    """SQuAD-style answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = str(text).lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _gpt_preds(cache_dir: PathLike) -> dict[str, Any]:
    with open(fetch("qa/gpt_preds.json", cache_dir=cache_dir), encoding="utf-8") as f:
        return json.load(f)


def qa_datasets(*, cache_dir: PathLike = None) -> list[str]:
    """The 12 QA data sets of MoRE's ``gpt_preds.json`` (nq, triviaqa, squad, hotpotqa, ...)."""
    return list(_gpt_preds(cache_dir))


def load_qa_confidences(dataset: str, expert: str, *, cache_dir: PathLike = None):
    """Real QA confidences and correctness of one LLM-prompting expert (MoRE, Si et al. 2023).

    For each test question of ``dataset`` (400, or 393–399 for multiarith, csqa
    and qasc) MoRE prompted four "experts" (factual, multihop, math,
    commonsense prompts of the same LLM); ``gpt_preds.json`` holds each
    expert's answer and exact-match (EM) correctness, and
    ``RandomForest_calibrator_predictions.json`` a random-forest calibrator's
    confidence for each expert's answer (a trained post-hoc calibrator, so
    already roughly calibrated).

    Parameters
    ----------
    dataset : str
        One of :func:`qa_datasets`.
    expert : {"factual", "multihop", "math", "commonsense"}
    cache_dir : path-like, optional

    Returns
    -------
    pandas.DataFrame
        One row per question, columns:

        - ``question`` (str);
        - ``confidence`` (float): the calibrator's confidence in ``expert``'s answer;
        - ``correct`` (bool): ``expert``'s EM;
        - ``answer`` (str): ``expert``'s answer;
        - ``em_<e>`` (bool) and ``answer_<e>`` (str) for each of the four experts ``e``;
        - ``n_agree`` (int, 1–4): how many of the four experts gave the same
          answer as ``expert`` after SQuAD normalisation (lower case, no
          punctuation or articles) — itself included — for agreement-based ConsCal;
        - ``selected_expert`` (str) and ``selected_correct`` (bool): MoRE's
          router choice (``choice`` A–D = the experts in order) and its EM.

    References
    ----------
    .. [1] Chenglei Si, Weijia Shi, Chen Zhao, Luke Zettlemoyer, Jordan Boyd-Graber. 2023. "Getting MoRE out of Mixture of Language Model Reasoning Experts". In Findings of the Association for Computational Linguistics: EMNLP 2023.

    Examples
    --------
    With the data available (see ``CALIBNB_DATA_DIR``)::

        df = load_qa_confidences("nq", "factual")
        len(df), round(df["correct"].mean(), 3)
        # -> (400, 0.428)
    """
    import pandas as pd

    preds = _gpt_preds(cache_dir)
    dataset = check_choice(dataset, tuple(preds), "dataset")
    expert = check_choice(expert, QA_EXPERTS, "expert")
    with open(fetch("qa/RandomForest_calibrator_predictions.json", cache_dir=cache_dir), encoding="utf-8") as f:
        conf = np.asarray(json.load(f)[f"{dataset}_{expert}"], dtype=np.float64)
    items = preds[dataset]["data"]
    if conf.shape[0] != len(items):
        raise ValueError(f"{dataset}: {conf.shape[0]} calibrator confidences but {len(items)} questions.")
    k = QA_EXPERTS.index(expert)
    ems = np.array([it["EMs"] for it in items], dtype=bool)
    frame: dict[str, Any] = {
        "question": [it["question"] for it in items],
        "confidence": conf,
        "correct": ems[:, k],
        "answer": [str(it[expert]) for it in items],
    }
    normalized = {e: [_normalize_answer(it[e]) for it in items] for e in QA_EXPERTS}
    for j, e in enumerate(QA_EXPERTS):
        frame[f"em_{e}"] = ems[:, j]
        frame[f"answer_{e}"] = [str(it[e]) for it in items]
    agree = np.array([[normalized[e][i] == normalized[expert][i] for e in QA_EXPERTS] for i in range(len(items))])
    frame["n_agree"] = agree.sum(axis=1).astype(np.int64)
    choice = np.array(["ABCD".index(it["choice"]) for it in items], dtype=np.int64)
    frame["selected_expert"] = np.array(QA_EXPERTS, dtype=object)[choice]
    frame["selected_correct"] = np.array([it["EM"] for it in items], dtype=bool)
    return pd.DataFrame(frame)


def load_qa_dev_confidences(dataset: str, expert: str, *, cache_dir: PathLike = None) -> np.ndarray:
    """MoRE's random-forest calibrator confidences on the dev split: 100 values, no correctness labels.

    With the data available (see ``CALIBNB_DATA_DIR``)::

        load_qa_dev_confidences("nq", "factual").shape
        # -> (100,)
    """
    dataset = check_choice(dataset, tuple(_gpt_preds(cache_dir)), "dataset")
    expert = check_choice(expert, QA_EXPERTS, "expert")
    with open(fetch("qa/RandomForest_calibrator_dev_set_predictions.json", cache_dir=cache_dir), encoding="utf-8") as f:
        return np.asarray(json.load(f)[f"{dataset}_{expert}"], dtype=np.float64)


_CODEX_BLOCK = re.compile(r"\*{10}\s+Question #(\d+)\s+\*{10}\n")


def load_codex_triviaqa(*, cache_dir: PathLike = None):
    """Raw LLM answer probabilities on 100 TriviaQA questions (Codex, 16-shot; Si et al. 2023).

    Parsed from ``qa/codex_triviaqa_16shot.log``: each question block ends
    with the test question and the model's answer (the last
    ``question / Answer:`` pair after the 16 demonstrations), then
    ``Gold answer:``, ``token_probs:``, ``LM Prob:`` (the geometric mean of the
    answer's token probabilities), ``EM`` and ``F1``. These raw probabilities
    are overconfident (mean ≈ 0.75 against an accuracy of 0.62).

    Returns
    -------
    pandas.DataFrame
        Columns ``question`` (str), ``answer`` (str, the model's),
        ``gold_answers`` (list of str), ``token_probs`` (list of float),
        ``confidence`` (float, ``LM Prob``), ``correct`` (bool, ``EM``),
        ``f1`` (float), in log order.

    References
    ----------
    .. [1] Chenglei Si, Weijia Shi, Chen Zhao, Luke Zettlemoyer, Jordan Boyd-Graber. 2023. "Getting MoRE out of Mixture of Language Model Reasoning Experts". In Findings of the Association for Computational Linguistics: EMNLP 2023.

    Examples
    --------
    With the data available (see ``CALIBNB_DATA_DIR``)::

        df = load_codex_triviaqa()
        len(df), df["correct"].mean()
        # -> (100, 0.62)
    """
    import ast

    import pandas as pd

    text = fetch("qa/codex_triviaqa_16shot.log", cache_dir=cache_dir).read_text(encoding="utf-8")
    parts = _CODEX_BLOCK.split(text)
    rows = []
    for number, block in zip(parts[1::2], parts[2::2]):
        head, sep, tail = block.partition("\nGold answer:")
        if not sep:
            raise ValueError(f"codex log: question #{number} has no 'Gold answer:' line.")
        last = head.strip().split("\n\n")[-1].split("\n")
        if not last[-1].startswith("Answer:"):
            raise ValueError(f"codex log: question #{number} does not end with an 'Answer:' line.")
        # "EM  1" per question; the log's closing summary line "EM: 8347/11313=..." does not match.
        fields = dict(re.findall(r"^(token_probs:|LM Prob:|EM|F1)\s+(\S.*)$", tail, flags=re.M))
        gold = ast.literal_eval(tail.split("\n", 1)[0].strip())
        rows.append({
            "question": " ".join(line.strip() for line in last[:-1]),
            "answer": last[-1][len("Answer:"):].strip(),
            "gold_answers": list(gold),
            "token_probs": [float(p) for p in ast.literal_eval(fields["token_probs:"])],
            "confidence": float(fields["LM Prob:"]),
            "correct": bool(int(fields["EM"])),
            "f1": float(fields["F1"]),
        })
    if not rows:
        raise ValueError("codex log: no question blocks found.")
    return pd.DataFrame(rows, columns=["question", "answer", "gold_answers", "token_probs", "confidence", "correct", "f1"])


def read_text(name: str, *, cache_dir: PathLike = None) -> str:
    """The text of a registered text file (``chaosnli/README.txt``, ``cifar10h/LICENSE.txt``, ...).

    >>> "CC BY-NC-SA" in manifest_entry("cifar10h/LICENSE.txt")["licence"]
    True
    """
    return fetch(name, cache_dir=cache_dir).read_text(encoding="utf-8")
