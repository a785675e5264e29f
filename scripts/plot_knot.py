#!/usr/bin/python3
"""Trefoil knot tightening (Tong et al. (2023), SI C.1): pulling force against loop size, simulation vs theory.

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

Side by side (several contact models on one knot scene, e.g. the frictionless tight knot):
  scripts/plot_knot.py --scene scenes/contact_ac/knot_tight.toml --compare DIR
      [--run] [--models alart-curnier,imc,ipc] [--eps-table 0.2,0.25,...] [--png FILE]
  reads a `rodsim compare` output directory DIR (DIR/MODEL/ for every model of DIR/table.csv;
  with --run, `rodsim compare SCENE --contact MODELS --jobs 1` writes it first; --compare again
  adds the runs of another compare directory, e.g. with --contact-set regularizations, labelled
  by their overrides) and prints, per model, F h^2/EI at the --eps-table values (interpolated
  between frames), the relative difference
  of each model's force curve from the first model's over [--eps-min, --eps-max], the minimum gap
  (all steps, and over the compared range), implicit Newton iterations (linear solves) per step, ms
  per step and, for alart-curnier, the nonsmooth Newton iterations and the largest natural-map
  residual; plots force, ratio, gap and cost (4 panels) into --png.
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
import matplotlib.ticker
import numpy as np
from scipy.spatial import cKDTree

import rodsim_output  # the one reader of a run's files (python/rodsim/output.py, via scripts/rodsim_output.py)
import rodsim_vtp  # scripts/rodsim_vtp.py: both VTK encodings

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


def eps_log_axis(a):
    """A log eps axis labelled with plain eps values inside the plotted range (the default labels
    every minor tick of a sub-decade axis, overlapping; set_xticks alone would widen the range)."""
    a.set_xscale("log")
    lo, hi = a.get_xlim()
    a.set_xticks([t for t in (0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5) if lo <= t <= hi])
    a.set_xlim(lo, hi)
    a.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    a.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def read_vtp(path):
    return np.array(rodsim_vtp.read_vtp(path)["Points"], float).reshape(-1, 3)


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
    # all point pairs closer than 2h + tol (a k-d tree: the all-pairs distance matrix took minutes
    # over the frames of a long run), then those farther apart than 8h along the rod
    i, j = cKDTree(pts).query_pairs(2 * h + tol, output_type="ndarray").T
    far = np.abs(sp[i] - sp[j]) > 8 * h
    hit[edge[i[far]]] = True
    hit[edge[j[far]]] = True
    idx = np.nonzero(hit)[0]
    return idx, s


def analyse(outdir, sc, window):
    h, E, mu = sc["h"], sc["E"], sc["mu"]
    EI = E * np.pi * h**4 / 4
    ts = rodsim_output.read_timeseries(outdir)
    t = ts["t"]
    f = (ts["pull_right_x"] - ts["pull_left_x"]) / 2
    U = ts["elastic_energy"]
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


def run_stats(outdir, rows, eps_min, eps_max):
    """Cost and gap of one run: summary.json and timeseries.csv (per step rows)."""
    summ = rodsim_output.read_summary(outdir)
    ts = rodsim_output.read_timeseries(outdir)

    def col(name):  # row 0, the initial state, left out
        return ts[name][1:] if name in ts else np.full(len(ts["t"]) - 1, np.nan)

    t, it, ms, nc, gap = col("t"), col("iterations"), col("wall_ms"), col("contacts"), col("min_gap")
    # eps at every step, interpolated between frames (eps grows with t)
    ft = np.array([r["t"] for r in rows])
    fe = np.array([r["eps"] for r in rows])
    eps_t = np.interp(t, ft, fe, left=np.nan, right=np.nan)
    inband = (eps_t >= eps_min) & (eps_t <= eps_max)
    st = dict(status=summ["status"], reason=summ.get("reason", ""), steps=int(summ["steps"]),
              step_cuts=int(summ.get("step_cuts", 0)), wall_s=float(summ["wall_time_s"]),
              it_step=np.nanmean(it), it_max=np.nanmax(it), ms_step=np.nanmean(ms),
              it_band=np.nanmean(it[inband]) if inband.any() else np.nan,
              ms_band=np.nanmean(ms[inband]) if inband.any() else np.nan,
              contacts_max=np.nanmax(nc), gap_min=np.nanmin(gap) if np.isfinite(gap).any() else np.nan,
              gap_band=np.nanmin(gap[inband]) if np.isfinite(gap[inband]).any() else np.nan,
              eps_last=fe.max() if len(fe) else np.nan, t=t, it=it, ms=ms, gap=gap, contacts=nc)
    if ts and "alart-curnier.ac_iterations" in ts[0]:
        st["ac_it_step"] = np.nanmean(col("alart-curnier.ac_iterations"))
        st["ac_prox"] = np.nansum(col("alart-curnier.prox_iterations"))
        st["natmap_max"] = np.nanmax(col("alart-curnier.natmap_rel"))
        st["max_group"] = np.nanmax(col("alart-curnier.max_group"))
    return st


def force_at(rows, eps):
    """F h^2/EI at eps, linear between frames (frames sorted by eps); NaN outside the run."""
    e = np.array([r["eps"] for r in rows])
    f = np.array([r["Fbar"] for r in rows])
    o = np.argsort(e)
    e, f = e[o], f[o]
    return np.interp(eps, e, f, left=np.nan, right=np.nan)


def compare_runs(cdir):
    """(label, run directory) of every model of a `rodsim compare` directory, in its order; the
    label is the model plus the per-model --set overrides of commands.txt (--contact-set)."""
    cdir = Path(cdir)
    cmds = (cdir / "commands.txt").read_text().splitlines() if (cdir / "commands.txt").exists() else []
    out = []
    for r in csv.DictReader(open(cdir / "table.csv")):
        m = r["model"]
        line = next((c for c in cmds if f"/{m}/" in c), "")
        sets = [kv.replace("contact.", "") for kv in re.findall(r"--set (\S+)", line)]
        out.append((m + (f" ({', '.join(sets)})" if sets else ""), cdir / m))
    return out


def side_by_side(args, scene):
    cdir = Path(args.compare[0])
    if args.run:
        cmd = [args.rodsim, "compare", str(scene), "--contact", args.models, "--jobs", "1", "--quiet",
               "--output", str(cdir)]
        for kv in args.set:
            cmd += ["--set", kv]
        subprocess.run(cmd, cwd=ROOT)  # a failed run (status 3) is reported below, not fatal
    runs = []
    for d in args.compare:  # later directories add the runs whose label is new
        runs += [(lab, path) for lab, path in compare_runs(d) if lab not in dict(runs)]
    models = [lab for lab, _ in runs]
    sc = scene_values(scene.read_text())
    h, E = sc["h"], sc["E"]
    res = {}
    for m, path in runs:
        rows, EI = analyse(path, dict(sc, mu=0.0), args.window) if (path / "vtk").exists() else ([], 0)
        res[m] = (rows, run_stats(path, rows, args.eps_min, args.eps_max) if rows else None)
    EI = E * np.pi * h**4 / 4
    ref = models[0]
    print(f"{scene.name}: h = {h} m, E = {E} Pa, EI = {EI:.4g} N m^2, EI/h^2 = {EI / h**2:.4g} N, "
          f"mu = {sc['mu']}; force averaged over +-{args.window / 2} s; compared {args.eps_min} <= eps <= "
          f"{args.eps_max}")
    print("\n| model | status | steps (cuts) | eps reached | min gap (m), all | in range | max contacts | "
          "iterations / step | ms / step | in range: it. / step, ms / step | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for m in models:
        rows, st = res[m]
        if st is None:
            print(f"| {m} | no frames | | | | | | | | | |")
            continue
        print(f"| {m} | {st['status']} | {st['steps']} ({st['step_cuts']}) | {st['eps_last']:.3f} | "
              f"{st['gap_min']:.3g} | {st['gap_band']:.3g} | {st['contacts_max']:.0f} | {st['it_step']:.2f} "
              f"(max {st['it_max']:.0f}) | {st['ms_step']:.2f} | {st['it_band']:.2f}, {st['ms_band']:.2f} | "
              f"{st['wall_s']:.1f} |")
        if st["status"] != "ok":
            print(f"|  | reason: {st['reason']} | | | | | | | | | |")
    for m in models:
        st = res[m][1]
        if st is not None and "ac_it_step" in st:
            print(f"\n{m}: nonsmooth Newton iterations (linear solves) per step {st['ac_it_step']:.2f}, "
                  f"proximal loops {st['ac_prox']:.0f}, largest natural-map residual {st['natmap_max']:.2g}, "
                  f"largest group {st['max_group']:.0f} contacts")

    grid = [float(x) for x in args.eps_table.split(",")]
    print("\n| eps | " + " | ".join(f"F h²/EI {m}" for m in models) + " | eps⁴/2 | " +
          " | ".join(f"{m} / {ref}" for m in models[1:]) + " |")
    print("|---" * (2 + 2 * len(models)) + "|")
    for x in grid:
        f = [force_at(res[m][0], x) if res[m][0] else np.nan for m in models]
        if all(np.isnan(f)):
            continue
        cells = " | ".join("-" if np.isnan(v) else f"{v:.4g}" for v in f)
        ratios = " | ".join("-" if np.isnan(v) or np.isnan(f[0]) else f"{v / f[0]:.3f}" for v in f[1:])
        print(f"| {x:.3f} | {cells} | {x**4 / 2:.4g} | {ratios} |")

    # differences of the force curves over the compared range, on a common eps grid
    fine = np.linspace(args.eps_min, args.eps_max, 101)
    fref = force_at(res[ref][0], fine) if res[ref][0] else np.full_like(fine, np.nan)
    print(f"\nforce curves over {args.eps_min} <= eps <= {args.eps_max} (101 points where both runs have frames):")
    for m in models:
        if not res[m][0]:
            continue
        fm = force_at(res[m][0], fine)
        th = fine**4 / 2
        ok = np.isfinite(fm)
        if ok.any():
            r = fm[ok] / th[ok] - 1
            print(f"  {m} vs eps^4/2: mean {100 * r.mean():+.1f} %, from {100 * r.min():+.1f} to {100 * r.max():+.1f} %")
        if m == ref:
            continue
        ok = np.isfinite(fm) & np.isfinite(fref)
        if ok.any():
            r = fm[ok] / fref[ok] - 1
            print(f"  {m} vs {ref}: mean {100 * r.mean():+.1f} %, rms {100 * np.sqrt((r**2).mean()):.1f} %, "
                  f"from {100 * r.min():+.1f} to {100 * r.max():+.1f} % (eps {fine[ok].min():.3f} - {fine[ok].max():.3f})")

    png = args.png or str(cdir / "knot_side_by_side.png")
    if len(models) > 5:
        sys.exit("at most 5 runs side by side")
    fig, ax = plt.subplots(2, 3, figsize=(16, 8.5))
    allrows = [r for m in models for r in res[m][0]]
    if allrows:
        x = np.linspace(0.9 * min(r["eps"] for r in allrows), 1.03 * max(r["eps"] for r in allrows), 200)
        ax[0, 0].plot(x, x**4 / 2, ":", color="gray", label="leading order ε⁴/2")
    marks = "osd^v"
    run_mean = lambda y: np.convolve(y, np.ones(50) / 50, "valid")  # noqa: E731
    for k, m in enumerate(models):
        rows, st = res[m]
        if not rows:
            continue
        e = np.array([r["eps"] for r in rows])
        f = np.array([r["Fbar"] for r in rows])
        ax[0, 0].plot(e, f, marks[k % 5], ms=3, color=f"C{k}", label=m)
        b = e >= args.eps_min  # the loose knot's force is ~0: ratios there mean nothing
        if m != ref and res[ref][0]:
            ax[0, 1].plot(e[b], f[b] / force_at(res[ref][0], e[b]), marks[k % 5], ms=3, color=f"C{k}",
                          label=f"{m} / {ref}")
        if m == ref:
            ax[0, 1].plot(e[b], f[b] / (e[b]**4 / 2), "-", lw=1, color=f"C{k}", label=f"{m} / (ε⁴/2)")
        ax[0, 2].plot(st["t"], st["gap"], "-", lw=0.8, color=f"C{k}", label=m)
        tm = run_mean(st["t"])
        ax[1, 0].plot(tm, run_mean(st["ms"]), "-", lw=0.8, color=f"C{k}", label=m)
        ax[1, 1].plot(tm, run_mean(st["it"]), "-", lw=0.8, color=f"C{k}", label=m)
        ax[1, 2].plot(st["t"], st["contacts"], "-", lw=0.6, color=f"C{k}", label=m)
    for a in (ax[0, 0], ax[0, 1]):
        a.axvspan(args.eps_min, args.eps_max, color="C7", alpha=0.07)
        a.set_xlabel("ε = (h/R)^½, R = e/2π")
    ax[0, 0].set_ylabel("F h² / EI")
    ax[0, 0].set_title(args.title or f"{scene.stem}: pulling force, mu = 0")
    ax[0, 1].set_ylabel("ratio")
    ax[0, 1].set_title("force ratios")
    ax[0, 2].set_yscale("symlog", linthresh=1e-12)
    ax[0, 2].axhline(0, color="k", lw=0.6)
    ax[0, 2].set_ylabel("min gap (m), per step")
    ax[0, 2].set_title("minimum gap (< 0: penetration)")
    ax[1, 0].set_yscale("log")
    ax[1, 0].set_title("wall ms per step (50-step running mean)")
    ax[1, 1].set_title("implicit Newton iterations per step (50-step mean)")
    ax[1, 2].set_title("contacts (timeseries column) per step")
    for a in (ax[0, 2], ax[1, 0], ax[1, 1], ax[1, 2]):
        a.set_xlabel("t (s)")
    for a in ax.ravel():
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print(f"wrote {png}")
    return 0 if all(res[m][1] is not None and res[m][1]["status"] == "ok" for m in models) else 3


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
    ap.add_argument("--png", default=None, help="default docs/validation/knot_trefoil.png "
                    "(side by side: DIR/knot_side_by_side.png)")
    ap.add_argument("--scene", default=str(SCENE), help="knot scene (default scenes/knots/trefoil.toml)")
    ap.add_argument("--compare", metavar="DIR", action="append",
                    help="side by side: a `rodsim compare` output directory (repeat: runs of later "
                    "directories are added when their model + overrides label is new)")
    ap.add_argument("--models", default="alart-curnier,imc,ipc", help="with --compare --run: contact models")
    ap.add_argument("--eps-table", default="0.2,0.225,0.25,0.275,0.3,0.325,0.35,0.375,0.4",
                    help="with --compare: eps values of the force table")
    ap.add_argument("--title", default=None, help="plot title")
    args = ap.parse_args()
    scene = Path(args.scene)
    if args.compare:
        return side_by_side(args, scene)
    if args.png is None:
        args.png = str(ROOT / "docs/validation/knot_trefoil.png")
    if args.run:
        cmd = [args.rodsim, "run", str(scene), "--quiet", "--output", args.out]
        for kv in args.set:
            cmd += ["--set", kv]
        subprocess.run(cmd, check=True, cwd=ROOT)
        subprocess.run(cmd[:-1] + [args.out_mu0, "--set", "contact.friction=0"], check=True, cwd=ROOT)
    sc = scene_values(scene.read_text())
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
            a.set_yscale("log")
            eps_log_axis(a)
        a.grid(True, which="both", alpha=0.3)
    ax[0].legend(loc="upper left", fontsize=8)
    ax[0].set_title("Trefoil knot tightening (SI C.1): h = 1.6 mm, E = 0.18 MPa")
    ax[1].set_title("same, log-log")
    fig.tight_layout()
    fig.savefig(args.png, dpi=110)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    sys.exit(main())
