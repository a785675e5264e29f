#!/usr/bin/python3
"""Euler buckling with pinned ends (Gazzola et al. (2018), Appendix E.1, Eq. E2): seeded scans of
scenes/validation/cosserat_euler_pinned.toml around F_c = pi^2 alpha / L^2. Every run starts with the
interior nodes displaced laterally by uniform random amounts in [-1e-4, 1e-4] m (numpy default_rng(seed));
the measure is the amplification max |lateral displacement of the middle node| over the run / its initial
value. Prints the table of docs/validation/cosserat.md and draws docs/validation/cosserat_euler_pinned.png.

--map: the probability maps of Gazzola et al. (2018), Fig. 13b,c, P(E_B > 1e-3 J) over (F, alpha) at L = 1 m and over
(F, L) at alpha = 1 N m^2, ten seeded runs per point (see probability_map below); draws
docs/validation/cosserat_euler_map.png and prints the transition table. Runs one simulation at a time
through the rodsim Python module (build/python), which gives the directors for the bending energy.
Usage: scripts/plot_cosserat_euler_pinned.py [build dir]
       scripts/plot_cosserat_euler_pinned.py [build dir] --map     # 14 min of one core (the map itself: 10)
       scripts/plot_cosserat_euler_pinned.py [build dir] --map --replot   # table and figure from out/cosserat_euler_map.json"""
import os, re, subprocess, sys, tempfile, time
import numpy as np

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
build = args[0] if args else os.path.join(root, "build")
SCENE = os.path.join(root, "scenes/validation/cosserat_euler_pinned.toml")
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
    subprocess.run([os.path.join(build, "bin", "rodsim"), "run", SCENE,
                    "--quiet", "--output", out, "--set", f"force.top.force=[0, 0, {-F!r}]", "--set", f"rod.column.geometry={geo}",
                    "--set", f"probe.mid_x.node={n // 2}", "--set", f"probe.mid_y.node={n // 2}",
                    "--set", f"simulation.duration={duration}", "--set", f"simulation.dt={6e-5 if n <= 20 else 3.5e-5}"], check=True, cwd=root)
    columns = list(rodsim_output.read_timeseries(out).values())
    lateral = np.hypot(columns[-2], columns[-1])
    return lateral.max() / lateral[0]


# ------------------------------------------------------------------------------------------------
# The probability maps of Fig. 13b,c. Each run: a column of length L, n = 20 elements, m_r = 1 kg,
# r = 0.025 L, B = diag(alpha, alpha, 2 alpha / 3), S = 1e5 (1, 1, 1) N, no dissipation, as the scene;
# dt = 0.9 x the safe step that position-verlet reports for that (alpha, L); T = 10 s as the paper.
# Perturbation: the interior nodes displaced laterally by a random smooth shape, the sum of the pinned
# column's first three modes sin(k pi s / L) with amplitudes uniform in [-1e-4, 1e-4] m in x and y
# (numpy default_rng(seed), seeds 1-10): its bending energy (at most 6e-5 J on the grid) stays far below
# the threshold, which node-scale offsets of that size would not (2.7e-3 J at n = 20, the 1-D scan's scene).
# The load is switched on over 0.1 s (point-load ramp): a step load leaves an undamped axial oscillation
# that parametrically pumps higher lateral modes at some alpha below F_c (at 0.95 F_c, alpha = 1.2, the
# bending energy grew 22x in 10 s; with the ramp it stays within 1.6x of its initial value at alpha =
# 0.2-2, 0.95 and 0.98 F_c). Instability: the bending energy E_B (the rod's own, from its directors)
# exceeds E_TH = 1e-3 J before T (the paper's criterion); a run stops there.
E_TH, N_MAP, T_MAP, RAMP = 1e-3, 20, 10.0, 0.1
T_LONG = 40.0  # the rows whose runs have not all buckled by T at 1.02 F_c are rerun on the BAND with this T


