#!/usr/bin/env bash
# A peer's ALFWorld-Revision probe (Table 8, or the conflict probe) in stages that each finish,
# for a machine where the whole run outlasts a session (Graphiti in Table 8: 33-35 episodes a case,
# 29-46 minutes a case on 2 cores, so 10-15 hours a distance). Stage k runs
# benchmark.cases=k*STEP; each case is generated from its own seed, so a smaller run is the start
# of a larger one (tests/test_alfworld_revision.py,
# test_a_smaller_probe_run_is_the_start_of_a_larger_one) and a stage answers the earlier stages'
# cases from the response cache, paying only its new ones. After each finished stage its run is
# exported (pmem-results export --finished-only) and the table rebuilt from results/runs: the
# table keeps the run with the most cases per cell and states n per row, so a session that ends
# mid-stage leaves the last finished stage ready to commit. Rerun to go on: a stage whose run is
# already exported, at its case count or more, is skipped (benchmarks/results/stages.py).
#   ARM=graphiti_alfrev scripts/alfrev_peer_stages.sh                  # Table 8, d=0 then d=32
#   ARM=graphiti_alfrev DISTANCES=0 STEP=1 CASES=6 scripts/alfrev_peer_stages.sh
#   ARM=mem0_alfrev EXPERIMENT=conflict STEP=5 scripts/alfrev_peer_stages.sh
# OVERRIDES="llm=... writer=..." adds Hydra overrides to every stage (a profile, say).
# DUMP=results/cache/<name>.jsonl.gz keeps the chat calls this invocation pays in that dump
# (results/cache/README.md), refreshed every DUMP_EVERY seconds (600) and once more at the end or
# on a stop (SIGTERM, Ctrl-C), so a session that has to stop commits it as it is:
#   ARM=graphiti_alfrev DUMP=results/cache/2026-12-06c-table8_graphiti.jsonl.gz scripts/alfrev_peer_stages.sh
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

# A stop (SIGTERM, Ctrl-C) stops the run in hand too (it resumes from its records and the
# cache), then the EXIT trap dumps what was paid.
child=""
trap '[ -z "$child" ] || { kill "$child" 2> /dev/null; wait "$child" || true; }; exit 143' TERM INT
waited() { "$@" & child=$!; wait "$child"; child=""; }

if [ -n "$DUMP" ]; then  # the calls paid from now on, dumped while the stages go on
  since=$(date -u +%Y-%m-%dT%H:%M:%S)
  dump() {
    $PY -m benchmarks.models.cache export "$DUMP" --since "$since" --kind chat --cache "$CACHE"
  }
  (  # its sleep goes with it, and it holds none of the script's outputs open
    trap 'kill "$nap" 2> /dev/null; exit 0' TERM
    while :; do sleep "$DUMP_EVERY" & nap=$!; wait "$nap"; dump || true; done
  ) > /dev/null 2>&1 &
  dumper=$!
  trap 'kill "$dumper" 2> /dev/null || true; [ ! -f "$CACHE" ] || dump' EXIT
fi

stage() {  # $1: the case count, $2: the distance override (empty for the conflict probe)
  local overrides=("experiment=$EXPERIMENT" "arm=$ARM" "benchmark.cases=$1" ${2:+"$2"} "${extra[@]}")
  local found rc
  echo "== $ARM, $EXPERIMENT${2:+ ($2)}, $1 cases"
  found=$($BENCH "${overrides[@]}" --cfg job --resolve \
    | $PY -m benchmarks.results.stages exported "results/runs/$EXPERIMENT") && rc=0 || rc=$?
  case $rc in
    0) echo "   already exported ($found): skipped"; return ;;
    1) ;;
    *) exit "$rc" ;;
  esac
  waited $BENCH -m "${overrides[@]}"
  $RESULTS export "$EXPERIMENT" --finished-only
  # one run a cell: an exported run that is the start of a larger one goes
  $PY -m benchmarks.results.stages drop-superseded "results/runs/$EXPERIMENT"
  $PY -m benchmarks.reports "$EXPERIMENT" --runs results/runs > /dev/null
}

for d in ${DISTANCES:-none}; do
  override=""
  [ "$d" = none ] || override="benchmark.d=$d"
  for ((k = STEP; k < CASES + STEP; k += STEP)); do
    stage $((k < CASES ? k : CASES)) "$override"
  done
done
echo "done: $ARM in $EXPERIMENT at $CASES cases; results/runs/$EXPERIMENT and results/tables are ready to commit"
