#!/usr/bin/env python3
"""Reproduce the dynamic graph chapter's experiments (Awad's dissertation,
ch. 5, section 5.6) that gpudict supports, with `gpudict graph`
and, where the workload is one of edge keys only, the ordered structures
(sorted-array, btree, lsm: the same edges as a sorted adjacency) beside it.
Generates the workloads (YAML) into --out, runs them with --no-verify
--format json (the same operations run verified in the GPU tests and
examples/bench-graph*.yaml) and prints Markdown tables with the paper's
numbers (NVIDIA TITAN V, means over its datasets) beside the measured ones;
--out keeps the raw JSON Lines, each table as tidy CSV and the figures as
PNG and SVG (scripts/gpudict_exp.py). Rates are in M operations (directed
edge updates, vertices) per second of device time.

  python3 scripts/graph_figures.py                             # everything, the paper's batch sizes
  python3 scripts/graph_figures.py --figure updates --families rgg,delaunay --scale 20
  python3 scripts/graph_figures.py --backend cpu --scale 10 --batch-logs 6,8 --inc-scale 10 --inc-log2-edges 12 \\
      --inc-batch-logs 8,10 --vd-scale 10 --vd-log2-edges 12 --vd-batch-logs 4,6 --tri-scale 8 \\
      --tri-log2-edges 10 --tri-insert-log2 8 --lf-scale 8 --lf-degrees 4,8 --load-factors 0.5,2 --repeat 1   # a smoke run

updates (Tables 5.2, 5.3; bulk build, Table 5.5): per graph family (rmat:
  directed RMAT, 2^scale vertices, average out-degree --rmat-degree; rgg,
  delaunay, road: the generated undirected graphs of 2^scale vertices, whose
  every update also goes to the reverse edge, so the rates count directed
  updates), --batches batches of inserts at each batch size 2^k
  (--batch-logs; random vertex pairs, RMAT on rmat), then as many deletes of
  present edges; every --structures that can run it. The build step of the
  same runs is Table 5.5's bulk build.
incremental (Table 5.6): an empty graph grown by RMAT edges (2^inc-scale
  vertices) to 2^inc-log2-edges edges in batches of 2^k (--inc-batch-logs),
  one run per batch size; the graph twice: its vertex capacity grown as
  batches name vertices (default) and known up front (--vertex-capacity, the
  paper's setting: every vertex one bucket).
vertex-delete (Table 5.4): one batch of 2^k vertex deletes (the sources of
  present edges) on an undirected RMAT graph of 2^vd-scale vertices and
  2^vd-log2-edges edges each way, one run per batch size (the graph only).
triangles (Tables 5.7, 5.9): a static triangle count of an undirected RMAT
  graph, then --tri-rounds rounds of 2^tri-insert-log2 edge inserts (each way)
  and a count; the map and set variants (the graph only).
load-factor (Figures 5.2, 5.3): bulk builds of directed RMAT graphs of
  2^lf-scale vertices and average degrees --lf-degrees at each
  --load-factors (edges per bucket slot: the average chain length), the
  build rate, the table's utilization and memory (Figure 5.2), and the
  edge-exists rate (half present) in place of Figure 5.3's triangle counts,
  which gpudict runs on a CSR gathered from the tables, not by probes.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpudict_exp  # noqa: E402
from gpudict_exp import Table, add_common_args, float_list, int_list, name_list, pow2, rate, run_selected, step_ms, write  # noqa: E402

PAPER = "paper, TITAN V"
# The paper's numbers (Awad's dissertation, section 5.6; docs/graph-plan.md section 2).
T52 = {  # batch log2 -> (Hornet, faimGraph, ours) M edges/s, insertion, mean over the datasets
    16: (33.67, 92.47, 501.33), 17: (44.71, 133.97, 513.56), 18: (51.43, 157.15, 591.06),
    19: (70.81, 188.98, 641.25), 20: (83.54, None, 664.52), 21: (97.41, None, 658.09), 22: (110.89, None, 646.01)}
T53 = {  # deletion
    16: (91.73, 111.71, 640.63), 17: (159.69, 112.96, 886.92), 18: (259.31, 171.75, 947.60),
    19: (377.79, 257.66, 939.98), 20: (537.73, None, 988.85), 21: (739.82, None, 1007.16),
    22: (1024.87, None, 1015.47)}
T54 = {16: (0.44, 5.35), 17: (0.71, 9.23), 18: (1.12, 12.66), 19: (1.62, 19.21), 20: (2.96, 26.49)}  # faimGraph, ours
T55 = {("rgg", 20): ("rgg_n_2_20_s0", 37.084, 5.053), ("delaunay", 20): ("delaunay_n20", 37.68, 2.494)}  # ms
T56 = {20: (164.44, 841.31), 21: (176.96, 945.64), 22: (184.75, 993.82)}  # Hornet, ours
P_OURS, P_HORNET, P_FAIM = f"{PAPER}: graph", f"{PAPER}: Hornet", f"{PAPER}: faimGraph"
GRAPH_VC = "graph, vertex capacity known"


def mops(st, cats=None):
    return rate(st, cats) * 1e3


def run(args, structure, yaml_path, tag, extra=()):
    extra = list(extra) + (args.graph_opts if structure == "graph" else [])
    return gpudict_exp.run(args, structure, yaml_path, extra, tag=f"{tag}.{structure}")


def ordered(args):
    """The --structures that run workloads of edge keys alone (every one of them)."""
    return [s for s in args.structures if s in ("graph", "sorted-array", "btree", "lsm")]


def updates(args):
    up = Table("Tables 5.2, 5.3: edge insertion and deletion rates against the batch size (M directed edge "
               "updates/s)", ["family", "op", "batch", "structure", "source", "mops"], digits=1,
               formats={"batch": pow2})
    build = Table("Table 5.5: bulk build of the initial graph (device ms; M edges/s)",
                  ["family", "edges", "structure", "source", "ms", "medges_per_s"], digits=2)
    s = args.scale
    for fam in args.families:
        if fam == "rmat":
            head = (f"initial: {{count: {args.rmat_degree << s}, keys: {{distribution: rmat, scale: {s}}}, "
                    "values: random}\n")
            keys = f"{{distribution: rmat, scale: {s}}}"
        else:
            head = f"undirected: true\ninitial: {{graph: {{family: {fam}, scale: {s}}}}}\n"
            keys = f"{{distribution: rmat, scale: {s}, a: 0.25, b: 0.25, c: 0.25}}"
        phases = [f"  - phase: {{name: insert-{k}, batches: {args.batches}, batch_size: {1 << k}, "
                  f"mix: {{insert: 1.0}}, hit_ratio: 0.0, keys: {keys}}}" for k in args.batch_logs]
        phases += [f"  - phase: {{name: delete-{k}, batches: {args.batches}, batch_size: {1 << k}, "
                   "mix: {delete: 1.0}, hit_ratio: 1.0}" for k in args.batch_logs]
        y = write(args, f"updates-{fam}.yaml", f"seed: {args.seed}\nkey_type: u64\nvalue_type: u32\n{head}steps:\n"
                  + "\n".join(phases) + "\n")
        edges = ""
        for st in ordered(args):
            r = run(args, st, y, f"updates-{fam}")
            b = r.of_kind("build")[0]
            edges = gpudict_exp.step_ops(b)
            build.add(family=fam, edges=gpudict_exp.step_ops(b), structure=st, source="measured", ms=step_ms(b),
                      medges_per_s=mops(b))
            for op in ("insert", "delete"):
                for k in args.batch_logs:
                    up.add(family=fam, op=op, batch=1 << k, structure=st, source="measured",
                           mops=mops(r.step(f"{op}-{k}")))
        paper = T55.get((fam, s))
        if paper:  # on the line of the family's measured build (the note names the dataset)
            build.add(family=fam, edges=edges, structure=P_HORNET, source=f"paper: {paper[0]}", ms=paper[1],
                      medges_per_s="")
            build.add(family=fam, edges=edges, structure=P_OURS, source=f"paper: {paper[0]}", ms=paper[2],
                      medges_per_s="")
        for op, tab in (("insert", T52), ("delete", T53)):
            for k in args.batch_logs:
                if k in tab:
                    for label, v in zip((P_HORNET, P_FAIM, P_OURS), tab[k]):
                        if v is not None:
                            up.add(family=fam, op=op, batch=1 << k, structure=label, source="paper (mean over "
                                   "its datasets)", mops=v)
        print(f"updates: {fam} done", file=sys.stderr, flush=True)
    up.notes.append(f"Graphs of 2^{s} vertices; {args.batches} batches per size. rgg, delaunay and road are "
                    "undirected: a batch of b edges is 2b directed updates, which the rates count. "
                    f"{PAPER}: Tables 5.2 and 5.3, means over the chapter's datasets, drawn dashed.")
    build.notes.append(f"{PAPER}: Table 5.5 where a family at this scale matches one of its datasets: at scale 20, "
                       "rgg as rgg_n_2_20_s0 (1 M vertices, 13.8 M edges) and delaunay as delaunay_n20 (1 M, 6.3 M).")
    up.save(args, "updates")
    dashed = [P_OURS, P_HORNET, P_FAIM]
    for op in ("insert", "delete"):
        up.plot(args, f"updates_{op}", x="batch", y="mops", series="structure", panel="family", where={"op": op},
                logy=True, title=f"Edge {op}s (Table 5.{2 if op == 'insert' else 3})", xlabel="batch size (edges)",
                ylabel="M directed edge updates/s", dashed=dashed)
    build.save(args, "build")
    return "\n\n".join([up.markdown(pivot=(["family", "op", "batch"], "structure", "mops")),
                        build.markdown(pivot=(["family", "edges"], "structure", "ms"))])


def incremental(args):
    t = Table(f"Table 5.6: incremental build from empty to 2^{args.inc_log2_edges} RMAT edges (2^{args.inc_scale} "
              "vertices), against the batch size (M edges/s)", ["batch", "structure", "source", "mops"], digits=1,
              formats={"batch": pow2})
    total = 1 << args.inc_log2_edges
    for k in args.inc_batch_logs:
        b = min(1 << k, total)
        y = write(args, f"incremental-b{k}.yaml", f"""seed: {args.seed}
