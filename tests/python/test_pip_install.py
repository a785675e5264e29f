"""`pip install .` (pyproject.toml, python/build_backend): a venv gets the module, its plugins and the
`rodsim` command; the installed module, given the scene as a dict, and the installed command, given
the TOML file, write the same final.csv bit for bit;
`pip uninstall` removes every file; `pip wheel .` makes a wheel whose RECORD holds, which installs on
another Python of the same version.

The backend packages CTest's build directory as it is (build-dir=RODSIM_BINARY_DIR, build=no: given
through the environment to `pip install`, as --config-settings to `pip wheel`): the test checks what
was built, as every other test does, in seconds, and never relinks a plugin another test has loaded.
Skipped without venv/ensurepip (Debian: python3-venv) or pip (python3-pip)."""
import base64
import csv
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, cantilever

BUILD = os.environ.get("RODSIM_BINARY_DIR")
if not BUILD:
    pytest.skip("run by CTest (RODSIM_BINARY_DIR: the build the backend reuses)", allow_module_level=True)
for module, package in (("venv", "python3-venv"), ("ensurepip", "python3-venv"), ("pip", "python3-pip")):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{sys.executable} has no {module} (Debian: {package})", allow_module_level=True)


def clean_env(**extra):
    """This environment without the build tree's module (CTest's PYTHONPATH) or plugin path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RODSIM_PLUGIN_PATH")}
    env.update(extra)
    return env


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def pip(python, *args, **env):
    """pip of `python`, offline, in the checkout."""
    return run([python, "-m", "pip", "--disable-pip-version-check", "--no-input", "--no-cache-dir", *args],
               env=clean_env(**env), cwd=ROOT)


def make_venv(base_python, where):
    run([base_python, "-m", "venv", "--system-site-packages", where], env=clean_env())
    return where / "bin" / "python"


def site_packages(python):
    return Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"], env=clean_env()).strip())


# Runs the scene with the installed module in a fresh process (argv: scene file, output directory),
# built from the dict rodsim.scene.load reads from the file, and prints where rodsim came from and its
# plugins.
RUN_INSTALLED = """
import json, sys
import rodsim
scene = rodsim.scene.load(sys.argv[1])
assert isinstance(scene, dict) and scene["rod"][0]["nodes"] == 21, scene
sim = rodsim.Simulation(scene, output=sys.argv[2])
sim.run()
print(json.dumps({"module": rodsim.__file__, "search": rodsim.plugin_search_path(),
                  "libraries": [p["library"] for p in rodsim.plugins()], "status": sim.status}))
"""


def run_installed(python, scene, out, cwd):
    return json.loads(run([python, "-c", RUN_INSTALLED, scene, out], env=clean_env(), cwd=cwd))


def installed_files(site):
    """Every file the installed distribution's RECORD lists, as absolute paths."""
    (dist_info,) = site.glob("rodsim-*.dist-info")
    with open(dist_info / "RECORD", newline="") as f:
        return [(site / row[0]).resolve() for row in csv.reader(f)]


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    """A short DER cantilever scene file (21 nodes, implicit Euler, 100 steps)."""
    d = tmp_path_factory.mktemp("scene")
    return cantilever(d, duration=0.1)


