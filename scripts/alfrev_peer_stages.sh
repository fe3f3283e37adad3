#!/usr/bin/env bash
# A peer's ALFWorld-Revision probe (Table 8, or the conflict probe) in stages that each finish,
# for a machine where the whole run outlasts a session (Graphiti in Table 8: 33-35 episodes a case,
# about 29 minutes a case on 2 cores, so about 10 hours a distance). Stage k runs
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
set -euo pipefail
ARM=${ARM:?name the peer arm, e.g. ARM=graphiti_alfrev}
EXPERIMENT=${EXPERIMENT:-table8}
STEP=${STEP:-2}
CASES=${CASES:-20}
BENCH=${BENCH:-.venv/bin/pmem-bench}
RESULTS=${RESULTS:-.venv/bin/pmem-results}
PY=${PY:-.venv/bin/python}
case "$EXPERIMENT" in
  table8) DISTANCES=${DISTANCES:-0 32} ;;
  conflict) DISTANCES="" ;;  # the conflict probe has no distance
  *) echo "EXPERIMENT=$EXPERIMENT: allowed table8 or conflict" >&2; exit 2 ;;
esac
if ! [[ "$STEP" =~ ^[1-9][0-9]*$ && "$CASES" =~ ^[1-9][0-9]*$ ]]; then
  echo "STEP=$STEP, CASES=$CASES: both must be positive whole numbers" >&2; exit 2
fi

stage() {  # $1: the case count, $2: the distance override (empty for the conflict probe)
  local overrides=("experiment=$EXPERIMENT" "arm=$ARM" "benchmark.cases=$1" ${2:+"$2"}) found rc
  echo "== $ARM, $EXPERIMENT${2:+ ($2)}, $1 cases"
  found=$($BENCH "${overrides[@]}" --cfg job --resolve \
    | $PY -m benchmarks.results.stages exported "results/runs/$EXPERIMENT") && rc=0 || rc=$?
  case $rc in
    0) echo "   already exported ($found): skipped"; return ;;
    1) ;;
    *) exit "$rc" ;;
  esac
  $BENCH -m "${overrides[@]}"
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
