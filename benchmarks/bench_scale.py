"""Calibration metrics over a Parquet dataset larger than memory: speed and peak memory.

Run: ``nice -n 10 python benchmarks/bench_scale.py [--rows 1000000000] [--dir /tmp/calibnb_bench_scale]``
(needs the ``dask`` and ``bench`` extras). Steps:

1. write a Parquet dataset of ``--rows`` predictions (``conf`` float32, ``correct``
   bool; a seeded generator, one file of ``--file-rows`` rows at a time, row
   groups of 2**20 rows), after checking the free disk space;
2. time each reader in a fresh subprocess and take its peak RSS
   (``ru_maxrss``; for Dask also the workers' peaks):

   * floor: ``pyarrow.dataset`` scan of the two columns, decoded to NumPy;
   * ``calibnb.data.scan_predictions`` (one process, streaming);
   * on a two-worker ``distributed.LocalCluster`` (one thread per worker):
     the floor of Dask's own read (``dd.read_parquet`` with pyarrow dtypes, rows
     counted), ``calibnb.dask.scan_parquet`` (the workers read the files with
     pyarrow), and ``calibnb.dask.calibration_stats`` / exact ``ks_error`` on the
     ``dd.read_parquet`` columns;
   * torchmetrics ``BinaryCalibrationError(n_bins=15)`` with ``update`` per row
     group; it keeps every prediction, so it stops when its RSS passes
     ``--torch-limit-gib`` (2 GiB; ``compute()`` then needs about as much again)
     and the table reports how far it got and its growth per row;

   Times of the Dask rows exclude starting the cluster. After one untimed raw
   scan (the files into the page cache), each method runs ``--repeat`` times
   (3), interleaved, in fresh processes; the table gives the
   median time with its range and the largest peak RSS (torchmetrics runs once);

3. check on the first file (``--file-rows`` rows, 10**7 by default) that the
   streaming, ``scan_parquet`` and Dask results equal the in-memory functions (ECE, MCE, MacroCE,
   HMR, Brier, exact KS in both tie modes, equal-mass ECE);
4. delete the dataset and print a Markdown table.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from machine_probe import cpu  # benchmarks/, the script's folder: the processor's family and model

ROW_GROUP = 1 << 20
SEED = 20261123


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _file_block(i: int, rows: int):
    rng = np.random.default_rng([SEED, i])
    # Top-label confidences of a mildly overconfident classifier: conf in [0.5, 1),
    # accuracy a little below the confidence.
    conf = (0.5 + 0.5 * np.sqrt(rng.uniform(size=rows))).astype(np.float32)
    correct = rng.uniform(size=rows) < (conf.astype(np.float64) - 0.03)
    return conf, correct


def write_dataset(folder: Path, rows: int, file_rows: int) -> float:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=False)
    t0 = time.perf_counter()
    for i, start in enumerate(range(0, rows, file_rows)):
        m = min(file_rows, rows - start)
        conf, correct = _file_block(i, m)
        pq.write_table(pa.table({"conf": conf, "correct": correct}), folder / f"part-{i:05d}.parquet",
                       row_group_size=ROW_GROUP)
    return time.perf_counter() - t0


# ------------------------------------------------------------------ methods (run in a subprocess)


def run_raw(folder: str) -> dict:
    import pyarrow.dataset as pads

    n = 0
    checksum = 0.0
    for batch in pads.dataset(folder, format="parquet").to_batches(columns=["conf", "correct"]):
        c = batch.column(0).to_numpy()
        y = batch.column(1).to_numpy(zero_copy_only=False)
        n += c.shape[0]
        checksum += float(c[:1].sum()) + float(y[:1].sum())
    return {"rows": n}


def run_scan(folder: str) -> dict:
    import calibnb.data

    s = calibnb.data.scan_predictions(folder, progress=False)
    return {"rows": s.n, "ece": s.ece(15), "macro_ce": s.macro_ce(), "ks_bounds": s.ks_bounds()}


def _cluster():
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                                       dashboard_address="127.0.0.1:0", memory_limit="3GiB")
    return cluster, distributed.Client(cluster)


def _worker_peaks(client) -> list[float]:
    def peak():
        import resource as r

        return r.getrusage(r.RUSAGE_SELF).ru_maxrss / 1024.0

    return sorted(client.run(peak).values())


def _on_cluster(work) -> dict:
    """Run ``work()`` (a dict of results) on a fresh two-worker cluster; add its time and the workers' peaks.

    The time starts after the cluster started.
    """
    cluster, client = _cluster()
    try:
        t0 = time.perf_counter()
        out = work()
        out["compute_seconds"] = time.perf_counter() - t0
        out["worker_peak_mib"] = _worker_peaks(client)
        return out
    finally:
        client.close()
        cluster.close()


def _columns(folder: str):
    import dask.dataframe as dd

    df = dd.read_parquet(folder, columns=["conf", "correct"], dtype_backend="pyarrow")
    return df["conf"], df["correct"]


def run_dask(folder: str) -> dict:
    import calibnb.dask as cdask

    def work():
        s = cdask.calibration_stats(*_columns(folder))
        return {"rows": s.n, "ece": s.ece(15)}

    return _on_cluster(work)


def run_dask_scan(folder: str) -> dict:
    import calibnb.dask as cdask

    def work():
        s = cdask.scan_parquet(folder)
        return {"rows": s.n, "ece": s.ece(15)}

    return _on_cluster(work)


def run_dask_floor(folder: str) -> dict:
    import dask.dataframe as dd

    def work():
        df = dd.read_parquet(folder, columns=["conf", "correct"], dtype_backend="pyarrow")
        return {"rows": int(df.map_partitions(len).sum().compute())}

    return _on_cluster(work)


def run_dask_ks(folder: str) -> dict:
    import calibnb.dask as cdask

    def work():
        return {"rows": None, "ks_group": cdask.ks_error(*_columns(folder), ties="group")}

    return _on_cluster(work)


def run_torch(folder: str, limit_gib: float) -> dict:
    import pyarrow.dataset as pads
    import torch
    from torchmetrics.classification import BinaryCalibrationError

    torch.set_num_threads(1)
    metric = BinaryCalibrationError(n_bins=15, norm="l1")
    n = 0
    rss0 = _rss_mib()
    stopped = False
    for batch in pads.dataset(folder, format="parquet").to_batches(columns=["conf", "correct"]):
        c = torch.from_numpy(batch.column(0).to_numpy())
        y = torch.from_numpy(batch.column(1).to_numpy(zero_copy_only=False).astype(np.int64))
        metric.update(c, y)
        n += c.shape[0]
        if _rss_mib() > limit_gib * 1024:
            stopped = True
            break
    t_upd = time.perf_counter()
    rss_before_compute = _rss_mib()
    value = float(metric.compute())
    return {"rows": n, "stopped": stopped, "ece": value, "rss_before_compute_mib": rss_before_compute,
            "growth_bytes_per_row": (rss_before_compute - rss0) * 2**20 / max(n, 1),
            "compute_s": time.perf_counter() - t_upd}


def child(method: str, folder: str, limit_gib: float) -> None:
    runners = {"raw": run_raw, "scan": run_scan, "dask": run_dask, "dask_ks": run_dask_ks,
               "dask_scan": run_dask_scan, "dask_floor": run_dask_floor,
               "torch": lambda f: run_torch(f, limit_gib)}
    if method not in runners:
        raise ValueError(f"unknown method {method!r}; one of {sorted(runners)}")
    t0 = time.perf_counter()
    out = runners[method](folder)
    out["seconds"] = time.perf_counter() - t0
    out["peak_mib"] = _peak_mib()
    print("RESULT " + json.dumps(out))


def measure(method: str, folder: Path, limit_gib: float) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, "--child", method, "--dir", str(folder),
                           "--torch-limit-gib", str(limit_gib)], capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise RuntimeError(f"{method} failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][7:])


# ------------------------------------------------------------------ equality on the first file


def check_subset(path: Path) -> dict:
    import distributed  # noqa: F401
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    import calibnb as cn
    import calibnb.dask as cdask
    import calibnb.data

    table = pq.read_table(path, columns=["conf", "correct"])
    conf = table.column("conf").to_numpy()
    correct = table.column("correct").to_numpy(zero_copy_only=False)
    s = calibnb.data.scan_predictions(path, progress=False)
    ref = {
        "ece15": cn.ece(conf, correct, n_bins=15), "mce15": cn.mce(conf, correct, n_bins=15),
        "macro_ce": cn.macro_ce(conf, correct), "hmr": cn.hmr(conf, correct), "brier": cn.brier_top(conf, correct),
        "ks_order": cn.ks_error(conf, correct, ties="order"), "ks_group": cn.ks_error(conf, correct, ties="group"),
        "ece15_mass": cn.ece(conf, correct, n_bins=15, binning="mass"),
    }
    stream = {"ece15": s.ece(15), "mce15": s.mce(15), "macro_ce": s.macro_ce(), "hmr": s.hmr(),
              "brier": s.brier_top()}
    cluster, client = _cluster()
    try:
        df = dd.read_parquet(str(path), columns=["conf", "correct"])
        c, y = df["conf"], df["correct"]
        dsk = {"ece15": cdask.ece(c, y, n_bins=15), "mce15": cdask.mce(c, y, n_bins=15),
               "macro_ce": cdask.macro_ce(c, y), "hmr": cdask.hmr(c, y), "brier": cdask.brier_top(c, y),
               "ks_order": cdask.ks_error(c, y, ties="order"), "ks_group": cdask.ks_error(c, y, ties="group"),
               "ece15_mass": cdask.ece(c, y, n_bins=15, binning="mass")}
        sp = cdask.scan_parquet(str(path), rows_per_task=3 * ROW_GROUP)
        scan_dask = {"ece15": sp.ece(15), "mce15": sp.mce(15), "macro_ce": sp.macro_ce(), "hmr": sp.hmr(),
                     "brier": sp.brier_top()}
    finally:
        client.close()
        cluster.close()
    diff_stream = max(abs(stream[k] - ref[k]) for k in stream)
    diff_dask = max(abs(dsk[k] - ref[k]) for k in dsk)
    diff_scan_dask = max(abs(scan_dask[k] - ref[k]) for k in scan_dask)
    return {"rows": int(conf.shape[0]), "max_abs_diff_stream": diff_stream, "max_abs_diff_dask": diff_dask,
            "max_abs_diff_scan_parquet": diff_scan_dask, "ref": ref}


# ------------------------------------------------------------------ main


def versions() -> str:
    names = ["numpy", "numba", "pyarrow", "dask", "distributed", "torch", "torchmetrics"]
    out = [f"python {platform.python_version()}"]
    for name in names:
        try:
            out.append(f"{name} {md.version(name)}")
        except md.PackageNotFoundError:
            out.append(f"{name} missing")
    return ", ".join(out)


def machine() -> str:
    model = cpu()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"nproc {os.cpu_count()}, CPU {model!r}, RAM {mem:.0f} GiB, {platform.machine()}"


METHODS = ("raw", "scan", "dask_floor", "dask_scan", "dask", "dask_ks", "torch")


def _summary(runs: list[dict]) -> dict:
    """Median seconds (Dask: without starting the cluster), their range, the largest peaks; fields of the median run."""
    secs = [r.get("compute_seconds", r["seconds"]) for r in runs]
    mid = sorted(range(len(runs)), key=lambda i: secs[i])[len(runs) // 2]
    out = dict(runs[mid])
    out.update(secs=float(np.median(secs)), secs_min=min(secs), secs_max=max(secs), n=len(runs),
               peak_mib=max(r["peak_mib"] for r in runs))
    if "worker_peak_mib" in out:
        out["worker_peak_mib"] = sorted(max(r["worker_peak_mib"][i] for r in runs) for i in range(2))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10**9)
    ap.add_argument("--file-rows", type=int, default=10**7)
    ap.add_argument("--dir", default="/tmp/calibnb_bench_scale")
    ap.add_argument("--torch-limit-gib", type=float, default=2.0)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--keep", action="store_true", help="do not delete the dataset at the end")
    ap.add_argument("--reuse", action="store_true", help="use the dataset already in --dir (written by --keep)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each method (fresh processes); median reported")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.dir, args.torch_limit_gib)
        return
    folder = Path(args.dir)
    if folder.exists() and not args.reuse:
        raise SystemExit(f"{folder} exists; remove it, pass another --dir, or --reuse it")
    if args.reuse and not folder.exists():
        raise SystemExit(f"--reuse: {folder} does not exist")
    need = args.rows * 5.2 / 2**30 * 1.5  # float32 + bool bits, plus headroom
    free = shutil.disk_usage(folder.parent).free / 2**30
    if not args.reuse and free < need + 10:
        raise SystemExit(f"only {free:.0f} GiB free under {folder.parent}; about {need:.0f} GiB needed")
    print(machine())
    print(versions())
    load_start = os.getloadavg()
    print(f"load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f} at the start", flush=True)
    results = {}
    try:
        if not args.reuse:
            t_write = write_dataset(folder, args.rows, args.file_rows)
            size = sum(p.stat().st_size for p in folder.iterdir()) / 2**30
            print(f"wrote {args.rows:,} rows ({size:.2f} GiB) in {t_write:.0f} s", flush=True)
        measure("raw", folder, args.torch_limit_gib)  # untimed: the files into the page cache, as for every later read
        import importlib.util

        have_torch = all(importlib.util.find_spec(m) is not None for m in ("torch", "torchmetrics"))
        methods = METHODS if have_torch else tuple(m for m in METHODS if m != "torch")
        if not have_torch:
            print("torchmetrics: torch or torchmetrics is not installed; its row is left out", flush=True)
        runs: dict = {m: [] for m in methods}
        for k in range(args.repeat):  # interleaved, so a slow spell of the machine hits every method alike
            for method in methods:
                if method == "torch" and k:  # its point is memory growth; once is enough
                    continue
                r = measure(method, folder, args.torch_limit_gib)
                runs[method].append(r)
                print(method, json.dumps(r), flush=True)
        results = {m: _summary(rs) for m, rs in runs.items()}
        # ratio to the raw scan of the same round (same state of the machine), its range over rounds
        raw_secs = [r["seconds"] for r in runs["raw"]]
        for m, rs in runs.items():
            ratios = [raw_secs[k] / r.get("compute_seconds", r["seconds"])
                      * (r["rows"] or runs["raw"][k]["rows"]) / runs["raw"][k]["rows"]  # ks reports no rows
                      for k, r in enumerate(rs)]
            results[m]["round_ratios"] = (min(ratios), max(ratios))
        results["subset"] = check_subset(sorted(folder.iterdir())[0])
        print("subset", json.dumps(results["subset"]), flush=True)
    finally:
        if not args.keep and folder.exists():
            shutil.rmtree(folder)
    raw_rate = results["raw"]["rows"] / results["raw"]["secs"]
    n_total = results["raw"]["rows"]
    rows = [("floor: pyarrow scan of conf + correct (one process)", results["raw"]),
            ("calibnb.data.scan_predictions (one process)", results["scan"]),
            ("floor: Dask read of conf + correct (dd.read_parquet, pyarrow dtypes, len)", results["dask_floor"]),
            ("calibnb.dask.scan_parquet (workers read the files)", results["dask_scan"]),
            ("calibnb.dask.calibration_stats(dd.read_parquet columns)", results["dask"]),
            ("calibnb.dask.ks_error(ties='group'), exact, 2 passes", dict(results["dask_ks"], rows=n_total))]
    if "torch" in results:
        rows.append(("torchmetrics BinaryCalibrationError.update", results["torch"]))
    print()
    print("| method | rows | seconds: median (min-max) | rows/s | x raw scan rate (per-round range) | peak RSS (MiB) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows:
        rate = r["rows"] / r["secs"]
        spread = f"{r['secs']:.1f} ({r['secs_min']:.1f}-{r['secs_max']:.1f})" if r["n"] > 1 else f"{r['secs']:.1f}"
        peak = f"{r['peak_mib']:.0f}"
        if "worker_peak_mib" in r:
            peak += " client; workers " + ", ".join(f"{p:.0f}" for p in r["worker_peak_mib"])
        lo, hi = r["round_ratios"]
        ratio = f"{rate / raw_rate:.2f} ({lo:.2f}-{hi:.2f})" if r["n"] > 1 else f"{rate / raw_rate:.2f}"
        print(f"| {name} | {r['rows']:,} | {spread} | {rate / 1e6:.1f} M | {ratio} | {peak} |")
    load_end = os.getloadavg()
    print(f"\nload average {load_start[0]:.2f} at the start, {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f} "
          "at the end (1, 5, 15 min)")
    print(f"runs per method: {results['raw']['n']} (torchmetrics 1); x raw scan rate = median rate / median raw "
          "rate, in brackets the range of (raw time / method time) over the interleaved rounds; "
          "Dask times exclude starting the cluster")
    if "torch" in results:
        t = results["torch"]
        print(f"\ntorchmetrics: stopped={t['stopped']} after {t['rows']:,} rows; RSS grew "
              f"{t['growth_bytes_per_row']:.1f} bytes/row; compute() took {t['compute_s']:.1f} s")
    else:
        print("\ntorchmetrics: not run (torch or torchmetrics is not installed)")
    s = results["subset"]
    print(f"equality on the first {s['rows']:,} rows: max |stream - in-memory| = {s['max_abs_diff_stream']:.2e}, "
          f"max |dask - in-memory| = {s['max_abs_diff_dask']:.2e}, "
          f"max |scan_parquet - in-memory| = {s['max_abs_diff_scan_parquet']:.2e}")


if __name__ == "__main__":
    main()
