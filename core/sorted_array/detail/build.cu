// build_device(): copy the pairs, one stable radix sort of (key, value)
// over all key bits, then keep the last pair of every run of equal keys (the
// input's later duplicate wins; the sort is stable). A cheap kernel counts
// adjacent equal keys first; the compaction runs only when there are any.
// Then the fence index.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include <cstdint>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/sorted_array/detail/search_index.cuh"
#include "core/sorted_array/detail/sorted_array_impl.cuh"

namespace gpudict::sa {

namespace {

// Adjacent equal keys in a sorted array (one pass, no output but a count).
// Each thread takes 4 keys with one 16-byte load and compares the last with
// the next thread's first (a shuffle; the warp's last lane reads one key), so
// the pass runs at streaming bandwidth. `keys` is 16-byte aligned (cudaMalloc).
template <class K>
__global__ void count_adjacent_equal_kernel(const K* __restrict__ keys, uint64_t n, unsigned long long* out) {
  static_assert(sizeof(K) == 4, "vector width assumes 4-byte keys (u64 keys: count_adjacent_equal_kernel64)");
  unsigned long long c = 0;
  const uint64_t quads = n / 4;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint4* q4 = reinterpret_cast<const uint4*>(keys);
  // Whole warps iterate together so the shuffle sees every lane.
  const uint64_t start = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (uint64_t base = start - lane_id(); base < quads; base += stride) {
    const uint64_t i = base + lane_id();
    uint4 v = make_uint4(0, 0, 0, 0);
    if (i < quads) v = q4[i];
    c += (v.x == v.y) + (v.y == v.z) + (v.z == v.w);
    const uint32_t next_first = __shfl_down_sync(0xFFFFFFFFu, v.x, 1);
    if (i < quads) {
      const uint64_t nxt = 4 * i + 4;  // the key after this quad
      if (nxt < n) {
        const K after = lane_id() == 31 || i + 1 >= quads ? keys[nxt] : static_cast<K>(next_first);
        c += v.w == after;
      }
    }
  }
  // The tail that does not fill a quad.
  for (uint64_t i = 4 * quads + start; i + 1 < n; i += stride) c += keys[i] == keys[i + 1];
  c = warp_sum(c);
  if (lane_id() == 0 && c) atomicAdd(out, c);
}

// The same for 8-byte keys: each thread takes 2 keys with one 16-byte load.
__global__ void count_adjacent_equal_kernel64(const uint64_t* __restrict__ keys, uint64_t n,
                                              unsigned long long* out) {
  unsigned long long c = 0;
  const uint64_t pairs = n / 2;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const ulonglong2* q2 = reinterpret_cast<const ulonglong2*>(keys);
  const uint64_t start = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (uint64_t base = start - lane_id(); base < pairs; base += stride) {
    const uint64_t i = base + lane_id();
    ulonglong2 v = make_ulonglong2(0, 0);
    if (i < pairs) v = q2[i];
    c += v.x == v.y;
    const unsigned long long next_first = __shfl_down_sync(0xFFFFFFFFu, v.x, 1);
    if (i < pairs) {
      const uint64_t nxt = 2 * i + 2;  // the key after this pair
      if (nxt < n) {
        const unsigned long long after = lane_id() == 31 || i + 1 >= pairs ? keys[nxt] : next_first;
        c += v.y == after;
      }
    }
  }
  for (uint64_t i = 2 * pairs + start; i + 1 < n; i += stride) c += keys[i] == keys[i + 1];
  c = warp_sum(c);
  if (lane_id() == 0 && c) atomicAdd(out, c);
}

// Whether sorted position i is the last of its run of equal keys.
template <class K>
struct KeepLast {
  const K* keys;
  uint64_t n;
  __host__ __device__ bool operator()(uint64_t i) const { return i + 1 == n || keys[i] != keys[i + 1]; }
};

}  // namespace

template <class K, class V>
void SortedArray<K, V>::build_staged(uint64_t n) {
  unsigned long long* d_dups = d_scalars_.data();
  unsigned long long* d_kept = d_scalars_.data() + 1;
  h_u64_.reserve_discard(2);

  cub::DoubleBuffer<K> dk(cur_.keys.data(), alt_.keys.data());
  cub::DoubleBuffer<V> dv(cur_.values.data(), alt_.values.data());
  auto sort = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, dk, dv, n, 0, static_cast<int>(8 * sizeof(K)), stream_);
  };
  temp_.prepare("cub::DeviceRadixSort::SortPairs (build)", sort);
  timer_.start(stream_);
  temp_.run("cub::DeviceRadixSort::SortPairs (build)", sort);
  GPUDICT_CUDA(cudaMemsetAsync(d_dups, 0, sizeof(unsigned long long), stream_));
  if constexpr (sizeof(K) == 4) {
    count_adjacent_equal_kernel<K><<<blocks_for(n, 256 * 16, 8192), 256, 0, stream_>>>(dk.Current(), n, d_dups);
    GPUDICT_CHECK_LAUNCH("count_adjacent_equal_kernel");
  } else {
    count_adjacent_equal_kernel64<<<blocks_for(n, 256 * 8, 8192), 256, 0, stream_>>>(dk.Current(), n, d_dups);
    GPUDICT_CHECK_LAUNCH("count_adjacent_equal_kernel64");
  }
  double ms = timer_.stop(stream_);
  copy_to_host(stream_, h_u64_.data(), d_dups, sizeof(unsigned long long));
  const uint64_t dups = h_u64_[0];
  if (dk.selector != 0) cur_.swap(alt_);  // the sorted pairs are in cur_ now

  uint64_t kept = n;
  if (dups > 0) {
    auto flags =
        thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0), KeepLast<K>{cur_.keys.data(), n});
    // One pass over (key, value) pairs: read and write one pair per kept pair.
    auto in = thrust::make_zip_iterator(thrust::make_tuple(cur_.keys.data(), cur_.values.data()));
    auto out = thrust::make_zip_iterator(thrust::make_tuple(alt_.keys.data(), alt_.values.data()));
    auto select = [&](void* p, size_t& bytes) {
      return cub::DeviceSelect::Flagged(p, bytes, in, flags, out, d_kept, n, stream_);
    };
    temp_.prepare("cub::DeviceSelect::Flagged (build pairs)", select);
    timer_.start(stream_);
    temp_.run("cub::DeviceSelect::Flagged (build pairs)", select);
    ms += timer_.stop(stream_);
    copy_to_host(stream_, h_u64_.data(), d_kept, sizeof(unsigned long long));
    kept = h_u64_[0];
    cur_.swap(alt_);
  }

  cur_.n = kept;
  cur_.layout = FenceLayout::for_size(kept, kTopMaxOf<K>);
  cur_.reserve_fences(kept, false);
  timer_.start(stream_);
  build_fence_levels(cur_, 0, stream_);
  ms += timer_.stop(stream_);
  add_time(ms);
}

