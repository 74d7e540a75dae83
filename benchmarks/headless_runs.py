"""Execute a notebook headless many times under parallel load and report any hang.

Usage (from the repository root, with ``CALIBNB_DATA_DIR`` set)::

    python benchmarks/headless_runs.py                      # 30 runs of notebook 04, 3 at a time
    python benchmarks/headless_runs.py --runs 60 --jobs 4 --notebook notebooks/02_baan2022_human_disagreement.ipynb

Each run is :func:`calibnb.report.run_notebook` (papermill, the report's
settings: headless panels, the default per-cell timeout) in its own process
and session; ``--jobs`` runs go at once, so every run executes while others
load the machine. A run that has not finished ``--hang-after`` seconds after it
started is counted as a hang, and its process group (the run and its kernel) is
killed by PID. Before the fix of issue 20, 2 of 24 runs of notebook 04 hung
forever (nbclient waited after a cell that displayed a live widget).

Prints one line per run and a summary; exits 1 if any run hung or failed.
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

RUN = """
import json, sys
from calibnb.apps.report import run_notebook
r = run_notebook(sys.argv[1], sys.argv[2], parameters={})
print(json.dumps({"ok": r.ok, "error": r.error, "elapsed": r.elapsed}))
"""


def _start(notebook: Path, out: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    return subprocess.Popen([sys.executable, "-c", RUN, str(notebook), str(out)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", default="notebooks/04_sakai2024_hmr.ipynb")
    parser.add_argument("--runs", type=int, default=30, help="number of executions (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=3, help="executions at once (default: %(default)s)")
    parser.add_argument("--hang-after", type=float, default=300.0, metavar="SECONDS",
                        help="a run still going after this long counts as a hang (default: %(default)g)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.jobs < 1 or args.hang_after <= 0:
        parser.error("--runs and --jobs must be >= 1 and --hang-after > 0")
    notebook = (ROOT / args.notebook).resolve()
    if not notebook.exists():
        parser.error(f"--notebook {args.notebook} does not exist")

    results: list[dict] = []
    running: dict[int, tuple[subprocess.Popen, float]] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="headless-runs-") as tmp:
        queue = list(range(1, args.runs + 1))
        while queue or running:
            while queue and len(running) < args.jobs:
                i = queue.pop(0)
                running[i] = (_start(notebook, Path(tmp) / f"run{i}.ipynb"), time.monotonic())
            time.sleep(0.2)
            for i, (proc, t0) in list(running.items()):
                elapsed = time.monotonic() - t0
                if proc.poll() is None and elapsed < args.hang_after:
                    continue
                if proc.poll() is None:
                    _kill(proc)
                    row = {"run": i, "ok": False, "hang": True, "elapsed": elapsed,
                           "error": f"no result after {args.hang_after:g} s (killed)"}
                else:
                    out = proc.stdout.read().strip().splitlines()
                    try:
                        got = json.loads(out[-1])
                    except (IndexError, ValueError):
                        got = {"ok": False, "error": f"runner exited with status {proc.returncode}"}
                    row = {"run": i, "hang": False, "elapsed": elapsed, **got}
                del running[i]
                results.append(row)
                status = "HANG" if row["hang"] else ("ok" if row["ok"] else "FAILED")
                print(f"run {i:3d}: {status:6s} {row['elapsed']:6.1f} s  {row.get('error') or ''}", flush=True)
    total = time.monotonic() - started
    hangs = sum(r["hang"] for r in results)
    failed = sum(not r["ok"] and not r["hang"] for r in results)
    times = sorted(r["elapsed"] for r in results if r["ok"])
    median = times[len(times) // 2] if times else float("nan")
    print(f"{args.runs} runs of {notebook.name}, {args.jobs} at a time, in {total:.0f} s: "
          f"{hangs} hung, {failed} failed; per run median {median:.1f} s, max {max(times, default=float('nan')):.1f} s")
    return 1 if hangs or failed else 0


if __name__ == "__main__":
    sys.exit(main())
