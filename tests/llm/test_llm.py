"""calibnb.llm: the readers of language-model answer logs, on hand-made fixtures (tests/llm/fixtures/).

Every expected value is computed here from the fixture's documented fields by
hand (the formulas written out), not by the reader.
"""

import json
import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import calibnb.llm as llm

DATA = Path(__file__).parent / "fixtures"
MC_FILE = DATA / "samples_trivia_mc_2026-11-25T10-00-00.000000.jsonl"
GEN_FILE = DATA / "samples_trivia_gen_2026-11-25T10-00-00.000000.jsonl"


def _one(df, item, source):
    row = df[(df.item_id == item) & (df.confidence_source == source)]
    assert len(row) == 1, (item, source)
    return row.iloc[0]


# ----------------------------------------------------------------------------- the tidy table


@pytest.mark.parametrize("path, fmt, options", [
    ("openai_chat.jsonl", "openai", {}),
    ("vllm_completions_n3.jsonl", "openai", {}),
    ("openai_p_true.jsonl", "openai", {"confidence_sources": "p-true"}),
    ("llamacpp_completion.jsonl", "openai", {}),
    ("openai_chat_verbalized.jsonl", "openai", {"confidence_sources": ["mean-token-logprob", "verbalized"]}),
    (MC_FILE.name, "lm-eval", {}),
    (GEN_FILE.name, "lm-eval", {}),
    ("helm_run", "helm", {}),
    ("inspect_trivia.json", "inspect", {"confidence_sources": ["mean-token-logprob", "verbalized"]}),
    ("inspect_trivia.eval", "inspect", {}),
    ("hle_judged.json", "verbalized", {}),
    ("verbalized_unit.csv", "verbalized", {}),
])
def test_every_reader_returns_the_documented_columns(path, fmt, options):
    df = llm.read_log(DATA / path, format=fmt, **options)
    assert tuple(df.columns) == llm.COLUMNS
    assert df["confidence"].between(0, 1).all() and df["confidence"].dtype == np.float64
    assert df["correct"].dtype == bool
    assert set(df["confidence_source"]) <= set(llm.CONFIDENCE_SOURCES)
    assert set(df["scored_answer"]) <= {"generated", "supplied"}
    assert set(df["scale"]) <= {"logprob", "0-1", "0-100"}
    assert (df["readout"].str.len() > 0).all() and (df["record"].str.len() > 0).all()
    # one confidence per item and source: the sources pair on the same items (as the audit needs)
    assert not df.duplicated(["item_id", "model", "task", "confidence_source"]).any()
    for conf, correct in llm.by_source(df).values():
        assert conf.shape == correct.shape == (df["item_id"].nunique(),)
    # 20 items per fixture (6 in the n = 3 sampling file)
    assert df["item_id"].nunique() == (6 if "vllm" in path else 20)
    # no machine path in the provenance columns
    assert not df["record"].str.contains(str(DATA)).any()


# ----------------------------------------------------------------------------- OpenAI-style


def test_openai_token_readouts_by_hand():
    df = llm.read_openai(DATA / "openai_chat.jsonl")
    # q05: "Ross Bagdasarian", token log-probabilities -0.16, -0.14, -0.01; gold "David Seville"
    lp = np.array([-0.16, -0.14, -0.01])
    assert_allclose(_one(df, "q05", "sequence-probability").confidence, math.exp(lp.sum()))
    assert_allclose(_one(df, "q05", "mean-token-logprob").confidence, math.exp(lp.mean()))
    assert_allclose(_one(df, "q05", "min-token").confidence, math.exp(-0.16))
    assert_allclose(_one(df, "q05", "first-token").confidence, math.exp(-0.16))
    assert not _one(df, "q05", "min-token").correct
    assert _one(df, "q05", "min-token").answer == "Ross Bagdasarian"
    # q11: "The Cuban Missile Crisis" matches "Cuban Missile Crisis" (articles dropped, as SQuAD's EM)
    assert _one(df, "q11", "first-token").correct
    assert_allclose(_one(df, "q11", "first-token").confidence, math.exp(-0.05))
    # ties: q07 and q08 answer "Vienna" with the same log-probability; one right, one wrong
    a, b = _one(df, "q07", "sequence-probability"), _one(df, "q08", "sequence-probability")
    assert a.confidence == b.confidence == pytest.approx(math.exp(-0.7)) and a.correct and not b.correct
    # the Batch API lines (every fourth) take their id from custom_id
    assert _one(df, "q04", "first-token").record.startswith("openai_chat.jsonl line 4")
    assert set(df["model"]) == {"gpt-4o-mini"} and set(df["scored_answer"]) == {"generated"}
    # correct by hand (q15 "Memphis, Tennessee" is not "Memphis"; q19 "Dry clean" is not "Dry clean only")
    expected = {"q01", "q02", "q04", "q06", "q07", "q09", "q11", "q12", "q13", "q16", "q17", "q20"}
    got = set(df[df.correct].item_id)
    assert got == expected


