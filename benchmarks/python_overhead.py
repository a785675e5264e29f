#!/usr/bin/env python3
"""The cost of driving a run from Python (docs/python.md; not a test: timings belong on a quiet machine).

1. `sim.run()` against `rodsim run` on the same scene (default: the Timoshenko benchmark scene),
   interleaved A B A B on one thread; the ratio of the medians of the wall times. Two clocks: the
   whole thing as a user sees it (Python: Simulation(...) + run(); CLI: the process), and the run's
   own wall_time_s from summary.json (the steps and the output, without process start and plugin
   loading).
   --instructions: instead of wall times (noisy on a shared machine), the instructions per step under
   callgrind, from the difference of two run lengths (start-up and plugin loading drop out).
2. Reading `rod.positions` against a NumPy copy of an array of the same shape.
3. A force written in Python against the same force from the plugin (the slow path's cost per call):
   the scene's tip load on its explicit run, and gravity on an implicit DER cantilever (implicit Euler)
   called at every evaluation and once per step.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_overhead.py [--repeats 5] [--scene S] [--set K=V]...
    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_overhead.py --instructions [--scene S]
"""
import argparse
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
from rodsim.output import read_summary  # noqa: E402  the one reader of a run's files

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
    return wall, read_summary(out)["wall_time_s"]


def python_run(scene, sets, out):
    t0 = time.perf_counter()
    sim = rodsim.Simulation(scene, set=sets, output=out, replace=True)
    sim.run()
    wall = time.perf_counter() - t0
    return wall, sim.summary()["wall_time_s"]


CANTILEVER = """
[simulation]
duration = 1.0
dt = 1e-3
[solver]
type = "implicit-euler"
tolerance = 1e-6
[[rod]]
name = "beam"
model = "der"
nodes = 21
radius = 0.01
density = 1000.0
youngs_modulus = 1e9
poisson_ratio = 0.5
geometry = { shape = "straight", start = [0, 0, 0], end = [1, 0, 0] }
[[constraint]]
name = "root"
type = "clamp"
rod = "beam"
nodes = [0, 1]
[output]
every = 0.0
"""


def implicit_python_force(tmp, repeats=5):
    """Gravity from the plugin and from Python on 1000 implicit Euler steps of a DER cantilever."""
    plugin_scene, python_scene = tmp / "plugin_gravity.toml", tmp / "python_gravity.toml"
    plugin_scene.write_text(CANTILEVER + '[[force]]\nname = "weight"\ntype = "gravity"\n')
    python_scene.write_text(CANTILEVER)
    best = {}
    for _ in range(repeats):
        for mode in ("plugin", "every evaluation", "once per step"):
            calls = [0]
            if mode == "plugin":
                sim = rodsim.Simulation(plugin_scene, output=tmp / "implicit", replace=True)
            else:
                mass = {}

                def weight(t, x, v):
                    calls[0] += 1
                    return mass["m"] * np.array([0.0, 0.0, -9.81])
                sim = rodsim.Simulation(python_scene, output=tmp / "implicit", replace=True,
                                        forces=[rodsim.PythonForce("weight", weight, rod="beam",
                                                                   every_evaluation=mode == "every evaluation")])
                mass["m"] = sim.rod("beam").mass[:, None]
            t0 = time.perf_counter()
            sim.run()
            elapsed = time.perf_counter() - t0
            if mode not in best or elapsed < best[mode][0]:
                best[mode] = (elapsed, calls[0], sim.summary()["newton_iterations"])
    base = best["plugin"][0]
    for mode, (elapsed, calls, iterations) in best.items():
        extra = f", {calls} calls, +{1e6 * (elapsed - base) / calls:.1f} us per call" if calls else ""
        print(f"implicit DER cantilever, gravity {mode:16s}: {elapsed:.3f} s, {iterations} Newton iterations{extra}")


