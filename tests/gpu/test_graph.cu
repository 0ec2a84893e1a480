// The dynamic graph (graph_map) against a std::map model of its edges: a
// build from COO with duplicates, a hub and degree-0 vertices, edges at both
// ends of the destination range and at the last vertex id; degrees and
// neighbour lists of every vertex, absent vertices included; growth from an
// empty graph by inserts naming ever larger vertices; deletes (absent ones
// too) and cleanup; the refusals; both variants; triangle counts of graphs
// with known counts and against the host's counter; vertex deletes of hubs.
// The replay engine's runs of graph workloads are in test_examples_gpu.cpp
// and at the end here.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "../cli_helpers.hpp"
#include "../graph_shapes.hpp"
#include "../scratch_dir.hpp"
#include "core/common/errors.hpp"
#include "core/graph/graph_map.hpp"
#include "library_test_util.cuh"
#include "workloads/registry/registry.hpp"
#include "workloads/replay.hpp"
#include "workloads/triangles.hpp"
#include "workloads/workload.hpp"

using namespace library_test;
using gpudict::graph_map;
using gpudict::graph_options;
using gpudict::testing::both_ways;
using gpudict::testing::complete_graph;
using gpudict::testing::grid_graph;
using gpudict::testing::wheel_graph;

namespace {

using Model = std::map<uint64_t, uint64_t>;
constexpr uint64_t edge(uint64_t u, uint64_t v) { return (u << 32) | v; }

// Every edge of the model found with its weight (set variant: 0); absent
// edges (other destinations, vertices beyond the capacity, the all-ones
// key) not found.
void check_find(graph_map& g, const Model& model, const std::vector<uint64_t>& absent, bool weights) {
  std::vector<uint64_t> keys;
  for (const auto& [k, w] : model) keys.push_back(k);
  keys.insert(keys.end(), absent.begin(), absent.end());
  auto dk = to_device(keys);
  DeviceBuffer<uint64_t> dw(keys.size() + 1, "test");
  DeviceBuffer<bool> df(keys.size() + 1, "test");
  g.find(dk.data(), keys.size(), dw.data(), df.data());
  const auto w = to_host(dw, keys.size());
  const auto f = flags_to_host(df, keys.size());
  size_t wrong = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = model.find(keys[i]);
    const bool present = it != model.end();
    if (f[i] != present || (present && weights && w[i] != it->second)) ++wrong;
  }
  CHECK(wrong == 0);
}

// Degree and neighbours of vertices [0, upto) against the model: counts,
// and each vertex's neighbour list as a set (the graph lists them in table
// order).
void check_vertices(graph_map& g, const Model& model, uint64_t upto, bool weights) {
  std::vector<uint64_t> lo, hi;
  for (uint64_t u = 0; u < upto; ++u) {
    lo.push_back(edge(u, 0));
    hi.push_back(edge(u, 0xFFFFFFFFull));
  }
  lo.push_back(edge(0xFFFFFFFEull, 0));  // a vertex no graph here has
  hi.push_back(edge(0xFFFFFFFEull, 0xFFFFFFFFull));
  const uint64_t n = lo.size();
  auto dlo = to_device(lo), dhi = to_device(hi);
  DeviceBuffer<uint64_t> counts(n, "test"), offsets(n + 1, "test");
  g.count(dlo.data(), dhi.data(), n, counts.data());
  const uint64_t total = g.range(dlo.data(), dhi.data(), n, offsets.data(), nullptr, nullptr, 0);
  CHECK(total == static_cast<uint64_t>(std::distance(model.begin(), model.lower_bound(edge(upto, 0)))));
  DeviceBuffer<uint64_t> ek(total + 1, "test"), ew(total + 1, "test");
  CHECK(g.range(dlo.data(), dhi.data(), n, offsets.data(), ek.data(), ew.data(), total) == total);
  const auto c = to_host(counts, n);
  const auto off = to_host(offsets, n + 1);
  const auto k = to_host(ek, total);
  const auto w = to_host(ew, total);
  size_t wrong_degree = 0, wrong_list = 0;
  for (uint64_t i = 0; i < n; ++i) {
    Model expect(model.lower_bound(lo[i]), model.upper_bound(hi[i]));
    if (c[i] != expect.size() || off[i + 1] - off[i] != expect.size()) ++wrong_degree;
    Model got;
    for (uint64_t x = off[i]; x < off[i + 1] && x < total; ++x) got[k[x]] = weights ? w[x] : 0;
    if (!weights)
      for (auto& [key, value] : expect) value = 0;
    if (got != expect) ++wrong_list;
  }
  CHECK(wrong_degree == 0);
  CHECK(wrong_list == 0);
}

