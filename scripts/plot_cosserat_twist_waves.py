#!/usr/bin/python3
"""Twist waves in a stretched rod (Gazzola et al. (2018), Appendix E.3, Fig. 15, Eq. E5): runs
scenes/validation/cosserat_twist_waves.toml for n = 12 ... 192 elements and draws
docs/validation/cosserat_twist_waves.png: (a) the twist angle along the rod at 10 instants of one
period (n = 96) against Eq. E5, (b) the L-inf, L1 and L2 errors of the steady standing wave against
Eq. E5 versus n. Prints the markdown table of docs/validation/cosserat.md (about 20 s).
Usage: scripts/plot_cosserat_twist_waves.py [build dir]"""
import os, re, subprocess, sys, tempfile
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rodsim_vtp  # noqa: E402
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
scene = os.path.join(root, "scenes", "validation", "cosserat_twist_waves.toml")
# Fig. 15 settings (the scene); drive switched on at 10 s and ramped up over 16 s.
rho, E, e, fv, r, Av = 10.0, 1e6, 1.05, 1.0, 0.5, 1e3
G = 2 * E / 3
start, ramp = 10.0, 16.0
cs = np.sqrt(G / rho)
L_rest = cs / (e * fv)
L = e * L_rest
w = 2 * np.pi * fv
I3_rest = np.pi * r**4 / 2
A0 = e * e * Av * cs / (w * G * I3_rest)  # E5 with the current I3 = I3^/e^2
A0_seed = Av * cs / (w * G * I3_rest)     # E5 as printed, with I3^


def e5(s, amplitude=A0):
    return amplitude * np.sin(w * s / cs) / np.cos(w * L / cs)


def discrete_steady_state(n):
    """Exact steady state of the discrete rod (element 0 clamped, torque on element n-1)."""
    hr = L_rest / (n - 0.5)
    J, k = rho * I3_rest * hr / e, G * I3_rest / (hr * e**3)
    m = n - 1
    K = np.diag(np.full(m, 2 * k)) - np.diag(np.full(m - 1, k), 1) - np.diag(np.full(m - 1, k), -1)
    K[-1, -1] = k
    rhs = np.zeros(m)
    rhs[-1] = Av
    return np.concatenate([[0.0], np.linalg.solve(K - w * w * J * np.eye(m), rhs)])


def run(n):
    out = tempfile.mkdtemp(prefix=f"cosserat-tw-{n}-")
    subprocess.run([os.path.join(build, "bin", "rodsim"), "run", scene, "--quiet", "--output", out,
                    "--set", f"rod.shaft.nodes={n + 1}",
                    "--set", f"rod.shaft.geometry.end=[0, 0, {L_rest * n / (n - 0.5)!r}]"], check=True)
    pvd = open(os.path.join(out, "vtk", "cosserat_twist_waves.pvd")).read()
    times, angles = [], []
    for t, f in re.findall(r'timestep="([^"]+)"[^>]*file="([^"]+)"', pvd):
        frame = rodsim_vtp.read_vtp(os.path.join(out, "vtk", f))  # ascii or binary frames
        m1 = np.array(frame["director_m1"], dtype=float)[:-1]  # node j: director of element j
        times.append(float(t))
        angles.append(np.arctan2(m1[:, 1], m1[:, 0]))  # initially m1 = x, axis z
    return np.array(times), np.array(angles)


def analyse(n):
    t, theta = run(n)
    win = (t >= start + ramp - 1e-9) & (t < start + ramp + 4 / fv - 1e-9)  # 4 periods: all free modes are (2k+1) fv/4
    ph = w * (t[win] - start)
    b = 2 * np.mean(theta[win] * np.sin(ph)[:, None], axis=0)
    c = 2 * np.mean(theta[win] * np.cos(ph)[:, None], axis=0)
    s = np.arange(n) * L / (n - 0.5)  # element j lies j h from the centre of the clamped element 0
    err = b - e5(s)
    kh = w / cs * L / (n - 0.5)
    return dict(n=n, t=t, theta=theta, s=s, b=b,
                linf=np.abs(err).max() / A0, l1=np.abs(err).mean() / A0, l2=np.sqrt(np.mean(err**2)) / A0,
                est=2 * np.pi * kh**2 / 24, quad=np.abs(c).max() / A0,
                disc=np.abs(b - discrete_steady_state(n)).max() / A0,
                seed=np.abs(b - e5(s, A0_seed)).max() / A0)


results = [analyse(n) for n in (12, 24, 48, 96, 192)]
print(f"A0 = {A0:.5f} rad (E5 with I3^: {A0_seed:.5f} rad), c_s = {cs:.4f} m/s, L^ = {L_rest:.4f} m, L = {L:.4f} m")
print("| n | L-inf / A0 | L1 / A0 | L2 / A0 | estimate 2 pi (kh)^2/24 | L-inf ratio | vs discrete steady state / A0 | quadrature / A0 | vs E5 with I3^ / A0 |")
print("|---|---|---|---|---|---|---|---|---|")
prev = None
for R in results:
    ratio = "" if prev is None else f"{prev / R['linf']:.2f}"
    print(f"| {R['n']} | {R['linf']:.3e} | {R['l1']:.3e} | {R['l2']:.3e} | {R['est']:.3e} | {ratio} | {R['disc']:.2e} | "
          f"{R['quad']:.1e} | {R['seed']:.3f} |")
    prev = R["linf"]

fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.6))
R = next(R for R in results if R["n"] == 96)
sf = np.linspace(0, L, 400)
t0 = start + ramp
for k in range(10):  # every T/10 within one period
    i = int(np.argmin(np.abs(R["t"] - (t0 + k / (10 * fv)))))
    phase = np.sin(w * (R["t"][i] - start))
    ax.plot(sf, e5(sf) * phase, "k-", lw=1, label="Eq. E5" if k == 0 else None)
    ax.plot(R["s"], R["theta"][i], "r--", lw=1.2, label=f"rodsim, n = {R['n']}" if k == 0 else None)
ax.plot(sf, e5(sf, A0_seed), ":", color="0.5", label="E5 with $\\hat I_3$ (amplitude)")
ax.set_xlabel("s (m, stretched, from the clamp)")
ax.set_ylabel("twist angle θ (rad)")
ax.set_title("(a) twist angle over one period (Δt = T/10)")
ax.legend(fontsize=8, loc="lower left")
ns = np.array([R["n"] for R in results])
bx.loglog(ns, [R["linf"] for R in results], "ko-", label="L∞")
bx.loglog(ns, [R["l1"] for R in results], "bs-", label="L1")
bx.loglog(ns, [R["l2"] for R in results], "r^-", label="L2")
bx.loglog(ns, [R["est"] for R in results], "k:", label="2π (kh)²/24 (dispersion)")
bx.set_xlabel("n (elements)")
bx.set_ylabel("error / A0 (steady wave vs Eq. E5)")
bx.set_title("(b) convergence: second order")
bx.legend(fontsize=8)
fig.tight_layout()
png = os.path.join(root, "docs", "validation", "cosserat_twist_waves.png")
fig.savefig(png, dpi=120)
print("wrote", png)
