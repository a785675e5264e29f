"""Shared helpers of the Python module's tests: the rodsim executable and small scenes."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rodsim_exe():
    exe = os.environ.get("RODSIM_EXECUTABLE", str(ROOT / "build" / "bin" / "rodsim"))
    if not Path(exe).exists():
        pytest.skip(f"no rodsim executable at {exe}")
    return exe


def run_cli(exe, *args):
    r = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


# A DER cantilever along x (L = 1 m, r = 1 cm, 21 nodes), clamped at nodes 0 and 1, with implicit
# Euler: the small dynamic scene of the tests. {extra} adds tables.
CANTILEVER = """
[simulation]
duration = {duration}
dt = {dt}

[solver]
type = "implicit-euler"
tolerance = 1e-6

[[rod]]
name = "beam"
model = "der"
nodes = 21
radius = 0.01
density = 1000.0
youngs_modulus = {E}
poisson_ratio = 0.5
geometry = {{ shape = "straight", start = [0, 0, 0], end = [1, 0, 0] }}
rest_shape = "straight"

[[constraint]]
name = "root"
type = "{root}"
rod = "beam"
nodes = [0, 1]
{root_extra}

[[force]]
name = "friction"
type = "damping"
coefficient = {damping}

[output]
every = 0.0
{extra}
"""


def cantilever(tmp_path, duration=1.0, dt=1e-3, E=1e9, damping=0.5, root="clamp", root_extra="", extra="",
               name="scene.toml"):
    path = tmp_path / name
    path.write_text(CANTILEVER.format(duration=duration, dt=dt, E=E, damping=damping, root=root,
                                      root_extra=root_extra, extra=extra))
    return path
