"""Errors: scene errors carry the CLI's file:line:column text; a failed step raises with the reason and
leaves the state up to it readable."""
import struct
import zlib

import numpy as np
import pytest
import rodsim
from conftest import cantilever, run_cli


def test_scene_error_carries_the_cli_location(tmp_path, rodsim_exe):
    scene = cantilever(tmp_path)
    text = scene.read_text().replace("youngs_modulus = 1000000000.0", "youngs_modulus = -1.0")
    scene.write_text(text)
    line = text.splitlines().index("youngs_modulus = -1.0") + 1
    status, cli = run_cli(rodsim_exe, "check", scene)
    assert status == 2
    with pytest.raises(rodsim.InputError) as e:
        rodsim.Simulation(scene, output=tmp_path / "out")
    message = str(e.value)
    assert f"{scene}:{line}:" in message
    assert cli.strip() == f"rodsim: error: {message}"
    assert not (tmp_path / "out").exists()  # nothing written


def test_set_error_names_the_set_value(tmp_path):
    with pytest.raises(rodsim.InputError, match="--set"):
        rodsim.Simulation(cantilever(tmp_path), set={"rod.beam.nodes": "many"}, output=tmp_path / "out")


def test_unknown_rod_and_parameter(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path), output=tmp_path / "out")
    with pytest.raises(KeyError, match="did you mean 'beam'"):
        sim.rod("bean")
    with pytest.raises(ValueError, match="no parameters that can change"):
        sim.set_parameter("root.nodes", 3)
    sim.close()


def test_failed_step_raises_and_keeps_the_state(tmp_path):
    def breaks_at_10ms(t, x, v):
        if t > 0.0105:
            raise ValueError("the prototype gave up")
        return np.zeros_like(x)

    sim = rodsim.Simulation(cantilever(tmp_path), output=tmp_path / "out",
                            forces=[rodsim.PythonForce("proto", breaks_at_10ms, rod="beam")])
    with pytest.raises(rodsim.SimulationError, match="the prototype gave up") as e:
        sim.run()
    assert "step 11" in str(e.value) and "Python force 'proto'" in str(e.value)
    assert sim.step_count == 10 and sim.time == pytest.approx(0.01)
    assert sim.rod("beam").positions.shape == (21, 3)
    assert sim.finished and sim.status == "failed"
    out = rodsim.read_output(tmp_path / "out")
    assert out.summary["status"] == "failed" and "the prototype gave up" in out.summary["reason"]
    assert len(out.timeseries["step"]) == 11


def test_two_threads_stepping_one_simulation_take_turns(tmp_path):
    # Issue 43: two threads in step() of one Simulation ran the solver on one state at once
    # ("double free or corruption", the interpreter aborted). Every call holds the Simulation's lock.
    import threading
    sim = rodsim.Simulation(cantilever(tmp_path, duration=1.0), output=tmp_path / "out", quiet=True)
    errors = []

    def stepper():
        try:
            for _ in range(20):
                sim.step(2)
                sim.rod("beam").positions
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=stepper) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sim.step_count == 4 * 20 * 2
    assert np.isfinite(sim.rod("beam").positions).all()
    sim.close()


def test_run_until_nan_raises_instead_of_spinning(tmp_path):
    sim = rodsim.Simulation(cantilever(tmp_path), output=tmp_path / "out", quiet=True)
    with pytest.raises(ValueError, match="not NaN"):
        sim.run(until=float("nan"))
    assert sim.step_count == 0
    sim.run(until=2 * sim.dt)  # still usable
    assert sim.step_count == 2
    sim.close()


