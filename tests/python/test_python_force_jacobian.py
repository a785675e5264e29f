"""rodsim.PythonForce with couples and Jacobians (docs/python.md, "Forces in Python").

- Jacobian: the `damping` plugin (F_i = -c lbar_i v_i, K_ii = c lbar_i / dt) and the same force from
  Python with its Jacobian, in each accepted form, take the same Newton solves per step and the same
  trajectory to round-off; without the Jacobian Newton needs several times as many.
- A stiff spring to a point written in Python: without "dfdx" Newton needs three times as many solves
  per step as with it, for the same solution to Newton's tolerance.
- Couples: a constant couple C about the tangent of a free rod's last edge turns it at C / I
  (I = rho J l, J = pi r^4 / 2) on Cosserat and DER rods under the solvers' own discrete kinematics; on
  a DER rod the couple's normal part is the force pair C x t / |e| on the edge's nodes."""
import numpy as np
import pytest
import rodsim
from conftest import ROOT, cantilever

GRAVITY = """
[[force]]
name = "weight"
type = "gravity"
"""

C_DAMPING = 20.0  # N s/m^2: c lbar / dt = 1000 N/m per interior node against m / dt^2 = 15700 N/m


def voronoi(x):
    """Rest Voronoi lengths (m) of a rod's nodes from its (straight, unstressed) initial positions."""
    e = np.linalg.norm(np.diff(x, axis=0), axis=1)
    lbar = np.zeros(len(x))
    lbar[:-1] += e / 2
    lbar[1:] += e / 2
    return lbar


def damping_force(form, coef):
    """The damping plugin's force from Python, with its Jacobian in the given form (None: none).
    coef["c"] is c lbar_i (N s/m), set once the rod exists."""

    def fn(t, x, v):
        c = coef["c"]
        f = -c[:, None] * v
        n = len(x)
        if form is None:
            return f
        if form == "dfdv-blocks":
            return {"forces": f, "dfdv": -c[:, None, None] * np.eye(3)}
        if form == "dfdv-dense":
            return {"forces": f, "dfdv": np.diag(-np.repeat(c, 3))}
        if form == "dfdv-triple":
            i = np.arange(3 * n)
            return {"forces": f, "dfdv": (i, i, -np.repeat(c, 3))}
        if form == "dfdv-scipy":
            sparse = pytest.importorskip("scipy.sparse")
            return {"forces": f, "dfdv": sparse.diags(-np.repeat(c, 3)).tocsr()}
        if form == "dfdx-blocks":  # v = (x - x_start) / dt: dF/dx = dF/dv / dt, the same K
            return {"forces": f, "dfdx": -c[:, None, None] * np.eye(3) / coef["dt"]}
        raise AssertionError(form)

    return fn


def run_python_damping(tmp_path, form, label):
    coef = {"dt": 1e-3}
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.2, damping=0.0, extra=GRAVITY, name=f"{label}.toml"),
                            output=tmp_path / label,
                            forces=[rodsim.PythonForce("py_damping", damping_force(form, coef), rod="beam",
                                                       velocity="step")])
    coef["c"] = C_DAMPING * voronoi(sim.rod("beam").positions)
    sim.run()
    return sim


@pytest.fixture
def plugin_damping(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.2, damping=C_DAMPING, extra=GRAVITY, name="plugin.toml"),
                            output=tmp_path / "plugin")
    sim.run()
    return sim


@pytest.mark.parametrize("form", ["dfdv-blocks", "dfdv-dense", "dfdv-triple", "dfdv-scipy", "dfdx-blocks"])
def test_python_damping_with_its_jacobian_is_the_plugin(tmp_path, plugin_damping, form):
    sim = run_python_damping(tmp_path, form, "python")
    a, b = plugin_damping.rod("beam").positions, sim.rod("beam").positions
    assert abs(a[-1, 2]) > 1e-2  # it swung
    # The same K and F up to the order of additions: Newton's iterates agree to round-off.
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()
    solves_plugin, solves_python = plugin_damping.summary()["aipts"], sim.summary()["aipts"]
    assert solves_plugin > 1.0
    assert abs(solves_python - solves_plugin) <= 0.1 * solves_plugin


def test_python_damping_without_its_jacobian_costs_newton_solves(tmp_path, plugin_damping):
    sim = run_python_damping(tmp_path, None, "python")
    # Without the Jacobian the damping enters each Newton iterate as a constant: a fixed-point
    # iteration that contracts by about (c lbar / dt) / (m / dt^2 + K) per solve: the same solution
    # to the solver's tolerance (1e-6), at 4.2 solves per step instead of 1.3 (measured).
    a, b = plugin_damping.rod("beam").positions, sim.rod("beam").positions
    assert np.abs(a - b).max() <= 1e-5 * np.abs(a).max()
    assert sim.summary()["aipts"] > 2.0 * plugin_damping.summary()["aipts"]


