#!/usr/bin/env bash
# Installs every build, test and plotting dependency from Debian 12 packages (nothing else is
# downloaded). Safe to run again: only missing packages are installed.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libeigen3-dev libboost-dev libboost-filesystem-dev libfmt-dev libtomlplusplus-dev
  libceres-dev libsuitesparse-dev libopenblas0-serial doctest-dev libbenchmark-dev libfclib-dev
  clang libclang-rt-14-dev libomp-dev
  openmpi-bin libopenmpi-dev   # optional: rodsim sweep under mpirun (docs/sweeps.md)
  python3 python3-dev python3-numpy python3-scipy python3-matplotlib python3-pytest python3-pandas pybind11-dev  # rodsim Python module (docs/python.md)
  libpagmo-dev                 # CMA-ES of rodsim optimize (docs/inverse.md)
  zlib1g-dev povray povray-includes ffmpeg
)
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
