"""Scenes as Python dicts: read a scene file into a dict, write a dict as a scene file's TOML.

    import rodsim
    scene = rodsim.scene.load("scenes/cantilever.toml")   # {"simulation": {...}, "rod": [{...}], ...}
    scene["rod"][0]["nodes"] = 41
    sim = rodsim.Simulation(scene)                         # validated as the file would be
    text = rodsim.scene.dumps(scene)                       # the TOML text of the dict

The dict has the TOML file's structure (docs/scene-format.md): a section such as [simulation] is a
dict, an array of tables such as [[rod]] a list of dicts, and values are numbers, booleans, strings,
lists (NumPy arrays too) and dicts (inline tables). dumps(load(f)) describes the same scene as f.

dumps writes one key of a section per line, nested tables inline, so that every value has its own
line and column: a scene error in that text is mapped back to the dict's key path (`rod[1].nodes`,
`rod[0].geometry.start[2]`) when rodsim.Simulation builds a dict.
"""
import datetime as _datetime
import math as _math
import re as _re

__all__ = ["load", "loads", "dumps"]

try:  # Python >= 3.11
    import tomllib as _tomllib
except ModuleNotFoundError:  # pragma: no cover - older Pythons with the tomli backport
    try:
        import tomli as _tomllib
    except ModuleNotFoundError:
        _tomllib = None


def _need_tomllib():
    if _tomllib is None:
        raise RuntimeError("rodsim.scene.load needs Python >= 3.11 (tomllib) or the tomli package")
    return _tomllib


def load(path):
    """The scene file at `path` (str or pathlib.Path) as a dict. A TOML syntax error raises
    rodsim.InputError naming the file, line and column."""
    with open(path, "rb") as f:
        data = f.read()
    return _parse(data.decode("utf-8"), str(path))


def loads(text):
    """A scene's TOML text as a dict."""
    return _parse(text, "<string>")


def _parse(text, origin):
    toml = _need_tomllib()
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as e:
        from ._rodsim import InputError
        # tomllib's message ends in "(at line L, column C)"; the kernel's errors read "FILE:L:C: ...".
        m = _re.search(r"\(at line (\d+), column (\d+)\)$", str(e))
        where = f"{origin}:{m.group(1)}:{m.group(2)}" if m else origin
        reason = str(e)[:m.start()].strip() if m else str(e)
        raise InputError(f"{where}: TOML syntax error: {reason}") from None


def dumps(scene):
    """The scene dict as TOML text, as a scene file would hold it (see the module's docstring)."""
    return _write(scene)[0]


# ------------------------------------------------------------------------------------ the writer

_BARE_KEY = _re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k):
    if not isinstance(k, str):
        raise TypeError(f"scene keys are strings, found {k!r} ({type(k).__name__})")
    return k if _BARE_KEY.match(k) else _string(k)


def _string(s):
    """A TOML basic string: quotes, backslashes and control characters escaped (TOML 1.0, 2.4)."""
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif c < 0x20 or c == 0x7F:
            out.append(f"\\u{c:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _is_table_array(value):
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, dict) for v in value)


class _Line:
    """One line of the text being written, with the key path of each value that starts on it:
    (column, path), column 1-based as the kernel's messages count."""

    def __init__(self):
        self.parts = []
        self.length = 0
        self.spans = []

    def add(self, text, path=None):
        if path is not None:
            self.spans.append((self.length + 1, path))
        self.parts.append(text)
        self.length += len(text)

    def value(self, value, path):
        """Writes `value`, recording the start of it and of each nested element."""
        if hasattr(value, "tolist") and not isinstance(value, (bool, int, float, str)):  # NumPy
            value = value.tolist()
        if isinstance(value, dict):
            self.add("{", path)
            for i, (k, v) in enumerate(value.items()):
                if i:
                    self.add(", ")
                sub = f"{path}.{k}" if path else str(k)
                self.add(_key(k), sub)
                self.add(" = ")
                self.value(v, sub)
            self.add("}")
        elif isinstance(value, (list, tuple)):
            self.add("[", path)
            for i, v in enumerate(value):
                if i:
                    self.add(", ")
                self.value(v, f"{path}[{i}]")
            self.add("]")
        else:
            self.add(_toml_value(value), path)

    def text(self):
        return "".join(self.parts)


def _write(scene):
    """(text, lines): the TOML text and, per line, its (column, key path) spans."""
    if not isinstance(scene, dict):
        raise TypeError(f"a scene is a dict, found {type(scene).__name__}")
    lines = []

    def line():
        lines.append(_Line())
        return lines[-1]

    # Keys that are neither tables nor arrays of tables come before the first header (TOML's rule).
    plain = [(k, v) for k, v in scene.items() if not isinstance(v, dict) and not _is_table_array(v)]
    for k, v in plain:
        ln = line()
        ln.add(_key(k), k)
        ln.add(" = ")
        ln.value(v, k)

    def section(header, path, table):
        if lines:
            line()  # a blank line between sections, as a scene file has
        ln = line()
        ln.add(header, path)
        for k, v in table.items():
            ln = line()
            sub = f"{path}.{k}"
            ln.add(_key(k), sub)
            ln.add(" = ")
            ln.value(v, sub)

    for k, v in scene.items():
        if isinstance(v, dict):
            section(f"[{_key(k)}]", k, v)
        elif _is_table_array(v):
            for i, t in enumerate(v):
                section(f"[[{_key(k)}]]", f"{k}[{i}]", t)
    return "".join(ln.text() + "\n" for ln in lines), [ln.spans for ln in lines]


def _key_path_at(spans, line, column):
    """The key path of the value written at (line, column) (1-based), or None."""
    if not 1 <= line <= len(spans):
        return None
    best = None
    for col, path in spans[line - 1]:
        if col <= column:
            best = path
    if best is None and spans[line - 1]:
        best = spans[line - 1][0][1]
    return best


def _locate_dict_error(message, spans, origin="<dict>"):
    """A kernel message about the text dumps wrote, its '<dict>:L:C' places replaced by key paths."""
    def repl(m):
        path = _key_path_at(spans, int(m.group(1)), int(m.group(2)))
        return f"{origin} {path}" if path else m.group(0)
    return _re.sub(_re.escape(origin) + r":(\d+):(\d+)", repl, message)


def _toml_value(value):
    """A Python value as TOML text: a scene value, or what `--set KEY=VALUE` parses
    (docs/scene-format.md)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if _math.isnan(value):
            return "nan"
        if _math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(float(value))  # the shortest text that reads back as the same double (np.float64 too)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (_datetime.datetime, _datetime.date, _datetime.time)):
        return value.isoformat()  # what tomllib reads TOML's dates and times as
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "tolist"):  # NumPy arrays and scalars
        return _toml_value(value.tolist())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} ({type(value).__name__}) as a scene value")
