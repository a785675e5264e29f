"""Reading the files a run writes (docs/scene-format.md, "Output"): summary.json, timeseries.csv,
final.csv and the VTK frames. The one Python reader of a run's files: `rodsim.read_output` and the
plotting scripts (scripts/plot_*.py, rodsim plot's plot_run.py) use it; the C++ side's is
libs/run_record. It needs NumPy only, not the compiled module, so a script can load this file by
itself (scripts/rodsim_output.py; installed beside the scripts as share/rodsim/rodsim_output.py).

    out = read_output("out/x")            # everything: .summary, .timeseries, .final, .frames
    read_summary("out/x")["status"]       # summary.json as a dict
    read_timeseries("out/x")["t"]         # {column: float64 array}
    read_final("out/x")["beam"]           # {rod: (n, 3) float64 array}

A file that is not what rodsim writes raises RunFileError (a ValueError) naming the file, and the
line for a CSV: not a regular file (a device, FIFO or directory), larger than the bounds below,
not UTF-8 text, a row of another width than the header, a cell that is no number.
"""
import json
import math
import os
import stat
from pathlib import Path

import numpy as np

# Bounds on the files read here, as libs/run_record's: a regular file (not /dev/zero, a FIFO or a
# directory), at most this large.
MAX_SUMMARY_BYTES = 16 << 20
MAX_CSV_BYTES = 256 << 20

# The columns every timeseries.csv starts with; probe and report columns follow.
TIMESERIES_FIXED = ["step", "t", "iterations", "wall_ms", "contacts", "min_gap", "kinetic_energy", "elastic_energy"]


class RunFileError(ValueError):
    """A run's file that cannot be read: the message names the file (and the line)."""


def _file(path, name):
    """`path` itself, or path/name when path is a run directory."""
    path = Path(path)
    return path / name if path.is_dir() else path


def _text(path, max_bytes):
    """The text of a regular file of at most max_bytes (RunFileError naming it otherwise)."""
    try:
        mode = os.stat(path)
    except OSError as e:
        raise RunFileError(f"{path}: cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(mode.st_mode):
        raise RunFileError(f"{path}: not a regular file (a device, FIFO or directory)")
    if mode.st_size > max_bytes:
        raise RunFileError(f"{path}: larger than {max_bytes >> 20} MiB, the most rodsim reads")
    data = Path(path).read_bytes()
    if len(data) > max_bytes:  # it grew while it was read
        raise RunFileError(f"{path}: larger than {max_bytes >> 20} MiB, the most rodsim reads")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RunFileError(f"{path}: not a text file (byte {e.start} is not UTF-8)") from None


def number(cell):
    """A cell as a float: an empty cell (no contact pair: min_gap) is NaN."""
    return float(cell) if cell != "" else math.nan


def read_summary(path):
    """summary.json of a run directory (or the file itself) as a dict."""
    path = _file(path, "summary.json")
    try:
        summary = json.loads(_text(path, MAX_SUMMARY_BYTES))
    except json.JSONDecodeError as e:
        raise RunFileError(f"{path}: byte {e.pos}: {e.msg}") from None
    if not isinstance(summary, dict):
        raise RunFileError(f"{path}: not a JSON object")
    return summary


def read_csv(path, numeric=None, max_bytes=MAX_CSV_BYTES):
    """A CSV file as rodsim writes them: (header, rows), each row a list of cells, every row as wide
    as the header; empty lines skipped. `numeric`: the columns whose cells are read as floats (all
    when None); the others stay text."""
    text = _text(path, max_bytes)
    header, rows = None, []
    for line_number, line in enumerate(text.split("\n"), start=1):
        line = line[:-1] if line.endswith("\r") else line
        if not line:
            continue
        cells = line.split(",")
        if header is None:
            header = cells
            kinds = [numeric is None or name in numeric for name in header]
            continue
        if len(cells) != len(header):
            raise RunFileError(f"{path}:{line_number}: {len(cells)} cells, the header has {len(header)}")
        row = []
        for name, cell, is_number in zip(header, cells, kinds):
            if is_number:
                try:
                    cell = number(cell)
                except ValueError:
                    raise RunFileError(f"{path}:{line_number}: column '{name}': {cell[:40]!r} is not a number") from None
            row.append(cell)
        rows.append(row)
    return header or [], rows


def read_timeseries(path):
    """timeseries.csv of a run directory (or the file itself): {column: float64 array}, columns in
    the file's order."""
    path = _file(path, "timeseries.csv")
    header, rows = read_csv(path)
    missing = [c for c in TIMESERIES_FIXED if c not in header]
    if missing:
        raise RunFileError(f"{path}:1: not a timeseries.csv of rodsim (no column {', '.join(missing)})")
    columns = np.array(rows, dtype=float).reshape(len(rows), len(header))
    return {name: columns[:, i].copy() for i, name in enumerate(header)}


def read_final(path):
    """final.csv of a run directory (or the file itself): {rod name: (n, 3) float64 array of the
    final node positions, m}, rods in the file's order."""
    path = _file(path, "final.csv")
    header, rows = read_csv(path, numeric={"node", "x", "y", "z"})
    if header[:5] != ["rod", "node", "x", "y", "z"]:
        raise RunFileError(f"{path}:1: not a final.csv of rodsim (header rod,node,x,y,z)")
    rods = {}
    for row in rows:
        rods.setdefault(row[0], []).append(row[2:5])
    return {name: np.array(points, dtype=float) for name, points in rods.items()}


def _vtp():
    """The frame reader: rodsim.vtp in the package, scripts/rodsim_vtp.py beside the scripts."""
    try:
        from . import vtp
    except ImportError:
        import rodsim_vtp as vtp
    return vtp


class Output:
    """The output of one run.

    timeseries  {column: (steps + 1,) float64 array}, or a pandas DataFrame (read_output(..., dataframe=True))
    final       {rod name: (n, 3) float64 array of final node positions, m}
    summary     summary.json as a dict
    frames      [(time, path of the frame)], from vtk/<name>.pvd; frame(k) reads one

    summary.json must be a regular file of at most 16 MiB, timeseries.csv and final.csv of at most
    256 MiB (RunFileError, a ValueError naming the file, otherwise)."""

    def __init__(self, directory, dataframe=False):
        self.directory = Path(directory)
        self.summary = read_summary(self.directory / "summary.json")
        table = self.directory / "timeseries.csv"
        self.timeseries = read_timeseries(table) if table.exists() or table.is_symlink() else {}
        if dataframe:
            import pandas
            self.timeseries = pandas.DataFrame(self.timeseries)
        final = self.directory / "final.csv"
        self.final = read_final(final) if final.exists() or final.is_symlink() else {}
        self.frames = _vtp().read_pvd(self.directory) if (self.directory / "vtk").is_dir() else []

    def frame(self, k):
        """Frame k: {"time", "points" (m, 3) array, "polylines" (point indices per rod), point arrays}."""
        time, path = self.frames[k]
        data = _vtp().read_vtp(path)
        out = {"time": time, "points": np.array(data["Points"], dtype=float), "polylines": data["polylines"]}
        for key, value in data.items():
            if key not in ("Points", "polylines", "connectivity", "offsets"):
                out[key] = np.array(value, dtype=float)
        return out


def read_output(directory, dataframe=False):
    """Reads a run's output directory: rodsim.read_output("out/x").timeseries["t"], .final["beam"], ..."""
    return Output(directory, dataframe)
