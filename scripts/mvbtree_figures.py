#!/usr/bin/env python3
"""Reproduce the multiversion B-Tree chapter's experiments (Awad's
dissertation, ch. 4, section 4.5: Figure 4.2, Table 4.1 / Figure 4.3,
Figure 4.4, Table 4.2 / Figure 4.5) with `gpudict mvbtree`, the unversioned
`gpudict btree` beside it on the same workloads. Generates the workloads
(YAML) into --out, runs them with --no-verify --format json (the same
operations run verified in the GPU tests and examples/bench-mvbtree*.yaml)
and prints Markdown tables with the paper's numbers (NVIDIA V100) beside the
measured ones; --out keeps the raw JSON Lines, each table as tidy CSV and
the figures as PNG and SVG (scripts/gpudict_exp.py). Rates are in M
operations per second of device time.

  python3 scripts/mvbtree_figures.py                         # everything, the paper's sizes
  python3 scripts/mvbtree_figures.py --figure 4.2 --max-log2-n 24
  python3 scripts/mvbtree_figures.py --backend cpu --fig42-min-log2 10 --max-log2-n 12 --t41-initial 4096 \\
      --t42-initial 4096 --sweep-initial-log2 12 --concurrent-batch-log2 10 --sweep-batch-log2 10 \\
      --sweep-lengths 8,64 --repeat 1                        # a smoke run of the script itself

gpudict has no ViB/VoB switch: mvbtree updates in place while no snapshot
is live, and copies each leaf a batch changes (once per leaf per batch)
while one is. The figures use that:

fig4.2:  build by incremental insertion from empty (batches of
         2^insert-batch-log2) to n = 2^k keys, k = fig42-min-log2 ...
         max-log2-n, then a find of every key (all present): btree,
         mvbtree with no snapshot (the paper's ViB-Tree), and mvbtree with a
         snapshot taken before every batch and the one before dropped (every
         changed leaf copied: the VoB-Tree's out-of-place updates, by batch).
         Also each tree's height and mvbtree's version overhead (Fig. 4.6's
         figure at the end of a run).
table4.1 (Figure 4.3): concurrent batches of inserts and ranges of L = 8 and
         32 results at update ratios 5, 50 and 90 %, on bulk-built trees of
         --t41-initial keys (the paper's 1 M and 40 M); in mvbtree every
         range reads the state before its batch (linearizable), in btree a
         range may see some of its batch's inserts. One run per case, each
         from its initial tree.
fig4.4:  the range length swept (--sweep-lengths) at 50 % inserts, on a tree
         of 2^sweep-initial-log2 keys (the paper's 1 M), about 5 M operations.
         Long ranges cost the host most of a run's time (on an H100, 2 x 2^20
         operations at L = 512 took 24 s of wall time for 0.01 s of device
         time): a run that takes more than --sweep-timeout seconds is
         stopped, and that structure's longer lengths are skipped.
table4.2 (Figure 4.5): concurrent deletes and finds (all present) at update
         ratios 5, 50 and 90 % on a tree of --t42-initial keys (the paper's
         45 M), one run per ratio.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpudict_exp  # noqa: E402
from gpudict_exp import Table, add_common_args, int_list, name_list, pow2, rate, rate_of, run_selected, write  # noqa: E402

M = 1 << 20
PAPER = "paper, V100"
# The paper's numbers (Awad's dissertation, section 4.5), M operations per second.
FIG42_PAPER = {  # averages over the tree sizes of Figure 4.2 (text of 4.5.1)
    "insert": {"B-Tree": 240.065, "ViB-Tree": 216.512, "VoB-Tree": 94.605},
    "find": {"B-Tree": 1512.964, "ViB-Tree": 1453.697, "VoB-Tree": 1549.977},
}
TABLE41_PAPER = {  # (initial keys, L, alpha %) -> (B-Tree, VoB-Tree)
    (1 * M, 8, 5): (212.932, 233.537), (1 * M, 8, 50): (211.936, 128.211), (1 * M, 8, 90): (219.688, 95.073),
    (1 * M, 32, 5): (221.691, 227.793), (1 * M, 32, 50): (210.405, 120.956), (1 * M, 32, 90): (213.406, 93.199),
    (40 * M, 8, 5): (228.694, 248.86), (40 * M, 8, 50): (220.186, 127.256), (40 * M, 8, 90): (222.729, 95.391),
    (40 * M, 32, 5): (240.13, 214.679), (40 * M, 32, 50): (213.199, 117.642), (40 * M, 32, 90): (220.329, 92.154),
}
TABLE42_PAPER = {5: (433.462, 369.835), 50: (424.131, 367.432), 90: (399.863, 346.188)}  # 45 M keys
FIG44_PAPER = {8: (197.253, 127.895), 1024: (43.534, 27.923)}  # 1 M keys, 50 % inserts

BTREE, VIB, VOB = "btree", "mvbtree, no snapshot (ViB)", "mvbtree, snapshot per batch (VoB)"
MV = "mvbtree"
P_BTREE, P_VIB, P_VOB = f"{PAPER}: B-Tree", f"{PAPER}: ViB-Tree", f"{PAPER}: VoB-Tree"


def mops(st):
    return rate(st) * 1e3


def run(args, structure, yaml_path, tag, check=True, timeout=None):
    extra = args.btree_opts if structure == "btree" else args.mvbtree_opts
    return gpudict_exp.run(args, structure, yaml_path, extra, tag=f"{tag}.{structure}", check=check,
                           timeout=timeout)


def batches_of(total, cap):
    bs = min(total, cap)
    return max(1, total // bs), bs


def keys_cell(v):
    v = int(v)
    return pow2(v) if v & (v - 1) == 0 else (f"{v // M} M" if v % M == 0 else str(v))


def fig42(args):
    t = Table("Figure 4.2: build by insertion from empty and find of every key, against the tree size n "
              "(M keys/s)", ["n", "op", "structure", "source", "mops", "height", "version_overhead", "device_mib"],
              digits=1, formats={"n": pow2, "version_overhead": lambda v: "" if v == "" else f"{100 * v:.2f} %"})
    for ln in range(args.fig42_min_log2, args.max_log2_n + 1):
        n = 1 << ln
        nb, b = batches_of(n, 1 << args.insert_batch_log2)
        qn, qb = batches_of(n, 1 << 22)
        find = (f"  - phase: {{name: find, batches: {qn}, batch_size: {qb}, mix: {{lookup: 1.0}}, "
                f"hit_ratio: 1.0}}\n")
        plain = write(args, f"f42-n{ln}.yaml", f"seed: {args.seed}\nkey_type: u32\nvalue_type: u32\nsteps:\n"
                      f"  - phase: {{name: insert, batches: {nb}, batch_size: {b}, mix: {{insert: 1.0}}, "
                      f"hit_ratio: 0.0}}\n" + find)
        lines = [f"seed: {args.seed}", "key_type: u32", "value_type: u32", "steps:"]
        for i in range(nb):
            lines.append(f"  - snapshot: g{i}")
            if i:
                lines.append(f"  - drop_snapshot: g{i - 1}")
            lines.append(f"  - phase: {{name: insert-{i:04d}, batches: 1, batch_size: {b}, mix: {{insert: 1.0}}, "
                         "hit_ratio: 0.0}")
        lines.append(f"  - drop_snapshot: g{nb - 1}")
        versioned = write(args, f"f42-versioned-n{ln}.yaml", "\n".join(lines) + "\n" + find)
        for name, structure, path, tag in ((BTREE, "btree", plain, f"f42-n{ln}"), (VIB, "mvbtree", plain, f"f42-n{ln}"),
                                           (VOB, "mvbtree", versioned, f"f42-versioned-n{ln}")):
            r = run(args, structure, path, tag)
            inserts = r.named("insert") or r.prefixed("insert-")
            over = r.stat("version-overhead", "") if structure == "mvbtree" else ""
            common = dict(n=n, structure=name, source="measured", height=r.stat("height", ""),
                          version_overhead=over,
                          device_mib=r.summary.get("final_device_bytes", 0) / 2**20)
            t.add(op="insert", mops=rate_of(inserts) * 1e3, **common)
            t.add(op="find", mops=mops(r.step("find")), **common)
        for op, paper in FIG42_PAPER.items():
            for label, key in ((P_BTREE, "B-Tree"), (P_VIB, "ViB-Tree"), (P_VOB, "VoB-Tree")):
                t.add(n=n, op=op, structure=label, source="paper (mean over its sizes)", mops=paper[key], height="",
                      version_overhead="", device_mib="")
        print(f"figure 4.2: n = 2^{ln} done", file=sys.stderr, flush=True)
    t.notes.append(f"{PAPER}: the chapter's averages over its tree sizes (section 4.5.1), drawn dashed. "
                   "version_overhead: mvbtree's version bytes over the tree's (the paper: 3.26 % at 67.5 M keys).")
    t.save(args, "fig4_2")
    t.plot(args, "fig4_2", x="n", y="mops", series="structure", panel="op", xlabel="keys n",
           ylabel="M operations/s", dashed=[P_BTREE, P_VIB, P_VOB])
    return t.markdown(pivot=(["n", "op"], "structure", "mops"))


def concurrent_yaml(args, name, initial, nb, bs, mix, extra=""):
    return write(args, name, f"""seed: {args.seed}
