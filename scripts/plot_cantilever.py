#!/usr/bin/python3
"""Cantilever validation: runs the scenes in scenes/validation/ through build/bin/rodsim at several
resolutions, compares the tip with Euler-Bernoulli (small load) and the elastica (large loads), and
writes docs/validation/cantilever.png and prints the table of docs/validation/cantilever.md.

Usage: scripts/plot_cantilever.py [path/to/rodsim]   (from the repository root)
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

ROOT = Path(__file__).resolve().parent.parent
RODSIM = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/bin/rodsim")
L, r, E = 1.0, 0.01, 1e7
EI = E * np.pi * r**4 / 4


def elastica(p, n=400):
    """Centerline (x, z)/L of theta'' = p cos(theta), theta(0)=0, theta'(1)=0 (shooting)."""
    def shoot(k0, dense=False):
        sol = solve_ivp(lambda s, y: [y[1], p * np.cos(y[0]), np.cos(y[0]), np.sin(y[0])], (0, 1),
                        [0, k0, 0, 0], rtol=1e-11, atol=1e-12, dense_output=dense)
        return sol
    k0 = brentq(lambda k: shoot(k).y[1, -1], -p, 0.0, xtol=1e-14)
    s = np.linspace(0, 1, n)
    y = shoot(k0, dense=True).sol(s)
    return y[2], y[3]


def run(scene, nodes, p, outdir):
    F = p * EI / L**2
    out = Path(outdir) / f"{scene}-{nodes}-{p}"
    subprocess.run([RODSIM, "run", f"scenes/validation/{scene}.toml", "--quiet", "--output", str(out),
                    "--set", f"rod.beam.nodes={nodes}", "--set", f"force.tip.force=[0, 0, {-F:.17g}]"],
                   check=True, cwd=ROOT)
    return np.vstack(list(rodsim_output.read_final(out).values()))[:, [0, 2]]


def main():
    resolutions = [11, 21, 41, 81]
    cases = [("cantilever_small_load", 0.01), ("cantilever_large_deflection", 1.0),
             ("cantilever_large_deflection", 3.0), ("cantilever_large_deflection", 5.0)]
    table = ["| F L²/EI | theory | n | tip z (rodsim) | tip z (theory, effective length) | relative tip error |",
             "|---|---|---|---|---|---|"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    shapes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for scene, p in cases:
            errors = []
            for n in resolutions:
                xz = run(scene, n, p, tmp)
                Le = L - 0.5 * L / (n - 1)          # the clamp on nodes 0, 1: support at mid-edge 0
                if p < 0.1:
                    theory = np.array([L, -p * Le**3 / (3 * L**2)])
                    name = "Euler-Bernoulli"
                else:
                    xe, ze = elastica(p * Le**2 / L**2)
                    theory = np.array([(L - Le) + Le * xe[-1], Le * ze[-1]])
                    name = "elastica"
                # Euler-Bernoulli predicts only the deflection; the elastica the whole tip position.
                err = (abs(xz[-1][1] - theory[1]) if p < 0.1 else np.hypot(*(xz[-1] - theory))) / abs(theory[1])
                errors.append(err)
                table.append(f"| {p:g} | {name} | {n} | {xz[-1][1]:.6f} | {theory[1]:.6f} | {err:.2e} |")
                if n == 41:
                    shapes[p] = xz
            ax1.loglog(resolutions, errors, "o-", label=f"F L²/EI = {p:g} ({name})")
    h = 1.0 / (np.array(resolutions) - 1)
    ax1.loglog(resolutions, 0.5 * h**2 / h[0]**2 * 1e-2, "k--", label="second order")
    ax1.axhline(0.01, color="grey", lw=0.8)
    ax1.set_xlabel("nodes n")
    ax1.set_ylabel("tip position error / tip deflection")
    ax1.set_title("DER cantilever: convergence to theory")
    ax1.legend(fontsize=8)
    for p, xz in shapes.items():
        if p < 0.1:
            continue
        Le = L - 0.5 * L / 40
        xe, ze = elastica(p * Le**2 / L**2)
        ax2.plot((L - Le) + Le * xe, Le * ze, "k-", lw=1)
        ax2.plot(xz[:, 0], xz[:, 1], "o", ms=3, label=f"rodsim n = 41, F L²/EI = {p:g}")
    ax2.plot([], [], "k-", label="elastica (shooting)")
    ax2.set_aspect("equal")
    ax2.set_xlabel("x (m)")
    ax2.set_ylabel("z (m)")
    ax2.set_title("Large deflection: shapes")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    out = ROOT / "docs/validation"
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "cantilever.png", dpi=110)
    # The table goes into docs/validation/cantilever.md by hand.
    print("\n".join(table))


if __name__ == "__main__":
    main()
