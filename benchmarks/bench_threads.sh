#!/usr/bin/env bash
# Threads (issue 44, item 4): wall time of `rodsim run` (default outputs) with 1 and 2 threads on the
# 10 000-element Cosserat Timoshenko beam (one rod) and on 100 cantilevers of 100 elements, each run
# REPEATS times with the thread counts interleaved; prints min-max per case and the speed-up of the
# medians, and checks that final.csv is the same bit for bit. Run it on a quiet machine (`uptime`).
# On a machine shared with other sessions, `nice` does not help (the kernel's autogroups share the CPUs
# between sessions first); a session of its own at autogroup nice -20 gets both cores:
#   setsid bash -c 'echo -20 > /proc/self/autogroup; benchmarks/bench_threads.sh 5'
#   benchmarks/bench_threads.sh [REPEATS]      (RODSIM=path/to/rodsim, default build/bin/rodsim)
set -euo pipefail
cd "$(dirname "$0")/.."
RODSIM=${RODSIM:-build/bin/rodsim}
REPEATS=${1:-5}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# name|scene and --set values (2000 steps each)
CASES=(
  "timoshenko_10000|benchmarks/scenes/pyelastica_timoshenko.toml --set rod.beam.nodes=10001 --set simulation.dt=2.1000000000000002e-05 --set solver.velocity_forces=midpoint --set simulation.duration=0.042"
  "hanging_rods_100|benchmarks/scenes/hanging_rods_100.toml --set simulation.duration=0.2"
)

echo "$(date -u '+%F %H:%M UTC'), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${CASES[@]}"; do
  name=${c%%|*}
  args=${c#*|}
  declare -A times=()
  for ((i = 0; i < REPEATS; i++)); do
    for t in 1 2; do
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$RODSIM" run $args --threads "$t" --output "$OUT/$name-$t" --force --quiet > /dev/null 2>&1
      t1=$(date +%s.%N)
      times[$t]+="$(echo "$t1 - $t0" | bc) "
    done
  done
  cmp -s "$OUT/$name-1/final.csv" "$OUT/$name-2/final.csv" && same="final.csv identical" || same="final.csv DIFFERS"
  stats() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {printf "%.2f-%.2f s (median %.2f)", a[1], a[NR], a[int((NR+1)/2)]}'; }
  s1=$(echo "${times[1]}" | stats)
  s2=$(echo "${times[2]}" | stats)
  m1=$(echo "$s1" | sed 's/.*median \([0-9.]*\).*/\1/')
  m2=$(echo "$s2" | sed 's/.*median \([0-9.]*\).*/\1/')
  printf '%-18s 1 thread %s   2 threads %s   speed-up %.2f   %s\n' "$name" "$s1" "$s2" "$(echo "$m1 / $m2" | bc -l)" "$same"
  unset times
done
