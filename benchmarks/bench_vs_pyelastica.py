#!/usr/bin/python3
"""rodsim against PyElastica 0.3.3, side by side: one session, one thread each, interleaved rounds.

For each case (PyElastica's Timoshenko cantilever at 100, 1000 and 10000 elements, its continuum
snake) every round runs, one after the other:
  1. PyElastica (pyelastica_bench.py of the peers' folder): CPU microseconds per step, steady state
     (after its warm-up, so its start-up and numba compilation are not counted against it);
  2. bench_cosserat on the same scene: CPU ns per element-step of rodsim's solver step;
  3. `rodsim run` of the same scene with its default outputs (timeseries.csv, summary.json,
     final.csv, the final VTK frame): CPU time of the whole process, start-up and writing included.
It prints, with min-max over the rounds:
  - the step ratio: PyElastica per element-step / bench_cosserat per element-step;
  - the whole-run ratio: PyElastica per step x the run's steps / the `rodsim run` process;
  - rodsim's own overhead: `rodsim run` per step / bench_cosserat per step.

Usage: benchmarks/bench_vs_pyelastica.py [--build build] [--rounds 3] [--peers DIR]
                                         [--cases timoshenko100,timoshenko1000,timoshenko10000,snake]
PyElastica's source tree: PYELASTICA_SRC. The peers' folder (holding pyelastica_bench.py): --peers DIR or
RODSIM_PEERS_DIR; how to get both: benchmarks/README.md, "The peers".
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def case_table():
    scenes = os.path.join(HERE, "scenes")
    cases = {}
    for n, run_steps in ((100, 2_380_953), (1000, 200_000), (10000, 20_000)):
        dt = 0.07 * 3.0 / n  # PyElastica's dt = 0.07 dl
        cases[f"timoshenko{n}"] = dict(
            peer=["--case", "timoshenko", "--n-elem", str(n)], elements=n, dt=dt,
            scene=os.path.join(scenes, "pyelastica_timoshenko.toml"),
            sets=[f"rod.beam.nodes={n + 1}", f"simulation.dt={dt!r}"],
            peer_steps=max(200, 2_000_000 // n), bench_steps=max(200, 2_000_000 // n), run_steps=run_steps)
    cases["snake"] = dict(peer=["--case", "snake"], elements=50, dt=1e-4,
                          scene=os.path.join(scenes, "pyelastica_snake.toml"), sets=[],
                          peer_steps=20000, bench_steps=20000, run_steps=220_200)
    return cases


def machine():
    """The CPU model and the vector clones rodsim's loops run (target_clones: AVX-512, AVX2 or generic):
    per-element costs differ several-fold between machines, so every table names it."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor is enough
                key, _, value = line.partition(":")
                info[key.strip()] = value.strip()
    except OSError:
        pass
    model, flags = info.get("model name", "unknown CPU"), set(info.get("flags", "").split())
    if "cpu family" in info:  # "AMD EPYC" alone does not tell the generation
        model += f" (family {info['cpu family']}, model {info.get('model', '?')})"
    clones = ("AVX-512" if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags
              else "AVX2" if {"avx2", "fma", "bmi2"} <= flags else "generic x86-64")
    return f"{model}, vector clones {clones}"


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(cmd, env):
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stdout}{out.stderr}")
    return out.stdout


def spread(values, fmt="{:.1f}"):
    return (fmt + "-" + fmt).format(min(values), max(values))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--peers", default=os.environ.get("RODSIM_PEERS_DIR"),
                    help="the peers' folder, holding pyelastica_bench.py (default: $RODSIM_PEERS_DIR)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default="timoshenko100,timoshenko1000,timoshenko10000,snake")
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if "PYELASTICA_SRC" not in env:
        sys.exit("set PYELASTICA_SRC to PyElastica 0.3.3's source tree (benchmarks/README.md, \"The peers\")")
    if not a.peers:
        sys.exit("set RODSIM_PEERS_DIR (or --peers DIR) to the peers' folder holding pyelastica_bench.py "
                 "(benchmarks/README.md, \"The peers\")")
    if not os.path.isfile(os.path.join(a.peers, "pyelastica_bench.py")):
        sys.exit(f"no pyelastica_bench.py in the peers' folder {a.peers} (RODSIM_PEERS_DIR or --peers)")
    rodsim = os.path.join(a.build, "bin", "rodsim")
    bench = os.path.join(a.build, "bin", "bench_cosserat")
    table = case_table()
    print(f"rodsim vs PyElastica 0.3.3, {a.rounds} interleaved rounds, one thread each; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine()}, {os.cpu_count()} CPUs")
    rows = []
    for name in a.cases.split(","):
        c = table[name]
        sets = sum((["--set", s] for s in c["sets"]), [])
        step_ratio, run_ratio, overhead, peer_ns, bench_ns, run_ns = [], [], [], [], [], []
        for _ in range(a.rounds):
            peer = json.loads(run([sys.executable, os.path.join(a.peers, "pyelastica_bench.py"), *c["peer"],
                                   "--steps", str(c["peer_steps"]), "--blocks", "3"], env).strip().splitlines()[-1])
            peer_us = min(peer["cpu_us_per_step"])
            out = run([bench, "--scene", c["scene"], *sets, "--steps", str(c["bench_steps"]), "--blocks", "3"], env)
            ns = float(out.split(" ns per element-step")[0].split()[-1])
            with tempfile.TemporaryDirectory() as d:
                duration = c["run_steps"] * c["dt"]
                t0 = child_cpu()
                run([rodsim, "run", c["scene"], *sets, "--set", f"simulation.duration={duration!r}", "--quiet",
                     "--output", d], env)
                run_s = child_cpu() - t0
            peer_ns.append(1000 * peer_us / c["elements"])
            bench_ns.append(ns)
            run_ns.append(1e9 * run_s / c["run_steps"] / c["elements"])
            step_ratio.append(peer_ns[-1] / ns)
            run_ratio.append(peer_us * 1e-6 * c["run_steps"] / run_s)
            overhead.append(run_ns[-1] / ns)
        rows.append((name, c, peer_ns, bench_ns, run_ns, step_ratio, run_ratio, overhead))
        print(f"{name}: PyElastica {spread(peer_ns)} ns/element-step, bench_cosserat {spread(bench_ns)}, "
              f"rodsim run {spread(run_ns)} ({c['run_steps']} steps); step ratio {spread(step_ratio)}x, "
              f"whole-run ratio {spread(run_ratio)}x, run / bench {spread(overhead, '{:.2f}')}", flush=True)
    print("\n| case | elements | PyElastica ns/element-step | bench_cosserat | rodsim run (steps) | step ratio | "
          "whole-run ratio | run / bench |")
    print("|---|---|---|---|---|---|---|---|")
    for name, c, peer_ns, bench_ns, run_ns, step_ratio, run_ratio, overhead in rows:
        print(f"| {name} | {c['elements']} | {spread(peer_ns)} | {spread(bench_ns)} | {spread(run_ns)} "
              f"({c['run_steps']}) | {spread(step_ratio)}x | {spread(run_ratio)}x | {spread(overhead, '{:.2f}')} |")


if __name__ == "__main__":
    main()
