"""The suite's warm kernels (tests/warm_kernels.py) behave as ``python -m ipykernel_launcher`` does.

Each test starts kernels through the ``python3`` kernelspec that tests/conftest.py put first on
``JUPYTER_PATH``, with jupyter_client, as papermill and nbval do, and checks from inside the kernel what a cold
kernel would show, and from outside that Jupyter's interrupt, shutdown and kill reach it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import time
from pathlib import Path

import pytest

import warm_kernels

pytestmark = pytest.mark.skipif(not os.environ.get(warm_kernels.SOCKET_VARIABLE),
                                reason="no warm kernel server in this process (CALIBNB_COLD_KERNELS=1)")

PROBE = """
import json, os, sys
print(json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "pgid": os.getpgid(0), "cwd": os.getcwd(),
                  "argv0": sys.argv[0], "marker": os.environ.get("CALIBNB_TEST_MARKER"),
                  "preloaded": "numpy" in sys.modules,
                  "parent_handle": __import__("ipykernel.kernelapp").kernelapp.IPKernelApp.instance().parent_handle,
                  "jpy_parent_pid": os.environ.get("JPY_PARENT_PID"), "calibnb": "calibnb" in sys.modules,
                  "tests_on_path": any(p.rstrip("/").endswith("/tests") for p in sys.path),
                  "draw": __import__("random").random(), "np_draw": __import__("numpy").random.random()}))
"""


def _start(cwd: Path, drop=(), **env):
    from jupyter_client.manager import start_new_kernel

    full = dict(os.environ, CALIBNB_TEST_MARKER=str(cwd), **env)
    for name in drop:
        full.pop(name, None)
    return start_new_kernel(kernel_name="python3", startup_timeout=60, env=full, cwd=str(cwd))


def _start_warm(cwd: Path, drop=(), **env):
    """A kernel forked by a zygote: started again (after a cold one) until its zygote is ready."""
    deadline = time.monotonic() + 90
    while True:
        km, kc = _start(cwd, drop=drop, **env)
        info = json.loads(_run(kc, PROBE)[0])
        if info["pid"] != km.provisioner.process.pid or time.monotonic() > deadline:
            return km, kc, info
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        time.sleep(0.5)


def _run(kc, code: str, timeout: float = 60) -> tuple[str, list[dict]]:
    msg_id = kc.execute(code)
    out, errors = [], []
    deadline = time.monotonic() + timeout
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no idle status within {timeout} s") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            errors.append(msg["content"])
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out), errors


def _gone(pid: int, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_warm_kernel_is_forked_with_the_stack_and_starts_where_and_as_it_was_asked(tmp_path):
    kernels = []
    try:
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            km, kc, info = _start_warm(tmp_path / name)
            kernels.append((km, kc, info))
        seen = []
        for (km, kc, info), name in zip(kernels, ("a", "b")):
            seen.append(info)
            shim = km.provisioner.process.pid
            assert info["pid"] != shim  # forked by the server, not the process Jupyter started
            assert info["pgid"] == info["pid"]  # its own process group, as a kernel Jupyter starts
            assert info["preloaded"] and not info["calibnb"]  # the stack, but not calibnb, came with the fork
            assert info["cwd"] == str(tmp_path / name) and info["marker"] == str(tmp_path / name)
            assert info["argv0"].endswith("ipykernel_launcher.py")
            assert not info["tests_on_path"]  # the server's own folder is not on the kernel's path
            assert info["parent_handle"] == int(info["jpy_parent_pid"]) > 0  # read from the kernel's environment
            text, errors = _run(kc, "import calibnb, sys; print(calibnb.__file__)")
            assert not errors and Path(text.strip()).is_file()
        # each kernel draws its own random numbers, as two new interpreters do
        assert seen[0]["draw"] != seen[1]["draw"] and seen[0]["np_draw"] != seen[1]["np_draw"]
    finally:
        for km, kc, _ in kernels:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def test_interrupt_shutdown_and_kill_reach_the_forked_kernel(tmp_path):
    km, kc, info = _start_warm(tmp_path)
    try:
        assert info["pid"] != km.provisioner.process.pid
        msg_id = kc.execute("import time; time.sleep(60)")
        time.sleep(1.0)
        start = time.monotonic()
        km.interrupt_kernel()  # a signal to the shim's process group, forwarded to the kernel's
        reply = kc.get_shell_msg(timeout=30)
        while reply["parent_header"]["msg_id"] != msg_id:  # the replies to the probe's requests come first
            reply = kc.get_shell_msg(timeout=30)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
        assert time.monotonic() - start < 10
        # the kernel lives on after the interrupt: it evaluates the next request (read from its reply, not from a
        # stream message: once in a fresh-clone run the printed "2" of this request was not seen on iopub)
        after = kc.execute("x = 1 + 1", user_expressions={"x": "x"})
        reply = kc.get_shell_msg(timeout=30)
        while reply["parent_header"]["msg_id"] != after:
            reply = kc.get_shell_msg(timeout=30)
        assert reply["content"]["status"] == "ok"
        assert reply["content"]["user_expressions"]["x"]["data"]["text/plain"] == "2"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)  # a shutdown request: the kernel exits, then the shim
    assert _gone(info["pid"]) and not km.is_alive()

    km, kc, info = _start_warm(tmp_path)
    assert info["pid"] != km.provisioner.process.pid
    kc.stop_channels()
    shim = km.provisioner.process
    os.kill(shim.pid, signal.SIGKILL)  # the shim dies without a word: the kernel must not outlive it
    assert _gone(info["pid"])
    km.cleanup_resources()


@pytest.mark.parametrize("mpl", ["Agg", None], ids=["MPLBACKEND=Agg", "no MPLBACKEND"])
def test_a_kernel_forks_from_a_zygote_of_its_own_import_time_environment(tmp_path, mpl):
    """``MPLBACKEND`` is read when matplotlib is imported. A kernel with another value than the pytest process's
    (or none, as in JupyterLab: ipykernel then sets the inline backend before any cell runs) is first started
    cold, then forked from a zygote started with that value; matplotlib's backend is the one the cold kernel has."""
    probe = PROBE + "import matplotlib; print(matplotlib.get_backend())\n"
    # a matplotlib folder of its own: an import-time environment no other kernel has, whatever this process's
    env = {"MPLBACKEND": mpl, "MPLCONFIGDIR": str(tmp_path / "mplconfig")} if mpl else \
        {"MPLCONFIGDIR": str(tmp_path / "mplconfig")}
    drop = () if mpl else ("MPLBACKEND",)
    seen = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        km, kc = _start(tmp_path, drop=drop, **env)
        try:
            text, errors = _run(kc, probe)
            assert not errors, errors
            lines = text.strip().splitlines()
            info, backend = json.loads(lines[0]), lines[1]
            seen.append((info["pid"] != km.provisioner.process.pid, backend))
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
        if seen[-1][0]:
            break
        time.sleep(0.5)
    assert not seen[0][0] and seen[-1][0], seen  # cold while the zygote starts, then forked
    assert len({backend for _, backend in seen}) == 1, seen  # the same backend, cold or forked
    assert seen[0][1].lower() == (mpl or "module://matplotlib_inline.backend_inline").lower(), seen


