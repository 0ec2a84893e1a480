#!/usr/bin/env python3
"""Reproduce the GPU LSM paper's experiments (Ashkiani et al., IPDPS 2018:
Tables II-IV and the cleanup figures) with gpudict, the LSM and the sorted array side by side in
one run. Generates the workloads (YAML) into --out, runs them with
--no-verify (the same operations are verified at smaller sizes by the tests)
and prints Markdown tables; --out keeps the raw JSON Lines and batch times,
each table as tidy CSV and the figures as PNG and SVG
(scripts/gpudict_exp.py).

  python3 scripts/lsm_tables.py                      # everything, paper sizes
  python3 scripts/lsm_tables.py --table 2 --max-log2-n 24 --batch-logs 16,20
  python3 scripts/lsm_tables.py --backend cpu --max-log2-n 12 --batch-logs 6,8  # a smoke run
  python3 scripts/lsm_tables.py --table 3 --lsm-options '--cleanup-stale-fraction 0 --lookup-filter off'   # an ablation

Table II: insertion rate (min, max, harmonic mean over every resident count r)
  of n = 2^max-log2-n keys inserted in batches of b.
Table III: lookup rate, all / none of the queries present, n = 2^query-log2-n,
  r queries batches resident (every r up to 64, sampled beyond), as many
  queries as elements.
Table IV: count and range rates for expected range lengths 8 and 1024, at
  r = 2^k and 2^k - 1 (every level full: the most levels to search); at most
  --range-queries queries per batch (a range of 1024 results copies 8 KiB
  per query, so as many queries as elements would not fit).
cleanup: cleanup with 10% and 50% stale elements against a bulk rebuild of the
  live elements, and lookups before and after.
snapshot: the time to take a snapshot of n = 2^k elements (LSM: O(levels),
  it keeps the levels; sorted array: a device copy, O(n)).
"""
import argparse
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpudict_exp  # noqa: E402
from gpudict_exp import Table, add_common_args, harmonic_mean, int_list, pow2, rate, run_selected, step_ms, write  # noqa: E402


def run(args, structure, yaml_path, extra, tag):
    """One run's step records and per-batch times."""
    r = gpudict_exp.run(args, structure, yaml_path, extra, tag=f"{tag}.{structure}", batch_times=True)
    return r.steps, r.batches


def structures(args, b):
    """(name, extra options) of the structures compared at batch size b."""
    return [("lsm", ["--batch-size", str(b)] + shlex.split(args.lsm_options)), ("sorted-array", [])]


def rates_of(batches):
    """Per-batch update rates (ops/s) of the batches that updated."""
    return [int(x["updates"]) / (float(x["device_ms"]) * 1e-3) for x in batches
            if int(x["updates"]) > 0 and float(x["device_ms"]) > 0]


def table2(args):
    n = 1 << args.max_log2_n
    t = Table(f"Table II: insertion of n = 2^{args.max_log2_n} keys in batches of b (G updates/s; min, max, harmonic "
              "mean over r)", ["b", "structure", "min", "max", "mean"], formats={"b": pow2})
    for lb in args.batch_logs:
        b = 1 << lb
        if b > n:
            continue
        y = write(args, f"t2-b{lb}.yaml", f"""seed: {args.seed}
steps:
  - phase: {{name: insert, batches: {n // b}, batch_size: {b}, mix: {{insert: 1.0}}}}
""")
        for s, extra in structures(args, b):
            _, batches = run(args, s, y, extra, f"t2-b{lb}")
            r = rates_of(batches)
            total_ms = sum(float(x["device_ms"]) for x in batches)
            # harmonic mean over the batches = n / total time
            t.add(b=b, structure=s, min=min(r) / 1e9, max=max(r) / 1e9, mean=n / (total_ms * 1e-3) / 1e9)
    t.save(args, "table2")
    t.plot(args, "table2", x="b", y="mean", series="structure", ylabel="G updates/s (harmonic mean)",
           xlabel="batch size b")
    out = [t.title, "", "| b | LSM min | LSM max | LSM mean | SA min | SA max | SA mean | mean ratio |",
           "|---|---|---|---|---|---|---|---|"]
    by = {(r["b"], r["structure"]): r for r in t.rows}
    hms = []
    for b in sorted({r["b"] for r in t.rows}):
        l, sa = by[(b, "lsm")], by[(b, "sorted-array")]
        hms.append((l["mean"], sa["mean"]))
        out.append(f"| {pow2(b)} | {l['min']:.3f} | {l['max']:.3f} | {l['mean']:.3f} | {sa['min']:.3f} | "
                   f"{sa['max']:.3f} | {sa['mean']:.3f} | {l['mean'] / sa['mean']:.1f}x |")
    if hms:
        hl, hs = harmonic_mean([x[0] for x in hms]), harmonic_mean([x[1] for x in hms])
        out.append(f"\nHarmonic mean over the batch sizes: LSM {hl:.3f}, sorted array {hs:.3f} G/s, ratio {hl / hs:.1f}x")
    return "\n".join(out)


