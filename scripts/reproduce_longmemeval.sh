#!/usr/bin/env bash
# LongMemEval reproductions (§4.1, B.1, C, D, E): scripts/reproduce_longmemeval.sh TABLE...
# TABLE is table3 table4 table5 table9 table10 table11 (or all). Environment:
#   LME      folder holding the official files (longmemeval_oracle.json, longmemeval_s_cleaned.json);
#            unset: the shipped instance / fixture (plumbing only, see docs/longmemeval_reproduce.md)
#   P        profile overrides, e.g. "llm=vllm embedder=vllm judge=vllm" (default: the local profile)
#   BENCH    the runner (default .venv/bin/pmem-bench)
set -euo pipefail
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
table10() {  # write-time materialization (update subset)
  for arm in pmem_turns pmem_turns_pruned pmem_materialized_full pmem_materialized; do
    run experiment=table10 $S arm=$arm
  done
  run experiment=table10 $S arm=pmem_materialized_full arm.merge=low \
      arm.name=pmem_materialized_full_merge070
  run experiment=table10 $S arm=pmem_materialized arm.merge=low arm.name=pmem_materialized_merge070
}
table11() {  # write-side cost (own response cache; the first run pays the extraction)
  for arm in pmem_materialized_full pmem_materialized pmem_turns; do
    run experiment=table11 $S arm=$arm
  done
}

[ $# -gt 0 ] || { sed -n 2,8p "$0"; exit 2; }
for t in "$@"; do
  [ "$t" = all ] && set -- table3 table4 table5 table9 table10 table11
done
for t in "$@"; do
  case $t in
    table3|table4|table5|table9|table10|table11) $t; .venv/bin/python -m benchmarks.tables "$t" ;;
    *) echo "unknown table '$t' (table3 table4 table5 table9 table10 table11 all)" >&2; exit 2 ;;
  esac
done
