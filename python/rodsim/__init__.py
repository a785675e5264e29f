"""rodsim from Python: build, run, steer and read rod simulations (docs/python.md).

    import rodsim
    sim = rodsim.Simulation("scene.toml", set={"contact.friction": 0.3}, output="out/x")
    sim.run(until=0.5)
    sim.rod("beam").positions          # (n, 3) float64, m
    out = rodsim.read_output("out/x")  # timeseries, final positions, frames

The time loop is the kernel's own (the one `rodsim run` uses): a scene run from Python writes the
same files as the command line, bit for bit.
"""
import json as _json
import math as _math

from ._rodsim import (InputError, Rod, SimulationError, describe, plugin_search_path, plugins,
                      sdk_version, _PythonForceSpec, _Simulation)
from .forces import PythonForce
from .output import Output, read_output

__all__ = ["Simulation", "PythonForce", "Rod", "InputError", "SimulationError", "plugins", "describe",
           "plugin_search_path", "read_output", "Output", "sdk_version"]


def _toml_value(value):
    """A Python value as the TOML text `--set KEY=VALUE` parses (docs/scene-format.md)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if _math.isnan(value):
            return "nan"
        if _math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # the shortest text that reads back as the same double
    if isinstance(value, str):
        return _json.dumps(value)  # a TOML basic string (JSON's escapes are TOML's)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "tolist"):  # NumPy arrays and scalars
        return _toml_value(value.tolist())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} ({type(value).__name__}) as a scene value")


class Simulation(_Simulation):
    """A scene, built and ready to step: the kernel's Session (the CLI's own time loop).

    scene    the scene file (TOML)
    set      {"dotted.key": value}: the CLI's --set values (value: a Python number, bool, string,
             list or NumPy array, written as TOML)
    output   the output directory (default: the scene's [output] dir, as for `rodsim run`)
    replace  replace another run's files in `output` (the CLI's `--force`)
    forces   rodsim.PythonForce objects added to the scene's forces
    quiet    no "done" line; progress: the CLI's live progress line (off by default)

    Scene errors raise rodsim.InputError with the CLI's file:line:column text; a failed step raises
    rodsim.SimulationError with the reason, and the state up to it stays readable. The run is finished
    (final.csv, summary.json written) when it reaches the scene's end, on a failure, or by close()
    (before the end: status "failed", reason "stopped by its caller"); also as a context manager."""

    def __init__(self, scene, set=None, output=None, replace=False, forces=(), quiet=True, progress=False):
        sets = [f"{k}={_toml_value(v)}" for k, v in (set or {}).items()]
        specs = []
        for f in forces:
            if not isinstance(f, PythonForce):
                raise TypeError("forces: expected rodsim.PythonForce objects")
            specs.append(f._spec())
        super().__init__(str(scene), sets, "" if output is None else str(output), bool(replace), bool(quiet),
                         bool(progress), specs)

    def step(self, n=1):
        """Advances n time steps (callbacks included)."""
        super().step(int(n))

    def run(self, until=None):
        """Advances to time `until` (s; default: the scene's end). At the end the run is finished."""
        super().run(None if until is None else float(until))

    def every(self, k, fn=None):
        """Calls fn(sim) after every k-th step (step_count % k == 0), between steps: it may read the
        state and change parameters (set_parameter). Without fn, a decorator: @sim.every(10)."""
        if fn is None:
            return lambda f: self.every(k, f)
        self.add_callback(fn, int(k))
        return fn

    def summary(self):
        """summary.json's fields for the state now, as a dict."""
        return _json.loads(self.summary_json())

    def __getitem__(self, path):
        return self.parameter(path)

    def __setitem__(self, path, value):
        self.set_parameter(path, value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.finished:
            self.close()
        return False

    def __repr__(self):
        return (f"<rodsim.Simulation t={self.time:.6g}/{self.duration:.6g} s, step {self.step_count}/"
                f"{self.total_steps}, {self.status}, output {self.output_dir!r}>")
