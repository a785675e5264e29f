"""Setting a rod's state between steps (positions, velocities, directors, angular velocities) and the
argument checks of the Python API: shapes, finiteness, NaN and infinite arguments."""
import math

import numpy as np
import pytest
import rodsim

# A free straight rod along x, no gravity, no damping, no constraint: a rigid motion is a solution.
FREE_ROD = """
[simulation]
duration = 0.05
dt = {dt}

[solver]
type = "{solver}"

[[rod]]
name = "r"
model = "{model}"
nodes = 11
radius = 0.01
density = 1000.0
youngs_modulus = 1e7
poisson_ratio = 0.5
geometry = {{ shape = "straight", start = [0, 0, 0], end = [1, 0, 0] }}

[output]
every = 0.0
"""


def free_rod(tmp_path, model="der", solver="implicit-euler"):
    # The explicit solver at a tenth of the step: below the rod's stability limit (1.3e-4 s).
    dt = 1e-4 if solver == "position-verlet" else 1e-3
    return rodsim.Simulation(FREE_ROD.format(model=model, solver=solver, dt=dt), output=tmp_path / f"{model}-{solver}")


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


@pytest.mark.parametrize("model,solver", [("der", "implicit-euler"), ("cosserat", "implicit-euler"),
                                          ("cosserat", "position-verlet")])
def test_translated_positions_stay_put(tmp_path, model, solver):
    sim = free_rod(tmp_path, model, solver)
    rod = sim.rod("r")
    sim.step(3)
    x0 = rod.positions
    shift = np.array([0.1, -0.2, 0.3])
    rod.positions = x0 + shift
    assert np.array_equal(rod.positions, x0 + shift)
    d0 = rod.directors
    sim.step(10)
    # Unstressed and at rest: no force, so nothing moves (to round-off of the solver's arithmetic).
    assert np.allclose(rod.positions, x0 + shift, rtol=0, atol=1e-12)
    assert np.allclose(rod.directors, d0, rtol=0, atol=1e-12)
    assert np.abs(rod.velocities).max() < 1e-9


@pytest.mark.parametrize("model", ["der", "cosserat"])
def test_velocities_set_momentum_and_move_the_rod(tmp_path, model):
    sim = free_rod(tmp_path, model)
    rod = sim.rod("r")
    u = np.array([0.3, -0.1, 0.2])
    rod.velocities = np.tile(u, (rod.num_nodes, 1))
    m = rod.mass
    p = (m[:, None] * rod.velocities).sum(axis=0)
    assert np.allclose(p, m.sum() * u, rtol=1e-14, atol=0)  # kg m/s
    x0 = rod.positions
    sim.step(20)
    # A rigid translation: no elastic force, momentum conserved, x = x0 + u t.
    p = (m[:, None] * rod.velocities).sum(axis=0)
    assert np.allclose(p, m.sum() * u, rtol=1e-9, atol=0)
    assert np.allclose(rod.positions, x0 + u * sim.time, rtol=0, atol=1e-10)


def test_cosserat_directors_read_back_and_rotate_with_the_rod(tmp_path):
    sim = free_rod(tmp_path, "cosserat")
    rod = sim.rod("r")
    d = rod.directors
    # Each element's frame turned about its own d3 by a different angle (a twist), and one frame by a
    # general rotation: every frame may be set on a shearable rod.
    angles = np.linspace(0, 1.0, len(d))
    target = np.array([(rotation(f[2], a) @ f.T).T for f, a in zip(d, angles)])
    target[3] = (rotation([1, 2, 3], 0.4) @ d[3].T).T
    rod.directors = target
    assert np.allclose(rod.directors, target, rtol=0, atol=1e-12)
    # The twisted one untwists: its frames turn (its kinetic energy grows from zero).
    sim.step(5)
    assert np.abs(rod.angular_velocities).max() > 1.0