def test_a_python_force_using_a_simulation_another_thread_steps_fails_instead_of_hanging(tmp_path):
    # The stepping thread holds the Simulation's lock while the solver calls the force; a force run
    # on a solver's worker thread that waited for that lock would wait forever. It fails instead.
    import threading
    busy = rodsim.Simulation(cantilever(tmp_path, duration=100.0, name="busy.toml"), output=tmp_path / "busy", quiet=True)
    started, stop = threading.Event(), threading.Event()

    class Stop(Exception):
        pass

    def tick(sim):
        started.set()
        if stop.is_set():
            raise Stop()

    busy.every(1, tick)

    def runner():
        try:
            busy.run()
        except Stop:
            pass

    thread = threading.Thread(target=runner)
    thread.start()
    assert started.wait(30)
    sim = rodsim.Simulation(cantilever(tmp_path, duration=0.01), output=tmp_path / "out", quiet=True,
                            forces=[rodsim.PythonForce("peek", lambda t, x, v: busy.time and None, rod="beam")])
    try:
        with pytest.raises(rodsim.SimulationError, match="another thread is stepping"):
            sim.step()
    finally:
        stop.set()
        thread.join()


def test_plugins_paths_among_the_sets_is_honoured(tmp_path, rodsim_exe):
    # Issue 43: the module loaded the plugins from the scene's own [plugins] paths only, so a
    # plugins.paths among the sets was silently ignored; it applies as `--set plugins.paths=` does.
    scene = cantilever(tmp_path)
    missing = tmp_path / "nowhere" / "rodsim-x.so"
    status, cli = run_cli(rodsim_exe, "check", scene, "--set", f'plugins.paths=["{missing}"]')
    assert status == 2 and str(missing) in cli
    with pytest.raises(rodsim.InputError) as e:
        rodsim.Simulation(scene, set={"plugins.paths": [str(missing)]}, output=tmp_path / "out")
    assert f"{missing}' (from the scene's [plugins] paths) does not exist" in str(e.value)
    assert not (tmp_path / "out").exists()


def test_read_output_bounds_the_files_it_reads(tmp_path):
    # Issue 43: read_output read summary.json, timeseries.csv and final.csv whole, whatever they were
    # (/dev/zero: until memory ran out). They must be regular files of bounded size.
    out = tmp_path / "out"
    with rodsim.Simulation(cantilever(tmp_path), output=out) as sim:
        sim.run()
    assert len(rodsim.read_output(out).timeseries["t"]) > 1
    for name in ("summary.json", "timeseries.csv", "final.csv"):
        (out / name).rename(tmp_path / name)
        (out / name).symlink_to("/dev/zero")
        with pytest.raises(ValueError, match=f"{out / name}: not a regular file"):
            rodsim.read_output(out)
        (out / name).unlink()
        (tmp_path / name).rename(out / name)


def test_vtp_reader_bounds_the_frames_it_reads(tmp_path):
    # Issue 43: rodsim.vtp (the plotting scripts' frame reader) read a frame whole and inflated its
    # blocks without a cap. It keeps the C++ reader's bounds: a regular file, and no more inflated
    # than the frame may declare.
    from rodsim import vtp
    out = tmp_path / "out"
    with rodsim.Simulation(cantilever(tmp_path), output=out) as sim:
        sim.run()
    frames = vtp.read_pvd(out)
    assert len(frames) > 1 and len(vtp.read_vtp(frames[-1][1])["Points"]) > 1
    zero = tmp_path / "zero.vtp"
    zero.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="not a regular file"):
        vtp.read_vtp(zero)
    # One compressed block declared as 1 GiB in a frame of a few hundred bytes (a zlib stream that
    # would inflate that far): refused before anything is inflated.
    bomb = tmp_path / "bomb.vtp"
    bomb.write_bytes(b'<VTKFile type="PolyData" header_type="UInt64" compressor="vtkZLibDataCompressor">'
                     b'<PolyData><Piece NumberOfPoints="1"><Points><DataArray type="Float64" '
                     b'NumberOfComponents="3" format="appended" offset="0"/></Points></Piece></PolyData>'
                     b'<AppendedData encoding="raw">_' + struct.pack("<4Q", 1, 1 << 30, 1 << 30, 16) +
                     zlib.compress(b"\0" * 4096) + b"</AppendedData></VTKFile>")
    with pytest.raises(ValueError, match="inflate to more than the frame may"):
        vtp.read_vtp(bomb)
