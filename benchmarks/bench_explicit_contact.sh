#!/usr/bin/env bash
# What contact costs an explicit solver (issue 39): `rodsim run` with its default outputs on the
# rope dropped across a bar onto a floor (scenes/contact/rope_over_bar.toml) with each force or
# impulse contact model at its defaults, against the same scene with the contact removed (no
# [[contact]], no [[obstacle]]: the rope falls through), at the same dt: the largest the solver
# accepts for the rods (read from `rodsim check`). Runs interleaved (contact, no contact, contact,
# ...) REPEATS times on one core each and prints the median wall times and their ratio; the
# target is <= 5 (contact must not be handled by shrinking the step).
#
#   benchmarks/bench_explicit_contact.sh [REPEATS=3] [DURATION=0.6]
set -euo pipefail
cd "$(dirname "$0")/.."
rodsim=$(pwd)/build/bin/rodsim
repeats=${1:-3}
duration=${2:-0.6}
work=$(mktemp -d /tmp/rodsim-bench-explicit-contact.XXXXXX)
trap 'rm -rf "$work"' EXIT
scene=scenes/contact/rope_over_bar.toml
# the scene without its contact model and floor
awk '/^\[\[obstacle\]\]|^\[\[contact\]\]/ {skip = 1; next} /^\[/ {skip = 0} !skip' "$scene" >"$work/no_contact.toml"

seconds() {  # wall seconds of one run
  local start end
  start=$(date +%s.%N)
  taskset -c 0 "$rodsim" run "$@" --quiet --force --output "$work/out" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN {print b - a}'
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

printf '| rod | solver | contact | dt (s) | with contact (s) | without (s) | ratio |\n|---|---|---|---|---|---|---|\n'
for rod in der cosserat; do
  for solver in position-verlet pefrl; do
    models="--set rod.rope.model=$rod --set rod.bar.model=$rod --set solver.type=$solver"
    dt=$( ("$rodsim" check "$scene" $models --set simulation.dt=1e-3 2>&1 || true) | sed -n 's/.*use dt <= \([0-9.e+-]*\) s.*/\1/p' | head -1 || true)
    common="$models --set simulation.dt=$dt --set simulation.duration=$duration"
    for contact in imc ipc alart-curnier; do
      [ "$solver" = pefrl ] && [ "$contact" = alart-curnier ] && continue
      : >"$work/with"
      : >"$work/without"
      for _ in $(seq "$repeats"); do
        seconds "$scene" $common --set contact.type=$contact >>"$work/with"
        seconds "$work/no_contact.toml" $common >>"$work/without"
      done
      w=$(median <"$work/with")
      wo=$(median <"$work/without")
      printf '| %s | %s | %s | %s | %.2f | %.2f | %.2f |\n' "$rod" "$solver" "$contact" "$dt" "$w" "$wo" \
        "$(awk -v a="$w" -v b="$wo" 'BEGIN {print a / b}')"
    done
  done
done
