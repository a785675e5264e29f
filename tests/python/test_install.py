"""`cmake --install` puts the package under the prefix's Python path, and the installed module uses the
plugins installed with it."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


def test_the_installed_module_runs_with_the_installed_plugins(tmp_path):
    build = os.environ.get("RODSIM_BINARY_DIR")
    relative = os.environ.get("RODSIM_PYTHON_INSTALL_DIR")
    if not build or not relative:
        pytest.skip("run by CTest (RODSIM_BINARY_DIR, RODSIM_PYTHON_INSTALL_DIR)")
    prefix = tmp_path / "prefix"
    r = subprocess.run(["cmake", "--install", build, "--prefix", str(prefix)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    site = prefix / relative
    assert (site / "rodsim" / "__init__.py").exists()
    script = f"""
import rodsim
assert rodsim.__file__.startswith({str(site)!r}), rodsim.__file__
# The installed plugins come first in the search order: they provide the types (the build tree's, found
# later, are ignored duplicates, as for the installed rodsim).
assert rodsim.plugin_search_path()[0].startswith({str(prefix)!r}), rodsim.plugin_search_path()
assert ", {str(prefix)}/lib/" in rodsim.describe("point-load"), rodsim.describe("point-load")
sim = rodsim.Simulation({str(ROOT / 'scenes/validation/cantilever_small_load.toml')!r}, output={str(tmp_path / 'out')!r})
sim.run()
print(sim.status)
"""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RODSIM_PLUGIN_PATH")}
    env["PYTHONPATH"] = str(site)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
    assert Path(tmp_path / "out/final.csv").exists()
