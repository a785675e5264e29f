#!/usr/bin/python3
"""Sedimentation under the local slender-body drag of Gazzola et al. (2018) (Sec. IV.6, Eqs. 43-44):
runs scenes/validation/sedimentation_{cosserat,der}.toml broadside and along the axis with every solver
the rod model works with and draws docs/validation/slender_body_drag.png: the fall speed of the middle
node against time with the closed-form terminal speeds U_perp = rho A g / c and U_par = 2 U_perp
(c = 4 pi mu / ln(L/r)) and the relaxation exp(-t/tau); prints the terminal speeds and their ratio.
Usage: scripts/plot_slender_body_drag.py [build dir]"""
import math, os, subprocess, sys, tempfile
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
rodsim = os.path.join(build, "bin", "rodsim")
g, rho, r, L, mu = 9.81, 1000.0, 0.01, 1.0, 10.0
rhoA = rho * math.pi * r * r
c = 4 * math.pi * mu / math.log(L / r)
U_perp, U_par = rhoA * g / c, 2 * rhoA * g / c
tau = rhoA / c


def run(rod, solver, axial):
    out = tempfile.mkdtemp(prefix="sedimentation-")
    cmd = [rodsim, "run", os.path.join(root, f"scenes/validation/sedimentation_{rod}.toml"), "--quiet", "--output", out,
           "--set", f"solver.type={solver}"]
    if axial:
        cmd += ["--set", "rod.rod.geometry.end=[0, 0, -1]"]
    subprocess.run(cmd, check=True)
    ts = rodsim_output.read_timeseries(out)
    return list(ts["t"]), list(-ts["vz"])


fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
cases = [("cosserat", "position-verlet"), ("cosserat", "pefrl"), ("der", "implicit-euler"), ("der", "position-verlet"),
         ("der", "pefrl")]
print(f"closed form: U_perp = {U_perp:.8f} m/s, U_par = {U_par:.8f} m/s, tau = {tau * 1e3:.2f} ms")
for rod, solver in cases:
    ts, side = run(rod, solver, False)
    ta, ax_v = run(rod, solver, True)
    print(f"{rod:8s} {solver:15s}: broadside {side[-1]:.8f} ({side[-1] / U_perp - 1:+.1e}), axial {ax_v[-1]:.8f} "
          f"({ax_v[-1] / U_par - 1:+.1e}), ratio {ax_v[-1] / side[-1]:.8f}")
    ax[0].plot(ts, side, lw=1.2, label=f"{rod} + {solver}, broadside")
    ax[0].plot(ta, ax_v, lw=1.2, ls="--", label=f"{rod} + {solver}, axial")
    err = [abs(v / U_par - 1) for v in ax_v]
    ax[1].semilogy(ta, [max(e, 1e-12) for e in err], lw=1, label=f"{rod} + {solver}, axial")
tt = [i * 0.5 / 400 for i in range(401)]
ax[0].axhline(U_perp, color="k", lw=0.8)
ax[0].axhline(U_par, color="k", lw=0.8)
ax[0].plot(tt, [U_perp * (1 - math.exp(-t / tau)) for t in tt], "k:", lw=1, label="closed form")
ax[0].plot(tt, [U_par * (1 - math.exp(-t / (2 * tau))) for t in tt], "k:", lw=1)
ax[0].set_xlabel("t (s)"); ax[0].set_ylabel("fall speed (m/s)")
ax[0].set_title("sedimentation: axial = 2 x broadside (Eq. 44)")
ax[0].legend(fontsize=6)
ax[1].semilogy(tt, [math.exp(-t / (2 * tau)) for t in tt], "k:", label="exp(-t / 2 tau)")
ax[1].set_xlabel("t (s)"); ax[1].set_ylabel("|U / U_par - 1|")
ax[1].set_title("relaxation to the terminal speed (axial)")
ax[1].legend(fontsize=6)
fig.tight_layout()
png = os.path.join(root, "docs", "validation", "slender_body_drag.png")
fig.savefig(png, dpi=100)
print(png)
