"""The public API: calibnb.__all__ and every submodule's __all__ are exact."""

import importlib
import inspect
import pkgutil

import pytest

import calibnb

MODULES = sorted(m.name for m in pkgutil.walk_packages(calibnb.__path__, "calibnb."))


def test_every_paper_module_is_importable_by_author_and_year():
    papers = {m.rsplit(".", 1)[1] for m in MODULES if m.startswith("calibnb.papers.")}
    assert papers == {"si2022", "baan2022", "gupta2021", "sakai2024", "jiang2024"}


@pytest.mark.parametrize("name", ["calibnb"] + MODULES)
def test_all_is_exact(name):
    module = importlib.import_module(name)
    names = getattr(module, "__all__", None)
    assert names is not None, f"{name} has no __all__"
    assert len(names) == len(set(names)), f"{name}.__all__ repeats {sorted(n for n in names if names.count(n) > 1)}"
    phantom = [n for n in names if not hasattr(module, n)]
    assert not phantom, f"{name}.__all__ lists names it does not define: {phantom}"
    # every public function or class defined in the module is exported
    own = [n for n, v in vars(module).items()
           if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
           and getattr(v, "__module__", None) == name]
    missing = sorted(set(own) - set(names))
    assert not missing, f"{name} defines public names missing from __all__: {missing}"
    if hasattr(module, "__path__"):  # a package: everything it re-exports is in __all__
        import __future__
        import types

        exported = {n for n, v in vars(module).items() if not n.startswith("_")
                    and not isinstance(v, (types.ModuleType, __future__._Feature))}
        assert not sorted(exported - set(names)), f"{name} re-exports names missing from __all__"
    namespace: dict = {}
    exec(f"from {name} import *", namespace)
    assert set(names) <= set(namespace)


def test_top_level_is_the_generic_layer_only():
    papers = [m for m in MODULES if m.startswith("calibnb.papers.")]
    for name in papers:
        module = importlib.import_module(name)
        for n in module.__all__:
            value = getattr(module, n)
            if getattr(value, "__module__", None) == name:
                assert n not in calibnb.__all__, f"paper-study name {n} ({name}) is at top level"
    for n in calibnb.__all__:
        value = getattr(calibnb, n)
        home = getattr(value, "__module__", "") or ""
        assert not home.startswith("calibnb.papers"), n


def test_no_module_imports_a_private_name_of_another():
    import ast
    from pathlib import Path

    root = Path(calibnb.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = ".".join(("calibnb",) + path.relative_to(root).with_suffix("").parts)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.level and not (node.module or "").startswith("calibnb"):
                continue
            # the module imported from, resolved
            base = package.split(".")
            if path.name != "__init__.py":
                base = base[:-1]
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            same_package = target.rsplit(".", 1)[0] == package.rsplit(".", 1)[0] or target.startswith(package.rsplit(".", 1)[0] + ".")
            private_module = any(p.startswith("_") and p != "__init__" for p in target.split(".")[1:])
            if private_module and not (path.name == "__init__.py" and target.startswith(package + ".")):
                if not same_package:
                    offenders.append(f"{path.relative_to(root)}: from {target} import ...")
            for alias in node.names:
                if alias.name.startswith("_") and alias.name != "__version__":
                    offenders.append(f"{path.relative_to(root)}: {alias.name} from {target}")
    assert not offenders, offenders
