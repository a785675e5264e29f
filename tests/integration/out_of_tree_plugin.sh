#!/usr/bin/env bash
# End-to-end proof that a third party can build and use a plugin out of tree:
#
#   1. install rodsim from a build tree into a temporary prefix (cmake --install);
#   2. configure and build docs/examples/anchor_spring against that prefix only
#      (find_package(rodsim) + rodsim_add_plugin, -DCMAKE_PREFIX_PATH=<prefix>);
#   3. run the installed <prefix>/bin/rodsim on docs/examples/anchor_spring/scene.toml with the
#      plugin found through RODSIM_PLUGIN_PATH: `describe`, `check`, a bad node (exit 2 naming the
#      scene line), and three static solves with spring stiffness k = ~0 ("without"), 0.1 and 1 N/m;
#   4. check the tip deflections in final.csv against beam theory.
#
# Physics. A cantilever of length L, bending stiffness EI, tip load F (along -z) and a spring of
# stiffness k anchored at the undeformed tip: the spring acts in parallel with the beam, so for small
# deflections the tip deflection is  d(k) = F / (k_beam + k),  k_beam = 3 EI / L^3.
# The DER beam clamped on nodes 0 and 1 has its first bending hinge at node 1, so it behaves like a
# cantilever supported half an edge in (the Voronoi region of node 1 starts at l/2): with m edges of
# length l, d(0) = F l^3 (m-1) m (2m-1) / (6 EI) = F L^3/(3 EI) * (1 - 1/m)(1 - 1/(2m)), i.e. 3.0 %
# stiffer than the continuum for m = 50. Hence the tolerances:
#   - measured k_beam (F / d(0)) vs 3EI/L^3: within 5 % (expected +3.1 %);
#   - measured k_beam vs the discrete formula above: within 1 % (geometric nonlinearity ~ (d/L)^2);
#   - d(k) vs F / (3EI/L^3 + k) (the brief's continuum prediction): within 3 % (expected -1.6 %, -0.3 %);
#   - d(k) vs F / (F/d(0) + k) (spring in parallel with the beam as measured): within 0.5 %;
#   - the spring moves the tip toward the anchor: |tip - anchor| decreases as k grows.
#
# Usage: tests/integration/out_of_tree_plugin.sh <rodsim build dir>   (run from anywhere)
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <rodsim build dir>" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
example="$src/docs/examples/anchor_spring"
python=/usr/bin/python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rodsim-oot.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
die() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

step "install rodsim from $build into $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; die "cmake --install failed"; }
rodsim="$tmp/prefix/bin/rodsim"
[[ -x "$rodsim" ]] || die "no $rodsim after install"
[[ -f "$tmp/prefix/lib/cmake/rodsim/rodsimConfig.cmake" ]] || die "no rodsimConfig.cmake in the prefix"
[[ -f "$tmp/prefix/include/rodsim/sdk.h" ]] || die "no SDK headers in the prefix"

step "rodsim fit and optimize run as their own programs from <prefix>/libexec/rodsim; rodsim links neither"
! readelf -d "$rodsim" | grep -qE 'NEEDED.*(ceres|pagmo|mkl|glog|tbb)' || die "$rodsim links Ceres or pagmo2 (they belong to rodsim-fit and rodsim-optimize)"
for verb in fit optimize; do
  [[ -x "$build/libexec/rodsim/rodsim-$verb" ]] || continue  # configured without Ceres or pagmo2
  [[ -x "$tmp/prefix/libexec/rodsim/rodsim-$verb" ]] || die "no libexec/rodsim/rodsim-$verb in the prefix"
  set +e
  out=$("$rodsim" "$verb" "$tmp/missing.toml" 2>&1)
  status=$?
  set -e
  [[ $status -eq 2 && "$out" == *"cannot open the $verb file"* ]] || die "installed rodsim $verb: exit $status: $out"
done

