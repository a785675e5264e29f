#!/usr/bin/env bash
# rodsim against dismech-rods (Choi et al. 2024) on dismech's own helix example, side by side:
# the whole process of each code, one thread each on core 1, in interleaved rounds
# (dismech, rodsim, dismech, rodsim, ...), for dismech's two implicit schemes and rodsim's
# matching solver: BACKWARD_EULER against `implicit-euler`, IMPLICIT_MIDPOINT (the example's own
# scheme) against `implicit-midpoint`. Then one more run of each pair, untimed, with dismech's
# position logger on, to compare the final tip positions of the two codes.
#
#   benchmarks/peers/side_by_side_dismech.sh [ROUNDS=3]
#
# Needs dismech built by benchmarks/peers/setup-dismech.sh (PEERS_DIR, default /work/peers) and
# rodsim's CLI and plugins (RODSIM_BUILD, default build/):
#   cmake --build build -j2 --target rodsim rod_der solver_newton loads constraints
# rodsim and its plugins are copied at the start (as an installed tree), so that a rebuild of
# RODSIM_BUILD during the rounds does not change what is measured; a build of a named commit (its
# own build folder) is what a figure should come from.
# Prints wall and CPU (user + system) seconds of each process, min-max over the rounds, and the
# range of the per-round ratio dismech / rodsim.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
rounds=${1:-3}
peers=${PEERS_DIR:-/work/peers}
rodsim=${RODSIM_BUILD:-$repo/build}/bin/rodsim
scene=$repo/benchmarks/scenes/dm_helix.toml
dismech=$peers/dismech/disMech
examples=$peers/src/dismech-rods/cpp_examples
for f in "$dismech" "$rodsim" "$scene" "$examples/helix_case/helix_configuration.txt"; do
  [ -e "$f" ] || { echo "side_by_side_dismech.sh: $f is missing (see the comment at the top)" >&2; exit 2; }
done
case "$rounds" in '' | *[!0-9]* | 0) echo "side_by_side_dismech.sh: ROUNDS must be a positive integer" >&2; exit 2 ;; esac

