// One kernel for every per-item search over the levels of an LSM: lookups,
// successors, the count/range bounds and the update's presence count are this
// kernel with a different Op. Items (queries) are taken 32 at a time by a warp
// (persistent grid); the warp visits the occupied levels in rank order (the
// most recent first) and, per level, runs each item's searches:
//
//  1. the level's fence top (at most kLevelTopMax keys; staged in shared
//     memory once per block for the levels that fit kStageBudget, else read
//     from global memory) is binary searched: c = its entries before q;
//  2. shortcuts that need no more memory traffic: a level of at most
//     kLevelTopMax keys is its own top (c is the answer); c == 0 means
//     keys[0] >= q (lower) / > q (upper), the answer is 0; a q past the
//     level's last key (staged per block) answers n. Levels built by
//     build() and cleanup() hold disjoint key ranges, so most searches of a
//     query end here in every level but one; for a lookup (Op::kFilter), a
//     level whose filter (level_filter.cuh) rules the key out answers n;
//  3. the searches still open are compacted across the warp (a per-warp list
//     in shared memory) and refined down the fence levels by groups of 8
//     lanes, one aligned 128-byte window per fence level (sa::descend), two
//     searches per group at a time. Lanes whose item is resolved (a lookup
//     that found its key) cost nothing. With u64 keys a window is 256 bytes
//     (the same fanout 32) and a group 16 lanes: 2 groups per warp, 4
//     searches per round instead of 8.
//
// Op contract (all device functions; S = Op::kSearches, 1 or 2):
//   Key, Value                      the structure's key and value types (K, V)
//   kSearches, kUpper0, kUpper1     searches per item and level; whether search s
//                                   is an upper bound (keys <= q) or lower (keys < q)
//   kStopWhenDone                   wants() never turns true again once false: the
//                                   warp stops visiting levels when no lane wants
//   kFilter                         exact-match search (a lookup): a level whose
//                                   lookup filter rules the key out answers n
//   struct State                    per-item state in registers
//   setup(item, State&, q[S])
//   wants(const State&, s)          search s is needed at the next level
//   level(const LevelView&, rank, item, State&, q[S], pos[S], searched[S])
//                                   pos[s] = the bound in this level (if searched[s])
//   finish(const LsmView&, item, const State&)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/lsm/detail/level.cuh"
#include "core/lsm/detail/level_filter.cuh"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict::lsm {

inline constexpr int kSearchThreads = 256;
inline constexpr int kSearchWarps = kSearchThreads / static_cast<int>(kWarpSize);
inline constexpr int kSearchMinBlocks = 6;
// u64 keys: 64-bit queries, tops and window keys; at 40 registers (6 blocks)
// the kernels spilled 8 bytes, at 48 (5 blocks) they do not.
inline constexpr int kSearchMinBlocksWide = 5;
template <class K>
inline constexpr int kSearchMinBlocksOf = sizeof(K) > 4 ? kSearchMinBlocksWide : kSearchMinBlocks;

// Refines the searches with refine[s] set (pos[s] = the count at the level's
// fence top on entry, the bound at the keys on exit) for the whole warp. All
// 32 lanes must call it. wq/wc: this warp's 32 S slots of shared memory.
template <class K, int S>
__device__ __forceinline__ void refine_compacted(const sa::SearchView<K>& ix, const K (&q)[S],
                                                 const bool (&refine)[S], uint32_t (&pos)[S], bool upper0, bool upper1,
                                                 K* wq, uint32_t* wc) {
  constexpr int G = sa::WindowShape<K>::kGroup;  // lanes per window
  constexpr int kPair = 2;                               // searches a group runs at once
  constexpr unsigned kPerRound = kWarpSize / G * kPair;
  const unsigned lane = lane_id();
  const unsigned below = (1u << lane) - 1u;
  unsigned mask[S], base[S], slot[S];
  unsigned total = 0;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    mask[s] = __ballot_sync(kFullMask, refine[s]);
    base[s] = total;
    total += __popc(mask[s]);
  }
  if (total == 0) return;  // warp-uniform
#pragma unroll
  for (int s = 0; s < S; ++s) {
    slot[s] = base[s] + __popc(mask[s] & below);
    if (refine[s]) {
      wq[slot[s]] = q[s];
      wc[slot[s]] = pos[s];
    }
  }
  __syncwarp();
  const unsigned lig = lane % G;
  const unsigned grp = lane / G;
  for (unsigned r0 = 0; r0 < total; r0 += kPerRound) {
    K qq[kPair];
    uint32_t cc[kPair];
    bool uu[kPair];
    unsigned idx[kPair];
#pragma unroll
    for (int u = 0; u < kPair; ++u) {
      idx[u] = r0 + grp * kPair + u;
      const bool ok = idx[u] < total;
      qq[u] = ok ? wq[idx[u]] : K(0);
      cc[u] = ok ? wc[idx[u]] : 0u;  // 0: a valid window, result unused
      bool second = false;
      if constexpr (S == 2) second = idx[u] >= base[1];
      uu[u] = second ? upper1 : upper0;
    }
    // Every lane of a group reads its slot above and lane 0 of the group
    // rewrites it below: order the reads before the write (the shuffles in
    // descend() converge the lanes but do not order shared-memory accesses).
    // `total` is warp-uniform, so every lane runs every round.
    __syncwarp();
    sa::descend<K, kPair>(ix, qq, uu, cc, lig);
#pragma unroll
    for (int u = 0; u < kPair; ++u)
      if (idx[u] < total && lig == 0) wc[idx[u]] = cc[u];
  }
  __syncwarp();