step "configure and build $example against the installed SDK"
# Only the temporary prefix may provide rodsim: the source and build trees are not on any path.
cmake -S "$example" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; die "configuring the example failed"; }
grep -q "rodsim_DIR:PATH=$tmp/prefix/" "$tmp/build/CMakeCache.txt" \
  || die "find_package(rodsim) did not use the temporary prefix: $(grep rodsim_DIR "$tmp/build/CMakeCache.txt")"
cmake --build "$tmp/build" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; die "building the example failed"; }
plugin="$tmp/build/rodsim-anchor_spring.so"
[[ -f "$plugin" ]] || die "rodsim_add_plugin did not leave $plugin in the caller's build directory"
echo "built $plugin"

step "an installed rodsim uses its own plugins and does not search the build tree it came from"
"$rodsim" plugins >"$tmp/plugins-installed.txt"
grep -q "$tmp/prefix/lib/rodsim/plugins" "$tmp/plugins-installed.txt" \
  || { cat "$tmp/plugins-installed.txt"; die "rodsim plugins does not search $tmp/prefix/lib/rodsim/plugins"; }
! grep -q "ignored:" "$tmp/plugins-installed.txt" \
  || { cat "$tmp/plugins-installed.txt"; die "an installed rodsim lists ignored duplicates"; }
! grep -qF "$build/plugins" "$tmp/plugins-installed.txt" \
  || { cat "$tmp/plugins-installed.txt"; die "an installed rodsim searches the build tree"; }
for script in plot_run.py plot_compare.py plot_fit.py plot_optimize.py; do
  [[ -f "$tmp/prefix/share/rodsim/$script" ]] || die "no share/rodsim/$script in the prefix"
done

# The example's plugin beside the installed ones.
export RODSIM_PLUGIN_PATH="$tmp/build"

step "the plugin's own derivative test, built with the installed SDK test kit"
[[ -f "$tmp/prefix/include/rodsim/testing/derivative_checks.h" ]] || die "no SDK test kit in the prefix"
"$tmp/build/test_anchor_spring" || die "the anchor spring's derivative check failed"

step "rodsim plugins / describe"
"$rodsim" plugins >"$tmp/plugins.txt"
grep -F "($plugin)" "$tmp/plugins.txt" | grep -q "anchor-spring 1.0.0" \
  || { cat "$tmp/plugins.txt"; die "rodsim plugins does not list anchor-spring 1.0.0 from $plugin"; }
"$rodsim" describe anchor-spring | tee "$tmp/describe.txt"
for word in stiffness anchor "N/m" rod node; do
  grep -q -- "$word" "$tmp/describe.txt" || die "'rodsim describe anchor-spring' does not mention '$word'"
done

step "rodsim check"
"$rodsim" check "$example/scene.toml"

step "a bad rod or node is a ParamError located in the scene (exit 2, nothing written)"
# `check` validates against the schema only; rods and nodes are checked when the world is bound,
# which `run` does before it writes anything.
bad() {  # bad <name> <--set assignment>: run, expect exit status 2
  local status=0
  "$rodsim" run "$example/scene.toml" --set "$2" --output "$tmp/out_bad" --quiet >"$tmp/$1.out" 2>"$tmp/$1.err" || status=$?
  cat "$tmp/$1.err"
  [[ $status -eq 2 ]] || die "--set $2: expected exit status 2, got $status"
}
bad node force.spring.node=99
grep -q "<--set force.spring.node>: force 'spring' (anchor-spring): 'node': node 99 is out of range" "$tmp/node.err" \
  || die "the node error does not name its location, component, key and problem"
bad rod force.spring.rod=bean
grep -q "scene.toml:[0-9]*:[0-9]*\|<--set force.spring.rod>" "$tmp/rod.err" || die "the rod error has no location"
grep -q "'rod': no rod named 'bean' (rods: 'beam')" "$tmp/rod.err" || die "the rod error does not name the rod"
[[ ! -e "$tmp/out_bad/final.csv" ]] || die "a rejected scene wrote output"

