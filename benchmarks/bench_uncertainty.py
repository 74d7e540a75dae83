"""Speed of calibnb's bootstrap intervals and per-bin intervals, against the peers' bootstraps.

Run: ``python benchmarks/bench_uncertainty.py [--n 100000] [--resamples 2000] [--repeats 3]``

Target (issue 18): ``bootstrap_ci(ece, conf, correct)`` with 2,000 resamples at
N = 10^5 under 2 s on 2 cores, and per-bin intervals adding under 10% to
``reliability_table``. Peers, timed in the same run on the same data:

* relplot: its reliability-diagram code bootstraps the calibration error with
  ``scipy.stats.bootstrap((f, y), metric, paired=True, method="basic")`` one
  resample at a time; timed with its ``binnedECE`` (10 bins) as the metric.
* uncertainty-calibration: ``bootstrap_uncertainty`` (the engine of
  ``get_calibration_error_uncertainties``, which fixes 100 resamples) with its
  ECE functional; at N = 10^5 a resample takes seconds, so it is timed on
  ``--peer-resamples`` resamples and the time per resample is scaled to the
  full count (marked "extrapolated").

Every time is also printed as a ratio to a floor measured in the same process
(issue 31), so that runs on different or differently loaded machines compare:
the bootstrap's floor is ``resamples`` passes of ``numpy.sum`` over the N
confidences (a resample must at least read every item once), the table's floor
one ``numpy.sum`` pass over its 10^6 confidences. The header gives the load
average at the start and at the end and the peers' versions.

Nothing here is imported by calibnb itself.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

import calibnb as cb
from bench_metrics import version  # benchmarks/ is the script's directory


def timed(fn, repeats: int) -> float:
    return timed_cpu(fn, repeats)[0]


def timed_cpu(fn, repeats: int) -> tuple[float, float]:
    """Median wall time and median CPU time of this process (all threads), in s.

    On a shared machine the wall time includes waiting for the CPU; the CPU
    time does not (it still includes cache and memory contention).
    """
    walls, cpus = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peer-resamples", type=int, default=5)
    ap.add_argument("--part", choices=("all", "bootstrap", "table"), default="all")
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    n, b = args.n, args.resamples
    conf = rng.uniform(0.3, 1.0, n)
    correct = rng.uniform(size=n) < conf ** 1.5
    y_int = correct.astype(int)
    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy {version('scipy')}, "
          f"calibnb {cb.__version__}, relplot {version('relplot')}, "
          f"uncertainty-calibration {version('uncertainty-calibration')}; {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    print(f"N = {n:,}, {b:,} resamples, median of {args.repeats} runs (peers: 1 run)\n")
    rows = []
    if args.part != "table":
        bootstrap_part(args, conf, correct, y_int, rows)
    if args.part != "bootstrap":
        table_part(args, rng)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


def sum_floor(x: np.ndarray, passes: int, repeats: int) -> tuple[float, float]:
    """Median wall and CPU time of ``passes`` numpy.sum passes over ``x`` (the floor of an O(N) statistic)."""
    def run():
        for _ in range(passes):
            np.sum(x)
    return timed_cpu(run, repeats)


def bootstrap_part(args, conf, correct, y_int, rows) -> None:
    b = args.resamples
    cb.bootstrap_ci(cb.ece, conf[:100], correct[:100], n_resamples=10, seed=0)  # warm-up: imports, thread pool
    for label, kw in [("calibnb bootstrap_ci(ece), percentile", {}),
                      ("calibnb bootstrap_ci(ece, binning='mass')", {"binning": "mass"}),
                      ("calibnb bootstrap_ci(macro_ce)", None),
                      ("calibnb bootstrap_ci(ks_error)", "ks")]:
        if kw is None:
            fn = lambda: cb.bootstrap_ci(cb.macro_ce, conf, correct, n_resamples=b, seed=0)  # noqa: E731
        elif kw == "ks":
            fn = lambda: cb.bootstrap_ci(cb.ks_error, conf, correct, n_resamples=b, seed=0)  # noqa: E731
        else:
            fn = lambda kw=kw: cb.bootstrap_ci(cb.ece, conf, correct, n_resamples=b, seed=0, **kw)  # noqa: E731
        wall, cpu = timed_cpu(fn, args.repeats)
        rows.append((label, wall, "", cpu))

    try:
        from relplot.metrics import binnedECE
        from scipy import stats

        def relplot_boot():
            stats.bootstrap((conf, y_int.astype(float)), lambda f, y: binnedECE(f, y, nbins=10), paired=True,
                            n_resamples=b, method="basic", confidence_level=0.95, rng=np.random.default_rng(0))

        wall, cpu = timed_cpu(relplot_boot, 1)
        rows.append(("relplot scheme: scipy bootstrap of binnedECE", wall, "", cpu))
    except ImportError:
        rows.append(("relplot scheme: scipy bootstrap of binnedECE", float("nan"), "missing", float("nan")))

    try:
        import calibration.utils as uc

        data = list(zip(conf, y_int))

        def functional(d):
            p, y = zip(*d)
            return uc.get_ece(np.array(p), np.array(y), num_bins=10)

        k = args.peer_resamples
        np.random.seed(0)
        wall, cpu = timed_cpu(lambda: uc.bootstrap_uncertainty(data, functional, num_samples=k), 1)
        scale = (b + 2) / (k + 2)  # + the plug-in and the estimate on the full data
        rows.append(("uncertainty-calibration bootstrap_uncertainty", wall * scale,
                     f"extrapolated from {k} resamples", cpu * scale))
    except ImportError:
        rows.append(("uncertainty-calibration bootstrap_uncertainty", float("nan"), "missing", float("nan")))

    floor_wall, floor_cpu = sum_floor(conf, b, args.repeats)
    print(f"floor: {b:,} numpy.sum passes over the {args.n:,} confidences, wall {floor_wall:.3f} s, "
          f"cpu {floor_cpu:.3f} s (median of {args.repeats})")
    print(f"{'bootstrap (' + str(b) + ' resamples)':<52}{'wall s':>9}{'x floor':>9}  {'cpu s':>8}{'x floor':>9}")
    for label, sec, note, cpu in rows:
        print(f"{label:<52}{sec:>9.2f}{sec / floor_wall:>9.1f}  {cpu:>8.2f}{cpu / floor_cpu:>9.1f}  {note}")



def table_part(args, rng) -> None:
    """Per-bin intervals in reliability_table (CPU times: robust to a shared machine)."""
    n_rt = 1_000_000
    c2 = rng.uniform(size=n_rt)
    y2 = rng.uniform(size=n_rt) < c2
    reps = max(9, args.repeats)
    floor = timed_cpu(lambda: np.sum(c2), 5 * reps)[1]
    print(f"\nreliability_table, N = {n_rt:,}, median CPU time of {reps} runs; floor: one numpy.sum pass over "
          f"the confidences, {1e3 * floor:.2f} ms")
    for bins in (15, 100):
        t = cb.reliability_table(c2, y2, n_bins=bins)
        k, m = t["n_correct"].to_numpy(), t["count"].to_numpy()
        base = timed_cpu(lambda: cb.reliability_table(c2, y2, n_bins=bins), reps)[1]
        for interval in ("wilson", "clopper-pearson"):
            full = timed_cpu(lambda: cb.reliability_table(c2, y2, n_bins=bins, interval=interval), reps)[1]
            alone = timed_cpu(lambda: cb.binomial_interval(k, m, method=interval), 5 * reps)[1]
            print(f"  n_bins={bins:<4} {interval:<16} table {1e3 * base:7.1f} ms ({base / floor:.1f}x floor), "
                  f"with interval {1e3 * full:7.1f} ms ({full / floor:.1f}x floor); the interval step alone "
                  f"{1e3 * alone:6.2f} ms = {100 * alone / base:.1f}% of the table")

if __name__ == "__main__":
    main()
