"""The main job: execute every notebook into an HTML report.

Usage (from the repository root; ``make report`` runs the first line)::

    python -m calibnb.report
    python -m calibnb.report --params params/quick.yaml
    python -m calibnb.report -p seed 1 -p n_bins 15 --notebooks "notebooks/04_*.ipynb" --out reports

For each notebook matched by ``--notebooks`` (default ``notebooks/*.ipynb``)
this executes it with papermill (kernel ``python3``, working directory the
notebook's folder, the notebook's ``results_path`` parameter pointed at
``<out>/<stem>.results.json``), writes the executed notebook to
``<out>/<stem>.ipynb`` and a self-contained HTML page to ``<out>/<stem>.html``,
and finally writes ``<out>/index.html`` (and ``<out>/index.json``) listing
each notebook with how many of its reproduction claims hold, its known gaps,
its parameters, a link to its page and, for a failed notebook, the error.

Parameters
----------
A YAML parameter file maps a notebook stem, or ``all``, to parameter values::

    all:                      # every notebook whose parameters cell declares the name
      seed: 0
    04_sakai2024_hmr:         # this notebook only (the names must be declared)
      n_systems: 500

``-p NAME VALUE`` (repeatable) overrides both, for every notebook that declares
``NAME``. Values follow one set of rules in the file and on the command line:
plain scalars are typed by the YAML 1.2 core schema (``2`` int, ``012`` int 12,
``2.0``/``1e-3`` float, ``true``/``false`` bool, ``null``/``~`` None, anything
else a string: ``NO``, ``1:30`` and ``run #2`` stay strings); a ``-p`` value
starting with ``[`` or ``{`` is read as JSON.

Every parameter is checked before the first notebook starts (names against
each targeted notebook's parameters cell, types against its annotations
``int``/``float``/``str``/``bool``/``list``/``dict``, params-file entries
against the notebooks that exist); any mistake, or a ``--notebooks`` pattern
that matches nothing, exits with status 2 and a message naming it, leaving the
output folder as it was.

Robustness
----------
A failing notebook is reported with its error and does not stop the others; its
executed notebook and HTML go to ``<stem>.failed.ipynb``/``<stem>.failed.html``
so that a previous good ``<stem>.html`` is not replaced by a failed run (a later
success removes those ``.failed`` files). Every
file is written to a temporary file in the output folder first and then moved
into place with :func:`os.replace`, so a half-written report never replaces a
good one. The exit status is 0 when every notebook ran, 1 when any failed and
2 for a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import datetime as _dt
import glob as _glob
import html
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Iterable, Sequence

from .reproduction import write_json_atomic, write_text_atomic

__all__ = [
    "NotebookRun",
    "run_notebook",
    "notebook_to_html",
    "load_params_file",
    "parse_cli_value",
    "params_for",
    "build_report",
    "plan_report",
    "ReportUsageError",
    "resolve_scalar",
    "render_index",
    "main",
]

#: The inline backend, so that figures are embedded in the executed notebooks
#: (a test run sets ``MPLBACKEND=Agg`` instead).
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"

#: Arguments for every kernel the report starts. The kernel's own log lines
#: ("Kernel is running over TCP without encryption", "KeyboardInterrupt caught in
#: kernel" at shutdown) say nothing to a report reader; errors inside the
#: notebook still reach the report through the executed cells, and a kernel
#: that dies is still reported as that notebook's failure.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclasses.dataclass
class NotebookRun:
    """The outcome of executing one notebook.

    Attributes
    ----------
    stem : str
        The notebook's file name without ``.ipynb``.
    ok : bool
        True if every cell ran without an error.
    error : str or None
        ``"ExceptionName: message"`` of the failure, else None.
    traceback : str or None
        The failing cell's traceback (ANSI colours removed), else None.
    elapsed : float
        Wall-clock seconds.
    results : dict or None
        The parsed results JSON the notebook wrote, if it wrote one.
    output_path : pathlib.Path
        The executed notebook.
    parameters : dict
        The parameters injected (without ``results_path``).
    """

    stem: str
    ok: bool
    error: str | None
    traceback: str | None
    elapsed: float
    results: dict | None
    output_path: Path
    parameters: dict

    def claim_counts(self) -> dict[str, int] | None:
        """``{"holds", "fails", "known_gaps", "total"}`` from the results JSON, or None."""
        if not self.results or not isinstance(self.results.get("claims"), list):
            return None
        statuses = [c.get("status") for c in self.results["claims"]]
        holds, fails, gaps = (statuses.count(s) for s in ("holds", "fails", "known gap"))
        return {"holds": holds, "fails": fails, "known_gaps": gaps, "total": holds + fails}


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def run_notebook(
    path: str | os.PathLike,
    output_path: str | os.PathLike,
    *,
    parameters: dict | None = None,
    results_path: str | os.PathLike | None = None,
    kernel_name: str = "python3",
    cwd: str | os.PathLike | None = None,
    timeout: float | None = None,
) -> NotebookRun:
    """Execute one notebook with papermill and collect what it produced.

    Parameters
    ----------
    path, output_path : path
        The notebook to run and where to write the executed copy (papermill
        writes it even when a cell fails).
    parameters : dict, optional
        Injected after the cell tagged ``parameters``.
    results_path : path, optional
        Injected as the ``results_path`` parameter (made absolute) and read back
        after the run; a stale file there is removed first.
    kernel_name : str
        Jupyter kernel; ``python3`` is the one the Makefile installs into the venv.
    cwd : path, optional
        Working directory of the kernel; default the notebook's folder.
    timeout : float, optional
        Per-cell execution timeout in seconds (None = no limit).

    Returns
    -------
    NotebookRun
        Never raises for a failure inside the notebook; ``ok`` says whether it ran.
    """
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    path = Path(path)
    output_path = Path(output_path)
    params = dict(parameters or {})
    injected = dict(params)
    if results_path is not None:
        results_path = Path(results_path).absolute()
        if results_path.exists():
            results_path.unlink()
        injected["results_path"] = str(results_path)
    start = time.perf_counter()
    error = tb = None
    try:
        pm.execute_notebook(
            str(path), str(output_path), parameters=injected, kernel_name=kernel_name,
            cwd=str(cwd if cwd is not None else path.parent), progress_bar=False,
            execution_timeout=timeout, extra_arguments=KERNEL_ARGUMENTS,
        )
    except PapermillExecutionError as exc:
        error = f"{exc.ename}: {_strip_ansi(str(exc.evalue))}"
        tb = _strip_ansi("\n".join(exc.traceback))
    except Exception as exc:  # kernel died, timeout, unreadable notebook, ...
        error = f"{type(exc).__name__}: {_strip_ansi(str(exc))}"
        tb = _strip_ansi(traceback.format_exc())
    elapsed = time.perf_counter() - start
    results = None
    if results_path is not None and results_path.exists():
        try:
            results = json.loads(results_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            error = error or f"results JSON unreadable: {exc}"
    return NotebookRun(stem=path.stem, ok=error is None, error=error, traceback=tb, elapsed=elapsed,
                       results=results, output_path=output_path, parameters=params)


def notebook_to_html(notebook_path: str | os.PathLike) -> str:
    """Convert an executed notebook to one self-contained HTML page (nbconvert, lab template).

    Figures are embedded as base64 images; CSS is inlined.
    """
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook_path), as_version=4)
    exporter = HTMLExporter(template_name="lab", embed_images=True)
    body, _ = exporter.from_notebook_node(nb)
    return body


# ---------------------------------------------------------------------- parameters


_NULL = re.compile(r"null|Null|NULL|~|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_SPECIAL_FLOAT = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


def resolve_scalar(text: str) -> Any:
    """Type a plain scalar by the YAML 1.2 core schema (the rules of parameter files and ``-p``).

    ``null``/``~``/empty -> None; ``true``/``false`` (three capitalisations) -> bool;
    decimal integers (leading zeros allowed: ``012`` is 12), ``0o17``, ``0x1F`` -> int;
    ``1.5``, ``1e-3``, ``.5``, ``.inf``, ``.nan`` -> float; anything else stays the
    string it is. Unlike YAML 1.1 there is no sexagesimal (``1:30`` stays a string)
    and no ``yes``/``no``/``on``/``off`` booleans (``NO`` stays a string).

    >>> [resolve_scalar(v) for v in ["012", "1:30", "NO", "1e-3", "0x10", "~", "run #2"]]
    [12, '1:30', 'NO', 0.001, 16, None, 'run #2']
    """
    key = text.strip()
    if _NULL.fullmatch(key):
        return None
    if key in _BOOL:
        return _BOOL[key]
    if _INT.fullmatch(key):
        if key.startswith("0o"):
            return int(key[2:], 8)
        if key.startswith("0x"):
            return int(key[2:], 16)
        return int(key, 10)
    if _FLOAT.fullmatch(key):
        return float(key)
    if key.lower() in _SPECIAL_FLOAT:
        return _SPECIAL_FLOAT[key.lower()]
    return text


def _yaml12_loader():
    """A PyYAML SafeLoader whose plain scalars are typed by :func:`resolve_scalar` (YAML 1.2 core)."""
    import yaml

    class Yaml12Loader(yaml.SafeLoader):
        pass

    # Drop YAML 1.1's implicit typing (yes/no booleans, sexagesimal and octal
    # "012" ints, ...): every plain scalar comes back a str and is typed below.
    Yaml12Loader.yaml_implicit_resolvers = {}

    def construct_str(loader, node):
        value = loader.construct_scalar(node)
        if node.style is None:  # plain (unquoted) scalar
            return resolve_scalar(value)
        return value

    Yaml12Loader.add_constructor("tag:yaml.org,2002:str", construct_str)
    return Yaml12Loader


def parse_cli_value(text: str) -> Any:
    """Read a ``-p NAME VALUE`` value by the rules of the parameter file.

    A value starting with ``[`` or ``{`` is read as JSON (a list or a mapping);
    anything else is a plain scalar typed by the YAML 1.2 core schema (see
    :func:`resolve_scalar`); nothing is a comment (``run #2`` stays ``run #2``).

    >>> [parse_cli_value(v) for v in ["2", "2.0", "true", "null", "mass", "1e-3", "012", "[1, 2]"]]
    [2, 2.0, True, None, 'mass', 0.001, 12, [1, 2]]
    """
    if text.lstrip().startswith(("[", "{")):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(f"value {text!r} starts like a JSON list or mapping but is not valid JSON: {exc}") from None
    return resolve_scalar(text)


def load_params_file(path: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """Read and check a YAML parameter file: ``{stem or "all": {name: value}}``.

    Raises
    ------
    ValueError
        If the file is not such a mapping (the message names the offending entry).
    """
    import yaml

    path = Path(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_yaml12_loader())  # noqa: S506 (a SafeLoader)
    except OSError as exc:
        raise ValueError(f"params file {path} cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"params file {path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"params file {path} must map notebook stems (or 'all') to parameters; "
                         f"got a {type(data).__name__}.")
    out: dict[str, dict[str, Any]] = {}
    for key, values in data.items():
        if not isinstance(key, str):
            raise ValueError(f"params file {path}: key {key!r} must be a notebook stem or 'all'.")
        if values is None:
            values = {}
        if not isinstance(values, dict) or not all(isinstance(k, str) for k in values):
            raise ValueError(f"params file {path}: entry {key!r} must map parameter names to values.")
        if "results_path" in values:
            raise ValueError(f"params file {path}: entry {key!r} sets results_path; the report sets it.")
        out[key] = dict(values)
    return out


def params_for(stem: str, declared: Iterable[str], file_params: dict[str, dict[str, Any]],
               cli_params: dict[str, Any]) -> dict[str, Any]:
    """The parameters to inject into notebook ``stem``.

    ``all`` entries of the file and ``-p`` values apply only where the notebook
    declares the name; the notebook's own file entry applies always (an
    undeclared name there is an error). Precedence: file ``all`` < file stem <
    ``-p``.

    >>> params_for("nb", ["seed", "n_bins"], {"all": {"seed": 1, "tau": 2}, "nb": {"n_bins": 5}},
    ...            {"seed": 3})
    {'seed': 3, 'n_bins': 5}
    """
    declared = set(declared)
    own = file_params.get(stem, {})
    unknown = sorted(set(own) - declared)
    if unknown:
        raise ValueError(f"params for {stem} name {len(unknown)} parameter(s) its parameters cell does not "
                         f"declare: {', '.join(unknown)} (declared: {', '.join(sorted(declared)) or 'none'}).")
    params = {k: v for k, v in file_params.get("all", {}).items() if k in declared}
    params.update(own)
    params.update({k: v for k, v in cli_params.items() if k in declared})
    params.pop("results_path", None)
    return params


class ReportUsageError(ValueError):
    """A mistake in the report's arguments, found before any notebook runs (exit status 2)."""


def _declared_parameters(path: Path) -> dict[str, Any]:
    import papermill as pm

    return dict(pm.inspect_notebook(str(path)))


def _parameter_type(info: dict) -> tuple[str | None, Any]:
    """(type name, default value) of one parameter as papermill reads the parameters cell.

    The annotation gives the type; an unannotated parameter takes the type of its
    literal default (``n = 10`` is an int; ``x = None`` accepts anything).
    """
    import ast

    try:
        default = ast.literal_eval(str(info.get("default")))
    except (ValueError, SyntaxError):
        default = info.get("default")
    type_name = info.get("inferred_type_name")
    if type_name in (None, "None"):
        type_name = type(default).__name__ if default is not None else None
    return type_name, default


def plan_report(notebooks: Sequence[str | os.PathLike], file_params: dict[str, dict[str, Any]],
                cli_params: dict[str, Any], *, known_stems: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Check every parameter against the targeted notebooks before anything runs.

    Returns ``{stem: parameters to inject}``. Raises :class:`ReportUsageError`
    listing every mistake at once: no notebook selected; a params-file entry
    for a stem that names no notebook (``known_stems``: every notebook the
    report could run, default the selected ones); a name in a notebook's own
    entry that its parameters cell does not declare; a ``-p`` name or ``all``
    name that no selected notebook declares; a value whose type does not fit the
    parameter's annotation (``int``, ``float``, ``str``, ``bool``, ``list``,
    ``dict``; see :func:`calibnb.validation.parameter_type_error`).
    """
    from .validation import parameter_type_error

    paths = [Path(p) for p in notebooks]
    if not paths:
        raise ReportUsageError("no notebooks selected: the --notebooks pattern matches no .ipynb file.")
    stems = {p.stem for p in paths}
    known = set(known_stems) if known_stems is not None else stems
    problems: list[str] = []
    for key in sorted(set(file_params) - known - {"all"}):
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        problems.append(f"params file entry {key!r} names no notebook{hint}")
    plans: dict[str, dict[str, Any]] = {}
    declared_anywhere: set[str] = set()
    for path in paths:
        declared = _declared_parameters(path)
        declared_anywhere.update(declared)
        try:
            params = params_for(path.stem, declared, file_params, cli_params)
        except ValueError as exc:
            problems.append(str(exc).rstrip("."))
            continue
        for name, value in params.items():
            type_name, default = _parameter_type(declared[name])
            problem = parameter_type_error(name, value, type_name, default=default)
            if problem:
                problems.append(f"{path.stem}: {problem}")
        plans[path.stem] = params
    for where, names in (("-p", cli_params), ("params file entry 'all'", file_params.get("all", {}))):
        for name in sorted(set(names) - declared_anywhere):
            close = difflib.get_close_matches(name, sorted(declared_anywhere), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{where} names {name!r}, which no selected notebook declares{hint}")
    if problems:
        raise ReportUsageError("; ".join(dict.fromkeys(problems)) + ".")
    return plans


def _title(path: Path) -> str:
    """The first heading of the notebook's first markdown cell (else the stem)."""
    try:
        import nbformat

        nb = nbformat.read(str(path), as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                for line in cell.source.splitlines():
                    if line.strip():
                        return line.strip().lstrip("#").strip()
                break
    except Exception:
        pass
    return path.stem


# ---------------------------------------------------------------------------- index


def _fmt_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt_value(v) for v in value) + "]"
    return "" if value is None else str(value)


def _claims_table(results: dict | None) -> str:
    if not results or not results.get("claims"):
        return ""
    rows = []
    for c in results["claims"]:
        status = str(c.get("status", ""))
        rows.append(
            f"<tr class='{html.escape(status.replace(' ', '-'))}'><td>{html.escape(str(c.get('name', '')))}</td>"
            f"<td>{html.escape(_fmt_value(c.get('paper')))}</td><td>{html.escape(_fmt_value(c.get('ours')))}</td>"
            f"<td>{html.escape(_fmt_value(c.get('tol')))}</td><td>{html.escape(status)}</td>"
            f"<td>{html.escape(str(c.get('source') or ''))}</td>"
            f"<td>{html.escape(str(c.get('reason') or ''))}</td></tr>"
        )
    return ("<details><summary>claims</summary><table class='claims'><tr><th>claim</th><th>paper</th>"
            "<th>ours</th><th>tol</th><th>status</th><th>source</th><th>reason</th></tr>"
            + "".join(rows) + "</table></details>")


def render_index(entries: Sequence[dict], *, generated: str | None = None) -> str:
    """The HTML of ``index.html`` from the per-notebook entries of :func:`build_report`."""
    generated = generated or _dt.datetime.now().isoformat(timespec="seconds")
    rows = []
    for e in entries:
        counts = e.get("claims")
        claims = "—" if counts is None else f"{counts['holds']} / {counts['total']}"
        gaps = "—" if counts is None else str(counts["known_gaps"])
        status = "ok" if e["ok"] else "failed"
        link = f"<a href='{html.escape(e['html'])}'>{html.escape(e['stem'])}</a>" if e.get("html") else html.escape(e["stem"])
        params = ", ".join(f"{k}={v!r}" for k, v in e.get("parameters", {}).items())
        error = ""
        if e.get("error"):
            error = f"<pre class='error'>{html.escape(e['error'])}</pre>"
        rows.append(
            f"<tr class='{status}'><td>{link}<br><small>{html.escape(e.get('title', ''))}</small></td>"
            f"<td>{status}</td><td>{claims}</td><td>{gaps}</td><td>{e['elapsed']:.1f} s</td>"
            f"<td><code>{html.escape(params)}</code></td><td>{error}{_claims_table(e.get('results'))}</td></tr>"
        )
    n_ok = sum(e["ok"] for e in entries)
    body = ("".join(rows) if rows else
            "<tr><td colspan='7'>No notebooks matched; nothing was run.</td></tr>")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>calibnb reports</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 0.3em 0.6em; vertical-align: top; text-align: left; }}
