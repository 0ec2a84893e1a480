// Generated graphs (workloads/graph_gen.hpp): the random geometric graph
// against a brute-force check of every pair, its symmetry, its degree
// against the model, the same edges on 1 and 4 host threads; as a YAML
// workload's initial contents, and its refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/common/errors.hpp"
#include "scratch_dir.hpp"
#include "workloads/graph_gen.hpp"
#include "workloads/parallel.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;

TEST_CASE("rgg: every pair within the radius and no other, both directions, sorted, no self-loops") {
  const unsigned scale = 10;
  const auto edges = rgg_edges(3, scale);
  std::vector<double> x, y;
  unit_square_points(3, scale, x, y);
  const double r = rgg_radius(scale);
  std::vector<uint64_t> brute;
  const uint64_t n = x.size();
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t j = 0; j < n; ++j)
      if (i != j && (x[i] - x[j]) * (x[i] - x[j]) + (y[i] - y[j]) * (y[i] - y[j]) < r * r) brute.push_back((i << 32) | j);
  CHECK(brute.size() > n);  // a connected-looking graph, not an empty one
  CHECK(edges == brute);     // the same edges, in key order
}

TEST_CASE("rgg: degree as the model predicts; the same edges on 1 and 4 threads; seeds differ") {
  const unsigned scale = 16;
  const double n = std::ldexp(1.0, scale);
  const auto a = rgg_edges(9, scale);
  const double avg = static_cast<double>(a.size()) / n;
  const double interior = M_PI * rgg_radius(scale) * rgg_radius(scale) * n;  // pi 0.55^2 ln n
  CHECK(avg < interior);
  CHECK(avg > 0.95 * interior);  // the border costs about (8 / (3 pi)) r of it
  set_host_threads(1);
  const std::vector<uint64_t> one = rgg_edges(10, scale);
  const std::vector<uint64_t> again = rgg_edges(9, scale);  // made again on one thread
  set_host_threads(4);
  const std::vector<uint64_t> four = rgg_edges(10, scale);
  set_host_threads(0);
  CHECK(again == a);
  CHECK(one == four);
  CHECK(one != a);
}

