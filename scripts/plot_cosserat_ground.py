#!/usr/bin/python3
"""Surface friction of Gazzola et al. (2018) (Appendix F, Figs. 16-17) and the continuum snake (Sec. V.2):
runs scenes/validation/cosserat_ground_{incline,couple,axial}.toml over the angle, the couple and the
force, and scenes/snake.toml, and draws docs/validation/cosserat_ground.png:
(a) translational and rotational energies after T = 0.5 s against the incline angle (Fig. 16b);
(b) the same after T = 1 s against the axial couple C_s (Fig. 16d);
(c) translational energy after T = 0.25 s against the axial force, forward and backward (Fig. 17);
(d) the snake's centreline every 0.25 s over its 4th period and its head path; prints the snake's centroid
speed per period over 10 periods (the paper's fitness, Fig. 10e-f).
Usage: scripts/plot_cosserat_ground.py [build dir]"""
import os, subprocess, sys, tempfile
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import rodsim_vtp  # scripts/rodsim_vtp.py: both VTK encodings
import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
rodsim = os.path.join(build, "bin", "rodsim")
g, m, r = 9.81, 1.0, 0.025
J = m * r * r / 2


def run(scene, sets, every=None):
    out = tempfile.mkdtemp(prefix="cosserat-ground-")
    cmd = [rodsim, "run", os.path.join(root, scene), "--quiet", "--output", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    return out


def last_row(out):
    return {k: float(v[-1]) for k, v in rodsim_output.read_timeseries(out).items()}


# (a) incline
mu_s, mu_k, T = 0.4, 0.2, 0.5
angles = np.arange(5, 86, 5.0).tolist() + [49.0, 50.0, 51.0, 52.0]
angles.sort()
inc = []
for deg in angles:
    a = np.radians(deg)
    row = last_row(run("scenes/validation/cosserat_ground_incline.toml", [f"force.gravity.g=[0, {-g * np.sin(a)!r}, {-g * np.cos(a)!r}]"]))
    inc.append((0.5 * m * row["vy"] ** 2, 0.5 * J * row["ground.spin"] ** 2))
    print(f"incline {deg:5.1f} deg: E_T {inc[-1][0]:.4f} J, E_R {inc[-1][1]:.4f} J")
aa = np.radians(np.linspace(0.1, 89.9, 800))
roll = np.tan(aa) <= 3 * mu_s
ET_a = np.where(roll, 2 * m * g**2 * T**2 * np.sin(aa) ** 2 / 9, m * g**2 * T**2 * (np.sin(aa) - mu_k * np.cos(aa)) ** 2 / 2)
ER_a = np.where(roll, 2 * J * g**2 * T**2 * np.sin(aa) ** 2 / (9 * r * r), mu_k**2 * m**2 * g**2 * r**2 * T**2 * np.cos(aa) ** 2 / (2 * J))

# (b) axial couple
T = 1.0
couples = [0.02, 0.05, 0.08, 0.11, 0.14, 0.146, 0.148, 0.16, 0.2, 0.25, 0.3]
cpl = []
for C in couples:
    row = last_row(run("scenes/validation/cosserat_ground_couple.toml", [f"force.couple{i}.torque=[{C / 10!r}, 0, 0]" for i in range(10)]))
    cpl.append((0.5 * m * row["vy"] ** 2, 0.5 * J * row["ground.spin"] ** 2))
    print(f"couple {C:.3f} N m: E_T {cpl[-1][0]:.4f} J, E_R {cpl[-1][1]:.4f} J")
cc = np.linspace(0.0, 0.31, 800)
roll = 2 * cc / (3 * r) <= mu_s * m * g
ET_c = np.where(roll, 2 * T**2 * cc**2 / (9 * m * r * r), m * mu_k**2 * g**2 * T**2 / 2)
ER_c = np.where(roll, 2 * J * T**2 * cc**2 / (9 * r**4 * m**2), (cc - mu_k * m * g * r) ** 2 * T**2 / (2 * J))

# (c) axial force
T = 0.25
forces = [2, 4, 6, 7.5, 7.8, 8.0, 9, 10, 12]
ax_f, ax_b = [], []
for F in forces:
    ax_f.append(0.5 * m * last_row(run("scenes/validation/cosserat_ground_axial.toml", [f"force.pull.g=[{F}, 0, 0]"]))["vx"] ** 2)
    ax_b.append(0.5 * m * last_row(run("scenes/validation/cosserat_ground_axial.toml", [f"force.pull.g=[{-F}, 0, 0]"]))["vx"] ** 2)
    print(f"axial {F:5.1f} N: E_T forward {ax_f[-1]:.4f} J, backward {ax_b[-1]:.4f} J")
ff = np.linspace(0, 12.5, 800)
ET_f = np.where(ff <= 0.8 * m * g, 0, T**2 * (ff - 0.4 * m * g) ** 2 / (2 * m))
ET_b = np.where(ff <= 0.4 * m * g, 0, T**2 * (ff - 0.2 * m * g) ** 2 / (2 * m))

# (d) snake: centrelines over the 4th period (VTK frames are not needed: one run per snapshot time)
shapes = []
for t in np.arange(3.0, 4.01, 0.25):
    out = run("scenes/snake.toml", [f"simulation.duration={t}", "output.every=0"])
    shapes.append((t, np.vstack(list(rodsim_output.read_final(out).values()))[:, 0:2]))
series = rodsim_output.read_timeseries(out)
head = list(series).index("head_x")
columns = list(series.values())
path = np.column_stack([series["t"], columns[head], columns[head + 1], columns[head + 2]])[::200]

# the snake's speed as the paper's fitness (Sec. V.2, Fig. 10e-f): the centroid's displacement in the ground
# plane per activation period T_m = 1 s, over 10 periods (the first one is the start-up transient)
out = run("scenes/snake.toml", ["simulation.duration=10", "output.every=1.0"])
centroids = []
for k in range(11):
    pts = rodsim_vtp.read_vtp(os.path.join(out, "vtk", f"frame_{k}.vtp"))["Points"]
    centroids.append(np.array(pts, float).mean(axis=0))
centroids = np.array(centroids)
per_period = np.linalg.norm(np.diff(centroids[:, :2], axis=0), axis=1)
snake_speed = np.linalg.norm(centroids[10, :2] - centroids[2, :2]) / 8.0
print("snake: centroid displacement per period (m):", " ".join(f"{d:.3f}" for d in per_period))
print(f"snake: centroid speed {snake_speed:.4f} m/s = {snake_speed:.3f} L/T_m over t = 2..10 s (Gazzola et al. 2018, Fig. 10e-f: ~0.6)")

fig, ax = plt.subplots(2, 2, figsize=(11, 8.5))
ad = np.degrees(aa)
ax[0, 0].plot(ad, ET_a, "k-", label="E_T analytic")
ax[0, 0].plot(ad, ER_a, "k--", label="E_R analytic")
ax[0, 0].plot(angles, [e[0] for e in inc], "bo", ms=4, label="E_T rodsim")
ax[0, 0].plot(angles, [e[1] for e in inc], "o", color="orange", ms=4, label="E_R rodsim")
ax[0, 0].axvline(np.degrees(np.arctan(3 * mu_s)), color="gray", lw=0.5)
ax[0, 0].set_xlabel("incline angle alpha (deg)"); ax[0, 0].set_ylabel("energy after 0.5 s (J)")
ax[0, 0].set_title("(a) rolling / slipping on an incline (Fig. 16b)"); ax[0, 0].legend()
ax[0, 1].plot(cc, ET_c, "k-", label="E_T analytic")
ax[0, 1].plot(cc, ER_c, "k--", label="E_R analytic")
ax[0, 1].plot(couples, [e[0] for e in cpl], "bo", ms=4, label="E_T rodsim")
ax[0, 1].plot(couples, [e[1] for e in cpl], "o", color="orange", ms=4, label="E_R rodsim")
ax[0, 1].set_yscale("log"); ax[0, 1].set_xlabel("axial couple C_s (N m)"); ax[0, 1].set_ylabel("energy after 1 s (J)")
ax[0, 1].set_title("(b) rod set rolling by a couple (Fig. 16d)"); ax[0, 1].legend()
ax[1, 0].plot(ff, ET_f, "k-", label="forward, analytic")
ax[1, 0].plot(ff, ET_b, "k--", label="backward, analytic")
ax[1, 0].plot(forces, ax_f, "bo", ms=4, label="forward, rodsim")
ax[1, 0].plot(forces, ax_b, "o", color="orange", ms=4, label="backward, rodsim")
ax[1, 0].set_xlabel("axial force |F| (N)"); ax[1, 0].set_ylabel("E_T after 0.25 s (J)")
ax[1, 0].set_title("(c) anisotropic longitudinal friction (Fig. 17)"); ax[1, 0].legend()
cmap = plt.get_cmap("viridis")
for k, (t, xy) in enumerate(shapes):
    ax[1, 1].plot(xy[:, 0], xy[:, 1], color=cmap(k / max(1, len(shapes) - 1)), label=f"t = {t:.2f} s")
    ax[1, 1].plot(xy[-1, 0], xy[-1, 1], "o", color=cmap(k / max(1, len(shapes) - 1)), ms=4)
ax[1, 1].plot(path[:, 1], path[:, 2], "r-", lw=0.7, label="head path, 0-4 s")
ax[1, 1].set_aspect("equal"); ax[1, 1].set_xlabel("x (m)"); ax[1, 1].set_ylabel("y (m)")
ax[1, 1].set_title(f"(d) continuum snake, 4th period (head: dot), {snake_speed:.2f} L/T_m"); ax[1, 1].legend(fontsize=7)
fig.tight_layout()
dest = os.path.join(root, "docs", "validation", "cosserat_ground.png")
fig.savefig(dest, dpi=110)
print("wrote", dest)