def test_openai_legacy_completions_and_sample_agreement():
    df = llm.read_openai(DATA / "vllm_completions_n3.jsonl")
    agree = df[df.confidence_source == "sample-agreement"].set_index("item_id")["confidence"]
    # items 1, 3, 5 (even index): three equal samples; the others: two of three
    assert_allclose(agree.to_numpy(), [1, 2 / 3, 1, 2 / 3, 1, 2 / 3])
    assert _one(df, "q02", "sequence-probability").confidence == pytest.approx(math.exp(-0.21))
    assert _one(df, "q01", "first-token").answer == "Paris"  # leading space of the legacy text stripped
    only = llm.read_openai(DATA / "vllm_completions_n3.jsonl", confidence_sources="min-token")
    assert set(only.confidence_source) == {"min-token"}


def test_llama_cpp_native_completions_equal_the_chat_log():
    native = llm.read_openai(DATA / "llamacpp_completion.jsonl")
    chat = llm.read_openai(DATA / "openai_chat.jsonl")
    cols = ["item_id", "answer", "confidence", "correct", "confidence_source"]
    pd.testing.assert_frame_equal(native[cols], chat[cols], check_exact=False, rtol=1e-12)
    assert set(native.model) == {"llama-3-8b-instruct.Q4_K_M.gguf"}
    assert native.readout.str.contains("completion_probabilities").all()


def test_llama_cpp_post_sampling_probabilities_are_named_in_the_readout():
    # regression: 'prob' (post_sampling_probs) and the older 'probs' are after the sampler chain, not the
    # model's probabilities; the readout said only "exp(sum of token logprobs)" for all three forms
    native = llm.read_openai(DATA / "llamacpp_completion.jsonl").set_index("item_id")
    lines = [json.loads(x) for x in (DATA / "llamacpp_completion.jsonl").read_text().splitlines()]
    for line in lines:
        entry = line["response"]["completion_probabilities"][0]
        readout = native.loc[[line["item_id"]], "readout"]
        assert readout.str.contains("post-sampling").all() == ("logprob" not in entry)


def test_llama_cpp_bad_probability(tmp_path):
    line = json.loads((DATA / "llamacpp_completion.jsonl").read_text().splitlines()[1])
    line["response"]["completion_probabilities"][0]["prob"] = 1.5
    (tmp_path / "l.jsonl").write_text(json.dumps(line))
    with pytest.raises(ValueError, match=r"line 1 \(item q02\): field 'completion_probabilities.0.prob' must be a "
                                         r"probability"):
        llm.read_openai(tmp_path / "l.jsonl")


