"""The JupyterLite site of ``make site`` (tools/build_site.py): its build rules and a real browser.

1. Without a browser: the build refuses a Pyodide wheel whose sha256 differs from
   ``pyodide@0.27.7``'s own lock file (and one that is missing); the licence rule
   carries open and non-commercial data and leaves out files that state no
   licence; ``calibnb.data`` in a browser kernel reads the site's data folder
   (files named *json* under their site names), verifies checksums and never
   downloads; a student's upload (``calibnb.data.add_data_file``) is matched to
   the manifest and verified, an upstream pickle converted and verified.
2. In a real browser: ``site/`` served by ``python -m http.server`` on 127.0.0.1
   (a free port, stopped by its PID), Debian's Chromium driven by Playwright with
   every host but 127.0.0.1 unresolvable; every request the browser makes is
   logged and any to another host fails the test. Notebook 04 and the data
   notebooks 06 and 00 run all their cells in the Pyodide kernel with no error output;
   notebook 05, whose model outputs the site may not carry, first stops at its
   loading cell with the file's name and upstream address; the test then gives the
   setup-check cell's upload button a wrong file (refused) and the mirror's files
   (as a student who downloaded them), and Run All finishes (01 and 02 the same way
   with ``CALIBNB_SITE_SLOW=1``);
   in 04 the perturbation panel's slider is dragged with the mouse and its
   figure must change. The run time of each notebook is printed (for
   benchmarks/README.md).

   One Chromium serves the module, and one Pyodide kernel its notebooks (issue 31: a new kernel's start,
   the site's install cell and the stack's imports were 13-17 s of each notebook's 20-30 s in the browser).
   The first notebook opens a new page and kernel, which proves the student's path from a fresh kernel (the
   install cell is the same in every site notebook); each later one is loaded into that page's notebook tab,
   whose kernel's namespace is emptied first (``%reset -f``), and runs all its cells there. A notebook that leans on
   another's variables fails; what it cannot show is a module imported, or a file verified, by an earlier
   notebook of the same kernel. A test that fails, or leaves files in its kernel (a student's uploads), closes
   the page, so the next notebook starts a new kernel; a stalled run is retried in a new page and kernel.

The browser tests skip, with the reason, when ``site/`` was not built (``make
site``; ``.ci/run`` builds it first) or no Chromium/Playwright is installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from chromium import free_port, launch, need_chromium, stop, wait_until_serving

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
MIRROR = os.environ.get("CALIBNB_DATA_DIR")  # read before any test unsets it
RUN_TIMEOUT_S = 900  # a notebook's Run All in Pyodide on a loaded 2-core machine (about 2 min when idle)
#: A first Run All in a new page that has not finished after this long has stalled (seen in about one CI run
#: of three in 2026-11: the page idle, no CPU used, cause not found); it is retried once in a new page, with
#: a warning in the test report that says how far the stalled run got, and a second stall fails the test. A
#: first Run All takes 20-50 s on a loaded 2-core machine, so a slow run taken for a stall costs time only (the
#: retry has the full RUN_TIMEOUT_S). On 2026-11-26 a stalled run (notebook 00, "0 of 17 code cells ran, kernel
#: idle, connected") had passed a check that the click started the run (the kernel went busy or a prompt showed
#: ``*`` within 20 s), so Run All was taken and its cells never ran; the stall report now also counts the queued
#: prompts.
STALL_S = 150
#: A first Run All whose page shows, this long after the click, no cell run, no prompt ``*`` (queued or running)
#: and an idle kernel has stalled already: JupyterLab marks every cell ``*`` as soon as Run All is taken, so
#: nothing is coming (the stall state every report so far recorded at STALL_S). It is retried at once instead
#: of at STALL_S, which saves about 2 minutes of the suite's wall time when it happens. Before a new page, Run All
#: is clicked once more in the same page, as a student would, with a warning that says whether that ran the
#: cells (then the first click was lost; a new page and a new Pyodide kernel cost about a minute of CPU).
QUIET_STALL_S = 20


#: A JavaScript function: the Run All state of the page's notebook (null if none is open): code cells, those
#: with an execution count, whether one failed, prompts showing ``*`` (queued or running), the kernel's status
#: and connection. Shared by the wait for a Run All and the report of a stall.
_RUN_STATE_JS = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    if (!w || !w.context || !w.context.model) return null;
    const code = w.context.model.toJSON().cells.filter(c => c.cell_type === 'code');
    const k = w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return {code: code.length, ran: code.filter(c => Number.isInteger(c.execution_count)).length,
            failed: code.some(c => (c.outputs || []).some(o => o.output_type === 'error')),
            queued: [...document.querySelectorAll('.jp-InputPrompt')].filter(e => e.textContent.includes('*')).length,
            kernel: k ? k.status : null, connection: k ? k.connectionStatus : null};
}"""


