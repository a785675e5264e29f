#!/usr/bin/python3
"""Writes a woven mat of DER rods: M rods along x over and under M rods along y, M^2 crossings.

The case of issue 43 / issue 44 item 3 (M = 100: 200 rods of 101 nodes, 10,000 crossings, imc,
implicit-euler, max_iterations = 10). Rods are M + 1 nodes long, one node at every crossing, 4 mm
apart (radius 1 mm); at crossing (i, j) rod x_i sits at z = +a (-1)^(i+j) and rod y_j at -a (-1)^(i+j),
with a chosen so that the skew edges around each crossing are the contact distance plus delta/2
apart. The first two and last two nodes of every rod are clamped; gravity; imc with mu = 0.3. Every
crossing couples an x rod with a y rod, so the Newton Jacobian is that of a 2D mesh (78,000 free
unknowns, 2.9 M entries at M = 100), unlike the flat mat of benchmarks/bench_contact.cpp, whose
clamped lower layer leaves the upper rods independent.

  scripts/make_woven_mat.py --rods 100 --duration 0.003 > mat.toml
  build/bin/rodsim run mat.toml --output out/mat
"""
import argparse
import math

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--rods", type=int, default=100, help="M, rods per direction (M^2 crossings)")
p.add_argument("--duration", default="0.003", help="simulated time, s (dt = 1 ms)")
p.add_argument("--max-iterations", type=int, default=10, help="implicit-euler max_iterations")
p.add_argument("--friction", type=float, default=0.3)
args = p.parse_args()

M, N = args.rods, args.rods + 1
h, delta, ds = 1e-3, 1e-5, 4e-3
c = h + 0.5 * delta  # half the centre-line distance wanted between the skew edges at a crossing
a = c / math.sqrt(1 - 8 * c * c / (ds * ds))
out = [f'[simulation]\nname = "woven_mat_{M}"\nduration = {args.duration}\ndt = 1e-3\n\n'
       f'[solver]\ntype = "implicit-euler"\ntolerance = 1e-9\nmax_iterations = {args.max_iterations}\n\n']
for layer in (0, 1):
    for i in range(M):
        name = ("y" if layer else "x") + str(i)
        pts = []
        for k in range(N):
            s = ds * (k - 0.5)
            z = a * (-1) ** (i + k)
            pts.append((s, ds * (i + 0.5), z) if layer == 0 else (ds * (i + 0.5), s, -z))
        out.append(f'[[rod]]\nname = "{name}"\nmodel = "der"\nnodes = {N}\nradius = {h}\ndensity = 1000.0\n'
                   f'youngs_modulus = 1e7\npoisson_ratio = 0.5\n')
        out.append('geometry = { shape = "polyline", points = [%s] }\n\n' % ", ".join("[%r, %r, %r]" % q for q in pts))
        out.append(f'[[constraint]]\nname = "fix_{name}"\ntype = "clamp"\nrod = "{name}"\nnodes = [0, 1, {N - 2}, {N - 1}]\n\n')
out.append(f'[[force]]\ntype = "gravity"\ng = [0, 0, -9.81]\n\n[[contact]]\ntype = "imc"\nfriction = {args.friction}\n'
           f'delta = {delta}\n')
print("".join(out), end="")
