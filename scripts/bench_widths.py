#!/usr/bin/env python3
"""Benchmark examples/bench-*.yaml at 32- and 64-bit widths, and against an
older gpudict binary, in one call on one GPU.

For every bench example and every structure that can run it, three runs of
--repeat R (default 3), one after another so that nothing else shares the
GPU, each --no-verify:

  before    --before BINARY at the example's own widths (omitted without --before)
  u32       the binary under test at the example's own widths (u32/u32)
  u64       the binary under test with --key-type u64 --value-type u64

Each row is one step's category (insert, lookup, ...) on one structure: the
median rate in M ops/s of device time and the spread of the R samples
(min..max). A u32 row is flagged SLOWER when its median is below before's
and the two runs' ranges do not overlap (slower by more than the spread of
the repetitions). The u64/u32 ratio is the price of 8-byte keys and values.

Writes every run's JSON Lines and a Markdown table to --out, prints the
table, and exits 1 when a run failed or a row is flagged SLOWER.

  python3 scripts/bench_widths.py --gpudict build/gpudict --before old/gpudict --out bench-widths
  python3 scripts/bench_widths.py --examples examples/bench-btree.yaml --repeat 5
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpudict_exp  # noqa: E402
from gpudict_exp import Table, add_common_args, built_structures, sample_rates  # noqa: E402

U64 = ["--key-type", "u64", "--value-type", "u64"]
CANNOT = ("does not support", "for a single key only", "supports u32", "are not supported by")


def run(args, binary, structure, example, extra, tag):
    """One run of --repeat R: ({(step, name, op): (median, min, max M ops/s, ops)}, ''), or (None, why) when
    the structure cannot run the example, or (False, why) when the run failed."""
    r = gpudict_exp.run(args, structure, example, extra, tag=tag, binary=binary, check=False)
    if r.returncode == 2 and any(c in r.stderr for c in CANNOT):
        return None, r.stderr.strip().splitlines()[0]  # this structure cannot run it
    if not r.ok:
        return False, f"exit {r.returncode}: {r.stderr.strip()[:300]}"
    rows = {}
    for st in r.steps:
        for row in st["rows"]:
            rates = sample_rates(row)
            if rates:
                rows[(st["step"], st["name"], row["op"])] = (rates[len(rates) // 2], rates[0], rates[-1], row["ops"])
    return rows, ""


def fmt(cell):
    if not cell:
        return "-"
    med, lo, hi, _ = cell
    return f"{med:,.1f} ({lo:,.1f}..{hi:,.1f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_args(ap, "bench-widths", repeat=3, seed=None, plots=False)
    ap.add_argument("--before", help="an older binary to compare the u32 rows with")
    ap.add_argument("--examples", nargs="*", help="workloads (default examples/bench-*.yaml)")
    ap.add_argument("--structures", default="", help="comma-separated (default: every built one)")
    a = ap.parse_args()
    examples = a.examples or sorted(glob.glob("examples/bench-*.yaml"))
    structures = a.structures.split(",") if a.structures else built_structures(a.gpudict)
    os.makedirs(a.out, exist_ok=True)
    lines = ["| example | step | op | structure | before M ops/s | u32 M ops/s | u32/before | u64 M ops/s | u64/u32 |",
             "|---|---|---|---|---|---|---|---|---|"]
    tidy = Table("bench widths", ["example", "step", "op", "structure", "run", "ops", "mops_median", "mops_min",
                                  "mops_max"])
    failures = []
    slower = 0
    for ex in examples:
        stem = os.path.splitext(os.path.basename(ex))[0]
        for s in structures:
            runs = {}
            configs = ([("before", a.before, [])] if a.before else []) + [("u32", a.gpudict, []), ("u64", a.gpudict, U64)]
            for name, binary, extra in configs:
                rows, why = run(a, binary, s, ex, extra, f"{stem}.{s}.{name}")
                if rows is False:
                    failures.append(f"{stem} {s} {name}: {why}")
                runs[name] = rows or {}
                print(f"{stem} {s} {name}: {'skipped: ' + why if rows is None else 'failed' if rows is False else 'ok'}",
                      file=sys.stderr, flush=True)
            for name, rows in runs.items():
                for k, (med, lo, hi, ops) in rows.items():
                    tidy.add(example=stem, step=k[1], op=k[2], structure=s, run=name, ops=ops, mops_median=med,
                             mops_min=lo, mops_max=hi)
            keys = sorted(set().union(*[set(r) for r in runs.values()]))
            for k in keys:
                b, u, w = runs.get("before", {}).get(k), runs["u32"].get(k), runs["u64"].get(k)
                ratio = f"{u[0] / b[0]:.2f}" if b and u and b[0] > 0 else "-"
                if b and u and u[0] < b[0] and u[2] < b[1]:
                    ratio += " SLOWER"
                    slower += 1
                wr = f"{w[0] / u[0]:.2f}" if u and w and u[0] > 0 else "-"
                lines.append(f"| {stem} | {k[1]} | {k[2]} | {s} | {fmt(b)} | {fmt(u)} | {ratio} | {fmt(w)} | {wr} |")
            with open(os.path.join(a.out, "table.md"), "w") as f:  # so far (a long run may be cut short)
                f.write("\n".join(lines) + "\n")
    table = "\n".join(lines)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table + "\n")
    tidy.save(a, "bench_widths")
    print(table)
    for f in failures:
        print("FAILED:", f)
    print(f"{slower} u32 row(s) slower than before beyond the spread; {len(failures)} failed run(s)")
    return 1 if failures or slower else 0


if __name__ == "__main__":
    sys.exit(main())
