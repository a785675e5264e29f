#!/usr/bin/env bash
# The cost of rodsim sweep (issue 20): a sweep of 16 short runs against the same 16 `rodsim run`
# commands launched by hand on the same cores (xargs -P, the best a shell loop does), wall clock.
# The sweep's extra work: one more process that loads the plugins and validates every row before
# the first starts (about one `rodsim check`, 30 ms here), the scene copies, the row records and
# runs.csv. Runs both 2 x REPEATS times in ABBA order (the machine may be shared) and prints the
# ratio of the medians, wall clock and CPU (user + system of everything); the target is <= 1.05.
#
#   benchmarks/bench_sweep.sh [JOBS=2] [REPEATS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
rodsim=$(pwd)/build/bin/rodsim
jobs=${1:-2}
repeats=${2:-3}
work=$(mktemp -d /tmp/rodsim-bench-sweep.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The base scene: a clamped DER beam under gravity, 41 nodes, 2000 implicit steps (about half a
# second per run), copied so that relative paths resolve in $work.
cp "$(dirname "$0")/../scenes/beam_under_gravity.toml" "$work/beam.toml"
cat >"$work/bench.sweep.toml" <<'EOF'
scene = "beam.toml"
[axes]
"rod.beam.youngs_modulus" = [1e6, 2e6, 4e6, 8e6]
"rod.beam.density" = [1000, 1500, 2000, 2500]
EOF
# The same 16 runs by hand: one line of arguments per run, the table's values.
"$rodsim" sweep "$work/bench.sweep.toml" --list | tail -n +2 | while IFS=, read -r k e rho; do
  echo "run $work/beam.toml --set rod.beam.youngs_modulus=$e --set rod.beam.density=$rho --output $work/hand/$k --quiet"
done >"$work/hand.txt"

# Wall and CPU seconds (user + system, the children included) of one command.
timed() { /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null; awk '{print $1, $2 + $3}' "$work/time"; }
sweep() { rm -rf "$work/sweep"; timed "$rodsim" sweep "$work/bench.sweep.toml" --jobs "$jobs" --quiet --output "$work/sweep"; }
by_hand() { rm -rf "$work/hand"; timed xargs -P "$jobs" -L 1 "$rodsim" <"$work/hand.txt"; }
: >"$work/results"
for i in $(seq 1 "$repeats"); do
  # ABBA order: a load that drifts during a repeat weighs on both alike.
  read -r sw1 sc1 < <(sweep)
  read -r hw1 hc1 < <(by_hand)
  read -r hw2 hc2 < <(by_hand)
  read -r sw2 sc2 < <(sweep)
  printf "repeat %d: sweep %.3f %.3f s, by hand %.3f %.3f s (wall; cpu %.3f %.3f vs %.3f %.3f)\n" \
    "$i" "$sw1" "$sw2" "$hw1" "$hw2" "$sc1" "$sc2" "$hc1" "$hc2"
  echo "$sw1 $sc1 $hw1 $hc1" >>"$work/results"
  echo "$sw2 $sc2 $hw2 $hc2" >>"$work/results"
done
grep -q ",ok," "$work/sweep/runs.csv"
# Medians over the 2 x REPEATS runs of each.
awk -v jobs="$jobs" '
  function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                     return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { n++; sw[n] = $1; sc[n] = $2; hw[n] = $3; hc[n] = $4 }
  END {
    msw = median(sw, n); mhw = median(hw, n); msc = median(sc, n); mhc = median(hc, n)
    printf "16 runs on %d cores, median of %d: sweep %.3f s wall (%.3f s cpu), by hand %.3f s wall (%.3f s cpu)\n", jobs, n, msw, msc, mhw, mhc
    printf "ratio sweep / by hand: wall %.3f, cpu %.3f (target <= 1.05)\n", msw / mhw, msc / mhc
  }' "$work/results"
