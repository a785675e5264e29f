#!/usr/bin/env bash
# Wall time of one rodsim optimize (issue 21) on 1 and on 2 cores: a small CMA-ES run of the snake
# (scenes/inverse/snake_gait.toml, 2 muscle periods, population 8, 4 generations: 33 runs of about
# 0.5 s), --jobs 1 against --jobs 2, each in a fresh output directory (no cached runs), ABBA order
# repeated REPEATS times (the machine may be shared). Prints the medians and the speed-up
# wall(jobs 1) / wall(jobs 2); the ideal is 2 (each generation's 8 candidates run as one batch; the
# initial point runs alone).
#
#   benchmarks/bench_optimize.sh [REPEATS=1] [RODSIM=build/bin/rodsim]
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-1}
rodsim=${2:-$(pwd)/build/bin/rodsim}
work=$(mktemp -d /tmp/rodsim-bench-optimize.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/opt.toml" <<EOF2
scene = "$(pwd)/scenes/inverse/snake_gait.toml"
goal = "maximize"
seed = 7
generations = 4
population = 8
sigma = 0.1
[set]
"simulation.duration" = 2.0
[objective]
probe = "com_x"
statistic = "rate"
window = [1.0, 2.0]
[[parameter]]
key = "force.muscles.wave_number"
initial = 6.477510625958336
lower = 3.0
upper = 20.0
[[parameter]]
key = "force.muscles.amplitudes"
index = 3
initial = 48.5
lower = 0.0
upper = 80.0
EOF2

# Wall seconds of one optimization with `jobs` jobs, in a fresh directory; the CPU seconds (user +
# system of the driver and every run) go to $work/cpu-<jobs>. CPU close to wall with --jobs 2 means
# the machine had no second core to give (other load).
timed() {
  local jobs=$1 dir="$work/run-$RANDOM-$RANDOM"
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$rodsim" optimize "$work/opt.toml" --output "$dir" --jobs "$jobs" --quiet
  rm -rf "$dir"
  awk '{print $2 + $3}' "$work/time" >>"$work/cpu-$jobs"
  awk '{print $1}' "$work/time"
}
one=() two=()
for ((r = 1; r <= repeats; ++r)); do
  a=$(timed 1); b=$(timed 2); c=$(timed 2); d=$(timed 1)
  one+=("$a" "$d"); two+=("$b" "$c")
  printf 'repeat %d: --jobs 1 %.2f %.2f s, --jobs 2 %.2f %.2f s (wall)\n' "$r" "$a" "$d" "$b" "$c"
done
printf 'cpu (user + system, all processes): --jobs 1 %s s, --jobs 2 %s s; load average now: %s\n' \
  "$(paste -sd' ' "$work/cpu-1")" "$(paste -sd' ' "$work/cpu-2")" "$(cut -d' ' -f1-3 /proc/loadavg)"
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
m1=$(median "${one[@]}"); m2=$(median "${two[@]}")
printf 'one optimization (33 runs), median of %d: --jobs 1 %.2f s, --jobs 2 %.2f s\n' "$((2 * repeats))" "$m1" "$m2"
printf 'speed-up jobs 1 -> 2: %.2f (ideal 2)\n' "$(echo "$m1 / $m2" | bc -l)"
