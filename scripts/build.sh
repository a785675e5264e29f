#!/usr/bin/env bash
# Configures and builds rodsim in ./build (Release). Used by the README commands and CI.
#   scripts/build.sh             every target: rodsim, plugins, tests, benchmarks, studies, Python
#   scripts/build.sh TARGET...   those targets only (scripts/run-default.sh: rodsim rodsim_plugins)
# A new build directory uses Ninja when it is installed (it schedules across targets, Make waits
# for each target's dependencies to link) and is a unity build (each target's sources compiled in
# batches of 8 as one translation unit: the Eigen and doctest code they share is instantiated and
# optimized once per batch; 35-40 % less compile time from scratch). An existing directory keeps
# the generator and the settings it was made with; for day-to-day edits, where one changed file
# should recompile alone, configure your own without -DCMAKE_UNITY_BUILD=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/configure-options.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build $(new_build_dir_options build) -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j"$jobs" --target "$@"
else
  cmake --build build -j"$jobs"
fi
