# Two entry points (see README): `make report` and `make test`.
# Both create or reuse a virtual environment in .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PARAMS ?=
# pytest workers: one more than the cores. With one per core, the 2-core machine's cores sat idle 58-63
# core-seconds of each suite run (5%); with three, 5-7, for the same busy time (/proc/stat around
# `make test`, 2026-11-27; benchmarks/README.md).
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$((n + 1)))

.PHONY: report test bench venv clean seed-stability clean-checkouts site

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

venv: $(VENV)/.installed clean-checkouts

# Keep a class's Run All out of git: .gitattributes names this clean filter for the
# notebooks, so git sees them without outputs, execution counts or widget state while
# the files on disk keep what was run (calibnb.teaching.strip_outputs), and JupyterLab's saves
# write the project's notebooks without outputs (calibnb.teaching.strip_on_save), so
# `git status` stays clean after a class (README, "For a class").
clean-checkouts:
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
	  git config filter.calibnb-strip-outputs.clean '$(abspath $(PY)) -m calibnb.teaching strip-outputs' && \
	  git config filter.calibnb-strip-outputs.smudge cat; fi
	@mkdir -p $(VENV)/etc/jupyter/jupyter_server_config.d
	@printf '{"FileContentsManager": {"pre_save_hook": "calibnb.teaching.strip_on_save"}}\n' \
	  > $(VENV)/etc/jupyter/jupyter_server_config.d/calibnb.json

# One BLAS thread: the notebooks' linear algebra is small; with OpenBLAS's default threads notebook 03
# took the same wall time (28 s) for 44 s of CPU instead of 27.5 s (2026-11-26, 2 cores).
report: venv
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m calibnb.report $(if $(PARAMS),--params $(PARAMS),)

# Every paper notebook at seeds 0-4 (tens of minutes on two cores): rewrites the committed
# data/seed_stability.json that `make report` reads (see benchmarks/seed_stability.py).
seed-stability: venv
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) benchmarks/seed_stability.py --seeds 0-4 --params '$(PARAMS)' --check

# One BLAS thread per process: pytest-xdist already runs a worker per core (and one more), and
# oversubscribed OpenBLAS threads made the spline least squares ~20x slower.
# Bytecode caches on (PYTHONDONTWRITEBYTECODE emptied, as some CI images set it): the
# suite starts about 150 Python processes, and each pytest worker would otherwise
# rewrite every test module's asserts again (3.4 s of CPU per worker, measured).
test: venv
	PYTHONDONTWRITEBYTECODE= MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -n $(JOBS) --dist loadgroup

# Every benchmark of benchmarks/README.md (the scale one writes 10^9 rows, ~5 GB, to /tmp first).
bench: venv
	$(PY) -m pip install --quiet -e '.[bench,dask]'
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_calibrators.py
	$(PY) benchmarks/bench_uncertainty.py
	$(PY) benchmarks/bench_gupta_notebook.py
	$(PY) benchmarks/bench_audit.py
	nice -n 10 $(PY) benchmarks/bench_scale.py

# The JupyterLite site of notebooks 00-06 (runs in a browser, no server kernel) into site/.
# Downloads (PyPI, npm) are cached in ~/.cache/calibnb-site; data come from CALIBNB_DATA_DIR.
# Serve it with: python3 -m http.server -d site -b 127.0.0.1 8000
site: venv
	$(PY) tools/build_site.py

clean:
	rm -rf $(VENV) reports .pytest_cache site build/site
