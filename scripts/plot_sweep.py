#!/usr/bin/python3
"""Plots a metric of a rodsim sweep's runs.csv against its axes (PNG).

    scripts/plot_sweep.py DIR METRIC [--x AXIS] [--out FILE]

DIR is the sweep's output directory (or its runs.csv). METRIC is a column of runs.csv: a summary
field (aipts_contact, atpts_ms, min_gap, ...) or a probe's <probe>_final / <probe>_mean.
The x axis is --x, or else the first axis whose values vary; every other axis that varies gives
one line per combination of its values (the legend names them). Failed and missing rows are left
out (listed on standard error). Numbers are plotted as numbers; other values (arrays, strings) are
placed evenly and labelled. Writes DIR/<METRIC>.png unless --out is given.
"""
import argparse
import csv
import itertools
import pathlib
import sys

SUMMARY = ["status", "steps", "sim_time", "wall_time_s", "newton_iterations", "aipts", "step_cuts",
           "steps_with_contact", "aipts_contact", "atpts_ms", "atpts_contact_ms", "min_gap"]


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=pathlib.Path, help="the sweep's output directory or its runs.csv")
    ap.add_argument("metric", help="a column of runs.csv, e.g. aipts_contact or thrust0_mean")
    ap.add_argument("--x", help="the axis on the x axis (default: the first that varies)")
    ap.add_argument("--out", type=pathlib.Path, help="the PNG to write (default DIR/METRIC.png)")
    args = ap.parse_args()
    runs = args.dir if args.dir.suffix == ".csv" else args.dir / "runs.csv"
    rows = list(csv.DictReader(open(runs, newline="")))
    if not rows:
        sys.exit(f"plot_sweep: {runs} has no rows")
    header = list(rows[0].keys())
    axes = header[1:header.index("status")]  # index, the axes, then status and the summary fields
    metrics = [h for h in header if h not in axes and h not in ("index", "status", "reason")]
    if args.metric not in header:
        sys.exit(f"plot_sweep: no column '{args.metric}' in {runs}; metrics: {', '.join(metrics)}")
    varying = [a for a in axes if len({r[a] for r in rows}) > 1] or axes[:1]
    x_axis = args.x or varying[0]
    if x_axis not in axes:
        sys.exit(f"plot_sweep: '{x_axis}' is not an axis of {runs} (axes: {', '.join(axes)})")
    # Zipped axes vary together with x: they add nothing to the legend.
    x_partners = {a for a in varying if a != x_axis and
                  len({(r[x_axis], r[a]) for r in rows}) == len({r[x_axis] for r in rows})}
    series_axes = [a for a in varying if a != x_axis and a not in x_partners]

    left_out = [r for r in rows if r["status"] != "ok" or as_number(r[args.metric]) is None]
    for r in left_out:
        print(f"plot_sweep: row {r['index']} left out: {r['status']} {r.get('reason', '')}".rstrip(), file=sys.stderr)
    good = [r for r in rows if r not in left_out]
    if not good:
        sys.exit("plot_sweep: no finished row has a value for " + args.metric)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x_values = list(dict.fromkeys(r[x_axis] for r in rows))  # in table order
    numeric = all(as_number(v) is not None for v in x_values)
    position = {v: (as_number(v) if numeric else i) for i, v in enumerate(x_values)}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    combos = sorted({tuple(r[a] for a in series_axes) for r in good}, key=lambda c: [next(
        i for i, r in enumerate(rows) if r[a] == v) for a, v in zip(series_axes, c)])
    for combo in combos or [()]:
        sel = [r for r in good if tuple(r[a] for a in series_axes) == combo]
        sel.sort(key=lambda r: position[r[x_axis]])
        label = ", ".join(f"{a} = {v}" for a, v in zip(series_axes, combo)) or None
        ax.plot([position[r[x_axis]] for r in sel], [float(r[args.metric]) for r in sel], "o-", label=label)
    if not numeric:
        ax.set_xticks(list(position.values()), x_values, rotation=20, fontsize=8)
    ax.set_xlabel(x_axis + (f"  (with {', '.join(sorted(x_partners))})" if x_partners else ""), fontsize=8)
    ax.set_ylabel(args.metric)
    ax.set_title(f"{runs.parent.name}: {len(good)} of {len(rows)} runs", fontsize=9)
    ax.grid(alpha=0.3)
    if combos and series_axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    out = args.out or runs.parent / f"{args.metric}.png"
    fig.savefig(out, dpi=120)
    print(f"plot_sweep: wrote {out}")


if __name__ == "__main__":
    main()
