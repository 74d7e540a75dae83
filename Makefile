# Two entry points (see README): `make report` and `make test`.
# Both create or reuse a virtual environment in .venv and install what they need.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PARAMS ?=
JOBS ?= 2

.PHONY: report test bench venv clean site

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

venv: $(VENV)/.installed

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

# The JupyterLite site of notebooks 00-06 (runs in a browser, no server kernel) into site/.
# Downloads (PyPI, npm) are cached in ~/.cache/calibnb-site; data come from CALIBNB_DATA_DIR.
# Serve it with: python3 -m http.server -d site -b 127.0.0.1 8000
site: venv
	$(PY) tools/build_site.py

clean:
	rm -rf $(VENV) reports .pytest_cache site build/site
