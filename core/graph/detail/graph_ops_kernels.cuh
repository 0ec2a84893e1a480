// The graph's whole-table kernels (internal): vertex deletion (Algorithm 5.2
// of Awad's dissertation, as a sweep) and the edge list that triangle
// counting sorts. Both read every bucket chain of the arena, one thread per
// chain: every slot of a chain is an edge of the chain's one source vertex.
//
// They run alone on the table's stream (no batch kernel in flight), so
// plain loads and stores see the table as the last kernel left it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/device_search.cuh"
#include "core/slabhash/detail/slab_layout.cuh"
#include "core/slabhash/detail/table_ref.cuh"

namespace gpudict::graph {

// A slab's 32 words in 8 16-byte loads (slabs are 128-byte aligned).
struct SlabWords {
  uint32_t w[slabhash::kSlabWords];
};
__device__ __forceinline__ SlabWords load_slab(const slabhash::Slab* s) {
  SlabWords r;
  const uint4* p = reinterpret_cast<const uint4*>(s);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint4 x = p[i];
    r.w[4 * i] = x.x;
    r.w[4 * i + 1] = x.y;
    r.w[4 * i + 2] = x.z;
    r.w[4 * i + 3] = x.w;
  }
  return r;
}
// Slot `slot`'s 64-bit key: the first 8 bytes of a 16-byte pair slot, or an
// 8-byte key slot (slab_layout.cuh); words 30 and 31 are state and next.
template <class L>
__device__ __forceinline__ uint64_t slot_key(const SlabWords& v, unsigned slot) {
  const unsigned w = (L::kPairs ? 4 : 2) * slot;
  return static_cast<uint64_t>(v.w[w]) | (static_cast<uint64_t>(v.w[w + 1]) << 32);
}
// Bit s: slot s holds a live edge (claimed, alive bit set).
template <class L>
__device__ __forceinline__ uint32_t live_slots(const SlabWords& v) {
  uint32_t live = 0;
#pragma unroll
  for (unsigned slot = 0; slot < L::kSlots; ++slot)
    if (((v.w[30] >> slot) & 1u) && slot_key<L>(v, slot) != slabhash::kEmptyKeyOf<uint64_t>) live |= 1u << slot;
  return live;
}

// The vertices a vertex delete names: those below the capacity as bits of
// `marks`; those at or beyond it (no buckets, but they may be the target
// of edges) in `far`, sorted, `nfar` of them.
struct Deleted {
  const uint32_t* marks = nullptr;
  uint32_t vertices = 0;
  const uint32_t* far = nullptr;
  uint32_t nfar = 0;
};

__device__ __forceinline__ bool marked(const Deleted& d, uint32_t u) {
  if (u < d.vertices) return (d.marks[u >> 5] >> (u & 31)) & 1u;
  return sorted_contains(d.far, d.nfar, u);
}

// ---------------------------------------------------------------- vertex deletion
//
//   mark_vertices_kernel   each batch vertex's bit in `marks`; each marked
//                          vertex listed once (a batch may name one twice)
//   sweep_kernel<L>        every chain of an unmarked vertex loses its edges
//                          to marked vertices (alive bits cleared: tombstones,
//                          as an edge delete leaves them), its degree lowered
//   release_chains_kernel  (graph_kernels.cuh) the marked vertices' chains
//                          made pristine, their pool slabs freed
//   clear_vertices_kernel  their degrees 0: they keep their buckets (and id)
//
// A sweep of every chain rather than Algorithm 5.2's walk of the deleted
// vertices' neighbours: it finds the edges *into* a deleted vertex in a
// directed graph too (the paper's "follow-up lookup"), and two adjacent
// deleted vertices never write into each other's chains while they are
// freed (the race of Algorithm 5.2 as written).

// blocks[i] = u * 2^32 names vertex u; a block start with a low half is
// flagged in *bad (lowest index). Vertices at or beyond `vertices` have no
// buckets (no edges from them) but may be targets: they go to far[] (count
// in counts[1]; the caller sorts them); the others are marked, and listed
// once each (counts[0]).
__global__ void mark_vertices_kernel(const uint64_t* blocks, uint64_t n, uint32_t vertices, uint32_t* marks,
                                     uint32_t* listed, uint32_t* far, unsigned* counts, unsigned long long* bad) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t k = blocks[i];
    if (k & 0xFFFFFFFFull) {
      atomicMin(bad, static_cast<unsigned long long>(i));
      continue;
    }
    const uint32_t u = static_cast<uint32_t>(k >> 32);
    if (u >= vertices) {
      far[atomicAdd(counts + 1, 1u)] = u;
      continue;
    }
    const uint32_t bit = 1u << (u & 31);
    if (!(atomicOr(marks + (u >> 5), bit) & bit)) listed[atomicAdd(counts, 1u)] = u;
  }
}

// One thread per bucket chain (buckets: the hashed ones). out[0] += edges
// killed.
template <class L>
__global__ void sweep_kernel(const slabhash::TableRef<uint64_t> t, uint64_t buckets, const Deleted d,
                             uint32_t* degree, unsigned long long* out) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= buckets) return;
  slabhash::Slab* s = t.base + i;
  uint32_t killed = 0;
  uint32_t source = 0;
  for (;;) {
    const SlabWords v = load_slab(s);
    const uint32_t live = live_slots<L>(v);
    if (live) {
      // Every edge of the chain has the same source: a marked one's chain
      // is released whole, later.
      source = static_cast<uint32_t>(slot_key<L>(v, __ffs(live) - 1) >> 32);
      if (marked(d, source)) return;
      uint32_t kill = 0;
#pragma unroll
      for (unsigned slot = 0; slot < L::kSlots; ++slot)
        if (((live >> slot) & 1u) && marked(d, static_cast<uint32_t>(slot_key<L>(v, slot))))
          kill |= 1u << slot;
      if (kill) {
        s->w[30] = v.w[30] & ~kill;
        killed += __popc(kill);
      }
    }
    if (v.w[31] == slabhash::kNullSlab) break;
    s = t.pool.slab(v.w[31]);
  }
  if (killed) {
    atomicSub(degree + source, killed);
    atomicAdd(out, static_cast<unsigned long long>(killed));
  }
}

