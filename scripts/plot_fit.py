#!/usr/bin/env python3
"""rodsim fit's picture: DIR/fit.png from DIR/fit.csv and DIR/iterations.csv (docs/inverse.md).

usage: plot_fit.py DIR [OUT.png]
Left: every fitted probe, measured (dots), initial guess (dashed) and fitted run (line).
Right: the least-squares cost per Ceres iteration (log scale).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    d = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(d, "fit.png")
    with open(os.path.join(d, "fit.csv")) as f:
        rows = list(csv.DictReader(f))
    shape = rows and "rod" in rows[0]
    probes = [] if shape else list(dict.fromkeys(r["probe"] for r in rows))
    with open(os.path.join(d, "iterations.csv")) as f:
        its = list(csv.DictReader(f))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    ax = axes[0]
    if shape:  # a final shape: the two coordinates that vary most, node by node
        def pts(col):
            by = {}
            for r in rows:
                if r[col]:
                    by.setdefault((r["rod"], int(r["node"])), {})[r["component"]] = float(r[col])
            return by
        meas = pts("measured")
        spread = {c: max(v[c] for v in meas.values()) - min(v[c] for v in meas.values()) for c in "xyz"}
        a, b = sorted("xyz", key=lambda c: -spread[c])[:2]
        a, b = sorted((a, b))
        for col, style in (("measured", "o"), ("initial", "--"), ("fitted", "-")):
            p = pts(col)
            for rod in dict.fromkeys(k[0] for k in p):
                keys = sorted(k for k in p if k[0] == rod)
                ax.plot([p[k][a] for k in keys], [p[k][b] for k in keys], style, ms=4, label=f"{rod} {col}")
        ax.set_xlabel(f"{a} (m)")
        ax.set_ylabel(f"{b} (m)")
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_title("final shape: fit against data")
    for p in probes:
        rs = [r for r in rows if r["probe"] == p]
        t = [float(r["t"]) for r in rs]
        ax.plot(t, [float(r["measured"]) for r in rs], "o", ms=4, label=f"{p} measured")
        if rs[0]["initial"]:
            ax.plot(t, [float(r["initial"]) for r in rs], "--", lw=1, label=f"{p} initial guess")
        if rs[0]["fitted"]:
            ax.plot(t, [float(r["fitted"]) for r in rs], "-", lw=1.5, label=f"{p} fitted")
    if not shape:
        ax.set_xlabel("t (s)")
        ax.set_ylabel("probe value")
        ax.set_title("fit against data")
    ax.legend(fontsize=8)
    ax = axes[1]
    cost = [max(float(r["cost"]), 1e-300) for r in its]
    ax.semilogy([int(r["iteration"]) for r in its], cost, "o-")
    ax.set_xlabel("Ceres iteration")
    ax.set_ylabel("cost = 1/2 sum r^2")
    names = [k for k in its[0].keys() if k not in (
        "iteration", "cost", "cost_change", "gradient_max_norm", "step_norm", "trust_region_radius",
        "step_successful", "simulations", "wall_s")] if its else []
    if its:
        ax.set_title("; ".join(f"{n} = {float(its[-1][n]):.6g}" for n in names), fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