def test_python_damping_with_the_step_velocity_is_the_plugin_explicit(tmp_path):
    # Under position Verlet, velocity="step" hands over the velocity the explicit solver integrates the
    # velocity-dependent forces with (World::evaluateVelocityForces), as the damping plugin reads it:
    # the same arithmetic, so the same trajectory to the last bit on this scene.
    scene = ROOT / "scenes/validation/cosserat_timoshenko.toml"
    short = {"simulation.duration": 0.3}
    plugin = rodsim.Simulation(scene, set=short, output=tmp_path / "plugin")
    plugin.run()
    coef = {}
    sim = rodsim.Simulation(scene, set={**short, "force.friction.coefficient": 0.0}, output=tmp_path / "python",
                            forces=[rodsim.PythonForce("py_damping", lambda t, x, v: -coef["c"][:, None] * v,
                                                       rod="beam", velocity="step")])
    coef["c"] = 1000.0 * voronoi(sim.rod("beam").positions)  # the scene's coefficient, N s/m^2
    sim.run()
    a, b = plugin.rod("beam").positions, sim.rod("beam").positions
    assert abs(a[-1, 2]) > 1e-3
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()


SPRING_K = 2000.0  # N/m: against the tip node's m / dt^2 = 7.9e3 N/m and the cantilever's 3 E I / L^3 = 0.024 N/m
ANCHOR = np.array([1.0, 0.0, -0.05])


def spring(with_jacobian):
    def fn(t, x, v):
        f = np.zeros_like(x)
        f[-1] = -SPRING_K * (x[-1] - ANCHOR)
        if not with_jacobian:
            return f
        n = len(x)
        rows = 3 * (n - 1) + np.arange(3)
        return {"forces": f, "dfdx": (rows, rows, np.full(3, -SPRING_K))}

    return fn


def test_a_stiff_spring_with_dfdx_keeps_newton_quadratic(tmp_path):
    runs = {}
    for with_jacobian in (True, False):
        label = "jac" if with_jacobian else "nojac"
        sim = rodsim.Simulation(cantilever(tmp_path, duration=0.1, name=f"{label}.toml"), output=tmp_path / label,
                                forces=[rodsim.PythonForce("tether", spring(with_jacobian), rod="beam")])
        sim.run()
        runs[label] = sim
    a, b = runs["jac"].rod("beam").positions, runs["nojac"].rod("beam").positions
    assert a[-1, 2] < -0.01  # pulled down towards the anchor
    assert np.abs(a - b).max() <= 1e-5  # both converged to Newton's tolerance
    # Measured: 2.47 solves per step with dfdx (the rod swings through large rotations), 7.42 without:
    # the spring's k / (m / dt^2) = 0.25 left out of K makes each Newton solve contract the error by
    # about that factor instead of squaring it.
    assert runs["nojac"].summary()["aipts"] >= 2.0 * runs["jac"].summary()["aipts"]


# A free straight rod along x (L = 0.1 m, 10 edges, r = 5 mm), soft so that over the first steps the
# twist of the driven edge barely reaches its neighbour (see the tolerance below).
FREE_ROD = """
[simulation]
duration = 1e-3
dt = {dt}

[solver]
type = "{solver}"
{solver_extra}

[[rod]]
name = "r"
model = "{model}"
nodes = 11
radius = {radius}
density = {density}
youngs_modulus = {E}
poisson_ratio = 0.5
geometry = {{ shape = "straight", start = [0, 0, 0], end = [{L}, 0, 0] }}
rest_shape = "straight"

[output]
every = 0.0
"""


def twist_angle(d_start, d):
    """Angle (rad) that turns frame d_start's d1 into d's d1 about the tangent d_start[2]."""
    return np.arctan2(np.cross(d_start[0], d[0]) @ d_start[2], d_start[0] @ d[0])


@pytest.mark.parametrize("model,solver", [("cosserat", "position-verlet"), ("cosserat", "implicit-euler"),
                                          ("der", "implicit-euler")])
def test_a_couple_about_the_tangent_turns_the_end_edge_at_c_over_i(tmp_path, model, solver):
    dt, L, r, rho, E, C = 1e-5, 0.1, 0.005, 1000.0, 1e4, 1e-6
    l = L / 10
    path = tmp_path / "rod.toml"
    path.write_text(FREE_ROD.format(dt=dt, solver=solver, model=model, radius=r, density=rho, E=E, L=L,
                                    solver_extra='tolerance = 1e-10' if solver == "implicit-euler" else ""))

    def couple(t, x, v):
        c = np.zeros((len(x) - 1, 3))
        c[-1] = [C, 0.0, 0.0]  # about the tangent (x) of the last edge
        return {"couples": c}

    sim = rodsim.Simulation(path, output=tmp_path / "out", forces=[rodsim.PythonForce("twist", couple, rod="r")])
    alpha = C / (rho * np.pi * r**4 / 2 * l)  # C / I, rad/s^2
    # The neighbour resists through the torsional stiffness G J / l once the edge has turned: relative
    # to C that is (G J / l) theta / C = (G / (rho l^2)) t^2 / 2 at time t (G = E / 3 at nu = 0.5).
    G = E / 3
    d_start = sim.rod("r").directors[-1]
    for n in range(1, 6):
        sim.step()
        t = n * dt
        theta = twist_angle(d_start, sim.rod("r").directors[-1])
        # The solvers' kinematics under a constant acceleration: position Verlet (half drifts) gives
        # alpha t^2 / 2 exactly; implicit Euler v_k = k alpha dt, theta_n = alpha dt^2 n (n + 1) / 2.
        expected = alpha * t**2 / 2 if solver == "position-verlet" else alpha * dt**2 * n * (n + 1) / 2
        assert theta == pytest.approx(expected, rel=(G / (rho * l**2)) * t**2 + 1e-9)
    # The couple does not move the nodes (a pure twist of a straight rod): no bending, no shear.
    assert np.abs(sim.rod("r").positions[:, 1:]).max() <= 1e-12 * L


