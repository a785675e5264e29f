#!/usr/bin/python3
"""Trefoil knot tightening (IMC seed SI C.1): pulling force against loop size, simulation vs theory.

Runs scenes/knots/trefoil.toml through build/bin/rodsim (or reads an existing output directory),
measures per VTK frame

  e   = (contour length) - (end-to-end distance): the end-to-end shortening, i.e. the length of rod
        the knot consumes; measured on the current centerline, so the stretching of the tails
        does not count;
  R   = e / (2 pi): the knot loop radius (Audoly, Clauvelin & Neukirch 2007: at leading order in
        eps the knot is a circle of radius R traversed once plus a braid whose length is O(eps R),
        and F = dU/de with U = pi EI / R, e = 2 pi R gives F = EI / (2 R^2));
  eps = sqrt(h / R);
  F   = pulling force: mean of the two end reactions (constraint-force probes), averaged over the
        frame +- `--window`/2, minus the viscous drag of the straight tails (c v L_tail, small);

and compares F h^2 / EI with eps^4 / 2 + mu sigma eps^3 (sigma = 0.492). Two other measures of R
are printed for reference: R_k = (contour length between the outermost contact points) / (2 pi)
and R_U = pi EI / U (U the elastic energy). Writes docs/validation/knot_trefoil.png and prints the
markdown table of docs/validation/contact-imc.md.

Usage: scripts/plot_knot.py [--run] [--out DIR] [--rodsim PATH] [--set KEY=VALUE ...]
  --run    run the scene first (about 10 min on one core); default: reuse DIR (out/knot_trefoil)
"""
import argparse
import csv
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SCENE = ROOT / "scenes/knots/trefoil.toml"
SIGMA = 0.492


def scene_values(text):
    """The few scene numbers the analysis needs (parsed from the TOML text)."""
    def num(key, after=None):
        src = text if after is None else text[text.index(after):]
        return float(re.search(rf"^{key}\s*=\s*([-+0-9.eE]+)", src, re.M).group(1))
    v = re.search(r'name = "right".*?velocity = \[([^\]]*)\]', text, re.S).group(1)
    return dict(h=num("radius"), E=num("youngs_modulus"), mu=num("friction"),
                c=num("coefficient") if "damping" in text else 0.0,
                v=abs(float(v.split(",")[0])))


def read_vtp(path):
    txt = Path(path).read_text()
    m = re.search(r"<Points><DataArray[^>]*>(.*?)</DataArray>", txt, re.S)
    return np.array(m.group(1).split(), float).reshape(-1, 3)


def frames(outdir):
    """(time, positions) of every VTK frame, from the .pvd index."""
    pvd = next((Path(outdir) / "vtk").glob("*.pvd"))
    out = []
    for t, f in re.findall(r'timestep="([^"]+)"[^>]*file="([^"]+)"', pvd.read_text()):
        out.append((float(t), read_vtp(pvd.parent / f)))
    return out


def contact_nodes(p, h, tol):
    """Indexes of nodes whose neighbouring edges come within 2h + tol of an edge farther than
    8h away along the rod (edges sampled at 5 points each)."""
    s = np.r_[0, np.cumsum(np.linalg.norm(np.diff(p, axis=0), axis=1))]
    u = np.linspace(0, 1, 5)
    pts = (p[:-1, None, :] * (1 - u)[None, :, None] + p[1:, None, :] * u[None, :, None]).reshape(-1, 3)
    sp = (s[:-1, None] * (1 - u) + s[1:, None] * u).ravel()
    edge = np.repeat(np.arange(len(p) - 1), len(u))
    hit = np.zeros(len(p) - 1, bool)
    for k in range(0, len(pts), 500):
        d = np.linalg.norm(pts[k:k + 500, None, :] - pts[None, :, :], axis=2)
        far = np.abs(sp[k:k + 500, None] - sp[None, :]) > 8 * h
        close = (d < 2 * h + tol) & far
        hit[edge[k:k + 500][close.any(axis=1)]] = True
    idx = np.nonzero(hit)[0]
    return idx, s