class _Stalled(Exception):
    """A first Run All in a new page stalled (see STALL_S, QUIET_STALL_S)."""


def _build_module():
    spec = importlib.util.spec_from_file_location("build_site", ROOT / "tools" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_site = _build_module()


# ---------------------------------------------------------------------------- the build's rules

def _npm_lock():
    tgz = build_site.CACHE / f"pyodide-{build_site.PYODIDE_VERSION}.tgz"
    if not tgz.is_file():
        pytest.skip(f"the npm package pyodide@{build_site.PYODIDE_VERSION} is not cached (run `make site` once)")
    return json.loads(build_site.read_npm_files(tgz, ["pyodide-lock.json"])["pyodide-lock.json"])


def test_lock_closure_holds_the_scientific_stack_and_its_dependencies():
    lock = _npm_lock()
    needed = build_site.lock_closure(lock, build_site.PYODIDE_ROOTS)
    for name in ["numpy", "scipy", "pandas", "matplotlib", "scikit-learn", "openblas", "joblib", "threadpoolctl",
                 "python-dateutil", "ipython", "prompt-toolkit"]:
        assert name in needed
    assert "pyarrow" not in needed and "statsmodels" not in needed  # nothing the notebooks do not import
    for name in needed:  # closed under depends
        deps = lock["packages"][name].get("depends", [])
        assert all(d.replace("_", "-").lower() in needed for d in deps), (name, deps)


@pytest.mark.parametrize("fault", ["altered", "missing"])
def test_a_wheel_that_does_not_match_the_lock_stops_the_build(tmp_path, fault):
    lock = _npm_lock()
    victim = lock["packages"]["scipy"]["file_name"]

    def read(file_name):
        if file_name != victim:
            return b"x"  # every other file is wrong too, but scipy is the one checked by name below
        return None if fault == "missing" else b"not the wheel"

    with pytest.raises(build_site.BuildError, match="failed verification") as err:
        build_site.stage_pyodide(tmp_path / "pyodide", dist_url=None, source=(read, "a test source"))
    assert victim in str(err.value)
    assert not (tmp_path / "pyodide" / victim).exists()  # nothing unverified is written
    assert not (tmp_path / "pyodide" / "pyodide-lock.json").exists()


def test_licence_rule_carries_open_and_non_commercial_data_and_leaves_out_unlicensed_files():
    manifest = json.loads((ROOT / "data" / "manifest.json").read_text(encoding="utf-8"))
    verdict = {e["file"]: build_site.licence_allows(e) for e in manifest}
    assert verdict["chaosnli/chaosNLI_snli.jsonl"].startswith("CC BY-NC 4.0")  # ChaosNLI's own licence
    assert verdict["chaosnli/predictions/SNLI_dev_roberta-base_0.json"] is None  # the repository states none
    assert verdict["cifar/cifar10_resnet20.npz"] is None
    assert verdict["qa/gpt_preds.json"] is None
    assert verdict["cifar/cifar10_wideresnet_16_4_probs.npz"].startswith("Apache")
    assert verdict["cifar10h/cifar10h-counts.npy"].startswith("CC BY-NC-SA")
    for entry in manifest:
        if entry["licence"].startswith("none stated") and not build_site.CHAOSNLI_OWN.match(entry["file"]):
            assert verdict[entry["file"]] is None, entry["file"]


def test_site_preset_names_only_declared_parameters():
    import nbformat

    preset = build_site.load_params(ROOT / "params" / "site.yaml")
    stems = {p.stem for p in (ROOT / "notebooks").glob(build_site.NOTEBOOKS)}
    assert set(preset) - {"all"} <= stems
    for stem in stems:
        nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
        build_site.params_for(stem, nb, preset)  # raises BuildError on an undeclared name
    # the CIFAR notebooks use networks whose files the site may carry
    manifest = {e["file"]: e for e in json.loads((ROOT / "data" / "manifest.json").read_text(encoding="utf-8"))}
    demo = preset["00_audit_your_model"]["demo_network"]  # the audit's demo network in the site
    assert demo.startswith("cifar10/")
    for name in (preset["03_gupta2021_ks_splines"]["models"] + [preset["06_estimators_with_intervals"]["model"]]
                 + [demo.split("/")[1]]):
        files = [f for f in manifest if f.startswith(f"cifar/cifar10_{name}")]
        assert files and all(build_site.licence_allows(manifest[f]) for f in files), name


# ---------------------------------------------------------------------------- calibnb.data in a browser kernel

@pytest.fixture()
def browser_kernel(tmp_path, monkeypatch):
    """calibnb.data as a Pyodide kernel sees it: sys.platform 'emscripten', the site's data folder."""
    import importlib

    from calibnb import teaching
    from calibnb.data import _registry

    # The packages the kernel has loaded, imported before the platform is faked: a module first imported under
    # 'emscripten' here takes the wrong branch (joblib imports psutil, which refuses it), as none does in Pyodide.
    for module in teaching._VERSIONED:
        importlib.import_module(module)

    site_data = tmp_path / "drive" / "data"
    site_data.mkdir(parents=True)
    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setattr(_registry, "BROWSER_DATA_DIR", site_data)
    monkeypatch.setattr(_registry, "UPLOAD_DIR", tmp_path / "kernel-memory" / "calibnb-uploads")
    monkeypatch.delenv("CALIBNB_DATA_DIR", raising=False)
    return site_data


def test_browser_kernel_reads_the_site_data_with_checksums_and_never_downloads(browser_kernel):
    import calibnb.data as data

    assert data.in_browser()
    assert data.data_dir() == browser_kernel
    text = b"a file the site carries\n"
    entry = data.manifest_entry("cifar10h/LICENSE.txt")
    downloads = []

    def downloader(url, out):  # must never be called in the browser
        downloads.append(url)

    # a file the site does not carry: an error naming it and its licence; no download
    with pytest.raises(data.DataUnavailableError, match="not in this browser copy") as err:
        data.fetch("qa/gpt_preds.json", downloader=downloader)
    assert "none stated" in str(err.value) and "Nothing was downloaded" in str(err.value)
    # a carried file with the wrong bytes is refused
    target = browser_kernel / entry["file"]
    target.parent.mkdir(parents=True)
    target.write_bytes(text)
    with pytest.raises(data.ChecksumMismatchError):
        data.fetch(entry["file"], downloader=downloader)
    assert downloads == []
    # the real file (from the data folder the tests use) is returned from the site's folder
    real = Path(MIRROR) / entry["file"] if MIRROR else None
    if real is not None and real.is_file():
        target.write_bytes(real.read_bytes())
        assert data.fetch(entry["file"], downloader=downloader) == target
    assert downloads == []


def test_site_stores_files_named_json_under_another_name_and_the_kernel_reads_them_there(browser_kernel):
    """JupyterLite parses files named *json* as JSON (a .jsonl read then never returns): the site renames them."""
    import calibnb.data as data
    from calibnb.data._registry import _browser_site_file

    name = "chaosnli/chaosNLI_snli.jsonl"
    site_name = _browser_site_file(name)
    assert "json" not in site_name.rsplit("/", 1)[-1] and site_name.startswith("chaosnli/")
    manifest = json.loads((ROOT / "data" / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest:  # every carried file's site name is distinct and free of "json"
        assert "json" not in _browser_site_file(entry["file"]).rsplit("/", 1)[-1]
    assert len({_browser_site_file(e["file"]) for e in manifest}) == len(manifest)
    if not MIRROR or not (Path(MIRROR) / name).is_file():
        pytest.skip("CALIBNB_DATA_DIR does not hold ChaosNLI")
    (browser_kernel / "chaosnli").mkdir()
    (browser_kernel / site_name).write_bytes((Path(MIRROR) / name).read_bytes())
    assert data.fetch(name) == browser_kernel / site_name
    assert len(data.load_chaosnli("snli")) == 1514


def test_a_file_the_site_does_not_carry_is_named_with_its_address_and_an_upload_is_verified(browser_kernel):
    """The student's route: the error says where to get the file and how to add it; add_data_file checks it."""
    import calibnb.data as data
    from calibnb.data import _registry

    name = "qa/codex_triviaqa_16shot.log"
    entry = data.manifest_entry(name)
    with pytest.raises(data.DataUnavailableError) as err:
        data.fetch(name)
    message = str(err.value)
    for part in (repr(name), entry["url"], "upload button", "sha256", "triviaqa_probs_code002_16shot.log"):
        assert part in message, part
    assert str(browser_kernel) not in message  # no machine path
    # unknown files, wrong bytes under a registered name: refused, nothing kept
    with pytest.raises(ValueError, match="not a file of the data manifest"):
        data.add_data_file("holiday.jpg", b"\xff\xd8")
    with pytest.raises(data.ChecksumMismatchError, match=f"its sha256 is .* {entry['sha256']}"):
        data.add_data_file("triviaqa_probs_code002_16shot.log", b"a truncated download")
    assert not _registry.UPLOAD_DIR.exists() or not any(p.is_file() for p in _registry.UPLOAD_DIR.rglob("*"))
    with pytest.raises(TypeError, match="content must be bytes"):
        data.add_data_file("x.log", "text")
    with pytest.raises(TypeError, match="filename must be"):
        data.add_data_file(3, b"")
    if not MIRROR or not (Path(MIRROR) / name).is_file():
        pytest.skip("CALIBNB_DATA_DIR does not hold the QA files")
    raw = (Path(MIRROR) / name).read_bytes()
    # the upstream name (as downloaded) or the mirror's: both map to the registered file
    for upload_name in ("triviaqa_probs_code002_16shot.log", "codex_triviaqa_16shot.log"):
        kept = data.add_data_file(upload_name, memoryview(raw))
        assert kept == _registry.UPLOAD_DIR / name and kept.read_bytes() == raw
        assert data.fetch(name) == kept
    assert len(data.load_codex_triviaqa()) > 0


def test_setup_check_in_the_browser_shows_the_upload_button_when_files_are_missing(browser_kernel, monkeypatch):
    import calibnb.data as data
    from calibnb import teaching

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    table = teaching.setup_check(datasets=["qa"])
    assert table.loc["data: qa", "status"] == "missing"
    assert "upload button" in table.loc["data: qa", "detail"] and str(browser_kernel) not in table.to_string()
    assert len(shown) == 1 and type(shown[0]).__name__ == "VBox"
    assert type(shown[0].children[0]).__name__ == "FileUpload"
    if MIRROR and all((Path(MIRROR) / f).is_file() for f in data.registry()["file"] if f.startswith("qa/")):
        for f in [f for f in data.registry()["file"] if f.startswith("qa/")]:
            data.add_data_file(f.rsplit("/", 1)[-1], (Path(MIRROR) / f).read_bytes())
        assert teaching.setup_check(datasets=["qa"]).loc["data: qa", "status"] == "ok"
        assert len(shown) == 1  # nothing missing: no button


def test_an_uploaded_upstream_pickle_is_converted_and_verified_as_on_a_desktop(browser_kernel, monkeypatch):
    import pickle

    import numpy as np

    import calibnb.data as data
    from calibnb.data import _registry
    from calibnb.data._arrays import arrays_digest

    name = "cifar/cifar10_resnet20.npz"
    if not MIRROR or not (Path(MIRROR) / name).is_file():
        pytest.skip("CALIBNB_DATA_DIR does not hold the CIFAR outputs")
    entry = data.manifest_entry(name)
    with np.load(Path(MIRROR) / name) as z:
        logits, labels = z["logits"], z["labels"]
    upstream = pickle.dumps((logits, labels.astype(np.uint8).reshape(-1, 1)), protocol=4)  # the upstream's layout
    fake = dict(entry, upstream_sha256=hashlib.sha256(upstream).hexdigest())
    monkeypatch.setattr(_registry, "_manifest", lambda: (fake,))
    kept = data.add_data_file(entry["path"].rsplit("/", 1)[-1], upstream)  # logits_cifar10_resnet20_pretrainedcy.p
    assert kept == _registry.UPLOAD_DIR / name
    with np.load(kept) as z:
        assert arrays_digest({k: z[k] for k in z.files}) == entry["arrays_sha256"]
    assert data.fetch(name) == kept
    # a pickle of other arrays under the upstream hash's name: its conversion fails verification, nothing kept
    kept.unlink()
    changed = logits.copy()
    changed[17, 3] += 1e-3  # one value differs: converted fine, caught by the arrays' checksum
    other = pickle.dumps((changed, labels.astype(np.uint8).reshape(-1, 1)), protocol=4)
    monkeypatch.setattr(_registry, "_manifest", lambda: (dict(fake, upstream_sha256=hashlib.sha256(other).hexdigest()),))
    with pytest.raises(data.ChecksumMismatchError):
        data.add_data_file("logits_cifar10_resnet20_pretrainedcy.p", other)
    assert not any(p.is_file() for p in _registry.UPLOAD_DIR.rglob("*"))


def test_project_files_are_found_in_the_site_when_not_in_a_source_tree(browser_kernel, monkeypatch):
    from calibnb.data import _registry, project_data_path

    (browser_kernel / "sakai2024_examples.json").write_text("{}")
    monkeypatch.setattr(_registry, "MANIFEST_PATH", browser_kernel.parent / "no-tree" / "manifest.json")
    assert project_data_path("sakai2024_examples.json") == browser_kernel / "sakai2024_examples.json"
    with pytest.raises(FileNotFoundError, match="nothing.json not found"):
        project_data_path("nothing.json")
    with pytest.raises(TypeError, match="name must be a str"):
        project_data_path(3)


# ---------------------------------------------------------------------------- the site in a real browser

def _need_site_and_browser() -> dict:
    summary = SITE / "calibnb-site.json"
    if not summary.is_file():
        pytest.skip("site/ is not built: run `make site` (.ci/run builds it before the tests)")
    need_chromium()
    return json.loads(summary.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def served_site():
    """site/ on http://127.0.0.1:<free port>; the server is stopped by its PID."""
    summary = _need_site_and_browser()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(SITE),
                             str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base + "/calibnb-site.json", proc, timeout=30, interval=0.2,
                           failure=lambda: "python -m http.server did not start")
        yield base, summary
    finally:
        stop(proc)


def _is_local(url: str) -> bool:
    return url.startswith(("http://127.0.0.1:", "data:", "blob:", "about:"))


class _Browser:
    def __init__(self, p, base):
        self.requests: list[str] = []
        self.browser = launch(p, offline=True)  # only 127.0.0.1 resolves: what tries to leave is logged below
        self.context = self.browser.new_context(viewport={"width": 1366, "height": 768})
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.context.on("requestfailed", lambda r: self.requests.append(r.url))
        self.base = base
        #: The page whose tab and Pyodide kernel the next notebook reuses (see the module docstring); None: the
        #: next notebook opens a new page.
        self.shared = None

    def run_all(self, notebook: str, page=None):
        """Run All, once more in a new page and kernel if a first run stalls (see STALL_S).

        Without ``page``, the notebook is loaded into the previous one's tab and runs in its kernel (see the
        module docstring), or opens in a new page and kernel if there is none.
        """
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        if page is not None:
            return self._run_all(notebook, page)
        where = "the kernel of the previous notebook" if self.shared is not None else "a new JupyterLite page"
        try:
            return self._run_all(notebook, None, timeout_s=STALL_S, quiet_stall_s=QUIET_STALL_S)
        except (PlaywrightTimeout, _Stalled) as exc:
            when = (f"had run no cell {QUIET_STALL_S} s after each of two clicks, with no cell queued"
                    if isinstance(exc, _Stalled) else f"did not finish in {STALL_S} s")
            warnings.warn(f"{notebook}: Run All in {where} {when} (a stall seen about once in three "
                          f"CI runs, cause not found; {self._stall_state()}); retried once in a new page")
            self.discard_pages()
            return self._run_all(notebook, None)

    def discard_pages(self) -> None:
        """Close every page (their kernels, web workers, go with them): the next notebook opens a new page."""
        for page in self.context.pages:
            page.close()
        self.shared = None

    def _open_in_shared_kernel(self, notebook: str):
        """Load ``notebook`` into the shared page's notebook tab, whose kernel's namespace is emptied first.

        The tab keeps its kernel connection and its widget manager: a second tab moved to the same kernel
        (``changeKernel``) runs its cells, but JupyterLite delivers the kernel's widget messages to the first
        tab's connection only, so the second tab shows no widget (tried: notebook 05's upload button never
        appeared). The tab's title and path stay the first notebook's. The tab must then hold exactly the
        notebook's cells (else a failed load would run the previous notebook again, and pass).
        """
        page = self.shared
        left = page.evaluate("""async (path) => {
            const app = window.jupyterapp;
            const panel = app.shell.currentWidget;
            const file = await app.serviceManager.contents.get(path, {content: true, type: 'notebook'});
            const kernel = panel.sessionContext.session.kernel;
            await kernel.requestExecute({code: '%reset -f', silent: true, store_history: false}).done;
            // what the earlier notebook left in the namespace after the reset: nothing, or this test fails
            const reply = await kernel.requestExecute({silent: true, store_history: false, code: [
                "_calibnb_left = [k for k in globals() if not k.startswith('_')",
                "                 and k not in ('In', 'Out', 'exit', 'quit', 'get_ipython', 'open')]",
                "assert not _calibnb_left, _calibnb_left",
                "del _calibnb_left"].join("\\n")}).done;
            panel.context.model.fromJSON(file.content);
            const text = s => Array.isArray(s) ? s.join('') : s;
            const sources = cells => JSON.stringify(cells.map(c => [c.cell_type, text(c.source)]));
            const loaded = sources(panel.context.model.toJSON().cells) === sources(file.content.cells);
            return [reply.content.status === 'ok' ? '' : `${reply.content.ename}: ${reply.content.evalue}`, loaded];
        }""", notebook)
        left, loaded = left
        assert left == "", f"{notebook}: the shared kernel still holds names of the previous notebook: {left}"
        assert loaded, f"{notebook}: the tab does not hold the notebook's cells after loading it"
        return page

    def _stall_state(self) -> str:
        """How far the newest page's Run All got, for the report of a stall: cells run, the kernel's state."""
        try:
            # wait_for_function, not evaluate: it has a timeout (the function returns a non-empty string at once)
            return self.context.pages[-1].wait_for_function(f"""() => {{
                const s = ({_RUN_STATE_JS})();
                if (!s) return 'no notebook open';
                return `${{s.ran}} of ${{s.code}} code cells ran, ${{s.queued}} prompts show *, kernel ` +
                       (s.kernel ? `${{s.kernel}}, ${{s.connection}}` : 'none');
            }}""", timeout=10_000).json_value()
        except Exception as exc:  # a page that no longer answers says so
            return f"the page did not answer: {type(exc).__name__}"

    def _run_all(self, notebook: str, page=None, timeout_s: float = RUN_TIMEOUT_S, quiet_stall_s: float | None = None):
        """Open ``notebook`` in JupyterLite (or use its open ``page``), Run All, wait for every cell.

        Returns (page, notebook JSON, seconds). A second Run All on the same page keeps the kernel
        (and what was uploaded to it); the outputs are cleared first. With ``quiet_stall_s``, a run that shows
        nothing run, nothing queued and an idle kernel that long after the click raises :class:`_Stalled`.
        """
        if page is None and self.shared is not None:
            page = self._open_in_shared_kernel(notebook)
        elif page is None:
            page = self.context.new_page()
            page.on("worker", lambda w: self.requests.append(w.url))
            page.goto(f"{self.base}/lab/index.html?path={notebook}")
            page.locator(".jp-Notebook").wait_for(timeout=120_000)
            self.shared = page
        else:
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
            page.wait_for_function("""() => window.jupyterapp.shell.currentWidget.context.model.toJSON().cells
                .every(c => c.cell_type !== 'code' || (c.execution_count == null && !(c.outputs || []).length))""",
                                   timeout=30_000)
        page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]").first.wait_for(state="attached",
                                                                                           timeout=120_000)
        start = time.monotonic()
        for click in (1, 2):
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.evaluate("() => { window.calibnbRunAllClicked = Date.now(); }")
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            # Every code cell has an execution count in the notebook's model (the on-screen prompt of a
            # cell whose source is collapsed, as notebook 04's bookkeeping cells are, is empty), or a
            # cell failed (Run All stops there; _check_ran_clean then names the error); or, with quiet_stall_s,
            # the run has stalled (nothing ran or is queued, the kernel idle, that long after the click).
            outcome = page.wait_for_function(f"""(quietMs) => {{
                const s = ({_RUN_STATE_JS})();
                if (!s) return false;
                if (s.failed || (s.code > 0 && s.ran === s.code)) return 'done';
                if (quietMs == null || Date.now() - window.calibnbRunAllClicked < quietMs) return false;
                return (s.ran === 0 && s.queued === 0 && s.kernel === 'idle') ? 'stalled' : false;
            }}""", arg=None if quiet_stall_s is None else quiet_stall_s * 1000, timeout=timeout_s * 1000,
                                             polling=1000).json_value()
            if outcome != "stalled":
                if click == 2:
                    warnings.warn(f"{notebook}: Run All had run no cell {quiet_stall_s} s after the click, with no "
                                  "cell queued; a second click in the same page ran every cell (the first click "
                                  "was lost)")
                break
        if outcome == "stalled":
            raise _Stalled(notebook)
        seconds = time.monotonic() - start
        nb = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.toJSON()")
        print(f"\n[site timing] {notebook}: Run All {seconds:.0f} s in the browser")
        return page, nb, seconds

    def close(self):
        self.browser.close()


@pytest.fixture(scope="module")
def site_browser(served_site):
    """One Chromium for the module's browser tests; the first notebook opens a new page and kernel (module docstring)."""
    from playwright.sync_api import sync_playwright

    base, _ = served_site
    with sync_playwright() as p:
        b = _Browser(p, base)
        try:
            yield b
        finally:
            b.close()


@contextlib.contextmanager
def _visit(b: _Browser, *, keep: bool = True):
    """A test's use of the shared browser: no request may leave the machine, and a page is reused only after a pass.

    A failed test's page is closed (the next notebook then opens a new page and kernel), and so is the page of a
    test that leaves something in its kernel (``keep=False``: a student's uploads).
    """
    start = len(b.requests)
    try:
        yield
    except BaseException:
        b.discard_pages()
        raise
    if not keep:
        b.discard_pages()
    off = sorted({u for u in b.requests[start:] if not _is_local(u)})
    assert off == [], f"the site asked for off-machine resources: {off}"


def _check_ran_clean(nb: dict) -> None:
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, [f"{e['ename']}: {e['evalue'][:300]}" for e in errors]
    assert code and all(c.get("execution_count") for c in code), "not every cell ran"


@pytest.mark.xdist_group("browser")
def test_notebook_04_runs_in_the_browser_site_and_its_slider_redraws(served_site, site_browser):
    from playwright.sync_api import expect

    base, summary = served_site
    assert "04_sakai2024_hmr.ipynb" in summary["notebooks"]
    b = site_browser
    with _visit(b):
        page, nb, _ = b.run_all("04_sakai2024_hmr.ipynb")
        _check_ran_clean(nb)
        source = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert "%pip install -q --no-deps calibnb" in source  # the site's install cell ran first
        slider = page.locator(".widget-slider", has_text="new confidence of instance 7")
        expect(slider).to_have_count(1, timeout=60_000)
        box = slider.locator("xpath=ancestor::div[contains(@class, 'widget-vbox')][1]")
        image = box.locator(".widget-output img")
        slider.scroll_into_view_if_needed()
        expect(slider.locator(".widget-readout")).to_have_text("0.70", timeout=60_000)
        expect(image).to_have_count(1, timeout=60_000)
        before = image.first.get_attribute("src")
        assert before and before.startswith("data:image/png;base64,")
        # drag the handle a little to the left with the mouse, as a student would
        handle = slider.locator(".noUi-handle").bounding_box()
        x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        for dx in (5, 10, 20, 30):
            page.mouse.move(x - dx, y)
        page.mouse.up()
        expect(slider.locator(".widget-readout")).not_to_have_text("0.70", timeout=60_000)
        value = slider.locator(".widget-readout").inner_text().strip()
        assert float(value) < 0.70, value
        expect(box.get_by_text(f"confidence 0.80 → {value}")).to_have_count(1, timeout=120_000)
        deadline = time.monotonic() + 120
        while image.first.get_attribute("src") == before:
            assert time.monotonic() < deadline, "the panel's figure did not change after the slider moved"
            time.sleep(0.5)
        assert image.count() == 1  # replaced, not appended
    assert any("/static/pyodide/" in u for u in b.requests)  # Pyodide came from the site itself


@pytest.mark.xdist_group("browser")
@pytest.mark.parametrize("notebook, files", [
    ("06_estimators_with_intervals.ipynb", ["cifar/cifar10_wideresnet_16_4_probs.npz"]),
    ("00_audit_your_model.ipynb", ["cifar/cifar10_wideresnet_16_4_probs.npz"]),  # the site preset's demo network
])
def test_data_notebook_reads_the_site_data_in_the_browser(served_site, site_browser, notebook, files):
    base, summary = served_site
    assert notebook in summary["notebooks"] and not summary["notebooks"][notebook]["missing_data"]
    assert set(files) <= set(summary["data_files"])
    with _visit(site_browser):
        page, nb, _ = site_browser.run_all(notebook)
        _check_ran_clean(nb)  # a file missing from the site would have stopped a cell with an error
        images = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
        assert images >= 1


#: The files each data notebook needs that the site does not carry (their upstreams state no licence): what
#: a student downloads and uploads. Notebook 05 (Baan et al.'s SNLI model outputs) runs in every test run;
#: 01 (the QA files) and 02 (Baan et al.'s SNLI and MNLI outputs) take longer and run with
#: CALIBNB_SITE_SLOW=1 (the suite's wall time, issue 31); their times are in benchmarks/README.md.
NB05_UPLOADS = [f"chaosnli/predictions/SNLI_{split}_{model}_{seed}.json" for model, seeds in
                [("roberta-base", (0, 1, 2)), ("bert-base-uncased", (0, 1))] for seed in seeds for split in ("dev", "test")]
NB02_UPLOADS = NB05_UPLOADS + [f"chaosnli/predictions/MNLI_{split}_roberta-base_{seed}.json"
                               for seed in (0, 1, 2) for split in ("dev", "test")]
NB01_UPLOADS = ["qa/gpt_preds.json", "qa/RandomForest_calibrator_predictions.json",
                "qa/RandomForest_calibrator_dev_set_predictions.json", "qa/codex_triviaqa_16shot.log",
                # the ledger's two CIFAR networks (LEDGER_CIFAR), loaded whatever the preset's cifar_models; the
                # mirror's .npz (a student's desktop copy; the upstream pickle is accepted too and converted)
                "cifar/cifar10_resnet20.npz", "cifar/cifar100_vgg16_bn.npz"]
_SLOW = pytest.mark.skipif(not os.environ.get("CALIBNB_SITE_SLOW"),
                           reason="the suite's wall time (issue 31): run with CALIBNB_SITE_SLOW=1")


@pytest.mark.xdist_group("browser")
@pytest.mark.parametrize("notebook, uploads", [
    ("05_jiang2024_scalar_labels.ipynb", NB05_UPLOADS),
    pytest.param("01_si2022_macroce_qa.ipynb", NB01_UPLOADS, marks=_SLOW),
    pytest.param("02_baan2022_human_disagreement.ipynb", NB02_UPLOADS, marks=_SLOW),
])
def test_data_notebook_runs_in_the_browser_with_the_files_a_student_uploads(served_site, site_browser, tmp_path,
                                                                          notebook, uploads):
    """The route for data the site may not carry: the loading cell names the file and its address, the
    setup-check cell's upload button takes the student's copy (a wrong one is refused by sha256), and the
    notebook then runs to the end in the same kernel."""
    from playwright.sync_api import expect

    base, summary = served_site
    assert set(uploads) <= set(summary["data_left_out"])  # the site does not carry them
    assert not set(uploads) & set(summary["data_files"])
    if not MIRROR or not all((Path(MIRROR) / f).is_file() for f in uploads):
        pytest.skip("CALIBNB_DATA_DIR does not hold the files the student downloads")
    manifest = {e["file"]: e for e in json.loads((ROOT / "data" / "manifest.json").read_text(encoding="utf-8"))}
    wrong = tmp_path / uploads[0].rsplit("/", 1)[-1]  # the right name, other bytes (a truncated download)
    wrong.write_bytes((Path(MIRROR) / uploads[0]).read_bytes()[:1000])
    b = site_browser
    with _visit(b, keep=False):  # the uploads stay in this kernel: no later notebook runs in it
        page, nb, first = b.run_all(notebook)
        errors = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        assert errors and "DataUnavailableError" in errors[0]["ename"], errors  # Pyodide: "<class '...'>"
        message = errors[0]["evalue"]
        # Run All goes on past a failed cell in JupyterLite: let the queue drain before the upload
        page.wait_for_function("""() => {
            const w = window.jupyterapp.shell.currentWidget;
            const busy = [...document.querySelectorAll('.jp-InputPrompt')].some(e => e.textContent.includes('*'));
            return !busy && w.sessionContext.session.kernel.status === 'idle';
        }""", timeout=RUN_TIMEOUT_S * 1000, polling=1000)
        missing = next(f for f in uploads if repr(f) in message)  # which file, where to get it, how to add it
        assert manifest[missing]["url"] in message and "upload button" in message and "sha256" in message
        button = page.locator(".widget-upload")
        expect(button).to_have_count(1, timeout=60_000)  # the setup-check cell's upload button

        def upload(paths):  # as a student: click the button, pick the files in the file chooser
            button.scroll_into_view_if_needed()
            with page.expect_file_chooser() as chooser:
                button.click()
            chooser.value.set_files(paths)

        upload(str(wrong))
        expect(page.get_by_text("0 of 1 files accepted")).to_have_count(1, timeout=120_000)
        expect(page.get_by_text(f"{wrong.name}': its sha256 is", exact=False)).to_have_count(1)
        upload([str(Path(MIRROR) / f) for f in uploads])
        expect(page.get_by_text(f"{len(uploads)} of {len(uploads)} files accepted")).to_have_count(
            1, timeout=300_000)
        page, nb, second = b.run_all(notebook, page)
        _check_ran_clean(nb)
        images = sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))
        assert images >= 2  # figures in the notebook's outputs (the panels' figures live in their widgets)
        print(f"[site timing] {notebook}: {first:.0f} s to the missing file, {second:.0f} s after the upload")
