// The graph operations on the host (ops.hpp: vertex_delete, triangles):
// the reference's triangle counter against known counts and a brute force,
// the reference model's vertex deletes and triangle bounds, the verifier's
// checks, the CPU backend against the reference through the binary, and the
// workload format's rules for them. The GPU runs are in tests/gpu/test_graph.cu.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli_helpers.hpp"
#include "graph_shapes.hpp"
#include "core/common/errors.hpp"
#include "scratch_dir.hpp"
#include "workloads/generator.hpp"
#include "workloads/parallel.hpp"
#include "workloads/reference.hpp"
#include "workloads/spec.hpp"
#include "workloads/triangles.hpp"
#include "workloads/verifier.hpp"

using namespace gpudict;
using gpudict::testing::both_ways;
using gpudict::testing::complete_graph;
using gpudict::testing::grid_graph;
using gpudict::testing::run_gpudict;
using gpudict::testing::wheel_graph;

namespace {

uint64_t edge(uint64_t u, uint64_t v) { return (u << 32) | v; }

uint64_t brute_force(const std::vector<uint64_t>& keys, uint32_t n) {
  std::vector<std::vector<char>> adj(n, std::vector<char>(n, 0));
  for (uint64_t k : keys) {
    const uint32_t u = static_cast<uint32_t>(k >> 32), v = static_cast<uint32_t>(k);
    if (u != v) adj[u][v] = adj[v][u] = 1;
  }
  uint64_t t = 0;
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b)
      if (adj[a][b])
        for (uint32_t c = b + 1; c < n; ++c) t += adj[a][c] && adj[b][c];
  return t;
}

}  // namespace

TEST_CASE("count_triangles: complete graphs, wheels, grids, directed edges, loops and duplicates") {
  CHECK(count_triangles({}) == 0);
  CHECK(count_triangles(both_ways(complete_graph(3))) == 1);
  CHECK(count_triangles(both_ways(complete_graph(5))) == 10);
  CHECK(count_triangles(both_ways(complete_graph(40))) == 9880);  // C(40, 3)
  CHECK(count_triangles(both_ways(wheel_graph(3))) == 4);         // K4
  CHECK(count_triangles(both_ways(wheel_graph(10))) == 10);
  CHECK(count_triangles(both_ways(wheel_graph(1000))) == 1000);
  CHECK(count_triangles(both_ways(grid_graph(30, 40))) == 0);
  // One direction of each edge is enough; duplicates and self-loops change nothing.
  std::vector<uint64_t> one_way;
  for (auto [u, v] : complete_graph(6)) one_way.push_back(u % 2 ? edge(u, v) : edge(v, u));
  CHECK(count_triangles(one_way) == 20);
  one_way.push_back(edge(3, 3));
  one_way.push_back(one_way.front());
  CHECK(count_triangles(one_way) == 20);
  // Vertex ids at the ends of the 32-bit range (a triangle of 0, 2^32 - 2, 2^32 - 1).
  CHECK(count_triangles({edge(0, 0xFFFFFFFE), edge(0xFFFFFFFE, 0xFFFFFFFF), edge(0xFFFFFFFF, 0)}) == 1);
  // Two disjoint K4s far apart.
  std::vector<uint64_t> two = both_ways(complete_graph(4));
  for (uint64_t k : both_ways(complete_graph(4, 3000000000u))) two.push_back(k);
  CHECK(count_triangles(two) == 8);
}

TEST_CASE("count_triangles: random graphs against a brute force, on 1 and several threads") {
  std::mt19937_64 rng(37);
  for (uint32_t n : {8u, 30u, 90u}) {
    for (double p : {0.1, 0.5, 0.9}) {
      std::vector<uint64_t> keys;
      std::bernoulli_distribution coin(p);
      for (uint32_t u = 0; u < n; ++u)
        for (uint32_t v = 0; v < n; ++v)
          if (coin(rng)) keys.push_back(edge(u, v));
      const uint64_t expected = brute_force(keys, n);
      set_host_threads(1);
      CHECK(count_triangles(keys) == expected);
      set_host_threads(4);
      CHECK(count_triangles(keys) == expected);
      set_host_threads(0);
    }
  }
}

