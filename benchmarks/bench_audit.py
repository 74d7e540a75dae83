"""Speed of ``python -m calibnb.audit`` (issue 19, "Speed"): a 10,000 x 100 prediction file in under 60 s;
peak memory and time of an audit at 10^5, 10^6 and 10^7 rows of 10 classes (issue 27, ``--scale``).

The file holds a real CIFAR-100 network's outputs (ResNet-20 logits from
``calibnb.data.load_cifar``, turned into probabilities) on the 10,000 test
images, written to a temporary CSV (columns p0..p99, label) and NPZ (``probs``,
``label``). Each is audited end to end as a subprocess at the command's
defaults (200 bootstrap resamples, 50 for the heavy metrics, 5 cross-fitting
folds, 7 recalibration methods): reading and validation, the notebook run by
papermill, HTML conversion. Prints a Markdown table of wall-clock times and
CPU times (the command and its children, the notebook's kernel included), each
also as a ratio to a floor measured in the same run (issue 31): a subprocess
that starts the same interpreter, imports calibnb and reads the same file
(``pandas.read_csv`` / ``numpy.load``), the least any audit of it must do; with
the load average at the start and at the end.

Run: ``CALIBNB_DATA_DIR=... .venv/bin/python benchmarks/bench_audit.py [--repeats 1]``.

``--scale 100000,1000000,10000000`` instead writes a Parquet file of that many
rows of 10-class probabilities (float32, softmax of seeded Gaussian logits
times 2, labels drawn so that the model is overconfident) in row groups of
100,000 rows, audits it as a subprocess (``python -m calibnb.audit FILE --out
DIR`` at its defaults unless ``--audit-args`` says otherwise) and samples every
0.2 s the resident memory of the command and all its descendants (the
notebook's kernel): the table gives the wall time, the peak of that sum and
the peak of the largest single process. Target (issue 27): under 1 GiB at
10^7 rows.
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


def write_scale_file(path: Path, n: int, k: int = 10, seed: int = 0, group: int = 100_000) -> None:
    """n rows of k-class probabilities and a label, written row group by row group (bounded memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    writer = None
    try:
        for start in range(0, n, group):
            m = min(group, n - start)
            z = rng.normal(size=(m, k)) * 2.0
            p = np.exp(z - z.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            label = np.where(rng.uniform(size=m) < 0.75, p.argmax(1), rng.integers(0, k, m))
            table = pa.table({**{f"p{j}": p[:, j].astype(np.float32) for j in range(k)}, "label": label})
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, write_page_checksum=True)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


def run_measured(cmd: list[str], env: dict) -> tuple[float, float, float, subprocess.CompletedProcess]:
    """(wall seconds, peak MiB of the process tree's summed RSS, peak MiB of its largest process, result)."""
    import psutil

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root = psutil.Process(proc.pid)
    peak_sum = peak_one = 0
    while proc.poll() is None:
        try:
            procs = [root] + root.children(recursive=True)
            rss = []
            for p in procs:
                try:
                    rss.append(p.memory_info().rss)
                except psutil.Error:
                    pass
            peak_sum = max(peak_sum, sum(rss))
            peak_one = max(peak_one, max(rss, default=0))
        except psutil.Error:
            pass
        time.sleep(0.2)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    return wall, peak_sum / 2 ** 20, peak_one / 2 ** 20, subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def scale(sizes: list[int], audit_args: list[str], env: dict, keep: str | None) -> None:
    rows = []
    with tempfile.TemporaryDirectory(dir=keep) as tmp:
        tmp = Path(tmp)
        for n in sizes:
            path = tmp / f"preds_{n}.parquet"
            t0 = time.perf_counter()
            write_scale_file(path, n)
            made = time.perf_counter() - t0
            wall, peak_sum, peak_one, proc = run_measured(
                [sys.executable, "-m", "calibnb.audit", str(path), "--out", str(tmp / f"out_{n}"), *audit_args], env)
            if proc.returncode != 0:
                raise SystemExit(f"audit failed at {n} rows:\n{proc.stderr[-3000:]}")
            rows.append((n, path.stat().st_size / 2 ** 20, made, wall, peak_sum, peak_one))
            print(f"{n:,} rows: {wall:.0f} s, peak {peak_sum:.0f} MiB (largest process {peak_one:.0f} MiB)",
                  flush=True)
            path.unlink()
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}; audit options: {' '.join(audit_args) or '(defaults)'}")
    print("| rows x classes | file (MiB) | audit wall time (s) | peak RSS, command + kernel (MiB) | "
          "peak RSS, largest process (MiB) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n, size, made, wall, peak_sum, peak_one in rows:
        print(f"| {n:,} x 10 | {size:.0f} | {wall:.0f} | {peak_sum:.0f} | {peak_one:.0f} |")


FLOOR_CODE = {
    ".csv": "import sys, calibnb, pandas; pandas.read_csv(sys.argv[1])",
    ".npz": "import sys, calibnb, numpy; f = numpy.load(sys.argv[1]); [f[k] for k in f.files]",
}


def run_cpu(cmd: list[str], env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, CPU s of the subprocess and its reaped children, result) of one command."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--model", default="resnet20")
    parser.add_argument("--scale", help="comma-separated row counts: peak memory and time at each (10 classes)")
    parser.add_argument("--audit-args", default="", help="extra options of the audit command in --scale runs")
    parser.add_argument("--tmp", help="folder for the temporary files of --scale (default: the system's)")
    args = parser.parse_args()
    if args.scale:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   MPLBACKEND="Agg")
        scale([int(v) for v in args.scale.split(",")], args.audit_args.split(), env, args.tmp)
        return
    out = data.load_cifar("cifar100", args.model)
    probs, labels = out.probs, out.labels
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    rows = []
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        frame = pd.DataFrame(probs, columns=[f"p{k}" for k in range(probs.shape[1])])
        frame["label"] = labels
        frame.to_csv(tmp / "cifar100.csv", index=False, float_format="%.9g")
        np.savez(tmp / "cifar100.npz", probs=probs, label=labels)
        for name in ("cifar100.csv", "cifar100.npz"):
            times, floors = [], []
            for r in range(args.repeats):  # the floor and the audit alternate: the same state of the machine
                wall, cpu, proc = run_cpu([sys.executable, "-c", FLOOR_CODE[Path(name).suffix], str(tmp / name)],
                                          env)
                if proc.returncode != 0:
                    raise SystemExit(f"floor failed on {name}:\n{proc.stderr}")
                floors.append((wall, cpu))
                wall, cpu, proc = run_cpu([sys.executable, "-m", "calibnb.audit", str(tmp / name), "--out",
                                           str(tmp / f"out{r}")], env)
                if proc.returncode != 0:
                    raise SystemExit(f"audit failed on {name}:\n{proc.stderr}")
                times.append((wall, cpu))
            size = (tmp / name).stat().st_size / 1e6
            rows.append((f"audit of {name} (10,000 x 100, {size:.0f} MB)", *np.median(times, axis=0),
                         *np.median(floors, axis=0)))
    print(f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load_start:.1f} at the start and "
          f"{os.getloadavg()[0]:.1f} at the end; CIFAR-100 {args.model}, median of {args.repeats}")
    print("floor: a subprocess that imports calibnb and reads the file (pandas.read_csv / numpy.load)")
    print("| what | wall s | x floor | CPU s | x floor | floor wall s / CPU s | target |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for what, wall, cpu, f_wall, f_cpu in rows:
        print(f"| {what} | {wall:.1f} | {wall / f_wall:.1f} | {cpu:.1f} | {cpu / f_cpu:.1f} | "
              f"{f_wall:.1f} / {f_cpu:.1f} | < 60 s |")


if __name__ == "__main__":
    main()
