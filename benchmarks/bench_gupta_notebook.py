"""Run time of notebook 03 (Gupta et al. 2021; issue 16, "Under 60 s at defaults").

Targets, on an otherwise idle 2-CPU machine: the notebook at its defaults under
60 s wall time, and under ``params/quick.yaml`` under 15 s of cell time. Prints
the wall time (kernel start included), the summed papermill cell durations,
the load average (on a shared machine the times scale with it) and the five
slowest cells.

Run: ``PYTHONPATH=. CALIBNB_DATA_DIR=... .venv/bin/python benchmarks/bench_gupta_notebook.py [--quick-only]``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from calibnb.apps.report import load_params_file, run_notebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "03_gupta2021_ks_splines.ipynb"
STEM = NOTEBOOK.stem


def run(label: str, params: dict, folder: Path) -> None:
    t0 = time.perf_counter()
    out = folder / f"{label}.ipynb"
    result = run_notebook(NOTEBOOK, out, parameters=params, results_path=folder / f"{label}.json",
                          kernel_name="python3", cwd=NOTEBOOK.parent, timeout=600)
    wall = time.perf_counter() - t0
    if not result.ok:
        raise SystemExit(f"{label}: the notebook failed: {result.error}")
    cells = json.loads(out.read_text(encoding="utf-8"))["cells"]
    durations = [(c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0, i, "".join(c["source"])[:50])
                 for i, c in enumerate(cells) if c["cell_type"] == "code"]
    total = sum(d for d, _, _ in durations)
    print(f"{label}: wall {wall:.1f} s (kernel start included), cells {total:.1f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    for d, i, src in sorted(durations, reverse=True)[:5]:
        print(f"  cell {i:2d}  {d:6.2f} s  {src!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick-only", action="store_true", help="run only the quick preset")
    args = parser.parse_args()
    quick = load_params_file(ROOT / "params" / "quick.yaml")
    params = {**quick.get("all", {}), **quick.get(STEM, {})}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run("quick", params, folder)
        if not args.quick_only:
            run("defaults", {}, folder)


if __name__ == "__main__":
    main()
