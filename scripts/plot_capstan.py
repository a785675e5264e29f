#!/usr/bin/python3
"""Capstan (Euler-Eytelwein) check of the imc friction along a wrapped strand.

Runs scenes/knots/capstan_<angle>.toml (made by scripts/make_capstan.py) for every wrap angle,
friction coefficient and rope edge length asked for, averages the pull T_high (constraint-force
probe `pull`) over the steady sliding window, and compares T_high / T_low with exp(mu theta).
Prints a markdown table and, with --png, plots the ratios against exp(mu theta).

Usage: scripts/plot_capstan.py [--rodsim build/bin/rodsim] [--angles half_pi,pi,two_pi]
                               [--mu 0,0.1,0.3] [--edges 2e-3,1e-3] [--window 1.2,2.0]
                               [--set KEY=VALUE ...] [--load-scale 2] [--suffix _thin]
                               [--png docs/validation/capstan.png]
       scripts/plot_capstan.py --knot OUT_MU OUT_MU0   # capstan reading of two trefoil runs
"""
import argparse
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

ROOT = Path(__file__).resolve().parent.parent
ANGLES = {"half_pi": (math.pi / 2, "pi/2"), "pi": (math.pi, "pi"), "two_pi": (2 * math.pi, "2 pi")}
T_LOW = 0.1  # N, the load of scripts/make_capstan.py


def scene_path(tag, suffix, ext):
    return ROOT / "scenes" / "knots" / f"capstan_{tag}{suffix}{ext}"


def radii(tag, suffix):
    """(rope radius h, post radius Rc) from the scene."""
    text = scene_path(tag, suffix, ".toml").read_text()
    h, rc = (float(x) for x in re.findall(r"^radius = ([-+0-9.eE]+)$", text, re.M)[:2])
    return h, rc


def rope_length(tag, suffix):
    pts = []
    with open(scene_path(tag, suffix, "_points.csv")) as f:
        next(f)
        for line in f:
            pts.append([float(x) for x in line.split(",")])
    return sum(math.dist(a, b) for a, b in zip(pts, pts[1:]))


def load_vector(tag, suffix):
    """The dead load of the scene (the `force = [...]` line of [[force]] `load`)."""
    text = scene_path(tag, suffix, ".toml").read_text()
    line = re.search(r"^force = \[(.*)\]$", text, re.M).group(1)
    return [float(x) for x in line.split(",")]


