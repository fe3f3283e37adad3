#!/usr/bin/env bash
# Every LongMemEval arm on the shipped real instances with the local profile (experiment
# longmemeval_local), cheapest arm first, each arm on every file before the next arm, then the
# table. Each run resumes its own folder, so rerun after an interruption. ARMS="..." picks a
# subset (names below); FILES="..." the files (shipped: e47becba's 53-session haystack; oracle:
# the 8 extra oracle-style instances; s: the 2 extra S haystacks, 41 and 40 sessions;
# benchmarks/data/longmemeval/SOURCES.md); SESSIONS=N reads each instance over an N-session
# haystack, evidence kept (benchmark.sessions: the write-path arms pay one or two 1.5B calls per
# session, about a minute each here); BENCH the runner.
#   benchmarks/longmemeval/local.sh                 # every file: 4-6 h per S haystack on 2 cores
#   FILES=oracle benchmarks/longmemeval/local.sh    # the small ones
#   ARMS="mem0 hipporag" SESSIONS=8 benchmarks/longmemeval/local.sh
set -euo pipefail
BENCH=${BENCH:-.venv/bin/pmem-bench}
# a 16k window for the five-session and long-context reads (the local profile's default is 4k),
# and for the judge's B.1 class prompt, which quotes the evidence sessions (4.5k tokens on an
# oracle instance); with the same window the reader and the judge share one server
E="experiment=longmemeval_local${SESSIONS:+ benchmark.sessions=$SESSIONS}"
# ...except where a read passes 16k: the extra S haystacks' sessions are long (about 12,000
# characters), so session retrieval's five best come to 17.1k-17.6k tokens with the prompt,
# either key (measured 2026-12-05), and HippoRAG-v2 lists five passages, one a session (15.2k
# tokens on e47becba's shorter sessions); those runs get a 32k window (the model's own), reader
# and judge alike
window() {
  case "$2:$1" in
    s:chunk_retrieval* | s:hipporag) echo 32768 ;;
    *) echo 16384 ;;
  esac
}
CLASSES=arm.classes=results/longmemeval_local/classes.jsonl
declare -A RUN=(
  [no_memory]="arm=no_memory"
  [pmem_turns]="arm=pmem_turns"
  [pmem_turns_pruned]="arm=pmem_turns_pruned"
  [pmem_turns_gate_oracle]="arm=pmem_turns_gate_oracle $CLASSES"
  [pmem_turns_gate_intent]="arm=pmem_turns_gate_intent"
  [pmem_turns_gate_router]="arm=pmem_turns_gate_router"
  [pmem_turns_gate_router_judge]="arm=pmem_turns_gate_router_judge"
  [pmem_turns_b3000]="arm=pmem_turns_budget arm.budget=3000"
  [long_context]="arm=long_context_budget arm.budget=14000 arm.name=long_context_b14000"
  [chunk_retrieval]="arm=chunk_retrieval arm.chunk_size=null"
  [chunk_retrieval_generic]="arm=chunk_retrieval arm.chunk_size=null arm.key=generic arm.name=chunk_retrieval_generic"
  [pmem_materialized_full]="arm=pmem_materialized_full"
  [pmem_materialized]="arm=pmem_materialized"
  [pmem_materialized_full_merge070]="arm=pmem_materialized_full_merge070"
  [pmem_materialized_merge070]="arm=pmem_materialized_merge070"
  [mem0]="arm=mem0 arm.chunk_size=null arm.fact_prompt=null"
  [hipporag]="arm=hipporag"
)
ORDER="no_memory pmem_turns pmem_turns_pruned pmem_turns_gate_oracle pmem_turns_gate_intent
  pmem_turns_gate_router pmem_turns_gate_router_judge pmem_turns_b3000 long_context
  chunk_retrieval chunk_retrieval_generic pmem_materialized_full pmem_materialized
  pmem_materialized_full_merge070 pmem_materialized_merge070 mem0 hipporag"
D=benchmarks/data/longmemeval
declare -A FILE=(
  [shipped]=""
  [oracle]="benchmark.path=$D/longmemeval_extra_oracle.json benchmark.variant=oracle"
  [s]="benchmark.path=$D/longmemeval_extra_s.json"
)
for file in ${FILES:=shipped oracle s}; do
  [ -n "${FILE[$file]+set}" ] || { echo "unknown file '$file'; one of: shipped oracle s" >&2; exit 2; }
done
for arm in ${ARMS:-$ORDER}; do
  [ -n "${RUN[$arm]:-}" ] || { echo "unknown arm '$arm'; one of: $ORDER" >&2; exit 2; }
  for file in $FILES; do
    echo "== $arm on $file"
    # shellcheck disable=SC2086
    ctx=$(window "$arm" "$file")
    $BENCH $E llm.server.ctx=$ctx judge.server.ctx=$ctx ${RUN[$arm]} ${FILE[$file]} ||
      echo "!! $arm on $file failed (rerun resumes it)" >&2
  done
done
.venv/bin/python -m benchmarks.reports longmemeval_local
