#!/usr/bin/env bash
# A peer's ALFWorld-Revision probe (Table 8, or the conflict probe) in stages that each finish,
# for a machine where the whole run outlasts a session (Graphiti in Table 8: 33-35 episodes a case,
# 29-54 minutes a case on 2 cores, so 10-18 hours a distance). Stage k runs
# benchmark.cases=k*STEP; each case is generated from its own seed, so a smaller run is the start
# of a larger one (tests/test_alfworld_revision.py,
# test_a_smaller_probe_run_is_the_start_of_a_larger_one) and a stage answers the earlier stages'
# cases from the response cache, paying only its new ones. After each finished stage its run is
# exported (pmem-results export --finished-only), and the table and results/report.html rebuilt
# from results/runs: the table keeps the run with the most cases per cell and states n per row,
# so a session that ends mid-stage leaves the last finished stage ready to commit. Rerun to go
# on: a stage whose run is already exported, at its case count or more, is skipped
# (benchmarks/results/stages.py).
#   ARM=graphiti_alfrev benchmarks/alfworld_revision/peer_stages.sh                  # Table 8, d=0 then d=32
#   ARM=graphiti_alfrev DISTANCES=0 STEP=1 CASES=6 benchmarks/alfworld_revision/peer_stages.sh
#   ARM=mem0_alfrev EXPERIMENT=conflict STEP=5 benchmarks/alfworld_revision/peer_stages.sh
# OVERRIDES="llm=... writer=..." adds Hydra overrides to every stage, split on spaces (a profile,
# say; the export reads runs/, so not run.root).
# DUMP=results/cache/<date>-<run>.jsonl.gz, a new file, keeps the chat calls this invocation
# pays (results/cache/README.md), rewritten every DUMP_EVERY seconds (600) and once more at the
# end or on a stop, so a session that has to stop commits it as it is. Stop a run in the
# background with SIGTERM (kill, pkill -f alfrev_peer_stages.sh): the stage's pmem-bench stops
# with it (it resumes from its records and the cache); Ctrl-C reaches both from the terminal.
set -euo pipefail
ARM=${ARM:?name the peer arm, e.g. ARM=graphiti_alfrev}
EXPERIMENT=${EXPERIMENT:-table8}
STEP=${STEP:-2}
CASES=${CASES:-20}
BENCH=${BENCH:-.venv/bin/pmem-bench}
RESULTS=${RESULTS:-.venv/bin/pmem-results}
PY=${PY:-.venv/bin/python}
CACHE=${CACHE:-runs/cache.sqlite}  # run.cache
DUMP=${DUMP:-}
DUMP_EVERY=${DUMP_EVERY:-600}
read -ra extra <<< "${OVERRIDES:-}"  # more Hydra overrides for every stage, e.g. a profile's
case "$EXPERIMENT" in
  table8) DISTANCES=${DISTANCES:-0 32} ;;
  conflict) DISTANCES="" ;;  # the conflict probe has no distance
  *) echo "EXPERIMENT=$EXPERIMENT: allowed table8 or conflict" >&2; exit 2 ;;
esac
if ! [[ "$STEP" =~ ^[1-9][0-9]*$ && "$CASES" =~ ^[1-9][0-9]*$ && "$DUMP_EVERY" =~ ^[1-9][0-9]*$ ]]
then
  echo "STEP=$STEP, CASES=$CASES, DUMP_EVERY=$DUMP_EVERY: each must be a positive whole number" >&2
  exit 2
fi
if [ -n "$DUMP" ] && [[ "$DUMP" != *.jsonl.gz ]]; then
  echo "DUMP=$DUMP: a dump is a .jsonl.gz file, e.g. results/cache/<date>-<run>.jsonl.gz" >&2; exit 2
fi
if [ -n "$DUMP" ] && [ -e "$DUMP" ]; then  # it holds an earlier invocation's calls: keep them
  echo "DUMP=$DUMP: exists; name a new dump (each holds the calls of one invocation)" >&2; exit 2
fi

since=$(date -u +%Y-%m-%dT%H:%M:%S)
dump() {  # the chat calls paid since this invocation began, into DUMP (a no-op without one)
  [ -n "$DUMP" ] || return 0
  if [ -f "$CACHE" ]; then
    $PY -m benchmarks.models.cache export "$DUMP" --since "$since" --kind chat --cache "$CACHE"
  else
    echo "DUMP=$DUMP: no cache at $CACHE (CACHE= names run.cache): nothing dumped" >&2
  fi
}
dumper=""
if [ -n "$DUMP" ]; then  # rewritten while the stages go on, until this script is gone
  (
    trap 'kill "$nap" 2> /dev/null; exit 0' TERM  # its sleep goes with it
    while kill -0 $$ 2> /dev/null; do
      sleep "$DUMP_EVERY" & nap=$!
      wait "$nap"
      kill -0 $$ 2> /dev/null && { dump > /dev/null || true; }
    done
  ) > /dev/null 2>&1 &  # it holds none of the script's outputs open
  dumper=$!
fi
finish() {
  # `pkill -f` stops the timer too (it is a copy of this script): a kill that finds it gone
  # must not end the trap under `set -e` before the last dump
  [ -z "$dumper" ] || { kill "$dumper" 2> /dev/null || true; wait "$dumper" 2> /dev/null || true; }
  dump
}
trap finish EXIT

# A stop: on SIGTERM the run in hand gets it too; Ctrl-C reached it from the terminal. The calls
# paid so far are dumped first (a SIGKILL may follow), the run is waited for, then the EXIT
# trap dumps once more.
child=""
stop() {
  [ "$1" = 130 ] || [ -z "$child" ] || kill "$child" 2> /dev/null || true
  dump || true
  [ -z "$child" ] || wait "$child" || true
  exit "$1"
}
trap 'stop 143' TERM
trap 'stop 130' INT
waited() { "$@" & child=$!; wait "$child"; child=""; }

stage() {  # $1: the case count, $2: the distance override (empty for the conflict probe)
  local overrides=("experiment=$EXPERIMENT" "arm=$ARM" "benchmark.cases=$1" ${2:+"$2"} "${extra[@]}")
  local found
  echo "== $ARM, $EXPERIMENT${2:+ ($2)}, $1 cases"
  found=$($BENCH "${overrides[@]}" --cfg job --resolve \
    | $PY -m benchmarks.results.stages exported "results/runs/$EXPERIMENT")
  if [ -n "$found" ]; then
    echo "   already exported complete ($found): skipped"
    return
  fi
  waited $BENCH -m "${overrides[@]}"
  $RESULTS export "$EXPERIMENT" --finished-only
  # one run a cell: an exported run that is the start of a larger complete one goes
  $PY -m benchmarks.results.stages drop-superseded "results/runs/$EXPERIMENT"
  $PY -m benchmarks.reports "$EXPERIMENT" --runs results/runs > /dev/null
  # the committed page is what results/runs builds (make check-tables checks it)
  $PY -m benchmarks.reports.html --runs results/runs --out results/report.html 2> /dev/null
}

for d in ${DISTANCES:-none}; do
  override=""
  [ "$d" = none ] || override="benchmark.d=$d"
  for ((k = STEP; k < CASES + STEP; k += STEP)); do
    stage $((k < CASES ? k : CASES)) "$override"
  done
done
echo "done: $ARM in $EXPERIMENT at $CASES cases; results/runs/$EXPERIMENT and results/tables are ready to commit"