key_type: u64
value_type: u32
steps:
  - phase: {{name: insert, batches: {total // b}, batch_size: {b}, mix: {{insert: 1.0}}, hit_ratio: 0.0,
            keys: {{distribution: rmat, scale: {args.inc_scale}}}}}
""")
        for st in ordered(args):
            t.add(batch=b, structure=st, source="measured", mops=mops(run(args, st, y, f"incremental-b{k}").step("insert")))
            if st == "graph":
                r = run(args, st, y, f"incremental-b{k}-vc", ["--vertex-capacity", str(1 << args.inc_scale)])
                t.add(batch=b, structure=GRAPH_VC, source="measured", mops=mops(r.step("insert")))
        if k in T56:
            t.add(batch=b, structure=P_HORNET, source="paper", mops=T56[k][0])
            t.add(batch=b, structure=P_OURS, source="paper", mops=T56[k][1])
    t.notes.append(f"{PAPER}: Table 5.6, means over ldoor, delaunay_n23, road_usa and soc-LiveJournal1 (every "
                   f"vertex known, one bucket each: the row '{GRAPH_VC}').")
    t.save(args, "incremental")
    t.plot(args, "incremental", x="batch", y="mops", series="structure", xlabel="batch size (edges)",
           ylabel="M edges/s", logy=True, dashed=[P_OURS, P_HORNET])
    return t.markdown(pivot=(["batch"], "structure", "mops"))


def vertex_delete(args):
    t = Table(f"Table 5.4: vertex deletion, one batch on an undirected RMAT graph of 2^{args.vd_scale} vertices and "
              f"2^{args.vd_log2_edges} edges each way (M vertices/s)",
              ["batch", "structure", "source", "mvertices_per_s", "ms"], digits=2, formats={"batch": pow2})
    for k in args.vd_batch_logs:
        y = write(args, f"vertex-delete-b{k}.yaml", f"""seed: {args.seed}
key_type: u64
value_type: u32
undirected: true
initial: {{count: {1 << args.vd_log2_edges}, keys: {{distribution: rmat, scale: {args.vd_scale}}}, values: random}}
steps:
  - phase: {{name: delete, batches: 1, batch_size: {1 << k}, mix: {{vertex_delete: 1.0}}, hit_ratio: 1.0}}
""")
        st = run(args, "graph", y, f"vertex-delete-b{k}").step("delete")
        t.add(batch=1 << k, structure="graph", source="measured", mvertices_per_s=mops(st), ms=step_ms(st))
        if k in T54:
            t.add(batch=1 << k, structure=P_FAIM, source="paper", mvertices_per_s=T54[k][0], ms="")
            t.add(batch=1 << k, structure=P_OURS, source="paper", mvertices_per_s=T54[k][1], ms="")
    t.notes.append(f"A batch names the sources of present edges (hubs often, some twice); the rate counts the "
                   f"batch's operations. {PAPER}: Table 5.4, means over soc-orkut, soc-LiveJournal1, delaunay_n23 "
                   "and germany_osm.")
    t.save(args, "vertex_delete")
    t.plot(args, "vertex_delete", x="batch", y="mvertices_per_s", series="structure", logy=True,
           xlabel="batch size (vertices)", ylabel="M vertices/s", dashed=[P_OURS, P_FAIM])
    return t.markdown(pivot=(["batch"], "structure", "mvertices_per_s"))


def triangles(args):
    t = Table(f"Tables 5.7, 5.9: triangle counts of an undirected RMAT graph (2^{args.tri_scale} vertices, "
              f"2^{args.tri_log2_edges} edges each way), then rounds of 2^{args.tri_insert_log2} edge inserts (each "
              "way) and a count (device ms)", ["variant", "round", "edges_inserted", "insert_ms", "count_ms",
                                              "cumulative_ms"], digits=2)
    ins = 1 << args.tri_insert_log2
    lines = [f"  - phase: {{name: round-{i}, batches: 1, batch_size: {ins + 1}, mix: {{insert: {ins}, triangles: 1}}, "
             f"keys: {{distribution: rmat, scale: {args.tri_scale}}}}}" for i in range(1, args.tri_rounds + 1)]
    y = write(args, "triangles.yaml", f"""seed: {args.seed}
key_type: u64
value_type: u32
undirected: true
initial: {{count: {1 << args.tri_log2_edges}, keys: {{distribution: rmat, scale: {args.tri_scale}}}, values: random}}
steps:
  - phase: {{name: round-0, batches: 1, batch_size: 1, mix: {{triangles: 1}}}}
""" + "\n".join(lines) + "\n")
    for variant in ("map", "set"):
        r = run(args, "graph", y, f"triangles-{variant}", ["--variant", variant])
        total = 0.0
        for i in range(args.tri_rounds + 1):
            st = r.step(f"round-{i}")
            ins_ms, cnt_ms = step_ms(st, ("update",)), step_ms(st, ("triangles",))
            total += ins_ms + cnt_ms
            t.add(variant=variant, round=i, edges_inserted=st["ops"]["insert"], insert_ms=ins_ms, count_ms=cnt_ms,
                  cumulative_ms=total)
    t.notes.append("Round 0 is the static count (Table 5.7); cumulative_ms over rounds 1.. is Table 5.9's measure. "
                   f"{PAPER}'s Tables 5.7 and 5.9 are for its datasets (e.g. static counts of soc-LiveJournal1's "
                   "69 M edges: 483-1,526 ms across the three structures), not a generated graph of this size.")
    t.save(args, "triangles")
    t.plot(args, "triangles", x="round", y="cumulative_ms", series="variant", logx=False, xlabel="round",
           ylabel="cumulative device ms (inserts + counts)")
    return t.markdown()


def load_factor(args):
    t = Table(f"Figures 5.2, 5.3: bulk builds of directed RMAT graphs (2^{args.lf_scale} vertices) against the "
              "load factor (M edges/s; edge-exists: M queries/s, half present)",
              ["degree", "graph", "load_factor", "build_mops", "exists_mops", "avg_chain_slabs", "utilization", "memory_mib"],
              digits=2)
    n = 1 << args.lf_scale
    for d in args.lf_degrees:
        q = min(d * n, 1 << 22)
        y = write(args, f"load-factor-d{d}.yaml", f"""seed: {args.seed}
key_type: u64
value_type: u32
initial: {{count: {d * n}, keys: {{distribution: rmat, scale: {args.lf_scale}}}, values: random}}
steps:
  - phase: {{name: edge-exists, batches: 1, batch_size: {q}, mix: {{lookup: 1.0}}, hit_ratio: 0.5,
            keys: {{distribution: rmat, scale: {args.lf_scale}}}}}
""")
        for lf in args.load_factors:
            r = run(args, "graph", y, f"load-factor-d{d}-lf{lf:g}", ["--load-factor", f"{lf:g}"])
            t.add(degree=d, graph=f"RMAT, average degree {d}", load_factor=lf, build_mops=mops(r.of_kind("build")[0]), exists_mops=mops(r.step("edge-exists")),
                  avg_chain_slabs=r.stat("avg_chain_slabs"), utilization=r.stat("utilization"),
                  memory_mib=r.summary.get("final_device_bytes", 0) / 2**20)
        print(f"load factor: degree {d} done", file=sys.stderr, flush=True)
    t.notes.append("The paper (Figure 5.2, RMAT graphs of 2^20 vertices): the insertion rate drops 2.5x from short "
                   "chains to chains of 5 slabs on average, as utilization rises and memory falls; Figure 5.3's "
                   "best static triangle counts at a load factor of about 0.7. Statistics (chains, utilization, "
                   "memory) come from the GPU runs only.")
    t.save(args, "load_factor")
    t.plot(args, "fig5_2_build_chain", x="avg_chain_slabs", y="build_mops", series="graph", logx=False,
           xlabel="average chain length (slabs per bucket, measured)", ylabel="M edges/s (bulk build)",
           title="Figure 5.2: build rate against the chain length")
    for stem, y, label in (("fig5_2_build", "build_mops", "M edges/s (bulk build)"),
                           ("fig5_2_utilization", "utilization", "memory utilization"),
                           ("fig5_2_memory", "memory_mib", "device MiB"),
                           ("fig5_3_exists", "exists_mops", "M edge-exists queries/s")):
        t.plot(args, stem, x="load_factor", y=y, series="graph", xlabel="load factor (edges per bucket slot)",
               ylabel=label, title=f"Figure 5.{2 if '5_2' in stem else 3}: {label}")
    return t.markdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap, "graph-figures", repeat=3, seed=51)
    ap.add_argument("--figure", default="all",
                    choices=["updates", "build", "incremental", "vertex-delete", "triangles", "load-factor", "all"],
                    help="one experiment (build is updates: the same runs), or all")
    ap.add_argument("--structures", type=name_list, default="graph,sorted-array,btree,lsm",
                    help="updates, incremental: the structures run (default graph,sorted-array,btree,lsm)")
    ap.add_argument("--graph", default="", help="extra options for every gpudict graph run, e.g. '--variant set'")
    ap.add_argument("--families", type=name_list, default="rmat,rgg,delaunay,road", help="updates: graph families")
    ap.add_argument("--scale", type=int, default=20, help="updates: 2^N vertices (default 20)")
    ap.add_argument("--rmat-degree", type=int, default=16, help="updates: average out-degree of the rmat family")
    ap.add_argument("--batch-logs", type=int_list, default="16,17,18,19,20,21,22",
                    help="updates: log2 of the batch sizes (default 16..22, Tables 5.2 and 5.3)")
    ap.add_argument("--batches", type=int, default=4, help="updates: batches per size (default 4)")
    ap.add_argument("--inc-scale", type=int, default=20, help="incremental: 2^N vertices (default 20)")
    ap.add_argument("--inc-log2-edges", type=int, default=24, help="incremental: grown to 2^N edges (default 24)")
    ap.add_argument("--inc-batch-logs", type=int_list, default="20,21,22", help="incremental: log2 of the batch sizes")
    ap.add_argument("--vd-scale", type=int, default=22, help="vertex-delete: 2^N vertices (default 22)")
    ap.add_argument("--vd-log2-edges", type=int, default=24, help="vertex-delete: 2^N edges each way (default 24)")
    ap.add_argument("--vd-batch-logs", type=int_list, default="16,17,18,19,20", help="vertex-delete: log2 of the batch sizes")
    ap.add_argument("--tri-scale", type=int, default=20, help="triangles: 2^N vertices (default 20)")
    ap.add_argument("--tri-log2-edges", type=int, default=23, help="triangles: 2^N edges each way (default 23)")
    ap.add_argument("--tri-insert-log2", type=int, default=21, help="triangles: 2^N edge inserts per round")
    ap.add_argument("--tri-rounds", type=int, default=5, help="triangles: rounds of inserts and a count (default 5)")
    ap.add_argument("--lf-scale", type=int, default=20, help="load-factor: 2^N vertices (default 20)")
    ap.add_argument("--lf-degrees", type=int_list, default="4,8,16,32", help="load-factor: average out-degrees")
    ap.add_argument("--load-factors", type=float_list, default="0.25,0.5,0.7,1,2,3,5", help="load-factor: the load factors")
    args = ap.parse_args()
    args.graph_opts = args.graph.split()
    os.makedirs(args.out, exist_ok=True)
    run_selected(args, args.figure, [(("updates", "build"), updates), ("incremental", incremental),
                                     ("vertex-delete", vertex_delete), ("triangles", triangles),
                                     ("load-factor", load_factor)])


if __name__ == "__main__":
    main()
