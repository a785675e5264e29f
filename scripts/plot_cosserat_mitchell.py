#!/usr/bin/python3
"""Mitchell buckling (Gazzola et al. (2018), Appendix E.2, Eq. E3, Fig. 14): seeded scans of
scenes/validation/cosserat_mitchell.toml over beta/alpha at fixed total twist Phi = 2 pi k. A naturally
straight rod closed into a ring and twisted by Phi buckles out of plane when Phi > Phi_c = 2 sqrt(3) pi/(beta/alpha),
i.e. at fixed Phi = 2 pi k when beta/alpha > (beta/alpha)_c = sqrt(3)/k.

Every run starts from the ring with its nodes displaced out of plane by uniform random amounts in [-1e-4, 1e-4] m
(numpy default_rng(seed)), is settled by a translational damping until 0.02 s (the in-plane breathing of the
prestressed ring, see the scene) and then runs undamped to T. Measure: the largest translational kinetic energy
E_T of the ring after 0.02 s (probe "E_T"); unstable when E_T > 1e-4 J (the threshold of Gazzola et al. (2018)).
Prints the tables of docs/validation/cosserat.md and draws docs/validation/cosserat_mitchell.png.
Usage: scripts/plot_cosserat_mitchell.py [build dir] [--write-scene]
       scripts/plot_cosserat_mitchell.py [build dir] --map [--jobs N]   # Fig. 14a: P over (Phi, beta/alpha),
           ten seeds per point, docs/validation/cosserat_mitchell_map.png and its table"""
import os, subprocess, sys, tempfile
import numpy as np

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
build = args[0] if args else os.path.join(root, "build")
SCENE = os.path.join(root, "scenes/validation/cosserat_mitchell.toml")
L, ALPHA, E_TH, T_SETTLE = 1.0, 1.0, 1e-4, 0.02


def ratio_c(k):
    """(beta/alpha)_c at Phi = 2 pi k (Eq. E3)."""
    return 2 * np.sqrt(3) * np.pi / (2 * np.pi * k)


def ring_points(n, seed, amp=1e-4, smooth=False):
    """The n vertices of the circle of length L, displaced out of plane: by independent uniform amounts in
    [-amp, amp] (smooth = False: the committed scene), or (smooth = True) by a sum of the Fourier modes 1 .. 6 of
    the ring with uniform random amplitudes in [-amp, amp]/10 and phases, the same at every n (node-scale noise
    puts more energy into the shortest waves as n grows and, at n = 100, leaves E_T ~ 1e-4 J after the
    settling, so the convergence in n uses the smooth one)."""
    rng = np.random.default_rng(seed)
    R = L / (2 * np.pi)
    phi = 2 * np.pi * np.arange(n) / n
    if smooth:
        z = np.zeros(n)
        for m in range(1, 7):
            z += 0.1 * amp * rng.uniform(-1, 1) * np.cos(m * phi + 2 * np.pi * rng.uniform())
    else:
        z = [amp * rng.uniform(-1, 1) for _ in range(n)]
    return [[R * np.cos(phi[i]), R * np.sin(phi[i]), float(z[i])] for i in range(n)]


def geometry(n, seed, smooth=False):
    return "{shape = \"polyline\", points = [" + ", ".join(f"[{p[0]!r}, {p[1]!r}, {p[2]!r}]" for p in ring_points(n, seed, smooth=smooth)) + "]}"


