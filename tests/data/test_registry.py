"""The data registry: manifest, cache resolution, verification, downloads, pickle conversion.

Tests that read the shared mirror use ``CALIBNB_DATA_DIR`` (CI sets it to
``../shared/data``); they are skipped, with the reason shown, only when no
mirror exists at all. Network access is never used: downloads go through fake
downloaders.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from calibnb.data import _registry
from calibnb.data import (
    ChecksumMismatchError,
    DataUnavailableError,
    UnsafePickleError,
    data_dir,
    fetch,
    manifest_entry,
    registry,
)
from calibnb.data._arrays import arrays_digest, pickle_to_npz_bytes

from data_mirror import MIRROR, ROOT, needs_mirror  # noqa: E402
ENTRIES = [e for e in json.loads((ROOT / "data" / "manifest.json").read_text())]
FILES = [e["file"] for e in ENTRIES]
SMALL_JSON = "qa/RandomForest_calibrator_dev_set_predictions.json"
CONVERTED = "cifar/cifar10_resnet20.npz"


@pytest.fixture(autouse=True)
def _fresh_verification_memo():
    _registry._VERIFIED.clear()
    yield
    _registry._VERIFIED.clear()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _serving(data: bytes, calls: list | None = None):
    """A fake downloader that serves ``data`` for any URL."""

    def downloader(url, out):
        if calls is not None:
            calls.append(url)
        out.write(data)

    return downloader


def _offline(url, out):
    raise OSError("[Errno -3] Temporary failure in name resolution (simulated: no network)")


# --- the manifest -------------------------------------------------------------------------------


def test_manifest_records_provenance_and_licences():
    reg = registry()
    assert len(reg) == len(ENTRIES) == 44
    assert reg["file"].is_unique
    for col in ("url", "licence", "sha256", "upstream_sha256", "description"):
        assert reg[col].map(lambda v: isinstance(v, str) and len(v) > 0).all(), col
    assert reg["url"].str.startswith("https://raw.githubusercontent.com/").all()
    assert reg["sha256"].str.fullmatch(r"[0-9a-f]{64}").all()
    # Converted files are exactly those whose upstream is not already an .npz.
    for e in ENTRIES:
        assert e["converted"] == (e["file"].endswith(".npz") and not e["path"].endswith(".npz")), e["file"]
        if e["converted"]:
            assert e["sha256"] != e["upstream_sha256"]
            assert set(e["arrays"]) == set(e["dtypes"]) and len(e["arrays_sha256"]) == 64
        else:
            assert e["sha256"] == e["upstream_sha256"]
    assert int(reg["converted"].sum()) == 13
    assert "CC BY-NC-SA 4.0" in set(reg["licence"])


@needs_mirror
def test_manifest_matches_the_shared_mirror_manifest():
    shared = {e["file"]: e for e in json.loads((MIRROR / "MANIFEST.json").read_text())}
    assert set(shared) == set(FILES)
    for e in ENTRIES:
        s = shared[e["file"]]
        for key in ("url", "upstream_sha256", "sha256", "bytes", "licence", "repo", "commit", "path"):
            assert e[key] == s[key], (e["file"], key)
        if "arrays" in s:
            assert e["arrays"] == s["arrays"]
        assert e.get("accuracy") == s.get("accuracy")


def test_manifest_entry_unknown_name_suggests_close_matches():
    with pytest.raises(ValueError, match=r"not in the data manifest.*Did you mean 'cifar/cifar10_resnet20.npz'"):
        manifest_entry("cifar/cifar10_resnet2.npz")
    with pytest.raises(TypeError, match="name must be a str"):
        manifest_entry(3)


def test_no_third_party_data_file_is_committed():
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    registered = {e["sha256"] for e in ENTRIES} | {e["upstream_sha256"] for e in ENTRIES}
    for rel in filter(None, listed.decode().split("\0")):
        path = ROOT / rel
        if path.is_file():
            assert _sha(path.read_bytes()) not in registered, f"{rel} is a registered third-party data file"


# --- cache resolution -------------------------------------------------------------------------------


def test_data_dir_resolution_order(monkeypatch, tmp_path):
    monkeypatch.setenv("CALIBNB_DATA_DIR", str(tmp_path / "env"))
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert data_dir() == tmp_path / "env"
    monkeypatch.delenv("CALIBNB_DATA_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_dir() == tmp_path / "home" / ".cache" / "calibnb"


# --- every mirrored file verifies ------------------------------------------------------------------


@needs_mirror
@pytest.mark.parametrize("name", FILES)
def test_every_registered_file_is_found_and_verifies(name):
    path = fetch(name, cache_dir=MIRROR, downloader=_offline)
    entry = manifest_entry(name)
    assert path == MIRROR / name
    assert path.stat().st_size == entry["bytes"]
    assert _sha(path.read_bytes()) == entry["sha256"]
    if name.endswith(".npz"):
        with np.load(path) as z:
            arrays = {k: z[k] for k in z.files}
        assert {k: list(v.shape) for k, v in arrays.items()} == entry["arrays"]
        assert {k: v.dtype.str for k, v in arrays.items()} == entry["dtypes"]
        assert arrays_digest(arrays) == entry["arrays_sha256"]
        scores = arrays.get("logits", arrays.get("probs", arrays.get("predictions")))
        labels = arrays.get("labels", arrays.get("ground_truth"))
        assert np.mean(scores.argmax(axis=1) == labels) == pytest.approx(entry["accuracy"], abs=5e-5)


# --- missing files, no network ---------------------------------------------------------------------


def test_missing_file_without_network_or_variable_gives_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("CALIBNB_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(DataUnavailableError) as info:
        fetch(SMALL_JSON, downloader=_offline)
    msg = str(info.value)
    assert SMALL_JSON in msg
    assert manifest_entry(SMALL_JSON)["url"] in msg
    assert "CALIBNB_DATA_DIR" in msg and "no network" in msg
    assert _leftovers(tmp_path) == []


def test_read_only_cache_without_the_file_gives_a_clear_error(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(DataUnavailableError, match="CALIBNB_DATA_DIR"):
        fetch(SMALL_JSON, cache_dir=blocker, downloader=_serving(b"{}"))


# --- downloads: good, partial, corrupted, interrupted ----------------------------------------------


@needs_mirror
def test_download_verifies_and_places_the_file_then_reuses_it(tmp_path):
    good = (MIRROR / SMALL_JSON).read_bytes()
    calls: list[str] = []
    path = fetch(SMALL_JSON, cache_dir=tmp_path, downloader=_serving(good, calls))
    assert path == tmp_path / SMALL_JSON and path.read_bytes() == good
    assert calls == [manifest_entry(SMALL_JSON)["url"]]
    assert fetch(SMALL_JSON, cache_dir=tmp_path, downloader=_offline) == path  # no second download
    assert _leftovers(tmp_path) == [SMALL_JSON]


@needs_mirror
@pytest.mark.parametrize("damage", ["partial", "flipped", "empty"])
def test_a_bad_download_is_refused_and_leaves_nothing(tmp_path, damage):
    good = bytearray((MIRROR / SMALL_JSON).read_bytes())
    if damage == "partial":
        data = bytes(good[: len(good) // 2])
    elif damage == "flipped":
        good[len(good) // 3] ^= 0x01
        data = bytes(good)
    else:
        data = b""
    with pytest.raises(ChecksumMismatchError, match="upstream sha256"):
        fetch(SMALL_JSON, cache_dir=tmp_path, downloader=_serving(data))
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [KeyboardInterrupt, ConnectionResetError])
def test_an_interrupted_download_leaves_no_file(tmp_path, error):
    def dies_halfway(url, out):
        out.write(b"x" * 1000)
        raise error("interrupted (simulated)")

    expected = KeyboardInterrupt if error is KeyboardInterrupt else DataUnavailableError
    with pytest.raises(expected):
        fetch(SMALL_JSON, cache_dir=tmp_path, downloader=dies_halfway)
    assert _leftovers(tmp_path) == []


# --- corrupted local files -------------------------------------------------------------------------


@needs_mirror
@pytest.mark.parametrize("name", [SMALL_JSON, CONVERTED, "cifar10h/cifar10h-counts.npy"])
def test_a_corrupted_local_file_fails_verification(tmp_path, name):
    copy = tmp_path / name
    copy.parent.mkdir(parents=True)
    data = bytearray((MIRROR / name).read_bytes())
    assert fetch(name, cache_dir=MIRROR) == MIRROR / name
    for offset in (len(data) // 2, len(data) - 30):  # inside the payload and in the zip directory
        damaged = bytearray(data)
        damaged[offset] ^= 0xFF
        copy.write_bytes(bytes(damaged))
        with pytest.raises(ChecksumMismatchError, match="failed verification"):
            fetch(name, cache_dir=tmp_path, downloader=_offline)
        _registry._VERIFIED.clear()


@needs_mirror
def test_a_converted_file_with_other_bytes_but_identical_arrays_is_accepted(tmp_path):
    with np.load(MIRROR / CONVERTED) as z:
        arrays = {k: z[k] for k in z.files}
    copy = tmp_path / CONVERTED
    copy.parent.mkdir(parents=True)
    np.savez(copy, **arrays)  # uncompressed: different bytes, same arrays
    assert _sha(copy.read_bytes()) != manifest_entry(CONVERTED)["sha256"]
    assert fetch(CONVERTED, cache_dir=tmp_path, downloader=_offline) == copy
    arrays["logits"] = arrays["logits"].copy()
    arrays["logits"][17, 3] += 1e-3  # one changed value is caught
    np.savez(copy, **arrays)
    _registry._VERIFIED.clear()
    with pytest.raises(ChecksumMismatchError):
        fetch(CONVERTED, cache_dir=tmp_path, downloader=_offline)


# --- pickle -> npz conversion --------------------------------------------------------------------


def _fake_entry(monkeypatch, entry):
    monkeypatch.setattr(_registry, "_manifest", lambda: (entry,))


@needs_mirror
@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_a_pickled_upstream_is_converted_to_the_registered_npz(monkeypatch, tmp_path, protocol):
    entry = manifest_entry(CONVERTED)
    with np.load(MIRROR / CONVERTED) as z:
        logits, labels = z["logits"], z["labels"]
    # Upstream shape: a (logits, labels) tuple; labels as a uint8 column like Keras' y_test.
    upstream = pickle.dumps((logits, labels.astype(np.uint8).reshape(-1, 1)), protocol=protocol)
    entry = dict(entry, upstream_sha256=_sha(upstream))
    _fake_entry(monkeypatch, entry)
    path = fetch(CONVERTED, cache_dir=tmp_path, downloader=_serving(upstream))
    with np.load(path) as z:
        np.testing.assert_array_equal(z["logits"], logits)
        np.testing.assert_array_equal(z["labels"], labels)
        assert arrays_digest({k: z[k] for k in z.files}) == entry["arrays_sha256"]
    assert _leftovers(tmp_path) == [CONVERTED]


class _Payload:
    """Unpickling this would run a shell command (it must never be unpickled)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@needs_mirror
