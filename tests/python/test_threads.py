"""Threads (issue 41, item 5): steps run without the GIL, so another Python thread runs while a
Simulation steps, and two Simulations stepped in parallel threads give what each gives alone."""
import threading
import time

import numpy as np

import rodsim
from conftest import cantilever


def test_other_threads_run_python_while_a_simulation_steps(tmp_path):
    # The main thread counts while a worker runs a Simulation for about half a second of wall time.
    # If run() held the GIL through its steps, the main thread would run only at the hand-offs
    # between chunks of steps (at most one every 0.1 s, for the interpreter's 5 ms switch
    # interval): a few per cent of the time. Without it, the main thread runs whenever a core is
    # free: most of the time on two cores, about half of it with two other busy processes (58 % measured).
    sim = rodsim.Simulation(cantilever(tmp_path, duration=50.0), output=tmp_path / "out", quiet=True)
    sim.step(20)
    t0 = time.perf_counter()
    sim.step(200)
    steps = max(50, int(200 * 0.5 / max(time.perf_counter() - t0, 1e-6)))  # about 0.5 s of steps

    worker = threading.Thread(target=sim.step, args=(steps,))
    stamps = []
    worker.start()
    while worker.is_alive():
        stamps.append(time.perf_counter())
    worker.join()
    sim.close()
    gaps = np.diff(stamps)
    busy = gaps[gaps < 0.002].sum()   # time covered by the main thread's own loop
    total = stamps[-1] - stamps[0]
    assert total > 0.1
    assert busy / total > 0.2, f"the main thread ran {busy / total:.0%} of the time while the worker stepped"


def test_two_simulations_in_parallel_threads_match_sequential_runs(tmp_path):
    def final(out):
        return rodsim.read_output(out).final["beam"]

    for name in ("a", "b"):
        with rodsim.Simulation(cantilever(tmp_path, duration=0.2, name=f"{name}.toml"),
                               output=tmp_path / f"alone_{name}", quiet=True) as sim:
            sim.run()
    sims = [rodsim.Simulation(cantilever(tmp_path, duration=0.2, name=f"{name}.toml"),
                              output=tmp_path / f"parallel_{name}", quiet=True) for name in ("a", "b")]
    threads = [threading.Thread(target=s.run) for s in sims]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for name in ("a", "b"):
        assert np.array_equal(final(tmp_path / f"parallel_{name}"), final(tmp_path / f"alone_{name}"))
