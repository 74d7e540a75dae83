"""calibnb.audit as a Python call and as a command on real scikit-learn models' outputs (issue 27, parts 2-6)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

import calibnb
from calibnb.apps import audit as audit_module

from audit_cli import NO_BOOTSTRAP, run_cli

ROOT = Path(__file__).resolve().parents[2]
FAST = dict(n_resamples=40, heavy_resamples=10, n_folds=3)
FAST_CLI = ["--n-resamples", "40", "--heavy-resamples", "10", "--n-folds", "3"]


@pytest.fixture(scope="module")
def gnb_digits():
    """GaussianNB on digits: overconfident (mean confidence near 0.99, accuracy near 0.8)."""
    X, y = load_digits(return_X_y=True)
    m = GaussianNB().fit(X[::2], y[::2])
    P = m.predict_proba(X[1::2])
    df = pd.DataFrame({f"p{j}": P[:, j] for j in range(10)})
    df["label"] = y[1::2]
    return df, float((P.argmax(1) == y[1::2]).mean())


@pytest.fixture(scope="module")
def binary_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    m = LogisticRegression(max_iter=5000).fit(X[::2], y[::2])
    p = m.predict_proba(X[1::2])[:, 1]
    return pd.DataFrame({"y_prob": p, "y_true": y[1::2]}), float(((p >= 0.5) == y[1::2]).mean())


# ------------------------------------------------------------------ the call and the module

@pytest.mark.xdist_group("audit_help")  # the --help run is shared with tests/apps/test_audit_options.py
def test_module_is_the_call_and_importing_it_keeps_the_call(audit_help):
    import importlib

    import calibnb.audit as mod

    assert mod is calibnb.audit and callable(calibnb.audit)
    from calibnb import audit as again

    assert again is mod and callable(again)
    assert isinstance(mod, types.ModuleType) and mod.audit.__module__ == "calibnb.apps.audit"
    assert importlib.reload(mod) is mod and callable(calibnb.audit)  # reloading keeps it callable
    assert calibnb.AuditResult is mod.AuditResult and "audit" in calibnb.__all__
    # python -m calibnb.audit is not disturbed (no runpy double-import warning) and still parses options
    proc = audit_help
    assert proc.returncode == 0 and "--binary-prob" in proc.stdout and "RuntimeWarning" not in proc.stderr


def test_overconfident_model_verdict_and_recommendation(gnb_digits):
    df, acc = gnb_digits
    r = calibnb.audit(df, **FAST)
    assert isinstance(r, calibnb.AuditResult)
    v = r.verdict
    assert v["label"] == "overconfident" and v["accuracy"] == pytest.approx(acc)
    assert v["gap"] > 0.1 and v["gap_low"] > 0 and v["spiegelhalter_p"] < 0.001 and v["ks_p"] < 0.05
    assert "**overconfident**" in v["text"] and "Spiegelhalter" in v["text"]
    rec = r.recommendation
    assert rec["method"] in set(r.comparison.method) - {"uncalibrated"} or rec["method"] is None
    if rec["method"] is not None:
        row = rec["methods"].set_index("method").loc[rec["method"]]
        assert row["high"] < 0  # a paired interval below 0: better than doing nothing, beyond noise
    assert isinstance(r.summary, pd.DataFrame) and "macro_ce" in set(r.summary.key)
    page = r._repr_html_()
    assert page.index("Verdict: overconfident") < page.index("Recommendation") < page.index("MacroCE")
    assert re.search(r"p &lt; 0\.001", page)


def test_well_calibrated_model_and_none_distinguishable():
    rng = np.random.default_rng(3)
    conf = rng.uniform(0.5, 1.0, 3000)
    df = pd.DataFrame({"conf": conf, "correct": (rng.uniform(size=3000) < conf).astype(int)})
    r = calibnb.audit(df, **FAST)
    assert r.verdict["label"] == "well calibrated"
    assert r.recommendation["method"] is None
    assert "none distinguishable" in r.recommendation["text"]


def test_a_method_that_makes_the_model_worse_says_so():
    rng = np.random.default_rng(4)
    conf = rng.uniform(0.5, 1.0, 600)
    df = pd.DataFrame({"conf": conf, "correct": (rng.uniform(size=600) < conf).astype(int)})
    r = calibnb.audit(df, **FAST)
    t = r.recommendation["methods"].set_index("method")
    worse = t.index[t.worse].tolist()
    assert worse, t  # histogram binning / isotonic give 0 or 1 to some wrong predictions: infinite NLL
    assert "Makes the model worse" in r.recommendation["text"]
    for m in worse:
        assert m in r.recommendation["text"]


def test_api_takes_dataframe_path_and_arrays_alike(tmp_path, binary_cancer):
    df, acc = binary_cancer
    path = tmp_path / "cancer.parquet"
    df.to_parquet(path)
    a = calibnb.audit(df, **FAST)
    b = calibnb.audit(path, **FAST)
    c = calibnb.audit({"probs": df.y_prob.to_numpy(), "labels": df.y_true.to_numpy()}, **FAST)
    for r in (a, b, c):
        assert r.verdict["accuracy"] == pytest.approx(acc)
    pd.testing.assert_frame_equal(a.summary, b.summary)
    pd.testing.assert_frame_equal(a.summary, c.summary)
    with pytest.raises(audit_module.AuditInputError, match="data must be a pandas DataFrame"):
        calibnb.audit(42)
    with pytest.raises(ValueError, match="--n-folds must be an integer >= 2"):
        calibnb.audit(df, n_folds=1)
    with pytest.raises(ValueError, match="--level"):
        calibnb.audit(df, level=float("nan"))


def test_api_in_a_kernel_shows_the_verdict(tmp_path):
    """`calibnb.audit(df)` as the last line of a notebook cell displays the verdict (in a real kernel)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import numpy as np, pandas as pd, calibnb\n"
        "rng = np.random.default_rng(0); conf = rng.uniform(0.9, 1, 400)\n"
        "df = pd.DataFrame({'conf': conf, 'correct': (rng.uniform(size=400) < 0.7).astype(int)})\n"
        "calibnb.audit(df, n_resamples=30, heavy_resamples=10, n_folds=3)")]
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    out = nb.cells[0].outputs
    html = [o["data"]["text/html"] for o in out if o.get("output_type") == "execute_result"]
    assert html and "Verdict: overconfident" in html[0] and "Spiegelhalter" in html[0]