def callgrind_instructions(command):
    """Instructions the command executes (callgrind's total), its output discarded."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                       capture_output=True, text=True, check=True)
    return int(r.stderr.split("Collected : ")[1].split()[0])


def instructions_per_step(exe, scene, sets, tmp, durations=(1.0, 2.0)):
    """Instructions per step of `rodsim run` and of Simulation(...).run() on the same scene: the
    difference of two durations divided by the difference of their steps."""
    script = tmp / "run_scene.py"
    script.write_text("import sys, rodsim\n"
                      "sim = rodsim.Simulation(sys.argv[1], set={**eval(sys.argv[2]), 'simulation.duration': "
                      "float(sys.argv[3])}, output=sys.argv[4], replace=True)\nsim.run()\nprint(sim.step_count)\n")
    counts = {"CLI": [], "Python": []}
    steps = []
    for d in durations:
        cli = [exe, "run", str(scene), "--quiet", "--force", "--output", str(tmp / "cg_cli"),
               "--set", f"simulation.duration={d}"] + [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
        counts["CLI"].append(callgrind_instructions(cli))
        counts["Python"].append(callgrind_instructions([sys.executable, str(script), str(scene), repr(sets), str(d),
                                                        str(tmp / "cg_py")]))
        steps.append(read_summary(tmp / "cg_py")["steps"])
        assert (tmp / "cg_cli/final.csv").read_bytes() == (tmp / "cg_py/final.csv").read_bytes(), "final.csv differs"
    per_step = {k: (v[1] - v[0]) / (steps[1] - steps[0]) for k, v in counts.items()}
    print(f"instructions per step ({steps[1] - steps[0]} steps difference): CLI {per_step['CLI']:.0f}, "
          f"Python {per_step['Python']:.0f}, ratio {per_step['Python'] / per_step['CLI']:.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default=str(ROOT / "scenes/validation/cosserat_timoshenko.toml"))
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE, as rodsim run --set")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--exe", default=str(ROOT / "build/bin/rodsim"))
    ap.add_argument("--instructions", action="store_true", help="instructions per step under callgrind")
    args = ap.parse_args()
    sets = parse_set(args.set)
    tmp = Path(tempfile.mkdtemp(prefix="rodsim-python-bench-"))
    if args.instructions:
        try:
            instructions_per_step(args.exe, args.scene, sets, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return
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
            sim = rodsim.Simulation(scene, set=scene_sets, output=tmp / "arrays", replace=True)
            rod = sim.rod(sim.rod_names[0])
            a = rod.positions
            n = 100000
            reads, copies, arrays = [], [], []
            for _ in range(9):  # interleaved, the best of each: the machine's load drifts
                reads.append(timeit.timeit(lambda: rod.positions, number=n) / n)
                copies.append(timeit.timeit(lambda: a.copy(), number=n) / n)
                arrays.append(timeit.timeit(lambda: np.array(a), number=n) / n)
            t_read, t_copy, t_array = min(reads), min(copies), min(arrays)
            print(f"{rod.model} rod.positions {a.shape}: {1e9 * t_read:.0f} ns;  a.copy(): {1e9 * t_copy:.0f} ns;  "
                  f"np.array(a): {1e9 * t_array:.0f} ns;  ratio to a.copy() {t_read / t_copy:.2f}")
            sim.close()
        # The slow path: the scene's tip load from Python instead of the plugin, same run.
        def tip_load(t, x, v):
            f = np.zeros_like(x)
            f[-1] = load
            return f
        plugin = rodsim.Simulation(args.scene, set=sets, output=tmp / "plugin", replace=True)
        load = plugin.parameter("tip.force")
        rod_name = plugin.rod_names[0]
        t0 = time.perf_counter()
        plugin.run()
        t_plugin = time.perf_counter() - t0
        pyforce = rodsim.Simulation(args.scene, set={**sets, "force.tip.force": [0.0, 0.0, 0.0]},
                                    output=tmp / "pyforce", replace=True,
                                    forces=[rodsim.PythonForce("py_tip", tip_load, rod=rod_name)])
        t0 = time.perf_counter()
        pyforce.run()
        t_py = time.perf_counter() - t0
        steps = pyforce.step_count
        print(f"tip load from Python: {t_py:.3f} s vs plugin {t_plugin:.3f} s for {steps} steps: "
              f"+{1e6 * (t_py - t_plugin) / steps:.1f} us per call (one call per step)")
        implicit_python_force(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
