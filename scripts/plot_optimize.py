#!/usr/bin/env python3
"""rodsim optimize's convergence curve: DIR/convergence.png from DIR/generations.csv (docs/inverse.md).

usage: plot_optimize.py DIR [OUT.png] [--scale S] [--label TEXT] [--reference VALUE]
Best and mean objective of each CMA-ES generation and the best so far, as Gazzola et al.
(2018), Figs. 10e and 11e; --scale multiplies the objective (e.g. 1/L to plot L/T_m), --reference draws a
horizontal line (e.g. the paper's optimum).
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--label", default=None)
    ap.add_argument("--reference", type=float, default=None)
    ap.add_argument("--reference-label", default="reference")
    a = ap.parse_args()
    out = a.out or os.path.join(a.dir, "convergence.png")
    with open(os.path.join(a.dir, "generations.csv")) as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(a.dir, "optimize.json")) as f:
        meta = json.load(f)
    g = [int(r["generation"]) for r in rows]

    def col(name):
        return [float(r[name]) * a.scale for r in rows]

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.plot(g, col("mean"), "s-", ms=3, lw=1, color="0.6", label="generation mean")
    ax.plot(g, col("best"), "o-", ms=4, lw=1, label="generation best")
    ax.plot(g, col("best_so_far"), "-", lw=2, color="C3", label="best so far")
    if a.reference is not None:
        ax.axhline(a.reference, ls="--", color="k", lw=1, label=a.reference_label)
    ax.set_xlabel("generation")
    obj = meta["objective"]
    ax.set_ylabel(a.label or f"{obj['statistic']} of {obj['probe']}")
    ax.set_title(f"CMA-ES ({meta['goal']}): population {meta['population']}, {meta['simulations']} runs", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
