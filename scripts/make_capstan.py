#!/usr/bin/python3
"""Capstan (Euler-Eytelwein) scenes for the imc friction along a wrapped strand.

A soft DER rod ("rope", radius h) is wrapped through an angle theta over a thick, fully clamped DER
rod ("post", radius Rc, axis along y): the same rod-rod imc contact code as the trefoil knot. The
last node of the rope is pulled at constant speed along its straight tail (`translate`); the first
node carries a constant dead load T_low along its own tail (`point-load`, switched on smoothly).
Once the rope slides, T_high / T_low = exp(mu theta) (docs/validation/contact-imc.md, "Capstan").

Geometry, in the x-z plane (the post axis is y), centerline radius R = Rc + h (+ a few um):
  p(phi) = R (cos phi, 0, sin phi), phi from theta down to 0 (the rope wraps clockwise seen from +y),
the outgoing tail leaves at phi = 0 straight down (-z), the incoming tail arrives along the tangent
at phi = theta. For theta > pi the wrap is a helix of pitch `pitch` along y, so the rope does not
touch itself; its curvature is cos^2(a)/R with tan(a) = pitch / (2 pi R), which changes the
capstan exponent to mu theta cos(a) (cos(a) = 0.9999 here, negligible).

The arc is written a little outside contact, at R = (Rc + h) / cos(alpha/2) + delta, alpha the
angle of the coarsest edge (`--coarsest-edge`): rodsim resamples the points to `nodes` nodes,
whose chords must not start inside the post. Finer ropes start a few tens of um above it; the
load pulls them down during its ramp.

Writes scenes/knots/capstan_<tag><suffix>_points.csv (x,y,z, dense) and
scenes/knots/capstan_<tag><suffix>.toml for each wrap angle. The committed scenes come from

  scripts/make_capstan.py                      # capstan_{half_pi,pi,two_pi}: h = 0.5 mm, Rc = 20 mm
  scripts/make_capstan.py --angles pi --h 2e-4 --rc 2e-3 --coarsest-edge 2e-3 --edge 5e-4 --suffix _thin
                                               # capstan_pi_thin: a post 10 x thinner (coarse wrap study)

Usage: scripts/make_capstan.py [--angles half_pi,pi,two_pi] [--edge 2e-3] [--coarsest-edge 4e-3]
                               [--pitch 4e-3] [--h 5e-4] [--rc 0.02] [--suffix S] [--duration 2]
"""
import argparse
import math
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ANGLES = {"half_pi": math.pi / 2, "pi": math.pi, "two_pi": 2 * math.pi}

# Physical parameters (SI). Chosen so that (see the docs page):
# - bending is small: EI / (T_low R^2) = 0.012 for the rope (h = 0.5 mm, E = 10 MPa, T_low = 0.1 N,
#   R = 20.5 mm). The wrap carries the tangential force T - EI/(2 R^2) (along an elastica
#   T + EI kappa^2/2 changes only by the tangential load), so T_high/T_low = e^x - b (e^x - 1),
#   x = mu theta, b = EI/(2 T_low R^2) = 0.0058: at most 0.6 % below exp(mu theta);
# - the stretch T/EA stays below 10 % (it does not enter the capstan law: the balance
#   dT/dphi = mu T holds on the deformed, still circular, wrap);
# - the sliding speed v = 1 cm/s is 10 nu (nu = slip tolerance = 1 mm/s, as in the trefoil
#   scene): gamma = tanh(7.5 v/nu) = 1, full Coulomb friction;
# - inertia is negligible: rho A v^2 = 8e-8 N against T_low = 0.1 N.
H = 5e-4          # rope radius h (default; --h)
RC = 0.02         # post radius (default; --rc)
E_ROPE = 1e7
T_LOW = 0.1       # N
V_PULL = 0.01     # m/s
DELTA = 1e-5
TAIL_IN = 0.05    # incoming (loaded) tail: the rope slides v * (duration - start) into the wrap
TAIL_OUT = 0.03


def unit(v):
    return v / np.linalg.norm(v)


def centerline(theta, R, pitch, ds):
    """Dense polyline: incoming tail, wrap (phi = theta .. 0), outgoing tail. Returns points and
    the unit tangents at the two ends (direction of travel from node 0 to the last node)."""
    # On the wrap y drifts by -pitch per turn, centred on y = 0: y = y0 - c (theta - phi).
    helix = theta > math.pi
    c = pitch / (2 * math.pi) if helix else 0.0
    y0 = 0.5 * c * theta

    def pos(phi):
        return np.array([R * math.cos(phi), y0 - c * (theta - phi), R * math.sin(phi)])

    def tan(phi):  # d pos / d(-phi), normalized: the direction of travel from node 0 on
        return unit(np.array([R * math.sin(phi), -c, -R * math.cos(phi)]))

    pts = []
    a, b = pos(theta), pos(0.0)
    ta, tb = tan(theta), tan(0.0)
    n_in = int(round(TAIL_IN / ds))
    for k in range(n_in, 0, -1):
        pts.append(a - ta * (k * ds))
    arc = theta * math.hypot(R, c)
    n_arc = max(2, int(round(arc / ds)))
    for k in range(n_arc + 1):
        pts.append(pos(theta * (1 - k / n_arc)))
    n_out = int(round(TAIL_OUT / ds))
    for k in range(1, n_out + 1):
        pts.append(b + tb * (k * ds))
    return np.array(pts), ta, tb


