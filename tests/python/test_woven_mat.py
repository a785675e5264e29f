"""benchmarks/make_woven_mat.py: the woven mat of the contact benchmarks (issue 44, item 3).

Every crossing starts at the chosen model's contact distance (2r + delta/2, 2r + d_hat/2, 2r), the
rods go over and under in turn, and the mat runs with each model with every crossing in contact.
"""
import itertools
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

GENERATOR = ROOT / "benchmarks" / "make_woven_mat.py"
R, S = 1e-3, 4e-3  # the generator's default radius and spacing


def generate(tmp_path, *args):
    out = tmp_path / "mat.toml"
    r = subprocess.run([sys.executable, str(GENERATOR), *map(str, args), "-o", str(out)], capture_output=True, text=True)
    return r, out


def segment_distance(p0, p1, q0, q1):
    # Closest points of two segments by dense sampling of one and the exact point-segment distance.
    def point_segment(p, a, b):
        ab = [b[i] - a[i] for i in range(3)]
        t = sum((p[i] - a[i]) * ab[i] for i in range(3)) / sum(c * c for c in ab)
        t = min(1.0, max(0.0, t))
        return math.dist(p, [a[i] + t * ab[i] for i in range(3)])

    best = math.inf
    lo, hi = 0.0, 1.0
    for _ in range(60):  # golden-section search: the distance to a segment is convex along a segment
        m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        f = lambda s: point_segment([p0[i] + s * (p1[i] - p0[i]) for i in range(3)], q0, q1)
        if f(m1) < f(m2):
            hi = m2
        else:
            lo = m1
        best = min(best, f(m1), f(m2))
    return best


@pytest.mark.parametrize("model,gap0", [("imc", 0.5e-5), ("ipc", 0.5e-5), ("alart-curnier", 0.0)])
def test_every_crossing_starts_at_the_contact_distance_over_and_under(tmp_path, model, gap0):
    M = 4
    r, path = generate(tmp_path, "--rods", M, "--model", model)
    assert r.returncode == 0, r.stderr
    scene = tomllib.loads(path.read_text())
    rods = {rod["name"]: rod["geometry"]["points"] for rod in scene["rod"]}
    assert len(rods) == 2 * M and all(len(p) == M + 1 for p in rods.values())
    for i, j in itertools.product(range(M), range(M)):
        x, y = rods[f"x{i}"], rods[f"y{j}"]
        # Rod x_i's node j + 1 and rod y_j's node i + 1 lie over each other at crossing (i, j).
        assert x[j + 1][:2] == pytest.approx([(j + 0.5) * S, (i + 0.5) * S], abs=1e-15)
        assert y[i + 1][:2] == pytest.approx([(j + 0.5) * S, (i + 0.5) * S], abs=1e-15)
        above = x[j + 1][2] > 0
        assert above == ((i + j) % 2 == 0)
        assert (y[i + 1][2] > 0) != above
        # The edges on both sides of the crossing nodes (one side only at the rods' ends).
        d = min(segment_distance(x[a], x[a + 1], y[b], y[b + 1])
                for a in (j, j + 1) if a + 1 <= M for b in (i, i + 1) if b + 1 <= M)
        # The bisection is exact to round-off; the sampled distance here to about 1e-12 m.
        assert d == pytest.approx(2 * R + gap0, abs=1e-11)


@pytest.mark.parametrize("model", ["imc", "ipc", "alart-curnier"])
def test_the_mat_runs_with_every_crossing_in_contact(tmp_path, rodsim_exe, model):
    M = 4
    r, path = generate(tmp_path, "--rods", M, "--model", model, "--duration", 0.002)
    assert r.returncode == 0, r.stderr
    status, output = run_cli(rodsim_exe, "run", path, "--quiet", "--output", tmp_path / "out")
    assert status == 0, output
    rows = (tmp_path / "out" / "timeseries.csv").read_text().splitlines()
    head = rows[0].split(",")
    first = dict(zip(head, rows[2].split(",")))
    # Every one of the M^2 crossings is a contact at the first step: one or more edge pairs in imc's
    # and ipc's force bands, at least one point with a positive impulse for alart-curnier (the
    # clamped rim holds the crossings of the outer rods, which may carry none).
    if model == "alart-curnier":
        assert int(first["contacts"]) >= (M - 2) ** 2
    else:
        assert int(first["contacts"]) >= M * M
    assert float(first["min_gap"]) > -1e-9


def test_an_amplitude_that_overlaps_the_rods_is_refused(tmp_path):
    r, path = generate(tmp_path, "--rods", 4, "--amplitude", 5e-4)
    assert r.returncode != 0
    assert "makes the rods overlap at the crossings" in r.stderr
    assert not path.exists()
