#!/usr/bin/env python3
"""Draws `gpudict compare --format csv` as a bar chart: one group of bars per
step and operation, one bar per structure (M ops/s of device time), the
fastest of each group marked. Writes OUT.png and OUT.svg.

  gpudict compare examples/bench-update-paths.yaml --format csv > rates.csv
  python3 scripts/compare_chart.py rates.csv --out rates
  gpudict compare examples/quickstart.yaml --format csv | python3 scripts/compare_chart.py - --out quick
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="the CSV of gpudict compare ('-' for standard input)")
    ap.add_argument("--out", default="compare", help="output path without extension (default: compare)")
    ap.add_argument("--title", default="", help="the chart's title (default: none)")
    ap.add_argument("--log", action="store_true", help="a logarithmic rate axis")
    a = ap.parse_args()
    f = sys.stdin if a.csv == "-" else open(a.csv)
    rows = list(csv.DictReader(f))
    need = {"step", "name", "op", "structure", "mops", "fastest"}
    if not rows or not need <= set(rows[0]):
        print(f"compare_chart: {a.csv} is not the CSV of gpudict compare (columns {sorted(need)})", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("compare_chart: matplotlib is not installed (apt-get install python3-matplotlib, or pip install "
              "matplotlib)", file=sys.stderr)
        return 3
    groups, structures = [], []
    for r in rows:
        g = (int(r["step"]), r["name"], r["op"])
        if g not in groups:
            groups.append(g)
        if r["structure"] not in structures:
            structures.append(r["structure"])
    rate = {(int(r["step"]), r["name"], r["op"], r["structure"]): float(r["mops"]) for r in rows}
    fastest = {(int(r["step"]), r["name"], r["op"]): r["structure"] for r in rows if r["fastest"] == "true"}
    width = 0.8 / max(1, len(structures))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(groups) * max(1, len(structures)) * 0.5), 4.5))
    for i, s in enumerate(structures):
        xs = [j + (i - (len(structures) - 1) / 2) * width for j in range(len(groups))]
        ys = [rate.get(g + (s,), 0.0) for g in groups]
        bars = ax.bar(xs, ys, width, label=s)
        for x, y, g in zip(xs, ys, groups):
            if fastest.get(g) == s:
                ax.annotate("*", (x, y), ha="center", va="bottom")
        del bars
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{n}\n{op}" for _, n, op in groups], fontsize=8)
    ax.set_ylabel("M ops/s (device time)")
    if a.log:
        ax.set_yscale("log")
    if a.title:
        ax.set_title(a.title)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(f"{a.out}.{ext}")
    print(f"{a.out}.png, {a.out}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
