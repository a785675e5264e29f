#!/usr/bin/env python3
"""The flagella studies of Tong et al. (2023) at reduced length: Appendix D trends and Table 2.

    scripts/flagella_study.py trends     # Fp h^2/EI against omega-bar, head spacing, M (Fig. D.2 a-c)
    scripts/flagella_study.py friction   # Table 2: mu = 0.1 ... 1.0, M = 2, nu = 1e-4
    scripts/flagella_study.py friction-short   # mu = 0.1, 0.3, 0.5, 0.7, 1.0, 4 revolutions each
    scripts/flagella_study.py friction-250 [MU ...]   # Table 2 over 250 s, the authors' code parameters
    scripts/flagella_study.py all

Each case writes a scene with scripts/make_flagella_scenes.py, runs build/bin/rodsim on it
(one run at a time) and reads timeseries.csv and summary.json. Results: docs/flagella/*.csv and
PNG plots. The paper averages over 597 revolutions (250 s); these runs cover a few revolutions,
enough for the trends, not for the paper's numbers.
"""
import csv
import math
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_flagella_scenes as gen  # noqa: E402
import rodsim_output  # noqa: E402  the one reader of a run's files (python/rodsim/output.py)

OUT = ROOT / "docs" / "flagella"
E, H, ETA, Z0, A_HELIX = 3e6, 1e-3, 0.1, 0.2, 0.01
EI = E * math.pi * H**4 / 4
REVOLUTIONS = 10  # per run; the thrust is averaged over the second half (whole revolutions)


def omega_bar(omega):
    return omega * ETA * Z0**4 / EI  # Appendix D


def run(M, side, omega, revolutions, mu=0.0, slip=None, name="case"):
    duration = revolutions * 2 * math.pi / omega
    with tempfile.TemporaryDirectory() as tmp:
        scene = pathlib.Path(tmp) / f"{name}.toml"
        scene.write_text(gen.scene(M, side, round(duration, 4), "imc", mu, omega, ETA, 0.0, scene.name, slip))
        out = pathlib.Path(tmp) / "out"
        proc = subprocess.run([str(ROOT / "build/bin/rodsim"), "run", str(scene), "--output", str(out), "--quiet"],
                              capture_output=True, text=True)
        summary = rodsim_output.read_summary(out)
        ts = rodsim_output.read_timeseries(out)
    t = [float(x) for x in ts["t"]]
    # Mean propulsive force per revolution over the second half of the run (whole revolutions
    # ending at the last row), then its mean and standard error over those revolutions: the force
    # fluctuates strongly from one revolution to the next once the flagella whirl and touch.
    period = 2 * math.pi / omega
    t_end = t[-1]
    revs = max(2, math.floor(0.5 * t_end / period))
    per_rev = []
    for j in range(revs):
        a, b = t_end - (j + 1) * period, t_end - j * period
        sel = [i for i, tt in enumerate(t) if a < tt <= b]
        per_rev.append(sum(float(ts[f"thrust{k}"][i]) for i in sel for k in range(M)) / (M * len(sel)))
    fp_mean = sum(per_rev) / revs
    fp_se = math.sqrt(sum((x - fp_mean) ** 2 for x in per_rev) / (revs - 1) / revs)
    contacts = [int(c) for c in ts["contacts"]]
    return {
        "M": M, "side": side, "omega": omega, "omega_bar": omega_bar(omega), "mu": mu,
        "status": summary["status"], "exit": proc.returncode, "sim_end": summary["sim_time"],
        "steps": summary["steps"], "iterations": summary["newton_iterations"], "aipts": summary["aipts"],
        "aipts_contact": summary["aipts_contact"], "steps_with_contact": summary["steps_with_contact"],
        "max_contacts": max(contacts), "wall_s": summary["wall_time_s"],
        "revolutions_averaged": revs, "Fp": fp_mean, "Fp_bar": fp_mean * H**2 / EI,
        "Fp_bar_se": fp_se * H**2 / EI, "total_Fp_bar": M * fp_mean * H**2 / EI,
    }


def write(rows, name):
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {OUT / (name + '.csv')}")


