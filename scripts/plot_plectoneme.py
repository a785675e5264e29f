#!/usr/bin/python3
"""Plectonemes and solenoids (Gazzola et al. (2018), Sec. V.1, Fig. 9): link, twist and writhe of a run
of scenes/cosserat/plectoneme.toml or solenoid.toml from its VTK frames, its elongation and its
deepest interpenetration, and a figure.

    scripts/plot_plectoneme.py OUT_DIR [OUT_DIR ...] [--png FILE] [--json FILE]

For every frame (vtk/*.vtp: node positions and the material director d1 of each element):
  - twist Tw = (1/2 pi) sum_i angle(P_i d1_i, d1_{i+1}) about t_{i+1}, P_i the minimal rotation
    (parallel transport) taking the edge tangent t_i to t_{i+1}, d1 projected normal to its edge;
  - writhe Wr by the Gauss double integral, evaluated exactly for a polygon (the solid-angle form
    of Klenin and Langowski 2000: each pair of segments contributes Omega_ij / 4 pi), on the
    centre line extended at both ends along the clamp axis (z) by straight segments 1000 L long
    (the closure of an open rod whose ends stay on one axis; its writhe error is O(L / 1000 L));
  - Lk = Tw + Wr, against the turns R imposed by the twisted end;
  - the total elongation L/L^ (arc length over rest length, the paper's measure) and the end-to-end
    distance along z.
Interpenetration: summary.json's min_gap (the smallest gap over all steps, negative: overlap).
"""
import argparse
import glob
import json
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rodsim_output  # noqa: E402  the one reader of a run's files (python/rodsim/output.py)
import rodsim_vtp  # noqa: E402


def read_frame(path):
    frame = rodsim_vtp.read_vtp(path)  # ascii or binary frames
    return np.array(frame["Points"], dtype=float), np.array(frame["director_m1"], dtype=float)


def frames(out_dir):
    pvd = glob.glob(os.path.join(out_dir, "vtk", "*.pvd"))[0]
    items = re.findall(r'timestep="([^"]+)"[^>]*file="([^"]+)"', open(pvd).read())
    return [(float(t), os.path.join(os.path.dirname(pvd), f)) for t, f in items]


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def twist(x, d1):
    t = unit(np.diff(x, axis=0))                # edge tangents
    m = d1[: len(t)]
    m = unit(m - np.sum(m * t, axis=1)[:, None] * t)  # d1 normal to its edge
    total = 0.0
    for i in range(len(t) - 1):
        a, b = t[i], t[i + 1]
        c = np.cross(a, b)
        s, co = np.linalg.norm(c), np.dot(a, b)
        u = m[i]
        if s > 1e-14:  # Rodrigues: rotate u about c/|c| by the angle between a and b
            k = c / s
            u = u * co + np.cross(k, u) * s + k * np.dot(k, u) * (1 - co)
        total += math.atan2(np.dot(np.cross(u, m[i + 1]), b), np.dot(u, m[i + 1]))
    return total / (2 * math.pi)


def writhe(p):
    """Writhe of the open polygon p (n x 3): sum over pairs of segments of Omega_ij / 4 pi (both
    orders), Omega the signed solid angle of Klenin and Langowski (2000), Eq. 13-16."""
    a, b = p[:-1], p[1:]
    n = len(a)
    i, j = np.triu_indices(n, k=2)  # adjacent segments contribute nothing
    p1, p2, p3, p4 = a[i], b[i], a[j], b[j]
    r13, r14, r23, r24 = p3 - p1, p4 - p1, p3 - p2, p4 - p2

    def nrm(u, v):
        c = np.cross(u, v)
        ln = np.linalg.norm(c, axis=1)
        ok = ln > 1e-300
        c[ok] /= ln[ok][:, None]
        c[~ok] = 0
        return c

    n1, n2, n3, n4 = nrm(r13, r14), nrm(r14, r24), nrm(r24, r23), nrm(r23, r13)
    cl = lambda v: np.arcsin(np.clip(v, -1, 1))
    om = cl(np.sum(n1 * n2, 1)) + cl(np.sum(n2 * n3, 1)) + cl(np.sum(n3 * n4, 1)) + cl(np.sum(n4 * n1, 1))
    sgn = np.sign(np.sum(np.cross(p4 - p3, p2 - p1) * r13, axis=1))
    return float(np.sum(om * sgn) / (2 * math.pi))


