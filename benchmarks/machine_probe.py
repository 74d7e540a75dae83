"""How fast this machine is right now: a fixed pure-Python and a fixed NumPy workload, timed.

The suite's wall time and the notebooks' CPU times in the README are absolute times on a shared
machine, whose speed moved the same work by a third within one evening (2026-11-26). Run this
before and after a measurement and record its line with it: a reader can then tell a slower
machine from slower code.

    python benchmarks/machine_probe.py            # one line: CPU seconds of each workload (best of --repeat)

The workloads are fixed (no argument changes what they compute): ``python`` is an integer loop, a
dict of strings and a JSON round trip (the interpreter's speed: imports, pytest, pandas' Python
paths); ``numpy`` is five sorts, sums and elementwise passes over 10^7 float64 values and twenty
(500 x 500) products of a (2000, 500) matrix on one BLAS thread (memory bandwidth and BLAS).
Each is timed ``--repeat`` times (CPU time of this process) and the fastest is printed, with the
interpreter that ran them and the load average, so that one preempted repeat does not count.
"""

from __future__ import annotations

import argparse
import json
import os
import time

#: One BLAS thread, as the suite and the report run; set by the command before NumPy loads OpenBLAS.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def python_workload() -> int:
    """Integer arithmetic in a loop, a dict of strings, a JSON round trip of 200,000 records."""
    s = 0
    for i in range(3_000_000):
        s += i * i % 7
    d = {str(i): [i] * 3 for i in range(300_000)}
    records = [{"a": i, "b": str(i) * 3, "c": [1.5, 2.5]} for i in range(200_000)]
    return s + len(d) + len(json.loads(json.dumps(records)))


def numpy_workload() -> float:
    """Sorts, sums and elementwise passes over 10^7 float64 values; (2000, 500) Gram matrices."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.random(10_000_000)
    total = 0.0
    for _ in range(5):
        total += float(np.sort(a)[0] + np.sum(a) + (a * 2.0 + 1.0).max())
    x = rng.random((2000, 500))
    for _ in range(20):
        total += float((x.T @ x)[0, 0])
    return total


def interpreter() -> str:
    """The Python that ran the workloads, e.g. 'CPython 3.11.2 (/usr/bin/python3.11)'.

    The python workload measures the interpreter's build as well as the machine: on 2026-11-26 Debian's
    ``/usr/bin/python3.11`` (its executable carries libpython inside) read 1.55-1.80 s where a pyenv build
    of 3.11.7 that loads ``libpython3.11.so`` read 1.78-1.98 s (three interleaved pairs). Compare a
    reading only with readings of the same interpreter.
    """
    import platform
    import sys

    return f"{platform.python_implementation()} {platform.python_version()} ({os.path.realpath(sys.executable)})"


def cpu(cpuinfo: str | None = None) -> str:
    """The processor, e.g. 'AMD EPYC (family 25, model 17)', from ``/proc/cpuinfo`` (``cpuinfo`` is its text).

    The numpy workload measures the processor's model as well as its load: on 2026-11-27 (19:42-20:11 UTC)
    a host of family 25, model 17 (AMD Zen 4, named 'AMD EPYC' like the hosts before it) read 3.66-3.79 s
    (best of 2, six readings), one ``numpy.sort`` of 10^7 float64 values taking 0.66 s there, where the 162
    readings quoted in README.md and benchmarks/README.md before it read 0.89-1.83 s; its python workload
    read 1.01-1.16 s against 1.13-2.42 s. Compare a numpy reading only with readings on the same processor.
    The sort is most of that difference: NumPy dispatches ``numpy.sort`` to x86-simd-sort's AVX-512 code on
    any processor that has AVX-512, and on Zen 4 its compress-store instruction is microcoded and slow; with
    ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL"`` (the AVX2 code) the same sort of 10^7 doubles took
    0.11 s of CPU on that host instead of 0.69 s (benchmarks/README.md, "Metrics", 2026-11-27 23:30 UTC).
    Where ``/proc/cpuinfo`` cannot be read, ``platform.processor()`` (or 'unknown CPU') stands in.
    """
    import platform

    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            break  # the first processor's block is enough
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name") or platform.processor() or "unknown CPU"
    if "cpu family" in fields and "model" in fields:
        return f"{name} (family {fields['cpu family']}, model {fields['model']})"
    return name


def best_cpu_seconds(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timings of each workload; the fastest is shown (default 3)")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be at least 1; got {args.repeat}")
    py = best_cpu_seconds(python_workload, args.repeat)
    nump = best_cpu_seconds(numpy_workload, args.repeat)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine probe: python {py:.2f} s, numpy {nump:.2f} s of CPU (best of {args.repeat}) on "
          f"{interpreter()}; {cpu()}; load average {load}")
    return 0


if __name__ == "__main__":
    for _name in BLAS_THREADS:
        os.environ.setdefault(_name, "1")
    raise SystemExit(main())
