// graph_ref: a user kernel's reads of a graph_map (edge exists with its
// weight, degree, neighbours) against a std::map model, in both variants,
// after a build with duplicates, a hub and degree-0 vertices, deletes that
// leave tombstones, inserts that move the hub to more buckets, vertex
// deletes and a cleanup; vertices beyond the capacity and the ends of the
// destination range included.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "core/graph/graph_map.hpp"
#include "core/graph/graph_ref.cuh"
#include "library_test_util.cuh"

using namespace library_test;
using gpudict::graph_map;

static_assert(std::is_trivially_copyable_v<gpudict::graph_ref>, "a ref is passed to kernels by value");
static_assert(graph_map::capabilities.ref_min_lanes == 4 && !graph_map::capabilities.ref_updates,
              "graph_ref: tiles of 4, reads only");

namespace {

using Model = std::map<uint64_t, uint64_t>;
constexpr uint64_t edge(uint64_t u, uint64_t v) { return (u << 32) | v; }

// Each lane holds a query; its warp's tiles serve them four at a time.
__global__ void find_kernel(gpudict::graph_ref ref, const uint64_t* edges, uint64_t n, uint64_t* weight,
                            uint8_t* found) {
  auto tile = cg::tiled_partition<4>(cg::this_thread_block());
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t mine = i < n ? edges[i] : 0;
  for (unsigned q = 0; q < 4; ++q) {
    const uint64_t e = tile.shfl(mine, q);
    const bool live = tile.shfl(static_cast<unsigned>(i < n), q) != 0;
    if (!live) continue;  // the same for the whole tile
    uint64_t w = ~0ull;
    const bool hit = ref.find(tile, static_cast<uint32_t>(e >> 32), static_cast<uint32_t>(e), &w);
    if (tile.thread_rank() == q) {
      found[i] = hit;
      weight[i] = hit ? w : 0;
    }
  }
}

// Per vertex: its degree (one thread), and its neighbours walked by a
// tile: how many, the sum of their ids and of their weights, and a
// position-free hash of the (v, weight) pairs (each lane's share, summed
// over the tile's lanes).
struct Walk {
  uint32_t degree;
  uint32_t count;
  uint64_t id_sum, weight_sum, pair_hash;
};

__host__ __device__ uint64_t pair_mix(uint64_t v, uint64_t w) {
  uint64_t x = (v * 0x9E3779B97F4A7C15ull) ^ (w + 0x632BE59BD9B4E019ull);
  x ^= x >> 29;
  return x * 0xBF58476D1CE4E5B9ull;
}

__global__ void walk_kernel(gpudict::graph_ref ref, uint32_t vertices, Walk* out) {
  auto tile = cg::tiled_partition<4>(cg::this_thread_block());
  const uint64_t t = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 4;
  if (t >= vertices) return;  // whole tiles leave together
  const uint32_t u = static_cast<uint32_t>(t);
  uint32_t count = 0;
  uint64_t ids = 0, weights = 0, hash = 0;
  ref.for_each_neighbor(tile, u, [&](uint32_t v, uint64_t w) {
    ++count;
    ids += v;
    weights += w;
    hash += pair_mix(v, w);
  });
  for (unsigned d = 1; d < 4; d *= 2) {
    count += tile.shfl_xor(count, d);
    ids += tile.shfl_xor(ids, d);
    weights += tile.shfl_xor(weights, d);
    hash += tile.shfl_xor(hash, d);
  }
  if (tile.thread_rank() == 0) out[u] = Walk{ref.degree(u), count, ids, weights, hash};
}

// Every model edge found with its weight; `absent` edges not found; every
// vertex below `upto` (past the capacity too) with its degree and exactly
// its neighbours.
void check_ref(graph_map& g, const Model& model, const std::vector<uint64_t>& absent, uint32_t upto) {
  const gpudict::graph_ref ref = g.ref();
  CHECK(ref.vertex_capacity() == g.vertex_capacity());
  std::vector<uint64_t> queries;
  for (const auto& [e, w] : model) queries.push_back(e);
  queries.insert(queries.end(), absent.begin(), absent.end());
  auto dq = to_device(queries);
  DeviceBuffer<uint64_t> dw(queries.size() + 1, "test weights");
  DeviceBuffer<uint8_t> df(queries.size() + 1, "test flags");
  GPUDICT_CUDA(cudaMemset(df.data(), 0xEE, queries.size() + 1));
  const unsigned blocks = static_cast<unsigned>((queries.size() + 255) / 256);
  find_kernel<<<blocks, 256>>>(ref, dq.data(), queries.size(), dw.data(), df.data());
  GPUDICT_CHECK_LAUNCH("test find_kernel");
  const auto w = to_host(dw, queries.size());
  const auto f = to_host(df, queries.size());
  size_t wrong_found = 0, wrong_weight = 0, wrong_absent = 0;
  for (size_t i = 0; i < model.size(); ++i) {
    if (f[i] != 1) ++wrong_found;
    else if (w[i] != model.at(queries[i])) ++wrong_weight;
  }
  for (size_t i = model.size(); i < queries.size(); ++i)
    if (f[i] != 0) ++wrong_absent;
  CHECK(wrong_found == 0);
  CHECK(wrong_weight == 0);
  CHECK(wrong_absent == 0);

  DeviceBuffer<Walk> dwalk(upto, "test walks");
  walk_kernel<<<(upto * 4 + 255) / 256, 256>>>(ref, upto, dwalk.data());
  GPUDICT_CHECK_LAUNCH("test walk_kernel");
  const auto walks = to_host(dwalk, upto);
  std::vector<Walk> want(upto, Walk{0, 0, 0, 0, 0});
  for (const auto& [e, wt] : model) {
    const uint32_t u = static_cast<uint32_t>(e >> 32), v = static_cast<uint32_t>(e);
    if (u >= upto) continue;
    Walk& x = want[u];
    ++x.degree;
    ++x.count;
    x.id_sum += v;
    x.weight_sum += wt;
    x.pair_hash += pair_mix(v, wt);
  }
  size_t wrong_degree = 0, wrong_walk = 0;
  for (uint32_t u = 0; u < upto; ++u) {
    const Walk& a = walks[u];
    const Walk& b = want[u];
    if (a.degree != b.degree) ++wrong_degree;
    if (a.count != b.count || a.id_sum != b.id_sum || a.weight_sum != b.weight_sum || a.pair_hash != b.pair_hash) {
      if (wrong_walk++ < 3) MESSAGE("vertex " << u << ": walked " << a.count << " edges, the model has " << b.count);
    }
  }
  CHECK(wrong_degree == 0);
  CHECK(wrong_walk == 0);
}

void update(graph_map& g, Model& model, const std::vector<uint64_t>& keys, const std::vector<uint64_t>& weights,
            const std::vector<uint8_t>& erase, bool map) {
  std::vector<uint8_t> flags(erase.begin(), erase.end());
  auto dk = to_device(keys), dw = to_device(weights);
  DeviceBuffer<bool> de(keys.size() + 1, "test erase flags");
  GPUDICT_CUDA(cudaMemcpy(de.data(), flags.data(), flags.size(), cudaMemcpyHostToDevice));
  g.update(dk.data(), dw.data(), de.data(), keys.size());
  // One update per key in these batches: no order to settle.
  for (size_t i = 0; i < keys.size(); ++i) {
    if (erase[i])
      model.erase(keys[i]);
    else
      model[keys[i]] = map ? weights[i] : 0;
  }
}

}  // namespace

