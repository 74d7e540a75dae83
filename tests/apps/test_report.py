"""Tests of the report command (calibnb.report) on tiny throwaway notebooks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from calibnb.apps import report

pytestmark = pytest.mark.xdist_group("report")

PARAMS_CELL = (
    "seed: int = 0  # random seed\n"
    "results_path = None  # where to write the results JSON (None: nowhere)\n"
    "scale: float = 1.0  # a method setting\n"
)

TINY_LEDGER = """paper: tiny
notebook: tiny
claims:
  - {id: doubling, quote: "2 x = 2", locator: "Eq. 1", kind: number, rule: value, paper: 2.0, tol: 0.0,
     tol_reason: exact, refuted_by: 3.0, sources: [a], expected: reproduces, reason: "arithmetic"}
  - {id: lost_table, quote: "Table 7", locator: "Table 7", kind: not-checkable, expected: not-checkable,
     reason: "not in our copy"}
"""

PASSING = (
    "from calibnb import Reproduction\n"
    "rep = Reproduction.from_ledger('claims/tiny.yaml', results_path=results_path)\n"
    "rep.check('doubling', ours=2 * scale / scale, source='a')\n"
    "rep.not_checkable('lost_table')\n"
    "rep.add_result('seed', seed)\n"
    "rep.add_result('scale', scale)\n"
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\n"
    "ax.plot([0, 1], [0, scale])\n"
    "plt.show()\n"
    "rep.finish()\n"
)

FAILING_CLAIM = (  # a real error of the record: a ledger claim not recorded (a failing claim is a finding)
    "from calibnb import Reproduction\n"
    "rep = Reproduction.from_ledger('claims/tiny.yaml', results_path=results_path)\n"
    "rep.check('doubling', ours=2.5, source='a')\n"
    "rep.finish()\n"
)

RAISING = "raise RuntimeError(f'boom {seed}')\n"


def make_notebook(folder: Path, stem: str, body: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell(f"# Tiny {stem}\nA throwaway notebook for the report tests."))
    params = nbformat.v4.new_code_cell(PARAMS_CELL)
    params.metadata["tags"] = ["parameters"]
    nb.cells.append(params)
    nb.cells.append(nbformat.v4.new_code_cell(body))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.ipynb"
    nbformat.write(nb, str(path))
    (folder / "claims").mkdir(exist_ok=True)
    if not (folder / "claims" / "tiny.yaml").exists():
        (folder / "claims" / "tiny.yaml").write_text(TINY_LEDGER, encoding="utf-8")
    return path


@pytest.fixture()
def nb_dir(tmp_path):
    folder = tmp_path / "nbs"
    make_notebook(folder, "a_pass", PASSING)
    make_notebook(folder, "b_raise", RAISING)
    return folder


# ---------------------------------------------------------------- parameters


def test_parse_cli_value():
    assert report.parse_cli_value("3") == 3
    assert report.parse_cli_value("0.5") == 0.5
    assert report.parse_cli_value("1e-3") == 0.001
    assert report.parse_cli_value("false") is False
    assert report.parse_cli_value("null") is None
    assert report.parse_cli_value("mass") == "mass"
    assert report.parse_cli_value("[1, 2]") == [1, 2]  # JSON for lists
    # YAML 1.2 core rules, not 1.1's: no octal, sexagesimal, yes/no or comments.
    assert report.parse_cli_value("012") == 12
    assert report.parse_cli_value("1:30") == "1:30"
    assert report.parse_cli_value("NO") == "NO"
    assert report.parse_cli_value("run #2") == "run #2"
    with pytest.raises(ValueError, match="not valid JSON"):
        report.parse_cli_value("[1, 2")


def test_params_file_uses_yaml_12_rules(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("all:\n  a: 012\n  b: 1:30\n  c: NO\n  d: run #2\n  e: '012'\n  f: 1e-3\n  g: [1, 2]\n")
    assert report.load_params_file(f) == {"all": {"a": 12, "b": "1:30", "c": "NO", "d": "run", "e": "012",
                                                  "f": 0.001, "g": [1, 2]}}


def test_load_params_file(tmp_path):
    good = tmp_path / "p.yaml"
    good.write_text("all:\n  seed: 1\nnb:\n  n_bins: 5\nempty:\n")
    assert report.load_params_file(good) == {"all": {"seed": 1}, "nb": {"n_bins": 5}, "empty": {}}
    (tmp_path / "blank.yaml").write_text("")
    assert report.load_params_file(tmp_path / "blank.yaml") == {}
    cases = {
        "list.yaml": ("- 1\n- 2\n", "must map notebook stems"),
        "nested.yaml": ("nb: 3\n", "entry 'nb' must map parameter names"),
        "results.yaml": ("all:\n  results_path: x.json\n", "sets results_path"),
        "broken.yaml": ("all: [\n", "not valid YAML"),
    }
    for name, (text, match) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ValueError, match=match):
            report.load_params_file(tmp_path / name)
    with pytest.raises(ValueError, match="cannot be read"):
        report.load_params_file(tmp_path / "missing.yaml")


def test_params_for_precedence_and_typos():
    file_params = {"all": {"seed": 1, "n_bins": 10, "other": 3}, "nb": {"n_bins": 5}}
    assert report.params_for("nb", ["seed", "n_bins"], file_params, {}) == {"seed": 1, "n_bins": 5}
    assert report.params_for("nb", ["seed", "n_bins"], file_params, {"n_bins": 7, "zzz": 1}) == {
        "seed": 1, "n_bins": 7}
    assert report.params_for("other_nb", ["seed"], file_params, {}) == {"seed": 1}
    with pytest.raises(ValueError, match="does not declare: n_bins"):
        report.params_for("nb", ["seed"], file_params, {})


# ----------------------------------------------------------------- run_notebook


def test_run_notebook_collects_results_and_errors(nb_dir, tmp_path):
    ok = report.run_notebook(nb_dir / "a_pass.ipynb", tmp_path / "out_a.ipynb", parameters={"scale": 3.0},
                             results_path=tmp_path / "a.json")
    assert ok.ok and ok.error is None
    assert ok.results["results"] == {"seed": 0, "scale": 3.0}
    assert ok.claim_counts() == {"reproduces": 1, "partly": 0, "does-not-reproduce": 0, "inconclusive": 0,
                                 "not-checkable": 1, "by-construction": 0, "checkable": 1}
    bad = report.run_notebook(nb_dir / "b_raise.ipynb", tmp_path / "out_b.ipynb", parameters={"seed": 4},
                              results_path=tmp_path / "b.json")
    assert not bad.ok
    assert bad.error == "RuntimeError: boom 4"
    assert "RuntimeError" in bad.traceback and "\x1b[" not in bad.traceback
    assert bad.results is None and bad.claim_counts() is None
    assert (tmp_path / "out_b.ipynb").exists()  # papermill writes the failed notebook too


def test_run_notebook_counts_the_kernels_cpu_time(tmp_path):
    """The kernel is a child process: a busy loop inside it shows up in ``cpu``, a sleep does not."""
    busy = ("import time\n"
            "t0 = time.process_time()\n"
            "while time.process_time() - t0 < 1.5:\n"
            "    pass\n")
    run = report.run_notebook(make_notebook(tmp_path / "nbs", "busy", busy), tmp_path / "busy.ipynb")
    assert run.ok and run.cpu is not None
    assert run.cpu >= 1.5  # the kernel's 1.5 s of CPU (not this process's: it only waited)
    sleepy = report.run_notebook(make_notebook(tmp_path / "nbs", "sleepy", "import time\ntime.sleep(1.5)\n"),
                                 tmp_path / "sleepy.ipynb")
    assert sleepy.ok and sleepy.cpu < run.cpu - 1.0  # a wait is wall time, not CPU
    entry = {"stem": "busy", "title": "t", "ok": True, "error": None, "elapsed": run.elapsed, "cpu": run.cpu,
             "parameters": {}, "claims": None, "results": None, "html": None}
    assert f"{run.cpu:.1f} s CPU" in report.render_index([entry], generated="now")


@pytest.mark.skipif(os.name != "posix", reason="Unix sockets are a POSIX transport; elsewhere the kernel uses TCP")
def test_run_notebook_kernel_listens_on_unix_sockets_in_a_folder_removed_after(tmp_path, monkeypatch):
    """No TCP ports, so no race with another process for a port picked free (issue 31's fresh-clone run saw
    "Address already in use" and a kernel that died before replying); with a temporary folder too long for a
    socket's path, TCP as before."""
    code = ("import json, ipykernel.connect as c\n"
            "info = json.load(open(c.get_connection_file()))\n"
            "print(info['transport'], info['ip'])\n")
    nb = make_notebook(tmp_path / "nbs", "ipc", code)

    def transport_and_ip():
        run = report.run_notebook(nb, tmp_path / "ipc.ipynb")
        assert run.ok, run.error
        return nbformat.read(tmp_path / "ipc.ipynb", as_version=4).cells[-1].outputs[0]["text"].split()

    transport, ip = transport_and_ip()
    assert transport == "ipc" and Path(ip).parent.name.startswith("calibnb-kernel-"), (transport, ip)
    assert not Path(ip).parent.exists()  # the sockets' folder went with the kernel
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(report.tempfile, "tempdir", str(deep))
    transport, ip = transport_and_ip()
    assert transport == "tcp" and ip == "127.0.0.1", (transport, ip)
    assert list(deep.iterdir()) == []