def test_openai_stated_confidence_beside_the_token_readouts():
    df = llm.read_openai(DATA / "openai_chat_verbalized.jsonl",
                         confidence_sources=["sequence-probability", "min-token", "verbalized"])
    chat = llm.read_openai(DATA / "openai_chat.jsonl", confidence_sources=["sequence-probability", "min-token"])
    # the token read-outs use only the answer's tokens (before "\nConfidence: 90%"): the chat fixture's values
    for source in ("sequence-probability", "min-token"):
        a, b = df[df.confidence_source == source], chat[chat.confidence_source == source]
        assert_allclose(a.confidence, b.confidence, rtol=1e-12)
        assert a.answer.tolist() == b.answer.tolist() and a.correct.tolist() == b.correct.tolist()
        assert a.readout.str.contains("before the stated confidence").all()
    v = df[df.confidence_source == "verbalized"]
    stated = [95, 90, 60, 80, 70, 85, 50, 50, 40, 30, 99, 90, 90, 75, 65, 88, 72, 20, 55, 97]
    assert_allclose(v.confidence, np.array(stated) / 100) and set(v.scale) == {"0-100"}
    assert v.answer.iloc[4] == "Ross Bagdasarian"
    # without a statement in the text, asking for the verbalised confidence names the line
    with pytest.raises(ValueError, match=r"line 1 \(item q01\): field 'choices.0 text' states no confidence"):
        llm.read_openai(DATA / "openai_chat.jsonl", confidence_sources="verbalized")


def test_openai_gold_mapping_overrides_nothing_but_scores():
    gold = {f"q{i:02d}": "Paris" for i in range(1, 21)}
    df = llm.read_openai(DATA / "openai_chat.jsonl", gold=gold, confidence_sources="first-token")
    # lines that carry their own "gold" use it only when no mapping is given: the mapping wins here
    assert set(df[df.correct].item_id) == {"q01"}


def test_openai_p_true_by_hand():
    df = llm.read_openai(DATA / "openai_p_true.jsonl", confidence_sources="p-true")
    assert set(df.confidence_source) == {"p-true"} and set(df.scored_answer) == {"supplied"}
    # q04: P(" True") = 0.6, P(" False") = 0.2 -> 0.75; q09: 0.4 vs 0.4 -> 0.5 (a tie); the " Yes" mass is ignored
    assert _one(df, "q04", "p-true").confidence == pytest.approx(0.75)
    assert _one(df, "q09", "p-true").confidence == pytest.approx(0.5)
    assert _one(df, "q05", "p-true").answer == "Ross Bagdasarian" and not _one(df, "q05", "p-true").correct
    # correctness is that of the proposed answer, as in openai_chat.jsonl
    chat = llm.read_openai(DATA / "openai_chat.jsonl", confidence_sources="first-token")
    assert df.set_index("item_id").correct.equals(chat.set_index("item_id").correct)
    # "(A) True (B) False": other tokens; here none of them is present
    with pytest.raises(ValueError, match=r"line 1 \(item q01\): field 'top_logprobs' has none of the tokens"):
        llm.read_openai(DATA / "openai_p_true.jsonl", confidence_sources="p-true", p_true_tokens=(("a",), ("b",)))
    with pytest.raises(ValueError, match="'p-true' reads a log of P\\(true\\) queries"):
        llm.read_openai(DATA / "openai_p_true.jsonl", confidence_sources=["p-true", "first-token"])
    with pytest.raises(TypeError, match="p_true_tokens must be two"):
        llm.read_openai(DATA / "openai_p_true.jsonl", confidence_sources="p-true", p_true_tokens="true")
    with pytest.raises(ValueError, match=r"line 1 \(item q01\): field 'proposed_answer' is missing"):
        llm.read_openai(DATA / "openai_chat.jsonl", confidence_sources="p-true")


def test_openai_missing_logprobs_raise_or_drop():
    path = DATA / "openai_bad_missing_logprobs.jsonl"
    with pytest.raises(ValueError, match=r"line 2 \(item q02\): field 'choices.0.logprobs' is missing or empty"):
        llm.read_openai(path)
    with pytest.warns(UserWarning, match="dropped 1 record"):
        df = llm.read_openai(path, on_missing="drop")
    assert sorted(df.item_id.unique()) == ["q01", "q03"]
    assert len(df.attrs["dropped"]) == 1 and "q02" in df.attrs["dropped"][0]
    # sample agreement needs no log-probabilities but several choices
    with pytest.raises(ValueError, match="line 1 .*sample-agreement needs several"):
        llm.read_openai(path, confidence_sources="sample-agreement")


def test_openai_malformed_line_is_named():
    with pytest.raises(ValueError, match=r"openai_bad_malformed.jsonl line 3: not valid JSON"):
        llm.read_openai(DATA / "openai_bad_malformed.jsonl")


