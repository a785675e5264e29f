#!/usr/bin/python3
"""Snapshots of flagella runs (like Tong et al. (2023), Fig. 1): one row per run, one column per time.

    scripts/plot_flagella_snapshots.py OUT.png --times 0 1 2 3 RUN_DIR [RUN_DIR ...]

RUN_DIR is a `rodsim run` output directory (its vtk/*.pvd and frames are read); each row shows
every rod of that run at the frames closest to the given times, in 3D, motors at the top.
"""
import argparse
import pathlib
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import rodsim_vtp  # noqa: E402  scripts/rodsim_vtp.py: both VTK encodings


def frames(run):
    pvd = next((pathlib.Path(run) / "vtk").glob("*.pvd"))
    root = ET.parse(pvd).getroot()
    return [(float(d.get("timestep")), pvd.parent / d.get("file")) for d in root.iter("DataSet")]


def polylines(vtp):
    frame = rodsim_vtp.read_vtp(vtp)
    return [[frame["Points"][k] for k in line] for line in frame["polylines"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("png")
    ap.add_argument("--times", type=float, nargs="+", required=True)
    ap.add_argument("--labels", nargs="*")
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    fig = plt.figure(figsize=(2.6 * len(args.times), 3.2 * len(args.runs)))
    for r, run in enumerate(args.runs):
        available = frames(run)
        for c, t in enumerate(args.times):
            time, file = min(available, key=lambda f: abs(f[0] - t))
            ax = fig.add_subplot(len(args.runs), len(args.times), r * len(args.times) + c + 1, projection="3d")
            for k, line in enumerate(polylines(file)):
                ax.plot([p[0] for p in line], [p[1] for p in line], [p[2] for p in line], lw=1.6, color=f"C{k % 10}")
            ax.set_xlim(-0.04, 0.04)
            ax.set_ylim(-0.04, 0.04)
            ax.set_zlim(-0.22, 0.0)
            ax.set_box_aspect((1, 1, 2.75))
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_zticks([])
            ax.view_init(elev=12, azim=-60)
            title = f"t = {time:g} s"
            if c == 0 and args.labels:
                title = f"{args.labels[r]}\n" + title
            ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
