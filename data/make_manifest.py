"""Regenerate data/manifest.json from the shared mirror's MANIFEST.json.

Usage (from the project root)::

    .venv/bin/python data/make_manifest.py /path/to/shared/data

It copies each record's provenance (file, repo, commit, path, url,
upstream_sha256, sha256, bytes, licence, description, arrays, accuracy) and
adds, read from the mirror's files:

- ``converted``: True when the upstream file is a pickle re-stored as ``.npz``;
- ``dtypes``: the dtype of each array (for ``.npz``/``.npy`` files);
- ``arrays_sha256``: the array-level digest (names, dtypes, shapes, bytes) of
  the file's arrays, see ``calibnb.data._arrays.arrays_digest``; used to verify
  a converted file whose compressed bytes differ from the mirror's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from calibnb.data._arrays import arrays_digest  # noqa: E402

_KEYS = ["file", "repo", "commit", "path", "url", "upstream_sha256", "sha256", "bytes", "licence", "description"]


def main(mirror: Path) -> None:
    records = json.loads((mirror / "MANIFEST.json").read_text(encoding="utf-8"))
    out = []
    for rec in records:
        entry = {k: rec[k] for k in _KEYS}
        entry["converted"] = rec["file"].endswith(".npz") and not rec["path"].endswith(".npz")
        path = mirror / rec["file"]
        if rec["file"].endswith(".npz"):
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            order = list(rec.get("arrays", arrays))  # MANIFEST order = the upstream pickle's order
            if set(order) != set(arrays):
                raise SystemExit(f"{rec['file']}: MANIFEST arrays {order} != arrays in the file {list(arrays)}")
            entry["arrays"] = {k: list(arrays[k].shape) for k in order}
            entry["dtypes"] = {k: arrays[k].dtype.str for k in order}
            entry["arrays_sha256"] = arrays_digest(arrays)
        elif rec["file"].endswith(".npy"):
            arr = np.load(path, allow_pickle=False)
            entry["arrays"] = {"counts": list(arr.shape)}
            entry["dtypes"] = {"counts": arr.dtype.str}
        if "accuracy" in rec:
            entry["accuracy"] = rec["accuracy"]
        out.append(entry)
    target = Path(__file__).resolve().parent / "manifest.json"
    target.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(out)} records to {target}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data").resolve())
