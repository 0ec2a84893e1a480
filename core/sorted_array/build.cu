// build(): copy the pairs to the device, one stable radix sort of (key, value)
// over all key bits, then keep the last pair of every run of equal keys (the
// input's later duplicate wins; the sort is stable). A cheap kernel counts
// adjacent equal keys first; the compaction runs only when there are any.
// Then the fence index.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/sorted_array/search_index.cuh"
#include "core/sorted_array/sorted_array_impl.cuh"

namespace gpudict::sa {

namespace {

// Adjacent equal keys in a sorted array (one pass, no output but a count).
template <class K>
__global__ void count_adjacent_equal_kernel(const K* __restrict__ keys, uint64_t n, unsigned long long* out) {
  unsigned long long c = 0;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i + 1 < n; i += stride)
    c += keys[i] == keys[i + 1] ? 1ull : 0ull;
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
void SortedArray<K, V>::build(const KeyValues& initial, DeviceTime& t) {
  if (initial.keys.size() != initial.values.size())
    throw InputError("sorted-array: initial keys and values differ in length");
  const uint64_t n = initial.size();
  if (n > kMaxKeys)
    throw RuntimeFailure("sorted-array holds at most " + std::to_string(kMaxKeys) + " keys (asked to build " +
                         std::to_string(n) + ")");
  cur_.n = 0;
  cur_.layout = FenceLayout::for_size(0);
  if (n == 0) {
    t.add(Phase::Build, 0.0);
    return;
  }

  // Both buffers hold n pairs: the sort ping-pongs between them.
  cur_.reserve_pairs(n, false);
  alt_.reserve_pairs(n, false);
  h_keys_.reserve_discard(n);
  h_values_.reserve_discard(n);
  for (uint64_t i = 0; i < n; ++i) {
    h_keys_[i] = static_cast<K>(initial.keys[i]);
    h_values_[i] = static_cast<V>(initial.values[i]);
  }
  h2d(cur_.keys.data(), h_keys_.data(), n * sizeof(K));
  h2d(cur_.values.data(), h_values_.data(), n * sizeof(V));
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
  count_adjacent_equal_kernel<K><<<blocks_for(n, 256 * 8, 8192), 256, 0, stream_>>>(dk.Current(), n, d_dups);
  GPUDICT_CHECK_LAUNCH("count_adjacent_equal_kernel");
  double ms = timer_.stop(stream_);
  d2h(h_u64_.data(), d_dups, sizeof(unsigned long long));
  const uint64_t dups = h_u64_[0];
  if (dk.selector != 0) cur_.swap(alt_);  // the sorted pairs are in cur_ now

  uint64_t kept = n;
  if (dups > 0) {
    auto flags =
        thrust::make_transform_iterator(thrust::counting_iterator<uint64_t>(0), KeepLast<K>{cur_.keys.data(), n});
    auto select_keys = [&](void* p, size_t& bytes) {
      return cub::DeviceSelect::Flagged(p, bytes, cur_.keys.data(), flags, alt_.keys.data(), d_kept, n, stream_);
    };
    auto select_values = [&](void* p, size_t& bytes) {
      return cub::DeviceSelect::Flagged(p, bytes, cur_.values.data(), flags, alt_.values.data(), d_kept, n, stream_);
    };
    temp_.prepare("cub::DeviceSelect::Flagged (build keys)", select_keys);
    temp_.prepare("cub::DeviceSelect::Flagged (build values)", select_values);
    timer_.start(stream_);
    temp_.run("cub::DeviceSelect::Flagged (build keys)", select_keys);
    temp_.run("cub::DeviceSelect::Flagged (build values)", select_values);
    ms += timer_.stop(stream_);
    d2h(h_u64_.data(), d_kept, sizeof(unsigned long long));
    kept = h_u64_[0];
    cur_.swap(alt_);
  }

  cur_.n = kept;
  cur_.layout = FenceLayout::for_size(kept);
  cur_.reserve_fences(kept, false);
  timer_.start(stream_);
  build_fence_levels(cur_, 0, stream_);
  ms += timer_.stop(stream_);
  t.add(Phase::Build, ms);
}

template void SortedArray<uint32_t, uint32_t>::build(const KeyValues&, DeviceTime&);

}  // namespace gpudict::sa
