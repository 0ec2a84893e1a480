#!/usr/bin/env python3
"""Reproduce the slab hash paper's experiments (Ashkiani et al., IPDPS 2018:
Figures 4-7, plus deletes, FLUSH and SlabAlloc) with `gpudict slabhash`. Generates the
workloads (YAML) into --out, runs them with --no-verify (the same operations
are verified at smaller sizes by the GPU tests) and prints Markdown tables;
--out keeps the raw JSON Lines, each table as tidy CSV and the figures as PNG
and SVG (scripts/gpudict_exp.py).

  python3 scripts/slabhash_figures.py                        # everything, paper sizes
  python3 scripts/slabhash_figures.py --figure 5 --max-log2-n 24
  python3 scripts/slabhash_figures.py --backend cpu --fig4-log2-n 12 --max-log2-n 12 --fig6-total-log2 14 \\
      --fig7-log2-n 12 --fig7-batch-log2 10         # a smoke run of the script itself

Figure 4: build, search (all present / none present) and delete rates against
  memory utilization (--load-factor), n = 2^fig4-log2-n keys; with the
  measured utilization, buckets and average slabs per bucket.
Figure 5: the same against n (2^18 ... 2^max-log2-n) at utilization 0.6.
Figure 6: incremental insertion in batches of 32k, 64k and 128k up to
  2^fig6-total-log2 keys (buckets sized for the final size at 0.65), against
  rebuilding the table from scratch after every batch (the sum of bulk builds
  of b, 2b, 3b, ... keys; measured at b 2^i and interpolated linearly).
Figure 7: concurrent batches of the mixes G0 = (0.5, 0.5, 0, 0), G1 = (0.2,
  0.2, 0.3, 0.3), G2 = (0.1, 0.1, 0.4, 0.4) (insert new, delete, search
  present, search absent) against the initial utilization. The workload
  generator's hit_ratio covers deletes and lookups together: G0 uses 1.0
  (every delete hits), G1 and G2 use 0.5, so half of their deletes miss.
  Run twice: with the automatic pool (its growths are timed) and with
  --fig7-pool-slabs slabs preallocated (the paper's setup).
flush: FLUSH after deleting half of the keys (from the Figure 5 runs).
alloc: gpudict_slaballoc_bench (SlabAlloc on its own), when --alloc-bench is given.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpudict_exp  # noqa: E402
from gpudict_exp import Table, add_common_args, float_list, pow2, rate, run_selected, step_ms, write  # noqa: E402


def run(args, yaml_path, extra, tag, repeat=None):
    return gpudict_exp.run(args, "slabhash", yaml_path, list(extra) + args.extra.split(), tag=tag, repeat=repeat)


def bulk_yaml(args, n):
    half = max(1, n // 2)
    return f"""seed: {args.seed}
initial: {{count: {n}}}
steps:
  - phase: {{name: search-all, batches: 1, batch_size: {n}, mix: {{lookup: 1.0}}, hit_ratio: 1.0}}
  - phase: {{name: search-none, batches: 1, batch_size: {n}, mix: {{lookup: 1.0}}, hit_ratio: 0.0}}
  - flush
  - phase: {{name: delete, batches: 1, batch_size: {half}, mix: {{delete: 1.0}}, hit_ratio: 1.0}}
  - flush
