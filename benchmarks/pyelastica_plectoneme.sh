#!/bin/sh
# Side by side: PyElastica 0.3.3 and rodsim on PyElastica's 150-element self-contacting plectoneme,
# interleaved (A B A B), one thread each; prints each measurement and the ratios (benchmarks/README.md,
# "The peers"). Needs PYELASTICA_SRC (PyElastica 0.3.3's tree), RODSIM_PEERS_DIR (the peers' folder
# holding pyelastica_bench.py; PEER_BENCH names the script itself instead), Debian's python3-numba, and
# a build with bench_plectoneme and the plugins.
#
#   PYELASTICA_SRC=/path/to/pyelastica-0.3.3 RODSIM_PEERS_DIR=/path/to/peers \
#     benchmarks/pyelastica_plectoneme.sh [build] [rounds]
#
# PyElastica is timed from the start of its run (the straight rod being twisted; 93 % of its step is an
# O(N^2) loop over all element pairs whatever the shape, so its cost barely depends on the state);
# rodsim at the start too, and in the coiled plectoneme (restarted from a checkpoint at t = 25 s, 260
# pairs in contact), with the explicit stability check of the contact stiffness on (default) and off
# (PyElastica has none).
set -e
build=${1:-build}
rounds=${2:-2}
if [ -z "${PEER_BENCH:-}" ] && [ -z "${RODSIM_PEERS_DIR:-}" ]; then
  echo "pyelastica_plectoneme.sh: set RODSIM_PEERS_DIR to the peers' folder holding pyelastica_bench.py" >&2
  echo "  (benchmarks/README.md, \"The peers\")" >&2
  exit 2
fi
peer=${PEER_BENCH:-$RODSIM_PEERS_DIR/pyelastica_bench.py}
if [ ! -f "$peer" ]; then
  echo "pyelastica_plectoneme.sh: $peer not found (RODSIM_PEERS_DIR or PEER_BENCH)" >&2
  exit 2
fi
if [ -z "${PYELASTICA_SRC:-}" ]; then
  echo "pyelastica_plectoneme.sh: set PYELASTICA_SRC to PyElastica 0.3.3's source tree (benchmarks/README.md)" >&2
  exit 2
fi
ckpt=${CKPT_DIR:-/tmp/rodsim-plectoneme-ckpt}
export OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1
if [ ! -d "$ckpt/checkpoints" ]; then
  "$build/bin/rodsim" run scenes/cosserat/plectoneme_pyelastica.toml --quiet --set simulation.duration=25 \
    --set output.checkpoint_every=25 --set output.every=0 --set solver.stability=off --output "$ckpt"
fi
date -u
uname -m; grep -m1 "model name" /proc/cpuinfo; nproc
for k in $(seq "$rounds"); do
  echo "--- round $k: PyElastica"
  /usr/bin/python3 "$peer" --case plectoneme --steps 500 --blocks 3 --warmup 20
  echo "--- round $k: rodsim"
  "$build/bin/bench_plectoneme" --phase start --steps 3000 --blocks 3
  "$build/bin/bench_plectoneme" --phase coiled --restart "$ckpt" --steps 2000 --blocks 3
  "$build/bin/bench_plectoneme" --phase coiled --restart "$ckpt" --steps 2000 --blocks 3 --set solver.stability=off
done
