#!/usr/bin/env bash
# Start the vLLM servers a job uses on this GPU node (Appendix B's models), one after another,
# each once the previous answers /health, and export the base URLs pmem-bench reads. Source it:
# `source slurm/vllm_servers.sh`.
#
#   PMEM_SERVE=chat,embed,judge   which servers to start (judge: LongMemEval's judge and the 35B
#                                 writer); slurm/job.sh derives it from the job's profile
#   PMEM_GPU_MEM_GB=N             the GPU's memory (default: nvidia-smi's reading, else 141, an
#                                 H200); each server gets the share of it that its weights and a
#                                 KV cache for its window need, and a set that does not fit is
#                                 refused before anything starts
#   PMEM_VLLM_LOGS=DIR            where the server logs go (default runs/vllm-logs/$SLURM_JOB_ID)
#   CHAT_MAX_LEN=N                the chat window (default 32768; the long-context rows: 131072)
#   HF_HOME / HF_HUB_OFFLINE      point at a pre-downloaded model cache on clusters without internet
#   CHAT_PORT EMBED_PORT JUDGE_PORT  default: free ports chosen when the servers start
#
# Every server runs with `--generation-config vllm`: the model's generation_config.json would
# otherwise set default sampling parameters. Tested with vLLM 0.32 (slurm/README.md).
set -euo pipefail

PMEM_SERVE=${PMEM_SERVE:-chat,embed,judge}
PMEM_VLLM_LOGS=${PMEM_VLLM_LOGS:-runs/vllm-logs/${SLURM_JOB_ID:-local}}
CHAT_MODEL=${CHAT_MODEL:-Qwen/Qwen3-4B-Instruct-2507}
EMBED_MODEL=${EMBED_MODEL:-Qwen/Qwen3-Embedding-4B}
JUDGE_MODEL=${JUDGE_MODEL:-Qwen/Qwen3.6-35B-A3B-FP8}
# GB each server needs: its weights (4B bf16 ~8; the 35B-A3B in FP8 ~35) and a KV cache that holds
# a full batch at its window; 8% of the card stays free for CUDA's own use
PMEM_NEED_GB_chat=${PMEM_NEED_GB_chat:-24}
PMEM_NEED_GB_embed=${PMEM_NEED_GB_embed:-12}
PMEM_NEED_GB_judge=${PMEM_NEED_GB_judge:-64}
PMEM_GPU_FREE_SHARE=0.08

pmem_gpu_mem_gb() {  # the GPU's memory in GB: PMEM_GPU_MEM_GB, nvidia-smi, else an H200's 141
  if [[ -n ${PMEM_GPU_MEM_GB:-} ]]; then echo "$PMEM_GPU_MEM_GB"; return; fi
  local mib
  if mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n1) \
      && [[ $mib =~ ^[0-9]+$ ]]; then
    echo $(( mib / 1024 ))
  else
    echo 141
  fi
}

pmem_vllm_servers() {  # the servers of PMEM_SERVE, in start order
  local name
  for name in chat embed judge; do [[ ,$PMEM_SERVE, == *,$name,* ]] && echo "$name"; done
  return 0
}

pmem_vllm_share() {  # NAME GB: the --gpu-memory-utilization of that server on a GB-sized card
  local need_var=PMEM_NEED_GB_$1
  awk -v need="${!need_var}" -v total="$2" 'BEGIN { printf "%.2f", need / total }'
}

pmem_vllm_fits() {  # refuse, in one line, a set of servers the card cannot hold
  local total name need=0 need_var
  total=$(pmem_gpu_mem_gb)
  for name in $(pmem_vllm_servers); do need_var=PMEM_NEED_GB_$name; need=$(( need + ${!need_var} )); done
  if ! awk -v need="$need" -v total="$total" -v free="$PMEM_GPU_FREE_SHARE" \
      'BEGIN { exit !(need <= total * (1 - free)) }'; then
    echo "vllm_servers: $PMEM_SERVE need $need GB; this GPU has $total GB: start fewer servers" \
      "(PMEM_SERVE, e.g. the judge in a job of its own) or use a larger GPU" >&2
    return 1
  fi
}

