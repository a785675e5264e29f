#!/bin/bash
# Cost per contact of imc, ipc and alart-curnier from ~100 to ~10,000 contacts (issue 24, item 4):
# writes the rod piles of scripts/make_rod_pile.py (3 layers, bottom one clamped, mu = 0.3) and
# runs bench_contact_scaling on them, one model at a time, printing each model's ratio
# cost-per-contact(largest) / cost-per-contact(smallest).
#
# One thread: solver_newton runs CHOLMOD and UMFPACK with OpenMP's parallel regions inactive, and
# the rest of the step is single-threaded, so no environment variable is needed.
#
# Usage: benchmarks/bench_contact_scaling.sh [build dir] [contacts ...]   (default: build 100 1000 10000)
#        MODELS="imc ipc" BENCH_ARGS="--skip 3 --blocks 3 --steps 1" benchmarks/bench_contact_scaling.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
shift || true
sizes=${*:-100 1000 10000}
models=${MODELS:-imc ipc alart-curnier}
args=${BENCH_ARGS:---skip 3 --blocks 3 --steps 1}
dir=$(mktemp -d /tmp/rod_piles.XXXXXX)
trap 'rm -rf "$dir"' EXIT
for m in $models; do
  scenes=()
  for c in $sizes; do
    /usr/bin/python3 "$here/scripts/make_rod_pile.py" --model "$m" --contacts "$c" -o "$dir/${m}_$c.toml"
    scenes+=("$dir/${m}_$c.toml")
  done
  # shellcheck disable=SC2086
  "$build/bin/bench_contact_scaling" $args "${scenes[@]}"
done
