#!/usr/bin/python3
"""The standard plots of a run, from its timeseries.csv (what `rodsim plot OUT_DIR` runs).

Usage: plot_run.py OUT_DIR   ->   in OUT_DIR: energies.png, solves.png, contacts.png and, when the
scene has probes or report columns, probes.png. Prints the files it wrote, one per line.
A timeseries.csv that is not one (text in a number cell, binary bytes, a short row) is refused with
its file and line on standard error and exit status 2 (bad input, as rodsim's own errors).
Installed with rodsim as <prefix>/share/rodsim/plot_run.py (build tree: build/share/rodsim/).
"""
import csv
import json
import math
import os
import stat
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

FIXED = ["step", "t", "iterations", "wall_ms", "contacts", "min_gap", "kinetic_energy", "elastic_energy"]


class BadInput(Exception):
    """A timeseries.csv that cannot be plotted: the message names the file and line."""


def number(text):
    """An empty cell (no contact pair: min_gap) is a gap in the curve."""
    return float(text) if text not in ("", None) else math.nan


MAX_TABLE_BYTES = 256 << 20  # as rodsim's readers of a run's CSVs (issue 43)


def regular_file(path, max_bytes):
    """Whether path is a regular file (not /dev/zero, a FIFO: they never end) of at most max_bytes."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size <= max_bytes


def read_table(table):
    """The rows of timeseries.csv as {column: float}, every cell checked (a traceback is no error
    message: a text cell or random bytes name the file and line)."""
    st = os.stat(table)
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"{table}: not a regular file (a device, FIFO or directory)")
    if st.st_size > MAX_TABLE_BYTES:
        raise BadInput(f"{table}: larger than {MAX_TABLE_BYTES >> 20} MiB, the most rodsim plot reads")
    try:
        with open(table, encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if not header or "t" not in header:
                raise BadInput(f"{table}:1: not a timeseries.csv of rodsim (its header has no column 't')")
            missing = [c for c in FIXED if c not in header]
            if missing:
                raise BadInput(f"{table}:1: not a timeseries.csv of rodsim (no column {', '.join(missing)})")
            rows = []
            for cells in reader:
                line = reader.line_num
                if len(cells) != len(header):
                    raise BadInput(f"{table}:{line}: {len(cells)} cells, the header has {len(header)}")
                row = {}
                for name, cell in zip(header, cells):
                    try:
                        row[name] = number(cell)
                    except ValueError:
                        raise BadInput(f"{table}:{line}: column '{name}': {cell[:40]!r} is not a number") from None
                rows.append(row)
            return rows
    except UnicodeDecodeError as e:
        raise BadInput(f"{table}: not a text file (byte {e.start} is not UTF-8)") from None
    except csv.Error as e:
        raise BadInput(f"{table}:{reader.line_num}: not CSV ({e})") from None


def save(fig, path, written):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)


def main(out):
    table = out / "timeseries.csv"
    if not table.exists():
        sys.exit(f"plot_run.py: {table} does not exist (a run with \"csv\" in [output] formats writes it)")
    rows = read_table(table)
    if not rows:
        sys.exit(f"plot_run.py: {table} has no rows yet")
    try:  # the scene's name for the titles; the folder's while the run has not written its summary
        if not regular_file(out / "summary.json", 16 << 20):
            raise ValueError("not a summary")
        name = json.load(open(out / "summary.json"))["name"]
    except (OSError, ValueError, KeyError):
        name = out.name
    t = [r["t"] for r in rows]
    column = lambda name: [r[name] for r in rows]
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

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 5.5), sharex=True)
    top.plot(t, column("contacts"))
    top.set_ylabel("active contacts"), top.set_title(f"{name}: contact")
    bottom.plot(t, column("min_gap"))
    bottom.axhline(0, color="0.6", lw=0.8)
    bottom.set_xlabel("t (s)"), bottom.set_ylabel("minimum gap (m)")
    save(fig, out / "contacts.png", written)

    extra = [k for k in rows[0].keys() if k not in FIXED]
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
    except BadInput as e:
        print(e, file=sys.stderr)
        sys.exit(2)