# ------------------------------------------------------------------------ CLI


def test_cli_runs_all_reports_failures_and_continues(nb_dir, tmp_path, capsys):
    make_notebook(nb_dir, "c_claim_fails", FAILING_CLAIM)
    params = tmp_path / "quick.yaml"
    params.write_text("all:\n  scale: 2.0\na_pass:\n  seed: 5\n")
    out = tmp_path / "reports"
    status = report.main(["--notebooks", str(nb_dir / "*.ipynb"), "--out", str(out), "--params", str(params),
                          "-p", "seed", "9", "--no-progress"])
    assert status == 1  # b_raise and c_claim_fails failed
    files = sorted(p.name for p in out.iterdir())
    assert files == [
        "a_pass.html", "a_pass.ipynb", "a_pass.results.json",
        "b_raise.failed.html", "b_raise.failed.ipynb",
        "c_claim_fails.failed.html", "c_claim_fails.failed.ipynb",
        "claims.json", "index.html", "index.json", "mathjax",
    ]  # no temporary files or folders left behind (mathjax/: the offline copy the pages load)
    entries = {e["stem"]: e for e in json.loads((out / "index.json").read_text())}
    assert entries["a_pass"]["ok"] is True
    # -p beats the notebook's own file entry, which beats "all".
    assert entries["a_pass"]["parameters"] == {"scale": 2.0, "seed": 9}
    assert json.loads((out / "a_pass.results.json").read_text())["results"] == {"seed": 9, "scale": 2.0}
    assert entries["a_pass"]["claims"]["reproduces"] == 1 and entries["a_pass"]["claims"]["not-checkable"] == 1
    assert entries["b_raise"]["ok"] is False and entries["b_raise"]["error"] == "RuntimeError: boom 9"
    assert entries["c_claim_fails"]["error"].startswith("ReproductionError: 1 claim(s) or source(s) of ledger")
    assert entries["c_claim_fails"]["claims"] is None

    index = (out / "index.html").read_text()
    assert "1 of 3 notebooks ran without error" in index
    assert "href='a_pass.html'" in index and "href='b_raise.failed.html'" in index
    assert "RuntimeError: boom 9" in index
    assert "Ran with parameter preset " in index and str(params) in index  # the preset is named
    assert "tiny: 1 of 1 seed-stable decided claims reproduce" in index
    assert "Tiny a_pass" in index and "not in our copy" in index
    page = (out / "a_pass.html").read_text()
    assert "data:image/png;base64" in page  # figure embedded: self-contained
    err = capsys.readouterr().err
    assert "FAILED b_raise: RuntimeError: boom 9" in err