def sine_geometry(n, length, seed, amp=1e-4, modes=3):
    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, length, n + 1)
    lateral = sum(np.outer(np.sin(k * np.pi * s / length), amp * rng.uniform(-1, 1, 2)) for k in range(1, modes + 1))
    lateral[[0, -1]] = 0.0  # the pinned ends stay on the axis
    return {"shape": "polyline", "points": np.column_stack([lateral, s]).tolist()}


def rod_settings(alpha, length, n, seed):
    r = 0.025 * length
    return {"rod.column.radius": r, "rod.column.density": 1.0 / (np.pi * r * r * length),  # m_r = 1 kg
            "rod.column.bend_twist_stiffness": [alpha, alpha, 2 * alpha / 3],
            "rod.column.geometry": sine_geometry(n, length, seed),
            "probe.mid_x.node": n // 2, "probe.mid_y.node": n // 2}


def log_so3(R):
    """Rotation vectors of a stack of rotation matrices (angles below pi)."""
    angle = np.arccos(np.clip((np.trace(R, axis1=1, axis2=2) - 1) / 2, -1, 1))
    axis = np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]], 1) / 2
    return axis * np.where(angle < 1e-8, 1.0, angle / np.maximum(np.sin(angle), 1e-300))[:, None]


def bending_energy(rod, alpha, length, n):
    """The cosserat rod's bend/twist energy (plugins/rod_cosserat: sum over interior nodes of
    theta^T B theta / (2 D^ E^3), theta = log(Q_{i-1} Q_i^T), D^ = L/n the rest Voronoi length, E its dilatation)."""
    Q, x = rod.directors, rod.positions
    theta = log_so3(Q[:-1] @ np.transpose(Q[1:], (0, 2, 1)))
    edge = np.linalg.norm(np.diff(x, axis=0), axis=1)
    dhat = length / n
    dil = 0.5 * (edge[:-1] + edge[1:]) / dhat
    return float(np.sum(0.5 * (theta**2 @ np.array([alpha, alpha, 2 * alpha / 3])) / (dhat * dil**3)))


def rodsim_module():
    sys.path.insert(0, os.path.join(build, "python"))
    import rodsim
    return rodsim


def stable_dt(alpha, length, n=N_MAP):
    """0.9 x the largest dt that position-verlet accepts for this column (it estimates omega_max at the first
    step and, with a dt far too large, refuses with 'use dt <= ...'): about 5.7e-5 s sqrt(L / 1 m)."""
    rodsim = rodsim_module()
    settings = dict(rod_settings(alpha, length, n, 1), **{"simulation.dt": 1.0, "simulation.duration": 1.0})
    try:
        with rodsim.Simulation(SCENE, set=settings, output=tempfile.mkdtemp(prefix="cosserat-euler-dt-"), replace=True) as sim:
            sim.step()
    except rodsim.SimulationError as e:
        return 0.9 * float(re.search(r"use dt <= ([0-9.eE+-]+) s", str(e)).group(1))
    raise RuntimeError("position-verlet accepted dt = 1 s")


def onset_time(F, alpha, length, seed, dt, n=N_MAP, duration=T_MAP, out=None):
    """Time at which the bending energy first exceeds E_TH (checked every 0.02 s), or nan if not before T."""
    rodsim = rodsim_module()
    settings = dict(rod_settings(alpha, length, n, seed), **{
        "simulation.duration": duration, "simulation.dt": dt, "force.top.force": [0, 0, -F], "force.top.ramp": RAMP,
        "output.timeseries_every": 0.05})
    with rodsim.Simulation(SCENE, set=settings, output=out or tempfile.mkdtemp(prefix="cosserat-euler-map-"), replace=True) as sim:
        rod = sim.rod("column")
        while True:
            if bending_energy(rod, alpha, length, n) > E_TH:
                return sim.time
            if sim.time >= duration - 0.5 * dt:
                return np.nan
            sim.run(until=min(duration, sim.time + 0.02))


BAND = (0.98, 0.99, 1.00, 1.01, 1.02, 1.03)  # F / F_c: each row also has these points, for the transition


