#!/usr/bin/env bash
# Instruction counts (valgrind --tool=callgrind: repeatable whatever else the machine does) of the
# benchmarks under two builds, e.g. the commit before a change and after it, and their ratio.
#
#   benchmarks/compare_instructions.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR   (from the repository root)
#
# The flagella run with the fluid's overlap off: left to choose by timing whether to run on a second
# thread, the count changes from run to run. Each case runs twice per build with a short and a long run; the difference of the two counts is the
# cost of the extra steps alone (start-up, plugin loading and the first step's stability estimate drop
# out), printed per step.
set -euo pipefail
before=$1
after=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rodsim-instr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# name | command with {STEPS} | short steps | long steps
cases=(
  "cosserat timoshenko (100 elements, position-verlet)|bench_cosserat --blocks 1 --steps {STEPS}|1000|3000"
  "cosserat snake (ground + muscles)|bench_cosserat --scene scenes/snake.toml --blocks 1 --steps {STEPS}|500|1500"
  "der newton N = 300|bench_der_newton --sizes 300 --warmup 0 --steps {STEPS}|5|15"
  "flagella M = 2 in contact (imc, rss)|bench_flagella --scene scenes/flagella/m2_close_authors_code.toml --warmup 0 --steps {STEPS} --clock cpu --set force.fluid.overlap=false|20|60"
  "flagella m2_close, contact steps 57-64 (imc, rss)|bench_flagella --scene scenes/flagella/m2_close.toml --warmup 0 --steps {STEPS} --clock cpu --set force.fluid.overlap=false|56|64"
  "spaghetti mat 8 x 22 (alart-curnier)|bench_alart_curnier --rods 8 --steps {STEPS}|2|6"
)

count() {  # count BUILD COMMAND -> instructions
  local build=$1 cmd=$2 out="$tmp/cg.out"
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --callgrind-out-file="$out" "$build/bin/"$cmd >/dev/null 2>&1
  awk '/^summary:/ {print $2}' "$out"
}

printf '%-52s %14s %14s %8s\n' "case (instructions per step)" "before" "after" "ratio"
for c in "${cases[@]}"; do
  IFS='|' read -r name cmd short long <<<"$c"
  per_step() {
    local a b
    a=$(count "$1" "${cmd//\{STEPS\}/$short}")
    b=$(count "$1" "${cmd//\{STEPS\}/$long}")
    echo $(( (b - a) / (long - short) ))
  }
  x=$(per_step "$before")
  y=$(per_step "$after")
  printf '%-52s %14d %14d %8.4f\n' "$name" "$x" "$y" "$(echo "$y / $x" | bc -l)"
done
