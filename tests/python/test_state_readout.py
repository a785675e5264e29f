"""What a callback reads (issue 41, item 3): strains, curvatures, internal forces and couples, external
forces, angular velocities and constraint reactions with torques, on both rod models, against closed
forms and against the CLI's probes on the same scene.

Closed forms and where their tolerances come from:
- a rod hanging from a clamp, solved by the static solver: the lumped masses (rho A times the rest
  Voronoi length) make the force in edge e exactly the weight of the nodes after it, rho A g (L - (e + 1/2) l),
  the weight below the edge's middle, for any discretization; the clamp carries rho A g L. The only
  error is the solve's (|R_free| < 1e-8 N against forces of ~3 N): rtol 1e-7. Against the weight below
  the clamped section (the middle of edge 0) the top free edge differs by rho A g l, one edge's weight.
- a rod placed on a circular arc of radius R with a straight rest shape: DER's discrete curvature is
  |kappa b| / l = 2 tan(alpha/2) / (2 R sin(alpha/2)) = 1 / (R cos(alpha/2)) (Eqs. 2-3 of Tong et al.,
  alpha the turning angle between edges, l the chord), the Cosserat rod's log(Q_{i-1} Q_i^T) / l =
  alpha / (2 R sin(alpha/2)) (Gazzola et al., Eq. 20); both are 1/R to O(alpha^2): within alpha^2 / 8.
- a rod twisted by theta between two clamped edges: each model spreads the twist over the junctions
  between the clamped sections (the middles of the end edges), L_c = L - l apart, so the reaction torque is
  G J theta / L_c, J = pi r^4 / 2, exactly in the discrete model; only the solve's error remains.
"""
import math
from pathlib import Path

import numpy as np
import pytest

import rodsim

from conftest import run_cli

RHO, R_ROD, E, G = 1000.0, 0.01, 1e7, 4e6
A = math.pi * R_ROD**2
J = math.pi * R_ROD**4 / 2
GRAV = 9.81
ROOT_SCENES = Path(__file__).resolve().parents[2] / "scenes"

HANGING = """
[simulation]
duration = 1.0
dt = 0.5

[solver]
type = "static"
ramp_time = 0.5

[[rod]]
name = "rod"
model = "{model}"
nodes = {nodes}
radius = 0.01
density = 1000.0
youngs_modulus = 1e7
shear_modulus = 4e6
geometry = {{ shape = "straight", start = [0, 0, 0], end = [0, 0, -1] }}

[[force]]
name = "g"
type = "gravity"
g = [0, 0, -9.81]

[[constraint]]
name = "top"
type = "clamp"
rod = "rod"
nodes = [0, 1]

[[probe]]
name = "t1"
type = "internal-force"
rod = "rod"
node = 1
component = "z"

[[probe]]
name = "t_last"
type = "internal-force"
rod = "rod"
node = -1
component = "z"

[[probe]]
name = "s1"
type = "stretch"
rod = "rod"
node = 1

[[probe]]
name = "rz"
type = "constraint-force"
constraint = "top"
component = "z"

[[probe]]
name = "mtop"
type = "constraint-torque"
constraint = "top"
component = "norm"

[[probe]]
name = "g5"
type = "external-force"
rod = "rod"
node = 5
component = "z"
"""

TWISTED = """
[simulation]
duration = 1.0
dt = 0.1

[solver]
type = "static"

[[rod]]
name = "rod"
model = "{model}"
nodes = {nodes}
radius = 0.01
density = 1000.0
youngs_modulus = 1e7
shear_modulus = 4e6
geometry = {{ shape = "straight", start = [0, 0, 0], end = [1, 0, 0] }}

[[constraint]]
name = "fixed"
type = "clamp"
rod = "rod"
nodes = [0, 1]

[[constraint]]
name = "motor"
type = "rotate"
rod = "rod"
nodes = [-2, -1]
axis = [1, 0, 0]
angular_velocity = {omega}

[[probe]]
name = "m_fixed"
type = "constraint-torque"
constraint = "fixed"
component = "x"

[[probe]]
name = "m_motor"
type = "constraint-torque"
constraint = "motor"
component = "x"

[[probe]]
name = "twist_mid"
type = "curvature"
rod = "rod"
node = {mid}
component = "z"

[[probe]]
name = "couple_mid"
type = "internal-couple"
rod = "rod"
node = {mid}
component = "z"
"""


def last_row(out_dir):
    """The last row of a run's timeseries.csv, {column: float}."""
    return {name: column[-1] for name, column in rodsim.read_output(out_dir).timeseries.items()}


