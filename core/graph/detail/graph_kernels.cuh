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

// Degree and neighbours. A vertex's degree is kept exact by the batch
// kernel (VertexRoutes::degree), so a count reads it and a range knows its
// offsets before walking. The walk is a flat list of work items, one per
// (query, bucket of the query's vertex), each a chain walked by a tile of 4
// lanes: a hub's hundreds of buckets spread over as many tiles as a hundred
// degree-1 vertices would, instead of one tile walking them all.
//   block_degrees_kernel  each query's degree (0: absent vertex, or not a
//                         vertex block: flagged in *bad)
//   block_buckets_kernel  buckets of each query's vertex
//   (exclusive sum: start[q], the query's first item; start[n] = items)
//   bucket_walk_kernel    per item: its chain's live edges written at the
//                         query's offset plus a per-query cursor (a vertex's
//                         neighbours come in no set order)
// The walks only read the table: the graph runs them when no update is in
// flight.
struct BlockQueries {
  const uint64_t* lo = nullptr;
  const uint64_t* hi = nullptr;
  uint64_t n = 0;
  unsigned long long* bad = nullptr;  // the lowest index of a query that is not a whole block
};

// The query's vertex, or vertices (none) when the query is not a whole
// block (flagged) or names a vertex without buckets.
__device__ __forceinline__ uint32_t block_vertex(const slabhash::TableRef<uint64_t>& t, const BlockQueries& q,
                                                 uint64_t i) {
  const uint64_t lo = q.lo[i];
  if ((lo & 0xFFFFFFFFull) != 0 || q.hi[i] != (lo | 0xFFFFFFFFull)) {
    atomicMin(q.bad, static_cast<unsigned long long>(i));
    return t.vertex.vertices;
  }
  const uint32_t u = static_cast<uint32_t>(lo >> 32);
  return u < t.vertex.vertices ? u : t.vertex.vertices;
}

// counts[q] for q in [0, n), and counts[n] = 0 when `last` (a sum's last entry).
__global__ void block_degrees_kernel(const slabhash::TableRef<uint64_t> t, const BlockQueries q, uint64_t* counts,
                                     bool last) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > q.n || (i == q.n && !last)) return;
  if (i == q.n) {
    counts[i] = 0;
    return;
  }
  const uint32_t u = block_vertex(t, q, i);
  counts[i] = u < t.vertex.vertices ? t.vertex.degree[u] : 0u;
}

// buckets[q] for q in [0, n), and buckets[n] = 0.
__global__ void block_buckets_kernel(const slabhash::TableRef<uint64_t> t, const BlockQueries q, uint64_t* buckets) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > q.n) return;
  if (i == q.n) {
    buckets[i] = 0;
    return;
  }
  const uint32_t u = block_vertex(t, q, i);
  buckets[i] = u < t.vertex.vertices ? t.vertex.dir[u].y : 0u;
}

struct BucketWalk {
  const uint64_t* lo = nullptr;       // the queries' blocks
  const uint64_t* start = nullptr;    // n + 1 entries: each query's first item
  uint64_t n = 0;
  uint64_t items = 0;
  const uint64_t* offsets = nullptr;  // each query's first edge
  unsigned long long* cursor = nullptr;  // per query: edges placed so far (zeroed)
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
      // order), the tile's total, and its place in the query's list.
      const uint32_t mine = __popc(live);
      uint32_t incl = mine;
#pragma unroll
      for (unsigned o = 1; o < kTile; o <<= 1) {
        const uint32_t x = __shfl_up_sync(tmask, incl, o, kTile);
        if (tl >= o) incl += x;
      }
      const uint32_t total = __shfl_sync(tmask, incl, tbase + kTile - 1);
      unsigned long long at = 0;
      if (tl == kTile - 1 && total) at = atomicAdd(w.cursor + a, static_cast<unsigned long long>(total));
      at = __shfl_sync(tmask, at, tbase + kTile - 1);
      uint64_t p = w.offsets[a] + at + (incl - mine);
#pragma unroll
      for (unsigned j = 0; j < L::kPerLane; ++j) {
        if (!((live >> j) & 1u)) continue;
        w.keys_out[p] = L::key(v, j);
        if (w.values_out) w.values_out[p] = L::kPairs ? static_cast<uint64_t>(L::value(v, j)) : 0ull;
        ++p;
      }
      if (next == kNullSlab) break;
      s = t.pool.slab(next);
    }
  }
}

// Re-sizing a vertex whose table outgrew its buckets (5.3 suggests it): a
// vertex first named after the build has one bucket, and a hub that keeps
// receiving edges would otherwise grow one chain of thousands of slabs that
// every insert into it walks. approx[u] bounds u's degree from above (edges
// inserted since it was last counted); an insert call that takes it past
// twice what u's buckets are sized for lists u once, and *before* the
// insert the graph counts u's edges and, if they with the call's inserts
// need more buckets, moves them: a hub never grows a chain of thousands of
// slabs inside the call (every insert into it would walk the chain), and
// the call's own edges go straight to their new buckets. After the call,
// approx of the listed vertices is their exact degree again.
//
// approx[u] += 1 per insert of the call; u is listed when this passes
// limit(u) = max(2 * per_bucket * buckets(u), min_limit): chains twice as
// long as the load factor sizes them, and never for a few slabs (a vertex
// of one bucket keeps it until its chain is 4 slabs long).
__global__ void count_inserts_kernel(const uint64_t* keys, const bool* erase, uint64_t n, const uint2* dir,
                                     uint32_t vertices, double per_bucket, double min_limit, uint32_t* approx,
                                     uint32_t* listed, unsigned* count) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (erase && erase[i]) continue;
    const uint32_t u = static_cast<uint32_t>(keys[i] >> 32);
    if (u >= vertices) continue;  // (never: make_room grew the directory)
    const double limit = fmax(2.0 * per_bucket * dir[u].y, min_limit);
    const uint32_t old = atomicAdd(approx + u, 1u);
    if (old < limit && old + 1.0 >= limit) listed[atomicAdd(count, 1u)] = u;
  }
}

