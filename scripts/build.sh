#!/usr/bin/env bash
# Configures and builds rodsim in ./build (Release). Used by the README commands and CI.
#   scripts/build.sh             every target: rodsim, plugins, tests, benchmarks, studies, Python
#   scripts/build.sh TARGET...   those targets only (scripts/run-default.sh: rodsim rodsim_plugins)
# A new build directory uses Ninja when it is installed (it schedules across targets, Make waits
# for each target's dependencies to link); an existing one keeps the generator it was made with.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
generator=()
if [ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ $# -gt 0 ]; then
  cmake --build build -j"$jobs" --target "$@"
else
  cmake --build build -j"$jobs"
fi
