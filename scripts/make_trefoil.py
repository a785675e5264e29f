#!/usr/bin/python3
"""Loose open trefoil knot for scenes/knots/trefoil.toml (Tong et al. (2023), SI C.1).

The knot is built the way the loose-knot theory of Audoly, Clauvelin & Neukirch (PRL 2007) sees it:
a loop closed by a two-strand braid. Both strands of the braid run along +x around the braid axis
(y = z = 0) as a double helix of radius a making three half turns (sigma_1^3): closing that braid by
the loop on one side and, far away, by the two tails (which leave on opposite sides, along
y = -a) gives the (2,3) torus knot, i.e. a trefoil. The twist rate follows a smoothstep, so the
strands leave the braid parallel to x and the curve is C1 everywhere:

  left tail (y = -a) -> strand 1 (x = -b .. b) -> loop (stadium of radius R0 in z = 0, above) ->
  strand 2 (x = -b .. b) -> right tail (y = -a)

Strands are 2a apart inside the braid and the loop stays clear of the tails, so nothing touches
at t = 0 as long as a > h (rod radius); the script checks the smallest distance between points
farther apart along the rod than 4a.

Writes x,y,z rows (header line) sampled every `ds` along the curve; rodsim resamples them to
`nodes` nodes (uniform in arc length) when the scene gives `nodes`.

Usage: scripts/make_trefoil.py [--out scenes/knots/trefoil_points.csv] [--R0 0.06] [--b 0.025]
                               [--a 0.0032] [--tail 0.1] [--ds 2e-4] [--h 0.0016]
"""
import argparse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def smoothstep(u):
    return u * u * (3 - 2 * u)


def trefoil(R0, b, a, tail, ds):
    """Dense polyline of the open trefoil (m)."""
    pieces = []
    # left tail along y = -a, ending at x = -b
    n = max(2, int(round(tail / ds)))
    x = np.linspace(-b - tail, -b, n, endpoint=False)
    pieces.append(np.c_[x, np.full(n, -a), np.zeros(n)])

    def strand(psi0):
        n = max(2, int(round(2 * b * 4 / ds)))  # dense: the helix is longer than 2b
        u = np.linspace(0, 1, n, endpoint=False)
        psi = psi0 + 3 * np.pi * smoothstep(u)
        return np.c_[-b + 2 * b * u, a * np.cos(psi), a * np.sin(psi)]

    # strand 1: from (-b, -a, 0) (psi = pi) to (b, +a, 0) (psi = 4 pi)
    pieces.append(strand(np.pi))
    # loop: right half circle centred (b, a + R0), top straight, left half circle centred (-b, a + R0)
    n = max(8, int(round(np.pi * R0 / ds)))
    phi = np.linspace(0, np.pi, n, endpoint=False)
    pieces.append(np.c_[b + R0 * np.sin(phi), a + R0 * (1 - np.cos(phi)), np.zeros(n)])
    n = max(2, int(round(2 * b / ds)))
    x = np.linspace(b, -b, n, endpoint=False)
    pieces.append(np.c_[x, np.full(n, a + 2 * R0), np.zeros(n)])
    n = max(8, int(round(np.pi * R0 / ds)))
    phi = np.linspace(np.pi, 2 * np.pi, n, endpoint=False)
    pieces.append(np.c_[-b + R0 * np.sin(phi), a + R0 * (1 - np.cos(phi)), np.zeros(n)])
    # strand 2: from (-b, +a, 0) (psi = 0) to (b, -a, 0) (psi = 3 pi)
    pieces.append(strand(0.0))
    # right tail along y = -a from x = b
    n = max(2, int(round(tail / ds)))
    x = np.linspace(b, b + tail, n + 1)
    pieces.append(np.c_[x, np.full(n + 1, -a), np.zeros(n + 1)])
    return np.vstack(pieces)


def resample(p, n):
    s = np.r_[0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]
    t = np.linspace(0, s[-1], n)
    return np.c_[[np.interp(t, s, p[:, k]) for k in range(3)]].T


def min_clearance(p, exclude):
    """Smallest distance between points more than `exclude` apart along the curve."""
    s = np.r_[0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]
    q = resample(p, min(len(p), 4000))
    sq = np.linspace(0, s[-1], len(q))
    d = np.linalg.norm(q[:, None, :] - q[None, :, :], axis=2)
    far = np.abs(sq[:, None] - sq[None, :]) > exclude
    return d[far].min()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "scenes/knots/trefoil_points.csv"))
    ap.add_argument("--R0", type=float, default=0.035, help="loop (stadium) radius, m")
    ap.add_argument("--b", type=float, default=0.03, help="half length of the braid, m")
    ap.add_argument("--a", type=float, default=0.0032, help="radius of the braid double helix, m")
    ap.add_argument("--tail", type=float, default=0.1, help="length of each straight tail, m")
    ap.add_argument("--ds", type=float, default=4e-4, help="sampling step, m")
    ap.add_argument("--h", type=float, default=0.0016, help="rod radius (clearance check), m")
    args = ap.parse_args()

    p = trefoil(args.R0, args.b, args.a, args.tail, args.ds)
    seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
    L = seg.sum()
    shortening = L - np.linalg.norm(p[-1] - p[0])
    clearance = min_clearance(p, 4 * args.a)
    R_e = shortening / (2 * np.pi)
    print(f"{len(p)} points, length {L:.4f} m, end-to-end shortening {shortening:.4f} m "
          f"(R = e/2pi = {R_e * 1e3:.1f} mm, eps = {np.sqrt(args.h / R_e):.3f}), "
          f"smallest clearance {clearance * 1e3:.2f} mm (contact at {2 * args.h * 1e3:.2f} mm)")
    if clearance <= 2 * args.h:
        raise SystemExit("the curve touches itself: increase --a or --b")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        f.write("x,y,z\n")
        for x, y, z in p:
            f.write(f"{x:.9g},{y:.9g},{z:.9g}\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
