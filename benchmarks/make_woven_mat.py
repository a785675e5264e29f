#!/usr/bin/python3
"""Writes a woven mat of DER rods: M rods along x over and under M rods along y, M^2 crossings.

The scene of issue 44, item 3 (M = 100: 200 rods of 101 nodes, 10,000 crossings, each in contact),
for imc, ipc or alart-curnier, stepped by implicit Euler as the rod piles of scripts/make_rod_pile.py
are (benchmarks/README.md, "Contacts that scale").

Geometry (r = --radius, s = --spacing between parallel rods, a = --amplitude): rod x_i lies along x at
y = (i + 1/2) s, rod y_j along y at x = (j + 1/2) s, so crossing (i, j) is at ((j + 1/2) s, (i + 1/2) s).
Each centre line follows z = +/- a cos(pi (u - u_j) / s) through its crossings (u the coordinate along
the rod, u_j the crossings'): rod x_i is at z = +a (-1)^(i+j) over crossing j and rod y_j at the
opposite height, so every rod goes over and under the rods across it in turn (a plain weave) and
every crossing is one contact. Rods run from -s/2 to (M - 1/2) s, sampled by --nodes equally spaced
nodes (default M + 1: one node at every crossing, as in issue 44; then the rod is a zigzag and
each crossing is a contact between two kinks). The first two and last two nodes of every rod are
clamped (the mat is held at its rim), gravity pulls it down, no floor.

Contact distance: the amplitude a is chosen (bisection on the distance between the two rods'
polylines near a crossing) so that the crossings start inside every model's force band, as the
piles do:
  imc            2 r + delta/2   (softplus band (2r - delta, 2r + delta), Tong et al. (2023) Eq. 9)
  ipc            2 r + d_hat/2   (barrier for gaps in (0, d_hat))
  alart-curnier  2 r             (gap 0: every contact closed)
--amplitude a gives it instead (m); it is refused when the rods would start overlapping.

Usage:
  benchmarks/make_woven_mat.py --rods 100 --model imc -o mat.toml
  benchmarks/make_woven_mat.py --rods 30 --model alart-curnier --duration 0.005 > mat30.toml
  build/bin/rodsim run mat.toml --output out/mat
"""
import argparse
import math
import sys

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--rods", type=int, default=100, help="M, rods per direction (M^2 crossings)")
ap.add_argument("--nodes", type=int, default=None, help="nodes per rod (default M + 1: one per crossing)")
ap.add_argument("--spacing", type=float, default=4e-3, help="distance between parallel rods s, m")
ap.add_argument("--radius", type=float, default=1e-3, help="rod radius r, m")
ap.add_argument("--amplitude", type=float, default=None,
                help="weave amplitude a, m (default: crossings start at the model's contact distance)")
ap.add_argument("--model", choices=["imc", "ipc", "alart-curnier"], default="imc", help="contact model")
ap.add_argument("--friction", type=float, default=0.3, help="Coulomb coefficient mu")
ap.add_argument("--delta", type=float, default=1e-5, help="imc delta, m")
ap.add_argument("--d-hat", type=float, default=1e-5, help="ipc d_hat, m")
ap.add_argument("--youngs", type=float, default=1e7, help="Pa")
ap.add_argument("--density", type=float, default=1000.0, help="kg/m^3")
ap.add_argument("--dt", type=float, default=1e-3, help="s")
ap.add_argument("--duration", type=float, default=0.003, help="simulated time, s")
ap.add_argument("--tolerance", type=float, default=1e-9, help="implicit Newton tolerance, N")
ap.add_argument("--max-iterations", type=int, default=50, help="implicit-euler max_iterations")
ap.add_argument("--name", default=None)
ap.add_argument("-o", "--output", default=None, help="file (default: stdout)")
a = ap.parse_args()

M, r, s = a.rods, a.radius, a.spacing
nodes = a.nodes if a.nodes is not None else M + 1
if M < 2:
    sys.exit("make_woven_mat.py: --rods must be at least 2")
if nodes < 5:
    sys.exit("make_woven_mat.py: --nodes must be at least 5 (two clamped nodes at each end)")
if not (r > 0 and s > 2 * r):
    sys.exit(f"make_woven_mat.py: need --radius > 0 and --spacing > 2 --radius (got r = {r}, s = {s})")
length = M * s
u0 = -0.5 * s
us = [u0 + length * k / (nodes - 1) for k in range(nodes)]


def centreline_z(u, amp, parity):
    # +amp over the crossings where parity + j is even (j: crossing index along the rod).
    return amp * (-1) ** parity * math.cos(math.pi * (u - 0.5 * s) / s)