def run(ratio, k=2, n=50, seed=1, duration=2.0, smooth=False, S=None, dt=None):
    """Largest E_T after the settling, first time it exceeds E_TH (or nan), and the E_T history, all cut where the
    total energy leaves 1 % of its value after the settling (the violent post-buckling motion can outrun the
    undamped explicit step after a second or so)."""
    out = tempfile.mkdtemp(prefix=f"cosserat-mitchell-{n}-")
    beta = ratio * ALPHA
    # twist density 2 pi k / L (the rod rounds initial_twist * L_polygon to the whole turn)
    subprocess.run([os.path.join(build, "bin", "rodsim"), "run", SCENE, "--quiet", "--output", out,
                    "--set", f"rod.ring.bend_twist_stiffness=[{ALPHA!r}, {ALPHA!r}, {beta!r}]",
                    "--set", f"rod.ring.initial_twist={2 * np.pi * k / L!r}",
                    "--set", f"rod.ring.geometry={geometry(n, seed, smooth)}",
                    "--set", f"simulation.duration={duration}"]
                   + (["--set", f"rod.ring.shear_stretch_stiffness=[{S!r}, {S!r}, {S!r}]"] if S else [])
                   + (["--set", f"simulation.dt={dt!r}"] if dt else []), cwd=root)
    # Without dissipation the violent post-buckling motion (E_T ~ 50 J, half the elastic energy) can outrun
    # the explicit step after a second or so and the run stops (status "failed"); only the onset matters
    # here, long before (E_T crosses 1e-4 J within 0.1-0.5 s above the threshold): read what was written.
    ts = rodsim_output.read_timeseries(out)
    kept = np.isfinite(ts["E_T"])
    t = ts["t"][kept]
    et = ts["E_T"][kept]
    # Only while position-verlet still conserves the total energy (to 1 %) after the settling.
    etot = (ts["kinetic_energy"] + ts["elastic_energy"])[kept]
    e0 = etot[np.argmax(t > T_SETTLE)]
    bad = np.nonzero((t > T_SETTLE) & ~(np.abs(etot - e0) < 1e-2 * e0))[0]
    if len(bad):
        t, et = t[:bad[0]], et[:bad[0]]
    after = t > T_SETTLE
    over = np.nonzero(after & (et > E_TH))[0]
    return et[after].max(), (t[over[0]] if len(over) else np.nan), t, et


def growth_rate(t, et):
    """Growth rate of the amplitude (E_T ~ amplitude^2): least-squares slope / 2 of ln(E_T envelope) (maxima over
    0.01 s windows) over its first stretch between 1e-5 J (above the ringing of the seeded offsets, ~2e-6 J)
    and 1e-2 J (still linear: 1e-4 of the 101 J of elastic energy)."""
    tc, env = [], []
    for a in np.arange(T_SETTLE, t[-1], 0.01):
        m = (t >= a) & (t < a + 0.01)
        if m.any():
            tc.append(a + 0.005)
            env.append(et[m].max())
    tc, env = np.array(tc), np.array(env)
    idx = np.nonzero((env > 1e-5) & (env < 1e-2))[0]
    if len(idx) < 3:
        return np.nan
    stop = idx[0]
    while stop + 1 < len(env) and 1e-5 < env[stop + 1] < 1e-2:
        stop += 1
    return np.polyfit(tc[idx[0]:stop + 1], np.log(env[idx[0]:stop + 1]), 1)[0] / 2


def onset_scan(n, k=2, factors=(1.02, 1.04, 1.06, 1.10, 1.20), S=None, dt=None):
    """Growth rates above the threshold and the discrete threshold from lambda^2 linear in beta/alpha (a
    stationary bifurcation of a conservative system: lambda^2 ~ (beta/alpha - threshold) near it)."""
    rc = ratio_c(k)
    lam = np.array([growth_rate(*run(f * rc, k=k, n=n, duration=0.8, smooth=True, S=S, dt=dt)[2:]) for f in factors])
    c = np.polyfit(np.array(factors[:3]), lam[:3] ** 2, 1)  # the three nearest the threshold
    return lam, -c[1] / c[0], c


def write_scene():
    """Rewrites the geometry line of the committed scene (n = 50, seed 1)."""
    text = open(SCENE).read().splitlines()
    text = [("geometry = " + geometry(50, 1)) if line.startswith("geometry = ") else line for line in text
            if not line.startswith("nodes = ")]  # the polyline's points are the nodes (no resampling)
    open(SCENE, "w").write("\n".join(text) + "\n")


