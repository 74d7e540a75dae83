"""Checks of the project's own conventions (notebooks, environment, kernel)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NOTEBOOK_IDS = [p.stem for p in NOTEBOOKS]
# NN_author_year_topic; a methods notebook of calibnb itself (no single paper) is NN_topic.
NAME_PATTERN = re.compile(r"^\d{2}_([a-z]+\d{4}_)?[a-z0-9_]+$")

# conda-forge name -> PyPI name, where they differ (none in today's stack).
CONDA_TO_PIP: dict[str, str] = {"pytorch": "torch", "pytables": "tables"}


def _normalise(name: str) -> str:
    """PEP 503 normalised distribution name, without extras or version pins."""
    name = re.split(r"[\s<>=!~;\[]", name.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def _parameters_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and "parameters" in c.get("metadata", {}).get("tags", [])]


# ---------------------------------------------------------------------- notebooks


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NOTEBOOK_IDS)
def test_notebook_committed_without_outputs(path):
    """Outputs and execution counts are stripped before committing."""
    nb = _read(path)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: code cells {dirty} have outputs or execution counts; strip them "
                       "(e.g. jupyter nbconvert --clear-output --inplace)")
    assert "widgets" not in nb.metadata, f"{path.name}: saved widget state in metadata; strip it"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NOTEBOOK_IDS)
def test_notebook_import_cell_selects_the_inline_backend(path):
    """The import cell (first code cell with an import) has `%matplotlib inline`.

    Without it, under ``MPLBACKEND=Agg`` (the test and headless settings) the
    static figures are never drawn into the notebook or its HTML report.
    """
    nb = _read(path)
    imports = [c for c in nb.cells if c.cell_type == "code"
               and re.search(r"^\s*(import|from)\s+\w", c.source, flags=re.MULTILINE)]
    assert imports, f"{path.name}: no import cell"
    lines = [line.strip() for line in imports[0].source.splitlines()]
    assert "%matplotlib inline" in lines, f"{path.name}: the import cell lacks a `%matplotlib inline` line"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NOTEBOOK_IDS)
def test_notebook_parameters_cell(path):
    """Exactly one cell tagged `parameters`, the first code cell, with seed and results_path = None."""
    nb = _read(path)
    cells = _parameters_cells(nb)
    assert len(cells) == 1, f"{path.name}: {len(cells)} cells tagged 'parameters'; exactly one is required"
    cell = cells[0]
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert cell is first_code, f"{path.name}: the parameters cell must be the first code cell"
    tree = ast.parse(cell.source)
    values = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            values[node.target.id] = node.value
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            for t in node.targets:
                values[t.id] = node.value
        else:
            pytest.fail(f"{path.name}: the parameters cell may hold only assignments; found {ast.dump(node)[:60]}")
    assert "seed" in values, f"{path.name}: the parameters cell must define seed"
    assert "results_path" in values, f"{path.name}: the parameters cell must define results_path"
    node = values["results_path"]
    assert isinstance(node, ast.Constant) and node.value is None, f"{path.name}: results_path must default to None"
    # papermill reads every parameter (it cannot parse annotations like `str | None`).
    import papermill

    parsed = set(papermill.inspect_notebook(str(path)))
    assert parsed == set(values), (f"{path.name}: papermill cannot read parameters {sorted(set(values) - parsed)}; "
                                   "use simple annotations (int, float, str, bool) or none")
    # Each parameter is commented (typed, commented defaults).
    for line in cell.source.splitlines():
        if re.match(r"^[A-Za-z_]\w*\s*(:[^=]*)?=", line):
            assert "#" in line, f"{path.name}: parameter line without a comment: {line!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NOTEBOOK_IDS)
def test_notebook_shape(path):
    """Name NN_author_year_topic, a first markdown cell with a title, the python3 kernel."""
    assert NAME_PATTERN.match(path.stem), f"{path.name}: name must look like NN_author_year_topic.ipynb (NN_topic for a methods notebook)"
    nb = _read(path)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.lstrip().startswith("# "), \
        f"{path.name}: the first cell must be markdown starting with '# <title>'"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec must be python3"


def test_notebooks_listed_in_readme():
    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in NOTEBOOKS if p.stem not in text]
    assert not missing, f"notebooks/README.md does not list {missing}"


def test_every_notebook_has_a_case_file():
    cases = ROOT / "tests" / "notebook_cases"
    missing = [p.stem for p in NOTEBOOKS if not (cases / f"{p.stem}.py").exists()]
    assert not missing, f"no tests/notebook_cases/<stem>.py for {missing}"


# -------------------------------------------------------------------- environment


def test_environment_yml_matches_pyproject():
    """environment.yml and pyproject.toml's dependencies name the same packages."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    deps = {_normalise(d) for d in pyproject["project"]["dependencies"]}
    test_extra = _extra_packages(pyproject, "test")

    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    names: set[str] = set()
    for item in env["dependencies"]:
        if isinstance(item, dict):  # the pip: section
            for pip_item in item.get("pip", []):
                if not pip_item.startswith("-"):  # "-e ." installs calibnb itself
                    names.add(_normalise(pip_item))
        else:
            name = _normalise(str(item).split("::")[-1])
            names.add(CONDA_TO_PIP.get(name, name))
    names -= {"python", "pip"}

    assert names - test_extra == deps, (
        f"only in environment.yml: {sorted(names - test_extra - deps)}; "
        f"only in pyproject dependencies: {sorted(deps - names)}")


