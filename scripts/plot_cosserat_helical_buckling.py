#!/usr/bin/python3
"""Localized helical buckling (Gazzola et al. (2018), Sec. IV.1, Fig. 3, Eqs. 25-26).

Solves the paper's 'semi-finite' correction system for t_h and m_h, writes the initial centreline
(Eq. 25) for scenes/validation/cosserat_helical_buckling.toml, runs the scene at several n, compares
the simulated envelope (Eq. 26) with the analytic one (L1, L2, Linf), runs the undamped twisting
phase for the energy (Fig. 3d), prints the tables of docs/validation/cosserat.md and draws
docs/validation/cosserat_helical_buckling.png and cosserat_helical_buckling_energy.png.

Usage: scripts/plot_cosserat_helical_buckling.py [build dir] [n ...]      (default n: 50 100 200)
       scripts/plot_cosserat_helical_buckling.py --analytic    (t_h, m_h, ...; writes the scene's n = 100 centreline)
"""
import os, re, subprocess, sys, tempfile
import numpy as np
from scipy.optimize import brentq

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENE = os.path.join(root, "scenes/validation/cosserat_helical_buckling.toml")

# Fig. 3 settings
L, D, PHI = 100.0, 3.0, 27 * 2 * np.pi
ALPHA, BETA = 1.345, 0.789


def semi_finite():
    """t_h, m_h from the paper's system (Sec. IV.1):
         D/L = sqrt(4/(pi^2 t_h) (1 - m_h^2/(4 t_h))),
         Phi = 2 pi m_h/(beta/alpha) + 4 arccos(m_h/(2 sqrt(t_h))).
    With psi = arccos(m_h/(2 sqrt t_h)) the first gives sqrt(t_h) = 2 sin(psi)/(pi D/L), m_h = 2 sqrt(t_h) cos(psi),
    and the second is one equation in psi. It has two roots in (0, pi/2); the first (the wider helix, lower
    energy, the branch reached from the straight rod) is the paper's."""
    def tm(psi):
        st = 2 * np.sin(psi) / (np.pi * D / L)
        return st * st, 2 * st * np.cos(psi)

    def f(psi):
        t, m = tm(psi)
        return 2 * np.pi * m / (BETA / ALPHA) + 4 * psi - PHI

    grid = np.linspace(1e-6, np.pi / 2 - 1e-9, 4001)
    vals = np.array([f(p) for p in grid])
    k = np.nonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))[0][0]
    psi = brentq(f, grid[k], grid[k + 1], xtol=1e-15)
    t, m = tm(psi)
    Mh, Th = m * 2 * np.pi * ALPHA / L, t * 4 * np.pi**2 * ALPHA / L**2
    return dict(psi=psi, t=t, m=m, a=np.pi * np.sqrt(4 * t - m * m), Mh=Mh, Th=Th, EF=(Mh * PHI + Th * D) / 2,
                twist=2 * np.pi * m / (BETA / ALPHA))


def eq25(sb, an):
    """Eq. 25: r_eq(s_bar), s_bar = s/L - 0.5 in [-0.5, 0.5]."""
    t, m = an["t"], an["m"]
    w = np.sqrt(4 * t - m * m)
    c = L * w / (2 * np.pi * t)
    sech = 1 / np.cosh(np.pi * sb * w)
    return np.stack([c * sech * np.sin(m * np.pi * sb), -c * sech * np.cos(m * np.pi * sb),
                     L * sb - c * np.tanh(np.pi * sb * w)], axis=1)


def energy_eq25(an, samples=2000001):
    """Elastic energy of Eq. 25 itself: (1/2) alpha int kappa^2 ds + (1/2) M_h^2 L/beta (uniform twist couple M_h).
    112.49124 J = 0.99542 E_F: E_F = (M_h Phi + T_h D)/2 is not the energy of its own solution."""
    sb = np.linspace(-0.5, 0.5, samples)
    ds = sb[1] - sb[0]
    r = eq25(sb, an)
    r1 = np.gradient(r, ds, axis=0)
    r2 = np.gradient(r1, ds, axis=0)
    sp = np.linalg.norm(r1, axis=1)
    kappa = np.linalg.norm(np.cross(r1, r2), axis=1) / sp**3
    return 0.5 * ALPHA * np.trapz(kappa**2 * sp, sb) + 0.5 * an["Mh"] ** 2 * L / BETA


def envelope_exact(sb, an):
    """Eq. 26 on Eq. 25: cos(theta) = t.k = 1 - (4t - m^2)/(2t) sech^2(a s_bar), so phi = tanh^2(a s_bar)."""
    return np.tanh(an["a"] * sb) ** 2