def probability_map(jobs=2, seeds=range(1, 11), ks=(1, 2, 3, 4, 5), ratios=np.arange(0.25, 2.01, 0.125)):
    """Fig. 14a: the fraction of seeded runs that buckle (E_T > E_th after the settling) at each total twist
    Phi = 2 pi k and beta/alpha, ten random seeds per point as in the paper; the runs go two at a time."""
    from concurrent.futures import ThreadPoolExecutor
    points = [(k, r, seed) for k in ks for r in ratios for seed in seeds]
    with ThreadPoolExecutor(jobs) as pool:
        unstable = list(pool.map(lambda p: bool(run(p[1], k=p[0], seed=p[2])[0] > E_TH), points))
    P = np.zeros((len(ks), len(ratios)))
    for (k, r, _), u in zip(points, unstable):
        P[ks.index(k), list(ratios).index(r)] += u / len(seeds)
    return np.array(ks), ratios, P


if __name__ == "__main__":
    if "--write-scene" in sys.argv:
        write_scene()
        sys.exit(0)
    if "--map" in sys.argv:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 2
        ks, ratios, P = probability_map(jobs)
        print("| Phi / 2 pi \\ beta/alpha | " + " | ".join(f"{r:.3g}" for r in ratios) + " | Eq. E3: (beta/alpha)_c |")
        print("|---|" + "---|" * (len(ratios) + 1))
        for i, k in enumerate(ks):
            print(f"| {k} | " + " | ".join(f"{p:.1f}" for p in P[i]) + f" | {ratio_c(k):.3f} |")
        # First ratio with P > 0.5 against Eq. E3, per Phi: the transition on the grid.
        for i, k in enumerate(ks):
            above = np.nonzero(P[i] > 0.5)[0]
            print(f"Phi = {k} x 2 pi: buckles from beta/alpha = {ratios[above[0]]:.3f} on the grid"
                  if len(above) else f"Phi = {k} x 2 pi: never buckles on the grid", f"(Eq. E3: {ratio_c(k):.3f})")
        fig, ax = plt.subplots(figsize=(6, 4))
        step = ratios[1] - ratios[0]
        im = ax.imshow(P, origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=1,
                       extent=[ratios[0] - step / 2, ratios[-1] + step / 2, 2 * np.pi * (ks[0] - 0.5), 2 * np.pi * (ks[-1] + 0.5)])
        rr = np.linspace(0.3, ratios[-1] + step / 2, 200)
        ax.plot(rr, 2 * np.sqrt(3) * np.pi / rr, "w-", lw=1.5, label="Eq. E3: Phi_c = 2 sqrt(3) pi / (beta/alpha)")
        ax.set_ylim(2 * np.pi * (ks[0] - 0.5), 2 * np.pi * (ks[-1] + 0.5))
        ax.set_xlabel("beta / alpha")
        ax.set_ylabel("total twist Phi (rad)")
        ax.set_title("Mitchell buckling: P(E_T > 1e-4 J), 10 seeds per point, n = 50, T = 2 s", fontsize=9)
        ax.legend(fontsize=8, loc="upper right")
        fig.colorbar(im, ax=ax, label="P")
        fig.tight_layout()
        fig.savefig(os.path.join(root, "docs/validation/cosserat_mitchell_map.png"), dpi=120)
        sys.exit(0)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = 2
    rc = ratio_c(k)
    # Growth rates and the discrete threshold against n.
    rate_factors = (1.02, 1.04, 1.06, 1.10, 1.20)
    print("| n | " + " | ".join(f"lambda at {f:.2f}" for f in rate_factors) + " | threshold from lambda^2 = 0 |")
    print("|---|" + "---|" * (len(rate_factors) + 1))
    fits = {}
    for n in [25, 50, 100]:
        lam, thr, c = onset_scan(n, k, rate_factors)
        fits[n] = (lam, thr, c)
        print(f"| {n} | " + " | ".join(f"{l:.2f}" for l in lam) + f" | {thr:.4f} (beta/alpha)_c = {thr * rc:.5f} |")
    # The shearable, extensible model's own offset: 10x stiffer S (dt 3 us for the faster shear mode), n = 50.
    lam, thr, c = onset_scan(50, k, rate_factors[:3], S=1e6, dt=3e-6)
    print(f"| 50, S = 1e6 N | " + " | ".join(f"{l:.2f}" for l in lam) + " | | |" + f" {thr:.4f} (beta/alpha)_c |")
    factors = [0.80, 0.90, 0.94, 0.96, 0.98, 1.00, 1.02, 1.04, 1.06, 1.10, 1.20]
    seeds = [1, 2, 3]
    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4))
    print(f"Phi = {k} x 2 pi, (beta/alpha)_c = sqrt(3)/{k} = {rc:.5f} (Eq. E3); n = 50, T = 2 s")
    print("| seed | " + " | ".join(f"{f:.2f}" for f in factors) + " |")
    print("|---|" + "---|" * len(factors))
    onset = {}
    for seed in seeds:
        res = [run(f * rc, k=k, seed=seed) for f in factors]
        print(f"| {seed} (max E_T, J) | " + " | ".join(f"{r[0]:.2g}" for r in res) + " |")
        print(f"| {seed} (t at E_T > 1e-4 J, s) | " + " | ".join("-" if np.isnan(r[1]) else f"{r[1]:.3f}" for r in res) + " |")
        ax.semilogy(factors, [r[0] for r in res], "o-", ms=3, lw=0.8, label=f"seed {seed}")
        for f, r in zip(factors, res):
            onset.setdefault(f, []).append(r)
    ax.axvline(1.0, color="k", ls="--", label="Eq. E3")
    ax.axhline(E_TH, color="gray", ls=":", label="E_th = 1e-4 J")
    ax.set_xlabel("(beta/alpha) / (beta/alpha)_c,  Phi = 4 pi")
    ax.set_ylabel("max translational kinetic energy E_T (J), 0.02-2 s")
    ax.set_ylim(1e-7, 1e3)
    ax.legend(fontsize=8)
    ax.set_title("Mitchell buckling, n = 50: seeded scan (3 seeds)", fontsize=9)
    for f in [0.96, 1.02, 1.04, 1.10, 1.20]:
        r = onset[f][0]
        ax2.semilogy(r[2][1:], np.maximum(r[3][1:], 1e-16), lw=0.8, label=f"{f:.2f} (beta/alpha)_c")
    ax2.axhline(E_TH, color="gray", ls=":")
    ax2.set_xlabel("t (s)")
    ax2.set_ylabel("E_T (J), seed 1")
    ax2.legend(fontsize=8)
    ax2.set_title("translational kinetic energy against time", fontsize=9)
    for n, colour in [(25, "g"), (50, "r"), (100, "b")]:
        lam, thr, c = fits[n]
        ax3.plot(rate_factors, lam ** 2, colour + "o", ms=4, label=f"n = {n}: threshold {thr:.4f}")
        xs = np.linspace(thr, max(rate_factors), 50)
        ax3.plot(xs, np.polyval(c, xs), colour + "-", lw=0.7)
    ax3.axvline(1.0, color="k", ls="--", label="Eq. E3")
    ax3.set_xlabel("(beta/alpha) / (beta/alpha)_c")
    ax3.set_ylabel("lambda^2 (1/s^2), amplitude growth rate squared")
    ax3.legend(fontsize=8)
    ax3.set_title("growth rate: lambda^2 linear, zero at the discrete threshold", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(root, "docs/validation/cosserat_mitchell.png"), dpi=120)