// lo/hi of the listed vertices' blocks (for count and range).
__global__ void vertex_blocks_kernel(const uint32_t* v, uint64_t n, uint64_t* lo, uint64_t* hi) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  lo[i] = static_cast<uint64_t>(v[i]) << 32;
  hi[i] = lo[i] | 0xFFFFFFFFull;
}

// For each listed vertex, with its exact degree d before the call: the
// degree it may reach, target = min(approx[u], d + extra) (approx counts
// the call's inserts; extra = the call's size bounds what churn of
// present edges adds to approx), and it moves when max(1, ceil(target /
// per_bucket)) is more than its buckets: moved[m] = u, buckets[m] = the
// new count.
__global__ void plan_moves_kernel(const uint32_t* listed, const uint64_t* degree, uint64_t n, const uint2* dir,
                                  double per_bucket, const uint32_t* approx, uint64_t extra, uint32_t* moved,
                                  uint64_t* buckets, unsigned* count) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t u = listed[i];
  const uint64_t d = degree[i];
  const uint64_t a = approx[u] > d ? approx[u] : d;
  const uint64_t target = a < d + extra ? a : d + extra;
  const double want = ceil(static_cast<double>(target) / per_bucket);
  if (want > dir[u].y) {
    const unsigned m = atomicAdd(count, 1u);
    moved[m] = u;
    buckets[m] = static_cast<uint64_t>(want);
  }
}

// approx[listed[i]] = its exact degree (after the call).
__global__ void set_approx_kernel(const uint32_t* listed, const uint64_t* degree, uint64_t n, uint32_t* approx) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  approx[listed[i]] = static_cast<uint32_t>(degree[i] < 0xFFFFFFFFull ? degree[i] : 0xFFFFFFFFull);
}

// Takes the moved vertices' chains out of the table, one thread per (vertex,
// bucket) item (start: each vertex's first item): every slab made pristine,
// the pool slabs freed. Counts the live and claimed slots and the freed
// slabs (out[0..2]). Runs alone: nothing else reads or writes the table.
template <class L>
__global__ void release_chains_kernel(const slabhash::TableRef<uint64_t> t, const uint32_t* moved,
                                      const uint64_t* start, uint64_t n, uint64_t items, unsigned long long* out) {
  using namespace slabhash;
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= items) return;
  uint64_t a = 0, b = n;  // the item's vertex: the last a with start[a] <= i
  while (b - a > 1) {
    const uint64_t m = (a + b) / 2;
    if (start[m] <= i)
      a = m;
    else
      b = m;
  }
  const uint2 d = t.vertex.dir[moved[a]];
  Slab* s = t.base + d.x + (i - start[a]);
  unsigned long long live = 0, claimed = 0, freed = 0;
  uint32_t addr = kNullSlab;  // the slab's pool address (the base slab has none)
  for (;;) {
    const uint32_t state = s->w[30];
    const uint32_t next = s->w[31];
    for (unsigned slot = 0; slot < L::kSlots; ++slot) {
      const unsigned w = (L::kPairs ? 4 : 2) * slot;  // a u64 key's words (16-byte pair slots, or 8-byte keys)
      const uint64_t key = static_cast<uint64_t>(s->w[w]) | (static_cast<uint64_t>(s->w[w + 1]) << 32);
      if (key == kEmptyKeyOf<uint64_t>) continue;
      ++claimed;
      if ((state >> slot) & 1u) ++live;
    }
    for (unsigned w = 0; w < kSlabWords; ++w) s->w[w] = 0xFFFFFFFFu;
    if (addr != kNullSlab) {
      free_slab(t.pool, addr);
      ++freed;
    }
    if (next == kNullSlab) break;
    addr = next;
    s = t.pool.slab(next);
  }
  if (claimed) {
    atomicAdd(out, live);
    atomicAdd(out + 1, claimed);
  }
  if (freed) atomicAdd(out + 2, freed);
}

// New directory entries of the moved vertices: buckets first[m] on from
// `base` (first: the exclusive sum of their bucket counts).
// (Their degrees restart at 0: inserting their edges again counts them.)
__global__ void move_directory_kernel(const uint32_t* moved, const uint64_t* first, const uint64_t* buckets,
                                      uint64_t n, uint64_t base, uint2* dir, uint32_t* degree) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  dir[moved[i]] = make_uint2(static_cast<uint32_t>(base + first[i]), static_cast<uint32_t>(buckets[i]));
  degree[moved[i]] = 0;
}

}  // namespace gpudict::graph