def scene_text(name, tag, theta, R, pitch, nodes, ta, tb, duration, H, RC):
    lam = math.sqrt(E_ROPE * math.pi * H**4 / 4 / T_LOW)
    R0 = RC + H  # centerline radius of the wrap in contact
    fmt = lambda v: "[" + ", ".join(f"{x:.9g}" if abs(x) > 1e-12 else "0" for x in v) + "]"
    return f"""# Capstan (Euler-Eytelwein): a soft rope wrapped over a fixed post through theta = {theta:.6g} rad
# ({tag}), generated by scripts/make_capstan.py (edit the script, not this file).
# The rope (DER, h = {H} m, E = {E_ROPE:g} Pa, naturally straight) lies on a thick clamped DER rod
# (the post, radius {RC} m, axis y): rod-rod imc contact, as in the trefoil knot. Node 0 carries a
# dead load T_low = {T_LOW} N along its tail (ramped over 0.1 s); the last node is pulled along its
# tail at {V_PULL} m/s from t = 0.1 s. Once the rope slides over the post, the pull is
# T_high = T_low exp(mu theta) (probe `pull`); mu = 0 gives T_high = T_low.
# EI / (T_low R^2) = {E_ROPE * math.pi * H**4 / 4 / (T_LOW * R0 * R0):.3g} (R = Rc + h), bending length sqrt(EI/T_low) = {lam * 1e3:.2f} mm.
# Compared with exp(mu theta) by scripts/plot_capstan.py (docs/validation/contact-imc.md, "Capstan");
# capstan_pi and capstan_two_pi run in tests/validation/contact_imc/test_capstan.cpp.

[simulation]
duration = {duration}
dt = 1e-3
on_failure = "substep"
max_step_cuts = 6

[solver]
type = "implicit-euler"
tolerance = 1e-9
relative_tolerance = 1e-8
max_iterations = 50

[[rod]]
name = "rope"
model = "der"
nodes = {nodes}
radius = {H}
density = 1000.0
youngs_modulus = {E_ROPE:g}
poisson_ratio = 0.5
geometry = {{ shape = "points", file = "{name}_points.csv" }}
rest_shape = "straight"

[[rod]]
name = "post"
model = "der"
nodes = 6
radius = {RC}
density = 1000.0
youngs_modulus = 1e7
poisson_ratio = 0.5
# the wrap ({f"a helix, y within +-{pitch:.3g} m" if pitch else "y = 0"}) crosses the middle edge of the post, away from its nodes
geometry = {{ shape = "straight", start = [0, -0.03, 0], end = [0, 0.03, 0] }}

[[constraint]]
name = "post_fixed"
type = "clamp"
rod = "post"
nodes = [0, 1, 2, 3, 4, 5]

[[constraint]]
name = "pull"
type = "translate"
rod = "rope"
nodes = [-1]
velocity = {fmt(V_PULL * tb)}
start = 0.1

[[force]]
name = "load"
type = "point-load"
rod = "rope"
node = 0
force = {fmt(-T_LOW * ta)}
ramp = 0.1

[[contact]]
type = "imc"
friction = 0.3
delta = {DELTA:g}
slip_tolerance = 1e-3

[output]
every = 0.1

[[probe]]
name = "pull"
type = "constraint-force"
constraint = "pull"
component = "norm"

[[probe]]
name = "load_end_speed"
type = "node-velocity"
rod = "rope"
node = 0
component = "norm"
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--angles", default="half_pi,pi,two_pi")
    ap.add_argument("--edge", type=float, default=2e-3, help="default edge length of the scene (m)")
    ap.add_argument("--coarsest-edge", type=float, default=4e-3, help="coarsest edge the points allow (m)")
    ap.add_argument("--pitch", type=float, default=4e-3, help="helix pitch for theta > pi (m)")
    ap.add_argument("--ds", type=float, default=1e-4)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--h", type=float, default=H, help="rope radius (m)")
    ap.add_argument("--rc", type=float, default=RC, help="post radius (m)")
    ap.add_argument("--suffix", default="", help="appended to the scene names (capstan_<angle><suffix>)")
    a = ap.parse_args()
    R0 = a.rc + a.h
    for tag in a.angles.split(","):
        theta = ANGLES[tag]
        alpha = a.coarsest_edge / R0
        R = R0 / math.cos(alpha / 2) + DELTA
        pitch = a.pitch if theta > math.pi else 0.0
        pts, ta, tb = centerline(theta, R, pitch, a.ds)
        length = np.sum(np.linalg.norm(np.diff(pts, axis=0), axis=1))
        nodes = int(round(length / a.edge)) + 1
        out = ROOT / "scenes" / "knots"
        name = f"capstan_{tag}{a.suffix}"
        np.savetxt(out / f"{name}_points.csv", pts, delimiter=",", header="x,y,z", comments="", fmt="%.9g")
        (out / f"{name}.toml").write_text(scene_text(name, tag, theta, R, pitch, nodes, ta, tb, a.duration, a.h, a.rc))
        print(f"{name}: theta = {theta:.4f}, R = {R * 1e3:.4f} mm, length {length * 1e3:.1f} mm, {nodes} nodes "
              f"(edge {length / (nodes - 1) * 1e3:.3f} mm)")


if __name__ == "__main__":
    main()