@pytest.mark.parametrize("model", ["der", "cosserat"])
def test_hanging_rod_tension_is_the_weight_below(tmp_path, model, rodsim_exe):
    nodes, L = 21, 1.0
    l = L / (nodes - 1)
    scene = tmp_path / "hanging.toml"
    scene.write_text(HANGING.format(model=model, nodes=nodes))
    sim = rodsim.Simulation(str(scene), output=str(tmp_path / "py"))
    sim.run()
    rod = sim.rod("rod")
    f = rod.internal_forces
    assert f.shape == (nodes - 1, 3)
    # Edge e >= 1 (edge 0 lies inside the clamp): tension rho A g (L - (e + 1/2) l), pointing up (-t,
    # the rod below pulls the rod above down: the force on the upper part is along -z).
    e = np.arange(1, nodes - 1)
    weight_below = RHO * A * GRAV * (L - (e + 0.5) * l)
    np.testing.assert_allclose(-f[1:, 2], weight_below, rtol=1e-7)
    np.testing.assert_allclose(f[1:, :2], 0.0, atol=1e-9)
    # The top free edge against the weight below the clamped section: one edge's weight apart.
    assert -f[1, 2] == pytest.approx(RHO * A * GRAV * (L - 0.5 * l) - RHO * A * GRAV * l, rel=1e-7)
    # Stretch = T / EA (DER Eq. 1 with Eq. 5's EA eps; the Cosserat energy law's n3 = EA sigma3).
    np.testing.assert_allclose(rod.stretch[1:], weight_below / (E * A), rtol=1e-6)
    np.testing.assert_allclose(rod.shear[1:, 2], rod.stretch[1:], rtol=1e-9)
    # The clamp carries the whole weight, and no torque on a vertical rod.
    reaction = sim.reaction("top")
    assert reaction["force"][2] == pytest.approx(RHO * A * GRAV * L, rel=1e-7)
    assert np.linalg.norm(reaction["torque"]) < 1e-9
    assert set(sim.reactions) == {"top"}
    # Gravity on each node: m_i g (the scene's only force).
    np.testing.assert_allclose(rod.external_forces[:, 2], -rod.mass * GRAV, rtol=1e-12)
    # The CLI's probes on the same scene read the same numbers.
    code, out = run_cli(rodsim_exe, "run", scene, "--output", tmp_path / "cli", "--quiet")
    assert code == 0, out
    row = last_row(tmp_path / "cli")
    # (timeseries.csv holds 10 significant digits: rel 1e-9)
    assert row["t1"] == pytest.approx(f[1, 2], rel=1e-9)
    assert row["t_last"] == pytest.approx(f[-1, 2], rel=1e-9)
    assert row["s1"] == pytest.approx(rod.stretch[1], rel=1e-9)
    assert row["rz"] == pytest.approx(reaction["force"][2], rel=1e-9)
    assert row["mtop"] == pytest.approx(np.linalg.norm(reaction["torque"]), abs=1e-12)
    assert row["g5"] == pytest.approx(rod.external_forces[5, 2], rel=1e-9)


def arc_scene(model, R, nodes, span):
    angles = np.linspace(0.0, span, nodes)
    pts = ", ".join(f"[{R * math.cos(a):.17g}, {R * math.sin(a):.17g}, 0]" for a in angles)
    return f"""
[simulation]
duration = 1e-4
dt = 1e-4

[solver]
type = "implicit-euler"

[[rod]]
name = "rod"
model = "{model}"
radius = 0.01
density = 1000.0
youngs_modulus = 1e7
shear_modulus = 4e6
rest_shape = "straight"
geometry = {{ shape = "polyline", points = [{pts}] }}
"""


