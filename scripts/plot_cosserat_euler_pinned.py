#!/usr/bin/python3
"""Euler buckling with pinned ends (the Cosserat seed, Appendix E.1, Eq. E2): seeded scans of
scenes/validation/cosserat_euler_pinned.toml around F_c = pi^2 alpha / L^2. Every run starts with the
interior nodes displaced laterally by uniform random amounts in [-1e-4, 1e-4] m (numpy default_rng(seed));
the measure is the amplification max |lateral displacement of the middle node| over the run / its initial
value. Prints the table of docs/validation/cosserat.md and draws docs/validation/cosserat_euler_pinned.png.
Usage: scripts/plot_cosserat_euler_pinned.py [build dir]"""
import csv, os, subprocess, sys, tempfile
import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
ALPHA, L = 1.0, 1.0
FC = np.pi**2 * ALPHA / L**2  # Eq. E2


def polyline(n, seed, amp=1e-4):
    rng = np.random.default_rng(seed)
    pts = [[0.0, 0.0, 0.0]]
    for i in range(1, n):
        pts.append([amp * rng.uniform(-1, 1), amp * rng.uniform(-1, 1), L * i / n])
    pts.append([0.0, 0.0, L])
    return pts


def amplification(F, n, seed, duration=3.0):
    out = tempfile.mkdtemp(prefix=f"cosserat-euler-pinned-{n}-")
    pts = polyline(n, seed)
    geo = "{shape = \"polyline\", points = [" + ", ".join(f"[{p[0]!r}, {p[1]!r}, {p[2]!r}]" for p in pts) + "]}"
    subprocess.run([os.path.join(build, "bin", "rodsim"), "run", os.path.join(root, "scenes/validation/cosserat_euler_pinned.toml"),
                    "--quiet", "--output", out, "--set", f"force.top.force=[0, 0, {-F!r}]", "--set", f"rod.column.geometry={geo}",
                    "--set", f"probe.mid_x.node={n // 2}", "--set", f"probe.mid_y.node={n // 2}",
                    "--set", f"simulation.duration={duration}", "--set", f"simulation.dt={6e-5 if n <= 20 else 3.5e-5}"], check=True, cwd=root)
    rows = np.array([[float(v) if v else np.nan for v in r] for r in list(csv.reader(open(os.path.join(out, "timeseries.csv"))))[1:]])
    lateral = np.hypot(rows[:, -2], rows[:, -1])
    return lateral.max() / lateral[0]


if __name__ == "__main__":
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = np.round(np.arange(0.90, 1.1001, 0.02), 3)
    seeds = [1, 2, 3]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    print("| n | seed | " + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    print("|---|---|" + "---|" * len(ratios))
    for n, colour in [(20, "r"), (40, "b")]:
        for seed in seeds:
            amps = [amplification(r * FC, n, seed) for r in ratios]
            print(f"| {n} | {seed} | " + " | ".join(f"{a:.3g}" for a in amps) + " |")
            ax.semilogy(ratios, amps, colour + "o-", ms=3, lw=0.8, label=f"n = {n}" if seed == seeds[0] else None)
    ax.axvline(1.0, color="k", ls="--", label="Eq. E2")
    ax.set_xlabel("F / F_c"); ax.set_ylabel("max |lateral mid-node displacement| / initial, 3 s")
    ax.legend(fontsize=8)
    ax.set_title("Euler buckling, pinned-pinned: seeded scans (3 seeds per n)", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(root, "docs/validation/cosserat_euler_pinned.png"), dpi=120)
