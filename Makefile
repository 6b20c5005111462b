# Two commands for a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# python3.12 from PATH if it runs, else a pyenv-installed 3.12.
PYTHON312 := $(shell if python3.12 -c 'import sys' >/dev/null 2>&1; then echo python3.12; \
	else ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.12*/bin/python3.12 2>/dev/null | tail -n 1; fi)
SHARED_DATA := $(abspath ../shared/data)
export PBASSESS_DATA_DIR ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
export MPLBACKEND ?= Agg

.PHONY: demo test test-fast lint bench docs notebooks setup clean browser

$(VENV)/.installed: pyproject.toml
	@if [ -z "$(PYTHON312)" ]; then echo "error: python3.12 not found on PATH (pbassess needs Python 3.12)" >&2; exit 1; fi
	@test -x $(PY) || $(PYTHON312) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/pbassess demo --out reports/demo

# One pytest worker per core (pytest-xdist), a test file per worker at a time, so that a module's
# fixtures (the contract test's memoised fits) are built once: on 2 cores the suite runs in about
# half the time of one process, which left the second core idle outside NUTS. The longest files go first
# (tests/conftest.py) and the 15 slowest tests are listed at the end, to watch CI's 30 minutes.
test: setup browser
	$(PY) -m pytest -q -n auto --dist loadfile --durations=15

# The labeling app's browser tests drive Debian's chromium with Playwright (Playwright's own browser
# downloads are not used): install the package when it is missing (needs root or sudo).
browser:
	@command -v chromium >/dev/null 2>&1 || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; } \
		|| echo "warning: chromium could not be installed; the browser tests will be skipped" >&2

test-fast: setup
	$(PY) -m pytest -q -m "not slow"

lint: setup
	$(VENV)/bin/ruff check pbassess tests benchmarks

bench: setup
	$(PY) benchmarks/static.py
	$(PY) benchmarks/active.py
	$(PY) benchmarks/hierarchical.py
	$(PY) benchmarks/scale.py
	$(PY) benchmarks/grid.py

# Warnings are errors; --keep-going lists them all. API pages, gallery figures and notebook copies are
# regenerated at every build (docs/api, docs/gallery, docs/notebooks: not committed); the notebooks
# are rendered with their committed outputs (written by `make notebooks`), never executed here.
docs: setup
	$(PY) -m pip install -q -e '.[docs]'
	$(VENV)/bin/sphinx-build -q -W --keep-going -b html docs docs/_build/html
	@echo "docs written to docs/_build/html/index.html"

# Execute every notebook and write it back with its outputs (figures as PNG); `make notebooks
# NB="02 06"` runs only those. make test re-runs them and checks the committed outputs.
notebooks: setup
	$(PY) docs/_ext/pbdocs_execute.py $(NB)

clean:
	rm -rf $(VENV) reports .pytest_cache