def extended(x, length):
    lo = x[0] - np.array([0, 0, length])
    hi = x[-1] + np.array([0, 0, length])
    return np.vstack([lo, x, hi])


def analyse(out_dir, rest_length=1.0):
    rows = []
    for t, f in frames(out_dir):
        x, d1 = read_frame(f)
        arc = float(np.sum(np.linalg.norm(np.diff(x, axis=0), axis=1)))
        tw = twist(x, d1)
        wr = writhe(extended(x, 1000 * rest_length))
        rows.append(dict(t=t, Tw=tw, Wr=wr, Lk=tw + wr, stretch=arc / rest_length,
                         end_z=float(x[-1, 2] - x[0, 2])))
    summary = rodsim_output.read_summary(out_dir)
    return rows, summary, x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--png")
    ap.add_argument("--json")
    ap.add_argument("--radius", type=float, default=0.025)
    args = ap.parse_args()
    results = {}
    for d in args.dirs:
        rows, summary, x = analyse(d)
        last = rows[-1]
        overlap = -summary["min_gap"] if summary.get("min_gap") is not None else 0.0
        results[d] = dict(final=last, min_gap=summary.get("min_gap"), overlap_over_radius=overlap / args.radius,
                          status=summary["status"], steps=summary["steps"], wall_time_s=summary["wall_time_s"],
                          rows=rows, shape=x.tolist())
        print("%s: status %s, t = %.1f s: Tw = %.3f, Wr = %.3f, Lk = %.3f, L/L^ = %.4f, end-to-end z = %.4f m, "
              "deepest overlap %.3g m = %.2f %% of r, wall %.1f s"
              % (d, summary["status"], last["t"], last["Tw"], last["Wr"], last["Lk"], last["stretch"], last["end_z"],
                 overlap, 100 * overlap / args.radius, summary["wall_time_s"]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({k: {kk: vv for kk, vv in v.items() if kk != "shape"} for k, v in results.items()}, fh, indent=1)
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        n = len(results)
        fig, ax = plt.subplots(n, 3, figsize=(13, 4.2 * n), squeeze=False)
        for k, (d, res) in enumerate(results.items()):
            x = np.array(res["shape"])
            rows = res["rows"]
            t = [r["t"] for r in rows]
            name = os.path.basename(os.path.normpath(d))
            a = ax[k][0]
            a.plot(x[:, 0], x[:, 2], "-", lw=2.5, color="tab:blue", label="x-z")
            a.plot(x[:, 1] + 0.25, x[:, 2], "-", lw=2.5, color="tab:orange", label="y-z (shifted 0.25 m)")
            a.set_aspect("equal")
            a.set_xlabel("x, y (m)")
            a.set_ylabel("z (m)")
            a.set_title("%s: final centre line (two views)" % name)
            a.legend(fontsize=8)
            a = ax[k][1]
            a.plot(t, [r["Tw"] for r in rows], label="Tw")
            a.plot(t, [r["Wr"] for r in rows], label="Wr")
            a.plot(t, [r["Lk"] for r in rows], "k--", label="Lk = Tw + Wr")
            a.set_xlabel("t (s)")
            a.set_ylabel("turns")
            a.set_title("link, twist, writhe")
            a.legend(fontsize=8)
            a = ax[k][2]
            a.plot(t, [r["stretch"] for r in rows], label="L/L^ (arc length)")
            a.plot(t, [r["end_z"] for r in rows], label="end-to-end z (m)")
            a.set_xlabel("t (s)")
            a.set_title("elongation; deepest overlap %.2f %% of r" % (100 * res["overlap_over_radius"]))
            a.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.png, dpi=90)
        print("wrote", args.png)


if __name__ == "__main__":
    sys.exit(main())
