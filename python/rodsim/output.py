"""Reading the files a run writes (docs/scene-format.md): timeseries.csv, final.csv, summary.json and
the VTK frames."""
import csv
import json
from pathlib import Path

import numpy as np

from . import vtp


# Bounds on the files read here (issue 43), as rodsim's own readers of a run's files: a regular file
# (not /dev/zero, a FIFO or a directory), at most this large.
MAX_SUMMARY_BYTES = 16 << 20
MAX_CSV_BYTES = 256 << 20


def _checked(path, max_bytes):
    """path, after checking it is a regular file of at most max_bytes (ValueError naming it)."""
    import stat
    mode = path.stat()
    if not stat.S_ISREG(mode.st_mode):
        raise ValueError(f"{path}: not a regular file (a device, FIFO or directory)")
    if mode.st_size > max_bytes:
        raise ValueError(f"{path}: larger than {max_bytes >> 20} MiB, the most rodsim.read_output reads")
    return path


def _number(cell):
    return float(cell) if cell != "" else float("nan")  # empty cells (no contact pair): NaN


class Output:
    """The output of one run.

    timeseries  {column: (steps + 1,) float64 array}, or a pandas DataFrame (read_output(..., dataframe=True))
    final       {rod name: (n, 3) float64 array of final node positions, m}
    summary     summary.json as a dict
    frames      [(time, path of the frame)], from vtk/<name>.pvd; frame(k) reads one

    summary.json must be a regular file of at most 16 MiB, timeseries.csv and final.csv of at most
    256 MiB (ValueError naming the file otherwise)."""

    def __init__(self, directory, dataframe=False):
        self.directory = Path(directory)
        self.summary = json.loads(_checked(self.directory / "summary.json", MAX_SUMMARY_BYTES).read_text())
        self.timeseries = self._timeseries(dataframe)
        self.final = self._final()
        self.frames = vtp.read_pvd(self.directory) if (self.directory / "vtk").is_dir() else []

    def _timeseries(self, dataframe):
        path = self.directory / "timeseries.csv"
        if not path.exists():
            return {}
        _checked(path, MAX_CSV_BYTES)
        if dataframe:
            import pandas
            return pandas.read_csv(path)
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]
        return {name: np.array([_number(r[i]) for r in body]) for i, name in enumerate(header)}

    def _final(self):
        path = self.directory / "final.csv"
        if not path.exists():
            return {}
        rods = {}
        with open(_checked(path, MAX_CSV_BYTES), newline="") as f:
            for row in csv.DictReader(f):
                rods.setdefault(row["rod"], []).append((float(row["x"]), float(row["y"]), float(row["z"])))
        return {name: np.array(points) for name, points in rods.items()}

    def frame(self, k):
        """Frame k: {"time", "points" (m, 3) array, "polylines" (point indices per rod), point arrays}."""
        time, path = self.frames[k]
        data = vtp.read_vtp(path)
        out = {"time": time, "points": np.array(data["Points"], dtype=float), "polylines": data["polylines"]}
        for key, value in data.items():
            if key not in ("Points", "polylines", "connectivity", "offsets"):
                out[key] = np.array(value, dtype=float)
        return out


def read_output(directory, dataframe=False):
    """Reads a run's output directory: rodsim.read_output("out/x").timeseries["t"], .final["beam"], ..."""
    return Output(directory, dataframe)
