"""Write the small hand-made log fixtures of tests/test_llm.py (run once; the outputs are committed).

Each fixture follows its format's documented schema; the values are chosen by
hand so that the tests can check every number by hand: 20 items per format,
tied confidences, a 0-100 scale, a record without log-probabilities and a
malformed record (in the ``*_bad*`` files).
"""

import json
import math
import zipfile
from pathlib import Path

HERE = Path(__file__).parent

# (item, answer tokens with log-probabilities, gold answer): 20 TriviaQA-style items.
QA = [
    ("q01", [("Paris", -0.05)], "Paris"),
    ("q02", [("Can", -0.2), ("berra", -0.01)], "Canberra"),
    ("q03", [("Syd", -0.9), ("ney", -0.02)], "Canberra"),
    ("q04", [("Photo", -0.3), ("grapher", -0.1)], "Photographer"),
    ("q05", [("Ross", -0.16), (" Bag", -0.14), ("dasarian", -0.01)], "David Seville"),
    ("q06", [("180", -0.4)], "180"),
    ("q07", [("Vienna", -0.7)], "Vienna"),
    ("q08", [("Vienna", -0.7)], "Geneva"),            # tie with q07, wrong
    ("q09", [("Oracle", -1.2)], "Oracle"),
    ("q10", [("Laurel", -1.6)], "Bay"),
    ("q11", [("The", -0.05), (" Cuban", -0.3), (" Missile", -0.02), (" Crisis", -0.01)], "Cuban Missile Crisis"),
    ("q12", [("Mexico", -0.1)], "Mexico"),
    ("q13", [("Ankara", -0.1)], "Ankara"),              # tie with q12
    ("q14", [("Istanbul", -0.25)], "Ankara"),
    ("q15", [("Memphis", -0.5), (",", -0.6), (" Tennessee", -0.3)], "Memphis"),
    ("q16", [("Check", -0.2), ("mate", -0.05)], "Checkmate"),
    ("q17", [("Vespasian", -0.35)], "Vespasian"),
    ("q18", [("Nero", -2.3)], "Vespasian"),
    ("q19", [("Dry", -0.8), (" clean", -0.1)], "Dry clean only"),
    ("q20", [("Pumpernickel", -0.02)], "Pumpernickel"),
]


