#!/usr/bin/python3
"""Convergence of the alart-curnier contact solver against nu = 3n/m (Bertails-Descoubes et al.
(2011), Sec. 4.4.2, Fig. 10).

Reads per-solve logs written by the alart-curnier contact when RODSIM_AC_LOG=FILE is set (one line
per independent group solve: t, contacts n, free DOFs m of the group's rods, nu = 3n/m, Newton
iterations, proximal loops, natural-map residual rel and abs, |f_AC|, ms, converged, active contacts
with r_N > 0) and, optionally,
the `rodsim-fclib --csv` table (global problems carry nu = 3n/m with m = size of M).

Writes a PNG (iterations and solve time against nu, per source, with the median per nu bin) and
prints a Markdown table per nu bin (solves, iterations median / 90th percentile / max, time median,
not converged).

Usage:
  RODSIM_AC_LOG=/tmp/ac.csv build/bin/rodsim run scenes/contact_ac/spaghetti_plate.toml ...
  scripts/plot_ac_convergence.py --log "31 x 16, mu 0.3=/tmp/ac.csv" [--log LABEL=FILE ...]
      [--fclib fclib.csv] [--png docs/validation/alart-curnier-nu.png]
"""
import argparse
import csv
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--log", action="append", default=[], help="LABEL=FILE (RODSIM_AC_LOG output)")
ap.add_argument("--fclib", help="rodsim-fclib --csv output (global problems give nu)")
ap.add_argument("--png", default="docs/validation/alart-curnier-nu.png")
ap.add_argument("--bin", type=float, default=0.25, help="nu bin width of the table")
ap.add_argument("--active", action="store_true",
                help="nu from the active contacts (r_N > 0 after the solve, the paper's n) instead of every "
                     "contact point handed to the solver (open candidates included)")
a = ap.parse_args()

sources = []  # (label, nu, iterations, ms, contacts, converged)
for item in a.log:
    label, path = item.split("=", 1)
    nu, it, ms, n, ok = [], [], [], [], []
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) < 11:
                continue
            if a.active and len(row) >= 12:
                n.append(int(row[11]))
                nu.append(3.0 * int(row[11]) / int(row[2]))
            else:
                n.append(int(row[1]))
                nu.append(float(row[3]))
            it.append(int(row[4]))
            ms.append(float(row[9]))
            ok.append(row[10].strip() == "1")
    sources.append((label, np.array(nu), np.array(it), np.array(ms), np.array(n), np.array(ok)))

fclib = []
if a.fclib:
    with open(a.fclib) as f:
        for row in csv.DictReader(f):
            if row.get("nu"):
                fclib.append((row["file"], float(row["nu"]), int(row["iterations"]), 1e3 * float(row["solve_s"]),
                              int(row["contacts"]), row["status"] == "converged"))

fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 8), sharex=True)
colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
for k, (label, nu, it, ms, n, ok) in enumerate(sources):
    c = colors[k % len(colors)]
    jitter = 0.15 * (np.random.default_rng(k).random(len(it)) - 0.5)  # integer counts overlap
    ax1.scatter(nu, it + jitter, s=4, alpha=0.25, color=c, label=f"{label} ({len(nu)} solves)")
    ax2.scatter(nu, np.maximum(ms, 1e-3), s=4, alpha=0.25, color=c)
    edges = np.arange(0, max(nu.max(), 0.01) + a.bin, a.bin)
    mids, med_it, med_ms = [], [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (nu >= lo) & (nu < hi)
        if m.sum() >= 5:
            mids.append(0.5 * (lo + hi))
            med_it.append(np.median(it[m]))
            med_ms.append(np.median(ms[m]))
    ax1.plot(mids, med_it, "-o", color=c, lw=2)
    ax2.plot(mids, med_ms, "-o", color=c, lw=2)
for name, nu, it, ms, n, ok in fclib:
    mk = "k^" if ok else "rx"
    ax1.plot(nu, it, mk, ms=8)
    ax2.plot(nu, max(ms, 1e-3), mk, ms=8)
    ax1.annotate(name.split("-")[0].split(".")[0], (nu, it), fontsize=7, xytext=(3, 3), textcoords="offset points")
if fclib:
    ax1.plot([], [], "k^", label="FCLIB global problems (converged)")
    ax1.plot([], [], "rx", label="FCLIB global problem (not converged)")
for ax in (ax1, ax2):
    ax.axvline(1.0, color="gray", ls="--", lw=1)
    ax.grid(alpha=0.3)
ax1.set_ylabel("nonsmooth Newton iterations per solve")
ax1.set_yscale("symlog", linthresh=10)
ax1.set_ylim(bottom=-0.5)
ax1.legend(fontsize=8, loc="upper left")
ax1.set_title("alart-curnier: convergence against nu = 3n/m (cf. Bertails-Descoubes et al. 2011, Fig. 10)")
ax2.set_ylabel("solve time per group (ms)")
ax2.set_yscale("log")
ax2.set_xlabel("nu = 3 n / m (%s contacts n, free DOFs m of the group)" % ("active" if a.active else "all"))
fig.tight_layout()
fig.savefig(a.png, dpi=120)
print(f"wrote {a.png}")

print()
print("| source | nu | solves | contacts (median) | iterations median | 90th pct | max | ms median | not converged |")
print("|---|---|---|---|---|---|---|---|---|")
for label, nu, it, ms, n, ok in sources:
    edges = np.arange(0, nu.max() + a.bin, a.bin)
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (nu >= lo) & (nu < hi)
        if not m.any():
            continue
        print(f"| {label} | [{lo:.2f}, {hi:.2f}) | {m.sum()} | {int(np.median(n[m]))} | {np.median(it[m]):g} | "
              f"{np.percentile(it[m], 90):g} | {it[m].max()} | {np.median(ms[m]):.3g} | {(~ok[m]).sum()} |")
for name, nu, it, ms, n, ok in fclib:
    print(f"| FCLIB {name} | {nu:.3f} | 1 | {n} | {it} | - | {it} | {ms:.3g} | {0 if ok else 1} |")