@pytest.mark.parametrize("model", ["der", "cosserat"])
def test_arc_curvature_is_one_over_radius(tmp_path, model):
    R, nodes, span = 0.5, 41, math.pi / 2
    alpha = span / (nodes - 1)  # turning angle between consecutive chords
    sim = rodsim.Simulation(arc_scene(model, R, nodes, span), output=str(tmp_path / "out"))
    rod = sim.rod("rod")  # the initial state, before any step
    kappa = rod.curvatures
    np.testing.assert_array_equal(rod.curvature_nodes, np.arange(1, nodes - 1))
    bend = np.linalg.norm(kappa[:, :2], axis=1)
    exact = 1 / (R * math.cos(alpha / 2)) if model == "der" else alpha / (2 * R * math.sin(alpha / 2))
    np.testing.assert_allclose(bend, exact, rtol=1e-9)
    np.testing.assert_allclose(bend, 1 / R, rtol=alpha**2 / 6)  # alpha^2 / 8 and the next order
    np.testing.assert_allclose(kappa[:, 2], 0.0, atol=1e-9)  # no twist
    # The same vector on both models: in the world frame (averaging the two edges' directors), the
    # curvature of a counterclockwise arc in the xy plane is +z / R, the binormal.
    d = rod.directors  # (n-1, 3, 3): rows d1, d2, d3
    world = np.einsum("kc,kcx->kx", kappa, 0.5 * (d[:-1] + d[1:]))
    np.testing.assert_allclose(world[:, 2], bend, rtol=1e-6)
    np.testing.assert_allclose(world[:, :2], 0.0, atol=1e-6 / R)
    # Straight rest shape, no stretch: the couple is EI kappa (DER: Eq. 5's derivative; Cosserat: B kappa).
    EI = E * math.pi * R_ROD**4 / 4
    np.testing.assert_allclose(np.linalg.norm(rod.internal_couples[:, :2], axis=1), EI * bend, rtol=1e-9)
    sim.close()


