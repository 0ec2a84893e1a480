#!/usr/bin/env python3
"""Reproduce the GPU B-Tree paper's experiments (Awad et al., PPoPP 2019:
Table 3, Figures 2-5) with gpudict: the B-Tree, and where they apply the GPU LSM and the
sorted array side by side. Generates the workloads (YAML) into --out, runs
them with --no-verify --format json (the same operations are verified at
smaller sizes by the GPU tests) and prints Markdown tables; --out keeps the
raw JSON Lines, each table as tidy CSV and the figures as PNG and SVG
(scripts/gpudict_exp.py).

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
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpudict_exp import Table, add_common_args, harmonic_mean, int_list, pow2, rate, run, run_selected, step_ms, write  # noqa: E402

STRUCTS = ["btree", "lsm", "sorted-array"]
NAMES = {"btree": "B-Tree", "lsm": "GPU LSM", "sorted-array": "GPU SA"}


def run_structure(args, structure, yaml_path, tag, batch=None):
    """Runs one structure; `batch`: the workload's batch size, which sets the LSM's --batch-size."""
    extra = []
    if structure == "lsm" and batch is not None:
        extra = lsm_extra(batch)
    if structure == "btree":
        extra = args.btree_opts
    return run(args, structure, yaml_path, extra, tag=f"{tag}.{structure}")


def lsm_extra(b):
    return ["--batch-size", str(1 << max(0, (b - 1).bit_length()))]


def batches_of(total, cap=1 << 22):
    bs = min(total, cap)
    return max(1, total // bs), bs


def table3(args):
    n = 1 << args.max_log2_n
    t = Table(f"Table 3: mean insertion rate, n = 2^{args.max_log2_n} keys inserted from empty in batches of b "
              "(G keys/s = n / total device time)", ["b", "structure", "gkeys_per_s"], formats={"b": pow2})
    for lb in args.batch_logs:
        b = 1 << lb
        if b > n:
            continue
        y = write(args, f"t3-b{lb}.yaml", f"seed: {args.seed}\nsteps:\n"
                  f"  - phase: {{name: insert, batches: {n // b}, batch_size: {b}, mix: {{insert: 1.0}}}}\n")
        for s in STRUCTS:
            t.add(b=b, structure=NAMES[s], gkeys_per_s=rate(run_structure(args, s, y, f"t3-b{lb}", b).step("insert")))
    for s in STRUCTS:
        t.notes.append(f"harmonic mean, {NAMES[s]}: "
                       f"{harmonic_mean([r['gkeys_per_s'] for r in t.rows if r['structure'] == NAMES[s]]):.3f}")
    t.save(args, "table3")
    t.plot(args, "table3", x="b", y="gkeys_per_s", series="structure", ylabel="G keys/s", xlabel="batch size b")
    return t.markdown(pivot=(["b"], "structure", "gkeys_per_s"))


def fig3(args):
    t = Table("Figure 3: bulk rebuild of m keys (sort included) vs inserting a batch of 2^i into m - 2^i keys (ms)",
              ["m", "what", "ms"], formats={"m": pow2})
    cross = {}
    for lm in range(args.fig3_min, args.max_log2_n + 1, 2):
        m = 1 << lm
        y = write(args, f"f3-build-m{lm}.yaml", f"seed: {args.seed}\ninitial: {{count: {m}}}\nsteps: []\n")
        rebuild = step_ms(run_structure(args, "btree", y, f"f3-build-m{lm}").of_kind("build")[0])
        t.add(m=m, what="rebuild", ms=rebuild)
        for i in args.fig3_batches:
            b = 1 << i
            if b >= m:
                continue
            y = write(args, f"f3-ins-m{lm}-b{i}.yaml", f"seed: {args.seed}\ninitial: {{count: {m - b}}}\nsteps:\n"
                      f"  - phase: {{name: insert, batches: 1, batch_size: {b}, mix: {{insert: 1.0}}, hit_ratio: 0.0}}\n")
            ms = step_ms(run_structure(args, "btree", y, f"f3-ins-m{lm}-b{i}").step("insert"))
            t.add(m=m, what=f"insert 2^{i}", ms=ms)
            if ms < rebuild and i not in cross:
                cross[i] = m
    for i in args.fig3_batches:
        t.notes.append(f"batch 2^{i}: incremental insertion beats a rebuild from m = "
                       + (pow2(cross[i]) if i in cross else "(not within the sizes run)"))
    t.save(args, "fig3")
    t.plot(args, "fig3", x="m", y="ms", series="what", logy=True, ylabel="device ms", xlabel="keys m")
    return t.markdown(pivot=(["m"], "what", "ms"))


def fig2(args):
    t = Table("Figure 2: query rates against the tree size (G queries/s; lookups all present, ranges of 8 results, "
              "successors of present keys)", ["n", "op", "structure", "gops_per_s", "btree_height"],
              formats={"n": pow2})
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
        runs = {s: run_structure(args, s, y, f"f2-n{ln}", qb) for s in STRUCTS}
        height = runs["btree"].summary.get("final_stats", {}).get("height", "")
        for op in ("lookup", "range", "successor"):
            for s in STRUCTS:
                t.add(n=n, op=op, structure=NAMES[s], gops_per_s=rate(runs[s].step(op)), btree_height=height)
        print(f"figure 2: n = 2^{ln} done", file=sys.stderr, flush=True)  # progress: the sizes take a while
    t.save(args, "fig2")
    t.plot(args, "fig2", x="n", y="gops_per_s", series="structure", panel="op", xlabel="keys n")
    return t.markdown(pivot=(["n", "op", "btree_height"], "structure", "gops_per_s"))


def fig4(args):
    n = 1 << args.query_log2_n
    t = Table(f"Figure 4: deleting x% of a tree of n = 2^{args.query_log2_n} keys (one phase, batches of up to 2^22; "
              "G deletes/s, device ms)", ["percent", "structure", "gdeletes_per_s", "ms"])
    for pct in (10, 20, 30, 40, 50):
        d = n * pct // 100
        nb, bs = batches_of(d)
        y = write(args, f"f4-{pct}.yaml", f"seed: {args.seed}\ninitial: {{count: {n}}}\nsteps:\n"
                  f"  - phase: {{name: delete, batches: {nb}, batch_size: {bs}, mix: {{delete: 1.0}}, hit_ratio: 1.0}}\n")
        for s in STRUCTS:
            st = run_structure(args, s, y, f"f4-{pct}", bs).step("delete")
            t.add(percent=pct, structure=NAMES[s], gdeletes_per_s=rate(st), ms=step_ms(st))
    t.save(args, "fig4")
    t.plot(args, "fig4", x="percent", y="gdeletes_per_s", series="structure", logx=False, ylabel="G deletes/s",
           xlabel="keys deleted (%)")
    return t.markdown(pivot=(["percent"], "structure", "gdeletes_per_s"))


def fig5(args):
    t = Table("Figure 5: concurrent batches, update ratio a (G operations/s; as many operations as keys, batches of "
              "up to 2^22; the LSM and the sorted array run a concurrent batch as its updates, then its queries)",
              ["n", "a", "structure", "gops_per_s"], formats={"n": pow2, "a": str})
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
            for s in STRUCTS:
                t.add(n=n, a=a, structure=NAMES[s],
                      gops_per_s=rate(run_structure(args, s, y, f"f5-n{ln}-a{int(a * 10)}", bs).step("mix")))
        print(f"figure 5: n = 2^{ln} done", file=sys.stderr, flush=True)  # progress
    t.save(args, "fig5")
    t.plot(args, "fig5", x="n", y="gops_per_s", series="structure", panel="a", xlabel="keys n")
    return t.markdown(pivot=(["n", "a"], "structure", "gops_per_s"))


def public(args):
    t = Table("The public GpuBTree experiment: n keys inserted into an empty tree in one batch, then n lookups, half "
              "present (G/s)", ["n", "op", "gops_per_s"], formats={"n": pow2})
    for ln in args.public_logs:
        n = 1 << ln
        qn, qb = batches_of(n)
        y = write(args, f"pub-n{ln}.yaml", f"""seed: {args.seed}
