"""rodsim's PEP 517 build backend: `pip install .` and `pip wheel .` with nothing downloaded.

pyproject.toml names this module (build-backend, backend-path) and requires nothing, so pip needs no
package index to build rodsim: this file uses the standard library only. It

1. builds the CMake targets `rodsim rodsim_plugins rodsim_python` (the command, its plugins, the
   extension) for the Python that runs it (-DPython3_EXECUTABLE=sys.executable):
   - in a build directory of the caller's when one is given (`--config-settings=build-dir=DIR` or the
     environment variable RODSIM_CMAKE_BUILD_DIR): an existing one is reused as it is configured, never
     reconfigured with other options (an up-to-date build costs seconds); a new one is configured as
     below and kept for the next install; with `--config-settings=build=no` (or RODSIM_CMAKE_BUILD=no)
     nothing is built: the directory's files are packaged as they are;
   - otherwise in a temporary directory, configured Release, unity build, without tests, benchmarks
     and MPI, with Ninja when installed (extra options: `--config-settings=cmake-args="-DX=Y ..."` or
     RODSIM_CMAKE_ARGS);
2. copies into the wheel the files CMake lists in <build>/python/wheel_files.txt (python/CMakeLists.txt):
   the package rodsim/ with its extension, and rodsim/_install/ laid out as an install prefix (bin/rodsim,
   the plugins, share/rodsim) so that the command finds its plugins and scripts from its own path;
3. writes the wheel's .dist-info: METADATA from pyproject.toml's [project] table (the version from
   CMakeLists.txt), WHEEL, entry_points.txt (the `rodsim` console script) and RECORD with the sha256 of
   every file. The wheel is tagged for this interpreter and platform (e.g. cp311-cp311-linux_x86_64):
   its binaries link the system's shared libraries (Boost, fmt, toml++, SuiteSparse), so it installs on
   any Python of the same version on a system that has them.

build_sdist archives the files git tracks. No editable installs.
"""
import base64
import csv
import hashlib
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]  # python/build_backend/ -> the checkout
TARGETS = ["rodsim", "rodsim_plugins", "rodsim_python"]
WHEEL_FILES = Path("python") / "wheel_files.txt"  # in the build directory
# The [project] keys this backend turns into metadata; any other would be silently lost, so it is refused.
PROJECT_KEYS = {"name", "dynamic", "description", "requires-python", "license", "dependencies", "scripts"}


class BuildError(Exception):
    """A reason the wheel cannot be built, said to the person running pip."""


