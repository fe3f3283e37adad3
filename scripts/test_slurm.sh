#!/usr/bin/env bash
# `make test-slurm`: the cluster path through a real Slurm. Installs Debian's slurm-wlm and munge
# when missing (as root), starts a one-node cluster on this machine (slurmctld and slurmd on
# loopback, a generated slurm.conf whose node claims the GPU node the job scripts ask for: 16
# CPUs, 128 GB and one gpu, which `SlurmdParameters=config_overrides` lets slurmd accept), and
# runs tests/test_slurm_cluster.py against it: sbatch jobs from a fresh clone, the submitit
# launcher from this "login node", and a requeue. The daemons stop when this script exits.
#
#   PMEM_SLURM_KEEP=1   leave the cluster up after the tests (its SLURM_CONF is printed)
#   extra arguments go to pytest, e.g. scripts/test_slurm.sh -k requeue
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PMEM_PYTHON:-$ROOT/.venv/bin/python}
[[ -x $PY ]] || { echo "test-slurm: no project venv at $PY: run 'make setup' first" >&2; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  if [[ $(id -u) != 0 ]]; then
    echo "test-slurm: needs Slurm and munge: sudo apt-get install -y slurm-wlm munge" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q slurm-wlm munge >/dev/null \
    || { apt-get update -q >/dev/null && apt-get install -y -q slurm-wlm munge >/dev/null; }
fi
# slurmd runs jobs as their submitting user; a one-node cluster for tests runs as root
[[ $(id -u) == 0 ]] || { echo "test-slurm: run as root (the cluster's daemons)" >&2; exit 2; }

CLUSTER=$(mktemp -d "${TMPDIR:-/tmp}/pmem-slurm.XXXXXX")
mkdir -p "$CLUSTER"/{state,spool,log}
NODE=$(hostname -s)
read -r CTLD_PORT SLURMD_PORT < <("$PY" - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)
cat >"$CLUSTER/slurm.conf" <<EOF
ClusterName=pmemtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$CLUSTER/state
SlurmdSpoolDir=$CLUSTER/spool
SlurmctldPidFile=$CLUSTER/slurmctld.pid
SlurmdPidFile=$CLUSTER/slurmd.pid
SlurmctldLogFile=$CLUSTER/log/slurmctld.log
SlurmdLogFile=$CLUSTER/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=3600
KillWait=30
GresTypes=gpu
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=16 RealMemory=131072 Gres=gpu:1 State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
printf 'AutoDetect=off\nNodeName=%s Name=gpu File=/dev/null\n' "$NODE" >"$CLUSTER/gres.conf"
export SLURM_CONF=$CLUSTER/slurm.conf

stop() {
  if [[ -n ${PMEM_SLURM_KEEP:-} ]]; then echo "test-slurm: cluster left up: SLURM_CONF=$SLURM_CONF"; return; fi
  for pid in "$CLUSTER"/slurmd.pid "$CLUSTER"/slurmctld.pid; do
    [[ -f $pid ]] && kill "$(cat "$pid")" 2>/dev/null || true
  done
}
trap stop EXIT

if ! pgrep -x munged >/dev/null; then
  mkdir -p /run/munge && chown munge:munge /run/munge
  [[ -s /etc/munge/munge.key ]] || { mungekey --create 2>/dev/null || create-munge-key; }
  su -s /bin/sh munge -c /usr/sbin/munged
fi
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
  state=$(sinfo -h -N -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  [[ $state == *drain* || $state == inval ]] && scontrol update nodename="$NODE" state=resume || true
  sleep 1
done
[[ $(sinfo -h -N -o %T) == idle ]] || {
  echo "test-slurm: the one-node cluster did not come up:" >&2
  tail -n 20 "$CLUSTER"/log/*.log >&2
  exit 1
}
echo "test-slurm: one-node cluster up ($NODE, SLURM_CONF=$SLURM_CONF)"
start=$SECONDS
status=0
"$PY" -m pytest -m slurm -p no:cacheprovider "$@" || status=$?
echo "test-slurm: tests took $((SECONDS - start)) s"
exit "$status"