TEST_CASE("reference: vertex deletes remove every edge from and to the vertex; triangle bounds") {
  ModelState s;
  KeyValues kv;
  for (uint64_t k : both_ways(wheel_graph(6))) {
    kv.keys.push_back(k);
    kv.values.push_back(k & 0xFF);
  }
  kv.keys.push_back(edge(9, 9));  // a self-loop
  kv.values.push_back(1);
  s.build(kv);
  CHECK(s.triangle_bounds().min == 6);
  CHECK(s.triangle_bounds().max == 6);
  s.erase_vertices({3, 3, 77});  // a duplicate and a vertex without edges
  const DefiniteMap m = s.definite();
  for (const auto& [k, v] : m) {
    CHECK(static_cast<uint32_t>(k >> 32) != 3);
    CHECK(static_cast<uint32_t>(k) != 3);
  }
  CHECK(m.size() == kv.keys.size() - 6);  // 3 had degree 3: 6 directed edges
  CHECK(s.triangle_bounds().min == 4);
  s.erase_vertices({0});  // the hub: no triangles left
  CHECK(s.triangle_bounds().max == 0);
  // A vertex that is only a target (no edges from it) loses its edges in.
  s.put(edge(1, 500), 4);
  s.put(edge(2, 500), 4);
  const size_t before = s.definite().size();
  s.erase_vertices({500});
  CHECK(s.definite().size() == before - 2);
  // An ambiguous edge: the count is a range.
  ModelState a;
  a.build(KeyValues{{edge(1, 2), edge(2, 3)}, {0, 0}});
  a.set(edge(1, 3), make_outcomes({Outcome(), Outcome(5)}));
  CHECK(a.triangle_bounds().min == 0);
  CHECK(a.triangle_bounds().max == 1);
  a.erase_vertices({1});  // takes the ambiguous cell too
  CHECK(a.ambiguous().empty());
  CHECK(a.definite().size() == 1);
}

TEST_CASE("verifier: vertex deletes after the batch's edge updates; triangle counts exact") {
  Verifier v(KeyType::U64, KeyType::U64, DuplicateRule::LastWins, Semantics::Set);
  KeyValues kv;
  for (uint64_t k : both_ways(complete_graph(5))) {
    kv.keys.push_back(k);
    kv.values.push_back(0);
  }
  v.build(kv);
  Batch b;
  b.push(OpType::Insert, edge(4, 9));  // then vertex 4 goes: this edge too
  b.push(OpType::VertexDelete, edge(4, 0));
  b.push(OpType::Triangles, 0);
  b.push(OpType::Lookup, edge(4, 9));
  b.push(OpType::Lookup, edge(0, 1));
  BatchResults r;
  r.reset(b.size());
  r.value[2] = 4;  // K4 left
  r.found[4] = 1;
  CHECK(v.check_batch(0, b, r) == 3);
  CHECK(v.mismatches() == 0);
  Batch t;
  t.push(OpType::Triangles, 0);
  BatchResults wrong;
  wrong.reset(1);
  wrong.value[0] = 10;  // the count before the delete
  v.check_batch(1, t, wrong);
  REQUIRE(v.mismatches() == 1);
  CHECK(v.first_mismatches()[0].expected == "4 triangles");
  CHECK(v.first_mismatches()[0].got == "10 triangles");
}