def seg_dist(p0, p1, q0, q1):
    # Distance between segments p0p1 and q0q1 (clamped closest points; no parallel edges here).
    d1 = [p1[i] - p0[i] for i in range(3)]
    d2 = [q1[i] - q0[i] for i in range(3)]
    w = [p0[i] - q0[i] for i in range(3)]
    dot = lambda x, y: sum(x[i] * y[i] for i in range(3))
    A, B, C, D, E = dot(d1, d1), dot(d1, d2), dot(d2, d2), dot(d1, w), dot(d2, w)
    den = A * C - B * B
    sc = min(1.0, max(0.0, (B * E - C * D) / den)) if den > 1e-300 else 0.0
    tc = (B * sc + E) / C
    if tc < 0 or tc > 1:
        tc = min(1.0, max(0.0, tc))
        sc = min(1.0, max(0.0, (B * tc - D) / A))
    return math.sqrt(sum((w[i] + sc * d1[i] - tc * d2[i]) ** 2 for i in range(3)))


def crossing_distance(amp):
    # Rod x_0 (at y = s/2) against rod y_1 (at x = 3s/2) around their crossing, where x_0 is below
    # (parity 1), over the edges within one spacing of the crossing.
    xc, yc = 1.5 * s, 0.5 * s
    px = [(u, yc, centreline_z(u, amp, 0)) for u in us]
    py = [(xc, u, -centreline_z(u, amp, 1)) for u in us]
    near = lambda pts, c, axis: [k for k in range(nodes - 1)
                                 if min(pts[k][axis], pts[k + 1][axis]) <= c + s and max(pts[k][axis], pts[k + 1][axis]) >= c - s]
    ex, ey = near(px, xc, 0), near(py, yc, 1)
    return min(seg_dist(px[i], px[i + 1], py[j], py[j + 1]) for i in ex for j in ey)


gap0 = {"imc": 0.5 * a.delta, "ipc": 0.5 * a.d_hat, "alart-curnier": 0.0}[a.model]
target = 2 * r + gap0
if a.amplitude is None:
    lo, hi = 0.0, 0.5 * s
    if crossing_distance(hi) < target:
        sys.exit("make_woven_mat.py: no amplitude below s/2 separates the crossings; raise --spacing")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if crossing_distance(mid) < target else (lo, mid)
    amp = hi
else:
    amp = a.amplitude
    if crossing_distance(amp) < 2 * r:
        sys.exit(f"make_woven_mat.py: --amplitude {amp} makes the rods overlap at the crossings "
                 f"(centre lines {crossing_distance(amp):.6g} m apart, contact distance {2 * r} m)")
name = a.name or f"woven_mat_{a.model}_{M}"

out = []
w = out.append
w(f"# Woven mat: {M} + {M} DER rods of {nodes} nodes, {M * M} crossings ({a.model}), weave amplitude {amp!r} m,")
w(f"# crossings {crossing_distance(amp):.9g} m apart (centre lines).")
w(f"# Written by: benchmarks/make_woven_mat.py {' '.join(sys.argv[1:])}")
w("")
w("[simulation]")
w(f'name = "{name}"')
w(f"duration = {a.duration!r}")
w(f"dt = {a.dt!r}")
w("")
w("[solver]")
w('type = "implicit-euler"')
w(f"tolerance = {a.tolerance!r}")
w(f"max_iterations = {a.max_iterations}")
w("")
for layer in (0, 1):
    for i in range(M):
        rod = ("y" if layer else "x") + str(i)
        c = (i + 0.5) * s
        if layer == 0:
            pts = [(u, c, centreline_z(u, amp, i)) for u in us]
        else:
            pts = [(c, u, -centreline_z(u, amp, i)) for u in us]
        w("[[rod]]")
        w(f'name = "{rod}"')
        w('model = "der"')
        w(f"nodes = {nodes}")
        w(f"radius = {r!r}")
        w(f"density = {a.density!r}")
        w(f"youngs_modulus = {a.youngs!r}")
        w("poisson_ratio = 0.5")
        w('geometry = { shape = "polyline", points = [%s] }' % ", ".join("[%r, %r, %r]" % p for p in pts))
        w("")
        w("[[constraint]]")
        w(f'name = "rim_{rod}"')
        w('type = "clamp"')
        w(f'rod = "{rod}"')
        w(f"nodes = [0, 1, {nodes - 2}, {nodes - 1}]")
        w("")
w("[[force]]")
w('type = "gravity"')
w("g = [0, 0, -9.81]")
w("")
w("[[contact]]")
w(f'type = "{a.model}"')
w(f"friction = {a.friction!r}")
if a.model == "imc":
    w(f"delta = {a.delta!r}")
elif a.model == "ipc":
    w(f"d_hat = {a.d_hat!r}")
w("")
w("[output]")
w("every = 0.0")

text = "\n".join(out) + "\n"
if a.output:
    with open(a.output, "w") as f:
        f.write(text)
else:
    sys.stdout.write(text)
