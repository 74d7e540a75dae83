"""The typed loaders, on the shared mirror of the real data (``CALIBNB_DATA_DIR``).

Each file is loaded once per session through fixtures. The whole module is
skipped, with the reason shown, only when no mirror exists (CI always has it).
"""

from __future__ import annotations


import numpy as np
import pytest

from calibnb.data import (
    NLI_CLASSES,
    QA_EXPERTS,
    calibration_test_split,
    chaosnli_prediction_models,
    cifar_models,
    load_chaosnli,
    load_chaosnli_predictions,
    load_cifar,
    load_cifar10h,
    load_codex_triviaqa,
    load_qa_confidences,
    load_qa_dev_confidences,
    manifest_entry,
    qa_datasets,
    read_text,
    registry,
)

from data_mirror import MIRROR, needs_mirror

pytestmark = needs_mirror


@pytest.fixture(scope="session")
def chaos():
    return {s: load_chaosnli(s, cache_dir=MIRROR) for s in ("snli", "mnli", "alphanli")}


@pytest.fixture(scope="session")
def predictions():
    return {key: load_chaosnli_predictions(*key, cache_dir=MIRROR) for key in chaosnli_prediction_models()}


@pytest.fixture(scope="session")
def cifar():
    return {key: load_cifar(*key, cache_dir=MIRROR) for key in cifar_models()}


# --- ChaosNLI ------------------------------------------------------------------------------------


@pytest.mark.parametrize("subset, n, k", [("snli", 1514, 3), ("mnli", 1599, 3), ("alphanli", 1532, 2)])
def test_chaosnli_sizes_and_votes(chaos, subset, n, k):
    c = chaos[subset]
    assert len(c) == n and c.counts.shape == (n, k) and c.counts.dtype == np.int64
    assert (c.counts.sum(axis=1) == 100).all()
    assert len(set(c.uid)) == n
    assert len(c.text) == n and (c.text["uid"].to_numpy() == c.uid).all()
    np.testing.assert_allclose(c.distribution.sum(axis=1), 1.0)
    assert c.old_label.min() >= 0 and c.old_label.max() < k


def test_chaosnli_classes_and_text_columns(chaos):
    assert chaos["snli"].classes == NLI_CLASSES == ("e", "n", "c")
    assert chaos["alphanli"].classes == ("1", "2")
    assert list(chaos["snli"].text.columns) == ["uid", "premise", "hypothesis", "source", "old_labels"]
    assert list(chaos["alphanli"].text.columns) == ["uid", "obs1", "obs2", "hyp1", "hyp2", "source"]


def test_chaosnli_counts_follow_the_named_class_order(chaos):
    """The first SNLI item has votes {n: 70, e: 30}: [e, n, c] = [30, 70, 0]."""
    c = chaos["snli"]
    assert c.uid[0] == "2407214681.jpg#0r1n"
    np.testing.assert_array_equal(c.counts[0], [30, 70, 0])
    assert c.majority_label[0] == NLI_CLASSES.index("n")
    # The original labels' vote: neutral is old_labels' majority and the old_label.
    assert c.old_label[0] == NLI_CLASSES.index("n")
    assert c.text["old_labels"][0].count("neutral") == 3


@pytest.mark.parametrize("subset", ["snli", "mnli", "alphanli"])
def test_majority_is_first_argmax_and_differs_from_the_file_only_on_ties(chaos, subset):
    c = chaos[subset]
    np.testing.assert_array_equal(c.majority_label, c.counts.argmax(axis=1))
    differs = c.majority_label != c.chaosnli_majority_label
    top = np.sort(c.counts, axis=1)
    tied = top[:, -1] == top[:, -2]
    assert differs.any() and not (differs & ~tied).any()
    # On those tied items ChaosNLI's own label is also a maximiser.
    rows = np.flatnonzero(differs)
    assert (c.counts[rows, c.chaosnli_majority_label[rows]] == c.counts[rows].max(axis=1)).all()


def test_old_label_is_not_the_majority_on_about_a_quarter_of_snli(chaos):
    rate = np.mean(chaos["snli"].old_label != chaos["snli"].majority_label)
    assert 0.2 < rate < 0.3


def test_oracle_argmax_equals_majority_label(chaos):
    for c in chaos.values():
        np.testing.assert_array_equal(c.distribution.argmax(axis=1), c.majority_label)


# --- Baan et al.'s predictions ---------------------------------------------------------------------


def test_available_prediction_models():
    assert chaosnli_prediction_models() == [
        ("mnli", "roberta-base", 0), ("mnli", "roberta-base", 1), ("mnli", "roberta-base", 2),
        ("snli", "bert-base-uncased", 0), ("snli", "bert-base-uncased", 1),
        ("snli", "roberta-base", 0), ("snli", "roberta-base", 1), ("snli", "roberta-base", 2),
    ]


