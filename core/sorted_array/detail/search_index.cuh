// Searching the fence index (layout.cuh), and the generic kernel that runs one
// batch of searches: the lookup, count, range, successor and update-classify
// kernels are all this kernel with a different Op.
//
// lower_bound(q) (keys < q) / upper_bound(q) (keys <= q):
//   1. top level (<= 4096 entries, staged in shared memory): binary search,
//      c = number of its entries counting before q;
//   2. each lower level: the answer lies in the 32-entry window starting at
//      32 (c - 1) (0 when c == 0): read that aligned window (one 128-byte line
//      for u32) and c = window start + entries of the window counting before
//      q (entries past the level's end do not count);
//   3. at level 0, c is the answer.
// Step 2 is done by a group of 8 lanes (u32; 16 for u64): each lane loads 16
// bytes of the window, counts, and the group adds up with 3 shuffles, so one
// warp instruction reads four whole lines. A group serves its 8 lanes'
// searches two at a time (two lines in flight per group).
// With u64 keys the levels keep fanout 32 (layout.cuh), so a search has the
// same number of levels as with u32 keys; a window is 256 bytes (two lines):
// a group is 16 lanes, each loading 2 keys in its 16 bytes and adding up with
// 4 shuffles, one warp instruction reads two whole windows (four lines, as
// for u32), and a group serves its 16 lanes' searches two at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/common/cuda_check.hpp"
#include "core/common/device_search.cuh"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/sorted_array/detail/layout.cuh"

