# txlab: every entry point a user or CI needs. `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.txlab-installed

.PHONY: help setup demo test test-unit test-notebooks test-gpu test-browser lab bench bench-hopper-gemm api-verify widgets doctor clean

help:
	@echo "make demo        set up, run notebooks/00_tour.ipynb headless, write build/tour.html"
	@echo "make test        set up, check the import layers (lint-imports) and ruff, run unit tests and every notebook"
	@echo "make lab         open JupyterLab on notebooks/"
	@echo "make bench       run the benchmark scripts under benchmarks/"
	@echo "make doctor      report versions, GPU and what works on this machine"

# One stamp per set-up: re-run when pyproject.toml changes.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@git rev-parse --git-dir >/dev/null 2>&1 && git config core.hooksPath .githooks || true
	@touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m txlab.tour notebooks/00_tour.ipynb build/tour.html

# ruff lint + format check (rules in pyproject.toml)
RUFF_PATHS := txlab tests benchmarks scripts

test: $(STAMP)
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/ruff check $(RUFF_PATHS)
	$(VENV)/bin/ruff format --check --quiet $(RUFF_PATHS)
	$(PY) -m pytest -q -p no:cacheprovider tests notebooks --nbval-lax -m "not browser"
	@if [ -x "$(CHROMIUM)" ]; then $(MAKE) --no-print-directory test-browser; \
	else echo "browser tests skipped: no $(CHROMIUM) (apt-get install -y chromium)"; fi

# JupyterLab + headless Chromium drive every notebook and widget; screenshots in build/browser/
CHROMIUM ?= /usr/bin/chromium
test-browser: $(STAMP)
	TXLAB_CHROMIUM=$(CHROMIUM) $(PY) -m pytest -q -p no:cacheprovider -m browser tests

test-unit: $(STAMP)
	$(PY) -m pytest -q tests -m "not browser"

test-notebooks: $(STAMP)
	$(PY) -m pytest -q --nbval-lax notebooks

test-gpu: $(STAMP)
	$(PY) -m pytest -q -m gpu tests

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/

bench: $(STAMP)
	$(PY) benchmarks/foundation.py
	$(PY) benchmarks/schedulers.py
	$(PY) benchmarks/pipelines.py
	$(PY) benchmarks/timeline.py
	$(PY) benchmarks/isolation.py
	$(PY) benchmarks/gemm_choice.py
	@if [ -x "$(CHROMIUM)" ]; then $(PY) benchmarks/browser_latency.py; else echo "browser latency: skipped (no $(CHROMIUM))"; fi

# GPU-only: the Hopper GEMM against cuBLAS and the API examples' checks (see docs/gpu-runs.md)
bench-hopper-gemm: $(STAMP)
	$(PY) benchmarks/hopper_gemm.py

api-verify: $(STAMP)
	$(PY) -m txlab.api verify --write

widgets:
	cd widgets && npm ci --no-audit --no-fund && node build.mjs

doctor: $(STAMP)
	$(VENV)/bin/txlab doctor

clean:
	rm -rf build .pytest_cache
