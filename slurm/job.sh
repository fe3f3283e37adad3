#!/usr/bin/env bash
# What every Slurm job of the project shares; slurm/*.sbatch source it from the checkout's root
# (submit from there). It activates the checkout's environment, and gives the job:
#
#   pmem_job_serve OVERRIDES...   start the vLLM servers (slurm/vllm_servers.sh) that the profile in
#                                 these pmem-bench overrides uses (llm=vllm: chat, embedder=vllm:
#                                 embed, judge=vllm or writer=vllm35b: judge; the last value of a
#                                 group counts), wait until each answers, export their URLs
#   pmem_job_serve_servers S...   the same for servers named directly (chat embed judge; the
#                                 submitit launcher passes its profile's `vllm_server`s)
#   pmem_job_run COMMAND...       run the sweep; on Slurm's SIGTERM (pre-emption, the time limit:
#                                 --signal) stop it cleanly and requeue the job, whose rerun resumes
#                                 every run folder (a finished run is instant: every call is cached)
#
#   PMEM_SERVE=chat,embed,judge   start these servers instead (PMEM_SERVE= : none)
#   PMEM_VENV=DIR                 the environment to activate (default: .venv)
#   PMEM_DRY_RUN=1                no cluster needed: print the servers instead of starting them, and
#                                 compose every run of the sweep without calling a model
#                                 (run.dry_run=true, under run.root=$PMEM_DRY_ROOT, default a new
#                                 temporary folder); the output goes to $PMEM_DRY_ROOT/sweep.log
[[ -f slurm/vllm_servers.sh ]] || {
  echo "slurm/job.sh: run from the checkout's root (sbatch from there)" >&2
  exit 2
}
PMEM_VENV=${PMEM_VENV:-.venv}
[[ -f $PMEM_VENV/bin/activate ]] || {
  echo "slurm/job.sh: no environment at $PMEM_VENV: run 'make setup' on the login node" >&2
  exit 2
}
# shellcheck disable=SC1091
source "$PMEM_VENV/bin/activate"
PMEM_SERVE_GIVEN=${PMEM_SERVE-unset}
# shellcheck source=slurm/vllm_servers.sh
source slurm/vllm_servers.sh
PMEM_DRY_RUN=${PMEM_DRY_RUN:-}
if [[ -n $PMEM_DRY_RUN ]]; then
  PMEM_DRY_ROOT=${PMEM_DRY_ROOT:-$(mktemp -d "${TMPDIR:-/tmp}/pmem-dry-run.XXXXXX")}
  mkdir -p "$PMEM_DRY_ROOT"
fi

pmem_job_servers() {  # OVERRIDES...: the comma list of servers that profile uses
  local llm="" embedder="" judge="" writer="" arg serve=()
  for arg in "$@"; do
    case $arg in
      llm=*) llm=${arg#*=} ;;
      embedder=*) embedder=${arg#*=} ;;
      judge=*) judge=${arg#*=} ;;
      writer=*) writer=${arg#*=} ;;
    esac
  done
  [[ $llm == vllm ]] && serve+=(chat)
  [[ $embedder == vllm ]] && serve+=(embed)
  [[ $judge == vllm || $writer == vllm35b ]] && serve+=(judge)
  local IFS=,
  echo "${serve[*]}"
}

