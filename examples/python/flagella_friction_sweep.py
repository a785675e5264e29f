#!/usr/bin/env python3
"""A small friction sweep of two flagella in contact (scenes/flagella/m2_close.toml: motors 3.25 mm
apart, in contact within 0.15 s), from Python: each friction coefficient is one short run (the scene's
first DURATION seconds); the mean thrust, the contacts and the Newton iterations per contact step come
from the runs' outputs. The full study (Table 2 of the IMC paper) is docs/flagella.md.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/flagella_friction_sweep.py [OUT_DIR] [DURATION]
"""
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import rodsim  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "out/python_flagella_sweep")
duration = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5

frictions = [0.0, 0.3, 0.6]
thrust, iterations = [], []
for mu in frictions:
    run_dir = out_dir / f"mu_{mu}"
    sim = rodsim.Simulation(ROOT / "scenes/flagella/m2_close.toml", output=run_dir, replace=True,
                            set={"contact.friction": mu, "simulation.duration": duration, "output.every": 0.0})
    sim.run()
    ts = rodsim.read_output(run_dir).timeseries
    late = ts["t"] > duration / 2  # after the start-up
    total = ts["thrust0"][late] + ts["thrust1"][late]
    thrust.append(total.mean())
    print(f"friction {mu:4.2f}: mean thrust {total.mean():+.4e} N over t > {duration / 2:g} s, "
          f"{int(ts['contacts'].max())} contacts at most, "
          f"{sim.summary()['aipts_contact']:.2f} iterations per contact step")
    iterations.append(sim.summary()["aipts_contact"])

fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 3.5))
a1.plot(frictions, np.array(thrust) * 1e3, "o-")
a1.set_xlabel("friction coefficient")
a1.set_ylabel("mean thrust of the two motors (mN)")
a2.plot(frictions, iterations, "o-")
a2.set_xlabel("friction coefficient")
a2.set_ylabel("Newton iterations per contact step")
fig.suptitle(f"Two flagella in contact, first {duration:g} s")
fig.tight_layout()
fig.savefig(out_dir / "friction_sweep.png", dpi=120)
print(f"plot: {out_dir / 'friction_sweep.png'}")
