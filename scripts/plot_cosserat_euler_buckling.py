#!/usr/bin/python3
"""Euler buckling (Gazzola et al. (2018), Appendix E.1, Eq. E1 with b = 2, clamped-free): runs
scenes/validation/cosserat_euler_buckling.toml for F/F_c = 0.96 ... 1.10 at n = 20, 40, 80 (the same
perturbation, a lateral velocity of 1e-4 m/s, in every run) and draws docs/validation/cosserat_euler_buckling.png:
the largest lateral tip excursion in 6 s against F/F_c, with Eq. E1 and the threshold of the discrete
column (clamped at the centre of element 0: length L - h/2). Prints the table of docs/validation/cosserat.md.
Usage: scripts/plot_cosserat_euler_buckling.py [build dir]"""
import os, subprocess, sys, tempfile
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
EI = 1e6 * np.pi * 0.05**4 / 4
Fc = np.pi**2 * EI / 4  # Eq. E1, b = 2, L = 1 m


def max_tip(F, n):
    out = tempfile.mkdtemp(prefix=f"cosserat-euler-{n}-")
    dt = 4e-4 * 20 / n
    subprocess.run([os.path.join(build, "bin", "rodsim"), "run", os.path.join(root, "scenes/validation/cosserat_euler_buckling.toml"),
                    "--quiet", "--output", out, "--set", f"force.tip.force=[0, 0, {-F}]", "--set", f"rod.column.nodes={n + 1}",
                    "--set", f"simulation.dt={dt}"], check=True)
    last_column = list(rodsim_output.read_timeseries(out).values())[-1]
    return max(abs(v) for v in last_column)


ratios = np.round(np.arange(0.96, 1.1001, 0.005), 4)
print("| n | discrete threshold F_d/F_c = (1 - 1/2n)^-2 | last F/F_c with max tip x < 1e-2 m | first F/F_c with max tip x > 1e-2 m |")
print("|---|---|---|---|")
fig, ax = plt.subplots(figsize=(6.5, 4))
for n, colour in [(20, "r"), (40, "b"), (80, "g")]:
    tips = np.array([max_tip(r * Fc, n) for r in ratios])
    fd = 1 / (1 - 0.5 / n) ** 2
    first = ratios[np.argmax(tips > 1e-2)]
    last = ratios[ratios < first].max()
    print(f"| {n} | {fd:.4f} | {last:.3f} | {first:.3f} |")
    ax.semilogy(ratios, tips, colour + "o-", ms=3, label=f"n = {n}")
    ax.axvline(fd, color=colour, ls=":", lw=1)
ax.axvline(1.0, color="k", ls="--", label="Eq. E1")
ax.set_xlabel("F / F_c"); ax.set_ylabel("max |tip x| in 6 s (m)"); ax.legend(fontsize=8)
ax.set_title("Euler buckling, clamped-free (dotted: discrete thresholds)", fontsize=9)
fig.tight_layout()
fig.savefig(os.path.join(root, "docs/validation/cosserat_euler_buckling.png"), dpi=120)