"""


def bulk_row(r):
    """The rates and table statistics of a bulk_yaml run."""
    build = r.of_kind("build")[0]
    flushes = r.of_kind("cleanup")
    after_build = flushes[0].get("before", {})
    after_del = flushes[1].get("before", {})
    return {
        "build": rate(build),
        "search_all": rate(r.step("search-all")),
        "search_none": rate(r.step("search-none")),
        "delete": rate(r.step("delete")),
        "flush_ms": step_ms(flushes[1]),
        "utilization": float(after_build.get("utilization", "nan")),
        "buckets": int(after_build.get("buckets", 0)),
        "slabs_per_bucket": float(after_build.get("avg_chain_slabs", "nan")),
        "slabs_before_flush": int(after_del.get("slabs", 0)),
        "slabs_after_flush": int(flushes[1].get("after", {}).get("slabs", 0)),
    }


RATES = ["build", "search_all", "search_none", "delete"]


def figure4(args):
    n = 1 << args.fig4_log2_n
    y = write(args, f"f4-n{args.fig4_log2_n}.yaml", bulk_yaml(args, n))
    t = Table(f"Figure 4: n = 2^{args.fig4_log2_n}, rates in G ops/s (device time) against memory utilization",
              ["load_factor", "utilization", "buckets", "slabs_per_bucket"] + RATES, formats={"load_factor": str})
    for lf in args.load_factors:
        r = bulk_row(run(args, y, ["--load-factor", str(lf)], f"f4-lf{lf}"))
        t.add(load_factor=lf, **{k: r[k] for k in ["utilization", "buckets", "slabs_per_bucket"] + RATES})
    t.save(args, "fig4")
    t.plot(args, "fig4", x="utilization", y=RATES, logx=False, ylabel="G operations/s", xlabel="memory utilization")
    return t.markdown()


def figure5(args):
    t = Table(f"Figure 5: utilization {args.fig5_load_factor}, rates in G ops/s against n (delete: n/2 present "
              "keys; flush: after those deletes)",
              ["n", "utilization"] + RATES + ["flush_ms", "slabs_before_flush", "slabs_after_flush"],
              formats={"n": pow2})
    for ln in range(args.min_log2_n, args.max_log2_n + 1):
        y = write(args, f"f5-n{ln}.yaml", bulk_yaml(args, 1 << ln))
        reps = args.repeat if ln <= args.fig5_repeat_max_log2 else 1
        r = bulk_row(run(args, y, ["--load-factor", str(args.fig5_load_factor)], f"f5-n{ln}", reps))
        t.add(n=1 << ln, **{k: r[k] for k in t.columns if k != "n"})
    t.save(args, "fig5")
    t.plot(args, "fig5", x="n", y=RATES, ylabel="G operations/s", xlabel="keys n")
    return t.markdown()


def figure6(args):
    total = 1 << args.fig6_total_log2
    t = Table(f"Figure 6: incremental batches up to {total} keys (final utilization 0.65) against rebuilding after "
              "every batch", ["batch", "batches", "incremental_ms", "rebuild_ms", "speedup"])
    lf = "0.65"
    for b in (32768, 65536, 131072):
        if b > total:
            continue
        k = total // b
        y = write(args, f"f6-b{b}.yaml", f"""seed: {args.seed}
steps:
  - phase: {{name: inc, batches: {k}, batch_size: {b}, mix: {{insert: 1.0}}}}
""")
        inc_ms = sum(step_ms(s) for s in run(args, y, ["--load-factor", lf, "--expected-keys", str(total)],
                                             f"f6-inc-b{b}").of_kind("phase"))
        # Bulk builds of b 2^i keys, interpolated for every multiple of b.
        sizes, times = [], []
        m = 1
        while m <= k:
            yb = write(args, f"f6-build-{m * b}.yaml", f"seed: {args.seed}\ninitial: {{count: {m * b}}}\nsteps: []\n")
            sizes.append(m)
            times.append(step_ms(run(args, yb, ["--load-factor", lf], f"f6-build-{m * b}").of_kind("build")[0]))
            m *= 2

        def at(j):
            for i in range(len(sizes) - 1):
                if sizes[i] <= j <= sizes[i + 1]:
                    f = (j - sizes[i]) / (sizes[i + 1] - sizes[i])
                    return times[i] + f * (times[i + 1] - times[i])
            return times[-1] * j / sizes[-1]
        rebuild_ms = sum(at(j) for j in range(1, k + 1))
        t.add(batch=b, batches=k, incremental_ms=inc_ms, rebuild_ms=rebuild_ms, speedup=rebuild_ms / inc_ms)
    t.save(args, "fig6")
    t.plot(args, "fig6", x="batch", y=["incremental_ms", "rebuild_ms"], logy=True, ylabel="device ms",
           xlabel="batch size")
    return t.markdown()


def figure7(args):
    n = 1 << args.fig7_log2_n
    bs = 1 << args.fig7_batch_log2
    mixes = {"G0": ("{insert: 0.5, delete: 0.5}", 1.0), "G1": ("{insert: 0.2, delete: 0.2, lookup: 0.6}", 0.5),
             "G2": ("{insert: 0.1, delete: 0.1, lookup: 0.8}", 0.5)}
    # Two pools: the automatic one, which the batches' new keys make grow
    # (each growth, a cudaMalloc and memset of a super block, is timed inside
    # the batch), and one preallocated with --pool-slabs, as the paper's
    # SlabAlloc (32 super blocks allocated up front).
    pools = [("automatic", [])]
    if args.fig7_pool_slabs:
        pools.append((f"{args.fig7_pool_slabs} slabs", ["--pool-slabs", str(args.fig7_pool_slabs)]))
    t = Table(f"Figure 7: concurrent batches of 2^{args.fig7_batch_log2} operations on 2^{args.fig7_log2_n} initial "
              "keys, G ops/s against the initial utilization", ["load_factor", "pool", "mix", "gops_per_s"],
              formats={"load_factor": str})
    # One workload per mix; the load factor and the pool are options.
    yamls = {g: write(args, f"f7-{g}.yaml", f"""seed: {args.seed}
