#!/usr/bin/env python3
"""Synthetic measurements for rodsim fit: run a scene with known values, sample probes at given times.

usage: make_inverse_data.py RODSIM SCENE OUT.csv --probes a,b --times t0:t1:n [--set KEY=VALUE]...
                            [--noise SIGMA --seed N]

Writes OUT.csv with columns t, then one per probe (the format `rodsim fit` reads, docs/inverse.md),
the run's timeseries linearly interpolated at n equally spaced times in [t0, t1], plus Gaussian noise of
standard deviation SIGMA when given (numpy's default_rng(N)). The data of
scenes/inverse/ were made with it (the commands are in scenes/inverse/README.md).
"""
import argparse
import subprocess
import sys
import tempfile

import numpy as np

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rodsim")
    ap.add_argument("scene")
    ap.add_argument("out")
    ap.add_argument("--probes", required=True)
    ap.add_argument("--times", required=True, help="t0:t1:n")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--noise", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    t0, t1, n = a.times.split(":")
    times = np.linspace(float(t0), float(t1), int(n))
    probes = a.probes.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [a.rodsim, "run", a.scene, "--output", tmp, "--force", "--quiet"]
        for s in a.set:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        series = rodsim_output.read_timeseries(tmp)
    t = series["t"]
    rng = np.random.default_rng(a.seed)
    with open(a.out, "w") as f:
        f.write(",".join(["t"] + probes) + "\n")
        for tk in times:
            vals = [np.interp(tk, t, series[p]) + (rng.normal(0.0, a.noise) if a.noise > 0 else 0.0)
                    for p in probes]
            f.write(",".join(["%.10g" % tk] + ["%.10g" % v for v in vals]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
