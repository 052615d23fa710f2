#!/usr/bin/env bash
# A one-node Slurm cluster for tests, from Debian's slurm-wlm and munge:
# munged, slurmctld and slurmd as root on this host, with their sockets,
# ports, state and logs in DIR, no systemd.
#
#   tests/slurm/cluster.sh start DIR   prints the SLURM_CONF to export
#   tests/slurm/cluster.sh stop DIR
set -euo pipefail

cmd=${1:?start or stop}
dir=$(realpath -m "${2:?folder}")

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

write_conf() {
  local host cpus mem
  host=$(hostname -s)
  # at least 4 CPUs, so that the tests' 4-task arrays run at once: the
  # tasks are small, and config_overrides lets slurmd claim more than it has
  cpus=$(( $(nproc) > 4 ? $(nproc) : 4 ))
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
  cat > "$dir/slurm.conf" <<EOF
ClusterName=evaluatest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
# schedule a batch job when it is submitted or freed, not up to 3 s later
SchedulerParameters=batch_sched_delay=0
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  for p in munged slurmctld slurmd sbatch; do
    command -v "$p" >/dev/null || { echo "cluster.sh: $p is not installed (apt-get install slurm-wlm munge)" >&2; exit 77; }
  done
  mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
  chmod 700 "$dir/munge"
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 400 "$dir/munge/munge.key"
  munged -f --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
    --log-file="$dir/munge/munged.log" --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed"
  write_conf
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF" -N "$(hostname -s)"
  for _ in $(seq 100); do
    if sinfo -h -o %t 2>/dev/null | grep -qx idle; then echo "$SLURM_CONF"; return 0; fi
    sleep 0.2
  done
  echo "cluster.sh: the node did not come up; logs in $dir/log" >&2
  sinfo >&2 || true
  exit 1
}

stop() {
  export SLURM_CONF=$dir/slurm.conf
  scancel --quiet --full -u root 2>/dev/null || true
  for f in slurmd.pid slurmctld.pid munge/munged.pid; do
    [ -f "$dir/$f" ] && kill "$(cat "$dir/$f")" 2>/dev/null || true
  done
  for _ in $(seq 50); do
    alive=0
    for f in slurmd.pid slurmctld.pid munge/munged.pid; do
      [ -f "$dir/$f" ] && kill -0 "$(cat "$dir/$f")" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && return 0
    sleep 0.1
  done
}

"$cmd"