def chat(item, tokens, i):
    content = [{"token": t, "logprob": lp, "bytes": list(t.encode()),
                "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}]} for t, lp in tokens]
    return {"id": f"chatcmpl-{item}", "object": "chat.completion", "created": 1767225600 + i, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(t for t, _ in tokens)},
                         "logprobs": {"content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": len(tokens), "total_tokens": 40 + len(tokens)}}


def write_jsonl(name, rows):
    (HERE / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def openai():
    rows = []
    for i, (item, tokens, gold) in enumerate(QA):
        body = chat(item, tokens, i)
        if i % 4 == 3:  # every fourth line as a Batch API output line
            rows.append({"id": f"batch_req_{item}", "custom_id": item,
                         "response": {"status_code": 200, "request_id": f"req_{item}", "body": body}, "error": None,
                         "gold": [gold]})
        else:
            rows.append({"item_id": item, "gold": gold, "response": body})
    write_jsonl("openai_chat.jsonl", rows)
    # legacy completions (vLLM /v1/completions) with n = 3 samples: sample agreement
    rows = []
    for i, (item, tokens, gold) in enumerate(QA[:6]):
        text = "".join(t for t, _ in tokens)
        others = [text, text] if i % 2 == 0 else [text, "Something else"]
        rows.append({"item_id": item, "gold": gold, "response": {
            "id": f"cmpl-{item}", "object": "text_completion", "model": "llama-3-8b", "choices": [
                {"index": 0, "text": " " + text, "logprobs": {"tokens": [t for t, _ in tokens],
                                                              "token_logprobs": [lp for _, lp in tokens],
                                                              "top_logprobs": None, "text_offset": []}},
                *[{"index": k + 1, "text": o, "logprobs": None} for k, o in enumerate(others)]]}})
    write_jsonl("vllm_completions_n3.jsonl", rows)
    # a response without log-probabilities (line 2) and a malformed line (line 3 of the other file)
    good = [{"item_id": it, "gold": g, "response": chat(it, tk, i)} for i, (it, tk, g) in enumerate(QA[:3])]
    missing = json.loads(json.dumps(good))
    missing[1]["response"]["choices"][0]["logprobs"] = None
    write_jsonl("openai_bad_missing_logprobs.jsonl", missing)
    lines = [json.dumps(good[0]), json.dumps(good[1]), '{"item_id": "q03", "response": {"choices": [}']
    # P(true) queries: "Proposed answer: <answer>. Is the proposed answer true?" with the first token's
    # top_logprobs; (P(" True"), P(" False")) by hand, the rest of the mass on " Yes"
    p_true = [(0.9, 0.05), (0.8, 0.1), (0.3, 0.6), (0.6, 0.2), (0.2, 0.7), (0.7, 0.2), (0.5, 0.4), (0.5, 0.4),
              (0.4, 0.4), (0.1, 0.8), (0.85, 0.1), (0.75, 0.2), (0.75, 0.2), (0.3, 0.5), (0.4, 0.5), (0.8, 0.15),
              (0.6, 0.3), (0.05, 0.9), (0.45, 0.45), (0.95, 0.02)]
    rows = []
    for i, ((item, tokens, gold), (pt, pf)) in enumerate(zip(QA, p_true)):
        first = " True" if pt >= pf else " False"
        top = [{"token": " True", "logprob": math.log(pt), "bytes": None},
               {"token": " False", "logprob": math.log(pf), "bytes": None},
               {"token": " Yes", "logprob": math.log(max(1e-6, 1 - pt - pf)), "bytes": None}]
        body = {"id": f"chatcmpl-pt-{item}", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{
            "index": 0, "message": {"role": "assistant", "content": first.strip()}, "finish_reason": "stop",
            "logprobs": {"content": [{"token": first, "logprob": math.log(max(pt, pf)), "bytes": None,
                                      "top_logprobs": top}]}}]}
        rows.append({"item_id": item, "proposed_answer": "".join(t for t, _ in tokens), "gold": gold,
                     "response": body})
    write_jsonl("openai_p_true.jsonl", rows)
    # llama.cpp's native /completion responses: per-token "logprob" (current), "prob" (post_sampling_probs)
    # and the older {"content", "probs"} form, one item each in turn
    rows = []
    for i, (item, tokens, gold) in enumerate(QA):
        if i % 3 == 0:
            probs = [{"id": 100 + j, "token": t, "bytes": list(t.encode()), "logprob": lp,
                      "top_logprobs": [{"id": 100 + j, "token": t, "logprob": lp}]} for j, (t, lp) in enumerate(tokens)]
        elif i % 3 == 1:
            probs = [{"id": 100 + j, "token": t, "prob": math.exp(lp),
                      "top_probs": [{"id": 100 + j, "token": t, "prob": math.exp(lp)}]} for j, (t, lp) in enumerate(tokens)]
        else:
            probs = [{"content": t, "probs": [{"tok_str": "?", "prob": 0.001}, {"tok_str": t, "prob": math.exp(lp)}]}
                     for t, lp in tokens]
        rows.append({"item_id": item, "gold": gold, "response": {
            "content": "".join(t for t, _ in tokens), "model": "llama-3-8b-instruct.Q4_K_M.gguf", "stop": True,
            "stop_type": "eos", "tokens_predicted": len(tokens), "completion_probabilities": probs}})
    write_jsonl("llamacpp_completion.jsonl", rows)
    # chat answers that also state a confidence: the answer's tokens are the chat fixture's, then the statement
    stated = [95, 90, 60, 80, 70, 85, 50, 50, 40, 30, 99, 90, 90, 75, 65, 88, 72, 20, 55, 97]
    rows = []
    for i, ((item, tokens, gold), c) in enumerate(zip(QA, stated)):
        statement = [("\n", -0.02), ("Confidence", -0.01), (":", -0.001), (" ", -0.001), (str(c), -1.3), ("%", -0.05)]
        body = chat(item, tokens + statement, i)
        rows.append({"item_id": item, "gold": gold, "response": body})
    write_jsonl("openai_chat_verbalized.jsonl", rows)
    (HERE / "openai_bad_malformed.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


# lm-eval multiple choice: (doc, choices, summed log-likelihoods, target index)
MC = [
    (0, [" Paris", " Lyon", " Nice", " Lille"], [-1.0, -3.0, -4.0, -5.0], 0),
    (1, [" 4", " 5", " 22", " 8"], [-0.5, -2.5, -2.5, -6.0], 0),
    (2, [" red", " blue", " green", " yellow"], [-2.0, -2.0, -3.0, -3.0], 1),   # tie: argmax picks 0, wrong
    (3, [" cat", " elephant", " dog", " bird"], [-3.0, -4.0, -1.5, -2.0], 2),
    (4, [" H2O", " CO2", " NaCl", " O2"], [-0.2, -4.0, -5.0, -3.0], 0),
    (5, [" Mars", " Venus", " Jupiter", " Saturn"], [-2.2, -1.9, -3.5, -4.0], 0),
    (6, [" 1914", " 1939", " 1918", " 1945"], [-1.2, -2.8, -1.0, -3.1], 0),
    (7, [" Au", " Ag", " Fe", " Pb"], [-0.9, -1.1, -3.0, -3.3], 0),
    (8, [" Nile", " Amazonas", " Yangtze", " Danube"], [-1.0, -1.4, -3.0, -2.6], 1),
    (9, [" Tokyo", " Kyoto", " Osaka", " Nagoya"], [-0.3, -2.9, -3.0, -4.1], 0),
    (10, [" Shakespeare", " Marlowe", " Jonson", " Kyd"], [-0.4, -2.0, -3.0, -3.5], 0),
    (11, [" 7", " 9", " 11", " 13"], [-2.0, -1.0, -2.0, -3.0], 1),
    (12, [" Einstein", " Bohr", " Newton", " Curie"], [-2.5, -2.6, -0.8, -3.0], 2),
    (13, [" oxygen", " nitrogen", " argon", " carbon dioxide"], [-1.5, -0.9, -3.2, -4.0], 1),
    (14, [" Euro", " Pound", " Franc", " Mark"], [-0.6, -1.8, -2.2, -2.9], 0),
    (15, [" Pacific", " Atlantic", " Indian", " Arctic"], [-0.7, -1.7, -2.7, -3.7], 0),
    (16, [" 100", " 90", " 180", " 360"], [-2.1, -2.1, -1.1, -3.1], 2),
    (17, [" Mozart", " Bach", " Haydn", " Handel"], [-1.3, -1.3, -1.3, -1.3], 3),  # four-way tie, wrong
    (18, [" Rome", " Milan", " Turin", " Naples"], [-0.5, -1.5, -2.5, -3.5], 0),
    (19, [" square", " circle", " triangle", " hexagon"], [-3.0, -1.2, -0.9, -2.0], 1),
]


def _acc_norm_pred(choices, ll):
    # the harness divides by len(choice), without the " " target delimiter of the logged continuation
    norm = [x / len(c.strip()) for c, x in zip(choices, ll)]
    return max(range(len(norm)), key=lambda i: (norm[i], -i))


def lm_eval():
    rows = []
    for doc_id, choices, ll, target in MC:
        pred = max(range(len(ll)), key=lambda i: (ll[i], -i))
        rows.append({
            "doc_id": doc_id, "doc": {"question": f"question {doc_id}", "choices": [c.strip() for c in choices]},
            "target": target,
            "arguments": {f"gen_args_{k}": {"arg_0": f"Question: question {doc_id}\nAnswer:", "arg_1": c}
                          for k, c in enumerate(choices)},
            "resps": [[[str(x), "False"]] for x in ll], "filtered_resps": [[str(x), "False"] for x in ll],
            "filter": "none", "metrics": ["acc", "acc_norm"],
            "doc_hash": f"d{doc_id}", "prompt_hash": f"p{doc_id}", "target_hash": f"t{doc_id}",
            "acc": float(pred == target), "acc_norm": float(_acc_norm_pred(choices, ll) == target)})
    write_jsonl("samples_trivia_mc_2026-11-25T10-00-00.000000.jsonl", rows)
    bad = rows[:3]
    bad = [dict(r) for r in bad]
    bad[1]["filtered_resps"] = [["-1.0", "False"], ["oops", "False"], ["-3.0", "False"], ["-2.0", "False"]]
    write_jsonl("samples_lm_eval_bad_2026-11-25T10-00-00.000000.jsonl", bad)
    # generated answers with a stated confidence on a 0-100 scale
    gen = []
    for i, (item, tokens, gold) in enumerate(QA):
        ans = "".join(t for t, _ in tokens)
        conf = [95, 90, 60, 80, 70, 85, 50, 50, 40, 30, 99, 90, 90, 75, 65, 88, 72, 20, 55, 97][i]
        text = f"{ans}\nConfidence: {conf}"
        gen.append({"doc_id": i, "doc": {"question": item}, "target": gold,
                    "arguments": {"gen_args_0": {"arg_0": f"Q: {item}\nA:", "arg_1": {"until": ["\n\n"]}}},
                    "resps": [[text]], "filtered_resps": [text], "filter": "none", "metrics": ["exact_match"],
                    "exact_match": float(ans.strip().lower() == gold.lower())})
    write_jsonl("samples_trivia_gen_2026-11-25T10-00-00.000000.jsonl", gen)


def stat(name, value):
    return {"name": {"name": name, "split": "test"}, "count": 1, "sum": value, "sum_squared": value * value,
            "min": value, "max": value, "mean": value, "variance": 0.0, "stddev": 0.0}


# HELM: (max_prob, exact_match) of 20 instances, hand-picked with ties
HELM = [(0.95, 1), (0.9, 1), (0.9, 0), (0.85, 1), (0.8, 1), (0.8, 1), (0.75, 0), (0.7, 1), (0.65, 1), (0.6, 0),
        (0.6, 1), (0.55, 0), (0.5, 1), (0.45, 0), (0.4, 0), (0.4, 1), (0.35, 0), (0.3, 0), (0.25, 1), (0.2, 0)]


def helm():
    run = HERE / "helm_run"  # a real run folder is named after the run, e.g. "mmlu:subject=anatomy,method=..."
    run.mkdir(exist_ok=True)
    entries = []
    for i, (p, em) in enumerate(HELM):
        entries.append({"instance_id": f"id{i + 1}", "train_trial_index": 0,
                        "stats": [stat("num_references", 4), stat("exact_match", float(em)), stat("max_prob", p),
                                  stat("predicted_index", 0)]})
        if i == 4:  # a perturbed copy: not read
            entries.append({"instance_id": f"id{i + 1}", "train_trial_index": 0,
                            "perturbation": {"name": "typos", "robustness": True, "fairness": False, "prob": 0.1},
                            "stats": [stat("exact_match", 0.0), stat("max_prob", 0.1)]})
    (run / "per_instance_stats.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")
    spec = {"name": "mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt-4o-mini",
            "scenario_spec": {"class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
                              "args": {"subject": "anatomy"}},
            "adapter_spec": {"method": "multiple_choice_joint", "model": "openai/gpt-4o-mini",
                             "model_deployment": "openai/gpt-4o-mini", "max_train_instances": 5,
                             "num_train_trials": 1, "temperature": 0.0},
            "metric_specs": [], "groups": ["mmlu"]}
    (run / "run_spec.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    state = {"adapter_spec": spec["adapter_spec"], "request_states": [
        {"instance": {"id": f"id{i + 1}", "split": "test", "references": []}, "train_trial_index": 0,
         "reference_index": None, "request": {"model": "openai/gpt-4o-mini", "prompt": "..."},
         "result": {"success": True, "completions": [{"text": " " + "ABCD"[i % 4], "logprob": -0.1, "tokens": []}]}}
        for i in range(len(HELM))]}
    (run / "scenario_state.json").write_text(json.dumps(state, indent=1), encoding="utf-8")
    bad = HERE / "helm_run_bad"
    bad.mkdir(exist_ok=True)
    b = [dict(e) for e in entries[:3]]
    b[2] = {"instance_id": "id3", "train_trial_index": 0, "stats": [stat("exact_match", 0.5), stat("max_prob", 0.4)]}
    (bad / "per_instance_stats.json").write_text(json.dumps(b, indent=1), encoding="utf-8")
    (bad / "run_spec.json").write_text(json.dumps(dict(spec, adapter_spec=dict(
        spec["adapter_spec"], method="multiple_choice_separate_original"))), encoding="utf-8")


def inspect_log():
    samples = []
    for i, (item, tokens, gold) in enumerate(QA):
        text = "".join(t for t, _ in tokens)
        correct = text.lower() == gold.lower()
        conf = [95, 90, 60, 80, 70, 85, 50, 50, 40, 30, 99, 90, 90, 75, 65, 88, 72, 20, 55, 97][i]
        content = f"ANSWER: {text}\nConfidence: {conf}%"
        samples.append({
            "id": i + 1, "epoch": 1, "input": f"Question {item}", "target": gold, "messages": [],
            "output": {"model": "openai/gpt-4o-mini", "choices": [{
                "message": {"role": "assistant", "content": content, "source": "generate"},
                "stop_reason": "stop",
                "logprobs": {"content": [{"token": t, "logprob": lp, "bytes": None, "top_logprobs": []}
                                         for t, lp in tokens]}}],
                "usage": {"input_tokens": 30, "output_tokens": len(tokens), "total_tokens": 30 + len(tokens)}},
            "scores": {"match": {"value": "C" if correct else "I", "answer": text, "explanation": content}},
            "metadata": {}})
    log = {"version": 2, "status": "success",
           "eval": {"run_id": "r1", "created": "2026-11-25T10:00:00+00:00", "task": "trivia_qa", "task_id": "t1",
                    "task_version": 0, "model": "openai/gpt-4o-mini", "dataset": {"name": "trivia", "samples": 20},
                    "config": {"epochs": 1}},
           "plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {"logprobs": True}},
           "results": {"total_samples": 20, "completed_samples": 20,
                       "scores": [{"name": "match", "scorer": "match", "metrics": {}}]},
           "stats": {"started_at": "", "completed_at": "", "model_usage": {}},
           "samples": samples}
    (HERE / "inspect_trivia.json").write_text(json.dumps(log, indent=1), encoding="utf-8")
    with zipfile.ZipFile(HERE / "inspect_trivia.eval", "w") as z:
        def put(name, obj):  # fixed timestamps: the archive's bytes do not change from run to run
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 11, 25, 10, 0, 0)), json.dumps(obj))

        put("header.json", {k: v for k, v in log.items() if k != "samples"})
        for s in samples:
            put(f"samples/{s['id']}_epoch_{s['epoch']}.json", s)
    bad = dict(log, samples=[json.loads(json.dumps(s)) for s in samples[:3]])
    bad["samples"][1]["scores"]["match"]["value"] = "P"
    (HERE / "inspect_bad_partial.json").write_text(json.dumps(bad, indent=1), encoding="utf-8")


