"""A force written in Python agrees with the same force as a C++ plugin to round-off, on an implicit
(DER, implicit Euler) and an explicit (cosserat, position Verlet) solver."""
import numpy as np
import pytest
import rodsim
from conftest import ROOT, cantilever

GRAVITY = """
[[force]]
name = "weight"
type = "gravity"
"""


@pytest.mark.parametrize("every_evaluation", [True, False])
def test_python_gravity_is_the_plugin_gravity_implicit(tmp_path, every_evaluation):
    plugin = rodsim.Simulation(cantilever(tmp_path, duration=0.2, extra=GRAVITY, name="a.toml"),
                               output=tmp_path / "plugin")
    plugin.run()

    mass = {}

    def weight(t, x, v):
        return mass["m"][:, None] * np.array([0.0, 0.0, -9.81])

    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.2, name="b.toml"), output=tmp_path / "python",
                            forces=[rodsim.PythonForce("weight", weight, rod="beam",
                                                       every_evaluation=every_evaluation)])
    mass["m"] = sim.rod("beam").mass
    sim.run()
    a, b = plugin.rod("beam").positions, sim.rod("beam").positions
    assert abs(a[-1, 2]) > 1e-3  # it moved
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()


def test_python_point_load_is_the_plugin_point_load_explicit(tmp_path):
    scene = ROOT / "scenes/validation/cosserat_timoshenko.toml"
    short = {"simulation.duration": 0.3}
    plugin = rodsim.Simulation(scene, set=short, output=tmp_path / "plugin")
    plugin.run()

    def tip_load(t, x, v):
        f = np.zeros_like(x)
        f[-1] = [0.0, 0.0, -15.0]
        return f

    # The scene's own load is switched off (zero force) and the same load comes from Python.
    sim = rodsim.Simulation(scene, set={**short, "force.tip.force": [0.0, 0.0, 0.0]}, output=tmp_path / "python",
                            forces=[rodsim.PythonForce("py_tip", tip_load, rod="beam")])
    sim.run()
    a, b = plugin.rod("beam").positions, sim.rod("beam").positions
    assert abs(a[-1, 2]) > 1e-4
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()


def test_a_bad_return_value_fails_the_step_with_the_reason(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.01), output=tmp_path / "out",
                            forces=[rodsim.PythonForce("bad", lambda t, x, v: np.zeros(3), rod="beam")])
    with pytest.raises(rodsim.SimulationError, match=r"shape \(21, 3\)"):
        sim.step()


def test_a_name_clash_is_an_input_error(tmp_path):
    with pytest.raises(rodsim.InputError, match="the scene has a force of that name"):
        rodsim.Simulation(cantilever(tmp_path), output=tmp_path / "out",
                          forces=[rodsim.PythonForce("friction", lambda t, x, v: None, rod="beam")])