pmem_job_serve() {  # OVERRIDES...
  local servers
  servers=$(pmem_job_servers "$@")
  pmem_job_serve_servers ${servers//,/ }
}

pmem_job_serve_servers() {  # SERVER...: start these (chat, embed, judge; "none" skipped)
  local s serve=()
  for s in "$@"; do [[ -n $s && $s != none && ! " ${serve[*]} " == *" $s "* ]] && serve+=("$s"); done
  if [[ $PMEM_SERVE_GIVEN == unset ]]; then PMEM_SERVE=$(IFS=,; echo "${serve[*]}")
  else PMEM_SERVE=$PMEM_SERVE_GIVEN; fi
  if [[ -z $PMEM_SERVE ]]; then
    echo "vllm: no server needed"
  elif [[ -n $PMEM_DRY_RUN ]]; then
    pmem_vllm_commands | sed 's/^/dry run: would start: /'
  else
    pmem_start_vllm
  fi
}

# A job's response cache lives on node-local disk: SQLite's WAL is unsafe on the network
# filesystems a cluster shares (https://www.sqlite.org/wal.html), and parallel jobs would share
# one file. It starts from the dumps earlier jobs left in runs/cache/ and leaves its own there
# (runs/cache/job-<id>.jsonl.gz) when the sweep ends or the job is requeued.
pmem_job_cache() {
  [[ -n ${SLURM_JOB_ID:-} && -z ${PMEM_RUN_CACHE:-} && -z $PMEM_DRY_RUN ]] || return 0
  local dir=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}
  export PMEM_RUN_CACHE=$dir/pmem-cache-${SLURM_CLUSTER_NAME:-slurm}-$SLURM_JOB_ID-${USER:-$(id -un)}.sqlite
  PMEM_JOB_CACHE_DUMP=runs/cache/job-$SLURM_JOB_ID.jsonl.gz
  # a file of that name is another cluster's or an earlier attempt's: what this job may reuse
  # comes from the dumps alone (a requeued attempt's own included)
  rm -f "$PMEM_RUN_CACHE" "$PMEM_RUN_CACHE-wal" "$PMEM_RUN_CACHE-shm"
  mkdir -p runs/cache
  local dumps=(runs/cache/job-*.jsonl.gz)
  if [[ -e ${dumps[0]} ]]; then
    python -m benchmarks.models.cache import --cache "$PMEM_RUN_CACHE" "${dumps[@]}" >/dev/null
  fi
}

pmem_job_cache_save() {  # the job's cache as its dump in runs/cache/; the node's copy removed
  [[ -n ${PMEM_JOB_CACHE_DUMP:-} && -f ${PMEM_RUN_CACHE:-} ]] || return 0
  python -m benchmarks.models.cache export --cache "$PMEM_RUN_CACHE" \
    "$PMEM_JOB_CACHE_DUMP.partial" >/dev/null && mv "$PMEM_JOB_CACHE_DUMP.partial" "$PMEM_JOB_CACHE_DUMP" \
    && rm -f "$PMEM_RUN_CACHE" "$PMEM_RUN_CACHE-wal" "$PMEM_RUN_CACHE-shm"
}

pmem_job_run() {  # COMMAND...
  if [[ -n $PMEM_DRY_RUN ]]; then
    echo "dry run: $* (composing every run under $PMEM_DRY_ROOT)"
    local rc=0
    "$@" >"$PMEM_DRY_ROOT/sweep.log" 2>&1 || rc=$?
    # Hydra's one line per run of the sweep: what the job would run
    grep -E '\[HYDRA\]|^dry run|no (table|audit) built|error' "$PMEM_DRY_ROOT/sweep.log" \
      | sed 's/^\[[^]]*\]\[HYDRA\][[:space:]]*//' || true
    echo "dry run: $(grep -c '^run folder: ' "$PMEM_DRY_ROOT/sweep.log") run(s) composed;" \
      "log: $PMEM_DRY_ROOT/sweep.log"
    return "$rc"
  fi
  pmem_job_cache
  set -m  # the sweep in a process group of its own, so SIGTERM reaches every process in it
  "$@" &
  PMEM_JOB_PID=$!
  set +m
  trap pmem_job_requeue TERM
  local rc=0
  wait "$PMEM_JOB_PID" || rc=$?
  pmem_job_cache_save
  return "$rc"
}

pmem_job_requeue() {
  echo "SIGTERM: stopping the sweep and requeueing job ${SLURM_JOB_ID:-?}" >&2
  kill -TERM -- "-$PMEM_JOB_PID" 2>/dev/null || true
  wait "$PMEM_JOB_PID" || true
  pmem_job_cache_save || true
  if [[ -n ${SLURM_JOB_ID:-} ]]; then scontrol requeue "$SLURM_JOB_ID" || true; fi
  exit 0  # the EXIT trap of vllm_servers.sh stops the servers
}
