"""The Python API: array shapes and units, time and steps, summary, plugins and describe."""
import math

import numpy as np
import pytest
import rodsim
from conftest import ROOT, cantilever


def test_rod_arrays_have_the_documented_shapes_and_units(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path), output=tmp_path / "out")
    beam = sim.rod("beam")
    assert beam.name == "beam" and beam.model == "der" and beam.num_nodes == 21
    x = beam.positions
    assert x.shape == (21, 3) and x.dtype == np.float64
    assert np.allclose(x[:, 0], np.linspace(0, 1, 21)) and not x[:, 1:].any()  # metres, as in the scene
    assert beam.velocities.shape == (21, 3) and not beam.velocities.any()
    assert beam.radius.shape == (21,) and np.all(beam.radius == 0.01)
    assert beam.mass.shape == (21,)
    assert beam.mass.sum() == pytest.approx(1000.0 * math.pi * 0.01**2 * 1.0, rel=1e-12)  # kg
    d = beam.directors
    assert d.shape == (20, 3, 3)
    for frame in d:  # rows d1, d2, d3: orthonormal, right-handed, d3 the tangent
        assert np.allclose(frame @ frame.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(frame) == pytest.approx(1.0)
        assert np.allclose(frame[2], [1, 0, 0])
    # Arrays are copies of the state when read: changing one changes nothing in the simulation.
    x[:] = 0
    assert beam.positions[-1, 0] == 1.0


def test_time_steps_and_summary(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.05), output=tmp_path / "out")
    assert sim.time == 0 and sim.step_count == 0 and sim.total_steps == 50 and sim.dt == 1e-3
    sim.step()
    assert sim.step_count == 1 and sim.time == pytest.approx(1e-3, abs=1e-15)
    sim.run(until=0.02)
    assert sim.step_count == 20 and sim.time == pytest.approx(0.02, abs=1e-15)
    s = sim.summary()
    assert s["status"] == "running" and s["steps"] == 20 and s["sim_time"] == pytest.approx(0.02)
    sim.run()
    assert sim.finished and sim.summary()["status"] == "ok"
    assert (tmp_path / "out/final.csv").exists()
    with pytest.raises(rodsim.SimulationError, match="finished"):
        sim.step()


def test_closing_early_says_so(tmp_path):
    with rodsim.Simulation(cantilever(tmp_path, duration=0.05), output=tmp_path / "out") as sim:
        sim.step(3)
    out = rodsim.read_output(tmp_path / "out")
    assert out.summary["status"] == "failed" and "stopped by its caller" in out.summary["reason"]
    assert out.final["beam"].shape == (21, 3)
    # The directory is free again: a second run into it (same setup) replaces the unfinished one's files.
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.05), output=tmp_path / "out", replace=True)
    sim.run()
    assert sim.status == "ok"


def test_set_values_are_the_cli_set(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path), output=tmp_path / "out",
                            set={"simulation.duration": 0.01, "rod.beam.radius": 0.02,
                                 "constraint.root.nodes": np.array([0, 1, 2])})
    assert sim.total_steps == 10 and np.all(sim.rod("beam").radius == 0.02)


def test_plugins_and_describe():
    names = [p["name"] for p in rodsim.plugins()]
    assert "loads" in names and "rod_der" in names
    loads = next(p for p in rodsim.plugins() if p["name"] == "loads")
    assert "force point-load" in loads["types"]
    text = rodsim.describe("point-load")
    assert "force type \"point-load\"" in text and "provides: adjustable-parameters" in text
    assert "[simulation] (kernel section)" in rodsim.describe("simulation")
    with pytest.raises(rodsim.InputError, match="did you mean 'point-load'"):
        rodsim.describe("point-lod")
    assert any(d.endswith("plugins") for d in rodsim.plugin_search_path())


def test_ctrl_c_raises_keyboard_interrupt_and_the_run_goes_on(tmp_path):
    # The module installs no signal handler: the interpreter's Ctrl-C stops run() between steps with
    # KeyboardInterrupt, and the simulation is still open.
    import os
    import signal
    import subprocess
    import sys
    import time
    script = tmp_path / "interrupted.py"
    script.write_text(f"""
import rodsim, sys
sim = rodsim.Simulation({str(ROOT / 'scenes/validation/cosserat_timoshenko.toml')!r}, output={str(tmp_path / 'out')!r},
                       set={{"simulation.duration": 1000.0}})
print("ready", flush=True)
try:
    sim.run()
except KeyboardInterrupt:
    n = sim.step_count
    sim.step(3)
    print("interrupted", n, sim.step_count, sim.status, flush=True)
sim.close()
""")
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ})
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    words = out.split()
    assert words[0] == "interrupted", out + err
    assert int(words[2]) == int(words[1]) + 3 and words[3] == "running"
    summary = rodsim.read_output(tmp_path / "out").summary
    assert summary["status"] == "failed" and "stopped by its caller" in summary["reason"]