void insert_call(graph_map& g, Model& model, const std::vector<uint64_t>& keys, const std::vector<uint64_t>& w) {
  auto dk = to_device(keys), dw = to_device(w);
  g.insert(dk.data(), dw.data(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = w[i];
}

// The workload at `path` replayed verified on the GPU graph (u64 edges,
// weights of width `value`) with its default options but the variant.
gpudict::RunReport replay_graph(const std::string& path, const char* variant, gpudict::KeyType value) {
  const gpudict::StructureInfo* info = gpudict::find_structure("graph");
  REQUIRE(info != nullptr);
  REQUIRE(info->make_gpu);
  gpudict::OpenOptions oo{};
  const gpudict::WorkloadSummary summary = gpudict::summarize_workload(path, oo);
  gpudict::StructureConfig cfg;
  for (const auto& opt : info->options) cfg.options[opt.name] = opt.default_value;
  cfg.options["variant"] = variant;
  cfg.key_type = gpudict::KeyType::U64;
  cfg.value_type = value;
  gpudict::ReplayOptions ro;
  ro.gpu = true;
  return gpudict::replay([&] { return gpudict::open_workload(path, oo); }, [&] { return info->make_gpu(cfg); },
                         summary, ro);
}

}  // namespace

TEST_CASE("graph: a build from COO with duplicates, a hub and degree-0 vertices, then every query") {
  for (const auto variant : {gpudict::graph::Variant::Map, gpudict::graph::Variant::Set}) {
    const bool weights = variant == gpudict::graph::Variant::Map;
    CAPTURE(weights);
    std::mt19937_64 rng(11);
    const uint64_t vertices = 5000;
    std::vector<uint64_t> keys, w;
    Model model;
    auto add = [&](uint64_t k, uint64_t x) {
      keys.push_back(k);
      w.push_back(x);
      model[k] = x;  // the later duplicate wins
    };
    for (int i = 0; i < 6000; ++i) add(edge(7, rng() % 100000), rng());  // a hub
    for (int i = 0; i < 60000; ++i) add(edge(rng() % vertices, rng() & 0xFFFFFFFFull), rng());
    for (uint64_t v : {0ull, 1ull, 0xFFFFFFFEull, 0xFFFFFFFFull}) add(edge(vertices - 1, v), ~0ull - v);
    for (int i = 0; i < 3000; ++i) {  // duplicates of earlier edges, new weights
      const uint64_t k = keys[rng() % keys.size()];
      add(k, rng());
    }
    for (uint64_t u = 100; u < 200; ++u) model.erase(model.lower_bound(edge(u, 0)), model.upper_bound(edge(u, ~0u)));
    {  // vertices 100..199 have degree 0: their edges never were
      std::vector<uint64_t> k2, w2;
      for (size_t i = 0; i < keys.size(); ++i)
        if ((keys[i] >> 32) < 100 || (keys[i] >> 32) >= 200) k2.push_back(keys[i]), w2.push_back(w[i]);
      keys.swap(k2);
      w.swap(w2);
    }
    graph_options o;
    o.variant = variant;
    graph_map g(o);
    auto dk = to_device(keys), dw = to_device(w);
    g.build(dk.data(), dw.data(), keys.size());
    CHECK(g.size() == model.size());
    CHECK(g.vertex_capacity() == vertices);
    const gpudict::graph_stats s = g.stats();
    CHECK(s.edges == model.size());
    CHECK(s.slots_per_slab == (weights ? 7u : 15u));
    CHECK(s.buckets > vertices);  // the hub has many
    std::vector<uint64_t> absent = {edge(7, 100000), edge(150, 3), edge(vertices, 0), edge(vertices + 5, 1),
                                    edge(0xFFFFFFFFull, 0xFFFFFFFFull), edge(0xFFFFFFFFull, 0), ~0ull - 1};
    for (int i = 0; i < 2000; ++i) {
      const uint64_t k = edge(rng() % (vertices + 10), rng() & 0xFFFFFFFFull);
      if (!model.count(k)) absent.push_back(k);
    }
    check_find(g, model, absent, weights);
    check_vertices(g, model, vertices + 3, weights);
  }
}

TEST_CASE("graph: growth from empty by inserts naming larger vertices, deletes, mixed updates, cleanup") {
  std::mt19937_64 rng(5);
  graph_options o;
  o.flush_tombstones = 0;  // cleanup only when asked
  graph_map g(o);
  Model model;
  CHECK(g.size() == 0);
  {  // queries of an empty graph
    check_find(g, model, {edge(0, 0), edge(3, 4)}, true);
    check_vertices(g, model, 4, true);
  }
  // Batches of 1, then batches naming vertices up to 2^20 (the capacity
  // grows several times), with duplicates of one edge in a batch carrying
  // one weight.
  insert_call(g, model, {edge(0, 5)}, {9});
  check_vertices(g, model, 2, true);
  uint64_t top = 1, max_u = 0;
  for (int round = 0; round < 6; ++round) {
    top *= 16;
    std::vector<uint64_t> keys, w;
    std::map<uint64_t, uint64_t> batch;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t k = edge(rng() % top, rng() % 64);
      if (!batch.count(k)) batch[k] = rng();
      max_u = std::max(max_u, k >> 32);
      keys.push_back(k);
      w.push_back(batch[k]);
    }
    insert_call(g, model, keys, w);
    CHECK(g.size() == model.size());
    CHECK(g.vertex_capacity() > max_u);
  }
  CHECK(g.stats().vertex_growths >= 3);
  check_find(g, model, {edge(top, 0), edge(top + 1000, 7)}, true);
  check_vertices(g, model, 300, true);

  // Deletes: half of the edges and some absent ones (beyond the capacity too).
  std::vector<uint64_t> del;
  for (const auto& [k, w] : model)
    if (rng() % 2) del.push_back(k);
  del.push_back(edge(3, 1u << 20));
  del.push_back(edge(0xFFFFFFF0ull, 1));
  auto dd = to_device(del);
  g.erase(dd.data(), del.size());
  for (uint64_t k : del) model.erase(k);
  CHECK(g.size() == model.size());
  CHECK(g.stats().tombstones > 0);
  check_find(g, model, {del[0], del[1]}, true);
  check_vertices(g, model, 300, true);

  // One mixed call: inserts of new and deleted edges, deletes of present
  // ones, each edge once.
  std::vector<uint64_t> keys, w;
  std::vector<uint8_t> erase;
  std::set<uint64_t> seen;
  for (int i = 0; i < 30000; ++i) {
    const bool d = rng() % 3 == 0 && !model.empty();
    const uint64_t k = d ? std::next(model.begin(), static_cast<long>(rng() % std::min<size_t>(model.size(), 5000)))->first
                         : edge(rng() % (2 * top), rng() % 64);
    if (!seen.insert(k).second) continue;
    if (!d) max_u = std::max(max_u, k >> 32);
    keys.push_back(k);
    w.push_back(rng());
    erase.push_back(d);
  }
  auto mk = to_device(keys), mw = to_device(w);
  DeviceBuffer<bool> me(erase.size(), "test");
  GPUDICT_CUDA(cudaMemcpy(me.data(), erase.data(), erase.size(), cudaMemcpyHostToDevice));
  g.update(mk.data(), mw.data(), me.data(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (erase[i])
      model.erase(keys[i]);
    else
      model[keys[i]] = w[i];
  }
  CHECK(g.size() == model.size());
  CHECK(g.vertex_capacity() > max_u);
  check_find(g, model, {edge(2 * top, 0)}, true);
  check_vertices(g, model, 300, true);

  g.cleanup();
  CHECK(g.stats().tombstones == 0);
  CHECK(g.size() == model.size());
  check_find(g, model, {del[2]}, true);
  check_vertices(g, model, 300, true);
}

TEST_CASE("graph: a hub that keeps receiving edges moves to more buckets; churn on one vertex does not") {
  for (const auto variant : {gpudict::graph::Variant::Map, gpudict::graph::Variant::Set}) {
    const bool weights = variant == gpudict::graph::Variant::Map;
    CAPTURE(weights);
    std::mt19937_64 rng(3);
    graph_options o;
    o.variant = variant;
    graph_map g(o);
    Model model;
    // Vertex 3 gets 2000 new edges per call, 12 calls; vertices 0..99 a few each.
    for (int call = 0; call < 12; ++call) {
      std::vector<uint64_t> keys, w;
      for (int i = 0; i < 2000; ++i) {
        keys.push_back(edge(3, static_cast<uint64_t>(call) * 2000 + static_cast<uint64_t>(i)));
        w.push_back(weights ? rng() : 0);
      }
      for (int i = 0; i < 300; ++i) {
        keys.push_back(edge(rng() % 100, rng() % 1000));
        w.push_back(weights ? rng() : 0);
      }
      std::map<uint64_t, uint64_t> batch;  // one weight per edge of the call
      for (size_t i = 0; i < keys.size(); ++i) batch[keys[i]] = w[i];
      for (size_t i = 0; i < keys.size(); ++i) w[i] = batch[keys[i]];
      insert_call(g, model, keys, w);
      CHECK(g.size() == model.size());
    }
    const gpudict::graph_stats s = g.stats();
    CHECK(s.vertex_moves >= 3);  // the hub, several times (geometric growth)
    CHECK(s.moved_edges > 0);
    CHECK(s.moved_edges < 3 * 24000);  // amortized: each edge moved a few times at most
    check_find(g, model, {edge(3, 24000), edge(4, 999999)}, weights);
    check_vertices(g, model, 100, weights);
    // Churn: one edge of vertex 50 deleted and inserted again, 200 calls.
    const uint64_t before = s.vertex_moves;
    for (int call = 0; call < 200; ++call) {
      auto dk = to_device(std::vector<uint64_t>{edge(50, 77)});
      if (call % 2) {
        g.erase(dk.data(), 1);
        model.erase(edge(50, 77));
      } else {
        insert_call(g, model, {edge(50, 77)}, {weights ? 5u : 0u});
      }
    }
    CHECK(g.stats().vertex_moves <= before + 2);
    check_vertices(g, model, 100, weights);
  }
}

TEST_CASE("graph: refusals: a count or range that is not a vertex block, a vertex beyond max_vertices, options") {
  graph_options o;
  o.max_vertices = 1000;
  graph_map g(o);
  Model model;
  insert_call(g, model, {edge(999, 1), edge(0, 0)}, {1, 2});
  // A vertex beyond max_vertices: the whole call is refused, nothing changes.
  {
    auto dk = to_device(std::vector<uint64_t>{edge(5, 5), edge(1000, 0)});
    try {
      g.insert(dk.data(), nullptr, 2);
      FAIL("expected RuntimeFailure");
    } catch (const gpudict::RuntimeFailure& e) {
      CHECK(e.option() == "max_vertices");
      CHECK(std::string(e.what()) == "graph: an edge names vertex 1000, beyond max_vertices 1000 (vertex ids are below it)");
    }
    CHECK(g.size() == 2);
    check_find(g, model, {edge(5, 5)}, true);
  }
  // Not a vertex block: [lo, hi] of one key, or two vertices.
  for (const auto& [lo, hi] : std::vector<std::pair<uint64_t, uint64_t>>{{edge(0, 0), edge(0, 0)},
                                                                          {edge(0, 0), edge(1, 0xFFFFFFFFull)},
                                                                          {edge(0, 1), edge(0, 0xFFFFFFFFull)}}) {
    auto dlo = to_device(std::vector<uint64_t>{edge(0, 0), lo}), dhi = to_device(std::vector<uint64_t>{edge(0, 0xFFFFFFFFull), hi});
    DeviceBuffer<uint64_t> out(3, "test");
    CHECK_THROWS_AS(g.count(dlo.data(), dhi.data(), 2, out.data()), gpudict::InputError);
    CHECK_THROWS_AS(g.range(dlo.data(), dhi.data(), 2, out.data(), nullptr, nullptr, 0), gpudict::InputError);
  }
  graph_options bad;
  bad.load_factor = 0;
  CHECK_THROWS_AS(graph_map{bad}, gpudict::InputError);
  bad = graph_options{};
  bad.max_vertices = (1ull << 31) + 1;
  CHECK_THROWS_AS(graph_map{bad}, gpudict::InputError);
  bad = graph_options{};
  bad.vertex_capacity = bad.max_vertices + 1;
  CHECK_THROWS_AS(graph_map{bad}, gpudict::InputError);
}

TEST_CASE("graph: the engine runs RMAT graph workloads verified, phased and concurrent, both variants") {
  const std::string path = gpudict::testing::write_scratch_file("graph-mixed.yaml", R"(
seed: 21
key_type: u64
value_type: u64
initial: {count: 60000, keys: {distribution: rmat, scale: 13}}
steps:
  - phase: {name: p, batches: 5, batch_size: 20000, hit_ratio: 0.5,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: rmat, scale: 15},
            range_length: {distribution: fixed, length: 1, unit: vertices}}
  - cleanup
  - phase: {name: c, batches: 5, batch_size: 20000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: rmat, scale: 16},
            range_length: {distribution: fixed, length: 1, unit: vertices}}
)");
  for (const char* variant : {"map", "set"}) {
    CAPTURE(variant);
    const gpudict::RunReport rep = replay_graph(path, variant, gpudict::KeyType::U64);
    CHECK(rep.mismatches == 0);
    CHECK(rep.checked > 50000);
  }
}

