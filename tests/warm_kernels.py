"""Kernels forked from a process that has already imported the scientific stack (test infrastructure, issue 31).

The suite starts about a hundred ``python3`` kernels (every notebook run, the panels' kernels, the report's and
the audit's, JupyterLab's). Each cold kernel spends about 3 s of CPU importing ipykernel, NumPy, SciPy, pandas,
matplotlib and scikit-learn before its first cell does any work. Here one server process per pytest process
imports them once; each kernel is then a ``fork`` of it, which starts in milliseconds with those modules loaded.

How a kernel starts:

1. ``tests/conftest.py`` writes a ``python3`` kernelspec into a folder put first on ``JUPYTER_PATH``, whose
   command is this file's *shim* followed by the venv's own kernel command (``python warm_kernels.py shim
   python -Xfrozen_modules=off -m ipykernel_launcher -f {connection_file}``), and starts the
   server (``python warm_kernels.py serve <socket> ...``) in each pytest process that runs tests. Every process
   the suite starts inherits both, so papermill, nbclient, nbval, ``jupyter_client.start_new_kernel``,
   JupyterLab and the audit command all get warm kernels with no change to their code.
2. The shim is the process Jupyter starts, signals and waits for. It sends the server its arguments, working
   folder and environment, with its standard input, output and error as file descriptors.
3. The server hands the request to the *zygote* of that environment: a process started with the same values
   of every variable read when the interpreter starts or the stack is imported (:data:`IMPORT_TIME_PREFIXES`,
   :data:`IMPORT_TIME_VARIABLES`: ``MPLBACKEND``, ``PYTHONPATH``, ``MALLOC_*``, the thread pools' ...), which
   has imported :data:`PRELOAD`. The zygote of the pytest process's own environment starts with the server;
   another environment's zygote starts at its second kernel (the first two start cold).
4. The zygote forks. The child becomes the kernel exactly as ``python -m ipykernel_launcher`` would: the
   shim's folder, environment, ``sys.argv`` and streams; a new session (its own process group); ``random``
   and NumPy's global generator re-seeded from the OS as a new interpreter's are; the two ipykernel settings
   whose defaults are read from the environment when ipykernel is imported (``JPY_PARENT_PID``,
   ``JPY_INTERRUPT_EVENT``) and matplotlib's backend when the kernel has no ``MPLBACKEND`` (ipykernel then sets
   the inline backend before any cell runs, which a cold kernel's matplotlib reads when imported) are set as
   a cold kernel would have them (tested in ``tests/test_warm_kernels.py``). The shim forwards every
   signal Jupyter sends it (interrupt, terminate) to the kernel's process group, and exits with the kernel's
   exit code. If the shim is killed, the kernel sees its connection close and kills itself; if the shim's
   parent goes away, the shim kills the kernel (as ipykernel's parent poller would).
5. A kernel starts cold (``python -m ipykernel_launcher``, replacing the shim) when there is no server or it
   does not answer, when its folder holds a ``matplotlibrc`` (read at import), and with
   ``CALIBNB_COLD_KERNELS=1``: a test that measures a kernel's own CPU time sets it, since a forked kernel is
   not a child of the process that started it and its CPU time is not in that process's ``RUSAGE_CHILDREN``.
   ``CALIBNB_COLD_KERNELS=1 make test`` runs the whole suite on cold kernels. With
   ``CALIBNB_WARM_KERNEL_LOG=<file>``, the servers write a line per kernel to that file: forked, or cold and why.

Not preloaded: calibnb itself (every kernel imports it afresh, from the folder it runs in), pyplot and seaborn
(pyplot hooks itself into the IPython shell it finds when imported), jsonschema (the report's kernels keep it
from compiling its IRI grammars, ``calibnb.apps._command.KERNEL_EXEC_LINE``, which works only before it is
imported), and anything a notebook imports that calibnb's stack does not. What a notebook does is unchanged;
only the import of the stack is shared.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys

#: Environment variables read when the interpreter starts or the preloaded modules are imported (Python's own,
#: glibc's allocator and loader, thread pools, matplotlib's backend and config folder, locale): kernels fork
#: from the zygote whose environment has the same values of all of them (each such environment has its own).
IMPORT_TIME_PREFIXES = ("PYTHON", "MPL", "MALLOC_", "GLIBC_", "LD_", "OPENBLAS", "OMP_", "MKL_", "KMP_",
                        "NUMEXPR", "VECLIB", "NPY_", "NUMPY_", "SCIPY_", "XDG_", "LC_", "IPYTHON")
IMPORT_TIME_VARIABLES = ("HOME", "LANG", "LANGUAGE", "TZ", "JUPYTER_PLATFORM_DIRS")
#: Set to 1 in a kernel's environment to start it cold.
COLD_VARIABLE = "CALIBNB_COLD_KERNELS"
#: The server's socket, inherited by the shims.
SOCKET_VARIABLE = "CALIBNB_WARM_KERNEL_SOCKET"
#: Imported by the server before it forks (see the module docstring for what is left out).
PRELOAD = (
    "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.comm", "ipykernel.debugger",
    "matplotlib_inline.backend_inline", "numpy", "scipy.stats", "scipy.optimize", "scipy.special",
    "scipy.interpolate", "scipy.sparse", "scipy.linalg", "scipy.integrate", "pandas", "matplotlib",
    "matplotlib.figure", "matplotlib.backends.backend_agg", "matplotlib.animation", "ipywidgets", "sklearn.base",
    "sklearn.utils.validation", "sklearn.model_selection", "sklearn.isotonic", "sklearn.linear_model",
    "sklearn.metrics", "yaml", "jinja2",
)


def _exec_cold(argv: list[str]) -> None:
    """Replace this process with the kernel command of the venv's own kernelspec (``argv``)."""
    os.execv(argv[0], argv)


