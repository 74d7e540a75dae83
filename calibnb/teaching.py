"""For a class: the setup check of every notebook's first cell, and a git filter that keeps Run All out of git.

* :func:`setup_check`: one call at the top of a notebook says, in a table a
  student can read aloud, whether the data were found, whether widgets are
  live (a browser-side widget manager is there to move the sliders) and which
  versions run, and raises nothing: a missing piece is a row that says what
  to do.
* :func:`strip_outputs` and ``python -m calibnb.teaching strip-outputs``: a
  notebook without outputs, execution counts or saved widget state, byte for
  byte as the project commits it. ``make venv`` registers it as the git
  ``clean`` filter of ``notebooks/**/*.ipynb`` (``.gitattributes``), so a
  class that runs every cell and saves leaves ``git status`` clean, while the
  files on disk keep what the students ran.
* :func:`strip_on_save`: the same for JupyterLab's saves (autosave included),
  as a Jupyter server ``pre_save_hook`` that ``make venv`` configures in the
  virtual environment: a notebook that ``.gitattributes`` puts under the
  filter is written without outputs, so ``git status`` stays clean after a
  class (the browser keeps showing the outputs until the notebook is closed).
  git's clean filter alone leaves ``git diff`` empty but ``git status``
  listing a notebook whose size changed, until ``git add``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

__all__ = ["setup_check", "strip_outputs", "strip_on_save", "main"]

#: The git filter's name, as ``.gitattributes`` and ``make venv`` spell it.
GIT_FILTER = "calibnb-strip-outputs"

_VERSIONED = ("calibnb", "numpy", "scipy", "pandas", "matplotlib", "sklearn", "ipywidgets", "ipykernel")


def setup_check(*, datasets: Sequence[str] = (), cache_dir: Any = None) -> pd.DataFrame:
    """A table that says whether this notebook can run here: data, widgets, versions.

    Parameters
    ----------
    datasets : sequence of str
        Folders of the data manifest the notebook reads (``"chaosnli"``,
        ``"cifar"``, ``"cifar10h"``, ``"qa"``; none: the notebook needs no
        download). Each folder's files are looked for on disk (in
        ``cache_dir``, else ``CALIBNB_DATA_DIR``, else the user cache) by name
        and size, without downloading or hashing: the loaders verify every
        checksum when they read.
    cache_dir : path, optional
        As for the loaders of :mod:`calibnb.data`.

    Returns
    -------
    pandas.DataFrame
        Indexed by check; columns ``status`` ("ok", "missing", "static" or
        "version") and ``detail`` (what was found, or what to do), with no
        machine path in it.

    Examples
    --------
    >>> table = setup_check()
    >>> list(table.columns), table.loc["calibnb", "status"]
    (['status', 'detail'], 'version')
    """
    import importlib

    from .data import data_dir, registry

    if isinstance(datasets, str):
        datasets = (datasets,)
    if not all(isinstance(d, str) for d in datasets):
        raise TypeError("datasets must be a sequence of manifest folder names (str).")
    files = registry()
    folders = sorted({f.split("/")[0] for f in files["file"]})
    unknown = sorted(set(datasets) - set(folders))
    if unknown:
        raise ValueError(f"datasets has unknown folder(s) {unknown}; the data manifest has {folders}.")
    root = data_dir(cache_dir)
    rows: dict[str, tuple[str, str]] = {}
    for name in datasets:
        mine = files[files["file"].str.startswith(name + "/")]
        present = sum((root / f).is_file() and (root / f).stat().st_size == int(b)
                      for f, b in zip(mine["file"], mine["bytes"]))
        if present == len(mine):
            rows[f"data: {name}"] = ("ok", f"all {len(mine)} files found (checksums are verified when read)")
        else:
            rows[f"data: {name}"] = ("missing", f"{present} of {len(mine)} files found: set CALIBNB_DATA_DIR to "
                                                "the data folder, or let the loading cells download them "
                                                "(needs the network)")
    rows["widgets"] = _widgets_status()
    for module in _VERSIONED:
        try:
            version = getattr(importlib.import_module(module), "__version__", "unknown")
            rows[module] = ("version", str(version))
        except ImportError:
            rows[module] = ("missing", f"not installed: run `make venv` (or pip install {module})")
    rows["python"] = ("version", sys.version.split()[0])
    return pd.DataFrame.from_dict(rows, orient="index", columns=["status", "detail"])


def _widgets_status() -> tuple[str, str]:
    from .widgets import static_panels

    if static_panels():
        return "static", "CALIBNB_PANELS=static: panels show animations (a report or a test run)"
    try:
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
    except ImportError:
        kernel = None
    if kernel is None:
        return "static", "no Jupyter kernel: panels can be built but nothing shows them"
    return "ok", ("a Jupyter kernel: panels are live; if a slider shows as text, not a slider, "
                  "the browser has no widget manager (install jupyterlab_widgets)")


def strip_outputs(text: str) -> str:
    """The notebook ``text`` without outputs, execution counts or saved widget state.

    Written as nbformat writes it (one-space indent, keys sorted, final
    newline), so a committed, stripped notebook comes back byte for byte.
    Cell ids, sources and all other metadata are kept.

    >>> nb = '{"cells": [{"cell_type": "code", "execution_count": 3, "id": "a", "metadata": {},'
    >>> nb += ' "outputs": [{"output_type": "stream", "name": "stdout", "text": "1"}], "source": "1"}],'
    >>> nb += ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    >>> print(strip_outputs(nb))  # doctest: +NORMALIZE_WHITESPACE
    {
     "cells": [
      {
       "cell_type": "code",
       "execution_count": null,
       "id": "a",
       "metadata": {},
       "outputs": [],
       "source": "1"
      }
     ],
     "metadata": {},
     "nbformat": 4,
     "nbformat_minor": 5
    }
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be the notebook's JSON text (str); got {type(text).__name__}.")
    try:
        nb = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"text is not a notebook (JSON): {exc}") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise ValueError("text is not a notebook: it has no list of cells.")
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb["cells"]:
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        metadata = cell.get("metadata", {})
        metadata.pop("execution", None)  # timestamps JupyterLab records when a cell runs
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _under_filter(os_path: Path) -> bool:
    """True if git's attributes put ``os_path`` under the calibnb filter (``git check-attr``)."""
    import subprocess

    try:
        out = subprocess.run(["git", "check-attr", "filter", "--", os_path.name], cwd=os_path.parent,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):  # no git, or no such folder: save as it is
        return False
    return out.returncode == 0 and out.stdout.strip().endswith(f": filter: {GIT_FILTER}")


