"""Tests of the report command (calibnb.report) on tiny throwaway notebooks."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from calibnb import report

pytestmark = pytest.mark.xdist_group("report")

PARAMS_CELL = (
    "seed: int = 0  # random seed\n"
    "results_path = None  # where to write the results JSON (None = nowhere)\n"
    "scale: float = 1.0  # a method setting\n"
)

PASSING = (
    "from calibnb import Reproduction\n"
    "rep = Reproduction('tiny', results_path=results_path)\n"
    "rep.claim('doubling', paper=2.0 * scale, ours=2 * scale, tol=0.0)\n"
    "rep.known_gap('lost table', paper=1.0, ours=None, reason='not in our copy')\n"
    "rep.add_result('seed', seed)\n"
    "rep.add_result('scale', scale)\n"
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\n"
    "ax.plot([0, 1], [0, scale])\n"
    "plt.show()\n"
    "rep.finish()\n"
)

FAILING_CLAIM = (
    "from calibnb import Reproduction\n"
    "rep = Reproduction('tiny', results_path=results_path)\n"
    "rep.claim('wrong', paper=1.0, ours=1.5, tol=0.1)\n"
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
    assert report.parse_cli_value("[1, 2]") == "[1, 2]"  # scalars only


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
    assert ok.claim_counts() == {"holds": 1, "fails": 0, "known_gaps": 1, "total": 1}
    bad = report.run_notebook(nb_dir / "b_raise.ipynb", tmp_path / "out_b.ipynb", parameters={"seed": 4},
                              results_path=tmp_path / "b.json")
    assert not bad.ok
    assert bad.error == "RuntimeError: boom 4"
    assert "RuntimeError" in bad.traceback and "\x1b[" not in bad.traceback
    assert bad.results is None and bad.claim_counts() is None
    assert (tmp_path / "out_b.ipynb").exists()  # papermill writes the failed notebook too


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
        "c_claim_fails.failed.html", "c_claim_fails.failed.ipynb", "c_claim_fails.failed.results.json",
        "index.html", "index.json", "mathjax",
    ]  # no temporary files or folders left behind (mathjax/: the offline copy the pages load)
    entries = {e["stem"]: e for e in json.loads((out / "index.json").read_text())}
    assert entries["a_pass"]["ok"] is True
    # -p beats the notebook's own file entry, which beats "all".
    assert entries["a_pass"]["parameters"] == {"scale": 2.0, "seed": 9}
    assert json.loads((out / "a_pass.results.json").read_text())["results"] == {"seed": 9, "scale": 2.0}
    assert entries["a_pass"]["claims"] == {"holds": 1, "fails": 0, "known_gaps": 1, "total": 1}
    assert entries["b_raise"]["ok"] is False and entries["b_raise"]["error"] == "RuntimeError: boom 9"
    assert entries["c_claim_fails"]["error"].startswith("ReproductionError: 1 of 1 claims of tiny do not hold")
    assert entries["c_claim_fails"]["claims"] == {"holds": 0, "fails": 1, "known_gaps": 0, "total": 1}

    index = (out / "index.html").read_text()
    assert "1 of 3 notebooks ran without error" in index
    assert "href='a_pass.html'" in index and "href='b_raise.failed.html'" in index
    assert "RuntimeError: boom 9" in index
    assert "1 / 1" in index and "0 / 1" in index
    assert "Tiny a_pass" in index and "not in our copy" in index
    page = (out / "a_pass.html").read_text()
    assert "data:image/png;base64" in page  # figure embedded: self-contained
    err = capsys.readouterr().err
    assert "FAILED b_raise: RuntimeError: boom 9" in err


def test_failed_rerun_and_broken_conversion_keep_good_report(nb_dir, tmp_path, monkeypatch):
    out = tmp_path / "reports"
    args = ["--notebooks", str(nb_dir / "a_pass.ipynb"), "--out", str(out), "--no-progress"]
    assert report.main(args) == 0
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


def test_cli_no_notebooks_writes_empty_index(tmp_path, capsys):
    out = tmp_path / "reports"
    assert report.main(["--notebooks", str(tmp_path / "none" / "*.ipynb"), "--out", str(out), "--no-progress"]) == 0
    assert "No notebooks matched" in (out / "index.html").read_text()
    assert json.loads((out / "index.json").read_text()) == []
    assert "no notebooks match" in capsys.readouterr().err


def test_cli_undeclared_stem_param_fails_that_notebook_only(nb_dir, tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("b_raise:\n  n_bins: 5\n")
    out = tmp_path / "reports"
    status = report.main(["--notebooks", str(nb_dir / "*.ipynb"), "--out", str(out), "--params", str(params),
                          "--no-progress", "--no-html"])
    assert status == 1
    entries = {e["stem"]: e for e in json.loads((out / "index.json").read_text())}
    assert entries["a_pass"]["ok"] is True and entries["a_pass"]["html"] is None
    assert "does not declare: n_bins" in entries["b_raise"]["error"]


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