def run(rodsim, tag, suffix, mu, edge, extra, window, load_scale):
    nodes = int(round(rope_length(tag, suffix) / edge)) + 1
    if load_scale != 1:
        f = [load_scale * x for x in load_vector(tag, suffix)]
        extra = extra + ["force.load.force=[" + ", ".join(f"{x:.9g}" for x in f) + "]"]
    with tempfile.TemporaryDirectory() as out:
        cmd = [rodsim, "run", str(scene_path(tag, suffix, ".toml")), "--quiet", "--output", out,
               "--set", f"contact.friction={mu}", "--set", f"rod.rope.nodes={nodes}"]
        for s in extra:
            cmd += ["--set", s]
        subprocess.run(cmd, check=True)
        ts = rodsim_output.read_timeseries(out)
    pulls = [float(p) for t, p in zip(ts["t"], ts["pull"]) if window[0] <= t <= window[1]]
    mean = sum(pulls) / len(pulls)
    spread = (max(pulls) - min(pulls)) / mean
    return nodes, mean, spread


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rodsim", default=str(ROOT / "build" / "bin" / "rodsim"))
    ap.add_argument("--angles", default="half_pi,pi,two_pi")
    ap.add_argument("--mu", default="0,0.1,0.3")
    ap.add_argument("--edges", default="2e-3,1e-3")
    ap.add_argument("--window", default="1.2,2.0")
    ap.add_argument("--set", action="append", default=[], dest="extra")
    ap.add_argument("--load-scale", type=float, default=1.0,
                    help="multiply the dead load T_low (bending check: EI/(T_low R^2) scales as 1/this)")
    ap.add_argument("--suffix", default="", help="scene family: capstan_<angle><suffix>.toml (make_capstan.py --suffix)")
    ap.add_argument("--png", default="")
    ap.add_argument("--knot", nargs=2, metavar=("OUT_MU", "OUT_MU0"),
                    help="instead: the capstan reading of two trefoil runs (scenes/knots/trefoil.toml with its "
                         "friction and with contact.friction=0), see knot_reading()")
    a = ap.parse_args()
    if a.knot:
        knot_reading(*a.knot)
        return
    window = [float(x) for x in a.window.split(",")]
    results = []
    print("| theta | mu | edge (mm) | nodes | T_high/T_low | exp(mu theta) | rel. error | ln ratio / (mu theta) | "
          "error vs e^x - b (e^x - 1) | ripple |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for tag in a.angles.split(","):
        theta, label = ANGLES[tag]
        b = bending(radii(tag, a.suffix), a.load_scale)
        for edge in [float(x) for x in a.edges.split(",")]:
            for mu in [float(x) for x in a.mu.split(",")]:
                nodes, mean, spread = run(a.rodsim, tag, a.suffix, mu, edge, a.extra, window, a.load_scale)
                ratio, ref = mean / (T_LOW * a.load_scale), math.exp(mu * theta)
                slope = f"{math.log(ratio) / (mu * theta):.4f}" if mu > 0 else "-"
                bent = ref - b * (ref - 1)
                print(f"| {label} | {mu:g} | {edge * 1e3:g} | {nodes} | {ratio:.4f} | {ref:.4f} | "
                      f"{100 * (ratio / ref - 1):+.2f} % | {slope} | {100 * (ratio / bent - 1):+.2f} % | "
                      f"{100 * spread:.2f} % |", flush=True)
                results.append((tag, theta, mu, edge, ratio))
    if a.png:
        plot(results, a.load_scale, radii(a.angles.split(",")[0], a.suffix), a.png)


def knot_reading(out_mu, out_mu0, eps_range=(0.2, 0.36)):
    """Capstan reading of the trefoil (docs/validation/contact-imc.md). If the contact pressure in
    the knot were the tension pressing a strand onto the other (p = T kappa, as on the capstan),
    the pull would be F(mu) = F(0) exp(mu Theta), Theta the angle the pulled strand turns through
    while in contact between an end and the loop. Prints, per 0.5 s frame, ln(F(mu)/F(0)) / mu
    against Theta (F(0) at the same eps from the frictionless run, a quadratic fit of
    ln F against ln eps; the contact nodes and eps as in scripts/plot_knot.py)."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "scripts"))
    import plot_knot as pk
    sc = pk.scene_values(pk.SCENE.read_text())
    h, mu = sc["h"], sc["mu"]
    rows, _ = pk.analyse(out_mu, sc, 0.2)
    rows0, _ = pk.analyse(out_mu0, dict(sc, mu=0.0), 0.2)
    e0 = np.array([r["eps"] for r in rows0])
    f0 = np.array([r["Fbar"] for r in rows0])
    sel = (e0 > 0.9 * eps_range[0]) & (e0 < 1.1 * eps_range[1])
    fit = np.polyfit(np.log(e0[sel]), np.log(f0[sel]), 2)
    turning = {}
    for tf, p in pk.frames(out_mu):
        idx, _ = pk.contact_nodes(p, h, 0.2 * h)
        t = np.diff(p, axis=0)
        t /= np.linalg.norm(t, axis=1)[:, None]
        ang = np.arccos(np.clip((t[:-1] * t[1:]).sum(1), -1, 1))  # at nodes 1 .. n-2
        edge = np.zeros(len(p) - 1, bool)
        edge[idx] = True
        node = edge[:-1] | edge[1:]  # a node turns "in contact" when an edge next to it touches
        mid = len(ang) // 2          # the loop apex: one passage is an end -> loop
        turning[round(tf, 3)] = (ang[:mid][node[:mid]].sum(), ang[mid:][node[mid:]].sum())
    print("| t (s) | eps | F h²/EI, mu | F h²/EI, mu = 0 (fit) | (F(mu) - F(0)) / (mu sigma eps³) | "
          "ln(F(mu)/F(0)) / mu | Theta, end 1 -> loop | Theta, loop -> end 2 |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        key = round(r["t"], 3)
        if not eps_range[0] <= r["eps"] <= eps_range[1] or abs(2 * r["t"] - round(2 * r["t"])) > 1e-6:
            continue
        F0 = float(np.exp(np.polyval(fit, np.log(r["eps"]))))
        share = (r["Fbar"] - F0) / (mu * pk.SIGMA * r["eps"] ** 3)
        th = turning[key]
        print(f"| {r['t']:.2f} | {r['eps']:.3f} | {r['Fbar']:.4g} | {F0:.4g} | {share:.2f} | "
              f"{math.log(r['Fbar'] / F0) / mu:.2f} | {th[0]:.2f} | {th[1]:.2f} |")


def bending(radii, load_scale, E=1e7):
    """b = EI / (2 T_low R^2), R = Rc + h: the wrap carries the tangential force T - EI/(2 R^2)
    (along an elastica T + EI kappa^2/2 changes only by the distributed tangential load), so
    T_high/T_low = e^x - b (e^x - 1), x = mu theta, for a rope of bending stiffness EI."""
    h, rc = radii
    return E * math.pi * h**4 / 4 / (2 * T_LOW * load_scale * (rc + h) ** 2)


def plot(results, load_scale, radii, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # bending: the tangential force in the wrap is T - EI/(2 R^2), so
    # T_high/T_low = e^x - b (e^x - 1), b = EI/(2 T_low R^2) (docs/validation/contact-imc.md)
    b = bending(radii, load_scale)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    x = [i * 0.02 for i in range(0, 101)]
    ax[0].plot(x, [math.exp(v) for v in x], "k-", lw=1, label="exp(mu theta)")
    ax[1].axhline(0, color="k", lw=1)
    ax[1].plot(x, [-100 * b * (1 - math.exp(-v)) for v in x], "k--", lw=1,
               label=f"bending: -b (1 - exp(-mu theta)), b = EI/(2 T_low R^2) = {b:.4f}")
    marks = {"half_pi": "o", "pi": "s", "two_pi": "^"}
    for ci, edge in enumerate(sorted({r[3] for r in results}, reverse=True)):
        for tag in marks:
            pts = [(r[2] * r[1], r[4]) for r in results if r[0] == tag and r[3] == edge]
            if not pts:
                continue
            lab = f"theta = {ANGLES[tag][1]}, edge {edge * 1e3:g} mm"
            ax[0].plot(*zip(*pts), marks[tag], color=f"C{ci}", mfc="none", label=lab)
            ax[1].plot([p[0] for p in pts], [100 * (p[1] / math.exp(p[0]) - 1) for p in pts], marks[tag],
                       color=f"C{ci}", mfc="none", label=lab)
    ax[0].set_yscale("log")
    ax[0].set_ylabel("T_high / T_low")
    ax[0].set_title("capstan over a clamped DER rod (imc friction)")
    ax[1].set_ylabel("T_high / (T_low exp(mu theta)) - 1  (%)")
    ax[1].set_title("relative error")
    for a in ax:
        a.set_xlabel("mu theta")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print("wrote", png)

if __name__ == "__main__":
    main()