def strip_on_save(model: dict, path: str, contents_manager: Any, **kwargs: Any) -> None:
    """Jupyter server ``pre_save_hook``: save a project notebook without outputs.

    Only notebooks in a git work tree whose ``.gitattributes`` names the
    ``calibnb-strip-outputs`` filter are changed (in place, in ``model``);
    every other file is saved as it is. ``make venv`` sets it as
    ``FileContentsManager.pre_save_hook`` in the virtual environment's
    Jupyter configuration.
    """
    from pathlib import Path as _Path

    if not isinstance(model, dict) or model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    root = getattr(contents_manager, "root_dir", None)
    if root is None or not _under_filter((_Path(root) / path.lstrip("/")).resolve()):
        return
    nb = model["content"]
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m calibnb.teaching strip-outputs``: stdin to stdout (a git clean filter)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m calibnb.teaching", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["strip-outputs"],
                        help="strip-outputs: read a notebook on stdin, write it without outputs on stdout")
    args = parser.parse_args(argv)
    if args.command == "strip-outputs":
        text = sys.stdin.buffer.read().decode("utf-8")
        try:
            out = strip_outputs(text)
        except ValueError:
            out = text  # not a notebook git should filter: pass it through unchanged
        sys.stdout.buffer.write(out.encode("utf-8"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
