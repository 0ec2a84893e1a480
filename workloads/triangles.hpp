// Exact triangle counting on the host, for the verifier's reference
// (reference.cpp) and the CPU backend's cross-check in the tests.
//
// The graph is the set of edge keys u * 2^32 + v. A triangle is a triangle
// of its undirected simple graph: {u, v} is an edge when u != v and (u, v)
// or (v, u) is present; each triangle counts once (docs/semantics.md).
#pragma once

#include <cstdint>
#include <vector>

namespace gpudict {

// The triangles of the graph whose edges are `edge_keys` (any order,
// duplicates and self-loops allowed; the vector is consumed). Runs on the
// host's threads (parallel.hpp); the result does not depend on their number.
uint64_t count_triangles(std::vector<uint64_t> edge_keys);

}  // namespace gpudict
