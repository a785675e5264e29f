#!/usr/bin/env python3
"""Plots of a `rodsim compare` output directory (docs/scene-format.md, "rodsim compare").

    scripts/plot_compare.py DIR [--prefix PATH] [--title TEXT]

Writes DIR/difference.png (e(t) of Eq. 22 of Tong et al. (2023) for every pair of models) and
DIR/cumulative.png (cumulative Newton iterations and cumulative wall time against simulated time,
like SI Fig. E.3 of the paper). --prefix P writes P_difference.png and P_cumulative.png instead.
`rodsim compare` calls this at the end when /usr/bin/python3 has matplotlib.
"""
import argparse
import csv
import math
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rodsim_output  # noqa: E402  the one reader of a run's files (python/rodsim/output.py; beside this script when installed)


def read_csv(path):
    """compare's own tables (table.csv, difference.csv; a cell may be quoted)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def num(s):
    try:
        return float(s)
    except ValueError:
        return math.nan


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--prefix", help="output file prefix (default: DIR/)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    out = (lambda name: pathlib.Path(f"{args.prefix}_{name}")) if args.prefix else (lambda name: args.dir / name)
    title = args.title or args.dir.name

    header, rows = read_csv(args.dir / "table.csv")
    models = [r[header.index("model")] for r in rows]

    # e(t) for every pair
    fig, ax = plt.subplots(figsize=(6, 3.6))
    dh, drows = read_csv(args.dir / "difference.csv")
    t = [num(r[0]) for r in drows]
    for k, name in enumerate(dh[1:], start=1):
        e = [num(r[k]) if k < len(r) else math.nan for r in drows]
        ax.plot(t, e, marker="o", ms=3, label=name.replace("_vs_", " vs "))
    ax.set_xlabel("simulated time t [s]")
    ax.set_ylabel(r"$\bar e(t)$ = mean |x$_A$ - x$_B$| / h")
    ax.set_title(f"{title}: normalized average difference (Tong et al. 2023, Eq. 22)", fontsize=9)
    ax.grid(alpha=0.3)
    if len(dh) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out("difference.png"), dpi=120)
    plt.close(fig)

    # cumulative iterations and wall time
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    for m in models:
        series = rodsim_output.read_timeseries(args.dir / m)
        rows_t, rows_it, rows_wall, rows_contacts = (series[c][1:] for c in ("t", "iterations", "wall_ms", "contacts"))  # row 0: initial state
        ts, its, wall = [], [], []
        ci_sum, cw_sum = 0.0, 0.0
        for t_k, it_k, wall_k in zip(rows_t, rows_it, rows_wall):
            ci_sum += float(it_k)
            cw_sum += float(wall_k) / 1000.0
            ts.append(float(t_k))
            its.append(ci_sum)
            wall.append(cw_sum)
        a1.plot(ts, its, label=m)
        a2.plot(ts, wall, label=m)
        # where contact starts
        first = next((float(t_k) for t_k, c in zip(rows_t, rows_contacts) if c > 0), None)
        if first is not None:
            a1.axvline(first, ls=":", lw=0.8, color=a1.lines[-1].get_color())
    a1.set_xlabel("simulated time t [s]")
    a1.set_ylabel("cumulative Newton iterations (linear solves)")
    a2.set_xlabel("simulated time t [s]")
    a2.set_ylabel("cumulative wall time [s]")
    for a in (a1, a2):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    fig.suptitle(f"{title}: cost against simulated time (cf. Tong et al. 2023, SI Fig. E.3; dotted: first contact)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out("cumulative.png"), dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