def verbalized():
    stated = ["Confidence: 95%", "confidence: 90 %", "Confidence: 60%", "Confidence level: 80%", "Confidence = 70%",
              "Confidence: 85%", "Confidence: 50%", "Confidence: 50%", "Confidence: 40%", "Confidence: 30%",
              "Confidence: 99%", "Confidence: 90%", "Confidence: 90%", "Confidence: 75%", "Confidence: 65%",
              "Confidence: 88%", "Confidence: 72%", "Confidence: 20%", "Confidence: 55%", "Confidence: 97%"]
    hle = {}
    for i, ((item, tokens, gold), s) in enumerate(zip(QA, stated)):
        ans = "".join(t for t, _ in tokens)
        hle[item] = {"model": "gpt-4o-mini",
                     "response": f"Explanation: recalled from memory.\nExact Answer: {ans}\n{s}",
                     "judge_response": {"correct_answer": gold, "model_answer": ans,
                                        "reasoning": "compared", "correct": "yes" if ans.lower() == gold.lower()
                                        else "no", "confidence": int("".join(ch for ch in s if ch.isdigit()))}}
    (HERE / "hle_judged.json").write_text(json.dumps(hle, indent=1), encoding="utf-8")
    # the same answers with fractions in a CSV (0-1 scale)
    lines = ["item_id,model,response,gold"]
    for (item, tokens, gold), s in zip(QA, stated):
        ans = "".join(t for t, _ in tokens)
        value = int("".join(ch for ch in s if ch.isdigit())) / 100
        lines.append(f'{item},gpt-4o-mini,"Answer: {ans}\nConfidence: {value:g}",{gold}')
    (HERE / "verbalized_unit.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [{"item_id": "a", "response": "Answer: x\nConfidence: 80%", "correct": 1},
            {"item_id": "b", "response": "Answer: y\nI am fairly sure.", "correct": 0},
            {"item_id": "c", "response": "Answer: z\nConfidence: 30%", "correct": 1}]
    write_jsonl("verbalized_bad_no_confidence.jsonl", rows)


if __name__ == "__main__":
    openai()
    lm_eval()
    helm()
    inspect_log()
    verbalized()