def test_failed_rerun_and_broken_conversion_keep_good_report(nb_dir, tmp_path, monkeypatch):
    out = tmp_path / "reports"
    args = ["--notebooks", str(nb_dir / "a_pass.ipynb"), "--out", str(out), "--no-progress"]
    monkeypatch.setenv("MPLBACKEND", "Agg")
    assert report.main(args) == 0
    assert os.environ["MPLBACKEND"] == "Agg"  # the kernels had the inline backend; this process keeps its own
    good_html = (out / "a_pass.html").read_bytes()
    good_json = (out / "a_pass.results.json").read_bytes()

    # 1. The notebook now fails: the good report stays, the failure goes beside it.
    make_notebook(nb_dir, "a_pass", RAISING)
    assert report.main(args) == 1
    assert (out / "a_pass.html").read_bytes() == good_html
    assert (out / "a_pass.results.json").read_bytes() == good_json
    assert (out / "a_pass.failed.html").exists()

    # 2. The notebook runs but the HTML conversion breaks half-way: nothing replaced.
    make_notebook(nb_dir, "a_pass", PASSING)

    def broken(path, **kwargs):
        raise OSError("disk full while converting")

    monkeypatch.setattr(report, "notebook_to_html", broken)
    assert report.main(args) == 1
    assert (out / "a_pass.html").read_bytes() == good_html
    entry = json.loads((out / "index.json").read_text())[0]
    assert entry["ok"] is False and "disk full while converting" in entry["error"]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp leftovers