namespace {

graph_map built(const std::vector<uint64_t>& keys, gpudict::graph::Variant variant, Model& model) {
  graph_options o;
  o.variant = variant;
  graph_map g(o);
  const std::vector<uint64_t> w(keys.size(), 3);
  auto dk = to_device(keys), dw = to_device(w);
  g.build(dk.data(), dw.data(), keys.size());
  model.clear();
  for (uint64_t k : keys) model[k] = variant == gpudict::graph::Variant::Map ? 3 : 0;
  return g;
}

void erase_vertices(graph_map& g, Model& model, const std::vector<uint32_t>& vertices) {
  std::vector<uint64_t> blocks;
  for (uint32_t u : vertices) blocks.push_back(edge(u, 0));
  auto d = to_device(blocks);
  g.erase_vertices(d.data(), blocks.size());
  for (auto it = model.begin(); it != model.end();) {
    const uint32_t a = static_cast<uint32_t>(it->first >> 32), b = static_cast<uint32_t>(it->first);
    const bool gone = std::find(vertices.begin(), vertices.end(), a) != vertices.end() ||
                      std::find(vertices.begin(), vertices.end(), b) != vertices.end();
    it = gone ? model.erase(it) : std::next(it);
  }
}

std::vector<uint64_t> keys_of(const Model& model) {
  std::vector<uint64_t> k;
  for (const auto& [key, w] : model) k.push_back(key);
  return k;
}

}  // namespace

