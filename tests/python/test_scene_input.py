"""Scenes from Python: a path, TOML text or a dict (rodsim.scene.load / dumps), validated and located
as a file is, and run to the same files as the command line."""
import math
import os
import subprocess
import tomllib
from pathlib import Path

import numpy as np
import pytest
import rodsim
from conftest import CANTILEVER, ROOT, cantilever, rodsim_exe, run_cli  # noqa: F401 (fixture)

SCENE_TEXT = CANTILEVER.format(duration=0.05, dt=1e-3, E=1e9, damping=0.5, root="clamp", root_extra="", extra="")

# Every shipped scene; the study files (sweep, fit, optimize) beside them describe studies, not scenes.
SCENES = sorted(p for p in (ROOT / "scenes").rglob("*.toml")
                if not p.name.endswith((".sweep.toml", ".fit.toml", ".optimize.toml")))


def final_csv(out):
    return (Path(out) / "final.csv").read_bytes()


def test_text_dict_and_file_give_the_same_run_as_the_cli(tmp_path, rodsim_exe):
    path = tmp_path / "scene.toml"
    path.write_text(SCENE_TEXT)
    runs = {"file": path, "path-str": str(path), "text": SCENE_TEXT, "dict": rodsim.scene.load(path)}
    for name, scene in runs.items():
        sim = rodsim.Simulation(scene, output=tmp_path / name)
        sim.run()
        assert sim.status == "ok", name
    # The CLI on the TOML text that dumps writes for the dict: same bytes, same identity.
    dumped = tmp_path / "dumped.toml"
    dumped.write_text(rodsim.scene.dumps(rodsim.scene.load(path)))
    code, out = run_cli(rodsim_exe, "run", dumped, "--quiet", "--output", tmp_path / "cli")
    assert code == 0, out
    reference = final_csv(tmp_path / "cli")
    for name in runs:
        assert final_csv(tmp_path / name) == reference, name
    # The dict run's identity is the CLI run's of the dumped file (the same text is hashed).
    ident = rodsim.read_output(tmp_path / "cli").summary["identity"]
    assert rodsim.read_output(tmp_path / "dict").summary["identity"] == ident
    # A scene given as text is kept in the run directory, and summary.json names that file.
    kept = tmp_path / "dict" / "python-scene.toml"
    assert kept.read_text() == dumped.read_text()
    assert rodsim.read_output(tmp_path / "dict").summary["scene"] == str(kept)
    assert (tmp_path / "text" / "python-scene.toml").read_text() == SCENE_TEXT
    assert not (tmp_path / "file" / "python-scene.toml").exists()