step "static solves: k = 1e-12 (without the spring), 0.1 and 1 N/m"
for k in 1e-12 0.1 1.0; do
  "$rodsim" run "$example/scene.toml" --set "force.spring.stiffness=$k" --output "$tmp/out_$k" --quiet
  grep -q '"status": *"ok"' "$tmp/out_$k/summary.json" || { cat "$tmp/out_$k/summary.json"; die "run k=$k failed"; }
done

step "rodsim plot and render from the prefix (plot_run.py installed in share/rodsim)"
[[ -f "$tmp/prefix/share/rodsim/plot_run.py" ]] || die "no share/rodsim/plot_run.py in the prefix"
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  "$rodsim" plot "$tmp/out_0.1" --quiet || die "rodsim plot failed from the prefix"
  [[ -f "$tmp/out_0.1/energies.png" ]] || die "rodsim plot wrote no energies.png"
fi
if command -v povray >/dev/null; then
  "$rodsim" render "$tmp/out_0.1" --size 64x48 --quiet --output "$tmp/out_0.1.png" || die "rodsim render failed from the prefix"
  [[ -f "$tmp/out_0.1.png" ]] || die "rodsim render wrote no image"
fi

step "compare the tip deflections with beam theory"
"$python" - "$example/scene.toml" "$tmp" <<'PY'
import csv, math, sys, tomllib

scene_file, tmp = sys.argv[1], sys.argv[2]
with open(scene_file, "rb") as f:
    scene = tomllib.load(f)
rod = scene["rod"][0]
(load,) = [f for f in scene["force"] if f["type"] == "point-load"]
(spring,) = [f for f in scene["force"] if f["type"] == "anchor-spring"]
assert load["node"] == -1 and spring["node"] == -1, "the check assumes tip load and tip spring"
geo = rod["geometry"]
L = math.dist(geo["start"], geo["end"])
m = rod["nodes"] - 1
E, r = rod["youngs_modulus"], rod["radius"]
EI = E * math.pi * r**4 / 4
F = -load["force"][2]
anchor = spring["anchor"]
k_beam = 3 * EI / L**3
k_disc = k_beam / ((1 - 1 / m) * (1 - 1 / (2 * m)))  # DER clamped on nodes 0, 1 (see the script header)

def tip(k):
    with open(f"{tmp}/out_{k}/final.csv") as f:
        rows = [row for row in csv.DictReader(f) if row["rod"] == rod["name"]]
    last = max(rows, key=lambda row: int(row["node"]))
    return [float(last[c]) for c in "xyz"]

failures = []
def check(what, got, want, tol):
    rel = got / want - 1
    ok = abs(rel) <= tol
    print(f"  {what:52s} {got:12.6g}  expected {want:12.6g}  ({rel:+7.2%}, tolerance {tol:.1%}) {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(what)

print(f"L = {L} m, {m} edges, EI = {EI:.6g} N m^2, F = {F:g} N, 3EI/L^3 = {k_beam:.6g} N/m, "
      f"discrete DER tip stiffness = {k_disc:.6g} N/m")
d0 = -tip("1e-12")[2]
k_meas = F / d0
check("beam tip stiffness F/d(0) vs 3EI/L^3 (N/m)", k_meas, k_beam, 0.05)
check("beam tip stiffness F/d(0) vs discrete formula (N/m)", k_meas, k_disc, 0.01)
prev = math.dist(tip("1e-12"), anchor)
for k, name in ((0.1, "0.1"), (1.0, "1.0")):
    p = tip(name)
    d = -p[2]
    check(f"tip deflection, k = {k} N/m, vs F/(3EI/L^3 + k) (m)", d, F / (k_beam + k), 0.03)
    check(f"tip deflection, k = {k} N/m, vs F/(F/d(0) + k) (m)", d, F / (k_meas + k), 0.005)
    dist = math.dist(p, anchor)
    print(f"  |tip - anchor| = {dist:.6g} m (was {prev:.6g} m with a weaker spring)")
    if not dist < prev:
        failures.append(f"k = {k}: the spring did not move the tip toward the anchor")
    prev = dist
if failures:
    sys.exit("FAIL: " + "; ".join(failures))
print("all checks passed")
PY
