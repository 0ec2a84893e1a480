// Small graphs with known triangle counts for the graph tests (CPU and
// GPU): undirected edge lists, and both directions of each as edge keys
// u * 2^32 + v.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace gpudict::testing {

using EdgeList = std::vector<std::pair<uint32_t, uint32_t>>;

inline uint64_t edge_key(uint64_t u, uint64_t v) { return (u << 32) | v; }

inline std::vector<uint64_t> both_ways(const EdgeList& edges) {
  std::vector<uint64_t> k;
  for (auto [u, v] : edges) {
    k.push_back(edge_key(u, v));
    k.push_back(edge_key(v, u));
  }
  return k;
}

// K_n on ids base .. base + n - 1: C(n, 3) triangles.
inline EdgeList complete_graph(uint32_t n, uint32_t base = 0) {
  EdgeList e;
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b) e.emplace_back(base + a, base + b);
  return e;
}

// A hub (id 0) joined to a cycle of n rim vertices 1..n: n triangles (n >= 4).
inline EdgeList wheel_graph(uint32_t n) {
  EdgeList e;
  for (uint32_t i = 1; i <= n; ++i) {
    e.emplace_back(0, i);
    e.emplace_back(i, i % n + 1);
  }
  return e;
}

// An r x c grid: no triangles.
inline EdgeList grid_graph(uint32_t r, uint32_t c) {
  EdgeList e;
  for (uint32_t i = 0; i < r; ++i)
    for (uint32_t j = 0; j < c; ++j) {
      if (j + 1 < c) e.emplace_back(i * c + j, i * c + j + 1);
      if (i + 1 < r) e.emplace_back(i * c + j, (i + 1) * c + j);
    }
  return e;
}

}  // namespace gpudict::testing
