"""calibnb.teaching: the setup check of a class, and the git filter that keeps Run All out of git."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from calibnb.teaching import setup_check, strip_outputs

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("**/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_committed_notebook_comes_back_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    assert strip_outputs(text) == text


def _run_all(text: str) -> str:
    """``text`` as JupyterLab saves it after Run All: outputs, counts, timings, widget state."""
    nb = nbformat.reads(text, as_version=4)
    for k, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        cell.execution_count = k + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"ran {k}\n"),
                        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})]
        cell.metadata["execution"] = {"iopub.status.busy": "2026-11-25T10:00:00Z"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return nbformat.writes(nb)


def test_run_all_outputs_are_stripped_back_to_the_committed_text():
    text = (ROOT / "notebooks" / "04_sakai2024_hmr.ipynb").read_text(encoding="utf-8")
    ran = _run_all(text)
    assert ran != text and strip_outputs(ran) == text


def test_strip_outputs_rejects_what_is_not_a_notebook():
    with pytest.raises(ValueError, match="not a notebook"):
        strip_outputs("{]")
    with pytest.raises(ValueError, match="no list of cells"):
        strip_outputs("[1, 2]")
    with pytest.raises(TypeError, match="text must be"):
        strip_outputs(b"{}")


def _git_repo(tmp_path: Path):
    """A git work tree with the project's .gitattributes and notebook 04, set up by ``make clean-checkouts``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    for name in (".gitattributes", ".gitignore"):
        shutil.copy(ROOT / name, repo / name)
    (repo / "notebooks").mkdir()
    nb = repo / "notebooks" / "04_sakai2024_hmr.ipynb"
    shutil.copy(ROOT / "notebooks" / nb.name, nb)
    venv = tmp_path / "venv"
    subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "clean-checkouts", f"PY={sys.executable}",
                    f"VENV={venv}"], cwd=repo, env=env, check=True)
    git("add", "-A")
    git("commit", "-q", "-m", "committed, stripped")
    return repo, nb, git, venv


needs_git = pytest.mark.skipif(shutil.which("git") is None or shutil.which("make") is None, reason="needs git and make")


@needs_git
def test_git_sees_a_run_all_without_its_outputs(tmp_path):
    """The clean filter (``make clean-checkouts``, part of ``make venv``) + ``.gitattributes``."""
    repo, nb, git, _ = _git_repo(tmp_path)
    assert "calibnb.teaching strip-outputs" in git("config", "filter.calibnb-strip-outputs.clean")
    committed = nb.read_text(encoding="utf-8")
    nb.write_text(_run_all(committed), encoding="utf-8")  # saved by an editor without the server hook
    assert git("diff") == ""  # nothing to commit: git sees the stripped notebook
    git("add", "-A")
    assert git("status", "--porcelain") == ""
    assert '"ran 0\\n"' in nb.read_text(encoding="utf-8")  # the students keep their outputs on disk
    # A real edit is still seen, and committed without outputs.
    nb.write_text(_run_all(committed.replace("Sakai 2024: HMR", "Sakai 2024 (edited): HMR")), encoding="utf-8")
    assert git("status", "--porcelain").strip() == "M notebooks/04_sakai2024_hmr.ipynb"
    git("commit", "-q", "-am", "an edit")
    assert git("show", "HEAD:notebooks/04_sakai2024_hmr.ipynb") == committed.replace("Sakai 2024: HMR",
                                                                                   "Sakai 2024 (edited): HMR")


@needs_git
def test_after_a_class_in_jupyterlab_git_status_is_clean(tmp_path):
    """JupyterLab saves through the server's contents manager, configured by ``make clean-checkouts``."""
    import json

    from jupyter_server.services.contents.filemanager import FileContentsManager
    from traitlets.config import Config

    repo, nb, git, venv = _git_repo(tmp_path)
    config = json.loads((venv / "etc" / "jupyter" / "jupyter_server_config.d" / "calibnb.json").read_text())
    manager = FileContentsManager(root_dir=str(repo), config=Config(config))
    committed = nb.read_text(encoding="utf-8")
    ran = nbformat.reads(_run_all(committed), as_version=4)
    manager.save({"type": "notebook", "format": "json", "content": ran}, "notebooks/04_sakai2024_hmr.ipynb")
    assert git("status", "--porcelain") == ""  # the class ran everything and saved: git is clean
    assert nb.read_text(encoding="utf-8") == committed
    # A notebook outside the filtered folder keeps its outputs.
    ran = nbformat.reads(_run_all(committed), as_version=4)
    manager.save({"type": "notebook", "format": "json", "content": ran}, "mine.ipynb")
    assert '"ran 0' in (repo / "mine.ipynb").read_text(encoding="utf-8")


def test_setup_check_says_what_is_there_in_words(tmp_path):
    table = setup_check(datasets=["cifar10h"], cache_dir=tmp_path)  # an empty folder: nothing found
    assert table.loc["data: cifar10h", "status"] == "missing"
    assert "CALIBNB_DATA_DIR" in table.loc["data: cifar10h", "detail"]
    assert str(tmp_path) not in table.to_string()  # no machine path
    assert {"calibnb", "numpy", "ipywidgets", "ipykernel", "python", "widgets"} <= set(table.index)
    assert table.loc["widgets", "status"] in {"ok", "static"}
    with pytest.raises(ValueError, match="datasets has unknown folder"):
        setup_check(datasets=["cifar11"])
    with pytest.raises(TypeError, match="datasets must be"):
        setup_check(datasets=[3])


def test_setup_check_finds_the_mirror_when_it_is_there():
    from calibnb.data import data_dir

    if not (data_dir() / "cifar10h").is_dir():
        pytest.skip("no data mirror here")
    assert setup_check(datasets=["cifar10h"]).loc["data: cifar10h", "status"] == "ok"


def test_a_temperature_on_its_search_bound_is_said_in_words_not_warned():
    """Notebook 01 states a τ on TAU_BOUNDS as a finding; the raw CalibrationWarning must not reach its output."""
    import warnings

    import numpy as np

    from calibnb.papers import si2022

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(400, 2)) * 3
    labels = logits.argmax(axis=1)
    labels[::2] = 1 - labels[::2]  # accuracy exactly 1/2 = the uniform confidence: ECE falls as τ grows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tau = si2022._fit_tau(logits, labels, 10)
    assert si2022.tau_on_bound(tau)  # the finding the notebook prints
    assert [str(w.message) for w in caught] == []
