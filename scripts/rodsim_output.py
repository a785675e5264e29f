"""The reader of a run's files for the plotting scripts: python/rodsim/output.py itself (the one
Python reader, `rodsim.read_output`), loaded from the source tree without the compiled rodsim
module. Installed, share/rodsim/rodsim_output.py is a copy of that file and this one is not used.

    import rodsim_output
    rodsim_output.read_timeseries("out/knot")["t"]; rodsim_output.read_summary("out/knot")["status"]
"""
import importlib.util
import sys
from pathlib import Path

_source = Path(__file__).resolve().parent.parent / "python" / "rodsim" / "output.py"
_spec = importlib.util.spec_from_file_location(__name__, _source)
_module = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _module
_spec.loader.exec_module(_module)