#pragma unroll
  for (int s = 0; s < S; ++s)
    if (refine[s]) pos[s] = wc[slot[s]];
  __syncwarp();  // the slots are rewritten at the next level
}

// Whether the level's top entry c (c < top_size) equals k. Top entries
// below k place k's records at or after position (c - 1) S + 1, and top
// entry c >= k places the first of them at or before c S: in segment c - 1,
// unless top entry c is k itself, when they may start exactly at c S, in
// segment c. Then the filter of segment c - 1 does not decide and the level
// is searched. Only exact-match (kFilter) ops ask.
template <class K, class V>
__device__ __forceinline__ bool top_equals(const LevelView<K, V>& L, const K* s_top, uint32_t c, uint32_t top_size,
                                           K k) {
  if (c >= top_size) return false;
  return (L.smem_off >= 0 ? s_top[L.smem_off + c] : __ldg(L.ix.level[L.ix.top] + c)) == k;
}

template <class Op>
__global__ void __launch_bounds__(kSearchThreads, kSearchMinBlocksOf<typename Op::Key>)
    multilevel_search_kernel(const __grid_constant__ LsmView<typename Op::Key, typename Op::Value> v,
                             const __grid_constant__ Op op, uint32_t items) {
  using K = typename Op::Key;
  using V = typename Op::Value;
  constexpr int S = Op::kSearches;
  static_assert(S == 1 || S == 2, "one or two searches per item and level");
  extern __shared__ uint4 s_top_raw[];  // one declaration for every K (16-byte aligned)
  K* s_top = reinterpret_cast<K*>(s_top_raw);
  __shared__ K s_last[kMaxLevels];
  __shared__ K s_q[kSearchWarps][kWarpSize * S];
  __shared__ uint32_t s_c[kSearchWarps][kWarpSize * S];

  for (int l = 0; l < v.count; ++l) {
    const LevelView<K, V>& L = v.lv[l];
    if (threadIdx.x == 0) s_last[l] = L.ix.level[0][L.n - 1];
    if (L.smem_off >= 0) {
      const K* src = L.ix.level[L.ix.top];
      const uint32_t size = L.ix.size[L.ix.top];
      for (uint32_t t = threadIdx.x; t < size; t += blockDim.x) s_top[L.smem_off + t] = src[t];
    }
  }
  __syncthreads();

  K* wq = s_q[warp_in_block()];
  uint32_t* wc = s_c[warp_in_block()];
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * kSearchWarps;
  for (uint64_t w = static_cast<uint64_t>(blockIdx.x) * kSearchWarps + warp_in_block(); w * kWarpSize < items;
       w += warps) {
    const uint64_t item64 = w * kWarpSize + lane_id();
    const bool active = item64 < items;
    const uint32_t item = static_cast<uint32_t>(item64);
    typename Op::State st{};
    K q[S];
#pragma unroll
    for (int s = 0; s < S; ++s) q[s] = K(0);
    if (active) op.setup(item, st, q);

    for (int l = 0; l < v.count; ++l) {
      bool need[S];
      bool any = false;
#pragma unroll
      for (int s = 0; s < S; ++s) {
        need[s] = active && op.wants(st, s);
        any |= need[s];
      }
      if (Op::kStopWhenDone && !__any_sync(kFullMask, any)) break;
      const LevelView<K, V>& L = v.lv[l];
      const int top = L.ix.top;
      const uint32_t top_size = L.ix.size[top];
      const K last = s_last[l];
      uint32_t pos[S];
      bool refine[S];
#pragma unroll
      for (int s = 0; s < S; ++s) {
        pos[s] = 0;
        refine[s] = false;
        if (need[s]) {
          const bool up = s == 0 ? Op::kUpper0 : Op::kUpper1;
          const uint32_t c = L.smem_off >= 0 ? sa::count_before(s_top + L.smem_off, top_size, q[s], up)
                                             : sa::count_before(L.ix.level[top], top_size, q[s], up);
          if (top == 0 || c == 0) {
            pos[s] = c;
          } else if (sa::counts_before(last, q[s], up)) {
            pos[s] = L.n;
          } else if (Op::kFilter && L.filter != nullptr && !top_equals(L, s_top, c, top_size, q[s]) &&
                     !filter_may_contain(L.filter, L.filter_seg_shift, c - 1, q[s])) {
            pos[s] = L.n;  // not in this level: its records would be in segment c - 1
          } else {
            pos[s] = c;
            refine[s] = true;
          }
        }
      }
      refine_compacted<K, S>(L.ix, q, refine, pos, Op::kUpper0, Op::kUpper1, wq, wc);
      if (active) op.level(L, l, item, st, q, pos, need);
    }
    if (active) op.finish(v, item, st);
  }
}

template <class Op>
void launch_multilevel(const LsmView<typename Op::Key, typename Op::Value>& v, const Op& op, uint64_t items,
                       cudaStream_t stream, const char* name) {
  if (items == 0 || v.count == 0) return;
  const size_t smem = static_cast<size_t>(v.smem_entries) * sizeof(typename Op::Key);
  auto kernel = multilevel_search_kernel<Op>;
  const unsigned grid = persistent_grid(kernel, kSearchThreads, smem, items, kSearchThreads);
  kernel<<<grid, kSearchThreads, smem, stream>>>(v, op, static_cast<uint32_t>(items));
  GPUDICT_CHECK_LAUNCH(name);
}

}  // namespace gpudict::lsm