def probability_map(rows, fc, seeds=range(1, 11), forces=np.arange(1.0, 24.01, 1.0)):
    """P over F (1-24 N every 1 N, plus the BAND around F_c of the row) for each row (alpha, L).
    Returns {row: (F values, P, median onset time per F)}."""
    out = tempfile.mkdtemp(prefix="cosserat-euler-map-")
    result = {}
    for alpha, length in rows:
        dt = stable_dt(alpha, length)
        Fs = np.unique(np.round(np.concatenate([forces, np.array(BAND) * fc(alpha, length)]), 9))
        t0 = time.process_time()
        onsets = np.array([[onset_time(F, alpha, length, seed, dt, out=out) for seed in seeds] for F in Fs])
        P = np.mean(np.isfinite(onsets), axis=1)
        median = np.array([np.median(o[np.isfinite(o)]) if np.isfinite(o).any() else np.nan for o in onsets])
        result[(alpha, length)] = (Fs, P, median)
        print(f"alpha = {alpha:.3g}, L = {length:.3g}: dt = {dt:.3g} s, {len(Fs) * len(seeds)} runs, "
              f"{time.process_time() - t0:.1f} s CPU", file=sys.stderr, flush=True)
    return result


def band_probability(F_over_fc, alpha, length, duration, n=N_MAP, dt=None, seeds=range(1, 11)):
    """P at the given F/F_c of one row (alpha, L), with a longer T or another n."""
    dt = dt or stable_dt(alpha, length, n)
    fc = np.pi**2 * alpha / length**2
    out = tempfile.mkdtemp(prefix="cosserat-euler-band-")
    return [float(np.mean([np.isfinite(onset_time(f * fc, alpha, length, seed, dt, n=n, duration=duration, out=out))
                           for seed in seeds])) for f in F_over_fc]


def transition_table(result, fc, label, late):
    """For each row: P at the BAND points, the smallest F/F_c with P >= 0.5 on the row and the median onset time
    there; for the rows in `late` (rerun with T = T_LONG), the smallest BAND point with P >= 0.5 then."""
    print(f"| {label} | F_c (N) | " + " | ".join(f"P at {b:.2f}" for b in BAND)
          + " | smallest F/F_c with P >= 0.5 | median onset there (s) | the same with T = 40 s |")
    print("|---|---|" + "---|" * (len(BAND) + 3))
    for key, (Fs, P, median) in result.items():
        c = fc(*key)
        band = [P[np.argmin(abs(Fs - b * c))] for b in BAND]
        first = np.nonzero(P >= 0.5)[0]
        first_txt = f"{Fs[first[0]] / c:.3f}" if len(first) else "-"
        onset_txt = f"{median[first[0]]:.1f}" if len(first) else "-"
        long_txt = ""
        if key in late:
            above = [b for b, p in zip(BAND, late[key]) if p >= 0.5]
            long_txt = (f"{above[0]:.3f}" if above else "> 1.03") + " (P: " + ", ".join(f"{p:.1f}" for p in late[key]) + ")"
        value = key[0] if label.startswith("alpha") else key[1]
        print(f"| {value:.3g} | {c:.3f} | " + " | ".join(f"{p:.1f}" for p in band) + f" | {first_txt} | {onset_txt} | {long_txt} |")


