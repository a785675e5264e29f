#!/usr/bin/env bash
# The README's first command: install what is missing for the rodsim command, build the command and
# its plugins only (not the tests, benchmarks, study programs or Python module: scripts/test.sh and
# scripts/build.sh build those), run the default scene.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --run
scripts/build.sh rodsim rodsim_plugins
build/bin/rodsim run scenes/flagellum_spin.toml "$@"