initial: {{count: {n}}}
steps:
  - phase: {{name: mix, batches: {args.fig7_batches}, batch_size: {bs}, mode: concurrent, mix: {mix}, hit_ratio: {hit}}}
""") for g, (mix, hit) in mixes.items()}
    for lf in args.fig7_load_factors:
        for pname, pextra in pools:
            for g in mixes:
                tag = f"f7-{g}-lf{lf}" + ("-pre" if pextra else "")
                t.add(load_factor=lf, pool=pname, mix=g,
                      gops_per_s=rate(run(args, yamls[g], ["--load-factor", str(lf)] + pextra, tag).step("mix")))
    for r in t.rows:
        r["mix, pool"] = f"{r['mix']}, {r['pool']} pool"
    t.save(args, "fig7")
    t.plot(args, "fig7", x="load_factor", y="gops_per_s", series="mix", panel="pool", logx=False,
           xlabel="initial load factor")
    return t.markdown(pivot=(["load_factor"], "mix, pool", "gops_per_s"))


def alloc(args):
    if not args.alloc_bench:
        return "alloc: skipped (no --alloc-bench)"
    r = subprocess.run([args.alloc_bench, "--log2-pool", str(args.alloc_log2_pool)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"slabhash_figures: {args.alloc_bench} failed ({r.returncode}): {r.stderr.strip()}")
    write(args, "alloc.txt", r.stdout)
    return "SlabAlloc on its own (gpudict_slaballoc_bench)\n\n" + r.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "slabhash-figures", repeat=3)
    ap.set_defaults(seed=1)
    ap.add_argument("--alloc-bench", default="")
    ap.add_argument("--extra", default="", help="options added to every gpudict run, e.g. '--prefetch off'")
    ap.add_argument("--figure", default="all", choices=["4", "5", "6", "7", "alloc", "all"])
    ap.add_argument("--fig4-log2-n", type=int, default=22)
    ap.add_argument("--min-log2-n", type=int, default=18)
    ap.add_argument("--max-log2-n", type=int, default=27)
    ap.add_argument("--fig5-load-factor", type=float, default=0.6)
    ap.add_argument("--fig5-repeat-max-log2", type=int, default=24,
                    help="larger n run once (generating 2^27 distinct keys takes the host a while)")
    ap.add_argument("--fig6-total-log2", type=int, default=21)
    ap.add_argument("--fig7-log2-n", type=int, default=22)
    ap.add_argument("--fig7-batch-log2", type=int, default=20)
    ap.add_argument("--fig7-batches", type=int, default=4)
    ap.add_argument("--fig7-pool-slabs", type=int, default=1 << 21,
                    help="Figure 7 also runs with this many slabs preallocated (0: only the automatic pool)")
    ap.add_argument("--alloc-log2-pool", type=int, default=22)
    ap.add_argument("--load-factors", type=float_list, default="0.2,0.3,0.4,0.5,0.6,0.65,0.7,0.75,0.8,0.85,0.9")
    ap.add_argument("--fig7-load-factors", type=float_list, default="", help="default: --load-factors")
    args = ap.parse_args()
    args.fig7_load_factors = args.fig7_load_factors or args.load_factors
    os.makedirs(args.out, exist_ok=True)
    run_selected(args, args.figure, [("4", figure4), ("5", figure5), ("6", figure6), ("7", figure7), ("alloc", alloc)])


if __name__ == "__main__":
    main()
