#!/usr/bin/env python3
"""Reproduce the GPU B-Tree paper's experiments (seed 002: Table 3, Figures
2-5) with gpudict: the B-Tree, and where they apply the GPU LSM and the
sorted array side by side. Generates the workloads (YAML) into --out, runs
them with --no-verify --format json (the same operations are verified at
smaller sizes by the GPU tests) and prints markdown tables; raw JSON Lines
stay in --out.

  python3 scripts/btree_figures.py                         # everything
  python3 scripts/btree_figures.py --figure 2 --max-log2-n 26
  python3 scripts/btree_figures.py --backend cpu --max-log2-n 12 --query-log2-n 12 --fig2-min 10 \
      --fig3-min 10 --fig3-batches 8 --batch-logs 8,10 --public-logs 10 --repeat 1   # a smoke run

table3:  mean insertion rate (n / total device time) of n = 2^max-log2-n
         keys inserted from empty in batches of b = 2^16 ... 2^22.
fig3:    bulk rebuild of a tree of m keys (sort included) against inserting
         a batch of 2^i into a tree of m - 2^i: times, and the crossover.
fig2:    lookup (all present), range (expected 8 results) and successor rates
         against the tree size n = 2^k, k up to --max-log2-n (bulk built).
fig4:    deleting 10% ... 50% of the keys of a tree of n = 2^query-log2-n
         (the three structures).
fig5:    concurrent batches with update ratio 0.2, 0.6, 1.0 (updates split
         between insert and delete, queries between lookup, count, range and
         successor), as many operations as keys, against the tree size (the
         three structures; the LSM and the sorted array run a concurrent
         batch as its updates, then its queries).
public:  the public GpuBTree experiment: n keys inserted into an empty tree
         (one batch), then n lookups of which half hit; n = 2^20, 2^22, 2^24.
"""
import argparse
import json
import os
import subprocess
import sys

STRUCTS = ["btree", "lsm", "sorted-array"]