def test_llm_table_with_two_sources_is_compared_pairwise():
    rng = np.random.default_rng(5)
    n = 400
    correct = (rng.uniform(size=n) < 0.7).astype(int)
    token = np.clip(0.7 + 0.1 * rng.normal(size=n) + 0.15 * (correct - 0.7), 0.01, 0.99)
    verbal = np.full(n, 0.9)
    frame = pd.DataFrame({
        "item_id": np.tile(np.arange(n), 2), "model": "m", "task": "qa", "answer": "a",
        "confidence": np.r_[token, verbal], "correct": np.r_[correct, correct],
        "confidence_source": np.repeat(["token_prob", "verbalized"], n)})
    r = calibnb.audit(frame, **FAST)
    assert r.sources["sources"] == ["token_prob", "verbalized"]
    d = r.sources["differences"].set_index("metric")
    assert {"MacroCE", "HMR"} <= set(d.index) and d.loc["MacroCE", "items"] == n
    assert d.loc["HMR", "low"] <= d.loc["HMR", "difference"] <= d.loc["HMR", "high"]
    assert "verbalized - token_prob" in r.sources_html()
    fig = r.plot_sources()
    assert len(fig.axes) == 2
    assert r.verdict["accuracy"] == pytest.approx(correct.mean())
    other = calibnb.audit(frame, source="verbalized", **FAST)
    assert other.verdict["mean_confidence"] == pytest.approx(0.9)


def test_format_option_dispatches_to_calibnb_llm(monkeypatch, tmp_path):
    """--format calls calibnb.llm.read_log(path, format=...) (faked here with a table built in the test)."""
    calls = []
    rng = np.random.default_rng(6)
    table = pd.DataFrame({"item_id": np.arange(200), "model": "m", "task": "t", "answer": "x",
                          "confidence": rng.uniform(0.2, 1, 200), "correct": rng.integers(0, 2, 200),
                          "confidence_source": "verbalized"})

    def read_log(path, *, format):
        calls.append((Path(path).name, format))
        return table

    monkeypatch.setitem(sys.modules, "calibnb.llm", types.SimpleNamespace(read_log=read_log))
    log = tmp_path / "run.jsonl"
    log.write_text("{}\n")
    r = calibnb.audit(log, log_format="openai", **FAST)
    assert calls == [("run.jsonl", "openai")] and r.predictions.n == 200
    args = audit_module._parser().parse_args([str(log), "--format", "lm-eval"])
    pred = audit_module._validate_input(audit_module.notebook_parameters(args))
    assert calls[-1] == ("run.jsonl", "lm-eval") and pred.n == 200
    with pytest.raises(SystemExit):
        audit_module._parser().parse_args([str(log), "--format", "nonsense"])


