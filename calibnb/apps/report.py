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
and finally writes ``<out>/index.html`` (and ``<out>/index.json``): at the top
the parameter preset that ran and **one line per paper** (:func:`calibnb.record.reproduction.paper_summary`:
its status bar, a printed table counted as one claim, inconclusive, by-construction and
seed-sensitive claims apart, seed stability from the committed five-seed table
``data/seed_stability.json`` (``benchmarks/seed_stability.py``), every status
that differs from the ledger's expectation flagged), then each notebook with its
claims counted per status, its parameters, a link to its page, for a failed
notebook the error, and its claims table; and ``<out>/claims.json``, every
claims ledger with the statuses computed in this run, the per-paper lines and
the seed stability of each claim (:func:`collect_claims`).

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
Every cell has a finite timeout (``--timeout``, default 300 s): a cell that runs
longer, or a kernel that dies, fails that notebook only. Panels run headless as
static, scrubbable animations (no live widgets). The HTML pages load nothing
from the network: MathJax 3 (its one-file TeX-to-SVG build, which carries the
TeX fonts as SVG paths) is copied from the ``django-static-mathjax`` package into
``<out>/mathjax``; each page's title is the notebook's first heading.

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

from ._command import KERNEL_EXEC_LINE
from ..record.reproduction import (
    CHECKABLE_STATUSES, STATUSES, claims_table_html, paper_summary, stability_text, status_counts,
    write_json_atomic, write_text_atomic,
)

__all__ = [
    "NotebookRun",
    "run_notebook",
    "notebook_to_html",
    "copy_mathjax",
    "load_params_file",
    "parse_cli_value",
    "params_for",
    "build_report",
    "plan_report",
    "ReportUsageError",
    "resolve_scalar",
    "render_index",
    "claims_summary",
    "summary_sentence",
    "collect_claims",
    "load_seed_stability",
    "main",
]

#: The inline backend, so that figures are embedded in the executed notebooks
#: (a test run sets ``MPLBACKEND=Agg`` instead).
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"

#: Default per-cell execution timeout (seconds) of :func:`run_notebook` and the CLI:
#: a cell that runs longer (or a kernel that stops answering) fails that notebook
#: instead of hanging the report. Every notebook cell runs in seconds at defaults.
DEFAULT_CELL_TIMEOUT = 300.0

#: MathJax is copied next to the HTML pages into this folder, so formulas render with no network.
MATHJAX_DIR = "mathjax"
#: MathJax 3.2.2's combined TeX-input, SVG-output build: one file that carries every TeX
#: font glyph as an SVG path, so it needs no font file (MathJax 2.7 as shipped by
#: jupyter-server-mathjax lacked the TeX font data: wrong fonts, detached radicals).
#: From the ``django-static-mathjax`` package (import name ``mathjax``, Apache-2.0),
#: checked against this SHA-256 before it is copied: a different file is an error.
MATHJAX_FILE = "tex-svg-full.js"
MATHJAX_SHA256 = "214c3da890b16db3d1319684cc04f3fd4e72ea59d5eb3863f256146015fb1783"

#: The report's Jinja2 templates (package data, ``calibnb/apps/templates/``): the index page
#: and nbconvert's lab template without anything fetched from the network.
_TEMPLATES = "templates"
_OFFLINE_TEMPLATE = "calibnb_offline.html.j2"
_INDEX_TEMPLATE = "index.html.j2"
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_NOTE = ("<p><i>(An interactive widget: open the notebook in JupyterLab to use it. "
                "Panels of calibnb appear in this report as scrubbable animations.)</i></p>")

#: Run in every kernel the report starts, after IPython registered its own exit work, so run first at exit
#: (atexit is last in, first out): the objects the notebook made are moved out of the garbage collector's reach
#: (``gc.freeze``). At exit IPython empties the namespace and collects garbage, and the interpreter collects
#: again as it ends; both traversed every object the notebook made, for nothing, as the process is ending:
#: 0.7 s of CPU for a kernel holding the 18 CIFAR networks and a few figures, 0.1 s with this line (measured
#: here, 2026-11-27). Exit handlers still run (temporary files are removed); only cyclic garbage is left to the
#: end of the process.
KERNEL_EXIT_LINE = "import atexit, gc; atexit.register(gc.freeze)"

_FREEZE_AFTER_IMPORTS = '''
import gc, sys
modules = [len(sys.modules)]
def freeze_after_imports(*_):
    if len(sys.modules) != modules[0]:
        modules[0] = len(sys.modules)
        gc.freeze()
ip.events.register("post_run_cell", freeze_after_imports)
'''
#: Run in every kernel the report starts: after a cell that imported modules, what exists is frozen out of the
#: garbage collector (``gc.freeze``), so the collections of later cells traverse what the notebook made since,
#: not the scientific stack's half a million objects, which live as long as the kernel. The full collections
#: of notebooks 01, 02 and 03 took 0.8, 1.2 and 0.9 s of CPU, 0.4, 0.6 and 0.3 s with this line (measured here,
#: 2026-11-27). The cost: cyclic garbage frozen with them (say a figure made in such a cell and dropped later)
#: is freed only when the kernel ends. The code runs in a namespace of its own: the notebook's has no new name.
KERNEL_FREEZE_LINE = f"exec({_FREEZE_AFTER_IMPORTS!r}, {{'ip': get_ipython()}})"

_DRAW_ONCE = '''
import sys
def drop_pyplot_redraw(*_):
    redraw = getattr(sys.modules.get("matplotlib.pyplot"), "_draw_all_if_interactive", None)
    if redraw is not None and redraw in ip.events.callbacks["post_execute"]:
        ip.events.unregister("post_execute", redraw)
ip.events.register("post_run_cell", drop_pyplot_redraw)
'''
#: Run in every kernel the report starts: once pyplot is imported, its redraw of every changed figure after each
#: cell (``_draw_all_if_interactive``, which it hooks to IPython's ``post_execute`` in interactive mode) is
#: unhooked. With the inline backend that draw is never shown: the inline backend's own hook, which runs next,
#: draws each figure again as it renders it to the PNG in the cell's output (and closes it). The audit's kernels
#: drew each of their four figures three times instead of two, about a tenth of such a kernel's CPU in a profile
#: (py-spy, 2026-11-27); the PNGs of notebooks 00, 01, 02, 03, 05 and 06 are byte for byte the same with and
#: without. A case run of tests/test_notebooks.py, which renders no figure, no longer draws the figures left open
#: at the end of its cells either. The hook is dropped after the cell that imported pyplot, so that cell's own
#: figures are still drawn once more. The code runs in a namespace of its own.
KERNEL_DRAW_ONCE_LINE = f"exec({_DRAW_ONCE!r}, {{'ip': get_ipython()}})"

#: Arguments for every kernel the report starts. The kernel's own log lines
#: ("Kernel is running over TCP without encryption", "KeyboardInterrupt caught in
#: kernel" at shutdown) say nothing to a report reader; errors inside the
#: notebook still reach the report through the executed cells, and a kernel
#: that dies is still reported as that notebook's failure. The exec line keeps jsonschema from
#: compiling grammars the notebooks never use, as in the command's own process
#: (calibnb.apps._command.KERNEL_EXEC_LINE). The exit line (:data:`KERNEL_EXIT_LINE`) spares the kernel the
#: garbage collection of everything the notebook made, just before the process ends; the freeze line
#: (:data:`KERNEL_FREEZE_LINE`) keeps the collections during the run off the imported modules' objects; the
#: draw-once line (:data:`KERNEL_DRAW_ONCE_LINE`) leaves a figure's drawing to the inline backend that shows it.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL", f"--IPKernelApp.exec_lines={KERNEL_EXEC_LINE}",
                    f"--IPKernelApp.exec_lines={KERNEL_EXIT_LINE}", f"--IPKernelApp.exec_lines={KERNEL_FREEZE_LINE}",
                    f"--IPKernelApp.exec_lines={KERNEL_DRAW_ONCE_LINE}"]

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
    cpu : float or None
        CPU seconds (user + system) of the run: this process's and the
        notebook's kernel's (a child process, counted once it has exited), as
        ``resource.getrusage`` reports them; None where the platform has no
        ``resource`` module (Windows). It is the notebook's cost without the
        machine's load, which inflates the wall time.
    """

    stem: str
    ok: bool
    error: str | None
    traceback: str | None
    elapsed: float
    results: dict | None
    output_path: Path
    parameters: dict
    cpu: float | None = None

    def claim_counts(self) -> dict[str, int] | None:
        """Claims per status from the results JSON (one count per status and ``checkable``), or None."""
        if not self.results or not isinstance(self.results.get("claims"), list) or "ledger" not in self.results:
            return None
        counts = status_counts(self.results["claims"])
        counts["checkable"] = sum(counts[s] for s in CHECKABLE_STATUSES)
        return counts


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
    timeout: float | None = DEFAULT_CELL_TIMEOUT,
) -> NotebookRun:
    """Execute one notebook with papermill and collect what it produced.

    The kernel runs headless with ``CALIBNB_PANELS=static``: every
    :class:`calibnb.widgets.Panel` displays a scrubbable animation of its
    figure and its readout instead of live widgets (no browser is there to move
    them, and a live widget's output in a headless run is what the HTML page
    could not show and what the executing client could wait on).

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
    timeout : float or None, default DEFAULT_CELL_TIMEOUT (300 s)
        Per-cell execution timeout in seconds; a cell over it, or a kernel that
        died, fails this notebook (``ok`` False, the error names it) and returns.
        None disables it.

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
    import papermill.engines as pm_engines

    from ..widgets import STATIC_ENV

    start = time.perf_counter()
    cpu_start = _cpu_seconds()
    error = tb = None
    previous = os.environ.get(STATIC_ENV)
    os.environ[STATIC_ENV] = "static"  # inherited by the kernel
    client_class = pm_engines.PapermillNotebookClient
    ipc_folders: list[str] = []
    clients: list = []
    pm_engines.PapermillNotebookClient = _headless_client(ipc_folders, clients)  # restored below
    try:
        # request_save_on_cell_execute=False: papermill writes the executed notebook once, at the end or at a
        # failing cell, instead of before and after every cell (issue 31: each save encodes the whole notebook,
        # figures included, in pure-Python JSON; about 1 s of CPU per paper notebook run).
        pm.execute_notebook(
            str(path), str(output_path), parameters=injected, kernel_name=kernel_name,
            cwd=str(cwd if cwd is not None else path.parent), progress_bar=False,
            execution_timeout=timeout, extra_arguments=KERNEL_ARGUMENTS, request_save_on_cell_execute=False,
        )
    except PapermillExecutionError as exc:
        error = f"{exc.ename}: {_strip_ansi(str(exc.evalue))}"
        tb = _strip_ansi("\n".join(exc.traceback))
    except Exception as exc:  # kernel died (DeadKernelError), cell timeout, unreadable notebook, ...
        error = f"{type(exc).__name__}: {_strip_ansi(str(exc))}"
        tb = _strip_ansi(traceback.format_exc())
        # papermill wrote nothing: the cells that ran, and the one that stopped, as the last per-cell save had them
        if clients and not output_path.exists():
            from papermill.iorw import write_ipynb

            try:
                write_ipynb(clients[-1].nb_man.nb, str(output_path))
            except Exception as write_exc:  # the run's own error says more
                tb += f"\n(the executed notebook could not be written: {write_exc})"
    finally:
        pm_engines.PapermillNotebookClient = client_class
        for folder in ipc_folders:
            shutil.rmtree(folder, ignore_errors=True)
        if previous is None:
            os.environ.pop(STATIC_ENV, None)
        else:
            os.environ[STATIC_ENV] = previous
    if results_path is not None and output_path.exists():
        try:
            _show_reader_parameters(output_path, params, kernel_name)
        except Exception as exc:  # the run's own error, if any, says more
            error = error or f"could not rewrite the injected parameters cell: {exc}"
    elapsed = time.perf_counter() - start
    cpu_end = _cpu_seconds()
    cpu = None if cpu_start is None or cpu_end is None else cpu_end - cpu_start
    results = None
    if results_path is not None and results_path.exists():
        try:
            results = json.loads(results_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            error = error or f"results JSON unreadable: {exc}"
    return NotebookRun(stem=path.stem, ok=error is None, error=error, traceback=tb, elapsed=elapsed,
                       results=results, output_path=output_path, parameters=params, cpu=cpu)


def _cpu_seconds() -> float | None:
    """User + system CPU seconds of this process and of its exited children, or None without ``resource``."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _show_reader_parameters(output_path: Path, params: dict, kernel_name: str) -> None:
    """Rewrite the executed notebook's injected-parameters cell to show only ``params``.

    papermill injected ``results_path`` too: a temporary path of this machine
    that says nothing to a reader (and a page must show no machine path). The
    cell then shows the parameters the reader chose, in papermill's own form,
    and says where the results went in words.
    """
    import nbformat
    from papermill.translators import translate_parameters

    nb = nbformat.read(str(output_path), as_version=4)
    for cell in nb.cells:
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            language = nb.metadata.get("kernelspec", {}).get("language", "python")
            source = translate_parameters(kernel_name, language, params, "Parameters") if params else "# Parameters\n"
            cell.source = source.rstrip("\n") + "\n# (results_path: set by the report to its own results file)"
    write_text_atomic(output_path, nbformat.writes(nb))


#: The longest Unix socket path in bytes (without the final NUL) where pyzmq does not say (macOS's; Linux's is 107).
_IPC_PATH_MAX = 103


def _headless_client(ipc_folders: list, clients: list) -> type:
    """papermill's notebook client without nbclient's emulation of a frontend's Output widgets, whose kernel
    listens on Unix sockets (on POSIX systems) in a new folder that it appends to ``ipc_folders``; each client
    made appends itself to ``clients`` (run_notebook writes its notebook when the run stopped without one).

    nbclient mimics a browser for ``ipywidgets.Output``: it captures the outputs
    sent inside one and sends them back to the kernel as widget updates on the
    shell channel while the cell runs. In headless runs that exchange is what a
    cell displaying a live widget (``interactive_output``) waited on, up to the
    cell timeout. Without it, what such a widget displays is recorded as the
    cell's own output, so it also appears in the HTML report.
    """
    from papermill.clientwrap import PapermillNotebookClient

    class HeadlessNotebookClient(PapermillNotebookClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.widget_registry = {}  # no Output-widget emulation (see above)
            clients.append(self)

        def create_kernel_manager(self):
            km = super().create_kernel_manager()
            if os.name == "posix":
                # The kernel's five channels on Unix sockets in a folder of its own, not on TCP ports:
                # jupyter_client picks free ports by binding and releasing them, and a process starting
                # another kernel or server in between can take one first (seen in the test suite:
                # "ZMQError: Address already in use", then "Kernel died before replying to kernel_info").
                # A socket's path is short (zmq.IPC_PATH_MAX_LEN: 107 bytes on Linux); under a deeper temporary
                # folder (TMPDIR) the kernel keeps TCP: a client that cannot connect fails the run, and its
                # half-open zmq context then blocks the process when the garbage collector reaches it (seen).
                # jupyter_client appends "-<n>" to the prefix for each channel.
                import zmq

                folder = tempfile.mkdtemp(prefix="calibnb-kernel-")
                ipc_folders.append(folder)  # removed by run_notebook after the run
                prefix = os.path.join(folder, "kernel")
                if len(os.fsencode(prefix)) + len("-99999") <= getattr(zmq, "IPC_PATH_MAX_LEN", _IPC_PATH_MAX):
                    km.transport = "ipc"
                    km.ip = prefix
            return km

    return HeadlessNotebookClient



def notebook_to_html(notebook_path: str | os.PathLike, *, title: str | None = None,
                     mathjax_url: str = f"{MATHJAX_DIR}/{MATHJAX_FILE}") -> str:
    """Convert an executed notebook to one HTML page that needs no network (nbconvert, lab template).

    Figures are embedded as base64 images, CSS is inlined, and the page loads
    no script from the network: no require.js, no widget manager, no mermaid;
    MathJax comes from ``mathjax_url``, by default the local copy that
    :func:`copy_mathjax` puts next to the page. Saved widget state is dropped
    (it would be stale) and a widget view with no static form is replaced by a
    short note; calibnb panels run headless show scrubbable animations instead
    (:func:`run_notebook`). The page's ``<title>`` is ``title``, by default the
    notebook's first heading.
    """
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook_path), as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and _WIDGET_VIEW in data:
                del data[_WIDGET_VIEW]
                if set(data) <= {"text/plain"}:
                    data.clear()
                    data["text/html"] = _WIDGET_NOTE
    nb.metadata["title"] = title or _title(Path(notebook_path))
    exporter = HTMLExporter(template_name="lab", embed_images=True, mathjax_url=mathjax_url,
                            extra_loaders=[jinja2.PackageLoader(__package__, _TEMPLATES)],
                            template_file=_OFFLINE_TEMPLATE)
    body, _ = exporter.from_notebook_node(nb)
    return body


def copy_mathjax(out_dir: str | os.PathLike) -> Path:
    """Copy MathJax 3 (:data:`MATHJAX_FILE` and its licence) to ``<out_dir>/mathjax``; return the folder.

    The HTML pages of :func:`notebook_to_html` load it with a relative URL, so
    formulas render from a local folder or a copied report folder, offline.
    The file comes from the ``django-static-mathjax`` package and must have
    :data:`MATHJAX_SHA256` (else ``RuntimeError``, nothing copied). Skipped
    when an identical copy is already there.
    """
    import hashlib

    import mathjax

    package = Path(mathjax.__file__).parent / "static" / "mathjax"
    source = package / "es5" / MATHJAX_FILE
    target = Path(out_dir) / MATHJAX_DIR

    def digest(path: Path) -> str | None:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None

    if digest(source) != MATHJAX_SHA256:
        raise RuntimeError(f"MathJax's {MATHJAX_FILE} from the django-static-mathjax package is missing or not the "
                           f"expected build (SHA-256 {MATHJAX_SHA256[:12]}...); reinstall calibnb's dependencies.")
    if digest(target / MATHJAX_FILE) != MATHJAX_SHA256:
        target.mkdir(parents=True, exist_ok=True)
        for name, path in ((MATHJAX_FILE, source), ("LICENSE", package / "LICENSE")):
            fd, tmp = tempfile.mkstemp(prefix=f".{name}-", dir=target)
            os.close(fd)
            try:
                shutil.copyfile(path, tmp)
                os.replace(tmp, target / name)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
    return target


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

    from ..validation import check_yaml_text

    path = Path(path)
    try:
        # size- and alias-limited before anything is built from it (a few hundred bytes of aliases expand to 10^8
        # items); calibnb.validation.check_yaml_text raises ValueError naming the file
        text = check_yaml_text(path.read_bytes(), f"params file {path.name}")
        data = yaml.load(text, Loader=_yaml12_loader())  # noqa: S506 (a SafeLoader)
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
    from ..validation import parameter_type_error

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


def _claims_table(results: dict | None, splits: dict | None = None) -> str:
    """The claims of one notebook's results JSON as a collapsible HTML table (with each claim's seed stability)."""
    if not _is_ledger_record(results) or not results.get("claims"):
        return ""
    splits = splits or {}
    claims = [dict(c, seed_stability={"text": stability_text(splits.get(c.get("id")))}) for c in results["claims"]]
    return "<details><summary>claims</summary>" + claims_table_html(claims) + "</details>"


def _is_ledger_record(results: dict | None) -> bool:
    return bool(results) and "ledger" in results and isinstance(results.get("claims"), list)


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _papers(n: int) -> str:
    word = _NUMBER_WORDS[n] if n < len(_NUMBER_WORDS) else str(n)
    return f"{word} paper" + ("" if n == 1 else "s")


def load_seed_stability(path: str | os.PathLike | None) -> dict:
    """The committed seed table (``benchmarks/seed_stability.py``) or ``{}`` when there is none.

    Returns ``{"preset", "seeds", "notebooks": {stem: {claim id: split}}}`` where a split maps
    a status to the number of seeds that gave it.
    """
    if path is None or not Path(path).exists():
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("notebooks"), dict):
        raise ValueError(f"seed table {path} must be a mapping with 'notebooks' (see benchmarks/seed_stability.py).")
    return {"preset": data.get("preset"), "seeds": data.get("seeds"),
            "notebooks": {stem: {cid: c.get("split") or {} for cid, c in (entry.get("claims") or {}).items()}
                          for stem, entry in data["notebooks"].items()}}


def claims_summary(entries: Sequence[dict], stability: dict | None = None) -> dict:
    """Per-paper summaries of the ledger-based notebooks among the report's entries.

    Returns ``{"papers": n, "per_paper": {stem: paper_summary}, "counts": {status: n, ..., "checkable": n}
    (claims as recorded, for reference; the index does not lead with this sum), "missing": [stems]}``:
    a notebook whose results have no ``claims`` (the audit notebook) is counted in none.

    >>> e = [{"stem": "a", "results": {"paper": "P", "ledger": "x", "claims": [{"id": "c", "status": "reproduces"},
    ...      {"id": "d", "status": "partly"}]}}, {"stem": "b", "results": None},
    ...      {"stem": "00_audit_your_model", "results": {"summary": {}}}]
    >>> s = claims_summary(e)
    >>> s["papers"], s["counts"]["checkable"], s["missing"], s["per_paper"]["a"]["counts"]["reproduces"]
    (1, 2, ['b'], 1)
    """
    stability = (stability or {}).get("notebooks", {})
    totals = {s: 0 for s in STATUSES}
    per_paper, missing = {}, []
    for e in entries:
        results = e.get("results")
        if _is_ledger_record(results):
            per_paper[e["stem"]] = paper_summary(results, stability.get(e["stem"]))
            for status, n in status_counts(results["claims"]).items():
                totals[status] += n
        elif results and "claims" not in results:
            pass  # a notebook without claims (00_audit_your_model writes audit.json): nothing to count
        else:
            missing.append(e["stem"])
    totals["checkable"] = sum(totals[s] for s in CHECKABLE_STATUSES)
    return {"papers": len(per_paper), "per_paper": per_paper, "counts": totals, "missing": missing}


def summary_sentence(summary: dict) -> str:
    """The index's lead: one line per paper (never a cross-paper sum), then what did not run.

    >>> summary_sentence({"papers": 0, "per_paper": {}, "counts": {}, "missing": []})
    'No paper notebook wrote a claims record.'
    """
    lines = [p["line"] for p in summary["per_paper"].values()]
    text = " ".join(lines) if lines else "No paper notebook wrote a claims record."
    if summary["missing"]:
        text += f" No results from: {', '.join(summary['missing'])}."
    return text


_BAR_ORDER = ("reproduces", "partly", "does-not-reproduce", "inconclusive", "seed-sensitive", "not-checkable",
              "by-construction")


def _status_bar(summary: dict) -> dict:
    """A paper's status bar: (status, count, width %) per segment and the legend; seed-sensitive apart."""
    counts = dict(summary["counts"])
    counts["seed-sensitive"] = len(summary["seed_sensitive"])
    total = sum(counts.get(s, 0) for s in _BAR_ORDER) or 1
    shown = [s for s in _BAR_ORDER if counts.get(s)]
    return {"segments": [(s, counts[s], 100 * counts[s] / total) for s in shown],
            "legend": ", ".join(f"{s.replace('-', ' ')} {counts[s]}" for s in shown)}


