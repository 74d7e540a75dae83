"""The package layout (issue 25): no import cycle between calibnb's modules; dependencies by role."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "calibnb"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module under ``package`` by dotted name (a package by its own name, not ``__init__``)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = (package.name,) + path.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the calibnb modules it imports anywhere in its code (module level or inside functions).

    ``from X import Y`` is an edge to ``X.Y`` when that is a module, else to ``X``; an import of a
    submodule counts as an import of that module only (Python also runs the parent packages'
    ``__init__``, which every module shares, so those edges would make every package a cycle).
    """
    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]
            else:
                continue
            for target in targets:
                hit = known(target) if target.split(".")[0] == PACKAGE.name else None
                if hit and hit != name:
                    edges.add(hit)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_is_read_from_the_code():
    graph = import_graph(module_files())
    # a few edges known from the code, so that an empty graph cannot pass the cycle test
    assert "calibnb.metrics.binary" in graph["calibnb.metrics"]
    assert "calibnb.metrics" in graph["calibnb.uncertainty"]
    assert "calibnb.metrics.batch" in graph["calibnb.metrics.binary"]
    assert "calibnb.apps.summary" in graph["calibnb.apps.audit"]  # imported inside a function


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_calibnb_modules():
    found = cycles(import_graph(module_files()))
    assert not found, f"import cycles (module imports, including function-local ones): {found}"


# ------------------------------------------------------------------ dependencies by role

#: Top-level import names of the optional dependencies (extras and test tools).
EXTRAS = ("pytest", "_pytest", "nbval", "papermill", "jupyterlab", "nbconvert", "jupyter_server_mathjax", "dask",
          "distributed", "numba", "llvmlite", "pyarrow", "yaml", "tqdm",
          "jsonschema")
REQUIRED = {"numpy", "scipy", "pandas", "matplotlib", "seaborn", "ipywidgets", "scikit-learn"}

# Makes every name in BLOCKED unimportable, as if it were not installed.
BLOCKER = """
import sys
BLOCKED = {blocked!r}
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)", name=name)
        return None
sys.meta_path.insert(0, Blocker())
"""


def _python(code: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MPLBACKEND": "Agg",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=300)


def test_import_calibnb_works_without_any_extra():
    # the core (metrics, calibrators, plots, widgets, loaders, streaming statistics) imports and
    # computes with every optional package made unimportable
    code = BLOCKER.format(blocked=EXTRAS) + (
        "import numpy as np, calibnb as cn, calibnb.data, calibnb.plots, calibnb.widgets, calibnb.uncertainty\n"
        "conf = np.linspace(0.5, 1, 50); correct = (np.arange(50) % 3) > 0\n"
        "print(round(cn.ece(conf, correct), 6), round(cn.CalibrationStats.from_arrays(conf, correct).ece(), 6))\n"
        "print(cn.TemperatureScaling().fit(np.c_[conf, 1 - conf], correct.astype(int)).temperature_ > 0)\n")
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    ece_fn, ece_stats = proc.stdout.split()[:2]
    assert ece_fn == ece_stats
    assert proc.stdout.split()[2] == "True"


def test_import_calibnb_imports_no_extra():
    # pandas imports pyarrow by itself when it is installed: what the required packages import on
    # their own is the baseline; calibnb must add none of the extras to it
    probe = ("import sys\n{imports}\n"
             "print(sorted({{m.split('.')[0] for m in sys.modules}} & set({extras!r})))")
    base = _python(probe.format(imports="import numpy, scipy, pandas, matplotlib, sklearn, ipywidgets",
                                extras=EXTRAS))
    ours = _python(probe.format(imports="import calibnb, calibnb.data, calibnb.plots, calibnb.widgets",
                                extras=EXTRAS))
    assert base.returncode == 0 and ours.returncode == 0, base.stderr + ours.stderr
    added = set(eval(ours.stdout)) - set(eval(base.stdout))
    assert not added, f"import calibnb imports the optional packages {sorted(added)}"


def test_required_dependencies_are_the_core_stack_only():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = {re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    assert required == REQUIRED
    extras = project["optional-dependencies"]
    assert {"notebooks", "report", "dask", "test", "bench"} <= set(extras)
    assert any(d.startswith("calibnb[") and all(e in d for e in ("notebooks", "report", "dask"))
               for d in extras["test"]), "the test extra must pull the notebooks, report and dask extras"
    assert any(d.startswith("pyarrow") for d in extras["report"]), "the audit reads Parquet: pyarrow in [report]"


def test_audit_without_pyarrow_says_what_to_install(tmp_path):
    path = tmp_path / "preds.parquet"
    path.write_bytes(b"PAR1")  # never read: the check comes first
    code = BLOCKER.format(blocked=("pyarrow",)) + (
        "from calibnb.apps.audit import AuditInputError, file_size, read_columns\n"
        f"for f in (read_columns, file_size):\n"
        f"    try:\n        f({str(path)!r})\n    except AuditInputError as e:\n        print(e)\n")
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2 and all("needs pyarrow" in m and "calibnb[report]" in m for m in lines), proc.stdout


# ------------------------------------------------------------------ the README's tree


def readme_tree() -> set[str]:
    """The module paths listed in the README's architecture tree (relative to calibnb/)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Architecture: where things go", 1)[1].split("```", 2)[1]
    paths, stack = set(), []
    for line in block.splitlines()[1:]:
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0]
        stack[depth:] = [name.rstrip("/")]
        if name.endswith(".py"):
            paths.add("/".join(stack[1:]))
    return paths


def test_readme_tree_lists_every_module():
    actual = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    listed = readme_tree()
    assert "metrics/registry.py" in listed and "scale/dask.py" in listed
    assert not sorted(actual - listed), f"modules missing from the README's tree: {sorted(actual - listed)}"
    assert not sorted(listed - actual), f"the README's tree lists modules that do not exist: {sorted(listed - actual)}"
