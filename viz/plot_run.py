#!/usr/bin/python3
"""The standard plots of a run, from its timeseries.csv (what `rodsim plot OUT_DIR` runs).

Usage: plot_run.py OUT_DIR   ->   in OUT_DIR: energies.png, solves.png, contacts.png (runs with contact) and, when the
scene has probes or report columns, probes.png. Prints the files it wrote, one per line.
A timeseries.csv that is not one (text in a number cell, binary bytes, a short row) is refused with
its file and line on standard error and exit status 2 (bad input, as rodsim's own errors).
Installed with rodsim as <prefix>/share/rodsim/plot_run.py (build tree: build/share/rodsim/).
"""
import math
import sys
from pathlib import Path

# The one reader of a run's files (python/rodsim/output.py): rodsim_output.py beside this script
# (share/rodsim), or scripts/rodsim_output.py in the source tree.
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "scripts"))
import rodsim_output  # noqa: E402

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

FIXED = rodsim_output.TIMESERIES_FIXED


def save(fig, path, written):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)


def main(out):
    table = out / "timeseries.csv"
    if not table.exists():
        sys.exit(f"plot_run.py: {table} does not exist (a run with \"csv\" in [output] formats writes it)")
    series = rodsim_output.read_timeseries(table)
    if not len(series["t"]):
        sys.exit(f"plot_run.py: {table} has no rows yet")
    try:  # the scene's name for the titles; the folder's while the run has not written its summary
        name = rodsim_output.read_summary(out)["name"]
    except (rodsim_output.RunFileError, KeyError):
        name = out.name
    t = list(series["t"])
    column = lambda name: list(series[name])
    written = []

    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(t, column("kinetic_energy"), label="kinetic")
    ax.plot(t, column("elastic_energy"), label="elastic")
    ax.set_xlabel("t (s)"), ax.set_ylabel("energy (J)"), ax.set_title(f"{name}: energies")
    ax.legend()
    save(fig, out / "energies.png", written)

    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(t[1:], column("iterations")[1:], ".", ms=2)  # row 0 is the initial state: no solve
    ax.set_xlabel("t (s)"), ax.set_ylabel("linear solves per step"), ax.set_title(f"{name}: Newton iterations")
    save(fig, out / "solves.png", written)

    # A run without contact (no model, or no pair ever near) has nothing to draw: no empty plot.
    had_contact = any(c > 0 for c in column("contacts")) or any(not math.isnan(g) for g in column("min_gap"))
    if had_contact:
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 5.5), sharex=True)
        top.plot(t, column("contacts"))
        top.set_ylabel("active contacts"), top.set_title(f"{name}: contact")
        bottom.plot(t, column("min_gap"))
        bottom.axhline(0, color="0.6", lw=0.8)
        bottom.set_xlabel("t (s)"), bottom.set_ylabel("minimum gap (m)")
        save(fig, out / "contacts.png", written)
    else:
        print(f"{out}: no contact in this run, no contacts.png", file=sys.stderr)

    extra = [k for k in series if k not in FIXED]
    if extra:
        fig, axes = plt.subplots(len(extra), 1, figsize=(6.4, 1.2 + 1.8 * len(extra)), sharex=True, squeeze=False)
        for ax, name in zip(axes[:, 0], extra):
            ax.plot(t, column(name))
            ax.set_ylabel(name, fontsize=8)
        axes[0, 0].set_title(f"{name}: probes and reports")
        axes[-1, 0].set_xlabel("t (s)")
        save(fig, out / "probes.png", written)
    for path in written:
        print(path)


if __name__ == "__main__":
    try:
        main(Path(sys.argv[1] if len(sys.argv) > 1 else "out/flagellum_spin"))
    except rodsim_output.RunFileError as e:  # a timeseries.csv that is not one: its file and line
        print(e, file=sys.stderr)
        sys.exit(2)
