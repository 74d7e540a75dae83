"""Speed of calibnb's metrics against NumPy floors and the peer libraries.

Run: ``python benchmarks/bench_metrics.py [--sizes 1000000 10000000] [--repeats 5]``
(``make bench`` installs the ``bench`` extra first). Prints, for each N, the
median wall time of ``--repeats`` runs of each function on the same random
confidences, its ratio to the floors ``numpy.sum(conf)`` and
``numpy.sort(conf)``, and its ratio to the fastest peer ECE (relplot's
``binnedECE``, scikit-learn's ``calibration_curve``, uncertainty-calibration's
``get_ece``; each with 10 equal-width bins). A peer that is not installed is
reported as missing. Nothing here is imported by calibnb itself.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import platform
import statistics
import time

import numpy as np

import calibnb as cb


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def peers(conf, correct_int):
    out = {}
    try:
        from relplot.metrics import binnedECE

        out["relplot.binnedECE"] = lambda: binnedECE(conf, correct_int, nbins=10)
    except ImportError:
        out["relplot.binnedECE"] = None
    try:
        from sklearn.calibration import calibration_curve

        out["sklearn calibration_curve"] = lambda: calibration_curve(correct_int, conf, n_bins=10)
    except ImportError:
        out["sklearn calibration_curve"] = None
    try:
        import calibration as uc

        out["uncertainty-calibration get_ece"] = lambda: uc.get_ece(conf, correct_int, num_bins=10)
    except ImportError:
        out["uncertainty-calibration get_ece"] = None
    return out


def version(dist: str) -> str:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10**6, 10**7])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    print(f"python {platform.python_version()}, numpy {np.__version__}, calibnb {cb.__version__}, "
          f"relplot {version('relplot')}, scikit-learn {version('scikit-learn')}, "
          f"uncertainty-calibration {version('uncertainty-calibration')}; machine {platform.machine()}")
    print(f"median of {args.repeats} runs; ratios: to numpy.sum, to numpy.sort, to the fastest peer\n")
    for n in args.sizes:
        rng = np.random.default_rng(args.seed)
        conf = rng.random(n)
        correct = rng.random(n) < conf  # bool, as calibnb returns it
        correct_int = correct.astype(np.int64)  # the peers expect 0/1 labels
        rows = {
            "floor numpy.sum(conf)": lambda: np.sum(conf),
            "floor numpy.sort(conf)": lambda: np.sort(conf),
        }
        peer_fns = peers(conf, correct_int)
        ours = {
            "calibnb.ece": lambda: cb.ece(conf, correct),
            "calibnb.mce": lambda: cb.mce(conf, correct),
            "calibnb.macro_ce": lambda: cb.macro_ce(conf, correct),
            "calibnb.hmr": lambda: cb.hmr(conf, correct),
            "calibnb.ks_error(ties='order')": lambda: cb.ks_error(conf, correct, ties="order"),
            "calibnb.ks_error(ties='group')": lambda: cb.ks_error(conf, correct, ties="group"),
        }
        # sanity: the peers compute the same ECE (up to their bin-edge conventions)
        ref = cb.ece(conf, correct)
        times = {name: median_ms(fn, args.repeats) for name, fn in rows.items()}
        peer_times = {}
        for name, fn in peer_fns.items():
            peer_times[name] = None if fn is None else median_ms(fn, args.repeats)
        for name, fn in ours.items():
            times[name] = median_ms(fn, args.repeats)
        present = [t for t in peer_times.values() if t is not None]
        fastest = min(present) if present else float("nan")
        t_sum, t_sort = times["floor numpy.sum(conf)"], times["floor numpy.sort(conf)"]
        print(f"N = {n:,}  (calibnb.ece = {ref:.6f})")
        print(f"{'function':<34}{'ms':>10}{'x sum':>9}{'x sort':>9}{'x peer':>9}")
        for name, t in list(times.items())[:2] + [(k, v) for k, v in peer_times.items()] + list(times.items())[2:]:
            if t is None:
                print(f"{name:<34}{'missing':>10}")
                continue
            print(f"{name:<34}{t:>10.1f}{t / t_sum:>9.1f}{t / t_sort:>9.2f}{t / fastest:>9.2f}")
        print()


if __name__ == "__main__":
    main()