TEST_CASE("rgg as a workload's initial contents; a graph needs u64 keys and excludes count, keys and file") {
  const std::string ok = testing::write_scratch_file("rgg.yaml", R"(
seed: 4
key_type: u64
initial: {graph: {family: rgg, scale: 12}, values: index}
steps:
  - phase: {name: p, batches: 1, batch_size: 1000, mix: {lookup: 0.5, delete: 0.5}, hit_ratio: 1.0}
)");
  const WorkloadSummary sum = summarize_workload(ok);
  const auto edges = rgg_edges(4, 12);
  CHECK(sum.initial == edges.size());
  auto src = open_workload(ok);
  Step step;
  REQUIRE(src->next(step));
  REQUIRE(step.kind == StepKind::Initial);
  CHECK(step.initial.keys == edges);
  CHECK(step.initial.values[5] == 5);
  // --seed: another graph.
  OpenOptions other{true, 5};
  CHECK(summarize_workload(ok, other).initial == rgg_edges(5, 12).size());

  auto error_of = [](const std::string& name, const std::string& text) {
    try {
      (void)summarize_workload(testing::write_scratch_file(name, text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("rgg32.yaml", "initial: {graph: {family: rgg, scale: 5}}\nsteps: []\n")
            .find("initial.graph: a graph's edges are 64-bit keys") != std::string::npos);
  CHECK(error_of("rggc.yaml", "key_type: u64\ninitial: {count: 5, graph: {family: rgg, scale: 5}}\nsteps: []\n")
            .find("initial.count: cannot be combined with graph") != std::string::npos);
  CHECK(error_of("rggs.yaml", "key_type: u64\ninitial: {graph: {family: rgg, scale: 27}}\nsteps: []\n")
            .find("initial.graph.scale: scale 27") != std::string::npos);
  CHECK(error_of("rggv.yaml", "key_type: u64\ninitial: {graph: {family: rgg, scale: 5}, values: {file: v.bin}}\nsteps: []\n")
            .find("initial.values: a values file with a generated graph") != std::string::npos);
  CHECK(error_of("rggf.yaml", "key_type: u64\ninitial: {graph: {family: kronecker, scale: 5}}\nsteps: []\n")
            .find("initial.graph.family") != std::string::npos);
}

TEST_CASE("delaunay: a planar triangulation of the points: symmetric, degree just under 6, every nearest neighbour an edge") {
  if (!delaunay_available()) {
    MESSAGE("skipped: built without Qhull");
    return;
  }
  const unsigned scale = 10;
  const std::vector<uint64_t> e = make_delaunay(6, scale);
  const uint64_t n = uint64_t{1} << scale;
  CHECK(std::is_sorted(e.begin(), e.end()));
  CHECK(std::adjacent_find(e.begin(), e.end()) == e.end());
  for (uint64_t k : e) {
    CHECK((k >> 32) != (k & 0xFFFFFFFFull));
    CHECK(std::binary_search(e.begin(), e.end(), (k << 32) | (k >> 32)));  // both ways
  }
  // A triangulation of n points with h on the hull has 3n - 3 - h edges
  // (each counted twice here); h is small for uniform points.
  CHECK(e.size() / 2 <= 3 * n - 6);
  CHECK(e.size() / 2 >= 3 * n - 3 - 64);
  // The nearest-neighbour graph is a subgraph of the Delaunay triangulation.
  std::vector<double> x, y;
  unit_square_points(6, scale, x, y);
  uint64_t missing = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t best = i;
    double d = 2.0;
    for (uint64_t j = 0; j < n; ++j) {
      const double dd = (x[i] - x[j]) * (x[i] - x[j]) + (y[i] - y[j]) * (y[i] - y[j]);
      if (j != i && dd < d) d = dd, best = j;
    }
    if (!std::binary_search(e.begin(), e.end(), (i << 32) | best)) ++missing;
  }
  CHECK(missing == 0);
  // As a workload's initial contents.
  const std::string path = testing::write_scratch_file("delaunay.yaml", R"(
seed: 6
key_type: u64
initial: {graph: {family: delaunay, scale: 10}}
steps: []
)");
  CHECK(summarize_workload(path).initial == e.size());
}

TEST_CASE("undirected workloads: every generated update and initial edge comes with its reverse; the summary counts them") {
  const std::string path = testing::write_scratch_file("undirected.yaml", R"(
seed: 8
key_type: u64
undirected: true
initial: {count: 2000, keys: {distribution: rmat, scale: 9}}
steps:
  - phase: {name: p, batches: 3, batch_size: 3000, hit_ratio: 0.6,
            mix: {insert: 0.4, delete: 0.2, lookup: 0.2, count: 0.1, range: 0.1},
            keys: {distribution: rmat, scale: 9},
            range_length: {distribution: fixed, length: 1, unit: vertices}}
  - phase: {name: c, batches: 2, batch_size: 2000, mode: concurrent, mix: {insert: 0.5, delete: 0.5}, hit_ratio: 1.0}
)");
  const WorkloadSummary sum = summarize_workload(path);
  CHECK(sum.initial == 4000);
  auto src = open_workload(path);
  CHECK(src->header().undirected);
  Step step;
  std::array<uint64_t, kNumOpTypes> ops{};
  uint64_t batches = 0;
  auto reverse = [](uint64_t k) { return (k << 32) | (k >> 32); };
  while (src->next(step)) {
    if (step.kind == StepKind::Initial) {
      REQUIRE(step.initial.size() == 4000);
      for (size_t i = 0; i < step.initial.size(); i += 2) {
        CHECK(step.initial.keys[i + 1] == reverse(step.initial.keys[i]));
        CHECK(step.initial.values[i + 1] == step.initial.values[i]);
      }
    }
    if (step.kind != StepKind::Batch) continue;
    ++batches;
    const Batch& b = step.batch;
    for (size_t i = 0; i < b.size(); ++i) {
      ++ops[static_cast<int>(b.types[i])];
      if (!is_update(b.types[i])) continue;
      REQUIRE(i + 1 < b.size());
      CHECK(b.types[i + 1] == b.types[i]);
      CHECK(b.keys[i + 1] == reverse(b.keys[i]));
      CHECK(b.args[i + 1] == b.args[i]);
      ++ops[static_cast<int>(b.types[i + 1])];
      ++i;
    }
  }
  CHECK(batches == 5);
  CHECK(ops == sum.ops);
  CHECK(sum.ops[static_cast<int>(OpType::Insert)] == 2 * (3 * 1200 + 2 * 1000));
  CHECK(sum.phases[0].max_batch == 3000 + 1800);

  const std::string u32 = testing::write_scratch_file("undirected32.yaml", "undirected: true\nsteps: []\n");
  try {
    (void)summarize_workload(u32);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("undirected: an undirected graph's edges are 64-bit keys") != std::string::npos);
  }
}

TEST_CASE("road: connected, planar-sparse, average degree 2.4, both directions") {
  if (!delaunay_available()) {
    MESSAGE("skipped: built without Qhull");
    return;
  }
  const unsigned scale = 12;
  const uint64_t n = uint64_t{1} << scale;
  const std::vector<uint64_t> e = make_road(2, scale);
  CHECK(e.size() == 2 * (n + n / 5));
  CHECK(std::is_sorted(e.begin(), e.end()));
  CHECK(std::adjacent_find(e.begin(), e.end()) == e.end());
  std::vector<uint32_t> parent(n), degree(n, 0);
  for (uint64_t i = 0; i < n; ++i) parent[i] = static_cast<uint32_t>(i);
  auto root = [&](uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  uint64_t components = n;
  for (uint64_t k : e) {
    CHECK(std::binary_search(e.begin(), e.end(), (k << 32) | (k >> 32)));
    ++degree[k >> 32];
    const uint32_t a = root(static_cast<uint32_t>(k >> 32)), b = root(static_cast<uint32_t>(k & 0xFFFFFFFFull));
    if (a != b) parent[a] = b, --components;
  }
  CHECK(components == 1);
  CHECK(*std::min_element(degree.begin(), degree.end()) >= 1);
  CHECK(*std::max_element(degree.begin(), degree.end()) <= 12);  // road_usa's is 9, germany_osm's 13
  // Made from the same points as delaunay: every road edge is a Delaunay edge.
  const std::vector<uint64_t> tri = make_delaunay(2, scale);
  CHECK(std::includes(tri.begin(), tri.end(), e.begin(), e.end()));
}