def test_openai_needs_gold_or_correct(tmp_path):
    line = json.loads((DATA / "openai_chat.jsonl").read_text().splitlines()[0])
    del line["gold"]
    (tmp_path / "x.jsonl").write_text(json.dumps(line))
    with pytest.raises(ValueError, match=r"x.jsonl line 1 \(item q01\): field 'gold' is missing"):
        llm.read_openai(tmp_path / "x.jsonl")
    line["correct"] = 0
    (tmp_path / "x.jsonl").write_text(json.dumps(line))
    assert not llm.read_openai(tmp_path / "x.jsonl").correct.any()
    line["response"]["choices"][0]["logprobs"]["content"][0]["logprob"] = 0.5
    (tmp_path / "x.jsonl").write_text(json.dumps(line))
    with pytest.raises(ValueError, match=r"content.0.logprob' is a log-probability and must be <= 0"):
        llm.read_openai(tmp_path / "x.jsonl")


# ----------------------------------------------------------------------------- lm-evaluation-harness


def _mc_rows():
    return [json.loads(line) for line in MC_FILE.read_text().splitlines()]


def test_lm_eval_acc_and_acc_norm_by_hand():
    df = llm.read_lm_eval(MC_FILE)
    assert set(df.task) == {"trivia_mc"} and set(df.scored_answer) == {"supplied"}
    for r in _mc_rows():
        ll = np.array([float(x[0]) for x in r["filtered_resps"]])
        choices = [r["arguments"][f"gen_args_{k}"]["arg_1"] for k in range(len(ll))]
        for readout, score in (("acc", ll), ("acc_norm", ll / np.array([len(c.strip()) for c in choices]))):
            p = np.exp(score) / np.exp(score).sum()
            pred = int(np.flatnonzero(score == score.max())[0])  # first of ties
            source = "mc-softmax-norm" if readout == "acc_norm" else "mc-softmax"
            row = _one(df, str(r["doc_id"]), source)
            assert row.confidence == pytest.approx(p[pred])
            assert row.correct == (pred == r["target"]) == bool(r[readout])
            assert row.answer == choices[pred].strip()
    # the ties by hand: doc 2 (-2, -2, -3, -3): 1 / (2 + 2/e), choice 0 taken, target 1
    row = _one(df, "2", "mc-softmax")
    assert row.confidence == pytest.approx(1 / (2 + 2 / math.e)) and not row.correct and row.answer == "red"
    # doc 17: four equal log-likelihoods -> 1/4
    row = _one(df, "17", "mc-softmax")
    assert row.confidence == pytest.approx(0.25) and not row.correct


def test_lm_eval_one_readout_and_logged_metric_mismatch(tmp_path):
    df = llm.read_lm_eval(MC_FILE, readouts="acc", model="pythia-70m", context="0-shot")
    assert len(df) == 20 and set(df.model) == {"pythia-70m"} and set(df.context) == {"0-shot"}
    rows = _mc_rows()
    rows[4]["acc"] = 1.0 - rows[4]["acc"]
    path = tmp_path / "samples_x_2026-01-01T00-00-00.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match=r"line 5 \(doc_id 4\): field 'acc' is 0.0, but the argmax"):
        llm.read_lm_eval(path)
    assert llm.read_lm_eval(path, readouts="acc_norm").task.iloc[0] == "x"


def test_lm_eval_acc_mutual_info_is_refused(tmp_path):
    # regression: with acc_mutual_info the harness logs 2n log-likelihoods (conditional and unconditional);
    # they were read as 2n choices and the softmax ran over all of them (a wrong confidence, acc still agreeing)
    doc = json.loads((DATA / "samples_trivia_mc_2026-11-25T10-00-00.000000.jsonl").read_text().splitlines()[0])
    n = len(doc["filtered_resps"])
    doc["arguments"].update({f"gen_args_{n + i}": {"arg_0": "", "arg_1": doc["arguments"][f"gen_args_{i}"]["arg_1"]}
                             for i in range(n)})
    doc["filtered_resps"] = doc["filtered_resps"] + [["-9.0", "False"]] * n
    doc["resps"] = [[r] for r in doc["filtered_resps"]]
    doc["metrics"] = ["acc", "acc_mutual_info"]
    doc["acc_mutual_info"] = 1.0
    doc.pop("acc_norm")
    path = tmp_path / "samples_mi_2026-11-25T10-00-00.000000.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    with pytest.raises(ValueError, match=r"line 1 \(doc_id 0\): field 'filtered_resps' holds the unconditional "
                                         r"log-likelihoods of acc_mutual_info"):
        llm.read_lm_eval(path)