def test_a_normal_couple_on_a_der_edge_is_the_force_pair_c_cross_t_over_e(tmp_path):
    dt, L, r, rho, E = 1e-5, 0.1, 0.005, 1000.0, 1e4
    l = L / 10
    path = tmp_path / "rod.toml"
    path.write_text(FREE_ROD.format(dt=dt, solver="implicit-euler", model="der", radius=r, density=rho, E=E, L=L,
                                    solver_extra="tolerance = 1e-10"))
    C = np.array([0.0, 0.0, 2e-6])  # about z, normal to the edge's tangent x

    def couple(t, x, v):
        c = np.zeros((len(x) - 1, 3))
        c[-1] = C
        return {"couples": c}

    sim = rodsim.Simulation(path, output=tmp_path / "out", forces=[rodsim.PythonForce("turn", couple, rod="r")])
    x0 = sim.rod("r").positions
    m = sim.rod("r").mass
    sim.step()
    dx = sim.rod("r").positions - x0
    F = np.cross(C, [1.0, 0.0, 0.0]) / l  # on the edge's far node, -F on its near node: moment C about the near node
    # Implicit Euler from rest: dx = F dt^2 / m; bending (E I / l^3) and stretching act after the nodes moved,
    # at (E A / l) dt^2 / m = (E / rho) (dt / l)^2 = 1e-5 of it: the tolerance.
    rel = 2 * (E / rho) * (dt / l) ** 2
    assert dx[-1] == pytest.approx(F * dt**2 / m[-1], rel=rel, abs=1e-9 * np.abs(F * dt**2 / m[-1]).max())
    assert dx[-2] == pytest.approx(-F * dt**2 / m[-2], rel=rel, abs=1e-9 * np.abs(F * dt**2 / m[-2]).max())
    assert np.abs(dx[:-3]).max() <= rel * np.abs(dx[-1]).max()


@pytest.mark.parametrize("result,velocity,message", [
    ({"force": np.zeros((21, 3))}, "start", "unknown key 'force'"),
    ({"dfdv": np.zeros((21, 3, 3))}, "start", "needs velocity=\"step\""),
    ({"dfdx": np.zeros((63, 62))}, "start", r"must have shape \(63, 63\)"),
    ({"dfdx": (np.array([0, 63]), np.array([0, 1]), np.ones(2))}, "start", r"rows entry 1 = 63 is outside \[0, 63\)"),
    ({"dfdx": (np.array([0.0]), np.array([0]), np.ones(1))}, "start", "must be an integer array"),
    ({"couples": np.zeros((21, 3))}, "start", r"'couples' must have shape \(20, 3\)"),
    ({"forces": np.full((21, 3), np.nan)}, "start", "non-finite"),
])
def test_bad_results_fail_the_step_with_the_reason(tmp_path, result, velocity, message):
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.01), output=tmp_path / "out",
                            forces=[rodsim.PythonForce("bad", lambda t, x, v: result, rod="beam", velocity=velocity)])
    with pytest.raises(rodsim.SimulationError, match=message):
        sim.step()


def test_a_jacobian_of_a_force_held_through_the_step_is_refused(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.01), output=tmp_path / "out",
                            forces=[rodsim.PythonForce("held", lambda t, x, v: {"dfdx": np.zeros((21, 3, 3))},
                                                       rod="beam", every_evaluation=False)])
    with pytest.raises(rodsim.SimulationError, match="has no Jacobian"):
        sim.step()


def test_bad_arguments_are_refused_at_construction():
    with pytest.raises(ValueError, match="velocity"):
        rodsim.PythonForce("f", lambda t, x, v: None, rod="beam", velocity="end")
    with pytest.raises(ValueError, match="every_evaluation"):
        rodsim.PythonForce("f", lambda t, x, v: None, rod="beam", velocity="step", every_evaluation=False)
    with pytest.raises(TypeError, match="callable"):
        rodsim.PythonForce("f", 3.0, rod="beam")
