"""Execute the panel notebooks headless many times under parallel load and report any hang.

Usage (from the repository root, with ``CALIBNB_DATA_DIR`` set)::

    python benchmarks/headless_runs.py                       # 30 runs each of 02, 04, 01 (plain papermill), 3 at a time
    python benchmarks/headless_runs.py --runs 10 --notebook notebooks/04_sakai2024_hmr.ipynb
    python benchmarks/headless_runs.py --mode report         # through calibnb's report runner instead
    python benchmarks/headless_runs.py --probe --runs 9 --hang-after 60   # the small probe notebook

Two ways to run a notebook:

* ``--mode plain`` (default): ``papermill.execute_notebook`` exactly as a user
  types ``papermill in.ipynb out.ipynb``: live panels (``CALIBNB_PANELS``
  unset), nbclient's emulation of a frontend's Output widgets, no cell
  timeout. This is how issue 30 saw notebook 02 hang in 2 of about 8 runs.
* ``--mode report``: :func:`calibnb.report.run_notebook` (static panels, the
  report's per-cell timeout), as ``make report`` and the notebook tests run.

Each run is its own process and session; ``--jobs`` runs go at once (the
notebooks interleaved), so every run executes while others load the machine.
A run that has not finished ``--hang-after`` seconds after it started is
counted as a hang: the cell it was executing is read from the output notebook
papermill saves after every cell, and its process group (the run and its
kernel) is killed by PID.

Prints one line per run and a summary per notebook; ``--json`` also writes
every run's row. Exits 1 if any run hung or failed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PANEL_NOTEBOOKS = ("notebooks/02_baan2022_human_disagreement.ipynb", "notebooks/04_sakai2024_hmr.ipynb",
                   "notebooks/01_si2022_macroce_qa.ipynb")

RUN_REPORT = """
import json, sys, time
from calibnb.apps.report import run_notebook
r = run_notebook(sys.argv[1], sys.argv[2], parameters={})
print(json.dumps({"ok": r.ok, "error": r.error, "elapsed": r.elapsed}))
"""

# Plain papermill, as from the command line: no calibnb code between papermill and the kernel.
RUN_PLAIN = """
import json, os, sys, time
from pathlib import Path
os.environ.pop("CALIBNB_PANELS", None)
import papermill as pm
t0 = time.perf_counter()
try:
    pm.execute_notebook(sys.argv[1], sys.argv[2], kernel_name="python3", progress_bar=False,
                        cwd=str(Path(sys.argv[1]).parent))
    error = None
except Exception as exc:
    error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
