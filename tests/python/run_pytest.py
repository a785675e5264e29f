"""Runs one pytest file for CTest; exit status 77 (CTest: skipped) when pytest or NumPy is missing."""
import importlib.util
import sys

missing = [m for m in ("pytest", "numpy") if importlib.util.find_spec(m) is None]
if missing:
    print(f"skipped: {', '.join(missing)} not installed for {sys.executable}")
    sys.exit(77)
import pytest  # noqa: E402

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]]))