def test_snli_roberta_seed0_aligns_to_all_1514_items(chaos, predictions):
    p = predictions[("snli", "roberta-base", 0)]
    assert len(p) == 1514 and p.mask.all() and p.missing_uids == ()
    np.testing.assert_array_equal(p.uid, chaos["snli"].uid)
    assert p.classes == NLI_CLASSES
    assert set(p.split) == {"dev", "test"}


@pytest.mark.parametrize("key", chaosnli_prediction_models())
def test_predictions_are_reordered_and_aligned(chaos, predictions, key):
    p, c = predictions[key], chaos[key[0]]
    assert p.logits.shape == p.probs.shape == (len(p), 3)
    np.testing.assert_array_equal(p.uid, c.uid[p.mask])
    np.testing.assert_allclose(p.probs.sum(axis=1), 1.0, atol=1e-12)
    # probs are the softmax of the logits (both re-ordered by the same permutation).
    z = np.exp(p.logits - p.logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(p.probs, z / z.sum(axis=1, keepdims=True), atol=1e-6)
    # The file's `true`, re-ordered, is ChaosNLI's old_label (the original SNLI/MNLI label) ...
    np.testing.assert_array_equal(p.true, c.old_label[p.mask])
    # ... and the file's `pred`, re-ordered, is the argmax of the re-ordered probabilities.
    np.testing.assert_array_equal(p.pred, p.probs.argmax(axis=1))
    # So the model's accuracy against `true` equals the file's own pred == true rate.
    assert np.mean(p.probs.argmax(axis=1) == p.true) == np.mean(p.pred == p.true)


def test_a_wrong_reordering_would_be_caught(chaos, predictions):
    """Without re-ordering (file order [e, c, n]) the labels no longer match old_label."""
    p, c = predictions[("snli", "roberta-base", 0)], chaos["snli"]
    unreordered_true = np.array([0, 2, 1])[p.true]
    assert np.mean(unreordered_true == c.old_label) < 0.5


def test_mnli_has_30_items_without_predictions(chaos, predictions):
    for seed in (0, 1, 2):
        p = predictions[("mnli", "roberta-base", seed)]
        assert len(p) == 1569 and len(p.missing_uids) == 30 and int((~p.mask).sum()) == 30
        assert set(p.missing_uids) == set(chaos["mnli"].uid[~p.mask])


def test_roberta_snli_accuracy_against_majority_is_baans_074(chaos, predictions):
    """Baan et al. 2022, Table 1: RoBERTa accuracy 0.74 against the ChaosNLI majority."""
    accs = [np.mean(predictions[("snli", "roberta-base", s)].pred == chaos["snli"].majority_label) for s in (0, 1, 2)]
    assert np.mean(accs) == pytest.approx(0.74, abs=0.01)


@pytest.mark.parametrize(
    "args, error, match",
    [
        (("alphanli", "roberta-base", 0), ValueError, "subset must be one of 'snli', 'mnli'"),
        (("mnli", "bert-base-uncased", 0), ValueError, "model must be one of 'roberta-base'"),
        (("snli", "bert-base-uncased", 2), ValueError, r"seed 2 is not available.*\[0, 1\]"),
        (("snli", "roberta-base", 0.5), TypeError, "seed must be an integer"),
    ],
)
def test_prediction_loader_rejects_bad_arguments(args, error, match):
    with pytest.raises(error, match=match):
        load_chaosnli_predictions(*args, cache_dir=MIRROR)


def test_chaosnli_rejects_unknown_subset():
    with pytest.raises(ValueError, match="subset must be one of 'snli', 'mnli', 'alphanli'; got 'mnli_m'"):
        load_chaosnli("mnli_m", cache_dir=MIRROR)


# --- CIFAR ---------------------------------------------------------------------------------------


def test_every_cifar_file_is_reachable():
    files = {n for n in registry()["file"] if n.startswith("cifar/")}
    assert len(cifar_models()) == len(files) == 18


@pytest.mark.parametrize("key", cifar_models())
def test_cifar_shapes_scores_and_accuracy_match_the_manifest(cifar, key):
    out = cifar[key]
    entry = manifest_entry(out.source)
    k = 10 if key[0] == "cifar10" else 100
    assert out.logits.shape == (10000, k) and out.labels.shape == (10000,) and out.n_classes == k
    assert out.logits.dtype == np.float64 and out.labels.dtype == np.int64
    assert np.isfinite(out.logits).all()
    assert out.scores == ("logits" if "logits" in entry["arrays"] else "log_probs")
    assert np.mean(out.logits.argmax(axis=1) == out.labels) == pytest.approx(entry["accuracy"], abs=5e-5)
    np.testing.assert_allclose(out.probs.sum(axis=1), 1.0, atol=1e-9)


def test_cifar_probability_files_round_trip_through_log_probs(cifar):
    out = cifar[("cifar10", "wideresnet_16_4")]
    with np.load(MIRROR / out.source) as z:
        probs = z["predictions"].astype(np.float64)
    np.testing.assert_allclose(out.probs, probs / probs.sum(axis=1, keepdims=True), atol=1e-6)


def test_cifar_test_orders_agree_across_sources(cifar):
    """All CIFAR-10 files, and CIFAR-10H, are in the same test-image order."""
    reference = cifar[("cifar10", "resnet20")].labels
    for (dataset, _), out in cifar.items():
        if dataset == "cifar10":
            np.testing.assert_array_equal(out.labels, reference)
    counts = load_cifar10h(cache_dir=MIRROR)
    assert np.mean(counts.argmax(axis=1) == reference) > 0.98


def test_load_cifar_rejects_unknown_names():
    with pytest.raises(ValueError, match="dataset must be one of 'cifar10', 'cifar100'"):
        load_cifar("cifar1000", "resnet20", cache_dir=MIRROR)
    with pytest.raises(ValueError, match="model must be one of"):
        load_cifar("cifar100", "vgg_kumar", cache_dir=MIRROR)


@pytest.mark.parametrize("n, frac, n_cal", [(10000, 0.5, 5000), (11, 0.5, 6), (7, 0.3, 2), (2, 0.5, 1)])
def test_calibration_test_split_partitions(n, frac, n_cal):
    cal, test = calibration_test_split(n, seed=3, frac=frac)
    assert len(cal) == n_cal and len(test) == n - n_cal
    np.testing.assert_array_equal(np.sort(np.concatenate([cal, test])), np.arange(n))
    assert (np.diff(cal) > 0).all() and (np.diff(test) > 0).all()


def test_calibration_test_split_is_seeded():
    a, _ = calibration_test_split(1000, seed=1)
    b, _ = calibration_test_split(1000, seed=1)
    c, _ = calibration_test_split(1000, seed=2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(n=1, seed=0), ValueError, "n must be at least 2"),
        (dict(n=10, seed=0, frac=1.0), ValueError, "frac must be < 1"),
        (dict(n=10, seed=0, frac=0.01), ValueError, "both parts must be non-empty"),
        (dict(n=10, seed=1.5), TypeError, "seed must be None, an int or a numpy.random.Generator"),
        (dict(n=10, seed=-1), ValueError, "seed must be a non-negative int"),
    ],
)
def test_calibration_test_split_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        calibration_test_split(**kwargs)


