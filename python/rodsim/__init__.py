"""rodsim from Python: build, run, steer and read rod simulations (docs/python.md).

    import rodsim
    sim = rodsim.Simulation("scene.toml", set={"contact.friction": 0.3}, output="out/x")
    sim.run(until=0.5)
    sim.rod("beam").positions          # (n, 3) float64, m
    out = rodsim.read_output("out/x")  # timeseries, final positions, frames

    scene = rodsim.scene.load("scene.toml")      # the file as a dict; TOML text works too
    scene["rod"][0]["nodes"] = 41
    sim = rodsim.Simulation(scene)               # errors located by key path: rod[0].nodes
    sim.rod("beam").velocities = v               # state set between steps, checked
    sim.close(checkpoint=True)                   # ... and continued later:
    sim = rodsim.Simulation.restart("out/scene")

The time loop is the kernel's own (the one `rodsim run` uses): a scene run from Python writes the
same files as the command line, bit for bit.
"""
import json as _json
import operator as _operator
import os as _os

from ._rodsim import (InputError, Rod, SimulationError, describe, plugin_search_path, plugins,
                      sdk_version, _PythonForceSpec, _Simulation)
from . import scene
from .forces import PythonForce
from .output import Output, read_output
from .scene import _toml_value

__all__ = ["Simulation", "scene", "PythonForce", "Rod", "InputError", "SimulationError", "plugins", "describe",
           "plugin_search_path", "read_output", "Output", "sdk_version"]


class Simulation(_Simulation):
    """A scene, built and ready to step: the kernel's Session (the CLI's own time loop).

    scene    the scene: a file's path (str or pathlib.Path); TOML text (a str that holds a newline or
             '=' and is not the path of an existing file); or a dict with the file's structure
             (rodsim.scene.load gives one). Text and dicts are validated as a file is; relative paths
             in them resolve against the current directory. The text (a dict's as rodsim.scene.dumps
             writes it) is kept in the run directory as python-scene.toml, which summary.json names.
    set      {"dotted.key": value}: the CLI's --set values (value: a Python number, bool, string,
             list or NumPy array, written as TOML)
    output   the output directory (default: the scene's [output] dir, as for `rodsim run`)
    replace  replace another run's files in `output` (the CLI's `--force`)
    forces   rodsim.PythonForce objects added to the scene's forces
    quiet    no "done" line; progress: the CLI's live progress line (off by default)

    Scene errors raise rodsim.InputError with the CLI's file:line:column text (TOML text:
    "<string>:line:column"; a dict: "<dict> rod[0].nodes", its key path); a failed step raises
    rodsim.SimulationError with the reason, and the state up to it stays readable. The run is finished
    (final.csv, summary.json written) when it reaches the scene's end, on a failure, or by close()
    (before the end: status "failed", reason "stopped by its caller"); also as a context manager.
    close(checkpoint=True) before the end writes a checkpoint of the last step first, as Ctrl-C does
    for `rodsim run`: Simulation.restart(output_dir) continues the run from it.

    Between steps the state can be set: rod.positions, .velocities, .directors, .angular_velocities
    (rodsim.Rod), and the parameters that can change during a run: set_parameter(path, value)."""

    def __init__(self, scene, set=None, output=None, replace=False, forces=(), quiet=True, progress=False):
        sets = [f"{k}={_toml_value(v)}" for k, v in (set or {}).items()]
        path, origin, spans = _scene_source(scene)
        self._construct(path, origin, sets, output, replace, forces, quiet, progress, "", spans)

    @classmethod
    def restart(cls, directory, forces=(), quiet=True, progress=False):
        """Continues the run in `directory` from its latest checkpoint, as `rodsim run --restart DIR`:
        the scene, its set= values and the output directory are the checkpoint's, and the run goes on
        to write what an uninterrupted run writes, bit for bit. A run with rodsim.PythonForce forces
        needs the same ones again (the checkpoint refuses another setup). A scene given as text or a
        dict is read from the directory's python-scene.toml, its relative paths against the current
        directory as they were. rodsim.InputError when there is no checkpoint or it does not fit."""
        self = cls.__new__(cls)
        self._construct("", "", [], str(directory), False, forces, quiet, progress, str(directory), None)
        return self

    def _construct(self, scene, origin, sets, output, replace, forces, quiet, progress, restart, spans):
        specs = []
        for f in forces:
            if not isinstance(f, PythonForce):
                raise TypeError("forces: expected rodsim.PythonForce objects")
            specs.append(f._spec())
        try:
            _Simulation.__init__(self, scene, origin, _os.getcwd(), sets, "" if output is None else str(output),
                                 bool(replace), bool(quiet), bool(progress), specs, restart)
        except InputError as e:
            if spans is None:
                raise
            # The text was dumps' of a dict: each place in it is a key path of that dict.
            raise InputError(scene_module._locate_dict_error(str(e), spans)) from None
        self._built = True

    def step(self, n=1):
        """Advances n >= 0 time steps (callbacks included)."""
        try:
            n = _operator.index(n)  # an int or NumPy integer; 2.5 or nan is not a count of steps
        except TypeError:
            raise TypeError(f"step(n): n must be an integer, found {n!r}") from None
        super().step(n)

    def run(self, until=None):
        """Advances to time `until` (s, finite; default: the scene's end). At the end the run is
        finished."""
        super().run(None if until is None else float(until))

    def every(self, k, fn=None):
        """Calls fn(sim) after every k-th step (step_count % k == 0), between steps: it may read the
        state and change parameters (set_parameter). Without fn, a decorator: @sim.every(10)."""
        try:
            k = _operator.index(k)
        except TypeError:
            raise TypeError(f"every(k): k must be an integer, found {k!r}") from None
        if fn is None:
            return lambda f: self.every(k, f)
        self.add_callback(fn, k)
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
        if not getattr(self, "_built", False):  # its __init__ raised (a traceback shows such objects)
            return "<rodsim.Simulation, not built>"
        return (f"<rodsim.Simulation t={self.time:.6g}/{self.duration:.6g} s, step {self.step_count}/"
                f"{self.total_steps}, {self.status}, output {self.output_dir!r}>")


scene_module = scene  # rodsim.scene, by a name that Simulation's `scene` arguments do not hide


def _scene_source(scene):
    """(path or text, origin, spans) for the kernel: origin "" for a file, "<string>" for TOML text,
    "<dict>" for a dict (spans: where dumps wrote each key, to locate errors by key path)."""
    if isinstance(scene, dict):
        text, spans = scene_module._write(scene)
        return text, "<dict>", spans
    if isinstance(scene, _os.PathLike):
        return _os.fspath(scene), "", None
    if isinstance(scene, str):
        # TOML text holds a newline or an '=' (every scene has "duration = ..."); a path rarely does,
        # and an existing file always wins.
        if ("\n" in scene or "=" in scene) and not _os.path.isfile(scene):
            return scene, "<string>", None
        return scene, "", None
    raise TypeError(f"scene: expected a path (str or pathlib.Path), TOML text or a dict, found {type(scene).__name__}")
