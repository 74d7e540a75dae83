# Two entry points (see README): `make report` and `make test`.
# Both create or reuse a virtual environment in .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PARAMS ?=
JOBS ?= 2

.PHONY: report test bench venv clean clean-checkouts

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

report: venv
	$(PY) -m calibnb.report $(if $(PARAMS),--params $(PARAMS),)

# One BLAS thread per process: pytest-xdist already runs one worker per core, and
# oversubscribed OpenBLAS threads made the spline least squares ~20x slower.
test: venv
	MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -n $(JOBS) --dist loadgroup

bench: venv
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/bench_metrics.py
	$(PY) benchmarks/bench_calibrators.py

clean:
	rm -rf $(VENV) reports .pytest_cache
