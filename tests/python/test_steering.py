"""Steering: callbacks every k steps read the state and change a force's parameter or a motor's rate
(AdjustableParameters, SDK 1.3); the result changes as the controller says."""
import math

import numpy as np
import pytest
import rodsim
from conftest import cantilever, run_cli

GRAVITY = """
[[force]]
name = "weight"
type = "gravity"

[[force]]
name = "tip"
type = "point-load"
rod = "beam"
node = -1
force = [0, 0, 0]
"""


def test_a_pi_controller_holds_the_tip_at_its_height(tmp_path):
    # Stiff DER cantilever (EI = 7.85 N m^2) under its weight (3.08 N): it sags 0.044 m at the tip. A PI
    # controller on the tip load, every 10 steps, brings the tip back to z = 0; the load it needs is
    # the beam-theory one, P = 3 w L / 8 (the tip force that cancels a uniform load's tip deflection),
    # with L = 1 - h/2 the length beyond the clamped section (the middle of edge 0).
    scene = cantilever(tmp_path, duration=3.0, dt=2e-3, damping=5.0, extra=GRAVITY)
    free = rodsim.Simulation(scene, output=tmp_path / "free")
    free.run()
    sag = free.rod("beam").positions[-1, 2]
    assert sag < -0.04

    sim = rodsim.Simulation(scene, output=tmp_path / "held")
    state = {"integral": 0.0}

    @sim.every(10)
    def controller(s):
        z = s.rod("beam").positions[-1, 2]
        state["integral"] += z * 10 * s.dt
        s.set_parameter("tip.force", [0.0, 0.0, -(20.0 * z + 400.0 * state["integral"])])

    sim.run()
    z = sim.rod("beam").positions[-1, 2]
    assert abs(z) < 1e-4, z
    w = sim.rod("beam").mass.sum() * 9.81  # N per metre of the 1 m rod
    assert sim.parameter("tip.force")[2] == pytest.approx(3 * w * (1 - 0.05 / 2) / 8, rel=0.005)
    assert sim.adjustable_parameters() == {"weight": ["g"], "tip": ["force", "torque"]}


def test_a_controller_drives_the_motor_to_a_tip_angle(tmp_path):
    # The root turns about z (a `rotate` motor, at rest at first); every 5 steps a P controller sets its
    # rate from the measured azimuth of the tip so that the tip settles at 0.5 rad. Damped enough that
    # the loop around the rod's first bending mode (2.8 Hz) is stable at this gain.
    motor = 'axis = [0, 0, 1]\nangular_velocity = 0.0'
    scene = cantilever(tmp_path, duration=3.0, dt=2e-3, damping=5.0, root="rotate", root_extra=motor)
    sim = rodsim.Simulation(scene, output=tmp_path / "out")
    assert sim.parameter("root.angular_velocity") == 0.0
    target = 0.5

    def controller(s):
        x, y, _ = s.rod("beam").positions[-1]
        s["root.angular_velocity"] = 2.0 * (target - math.atan2(y, x))

    sim.every(5, controller)
    sim.run()
    x, y, _ = sim.rod("beam").positions[-1]
    assert math.atan2(y, x) == pytest.approx(target, abs=2e-3)
    # The root edge turned as much: the motor went on from its angle at every change (no jump).
    d3 = sim.rod("beam").directors[0][2]
    assert math.atan2(d3[1], d3[0]) == pytest.approx(target, abs=5e-3)


def test_bad_values_are_refused_and_change_nothing(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path, extra=GRAVITY), output=tmp_path / "out")
    with pytest.raises(ValueError, match="expected 3 numbers"):
        sim.set_parameter("tip.force", [1.0, 2.0])
    with pytest.raises(ValueError, match="adjusts `force` and `torque`"):
        sim.set_parameter("tip.node", 3)
    with pytest.raises(ValueError, match="did you mean 'tip'"):
        sim.set_parameter("tips.force", [0, 0, 1])
    assert np.all(sim.parameter("tip.force") == 0)
    sim["weight.g"] = [0, 0, -1.62]
    assert np.all(sim["weight.g"] == [0, 0, -1.62])
    sim.close()


def test_a_restart_continues_with_the_changed_values(tmp_path, rodsim_exe):
    # A tip load switched on from Python at t = 0.05 s; the checkpoint at t = 0.1 s carries it, so
    # `rodsim run --restart` from that checkpoint ends where the Python run ended, bit for bit.
    scene = cantilever(tmp_path, duration=0.2, dt=2e-3)
    scene.write_text(scene.read_text().replace("[output]\nevery = 0.0\n", "[output]\nevery = 0.0\ncheckpoint_every = 0.1\n")
                     + GRAVITY)
    sim = rodsim.Simulation(scene, output=tmp_path / "py")
    sim.every(25, lambda s: s.set_parameter("tip.force", [0.0, 0.0, 0.5]) if s.step_count == 25 else None)
    sim.run()
    final = (tmp_path / "py/final.csv").read_bytes()
    checkpoints = sorted((tmp_path / "py/checkpoints").glob("*.ckpt"))
    assert len(checkpoints) >= 2
    for later in checkpoints[1:]:  # keep the one at t = 0.1 s
        later.unlink()
    status, text = run_cli(rodsim_exe, "run", "--restart", tmp_path / "py", "--quiet")
    assert status == 0, text
    assert (tmp_path / "py/final.csv").read_bytes() == final