def sample_r(R):
    if R <= 64:
        return list(range(1, R + 1))
    pts = set(range(1, 17)) | {R}
    p = 16
    while p < R:
        pts |= {p, p + 1, p - 1, min(R, p + p // 2)}
        p *= 2
    return sorted(x for x in pts if 1 <= x <= R)


def sample_r_sparse(R):
    """r = 2^k (one full level) and 2^k - 1 (every level below full)."""
    pts, p = set(), 1
    while p <= R:
        pts |= {p, p - 1}
        p *= 2
    return sorted(x for x in pts | {R} if 1 <= x <= R)


def query_workload(args, lb, kinds, sampler=sample_r, max_queries=1 << 22):
    """YAML: grow to every sampled r and run each query kind there. kinds:
    list of (phase name, mix, hit ratio, range_length or None)."""
    n = 1 << args.query_log2_n
    b = 1 << lb
    R = n // b
    steps, at = [], 0
    for r in sampler(R):
        if r > at:
            steps.append(f"  - phase: {{name: grow-{r}, batches: {r - at}, batch_size: {b}, mix: {{insert: 1.0}}}}")
            at = r
        q = min(r * b, max_queries)
        qb = min(q, 1 << 22)
        for name, mix, hit, rl in kinds:
            extra = f", range_length: {{distribution: fixed, length: {rl}, unit: results}}" if rl else ""
            steps.append(f"  - phase: {{name: {name}-{r}, batches: {max(1, q // qb)}, batch_size: {qb}, "
                         f"mix: {{{mix}: 1.0}}, hit_ratio: {hit}{extra}}}")
    return f"seed: {args.seed}\nsteps:\n" + "\n".join(steps) + "\n", R


def query_table(args, title, kinds, tag, ops_of, sampler=sample_r, max_queries=1 << 22, note=""):
    t = Table(title, ["b", "op", "structure", "r", "gqueries_per_s"], formats={"b": pow2})
    out = [title, "", "| b | op | LSM min | LSM max | LSM mean | SA min | SA max | SA mean | LSM/SA (mean) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for lb in args.batch_logs:
        b = 1 << lb
        if b > (1 << args.query_log2_n):
            continue
        text, R = query_workload(args, lb, kinds, sampler, max_queries)
        y = write(args, f"{tag}-b{lb}.yaml", text)
        res = {}
        for s, extra in structures(args, b):
            steps, _ = run(args, s, y, extra, f"{tag}-b{lb}")
            for st in steps:
                if st["kind"] != "phase" or st["name"].startswith("grow-"):
                    continue
                kind, r = st["name"].rsplit("-", 1)
                g = rate(st, ops_of)
                if step_ms(st, ops_of) > 0:
                    res.setdefault((s, kind), []).append(g)
                    t.add(b=b, op=kind, structure=s, r=int(r), gqueries_per_s=g)
        for name, _, _, _ in kinds:
            l, sa = res.get(("lsm", name), []), res.get(("sorted-array", name), [])
            if not l or not sa:
                continue
            hl, hs = harmonic_mean(l), harmonic_mean(sa)
            out.append(f"| 2^{lb} | {name} | {min(l):.3f} | {max(l):.3f} | {hl:.3f} | {min(sa):.3f} | {max(sa):.3f} | "
                       f"{hs:.3f} | {hl / hs:.2f} |")
    t.save(args, tag)
    t.plot(args, tag, x="r", y="gqueries_per_s", series="structure", panel="op", logx=False, ylabel="G queries/s",
           xlabel="resident batches r (every b)")
    out.append(f"\n(G queries/s; n = 2^{args.query_log2_n}; "
               + (note or "r sampled: every r up to 64, then around powers of two") + "; harmonic means over the sampled r)")
    return "\n".join(out)


def table3(args):
    return query_table(args, "Table III: lookups, all queries present (hit) and none present (miss)",
                       [("lookup-hit", "lookup", 1.0, None), ("lookup-miss", "lookup", 0.0, None)], "t3", {"lookup"})


def table4(args):
    parts = []
    for rl in (8, 1024):
        q = args.range_queries if rl == 8 else max(1, args.range_queries // 16)
        parts.append(query_table(args, f"Table IV: count and range, expected range length {rl}",
                                 [(f"count-{rl}", "count", 0.5, rl), (f"range-{rl}", "range", 0.5, rl)],
                                 f"t4-{rl}", {"count", "range"}, sample_r_sparse, q,
                                 f"r = 2^k and 2^k - 1; min(r b, {q}) queries per r"))
    return "\n\n".join(parts)


def snapshot_table(args):
    title = "Snapshot: time to take one snapshot of n elements (ms; LSM keeps its levels, the sorted array copies)"
    t = Table(title, ["n", "lsm_levels", "structure", "device_ms", "step_ms"], formats={"n": pow2})
    out = [title, "", "| n | levels (LSM) | LSM device ms | LSM step ms | sorted array device ms | sorted array step ms |",
           "|---|---|---|---|---|---|"]
    b = 1 << min(args.batch_logs[len(args.batch_logs) // 2], 20)
    for ln in range(16, args.query_log2_n + 1, 2):
        n = 1 << ln
        # Grown by batches so the LSM has one level per set bit of n / b
        # (n - b: the most levels for this n).
        batches = max(1, n // b - 1)
        y = write(args, f"snap-n{ln}.yaml", f"""seed: {args.seed}
steps:
  - phase: {{name: grow, batches: {batches}, batch_size: {b}, mix: {{insert: 1.0}}}}
  - snapshot: s1
  - drop_snapshot: s1
  - snapshot: s2
""")
        row = {}
        for s, extra in structures(args, b):
            steps, _ = run(args, s, y, extra, f"snap-n{ln}")
            snaps = [st for st in steps if st["kind"] == "snapshot"]
            row[s] = (min(step_ms(st) for st in snaps), min(st["e2e_ms"] for st in snaps))
            t.add(n=n, lsm_levels=bin(batches).count("1"), structure=s, device_ms=row[s][0], step_ms=row[s][1])
        l, sa = row["lsm"], row["sorted-array"]
        out.append(f"| 2^{ln} | {bin(batches).count('1')} | {l[0]:.4f} | {l[1]:.4f} | {sa[0]:.4f} | {sa[1]:.4f} |")
    t.save(args, "snapshot")
    t.plot(args, "snapshot", x="n", y="step_ms", series="structure", logy=True, ylabel="step ms (host view)",
           xlabel="elements n")
    out.append(f"\n(b = {b}; grown to n - b elements; the smaller of two snapshots; device ms: CUDA events around "
               "device work, step ms: the whole step as the host sees it)")
    return "\n".join(out)


def cleanup_table(args):
    n = 1 << args.query_log2_n
    title = "Cleanup: n inserted in batches of b, then stale elements made by deletes, cleanup vs bulk rebuild of the live keys"
    t = Table(title, ["b", "stale_fraction", "stale", "cleanup_ms", "rebuild_ms", "lookups_before", "lookups_after"],
              formats={"b": pow2})
    out = [title, "", "| b | stale | cleanup ms | rebuild ms | rebuild/cleanup | lookups before (G/s) | after (G/s) |",
           "|---|---|---|---|---|---|---|"]
    for lb in args.batch_logs:
        b = 1 << lb
        if b > n // 2:
            continue
        for frac in (0.1, 0.5):
            # Deletes of present keys in full batches: each adds a tombstone and
            # makes one element stale (2 stale elements per delete).
            dels = int(n * frac / 2)
            dbatches = max(1, dels // b)
            live = n - dbatches * b
            q = min(n, 1 << 22)
            y = write(args, f"cl-b{lb}-{int(frac * 100)}.yaml", f"""seed: {args.seed}
steps:
  - phase: {{name: grow, batches: {n // b}, batch_size: {b}, mix: {{insert: 1.0}}}}
  - phase: {{name: delete, batches: {dbatches}, batch_size: {b}, mix: {{delete: 1.0}}, hit_ratio: 1.0}}
  - phase: {{name: before, batches: 1, batch_size: {q}, mix: {{lookup: 1.0}}, hit_ratio: 0.5}}
  - cleanup
  - phase: {{name: after, batches: 1, batch_size: {q}, mix: {{lookup: 1.0}}, hit_ratio: 0.5}}
""")
            steps, _ = run(args, "lsm", y, ["--batch-size", str(b)], f"cl-b{lb}-{int(frac * 100)}")
            ph = {st["name"]: st for st in steps}
            cl = [st for st in steps if st["kind"] == "cleanup"][0]
            cms = step_ms(cl)
            y2 = write(args, f"rb-b{lb}-{int(frac * 100)}.yaml",
                       f"seed: {args.seed}\ninitial: {{count: {live}}}\nsteps: []\n")
            steps2, _ = run(args, "lsm", y2, ["--batch-size", str(b)], f"rb-b{lb}-{int(frac * 100)}")
            rb = [st for st in steps2 if st["kind"] == "build"][0]
            rms = step_ms(rb)
            stale = cl.get("after", {}).get("last_cleanup_stale", "?")
            t.add(b=b, stale_fraction=frac, stale=stale, cleanup_ms=cms, rebuild_ms=rms,
                  lookups_before=rate(ph["before"]), lookups_after=rate(ph["after"]))
            ratio = "%.2fx" % (rms / cms) if cms > 0 else "-"
            out.append(f"| 2^{lb} | {int(frac * 100)}% ({stale}) | {cms:.3f} | {rms:.3f} | {ratio} | "
                       f"{rate(ph['before']):.3f} | {rate(ph['after']):.3f} |")
    t.save(args, "cleanup")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "lsm-tables", repeat=1)
    ap.add_argument("--table", default="all", choices=["2", "3", "4", "cleanup", "snapshot", "all"])
    ap.add_argument("--max-log2-n", type=int, default=27, help="Table II: n = 2^N keys inserted (default 27)")
    ap.add_argument("--query-log2-n", type=int, default=24, help="Tables III, IV, cleanup: n = 2^N (default 24)")
    ap.add_argument("--batch-logs", type=int_list, default="16,18,20,22,24", help="log2 of the batch sizes b")
    ap.add_argument("--range-queries", type=int, default=1 << 20,
                    help="Table IV: most queries per r for length 8 (length 1024: a 16th of it)")
    ap.add_argument("--lsm-options", default="--cleanup-stale-fraction 0",
                    help="more options for the LSM's runs (default: no automatic cleanup, as in the paper, "
                         "whose tables time insertions and queries alone), e.g. '--lookup-filter off' (an ablation)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    run_selected(args, args.table, [("2", table2), ("3", table3), ("4", table4), ("cleanup", cleanup_table),
                                    ("snapshot", snapshot_table)], md_name="tables.md")


if __name__ == "__main__":
    main()
