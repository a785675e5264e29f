#!/usr/bin/env bash
# The README's test command: install what is missing, build everything (tests and benchmarks
# included), run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
# ctest -j starts the longest tests first when it knows their times (a build directory's
# Testing/Temporary/CTestCostData.txt, which a clean one lacks): seed it with a recent run's, so
# that the longest validation runs do not start last and leave a core idle at the end.
costs=build/Testing/Temporary/CTestCostData.txt
[ -f "$costs" ] || { mkdir -p "$(dirname "$costs")"; cp scripts/ctest-costs/main.txt "$costs"; }
ctest --test-dir build --output-on-failure -j"$(nproc 2>/dev/null || echo 2)"