# --- PEP 517 hooks ------------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The .dist-info directory alone (no build), which pip reads before it calls build_wheel."""
    project = Project()
    dist_info = Path(metadata_directory) / project.dist_info
    dist_info.mkdir(parents=True, exist_ok=True)
    for name, data in project.dist_info_files():
        (dist_info / name).write_bytes(data)
    return project.dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = Project()
    given = _setting(config_settings, "build-dir", "RODSIM_CMAKE_BUILD_DIR")
    build = _setting(config_settings, "build", "RODSIM_CMAKE_BUILD") or "yes"
    if build not in ("yes", "no"):
        raise BuildError(f"--config-settings=build={build}: expected yes or no")
    if build == "no":
        # The build directory's files as they are, built by its owner (CTest's tests run while other
        # tests use the same binaries, so they must not relink them).
        if not given:
            raise BuildError("--config-settings=build=no packages an existing build: give build-dir too")
        build_dir = (SOURCE / given).resolve()
        _check_source(build_dir)
        return _write_wheel(Path(wheel_directory), project, _wheel_files(build_dir, built=True))
    if given:
        build_dir = (SOURCE / given).resolve()  # a relative path is relative to the checkout
        files = _cmake_build(build_dir, config_settings)
        return _write_wheel(Path(wheel_directory), project, files)
    with tempfile.TemporaryDirectory(prefix="rodsim-wheel-build-") as tmp:
        files = _cmake_build(Path(tmp), config_settings)
        return _write_wheel(Path(wheel_directory), project, files)


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks in this checkout, under rodsim-<version>/, with PKG-INFO."""
    project = Project()
    try:
        listed = subprocess.run(["git", "-C", str(SOURCE), "ls-files", "-z"], check=True,
                                capture_output=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError) as e:
        raise BuildError(f"build_sdist archives the files git tracks: {SOURCE} is not a git checkout ({e})")
    base = f"{project.dist_name}-{project.version}"
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(p for p in listed if p and (SOURCE / p).is_file()):
            tar.add(SOURCE / rel, arcname=f"{base}/{rel}", recursive=False, filter=_normalized)
        pkg_info = project.metadata()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size, info.mode, info.mtime = len(pkg_info), 0o644, _timestamp()
        tar.addfile(info, io.BytesIO(pkg_info))
    return name


# --- the project's metadata ---------------------------------------------------------------------------

class Project:
    """pyproject.toml's [project] table as the wheel's metadata."""

    def __init__(self):
        try:
            import tomllib
        except ModuleNotFoundError:  # Python < 3.11
            try:
                import tomli as tomllib
            except ModuleNotFoundError:
                raise BuildError("reading pyproject.toml needs Python 3.11 (tomllib) or the tomli package") from None
        with open(SOURCE / "pyproject.toml", "rb") as f:
            table = tomllib.load(f).get("project", {})
        unknown = sorted(set(table) - PROJECT_KEYS)
        if unknown:
            raise BuildError(f"pyproject.toml: [project] keys {unknown} are not supported by "
                             f"python/build_backend (it reads {sorted(PROJECT_KEYS)})")
        if table.get("dynamic", []) != ["version"] or "version" in table:
            raise BuildError('pyproject.toml: the version comes from CMakeLists.txt: dynamic = ["version"]')
        self.table = table
        self.name = table["name"]
        self.version = _cmake_project_version()
        # The file names' escaped forms (the wheel and sdist specifications).
        self.dist_name = re.sub(r"[-_.]+", "_", self.name).lower()
        self.dist_info = f"{self.dist_name}-{self.version}.dist-info"
        self.tag = _wheel_tag()

    def metadata(self):
        t = self.table
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
        if "description" in t:
            lines.append(f"Summary: {t['description']}")
        if "requires-python" in t:
            lines.append(f"Requires-Python: {t['requires-python']}")
        if "license" in t:
            lines.append(f"License: {t['license']['text']}")
        lines += [f"Requires-Dist: {d}" for d in t.get("dependencies", [])]
        return ("\n".join(lines) + "\n").encode()

    def dist_info_files(self):
        """(name, bytes) of every .dist-info file but RECORD."""
        wheel = (f"Wheel-Version: 1.0\nGenerator: rodsim_build_backend ({self.version})\n"
                 f"Root-Is-Purelib: false\nTag: {self.tag}\n")
        scripts = "".join(f"{k} = {v}\n" for k, v in self.table.get("scripts", {}).items())
        files = [("METADATA", self.metadata()), ("WHEEL", wheel.encode())]
        if scripts:
            files.append(("entry_points.txt", f"[console_scripts]\n{scripts}".encode()))
        files.append(("LICENSE", (SOURCE / "LICENSE").read_bytes()))
        return files


def _cmake_project_version():
    text = (SOURCE / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*rodsim\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise BuildError("CMakeLists.txt: no project(rodsim VERSION x.y.z) to take the version from")
    return m.group(1)


def _wheel_tag():
    """This interpreter and platform, e.g. cp311-cp311-linux_x86_64: the extension is built for them."""
    if sys.implementation.name != "cpython":
        raise BuildError(f"the rodsim extension is built for CPython, not {sys.implementation.name}")
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{python}-{python}{getattr(sys, 'abiflags', '')}-{platform}"


# --- the CMake build ----------------------------------------------------------------------------------

def _setting(config_settings, key, env):
    value = (config_settings or {}).get(key)
    if value is None:
        value = os.environ.get(env) or None
    if value is not None and not isinstance(value, str):
        raise BuildError(f"--config-settings={key}=... given more than once: {value!r}")
    return value


def _run(cmd, what):
    print(f"rodsim_build_backend: {shlex.join(map(str, cmd))}", file=sys.stderr, flush=True)
    try:
        subprocess.run([str(c) for c in cmd], check=True, stdout=sys.stderr)
    except FileNotFoundError:
        raise BuildError(f"{what}: {cmd[0]} is not installed (scripts/setup.sh installs CMake)") from None
    except subprocess.CalledProcessError as e:
        raise BuildError(f"{what} failed (exit status {e.returncode}); its output is above") from None


def _cmake_build(build_dir, config_settings):
    """Builds the wheel's targets in build_dir (configured first if new); returns [(wheel path, file)]."""
    if (build_dir / "CMakeCache.txt").exists():
        _check_source(build_dir)
        if (build_dir / WHEEL_FILES).exists():  # before building anything for the wrong Python
            _wheel_files(build_dir, built=False)
        print(f"rodsim_build_backend: reusing the CMake build in {build_dir} as configured", file=sys.stderr)
    else:
        # A unity build (each target's sources compiled in batches as one translation unit), as
        # scripts/build.sh makes a new build: from scratch the three targets cost 5.2 min of CPU
        # instead of 8.3 (measured on 2 cores), and a wheel is always built from scratch.
        cmd = ["cmake", "-S", SOURCE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_UNITY_BUILD=ON",
               "-DRODSIM_BUILD_TESTS=OFF", "-DRODSIM_BUILD_BENCHMARKS=OFF", "-DRODSIM_WITH_MPI=OFF",
               f"-DPython3_EXECUTABLE={sys.executable}"]
        if "CMAKE_GENERATOR" not in os.environ and shutil.which("ninja"):
            cmd += ["-G", "Ninja"]
        cmd += shlex.split(_setting(config_settings, "cmake-args", "RODSIM_CMAKE_ARGS") or "")
        _run(cmd, "configuring rodsim with CMake")
        if not (build_dir / WHEEL_FILES).exists():
            raise BuildError("CMake found no Python development files or pybind11 for "
                             f"{sys.executable}, so it does not build the module (Debian: python3-dev "
                             "pybind11-dev, scripts/setup.sh); its output is above")
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run(["cmake", "--build", build_dir, "--target", *TARGETS, "--parallel", jobs], "building rodsim")
    return _wheel_files(build_dir, built=True)