namespace gpudict::sa {

using gpudict::count_before;  // core/common/device_search.cuh
using gpudict::counts_before;

// Entries of an indexed array that count before q, by one thread: a binary
// search of the index's top, then one kFanout-entry window per level below
// (descend's scheme, one thread per search instead of a lane group: the
// window is one 128-byte line for u32 keys, two for u64, so its binary search
// after the first load hits L1). A binary search of the keys alone is a
// chain of ~24 dependent loads at 2^24 keys; the index replaces most of them
// by loads that hit L1 (the LSM cleanup's partition uses it).
template <class K>
__device__ __forceinline__ uint32_t count_before_indexed(const SearchView<K>& ix, K q, bool upper) {
  const int top = ix.top;
  uint32_t c = count_before(ix.level[top], ix.size[top], q, upper);
  for (int l = top - 1; l >= 0; --l) {
    const uint32_t start = c == 0 ? 0u : (c - 1u) * kFanout;
    c = start + count_before(ix.level[l] + start, min(kFanout, ix.size[l] - start), q, upper);
  }
  return c;
}

template <class K>
struct WindowShape {
  static constexpr int kPerLoad = 16 / static_cast<int>(sizeof(K));  // entries per 16-byte load
  static constexpr int kGroup = static_cast<int>(kFanout) / kPerLoad;  // lanes per window
  static_assert(kPerLoad >= 1 && kGroup >= 1 && kGroup <= 32, "unsupported key width");
};

// Q searches of one lane group, refined from the level below the top down to
// level 0. c[u]: on entry the count at the top level, on exit at level 0.
// All lanes of the group hold the same q, upper, c. `lig`: lane in group.
template <class K, int Q>
__device__ __forceinline__ void descend(const SearchView<K>& ix, const K (&q)[Q], const bool (&upper)[Q],
                                        uint32_t (&c)[Q], unsigned lig) {
  constexpr int E = WindowShape<K>::kPerLoad;
  constexpr int G = WindowShape<K>::kGroup;
  for (int l = ix.top - 1; l >= 0; --l) {
    const K* level = ix.level[l];
    const uint32_t size = ix.size[l];
    uint32_t first[Q];
    uint4 raw[Q];
#pragma unroll
    for (int u = 0; u < Q; ++u) {
      // c <= ceil(size / 32), so the window ends inside the padded level.
      c[u] = c[u] ? (c[u] - 1) * kFanout : 0u;
      first[u] = c[u] + lig * E;
      raw[u] = __ldg(reinterpret_cast<const uint4*>(level + first[u]));
    }
#pragma unroll
    for (int u = 0; u < Q; ++u) {
      K e[E];
      memcpy(e, &raw[u], sizeof(raw[u]));
      uint32_t cnt = 0;
#pragma unroll
      for (int x = 0; x < E; ++x)
        cnt += static_cast<uint32_t>((first[u] + x < size) & counts_before(e[x], q[u], upper[u]));
      c[u] += group_sum<G>(cnt);
    }
  }
}

// The warp's searches: lane L holds S of them (q[s], upper[s]) with pos[s] =
// its count at the top level; on return pos[s] is the count at level 0 (the
// lower or upper bound). All 32 lanes must call it.
template <class K, int S>
__device__ __forceinline__ void warp_refine(const SearchView<K>& ix, const K (&q)[S], const bool (&upper)[S],
                                            uint32_t (&pos)[S]) {
  constexpr int G = WindowShape<K>::kGroup;
  constexpr int kQ = 2;  // searches a group runs at once
  static_assert((G * S) % kQ == 0, "group searches must split into pairs");
  if (ix.top == 0) return;
  const unsigned lane = lane_id();
  const unsigned lig = lane % G;
  const unsigned gbase = lane - lig;
#pragma unroll
  for (int r = 0; r < G * S; r += kQ) {
    K qq[kQ];
    bool uu[kQ];
    uint32_t cc[kQ];
#pragma unroll
    for (int u = 0; u < kQ; ++u) {
      const int owner = (r + u) / S, s = (r + u) % S;
      qq[u] = __shfl_sync(kFullMask, q[s], gbase + owner);
      uu[u] = __shfl_sync(kFullMask, static_cast<int>(upper[s]), gbase + owner) != 0;
      cc[u] = __shfl_sync(kFullMask, pos[s], gbase + owner);
    }
    descend<K, kQ>(ix, qq, uu, cc, lig);
#pragma unroll
    for (int u = 0; u < kQ; ++u) {
      const int owner = (r + u) / S, s = (r + u) % S;
      if (lig == static_cast<unsigned>(owner)) pos[s] = cc[u];
    }
  }
}

inline constexpr int kSearchThreads = 256;
inline constexpr int kSearchMinBlocks = 8;  // 2048 threads per SM: <= 32 registers
// u64 keys: 64-bit queries, window keys and top entries need a few more
// registers (at 32 the two-search ops spilled 8 bytes): 1536 threads per SM,
// <= 40 registers.
inline constexpr int kSearchMinBlocksWide = 6;

// Blocks per SM the search kernel is compiled for: Op::kMinBlocks where an
// Op's finish needs more registers (the B-Tree's leaf directory reads a whole
// node), else kSearchMinBlocks (kSearchMinBlocksWide for u64 keys).
template <class K, class Op, class = void>
struct SearchMinBlocks {
  static constexpr int value = sizeof(K) > 4 ? kSearchMinBlocksWide : kSearchMinBlocks;
};
template <class K, class Op>
struct SearchMinBlocks<K, Op, std::void_t<decltype(Op::kMinBlocks)>> {
  static constexpr int value = Op::kMinBlocks;
};

// One batch of `items` items, each with Op::kSearches searches. Persistent:
// each block stages the top level in shared memory once, then its warps take
// 32 items at a time. Op provides
//   setup(item, q[S], upper[S])               the searches of an item
//   finish(view, item, q[S], pos[S])          consume their results
template <class K, class V, class Op>
__global__ void __launch_bounds__(kSearchThreads, SearchMinBlocks<K, Op>::value)
    search_kernel(const __grid_constant__ ArrayView<K, V> a, const __grid_constant__ Op op, uint32_t items) {
  constexpr int S = Op::kSearches;
  extern __shared__ uint4 search_smem[];
  K* top = reinterpret_cast<K*>(search_smem);
  const uint32_t top_size = a.ix.size[a.ix.top];
  const K* top_src = a.ix.level[a.ix.top];
  for (uint32_t t = threadIdx.x; t < top_size; t += blockDim.x) top[t] = top_src[t];
  __syncthreads();

  const uint32_t warps = gridDim.x * warps_per_block();
  for (uint64_t w = static_cast<uint64_t>(blockIdx.x) * warps_per_block() + warp_in_block(); w * kWarpSize < items;
       w += warps) {
    const uint64_t item64 = w * kWarpSize + lane_id();
    const bool active = item64 < items;
    const uint32_t item = static_cast<uint32_t>(item64);
    K q[S];
    bool upper[S];
    uint32_t pos[S];
#pragma unroll
    for (int s = 0; s < S; ++s) {
      q[s] = K(0);
      upper[s] = false;
    }
    if (active) op.setup(item, q, upper);
#pragma unroll
    for (int s = 0; s < S; ++s) pos[s] = count_before(top, top_size, q[s], upper[s]);
    warp_refine<K, S>(a.ix, q, upper, pos);
    if (active) op.finish(a, item, q, pos);
  }
}

template <class K, class V, class Op>
void launch_search(const ArrayView<K, V>& a, const Op& op, uint64_t items, cudaStream_t stream, const char* name) {
  if (items == 0) return;
  const size_t smem = static_cast<size_t>(a.ix.size[a.ix.top]) * sizeof(K);
  auto kernel = search_kernel<K, V, Op>;
  const unsigned grid = persistent_grid(kernel, kSearchThreads, smem, items, kSearchThreads);
  kernel<<<grid, kSearchThreads, smem, stream>>>(a, op, static_cast<uint32_t>(items));
  GPUDICT_CHECK_LAUNCH(name);
}

// Writes fence levels from_level + 1 .. top of st.layout from level
// from_level (0: the keys; 1: the level-1 fences the merge wrote) and zeroes
// the padding of the key array and of every fence level.
template <class K, class V>
void build_fence_levels(ArrayStore<K, V>& st, int from_level, cudaStream_t stream);
// The same for several arrays (the LSM's new levels) in one launch, or a few
// when they have more than 32 segments (padding and fence levels) in all.
template <class K, class V>
void build_fence_levels(ArrayStore<K, V>* const* stores, int count, int from_level, cudaStream_t stream);

}  // namespace gpudict::sa
