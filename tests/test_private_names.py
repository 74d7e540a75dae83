"""No module of calibnb uses another module's private names (issue 25, item 3).

An AST scan of every module: ``other_module._name`` (a module imported under
any name) and ``obj._name`` where ``_name`` is a private method or attribute of
a class defined only in another calibnb module are offences; a module's own
private names, ``self._x``/``cls._x`` and dunder names are allowed. (Importing a
private name, ``from x import _y``, is tested in tests/test_api.py.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import calibnb

ROOT = Path(calibnb.__file__).parent

#: Unavoidable uses of another library's private names, each with its reason.
ALLOWED = {
    # the safe unpickler rebuilds exactly the NumPy objects np.save writes, which pickle names by these
    # private constructors; it allows them and nothing else (tests/data/test_data_loaders.py)
    ("data/_arrays.py", "_reconstruct"): "numpy.ma's pickled constructor, allowed by the safe unpickler",
    ("data/_arrays.py", "_core"): "numpy's private package path of the pickled constructors",
    ("data/_arrays.py", "_frombuffer"): "numpy's pickled array constructor, allowed by the safe unpickler",
    # documented public API of namedtuple despite the underscore
    ("record/reproduction.py", "_asdict"): "namedtuple._asdict is public API (the underscore avoids field clashes)",
    # IPython's display protocol: a widget's own rich-display method, called on the wrapped widget
    ("widgets.py", "_repr_mimebundle_"): "IPython's display protocol (public by convention)",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _owned(tree: ast.Module) -> set[str]:
    """Private names a module defines: module-level names, methods, class attributes and ``self._x`` assignments."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(node.name):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and _private(node.id):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _private(node.attr):
            out.add(node.attr)
        elif isinstance(node, ast.arg) and _private(node.arg):
            out.add(node.arg)
    return out


def _modules() -> dict[str, ast.Module]:
    return {str(p.relative_to(ROOT)): ast.parse(p.read_text(encoding="utf-8")) for p in sorted(ROOT.rglob("*.py"))}


def _module_aliases(tree: ast.Module) -> set[str]:
    """Names bound to modules by ``import x``, ``import x as y`` and ``from pkg import module``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names.add(a.asname or a.name.split(".")[0])
    return names


def offenders(modules: dict[str, ast.Module]) -> list[str]:
    owned = {path: _owned(tree) for path, tree in modules.items()}
    found = []
    for path, tree in modules.items():
        aliases = _module_aliases(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if (path, node.attr) in ALLOWED:
                continue
            if node.attr in owned[path]:
                continue  # the module's own private name (its classes' methods and attributes)
            others = sorted(p for p, names in owned.items() if p != path and node.attr in names)
            on_module = isinstance(base, ast.Name) and base.id in aliases
            if others or on_module:
                where = f"defined in {', '.join(others)}" if others else "of an imported module"
                found.append(f"{path}:{node.lineno}: {ast.unparse(node)} ({where})")
    return found


def test_no_module_uses_a_private_name_of_another():
    assert not offenders(_modules())


def test_the_scan_finds_each_kind_of_offence():
    """The test can fail: a private method of another module's class, and a private module attribute."""
    modules = {
        "a.py": ast.parse("class A:\n    def _m(self):\n        return self._x\n    def __init__(self):\n"
                          "        self._x = 1\n"),
        "b.py": ast.parse("import os\nimport a\ndef f(obj):\n    return obj._m(), a._helper, os._exit, obj.__class__\n"),
        "c.py": ast.parse("def g(obj):\n    return obj._mine\nclass C:\n    _mine = 0\n"),
    }
    found = offenders(modules)
    assert sorted(f.split(":", 2)[2].split(" (")[0].strip() for f in found) == ["a._helper", "obj._m", "os._exit"]