def _check_source(build_dir):
    """An existing build directory must be this checkout's."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.exists():
        raise BuildError(f"{build_dir} is not a CMake build directory (no CMakeCache.txt)")
    home = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", cache.read_text(), re.M)
    if not home or Path(home.group(1)).resolve() != SOURCE:
        raise BuildError(f"{build_dir} is the CMake build of another source tree "
                         f"({home.group(1) if home else 'unknown'}), not of {SOURCE}")


def _wheel_files(build_dir, built):
    """[(path in the wheel, file)] from CMake's list, once the extension is known to be this Python's."""
    listing = build_dir / WHEEL_FILES
    if not listing.exists():
        raise BuildError(f"{listing} is missing: {build_dir} does not build the Python module")
    files = []
    for line in listing.read_text().splitlines():
        dest, src = line.split("\t")
        if built and not Path(src).is_file():
            raise BuildError(f"{src} was not built ({listing})")
        files.append((dest, Path(src)))
    # The extension must be the one for this interpreter: a reused build may be another Python's.
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    extension = [dest for dest, _ in files if dest.startswith("rodsim/_rodsim")]
    if len(extension) != 1 or not extension[0].endswith(suffix):
        raise BuildError(f"{build_dir} builds the extension {', '.join(extension) or '(none)'} for another "
                         f"Python than {sys.executable}, whose extensions end with {suffix}: give a build "
                         "directory configured for this Python, or none")
    return files


# --- the wheel ----------------------------------------------------------------------------------------

def _timestamp():
    """SOURCE_DATE_EPOCH when set (reproducible builds), else 1980-01-01, the earliest a zip holds."""
    return int(os.environ.get("SOURCE_DATE_EPOCH", 315532800))


def _normalized(info):
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = _timestamp()
    return info


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(wheel_directory, project, files):
    name = f"{project.dist_name}-{project.version}-{project.tag}.whl"
    date_time = time.gmtime(max(_timestamp(), 315532800))[:6]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")

    def add(zf, arcname, data, executable):
        info = zipfile.ZipInfo(arcname, date_time)
        info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, data)
        writer.writerow([arcname, _record_hash(data), len(data)])

    wheel_directory.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel_directory / name, "w") as zf:
        for dest, src in sorted(files):
            add(zf, dest, src.read_bytes(), src.stat().st_mode & stat.S_IXUSR)
        for file_name, data in project.dist_info_files():
            add(zf, f"{project.dist_info}/{file_name}", data, False)
        writer.writerow([f"{project.dist_info}/RECORD", "", ""])
        info = zipfile.ZipInfo(f"{project.dist_info}/RECORD", date_time)
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, record.getvalue())
    print(f"rodsim_build_backend: wrote {wheel_directory / name}", file=sys.stderr)
    return name
