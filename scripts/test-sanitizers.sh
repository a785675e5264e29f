#!/usr/bin/env bash
# Second CI configuration: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (clang), then the libFuzzer scene target for a fixed budget (FUZZ_SECONDS, default 60) seeded
# with every shipped scene. Any sanitizer report, crash or hang fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=build-asan
# Line tables are all a sanitizer report needs (file:line in every frame); full debug info made
# this build 20 % slower (51 s -> 41 s for the largest plugin source on a 2-core Zen 3 VM).
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DRODSIM_SANITIZE=address,undefined -DRODSIM_FUZZ=ON -DRODSIM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)"
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
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
ctest --test-dir "$build" --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" \
  -E 'out_of_tree_plugin|test_validation_knot|test_validation_cosserat_buckling|knot_tight|test_validation_contact_matrix|test_validation_cosserat_plectoneme|alart_curnier_spaghetti|test_validation_capstan|alart_curnier_rope|spring_dashpot_scenes'
corpus="$build/fuzz-corpus"
mkdir -p "$corpus"
find scenes docs/examples -name '*.toml' -exec cp {} "$corpus/" \;
# Inputs up to 256 KiB (deeply nested TOML needs length) and a dictionary of TOML tokens.
"$build/tests/fuzz/fuzz_scene" -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=4096 \
  -max_len=262144 -dict=tests/fuzz/toml.dict \
  -artifact_prefix="$build/" "$corpus" 2>&1 | tail -3