TEST_CASE("workload format: graph operations, operation counts in a mix, and their refusals") {
  const std::string ok = testing::write_scratch_file("graph-ops.yaml", R"(
key_type: u64
initial: {count: 2000, keys: {distribution: rmat, scale: 8}}
steps:
  - phase: {name: tc-after-inserts, batches: 2, batch_size: 101, mix: {insert: 100, triangles: 1},
            keys: {distribution: rmat, scale: 8}}
  - phase: {name: vdel, batches: 2, batch_size: 16, mix: {vertex_delete: 1.0}, hit_ratio: 0.9}
  - batch: {ops: [[vertex_delete, 8589934592], [triangles], [insert, 8589934593, 7]]}
)");
  const WorkloadSpec spec = parse_workload_spec(ok);
  const auto c = batch_op_counts(spec.steps[0].phase.mix, spec.steps[0].phase.batch_size);
  CHECK(c[static_cast<int>(OpType::Insert)] == 100);
  CHECK(c[static_cast<int>(OpType::Triangles)] == 1);
  GeneratedSource src(spec);
  Step step;
  uint64_t vdel = 0, tri = 0;
  while (src.next(step)) {
    if (step.kind != StepKind::Batch) continue;
    for (size_t i = 0; i < step.batch.size(); ++i) {
      if (step.batch.types[i] == OpType::VertexDelete) {
        ++vdel;
        CHECK((step.batch.keys[i] & 0xFFFFFFFFull) == 0);
      }
      if (step.batch.types[i] == OpType::Triangles) {
        ++tri;
        CHECK(step.batch.keys[i] == 0);
      }
    }
  }
  CHECK(vdel == 33);
  CHECK(tri == 3);

  auto refused = [](const std::string& body, const std::string& words) {
    const std::string path = testing::write_scratch_file("graph-ops-bad.yaml", body);
    try {
      (void)parse_workload_spec(path);
      FAIL("expected an error: " << words);
    } catch (const InputError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
    }
  };
  refused("key_type: u64\nsteps:\n  - phase: {batches: 1, batch_size: 4, mode: concurrent, mix: {vertex_delete: 1.0}}\n",
          "mode: phased");
  refused("steps:\n  - phase: {batches: 1, batch_size: 4, mix: {triangles: 1.0}}\n", "key_type: u64");
  refused("key_type: u64\nsteps:\n  - phase: {batches: 1, batch_size: 4, mix: {insert: 2, lookup: 1}}\n",
          "operation counts summing to batch_size 4");
  refused("key_type: u64\nsteps:\n  - batch: {ops: [[vertex_delete, 5]]}\n", "not a vertex's first key");
  refused("key_type: u64\nsteps:\n  - batch: {mode: concurrent, ops: [[triangles]]}\n", "mode: phased");
  refused("key_type: u64\nsteps:\n  - batch: {ops: [[triangles, 0]]}\n", "0 arguments");
}

TEST_CASE("graph operations on the CPU backend, verified; other structures refuse them with exit 2") {
  const std::string path = testing::write_scratch_file("graph-ops-run.yaml", R"(
key_type: u64
undirected: true
initial: {count: 3000, keys: {distribution: rmat, scale: 9}}
steps:
  - phase: {name: tc, batches: 1, batch_size: 1, mix: {triangles: 1}}
  - phase: {name: grow, batches: 3, batch_size: 257, mix: {insert: 256, triangles: 1}, keys: {distribution: rmat, scale: 9}}
  - phase: {name: vdel, batches: 3, batch_size: 40, mix: {vertex_delete: 0.5, lookup: 0.25, count: 0.25}, hit_ratio: 0.9,
            range_length: {distribution: fixed, length: 1, unit: vertices}}
  - phase: {name: tc-after, batches: 1, batch_size: 1, mix: {triangles: 1}}
)");
  for (const char* variant : {"map", "set"}) {
    auto r = run_gpudict("graph " + path + " --backend cpu --quiet --variant " + std::string(variant));
    CHECK_MESSAGE(r.exit_code == 0, r.err);
  }
  auto r = run_gpudict("graph " + path + " --backend cpu --format csv");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.out.find("triangles") != std::string::npos, r.out);
  CHECK_MESSAGE(r.out.find("vertex_delete") != std::string::npos, r.out);
  auto sa = run_gpudict("sorted-array " + path + " --backend cpu");
  CHECK(sa.exit_code == 2);
  CHECK_MESSAGE(sa.err.find("does not support vertex_delete operations") != std::string::npos, sa.err);
  CHECK_MESSAGE(sa.err.find("structures that do: graph") != std::string::npos, sa.err);
}

TEST_CASE("verifier: a structure's count of live keys is checked after a batch, when the reference knows it") {
  Verifier v(KeyType::U64, KeyType::U64, DuplicateRule::AnyUpdate);
  v.build(KeyValues{{edge(1, 2), edge(2, 3)}, {7, 8}});
  v.check_size(0, 2);
  CHECK(v.mismatches() == 0);
  v.check_size(0, 3);
  REQUIRE(v.mismatches() == 1);
  CHECK(v.first_mismatches()[0].subject == "live keys after the batch");
  CHECK(v.first_mismatches()[0].expected == "2 keys");
  CHECK(v.first_mismatches()[0].got == "3 keys");
  CHECK(v.checked() == 0);  // not a query result
  // Two updates of one key under AnyUpdate: the key is ambiguous, the size unknown; no check.
  Batch b;
  b.push(OpType::Insert, edge(5, 6), 1);
  b.push(OpType::Delete, edge(5, 6));
  BatchResults r;
  r.reset(b.size());
  v.check_batch(1, b, r);
  v.check_size(1, 99);
  CHECK(v.mismatches() == 1);
}
