#!/usr/bin/python3
"""Checks that a binary frame and an ascii frame of the same state hold the same numbers, read with
scripts/rodsim_vtp.py (apart from the C++ reader). Usage: compare_encodings.py BINARY.vtp ASCII.vtp"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import rodsim_vtp  # noqa: E402

binary, ascii = (rodsim_vtp.read_vtp(p) for p in sys.argv[1:3])
if open(sys.argv[1], "rb").read().find(b'compressor="vtkZLibDataCompressor"') < 0:
    sys.exit("the first file is not zlib-compressed")
if sorted(binary) != sorted(ascii):
    sys.exit(f"arrays differ: {sorted(binary)} vs {sorted(ascii)}")
flat = lambda values: [v for item in values for v in (item if isinstance(item, (tuple, list)) else (item,))]
for name in binary:
    digits = 6 if name == "director_m1" else 9
    b = [f"{v:.{digits}g}" if isinstance(v, float) else str(v) for v in flat(binary[name])]
    a = [f"{v:.{digits}g}" if isinstance(v, float) else str(v) for v in flat(ascii[name])]
    if b != a:
        sys.exit(f"{name}: {b[:6]} vs {a[:6]}")
print("same numbers")
