#!/usr/bin/env bash
# Start a real single-node SLURM cluster on this machine (Debian slurm-wlm + munge),
# for tests/test_slurm.py. Idempotent: returns within a second when the node is
# already idle; installs the packages only when they are missing.
#
#   sudo .ci/setup_slurm.sh          # root is needed (apt-get, daemons)
#
# Layout: one node = this host (`hostname -s`), CPUs = nproc, RealMemory = 90 % of
# the memory `free` reports, partition "debug" (Default=YES), no accounting
# (so the Snakemake executor queries job status with squeue, not sacct),
# proctrack/linuxproc + task/none (no cgroups needed, works in containers).
set -euo pipefail

HOST="$(hostname -s)"
CONF_DIR=/etc/slurm
CONF="$CONF_DIR/slurm.conf"
LOG_DIR=/var/log/slurm
TIMEOUT="${SLURM_SETUP_TIMEOUT:-60}"

log() { echo "setup_slurm: $*" >&2; }

node_idle() {
    command -v sinfo >/dev/null 2>&1 || return 1
    local state
    state="$(timeout 5 sinfo -h -N -n "$HOST" -o '%t' 2>/dev/null | head -n1)" || return 1
    [[ "$state" == idle* || "$state" == mix* || "$state" == alloc* ]]
}

if [[ "${1:-}" != "--restart" ]] && node_idle; then
    log "node $HOST already up in partition debug"
    exit 0
fi

if [[ "$(id -u)" != 0 ]]; then
    log "must run as root (installs packages and starts munged, slurmctld, slurmd)"
    exit 1
fi

# 1. packages (only when missing: fast when already installed)
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 \
        || ! command -v munged >/dev/null 2>&1 || ! command -v sinfo >/dev/null 2>&1; then
    log "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

# Stop a daemon by its pid file (never by name), waiting until it is gone.
stop_pidfile() {
    local f="$1" pid
    [[ -s "$f" ]] || return 0
    pid="$(cat "$f")"
    if kill -0 "$pid" 2>/dev/null; then
        log "stopping pid $pid ($f)"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "$f"
}

# 2. munge key and daemon
install -d -m 0700 -o munge -g munge /etc/munge
install -d -m 0755 -o munge -g munge /var/log/munge /var/lib/munge
install -d -m 0755 -o munge -g munge /run/munge
if [[ ! -s /etc/munge/munge.key ]]; then
    log "creating munge key"
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    stop_pidfile /run/munge/munged.pid  # a stale munged started before
    rm -f /run/munge/munge.socket.2
    # munged runs as its own user, like the Debian service does
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null || { log "munged does not answer"; exit 1; }

# 3. slurm.conf: one node, this host
CPUS="$(nproc)"
MEM_MB="$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')"
install -d -m 0755 "$CONF_DIR" "$LOG_DIR" /var/spool/slurmctld /var/spool/slurmd /run/slurm
cat > "$CONF.new" <<CONF
# Written by psybench .ci/setup_slurm.sh: single-node test cluster on $HOST.
ClusterName=psybench
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# no accounting: job status comes from squeue
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# keep finished jobs visible to squeue/scontrol for a while
MinJobAge=600
InactiveLimit=0
KillWait=5
Waittime=0
SlurmctldTimeout=30
SlurmdTimeout=60
# Round trips on this one-node localhost cluster take milliseconds (slurmctld logs
# usec=460-4273 per RPC under load 7 on 2 cores), so 1 s is ample. The default, 10 s,
# is also how long every client command waits (MessageTimeout-1 retries) when slurmctld
# is down: snakemake-executor-plugin-slurm 2.x runs `scontrol show config` when it is
# imported, which Snakemake does on every start, local runs included (9 s of a 15.7 s
# no-op rerun with the controller down; 0.0 s with 1).
MessageTimeout=1
NodeName=$HOST CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
mv "$CONF.new" "$CONF"
# some Debian builds look in /etc/slurm-llnl
if [[ -d /etc/slurm-llnl && ! -e /etc/slurm-llnl/slurm.conf ]]; then ln -s "$CONF" /etc/slurm-llnl/slurm.conf; fi

# 4. daemons (as root); -c: start clean, forgetting jobs of a previous configuration
stop_pidfile /run/slurm/slurmd.pid
stop_pidfile /run/slurm/slurmctld.pid
slurmctld -c
slurmd -c

# 5. wait for the node to be idle
for _ in $(seq $((TIMEOUT * 2))); do
    if node_idle; then
        log "node $HOST idle (CPUs=$CPUS RealMemory=${MEM_MB}MB) in partition debug"
        sinfo >&2
        exit 0
    fi
    state="$(timeout 5 sinfo -h -N -n "$HOST" -o '%t' 2>/dev/null | head -n1 || true)"
    if [[ "$state" == down* || "$state" == drain* ]]; then
        scontrol update NodeName="$HOST" State=RESUME 2>/dev/null || true
    fi
    sleep 0.5
done
log "node $HOST did not become idle within ${TIMEOUT}s; last logs:"
tail -n 20 "$LOG_DIR/slurmctld.log" "$LOG_DIR/slurmd.log" >&2 || true
sinfo >&2 || true
exit 1