key_type: u32
value_type: u32
initial: {{count: {initial}, keys: uniform, values: random}}
steps:
  - phase: {{name: mix, mode: concurrent, batches: {nb}, batch_size: {bs}, mix: {{{mix}}}{extra}}}
""")


def table41(args):
    t = Table("Table 4.1 / Figure 4.3: concurrent inserts and ranges of L results at update ratio alpha "
              "(M operations/s)", ["initial", "L", "alpha", "case", "structure", "source", "mops"], digits=1,
              formats={"initial": keys_cell})
    nb, bs = args.concurrent_batches, 1 << args.concurrent_batch_log2
    for initial in args.t41_initial:
        for length in (8, 32):
            case = f"{keys_cell(initial)} keys, L = {length}"
            for a in (5, 50, 90):
                y = concurrent_yaml(args, f"t41-i{initial}-L{length}-a{a}.yaml", initial, nb, bs,
                                    f"insert: {a / 100}, range: {1 - a / 100:.2f}",
                                    ", hit_ratio: 0.5, range_length: {distribution: fixed, length: "
                                    f"{length}, unit: results}}")
                for s, name in (("btree", BTREE), ("mvbtree", MV)):
                    t.add(initial=initial, L=length, alpha=a, case=case, structure=name, source="measured",
                          mops=mops(run(args, s, y, f"t41-i{initial}-L{length}-a{a}").step("mix")))
                paper = TABLE41_PAPER.get((initial, length, a))
                if paper:
                    t.add(initial=initial, L=length, alpha=a, case=case, structure=P_BTREE, source="paper",
                          mops=paper[0])
                    t.add(initial=initial, L=length, alpha=a, case=case, structure=P_VOB, source="paper",
                          mops=paper[1])
        print(f"table 4.1: {keys_cell(initial)} keys done", file=sys.stderr, flush=True)
    t.notes.append(f"Each case: {nb} concurrent batches of 2^{args.concurrent_batch_log2} operations on a tree of "
                   "`initial` bulk-built keys, half of the inserted keys and range starts drawn from present keys. "
                   f"{PAPER}: Table 4.1 (its sizes 1 M and 40 M only).")
    t.save(args, "table4_1")
    t.plot(args, "table4_1", x="alpha", y="mops", series="structure", panel="case", logx=False,
           xlabel="update ratio alpha (%)", ylabel="M operations/s", dashed=[P_BTREE, P_VOB])
    return t.markdown(pivot=(["initial", "L", "alpha"], "structure", "mops"))


def fig44(args):
    t = Table("Figure 4.4: range length L swept, 50 % inserts and 50 % ranges (M operations/s; pairs: expected "
              "pairs returned, G/s)", ["L", "structure", "source", "mops", "gpairs_per_s"], digits=1)
    initial = 1 << args.sweep_initial_log2
    nb, bs = args.sweep_batches, 1 << args.sweep_batch_log2
    stopped = set()
    for length in args.sweep_lengths:
        y = concurrent_yaml(args, f"f44-L{length}.yaml", initial, nb, bs, "insert: 0.5, range: 0.5",
                            f", hit_ratio: 0.5, range_length: {{distribution: fixed, length: {length}, unit: results}}")
        for s in args.sweep_structures:
            name = BTREE if s == "btree" else MV
            if s in stopped:
                t.add(L=length, structure=name, source="measured", mops=float("nan"), gpairs_per_s=float("nan"))
                continue
            r = run(args, s, y, f"f44-L{length}", check=False, timeout=args.sweep_timeout or None)
            if not r.ok:
                if not r.timed_out:
                    sys.exit(f"mvbtree_figures: {' '.join(r.cmd)} failed ({r.returncode}): {r.stderr.strip()}")
                stopped.add(s)
                t.notes.append(f"{s}: the run at L = {length} ran past {args.sweep_timeout} s and was stopped; "
                               "longer lengths not run (nan)")
                t.add(L=length, structure=name, source="measured", mops=float("nan"), gpairs_per_s=float("nan"))
                continue
            st = r.step("mix")
            ms = gpudict_exp.step_ms(st)
            pairs = st["ops"]["range"] * length
            t.add(L=length, structure=name, source="measured", mops=mops(st),
                  gpairs_per_s=pairs / (ms * 1e-3) / 1e9 if ms > 0 else float("nan"))
        if length in FIG44_PAPER:
            t.add(L=length, structure=P_BTREE, source="paper", mops=FIG44_PAPER[length][0], gpairs_per_s="")
            t.add(L=length, structure=P_VOB, source="paper", mops=FIG44_PAPER[length][1], gpairs_per_s="")
        print(f"figure 4.4: L = {length} done", file=sys.stderr, flush=True)
    t.notes.append(f"A tree of {keys_cell(initial)} bulk-built keys; {nb} concurrent batches of "
                   f"2^{args.sweep_batch_log2} operations per length, each from that tree. {PAPER}: the two ends "
                   "the text gives (L = 8 and 1024, 1 M keys, 5 M operations).")
    t.save(args, "fig4_4")
    t.plot(args, "fig4_4", x="L", y="mops", series="structure", logy=True, xlabel="range length L (results)",
           ylabel="M operations/s", dashed=[P_BTREE, P_VOB])
    return t.markdown(pivot=(["L"], "structure", "mops"))


def table42(args):
    t = Table("Table 4.2 / Figure 4.5: concurrent deletes and finds (all present) at update ratio alpha "
              "(M operations/s)", ["initial", "alpha", "structure", "source", "mops"], digits=1,
              formats={"initial": keys_cell})
    nb, bs = args.concurrent_batches, 1 << args.concurrent_batch_log2
    initial = args.t42_initial
    for a in (5, 50, 90):
        y = concurrent_yaml(args, f"t42-a{a}.yaml", initial, nb, bs, f"delete: {a / 100}, lookup: {1 - a / 100:.2f}",
                            ", hit_ratio: 1.0")
        for s, name in (("btree", BTREE), ("mvbtree", MV)):
            t.add(initial=initial, alpha=a, structure=name, source="measured",
                  mops=mops(run(args, s, y, f"t42-a{a}").step("mix")))
        t.add(initial=initial, alpha=a, structure=P_BTREE, source="paper (45 M keys)", mops=TABLE42_PAPER[a][0])
        t.add(initial=initial, alpha=a, structure=P_VOB, source="paper (45 M keys)", mops=TABLE42_PAPER[a][1])
    t.notes.append(f"{nb} concurrent batches of 2^{args.concurrent_batch_log2} operations on a tree of "
                   f"{keys_cell(initial)} bulk-built keys, one run per ratio. {PAPER}: Table 4.2 (45 M keys).")
    t.save(args, "table4_2")
    t.plot(args, "table4_2", x="alpha", y="mops", series="structure", logx=False, xlabel="update ratio alpha (%)",
           ylabel="M operations/s", dashed=[P_BTREE, P_VOB])
    return t.markdown(pivot=(["initial", "alpha"], "structure", "mops"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "mvbtree-figures", repeat=3, seed=2026)
    ap.add_argument("--figure", default="all", choices=["4.2", "4.3", "table4.1", "4.4", "4.5", "table4.2", "all"],
                    help="one figure (4.3 is table4.1, 4.5 is table4.2), or all")
    ap.add_argument("--max-log2-n", type=int, default=26, help="figure 4.2: largest n = 2^N (default 26, 64 M)")
    ap.add_argument("--fig42-min-log2", type=int, default=20, help="figure 4.2: smallest n = 2^N (default 20)")
    ap.add_argument("--insert-batch-log2", type=int, default=20,
                    help="figure 4.2: insert batches of 2^N (default 20, as examples/bench-mvbtree.yaml)")
    ap.add_argument("--t41-initial", type=int_list, default=f"{M},{40 * M}",
                    help="table 4.1: initial tree sizes, keys (default 1 M and 40 M, the paper's)")
    ap.add_argument("--t42-initial", type=int, default=45 * M, help="table 4.2: initial keys (default 45 M)")
    ap.add_argument("--concurrent-batch-log2", type=int, default=22,
                    help="tables 4.1, 4.2: concurrent batches of 2^N operations (default 22)")
    ap.add_argument("--concurrent-batches", type=int, default=2, help="tables 4.1, 4.2: batches per case (default 2)")
    ap.add_argument("--sweep-initial-log2", type=int, default=20, help="figure 4.4: initial tree 2^N keys (default 20)")
    ap.add_argument("--sweep-batch-log2", type=int, default=20, help="figure 4.4: batches of 2^N (default 20)")
    ap.add_argument("--sweep-batches", type=int, default=5, help="figure 4.4: batches per length (default 5: ~5 M ops)")
    ap.add_argument("--sweep-lengths", type=int_list, default="8,16,32,64,128,256,512,1024", help="figure 4.4: range lengths L")
    ap.add_argument("--sweep-structures", type=name_list, default="mvbtree,btree", help="figure 4.4: structures run")
    ap.add_argument("--sweep-timeout", type=float, default=600,
                    help="figure 4.4: seconds a run may take before it is stopped and longer L skipped (0: no limit)")
    ap.add_argument("--btree", default="", help="extra options for gpudict btree, e.g. '--ops-kernel tile'")
    ap.add_argument("--mvbtree", default="", help="extra options for gpudict mvbtree")
    args = ap.parse_args()
    args.btree_opts, args.mvbtree_opts = args.btree.split(), args.mvbtree.split()
    os.makedirs(args.out, exist_ok=True)
    run_selected(args, args.figure, [("4.2", fig42), (("table4.1", "4.3"), table41), ("4.4", fig44),
                                     (("table4.2", "4.5"), table42)])


if __name__ == "__main__":
    main()
