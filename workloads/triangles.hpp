// The host side of the graph operations on edge keys u * 2^32 + v: exact
// triangle counting for the verifier's reference (reference.cpp), and the
// vertices a batch's vertex deletes name (reference and generator).
//
// The graph is the set of edge keys u * 2^32 + v. A triangle is a triangle
// of its undirected simple graph: {u, v} is an edge when u != v and (u, v)
// or (v, u) is present; each triangle counts once (docs/semantics.md).
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/batch.hpp"

namespace gpudict {

// The triangles of the graph whose edges are `edge_keys` (any order,
// duplicates and self-loops allowed; the vector is consumed). Runs on the
// host's threads (parallel.hpp); the result does not depend on their number.
uint64_t count_triangles(std::vector<uint64_t> edge_keys);

// The vertices the batch's vertex deletes name, sorted and unique.
std::vector<uint32_t> deleted_vertices(const Batch& batch);
// Whether edge key k runs from or to one of `vertices` (sorted).
bool touches_vertex(const std::vector<uint32_t>& vertices, uint64_t k);

}  // namespace gpudict
