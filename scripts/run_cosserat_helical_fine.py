#!/usr/bin/python3
"""Localized helical buckling at the finer resolutions of Gazzola et al. (2018) (Fig. 3c: n = 800 to 3200):
runs scenes/validation/cosserat_helical_buckling.toml through the functions of
scripts/plot_cosserat_helical_buckling.py (start on Eq. 25, 600 s with damping) at each n with a dt
below the explicit stability limit (the axial mode: omega = 2 sqrt(S/rho A)/h, h = L/(n-1)), prints
the rows of the table in docs/validation/cosserat.md and appends them to a JSON file.

Usage: scripts/run_cosserat_helical_fine.py [build dir] n [n ...] [--json FILE]
   e.g. scripts/run_cosserat_helical_fine.py build 800 1600 3200 --json out/helical_fine.json
       scripts/run_cosserat_helical_fine.py --self-convergence out/helical_fine.json
The second form compares the runs a JSON file lists among themselves (self-convergence): the
envelope of each n against that of the next finer run, the finer one interpolated by a cubic spline
onto the coarser one's element centres; at second order the differences fall 4x per doubling. Against
Eq. 25 the errors stop falling once the discretization error is below the difference between the
model (a finite rod with S = 1e5 N) and Eq. 25 (the inextensible, unshearable semi-finite solution).
"""
import json, os, sys, tempfile, time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util

spec = importlib.util.spec_from_file_location(
    "helical", os.path.join(os.path.dirname(os.path.abspath(__file__)), "plot_cosserat_helical_buckling.py"))
H = importlib.util.module_from_spec(spec)
spec.loader.exec_module(H)


def dt_fine(n):
    # axial limit 2 / omega = h / sqrt(S/rho A) = (L/(n-1)) / 316 s, times the solver's safety 0.9 and a margin
    return min(5.5e-4, 0.8 * (H.L / (n - 1)) / (1e5 / 1.0) ** 0.5)


def self_convergence(json_file):
    from scipy.interpolate import CubicSpline
    runs = sorted(json.load(open(json_file)), key=lambda r: r["n"])
    envelopes = {r["n"]: H.envelope(H.final_positions(r["out"])) for r in runs}
    print("| n against 2n | L_inf | L_1 | L_2 | ratio L_inf / L_1 / L_2 |")
    print("|---|---|---|---|---|")
    previous = None
    for coarse, fine in zip(runs, runs[1:]):
        sb, phi = envelopes[coarse["n"]]
        sf, pf = envelopes[fine["n"]]
        e = np.abs(phi - CubicSpline(sf, pf)(sb))
        norms = (e.max(), e.mean(), np.sqrt((e * e).mean()))
        ratios = " / ".join(f"{a / b:.2f}" for a, b in zip(previous, norms)) if previous else ""
        print(f"| {coarse['n']} against {fine['n']} | {norms[0]:.3e} | {norms[1]:.3e} | {norms[2]:.3e} | {ratios} |")
        previous = norms


def main():
    args = [a for a in sys.argv[1:]]
    if args and args[0] == "--self-convergence":
        self_convergence(args[1])
        return
    out_json = None
    if "--json" in args:
        k = args.index("--json")
        out_json = args[k + 1]
        del args[k:k + 2]
    build = args[0] if args and not args[0].isdigit() else os.path.join(H.root, "build")
    ns = [int(a) for a in args if a.isdigit()]
    H.dt_for = dt_fine
    U25 = H.energy_eq25(H.an)
    for n in ns:
        out = tempfile.mkdtemp(prefix=f"cosserat-helix-{n}-")
        c0 = time.time()
        head, rows, x = H.run(build, n, out)
        wall = time.time() - c0
        li, l1, l2 = H.errors(x, H.an)
        U, K = rows[-1][head.index("elastic_energy")], rows[-1][head.index("kinetic_energy")]
        row = dict(n=n, dt=dt_fine(n), Linf=li, L1=l1, L2=l2, U=U, U_over_EF=U / H.an["EF"], U_over_U25=U / U25 - 1,
                   kinetic=K, wall_s=wall, out=out)
        print(f"| {n} | {dt_fine(n) * 1e3:.3f} | {li:.3e} | {l1:.3e} | {l2:.3e} | | {U:.5f} | {U / H.an['EF']:.5f} | "
              f"{U / U25 - 1:+.1e} | {K:.1e} |  wall {wall:.0f} s", flush=True)
        if out_json:
            data = json.load(open(out_json)) if os.path.exists(out_json) else []
            data.append(row)
            json.dump(data, open(out_json, "w"), indent=1)


if __name__ == "__main__":
    main()
