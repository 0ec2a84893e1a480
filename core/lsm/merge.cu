// The stable two-run merge (merge.cuh), by merge path:
//
//  1. partition: the output is cut into tiles of kMergeTile elements; for each
//     tile boundary d a thread finds split(d) = the number of `newer`
//     elements among the first d outputs, by binary search on the diagonal
//     (newer[i] precedes older[j] iff newer[i] <= older[j]: ties go to newer);
//  2. one block per tile stages the tile's keys of both runs (at most
//     kMergeTile in all) in shared memory; each element finds its output
//     position by a short binary search in the other run's part:
//        newer element x: d0 + x + #(older keys <  key)
//        older element y: d0 + y + #(newer keys <= key)
//     and writes key, value and status there (and the level-1 fence when the
//     position is a multiple of 32). Every element is read once and written
//     once (9 B in, 9 B out) plus the 4 B key staging read; a tile writes one
//     contiguous output range.
#include "core/lsm/merge.cuh"

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/lsm/level.cuh"
#include "core/sorted_array/search_index.cuh"

namespace gpudict::lsm {

namespace {

constexpr int kMergeThreads = 256;
constexpr int kMergePerThread = 8;
constexpr uint32_t kMergeTile = kMergeThreads * kMergePerThread;

__global__ void merge_partition_kernel(const uint32_t* __restrict__ a, uint64_t na, const uint32_t* __restrict__ b,
                                       uint64_t nb, uint64_t tiles, uint64_t* __restrict__ split) {
  const uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t > tiles) return;
  const uint64_t d = min(t * kMergeTile, na + nb);
  uint64_t lo = d > nb ? d - nb : 0;
  uint64_t hi = min(d, na);
  while (lo < hi) {
    const uint64_t mid = (lo + hi) >> 1;
    if (a[mid] <= b[d - 1 - mid])  // a[mid] precedes b[d-1-mid]: more than mid newer elements
      lo = mid + 1;
    else
      hi = mid;
  }
  split[t] = lo;
}

__global__ void __launch_bounds__(kMergeThreads)
    merge_tile_kernel(const RunIn a, const RunIn b, const RunOut out, const uint64_t* __restrict__ split) {
  __shared__ uint32_t s_keys[kMergeTile];
  const uint64_t total = a.n + b.n;
  const uint64_t d0 = static_cast<uint64_t>(blockIdx.x) * kMergeTile;
  const uint64_t d1 = min(d0 + kMergeTile, total);
  const uint64_t i0 = split[blockIdx.x], i1 = split[blockIdx.x + 1];
  const uint64_t j0 = d0 - i0;
  const uint32_t na = static_cast<uint32_t>(i1 - i0);
  const uint32_t nt = static_cast<uint32_t>(d1 - d0);
  const uint32_t nb = nt - na;
  for (uint32_t x = threadIdx.x; x < nt; x += kMergeThreads)
    s_keys[x] = x < na ? a.keys[i0 + x] : b.keys[j0 + (x - na)];
  __syncthreads();
  const uint32_t* s_a = s_keys;
  const uint32_t* s_b = s_keys + na;

#pragma unroll
  for (int r = 0; r < kMergePerThread; ++r) {
    const uint32_t x = r * kMergeThreads + threadIdx.x;
    if (x >= nt) continue;
    uint32_t key, value;
    uint8_t st;
    uint64_t o;
    if (x < na) {
      key = s_a[x];
      o = d0 + x + sa::count_before(s_b, nb, key, false);
      value = a.values[i0 + x];
      st = a.status[i0 + x];
    } else {
      const uint32_t y = x - na;
      key = s_b[y];
      o = d0 + y + sa::count_before(s_a, na, key, true);
      value = b.values[j0 + y];
      st = b.status[j0 + y];
    }
    out.keys[o] = key;
    out.values[o] = value;
    out.status[o] = st;
    if (out.fences != nullptr) sa::put_fence(out.fences, o, key);
  }
}

}  // namespace

uint64_t merge_split_entries(uint64_t total) { return div_up(total, kMergeTile) + 1; }

void merge_runs(const RunIn& newer, const RunIn& older, const RunOut& out, DeviceBuffer<uint64_t>& splits,
                cudaStream_t stream) {
  const uint64_t total = newer.n + older.n;
  if (total == 0) return;
  const uint64_t tiles = div_up(total, kMergeTile);
  if (splits.capacity() < tiles + 1) throw RuntimeFailure("lsm merge: split scratch too small");
  merge_partition_kernel<<<blocks_for(tiles + 1, 256), 256, 0, stream>>>(newer.keys, newer.n, older.keys, older.n,
                                                                        tiles, splits.data());
  GPUDICT_CHECK_LAUNCH("merge_partition_kernel");
  merge_tile_kernel<<<static_cast<unsigned>(tiles), kMergeThreads, 0, stream>>>(newer, older, out, splits.data());
  GPUDICT_CHECK_LAUNCH("merge_tile_kernel");
}

}  // namespace gpudict::lsm
