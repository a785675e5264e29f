#!/usr/bin/env bash
# Second CI configuration: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (clang), then the libFuzzer scene target for a fixed budget (FUZZ_SECONDS of wall time, default 30, one process per core) seeded
# with every shipped scene. Any sanitizer report, crash or hang fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=build-asan
# Line tables are all a sanitizer report needs (file:line in every frame); full debug info made
# this build 20 % slower (51 s -> 41 s for the largest plugin source on a 2-core Zen 3 VM).
source scripts/configure-options.sh
jobs=$(nproc 2>/dev/null || echo 2)
CC=clang CXX=clang++ cmake -S . -B "$build" $(new_build_dir_options "$build") -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DRODSIM_SANITIZE=address,undefined -DRODSIM_FUZZ=ON \
  -DRODSIM_BUILD_BENCHMARKS=OFF >/dev/null
# The out-of-tree test builds its example with the default compiler (g++), whose SDK signature
# this clang build rightly refuses: it runs in the main configuration. The two longest validation
# runs (knot tightening, the Cosserat buckling scans: 5 minutes each under the sanitizers) run
# only there too: their code paths are covered here by the contact_imc scene tests and the
# closed-rod unit tests; the same for the tight knot side by side
# (alart-curnier and imc are covered by their plugin and scene tests); and the dropped-rod matrix of
# every rod x solver x contact model (8 minutes under the sanitizers: explicit ipc takes 300 000
# steps; its friction check, which drives the explicit contact paths, runs here); and the reduced
# plectoneme with spring-dashpot self-contact (830 000 explicit steps with 25 pairs in contact: about
# 20 s optimized, several minutes under the sanitizers; the same code paths run here in the
# spring-dashpot unit tests and in test_validation_contact_spring_dashpot). Also the spaghetti pile
# (8 rods, three contact models side by side: 280 s here) and the capstan (a rope over a rod with
# many imc pairs: 240 s): their contact paths run here in the drum side by side
# (test_validation_alart_curnier_rods: alart-curnier, imc and ipc with friction), the imc scene
# tests and the plugins' unit tests. With them this stage took 30 of CI's 43 minutes on a 2-core
# Zen 3 VM. Left to the main configuration as well: the composition matrices (both
# test_validation_contact_matrix entries: 48 runs, 10^5 explicit steps in some; 170 s optimized),
# alart-curnier's rope over a bar (100 s optimized) and spring-dashpot's composition scenes (30 s):
# the explicit solvers' implicit contact step and velocity-level step run here in
# test_validation_contact_spring_dashpot and test_validation_contact_explicit_friction.
# The explicit Cosserat validation (test_validation_cosserat: convergence orders, 10^5-step energy
# runs, oscillation and twist-wave scans; 150 s here), its implicit counterpart
# (test_validation_cosserat_implicit: Timoshenko and buckling under implicit-euler and static,
# contact on Cosserat rods; 110 s) and the ground validation (test_validation_cosserat_ground:
# friction regimes, snake, standing wave; 55 s) repeat, for convergence rates and parameter scans,
# per-step code that runs here in plugin_rod_cosserat (forces and exact Hessians against
# differences, closed rods), plugin_solver_explicit, plugin_solver_newton, test_cosserat_ground_units
# (ground, muscle-torque), test_validation_clamp_both_models and test_validation_slender_body_drag
# (Cosserat rods under the Newton solvers, drag through the kernel) and the contact models' own tests
# (contact models see rods only through the SDK): they run in the main configuration only, as do the
# rolling and swimming validations (test_validation_cosserat_rolling, _swimming: 32 s here, the
# ground and muscle-torque code of test_cosserat_ground_units over many steps).
# The flagella validation (test_validation_flagella: bundling and RSS against the published figures,
# 70 s here) runs in the main configuration only; its fluid code (the RSS kernels, their Jacobians,
# GMRES) runs here in plugin_fluid_rss.
# The studies' end-to-end tests test_compare and test_inverse (rodsim compare, fit and optimize: 140 s
# here, nearly all of it in their instrumented rodsim children running scenes the other tests run)
# stay in the main configuration; their parsing and process code runs here in test_sweep (the same
# child-run engine and run-record reader) and the libraries' own tests.
excluded='test_compare$|test_inverse$|test_validation_cosserat_swimming|test_validation_cosserat_rolling|test_validation_flagella|out_of_tree_plugin|test_validation_knot|test_validation_cosserat_buckling|knot_tight|test_validation_contact_matrix|test_validation_cosserat_plectoneme|alart_curnier_spaghetti|test_validation_capstan|alart_curnier_rope|spring_dashpot_scenes|test_validation_cosserat$|test_validation_cosserat_implicit|test_validation_cosserat_ground$'
# Build only what runs here: the executables of the tests not excluded (ctest's own list of their
# commands), the rodsim command with its plugins and the programs it starts, and the fuzzer. The
# excluded tests' executables are not built (they only run in the main configuration).
available=$(cmake --build "$build" --target help | sed -n -e 's/^\.\.\. \([^ ]*\).*/\1/p' -e 's/^\([^ :]*\): .*/\1/p')
# Test names from ctest (its -E), their executables from the CTestTestfile.cmake files (ctest
# itself names no command before the executable exists).
wanted=$(ctest --test-dir "$build" -N -E "$excluded" | sed -n 's/^ *Test *#[0-9]*: //p' | python3 -c '
import os, re, sys
names = set(sys.stdin.read().split())
for root, _, files in os.walk(sys.argv[1]):
    if "CTestTestfile.cmake" in files:
        for name, command in re.findall(r"add_test\(\[=\[(.*?)\]=\] \"([^\"]*)\"", open(os.path.join(root, "CTestTestfile.cmake")).read()):
            if name in names:
                print(os.path.basename(command))
' "$build")
targets=()
for t in $wanted rodsim rodsim_plugins rodsim_sweep_mpi fuzz_scene; do
  if grep -qx -- "$t" <<<"$available" && [[ " ${targets[*]} " != *" $t "* ]]; then targets+=("$t"); fi
done
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
costs="$build/Testing/Temporary/CTestCostData.txt"   # the longest tests first (scripts/test.sh)
[ -f "$costs" ] || { mkdir -p "$(dirname "$costs")"; cp scripts/ctest-costs/sanitizers.txt "$costs"; }
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
ctest --test-dir "$build" --output-on-failure -j"$jobs" -E "$excluded"
corpus="$build/fuzz-corpus"
mkdir -p "$corpus"
find scenes docs/examples -name '*.toml' -exec cp {} "$corpus/" \;
# Inputs up to 256 KiB (deeply nested TOML needs length) and a dictionary of TOML tokens. One
# fuzzing process per core (-fork) for FUZZ_SECONDS of wall time: a minute of fuzzing on two cores.
"$build/tests/fuzz/fuzz_scene" -fork="$jobs" -max_total_time="${FUZZ_SECONDS:-30}" -timeout=10 -rss_limit_mb=4096 \
  -max_len=262144 -dict=tests/fuzz/toml.dict \
  -artifact_prefix="$build/" "$corpus" 2>&1 | tail -3