def test_cli_no_notebooks_exits_2_and_leaves_reports(tmp_path, capsys):
    out = tmp_path / "reports"
    out.mkdir()
    (out / "index.html").write_text("old index")
    with pytest.raises(SystemExit) as info:
        report.main(["--notebooks", str(tmp_path / "none" / "*.ipynb"), "--out", str(out), "--no-progress"])
    assert info.value.code == 2
    assert (out / "index.html").read_text() == "old index"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]
    assert "no notebooks match" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "params_text", "match"),
    [
        (["-p", "sed", "1"], None, "-p names 'sed', which no selected notebook declares (did you mean 'seed'?)"),
        (["-p", "seed", "abc"], None, "parameter seed must be an int; got 'abc' (str)"),
        (["-p", "seed", "1.5"], None, "parameter seed must be an int; got 1.5 (float)"),
        (["-p", "scale", "true"], None, "parameter scale must be a float; got True (bool)"),
        ([], "b_rase:\n  seed: 1\n", "params file entry 'b_rase' names no notebook (did you mean 'b_raise'?)"),
        ([], "b_raise:\n  n_bins: 5\n", "does not declare: n_bins"),
        ([], "all:\n  sede: 5\n", "params file entry 'all' names 'sede'"),
    ],
)
def test_cli_parameter_mistakes_exit_2_before_running(nb_dir, tmp_path, capsys, extra, params_text, match):
    out = tmp_path / "reports"
    out.mkdir()
    (out / "a_pass.html").write_text("old report")
    argv = ["--notebooks", str(nb_dir / "*.ipynb"), "--out", str(out), "--no-progress", *extra]
    if params_text is not None:
        (tmp_path / "p.yaml").write_text(params_text)
        argv += ["--params", str(tmp_path / "p.yaml")]
    with pytest.raises(SystemExit) as info:
        report.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert match in err and "Nothing was run" in err
    assert sorted(p.name for p in out.iterdir()) == ["a_pass.html"]  # untouched: nothing ran
    assert (out / "a_pass.html").read_text() == "old report"


def test_params_entry_for_unselected_existing_notebook_is_fine(nb_dir, tmp_path):
    (tmp_path / "p.yaml").write_text("b_raise:\n  seed: 2\n")
    out = tmp_path / "reports"
    assert report.main(["--notebooks", str(nb_dir / "a_pass.ipynb"), "--out", str(out), "--no-progress",
                        "--no-html", "--params", str(tmp_path / "p.yaml")]) == 0


def test_success_removes_stale_failed_files(nb_dir, tmp_path):
    out = tmp_path / "reports"
    args = ["--notebooks", str(nb_dir / "a_pass.ipynb"), "--out", str(out), "--no-progress", "--no-html"]
    make_notebook(nb_dir, "a_pass", RAISING)
    assert report.main(args) == 1
    assert (out / "a_pass.failed.ipynb").exists()
    make_notebook(nb_dir, "a_pass", PASSING)
    assert report.main(args) == 0
    assert not list(out.glob("a_pass.failed.*"))
    assert (out / "a_pass.ipynb").exists()


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["-p", "results_path", "x"], "set by the report itself"),
        (["-p", "not-a-name", "1"], "must be a Python identifier"),
        (["--params", "/nonexistent/p.yaml"], "cannot be read"),
    ],
)
def test_cli_usage_errors(argv, match, capsys):
    with pytest.raises(SystemExit) as info:
        report.main(argv)
    assert info.value.code == 2
    assert match in capsys.readouterr().err