def trends():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    speed = []
    for omega in [7.5, 15.0, 30.0, 45.0]:  # omega-bar 509 ... 3056, M = 2, spacing 3a
        speed.append(run(2, 0.03, omega, REVOLUTIONS, name=f"speed_{omega}"))
        print("speed", speed[-1]["omega_bar"], speed[-1]["Fp_bar"], speed[-1]["Fp_bar_se"], flush=True)
    write(speed, "trend_speed")
    spacing = []
    for ratio in [2.5, 3.0, 4.0, 6.0]:  # Delta L / a at omega-bar = 3056 (omega = 45 rad/s)
        spacing.append(run(2, ratio * A_HELIX, 45.0, REVOLUTIONS, name=f"spacing_{ratio}"))
        spacing[-1]["spacing_over_a"] = ratio
        print("spacing", ratio, spacing[-1]["Fp_bar"], flush=True)
    write(spacing, "trend_spacing")
    number = []
    for M in [2, 3, 5]:  # omega-bar = 611 (omega = 9 rad/s)
        number.append(run(M, 0.03, 9.0, 8, name=f"number_{M}"))
        print("M", M, number[-1]["Fp_bar"], number[-1]["total_Fp_bar"], flush=True)
    write(number, "trend_number")

    fig, ax = plt.subplots(1, 4, figsize=(16, 3.6))
    def bars(a, rows, x, y="Fp_bar"):
        a.errorbar([r[x] for r in rows], [r[y] for r in rows],
                   yerr=[(r["M"] if y == "total_Fp_bar" else 1) * r["Fp_bar_se"] for r in rows], fmt="o-", capsize=3)

    bars(ax[0], speed, "omega_bar")
    ax[0].set(xlabel=r"$\bar\omega = \omega \eta z_0^4 / EI$", ylabel=r"$\bar F_p = F_p h^2 / EI$", title="(a) M = 2, ΔL/a = 3")
    bars(ax[1], spacing, "spacing_over_a")
    ax[1].set(xlabel=r"$\Delta L / a$", ylabel=r"$\bar F_p$", title=r"(b) M = 2, $\bar\omega$ = 3056")
    bars(ax[2], number, "M")
    ax[2].set(xlabel="M", ylabel=r"$\bar F_p$ per flagellum", title=r"(c1) $\bar\omega$ = 611")
    bars(ax[3], number, "M", "total_Fp_bar")
    ax[3].set(xlabel="M", ylabel=r"$M \bar F_p$", title="(c2) total")
    for a in ax:
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "appendix_d_trends.png", dpi=120)
    print(f"wrote {OUT / 'appendix_d_trends.png'}")


def friction(values=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0), revolutions=8):
    rows = []
    for mu in values:
        r = run(2, 0.00325, 15.0, revolutions, mu=mu, slip=1e-4, name=f"mu_{mu}")
        rows.append(r)
        print("mu", mu, r["status"], r["aipts_contact"], r["sim_end"], flush=True)
    write(rows, "table2_friction")


def friction_full(values=None, out=ROOT / "out/friction250"):
    """Table 2 over the whole 250 s, on the authors' code parameters (scenes/flagella/m2_authors_code.toml,
    heads 3 cm apart, nu = 1e-4): runs every value whose directory out/mu<value> has no finished
    summary.json, then tabulates them all. On one core: 5-15 min for mu <= 0.5; for mu >= 0.6,
    once the flagella knot into a ball, hours (a run stopped by SIGTERM is tabulated as far as it
    got, and `rodsim run --restart DIR` continues it)."""
    scene = ROOT / "scenes/flagella/m2_authors_code.toml"
    values = values or (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    rows = []
    for mu in values:
        d = pathlib.Path(out) / f"mu{mu}"
        done = (d / "summary.json").exists() and rodsim_output.read_summary(d)["status"] != "running"
        if not done:
            subprocess.run([str(ROOT / "build/bin/rodsim"), "run", str(scene), "--set", f"contact.friction={mu}",
                            "--set", "contact.slip_tolerance=1e-4", "--quiet", "--output", str(d)])
        summary = rodsim_output.read_summary(d)
        series = rodsim_output.read_timeseries(d)
        ts = [{k: v[i] for k, v in series.items()} for i in range(1, len(series["t"]))]  # rows after the initial one
        solves = [int(r["iterations"]) for r in ts]
        late = [int(r["contacts"]) for r in ts if float(r["t"]) > summary["sim_time"] - 50]
        rows.append({
            "mu": mu, "status": summary["status"], "sim_end": summary["sim_time"],
            "aipts_contact": round(summary["aipts_contact"], 3), "authors_count": round(summary["aipts_contact"] + 1, 2),
            "iterations": summary["newton_iterations"], "step_cuts": summary["step_cuts"],
            "steps_with_contact": summary["steps_with_contact"],
            "most_solves_in_a_step": max(solves), "mean_contacts_last_50s": round(sum(late) / max(1, len(late)), 1),
            "most_contacts": max(int(r["contacts"]) for r in ts), "min_gap": summary["min_gap"],
            # a Newton solve gives up after 50 solves: a step with more failed once and was retried
            # or halved (on_failure), where the authors' code, which does neither, would stop
            "steps_over_50_solves": sum(n > 50 for n in solves),
            "wall_s": round(summary["wall_time_s"]),
        })
    write(rows, "table2_friction_250s")
    print("| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]))
    for r in rows:
        print("| " + " | ".join(str(v) for v in r.values()) + " |")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("trends", "all"):
        trends()
    if what in ("friction", "all"):
        friction()
    if what == "friction-250":  # Table 2 over 250 s with the authors' code parameters [MU ...]
        friction_full(tuple(float(v) for v in sys.argv[2:]) or None)
    if what == "friction-short":  # the subset this session could afford: 5 values, 4 revolutions
        friction((0.1, 0.3, 0.5, 0.7, 1.0), 4)