work=$(mktemp -d /tmp/rodsim-side-by-side-dismech.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/dismech"
# the helix example reads examples/helix_case/helix_configuration.txt from its working folder
ln -s "$examples" "$work/dismech/examples"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

# the copy: <prefix>/bin/rodsim loads the plugins in <prefix>/lib/rodsim/plugins
snap=$work/rodsim
mkdir -p "$snap/bin" "$snap/lib/rodsim/plugins"
cp "$rodsim" "$snap/bin/rodsim"
cp "$(dirname "$rodsim")"/../plugins/rodsim-*.so "$snap/lib/rodsim/plugins/"
rodsim=$snap/bin/rodsim

timed() {  # OUT_FILE COMMAND...: appends "wall cpu" of the whole process to OUT_FILE
  local out=$1 t
  shift
  t=$( { TIMEFORMAT='%R %U %S'; time "$@" >"$work/stdout" 2>"$work/stderr"; } 2>&1 ) || {
    echo "side_by_side_dismech.sh: failed: $*" >&2
    tail -5 "$work/stderr" >&2
    exit 1
  }
  echo "$t" | awk '{printf "%.3f %.3f\n", $1, $2 + $3}' >>"$out"
}
run_dismech() {  # SCHEME [ENV...]
  local scheme=$1
  shift
  (cd "$work/dismech" && env DISMECH_INTEGRATOR="$scheme" "$@" taskset -c 1 "$dismech")
}
run_rodsim() {  # SOLVER OUT_DIR
  taskset -c 1 "$rodsim" run "$scene" --set solver.type="$1" --output "$2" --force --quiet
}
check_rodsim() {  # OUT_DIR: the run took all its 2000 steps (10 s of 5 ms)
  if ! { grep -q '"status": "ok"' "$1/summary.json" && grep -q '"steps": 2000,' "$1/summary.json" &&
         grep -q "\"$snap/lib/rodsim/plugins/" "$1/summary.json"; }; then
    echo "side_by_side_dismech.sh: rodsim's run in $1 did not finish: $(head -c 400 "$1/summary.json")" >&2
    exit 1
  fi
}

schemes="BACKWARD_EULER:implicit-euler IMPLICIT_MIDPOINT:implicit-midpoint"
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uptime | sed 's/.*load/load/'), $rounds rounds"
echo "$("$rodsim" --version), copied from ${RODSIM_BUILD:-$repo/build}; dismech: $dismech"
# (not nproc: it obeys OMP_NUM_THREADS)
cpu_field() { grep -m1 "^$1" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'; }
echo "CPU: $(cpu_field 'model name') (family $(cpu_field 'cpu family'), model $(cpu_field 'model')), $(grep -c '^processor' /proc/cpuinfo) cores"
for r in $(seq "$rounds"); do
  for pair in $schemes; do
    dm=${pair%%:*} rs=${pair##*:}
    timed "$work/dm_$dm" run_dismech "$dm"
    grep -q 'Completed simulation' "$work/stdout" || { echo "dismech $dm did not complete" >&2; exit 1; }
    timed "$work/rs_$rs" run_rodsim "$rs" "$work/rs_out_$rs"
    check_rodsim "$work/rs_out_$rs"
  done
  echo "round $r done, $(uptime | sed 's/.*load/load/')" >&2
done

range() { sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f-%.2f", lo, hi}'; }
ratio() {  # DM_FILE RS_FILE COLUMN: per-round ratio dismech / rodsim
  paste -d' ' "$1" "$2" | awk -v c="$3" '{printf "%.2f\n", $c / $(c + 2)}' | range
}
echo
echo "| scheme (dismech / rodsim) | dismech wall s | rodsim wall s | wall ratio | dismech CPU s | rodsim CPU s | CPU ratio |"
echo "|---|---|---|---|---|---|---|"
for pair in $schemes; do
  dm=${pair%%:*} rs=${pair##*:}
  d=$work/dm_$dm s=$work/rs_$rs
  printf '| %s / %s | %s | %s | %sx | %s | %s | %sx |\n' "$dm" "$rs" \
    "$(cut -d' ' -f1 "$d" | range)" "$(cut -d' ' -f1 "$s" | range)" "$(ratio "$d" "$s" 1)" \
    "$(cut -d' ' -f2 "$d" | range)" "$(cut -d' ' -f2 "$s" | range)" "$(ratio "$d" "$s" 2)"
done

# Final tips: dismech's position log (one line per step: t, then x y z of every node, 6 significant
# digits) against rodsim's final.csv (rod,node,x,y,z). The last node is the free tip. Newton
# iterations per step: dismech prints each step's ("iters: N"), rodsim's summary.json has the mean.
echo
echo "| scheme | dismech t_end s | dismech tip (m) | rodsim tip (m) | distance (mm) | Newton iterations per step, dismech / rodsim |"
echo "|---|---|---|---|---|---|"
for pair in $schemes; do
  dm=${pair%%:*} rs=${pair##*:}
  rm -rf "$work/dismech/log_files"
  run_dismech "$dm" DISMECH_POSITION_LOG=1 >"$work/dm_tip_stdout"
  dm_iters=$(awk -F'iters: ' 'NF > 1 {n++; s += $2} END {printf "%.2f", s / n}' "$work/dm_tip_stdout")
  rs_iters=$(sed -n 's/.*"aipts": \([0-9.]*\).*/\1/p' "$work/rs_out_$rs/summary.json")
  log=$(ls "$work"/dismech/log_files/helix/node_*.csv)
  tail -1 "$log" | awk -F, '{printf "%s %s %s %s\n", $1, $(NF - 2), $(NF - 1), $NF}' >"$work/dm_tip"
  tail -1 "$work/rs_out_$rs/final.csv" | awk -F, '{printf "%s %s %s\n", $3, $4, $5}' >"$work/rs_tip"
  paste -d' ' "$work/dm_tip" "$work/rs_tip" | awk -v s="$dm / $rs" -v it="$dm_iters / $rs_iters" '{
    d = sqrt(($2 - $5)^2 + ($3 - $6)^2 + ($4 - $7)^2)
    printf "| %s | %.4f | (%.7f, %.7f, %.7f) | (%.7f, %.7f, %.7f) | %.4f | %s |\n", s, $1, $2, $3, $4, $5, $6, $7, 1000 * d, it }'
done