def test_a_pickle_carrying_a_non_array_global_is_refused(monkeypatch, tmp_path):
    marker = tmp_path / "pwned"
    with np.load(MIRROR / CONVERTED) as z:
        evil = pickle.dumps((z["logits"], _Payload(marker)))
    _fake_entry(monkeypatch, dict(manifest_entry(CONVERTED), upstream_sha256=_sha(evil)))
    cache = tmp_path / "cache"
    with pytest.raises(UnsafePickleError, match=r"refused to unpickle the global '(posix|os)\.system'"):
        fetch(CONVERTED, cache_dir=cache, downloader=_serving(evil))
    assert not marker.exists()
    assert _leftovers(cache) == []


@pytest.mark.parametrize(
    "obj, match",
    [
        ((np.zeros((2, 2), np.float32), np.zeros(2, np.int64), np.zeros(1)), "holds 3 objects"),
        ({"logits": np.zeros((2, 2), np.float32)}, r"lacks the arrays \['labels'\]"),
        ((np.zeros((2, 2), np.float32), [0, 1]), "'labels' is a list"),
        ((np.zeros((3, 2), np.float32), np.zeros(2, np.int64)), r"shape \(3, 2\)"),
        ("text", "holds a str"),
    ],
)
def test_pickle_conversion_rejects_unexpected_content(obj, match):
    raw = pickle.dumps(obj)
    with pytest.raises(ValueError, match=match):
        pickle_to_npz_bytes(raw, ["logits", "labels"], {"logits": [2, 2], "labels": [2]},
                            {"logits": "<f4", "labels": "<i8"})