steps:
  - phase: {{name: insert, batches: 1, batch_size: {n}, mix: {{insert: 1.0}}}}
  - phase: {{name: lookup, batches: {qn}, batch_size: {qb}, mix: {{lookup: 1.0}}, hit_ratio: 0.5}}
""")
        r = run_structure(args, "btree", y, f"pub-n{ln}")
        for op in ("insert", "lookup"):
            t.add(n=n, op=op, gops_per_s=rate(r.step(op)))
    t.save(args, "public")
    t.plot(args, "public", x="n", y="gops_per_s", series="op", xlabel="keys n")
    return t.markdown(pivot=(["n"], "op", "gops_per_s"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "btree-figures", repeat=3)
    ap.add_argument("--figure", default="all", choices=["table3", "2", "3", "4", "5", "public", "all"])
    ap.add_argument("--max-log2-n", type=int, default=26, help="table3 and figures 2, 3: largest n = 2^N (default 26)")
    ap.add_argument("--query-log2-n", type=int, default=24, help="figures 4, 5: n = 2^N (default 24)")
    ap.add_argument("--batch-logs", type=int_list, default="16,17,18,19,20,21,22", help="table3: log2 of the batch sizes")
    ap.add_argument("--fig2-min", type=int, default=16)
    ap.add_argument("--fig3-min", type=int, default=20)
    ap.add_argument("--fig3-batches", type=int_list, default="16,18,20,22")
    ap.add_argument("--public-logs", type=int_list, default="20,22,24")
    ap.add_argument("--range-queries", type=int, default=1 << 22, help="figure 2: most range queries per size")
    ap.add_argument("--btree", default="", help="extra options for gpudict btree, e.g. '--tile 32 --sort off'")
    args = ap.parse_args()
    args.btree_opts = args.btree.split()
    os.makedirs(args.out, exist_ok=True)
    run_selected(args, args.figure, [("table3", table3), ("3", fig3), ("2", fig2), ("4", fig4), ("5", fig5),
                                     ("public", public)])


if __name__ == "__main__":
    main()