print(json.dumps({"ok": error is None, "error": error, "elapsed": time.perf_counter() - t0}))
"""


def _start(notebook: Path, out: Path, mode: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    env.pop("CALIBNB_PANELS", None)
    code = RUN_PLAIN if mode == "plain" else RUN_REPORT
    return subprocess.Popen([sys.executable, "-c", code, str(notebook), str(out)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def running_cell(out: Path) -> str:
    """The cell papermill marked as running in the partly written output notebook, as 'index (id): first line'."""
    try:
        nb = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "no output notebook yet"
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("metadata", {}).get("papermill", {}).get("status") == "running":
            source = "".join(cell.get("source", "")).strip().splitlines()
            return f"cell {i} ({cell.get('id')}): {source[0] if source else ''}"
    return "no cell marked running"


def _probe_notebook(folder: Path) -> Path:
    """A notebook of 8 panel cells (a temperature panel built, moved from Python, shown) between plain cells."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells.append(nbformat.v4.new_code_cell(
        "%matplotlib inline\nimport numpy as np\nimport calibnb.widgets as W\nrng = np.random.default_rng(0)\n"
        "conf = rng.beta(5, 1, 300)\ncorrect = rng.uniform(size=300) < conf ** 3"))
    for k in range(8):
        nb.cells.append(nbformat.v4.new_code_cell(
            f"panel = W.temperature_explorer(conf, correct)\n_ = panel.update(temperature={1 + k / 4})\npanel"))
        nb.cells.append(nbformat.v4.new_code_cell("x = sum(range(100000))"))
    path = folder / "probe_panels.ipynb"
    nbformat.write(nb, str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", action="append", default=None,
                        help="a notebook to run (repeatable; default: the panel notebooks 02, 04, 01)")
    parser.add_argument("--runs", type=int, default=30, help="executions of each notebook (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=3, help="executions at once (default: %(default)s)")
    parser.add_argument("--mode", choices=("plain", "report"), default="plain",
                        help="plain papermill with live panels, or calibnb's report runner (default: %(default)s)")
    parser.add_argument("--hang-after", type=float, default=300.0, metavar="SECONDS",
                        help="a run still going after this long counts as a hang (default: %(default)g)")
    parser.add_argument("--json", type=Path, default=None, help="also write every run's row to this JSON file")
    parser.add_argument("--probe", action="store_true",
                        help="run a small probe notebook instead (8 temperature panels, each moved from Python "
                             "between plain cells): the hang of issue 30 in seconds per run, not minutes")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.jobs < 1 or args.hang_after <= 0:
        parser.error("--runs and --jobs must be >= 1 and --hang-after > 0")
    notebooks = []
    probe_dir = tempfile.TemporaryDirectory(prefix="headless-probe-") if args.probe else None
    if probe_dir is not None:
        notebooks.append(_probe_notebook(Path(probe_dir.name)))
    for name in ([] if args.probe else args.notebook or PANEL_NOTEBOOKS):
        path = (ROOT / name).resolve()
        if not path.exists():
            parser.error(f"--notebook {name} does not exist")
        notebooks.append(path)

    results: list[dict] = []
    running: dict[int, tuple[subprocess.Popen, float, Path, Path]] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="headless-runs-") as tmp:
        # Interleaved: run 1 of every notebook, then run 2 of every notebook, ...
        queue = [(i, nb) for i in range(1, args.runs + 1) for nb in notebooks]
        n = 0
        while queue or running:
            while queue and len(running) < args.jobs:
                i, nb = queue.pop(0)
                n += 1
                out = Path(tmp) / f"{nb.stem}.run{i}.ipynb"
                running[n] = (_start(nb, out, args.mode), time.monotonic(), nb, out)
            time.sleep(0.2)
            for k, (proc, t0, nb, out) in list(running.items()):
                elapsed = time.monotonic() - t0
                if proc.poll() is None and elapsed < args.hang_after:
                    continue
                if proc.poll() is None:
                    where = running_cell(out)
                    _kill(proc)
                    row = {"ok": False, "hang": True, "elapsed": elapsed,
                           "error": f"no result after {args.hang_after:g} s (killed); was running {where}"}
                else:
                    lines = proc.stdout.read().strip().splitlines()
                    try:
                        got = json.loads(lines[-1])
                    except (IndexError, ValueError):
                        got = {"ok": False, "error": f"runner exited with status {proc.returncode}"}
                    row = {"hang": False, "elapsed": elapsed, **got}
                row["notebook"] = nb.stem
                del running[k]
                results.append(row)
                status = "HANG" if row["hang"] else ("ok" if row["ok"] else "FAILED")
                print(f"{nb.stem[:2]} run {len(results):3d}: {status:6s} {row['elapsed']:6.1f} s  "
                      f"{row.get('error') or ''}", flush=True)
    total = time.monotonic() - started
    print(f"{len(results)} runs ({args.runs} of each of {len(notebooks)} notebooks, mode {args.mode}), "
          f"{args.jobs} at a time, in {total:.0f} s:")
    for nb in notebooks:
        rows = [r for r in results if r["notebook"] == nb.stem]
        hangs = sum(r["hang"] for r in rows)
        failed = sum(not r["ok"] and not r["hang"] for r in rows)
        times = sorted(r["elapsed"] for r in rows if r["ok"])
        median = times[len(times) // 2] if times else float("nan")
        print(f"  {nb.name}: {len(rows)} runs, {hangs} hung, {failed} failed; per run median {median:.1f} s, "
              f"max {max(times, default=float('nan')):.1f} s")
    if probe_dir is not None:
        probe_dir.cleanup()
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 1 if any(not r["ok"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