# --- CIFAR-10H ---------------------------------------------------------------------------------------


def test_cifar10h_counts():
    counts = load_cifar10h(cache_dir=MIRROR)
    assert counts.shape == (10000, 10) and counts.dtype == np.int64
    assert counts.min() >= 0 and 47 <= counts.sum(axis=1).min() and counts.sum(axis=1).max() <= 63
    assert "CIFAR-10H" in read_text("cifar10h/LICENSE.txt", cache_dir=MIRROR)


# --- QA ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def nq():
    return {e: load_qa_confidences("nq", e, cache_dir=MIRROR) for e in QA_EXPERTS}


def test_qa_datasets():
    names = qa_datasets(cache_dir=MIRROR)
    assert len(names) == 12 and names[:4] == ["nq", "triviaqa", "squad", "hotpotqa"]


def test_qa_confidences_columns_and_values(nq):
    df = nq["factual"]
    expected = ["question", "confidence", "correct", "answer"]
    for e in QA_EXPERTS:
        expected += [f"em_{e}", f"answer_{e}"]
    assert list(df.columns) == expected + ["n_agree", "selected_expert", "selected_correct"]
    assert len(df) == 400
    assert df["confidence"].between(0, 1).all() and df["correct"].dtype == bool
    assert df["n_agree"].between(1, 4).all()
    # The first NQ question: every expert answered "22", none correctly.
    assert df["answer"][0] == "22" and df["n_agree"][0] == 4 and not df["correct"][0]


def test_qa_confidences_are_consistent_across_experts(nq):
    for e, df in nq.items():
        np.testing.assert_array_equal(df["correct"], df[f"em_{e}"])
        assert (df["answer"] == df[f"answer_{e}"]).all()
        np.testing.assert_array_equal(df["question"], nq["factual"]["question"])
    # n_agree is symmetric: if a agrees with b, b agrees with a, so the totals of
    # agreeing pairs seen from each expert add up to an even number per question.
    total = sum(df["n_agree"].to_numpy() - 1 for df in nq.values())
    assert (total % 2 == 0).all()
    # MoRE's router choice: its EM is the chosen expert's EM.
    df = nq["factual"]
    chosen = np.array([df[f"em_{e}"][i] for i, e in enumerate(df["selected_expert"])])
    np.testing.assert_array_equal(chosen, df["selected_correct"])


