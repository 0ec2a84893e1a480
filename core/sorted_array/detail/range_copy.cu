// Copying range results, balanced by output: the output is cut into equal
// tiles of 2048 pairs whatever the ranges' lengths (one range of 10^8 pairs
// or 10^6 ranges of 8 pairs cost the same per pair). A small kernel finds the
// range at each tile boundary; a tile stages the offsets (and first
// positions) of its ranges in shared memory, and each output slot finds its
// range by a short binary search there (global memory, L1/L2-resident, when
// a tile spans too many, mostly empty, ranges). Reads and writes are
// consecutive per range: coalesced.
#include "core/sorted_array/detail/range_copy.cuh"

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict::sa {

namespace {

constexpr int kCopyThreads = 256;
constexpr int kCopyPerThread = 8;
constexpr uint32_t kCopyTile = kCopyThreads * kCopyPerThread;
constexpr uint32_t kCopyStage = 1024;  // ranges staged in shared memory per tile

// tile_range[t] = the range holding output min(t * kCopyTile, total - 1):
// the last r with offset[r] <= o.
__global__ void range_tile_kernel(const uint64_t* __restrict__ offset, uint32_t R, uint64_t total, uint32_t tiles,
                                  uint32_t* __restrict__ tile_range) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t > tiles) return;
  const uint64_t o = min(static_cast<uint64_t>(t) * kCopyTile, total - 1);
  tile_range[t] = count_before<uint64_t>(offset, R, o, true) - 1;
}

template <class K, class V>
__global__ void __launch_bounds__(kCopyThreads)
    range_copy_kernel(const K* __restrict__ keys, const V* __restrict__ values, const uint32_t* __restrict__ first,
                      const uint64_t* __restrict__ offset, const uint32_t* __restrict__ tile_range, uint64_t total,
                      K* __restrict__ out_keys, V* __restrict__ out_values) {
  __shared__ uint64_t s_off[kCopyStage];
  __shared__ uint32_t s_first[kCopyStage];
  const uint64_t o0 = static_cast<uint64_t>(blockIdx.x) * kCopyTile;
  const uint64_t o1 = min(o0 + kCopyTile, total);
  const uint32_t r0 = tile_range[blockIdx.x];
  const uint32_t span = tile_range[blockIdx.x + 1] - r0 + 1;  // ranges the tile may touch
  const bool staged = span <= kCopyStage;
  if (staged) {
    for (uint32_t x = threadIdx.x; x < span; x += kCopyThreads) {
      s_off[x] = offset[r0 + x];
      s_first[x] = first[r0 + x];
    }
  }
  __syncthreads();
  const uint64_t* off = staged ? s_off : offset + r0;
  const uint32_t* fst = staged ? s_first : first + r0;

  uint32_t src[kCopyPerThread];
#pragma unroll
  for (int v = 0; v < kCopyPerThread; ++v) {
    const uint64_t o = o0 + static_cast<uint64_t>(v) * kCopyThreads + threadIdx.x;
    src[v] = 0;
    if (o < o1) {
      const uint32_t x = count_before<uint64_t>(off, span, o, true) - 1;  // offset[r0] <= o0 <= o
      src[v] = fst[x] + static_cast<uint32_t>(o - off[x]);
    }
  }
  K k[kCopyPerThread];
  V val[kCopyPerThread];
#pragma unroll
  for (int v = 0; v < kCopyPerThread; ++v) {
    const uint64_t o = o0 + static_cast<uint64_t>(v) * kCopyThreads + threadIdx.x;
    if (o < o1) {
      k[v] = keys[src[v]];
      val[v] = values[src[v]];
    }
  }
#pragma unroll
  for (int v = 0; v < kCopyPerThread; ++v) {
    const uint64_t o = o0 + static_cast<uint64_t>(v) * kCopyThreads + threadIdx.x;
    if (o < o1) {
      out_keys[o] = k[v];
      out_values[o] = val[v];
    }
  }
}

}  // namespace

uint64_t range_copy_tiles(uint64_t total) { return div_up(total, kCopyTile) + 1; }

template <class K, class V>
void copy_ranges(const K* keys, const V* values, const uint32_t* first, const uint64_t* offset, uint32_t R,
                 uint64_t total, DeviceBuffer<uint32_t>& tiles_buf, K* out_keys, V* out_values, cudaStream_t stream) {
  if (total == 0 || R == 0) return;
  const uint64_t tiles = div_up(total, kCopyTile);
  if (tiles_buf.capacity() < tiles + 1) throw RuntimeFailure("copy_ranges: tile scratch too small");
  range_tile_kernel<<<blocks_for(tiles + 1, 256), 256, 0, stream>>>(offset, R, total, static_cast<uint32_t>(tiles),
                                                                    tiles_buf.data());
  GPUDICT_CHECK_LAUNCH("range_tile_kernel");
  range_copy_kernel<K, V><<<static_cast<unsigned>(tiles), kCopyThreads, 0, stream>>>(
      keys, values, first, offset, tiles_buf.data(), total, out_keys, out_values);
  GPUDICT_CHECK_LAUNCH("range_copy_kernel");
}

template void copy_ranges<uint32_t, uint32_t>(const uint32_t*, const uint32_t*, const uint32_t*, const uint64_t*,
                                              uint32_t, uint64_t, DeviceBuffer<uint32_t>&, uint32_t*, uint32_t*,
                                              cudaStream_t);
template void copy_ranges<uint32_t, uint64_t>(const uint32_t*, const uint64_t*, const uint32_t*, const uint64_t*,
                                              uint32_t, uint64_t, DeviceBuffer<uint32_t>&, uint32_t*, uint64_t*,
                                              cudaStream_t);
template void copy_ranges<uint64_t, uint64_t>(const uint64_t*, const uint64_t*, const uint32_t*, const uint64_t*,
                                              uint32_t, uint64_t, DeviceBuffer<uint32_t>&, uint64_t*, uint64_t*,
                                              cudaStream_t);

}  // namespace gpudict::sa
