#!/usr/bin/python3
"""Quick look at a run: the final centerlines (3D) and the energies and probes over time.

Usage: scripts/plot_run.py OUTPUT_DIR   ->   OUTPUT_DIR/overview.png
"""
import csv
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/flagellum_spin")
rows = list(csv.DictReader(open(out / "timeseries.csv")))
final = list(csv.DictReader(open(out / "final.csv")))
fixed = ["step", "t", "iterations", "wall_ms", "contacts", "min_gap", "kinetic_energy", "elastic_energy"]
extra = [k for k in rows[0].keys() if k not in fixed]

fig = plt.figure(figsize=(13, 4.5))
ax = fig.add_subplot(1, 3, 1, projection="3d")
for rod in sorted({r["rod"] for r in final}):
    pts = [(float(r["x"]), float(r["y"]), float(r["z"])) for r in final if r["rod"] == rod]
    ax.plot(*zip(*pts), "-", lw=2, label=rod)
ax.set_title("final centerlines (m)")
ax.legend(fontsize=8)
t = [float(r["t"]) for r in rows]
num = lambda v: float(v) if v not in ("", None) else float("nan")
ax2 = fig.add_subplot(1, 3, 2)
ax2.plot(t, [num(r["kinetic_energy"]) for r in rows], label="kinetic")
ax2.plot(t, [num(r["elastic_energy"]) for r in rows], label="elastic")
ax2.set_xlabel("t (s)"); ax2.set_ylabel("J"); ax2.set_title("energies"); ax2.legend(fontsize=8)
ax3 = fig.add_subplot(1, 3, 3)
for k in extra:
    ax3.plot(t, [num(r[k]) for r in rows], label=k)
ax3.set_xlabel("t (s)"); ax3.set_title("probes"); ax3.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out / "overview.png", dpi=100)
print(out / "overview.png")