def envelope(x):
    """Eq. 26 on a discrete centreline (element tangents). Returns s_bar of the element centres measured from
    the centre of element 0 (the clamp) with h = L/(n-1), and phi."""
    tg = np.diff(x, axis=0)
    tg /= np.linalg.norm(tg, axis=1)[:, None]
    c = tg[:, 2]
    cmax = c.min()
    n = len(tg)
    return np.arange(n) / (n - 1) - 0.5, (c - cmax) / (1 - cmax)


def errors(x, an):
    sb, phi = envelope(x)
    e = np.abs(phi - envelope_exact(sb, an))
    return e.max(), e.mean(), np.sqrt((e * e).mean())


T_TWIST = 200.0  # s, the top clamp's motion (scene: stop = 200)


def nodes_on_eq25(an, n):
    """Initial nodes: Eq. 25 with rest lengths exactly h = L/(n-1) (the rod takes its rest lengths from the
    initial chords). The clamped end elements lie on the axis, their centres (the clamps) at s_bar = -/+0.5;
    the interior nodes are placed along Eq. 25 by a chord walk of length h from node 1. Returns the nodes and
    the translation of the top clamp that brings the centre of element n-1 to (0, 0, L - D) exactly."""
    h = L / (n - 1)
    c0 = eq25(np.array([-0.5]), an)[0]
    curve = lambda u: eq25(np.atleast_1d(u), an)[0] - c0
    x = [np.array([0, 0, -h / 2]), np.array([0, 0, h / 2])]
    u = -0.5 + 0.5 / (n - 1)
    for _ in range(n - 2):
        p = x[-1]
        g = lambda v: np.linalg.norm(curve(v) - p) - h
        hi = u + 0.5 / (n - 1)
        while g(hi) < 0:
            hi += 0.5 / (n - 1)
        u = brentq(g, u, hi, xtol=1e-15)
        x.append(curve(u))
    x.append(x[-1] + np.array([0, 0, h]))
    x = np.array(x)
    move = np.array([0, 0, L - D - h / 2]) - x[-2]
    return x, move


def transport_angle(x):
    """Rotation about k of d1 parallel-transported from element 0 to element n-1 of the centreline x (the
    writhe part of Phi for the discrete curve: 4 psi + O(h^2))."""
    t = np.diff(x, axis=0)
    t /= np.linalg.norm(t, axis=1)[:, None]
    d = np.array([1.0, 0, 0])
    d0 = d.copy()
    for e in range(1, len(t)):
        ax = np.cross(t[e - 1], t[e])
        s = np.linalg.norm(ax)
        if s > 1e-14:
            k, ang = ax / s, np.arctan2(s, t[e - 1].dot(t[e]))
            d = d * np.cos(ang) + np.cross(k, d) * np.sin(ang) + k * k.dot(d) * (1 - np.cos(ang))
    return np.arctan2(np.cross(d0, d)[2], d0.dot(d))


def initial_twist(x):
    """Twist rate (rad/m) of the initial frames that makes the end frames' relative rotation Phi exactly."""
    return (PHI - transport_angle(x)) / L


def write_points(path, an, n):
    x, move = nodes_on_eq25(an, n)
    tau = initial_twist(x)
    with open(path, "w") as f:
        f.write(f"# Eq. 25 (t_h = {an['t']:.12g}, m_h = {an['m']:.12g}), n = {n} elements, chords h = L/(n-1); "
                f"top clamp velocity {move[0] / T_TWIST:.6e}, {move[1] / T_TWIST:.6e}, {move[2] / T_TWIST:.6e} m/s "
                f"initial_twist {tau!r} rad/m (scripts/plot_cosserat_helical_buckling.py)\n")
        for p in x:
            f.write(f"{p[0]:.17g},{p[1]:.17g},{p[2]:.17g}\n")
    return move / T_TWIST, tau


def dt_for(n):
    return 9e-4 if n <= 100 else (8e-4 if n <= 200 else 5.5e-4)  # stability limits 1.05, 0.91, ~0.64 ms


def run(build, n, out, extra=()):
    pts = os.path.join(out, "points.csv")
    v, tau = write_points(pts, an, n)
    cmd = [os.path.join(build, "bin", "rodsim"), "run", SCENE, "--quiet", "--output", out,
           "--set", f"rod.filament.geometry.file={pts}", "--set", f"constraint.top.velocity=[{v[0]!r}, {v[1]!r}, {v[2]!r}]",
           "--set", f"rod.filament.initial_twist={tau!r}",
           "--set", f"simulation.dt={dt_for(n)}"] + list(extra)
    subprocess.run(cmd, check=True, cwd=root)
    ts = rodsim_output.read_timeseries(out)
    return list(ts), np.column_stack(list(ts.values())), final_positions(out)


def final_positions(out):
    """The node positions of a run's final.csv (columns x, y, z after rod and node)."""
    return np.vstack(list(rodsim_output.read_final(out).values()))


an = semi_finite()

