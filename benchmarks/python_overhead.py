#!/usr/bin/env python3
"""The cost of driving a run from Python (docs/python.md; not a test: timings belong on a quiet machine).

1. `sim.run()` against `rodsim run` on the same scene (default: the Timoshenko benchmark scene),
   interleaved A B A B on one thread; the ratio of the medians of the wall times. Two clocks: the
   whole thing as a user sees it (Python: Simulation(...) + run(); CLI: the process), and the run's
   own wall_time_s from summary.json (the steps and the output, without process start and plugin
   loading).
2. Reading `rod.positions` against a NumPy copy of an array of the same shape.
3. A force written in Python against the same force from the plugin (the slow path's cost per call).

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_overhead.py [--repeats 5] [--scene S] [--set K=V]...
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

os.environ["OMP_NUM_THREADS"] = "1"  # one thread for both sides (set before the module loads)
import numpy as np  # noqa: E402
import rodsim  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def parse_set(items):
    out = {}
    for item in items:
        key, value = item.split("=", 1)
        out[key] = float(value) if value.replace(".", "", 1).replace("e", "", 1).replace("-", "").isdigit() else value
    return out


def cli_run(exe, scene, sets, out):
    args = [exe, "run", str(scene), "--quiet", "--force", "--output", str(out)]
    for k, v in sets.items():
        args += ["--set", f"{k}={v}"]
    t0 = time.perf_counter()
    subprocess.run(args, check=True)
    wall = time.perf_counter() - t0
    return wall, json.loads((out / "summary.json").read_text())["wall_time_s"]


def python_run(scene, sets, out):
    t0 = time.perf_counter()
    sim = rodsim.Simulation(scene, set=sets, output=out, force=True)
    sim.run()
    wall = time.perf_counter() - t0
    return wall, sim.summary()["wall_time_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default=str(ROOT / "scenes/validation/cosserat_timoshenko.toml"))
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE, as rodsim run --set")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--exe", default=str(ROOT / "build/bin/rodsim"))
    args = ap.parse_args()
    sets = parse_set(args.set)
    tmp = Path(tempfile.mkdtemp(prefix="rodsim-python-bench-"))
    try:
        cli, py = [], []
        python_run(args.scene, sets, tmp / "warm")  # page the plugins in once
        for _ in range(args.repeats):  # A B A B
            cli.append(cli_run(args.exe, args.scene, sets, tmp / "cli"))
            py.append(python_run(args.scene, sets, tmp / "py"))
        assert (tmp / "cli/final.csv").read_bytes() == (tmp / "py/final.csv").read_bytes(), "final.csv differs"
        for i, name in ((0, "whole (process vs Simulation()+run())"), (1, "summary wall_time_s")):
            c = statistics.median(r[i] for r in cli)
            p = statistics.median(r[i] for r in py)
            print(f"{name:40s} CLI {c:8.3f} s  Python {p:8.3f} s  ratio {p / c:.4f}"
                  f"   (CLI runs {[round(r[i], 3) for r in cli]}, Python {[round(r[i], 3) for r in py]})")

        for scene, scene_sets in ((args.scene, sets), (ROOT / "scenes/flagella/m2.toml", {})):
            sim = rodsim.Simulation(scene, set=scene_sets, output=tmp / "arrays", force=True)
            rod = sim.rod(sim.rod_names[0])
            a = rod.positions
            n = 200000
            t_read = min(timeit.repeat(lambda: rod.positions, number=n, repeat=5)) / n
            t_copy = min(timeit.repeat(lambda: a.copy(), number=n, repeat=5)) / n
            t_array = min(timeit.repeat(lambda: np.array(a), number=n, repeat=5)) / n
            print(f"{rod.model} rod.positions {a.shape}: {1e9 * t_read:.0f} ns;  a.copy(): {1e9 * t_copy:.0f} ns;  "
                  f"np.array(a): {1e9 * t_array:.0f} ns;  ratio to a.copy() {t_read / t_copy:.2f}")
            sim.close()
        # The slow path: the scene's tip load from Python instead of the plugin, same run.
        def tip_load(t, x, v):
            f = np.zeros_like(x)
            f[-1] = load
            return f
        plugin = rodsim.Simulation(args.scene, set=sets, output=tmp / "plugin", force=True)
        load = plugin.parameter("tip.force")
        rod_name = plugin.rod_names[0]
        t0 = time.perf_counter()
        plugin.run()
        t_plugin = time.perf_counter() - t0
        pyforce = rodsim.Simulation(args.scene, set={**sets, "force.tip.force": [0.0, 0.0, 0.0]},
                                    output=tmp / "pyforce", force=True,
                                    forces=[rodsim.PythonForce("py_tip", tip_load, rod=rod_name)])
        t0 = time.perf_counter()
        pyforce.run()
        t_py = time.perf_counter() - t0
        steps = pyforce.step_count
        print(f"tip load from Python: {t_py:.3f} s vs plugin {t_plugin:.3f} s for {steps} steps: "
              f"+{1e6 * (t_py - t_plugin) / steps:.1f} us per call (one call per step)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
