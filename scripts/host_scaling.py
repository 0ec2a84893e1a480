#!/usr/bin/env python3
"""Where a run's wall time goes, against the workload's size: the bench
workload (examples/bench-btree.yaml's phases, scaled so its initial contents
are n = 2^k keys) run once per size, without and with verification, and the
whole command's wall time split into its parts as the report accounts them:
generation (drawing or reading operations), the structure's calls (device
work and host-device transfers: end to end), verification, and the rest
(start-up, the workload's summary, the reference's own updates). The host
memory peak is the process's maximum resident set.

  python3 scripts/host_scaling.py                               # 2^20 ... 2^27, btree
  python3 scripts/host_scaling.py --min-log2-n 20 --max-log2-n 24 --structure sorted-array
  python3 scripts/host_scaling.py --backend cpu --min-log2-n 10 --max-log2-n 12   # a smoke run

Host cost should grow linearly with the workload: the table gives each
part per million operations too, which then stays flat.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpudict_exp import Table, add_common_args, pow2, run, write  # noqa: E402


BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "bench-btree.yaml")


def workload(args, log2_n):
    """examples/bench-btree.yaml with its initial count set to n = 2^log2_n
    and every batch size scaled by n / 2^26 (at least one operation); the
    seed is the script's."""
    with open(BENCH) as f:
        text = f.read()
    base = int(re.search(r"^\s+count:\s*(\d+)", text, re.M).group(1))  # the initial contents' count
    n = 1 << log2_n
    text = re.sub(r"^(\s+count:\s*)\d+", lambda m: f"{m.group(1)}{n}", text, count=1, flags=re.M)
    text = re.sub(r"^(\s+batch_size:\s*)(\d+)", lambda m: f"{m.group(1)}{max(1, int(m.group(2)) * n // base)}", text,
                  flags=re.M)
    text = re.sub(r"^seed:.*$", f"seed: {args.seed}", text, count=1, flags=re.M)
    text = re.sub(r"^name:.*$", f"name: host-scaling-{log2_n}", text, count=1, flags=re.M)
    return write(args, f"scaling-{log2_n}.yaml", text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "host-scaling-out", repeat=None)
    ap.add_argument("--structure", default="btree", help="the structure to run (default btree)")
    ap.add_argument("--min-log2-n", type=int, default=20, help="smallest n = 2^N initial keys (default 20)")
    ap.add_argument("--max-log2-n", type=int, default=27, help="largest n = 2^N initial keys (default 27)")
    ap.add_argument("--no-verified", action="store_true", help="only the --no-verify runs")
    ap.add_argument("--timeout", type=float, default=None, help="seconds a run may take (default: no limit)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    t = Table(f"Wall time against the workload's size ({args.structure}; bench-btree's phases scaled to n keys; "
              "seconds, and per million operations)",
              ["n", "verified", "ops", "wall_s", "gen_s", "calls_s", "device_s", "verify_s", "other_s",
               "wall_us_per_op", "peak_host_gib"],
              formats={"n": pow2})
    modes = [False] if args.no_verified else [False, True]
    for k in range(args.min_log2_n, args.max_log2_n + 1):
        y = workload(args, k)
        for verify in modes:
            tag = f"scaling-{k}-{'verified' if verify else 'no-verify'}.{args.structure}"
            r = run(args, args.structure, y, tag=tag, repeat=1, verify=verify, check=False, timeout=args.timeout)
            if not r.ok:
                print(f"host_scaling: 2^{k} ({'verified' if verify else 'no-verify'}) failed: {r.stderr.strip()}",
                      file=sys.stderr)
                continue
            s = r.summary
            ops = sum(sum(st["ops"].values()) for st in r.steps) + (1 << k)
            wall, gen, e2e, ver = (s[x] / 1e3 for x in ("wall_ms", "total_gen_ms", "total_e2e_ms", "total_verify_ms"))
            t.add(n=1 << k, verified="yes" if verify else "no", ops=ops, wall_s=wall, gen_s=gen, calls_s=e2e,
                  device_s=s["total_device_ms"] / 1e3, verify_s=ver, other_s=max(0.0, wall - gen - e2e - ver),
                  wall_us_per_op=1e6 * wall / ops, peak_host_gib=s.get("peak_host_bytes", 0) / 2**30)
            print(f"2^{k} {'verified' if verify else 'no-verify'}: {wall:.2f} s", file=sys.stderr)
    t.notes.append("ops: the initial keys plus every operation. calls: the structure's calls end to end (device "
                   "work and transfers). other: wall minus generation, calls and verification (start-up, the "
                   "workload's summary, the reference's own updates).")
    t.save(args, "host_scaling")
    if not args.no_plots:
        t.plot(args, "host_scaling", x="n", y=["wall_s", "gen_s", "calls_s", "verify_s"], panel="verified",
               logy=True, ylabel="seconds", xlabel="initial keys n")
    md = t.markdown()
    write(args, "host_scaling.md", md + "\n")
    print(md)


if __name__ == "__main__":
    main()