TEST_CASE("graph: triangle counts of complete graphs, wheels, grids and directed graphs; vertex deletes of hubs") {
  for (const auto variant : {gpudict::graph::Variant::Map, gpudict::graph::Variant::Set}) {
    const bool weights = variant == gpudict::graph::Variant::Map;
    CAPTURE(weights);
    Model model;
    {
      graph_map g = built(both_ways(complete_graph(30)), variant, model);
      CHECK(g.triangle_count() == 4060);  // C(30, 3)
      erase_vertices(g, model, {0, 0, 29, 5000000});  // a duplicate; a vertex beyond the capacity
      CHECK(g.size() == model.size());
      CHECK(g.triangle_count() == 3276);  // C(28, 3)
      check_find(g, model, {edge(0, 1), edge(1, 0), edge(29, 3), edge(3, 29)}, weights);
      check_vertices(g, model, 31, weights);
    }
    {
      graph_map g = built(both_ways(wheel_graph(2000)), variant, model);  // a hub 0 and a rim of 2000
      CHECK(g.triangle_count() == 2000);
      erase_vertices(g, model, {0});  // the hub: its chains released, its edges gone from every rim vertex
      CHECK(g.triangle_count() == 0);
      CHECK(g.size() == 4000);
      check_find(g, model, {edge(0, 1), edge(7, 0)}, weights);
      check_vertices(g, model, 2002, weights);
      // It comes back as a vertex like any other.
      insert_call(g, model, {edge(0, 1), edge(1, 0), edge(0, 2), edge(2, 0)}, {1, 1, 1, 1});
      if (!weights)
        for (auto& [k, x] : model) x = 0;
      CHECK(g.triangle_count() == 1);
      check_vertices(g, model, 2002, weights);
      g.cleanup();
      CHECK(g.stats().tombstones == 0);
      check_vertices(g, model, 2002, weights);
    }
    {
      graph_map g = built(both_ways(grid_graph(60, 60)), variant, model);
      CHECK(g.triangle_count() == 0);
    }
    {
      // Directed: one direction per edge, destinations far beyond the
      // vertex capacity (ids near 2^32), a self-loop and an edge both ways.
      const std::vector<uint64_t> keys = {edge(0, 1), edge(1, 0xFFFFFFFEull), edge(0, 0xFFFFFFFEull), edge(0, 0),
                                          edge(2, 2),  edge(2, 0),             edge(0, 2),             edge(1, 2)};
      graph_map g = built(keys, variant, model);
      CHECK(g.triangle_count() == gpudict::count_triangles(keys_of(model)));
      CHECK(g.triangle_count() == 2);  // {0, 1, 2^32 - 2} and {0, 1, 2}
      // 2^32 - 2 has no buckets (no edges from it), only edges into it: a
      // vertex delete takes those, both of them, and its triangle.
      erase_vertices(g, model, {0xFFFFFFFEu, 0xFFFFFFFEu, 4000000000u});
      CHECK(g.size() == model.size());
      CHECK(g.triangle_count() == 1);
      check_find(g, model, {edge(1, 0xFFFFFFFEull), edge(0, 0xFFFFFFFEull)}, weights);
      erase_vertices(g, model, {0, 1});  // only the self-loop (2, 2) is left
      CHECK(g.triangle_count() == 0);
      check_find(g, model, {edge(0, 1), edge(1, 2)}, weights);
    }
    {
      // A random graph against the host counter.
      std::mt19937_64 rng(5);
      std::vector<uint64_t> keys;
      for (int i = 0; i < 200000; ++i) {
        const uint64_t u = rng() % 3000, v = (rng() % 7 == 0) ? rng() % 20 : rng() % 3000;  // some hubs
        keys.push_back(edge(u, v));
      }
      graph_map g = built(keys, variant, model);
      const uint64_t expect = gpudict::count_triangles(keys_of(model));
      CHECK(expect > 0);
      CHECK(g.triangle_count() == expect);
      std::vector<uint32_t> gone;
      for (uint32_t u = 0; u < 3000; u += 7) gone.push_back(u);
      gone.push_back(3);  // a hub
      erase_vertices(g, model, gone);
      CHECK(g.size() == model.size());
      CHECK(g.triangle_count() == gpudict::count_triangles(keys_of(model)));
      check_vertices(g, model, 3001, weights);
    }
    {
      graph_map g = built(both_ways({{1, 2}}), variant, model);
      auto bad = to_device(std::vector<uint64_t>{edge(1, 0), edge(2, 5)});
      try {
        g.erase_vertices(bad.data(), 2);
        FAIL("expected InputError");
      } catch (const gpudict::InputError& e) {
        CHECK(std::string(e.what()) == "graph: erase_vertices takes a vertex's first key u * 2^32; entry 1 is " +
                                           std::to_string(edge(2, 5)));
      }
      CHECK(g.size() == 2);  // refused before any change
      graph_map empty;
      CHECK(empty.triangle_count() == 0);
      empty.erase_vertices(bad.data(), 1);
      CHECK(empty.size() == 0);
    }
  }
}