__global__ void clear_vertices_kernel(const uint32_t* listed, uint64_t n, uint32_t* degree, uint32_t* approx) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  degree[listed[i]] = 0;
  approx[listed[i]] = 0;
}

// ---------------------------------------------------------------- triangle counting
//
// The undirected edge list: every live edge (u, v), u != v, as the word
// min(u, v) * 2^32 + max(u, v), one thread per chain (counted, then written
// at the exclusive sum of the counts). The caller sorts and deduplicates it,
// renumbers its ends densely and orients it by degree (graph_map.cu).

template <class L, bool kWrite>
__global__ void arena_edges_kernel(const slabhash::TableRef<uint64_t> t, uint64_t buckets, uint64_t* counts,
                                   const uint64_t* offsets, uint64_t* edges) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= buckets) return;
  const slabhash::Slab* s = t.base + i;
  uint64_t at = kWrite ? offsets[i] : 0;
  for (;;) {
    const SlabWords v = load_slab(s);
    const uint32_t live = live_slots<L>(v);
#pragma unroll
    for (unsigned slot = 0; slot < L::kSlots; ++slot) {
      if (!((live >> slot) & 1u)) continue;
      const uint64_t k = slot_key<L>(v, slot);
      const uint32_t a = static_cast<uint32_t>(k >> 32), b = static_cast<uint32_t>(k);
      if (a == b) continue;
      if (kWrite) edges[at] = a < b ? (static_cast<uint64_t>(a) << 32) | b : (static_cast<uint64_t>(b) << 32) | a;
      ++at;
    }
    if (v.w[31] == slabhash::kNullSlab) break;
    s = t.pool.slab(v.w[31]);
  }
  if (!kWrite) counts[i] = at;
}

// ends[2i], ends[2i + 1]: the two ends of undirected edge i.
__global__ void endpoints_kernel(const uint64_t* edges, uint64_t m, uint32_t* ends) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += stride) {
    ends[2 * i] = static_cast<uint32_t>(edges[i] >> 32);
    ends[2 * i + 1] = static_cast<uint32_t>(edges[i]);
  }
}

// The position of id in ids[0, n) (sorted, unique; it is there).
__device__ __forceinline__ uint32_t index_of(const uint32_t* ids, uint64_t n, uint32_t id) {
  return static_cast<uint32_t>(count_before<uint32_t, uint64_t>(ids, n, id, false));
}

// Each edge's ends replaced by their indices among the vertex ids (which
// keeps the edges sorted and unique), and deg[index] += 1 for each end.
__global__ void renumber_kernel(uint64_t* edges, uint64_t m, const uint32_t* ids, uint64_t nv, uint32_t* deg) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += stride) {
    const uint32_t a = index_of(ids, nv, static_cast<uint32_t>(edges[i] >> 32));
    const uint32_t b = index_of(ids, nv, static_cast<uint32_t>(edges[i]));
    edges[i] = (static_cast<uint64_t>(a) << 32) | b;
    atomicAdd(deg + a, 1u);
    atomicAdd(deg + b, 1u);
  }
}

// Each edge from its endpoint of lower (degree, id) to the higher, as
// from * 2^32 + to; out_degree[from] += 1. Orienting by degree bounds
// every out-list by sqrt(2m): a hub is never merged against each of its
// neighbours' lists.
__global__ void orient_kernel(const uint64_t* edges, uint64_t m, const uint32_t* deg, uint64_t* oriented,
                              uint64_t* out_degree) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += stride) {
    uint32_t a = static_cast<uint32_t>(edges[i] >> 32), b = static_cast<uint32_t>(edges[i]);
    if (deg[b] < deg[a] || (deg[b] == deg[a] && b < a)) {
      const uint32_t x = a;
      a = b;
      b = x;
    }
    oriented[i] = (static_cast<uint64_t>(a) << 32) | b;
    atomicAdd(reinterpret_cast<unsigned long long*>(out_degree + a), 1ull);
  }
}

// For every oriented edge (x, y) (sorted: the out-lists in CSR form, first =
// their offsets), |out(x) ∩ out(y)| by a merge of the two sorted lists,
// summed into *total. A triangle x -> y -> z with x -> z is counted once,
// at (x, y).
template <unsigned kThreads>
__global__ void __launch_bounds__(kThreads) triangle_count_kernel(const uint64_t* oriented, uint64_t m,
                                                                  const uint64_t* first,
                                                                  unsigned long long* total) {
  unsigned long long sum = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += stride) {
    const uint32_t x = static_cast<uint32_t>(oriented[i] >> 32), y = static_cast<uint32_t>(oriented[i]);
    uint64_t p = first[x], pe = first[x + 1], q = first[y], qe = first[y + 1];
    while (p < pe && q < qe) {
      const uint32_t a = static_cast<uint32_t>(oriented[p]), b = static_cast<uint32_t>(oriented[q]);
      sum += a == b;
      p += a <= b;
      q += b <= a;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
  if ((threadIdx.x & 31) == 0 && sum) atomicAdd(total, sum);
}

}  // namespace gpudict::graph
