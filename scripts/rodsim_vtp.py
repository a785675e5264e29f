"""The VTK frames of a rodsim run (vtk/frame_<k>.vtp) for the plotting scripts, in either encoding:
ascii, or the default binary one (appended raw arrays compressed in vtkZLibDataCompressor's layout,
docs/scene-format.md). Standard library only; written apart from the C++ reader (libs/vtp), so
the tests can check one against the other.

    from rodsim_vtp import read_vtp, read_pvd
    frame = read_vtp("out/knot/vtk/frame_3.vtp")
    frame["Points"]            # list of (x, y, z)
    frame["velocity"]          # list of tuples (3 components) ; frame["radius"]: list of floats
    frame["polylines"]         # per rod, the point indices of its polyline
    read_pvd("out/knot")       # [(time, path of the frame), ...]
"""
import re
import struct
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

_TYPES = {"Float64": "d", "Float32": "f", "Int64": "q", "Int32": "i", "UInt64": "Q", "UInt32": "I"}
# The C++ reader's bounds (libs/vtp/include/rodsim/vtp/polydata.h): a frame is a regular file of at
# most 256 MiB, and what its arrays inflate to is at most 1 GiB and 1032 times the file (deflate's
# largest ratio); a collection (.pvd) at most 128 MiB.
MAX_FRAME_BYTES = 256 << 20
MAX_INFLATED_BYTES = 1 << 30
MAX_INFLATE_RATIO = 1032
MAX_PVD_BYTES = 128 << 20


def _read_bounded(path, limit):
    """The bytes of a regular file of at most `limit` bytes (ValueError naming it otherwise)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: not a regular file")
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{path}: {size} bytes, more than the {limit} a rodsim file may have")
    with open(path, "rb") as f:
        return f.read(limit + 1)[:limit]


def _attributes(tag):
    return dict(re.findall(r'(\w+)="([^"]*)"', tag))


def _appended_bytes(data, offset, header, compressed, budget):
    """The uncompressed bytes of the array at `offset` in the appended section `data`; budget[0] is
    what the frame's arrays may still inflate to, checked against the sizes the header declares
    before anything is inflated, and no block inflates beyond its declared size."""
    word = struct.calcsize(header)
    if not compressed:
        (size,) = struct.unpack_from("<" + header, data, offset)
        return data[offset + word:offset + word + size]
    blocks, block_size, last_size = struct.unpack_from("<3" + header, data, offset)
    if 3 + blocks > len(data) // word:
        raise ValueError(f"{blocks} compressed blocks declared in a section of {len(data)} bytes")
    sizes = struct.unpack_from(f"<{blocks}{header}", data, offset + 3 * word)
    declared = (blocks - 1) * block_size + (last_size or block_size) if blocks else 0
    if declared > budget[0]:
        raise ValueError(f"the arrays inflate to more than the frame may ({declared} bytes declared)")
    budget[0] -= declared
    at = offset + (3 + blocks) * word
    out = bytearray()
    for b, size in enumerate(sizes):
        expected = last_size if (b == blocks - 1 and last_size) else block_size
        block = zlib.decompressobj().decompress(data[at:at + size], expected + 1)
        if len(block) != expected:
            raise ValueError(f"compressed block {b} inflates to {len(block)} bytes, not {expected}")
        out += block
        at += size
    return bytes(out)


def read_vtp(path):
    """Every array of a frame: 'Points' and the point data as lists (tuples for vectors),
    'connectivity', 'offsets' and 'polylines' (the point indices of each rod)."""
    raw = _read_bounded(path, MAX_FRAME_BYTES)
    budget = [min(MAX_INFLATED_BYTES, MAX_INFLATE_RATIO * len(raw))]
    marker = raw.find(b"<AppendedData")
    xml_part = raw if marker < 0 else raw[:marker]
    appended = b""
    if marker >= 0:
        start = raw.index(b"_", marker) + 1
        appended = raw[start:]
    text = xml_part.decode("utf-8")
    file_tag = _attributes(re.search(r"<VTKFile[^>]*>", text).group(0))
    header = "Q" if file_tag.get("header_type") == "UInt64" else "I"
    compressed = file_tag.get("compressor") == "vtkZLibDataCompressor"
    out = {}
    section = None
    for m in re.finditer(r"<(/?)(\w+)([^>]*)>", text):
        closing, name, rest = m.group(1), m.group(2), m.group(3)
        if name in ("Points", "PointData", "Lines", "CellData", "Verts", "Polys", "Strips", "FieldData"):
            section = None if closing or rest.endswith("/") else name
            continue
        if name != "DataArray" or closing:
            continue
        a = _attributes(rest)
        kind = _TYPES[a["type"]]
        if a["format"] == "ascii":
            body = text[m.end():text.index("</DataArray>", m.end())]
            values = [float(v) for v in body.split()]
        elif a["format"] == "appended":
            data = _appended_bytes(appended, int(a["offset"]), header, compressed, budget)
            values = list(struct.unpack(f"<{len(data) // struct.calcsize(kind)}{kind}", data))
        else:
            raise ValueError(f"{path}: DataArray format {a['format']} is not supported")
        key = "Points" if section == "Points" else a.get("Name", "")
        if section == "Lines":
            values = [int(v) for v in values]
        n = int(a.get("NumberOfComponents", "1"))
        out[key] = values if n == 1 else [tuple(values[i:i + n]) for i in range(0, len(values), n)]
    starts = [0] + out.get("offsets", [])[:-1]
    out["polylines"] = [out["connectivity"][s:e] for s, e in zip(starts, out.get("offsets", []))]
    return out


def read_pvd(run_dir):
    """(time, frame path) of every frame of a run, from its vtk/*.pvd collection."""
    pvd = next((Path(run_dir) / "vtk").glob("*.pvd"))
    root = ET.fromstring(_read_bounded(pvd, MAX_PVD_BYTES))
    return [(float(d.get("timestep")), pvd.parent / d.get("file")) for d in root.iter("DataSet")]


if __name__ == "__main__":  # prints a frame's arrays: python3 scripts/rodsim_vtp.py FRAME.vtp
    import sys

    for key, values in read_vtp(sys.argv[1]).items():
        print(key, len(values), values[:2])
