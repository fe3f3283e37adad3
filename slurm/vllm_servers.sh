#!/usr/bin/env bash
# Start the paper's three vLLM servers on this GPU node (Appendix B), wait until each answers
# /health, and export the base URLs pmem-bench reads. Source it: `source slurm/vllm_servers.sh`.
#
#   PMEM_SERVE=chat,embed,judge   which servers to start (judge: LongMemEval's judge and the 35B
#                                 writer); slurm/job.sh derives it from the job's profile
#   PMEM_VLLM_LOGS=DIR            where the server logs go (default runs/vllm-logs/$SLURM_JOB_ID)
#   CHAT_MAX_LEN=N                the chat window (default 32768; the long-context rows: 131072)
#   HF_HOME / HF_HUB_OFFLINE      point at a pre-downloaded model cache on clusters without internet
#   CHAT_PORT EMBED_PORT JUDGE_PORT  default: three ports of the job's own (8000-8002 outside
#                                 Slurm), so jobs that share a node do not collide
#
# One H200 (141 GB) holds all three: the 4B chat model (~8 GB bf16), the 4B embedder (~8 GB) and
# the 35B-A3B judge in FP8 (~35 GB), each capped by --gpu-memory-utilization.
set -euo pipefail

PMEM_SERVE=${PMEM_SERVE:-chat,embed,judge}
PMEM_VLLM_LOGS=${PMEM_VLLM_LOGS:-runs/vllm-logs/${SLURM_JOB_ID:-local}}
CHAT_MODEL=${CHAT_MODEL:-Qwen/Qwen3-4B-Instruct-2507}
EMBED_MODEL=${EMBED_MODEL:-Qwen/Qwen3-Embedding-4B}
JUDGE_MODEL=${JUDGE_MODEL:-Qwen/Qwen3.6-35B-A3B-FP8}
if [[ -n ${SLURM_JOB_ID:-} ]]; then PMEM_PORT_BASE=$(( 20000 + SLURM_JOB_ID % 10000 * 3 ))
else PMEM_PORT_BASE=8000; fi
CHAT_PORT=${CHAT_PORT:-$PMEM_PORT_BASE}
EMBED_PORT=${EMBED_PORT:-$(( PMEM_PORT_BASE + 1 ))}
JUDGE_PORT=${JUDGE_PORT:-$(( PMEM_PORT_BASE + 2 ))}

pmem_vllm_commands() {
  # One line per server: the exact command (printed by a dry run, executed otherwise).
  [[ ,$PMEM_SERVE, == *,chat,* ]] && echo "vllm serve $CHAT_MODEL --host 127.0.0.1 --port $CHAT_PORT --gpu-memory-utilization 0.25 --max-model-len ${CHAT_MAX_LEN:-32768} --max-num-seqs 64"
  [[ ,$PMEM_SERVE, == *,embed,* ]] && echo "vllm serve $EMBED_MODEL --runner pooling --hf-overrides '{\"is_matryoshka\": true}' --host 127.0.0.1 --port $EMBED_PORT --gpu-memory-utilization 0.15 --max-model-len 8192"
  [[ ,$PMEM_SERVE, == *,judge,* ]] && echo "vllm serve $JUDGE_MODEL --host 127.0.0.1 --port $JUDGE_PORT --gpu-memory-utilization 0.45 --max-model-len 16384 --max-num-seqs 32"
  return 0
}

pmem_wait_healthy() {  # URL PID NAME
  local url=$1 pid=$2 name=$3 waited=0
  until curl -sf "$url/health" >/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "vllm $name exited during start-up; last lines of its log:" >&2
      tail -n 40 "$PMEM_VLLM_LOGS/$name.log" >&2
      return 1
    fi
    sleep 5; waited=$((waited + 5))
    if (( waited > ${PMEM_VLLM_START_TIMEOUT:-1200} )); then
      echo "vllm $name not healthy after ${waited}s ($url)" >&2; return 1
    fi
  done
  echo "vllm $name healthy at $url after ${waited}s"
}

pmem_start_vllm() {
  mkdir -p "$PMEM_VLLM_LOGS"
  PMEM_VLLM_PIDS=()
  local names=() line name
  [[ ,$PMEM_SERVE, == *,chat,* ]] && names+=(chat)
  [[ ,$PMEM_SERVE, == *,embed,* ]] && names+=(embed)
  [[ ,$PMEM_SERVE, == *,judge,* ]] && names+=(judge)
  local i=0
  while IFS= read -r line; do
    name=${names[$i]}; i=$((i + 1))
    # exec: the background subshell becomes the server, so the PID kept is the server's own and
    # pmem_stop_vllm's kill reaches it (without exec it kills only the subshell: seen with
    # make test-vllm, the server kept running)
    eval "exec $line" >"$PMEM_VLLM_LOGS/$name.log" 2>&1 &
    PMEM_VLLM_PIDS+=("$!")
  done < <(pmem_vllm_commands)
  trap pmem_stop_vllm EXIT
  i=0
  for name in "${names[@]}"; do
    case $name in
      chat)  export PMEM_LLM_BASE_URL=http://127.0.0.1:$CHAT_PORT/v1;   pmem_wait_healthy "http://127.0.0.1:$CHAT_PORT" "${PMEM_VLLM_PIDS[$i]}" chat ;;
      embed) export PMEM_EMBED_BASE_URL=http://127.0.0.1:$EMBED_PORT/v1; pmem_wait_healthy "http://127.0.0.1:$EMBED_PORT" "${PMEM_VLLM_PIDS[$i]}" embed ;;
      # the 35B serves the judge and, with writer=vllm35b, the write path (configs/writer)
      judge) export PMEM_JUDGE_BASE_URL=http://127.0.0.1:$JUDGE_PORT/v1
             export PMEM_WRITER_BASE_URL=${PMEM_WRITER_BASE_URL:-$PMEM_JUDGE_BASE_URL}
             pmem_wait_healthy "http://127.0.0.1:$JUDGE_PORT" "${PMEM_VLLM_PIDS[$i]}" judge ;;
    esac
    i=$((i + 1))
  done
}

pmem_stop_vllm() {
  # SIGTERM, then up to PMEM_VLLM_STOP_TIMEOUT seconds (default 30) for the servers to drain and
  # exit, then SIGKILL: a server stuck in shutdown must not hold the job (and its GPU) open.
  local pid waited=0 alive
  for pid in "${PMEM_VLLM_PIDS[@]:-}"; do [[ -n $pid ]] && kill "$pid" 2>/dev/null || true; done
  while :; do
    alive=()
    for pid in "${PMEM_VLLM_PIDS[@]:-}"; do
      [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && alive+=("$pid")
    done
    (( ${#alive[@]} == 0 )) && break
    if (( waited >= ${PMEM_VLLM_STOP_TIMEOUT:-30} )); then
      echo "vllm servers ${alive[*]} still running after ${waited}s: SIGKILL" >&2
      kill -9 "${alive[@]}" 2>/dev/null || true
      break
    fi
    sleep 1; waited=$((waited + 1))
  done
  wait "${PMEM_VLLM_PIDS[@]:-}" 2>/dev/null || true
}
