// The graph's own kernels (internal): the vertex directory (sizing each
// vertex's buckets from its degree, growing it) and the walks behind degree
// and neighbours. Edge inserts, deletes and lookups are the slab hash's
// batch kernel, routed by vertex (table_ref.cuh, VertexRoutes).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/warp.cuh"
#include "core/slabhash/detail/slab_layout.cuh"
#include "core/slabhash/detail/table_ref.cuh"

namespace gpudict::graph {

using slabhash::kTile;

// *out = the largest source vertex among the inserts (erase[i] false; erase
// null: every key), as an atomicMax over warps. *out starts at 0 and `any`
// is raised when there is at least one insert.
__global__ void max_source_kernel(const uint64_t* keys, const bool* erase, uint64_t n, unsigned* out, unsigned* any) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  unsigned m = 0;
  bool seen = false;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (erase && erase[i]) continue;
    const unsigned u = static_cast<unsigned>(keys[i] >> 32);
    m = u > m ? u : m;
    seen = true;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(kFullMask, m, o));
  const bool warp_seen = __any_sync(kFullMask, seen);
  if (lane_id() == 0 && warp_seen) {
    atomicMax(out, m);
    atomicOr(any, 1u);
  }
}

// deg[u] += 1 for every edge (u, v) (duplicates counted: an estimate that
// only sizes buckets).
__global__ void degree_kernel(const uint64_t* keys, uint64_t n, uint32_t* deg) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(deg + (keys[i] >> 32), 1u);
}

// Buckets of each vertex: max(1, ceil(deg / per_bucket)).
__global__ void buckets_kernel(const uint32_t* deg, uint64_t vertices, double per_bucket, uint64_t* buckets) {
  const uint64_t u = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u >= vertices) return;
  const double b = ceil(static_cast<double>(deg[u]) / per_bucket);
  buckets[u] = b < 1.0 ? 1u : static_cast<uint64_t>(b);
}

// dir[u] = (first bucket, buckets) from the exclusive sum `first`; *total =
// all buckets.
__global__ void directory_kernel(const uint64_t* first, const uint64_t* buckets, uint64_t vertices, uint2* dir,
                                 unsigned long long* total) {
  const uint64_t u = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u >= vertices) return;
  dir[u] = make_uint2(static_cast<uint32_t>(first[u]), static_cast<uint32_t>(buckets[u]));
  if (u == vertices - 1) *total = first[u] + buckets[u];
}

// New vertices [from, to): one bucket each, at first_bucket + (u - from).
__global__ void extend_directory_kernel(uint2* dir, uint64_t from, uint64_t to, uint64_t first_bucket) {
  const uint64_t u = from + static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (u >= to) return;
  dir[u] = make_uint2(static_cast<uint32_t>(first_bucket + (u - from)), 1u);
}

// Degree and neighbours, as a flat list of work items: one item per
// (query, bucket of the query's vertex), each a chain walked by a tile of 4
// lanes. A hub's hundreds of buckets spread over as many tiles as a
// hundred degree-1 vertices would, instead of one tile walking them all.
//   block_buckets_kernel  buckets of each query's vertex (0: absent vertex,
//                         or not a vertex block: flagged in *bad)
//   (exclusive sum: start[q], the query's first item; start[n] = items)
//   bucket_walk_kernel    per item: its chain's live edges counted (into
//                         item_counts and/or added to the query's count), or
//                         written at pos[item] (the fill pass)
//   (exclusive sum of the item counts: pos; offsets[q] = pos[start[q]])
// The walks only read: the graph runs them when no update is in flight.
struct BlockQueries {
  const uint64_t* lo = nullptr;
  const uint64_t* hi = nullptr;
  uint64_t n = 0;
  unsigned long long* bad = nullptr;  // the lowest index of a query that is not a whole block
};

// buckets[q] for q in [0, n), and buckets[n] = 0 (the sum's last entry).
__global__ void block_buckets_kernel(const slabhash::TableRef<uint64_t> t, const BlockQueries q, uint64_t* buckets) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > q.n) return;
  if (i == q.n) {
    buckets[i] = 0;
    return;
  }
  const uint64_t lo = q.lo[i];
  uint64_t b = 0;
  if ((lo & 0xFFFFFFFFull) != 0 || q.hi[i] != (lo | 0xFFFFFFFFull)) {
    atomicMin(q.bad, static_cast<unsigned long long>(i));
  } else {
    const uint32_t u = static_cast<uint32_t>(lo >> 32);
    if (u < t.vertex.vertices) b = t.vertex.dir[u].y;
  }
  buckets[i] = b;
}

