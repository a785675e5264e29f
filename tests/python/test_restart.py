"""rodsim.Simulation.restart(dir): a run continued from its checkpoint writes what an uninterrupted run
writes, bit for bit (as `rodsim run --restart DIR`, tests/kernel/test_checkpoint.cpp)."""
import shutil
from pathlib import Path

import numpy as np
import pytest
import rodsim
from conftest import cantilever, rodsim_exe, run_cli  # noqa: F401 (fixture)

# 200 steps of 1 ms, a checkpoint every 20 ms (all kept), a frame every 10 ms.
EXTRA = "checkpoint_every = 0.02\ncheckpoint_keep = 20"


def scene(tmp_path):
    text = cantilever(tmp_path, duration=0.2, dt=1e-3).read_text().replace("every = 0.0", "every = 0.01") + EXTRA + "\n"
    path = tmp_path / "scene.toml"
    path.write_text(text)
    return path


def without_wall_clock(text):
    """timeseries.csv without its wall-clock column (the only one that differs between runs)."""
    lines = text.splitlines()
    header = lines[0].split(",")
    keep = [i for i, h in enumerate(header) if "wall" not in h]
    return [[line.split(",")[i] for i in keep] for line in lines]


def expect_same_output(a, b):
    a, b = Path(a), Path(b)
    assert (a / "final.csv").read_bytes() == (b / "final.csv").read_bytes()
    assert without_wall_clock((a / "timeseries.csv").read_text()) == without_wall_clock((b / "timeseries.csv").read_text())
    frames = sorted(p.name for p in (a / "vtk").iterdir())
    assert frames == sorted(p.name for p in (b / "vtk").iterdir())
    for f in frames:
        assert (a / "vtk" / f).read_bytes() == (b / "vtk" / f).read_bytes(), f


def test_restart_from_a_mid_run_checkpoint_is_bit_for_bit(tmp_path):
    path = scene(tmp_path)
    full = rodsim.Simulation(path, output=tmp_path / "full")
    full.run()
    assert full.status == "ok"
    # Pretend the run stopped at step 100: keep only that checkpoint, in a copy of the output.
    shutil.copytree(tmp_path / "full", tmp_path / "resumed")
    for f in (tmp_path / "resumed/checkpoints").iterdir():
        if f.name != "step_000000000100.ckpt":
            f.unlink()
    sim = rodsim.Simulation.restart(tmp_path / "resumed")
    assert sim.step_count == 100 and sim.time == pytest.approx(0.1, abs=1e-12)
    sim.run()
    assert sim.status == "ok" and sim.summary()["steps"] == 200
    expect_same_output(tmp_path / "full", tmp_path / "resumed")


def test_stopped_from_python_then_restarted_matches_the_cli(tmp_path, rodsim_exe):
    path = scene(tmp_path)
    code, out = run_cli(rodsim_exe, "run", path, "--quiet", "--output", tmp_path / "cli")
    assert code == 0, out
    # Stopped between checkpoints (step 73): close(checkpoint=True) writes one of the last step.
    sim = rodsim.Simulation(path, output=tmp_path / "py")
    sim.step(73)
    sim.close(checkpoint=True)
    assert sim.status == "failed" and "stopped by its caller" in sim.reason and "--restart" in sim.reason
    again = rodsim.Simulation.restart(str(tmp_path / "py"))
    assert again.step_count == 73
    again.run()
    assert again.status == "ok"
    expect_same_output(tmp_path / "cli", tmp_path / "py")


def test_a_dict_scene_restarts_from_its_run_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    d = rodsim.scene.load(scene(tmp_path))
    full = rodsim.Simulation(d, output="full")
    full.run()
    sim = rodsim.Simulation(d, output="cut")
    sim.run(until=0.05)
    sim.close(checkpoint=True)
    # The scene is read back from cut/python-scene.toml, which the checkpoint names.
    again = rodsim.Simulation.restart("cut")
    again.run()
    expect_same_output(tmp_path / "full", tmp_path / "cut")


def test_a_restart_continues_a_state_set_from_python(tmp_path):
    # The checkpoint holds the state as set between steps: the restart continues from it.
    path = scene(tmp_path)
    ref = rodsim.Simulation(path, output=tmp_path / "ref")
    ref.step(30)
    beam = ref.rod("beam")
    v = beam.velocities
    v[-1] += [0.0, 0.5, 0.0]
    beam.velocities = v
    ref.run()
    sim = rodsim.Simulation(path, output=tmp_path / "cut")
    sim.step(30)
    sim.rod("beam").velocities = v
    sim.step(10)
    sim.close(checkpoint=True)
    again = rodsim.Simulation.restart(tmp_path / "cut")
    again.run()
    assert (tmp_path / "ref/final.csv").read_bytes() == (tmp_path / "cut/final.csv").read_bytes()


def test_restart_errors(tmp_path):
    with pytest.raises(rodsim.InputError, match="checkpoint"):
        rodsim.Simulation.restart(tmp_path / "nothing")
    path = scene(tmp_path)
    sim = rodsim.Simulation(path, output=tmp_path / "out")
    sim.step(30)
    sim.close(checkpoint=True)
    path.write_text(path.read_text().replace("youngs_modulus = 1000000000.0", "youngs_modulus = 2e9"))
    with pytest.raises(rodsim.InputError, match="written by another setup"):
        rodsim.Simulation.restart(tmp_path / "out")
    # The directory is left as it was: the original scene continues it.
    path.write_text(path.read_text().replace("youngs_modulus = 2e9", "youngs_modulus = 1000000000.0"))
    again = rodsim.Simulation.restart(tmp_path / "out")
    assert again.step_count == 30
    again.close()


def test_a_run_with_a_python_force_restarts_with_the_same_force(tmp_path):
    # A tip load from Python: the checkpoint holds the state, the restart gets the function again.
    def tip(t, x, v):
        f = np.zeros_like(x)
        f[-1, 2] = -0.5 * (1.0 + t)  # N
        return f

    path = scene(tmp_path)
    full = rodsim.Simulation(path, output=tmp_path / "full", forces=[rodsim.PythonForce("tip", tip, rod="beam")])
    full.run()
    cut = rodsim.Simulation(path, output=tmp_path / "cut", forces=[rodsim.PythonForce("tip", tip, rod="beam")])
    cut.step(57)
    cut.close(checkpoint=True)
    with pytest.raises(rodsim.InputError, match="written by another setup"):
        rodsim.Simulation.restart(tmp_path / "cut")  # without the force
    again = rodsim.Simulation.restart(tmp_path / "cut", forces=[rodsim.PythonForce("tip", tip, rod="beam")])
    again.run()
    assert not np.array_equal(rodsim.read_output(tmp_path / "full").final["beam"][:, 2], 0)
    expect_same_output(tmp_path / "full", tmp_path / "cut")