def test_lm_eval_several_targets(tmp_path):
    rows = _mc_rows()[:3]
    rows[2]["target"] = [0, 1]  # doc 2: the tie picks choice 0, now a gold
    rows[2]["acc"] = 1.0
    rows[2]["acc_norm"] = 1.0
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    df = llm.read_lm_eval(path)
    assert df[df.item_id == "2"].correct.all()
    rows[2]["target"] = []
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match=r"line 3 \(doc_id 2\): field 'target' is an empty list"):
        llm.read_lm_eval(path)


def test_lm_eval_generated_answers_read_the_stated_confidence():
    df = llm.read_lm_eval(GEN_FILE)
    assert set(df.confidence_source) == {"verbalized"} and set(df.scale) == {"0-100"}
    stated = [95, 90, 60, 80, 70, 85, 50, 50, 40, 30, 99, 90, 90, 75, 65, 88, 72, 20, 55, 97]
    assert_allclose(df.confidence, np.array(stated) / 100)
    assert df.answer.iloc[0] == "Paris" and df.correct.sum() == 11


def test_lm_eval_malformed_and_bad_target(tmp_path):
    with pytest.raises(ValueError, match=r"line 2 \(doc_id 1\): field 'filtered_resps.1.0' must be a number"):
        llm.read_lm_eval(DATA / "samples_lm_eval_bad_2026-11-25T10-00-00.000000.jsonl")
    rows = _mc_rows()[:2]
    rows[1]["target"] = 7
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match=r"line 2 \(doc_id 1\): field 'target' is choice 7, but the document has 4"):
        llm.read_lm_eval(path)


# ----------------------------------------------------------------------------- HELM


HELM = [(0.95, 1), (0.9, 1), (0.9, 0), (0.85, 1), (0.8, 1), (0.8, 1), (0.75, 0), (0.7, 1), (0.65, 1), (0.6, 0),
        (0.6, 1), (0.55, 0), (0.5, 1), (0.45, 0), (0.4, 0), (0.4, 1), (0.35, 0), (0.3, 0), (0.25, 1), (0.2, 0)]


def test_helm_run_folder_by_hand():
    df = llm.read_helm(DATA / "helm_run")
    assert df.item_id.tolist() == [f"id{i}" for i in range(1, 21)]  # the perturbed copy of id5 is not read
    assert_allclose(df.confidence, [p for p, _ in HELM])
    assert df.correct.tolist() == [bool(c) for _, c in HELM]
    assert set(df.model) == {"openai/gpt-4o-mini"} and set(df.task) == {"mmlu"}
    assert set(df.confidence_source) == {"sequence-probability"}  # joint multiple choice: exp(logprob)
    assert "5 in-context examples" in df.context.iloc[0]
    assert df.answer.tolist()[:4] == ["A", "B", "C", "D"]  # from scenario_state.json
    same = llm.read_helm(DATA / "helm_run" / "per_instance_stats.json")
    pd.testing.assert_frame_equal(df, same)


def test_helm_fractional_exact_match_and_missing_spec(tmp_path):
    with pytest.raises(ValueError, match=r"entry 2 \(instance id3\): field 'stats\[name=exact_match\].mean' is 0.5"):
        llm.read_helm(DATA / "helm_run_bad")
    df = llm.read_helm(DATA / "helm_run_bad", fractional="floor")
    assert not df.correct.iloc[2] and set(df.confidence_source) == {"mc-softmax"}
    shutil.copy(DATA / "helm_run" / "per_instance_stats.json", tmp_path)
    with pytest.raises(ValueError, match="has no run_spec.json; pass method="):
        llm.read_helm(tmp_path)
    df = llm.read_helm(tmp_path, method="generation")
    assert df.answer.eq("").all() and set(df.confidence_source) == {"sequence-probability"}