# ------------------------------------------------------------------ the command on real models' outputs

@pytest.fixture(scope="module")
def layouts(tmp_path_factory, gnb_digits, binary_cancer):
    d = tmp_path_factory.mktemp("layouts")
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])
    P = LogisticRegression(max_iter=5000).fit(X[::2], y[::2]).predict_proba(X[1::2])
    iris = pd.DataFrame({f"proba_{c}": P[:, j] for j, c in enumerate(names)})
    iris["target"] = names[y[1::2]]
    cancer, acc_b = binary_cancer
    text = pd.DataFrame({"proba": cancer.y_prob, "label": np.where(cancer.y_true == 1, "yes", "no")})
    files = {"binary": (cancer, acc_b), "multiclass": gnb_digits,
             "class-named": (iris, float((P.argmax(1) == y[1::2]).mean())), "string labels": (text, acc_b)}
    out = {}
    for key, (frame, acc) in files.items():
        path = d / f"{key.replace(' ', '_')}.csv"
        frame.to_csv(path, index=False)
        out[key] = (path, acc)
    return d, out


@pytest.fixture(scope="module")
def layout_runs(layouts):
    """``python -m calibnb.audit FILE --out out_FILE`` run once per layout (on first use), shared by the tests."""
    d, files = layouts
    runs = {}

    def run(layout):
        if layout not in runs:
            path, _ = files[layout]
            out = d / f"out_{path.stem}"
            runs[layout] = (run_cli(path, "--out", out, *FAST_CLI), out)
        return runs[layout]

    return run


# The command's runs are shared by the tests below: under --dist loadgroup one worker makes them, once.
@pytest.mark.xdist_group("audit_layouts")
@pytest.mark.parametrize("layout", ["binary", "multiclass", "class-named", "string labels"])
def test_command_on_real_models_gives_the_true_accuracy(layouts, layout_runs, layout):
    d, files = layouts
    _, acc = files[layout]
    proc, out = layout_runs(layout)
    assert proc.returncode == 0, proc.stderr
    res = json.loads((out / "audit.json").read_text())
    assert res["verdict"]["accuracy"] == pytest.approx(acc)
    assert res["recommendation"]["text"]
    page = (out / "audit.html").read_text()
    assert "Verdict:" in page and "Content-Security-Policy" in page
    assert "cn.audit(" not in page and "import calibnb" not in page  # no code cells
    assert str(d) not in page and "/tmp/" not in page and str(Path.home()) + "/" not in page  # no machine paths


@pytest.mark.xdist_group("audit_layouts")
def test_api_writes_the_same_html_and_json_as_the_command(layouts, layout_runs, tmp_path):
    d, files = layouts
    path, _ = files["multiclass"]
    proc, out = layout_runs("multiclass")
    assert proc.returncode == 0, proc.stderr
    r = calibnb.audit(path, **FAST)
    r.to_json(tmp_path / "api.json")
    assert json.loads((tmp_path / "api.json").read_text()) == json.loads((out / "audit.json").read_text())
    r.to_html(tmp_path / "api.html")
    assert (tmp_path / "api.html").read_text() == (out / "audit.html").read_text()


def test_hostile_column_names_are_escaped_and_the_page_has_no_script_links(tmp_path):
    rng = np.random.default_rng(7)
    conf = rng.uniform(0.5, 1, 200)
    evil = "[click](javascript:alert(1))<script>alert(2)</script>"
    df = pd.DataFrame({"conf": conf, "correct": (rng.uniform(size=200) < conf).astype(int), evil: 1.0})
    path = tmp_path / "evil.csv"
    df.to_csv(path, index=False)
    proc = run_cli(path, "--out", tmp_path / "out", *NO_BOOTSTRAP)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "out" / "audit.html").read_text()
    assert "columns ignored" in page
    assert "<script>alert(2)" not in page and not re.search(r'href=["\']\s*javascript:', page, re.I)
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page


# ------------------------------------------------------------------ --out: validated first, one run at a time

