#!/usr/bin/env bash
# Runs a rodsim sweep as a Slurm job array on a real single-node Slurm started here by hand
# (munged, slurmctld and slurmd on localhost, no systemd), then checks runs.csv against the same
# sweep run directly. Not part of CI: it needs root, Debian's slurm-wlm and munge (installed here
# when missing) and leaves nothing running. Usage, from the repository, after a build:
#
#   scripts/slurm_check.sh [SWEEP.toml]      # default: a 6-row sweep of a two-step beam
#
# Its output is in docs/sweeps.md ("Slurm").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rodsim="$root/build/bin/rodsim"
[ -x "$rodsim" ] || { echo "slurm_check: build rodsim first (cmake --build build --target rodsim)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "slurm_check: run as root (it starts munged, slurmctld and slurmd)" >&2; exit 2; }

missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "slurm_check: installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/rodsim-slurm.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  # Only the daemons this script started, by their pid files.
  for f in "$work"/slurmd.pid "$work"/slurmctld.pid "$work"/munged.pid; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
  done
  sleep 1
}
trap cleanup EXIT

# --- munge: the authentication Slurm's daemons and commands share (a private socket and pid file)
mkdir -p "$work/munge"
chown munge:munge "$work/munge"
[ -s /etc/munge/munge.key ] || { /usr/sbin/mungekey --create 2>/dev/null || /usr/sbin/create-munge-key -f; }
runuser -u munge -- /usr/sbin/munged --socket="$work/munge/munge.socket" --pid-file="$work/munge/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed"
cp "$work/munge/munged.pid" "$work/munged.pid"

# --- slurm.conf: one node (this machine, all its cores), one partition, no accounting, no cgroups
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<EOF
ClusterName=rodsim-check
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$work/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 1 30); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 1
done
echo "slurm_check: Slurm $(sinfo -V | awk '{print $2}') on $host: $(sinfo -h -o '%P %D node(s) %c CPUs %T')"

# --- the sweep: one array task per row, then a merge job once every task has ended
sweep=${1:-}
if [ -z "$sweep" ]; then
  sweep="$work/beam.sweep.toml"
  cp "$root/scenes/beam_under_gravity.toml" "$work/beam.toml"
  cat >"$sweep" <<'EOF'
scene = "beam.toml"
[set]                      # two steps of an 11-node beam: the check is about Slurm, not the physics
"simulation.duration" = 0.02
"simulation.dt" = 0.01
"rod.beam.nodes" = 11
"output.every" = 0.01
[axes]
"rod.beam.youngs_modulus" = [1e6, 2e6]
"rod.beam.radius" = [0.01, 0.02, 0.03]
EOF
fi
out="$work/array"
rows=$("$rodsim" sweep "$sweep" --list | tail -n +2 | wc -l)
echo "slurm_check: $sweep: $rows rows"
cd "$work"
job=$(RODSIM="$rodsim" sbatch --parsable --array=0-$((rows - 1)) "$root/scripts/sweep_array.sbatch" "$sweep" "$out")
merge=$(sbatch --parsable --dependency=afterany:"$job" --output="$work/merge.out" --wrap "$rodsim sweep $sweep --merge --output $out")
echo "slurm_check: submitted array job $job (tasks 0-$((rows - 1))) and merge job $merge (afterany:$job)"
for _ in $(seq 1 300); do
  [ -z "$(squeue -h -j "$job,$merge" 2>/dev/null)" ] && break
  sleep 1
done
sacct_state=$(scontrol show job "$merge" 2>/dev/null | grep -o 'JobState=[A-Z]*' || true)
echo "slurm_check: merge job: ${sacct_state:-finished}"
cat "$work/merge.out"

# --- the same sweep run directly; runs.csv must match but for the wall-clock columns
"$rodsim" sweep "$sweep" --quiet --output "$work/direct"
strip() { python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
drop = {i for i, h in enumerate(rows[0]) if h in ("wall_time_s", "atpts_ms", "atpts_contact_ms")}
for r in rows: print(",".join(c for i, c in enumerate(r) if i not in drop))' "$1"; }
echo "slurm_check: $out/runs.csv:"
column -s, -t <"$out/runs.csv" | cut -c1-150
if [ "$(strip "$out/runs.csv")" = "$(strip "$work/direct/runs.csv")" ] && ! grep -q ',missing,\|,failed,' "$out/runs.csv"; then
  echo "slurm_check: OK: $rows rows from $rows Slurm array tasks, runs.csv identical to a direct sweep but for wall-clock columns"
  status=0
else
  echo "slurm_check: FAILED: runs.csv differs from the direct sweep's ($work/direct/runs.csv)"
  status=1
fi
rm -rf "$work/state" "$work/spool"
exit $status