def _extra_packages(pyproject: dict, extra: str) -> set[str]:
    """The packages of an extra, with the extras it pulls from calibnb itself (``calibnb[report]``) expanded."""
    name = _normalise(pyproject["project"]["name"])
    extras = pyproject["project"].get("optional-dependencies", {})
    out: set[str] = set()
    for item in extras.get(extra, []):
        if _normalise(item) == name:
            inner = item[item.index("[") + 1: item.index("]")]
            for sub in inner.split(","):
                out |= _extra_packages(pyproject, sub.strip())
        else:
            out.add(_normalise(item))
    return out


def test_extra_packages_expands_calibnb_extras():
    pyproject = {"project": {"name": "calibnb", "optional-dependencies": {
        "a": ["x>=1"], "b": ["y"], "test": ["calibnb[a,b]", "pytest>=7"]}}}
    assert _extra_packages(pyproject, "test") == {"x", "y", "pytest"}


def test_normalise():
    assert _normalise("scikit_learn>=1.3") == "scikit-learn"
    assert _normalise("Jupyter.Lab =4.6") == "jupyter-lab"
    assert _normalise("pytest-xdist[psutil]>=3") == "pytest-xdist"


def test_python3_kernel_is_this_environment():
    """The `python3` kernel papermill uses runs this interpreter's environment."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    prefix = subprocess.run([spec.argv[0], "-c", "import sys; print(sys.prefix)"], capture_output=True,
                            text=True, check=True).stdout.strip()
    assert Path(prefix).resolve() == Path(sys.prefix).resolve(), (
        f"kernel python3 runs {spec.argv[0]} (prefix {prefix}), not this environment ({sys.prefix}); "
        "run: python -m ipykernel install --sys-prefix --name python3")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NOTEBOOK_IDS)
def test_notebook_checks_its_parameters(path):
    """The import cell starts with `import calibnb as cn` and `cn.check_parameters(globals())` (issue 14).

    Only magics may come before them, so a parameter of the wrong type (papermill ``-p n_bins ten``) fails
    in the first cell after the parameters, with a message naming it.
    """
    nb = _read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    params = next(i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", []))
    lines = [ln.strip() for ln in code[params + 1].source.splitlines() if ln.strip()]
    statements = [ln for ln in lines if not ln.startswith(("%", "#"))]
    assert statements[:2] == ["import calibnb as cn", "cn.check_parameters(globals())"] or (
        statements[0] == "import calibnb as cn" and statements[1].startswith("cn.check_parameters(globals())")
    ), f"{path.name}: the import cell must begin with `import calibnb as cn` and `cn.check_parameters(globals())`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=NOTEBOOK_IDS)
def test_notebook_records_against_its_ledger_only(path):
    """A paper notebook builds its record from its own claims ledger and never uses the
    deprecated ledger-free API (``rep.claim``/``rep.known_gap``), whose ``finish`` raises
    when a paper's claim fails and whose known gaps an ``if/else`` could decide (issue 13).
    The audit notebook (``00_``) reports on a user's model and has no paper claims."""
    if path.stem.startswith("00_"):
        pytest.skip("the audit notebook has no paper claims")
    if path.stem == "07_llm_confidence":
        pytest.skip("a methods notebook on LLM confidence that reproduces no paper's claim (no ledger)")
    code = "\n".join(c.source for c in _read(path).cells if c.cell_type == "code")
    assert f'Reproduction.from_ledger("claims/{path.stem}.yaml"' in code, \
        f"{path.name}: build the record with cn.Reproduction.from_ledger(\"claims/{path.stem}.yaml\", ...)"
    assert (ROOT / "notebooks" / "claims" / f"{path.stem}.yaml").is_file(), f"{path.name}: its ledger is missing"
    for deprecated in (".claim(", ".known_gap("):
        assert deprecated not in code, f"{path.name}: uses the deprecated {deprecated[1:-1]}() record"