def _launcher_args(argv: list[str]) -> list[str] | None:
    """The arguments after ``-m ipykernel_launcher`` in ``argv``, or None if it is not such a command."""
    if "-m" in argv and argv[argv.index("-m") + 1:argv.index("-m") + 2] == ["ipykernel_launcher"]:
        return argv[argv.index("-m") + 2:]
    return None


# ------------------------------------------------------------------------------------------ set-up (conftest)

class Server:
    """A running server and the kernelspec that points at it; :meth:`stop` ends both (see the module docstring)."""

    def __init__(self, folder: str, log_path: str | None = None):
        import subprocess

        from jupyter_client.kernelspec import KernelSpecManager

        self.folder = folder
        spec = KernelSpecManager().get_kernel_spec("python3").to_dict()  # the venv's (Makefile), before ours
        # the shim gets the kernel's own command: it runs it as it is for a cold kernel
        spec["argv"] = [sys.executable, os.path.abspath(__file__), "shim", *spec["argv"]]
        kernel_dir = os.path.join(folder, "jupyter", "kernels", "python3")
        os.makedirs(kernel_dir)
        with open(os.path.join(kernel_dir, "kernel.json"), "w", encoding="utf-8") as f:
            json.dump(spec, f, indent=1)
        self.socket = os.path.join(folder, "s")  # a short path: a Unix socket's is at most 107 bytes
        argv = spec["argv"][3:]
        flags = argv[1:argv.index("-m")] if _launcher_args(argv) is not None else []
        args = [sys.executable, os.path.abspath(__file__), "serve", self.socket, json.dumps(flags), log_path or ""]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if line.strip() != b"ready":
            self.stop()
            raise RuntimeError(f"the warm kernel server did not start (it printed {line!r})")
        self._previous = {k: os.environ.get(k) for k in ("JUPYTER_PATH", SOCKET_VARIABLE)}
        paths = [os.path.join(folder, "jupyter")] + [p for p in (os.environ.get("JUPYTER_PATH") or "").split(
            os.pathsep) if p]
        os.environ["JUPYTER_PATH"] = os.pathsep.join(paths)
        os.environ[SOCKET_VARIABLE] = self.socket

    def stop(self) -> None:
        for key, value in getattr(self, "_previous", {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if self.proc.poll() is None:
            self.proc.stdin.close()  # the server's signal to end
            try:
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()


# ------------------------------------------------------------------------------------------ the shim

def shim(argv: list[str]) -> None:
    """Run in the process Jupyter started: have the server fork kernel ``argv``, forward signals, exit as it exits."""
    path = os.environ.get(SOCKET_VARIABLE)
    args = _launcher_args(argv)
    if not path or os.environ.get(COLD_VARIABLE) == "1" or args is None or argv[0] != sys.executable:
        _exec_cold(argv)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        flags = argv[1:argv.index("-m")]  # the interpreter's options (-X...): the zygote runs with the same
        request = json.dumps({"args": args, "flags": flags, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
        request += b"\n"
        socket.send_fds(conn, [request], [0, 1, 2])
        reply = _read_line(conn)
    except OSError:
        reply = None
    if reply is None or not reply.startswith("pid "):
        conn.close()
        _exec_cold(argv)
    child = int(reply.split()[1])

    def forward(signum, _frame):
        try:
            os.killpg(child, signum)
        except OSError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, forward)
    parent = os.getppid()
    while True:
        try:
            ready, _, _ = select.select([conn], [], [], 1.0)
        except InterruptedError:  # pragma: no cover - PEP 475 retries select
            continue
        if ready:
            line = _read_line(conn)
            code = int(line.split()[1]) if line and line.startswith("exit ") else 1
            break
        if os.getppid() != parent:  # whoever started the kernel is gone: as ipykernel's parent poller
            forward(signal.SIGKILL, None)
    conn.close()
    if code < 0:  # the kernel ended by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def _read_line(conn: socket.socket) -> str | None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    return data.decode().strip()


# ------------------------------------------------------------------------------------------ the server

def _import_key(env: dict) -> tuple:
    """The part of an environment that the preloaded modules or the interpreter read at start-up."""
    return tuple(sorted((k, v) for k, v in env.items()
                        if k.startswith(IMPORT_TIME_PREFIXES) or k in IMPORT_TIME_VARIABLES))


def _recv_request(conn: socket.socket, n_fds: int) -> tuple[dict, list[int]]:
    message, fds, _, _ = socket.recv_fds(conn, 1 << 20, n_fds)
    while not message.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            for fd in fds:
                os.close(fd)
            raise OSError("the connection closed mid-request")
        message += more
    return json.loads(message), fds


def serve(path: str, base_flags: list[str], log_path: str | None = None) -> None:
    """Listen on ``path``; hand each request to the zygote of its environment, until stdin closes.

    A zygote is a process started with the request's environment that imports :data:`PRELOAD` and forks
    kernels (:func:`zygote`). The zygote of the server's own environment (the pytest process's, which most
    kernels inherit) starts at once. Another environment's first kernel starts cold (starting a zygote for an
    environment used once costs as much as the cold kernel it spares); its second kernel starts cold too and
    starts its zygote, which forks the kernels after it once it is ready.
    """
    import subprocess

    folder = os.path.dirname(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    log = open(log_path, "a", buffering=1) if log_path else None
    # import key -> {"proc", "socket", "ready", "key", "key_after"}; a zygote is found under the environment it
    # was started with and under the one it has after importing the stack (the values the imports set by
    # ``os.environ.setdefault`` are the ones a cold kernel's imports leave as they were given)
    zygotes: dict[tuple, dict] = {}

    def start_zygote(flags: list[str], env: dict) -> dict:
        sock = os.path.join(folder, f"z{len(zygotes)}")
        proc = subprocess.Popen([sys.executable, *flags, os.path.abspath(__file__), "zygote", sock],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=folder)
        key = (tuple(flags), _import_key(env))
        zygotes[key] = z = {"proc": proc, "socket": sock, "ready": False, "key": key}
        return z

    start_zygote(base_flags, dict(os.environ))  # the environment most kernels inherit: the pytest process's
    seen: dict[tuple, int] = {}  # requests of each environment that has no zygote
    print("ready", flush=True)

    def reply_cold(conn, fds, reason):
        for fd in fds:
            os.close(fd)
        if log:
            log.write(f"cold\t{reason}\n")
        try:
            conn.sendall(b"cold\n")
        except OSError:
            pass
        conn.close()

    while True:
        starting = {z["proc"].stdout: z for z in zygotes.values() if not z["ready"] and z["proc"].poll() is None}
        try:
            ready, _, _ = select.select([listener, sys.stdin, *starting], [], [], 1.0)
        except InterruptedError:  # pragma: no cover
            continue
        if sys.stdin in ready and not sys.stdin.buffer.read1(1):  # the pytest process ended
            break
        for out in [r for r in ready if r in starting]:
            z = starting[out]
            word, _, env_after = out.readline().decode().strip().partition(" ")
            z["ready"] = word == "ready"
            if z["ready"]:  # its environment after the imports: scikit-learn sets two variables (setdefault)
                z["key_after"] = (z["key"][0], _import_key(json.loads(env_after)))
                zygotes.setdefault(z["key_after"], z)
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        try:
            request, fds = _recv_request(conn, 3)
        except (OSError, ValueError):
            conn.close()
            continue
        if len(fds) != 3:
            reply_cold(conn, fds, "the shim sent no streams")
            continue
        if os.path.exists(os.path.join(request["cwd"], "matplotlibrc")):  # matplotlib reads it when imported
            reply_cold(conn, fds, "a matplotlibrc in the kernel's folder")
            continue
        key = (tuple(request["flags"]), _import_key(request["env"]))
        z = zygotes.get(key)
        if z is None:
            seen[key] = seen.get(key, 0) + 1
            first = next(iter(zygotes.values()))
            base, new = dict(first.get("key_after", first["key"])[1]), dict(key[1])
            differ = ", ".join(sorted(k for k in set(base) | set(new) if base.get(k) != new.get(k))) or "options"
            if seen[key] >= 2:  # an environment used twice is likely used again: its zygote starts
                start_zygote(request["flags"], request["env"])
            reply_cold(conn, fds, f"kernel {seen[key]} of an environment with another {differ}")
            continue
        if not z["ready"] or z["proc"].poll() is not None:
            reply_cold(conn, fds, "its zygote is not ready" if z["proc"].poll() is None else "its zygote ended")
            continue
        try:  # the zygote answers the shim on the shim's own connection
            to_zygote = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            to_zygote.connect(z["socket"])
            socket.send_fds(to_zygote, [json.dumps(request).encode() + b"\n"], [conn.fileno(), *fds])
            to_zygote.close()
        except OSError as exc:
            reply_cold(conn, fds, f"its zygote did not take the request: {exc}")
            continue
        for fd in fds:
            os.close(fd)
        conn.close()
        if log:
            log.write(f"warm\t{len(zygotes)}\n")
    listener.close()
    os.unlink(path)
    unique = list({id(z): z for z in zygotes.values()}.values())
    for z in unique:
        z["proc"].stdin.close()  # a zygote's signal to end (it kills the kernels it still has)
    for z in unique:
        try:
            z["proc"].wait(timeout=10)
        except subprocess.TimeoutExpired:
            z["proc"].kill()


def zygote(path: str) -> None:
    """Import :data:`PRELOAD` under this process's environment, then fork a kernel per request until stdin closes."""
    import importlib
    import threading

    script_dir = os.path.dirname(os.path.abspath(__file__))
    base_path = [p for p in sys.path if p and os.path.abspath(p) != script_dir]
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    conns: dict[int, socket.socket] = {}  # kernel pid -> its shim's connection
    print("ready", json.dumps(dict(os.environ)), flush=True)
    while True:
        try:
            ready, _, _ = select.select([listener, sys.stdin], [], [], 0.2)
        except InterruptedError:  # pragma: no cover
            continue
        if sys.stdin in ready and not sys.stdin.buffer.read1(1):  # the server ended
            break
        if listener in ready:
            link, _ = listener.accept()
            try:
                request, fds = _recv_request(link, 4)
            except (OSError, ValueError):
                link.close()
                continue
            link.close()
            conn = socket.socket(fileno=fds[0])
            streams = fds[1:]
            if threading.active_count() != 1:  # never: the zygote starts no thread; fork would copy only one
                raise RuntimeError("the warm kernel zygote runs threads: it cannot fork safely")
            pid = os.fork()
            if pid == 0:
                _become_kernel(conn, streams, request, listener, list(conns.values()), base_path)
            for fd in streams:
                os.close(fd)
            conns[pid] = conn
            try:
                conn.sendall(f"pid {pid}\n".encode())
            except OSError:
                pass
        _reap(conns)
    listener.close()
    for pid in list(conns):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _reap(conns)


def _reap(conns: dict[int, socket.socket]) -> None:
    while conns:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = conns.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
            except OSError:
                pass
            conn.close()


def _become_kernel(conn, fds, request, listener, others, base_path) -> None:
    """In the forked child: become ``python -m ipykernel_launcher <args>`` in the shim's place; never returns."""
    code = 1
    try:
        import atexit
        import random
        import threading

        listener.close()
        for other in others:
            other.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False, buffering=1)
        sys.stderr = open(2, "w", closefd=False, buffering=1)
        sys.path[:] = base_path
        import ipykernel_launcher

        sys.argv = [ipykernel_launcher.__file__, *request["args"]]
        random.seed()
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()

        def watch():  # the shim is gone (killed): so is the kernel
            try:
                while conn.recv(4096):
                    pass
            except OSError:
                pass
            os.kill(os.getpid(), signal.SIGKILL)

        threading.Thread(target=watch, name="warm-kernel-shim-watch", daemon=True).start()
        if not os.environ.get("MPLBACKEND") and "matplotlib" in sys.modules:
            # ipykernel's set-up puts the inline backend in the environment of a kernel that has none, before
            # any cell runs; a cold kernel's matplotlib reads it when imported (the zygote's did not see it)
            sys.modules["matplotlib"].rcParams["backend"] = "module://matplotlib_inline.backend_inline"
        from ipykernel import kernelapp

        # the two traits whose defaults ipykernel reads from the environment when kernelapp is imported
        kernelapp.IPKernelApp.launch_instance(parent_handle=int(os.environ.get("JPY_PARENT_PID") or 0),
                                              interrupt=int(os.environ.get("JPY_INTERRUPT_EVENT") or 0))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    if sys.argv[1] == "shim":
        shim(sys.argv[2:])
    elif sys.argv[1] == "serve":
        serve(sys.argv[2], json.loads(sys.argv[3]), sys.argv[4] or None)
    elif sys.argv[1] == "zygote":
        zygote(sys.argv[2])
    else:
        raise SystemExit(f"usage: {sys.argv[0]} shim ARGS... | serve SOCKET FLAGS LOG | zygote SOCKET")