@pytest.mark.parametrize("model", ["der", "cosserat"])
def test_a_rigid_rotation_leaves_the_rod_unstressed(tmp_path, model):
    # Positions first (a DER frame's d3 is its edge), then the frames rotated with them: nothing moves.
    sim = free_rod(tmp_path, model)
    rod = sim.rod("r")
    R = rotation([0, 1, 1], 0.7)
    d = rod.directors
    rod.positions = rod.positions @ R.T
    rod.directors = np.array([(R @ f.T).T for f in d])
    assert np.allclose(rod.directors, [(R @ f.T).T for f in d], rtol=0, atol=1e-12)
    x = rod.positions
    sim.step(10)
    assert np.allclose(rod.positions, x, rtol=0, atol=1e-12)
    assert np.allclose(rod.directors, [(R @ f.T).T for f in d], rtol=0, atol=1e-12)


def test_setting_state_after_the_run_finished_is_refused(tmp_path):
    sim = free_rod(tmp_path, "der")
    sim.run()
    with pytest.raises(rodsim.SimulationError, match="finished"):
        sim.rod("r").positions = np.zeros((11, 3))


def test_der_directors_set_the_twist_and_need_the_tangent(tmp_path):
    sim = free_rod(tmp_path, "der")
    rod = sim.rod("r")
    d = rod.directors
    angles = np.linspace(0, 2.0, len(d))
    target = np.array([(rotation(f[2], a) @ f.T).T for f, a in zip(d, angles)])
    rod.directors = target
    assert np.allclose(rod.directors, target, rtol=0, atol=1e-12)
    bad = target.copy()
    bad[4] = (rotation([0, 0, 1], 0.1) @ bad[4].T).T  # d3 off the edge
    with pytest.raises(ValueError, match=r"rod 'r': directors\[4\]: d3 differs from the edge tangent"):
        rod.directors = bad
    with pytest.raises(ValueError, match="cosserat"):
        rod.angular_velocities = np.zeros((10, 3))


def test_cosserat_angular_velocities_read_back(tmp_path):
    sim = free_rod(tmp_path, "cosserat")
    rod = sim.rod("r")
    w = np.zeros((10, 3))
    w[:, 2] = 5.0  # spin about d3 (rad/s)
    rod.angular_velocities = w
    assert np.array_equal(rod.angular_velocities, w)


def test_bad_state_arrays_are_refused(tmp_path):
    sim = free_rod(tmp_path, "cosserat")
    rod = sim.rod("r")
    x = rod.positions
    with pytest.raises(ValueError, match=r"rod 'r': positions must have shape \(11, 3\), found \(10, 3\)"):
        rod.positions = x[:-1]
    bad = x.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"rod 'r': positions\[4, 1\] is NaN"):
        rod.positions = bad
    bad = rod.velocities
    bad[2, 0] = -np.inf
    with pytest.raises(ValueError, match=r"rod 'r': velocities\[2, 0\] is infinite"):
        rod.velocities = bad
    with pytest.raises(TypeError, match="real numbers"):
        rod.velocities = np.zeros((11, 3), complex)
    with pytest.raises(TypeError):
        rod.positions = [["a", "b", "c"]] * 11
    d = rod.directors
    scaled = d.copy()
    scaled[1] *= 1.001
    with pytest.raises(ValueError, match=r"directors\[1\] is not orthonormal"):
        rod.directors = scaled
    flipped = d.copy()
    flipped[2, 2] *= -1
    with pytest.raises(ValueError, match=r"directors\[2\] is left-handed"):
        rod.directors = flipped
    with pytest.raises(ValueError, match=r"angular_velocities must have shape \(10, 3\)"):
        rod.angular_velocities = np.zeros((11, 3))
    bad = x.copy()
    bad[5] = bad[4]
    with pytest.raises(ValueError, match=r"rod 'r': positions: nodes 4 and 5 coincide"):
        rod.positions = bad
    assert np.array_equal(rod.positions, x)  # nothing was changed by the refused values
    # Lists of numbers work as arrays do.
    rod.positions = x.tolist()
    assert np.array_equal(rod.positions, x)


