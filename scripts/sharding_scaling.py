#!/usr/bin/env python3
"""Every structure sharded over 1, 2 and 4 GPUs (`--devices`): weak and
strong scaling of device-time rates, with the speedup over one GPU.

  python3 scripts/sharding_scaling.py                          # weak and strong, 1/2/4 GPUs, every shardable structure
  python3 scripts/sharding_scaling.py --scaling weak --gpus 1,2 --structures sorted-array,slabhash
  python3 scripts/sharding_scaling.py --backend cpu --log2-keys 12 --log2-batch 10 --strong-log2-keys 13   # a smoke run

weak: 2^K initial keys and batches of 2^B operations per GPU (defaults 26
and 22): the build, inserts, lookups of present and of absent keys, ranges
of 8 results (ordered structures), and a concurrent mix, each on every GPU
count. strong: one workload of 2^S keys (default 28), batches of 2^B, on
every GPU count. The shards of a run are on devices 0 .. g-1; a GPU count
beyond the machine's is skipped with a note. Rates are G operations per
second of device time (a phase's time is its busiest device's); the
speedup is over the same structure's one-GPU run in the same invocation.
With --backend cpu the shards are CPU references and the rates mean
nothing: it only exercises the script.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpudict_exp import Table, add_common_args, int_list, name_list, rate, run, write  # noqa: E402

ORDERED = ("sorted-array", "lsm", "btree", "mvbtree")
SHARDABLE = ORDERED + ("slabhash",)


def gpu_count(binary):
    """The CUDA devices `gpudict info` lists (0 without a driver)."""
    r = subprocess.run([binary, "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return sum(1 for line in r.stdout.splitlines() if line.startswith("device "))


def workload(args, structure, keys, batch, tag):
    """The phases every GPU count runs: keys initial keys, batches of
    `batch` operations."""
    ordered = structure in ORDERED
    r8 = "range_length: {distribution: fixed, length: 8, unit: results}"
    phases = [
        f"  - phase: {{name: insert, batches: 4, batch_size: {batch}, mix: {{insert: 1.0}}, hit_ratio: 0.0}}",
        f"  - phase: {{name: lookup-hit, batches: 4, batch_size: {batch}, mix: {{lookup: 1.0}}, hit_ratio: 1.0}}",
        f"  - phase: {{name: lookup-miss, batches: 4, batch_size: {batch}, mix: {{lookup: 1.0}}, hit_ratio: 0.0}}",
    ]
    if ordered:
        phases.append(f"  - phase: {{name: range-8, batches: 2, batch_size: {max(1, batch // 4)}, "
                      f"mix: {{range: 1.0}}, hit_ratio: 0.5, {r8}}}")
        phases.append(f"  - phase: {{name: concurrent, batches: 2, batch_size: {batch}, mode: concurrent, "
                      f"mix: {{insert: 0.1, delete: 0.1, lookup: 0.6, range: 0.2}}, hit_ratio: 0.5, {r8}}}")
    else:
        phases.append(f"  - phase: {{name: concurrent, batches: 2, batch_size: {batch}, mode: concurrent, "
                      "mix: {insert: 0.25, delete: 0.25, lookup: 0.5}, hit_ratio: 0.5}")
    text = f"seed: {args.seed}\ninitial: {{count: {keys}}}\nsteps:\n" + "\n".join(phases) + "\n"
    return write(args, f"{tag}.yaml", text)


def measure(args, t, scaling, structure, gpus_list, keys_of, batch_of):
    base = {}
    for g in gpus_list:
        tag = f"{scaling}-{structure}-{g}gpu"
        y = workload(args, structure, keys_of(g), batch_of(g), tag)
        devices = ",".join(str(d) for d in range(g))
        r = run(args, structure, y, extra=["--devices", devices], tag=tag, check=False, timeout=args.timeout)
        if not r.ok:
            print(f"sharding_scaling: {structure} on {g} GPUs failed: {r.stderr.strip()}", file=sys.stderr)
            continue
        steps = [s for s in r.steps if s["kind"] in ("build", "phase")]
        for st in steps:
            op = "build" if st["kind"] == "build" else st["name"]
            g_ops = rate(st)
            if g == gpus_list[0]:
                base[op] = (g, g_ops)
            b = base.get(op)
            speedup = g_ops / b[1] * b[0] if b and b[1] > 0 else float("nan")
            t.add(scaling=scaling, structure=structure, op=op, gpus=g, keys=keys_of(g), batch=batch_of(g),
                  gops=g_ops, speedup=speedup, efficiency=speedup / g, device=r.header.get("device", ""))
        print(f"{scaling}: {structure} on {g} GPUs done", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "sharding-scaling-out")
    ap.add_argument("--scaling", choices=["weak", "strong", "all"], default="all")
    ap.add_argument("--gpus", type=int_list, default="1,2,4", help="GPU counts (default 1,2,4)")
    ap.add_argument("--structures", type=name_list, default=",".join(SHARDABLE),
                    help=f"structures (default {','.join(SHARDABLE)})")
    ap.add_argument("--log2-keys", type=int, default=26, help="weak: 2^K initial keys per GPU (default 26)")
    ap.add_argument("--log2-batch", type=int, default=22, help="2^B operations a batch (weak: per GPU; default 22)")
    ap.add_argument("--strong-log2-keys", type=int, default=28, help="strong: 2^S initial keys (default 28)")
    ap.add_argument("--timeout", type=float, default=None, help="seconds a run may take (default: no limit)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for s in args.structures:
        if s not in SHARDABLE:
            sys.exit(f"sharding_scaling: {s} cannot be sharded (shardable: {', '.join(SHARDABLE)})")

    gpus = sorted(set(args.gpus))
    notes = []
    if args.backend != "cpu":
        have = gpu_count(args.gpudict)
        skipped = [g for g in gpus if g > have]
        gpus = [g for g in gpus if g <= have]
        if skipped:
            notes.append(f"Skipped: {', '.join(map(str, skipped))} GPUs (this machine has {have}).")
        if not gpus:
            sys.exit(f"sharding_scaling: no GPU count fits this machine's {have} GPUs")

    t = Table("Sharded rates (G operations/s of device time) and the speedup over the fewest GPUs",
              ["scaling", "structure", "op", "gpus", "keys", "batch", "gops", "speedup", "efficiency", "device"],
              digits=2)
    kinds = ["weak", "strong"] if args.scaling == "all" else [args.scaling]
    for scaling in kinds:
        for s in args.structures:
            if scaling == "weak":
                measure(args, t, scaling, s, gpus, lambda g: g << args.log2_keys, lambda g: g << args.log2_batch)
            else:
                measure(args, t, scaling, s, gpus, lambda g: 1 << args.strong_log2_keys,
                        lambda g: 1 << args.log2_batch)
    t.notes += notes + [f"weak: 2^{args.log2_keys} keys and batches of 2^{args.log2_batch} per GPU; strong: "
                        f"2^{args.strong_log2_keys} keys, batches of 2^{args.log2_batch}. speedup: the rate over "
                        "the fewest GPUs' rate, times their count; efficiency: speedup / GPUs."]
    t.save(args, "sharding_scaling")
    if not args.no_plots:
        for scaling in kinds:
            t.plot(args, f"sharding_{scaling}", x="gpus", y="speedup", series="op", panel="structure",
                   where={"scaling": scaling}, logx=False, ylabel="speedup over one GPU", xlabel="GPUs",
                   title=f"{scaling} scaling")
    md = "\n\n".join(Table.markdown(_only(t, scaling), pivot=(("structure", "op"), "gpus", "speedup"))
                     for scaling in kinds)
    md += "\n\n" + t.markdown(pivot=(("scaling", "structure", "op"), "gpus", "gops"))
    write(args, "sharding_scaling.md", md + "\n")
    print(md)


def _only(t, scaling):
    """The table's rows of one scaling, titled for its speedup pivot."""
    sub = Table(f"{scaling} scaling: speedup over the fewest GPUs (columns: GPUs)", t.columns, digits=2)
    sub.rows = [r for r in t.rows if r["scaling"] == scaling]
    return sub


if __name__ == "__main__":
    main()
