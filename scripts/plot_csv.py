#!/usr/bin/env python3
"""Draws the figures of an experiment script's output directory again, from
its CSVs: every STEM.plot.json there (written beside STEM.csv) becomes
STEM.png and STEM.svg. For results made on a machine without matplotlib.

  python3 scripts/plot_csv.py btree-figures
"""
import csv
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpudict_exp  # noqa: E402


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    d = sys.argv[1]
    specs = sorted(glob.glob(os.path.join(d, "*.plot.json")))
    if not specs:
        print(f"plot_csv: no *.plot.json in {d}", file=sys.stderr)
        return 2
    for sp in specs:
        spec = json.load(open(sp))
        with open(os.path.join(d, spec["csv"])) as f:
            rows = list(csv.DictReader(f))
        stem = sp[: -len(".plot.json")]
        if not gpudict_exp.draw(spec, rows, stem):
            return 3
        print(f"{stem}.png, {stem}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