def test_cold_kernels_on_request(tmp_path):
    km, kc = _start(tmp_path, **{warm_kernels.COLD_VARIABLE: "1"})
    try:
        info = json.loads(_run(kc, PROBE)[0])
        assert info["pid"] == km.provisioner.process.pid  # the shim replaced itself with ipykernel_launcher
        assert info["argv0"].endswith("ipykernel_launcher.py")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_shim_returns_the_kernels_exit_code(tmp_path):
    km, kc, info = _start_warm(tmp_path)
    assert info["pid"] != km.provisioner.process.pid
    kc.execute("import os; os._exit(7)")
    process = km.provisioner.process
    process.wait(timeout=30)
    assert process.returncode == 7
    kc.stop_channels()
    km.cleanup_resources()


def test_what_the_stacks_imports_set_by_default_needs_no_zygote_of_its_own(tmp_path):
    """scikit-learn's import sets ``KMP_DUPLICATE_LIB_OK`` and ``KMP_INIT_AT_FORK`` with ``os.environ.setdefault``:
    once this process has imported it, the kernels it starts carry both, as the zygote does after its imports.
    Their kernels fork from the pytest process's zygote, with no second zygote and no cold start."""
    import sklearn  # noqa: F401  (sets both in this process, as it does in the zygote)

    values = {name: os.environ[name] for name in ("KMP_DUPLICATE_LIB_OK", "KMP_INIT_AT_FORK")}
    km, kc, info = _start_warm(tmp_path, drop=tuple(values))  # the zygote is ready (its own start-up environment)
    forked = info["pid"] != km.provisioner.process.pid
    kc.stop_channels()
    km.shutdown_kernel(now=True)
    assert forked
    km, kc = _start(tmp_path, **values)
    try:
        info = json.loads(_run(kc, PROBE)[0])
        assert info["pid"] != km.provisioner.process.pid  # forked at the first request
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
