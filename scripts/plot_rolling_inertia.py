#!/usr/bin/python3
"""Rolling with the rod's rotational inertia (Gazzola et al. (2018), Appendix F.1, Fig. 16e-f): runs
scenes/cosserat/rolling_inertia.toml (a rod thrown sideways at V_s = 1 m/s on a horizontal plane) for
lambda = 2 J / (m r^2) from 0.25 to 10 and draws docs/validation/cosserat_rolling_inertia.png: the
translational and rotational energies after T = 1 s against lambda / 2 with Eq. F1 (and (b) their relative
deviation from Eq. F1 and from Eq. F1 with the paper's rotational dissipation gamma = 1e-6 kg/(m s));
(c) scenes/validation/cosserat_ground_incline.toml with inertia_ratio = lambda: the energies after 0.5 s
against the incline angle (Fig. 16b for several lambda), rolling while tan(alpha) <= mu_s (2 + lambda) / lambda.
Usage: scripts/plot_rolling_inertia.py [build dir]"""
import math, os, subprocess, sys, tempfile
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
rodsim = os.path.join(build, "bin", "rodsim")
m, r, g, mu_k, Vs, gamma, Lrod, T = 1.0, 0.025, 9.81, 0.2, 1.0, 1e-6, 1.0, 1.0


def F1(lam):
    ET = m * Vs**2 / (2 * (1 + lam / 2) ** 2)
    return ET, ET * lam / 2


def damped(lam):  # Eq. F1 with the angular momentum drained by gamma (tests/validation/cosserat_rolling)
    J = lam * m * r * r / 2
    ts = Vs * lam / (mu_k * g * (lam + 2))
    k = gamma * Lrod / (m * r * r + J)
    w = (m * Vs * r - gamma * Lrod * mu_k * m * g * r * ts**2 / (2 * J)) * math.exp(-k * (T - ts)) / (m * r * r + J)
    return 0.5 * m * (r * w) ** 2, 0.5 * J * w * w


lams = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0]
res = []
for lam in lams:
    out = tempfile.mkdtemp(prefix="rolling-")
    subprocess.run([rodsim, "run", os.path.join(root, "scenes/cosserat/rolling_inertia.toml"), "--quiet", "--output", out,
                    "--set", f"rod.rod.inertia_ratio={lam!r}"], check=True)
    row = {k: v[-1] for k, v in rodsim_output.read_timeseries(out).items()}  # the last row
    J = lam * m * r * r / 2
    ET, ER = 0.5 * m * float(row["vy"]) ** 2, 0.5 * J * float(row["ground.spin"]) ** 2
    res.append((ET, ER))
    a, d = F1(lam), damped(lam)
    print(f"lambda = {lam:5.2f}: E_T {ET:.6f} J (F1 {a[0]:.6f}, {ET / a[0] - 1:+.2e}; damped {ET / d[0] - 1:+.1e}), "
          f"E_R {ER:.6f} J (F1 {a[1]:.6f}, {ER / a[1] - 1:+.2e}; damped {ER / d[1] - 1:+.1e})")

# (c) the incline (Fig. 16a-b) with lambda
mu_s, Ti = 0.4, 0.5
angles = list(range(5, 86, 5))
incl = {}
for lam in [0.5, 1.0, 2.0, 4.0]:
    J = lam * m * r * r / 2
    incl[lam] = []
    for deg in angles:
        a = math.radians(deg)
        out = tempfile.mkdtemp(prefix="incline-")
        subprocess.run([rodsim, "run", os.path.join(root, "scenes/validation/cosserat_ground_incline.toml"), "--quiet",
                        "--output", out, "--set", f"rod.rod.inertia_ratio={lam!r}",
                        "--set", f"force.gravity.g=[0, {-g * math.sin(a)!r}, {-g * math.cos(a)!r}]"], check=True)
        row = {k: v[-1] for k, v in rodsim_output.read_timeseries(out).items()}
        incl[lam].append((0.5 * m * float(row["vy"]) ** 2, 0.5 * J * float(row["ground.spin"]) ** 2))
    print(f"incline lambda = {lam}: rolls up to {math.degrees(math.atan(mu_s * (2 + lam) / lam)):.1f} deg")