def test_nan_and_infinite_arguments_raise_value_error(tmp_path):
    sim = free_rod(tmp_path, "der")
    for until in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match="until"):
            sim.run(until=until)
    with pytest.raises(ValueError, match="n must be >= 0"):
        sim.step(-1)
    with pytest.raises(TypeError):
        sim.step(1.5)
    with pytest.raises(TypeError):
        sim.step(math.nan)
    with pytest.raises(ValueError, match="every must be >= 1"):
        sim.every(0, lambda s: None)
    assert sim.step_count == 0
    sim.step(0)
    assert sim.step_count == 0
    # --set values: the kernel's range checks refuse NaN where a key needs a number in a range.
    for key in ("simulation.dt", "rod.r.radius", "rod.r.youngs_modulus"):
        with pytest.raises(rodsim.InputError, match=key.replace(".", r"\.")):
            rodsim.Simulation(FREE_ROD.format(model="der", solver="implicit-euler", dt=1e-3), set={key: math.nan},
                              output=tmp_path / "nan")


POINT_LOAD = """
[[force]]
name = "push"
type = "point-load"
rod = "r"
node = -1
force = [0.0, 0.0, 1.0]
"""


def test_set_parameter_checks_values_and_names_the_adjustable_keys(tmp_path):
    sim = rodsim.Simulation(FREE_ROD.format(model="der", solver="implicit-euler", dt=1e-3) + POINT_LOAD,
                            output=tmp_path / "o")
    sim.set_parameter("push.force", [0.0, 0.0, 2.0])
    assert np.array_equal(sim.parameter("push.force"), [0.0, 0.0, 2.0])
    with pytest.raises(ValueError, match=r"push\.force: element 1 is NaN"):
        sim.set_parameter("push.force", [0.0, math.nan, 2.0])
    with pytest.raises(ValueError, match=r"infinite"):
        sim.set_parameter("push.force", [0.0, 0.0, math.inf])
    assert np.array_equal(sim.parameter("push.force"), [0.0, 0.0, 2.0])
    # Not adjustable during a run: the error lists what is, and where the rest is given.
    with pytest.raises(ValueError, match=r"'r\.radius': rod 'r' \(der\) has no parameters that can change during a "
                                         r"run\. Parameters that can change during a run: push\.force.*set="):
        sim.set_parameter("r.radius", 0.02)
    with pytest.raises(ValueError, match=r"no component named 'simulation'.*push\.force"):
        sim.set_parameter("simulation.dt", 1e-4)


def test_state_can_be_set_from_a_callback(tmp_path):
    # Kinetic damping: every 5th step the callback stops the rod (its own Simulation, between steps).
    sim = free_rod(tmp_path, "der")
    rod = sim.rod("r")
    rod.velocities = np.tile([0.0, 0.0, 1.0], (11, 1))
    seen = []

    @sim.every(5)
    def stop(s):
        r = s.rod("r")
        seen.append(r.velocities[:, 2].mean())
        r.velocities = np.zeros((11, 3))

    sim.run(until=0.02)
    assert sim.step_count == 20 and len(seen) == 4
    assert seen[0] == pytest.approx(1.0, rel=1e-9) and max(abs(v) for v in seen[1:]) < 1e-12
    assert np.abs(rod.velocities).max() < 1e-12
    assert np.allclose(rod.positions[:, 2], 5e-3, rtol=0, atol=1e-10)  # moved for 5 steps of 1 ms at 1 m/s


def test_a_der_rod_reversed_in_one_set_is_refused_and_in_two_turns_works(tmp_path):
    # Its frames follow the tangents by parallel transport, undefined for a reversal.
    sim = free_rod(tmp_path, "der")
    rod = sim.rod("r")
    x = rod.positions
    with pytest.raises(ValueError, match=r"edge 0 is reversed"):
        rod.positions = x[::-1].copy()
    R = rotation([0, 0, 1], math.pi / 2)
    rod.positions = x @ R.T
    rod.positions = x @ (R @ R).T  # turned by 180 degrees about z in two quarter turns
    assert np.isfinite(rod.directors).all()
    assert np.allclose(rod.directors[:, 2], [-1, 0, 0], rtol=0, atol=1e-12)
    sim.step(5)
    assert np.allclose(rod.positions, x @ (R @ R).T, rtol=0, atol=1e-12)  # unstressed: nothing moves
