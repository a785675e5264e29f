#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the default scene.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
build/bin/rodsim run scenes/flagellum_spin.toml "$@"