@pytest.mark.parametrize("model", ["der", "cosserat"])
def test_twisted_rod_reaction_torque_is_GJ_theta_over_L(tmp_path, model, rodsim_exe):
    nodes, L, theta = 21, 1.0, 0.5
    l = L / (nodes - 1)
    Lc = L - l  # between the clamped sections, the middles of the two end edges
    scene = tmp_path / "twisted.toml"
    scene.write_text(TWISTED.format(model=model, nodes=nodes, omega=theta / 1.0, mid=nodes // 2))
    sim = rodsim.Simulation(str(scene), output=str(tmp_path / "py"))
    sim.run()
    torque = G * J * theta / Lc
    fixed, motor = sim.reaction("fixed"), sim.reaction("motor")
    assert fixed["torque"][0] == pytest.approx(-torque, rel=1e-7)
    assert motor["torque"][0] == pytest.approx(torque, rel=1e-7)
    assert np.linalg.norm(fixed["torque"][1:]) < 1e-9 * torque
    # DER: no axial force. Cosserat: the energy law's twist-stretch coupling, the bending energy's 1/E^3
    # (Eq. 10) makes the twisted rod push on its clamps with (3/2) B3 kappa3^2 (plugins/rod_cosserat/README.md).
    axial = 0.0 if model == "der" else 1.5 * G * J * (theta / Lc) ** 2
    assert abs(fixed["force"][0]) == pytest.approx(axial, rel=1e-6, abs=1e-9)
    assert np.linalg.norm(fixed["force"][1:]) < 1e-9
    rod = sim.rod("rod")
    np.testing.assert_allclose(rod.curvatures[:, 2], theta / Lc, rtol=1e-7)
    np.testing.assert_allclose(rod.internal_couples[:, 2], torque, rtol=1e-7)
    np.testing.assert_allclose(rod.curvatures[:, :2], 0.0, atol=1e-9)
    code, out = run_cli(rodsim_exe, "run", scene, "--output", tmp_path / "cli", "--quiet")
    assert code == 0, out
    row = last_row(tmp_path / "cli")
    assert row["m_fixed"] == pytest.approx(fixed["torque"][0], rel=1e-9)
    assert row["m_motor"] == pytest.approx(motor["torque"][0], rel=1e-9)
    k = list(rod.curvature_nodes).index(nodes // 2)
    assert row["twist_mid"] == pytest.approx(rod.curvatures[k, 2], rel=1e-9)
    assert row["couple_mid"] == pytest.approx(rod.internal_couples[k, 2], rel=1e-9)


SPINNING = """
[simulation]
duration = 0.01
dt = 1e-3

[solver]
type = "{solver}"

[[rod]]
name = "rod"
model = "{model}"
nodes = 11
radius = 0.01
density = 1000.0
youngs_modulus = 1e7
shear_modulus = 4e6
geometry = {{ shape = "straight", start = [0, 0, 0], end = [1, 0, 0] }}

[[constraint]]
name = "spin"
type = "rotate"
rod = "rod"
nodes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
axis = {axis}
angular_velocity = 3.0
"""


@pytest.mark.parametrize("model,solver", [("der", "implicit-euler"), ("cosserat", "position-verlet")])
def test_angular_velocity_of_a_rod_spinning_about_its_axis(tmp_path, model, solver):
    sim = rodsim.Simulation(SPINNING.format(model=model, solver=solver, axis="[1, 0, 0]"), output=str(tmp_path / "o"))
    sim.step(5)
    w = sim.rod("rod").angular_velocities
    assert w.shape == (10, 3)
    # Spinning about d3 at 3 rad/s: (0, 0, 3) in the material frame.
    np.testing.assert_allclose(w[:, 2], 3.0, rtol=1e-9)
    np.testing.assert_allclose(w[:, :2], 0.0, atol=1e-9)
    sim.close()


def test_angular_velocity_of_a_der_rod_turning_about_a_normal(tmp_path):
    # A rigid rotation about z at 3 rad/s of a rod along x: the frame turns about z, which has no d3
    # component; its size is 3 rad/s up to the chord of a step (the prescribed positions move on
    # circles, their velocity the chord / dt: O(omega dt) relative).
    sim = rodsim.Simulation(SPINNING.format(model="der", solver="implicit-euler", axis="[0, 0, 1]"),
                            output=str(tmp_path / "o"))
    sim.step(5)
    rod = sim.rod("rod")
    w = rod.angular_velocities
    np.testing.assert_allclose(np.linalg.norm(w, axis=1), 3.0, rtol=3.0 * 1e-3)
    np.testing.assert_allclose(w[:, 2], 0.0, atol=1e-9)
    world = np.einsum("kc,kcx->kx", w, rod.directors)
    np.testing.assert_allclose(world[:, 2], 3.0, rtol=3.0 * 1e-3)
    sim.close()


def test_readout_errors(tmp_path, rodsim_exe):
    scene = tmp_path / "hanging.toml"
    scene.write_text(HANGING.format(model="der", nodes=11))
    sim = rodsim.Simulation(str(scene), output=str(tmp_path / "py"))
    with pytest.raises(KeyError, match="no constraint named 'tip'"):
        sim.reaction("tip")
    sim.close()
    bad = HANGING.format(model="der", nodes=11) + '\n[[probe]]\nname = "k0"\ntype = "curvature"\nrod = "rod"\nnode = 0\n'
    scene.write_text(bad)
    code, out = run_cli(rodsim_exe, "check", scene)
    assert code == 2
    assert "node 0 of rod 'rod' has no curvature" in out
    bad = HANGING.format(model="der", nodes=11) + '\n[[probe]]\nname = "f"\ntype = "internal-force"\nrod = "rod"\nnode = 10\n'
    scene.write_text(bad)
    code, out = run_cli(rodsim_exe, "check", scene)
    assert code == 2
    assert "element 10 is out of range for rod 'rod' with 10 elements" in out


FLOOR = """
[simulation]
duration = 1.0
dt = 0.5

[solver]
type = "static"
ramp_time = 0.5

[[rod]]
name = "rod"
model = "der"
nodes = 11
radius = 0.002
density = 1000.0
youngs_modulus = 1e7
poisson_ratio = 0.5
geometry = { shape = "straight", start = [-0.05, 0, 0.002], end = [0.05, 0, 0.002] }

[[force]]
name = "gravity"
type = "gravity"
g = [0, 0, -9.81]

[[obstacle]]
name = "floor"
shape = "plane"
origin = [0, 0, 0]
normal = [0, 0, 1]

[[contact]]
name = "contact"
type = "imc"
allow_initial_overlap = true
"""


def test_contact_forces_of_a_rod_resting_on_a_floor(tmp_path, rodsim_exe):
    # Static equilibrium: the floor carries the whole weight (the solve's residual, 1e-8 N, against
    # 0.012 N: rtol 1e-5); the bending of the soft contact shares it unevenly between the nodes.
    sim = rodsim.Simulation(FLOOR, output=str(tmp_path / "o"))
    sim.run()
    rod = sim.rod("rod")
    c = sim.contacts
    assert len(c) == 11
    assert set(c["rod_a"]) == {"rod"} and set(c["rod_b"]) == {"floor"}
    assert c["obstacle"].all() and (c["edge_b"] == -1).all()
    np.testing.assert_array_equal(np.sort(c["edge_a"]), np.arange(11))
    np.testing.assert_allclose(c["normal"], np.tile([0.0, 0.0, 1.0], (11, 1)), atol=1e-12)
    np.testing.assert_allclose(c["friction_force"], 0.0)
    assert (np.abs(c["gap"]) < 1e-5).all()  # inside imc's band (delta = 1e-5 m)
    weight = rod.mass.sum() * GRAV
    f = rod.contact_forces
    assert f[:, 2].sum() == pytest.approx(weight, rel=1e-5)
    np.testing.assert_allclose(np.sort(f[:, 2]), np.sort(c["normal_force"][:, 2]), rtol=1e-12)
    # The contact-force probe reads the same.
    scene = tmp_path / "floor.toml"
    scene.write_text(FLOOR + '\n[[probe]]\nname = "fc5"\ntype = "contact-force"\nrod = "rod"\nnode = 5\ncomponent = "z"\n')
    code, out = run_cli(rodsim_exe, "run", scene, "--output", tmp_path / "cli", "--quiet")
    assert code == 0, out
    assert last_row(tmp_path / "cli")["fc5"] == pytest.approx(f[5, 2], rel=1e-9)


def test_contact_pairs_between_rods_and_reading_changes_nothing(tmp_path):
    scene = str(ROOT_SCENES / "contact" / "dropped_rod.toml")
    # Reading every quantity after every step leaves the run bit for bit as it is without reading.
    quiet = rodsim.Simulation(scene, output=str(tmp_path / "a"))
    quiet.run()
    read = rodsim.Simulation(scene, output=str(tmp_path / "b"))
    seen = []

    def look(s):
        seen.append(len(s.contacts))
        for name in s.rod_names:
            r = s.rod(name)
            r.contact_forces, r.external_forces, r.internal_forces, r.curvatures, r.angular_velocities
        s.reactions

    read.every(1, look)
    read.run()
    for name in read.rod_names:
        np.testing.assert_array_equal(read.rod(name).positions, quiet.rod(name).positions)
    assert max(seen) >= 1
    # The rod-rod pair: what beam takes is the pair's force on rod_a; the dropped rod takes the
    # opposite (and the floor's).
    c = read.contacts
    pairs = c[~c["obstacle"]]
    assert len(pairs) >= 1
    assert set(pairs["rod_a"]) == {"beam"} and set(pairs["rod_b"]) == {"drop"}
    on_beam = pairs["normal_force"].sum(0) + pairs["friction_force"].sum(0)
    np.testing.assert_allclose(read.rod("beam").contact_forces.sum(0), on_beam, rtol=1e-12, atol=1e-15)
    floor = c[c["obstacle"]]
    on_drop = -on_beam + floor["normal_force"].sum(0) + floor["friction_force"].sum(0)
    np.testing.assert_allclose(read.rod("drop").contact_forces.sum(0), on_drop, rtol=1e-12, atol=1e-15)
    # The normal points from b to a and the normal force along it pushes a away from b.
    for p in pairs:
        assert np.linalg.norm(p["normal"]) == pytest.approx(1.0)
        assert p["normal_force"] @ p["normal"] > 0


def test_spring_dashpot_contacts(tmp_path):
    # The floor (static): its contacts carry the weight (solve residual 1e-8 N against 0.012 N).
    scene = FLOOR.replace('type = "imc"', 'type = "spring-dashpot"\nstiffness = 1e3')
    sim = rodsim.Simulation(scene, output=str(tmp_path / "floor"))
    sim.run()
    rod = sim.rod("rod")
    c = sim.contacts
    assert len(c) == 11 and c["obstacle"].all() and (c["gap"] < 0).all()
    assert rod.contact_forces[:, 2].sum() == pytest.approx(rod.mass.sum() * GRAV, rel=1e-6)
    # Two crossing rods: each takes the opposite of the other's pair force; the normal runs from b to a.
    sim = rodsim.Simulation(str(ROOT_SCENES / "contact" / "spring_dashpot_crossing.toml"), output=str(tmp_path / "x"))
    sim.run(until=sim.duration / 2)
    c = sim.contacts
    pairs = c[~c["obstacle"]]
    assert len(pairs) >= 1
    for p in pairs:
        assert p["normal_force"] @ p["normal"] > 0
    total = {name: sim.rod(name).contact_forces.sum(0) for name in sim.rod_names}
    on_a = pairs["normal_force"].sum(0) + pairs["friction_force"].sum(0)
    a = set(pairs["rod_a"])
    assert len(a) == 1
    np.testing.assert_allclose(total[a.pop()], on_a, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sum(total.values()), 0.0, atol=1e-12 * np.linalg.norm(on_a))
    sim.close()


def test_ipc_contacts(tmp_path):
    # ipc refuses a starting overlap: the rod starts 10 um above the floor (inside the barrier's band).
    scene = FLOOR.replace('type = "imc"\nallow_initial_overlap = true', 'type = "ipc"').replace("0.002] }", "0.00201] }")
    scene = scene.replace("start = [-0.05, 0, 0.002]", "start = [-0.05, 0, 0.00201]")
    sim = rodsim.Simulation(scene, output=str(tmp_path / "floor"))
    sim.run()
    rod = sim.rod("rod")
    c = sim.contacts
    assert len(c) == 11 and c["obstacle"].all()
    # The static solve's tolerance on the barrier's stiff residual: 1e-5 of the weight.
    assert rod.contact_forces[:, 2].sum() == pytest.approx(rod.mass.sum() * GRAV, rel=1e-5)
    sim = rodsim.Simulation(str(ROOT_SCENES / "contact" / "rod_on_crossing_rod_ipc.toml"), output=str(tmp_path / "x"))
    sim.step(3)
    c = sim.contacts
    pairs = c[~c["obstacle"]]
    assert len(pairs) >= 1
    on_a = pairs["normal_force"].sum(0) + pairs["friction_force"].sum(0)
    assert all(p["normal_force"] @ p["normal"] > 0 for p in pairs)
    totals = [sim.rod(name).contact_forces.sum(0) for name in sim.rod_names]
    np.testing.assert_allclose(sum(totals), 0.0, atol=1e-12 * np.linalg.norm(on_a))
    np.testing.assert_allclose(sim.rod(pairs["rod_a"][0]).contact_forces.sum(0), on_a, rtol=1e-12, atol=1e-18)
    sim.close()


CANTILEVER = """
[simulation]
duration = 1.0
dt = 0.25

[solver]
type = "static"
ramp_time = 1.0

[[rod]]
name = "beam"
model = "{model}"
nodes = 21
radius = 0.02
density = 1000.0
youngs_modulus = 1e7
shear_modulus = 4e6
geometry = {{ shape = "straight", start = [0, 0, 0], end = [1, 0, 0] }}

[[force]]
name = "tip"
type = "point-load"
rod = "beam"
node = -1
force = [0, 0.3, -0.5]

[[constraint]]
name = "root"
type = "clamp"
rod = "beam"
nodes = [0, 1]
"""


@pytest.mark.parametrize("model", ["der", "cosserat"])
def test_cantilever_reaction_balances_the_tip_load_and_its_moment(tmp_path, model):
    # Static balance of the whole rod about the clamp's point: the elastic forces of both models are
    # invariant under rigid rotations, so their forces and torques (the frame DOFs' reactions included,
    # through frameTorque) sum to zero, and the reaction is exactly -F and -(x_tip - point) x F. The
    # solve's residual (1e-8 N against a 0.58 N load) sets the tolerance.
    sim = rodsim.Simulation(CANTILEVER.format(model=model), output=str(tmp_path / "o"))
    sim.run()
    F = np.array([0.0, 0.3, -0.5])
    r = sim.reaction("root")
    tip = sim.rod("beam").positions[-1]
    np.testing.assert_allclose(r["force"], -F, rtol=0, atol=1e-7)
    np.testing.assert_allclose(r["torque"], -np.cross(tip - r["point"], F), rtol=0, atol=1e-7)
    assert abs(tip[2]) > 1e-3  # the beam did bend: the moment arm moved


def test_alart_curnier_contacts_are_the_last_impulses_over_dt(tmp_path):
    # A rod resting across a clamped rod (rod_across_rod.toml run to rest, 0.6 s): the contact carries
    # the top rod's weight (the impulse of the last step over dt; at rest to the Newton tolerance and
    # the residual motion, 1e-5 of the weight), the normal runs from b (top) to a (base), and the two
    # rods' contact forces cancel.
    sim = rodsim.Simulation(str(ROOT_SCENES / "contact_ac" / "rod_across_rod.toml"),
                            set={"simulation.duration": 0.6}, output=str(tmp_path / "o"))
    sim.run()
    c = sim.contacts
    assert len(c) >= 1 and not c["obstacle"].any()
    assert set(c["rod_a"]) == {"base"} and set(c["rod_b"]) == {"top"}
    assert (c["normal"][:, 2] < 0).all()
    top = sim.rod("top")
    weight = top.mass.sum() * GRAV
    assert top.contact_forces[:, 2].sum() == pytest.approx(weight, rel=1e-5)
    np.testing.assert_allclose(top.contact_forces.sum(0) + sim.rod("base").contact_forces.sum(0), 0.0, atol=1e-12)