def test_pickle_conversion_accepts_a_dict_of_arrays_and_refuses_object_arrays():
    raw = pickle.dumps({"labels": np.array([1, 0]), "logits": np.eye(2, dtype=np.float32)})
    out = pickle_to_npz_bytes(raw, ["logits", "labels"], {"logits": [2, 2], "labels": [2]},
                              {"logits": "<f4", "labels": "<i8"})
    with np.load(io.BytesIO(out)) as z:
        assert list(z.files) == ["logits", "labels"]
        np.testing.assert_array_equal(z["labels"], [1, 0])
    with pytest.raises(UnsafePickleError, match="object dtype"):
        pickle_to_npz_bytes(pickle.dumps((np.array([1, "a"], dtype=object),)), ["x"], {"x": [2]}, {"x": "<i8"})


# --- the default urllib downloader, exercised offline through file:// URLs -------------------------


@needs_mirror
def test_default_downloader_fetches_through_urllib_with_a_progress_bar(monkeypatch, tmp_path, capsys):
    entry = manifest_entry(SMALL_JSON)
    _fake_entry(monkeypatch, dict(entry, url=(MIRROR / SMALL_JSON).resolve().as_uri()))
    path = fetch(SMALL_JSON, cache_dir=tmp_path)
    assert _sha(path.read_bytes()) == entry["sha256"]
    err = capsys.readouterr().err
    assert "downloading RandomForest_calibrator_dev_set_predictions.json" in err and "100.0%" in err


