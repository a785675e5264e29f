#!/usr/bin/env python3
"""A feedback-controlled rod: a flexible DER rod whose root is turned about z by a motor (a `rotate`
constraint); every 5 steps a proportional controller reads the tip's azimuth and sets the motor's
angular velocity (AdjustableParameters, docs/python.md) so that the tip reaches 0.5 rad and stays
there. Plots the tip angle and the commanded rate.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/feedback_motor.py [OUT_DIR]
"""
import math
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import rodsim  # noqa: E402

out_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "out/python_feedback")
out_dir.mkdir(parents=True, exist_ok=True)
scene = out_dir / "arm.toml"
scene.write_text("""
[simulation]
duration = 4.0
dt = 2e-3

[solver]
type = "implicit-euler"

[[rod]]
name = "arm"
model = "der"
nodes = 31
radius = 0.01
density = 1000.0
youngs_modulus = 1e9
poisson_ratio = 0.5
geometry = { shape = "straight", start = [0, 0, 0], end = [1, 0, 0] }

[[constraint]]
name = "motor"
type = "rotate"
rod = "arm"
nodes = [0, 1]
axis = [0, 0, 1]
angular_velocity = 0.0

[[force]]
name = "air"
type = "damping"
coefficient = 5.0   # N s/m^2: damps the first bending mode (2.8 Hz) enough for this gain

[output]
every = 0.05
""")

target, gain = 0.5, 2.0  # rad, 1/s
log = {"t": [], "angle": [], "omega": []}
sim = rodsim.Simulation(scene, output=out_dir / "run", replace=True)


@sim.every(5)
def controller(s):
    x, y, _ = s.rod("arm").positions[-1]
    angle = math.atan2(y, x)
    s["motor.angular_velocity"] = gain * (target - angle)
    log["t"].append(s.time)
    log["angle"].append(angle)
    log["omega"].append(s["motor.angular_velocity"])


sim.run()
print(f"tip angle at t = {sim.time:g} s: {log['angle'][-1]:.5f} rad (target {target}); "
      f"motor rate {log['omega'][-1]:+.2e} rad/s")

fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(6, 5))
a1.plot(log["t"], log["angle"], label="tip azimuth")
a1.axhline(target, color="k", lw=0.8, ls="--", label="target")
a1.set_ylabel("angle (rad)")
a1.legend()
a2.plot(log["t"], log["omega"])
a2.set_ylabel("motor rate (rad/s)")
a2.set_xlabel("t (s)")
fig.suptitle("Motor driven from the measured tip position")
fig.tight_layout()
fig.savefig(out_dir / "feedback.png", dpi=120)
print(f"plot: {out_dir / 'feedback.png'}")
