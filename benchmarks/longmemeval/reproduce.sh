#!/usr/bin/env bash
# LongMemEval reproductions (§4.1, B.1, C, D, E): benchmarks/longmemeval/reproduce.sh TABLE...
# TABLE is table3 table4 table5 table9 table10 table11 haystack_growth (§4.1.1), or all. Environment:
#   LME      folder holding the official files (longmemeval_oracle.json, longmemeval_s_cleaned.json);
#            unset: the shipped instance / fixture (plumbing only, see docs/longmemeval_reproduce.md)
#   P        profile overrides, e.g. "llm=vllm embedder=vllm judge=vllm" (default: the local profile)
#   WRITER   the write path of D's 35B-extractor rows (Tables 10, 11), e.g. "writer=vllm35b";
#            unset: those rows are not run (the tables print the paper's figures for them)
#   SWEEP_ARGS  overrides added to every sweep (hydra/launcher=slurm: each run its own Slurm job)
#   DRY_RUN=1   compose every run (run.dry_run=true), call no model, build no table
#   NO_TABLE=1  build no table (make sets it for the scripted profile: never a paper table)
#   BENCH, PYTHON  the runner and the interpreter (default: the checkout's .venv)
# Each table is a few Hydra multiruns (`pmem-bench -m`, every combination of the comma lists);
# arms that need other overrides, or must run after another (they read what it stored), are a
# sweep of their own, in order. Every run resumes its own folder: rerun after an interruption.
set -euo pipefail
WRITER=${WRITER:-}
BENCH=${BENCH:-.venv/bin/pmem-bench}
PYTHON=${PYTHON:-.venv/bin/python}
P=${P:-}
SWEEP_ARGS=${SWEEP_ARGS:-}
DRY_RUN=${DRY_RUN:-}
NO_TABLE=${NO_TABLE:-$DRY_RUN}
if [ -n "${LME:-}" ]; then
  O="benchmark.variant=oracle benchmark.path=$LME/longmemeval_oracle.json"
  S="benchmark.variant=s_cleaned benchmark.path=$LME/longmemeval_s_cleaned.json"
else
  O="benchmark.path=benchmarks/data/longmemeval/fixture.json"
  S="$O"
fi
LC="arm=long_context_budget arm.budget=128000 arm.name=long_context"
SESSIONS="arm=chunk_retrieval arm.chunk_size=null"  # MemoryOS's protocol: top-5 sessions
# shellcheck disable=SC2086  # the override strings split into words on purpose
sweep() { $BENCH -m $P "$@" ${DRY_RUN:+run.dry_run=true} $SWEEP_ARGS; }

table3() {  # knowledge-update subset, both regimes
  for B in "$O" "$S"; do
    sweep experiment=table3 $B arm=pmem_turns,pmem_turns_pruned
    sweep experiment=table3 $B $SESSIONS
  done
}
table4() {  # all questions; the ungated turn read first: its class scorer stores the classes
  sweep experiment=table4 $S arm=pmem_turns
  sweep experiment=table4 $S arm=no_memory,hipporag,pmem_turns_pruned
  sweep experiment=table4 $S $SESSIONS
  sweep experiment=table4 $S $SESSIONS arm.key=generic arm.name=chunk_retrieval_generic
  sweep experiment=table4 $S arm=mem0 arm.chunk_size=null arm.fact_prompt=null
  sweep experiment=table4 $S $LC
}
table5() {  # token efficiency and B.1's budget sweep
  sweep experiment=table5 $S arm=pmem_turns
  sweep experiment=table5 $S $SESSIONS
  sweep experiment=table5 $S $LC
  sweep experiment=table5 $S arm=pmem_turns_budget,chunk_retrieval_budget \
    arm.budget=1000,2000,3000,5000,8000,11000
}
table9() {  # gates; the class-oracle gate last: it reads the classes the turn read stored
  sweep experiment=table9 $S arm=pmem_turns,pmem_turns_pruned,pmem_turns_gate_intent,pmem_turns_gate_router,pmem_turns_gate_router_judge
  sweep experiment=table9 $S arm=pmem_turns_gate_oracle
}
MATERIALIZED=pmem_materialized_full,pmem_materialized,pmem_materialized_full_merge070,pmem_materialized_merge070
table10() {  # write-time materialization (update subset); WRITER adds D's 35B-extractor rows
  sweep experiment=table10 $S arm=pmem_turns,pmem_turns_pruned,$MATERIALIZED
  if [ -n "$WRITER" ]; then sweep experiment=table10 $S $WRITER arm=$MATERIALIZED; fi
}
table11() {  # write-side cost (own response cache): the full-state run pays the extraction alone
  sweep experiment=table11 $S arm=pmem_materialized_full
  sweep experiment=table11 $S arm=pmem_materialized,pmem_turns
  if [ -n "$WRITER" ]; then sweep experiment=table11 $S $WRITER arm=pmem_materialized_full; fi
}
haystack_growth() {  # §4.1.1: read tokens as the haystack grows (read only: no answers)
  # without LME: the shipped real instance (53 sessions), not the fixture's 2-4-session haystacks
  local G=""; [ -n "${LME:-}" ] && G="$S"
  local N=benchmark.sessions=8,16,24,32,null
  sweep experiment=haystack_growth $G $N arm=pmem_turns
  sweep experiment=haystack_growth $G $N $SESSIONS
  sweep experiment=haystack_growth $G $N $LC
}

[ $# -gt 0 ] || { sed -n 2,15p "$0"; exit 2; }
for t in "$@"; do
  [ "$t" = all ] && set -- table3 table4 table5 table9 table10 table11 haystack_growth
done
for t in "$@"; do
  case $t in
    table3|table4|table5|table9|table10|table11|haystack_growth)
      $t
      if [ -n "$NO_TABLE" ]; then echo "no table built: $t"
      else "$PYTHON" -m benchmarks.reports "$t"; fi ;;
    *) echo "unknown table '$t' (table3 table4 table5 table9 table10 table11 haystack_growth all)" >&2
       exit 2 ;;
  esac
done