def test_default_downloader_reports_a_missing_url_as_unavailable(monkeypatch, tmp_path):
    entry = manifest_entry(SMALL_JSON)
    _fake_entry(monkeypatch, dict(entry, url=(tmp_path / "nowhere.json").as_uri()))
    with pytest.raises(DataUnavailableError, match="could not be downloaded from file://"):
        fetch(SMALL_JSON, cache_dir=tmp_path / "cache")
    assert _leftovers(tmp_path / "cache") == []


# --- hardening: edits that keep size and mtime, a mistyped CALIBNB_DATA_DIR, object arrays ----------


@needs_mirror
def test_an_edit_keeping_size_and_mtime_is_verified_again(tmp_path):
    copy = tmp_path / SMALL_JSON
    copy.parent.mkdir(parents=True)
    data = (MIRROR / SMALL_JSON).read_bytes()
    copy.write_bytes(data)
    assert fetch(SMALL_JSON, cache_dir=tmp_path, downloader=_offline) == copy  # verified once
    st = copy.stat()
    damaged = bytearray(data)
    damaged[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(damaged))  # same size ...
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))  # ... and the same mtime
    assert copy.stat().st_size == st.st_size and copy.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.raises(ChecksumMismatchError, match="failed verification"):
        fetch(SMALL_JSON, cache_dir=tmp_path, downloader=_offline)


def test_a_missing_calibnb_data_dir_is_not_created(monkeypatch, tmp_path):
    missing = tmp_path / "typo" / "data"
    monkeypatch.setenv("CALIBNB_DATA_DIR", str(missing))
    with pytest.raises(DataUnavailableError, match="not an existing folder; nothing was created"):
        fetch(SMALL_JSON, downloader=_serving(b"{}"))
    assert not (tmp_path / "typo").exists()


def test_the_unpickler_refuses_an_object_array_of_nones():
    from calibnb.data._arrays import UnsafePickleError, load_array_pickle

    # _reconstruct(ndarray, (2,), b"O") with no BUILD step: an object array of Nones.
    raw = b"\x80\x02cnumpy._core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x02\x85C\x01O\x87R."
    with pytest.raises(UnsafePickleError, match="object dtype"):
        load_array_pickle(raw)
    import pickle

    with pytest.raises(UnsafePickleError, match="object dtype"):
        load_array_pickle(pickle.dumps([np.arange(2), np.array([None], dtype=object)]))
