#!/usr/bin/python3
"""Trefoil tightening (Tong et al. (2023), SI C.1): how the simulated force approaches the loose-knot law.

Eq. C.1, F h^2/EI = eps^4/2 + mu sigma eps^3, is the leading order of an expansion in eps = sqrt(h/R)
(Audoly, Clauvelin & Neukirch 2007). This script puts several knot runs of different looseness on
one axis and plots, against eps,

  left:  F(mu = 0) h^2/EI divided by eps^4/2          (the frictionless law)
  right: F(mu)     h^2/EI divided by Eq. C.1          (the law with friction)

each averaged over bins of eps, with the 10 % band around 1. F and R = e/2pi are measured per VTK
frame exactly as scripts/plot_knot.py does (its `analyse`, force averaged over +- window/2).

Usage:
  scripts/plot_knot_ratio.py --run SCENE MU_DIR MU0_DIR WINDOW [--run ...] [--bins 0.075,0.08,...]
                             [--png docs/validation/knot_trefoil_ratio.png]
MU_DIR or MU0_DIR may be '-' when that run is missing. Frames of the first --settle seconds (10)
are left out: the knot is still settling from its initial shape. WINDOW (s): the force averaging window;
the looser the knot, the slower its loop sways, the longer the window must be.
"""
import argparse
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plot_knot import SIGMA, analyse, eps_log_axis, scene_values  # noqa: E402  (same measurement as the main plot)

ROOT = Path(__file__).resolve().parent.parent


def binned(rows, key_ratio, edges):
    """{bin index: (mean eps, mean ratio, its standard error, frames)} over the bins with >= 3 frames."""
    eps = np.array([r["eps"] for r in rows])
    ratio = np.array([key_ratio(r) for r in rows])
    out = {}
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        m = (eps >= lo) & (eps < hi)
        if m.sum() >= 3:
            out[i] = (eps[m].mean(), ratio[m].mean(), ratio[m].std() / np.sqrt(m.sum()), m.sum())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", nargs=4, action="append", required=True,
                    metavar=("SCENE", "MU_DIR", "MU0_DIR", "WINDOW"))
    ap.add_argument("--bins", default="0.075,0.08,0.085,0.09,0.095,0.1,0.11,0.12,0.13,0.14,0.15,0.165,"
                    "0.18,0.2,0.22,0.24,0.26,0.28,0.3,0.33,0.36,0.4")
    ap.add_argument("--settle", type=float, default=10.0,
                    help="skip the frames of the first SETTLE seconds, while the knot settles from its "
                    "initial shape (s)")
    ap.add_argument("--png", default=str(ROOT / "docs/validation/knot_trefoil_ratio.png"))
    args = ap.parse_args()
    edges = np.array([float(b) for b in args.bins.split(",")])

    fig, ax = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    print("| scene | mu | eps (bin mean) | ratio | spread / sqrt(frames) | frames |")
    print("|---|---|---|---|---|---|")
    shares = []
    for k, (scene, mu_dir, mu0_dir, window) in enumerate(args.run):
        sc = scene_values(Path(scene).read_text())
        name = Path(scene).stem
        force = {}
        for a, d, mu in ((ax[0], mu0_dir, 0.0), (ax[1], mu_dir, sc["mu"])):
            if d == "-":
                continue
            rows, _ = analyse(d, dict(sc, mu=mu), float(window))
            rows = [r for r in rows if r["t"] >= args.settle]
            force[mu] = binned(rows, lambda r: r["Fbar"], edges)
            b = list(binned(rows, lambda r: r["Fbar"] / r["theory"], edges).values())
            for e, r, se, n in b:
                print(f"| {name} | {mu} | {e:.3f} | {r:.3f} | {se:.3f} | {n} |")
            if b:
                e, r, se, _ = map(np.array, zip(*b))
                a.errorbar(e, r, yerr=se, fmt="o-", ms=4, capsize=2, color=f"C{k}",
                           label=f"{name} (window {window} s)")
        if len(force) == 2:  # the frictional part, bin by bin: (F(mu) - F(0)) / (mu sigma eps^3)
            for i, (e, f, _, _) in force[sc["mu"]].items():
                if i in force[0.0]:
                    shares.append((name, e, (f - force[0.0][i][1]) / (sc["mu"] * SIGMA * e**3)))
    if shares:
        print("\n| scene | eps | (F(mu) - F(0)) h²/EI / (mu sigma eps³) |\n|---|---|---|")
        for name, e, r in shares:
            print(f"| {name} | {e:.3f} | {r:.2f} |")
    mus = ", ".join(sorted({f"{scene_values(Path(run[0]).read_text())['mu']:g}" for run in args.run}))
    for a, title in zip(ax, ("frictionless: F h²/EI ÷ ε⁴/2", f"μ = {mus}: F h²/EI ÷ (ε⁴/2 + μσε³)")):
        a.axhline(1.0, color="k", lw=1)
        a.axhspan(0.9, 1.1, color="C2", alpha=0.12, label="within 10 %")
        eps_log_axis(a)
        a.set_xlabel("ε = (h/R)^½,  R = e/2π")
        a.set_title(title)
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=8, loc="upper left")
    ax[0].set_ylabel("simulation / leading-order law")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    sys.exit(main())
