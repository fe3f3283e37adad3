# P-Mem: the library and the reproduction harness.
#   make run     set up (first time) and run the main job
#   make test    set up (first time), lint, and run the tests
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run demo test lint format bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The main job. Until the harness lands it is the library's demonstration: the paper's Figure 1
# story and the $30k/$50k retraction, printed with their history, from a real SQLite store.
run: demo

demo: setup
	$(BIN)/pmem demo

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python scripts/bench_core.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
