"""The package layout (issue 25): no import cycle between calibnb's modules."""

from __future__ import annotations

import ast
from pathlib import Path

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
    assert "calibnb.scale.stats" in graph["calibnb"]


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_calibnb_modules():
    found = cycles(import_graph(module_files()))
    assert not found, f"import cycles (module imports, including function-local ones): {found}"
