// gpudict::graph_map: the dynamic graph of Awad's dissertation (2022),
// chapter 5, as a library
// container (docs/graph.md): one slab hash table per vertex, on the slab
// hash's slabs, batch kernel and SlabAlloc pool (core/slabhash). Host code,
// no CUDA compiler needed to include it.
//
// An edge (u, v) is the 64-bit key u * 2^32 + v and its value a weight (the
// set variant stores none); vertex ids are below options.max_vertices
// (at most 2^31). Every call takes device arrays and a stream: it runs after
// the work queued on that stream before it, and returns when its results are
// in the output arrays. Several updates of one edge in one call: any one
// wins (docs/semantics.md). The graph is directed; an undirected graph is
// both directions of each edge, inserted together. Self-loops are edges
// like any other.
//
// Degree and neighbours are a count and a range over a vertex's block of
// keys [u * 2^32, u * 2^32 + 2^32 - 1]: the calls take exactly such blocks
// (anything else is an InputError), as an ordered map's count and range
// would, and list a vertex's neighbours in the order of its table, not
// sorted. Errors are thrown (core/common/errors.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/common/capacity_bounds.hpp"
#include "core/common/container_capabilities.hpp"
#include "core/common/device_timing.hpp"
#include "core/graph/options.hpp"
#include "core/slabhash/slab_hash_map.hpp"  // slab_hash_view

namespace gpudict {

using graph_options = graph::Options;

// A graph_map's figures (stats()).
struct graph_stats {
  std::uint64_t edges = 0;            // live edges
  std::uint64_t vertices = 0;         // vertex capacity: ids with buckets
  std::uint64_t buckets = 0;          // base slabs of all vertices
  std::uint64_t pool_slabs_used = 0;  // collision slabs in chains
  std::uint64_t pool_slabs = 0;       // the pool's capacity
  std::uint64_t pool_bytes = 0;
  std::uint64_t tombstones = 0;       // deleted edges' slots, until a cleanup
  std::uint64_t pool_growths = 0;
  std::uint64_t vertex_growths = 0;   // times the vertex capacity grew
  std::uint64_t vertex_moves = 0;     // vertices moved to more buckets (their chains had grown long)
  std::uint64_t moved_edges = 0;      // edges those moves inserted again
  std::uint64_t vertex_deletes = 0;   // vertices erase_vertices emptied
  std::uint64_t flushes = 0;
  std::uint64_t scratch_bytes = 0;
  std::uint64_t device_bytes = 0;     // everything: directory, base slabs, pool, scratch
  std::uint32_t slots_per_slab = 0;   // 7 edges with weights, 15 without
};

// The graph as a kernel sees it (graph_ref.cuh builds its ref from this):
// the slab hash that holds every vertex's edges, the vertex directory and
// the degrees.
struct graph_view {
  slab_hash_view table;                    // mode: map (weights) or set
  const void* directory = nullptr;         // per vertex: uint2 (first bucket, bucket count)
  std::uint32_t vertices = 0;              // vertex capacity: ids with buckets
  const std::uint32_t* degree = nullptr;   // per vertex: its live edges
};

class graph_ref;  // graph_ref.cuh

class graph_map {
 public:
  using key_type = std::uint64_t;     // an edge: u * 2^32 + v
  using mapped_type = std::uint64_t;  // its weight (set variant: 0)
  // unordered (count and range over whole vertex blocks only), no
  // snapshots, of several updates of an edge in one call any one wins; its
  // device ref (graph_ref.cuh) reads: edge exists, degree, neighbours.
  static constexpr container_capabilities capabilities{false, false, false, false, false, 4, 4};

  // An empty graph on `device` (-1: the current device); options are
  // validated (InputError naming the field).
  explicit graph_map(const graph_options& options = {}, int device = -1);
  ~graph_map();
  graph_map(graph_map&&) noexcept;
  graph_map& operator=(graph_map&&) noexcept;
  graph_map(const graph_map&) = delete;
  graph_map& operator=(const graph_map&) = delete;

  // A new graph of the n edges (a later duplicate's weight wins), each
  // vertex's buckets sized from its degree in them (options.load_factor).
  void build(const std::uint64_t* edges, const std::uint64_t* weights, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts each edge (a present edge gets the new weight; weights null: 0).
  void insert(const std::uint64_t* edges, const std::uint64_t* weights, std::uint64_t n, cudaStream_t stream = 0);
  // Deletes each edge; absent edges are no-ops.
  void erase(const std::uint64_t* edges, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts and deletes in one pass: erase[i] deletes edges[i], else it is
  // inserted with weights[i] (weights may be null when all are deletes).
  void update(const std::uint64_t* edges, const std::uint64_t* weights, const bool* erase, std::uint64_t n,
              cudaStream_t stream = 0);
  // Edge exists: found_out[i], weights_out[i] (0 when absent); either may be null.
  void find(const std::uint64_t* edges, std::uint64_t n, std::uint64_t* weights_out, bool* found_out,
            cudaStream_t stream = 0);
  // Degrees: counts_out[i] = the edges of the vertex whose block is
  // [lo[i], hi[i]] (lo[i] = u * 2^32, hi[i] = lo[i] + 2^32 - 1).
  void count(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n, std::uint64_t* counts_out,
             cudaStream_t stream = 0);
  // Neighbours: the edges (and weights) of each vertex block, in table
  // order, block after block: block i's at [offsets_out[i], offsets_out[i +
  // 1]) (n + 1 offsets, the last the total). Returns the total; the edges are
  // written only when it fits `capacity` (size the output with capacity 0).
  // offsets_out, edges_out and weights_out may be null.
  std::uint64_t range(const std::uint64_t* lo, const std::uint64_t* hi, std::uint64_t n, std::uint64_t* offsets_out,
                      std::uint64_t* edges_out, std::uint64_t* weights_out, std::uint64_t capacity,
                      cudaStream_t stream = 0);
  // Deletes each vertex (vertices[i] = u * 2^32, the first key of its
  // block; anything else is an InputError): every edge from u and every
  // edge to u. A vertex keeps its id and buckets; one named twice counts
  // once; one beyond vertex_capacity() has only edges into it to lose.
  void erase_vertices(const std::uint64_t* vertices, std::uint64_t n, cudaStream_t stream = 0);
  // The triangles of the undirected graph the edges form ({u, v} is an edge
  // when u != v and (u, v) or (v, u) is present), each counted once: exact.
  std::uint64_t triangle_count(cudaStream_t stream = 0);
  // Drops the deleted edges' slots: every chain rewritten compactly.
  void cleanup(cudaStream_t stream = 0);

  std::uint64_t size() const;             // live edges
  std::uint64_t vertex_capacity() const;  // ids with buckets: [0, vertex_capacity())
  graph_stats stats() const;
  const graph_options& options() const;
  std::uint64_t device_bytes_needed(const capacity_bounds& bounds) const;
  void set_timing(device_timing* timing);

  // The graph for a kernel's reads (graph_ref.cuh). Valid until the next
  // call on this graph that changes it (build, insert, erase, update,
  // erase_vertices, cleanup); a kernel reading it must not run while one
  // of them does.
  graph_view view();
  template <class R = graph_ref>
  R ref() {
    return R(view());
  }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace gpudict
