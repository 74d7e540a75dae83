"""Speed of ``python -m calibnb.audit`` (issue 19, "Speed"): a 10,000 x 100 prediction file in under 60 s.

The file holds a real CIFAR-100 network's outputs (ResNet-20 logits from
``calibnb.data.load_cifar``, turned into probabilities) on the 10,000 test
images, written to a temporary CSV (columns p0..p99, label) and NPZ (``probs``,
``label``). Each is audited end to end as a subprocess at the command's
defaults (200 bootstrap resamples, 50 for the heavy metrics, 5 cross-fitting
folds, 7 recalibration methods): reading and validation, the notebook run by
papermill, HTML conversion. Prints a Markdown table of wall-clock times.

Run: ``CALIBNB_DATA_DIR=... .venv/bin/python benchmarks/bench_audit.py [--repeats 1]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calibnb import data  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--model", default="resnet20")
    args = parser.parse_args()
    out = data.load_cifar("cifar100", args.model)
    probs, labels = out.probs, out.labels
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        frame = pd.DataFrame(probs, columns=[f"p{k}" for k in range(probs.shape[1])])
        frame["label"] = labels
        frame.to_csv(tmp / "cifar100.csv", index=False, float_format="%.9g")
        np.savez(tmp / "cifar100.npz", probs=probs, label=labels)
        for name in ("cifar100.csv", "cifar100.npz"):
            times = []
            for r in range(args.repeats):
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "calibnb.audit", str(tmp / name), "--out",
                                       str(tmp / f"out{r}")], env=env, capture_output=True, text=True)
                times.append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    raise SystemExit(f"audit failed on {name}:\n{proc.stderr}")
            size = (tmp / name).stat().st_size / 1e6
            rows.append((f"audit of {name} (10,000 x 100, {size:.0f} MB)", float(np.median(times))))
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}; CIFAR-100 {args.model}, median of {args.repeats}")
    print("| what | s | target |")
    print("| --- | --- | --- |")
    for what, t in rows:
        print(f"| {what} | {t:.1f} | < 60 s |")


if __name__ == "__main__":
    main()