def test_render_index_escapes_html():
    entries = [{"stem": "x<y", "title": "<b>t</b>", "ok": False, "error": "ValueError: a < b", "elapsed": 1.0,
                "parameters": {"s": "<i>"}, "claims": None, "results": None, "html": None}]
    page = report.render_index(entries, generated="now")
    assert "x&lt;y" in page and "a &lt; b" in page and "<b>t</b>" not in page and "<i>" not in page


# ------------------------------------------------------------ ledgers in the index

def ledger_yaml(stem: str, paper: str) -> str:
    return f"""paper: "{paper}"
notebook: {stem}
claims:
  - {{id: value, quote: "x = 0.5", locator: "Table 1", kind: number, rule: value, paper: 0.5, tol: 0.005,
     tol_reason: "2 decimals", refuted_by: 0.6, sources: [a, b], expected: partly, reason: "fails on b",
     table: "Table 1"}}
  - {{id: value2, quote: "y = 0.7", locator: "Table 1", kind: number, rule: value, paper: 0.7, tol: 0.005,
     tol_reason: "2 decimals", refuted_by: 0.8, sources: [a], expected: reproduces, reason: "as printed",
     table: "Table 1"}}
  - {{id: better, quote: "A beats B", locator: "§3", kind: verdict, rule: value, paper: true, refuted_by: false,
     sources: [a], expected: does-not-reproduce, reason: "B wins at scale 1"}}
  - {{id: half, quote: "MacroCE = 50.00", locator: "Table 2", kind: identity, expected: by-construction,
     reason: "(1 - a + a)/2"}}
  - {{id: study, quote: "users trust it", locator: "§5", kind: not-checkable, expected: not-checkable,
     reason: "the user study's answers are not public"}}
"""


LEDGER_NB = (
    "from calibnb import Reproduction\n"
    "rep = Reproduction.from_ledger('claims/{stem}.yaml', results_path=results_path)\n"
    "rep.check('value', ours=0.5 * scale, source='a')\n"
    "rep.check('value', ours=0.7, source='b')\n"
    "rep.check('value2', ours=0.7, source='a')\n"
    "rep.check('better', ours=scale > 1, source='a')\n"
    "rep.identity('half', ours=0.5, expected=0.5)\n"
    "rep.not_checkable('study')\n"
    "rep.finish()\n"
    "rep.did_not_reproduce()\n"
)


def make_ledger_notebook(folder: Path, stem: str, paper: str, body: str = LEDGER_NB) -> Path:
    (folder / "claims").mkdir(parents=True, exist_ok=True)
    (folder / "claims" / f"{stem}.yaml").write_text(ledger_yaml(stem, paper), encoding="utf-8")
    return make_notebook(folder, stem, body.format(stem=stem))


def _seed_table(path: Path, splits: dict) -> Path:
    path.write_text(json.dumps({"preset": "params/quick.yaml", "seeds": [0, 1, 2, 3, 4], "notebooks": {
        stem: {"claims": {cid: {"split": sp} for cid, sp in claims.items()}} for stem, claims in splits.items()}}))
    return path