# ----------------------------------------------------------------------------- Inspect AI


def test_inspect_json_and_eval_give_the_same_table():
    a = llm.read_inspect(DATA / "inspect_trivia.json")
    b = llm.read_inspect(DATA / "inspect_trivia.eval")
    cols = [c for c in llm.COLUMNS if c not in ("record", "readout")]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert set(a.task) == {"trivia_qa"} and set(a.model) == {"openai/gpt-4o-mini"}
    # sample 5: Ross Bagdasarian, scored I
    row = _one(a, "5", "sequence-probability")
    assert row.confidence == pytest.approx(math.exp(-0.31)) and not row.correct
    assert a.groupby("item_id").correct.first().sum() == 11


def test_inspect_token_readouts_leave_out_the_stated_confidence(tmp_path):
    # regression: with 'verbalized', read_inspect's token read-outs used every output token, the
    # "Confidence: 95%" statement's too (read_openai uses only the tokens before it)
    log = json.loads((DATA / "inspect_trivia.json").read_text())
    log["samples"] = log["samples"][:1]
    sample = log["samples"][0]
    tokens = [("ANSWER", -0.01), (":", -0.01), (" Paris", -0.2), ("\n", -0.05), ("Confidence", -0.01),
              (":", -0.01), (" ", -0.01), ("95", -2.0), ("%", -0.01)]
    sample["output"]["choices"][0]["message"]["content"] = "".join(t for t, _ in tokens)
    sample["output"]["choices"][0]["logprobs"]["content"] = [{"token": t, "logprob": lp, "top_logprobs": []}
                                                             for t, lp in tokens]
    (tmp_path / "log.json").write_text(json.dumps(log))
    df = llm.read_inspect(tmp_path / "log.json", confidence_sources=["sequence-probability", "min-token", "verbalized"])
    conf = dict(zip(df.confidence_source, df.confidence))
    assert_allclose([conf["sequence-probability"], conf["min-token"], conf["verbalized"]],
                    [np.exp(-0.22), np.exp(-0.2), 0.95], rtol=1e-12)
    assert df[df.confidence_source == "min-token"].readout.str.contains("before the stated confidence").all()


def test_inspect_verbalized_and_bad_score():
    df = llm.read_inspect(DATA / "inspect_trivia.json", confidence_sources="verbalized")
    assert set(df.scale) == {"0-100"} and df.confidence.iloc[0] == pytest.approx(0.95)
    with pytest.raises(ValueError, match=r"sample 1 \(id 2\): field 'scores.match.value' must be correct/incorrect"):
        llm.read_inspect(DATA / "inspect_bad_partial.json")
    with pytest.raises(ValueError, match=r"sample 0 \(id 1\): scores: field 'includes' is missing"):
        llm.read_inspect(DATA / "inspect_trivia.json", scorer="includes")


# ----------------------------------------------------------------------------- verbalised confidence


def test_verbalized_hle_percent_and_csv_fractions_agree():
    hle = llm.read_verbalized(DATA / "hle_judged.json")
    csv = llm.read_verbalized(DATA / "verbalized_unit.csv")
    assert set(hle.scale) == {"0-100"} and set(csv.scale) == {"0-1"}
    assert_allclose(hle.confidence, csv.confidence)
    assert hle.answer.tolist() == csv.answer.tolist()
    assert hle.answer.iloc[4] == "Ross Bagdasarian"
    # HLE's judge said "no" for q11 ("The Cuban Missile Crisis" vs "Cuban Missile Crisis"); EM says yes
    assert not hle.set_index("item_id").correct["q11"] and csv.set_index("item_id").correct["q11"]
    with pytest.raises(ValueError, match=r"question q01 \(item q01\): confidence 95% has a per-cent sign"):
        llm.read_verbalized(DATA / "hle_judged.json", scale="0-1")


def test_verbalized_missing_confidence_names_the_record():
    with pytest.raises(ValueError, match=r"line 2 \(item b\): field 'response' states no confidence"):
        llm.read_verbalized(DATA / "verbalized_bad_no_confidence.jsonl")