def test_text_scene_without_a_name_runs_into_out_scene(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sim = rodsim.Simulation(SCENE_TEXT)
    assert Path(sim.output_dir).resolve() == (tmp_path / "out" / "scene").resolve()
    sim.close()


@pytest.mark.parametrize("scene", SCENES, ids=lambda p: str(p.relative_to(ROOT / "scenes")))
def test_every_shipped_scene_round_trips(scene, tmp_path, monkeypatch):
    d = rodsim.scene.load(scene)
    text = rodsim.scene.dumps(d)
    assert tomllib.loads(text) == d  # the same data, value for value (floats by repr: exact)
    # The kernel builds the same world from the dict as from the file: a scene's relative paths
    # resolve against the current directory for a dict, against the file's folder for a file.
    monkeypatch.chdir(scene.parent)
    from_file = rodsim.Simulation(scene, output=tmp_path / "file")
    from_dict = rodsim.Simulation(d, output=tmp_path / "dict")
    for a, b in ((from_file, from_dict),):
        assert (a.dt, a.duration, a.total_steps, a.rod_names) == (b.dt, b.duration, b.total_steps, b.rod_names)
        for name in a.rod_names:
            ra, rb = a.rod(name), b.rod(name)
            assert ra.model == rb.model
            for q in ("positions", "velocities", "mass", "radius", "directors"):
                assert np.array_equal(getattr(ra, q), getattr(rb, q)), (name, q)
        assert a.adjustable_parameters() == b.adjustable_parameters()
    from_file.close()
    from_dict.close()


def test_dumps_writes_toml_values_exactly():
    scene = {"simulation": {"duration": 0.1, "dt": 1e-7, "name": 'a "quoted"\\ name\t\x7f', "seed": 3},
             "rod": [{"name": "r", "geometry": {"shape": "straight", "start": np.array([0.0, 1e300, -2.5])},
                      "flag": True, "k": np.float64(0.1 + 0.2), "n": np.int64(7)}],
             "strange key": {"x": [1, 2.5, math.inf, -math.inf]}}
    text = rodsim.scene.dumps(scene)
    back = tomllib.loads(text)
    assert back["simulation"] == scene["simulation"]
    assert back["rod"][0]["geometry"]["start"] == [0.0, 1e300, -2.5]
    assert back["rod"][0]["k"] == 0.1 + 0.2 and back["rod"][0]["n"] == 7 and back["rod"][0]["flag"] is True
    assert back["strange key"]["x"] == [1, 2.5, math.inf, -math.inf]
    # One key of a section per line, nested tables inline.
    assert "[[rod]]\nname = \"r\"\ngeometry = {shape = \"straight\", start = [0.0, 1e+300, -2.5]}\n" in text
    with pytest.raises(TypeError, match="scene value"):
        rodsim.scene.dumps({"simulation": {"x": object()}})
    with pytest.raises(TypeError, match="a scene is a dict"):
        rodsim.scene.dumps([1])


def test_load_reports_toml_errors_with_line_and_column(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[simulation]\nduration = = 1\n")
    with pytest.raises(rodsim.InputError, match=rf"^{bad}:2:\d+: TOML syntax error"):
        rodsim.scene.load(bad)


def test_text_errors_are_located_in_the_string():
    with pytest.raises(rodsim.InputError, match=r"^<string>:13:9: rod 'beam' \(der\): 'nodes' expects integer"):
        rodsim.Simulation(SCENE_TEXT.replace("nodes = 21", 'nodes = "21"'))
    with pytest.raises(rodsim.InputError, match=r"^<string>:\d+:\d+: TOML syntax error"):
        rodsim.Simulation(SCENE_TEXT.replace("nodes = 21", "nodes = = 21"))


def test_dict_errors_are_located_by_key_path(tmp_path):
    d = rodsim.scene.loads(SCENE_TEXT)
    d["rod"][0]["nodes"] = "21"
    with pytest.raises(rodsim.InputError, match=r"^<dict> rod\[0\]\.nodes: .*'nodes' expects integer"):
        rodsim.Simulation(d, output=tmp_path / "a")
    d = rodsim.scene.loads(SCENE_TEXT)
    d["rod"][0]["geometry"]["start"] = [0, 0]
    with pytest.raises(rodsim.InputError, match=r"<dict> rod\[0\]\.geometry\.start"):
        rodsim.Simulation(d, output=tmp_path / "b")
    d = rodsim.scene.loads(SCENE_TEXT)
    d["simulation"]["dt"] = -1.0
    with pytest.raises(rodsim.InputError, match=r"^<dict> simulation\.dt: "):
        rodsim.Simulation(d, output=tmp_path / "c")
    d = rodsim.scene.loads(SCENE_TEXT)
    d["constraint"][0]["rod"] = "bean"
    with pytest.raises(rodsim.InputError, match=r"^<dict> constraint\[0\]\.rod: .*no rod named 'bean'"):
        rodsim.Simulation(d, output=tmp_path / "d")
    d = rodsim.scene.loads(SCENE_TEXT)
    d["rod"][0]["raduis"] = 0.01
    with pytest.raises(rodsim.InputError, match=r"^<dict> rod\[0\]\.raduis: .*unknown key 'raduis'.*did you mean 'radius'"):
        rodsim.Simulation(d, output=tmp_path / "e")
    d = rodsim.scene.loads(SCENE_TEXT)
    del d["simulation"]
    with pytest.raises(rodsim.InputError, match=r"^<dict>: missing required section \[simulation\]"):
        rodsim.Simulation(d, output=tmp_path / "f")
    assert not any((tmp_path / x).exists() for x in "abcdef")  # nothing written for bad input
    with pytest.raises(TypeError, match="expected a path"):
        rodsim.Simulation(42)


def test_which_strings_are_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # An existing file wins, even with '=' in its name.
    odd = tmp_path / "a=b.toml"
    odd.write_text(SCENE_TEXT)
    rodsim.Simulation("a=b.toml", output="o1").close()
    # No newline, no '=': a path, and a missing one says so.
    with pytest.raises(rodsim.InputError, match="missing.toml"):
        rodsim.Simulation("missing.toml")


def test_relative_paths_in_text_resolve_against_the_current_directory(tmp_path, monkeypatch):
    pts = tmp_path / "data"
    pts.mkdir()
    np.savetxt(pts / "pts.csv", np.column_stack([np.linspace(0, 1, 21), np.zeros(21), np.zeros(21)]), delimiter=",")
    d = rodsim.scene.loads(SCENE_TEXT)
    d["rod"][0]["geometry"] = {"shape": "points", "file": "data/pts.csv"}
    monkeypatch.chdir(tmp_path)
    sim = rodsim.Simulation(d, output="out")
    assert np.allclose(sim.rod("beam").positions[:, 0], np.linspace(0, 1, 21))
    sim.close()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(rodsim.InputError, match=r"<dict> rod\[0\]\.geometry.*pts\.csv"):
        rodsim.Simulation(d, output="out")


def test_set_values_apply_to_text_and_dicts(tmp_path):
    d = rodsim.scene.loads(SCENE_TEXT)
    sim = rodsim.Simulation(d, set={"simulation.duration": 0.01}, output=tmp_path / "o")
    assert sim.total_steps == 10
    sim.close()
    # A --set error names the --set key whatever the scene's form.
    with pytest.raises(rodsim.InputError, match=r"<--set simulation\.dt>"):
        rodsim.Simulation(d, set={"simulation.dt": float("nan")}, output=tmp_path / "p")
