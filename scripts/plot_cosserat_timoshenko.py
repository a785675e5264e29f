#!/usr/bin/python3
"""Timoshenko cantilever of Gazzola et al. (2018) (Fig. 5): runs scenes/validation/cosserat_timoshenko.toml
at n = 16 ... 256 elements and draws docs/validation/cosserat_timoshenko.png: (a) the deflection
y(s) at the finest n against Eq. 29 (Timoshenko) and Eq. 30 (Euler-Bernoulli); (b) the error of the
tip deflection against Eq. 29 versus n (first order). Usage: scripts/plot_cosserat_timoshenko.py [build dir]"""
import os, subprocess, sys, tempfile
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
L, r, E, G, alpha, F = 3.0, 0.25, 1e6, 1e4, 4 / 3, 15.0
A, I = np.pi * r**2, np.pi * r**4 / 4
timo = lambda s: F / (alpha * A * G) * s + F * L / (2 * E * I) * s**2 - F / (6 * E * I) * s**3  # -Eq. 29
eb = lambda s: F * L / (2 * E * I) * s**2 - F / (6 * E * I) * s**3                               # -Eq. 30

ns, errs, profile = [16, 32, 64, 128, 256], [], None
for n in ns:
    out = tempfile.mkdtemp(prefix=f"cosserat-timo-{n}-")
    dt = min(1e-3, 0.5 * (L / n) / np.sqrt(E / 5000))
    subprocess.run([os.path.join(build, "bin", "rodsim"), "run", os.path.join(root, "scenes/validation/cosserat_timoshenko.toml"),
                    "--quiet", "--output", out, "--set", f"rod.beam.nodes={n + 1}", "--set", f"simulation.dt={dt}"], check=True)
    nodes = np.vstack(list(rodsim_output.read_final(out).values()))
    x = nodes[:, 0]; z = nodes[:, 2]
    errs.append(abs(-z[-1] - timo(L)) / timo(L))
    profile = (x, -z)
    print(f"n = {n:4d}: tip {-z[-1]:.6f} m, Eq. 29 {timo(L):.6f}, error {errs[-1]:.3e}")

fig, ax = plt.subplots(1, 2, figsize=(10, 4))
s = np.linspace(0, L, 200)
ax[0].plot(s, timo(s), "k-", label="Timoshenko (Eq. 29)")
ax[0].plot(s, eb(s), "b-", label="Euler-Bernoulli (Eq. 30)")
ax[0].plot(profile[0], profile[1], "r--", label=f"cosserat, n = {ns[-1]}")
ax[0].set_xlabel("s (m)"); ax[0].set_ylabel("downward deflection (m)"); ax[0].legend()
ax[1].loglog(ns, errs, "ko-", label="|y_tip - Eq. 29| / Eq. 29")
ax[1].loglog(ns, errs[0] * ns[0] / np.array(ns), "k:", label="first order")
ax[1].set_xlabel("elements n"); ax[1].legend()
fig.tight_layout()
os.makedirs(os.path.join(root, "docs/validation"), exist_ok=True)
fig.savefig(os.path.join(root, "docs/validation/cosserat_timoshenko.png"), dpi=120)
