#!/usr/bin/env bash
# LongMemEval reproductions (§4.1, B.1, C, D, E): scripts/reproduce_longmemeval.sh TABLE...
# TABLE is table3 table4 table5 table9 table10 table11 haystack_growth (§4.1.1), or all. Environment:
#   LME      folder holding the official files (longmemeval_oracle.json, longmemeval_s_cleaned.json);
#            unset: the shipped instance / fixture (plumbing only, see docs/longmemeval_reproduce.md)
#   P        profile overrides, e.g. "llm=vllm embedder=vllm judge=vllm" (default: the local profile)
#   BENCH    the runner (default .venv/bin/pmem-bench)
#   WRITER   the write path of D's 35B-extractor rows (Tables 10, 11), e.g. "writer=vllm35b";
#            unset: those rows are not run (the tables print the paper's figures for them)
set -euo pipefail
WRITER=${WRITER:-}
BENCH=${BENCH:-.venv/bin/pmem-bench}
P=${P:-}
if [ -n "${LME:-}" ]; then
  O="benchmark.variant=oracle benchmark.path=$LME/longmemeval_oracle.json"
  S="benchmark.variant=s_cleaned benchmark.path=$LME/longmemeval_s_cleaned.json"
else
  O="benchmark.path=benchmarks/data/longmemeval/fixture.json"
  S="$O"
fi
run() { $BENCH $P "$@"; }

table3() {  # knowledge-update subset, both regimes
  for B in "$O" "$S"; do
    for arm in pmem_turns pmem_turns_pruned; do run experiment=table3 $B arm=$arm; done
    run experiment=table3 $B arm=chunk_retrieval arm.chunk_size=null
  done
}
table4() {  # all questions (pmem_turns first: its class scorer stores the classes)
  for arm in pmem_turns no_memory hipporag pmem_turns_pruned; do run experiment=table4 $S arm=$arm; done
  run experiment=table4 $S arm=chunk_retrieval arm.chunk_size=null
  run experiment=table4 $S arm=chunk_retrieval arm.chunk_size=null arm.key=generic \
      arm.name=chunk_retrieval_generic
  run experiment=table4 $S arm=mem0 arm.chunk_size=null arm.fact_prompt=null
  run experiment=table4 $S arm=long_context_budget arm.budget=128000 arm.name=long_context
}
table5() {  # token efficiency and B.1's budget sweep
  run experiment=table5 $S arm=pmem_turns
  run experiment=table5 $S arm=chunk_retrieval arm.chunk_size=null
  run experiment=table5 $S arm=long_context_budget arm.budget=128000 arm.name=long_context
  for b in 1000 2000 3000 5000 8000 11000; do
    run experiment=table5 $S arm=pmem_turns_budget arm.budget=$b
    run experiment=table5 $S arm=chunk_retrieval_budget arm.budget=$b
  done
}
table9() {  # gates (the class-oracle gate reads the stored classes)
  for arm in pmem_turns pmem_turns_pruned pmem_turns_gate_oracle pmem_turns_gate_intent \
             pmem_turns_gate_router pmem_turns_gate_router_judge; do
    run experiment=table9 $S arm=$arm
  done
}
MATERIALIZED="pmem_materialized_full pmem_materialized pmem_materialized_full_merge070 pmem_materialized_merge070"
table10() {  # write-time materialization (update subset); WRITER adds D's 35B-extractor rows
  for arm in pmem_turns pmem_turns_pruned $MATERIALIZED; do run experiment=table10 $S arm=$arm; done
  if [ -n "$WRITER" ]; then
    for arm in $MATERIALIZED; do run experiment=table10 $S $WRITER arm=$arm; done
  fi
}

table11() {  # write-side cost (own response cache; the first run pays the extraction)
  for arm in pmem_materialized_full pmem_materialized pmem_turns; do
    run experiment=table11 $S arm=$arm
  done
  if [ -n "$WRITER" ]; then run experiment=table11 $S $WRITER arm=pmem_materialized_full; fi
}

haystack_growth() {  # §4.1.1: read tokens as the haystack grows (read only: no answers)
  # without LME: the shipped real instance (53 sessions), not the fixture's 2-4-session haystacks
  local G=""; [ -n "${LME:-}" ] && G="$S"
  for n in 8 16 24 32 null; do
    run experiment=haystack_growth $G benchmark.sessions=$n arm=pmem_turns
    run experiment=haystack_growth $G benchmark.sessions=$n arm=chunk_retrieval arm.chunk_size=null
    run experiment=haystack_growth $G benchmark.sessions=$n arm=long_context_budget \
        arm.budget=128000 arm.name=long_context
  done
}

[ $# -gt 0 ] || { sed -n 2,10p "$0"; exit 2; }
for t in "$@"; do
  [ "$t" = all ] && set -- table3 table4 table5 table9 table10 table11 haystack_growth
done
for t in "$@"; do
  case $t in
    table3|table4|table5|table9|table10|table11|haystack_growth)
      $t; .venv/bin/python -m benchmarks.reports "$t" ;;
    *) echo "unknown table '$t' (table3 table4 table5 table9 table10 table11 haystack_growth all)" >&2
       exit 2 ;;
  esac
done