def _chat_line(tokens, item_id="a", gold="Paris"):
    text = "".join(t for t, _ in tokens)
    content = [{"token": t, "logprob": lp, "top_logprobs": []} for t, lp in tokens]
    return json.dumps({"item_id": item_id, "gold": gold, "response": {"model": "m", "choices": [
        {"message": {"content": text}, "logprobs": {"content": content}}]}}) + "\n"


def test_openai_stated_confidence_token_with_leading_space_is_not_the_answers(tmp_path):
    # regression: " Confidence" starts (with its space) before the statement's match; it was counted
    # as an answer token, so sequence-probability was exp(-3.3) and min-token exp(-3.0)
    tokens = [("Paris", -0.1), (".", -0.2), (" Confidence", -3.0), (":", -0.01), (" ", -0.01), ("90", -1.0),
              ("%", -0.01)]
    (tmp_path / "l.jsonl").write_text(_chat_line(tokens))
    df = llm.read_openai(tmp_path / "l.jsonl", confidence_sources=["sequence-probability", "min-token", "verbalized"])
    conf = dict(zip(df.confidence_source, df.confidence))
    assert_allclose([conf["sequence-probability"], conf["min-token"], conf["verbalized"]],
                    [np.exp(-0.3), np.exp(-0.2), 0.9], rtol=1e-12)
    # a token holding answer text and the statement cannot be split: an error naming line and token
    tokens = [("Paris", -0.1), (". Confidence", -3.0), (": 90%", -0.5)]
    (tmp_path / "s.jsonl").write_text(_chat_line(tokens))
    with pytest.raises(ValueError, match=r"line 1 \(item a\): field 'choices.0.logprobs' token 1 \('. Confidence'\) "
                                         r"spans the answer"):
        llm.read_openai(tmp_path / "s.jsonl", confidence_sources=["sequence-probability", "verbalized"])


@pytest.mark.parametrize("texts, scale, expected", [
    (["Confidence: 85%", "confidence = 0.3"], "auto", [0.85, 0.3]),
    (["Confidence: 85", "Confidence: 1"], "auto", [0.85, 0.01]),       # one bare value > 1: the file is 0-100
    (["Confidence: 1", "Confidence: 0.5"], "auto", [1.0, 0.5]),         # all <= 1: fractions
    (["Confidence: 1", "Confidence: 50"], "0-100", [0.01, 0.5]),
    (["I'd say confidence is 0.7. Later: Confidence: 0.9"], "0-1", [0.9]),  # the last statement counts
    (["Confidence level: 60 %"], "auto", [0.6]),
    (["**Confidence**: 85%", "**Confidence:** 40%", "My confidence is 70%"], "auto", [0.85, 0.4, 0.7]),
])
def test_parse_verbalized_confidence(texts, scale, expected):
    assert_allclose(llm.parse_verbalized_confidence(texts, scale=scale), expected)


def test_parse_verbalized_confidence_auto_refuses_a_fraction_among_percents():
    # regression: "0.9" beside "90" was read silently as 0.9% (0.009)
    with pytest.raises(ValueError, match=r"texts\[1\]: stated confidence 0.9 is a fraction, but other confidences "
                                         r"exceed 1 \(per cent\): the scale is ambiguous"):
        llm.parse_verbalized_confidence(["Confidence: 90", "Confidence: 0.9"])
    assert_allclose(llm.parse_verbalized_confidence(["Confidence: 90", "Confidence: 0.9"], scale="0-100"), [0.9, 0.009])
    assert_allclose(llm.parse_verbalized_confidence(["Confidence: 90", "Confidence: 0.9%"]), [0.9, 0.009])
    assert_allclose(llm.parse_verbalized_confidence(["Confidence: 90", "Confidence: 0"]), [0.9, 0.0])


@pytest.mark.parametrize("text", ["Confidence: 8/10", "Confidence: 85 / 100", "Confidence: 9 out of 10"])
def test_default_pattern_refuses_other_scales(text):
    # regression: the default pattern read "8/10" as 8 (then 8% beside per-cent numbers) and "9 out of 10" as 9
    with pytest.raises(ValueError, match=r"texts\[1\]: field 'text' states no confidence"):
        llm.parse_verbalized_confidence(["Confidence: 90%", text])
    assert_allclose(llm.parse_verbalized_confidence(["Confidence: 0.85.", "Confidence: 0.4"]), [0.85, 0.4])


