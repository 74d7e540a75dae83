"""benchmarks/machine_probe.py: the line the README records beside each timing (the workloads are stubbed here;
the real ones take about 10 s)."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

PROBE = Path(__file__).resolve().parents[1] / "benchmarks" / "machine_probe.py"


@pytest.fixture()
def probe():
    before = dict(os.environ)
    spec = importlib.util.spec_from_file_location("machine_probe", PROBE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert dict(os.environ) == before  # only the command sets its one BLAS thread, not an import
    return module


def test_probe_prints_the_fastest_repeat_of_each_workload_and_the_load(probe, monkeypatch, capsys):
    times = iter([0.0, 3.0, 10.0, 11.5, 20.0, 22.0,  # python: 3.0, 1.5, 2.0 s
                  30.0, 30.7, 40.0, 40.9, 50.0, 50.4])  # numpy: 0.7, 0.9, 0.4 s
    calls = []
    monkeypatch.setattr(probe.time, "process_time", lambda: next(times))
    monkeypatch.setattr(probe, "python_workload", lambda: calls.append("python"))
    monkeypatch.setattr(probe, "numpy_workload", lambda: calls.append("numpy"))
    assert probe.main(["--repeat", "3"]) == 0
    assert calls == ["python"] * 3 + ["numpy"] * 3
    line = capsys.readouterr().out.strip()
    assert re.fullmatch(r"machine probe: python 1\.50 s, numpy 0\.40 s of CPU \(best of 3\) on "
                        r"\w+ \d+\.\d+\.\d+ \(/\S+\); "
                        r"[^;]+; "
                        r"load average \d+\.\d\d, \d+\.\d\d, \d+\.\d\d", line), line


def test_probe_refuses_a_repeat_below_one(probe, capsys):
    with pytest.raises(SystemExit) as info:
        probe.main(["--repeat", "0"])
    assert info.value.code == 2
    assert "--repeat must be at least 1; got 0" in capsys.readouterr().err


def test_cpu_names_the_first_processors_model_family_and_number(probe):
    info = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
            "model name\t: AMD EPYC\nflags\t\t: fpu avx2\n\n"
            "processor\t: 1\ncpu family\t: 23\nmodel\t\t: 49\nmodel name\t: Other\n")
    assert probe.cpu(info) == "AMD EPYC (family 25, model 17)"


def test_cpu_without_cpuinfo_falls_back_to_the_platform(probe, monkeypatch):
    monkeypatch.setattr("platform.processor", lambda: "arm")
    assert probe.cpu("") == "arm"
    monkeypatch.setattr("platform.processor", lambda: "")
    assert probe.cpu("") == "unknown CPU"