TEST_CASE("graph: the engine runs vertex deletes and triangle counts verified, both variants") {
  const std::string path = gpudict::testing::write_scratch_file("graph-ops.yaml", R"(
seed: 23
key_type: u64
undirected: true
initial: {count: 40000, keys: {distribution: rmat, scale: 12}}
steps:
  - phase: {name: tc, batches: 1, batch_size: 1, mix: {triangles: 1}}
  - phase: {name: grow, batches: 4, batch_size: 8193, mix: {insert: 8192, triangles: 1}, keys: {distribution: rmat, scale: 12}}
  - phase: {name: vdel, batches: 4, batch_size: 2000, hit_ratio: 0.9,
            mix: {vertex_delete: 0.25, insert: 0.25, lookup: 0.25, count: 0.25},
            keys: {distribution: rmat, scale: 12}, range_length: {distribution: fixed, length: 1, unit: vertices}}
  - phase: {name: tc-after, batches: 1, batch_size: 1, mix: {triangles: 1}}
)");
  for (const char* variant : {"map", "set"}) {
    CAPTURE(variant);
    const gpudict::RunReport rep = replay_graph(path, variant, gpudict::KeyType::U32);
    CHECK(rep.mismatches == 0);
    CHECK(rep.checked > 4000);  // lookups, degrees and triangle counts
  }
}

