"""Speed of calibnb's metrics as ratios to floors measured in the same process (issue 31).

Run: ``python benchmarks/bench_metrics.py [--n 10000000] [--rounds 7] [--big 100000000]``
(``make bench`` installs the ``bench`` extra first). One thread (BLAS and OpenMP
pools are set to 1 before NumPy loads; the kernels are single-threaded).

Data: ``--n`` uniform float64 confidences and bool correctness (``correct =
u < conf``), 15 equal-width bins. The rows marked ``tied:`` take the same
confidences with 12% of them rounded (2% to 2 decimals, 10% to 4), each against
a sort of those (no target: issue 31's are set on the untied data). The floors are ``numpy.sum(conf)`` (one pass
over the confidences: the floor of every O(N) metric) and ``numpy.sort(conf)``
(the floor of the KS error). Every function, floors included, runs once per
round, in the same order, for ``--rounds`` rounds (interleaved, so a burst of
load on the shared machine hits all of them alike); the table gives the median
thread CPU time and the median wall time of each, and its ratio to its floor
(per-round ratios, median). The targets of issue 31 are checked on the CPU-time
ratios and printed with them. The compiled kernels are warmed up (compiled or
loaded from numba's cache) before the rounds.

Then ``--big`` rows of float32 confidences and bool correctness (0.5 GB at
10^8): binned ECE in G rows per second of thread CPU time, against the target
of 0.5 G rows/s per core. ``--big 0`` skips it.

The header gives the machine, the load average (before and after) and the
versions of calibnb's dependencies and of the peers (relplot's ``binnedECE``
and scikit-learn's ``calibration_curve`` in the table, both with 15 equal-width
bins; uncertainty-calibration's ``get_ece`` with ``--slow-peers``, about 7 s a
call at 10^7). Nothing here is imported by calibnb itself.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.metadata as md  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import calibnb as cn  # noqa: E402
# benchmarks/ (the script's folder): the processor's family and model, as the machine probe prints them
from machine_probe import cpu  # noqa: E402

N_BINS = 15

#: Issue 31's targets: (ratio to the floor) per row of the table.
TARGETS = {
    "calibnb.ece": ("sum", 6.0), "calibnb.mce": ("sum", 6.0), "calibnb.reliability_table": ("sum", 6.0),
    "calibnb.macro_ce": ("sum", 2.0), "calibnb.hmr": ("sum", 2.0), "calibnb.ice": ("sum", 2.0),
    "calibnb.ks_error(ties='order')": ("sort", 1.2), "calibnb.ks_error(ties='group')": ("sort", 1.2),
}
BIG_TARGET = 0.5  # G rows/s per core, binned ECE on float32 + bool


def version(dist: str) -> str:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def header() -> str:
    deps = ", ".join(f"{d} {version(d)}" for d in ("numpy", "numba", "llvmlite", "pandas"))
    peers = ", ".join(f"{d} {version(d)}" for d in ("relplot", "scikit-learn", "uncertainty-calibration"))
    return (f"machine: {platform.machine()}, {cpu()}, {os.cpu_count()} CPUs; "
            f"python {platform.python_version()}; calibnb {cn.__version__}; {deps}\n"
            f"peers: {peers}\n"
            f"CALIBNB_KERNEL={os.environ.get('CALIBNB_KERNEL', 'auto')}; "
            f"load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def with_kernel(kernel: str, fn):
    """fn run under CALIBNB_KERNEL=kernel (read at every call)."""
    def run():
        old = os.environ.get("CALIBNB_KERNEL")
        os.environ["CALIBNB_KERNEL"] = kernel
        try:
            return fn()
        finally:
            if old is None:
                del os.environ["CALIBNB_KERNEL"]
            else:
                os.environ["CALIBNB_KERNEL"] = old
    return run


def rounds(fns: dict, n_rounds: int) -> dict:
    """{name: (list of thread CPU s, list of wall s)} over interleaved rounds."""
    out = {name: ([], []) for name in fns}
    for _ in range(n_rounds):
        for name, fn in fns.items():
            c0, w0 = time.thread_time(), time.perf_counter()
            fn()
            out[name][1].append(time.perf_counter() - w0)
            out[name][0].append(time.thread_time() - c0)
    return out


def peers(conf, correct_int, slow: bool) -> dict:
    out = {}
    try:
        from relplot.metrics import binnedECE

        out["relplot.binnedECE"] = lambda: binnedECE(conf, correct_int, nbins=N_BINS)
    except ImportError:
        pass
    try:
        from sklearn.calibration import calibration_curve

        out["sklearn calibration_curve"] = lambda: calibration_curve(correct_int, conf, n_bins=N_BINS)
    except ImportError:
        pass
    if slow:
        try:
            import calibration as uc

            out["uncertainty-calibration get_ece"] = lambda: uc.get_ece(conf, correct_int, num_bins=N_BINS)
        except ImportError:
            pass
    return out


def with_ties(conf: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``conf`` with 2% of its items rounded to 2 decimals and 10% to 4 (tie groups of about 2,000 and 100 at
    10^7, most mixing right and wrong items), at random places: the ties of rounded scores, where the KS error in
    "order" mode and equal-mass bins must keep the input order inside each group."""
    out = conf.copy()
    n = out.shape[0]
    pick = rng.permutation(n)
    two, four = pick[: n // 50], pick[n // 50: n // 50 + n // 10]
    out[two] = np.round(out[two], 2)
    out[four] = np.round(out[four], 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--big", type=int, default=10**8, help="rows of the float32 throughput run (0: skip)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--slow-peers", action="store_true", help="also time uncertainty-calibration's get_ece")
    args = ap.parse_args()
    print(header())

    rng = np.random.default_rng(args.seed)
    conf = rng.random(args.n)
    correct = rng.random(args.n) < conf
    correct_int = correct.astype(np.int64)  # the peers expect 0/1 labels

    tied = with_ties(conf, rng)  # the same confidences, 12% of them rounded into tie groups
    fns = {"floor numpy.sum(conf)": lambda: np.sum(conf), "floor numpy.sort(conf)": lambda: np.sort(conf)}
    fns |= peers(conf, correct_int, args.slow_peers)
    fns |= {
        "calibnb.ece": lambda: cn.ece(conf, correct, n_bins=N_BINS),
        "calibnb.mce": lambda: cn.mce(conf, correct, n_bins=N_BINS),
        "calibnb.reliability_table": lambda: cn.reliability_table(conf, correct, n_bins=N_BINS),
        "calibnb.macro_ce": lambda: cn.macro_ce(conf, correct),
        "calibnb.hmr": lambda: cn.hmr(conf, correct),
        "calibnb.ice": lambda: cn.ice(conf, correct),
        "calibnb.rewards": lambda: cn.rewards(conf, correct),
        "calibnb.brier_top": lambda: cn.brier_top(conf, correct),
        "calibnb.ks_error(ties='order')": lambda: cn.ks_error(conf, correct, ties="order"),
        "calibnb.ks_error(ties='group')": lambda: cn.ks_error(conf, correct, ties="group"),
        "calibnb.ece(binning='mass')": lambda: cn.ece(conf, correct, n_bins=N_BINS, binning="mass"),
        "tied: floor numpy.sort(conf)": lambda: np.sort(tied),
        "tied: ks_error(ties='order')": lambda: cn.ks_error(tied, correct, ties="order"),
        "tied: ks_error(ties='group')": lambda: cn.ks_error(tied, correct, ties="group"),
        "tied: ece(binning='mass')": lambda: cn.ece(tied, correct, n_bins=N_BINS, binning="mass"),
        "calibnb.ece, NumPy path": with_kernel("numpy", lambda: cn.ece(conf, correct, n_bins=N_BINS)),
        "calibnb.macro_ce, NumPy path": with_kernel("numpy", lambda: cn.macro_ce(conf, correct)),
    }
    # warm-up: compile (or load from numba's cache) and check that both paths agree
    compiled, plain = fns["calibnb.ece"](), fns["calibnb.ece, NumPy path"]()
    assert compiled == plain, (compiled, plain)
    for fn in fns.values():
        fn()

    res = rounds(fns, args.rounds)
    floors = {"sum": "floor numpy.sum(conf)", "sort": "floor numpy.sort(conf)"}
    tied_floor = "tied: floor numpy.sort(conf)"
    print(f"\nN = {args.n:,} float64 conf, bool correct, {N_BINS} bins; {args.rounds} interleaved rounds, "
          f"medians; calibnb.ece = {compiled:.6f}")
    print(f"{'function':<34}{'CPU ms':>9}{'wall ms':>9}{'floor':>6}{'x floor':>9}{'(wall)':>8}{'target':>8}  met")
    met_all = True
    for name, (cpu, wall) in res.items():
        sorts = "ks_error" in name or "sort" in name or "mass" in name
        kind = TARGETS.get(name, ("sort" if sorts else "sum", None))[0]
        fc, fw = res[tied_floor if name.startswith("tied:") else floors[kind]]
        ratio = statistics.median(c / f for c, f in zip(cpu, fc))
        ratio_wall = statistics.median(c / f for c, f in zip(wall, fw))
        target = TARGETS.get(name, (kind, None))[1]
        verdict = ""
        if target is not None:
            ok = ratio <= target
            met_all &= ok
            verdict = "yes" if ok else "NO"
        print(f"{name:<34}{1e3 * statistics.median(cpu):>9.2f}{1e3 * statistics.median(wall):>9.2f}{kind:>6}"
              f"{ratio:>9.2f}{ratio_wall:>8.2f}{'' if target is None else f'<= {target:g}':>8}  {verdict}")

    if args.big:
        del conf, correct, correct_int, fns, res
        conf32 = rng.random(args.big, dtype=np.float32)
        correct = rng.random(args.big, dtype=np.float32) < conf32
        cn.ece(conf32, correct, n_bins=N_BINS)
        big = rounds({"floor numpy.sum(conf32)": lambda: np.sum(conf32),
                      "calibnb.ece(float32, bool)": lambda: cn.ece(conf32, correct, n_bins=N_BINS)},
                     max(3, args.rounds // 2))
        cpu = statistics.median(big["calibnb.ece(float32, bool)"][0])
        wall = statistics.median(big["calibnb.ece(float32, bool)"][1])
        floor = statistics.median(big["floor numpy.sum(conf32)"][0])
        rate = args.big / cpu / 1e9
        ok = rate >= BIG_TARGET
        met_all &= ok
        print(f"\nN = {args.big:,} float32 conf, bool correct, {N_BINS} bins: calibnb.ece {1e3 * cpu:.0f} ms CPU "
              f"({1e3 * wall:.0f} ms wall), {rate:.2f} G rows/s per core (target >= {BIG_TARGET}: "
              f"{'yes' if ok else 'NO'}); {cpu / floor:.2f}x numpy.sum(conf32) ({1e3 * floor:.0f} ms)")
    print(f"\nload average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"every target met: {'yes' if met_all else 'NO'}")


if __name__ == "__main__":
    main()
