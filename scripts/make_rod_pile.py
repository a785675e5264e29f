#!/usr/bin/python3
"""Writes a pile of crossing DER rods in resting contact, sized by its number of contacts.

The pile is `--layers` layers of M straight rods each, alternately along x and along y, every rod
of a layer resting across every rod of the layer below: (layers - 1) M^2 crossings, each one
contact, so the contact count is known before the run (M = round(sqrt(contacts / (layers - 1)))
from --contacts, or --rods M per layer). The bottom layer is clamped at every node, the others lie
under gravity. With three layers or more the free rods of one layer touch every rod of the layers
above and below, so the whole pile is one mechanically coupled system (one contact group for
alart-curnier), not M independent rods on a fixed support.

Geometry (r = --radius, s = --spacing x r between parallel rods): rods are (M + 1) s long with
--edges-per-spacing edges per s; every crossing lies inside an edge of both rods (layers are
shifted by 0.15 s or 0.3 s off the node grid of the crossing layer), never at a node, so each
crossing is exactly one edge-edge contact. Layers two apart (same direction) are shifted by s/2
against each other, and parallel neighbours are (s - 2) r apart: with the default s = 5 both stay
outside every model's contact reach, and only the crossings are active.

Layer k's centreline is at height k times the contact distance of the chosen model, so that every
crossing starts inside the model's force band and the pile starts at rest (no fall):
  imc            2 r + delta/2   (the softplus band is (2r - delta, 2r + delta), Eq. 9 of Tong et al. (2023))
  ipc            2 r + d_hat/2   (the barrier acts for gaps in (0, d_hat))
  alart-curnier  2 r             (gap 0: every contact closed, as in bench_alart_curnier)

Usage:
  scripts/make_rod_pile.py --model imc --contacts 1000 > pile.toml
  scripts/make_rod_pile.py --model alart-curnier --rods 22 --layers 3 --friction 0.3 -o pile.toml
"""
import argparse
import math
import sys

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--model", choices=["imc", "ipc", "alart-curnier"], default="imc")
ap.add_argument("--contacts", type=int, help="target number of crossings (sets --rods)")
ap.add_argument("--rods", type=int, help="rods per layer M (default: from --contacts, else 10)")
ap.add_argument("--layers", type=int, default=3, help=">= 2; 3 or more couple the whole pile")
ap.add_argument("--edges-per-spacing", type=int, default=2, help="edges per spacing s along every rod")
ap.add_argument("--radius", type=float, default=0.002, help="m")
ap.add_argument("--spacing", type=float, default=5.0, help="distance between parallel rods / radius")
ap.add_argument("--youngs", type=float, default=1e7, help="Pa")
ap.add_argument("--density", type=float, default=1000.0, help="kg/m^3")
ap.add_argument("--friction", type=float, default=0.3)
ap.add_argument("--delta", type=float, default=1e-5, help="imc delta, m")
ap.add_argument("--d-hat", type=float, default=1e-5, help="ipc d_hat, m")
ap.add_argument("--dt", type=float, default=1e-3)
ap.add_argument("--duration", type=float, default=0.02)
ap.add_argument("--tolerance", type=float, default=1e-9, help="implicit Newton tolerance, N")
ap.add_argument("--name", default=None)
ap.add_argument("-o", "--output", default=None, help="file (default: stdout)")
a = ap.parse_args()

if a.layers < 2:
    sys.exit("make_rod_pile.py: --layers must be >= 2")
if a.rods is None:
    a.rods = max(1, round(math.sqrt(a.contacts / (a.layers - 1)))) if a.contacts else 10
M, r = a.rods, a.radius
s = a.spacing * r
length = (M + 1) * s
edges = a.edges_per_spacing * (M + 1)
nodes = edges + 1
gap0 = {"imc": 0.5 * a.delta, "ipc": 0.5 * a.d_hat, "alart-curnier": 0.0}[a.model]
dz = 2 * r + gap0
name = a.name or f"pile_{a.model}_{a.layers}x{M}"

out = []
w = out.append
w(f"# {a.layers} layers x {M} DER rods ({nodes} nodes, {length:.4g} m), crossing layer on layer: "
  f"{(a.layers - 1) * M * M} contacts ({a.model}).")
w(f"# Written by: scripts/make_rod_pile.py {' '.join(sys.argv[1:])}")
w("")
w("[simulation]")
w(f'name = "{name}"')
w(f"duration = {a.duration!r}")
w(f"dt = {a.dt!r}")
w("")
w("[solver]")
w('type = "implicit-euler"')
w(f"tolerance = {a.tolerance!r}")
w("")


def offset(k):
    # Off the node grid of the crossing layers (nodes every s / edges_per_spacing from -length/2):
    # 0.15 s or 0.3 s inside an edge; layers two apart shifted by s/2 more.
    return (0.15 if k % 2 == 0 else 0.3) * s + (0.5 * s if (k // 2) % 2 else 0.0)


for k in range(a.layers):
    z = r + k * dz
    for i in range(M):
        c = (i - 0.5 * (M - 1)) * s + offset(k)
        rod = f"l{k}r{i}"
        if k % 2 == 0:
            start, end = (-0.5 * length, c, z), (0.5 * length, c, z)
        else:
            start, end = (c, -0.5 * length, z), (c, 0.5 * length, z)
        w("[[rod]]")
        w(f'name = "{rod}"')
        w('model = "der"')
        w(f"nodes = {nodes}")
        w(f"radius = {r!r}")
        w(f"density = {a.density!r}")
        w(f"youngs_modulus = {a.youngs!r}")
        w("poisson_ratio = 0.5")
        w('geometry = { shape = "straight", start = [%.17g, %.17g, %.17g], end = [%.17g, %.17g, %.17g] }'
          % (start + end))
        w("")
        if k == 0:
            w("[[constraint]]")
            w(f'name = "clamp_{rod}"')
            w('type = "clamp"')
            w(f'rod = "{rod}"')
            w("nodes = [" + ", ".join(str(n) for n in range(nodes)) + "]")
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
