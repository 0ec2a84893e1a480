// Sorting (key, value) pairs by key and keeping the last pair of every run of
// equal keys: the "later duplicate wins" rule of initial contents
// (docs/semantics.md s. 1) as every bulk build needs it. One stable radix
// sort over all key bits; a streaming pass counts adjacent equal keys; the
// compaction (one select over the pairs) runs only when there are any.
// Device time is measured here with the caller's timer, around device work
// only (the duplicate count comes back to the host in between).
#pragma once

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include <cstdint>

#include "core/common/cub_temp.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"

namespace gpudict {

namespace sort_unique_detail {

// Adjacent equal keys of a sorted array (u32 or u64 keys), counted into *out.
template <class K>
__global__ void count_adjacent_equal(const K* __restrict__ keys, uint64_t n, unsigned long long* out) {
  unsigned long long c = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i + 1 < n; i += stride)
    c += keys[i] == keys[i + 1];
  c = warp_sum(c);
  if (lane_id() == 0 && c) atomicAdd(out, c);
}

template <class K>
struct KeepLast {
  const K* keys;
  uint64_t n;
  __host__ __device__ bool operator()(uint64_t i) const { return i + 1 == n || keys[i] != keys[i + 1]; }
};

}  // namespace sort_unique_detail

// keys/values: double buffers of n pairs (both halves allocated), keys of
// type K (uint32_t or uint64_t: the sort covers all of its bits), values of
// any type V. Afterwards keys.Current()/values.Current() hold the sorted
// unique pairs; returns their number. `scratch` is 2 device words;
// `host_word` a pinned host word. Adds the device milliseconds to *ms.
template <class K, class V>
uint64_t sort_pairs_keep_last(CubTemp& temp, cub::DoubleBuffer<K>& keys, cub::DoubleBuffer<V>& values, uint64_t n,
                              unsigned long long* scratch, unsigned long long* host_word, EventTimer& timer,
                              cudaStream_t stream, double* ms) {
  static_assert(sizeof(K) == 4 || sizeof(K) == 8, "u32 or u64 keys");
  if (n == 0) return 0;
  auto sort = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, keys, values, n, 0, static_cast<int>(8 * sizeof(K)), stream);
  };
  temp.prepare("cub::DeviceRadixSort::SortPairs (bulk build)", sort);
  timer.start(stream);
  temp.run("cub::DeviceRadixSort::SortPairs (bulk build)", sort);
  GPUDICT_CUDA(cudaMemsetAsync(scratch, 0, sizeof(unsigned long long), stream));
  sort_unique_detail::count_adjacent_equal<K><<<blocks_for(n, 256 * 16, 8192), 256, 0, stream>>>(keys.Current(), n,
                                                                                              scratch);
  GPUDICT_CHECK_LAUNCH("count_adjacent_equal");
  *ms += timer.stop(stream);
  GPUDICT_CUDA(cudaMemcpyAsync(host_word, scratch, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  GPUDICT_CUDA(cudaStreamSynchronize(stream));
  if (*host_word == 0) return n;

  const K* k = keys.Current();
  auto flags = thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0),
                                               sort_unique_detail::KeepLast<K>{k, n});
  auto in = thrust::make_zip_iterator(thrust::make_tuple(keys.Current(), values.Current()));
  auto out = thrust::make_zip_iterator(thrust::make_tuple(keys.Alternate(), values.Alternate()));
  unsigned long long* kept = scratch + 1;
  auto select = [&](void* p, size_t& bytes) {
    return cub::DeviceSelect::Flagged(p, bytes, in, flags, out, kept, n, stream);
  };
  temp.prepare("cub::DeviceSelect::Flagged (bulk build)", select);
  timer.start(stream);
  temp.run("cub::DeviceSelect::Flagged (bulk build)", select);
  *ms += timer.stop(stream);
  GPUDICT_CUDA(cudaMemcpyAsync(host_word, kept, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  GPUDICT_CUDA(cudaStreamSynchronize(stream));
  keys.selector ^= 1;
  values.selector ^= 1;
  return *host_word;
}

}  // namespace gpudict