TEST_CASE("graph: a pool that runs out with growth off is a RuntimeFailure naming the option, exit 3 from the CLI") {
  // 2^16 vertices of one bucket, 27 edges each: below the count that moves
  // a vertex to more buckets (4 slabs), so every chain grows into the pool.
  graph_options o;
  o.growth = false;
  o.pool_slabs = 1024;
  o.vertex_capacity = 1 << 16;
  graph_map g(o);
  std::vector<uint64_t> keys;
  for (uint64_t u = 0; u < (1u << 16); ++u)
    for (uint64_t v = 0; v < 27; ++v) keys.push_back(edge(u, v));
  auto dk = to_device(keys);
  try {
    g.insert(dk.data(), nullptr, keys.size());
    FAIL("expected RuntimeFailure");
  } catch (const gpudict::RuntimeFailure& e) {
    CHECK(e.option() == "growth");
    CHECK_MESSAGE(std::string(e.what()).find("out of slab memory: ") != std::string::npos, e.what());
  }
  const std::string path = gpudict::testing::write_scratch_file("graph-pool.yaml", R"(
key_type: u64
initial: {count: 1000, keys: {distribution: uniform, min: 0, max: 281474976710655}}
steps:
  - phase: {name: grow, batches: 1, batch_size: 1000000, mix: {insert: 1.0},
            keys: {distribution: uniform, min: 0, max: 281474976710655}}
)");  // 2^16 vertices, about 15 edges each
  auto r = gpudict::testing::run_gpudict("graph '" + path + "' --backend gpu --pool-slabs 1024 --pool-growth off");
  CHECK(r.exit_code == 3);
  CHECK_MESSAGE(r.err.find("out of slab memory: ") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("--pool-growth") != std::string::npos, r.err);
}