if __name__ == "__main__":
    print(f"semi-finite system: psi = {an['psi']:.10f}, t_h = {an['t']:.10f}, m_h = {an['m']:.10f}, "
          f"a = pi sqrt(4t_h - m_h^2) = {an['a']:.8f}")
    U25 = energy_eq25(an)
    print(f"energy of Eq. 25: {U25:.6f} J = {U25 / an['EF']:.6f} E_F")
    print(f"M_h = {an['Mh']:.8f} N m, T_h = {an['Th']:.8f} N, E_F = (M_h Phi + T_h D)/2 = {an['EF']:.6f} J, "
          f"twist part of Phi = {an['twist']:.6f} rad, writhe part 4 psi = {4 * an['psi']:.6f} rad")
    if "--analytic" in sys.argv:  # also (re)writes the scene's centreline for n = 100
        v, tau = write_points(os.path.join(root, "scenes/validation/cosserat_helical_buckling_points.csv"), an, 100)
        print(f"n = 100: top clamp velocity {v[0]!r}, {v[1]!r}, {v[2]!r} m/s, initial_twist {tau!r} rad/m")
        sys.exit(0)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = args[0] if args and not args[0].isdigit() else os.path.join(root, "build")
    ns = [int(a) for a in args if a.isdigit()] or [50, 100, 200]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    sbf = np.linspace(-0.5, 0.5, 2001)
    ax1.plot(sbf, envelope_exact(sbf, an), "k-", lw=1, label="Eq. 25-26")
    res = []
    print("| n | dt (ms) | L_inf | L_1 | L_2 | L_inf ratio | elastic energy / E_F | U/U_25 - 1 | kinetic energy at the end (J) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        out = tempfile.mkdtemp(prefix=f"cosserat-helix-{n}-")
        head, rows, x = run(build, n, out)
        li, l1, l2 = errors(x, an)
        U, K = rows[-1][head.index("elastic_energy")], rows[-1][head.index("kinetic_energy")]
        ratio = f"{res[-1][1] / li:.2f}" if res else ""
        res.append((n, li, l1, l2))
        print(f"| {n} | {dt_for(n) * 1e3:.2f} | {li:.3e} | {l1:.3e} | {l2:.3e} | {ratio} | {U / an['EF']:.5f} | "
              f"{U / U25 - 1:.1e} | {K:.1e} |")
        sb, phi = envelope(x)
        ax1.plot(sb, phi, ".", ms=3, label=f"n = {n}")
    ax1.set_xlabel("s/L - 0.5"); ax1.set_ylabel("envelope phi (Eq. 26)"); ax1.legend(fontsize=8)
    ax1.set_xlim(-0.3, 0.3)
    r = np.array(res)
    for k, (c, lab) in enumerate([("k", "L_inf"), ("b", "L_1"), ("r", "L_2")]):
        ax2.loglog(r[:, 0], r[:, k + 1], c + "o-", label=lab)
    ax2.loglog(r[:, 0], r[0, 1] * (r[0, 0] / r[:, 0]) ** 2, "k:", label="n^-2")
    ax2.set_xlabel("n"); ax2.set_ylabel("error of the envelope"); ax2.legend(fontsize=8)
    fig.suptitle("Localized helical buckling (Gazzola et al. 2018, Fig. 3b-c)", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(root, "docs/validation/cosserat_helical_buckling.png"), dpi=120)

    # Fig. 3d: no dissipation, twisting phase then free; total energy against E_F
    n = ns[0]
    out = tempfile.mkdtemp(prefix=f"cosserat-helix-energy-{n}-")
    head, rows, x = run(build, n, out, ["--set", "force.friction.coefficient=0", "--set",
                                        "rod.filament.rotational_damping=0", "--set", "simulation.duration=600"])
    tt = rows[:, head.index("t")]
    Et = rows[:, head.index("elastic_energy")] + rows[:, head.index("kinetic_energy")]
    after = tt >= 200.0
    E0 = Et[after][0]
    print(f"energy (n = {n}, no dissipation): E after twisting {E0:.6f} J = {E0 / an['EF']:.5f} E_F, "
          f"max |E - E(200 s)| over 200-600 s = {np.abs(Et[after] - E0).max():.3e} J "
          f"({np.abs(Et[after] - E0).max() / E0:.2e} relative)")
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(tt, Et, "r-", label="total energy, no dissipation")
    ax.plot(tt, rows[:, head.index("elastic_energy")], "b-", lw=0.8, label="elastic energy")
    ax.axhline(an["EF"], color="k", ls="--", label="E_F = (M_h Phi + T_h D)/2")
    ax.axhline(U25, color="g", ls=":", label="energy of Eq. 25")
    ax.set_xlabel("t (s)"); ax.set_ylabel("energy (J)"); ax.legend(fontsize=8)
    ax.set_title(f"Helical buckling, n = {n}: energy (Gazzola et al. 2018, Fig. 3d)", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(root, "docs/validation/cosserat_helical_buckling_energy.png"), dpi=120)