TEST_CASE("graph_ref: a user kernel's finds, degrees and neighbour walks match the model, both variants") {
  for (const auto variant : {gpudict::graph::Variant::Map, gpudict::graph::Variant::Set}) {
    const bool map = variant == gpudict::graph::Variant::Map;
    CAPTURE(map);
    std::mt19937_64 rng(77);
    gpudict::graph_options o;
    o.variant = variant;
    graph_map g(o);
    Model model;

    // An empty graph: nothing found, every degree 0.
    check_ref(g, model, {edge(0, 0), edge(0, 0xFFFFFFFFu), edge(5, 7)}, 16);

    // Build: 3000 vertices of random degree, a hub 1 adjacent to all,
    // degree-0 vertices (every tenth), destinations at both ends of the
    // range, and duplicates.
    constexpr uint32_t kVertices = 3000;
    std::vector<uint64_t> keys, weights;
    auto add = [&](uint64_t e, uint64_t w) {
      keys.push_back(e);
      weights.push_back(w);
      model[e] = map ? w : 0;
    };
    for (uint32_t v = 0; v < kVertices; ++v) add(edge(1, v), v * 3ull + 1);
    for (uint32_t u = 2; u < kVertices; ++u) {
      if (u % 10 == 0) continue;
      const unsigned d = 1 + rng() % 20;
      for (unsigned j = 0; j < d; ++j) add(edge(u, rng() % kVertices), rng());
    }
    add(edge(7, 0), 0xFFFFFFFFFFFFFFFFull);
    add(edge(7, 0xFFFFFFFFu), 0);
    for (size_t i = 0, n = keys.size(); i < n; i += 5) {
      keys.push_back(keys[i]);
      weights.push_back(weights[i]);
    }
    {
      // Duplicates carry their first copy's weight, so any one may win.
      std::map<uint64_t, uint64_t> first;
      for (size_t i = 0; i < keys.size(); ++i) first.emplace(keys[i], weights[i]);
      for (size_t i = 0; i < keys.size(); ++i) weights[i] = first.at(keys[i]);
      for (auto& [e, w] : model) w = map ? first.at(e) : 0;
    }
    auto dk = to_device(keys), dw = to_device(weights);
    g.build(dk.data(), dw.data(), keys.size());
    const std::vector<uint64_t> absent = {edge(0, 1),          edge(10, 3),         edge(1, kVertices),
                                          edge(kVertices, 1), edge(1u << 30, 2),   edge(0xFFFFFFFEu, 0xFFFFFFFFu),
                                          0xFFFFFFFFFFFFFFFFull};
    check_ref(g, model, absent, kVertices + 8);

    // Deletes (tombstones, absent ones too) and fresh inserts in one call,
    // the hub's edges doubling so that it moves to more buckets.
    std::vector<uint64_t> uk, uw;
    std::vector<uint8_t> ue;
    std::vector<uint64_t> present;
    for (const auto& [e, w] : model) present.push_back(e);
    std::shuffle(present.begin(), present.end(), rng);
    for (size_t i = 0; i < present.size() / 3; ++i) {
      uk.push_back(present[i]);
      uw.push_back(0);
      ue.push_back(1);
    }
    uk.push_back(edge(10, 10));  // absent
    uw.push_back(0);
    ue.push_back(1);
    for (uint32_t v = kVertices; v < 3 * kVertices; ++v) {
      uk.push_back(edge(1, v));
      uw.push_back(v + 5ull);
      ue.push_back(0);
    }
    update(g, model, uk, uw, ue, map);
    CHECK(g.stats().vertex_moves >= 1);
    check_ref(g, model, {edge(10, 10), present[0], present[1]}, kVertices + 8);

    // Vertex deletes (the hub among them), then a cleanup.
    std::vector<uint64_t> gone_blocks = {edge(1, 0), edge(2, 0), edge(kVertices - 1, 0)};
    auto dg = to_device(gone_blocks);
    g.erase_vertices(dg.data(), gone_blocks.size());
    for (auto it = model.begin(); it != model.end();) {
      const uint32_t a = static_cast<uint32_t>(it->first >> 32), b = static_cast<uint32_t>(it->first);
      const bool gone = a == 1 || a == 2 || a == kVertices - 1 || b == 1 || b == 2 || b == kVertices - 1;
      it = gone ? model.erase(it) : std::next(it);
    }
    check_ref(g, model, {edge(1, 5), edge(3, 1)}, kVertices + 8);
    g.cleanup();
    check_ref(g, model, {edge(1, 5), edge(3, 2)}, kVertices + 8);
    CHECK(g.size() == model.size());
  }
}
