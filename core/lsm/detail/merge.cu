// The stable two-run merge (merge.cuh), by merge path: the output is cut
// into tiles of kMergeTile elements, one block per tile (22.5 KB of shared
// memory for u32/u32: eight blocks per multiprocessor; 30.5 KB for u32/u64,
// 38.5 KB for u64/u64).
//
//  1. the block's first two warps find the split of its two tile boundaries
//     d (the number of `newer` elements among the first d outputs; newer[i]
//     precedes older[j] iff newer[i] <= older[j]: ties go to newer), each by
//     a 32-way search (core/common/merge_path.cuh) - in the tile kernel
//     itself, not in a partition kernel before it;
//  2. the block stages the tile's elements of both runs (at most kMergeTile
//     in all: keys, values, status) in shared memory with coalesced loads;
//     each element finds its place in the tile's output by a short binary
//     search in the other run's part:
//        newer element x: x + #(older keys <  key)
//        older element y: y + #(newer keys <= key)
//  3. the block writes the tile's output range in order from shared memory
//     (coalesced; the level-1 fence where the position is a multiple of 32)
//     and, when asked, counts the output's local stale records (a key equal
//     to the one before it - the tile's first compares with the largest key
//     before the tile, max(newer[i0 - 1], older[j0 - 1]) - or a tombstone).
//     Every element is read once and written once (9 B in, 9 B out for
//     u32/u32; sizeof(K) + sizeof(V) + 1 at other widths).
#include "core/lsm/detail/merge.cuh"

#include "core/common/cuda_check.hpp"
#include "core/common/merge_path.cuh"
#include "core/common/warp.cuh"
#include "core/lsm/detail/level.cuh"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict::lsm {

namespace {

constexpr int kMergeThreads = 256;
constexpr int kMergePerThread = 8;
constexpr uint32_t kMergeTile = kMergeThreads * kMergePerThread;

template <class K, class V>
__global__ void __launch_bounds__(kMergeThreads)
    merge_tile_kernel(const RunIn<K, V> a, const RunIn<K, V> b, const RunOut<K, V> out) {
  // The tile's input (a's part, then b's) and its output order, staged.
  __shared__ K s_keys[kMergeTile];
  __shared__ V s_values[kMergeTile];
  __shared__ uint8_t s_status[kMergeTile];
  __shared__ uint16_t s_from[kMergeTile];  // output position -> input position
  __shared__ uint64_t s_split[2];
  static_assert(kMergeTile <= 65536, "s_from holds 16-bit positions");
  const uint64_t total = a.n + b.n;
  const uint64_t d0 = static_cast<uint64_t>(blockIdx.x) * kMergeTile;
  const uint64_t d1 = min(d0 + kMergeTile, total);
  const unsigned w = warp_in_block();
  if (w < 2) {
    const uint64_t split = warp_merge_path_split(a.keys, a.n, b.keys, b.n, w == 0 ? d0 : d1);
    if (lane_id() == 0) s_split[w] = split;
  }
  __syncthreads();
  const uint64_t i0 = s_split[0], i1 = s_split[1];
  const uint64_t j0 = d0 - i0;
  const uint32_t na = static_cast<uint32_t>(i1 - i0);
  const uint32_t nt = static_cast<uint32_t>(d1 - d0);
  const uint32_t nb = nt - na;
  // Coalesced loads of everything the tile moves, all in flight at once
  // (values and status were read per element after its search before: a
  // chain of dependent loads per thread).
  for (uint32_t x = threadIdx.x; x < nt; x += kMergeThreads) {
    const bool in_a = x < na;
    const uint64_t src = in_a ? i0 + x : j0 + (x - na);
    s_keys[x] = in_a ? a.keys[src] : b.keys[src];
    s_values[x] = in_a ? a.values[src] : b.values[src];
    s_status[x] = in_a ? a.status[src] : b.status[src];
  }
  __syncthreads();
  const K* s_a = s_keys;
  const K* s_b = s_keys + na;
  for (uint32_t x = threadIdx.x; x < nt; x += kMergeThreads) {
    const K key = s_keys[x];
    const uint32_t o = x < na ? x + sa::count_before(s_b, nb, key, false)
                              : (x - na) + sa::count_before(s_a, na, key, true);
    s_from[o] = static_cast<uint16_t>(x);
  }
  __syncthreads();
  // The tile's output range, written in order (coalesced).
  unsigned stale = 0;
  for (uint32_t o = threadIdx.x; o < nt; o += kMergeThreads) {
    const uint32_t x = s_from[o];
    const K key = s_keys[x];
    out.keys[d0 + o] = key;
    out.values[d0 + o] = s_values[x];
    out.status[d0 + o] = s_status[x];
    if (out.fences != nullptr) sa::put_fence(out.fences, d0 + o, key);
    if (out.stale != nullptr) {
      bool dup = false;
      if (o > 0) {
        dup = s_keys[s_from[o - 1]] == key;
      } else if (d0 > 0) {
        K prev = 0;
        if (i0 > 0) prev = a.keys[i0 - 1];
        if (j0 > 0) prev = max(prev, b.keys[j0 - 1]);
        dup = prev == key;
      }
      stale += (dup || (s_status[x] & kTombstone) != 0) ? 1u : 0u;
    }
  }
  if (out.stale != nullptr) block_add_to(out.stale, stale);  // block-uniform
}

}  // namespace

template <class K, class V>
void merge_runs(const RunIn<K, V>& newer, const RunIn<K, V>& older, const RunOut<K, V>& out, cudaStream_t stream) {
  const uint64_t total = newer.n + older.n;
  if (total == 0) return;
  const uint64_t tiles = div_up(total, kMergeTile);
  merge_tile_kernel<K, V><<<static_cast<unsigned>(tiles), kMergeThreads, 0, stream>>>(newer, older, out);
  GPUDICT_CHECK_LAUNCH("merge_tile_kernel");
}

#define GPUDICT_LSM_MERGE(K, V) \
  template void merge_runs<K, V>(const RunIn<K, V>&, const RunIn<K, V>&, const RunOut<K, V>&, cudaStream_t);
GPUDICT_LSM_MERGE(uint32_t, uint32_t)
GPUDICT_LSM_MERGE(uint32_t, uint64_t)
GPUDICT_LSM_MERGE(uint64_t, uint64_t)
#undef GPUDICT_LSM_MERGE

}  // namespace gpudict::lsm