def test_qa_per_dataset_sizes_and_dev_confidences():
    assert len(load_qa_confidences("csqa", "commonsense", cache_dir=MIRROR)) == 393
    dev = load_qa_dev_confidences("triviaqa", "math", cache_dir=MIRROR)
    assert dev.shape == (100,) and ((dev >= 0) & (dev <= 1)).all()


def test_qa_loader_rejects_unknown_names():
    with pytest.raises(ValueError, match="expert must be one of 'factual'"):
        load_qa_confidences("nq", "history", cache_dir=MIRROR)
    with pytest.raises(ValueError, match="dataset must be one of 'nq'"):
        load_qa_confidences("natural_questions", "factual", cache_dir=MIRROR)


def test_codex_triviaqa_is_overconfident_as_stated():
    df = load_codex_triviaqa(cache_dir=MIRROR)
    assert len(df) == 100
    assert df["confidence"].mean() == pytest.approx(0.75, abs=0.005)
    assert df["correct"].mean() == pytest.approx(0.62, abs=1e-12)
    # LM Prob is the geometric mean of the answer's token probabilities.
    geo = np.array([np.exp(np.mean(np.log(t))) for t in df["token_probs"]])
    np.testing.assert_allclose(df["confidence"], geo, rtol=1e-9)
    # EM implies F1 = 1.
    assert (df.loc[df["correct"], "f1"] == 1.0).all()
    assert df["question"][0] == "Who was the man behind The Chipmunks?"
    assert df["answer"][0] == "Ross Bagdasarian" and df["gold_answers"][0] == ["David Seville"]


def test_every_registered_file_is_reachable_through_a_loader():
    """Each manifest file is read by one of the loaders above (or read_text for the text files)."""
    reached = {"chaosnli/README.txt", "cifar10h/LICENSE.txt"}  # read_text
    reached |= {f"chaosnli/{f}" for f in ("chaosNLI_snli.jsonl", "chaosNLI_mnli_m.jsonl", "chaosNLI_alphanli.jsonl")}
    for subset, model, seed in chaosnli_prediction_models():
        reached |= {f"chaosnli/predictions/{subset.upper()}_{s}_{model}_{seed}.json" for s in ("dev", "test")}
    reached |= {load_cifar(*key, cache_dir=MIRROR).source for key in cifar_models()}
    reached |= {"cifar10h/cifar10h-counts.npy", "qa/gpt_preds.json", "qa/RandomForest_calibrator_predictions.json",
                "qa/RandomForest_calibrator_dev_set_predictions.json", "qa/codex_triviaqa_16shot.log"}
    assert reached == set(registry()["file"])
    assert "ChaosNLI" in read_text("chaosnli/README.txt", cache_dir=MIRROR)


def test_prediction_files_read_by_uid_give_the_rows_of_a_full_decode():
    """load_chaosnli_predictions decodes only ChaosNLI's rows (issue 31): on every registered prediction file, the
    uids in file order and the decoded rows equal those of decoding every line."""
    from calibnb.data import _loaders
    from calibnb.data._registry import fetch

    files = sorted(f for f in registry()["file"] if f.startswith("chaosnli/predictions/"))
    assert len(files) >= 10
    for name in files:
        path = fetch(name, cache_dir=MIRROR)
        full = _loaders._read_jsonl(path)
        wanted = {row["uid"] for row in full[::7]}
        fast = _loaders._read_jsonl_uids(path, wanted)
        assert [u for u, _ in fast] == [row["uid"] for row in full], name
        assert [r for _, r in fast if r is not None] == [row for row in full if row["uid"] in wanted], name


def test_reading_by_uid_decodes_whole_lines_where_the_uid_member_is_ambiguous(tmp_path):
    from calibnb.data import _loaders

    lines = ['{"index": 0, "uid": "a#1", "probs": [0.5, 0.5]}',
             '{"index": 1, "note": "a \\"uid\\": \\"z\\" in a string", "uid": "b\\"q"}',  # escaped quotes in a value
             '',
             '{"meta": {"uid": "inner"}, "uid": "c"}',  # two uid members: the whole line is decoded
             '{"uid" : "d", "index": 3}']
    path = tmp_path / "p.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = _loaders._read_jsonl_uids(path, {"a#1", 'b"q', "c"})
    assert [u for u, _ in got] == ["a#1", 'b"q', "c", "d"]
    assert [r["index"] if r and "index" in r else r for _, r in got] == [0, 1, {"meta": {"uid": "inner"}, "uid": "c"}, None]
    # a uid member that is not the row's (here: the key is "uid" in a nested object only) is caught, not trusted
    path.write_text('{"meta": {"uid": "a#1"}, "id": "x"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="line 1 of p.json: its uid member reads 'a#1'"):
        _loaders._read_jsonl_uids(path, {"a#1"})
