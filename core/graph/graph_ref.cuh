// gpudict::graph_ref: a graph_map's reads for a caller's kernels (CUDA code;
// include after graph_map.hpp or alone): edge exists (with its weight), a
// vertex's degree, and its neighbours.
//
// Trivially copyable: pass it to a kernel by value (graph.ref()). find and
// for_each_neighbor are served by a tile of 4 lanes (cooperative_groups
// thread_block_tile<4>), as slab_hash_ref's operations are: the tile reads
// one 128-byte slab per step, 32 bytes a lane, and every lane of the tile
// calls with the same arguments. degree is one load, by any thread.
//
// Read-only, by design: an insert may have to move a vertex to more
// buckets (graph_map re-sizes the vertices whose degree outgrows their
// table before the inserts run), which a kernel cannot do, so updates go
// through graph_map's batched calls. A ref reads the graph as the last
// call left it (graph_map::view says how long it stays valid); reads may
// run in any number of kernels at once.
//
//   auto tile = cg::tiled_partition<4>(cg::this_thread_block());
//   unsigned long long sum = 0;  // per lane: the weights of its share of u's edges
//   ref.for_each_neighbor(tile, u, [&](uint32_t v, uint64_t w) { sum += w; });
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "core/graph/graph_map.hpp"
#include "core/slabhash/slab_hash_ref.cuh"

namespace gpudict {

class graph_ref {
 public:
  __host__ __device__ explicit graph_ref(const graph_view& v)
      : edges_(v.table), dir_(static_cast<const uint2*>(v.directory)), vertices_(v.vertices), degree_(v.degree) {
    edges_.t_.vertex.dir = dir_;  // each edge (u, v) in u's own buckets, hashed by v
    edges_.t_.vertex.vertices = vertices_;
  }

  // Whether the edge (u, v) is present; its weight (set variant: 0) into
  // *weight when not null.
  template <class Parent>
  __device__ bool find(const cooperative_groups::thread_block_tile<4, Parent>& tile, std::uint32_t u, std::uint32_t v,
                       std::uint64_t* weight = nullptr) const {
    return edges_.find(tile, (static_cast<std::uint64_t>(u) << 32) | v, weight);
  }

  // u's live edges (0 for a vertex beyond the capacity: it has none).
  __device__ std::uint32_t degree(std::uint32_t u) const { return u < vertices_ ? degree_[u] : 0u; }

  // Calls f(v, weight) once for every edge (u, v), on the lane of the tile
  // that holds it (the set variant passes weight 0), in table order. Each
  // lane sees its own share of the edges: combine the lanes' results
  // (a shuffle, a warp reduction) when the tile needs them all.
  template <class Parent, class F>
  __device__ void for_each_neighbor(const cooperative_groups::thread_block_tile<4, Parent>&, std::uint32_t u,
                                    F&& f) const {
    if (u >= vertices_) return;
    if (edges_.mode_ == slabhash::Mode::Set)
      walk<slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Set>>(u, f);
    else
      walk<slabhash::LayoutFor<std::uint64_t, std::uint64_t, slabhash::Mode::Map>>(u, f);
  }

  __host__ __device__ std::uint32_t vertex_capacity() const { return vertices_; }

 private:
  // Every slab of u's buckets and their chains; in each, this lane's
  // claimed slots whose alive bit is set (deleted edges keep their key,
  // their alive bit cleared, until a cleanup).
  template <class L, class F>
  __device__ void walk(std::uint32_t u, F& f) const {
    const slabhash::TileLanes ln;
    const uint2 d = dir_[u];
    const slabhash::TableRef<std::uint64_t>& t = edges_.t_;
    for (std::uint32_t b = d.x; b < d.x + d.y; ++b) {
      const slabhash::Slab* cur = t.base + b;
      for (;;) {
        const slabhash::LaneWords w = L::load(cur, ln.tl);
        const std::uint32_t state = slabhash::tile_state(w, ln.tmask, ln.tbase);
        const std::uint32_t next = slabhash::tile_next(w, ln.tmask, ln.tbase);
#pragma unroll
        for (unsigned j = 0; j < L::kPerLane; ++j) {
          if (!L::valid(ln.tl, j)) continue;
          const std::uint64_t key = L::key(w, j);
          if (key != slabhash::kEmptyKeyOf<std::uint64_t> && ((state >> (ln.tl * L::kPerLane + j)) & 1u))
            f(static_cast<std::uint32_t>(key), static_cast<std::uint64_t>(L::value(w, j)));
        }
        if (next == slabhash::kNullSlab) break;
        cur = t.pool.slab(next);
      }
    }
  }

  slab_hash_ref<std::uint64_t, std::uint64_t> edges_;
  const uint2* dir_ = nullptr;
  std::uint32_t vertices_ = 0;
  const std::uint32_t* degree_ = nullptr;
};

}  // namespace gpudict