def test_index_leads_with_one_line_per_paper_and_writes_claims_json(tmp_path):
    folder = tmp_path / "nbs"
    make_ledger_notebook(folder, "l1_first", "First 2021")
    make_ledger_notebook(folder, "l2_second", "Second 2022")
    make_ledger_notebook(folder, "l3_broken", "Broken 2023", "raise RuntimeError('before any record')\n")
    (tmp_path / "data").mkdir()
    # the committed five-seed table: 'better' flips in l2_second, is stable in l1_first
    _seed_table(tmp_path / "data" / "seed_stability.json", {
        "l1_first": {"better": {"does-not-reproduce": 5}, "value": {"partly": 5}},
        "l2_second": {"better": {"does-not-reproduce": 3, "reproduces": 2}}})
    out = tmp_path / "reports"
    status = report.main(["--notebooks", str(folder / "*.ipynb"), "--out", str(out), "--no-progress", "--no-html"])
    assert status == 1  # l3_broken failed
    index = (out / "index.html").read_text()
    # one line per paper, never a cross-paper sum; the table of two cells is one claim
    first = ("First 2021: 0 of 2 seed-stable decided claims reproduce, 1 partly, 1 do not, 0 could not be decided; "
             "0 seed-sensitive; 1 not checkable; 1 by construction (not counted); tables counted once: Table 1 "
             "(1 of 2 cells reproduce).")
    second = ("Second 2022: 0 of 1 seed-stable decided claims reproduce, 1 partly, 0 do not, 0 could not be decided; "
              "1 seed-sensitive (better flips: does-not-reproduce 3/5, reproduces 2/5)")
    assert first in index and second in index
    assert index.index(first) < index.index("<table class='index'>")
    assert "checkable claims of two papers" not in index
    assert "Ran with the notebooks' default parameters." in index  # literal template text: no entity needed
    assert "Seed stability from the committed table of 5 seeds (0, 1, 2, 3, 4) run with preset params/quick.yaml" \
        in index
    assert "class='bar'" in index and "seg seed-sensitive" in index
    # each claim of the per-notebook table shows its seed stability under its status
    assert "does-not-reproduce<br><small>stable 5/5</small>" in index
    assert "does-not-reproduce<br><small>flips: does-not-reproduce 3/5, reproduces 2/5</small>" in index
    assert "No results from: l3_broken." in index
    for head in ("reproduces", "partly", "does not reproduce", "inconclusive", "not checkable", "by construction"):
        assert f"<th>{head}</th>" in index
    # per notebook: one cell per status (claims as recorded), in the order of the header
    row = index[index.index("l1_first</a>") if "l1_first</a>" in index else index.index("<td>l1_first"):]
    row = row[:row.index("</tr>")]
    cells = [c.split("</td>")[0].split(">")[-1] for c in row.split("<td class='count")[1:]]
    assert cells == ["1", "1", "1", "0", "1", "1"]
    # the claims table of each ledger notebook, non-reproducing first
    assert "table-layout: fixed" in index and "the user study&#x27;s answers are not public" in index

    claims = json.loads((out / "claims.json").read_text())
    assert claims["preset"] is None and claims["seeds"] == [0, 1, 2, 3, 4]
    assert claims["summary"]["lines"][0] == first and claims["summary"]["papers"] == 2
    nbs = {n["stem"]: n for n in claims["notebooks"]}
    assert set(nbs) == {"l1_first", "l2_second", "l3_broken"}
    one = nbs["l1_first"]
    assert one["paper"] == "First 2021" and one["ran"] is True and one["ledger"] == "claims/l1_first.yaml"
    assert {c["id"]: c["status"] for c in one["claims"]} == {
        "value": "partly", "value2": "reproduces", "better": "does-not-reproduce", "half": "by-construction",
        "study": "not-checkable"}
    better = {c["id"]: c for c in nbs["l2_second"]["claims"]}["better"]
    assert better["seed_stability"] == {"split": {"does-not-reproduce": 3, "reproduces": 2},
                                        "text": "flips: does-not-reproduce 3/5, reproduces 2/5"}
    assert {c["id"]: c for c in one["claims"]}["better"]["seed_stability"]["text"] == "stable 5/5"
    broken = nbs["l3_broken"]
    assert broken["ran"] is False and "before any record" in broken["error"]
    assert broken["paper"] == "Broken 2023" and [c["status"] for c in broken["claims"]] == [None] * 5
    # what the notebook shows: the claims table (finish) and the generated section (did_not_reproduce)
    executed = nbformat.read(str(out / "l1_first.ipynb"), as_version=4)
    outputs = [o for cell in executed.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    shown_html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    shown_md = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    assert any("calibnb-claims" in h and "1 of 3 decided claims reproduce" in h for h in shown_html)
    assert any(m.startswith("## What did not reproduce") and "**better**" in m for m in shown_md)


def test_index_flags_a_status_that_differs_from_the_ledger(tmp_path):
    """Another parameter value changes statuses; the paper's line follows and flags them."""
    folder = tmp_path / "nbs"
    make_ledger_notebook(folder, "l1_first", "First 2021")
    out = tmp_path / "reports"
    assert report.main(["--notebooks", str(folder / "*.ipynb"), "--out", str(out), "--no-progress", "--no-html",
                        "-p", "scale", "2.0"]) == 0
    claims = json.loads((out / "claims.json").read_text())
    statuses = {c["id"]: c["status"] for c in claims["notebooks"][0]["claims"]}
    # scale 2: value is 1.0 on source a (fails there too), better holds
    assert statuses["value"] == "does-not-reproduce" and statuses["better"] == "reproduces"
    line = claims["summary"]["lines"][0]
    assert line.startswith("First 2021: 1 of 2 seed-stable decided claims reproduce, 1 partly")
    assert line.endswith("differs from the ledger's expectation: value, better.")
    index = (out / "index.html").read_text()
    assert "class='flag'>status differs from the ledger's expectation: value, better" in index
    assert "Seed stability: not measured" in index


def test_summary_sentence_and_render_without_ledgers():
    page = report.render_index([], generated="now")
    assert "No paper notebook wrote a claims record." in page
    assert report.claims_summary([])["counts"]["checkable"] == 0
    assert report.collect_claims([], generated="now") == {
        "generated": "now", "preset": None, "seeds": None, "summary": {"lines": [], "papers": 0}, "notebooks": []}
    assert report.load_seed_stability(None) == {}


def _chromium():
    import shutil

    pytest.importorskip("playwright.sync_api")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("no chromium on this machine")
    return path


def test_claims_table_fits_1280_px_in_a_browser(tmp_path):
    """The claims table, in the index and in the notebook's page, wraps within a 1280 px window."""
    from playwright.sync_api import sync_playwright

    chromium = _chromium()
    folder = tmp_path / "nbs"
    make_ledger_notebook(folder, "l1_first", "First 2021")
    ledger = folder / "claims" / "l1_first.yaml"
    long_word = "x" * 300  # an unbreakable run of characters must wrap too
    ledger.write_text(ledger.read_text().replace('"A beats B"', f'"A beats B {long_word} ' + "and so on " * 40 + '"'))
    out = tmp_path / "reports"
    assert report.main(["--notebooks", str(folder / "*.ipynb"), "--out", str(out), "--no-progress"]) == 0
    measure = """() => Array.from(document.querySelectorAll('table.calibnb-claims')).map(t => ({
        right: t.getBoundingClientRect().right,
        overflowing: Array.from(t.querySelectorAll('td, th')).filter(c => c.scrollWidth > c.clientWidth + 1).length,
        rows: t.querySelectorAll('tr').length}))"""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            for name in ("index.html", "l1_first.html"):
                page.goto((out / name).as_uri())
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
                tables = page.evaluate(measure)
                assert tables, name
                for t in tables:
                    assert t["rows"] == 6, (name, t)  # header + 5 claims
                    assert t["right"] <= 1280 and t["overflowing"] == 0, (name, t)
                assert page.evaluate("document.documentElement.scrollWidth") <= 1280, name
        finally:
            browser.close()


@pytest.mark.parametrize("argv", [["-p", "sed", "1"], ["-p", "seed", "abc"], ["--notebooks", "nothing*"]])
def test_cli_subprocess_mistakes_exit_2_before_any_kernel(tmp_path, argv):
    """The real command on the real notebooks: a mistake exits 2 in seconds, writing nothing."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "reports"
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "calibnb.report", "--out", str(out), "--no-progress", *argv],
                          cwd=root, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "Nothing was run" in proc.stderr or "nothing was run" in proc.stderr
    assert not out.exists()


def test_cli_subprocess_success_prints_no_kernel_noise(nb_dir, tmp_path):
    """A successful run says what ran, and nothing of the kernel's internal log lines."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "reports"
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "calibnb.report", "--notebooks", str(nb_dir / "a_pass.ipynb"),
                           "--out", str(out), "--no-progress", "--no-html"],
                          cwd=root, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "1 of 1 notebooks ran" in proc.stdout
    for noise in ("without encryption", "KeyboardInterrupt", "Unable to parse", "unknown parameter"):
        assert noise not in proc.stderr, proc.stderr
