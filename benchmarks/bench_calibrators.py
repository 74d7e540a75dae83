"""Speed of the calibrators (issue 3, "Speed"): prints a Markdown table of median times.

Targets: temperature-scaling fit on 25,000 x 1,000 logits (ImageNet-sized,
Gupta et al. 2021 Table 3) under 2 s; spline fit on 10^6 top-1 scores under 1 s.

The inputs are seeded synthetic logits of an overconfident model: labels are
drawn from softmax(z) and the logits handed to the calibrator are 2 z, so the
fitted temperature should be close to 2 (printed as a sanity check).

Each time is also given as a ratio to a floor measured in the same process on
the same data (issue 31): for a temperature-scaling fit, one pass of the row
log-sum-exp over the logits (``log(exp(z - max).sum(1))``, which every NLL
evaluation does); for the spline fit, one ``numpy.sort`` of the scores (the
fit sorts once); for the spline transform, one ``numpy.sum`` pass. Thread CPU
time, median of ``--repeats`` runs, floors and calibrators run alternately.

Run: ``.venv/bin/python benchmarks/bench_calibrators.py [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from calibnb.calibrators import SplineCalibrator, TemperatureScaling, softmax


def overconfident_logits(n: int, k: int, seed: int, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = (rng.normal(size=(n, k)) * 1.5).astype(dtype)
    z[np.arange(n), rng.integers(0, k, n)] += 6.0
    labels = np.empty(n, dtype=np.int64)
    u = rng.random(n)
    for start in range(0, n, 5000):  # sample labels from softmax(z) in chunks (memory)
        p = softmax(z[start : start + 5000])
        labels[start : start + 5000] = (u[start : start + 5000, None] < np.cumsum(p, axis=1)).argmax(axis=1)
    return 2.0 * z, labels


def median_time(fn, repeats: int, floor=None) -> tuple[float, object, float]:
    """Median thread CPU time of fn, its last result, and the median per-run ratio to ``floor`` (run alternately)."""
    times, ratios, out = [], [], None
    for _ in range(repeats):
        if floor is not None:
            f0 = time.thread_time()
            floor()
            f = time.thread_time() - f0
        t0 = time.thread_time()
        out = fn()
        times.append(time.thread_time() - t0)
        if floor is not None:
            ratios.append(times[-1] / f)
    return float(np.median(times)), out, (float(np.median(ratios)) if ratios else float("nan"))


def logsumexp_pass(z: np.ndarray) -> np.ndarray:
    return np.log(np.exp(z - z.max(axis=1, keepdims=True)).sum(axis=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rows = []

    for n, k, dtype in [(25_000, 1_000, np.float32), (25_000, 1_000, np.float64), (10_000, 100, np.float64)]:
        logits, labels = overconfident_logits(n, k, seed=0, dtype=dtype)
        for objective in ("nll", "ece"):
            t, ts, r = median_time(lambda: TemperatureScaling(objective=objective).fit(logits, labels), args.repeats,
                                   lambda: logsumexp_pass(logits))
            target = "< 2 s" if (n, k, objective) == (25_000, 1_000, "nll") else ""
            rows.append((f"TemperatureScaling(objective={objective!r}).fit, {n:,} x {k:,} {np.dtype(dtype).name}", t,
                         "log-sum-exp pass", r, target, f"tau = {ts.temperature_:.3f}"))

    rng = np.random.default_rng(1)
    n = 1_000_000
    conf = rng.beta(5.0, 1.5, n)
    correct = rng.random(n) < conf**2
    t_fit, cal, r_fit = median_time(lambda: SplineCalibrator().fit(conf, correct), args.repeats, lambda: np.sort(conf))
    t_tr, out, r_tr = median_time(lambda: cal.transform(conf), args.repeats, lambda: np.sum(conf))
    err = float(np.max(np.abs(cal.transform(np.array([0.6, 0.8, 0.95])) - np.array([0.6, 0.8, 0.95]) ** 2)))
    rows.append(("SplineCalibrator().fit, 10^6 top-1 scores", t_fit, "numpy.sort", r_fit, "< 1 s",
                 f"max abs(gamma - true) at 0.6/0.8/0.95 = {err:.3f}"))
    rows.append(("SplineCalibrator.transform, 10^6 scores", t_tr, "numpy.sum", r_tr, "", ""))

    print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"NumPy {np.__version__}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"thread CPU time, median of {args.repeats} runs.\n")
    print("| task | median CPU (s) | floor | x floor | target | check |")
    print("| --- | ---: | --- | ---: | --- | --- |")
    for name, t, floor, ratio, target, check in rows:
        print(f"| {name} | {t:.3f} | {floor} | {ratio:.1f} | {target} | {check} |")


if __name__ == "__main__":
    main()