def incline(lam, deg):
    a, J = math.radians(deg), lam * m * r * r / 2
    if math.tan(a) <= mu_s * (2 + lam) / lam:
        v = g * math.sin(a) / (1 + lam / 2) * Ti
        return 0.5 * m * v * v, 0.5 * J * (v / r) ** 2
    v, w = g * (math.sin(a) - mu_k * math.cos(a)) * Ti, mu_k * m * g * math.cos(a) * r * Ti / J
    return 0.5 * m * v * v, 0.5 * J * w * w


fig, ax = plt.subplots(1, 3, figsize=(16, 4.4))
xs = [0.05 * i for i in range(1, 121)]
ax[0].plot(xs, [F1(2 * x)[0] for x in xs], "k-", lw=1, label="E_T, Eq. F1")
ax[0].plot(xs, [F1(2 * x)[1] for x in xs], "k--", lw=1, label="E_R, Eq. F1")
ax[0].plot([l / 2 for l in lams], [e[0] for e in res], "o", color="tab:blue", label="E_T, rodsim")
ax[0].plot([l / 2 for l in lams], [e[1] for e in res], "s", color="tab:orange", label="E_R, rodsim")
ax[0].set_xlabel("lambda / 2 = J / (m r^2)"); ax[0].set_ylabel("energy after T = 1 s (J)")
ax[0].set_title("(a) thrown rod: slips, then rolls (Fig. 16f)")
ax[0].legend(fontsize=8)
ax[1].semilogy([l / 2 for l in lams], [abs(e[0] / F1(l)[0] - 1) for e, l in zip(res, lams)], "o-", label="E_T vs Eq. F1")
ax[1].semilogy([l / 2 for l in lams], [abs(e[1] / F1(l)[1] - 1) for e, l in zip(res, lams)], "s-", label="E_R vs Eq. F1")
ax[1].semilogy([l / 2 for l in lams], [max(abs(e[0] / damped(l)[0] - 1), 1e-9) for e, l in zip(res, lams)], "o:",
               label="E_T vs Eq. F1 with gamma")
ax[1].semilogy([l / 2 for l in lams], [max(abs(e[1] / damped(l)[1] - 1), 1e-9) for e, l in zip(res, lams)], "s:",
               label="E_R vs Eq. F1 with gamma")
ax[1].set_xlabel("lambda / 2"); ax[1].set_ylabel("relative deviation")
ax[1].set_title("(b) relative deviation (gamma = 1e-6 drains the spin)")
ax[1].legend(fontsize=7)
aa = [0.25 * i for i in range(4, 349)]
for lam, col in zip(incl, ["tab:blue", "tab:orange", "tab:green", "tab:red"]):
    ax[2].plot(aa, [incline(lam, x)[0] for x in aa], "-", color=col, lw=1)
    ax[2].plot(aa, [incline(lam, x)[1] for x in aa], "--", color=col, lw=1)
    ax[2].plot(angles, [e[0] for e in incl[lam]], "o", color=col, ms=4, label=f"lambda = {lam:g}: E_T (o), E_R (s)")
    ax[2].plot(angles, [e[1] for e in incl[lam]], "s", color=col, ms=4, mfc="none")
ax[2].set_xlabel("incline angle (deg)"); ax[2].set_ylabel("energy after T = 0.5 s (J)")
ax[2].set_title("(c) incline (Fig. 16b) for several lambda; lines: analytic")
ax[2].legend(fontsize=7)
fig.tight_layout()
png = os.path.join(root, "docs", "validation", "cosserat_rolling_inertia.png")
fig.savefig(png, dpi=100)
print(png)
