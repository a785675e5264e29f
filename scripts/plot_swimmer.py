#!/usr/bin/python3
"""The low-Reynolds swimmer of Gazzola et al. (2018) (Sec. V.3, Fig. 11): runs scenes/cosserat/swimmer.toml for
six activation periods with a frame every 0.02 T_m and draws docs/validation/cosserat_swimmer.png:
(a) the scaled forward and lateral centre-of-mass velocities against t / T_m (Fig. 11f) with the advance
per period; (b) the gait over the sixth period: centrelines every 0.05 T_m in the frame moving with the
mean swimming speed, and the head and tail paths (Fig. 11g). Prints the advance of the centre of mass
per period (the paper's forward average scaled speed, ~0.055) for the text's lambda_m = 0.38 L and the
caption's 2.6 L. Usage: scripts/plot_swimmer.py [build dir]"""
import math, os, re, subprocess, sys, tempfile
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rodsim_vtp  # noqa: E402
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
rodsim = os.path.join(build, "bin", "rodsim")


def run(sets, every):
    out = tempfile.mkdtemp(prefix="swimmer-")
    cmd = [rodsim, "run", os.path.join(root, "scenes/cosserat/swimmer.toml"), "--quiet", "--output", out,
           "--set", f"output.every={every}"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    pvd = open(os.path.join(out, "vtk", "swimmer.pvd")).read()
    t, P, V = [], [], []
    for ts, f in re.findall(r'timestep="([^"]+)"[^>]*file="([^"]+)"', pvd):
        frame = rodsim_vtp.read_vtp(os.path.join(out, "vtk", f))  # ascii or binary frames
        t.append(float(ts))
        P.append(np.array(frame["Points"], float))
        V.append(np.array(frame["velocity"], float))
    return np.array(t), np.array(P), np.array(V)


def com(X):  # lumped masses: Voronoi lengths, half at the ends
    w = np.ones(X.shape[1]); w[0] = w[-1] = 0.5
    return np.einsum("i,tij->tj", w / w.sum(), X)


t, P, V = run([], 0.02)
C, Vc = com(P), com(V)
per = [C[np.argmin(abs(t - k)), 0] - C[np.argmin(abs(t - k + 1)), 0] for k in range(1, 7)]
print("lambda_m = 0.3867 L: advance per period (L/T_m):", " ".join(f"{d:.5f}" for d in per))
_, P26, _ = run(["force.muscles.wave_number=2.41660973353061", "force.muscles.phase=3.8665755736489764"], 1.0)
C26 = com(P26)
print("lambda_m = 2.6 L (the caption): advance per period:", " ".join(f"{d:.5f}" for d in np.diff(C26[:, 0])))

fig, ax = plt.subplots(1, 2, figsize=(12, 4.4))
ax[0].plot(t, Vc[:, 0], "r", lw=1, label="forward (x)")
ax[0].plot(t, Vc[:, 1], "b", lw=1, label="lateral (y)")
for k in range(1, 7):
    ax[0].hlines(per[k - 1], k - 1, k, color="k", lw=1.5)
ax[0].axhline(0.055, color="g", ls="--", lw=1, label="Gazzola et al. (2018): mean forward speed 0.055")
ax[0].set_xlabel("t / T_m"); ax[0].set_ylabel("centre-of-mass velocity / (L / T_m)")
ax[0].set_title("(a) scaled CoM velocities; black: advance per period (Fig. 11f)")
ax[0].legend(fontsize=7)
sel = [i for i in range(len(t)) if 5 - 1e-9 <= t[i] <= 6 + 1e-9]
U = per[-1]
for i in sel[::max(1, len(sel) // 20)]:
    ax[1].plot(P[i, :, 0] - U * (t[i] - 5), P[i, :, 1], color=plt.cm.viridis((t[i] - 5)), lw=1)
ax[1].plot(P[sel, -1, 0] - U * (t[sel] - 5), P[sel, -1, 1], "r", lw=1.5, label="head")
ax[1].plot(P[sel, 0, 0] - U * (t[sel] - 5), P[sel, 0, 1], "m", lw=1.5, label="tail")
ax[1].set_aspect("equal")
ax[1].set_xlabel("x - U (t - 5 T_m) (m)"); ax[1].set_ylabel("y (m)")
ax[1].set_title("(b) gait over the sixth period (Fig. 11g)")
ax[1].legend(fontsize=7)
fig.tight_layout()
png = os.path.join(root, "docs", "validation", "cosserat_swimmer.png")
fig.savefig(png, dpi=100)
print(png)
