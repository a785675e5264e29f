#!/usr/bin/python3
"""Vertical oscillations under gravity (Gazzola et al. (2018), Fig. 4d-f, m_p = 0): runs
scenes/validation/cosserat_vertical_oscillation.toml for E = 1e4 ... 1e9 Pa (n = 50) and for
n = 12 ... 100 (E = 1e6), and draws docs/validation/cosserat_vertical_oscillation.png: (a) the
normalized extension (L - L^)/dL* against Eq. 28 and the exact linear continuum (modal sum), (b) the
period error against Eq. 28 versus n. Prints the markdown table of docs/validation/cosserat.md.
Usage: scripts/plot_cosserat_vertical_oscillation.py [build dir]"""
import os, subprocess, sys, tempfile
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
g, rho, L, A, mr = 9.81, 1000.0, 1.0, 1e-3, 1.0


def analytic(E):
    k = E * A / L
    return g * mr / (2 * k), 2 * np.pi * np.sqrt(mr / (np.pi**2 / 4 * k))  # Eq. 27, Eq. 28 (xi = pi^2/4)


def exact_tip(E, t, modes=200):
    """Linear fixed-free bar released from rest under gravity: u(L, t) = sum c_k (1 - cos w_k t) sin(b_k L)."""
    c = np.sqrt(E / rho)
    x = np.linspace(0, L, 4001)
    us = rho * g / E * (L * x - x**2 / 2)
    u = np.zeros_like(t)
    for k in range(1, modes + 1):
        b = (2 * k - 1) * np.pi / (2 * L)
        ck = 2 / L * np.trapz(us * np.sin(b * x), x)
        u += ck * (1 - np.cos(b * c * t)) * np.sin(b * L)
    return u


def run(E, n):
    dL, T = analytic(E)
    out = tempfile.mkdtemp(prefix=f"cosserat-vo-{E:g}-{n}-")
    subprocess.run([os.path.join(build, "bin", "rodsim"), "run",
                    os.path.join(root, "scenes/validation/cosserat_vertical_oscillation.toml"), "--quiet", "--output", out,
                    "--set", f"rod.bar.youngs_modulus={E}", "--set", f"rod.bar.nodes={n + 1}",
                    "--set", f"simulation.dt={T / 1000}", "--set", f"simulation.duration={2 * T}"], check=True)
    ts = rodsim_output.read_timeseries(out)
    t = ts["t"]; u = -list(ts.values())[-1] - L
    i = np.where((u[:-1] < dL) & (u[1:] >= dL))[0]
    up = t[i] + (dL - u[i]) / (u[i + 1] - u[i]) * (t[i + 1] - t[i])
    period = (up[-1] - up[0]) / (len(up) - 1)
    return t, u, dL, T, period


fig, ax = plt.subplots(1, 2, figsize=(11, 4))
print("| E (Pa) | dL*/L | mean/dL* | max/dL* | T/T* | L∞ vs Eq. 28 / dL* | L∞ vs exact continuum / dL* |")
print("|---|---|---|---|---|---|---|")
for E in [1e4, 1e5, 1e6, 1e7, 1e9]:
    t, u, dL, T, period = run(E, 50)
    eq28 = 1 + np.sin(2 * np.pi * t / T - np.pi / 2)
    ex = exact_tip(E, t) / dL
    print(f"| {E:.0e} | {dL / L:.2e} | {u.mean() / dL:.5f} | {u.max() / dL:.5f} | {period / T:.5f} | "
          f"{np.abs(u / dL - eq28).max():.3f} | {np.abs(u / dL - ex).max():.4f} |")
    if E == 1e6:
        ax[0].plot(t / T, eq28, "k--", label="Eq. 28")
        ax[0].plot(t / T, ex, "b-", lw=0.8, label="exact linear continuum")
    ax[0].plot(t / T, u / dL, ":", label=f"cosserat n = 50, E = {E:.0e}")
ax[0].set_xlabel("t / T*"); ax[0].set_ylabel("(L - L^) / dL*"); ax[0].legend(fontsize=7)
ns, errs = [12, 25, 50, 100], []
print("\n| n | T/T* - 1 |\n|---|---|")
for n in ns:
    _, _, _, T, period = run(1e6, n)
    errs.append(abs(period / T - 1))
    print(f"| {n} | {period / T - 1:.2e} |")
ax[1].loglog(ns, errs, "ko-", label="|T/T* - 1|, E = 1e6")
ax[1].loglog(ns, errs[0] * (ns[0] / np.array(ns))**2, "k:", label="n^-2 (reference)")
ax[1].set_xlabel("elements n"); ax[1].legend()
fig.tight_layout()
fig.savefig(os.path.join(root, "docs/validation/cosserat_vertical_oscillation.png"), dpi=120)