def test_by_source_pairs_the_sources_item_by_item_after_sorting():
    # regression: by_source kept each source's rows in table order, so after sorting the table (by confidence,
    # say) the arrays of two sources no longer paired the same items, silently
    df = llm.read_openai(DATA / "openai_chat.jsonl")
    ref = llm.by_source(df)
    shuffled = df.sort_values("confidence").set_index(np.full(len(df), 7))  # a sorted table, duplicated index
    got = llm.by_source(shuffled)
    assert list(got) != [] and set(got) == set(ref)
    # every source's arrays follow one item order: the items' first appearance in the sorted table
    order = list(pd.unique(shuffled.item_id))
    for source, (conf, correct) in got.items():
        rows = df[df.confidence_source == source].set_index("item_id").loc[order]
        assert_allclose(conf, rows.confidence.to_numpy())
        assert (correct == rows.correct.to_numpy()).all()


def test_parse_verbalized_confidence_user_pattern_and_errors():
    out = llm.parse_verbalized_confidence(["(8/10)", "(3/10)"], pattern=r"\((?P<value>\d+)/10\)", scale="auto")
    assert_allclose(out, [0.08, 0.03])  # read on 0-100: a "/10" scale needs its own transform, stated here
    with pytest.raises(ValueError, match=r"texts\[0\]: stated confidence 150 is outside \[0, 100\]"):
        llm.parse_verbalized_confidence(["Confidence: 150"])
    with pytest.raises(ValueError, match="pattern must have a group named 'value'"):
        llm.parse_verbalized_confidence(["x"], pattern="no group")
    with pytest.raises(ValueError, match="scale must be one of"):
        llm.parse_verbalized_confidence(["Confidence: 1"], scale="percent")


# ----------------------------------------------------------------------------- read_log


def test_read_log_dispatch_and_errors():
    a = llm.read_log(DATA / "helm_run", format="helm")
    pd.testing.assert_frame_equal(a, llm.read_helm(DATA / "helm_run"))
    with pytest.raises(ValueError, match="format must be one of 'openai', 'lm-eval', 'helm', 'inspect', 'verbalized'; got 'csv'"):
        llm.read_log(DATA / "helm_run", format="csv")
    with pytest.raises(TypeError, match="gold"):
        llm.read_log(DATA / "helm_run", format="helm", gold={})
    with pytest.raises(ValueError, match="does not download"):
        llm.read_log("https://example.org/log.jsonl", format="openai")
    with pytest.raises(ValueError, match="no such file or folder: 'nope.jsonl'"):
        llm.read_log(DATA / "nope.jsonl", format="openai")
    with pytest.raises(TypeError, match="source must be a path"):
        llm.read_log(3, format="openai")


def test_by_source_splits_the_table_per_source():
    df = llm.read_log(DATA / "inspect_trivia.json", format="inspect",
                      confidence_sources=["sequence-probability", "verbalized"])
    parts = llm.by_source(df)
    assert list(parts) == ["sequence-probability", "verbalized"]
    for conf, correct in parts.values():
        assert conf.shape == correct.shape == (20,)
    with pytest.raises(ValueError, match="no column 'confidence_source'"):
        llm.by_source(df.drop(columns="confidence_source"))


def test_exact_match_normalisation():
    assert llm.normalize_answer("An  Apple, a day!") == "apple day"
    assert llm.exact_match("the Beatles", ["Beatles"]) and not llm.exact_match("Beatles", ["Rolling Stones"])
    with pytest.raises(TypeError, match="gold"):
        llm.exact_match("x", [])


def test_no_reader_touches_the_network(monkeypatch):
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a reader opened a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path, fmt in [("openai_chat.jsonl", "openai"), (MC_FILE.name, "lm-eval"), ("helm_run", "helm"),
                          ("inspect_trivia.eval", "inspect"), ("hle_judged.json", "verbalized")]:
            assert len(llm.read_log(DATA / path, format=fmt)) > 0
