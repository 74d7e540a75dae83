"""Seed stability of every claim status: run each paper notebook at several seeds, write the table.

    python benchmarks/seed_stability.py                      # seeds 0-4, the notebooks' defaults, every ledger notebook
    python benchmarks/seed_stability.py --params params/quick.yaml --out /tmp/quick.json   # a faster preset
    python benchmarks/seed_stability.py --seeds 0-1 --notebooks 04_sakai2024_hmr
    python benchmarks/seed_stability.py --rescore            # re-decide the stored runs under the current ledgers

Each notebook with a claims ledger (``notebooks/claims/<stem>.yaml``) runs once per seed with papermill, at its
default parameters (the ones the ledgers' expected statuses refer to; ``--params`` gives a preset such as
``params/quick.yaml`` instead) and ``seed`` set; its results JSON is kept in ``--runs``. The statuses are then re-decided from the recorded values under the current
ledger (:func:`calibnb.record.reproduction.restatus`, so a rule change does not need a re-run) and written, per claim, to
``data/seed_stability.json``::

    {"preset": null, "seeds": [0, 1, 2, 3, 4], "generated": "...",
     "notebooks": {"<stem>": {"paper": "...", "ran": [0, 1, ...], "failed": {"<seed>": "error"},
                              "claims": {"<id>": {"statuses": ["reproduces", ...], "split": {"reproduces": 5},
                                                  "text": "stable 5/5"}}}}}

``make report`` (``calibnb.report``) reads this committed table: the index shows "stable 5/5" or the flips per
claim and counts only seed-stable statuses in each paper's line; a ledger marks a flipping claim
``seed_sensitive`` with the measured split (``--check`` lists the claims that flip without that mark).
Running five notebooks at five seeds takes tens of minutes on two cores: run it in the background, once.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> [0, 1, 2, 3, 4]; ``"0,3"`` -> [0, 3]."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = (int(v) for v in part.split("-", 1))
            if hi < lo:
                raise ValueError(f"seed range {part!r} must run upwards.")
            seeds.extend(range(lo, hi + 1))
        elif part:
            seeds.append(int(part))
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ValueError(f"--seeds must name distinct non-negative seeds; got {text!r}.")
    return seeds


def ledger_stems(notebooks_dir: Path) -> list[str]:
    return sorted(p.stem for p in (notebooks_dir / "claims").glob("*.yaml")
                  if (notebooks_dir / f"{p.stem}.ipynb").exists())


def run_all(stems, seeds, preset, runs_dir: Path, notebooks_dir: Path, timeout: float) -> dict:
    """Run every (notebook, seed); return {stem: {seed: error or None}}."""
    from calibnb.apps.report import load_params_file, params_for, run_notebook, _declared_parameters

    file_params = load_params_file(preset) if preset else {}
    status: dict[str, dict[int, str | None]] = {}
    for stem in stems:
        path = notebooks_dir / f"{stem}.ipynb"
        declared = _declared_parameters(path)
        for seed in seeds:
            params = params_for(stem, declared, file_params, {"seed": seed})
            out = runs_dir / f"{stem}.seed{seed}"
            t0 = time.time()
            run = run_notebook(path, f"{out}.ipynb", parameters=params, results_path=f"{out}.json",
                               kernel_name="python3", cwd=notebooks_dir, timeout=timeout)
            status.setdefault(stem, {})[seed] = None if run.ok else (run.error or "failed")
            print(f"{stem} seed {seed}: {'ok' if run.ok else 'FAILED'} ({time.time() - t0:.0f} s)", flush=True)
    return status


def build_table(stems, seeds, preset, runs_dir: Path, notebooks_dir: Path) -> dict:
    """The seed table from the stored runs, re-decided under the current ledgers."""
    from calibnb.record.reproduction import load_ledger, restatus, seed_split, stability_text

    out = {"preset": preset, "seeds": list(seeds), "generated": _dt.datetime.now().isoformat(timespec="seconds"),
           "command": "python benchmarks/seed_stability.py --seeds " + ",".join(map(str, seeds))
           + (f" --params {preset}" if preset else ""), "notebooks": {}}
    for stem in stems:
        ledger = load_ledger(notebooks_dir / "claims" / f"{stem}.yaml")
        per_seed, ran, failed = {}, [], {}
        for seed in seeds:
            path = runs_dir / f"{stem}.seed{seed}.json"
            if not path.exists():
                failed[str(seed)] = "no results JSON (the run failed or did not happen)"
                continue
            per_seed[seed] = restatus(json.loads(path.read_text()), ledger)
            ran.append(seed)
        claims = {}
        for cid in ledger.claims:
            statuses = [per_seed[s].get(cid) for s in ran]
            split = seed_split(statuses)
            claims[cid] = {"statuses": statuses, "split": split, "text": stability_text(split)}
        out["notebooks"][stem] = {"paper": ledger.paper, "ran": ran, "failed": failed, "claims": claims}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/seed_stability.py", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0-4", help="seeds, e.g. 0-4 or 0,2 (default: %(default)s)")
    parser.add_argument("--params", default="", metavar="FILE.yaml",
                        help="parameter preset (default: none, the notebooks' defaults)")
    parser.add_argument("--notebooks", nargs="*", help="notebook stems (default: every notebook with a ledger)")
    parser.add_argument("--runs", default="reports/seed_runs", help="folder of the runs (default: %(default)s)")
    parser.add_argument("--out", default="data/seed_stability.json", help="the table (default: %(default)s)")
    parser.add_argument("--rescore", action="store_true", help="do not run; re-decide the stored runs")
    parser.add_argument("--check", action="store_true", help="list claims that flip without a seed_sensitive mark")
    parser.add_argument("--timeout", type=float, default=900.0, help="per-cell timeout in seconds")
    args = parser.parse_args(argv)
    notebooks_dir = ROOT / "notebooks"
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        parser.error(str(exc))
    known = ledger_stems(notebooks_dir)
    stems = args.notebooks or known
    unknown = sorted(set(stems) - set(known))
    if unknown:
        parser.error(f"no notebook with a ledger named {', '.join(unknown)}; known: {', '.join(known)}.")
    runs_dir = Path(args.runs)
    runs_dir.mkdir(parents=True, exist_ok=True)
    preset = args.params or None
    if not args.rescore:
        run_all(stems, seeds, preset, runs_dir, notebooks_dir, args.timeout)
    table = build_table(stems, seeds, preset, runs_dir, notebooks_dir)
    out = Path(args.out)
    if out.exists() and args.notebooks:  # a partial run updates its notebooks only
        old = json.loads(out.read_text())
        if old.get("seeds") == table["seeds"] and old.get("preset") == table["preset"]:
            old["notebooks"].update(table["notebooks"])
            old["generated"], old["command"] = table["generated"], table["command"]
            table = old
    from calibnb.record.reproduction import unmarked_flips, write_json_atomic

    write_json_atomic(out, table)
    problems = []
    for stem, entry in table["notebooks"].items():
        flips = {cid: c["split"] for cid, c in entry["claims"].items() if len(c["split"]) > 1}
        print(f"{stem}: ran at seeds {entry['ran']}; {len(flips)} claim(s) flip"
              + (f": {', '.join(f'{k} ({v})' for k, v in flips.items())}" if flips else ""))
        problems += unmarked_flips({k: c["split"] for k, c in entry["claims"].items()},
                                   notebooks_dir / "claims" / f"{stem}.yaml")
    print(f"wrote {out}")
    if args.check and problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
