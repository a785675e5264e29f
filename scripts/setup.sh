#!/usr/bin/env bash
# Installs the build, test and plotting dependencies from Debian 12 packages (nothing else is
# downloaded). Safe to run again: only missing packages are installed.
#   scripts/setup.sh        everything: the tests, sanitizers, studies, Python module, pictures
#   scripts/setup.sh --run  only what configuring and building the rodsim command and its plugins
#                           needs (scripts/run-default.sh); every other part of the build is optional
#                           and skipped by CMake with a note when its package is missing
set -euo pipefail
mode=all
case "${1:-}" in
  "") ;;
  --run) mode=run ;;
  *) echo "usage: scripts/setup.sh [--run]" >&2; exit 2 ;;
esac
# The rodsim command and its plugins (libopenblas0-serial: the BLAS CHOLMOD calls, single-threaded).
packages=(
  build-essential cmake ninja-build pkg-config
  libeigen3-dev libboost-dev libboost-filesystem-dev libfmt-dev libtomlplusplus-dev
  libsuitesparse-dev libopenblas0-serial zlib1g-dev
)
if [ "$mode" = all ]; then
  packages+=(
    doctest-dev libbenchmark-dev   # tests and benchmarks
    libceres-dev libfclib-dev      # rodsim fit (docs/inverse.md); FCLIB HDF5 files in rodsim-fclib
    clang libclang-rt-14-dev libomp-dev   # the sanitizer and fuzzing configuration (scripts/test-sanitizers.sh)
    openmpi-bin libopenmpi-dev     # optional: rodsim sweep under mpirun (docs/sweeps.md)
    python3 python3-dev python3-numpy python3-scipy python3-matplotlib python3-pytest python3-pandas pybind11-dev  # rodsim Python module (docs/python.md)
    python3-pip python3-venv       # pip install . into a venv (docs/python.md; test_pip_install)
    jupyter-nbconvert python3-ipykernel   # runs examples/rodsim_quickstart.ipynb in the tests (test_notebook)
    libpagmo-dev                   # CMA-ES of rodsim optimize (docs/inverse.md)
    povray povray-includes ffmpeg  # rodsim render
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