struct BucketWalk {
  const uint64_t* lo = nullptr;     // the queries' blocks
  const uint64_t* start = nullptr;  // n + 1 entries: each query's first item
  uint64_t n = 0;
  uint64_t items = 0;
  uint64_t* item_counts = nullptr;             // count pass: each item's live edges (or null)
  unsigned long long* query_counts = nullptr;  // count pass: added to the query's (or null)
  const uint64_t* pos = nullptr;               // fill pass: where each item's edges go
  uint64_t* keys_out = nullptr;
  uint64_t* values_out = nullptr;
};

template <class L>
__global__ void bucket_walk_kernel(const slabhash::TableRef<uint64_t> t, const BucketWalk w) {
  using namespace slabhash;
  const unsigned lane = lane_id();
  const unsigned tl = lane & (kTile - 1);
  const unsigned tbase = lane & ~(kTile - 1);
  const unsigned tmask = group_mask<kTile>(lane);
  const uint64_t tiles = static_cast<uint64_t>(gridDim.x) * blockDim.x / kTile;
  const bool fill = w.pos != nullptr;
  for (uint64_t i = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kTile; i < w.items;
       i += tiles) {
    // The item's query: the last q with start[q] <= i (then start[q + 1] > i).
    uint64_t a = 0, b = w.n;  // q in [a, b)
    while (b - a > 1) {
      const uint64_t m = (a + b) / 2;
      if (w.start[m] <= i)
        a = m;
      else
        b = m;
    }
    const uint32_t u = static_cast<uint32_t>(w.lo[a] >> 32);
    const Slab* s = t.base + t.vertex.dir[u].x + (i - w.start[a]);
    uint64_t acc = 0;
    const uint64_t at = fill ? w.pos[i] : 0;
    for (;;) {
      const LaneWords v = L::load(s, tl);
      const uint32_t state = tile_state(v, tmask, tbase);
      const uint32_t next = tile_next(v, tmask, tbase);
      uint32_t live = 0;  // bit j: this lane's slot j holds a live edge (alive bit set, key not empty)
#pragma unroll
      for (unsigned j = 0; j < L::kPerLane; ++j) {
        if (!L::valid(tl, j)) continue;
        const unsigned slot = tl * L::kPerLane + j;
        if (((state >> slot) & 1u) && L::key(v, j) != kEmptyKeyOf<uint64_t>) live |= 1u << j;
      }
      // This lane's first position among the tile's live slots (lanes in
      // order), and the tile's total.
      const uint32_t mine = __popc(live);
      uint32_t incl = mine;
#pragma unroll
      for (unsigned o = 1; o < kTile; o <<= 1) {
        const uint32_t x = __shfl_up_sync(tmask, incl, o, kTile);
        if (tl >= o) incl += x;
      }
      const uint32_t total = __shfl_sync(tmask, incl, tbase + kTile - 1);
      if (fill) {
        uint64_t p = at + acc + (incl - mine);
#pragma unroll
        for (unsigned j = 0; j < L::kPerLane; ++j) {
          if (!((live >> j) & 1u)) continue;
          w.keys_out[p] = L::key(v, j);
          if (w.values_out) w.values_out[p] = L::kPairs ? static_cast<uint64_t>(L::value(v, j)) : 0ull;
          ++p;
        }
      }
      acc += total;
      if (next == kNullSlab) break;
      s = t.pool.slab(next);
    }
    if (!fill && tl == 0) {
      if (w.item_counts) w.item_counts[i] = acc;
      if (w.query_counts && acc) atomicAdd(w.query_counts + a, static_cast<unsigned long long>(acc));
    }
  }
}

// offsets[q] = pos[start[q]] for q in [0, n]: each query's first edge, and
// (q = n) the total.
__global__ void block_offsets_kernel(const uint64_t* start, const uint64_t* pos, uint64_t n, uint64_t* offsets) {
  const uint64_t q = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q <= n) offsets[q] = pos[start[q]];
}

}  // namespace gpudict::graph