template <class K, class V>
void SortedArray<K, V>::build_device(const K* keys, const V* values, uint64_t n) {
  if (n > kMaxKeys)
    throw InputError("sorted_array_map holds at most " + std::to_string(kMaxKeys) + " keys (asked to build " +
                     std::to_string(n) + ")");
  cur_.n = 0;
  cur_.layout = FenceLayout::for_size(0, kTopMaxOf<K>);
  if (n == 0) return;
  cur_.reserve_pairs(n, false);
  alt_.reserve_pairs(n, false);
  GPUDICT_CUDA(cudaMemcpyAsync(cur_.keys.data(), keys, n * sizeof(K), cudaMemcpyDeviceToDevice, stream_));
  GPUDICT_CUDA(cudaMemcpyAsync(cur_.values.data(), values, n * sizeof(V), cudaMemcpyDeviceToDevice, stream_));
  build_staged(n);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template void SortedArray<uint32_t, uint32_t>::build_staged(uint64_t);
template void SortedArray<uint32_t, uint64_t>::build_staged(uint64_t);
template void SortedArray<uint64_t, uint64_t>::build_staged(uint64_t);
template void SortedArray<uint32_t, uint32_t>::build_device(const uint32_t*, const uint32_t*, uint64_t);
template void SortedArray<uint32_t, uint64_t>::build_device(const uint32_t*, const uint64_t*, uint64_t);
template void SortedArray<uint64_t, uint64_t>::build_device(const uint64_t*, const uint64_t*, uint64_t);

}  // namespace gpudict::sa