def analyse(outdir, sc, window):
    h, E, mu = sc["h"], sc["E"], sc["mu"]
    EI = E * np.pi * h**4 / 4
    ts = list(csv.DictReader(open(Path(outdir) / "timeseries.csv")))
    t = np.array([float(r["t"]) for r in ts])
    f = np.array([(float(r["pull_right_x"]) - float(r["pull_left_x"])) / 2 for r in ts])
    U = np.array([float(r["elastic_energy"]) for r in ts])
    rows = []
    for tf, p in frames(outdir):
        if tf <= 0:
            continue
        seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
        e = seg.sum() - np.linalg.norm(p[-1] - p[0])
        R = e / (2 * np.pi)
        idx, s = contact_nodes(p, h, 0.2 * h)
        if len(idx) == 0:
            continue
        i0, i1 = idx.min(), idx.max() + 1
        tails = s[i0] + (s[-1] - s[i1])
        sel = np.abs(t - tf) <= window / 2
        F = f[sel].mean() - sc["c"] * sc["v"] * tails / 2
        Fbar = F * h**2 / EI
        eps = np.sqrt(h / R)
        rows.append(dict(t=tf, e=e, R=R, eps=eps, Fbar=Fbar, Fstd=f[sel].std() * h**2 / EI,
                         theory=eps**4 / 2 + mu * SIGMA * eps**3,
                         eps_k=np.sqrt(h / ((s[i1] - s[i0]) / (2 * np.pi))),
                         eps_U=np.sqrt(h * U[sel].mean() / (np.pi * EI))))
    return rows, EI


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "out/knot_trefoil"))
    ap.add_argument("--out-mu0", default=str(ROOT / "out/knot_trefoil_mu0"),
                    help="frictionless run (contact.friction=0), plotted against eps^4/2 when present")
    ap.add_argument("--rodsim", default=str(ROOT / "build/bin/rodsim"))
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--window", type=float, default=0.2, help="force averaging window, s")
    ap.add_argument("--eps-min", type=float, default=0.2, help="tightening range compared: eps from")
    ap.add_argument("--eps-max", type=float, default=0.45, help="... to")
    ap.add_argument("--png", default=str(ROOT / "docs/validation/knot_trefoil.png"))
    args = ap.parse_args()
    if args.run:
        cmd = [args.rodsim, "run", str(SCENE), "--quiet", "--output", args.out]
        for kv in args.set:
            cmd += ["--set", kv]
        subprocess.run(cmd, check=True, cwd=ROOT)
        subprocess.run(cmd[:-1] + [args.out_mu0, "--set", "contact.friction=0"], check=True, cwd=ROOT)
    sc = scene_values(SCENE.read_text())
    rows, EI = analyse(args.out, sc, args.window)
    if not rows:
        sys.exit("no frame with contact")

    eps = np.array([r["eps"] for r in rows])
    Fb = np.array([r["Fbar"] for r in rows])
    band = (eps >= args.eps_min) & (eps <= args.eps_max)
    print(f"h = {sc['h']} m, E = {sc['E']} Pa, EI = {EI:.4g} N m^2, mu = {sc['mu']}, "
          f"EI/h^2 = {EI / sc['h']**2:.4g} N")
    print("| t (s) | e (mm) | R = e/2pi (mm) | eps | F h²/EI (rodsim) | eps⁴/2 + mu sigma eps³ | "
          "rel. error | eps from R_k | eps from R_U |")
    print("|---|---|---|---|---|---|---|---|---|")
    errs = []
    for r in rows:
        if not args.eps_min <= r["eps"] <= args.eps_max:
            continue
        err = r["Fbar"] / r["theory"] - 1
        errs.append(err)
        if abs(r["t"] * 2 - round(r["t"] * 2)) < 1e-6:  # every 0.5 s in the table
            print(f"| {r['t']:.2f} | {r['e'] * 1e3:.1f} | {r['R'] * 1e3:.2f} | {r['eps']:.3f} | "
                  f"{r['Fbar']:.4g} | {r['theory']:.4g} | {100 * err:+.1f} % | {r['eps_k']:.3f} | "
                  f"{r['eps_U']:.3f} |")
    errs = np.array(errs)
    if len(errs):
        print(f"\n{len(errs)} frames with {args.eps_min} <= eps <= {args.eps_max}: relative error "
              f"mean {100 * errs.mean():+.1f} %, rms {100 * np.sqrt((errs**2).mean()):.1f} %, "
              f"max |.| {100 * np.abs(errs).max():.1f} %")

    rows0 = []
    if (Path(args.out_mu0) / "timeseries.csv").exists():
        rows0, _ = analyse(args.out_mu0, dict(sc, mu=0.0), args.window)
        print("\nfrictionless run (contact.friction = 0) against eps^4/2:")
        print("| eps | F h²/EI (rodsim, mu = 0) | eps⁴/2 | rel. error |")
        print("|---|---|---|---|")
        for r in rows0:
            if args.eps_min <= r["eps"] <= args.eps_max and abs(r["t"] - round(r["t"])) < 1e-6:
                print(f"| {r['eps']:.3f} | {r['Fbar']:.4g} | {r['theory']:.4g} | "
                      f"{100 * (r['Fbar'] / r['theory'] - 1):+.1f} % |")

    fig, ax = plt.subplots(1, 2, figsize=(12, 5))
    x = np.linspace(0.9 * eps.min(), 1.05 * eps.max(), 200)
    mu = sc["mu"]
    for a, log in zip(ax, (False, True)):
        a.plot(eps, Fb, "o", ms=3, color="C0", label=f"rodsim (imc, mu = {mu}), R = e/2π")
        a.plot(x, x**4 / 2 + mu * SIGMA * x**3, "k--", label="theory ε⁴/2 + μσε³ (σ = 0.492)")
        a.plot(x, x**4 / 2, ":", color="gray", label="frictionless theory ε⁴/2")
        if rows0:
            a.plot([r["eps"] for r in rows0], [r["Fbar"] for r in rows0], "s", ms=2.5, color="C2",
                   label="rodsim, mu = 0")
        a.axvspan(args.eps_min, args.eps_max, color="C1", alpha=0.08, label="compared range")
        a.set_xlabel("ε = (h/R)^½")
        a.set_ylabel("F h² / EI")
        if log:
            a.set_xscale("log")
            a.set_yscale("log")
        a.grid(True, which="both", alpha=0.3)
    ax[0].legend(loc="upper left", fontsize=8)
    ax[0].set_title("Trefoil knot tightening (SI C.1): h = 1.6 mm, E = 0.18 MPa")
    ax[1].set_title("same, log-log")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