tr.failed > td:nth-child(2), tr.fails td {{ color: #b00; font-weight: bold; }}
tr.ok > td:nth-child(2) {{ color: #070; }}
tr.known-gap td {{ color: #975; }}
pre.error {{ white-space: pre-wrap; color: #b00; max-width: 60em; }}
</style></head><body>
<h1>calibnb: reproduction reports</h1>
<p>{n_ok} of {len(entries)} notebooks ran without error. Generated {html.escape(generated)}.</p>
<table><tr><th>notebook</th><th>status</th><th>claims holding</th><th>known gaps</th><th>time</th>
<th>parameters</th><th>errors and claims</th></tr>
{body}
</table></body></html>
"""


def build_report(
    notebooks: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike,
    *,
    file_params: dict[str, dict[str, Any]] | None = None,
    cli_params: dict[str, Any] | None = None,
    kernel_name: str = "python3",
    timeout: float | None = None,
    html_output: bool = True,
    progress: bool = True,
    known_stems: Iterable[str] | None = None,
) -> list[dict]:
    """Run every notebook into ``out_dir`` and write the index; return its entries.

    See the module docstring for the files written. Each entry is a dict with
    ``stem, title, ok, error, traceback, elapsed, parameters, claims, results,
    notebook, html``. Every parameter is checked first (:func:`plan_report`):
    a mistake raises :class:`ReportUsageError` before any notebook runs or any
    file is written.
    """
    from tqdm.auto import tqdm

    out_dir = Path(out_dir)
    file_params = file_params or {}
    cli_params = cli_params or {}
    paths = [Path(p) for p in notebooks]
    plans = plan_report(paths, file_params, cli_params, known_stems=known_stems)  # raises before any run
    out_dir.mkdir(parents=True, exist_ok=True)
    # Figures inline in the executed notebooks (the kernels inherit this).
    os.environ["MPLBACKEND"] = INLINE_BACKEND

    entries: list[dict] = []
    work = Path(tempfile.mkdtemp(prefix=".report-", dir=out_dir))
    try:
        bar = tqdm(paths, desc="notebooks", unit="nb", disable=not progress, file=sys.stderr)
        for path in bar:
            stem = path.stem
            bar.set_description(stem)
            params = plans[stem]
            entry: dict[str, Any] = {"stem": stem, "title": _title(path), "parameters": params, "claims": None,
                                     "results": None, "notebook": None, "html": None, "traceback": None}
            tmp_nb, tmp_json = work / f"{stem}.ipynb", work / f"{stem}.results.json"
            run = run_notebook(path, tmp_nb, parameters=params, results_path=tmp_json,
                               kernel_name=kernel_name, timeout=timeout)
            entry.update(ok=run.ok, error=run.error, traceback=run.traceback, elapsed=run.elapsed,
                         parameters=params, claims=run.claim_counts(), results=run.results)
            name = stem if run.ok else f"{stem}.failed"
            if tmp_nb.exists():
                if html_output:
                    try:
                        write_text_atomic(out_dir / f"{name}.html", notebook_to_html(tmp_nb))
                        entry["html"] = f"{name}.html"
                    except Exception as exc:
                        entry.update(ok=False, error=(entry["error"] or "") + f"\nHTML conversion failed: {exc}")
                os.replace(tmp_nb, out_dir / f"{name}.ipynb")
                entry["notebook"] = f"{name}.ipynb"
            if tmp_json.exists():
                os.replace(tmp_json, out_dir / f"{name}.results.json")
            if entry["ok"]:
                # A success makes an older failure's files stale: remove them.
                for stale in out_dir.glob(f"{_glob.escape(stem)}.failed.*"):
                    stale.unlink(missing_ok=True)
            entries.append(entry)
            bar.set_postfix_str("ok" if entry["ok"] else "FAILED")
        bar.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_text_atomic(out_dir / "index.html", render_index(entries))
    write_json_atomic(out_dir / "index.json", [{k: v for k, v in e.items() if k != "results"} for e in entries])
    return entries


# ------------------------------------------------------------------------------ CLI


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m calibnb.report",
        description="Execute every notebook with papermill into HTML reports and write an index.",
    )
    parser.add_argument("--params", metavar="FILE.yaml",
                        help="YAML file mapping a notebook stem (or 'all') to parameter values")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                        help="override a parameter in every notebook that declares it (repeatable)")
    parser.add_argument("--notebooks", default="notebooks/*.ipynb", metavar="GLOB",
                        help="which notebooks to run (default: %(default)s)")
    parser.add_argument("--out", default="reports", metavar="DIR", help="output folder (default: %(default)s)")
    parser.add_argument("--kernel", default="python3", help="Jupyter kernel name (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="per-cell execution timeout (default: none)")
    parser.add_argument("--no-html", action="store_true", help="skip the HTML conversion of each notebook")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        file_params = load_params_file(args.params) if args.params else {}
    except ValueError as exc:
        parser.error(str(exc))
    cli_params: dict[str, Any] = {}
    for name, value in args.parameter:
        if not name.isidentifier():
            parser.error(f"-p name must be a Python identifier; got {name!r}.")
        if name == "results_path":
            parser.error("-p results_path is set by the report itself.")
        try:
            cli_params[name] = parse_cli_value(value)
        except ValueError as exc:
            parser.error(f"-p {name}: {exc}")
    notebooks = sorted(p for p in _glob.glob(args.notebooks) if p.endswith(".ipynb"))
    if not notebooks:
        parser.error(f"no notebooks match {args.notebooks!r}; nothing was run and {args.out} was left as it was.")
    # A params-file entry may name any notebook beside the selected ones (so that
    # one file serves every --notebooks pattern), but not a notebook that does not exist.
    folders = {Path(p).parent for p in notebooks}
    known = {Path(p).stem for folder in folders for p in folder.glob("*.ipynb")}
    try:
        entries = build_report(notebooks, args.out, file_params=file_params, cli_params=cli_params,
                               kernel_name=args.kernel, timeout=args.timeout, html_output=not args.no_html,
                               progress=not args.no_progress, known_stems=known)
    except ReportUsageError as exc:
        parser.error(f"{exc} Nothing was run and {args.out} was left as it was.")
    failed = [e for e in entries if not e["ok"]]
    index = Path(args.out) / "index.html"
    print(f"calibnb.report: {len(entries) - len(failed)} of {len(entries)} notebooks ran; see {index}")
    for e in failed:
        print(f"  FAILED {e['stem']}: {(e['error'] or '').splitlines()[0] if e['error'] else ''}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