def run(args, structure, yaml_path, tag, batch=None):
    """Runs one structure; `batch`: the workload's batch size, which sets the LSM's --batch-size."""
    out_json = os.path.join(args.out, f"{tag}.{structure}.jsonl")
    cmd = [args.gpudict, structure, yaml_path, "--no-verify", "--format", "json", "--repeat", str(args.repeat)]
    if structure == "lsm" and batch is not None:
        cmd += lsm_extra(batch)
    if structure == "btree":
        cmd += args.btree_opts
    if args.backend:
        cmd += ["--backend", args.backend]
    with open(out_json, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"btree_figures: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    recs = [json.loads(l) for l in open(out_json) if l.strip()]
    return [x for x in recs if x.get("record") == "step"], [x for x in recs if x.get("record") == "summary"]


def write(args, name, text):
    p = os.path.join(args.out, name)
    with open(p, "w") as f:
        f.write(text)
    return p


def step_ms(st, cats=None):
    return sum(x["device_ms"] for x in st["rows"] if cats is None or x["op"] in cats)


def step_ops(st, cats=None):
    return sum(x["ops"] for x in st["rows"] if cats is None or x["op"] in cats)


def rate(st, cats=None):
    ms = step_ms(st, cats)
    return step_ops(st, cats) / (ms * 1e-3) / 1e9 if ms > 0 else float("nan")


def named(steps, name):
    return [s for s in steps if s["name"] == name]


def lsm_extra(b):
    return ["--batch-size", str(1 << max(0, (b - 1).bit_length()))]


def batches_of(total, cap=1 << 22):
    bs = min(total, cap)
    return max(1, total // bs), bs


def table3(args):
    n = 1 << args.max_log2_n
    out = [f"Table 3: mean insertion rate, n = 2^{args.max_log2_n} keys inserted from empty in batches of b "
           "(G keys/s = n / total device time)", "", "| b | B-Tree | GPU LSM | GPU SA |", "|---|---|---|---|"]
    means = {s: [] for s in STRUCTS}
    for lb in args.batch_logs:
        b = 1 << lb
        if b > n:
            continue
        y = write(args, f"t3-b{lb}.yaml", f"seed: {args.seed}\nsteps:\n"
                  f"  - phase: {{name: insert, batches: {n // b}, batch_size: {b}, mix: {{insert: 1.0}}}}\n")
        row = []
        for s in STRUCTS:
            steps, _ = run(args, s, y, f"t3-b{lb}", b)
            r = rate(named(steps, "insert")[0])
            means[s].append(r)
            row.append(r)
        out.append(f"| 2^{lb} | " + " | ".join(f"{r:.3f}" for r in row) + " |")
    hm = [len(v) / sum(1 / x for x in v) if v else float("nan") for v in (means[s] for s in STRUCTS)]
    out.append("| harmonic mean | " + " | ".join(f"{x:.3f}" for x in hm) + " |")
    return "\n".join(out)


def fig3(args):
    out = ["Figure 3: bulk rebuild of m keys (sort included) vs inserting a batch of 2^i into m - 2^i keys (ms)", "",
           "| m | rebuild | " + " | ".join(f"insert 2^{i}" for i in args.fig3_batches) + " |",
           "|---|---|" + "---|" * len(args.fig3_batches)]
    cross = {}
    for lm in range(args.fig3_min, args.max_log2_n + 1, 2):
        m = 1 << lm
        y = write(args, f"f3-build-m{lm}.yaml", f"seed: {args.seed}\ninitial: {{count: {m}}}\nsteps: []\n")
        steps, _ = run(args, "btree", y, f"f3-build-m{lm}")
        rebuild = step_ms([s for s in steps if s["kind"] == "build"][0])
        cells = []
        for i in args.fig3_batches:
            b = 1 << i
            if b >= m:
                cells.append("-")
                continue
            y = write(args, f"f3-ins-m{lm}-b{i}.yaml", f"seed: {args.seed}\ninitial: {{count: {m - b}}}\nsteps:\n"
                      f"  - phase: {{name: insert, batches: 1, batch_size: {b}, mix: {{insert: 1.0}}, hit_ratio: 0.0}}\n")
            steps, _ = run(args, "btree", y, f"f3-ins-m{lm}-b{i}")
            ms = step_ms(named(steps, "insert")[0])
            cells.append(f"{ms:.3f}")
            if ms < rebuild and i not in cross:
                cross[i] = m
        out.append(f"| 2^{lm} | {rebuild:.3f} | " + " | ".join(cells) + " |")
    out.append("")
    for i in args.fig3_batches:
        out.append(f"batch 2^{i}: incremental insertion beats a rebuild from m = "
                   + (f"2^{cross[i].bit_length() - 1}" if i in cross else "(not within the sizes run)"))
    return "\n".join(out)


def fig2(args):
    out = ["Figure 2: query rates against the tree size (G queries/s; lookups all present, ranges of 8 results, "
           "successors of present keys)", "",
           "| n | op | B-Tree | GPU LSM | GPU SA | B-Tree height |", "|---|---|---|---|---|---|"]
    for ln in range(args.fig2_min, args.max_log2_n + 1, 2):
        n = 1 << ln
        qn, qb = batches_of(n)
        rq = min(n, args.range_queries)
        rn, rb = batches_of(rq)
        y = write(args, f"f2-n{ln}.yaml", f"""seed: {args.seed}
initial: {{count: {n}}}
steps:
  - phase: {{name: lookup, batches: {qn}, batch_size: {qb}, mix: {{lookup: 1.0}}, hit_ratio: 1.0}}
  - phase: {{name: range, batches: {rn}, batch_size: {rb}, mix: {{range: 1.0}}, hit_ratio: 1.0,
            range_length: {{distribution: fixed, length: 8, unit: results}}}}
  - phase: {{name: successor, batches: {qn}, batch_size: {qb}, mix: {{successor: 1.0}}, hit_ratio: 1.0}}
""")
        res, height = {}, "?"
        for s in STRUCTS:
            steps, summ = run(args, s, y, f"f2-n{ln}", qb)
            for op in ("lookup", "range", "successor"):
                res[(s, op)] = rate(named(steps, op)[0])
            if s == "btree" and summ:
                height = summ[0].get("final_stats", {}).get("height", "?")
        for op in ("lookup", "range", "successor"):
            out.append(f"| 2^{ln} | {op} | " + " | ".join(f"{res[(s, op)]:.3f}" for s in STRUCTS) + f" | {height} |")
            print(out[-1], flush=True)  # progress: the sizes take a while
    return "\n".join(out)


def fig4(args):
    n = 1 << args.query_log2_n
    out = [f"Figure 4: deleting x% of a tree of n = 2^{args.query_log2_n} keys (one phase, batches of up to 2^22; "
           "device ms and G deletes/s)", "", "| x | B-Tree ms | GPU LSM ms | GPU SA ms | B-Tree | GPU LSM | GPU SA |",
           "|---|---|---|---|---|---|---|"]
    for pct in (10, 20, 30, 40, 50):
        d = n * pct // 100
        nb, bs = batches_of(d)
        y = write(args, f"f4-{pct}.yaml", f"seed: {args.seed}\ninitial: {{count: {n}}}\nsteps:\n"
                  f"  - phase: {{name: delete, batches: {nb}, batch_size: {bs}, mix: {{delete: 1.0}}, hit_ratio: 1.0}}\n")
        ms, rates = [], []
        for s in STRUCTS:
            steps, _ = run(args, s, y, f"f4-{pct}", bs)
            st = named(steps, "delete")[0]
            ms.append(step_ms(st))
            rates.append(rate(st))
        out.append(f"| {pct}% | " + " | ".join(f"{x:.3f}" for x in ms + rates) + " |")
    return "\n".join(out)


def fig5(args):
    out = ["Figure 5: concurrent batches, update ratio a (G operations/s; as many operations as keys, batches of up "
           "to 2^22; the LSM and the sorted array run a concurrent batch as its updates, then its queries)", "",
           "| n | a | B-Tree | GPU LSM | GPU SA |", "|---|---|---|---|---|"]
    for ln in range(args.fig2_min, args.query_log2_n + 1, 2):
        n = 1 << ln
        nb, bs = batches_of(n)
        for a in (0.2, 0.6, 1.0):
            u, q = a / 2, (1 - a) / 4
            mix = f"insert: {u}, delete: {u}" + (f", lookup: {q}, count: {q}, range: {q}, successor: {q}" if q > 0 else "")
            y = write(args, f"f5-n{ln}-a{int(a * 10)}.yaml", f"""seed: {args.seed}
initial: {{count: {n}}}
steps:
  - phase: {{name: mix, batches: {nb}, batch_size: {bs}, mode: concurrent, hit_ratio: 0.5, mix: {{{mix}}},
            range_length: {{distribution: fixed, length: 8, unit: results}}}}
""")
            cells = []
            for s in STRUCTS:
                steps, _ = run(args, s, y, f"f5-n{ln}-a{int(a * 10)}", bs)
                cells.append(rate(named(steps, "mix")[0]))
            out.append(f"| 2^{ln} | {a} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
            print(out[-1], flush=True)  # progress
    return "\n".join(out)


def public(args):
    out = ["The public GpuBTree experiment: n keys inserted into an empty tree in one batch, then n lookups, half "
           "present (G/s)", "", "| n | insert | lookup |", "|---|---|---|"]
    for ln in args.public_logs:
        n = 1 << ln
        qn, qb = batches_of(n)
        y = write(args, f"pub-n{ln}.yaml", f"""seed: {args.seed}
steps:
  - phase: {{name: insert, batches: 1, batch_size: {n}, mix: {{insert: 1.0}}}}
  - phase: {{name: lookup, batches: {qn}, batch_size: {qb}, mix: {{lookup: 1.0}}, hit_ratio: 0.5}}
""")
        steps, _ = run(args, "btree", y, f"pub-n{ln}")
        out.append(f"| 2^{ln} | {rate(named(steps, 'insert')[0]):.3f} | {rate(named(steps, 'lookup')[0]):.3f} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpudict", default=os.path.join(os.path.dirname(__file__), "..", "build", "gpudict"))
    ap.add_argument("--figure", default="all", choices=["table3", "2", "3", "4", "5", "public", "all"])
    ap.add_argument("--max-log2-n", type=int, default=26, help="table3 and figures 2, 3: largest n = 2^N (default 26)")
    ap.add_argument("--query-log2-n", type=int, default=24, help="figures 4, 5: n = 2^N (default 24)")
    ap.add_argument("--batch-logs", default="16,17,18,19,20,21,22", help="table3: log2 of the batch sizes")
    ap.add_argument("--fig2-min", type=int, default=16)
    ap.add_argument("--fig3-min", type=int, default=20)
    ap.add_argument("--fig3-batches", default="16,18,20,22")
    ap.add_argument("--public-logs", default="20,22,24")
    ap.add_argument("--range-queries", type=int, default=1 << 22, help="figure 2: most range queries per size")
    ap.add_argument("--btree", default="", help="extra options for gpudict btree, e.g. '--tile 32 --sort off'")
    ap.add_argument("--repeat", type=int, default=3,
                    help="repetitions per run, median reported (later ones exclude first-launch kernel loading)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--backend", default="", help="gpu or cpu (default: gpudict's own choice)")
    ap.add_argument("--out", default="btree-figures")
    args = ap.parse_args()
    args.batch_logs = [int(x) for x in args.batch_logs.split(",") if x]
    args.fig3_batches = [int(x) for x in args.fig3_batches.split(",") if x]
    args.public_logs = [int(x) for x in args.public_logs.split(",") if x]
    args.btree_opts = args.btree.split()
    os.makedirs(args.out, exist_ok=True)
    parts = []
    for name, fn in (("table3", table3), ("3", fig3), ("2", fig2), ("4", fig4), ("5", fig5), ("public", public)):
        if args.figure in (name, "all"):
            parts.append(fn(args))
            print(parts[-1] + "\n", flush=True)
    write(args, "figures.md", "\n\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
