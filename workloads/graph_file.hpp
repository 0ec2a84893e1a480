// Graph files as workloads (docs/workload-format.md, "Graph files"): Matrix
// Market coordinate files (.mtx, the format of the SuiteSparse and DIMACS
// graph collections), edge lists (.el, .edges) and binary COO (.coo). A
// graph is a dictionary of edges: the edge (u, v) is the 64-bit key
// u * 2^32 + v.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace gpudict {

struct GraphEdges {
  std::vector<uint64_t> keys;    // u * 2^32 + v, in file order (a symmetric entry: (u, v) then (v, u))
  std::vector<uint64_t> values;  // the weight's bits (below), 0 for a pattern file
  uint64_t vertices = 0;         // Matrix Market: max(rows, columns); an edge list: the largest id + 1
  bool symmetric = false;        // Matrix Market "symmetric": each off-diagonal entry stored both ways
  std::string format;            // "mtx", "edge-list" or "coo"
};

// Whether `path` is a graph file: a name ending in .mtx, .el, .edges or .coo.
bool is_graph_file(const std::string& path);

// Reads a graph file. Matrix Market: the banner "%%MatrixMarket matrix
// coordinate FIELD SYMMETRY" with FIELD pattern, integer or real and
// SYMMETRY general or symmetric, '%' comment lines, the size line "rows
// columns entries", then `entries` lines "i j [w]" with 1-based indices.
// Edge list: lines "u v [w]" with 0-based ids, '#' and '%' comment lines; its
// weights are reals when the first edge's has '.', 'e' or 'E'. Binary COO:
// the 24-byte header (magic "GPUDCOO1", u32 flags, u32 reserved 0, u64
// edges), then per edge u32 src, u32 dst and (flag bit 0) a u64 weight,
// little-endian.
// A weight's value: an integer as its 64-bit two's complement, a real as
// the bits of its IEEE-754 double. Throws InputError("PATH:LINE: what
// (expected)") for anything else.
GraphEdges read_graph_file(const std::string& path);

// A graph file as the workload: every edge as the initial contents (u64
// keys and values; a key given twice keeps its later value), then one phase
// "edge-exists": lookups of every edge, in batches of kLookupAllBatch.
std::unique_ptr<StepSource> open_graph_file_workload(const std::string& path);
WorkloadSummary summarize_graph_file_workload(const std::string& path);

}  // namespace gpudict