def draw_map(ax, result, row_of, row_step, curve, ylabel, title, legend_at):
    """Each row as its own strip of cells (the rows hold the BAND points at different F)."""
    for key, (Fs, P, _) in result.items():
        y = row_of(key)
        edges = np.concatenate([[Fs[0] - 0.5], 0.5 * (Fs[1:] + Fs[:-1]), [Fs[-1] + 0.5]])
        im = ax.pcolormesh(edges, [y - row_step / 2, y + row_step / 2], P[None, :], cmap="viridis", vmin=0, vmax=1)
    ax.plot(*curve, "w-", lw=1.5, label="Eq. E2: F_c = pi^2 alpha / L^2")
    ax.set_xlabel("F (N)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc=legend_at)
    return im


def euler_map():
    import json
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fc = lambda alpha, length: np.pi**2 * alpha / length**2  # Eq. E2
    alphas = np.round(np.arange(0.2, 2.001, 0.2), 3)
    lengths = np.round(np.arange(0.7, 2.001, 0.1), 3)
    cache = os.path.join(root, "out", "cosserat_euler_map.json")
    if "--replot" in sys.argv:  # the table and the figure again from the runs' results
        raw = json.load(open(cache))
        unpack = lambda rows: {tuple(r["row"]): (np.array(r["F"]), np.array(r["P"]), np.array(r["onset"], dtype=float)) for r in rows}
        by_alpha, by_length = unpack(raw["alpha"]), unpack(raw["L"])
        late = {tuple(r["row"]): r["P"] for r in raw["late"]}
        n100 = raw["n100"]
    else:
        t0 = time.process_time()
        by_alpha = probability_map([(a, 1.0) for a in alphas], fc)
        by_length = probability_map([(1.0, l) for l in lengths], fc)
        print(f"whole map: {time.process_time() - t0:.0f} s CPU", file=sys.stderr)
        # Rows where not every run at 1.02 F_c has buckled within T: the BAND again with T = T_LONG.
        late = {}
        for res in (by_alpha, by_length):
            for key, (Fs, P, _) in res.items():
                if P[np.argmin(abs(Fs - 1.02 * fc(*key)))] < 1:
                    late[key] = band_probability(BAND, *key, duration=T_LONG)
        # The paper's resolution at alpha = L = 1: n = 100, dt = 1e-5 s, T = 10 s.
        n100 = band_probability(BAND, 1.0, 1.0, duration=T_MAP, n=100, dt=1e-5)
        print(f"with the late rows and n = 100: {time.process_time() - t0:.0f} s CPU", file=sys.stderr)
        pack = lambda res: [{"row": list(k), "F": v[0].tolist(), "P": v[1].tolist(),
                             "onset": [None if np.isnan(m) else m for m in v[2]]} for k, v in res.items()]
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        json.dump({"alpha": pack(by_alpha), "L": pack(by_length), "late": [{"row": list(k), "P": v} for k, v in late.items()],
                   "n100": n100}, open(cache, "w"))
    transition_table(by_alpha, fc, "alpha (N m^2)", late)
    print()
    transition_table(by_length, fc, "L (m)", late)
    print("\nalpha = L = 1 at the paper's n = 100, dt = 1e-5 s, T = 10 s: "
          + ", ".join(f"P({b:.2f} F_c) = {p:.1f}" for b, p in zip(BAND, n100)))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5), layout="constrained")
    a = np.linspace(alphas[0] - 0.1, alphas[-1] + 0.1, 200)
    im = draw_map(ax1, by_alpha, lambda k: k[0], 0.2, (np.pi**2 * a, a), "bending stiffness alpha (N m^2)",
                  "(b) L = 1 m", "upper left")
    ax1.set_ylim(a[0], a[-1])
    l = np.linspace(lengths[0] - 0.05, lengths[-1] + 0.05, 200)
    draw_map(ax2, by_length, lambda k: k[1], 0.1, (np.pi**2 / l**2, l), "length L (m)", "(c) alpha = 1 N m^2", "lower left")
    ax2.set_ylim(l[0], l[-1])
    ax2.set_xlim(ax1.get_xlim())
    fig.colorbar(im, ax=[ax1, ax2], label="P")
    fig.suptitle("Euler buckling, pinned-pinned: P(E_B > 1e-3 J within 10 s), 10 seeded runs per point, n = 20; "
                 "each row also holds F/F_c = 0.98-1.03", fontsize=9)
    fig.savefig(os.path.join(root, "docs/validation/cosserat_euler_map.png"), dpi=120)


if __name__ == "__main__":
    if "--map" in sys.argv:
        euler_map()
        sys.exit(0)
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