def test_out_that_is_a_file_fails_before_any_work(tmp_path, binary_cancer):
    df, _ = binary_cancer
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    (tmp_path / "taken").write_text("x")
    proc = run_cli(path, "--out", tmp_path / "taken", *FAST_CLI)
    assert proc.returncode == 2 and "is a file, not a folder" in proc.stderr
    assert "rows," not in proc.stderr  # stopped before reading the predictions
    proc = run_cli(path, "--out", tmp_path / "o", "--level", "nan")
    assert proc.returncode == 2 and "--level" in proc.stderr


def test_second_run_on_the_same_out_fails_clearly(tmp_path, binary_cancer):
    df, _ = binary_cancer
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    lock = tmp_path / ".out.calibnb-audit.lock"
    lock.write_text(str(os.getpid()))  # a live process holds it
    proc = run_cli(path, "--out", out, *FAST_CLI)
    assert proc.returncode == 2 and "another audit is writing to --out 'out'" in proc.stderr
    assert not out.exists()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock.write_text(dead.stdout.strip())  # a stale lock of a finished process is taken over
    proc = run_cli(path, "--out", out, *NO_BOOTSTRAP)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["audit.html", "audit.ipynb", "audit.json"]
    assert not lock.exists()


def test_clipped_estimates_and_intervals_that_exclude_their_estimate_are_flagged():
    from calibnb.apps.audit import _flags

    summary = pd.DataFrame({
        "key": ["debiased_ece", "ece_width", "accuracy"], "metric": ["debiased ECE", "ECE", "accuracy"],
        "estimate": [0.0, 0.010, 0.9], "low": [0.0, 0.012, 0.88], "high": [0.02, 0.03, 0.92]})
    flags = _flags(summary)
    assert len(flags) == 2
    assert flags[0].startswith("debiased ECE is clipped at 0")
    assert flags[1].startswith("ECE: the percentile interval [0.0120, 0.0300] excludes the estimate 0.0100")
    # and on a real run they reach the page
    rng = np.random.default_rng(9)
    conf = rng.uniform(0.5, 1, 3000)
    r = calibnb.audit(pd.DataFrame({"conf": conf, "correct": (rng.uniform(size=3000) < conf).astype(int)}), **FAST)
    assert r.result["flags"] == _flags(r.summary)
    for f in r.result["flags"]:
        assert f.split(":")[0].split(" is clipped")[0] in r.warnings_html()


def test_large_file_is_checked_chunk_by_chunk_and_bad_rows_still_exit_2(tmp_path):
    """A streamed file is read once (by the notebook): a bad value in a later chunk still exits 2, writes nothing."""
    rng = np.random.default_rng(10)
    conf = rng.uniform(0.5, 1, 3000)
    df = pd.DataFrame({"conf": conf, "correct": (rng.uniform(size=3000) < conf).astype(int)})
    df.loc[2500, "conf"] = np.nan
    path = tmp_path / "big.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out"
    proc = run_cli(path, "--out", out, *FAST_CLI, "--max-rows", "1000", "--chunk-rows", "500")
    assert proc.returncode == 2, proc.stderr
    assert "'conf'" in proc.stderr and "first offending row 2500" in proc.stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["big.csv"]


@pytest.mark.parametrize("where", ["under_a_file", "under_proc"])
def test_out_that_cannot_be_created_fails_fast_naming_out(tmp_path, binary_cancer, where):
    """We run as root, so chmod would not stop writing: --out below a regular file, or in /proc, cannot be made."""
    import time

    df, _ = binary_cancer
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    if where == "under_a_file":
        (tmp_path / "plain").write_text("x")
        out = tmp_path / "plain" / "sub"
        expected = "'plain' above it is a file"
    else:
        out = Path("/proc") / f"calibnb-audit-{os.getpid()}"
        expected = "cannot be written"
    before = sorted(p.name for p in tmp_path.iterdir())
    t0 = time.perf_counter()
    proc = run_cli(path, "--out", out, *FAST_CLI)
    took = time.perf_counter() - t0
    assert proc.returncode == 2, proc.stderr
    assert "--out" in proc.stderr and expected in proc.stderr, proc.stderr
    assert "rows," not in proc.stderr and "Traceback" not in proc.stderr  # stopped before reading the predictions
    assert took < 60  # no notebook ran (an audit takes minutes)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing half-written, no lock or probe left
