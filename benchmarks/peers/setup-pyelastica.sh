#!/usr/bin/env bash
# Installs PyElastica 0.3.3 (the Python implementation of Gazzola et al. 2018) into a venv on Debian
# 12, for the side-by-side runs (bench_vs_pyelastica.py, pyelastica_plectoneme.sh):
#   - numba, numpy, scipy, tqdm and typing-extensions are Debian's own packages, seen through
#     --system-site-packages; nothing comes from PyPI (`pip install --no-index --no-deps`).
#   - the source is the snapshot skim0119/PyElastica-mirror at commit aef9e24 ("update-0.3.3"; the
#     upstream GazzolaLab/PyElastica repository is too large to clone for one tree).
#
#   benchmarks/peers/setup-pyelastica.sh [PEERS_DIR=/work/peers]
#
# Result: PEERS_DIR/pyelastica-venv/bin/python imports `elastica`; the source tree is in
# PEERS_DIR/src/pyelastica-0.3.3 (put it on PYELASTICA_SRC, or leave that unset and call the venv's
# python). An existing tree there is used as it is. The first run of a case compiles numba's cache
# into the venv (about 30 s): time only later runs.
set -euo pipefail
peers=${1:-/work/peers}
commit=aef9e24f4f59b7c54f1028b48332a72dce42604a
src=$peers/src/pyelastica-0.3.3
venv=$peers/pyelastica-venv
mkdir -p "$peers/src" "$peers/build"

if ! dpkg -s python3-numba python3-numpy python3-scipy python3-tqdm python3-typing-extensions \
              python3-venv python3-hatchling >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git \
    python3-numba python3-numpy python3-scipy python3-tqdm python3-typing-extensions \
    python3-venv python3-pip python3-hatchling
fi

if [ ! -e "$src" ]; then
  git clone --no-checkout https://github.com/skim0119/PyElastica-mirror.git "$src"
  git -C "$src" checkout --detach "$commit"
fi

# Debian 12's hatchling (1.12) rejects the classifier "Programming Language :: Python :: 3.13" of
# the package's metadata as unknown: build from a copy without that one line. The code is unchanged.
stage=$peers/build/pyelastica
rm -rf "$stage"
mkdir -p "$stage"
cp -r "$src/elastica" "$src/pyproject.toml" "$src/README.md" "$src/LICENSE" "$stage/"
sed -i '/"Programming Language :: Python :: 3.13",/d' "$stage/pyproject.toml"

# Debian's python: the venv sees its numba (another python3 on the PATH may lack it).
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --no-index --no-deps --no-build-isolation --force-reinstall "$stage"
(cd /tmp && "$venv/bin/python" -c 'import elastica, numba, numpy, scipy
print("elastica from", elastica.__file__)
print("numba", numba.__version__, "numpy", numpy.__version__, "scipy", scipy.__version__)')
