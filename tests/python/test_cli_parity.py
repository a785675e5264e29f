"""A scene run from Python writes what `rodsim run` writes: final.csv bit for bit, timeseries.csv
bit for bit but for the wall-clock column, the same VTK frames."""
import csv
import io

import pytest
import rodsim
from conftest import ROOT, run_cli

SCENES = [
    # (scene, --set values): a static solve, an explicit cosserat run, an implicit DER run with contact
    ("scenes/validation/cantilever_small_load.toml", {}),
    ("scenes/validation/cosserat_timoshenko.toml", {"simulation.duration": 0.2, "output.every": 0.05}),
    ("scenes/flagella/m2.toml", {"simulation.duration": 0.02, "output.every": 0.01, "contact.friction": 0.3}),
]


def without_wall_time(text):
    """The rows without the columns of wall-clock times (wall_ms, a force's own <name>.*_ms)."""
    rows = list(csv.reader(io.StringIO(text)))
    keep = [i for i, name in enumerate(rows[0]) if not name.endswith("_ms")]
    return [[r[i] for i in keep] for r in rows]


@pytest.mark.parametrize("scene,sets", SCENES, ids=[s[0].split("/")[-1] for s in SCENES])
def test_python_run_writes_the_cli_files(tmp_path, rodsim_exe, scene, sets):
    cli_out, py_out = tmp_path / "cli", tmp_path / "py"
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    status, text = run_cli(rodsim_exe, "run", ROOT / scene, *args, "--quiet", "--output", cli_out)
    assert status == 0, text

    sim = rodsim.Simulation(ROOT / scene, set=sets, output=py_out)
    sim.run()
    assert sim.finished and sim.status == "ok"

    assert (py_out / "final.csv").read_bytes() == (cli_out / "final.csv").read_bytes()
    assert without_wall_time((py_out / "timeseries.csv").read_text()) == \
        without_wall_time((cli_out / "timeseries.csv").read_text())
    cli_frames = sorted(p.name for p in (cli_out / "vtk").glob("*.vtp"))
    assert cli_frames == sorted(p.name for p in (py_out / "vtk").glob("*.vtp"))
    for name in cli_frames:
        assert (py_out / "vtk" / name).read_bytes() == (cli_out / "vtk" / name).read_bytes()


def test_stepping_in_pieces_is_the_same_run(tmp_path):
    scene, sets = SCENES[1]
    whole = rodsim.Simulation(ROOT / scene, set=sets, output=tmp_path / "whole")
    whole.run()
    pieces = rodsim.Simulation(ROOT / scene, set=sets, output=tmp_path / "pieces")
    pieces.step()
    pieces.step(9)
    pieces.run(until=0.1)
    assert pieces.step_count == 100 and abs(pieces.time - 0.1) < 1e-12
    pieces.run()
    assert (tmp_path / "pieces/final.csv").read_bytes() == (tmp_path / "whole/final.csv").read_bytes()


def test_read_output_reads_what_the_run_wrote(tmp_path):
    scene, sets = SCENES[1]
    sim = rodsim.Simulation(ROOT / scene, set=sets, output=tmp_path / "out")
    sim.run()
    out = rodsim.read_output(tmp_path / "out")
    assert out.summary["status"] == "ok" and out.summary["steps"] == 200
    assert out.timeseries["step"].shape == (201,)
    assert out.timeseries["tip_z"][-1] == pytest.approx(sim.rod("beam").positions[-1, 2], abs=1e-12)
    assert (out.final["beam"] == sim.rod("beam").positions).all()  # final.csv keeps every digit
    assert len(out.frames) == 5
    frame = out.frame(len(out.frames) - 1)
    assert frame["points"].shape == (129, 3)
    assert abs(frame["points"] - sim.rod("beam").positions).max() < 1e-12
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    df = rodsim.read_output(tmp_path / "out", dataframe=True).timeseries
    assert list(df.columns) == list(out.timeseries) and len(df) == 201