pmem_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pmem_vllm_ports() {  # choose a free port for each server that has none
  CHAT_PORT=${CHAT_PORT:-$(pmem_free_port)}
  EMBED_PORT=${EMBED_PORT:-$(pmem_free_port)}
  JUDGE_PORT=${JUDGE_PORT:-$(pmem_free_port)}
  while [[ $EMBED_PORT == "$CHAT_PORT" ]]; do EMBED_PORT=$(pmem_free_port); done
  while [[ $JUDGE_PORT == "$CHAT_PORT" || $JUDGE_PORT == "$EMBED_PORT" ]]; do
    JUDGE_PORT=$(pmem_free_port)
  done
}

pmem_vllm_command() {  # NAME: the exact command of one server
  local total share
  total=$(pmem_gpu_mem_gb)
  share=$(pmem_vllm_share "$1" "$total")
  case $1 in
    # the reader and 4B writer: 256 sequences in flight (configs/llm/vllm.yaml sends that many)
    chat) echo "vllm serve $CHAT_MODEL --host 127.0.0.1 --port $CHAT_PORT --gpu-memory-utilization $share --max-model-len ${CHAT_MAX_LEN:-32768} --max-num-seqs 256 --generation-config vllm" ;;
    # Qwen3-Embedding-4B's own 32k window: a whole LongMemEval session is one passage
    embed) echo "vllm serve $EMBED_MODEL --runner pooling --hf-overrides '{\"is_matryoshka\": true}' --host 127.0.0.1 --port $EMBED_PORT --gpu-memory-utilization $share --max-model-len 32768 --generation-config vllm" ;;
    # the 35B judge and writer: text only (its vision tower is never loaded), a window the
    # extractor's longest LongMemEval-S session fits
    judge) echo "vllm serve $JUDGE_MODEL --language-model-only --host 127.0.0.1 --port $JUDGE_PORT --gpu-memory-utilization $share --max-model-len 32768 --max-num-seqs 64 --generation-config vllm" ;;
  esac
}

pmem_vllm_commands() {
  # One line per server, in start order: the exact command (printed by a dry run, run otherwise).
  local name
  pmem_vllm_fits || return 1
  pmem_vllm_ports
  for name in $(pmem_vllm_servers); do pmem_vllm_command "$name"; done
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
  # one server at a time, each after the previous answers: vLLM sizes its KV cache from the
  # memory it finds free when it starts, which a neighbour still loading would corrupt
  mkdir -p "$PMEM_VLLM_LOGS"
  PMEM_VLLM_PIDS=()
  local names=() lines=() line name i
  pmem_vllm_fits || return 1
  pmem_vllm_ports  # here, not in the subshell below, so the URLs exported name the same ports
  mapfile -t names < <(pmem_vllm_servers)
  mapfile -t lines < <(pmem_vllm_commands)
  (( ${#lines[@]} == ${#names[@]} )) || return 1
  trap pmem_stop_vllm EXIT
  for i in "${!names[@]}"; do
    name=${names[$i]} line=${lines[$i]}
    # exec: the background subshell becomes the server, so the PID kept is the server's own and
    # pmem_stop_vllm's kill reaches it
    eval "exec $line" >"$PMEM_VLLM_LOGS/$name.log" 2>&1 &
    PMEM_VLLM_PIDS+=("$!")
    case $name in
      chat)  export PMEM_LLM_BASE_URL=http://127.0.0.1:$CHAT_PORT/v1
             pmem_wait_healthy "http://127.0.0.1:$CHAT_PORT" "$!" chat ;;
      embed) export PMEM_EMBED_BASE_URL=http://127.0.0.1:$EMBED_PORT/v1
             pmem_wait_healthy "http://127.0.0.1:$EMBED_PORT" "$!" embed ;;
      # the 35B serves the judge and, with writer=vllm35b, the write path (configs/writer)
      judge) export PMEM_JUDGE_BASE_URL=http://127.0.0.1:$JUDGE_PORT/v1
             export PMEM_WRITER_BASE_URL=${PMEM_WRITER_BASE_URL:-$PMEM_JUDGE_BASE_URL}
             pmem_wait_healthy "http://127.0.0.1:$JUDGE_PORT" "$!" judge ;;
    esac
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
