"""The `rodsim` command of a pip-installed package (the wheel's console script, python/build_backend).

The wheel carries the rodsim executable in rodsim/_install/bin/ with its plugins and scripts around it
as an install prefix (python/CMakeLists.txt: RODSIM_WHEEL_PREFIX), because the executable finds them
from its own path. The console script pip writes into the environment's bin/ replaces itself by that
executable with the same arguments: same exit status, signals and output as the executable itself.
"""
import os
import sys
from pathlib import Path

EXECUTABLE = Path(__file__).resolve().parent / "_install" / "bin" / "rodsim"


def main():
    if not os.access(EXECUTABLE, os.X_OK):
        # A `cmake --install` has the package but installs the command in <prefix>/bin instead.
        sys.exit(f"rodsim: this rodsim package carries no command ({EXECUTABLE} is missing): it was not "
                 "installed with pip; use the rodsim installed with it, <prefix>/bin/rodsim")
    os.execv(EXECUTABLE, ["rodsim", *sys.argv[1:]])
