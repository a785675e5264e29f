#!/usr/bin/env python3
"""Follows docs/tutorial.md as written: runs its fenced blocks in order in a temporary directory.

    run_tutorial.py TUTORIAL.md BUILD_DIR [--keep]

Blocks, by their info string:
  ```sh setup          the reader's setup; replaced here by RODSIM_BUILD=BUILD_DIR, PATH and a temporary dir
  ```toml file=NAME    (any language) saved as NAME, as the page tells the reader to
  ```sh                run
  ```sh render         run when povray is installed, skipped otherwise
  ```sh movie          run only with RODSIM_TUTORIAL_MOVIE=1 (half a minute), and when povray and ffmpeg exist
  anything else        (```text, ```python without file=) shown, not run
All blocks become one bash script (set -euo pipefail), so an export or cd carries to the next block.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(.*)$")


def blocks(text):
    """(info string, body) of each fenced block, in order."""
    out, info, body = [], None, []
    for line in text.splitlines():
        m = FENCE.match(line)
        if m and info is None:
            info, body = m.group(1).strip(), []
        elif line.startswith("```") and info is not None:
            out.append((info, "\n".join(body) + "\n"))
            info = None
        elif info is not None:
            body.append(line)
    if info is not None:
        sys.exit(f"run_tutorial: unterminated block ```{info}")
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--keep"]
    if len(args) != 2:
        sys.exit(__doc__)
    page, build = args[0], os.path.abspath(args[1])
    keep = "--keep" in sys.argv
    with open(page, encoding="utf-8") as f:
        parts = blocks(f.read())
    work = tempfile.mkdtemp(prefix="rodsim-tutorial-")
    have_povray = shutil.which("povray") is not None
    have_ffmpeg = shutil.which("ffmpeg") is not None
    movie = os.environ.get("RODSIM_TUTORIAL_MOVIE") == "1"
    script = ["set -euo pipefail"]
    counts = {"run": 0, "files": 0, "skipped": 0, "setup": 0}
    for info, body in parts:
        words = info.split()
        files = [w[len("file="):] for w in words if w.startswith("file=")]
        if files:
            script.append(f"echo '+ (saving {files[0]})'")
            script.append(f"cat > {shlex.quote(files[0])} <<'RODSIM_TUTORIAL_EOF'\n{body}RODSIM_TUTORIAL_EOF")
            counts["files"] += 1
            continue
        if not words or words[0] != "sh":
            continue
        kind = words[1] if len(words) > 1 else "run"
        if kind == "setup":
            script.append(f"export RODSIM_BUILD={shlex.quote(build)}")
            script.append('export PATH="$RODSIM_BUILD/bin:$PATH"')
            script.append(f"cd {shlex.quote(work)}")
            counts["setup"] += 1
            continue
        if kind == "render" and not have_povray:
            script.append("echo 'run_tutorial: povray not installed: render block skipped'")
            counts["skipped"] += 1
            continue
        if kind == "movie" and not (movie and have_povray and have_ffmpeg):
            script.append("echo 'run_tutorial: movie block skipped (RODSIM_TUTORIAL_MOVIE=1 runs it)'")
            counts["skipped"] += 1
            continue
        if kind not in ("run", "render", "movie"):
            sys.exit(f"run_tutorial: unknown block kind ```{info}")
        for line in body.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                script.append(f"echo {shlex.quote('+ ' + line)}")
                script.append(line)
        counts["run"] += 1
    if counts["setup"] != 1:
        sys.exit(f"run_tutorial: the page needs exactly one ```sh setup block, found {counts['setup']}")
    if counts["run"] == 0:
        sys.exit("run_tutorial: no block to run")
    path = os.path.join(work, "tutorial.sh")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(script) + "\n")
    env = dict(os.environ)
    env["HOME"] = work  # the page works under ~; keep the reader's home untouched
    result = subprocess.run(["bash", path], cwd=work, env=env)
    print(f"run_tutorial: {counts['run']} blocks run, {counts['files']} files saved, "
          f"{counts['skipped']} skipped, in {work}")
    if result.returncode != 0:
        print(f"run_tutorial: FAILED (exit {result.returncode}); the script and its files are in {work}")
        sys.exit(1)
    # Every output path the page names (`out/...` in its prose) exists after the run; the render's
    # pictures only when the render block ran.
    with open(page, encoding="utf-8") as f:
        named = sorted(set(re.findall(r"`(out/[^`]*)`", f.read())))
    missing = [p for p in named
               if not os.path.exists(os.path.join(work, p)) and (have_povray or "/render/" not in p)]
    if missing:
        print(f"run_tutorial: FAILED: the page names {', '.join(missing)}, which the run did not write ({work})")
        sys.exit(1)
    print(f"run_tutorial: the {len(named)} output paths the page names exist")
    if not keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