def test_pip_install_runs_the_installed_module_and_command_alike_then_uninstalls(scene, tmp_path):
    python = make_venv(sys.executable, tmp_path / "venv")
    pip(python, "install", "--no-index", ".", RODSIM_CMAKE_BUILD_DIR=BUILD, RODSIM_CMAKE_BUILD="no")
    site = site_packages(python)
    package = site / "rodsim"
    plugin_dir = package / "_install" / "lib" / "rodsim" / "plugins"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    # The module, in a new process started outside the checkout: the venv's copy with its own plugins.
    got = run_installed(python, scene, elsewhere / "py", cwd=elsewhere)
    assert got["status"] == "ok", got
    assert Path(got["module"]) == package / "__init__.py"
    assert got["search"] == [str(plugin_dir)]
    assert len(got["libraries"]) >= 10 and all(Path(p).parent == plugin_dir for p in got["libraries"]), got
    # The console script pip wrote runs the bundled command, which finds the same plugins.
    command = python.parent / "rodsim"
    plugins = run([command, "plugins"], env=clean_env(), cwd=elsewhere)
    assert str(plugin_dir) in plugins and str(ROOT) not in plugins, plugins
    run([command, "run", scene, "--output", elsewhere / "cli", "--quiet"], env=clean_env(), cwd=elsewhere)
    assert (elsewhere / "py/final.csv").read_bytes() == (elsewhere / "cli/final.csv").read_bytes()

    # Uninstalled: every file pip installed (RECORD: the package, the command, the dist-info) is gone.
    files = installed_files(site)
    assert command.resolve() in files and plugin_dir / "rodsim-rod_der.so" in files
    pip(python, "uninstall", "-y", "rodsim")
    assert [f for f in files if f.exists()] == []
    assert not package.exists() and list(site.glob("rodsim*")) == []


def test_pip_wheel_has_a_valid_record_and_installs_on_another_python_of_the_same_version(scene, tmp_path):
    pip(sys.executable, "wheel", "--no-index", "--no-deps", "--wheel-dir", tmp_path / "dist", ".",
        f"--config-settings=build-dir={BUILD}", "--config-settings=build=no")
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    version = f"{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert wheel.name.endswith(f"-cp{version}-cp{version}{sys.abiflags}-{platform}.whl"), wheel.name

    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        (record_name,) = [n for n in names if n.endswith(".dist-info/RECORD")]
        dist_info = record_name.rsplit("/", 1)[0]
        rows = list(csv.reader(io.StringIO(zf.read(record_name).decode())))
        # RECORD lists every file of the wheel once, with its sha256 and size (itself without them).
        assert sorted(r[0] for r in rows) == sorted(names)
        for path, digest, size in rows:
            if path == record_name:
                assert digest == size == ""
                continue
            data = zf.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={expected}", len(data)), path
        assert zf.getinfo("rodsim/_install/bin/rodsim").external_attr >> 16 & 0o111, "the command is executable"
        assert "rodsim = rodsim._cli:main" in zf.read(f"{dist_info}/entry_points.txt").decode()
        assert "Root-Is-Purelib: false" in zf.read(f"{dist_info}/WHEEL").decode()
        assert any(n.startswith("rodsim/_install/lib/rodsim/plugins/rodsim-") for n in names)

    other = other_python_of_this_version()
    if other is None:
        pytest.skip(f"no other Python {sys.version_info.major}.{sys.version_info.minor} than {sys.executable} "
                    "to install the wheel on")
    # A venv of the other interpreter, seeing this one's NumPy (same version, same ABI) as it would
    # see its own: a .pth file, the same as --system-site-packages does for the base interpreter.
    python = make_venv(other, tmp_path / "other")
    import numpy
    (site_packages(python) / "numpy_of_the_build_python.pth").write_text(str(Path(numpy.__file__).parents[1]) + "\n")
    pip(python, "install", "--no-index", wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    got = run_installed(python, scene, elsewhere / "py", cwd=elsewhere)
    assert got["status"] == "ok" and Path(got["module"]).is_relative_to(tmp_path / "other"), got
    run([python.parent / "rodsim", "run", scene, "--output", elsewhere / "cli", "--quiet"], env=clean_env())
    assert (elsewhere / "py/final.csv").read_bytes() == (elsewhere / "cli/final.csv").read_bytes()


def other_python_of_this_version():
    """Another CPython interpreter of this major.minor version on PATH (e.g. a pyenv build), or None."""
    name = f"python{sys.version_info.major}.{sys.version_info.minor}"
    ours = Path(sys.base_prefix).resolve()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(d) / name
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            continue
        r = subprocess.run([candidate, "-c", "import sys; print(sys.base_prefix); print(sys.implementation.name)"],
                           capture_output=True, text=True, env=clean_env())
        lines = r.stdout.split()
        if r.returncode == 0 and len(lines) == 2 and Path(lines[0]).resolve() != ours and lines[1] == "cpython":
            return candidate
    return None
