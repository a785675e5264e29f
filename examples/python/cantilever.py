#!/usr/bin/env python3
"""The static cantilever (scenes/validation/cantilever_small_load.toml) against Euler-Bernoulli beam
theory, for several tip loads, from Python: deflection curves and the tip error, plotted with matplotlib.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/cantilever.py [OUT_DIR]

Theory: w(s) = F s^2 (3 L - s) / (6 E I) along the beam, with the clamped section at the middle of the
clamped edge 0 (the clamp holds nodes 0 and 1): s = x - h/2, L = 1 - h/2 (docs/validation/cantilever.md).
"""
import math
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import rodsim  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCENE = ROOT / "scenes/validation/cantilever_small_load.toml"
out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "out/python_cantilever")

E, r, n = 1e7, 0.01, 41
EI = E * math.pi * r**4 / 4
h = 1.0 / (n - 1)
L = 1.0 - h / 2

fig, ax = plt.subplots(figsize=(6.4, 4.2))
for ratio in (0.002, 0.005, 0.01):  # F L^2 / EI: the linear regime
    F = ratio * EI  # L = 1 m in the scene's definition of the load
    sim = rodsim.Simulation(SCENE, set={"force.tip.force": [0.0, 0.0, -F]}, output=out_dir / f"ratio_{ratio}",
                            replace=True)
    sim.run()
    x = sim.rod("beam").positions
    s = np.clip(x[:, 0] - h / 2, 0, None)
    w = F * s**2 * (3 * L - s) / (6 * EI)
    err = (-x[-1, 2] - w[-1]) / w[-1]
    print(f"F L^2/EI = {ratio:5.3f}: tip deflection {-x[-1, 2]:.6e} m, theory {w[-1]:.6e} m, error {100 * err:+.3f} %")
    ax.plot(x[:, 0], -x[:, 2] * 1e3, "o", ms=3, label=f"rodsim, $FL^2/EI$ = {ratio}")
    ax.plot(x[:, 0], w * 1e3, "k-", lw=0.8)
ax.plot([], [], "k-", lw=0.8, label="Euler-Bernoulli")
ax.set_xlabel("x (m)")
ax.set_ylabel("deflection (mm)")
ax.set_title("Cantilever under a tip load (DER, static solver)")
ax.legend()
fig.tight_layout()
out_dir.mkdir(parents=True, exist_ok=True)
fig.savefig(out_dir / "cantilever.png", dpi=120)
print(f"plot: {out_dir / 'cantilever.png'}")