def _stability_note(stability: dict | None) -> str:
    if not stability or not stability.get("notebooks"):
        return ("Seed stability: not measured (no committed table data/seed_stability.json; run "
                "benchmarks/seed_stability.py).")
    seeds = stability.get("seeds") or []
    return (f"Seed stability from the committed table of {len(seeds)} seeds ({', '.join(map(str, seeds))}) run with "
            f"preset {stability.get('preset') or 'the notebooks’ defaults'}: a claim whose status flips between "
            "seeds is listed as seed-sensitive and not counted in its paper's line.")


def render_index(entries: Sequence[dict], *, generated: str | None = None, preset: str | None = None,
                 stability: dict | None = None) -> str:
    """The HTML of ``index.html`` from the per-notebook entries of :func:`build_report`.

    At the top the parameter preset that ran and one line per paper (its status bar and
    :func:`calibnb.record.reproduction.paper_summary`'s line: a printed table is one claim, inconclusive,
    by-construction and seed-sensitive claims apart, statuses that differ from the ledger flagged); then one
    row per notebook with its counts per status, run status, time, parameters, error and claims table.
    """
    import jinja2
    from markupsafe import Markup

    generated = generated or _dt.datetime.now().isoformat(timespec="seconds")
    summary = claims_summary(entries, stability)
    papers = [{"paper": str(p["paper"]), "stem": stem, "bar": _status_bar(p), "line": p["line"],
               "mismatches": p["mismatches"]} for stem, p in summary["per_paper"].items()]
    rows = []
    for e in entries:
        results = e.get("results")
        claims = _claims_table(results, (stability or {}).get("notebooks", {}).get(e["stem"]))
        rows.append({
            "status": "ok" if e["ok"] else "failed", "stem": e["stem"], "html": e.get("html"),
            "paper": str((results or {}).get("paper") or ""), "title": e.get("title", ""),
            "counts": status_counts(results["claims"]) if _is_ledger_record(results) else None,
            "elapsed": e["elapsed"], "cpu": e.get("cpu"), "params": ", ".join(f"{k}={v!r}" for k, v in e.get("parameters", {}).items()),
            "error": e.get("error") or "",
            # built by calibnb.record.reproduction.claims_table_html, which escapes every value
            "claims": Markup(claims)})
    env = jinja2.Environment(loader=jinja2.PackageLoader(__package__, _TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.get_template(_INDEX_TEMPLATE).render(
        preset=preset,
        stability_note=_stability_note(stability), papers=papers, missing=summary["missing"],
        n_ok=sum(e["ok"] for e in entries), generated=generated, statuses=STATUSES, rows=rows)


def collect_claims(entries: Sequence[dict], notebooks: Sequence[str | os.PathLike] = (), *,
                   generated: str | None = None, preset: str | None = None, stability: dict | None = None) -> dict:
    """The content of ``claims.json``: every ledger with its computed statuses and seed stability.

    Parameters
    ----------
    entries : sequence of dict
        The per-notebook entries of :func:`build_report` (with ``results``).
    notebooks : sequence of path
        The notebooks run; a notebook's ledger is ``<its folder>/claims/<stem>.yaml``.
        A notebook whose run wrote no ledger record but has a ledger is listed
        with the ledger's claims and ``status: null`` (not computed).
    preset : str, optional
        The parameter file that ran.
    stability : dict, optional
        The committed seed table (:func:`load_seed_stability`).

    Returns
    -------
    dict
        ``{"generated", "preset", "seeds", "summary": {"lines", "papers"}, "notebooks":
        [{"stem", "paper", "ledger", "ran", "error", "counts", "line", "claims"}]}``;
        each claim as in the results JSON plus ``seed_stability`` (the split over the
        seeds of the committed table, and its text, e.g. "stable 5/5").
    """
    from ..record.reproduction import LedgerError, load_ledger

    generated = generated or _dt.datetime.now().isoformat(timespec="seconds")
    by_stem = {Path(p).stem: Path(p) for p in notebooks}
    summary = claims_summary(entries, stability)
    splits_by_stem = (stability or {}).get("notebooks", {})
    out = []
    for e in entries:
        results = e.get("results")
        path = by_stem.get(e["stem"])
        ledger_file = None if path is None else path.parent / "claims" / f"{e['stem']}.yaml"
        item: dict[str, Any] = {"stem": e["stem"], "paper": None, "ledger": None, "ran": bool(e.get("ok")),
                                "error": e.get("error"), "counts": None, "line": None, "claims": []}
        if _is_ledger_record(results):
            item.update(paper=results.get("paper"), ledger=results.get("ledger"), claims=results["claims"],
                        counts=status_counts(results["claims"]), line=summary["per_paper"][e["stem"]]["line"])
        elif ledger_file is not None and ledger_file.exists():
            try:
                ledger = load_ledger(ledger_file)
            except LedgerError as exc:
                item["error"] = (item["error"] + "\n" if item["error"] else "") + str(exc)
            else:
                item.update(paper=ledger.paper, ledger=str(ledger_file),
                            claims=[dict(c.to_dict(), status=None, sources=[]) for c in ledger.claims.values()])
        splits = splits_by_stem.get(e["stem"], {})
        item["claims"] = [dict(c, seed_stability={"split": splits.get(c.get("id")) or {},
                                                  "text": stability_text(splits.get(c.get("id")))})
                          for c in item["claims"]]
        out.append(item)
    return {"generated": generated, "preset": preset, "seeds": (stability or {}).get("seeds"),
            "summary": {"lines": [p["line"] for p in summary["per_paper"].values()], "papers": summary["papers"]},
            "notebooks": out}


def build_report(
    notebooks: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike,
    *,
    file_params: dict[str, dict[str, Any]] | None = None,
    cli_params: dict[str, Any] | None = None,
    kernel_name: str = "python3",
    timeout: float | None = DEFAULT_CELL_TIMEOUT,
    html_output: bool = True,
    progress: bool = True,
    known_stems: Iterable[str] | None = None,
    preset: str | None = None,
    seed_table: str | os.PathLike | None = None,
) -> list[dict]:
    """Run every notebook into ``out_dir`` and write the index; return its entries.

    See the module docstring for the files written. Each entry is a dict with
    ``stem, title, ok, error, traceback, elapsed, parameters, claims, results,
    notebook, html``. Every parameter is checked first (:func:`plan_report`):
    a mistake raises :class:`ReportUsageError` before any notebook runs or any
    file is written. ``preset`` (the parameter file's name) is shown in the index;
    ``seed_table`` is the committed seed table (default ``data/seed_stability.json``
    beside the notebooks' folder).
    """
    from tqdm.auto import tqdm

    out_dir = Path(out_dir)
    file_params = file_params or {}
    cli_params = cli_params or {}
    paths = [Path(p) for p in notebooks]
    plans = plan_report(paths, file_params, cli_params, known_stems=known_stems)  # raises before any run
    out_dir.mkdir(parents=True, exist_ok=True)
    entries: list[dict] = []
    work = Path(tempfile.mkdtemp(prefix=".report-", dir=out_dir))
    # Figures inline in the executed notebooks (the kernels inherit this); the caller's value is restored below.
    previous_backend = os.environ.get("MPLBACKEND")
    try:
        os.environ["MPLBACKEND"] = INLINE_BACKEND
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
            entry.update(ok=run.ok, error=run.error, traceback=run.traceback, elapsed=run.elapsed, cpu=run.cpu,
                         parameters=params, claims=run.claim_counts(), results=run.results)
            name = stem if run.ok else f"{stem}.failed"
            if tmp_nb.exists():
                if html_output:
                    try:
                        copy_mathjax(out_dir)
                        write_text_atomic(out_dir / f"{name}.html", notebook_to_html(tmp_nb, title=entry["title"]))
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
        if previous_backend is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = previous_backend
    stability = load_seed_stability(seed_table if seed_table is not None else
                                    (paths[0].resolve().parent.parent / "data" / "seed_stability.json"
                                     if paths else None))
    write_text_atomic(out_dir / "index.html", render_index(entries, preset=preset, stability=stability))
    write_json_atomic(out_dir / "claims.json", collect_claims(entries, paths, preset=preset, stability=stability))
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
    parser.add_argument("--timeout", type=float, default=DEFAULT_CELL_TIMEOUT, metavar="SECONDS",
                        help="per-cell execution timeout: a cell running longer, or a kernel that dies, fails "
                             "that notebook (reported in the index) and the next notebook runs "
                             "(default: %(default)g s; 0 disables it)")
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
                               kernel_name=args.kernel, timeout=args.timeout or None, html_output=not args.no_html,
                               progress=not args.no_progress, known_stems=known, preset=args.params)
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
