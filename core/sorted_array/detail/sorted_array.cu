// The sorted array: construction, snapshots, stats and the memory bound.
// The heavy parts live in build.cu, merge_update.cu, queries.cu,
// range_copy.cu and fence_index.cu.

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/key_traits.hpp"
#include "core/sorted_array/detail/search_index.cuh"
#include "core/sorted_array/detail/sorted_array_impl.cuh"

namespace gpudict {

namespace sa {

template <class K, class V>
int SortedArray<K, V>::use_device(int device) {
  GPUDICT_CUDA(cudaSetDevice(device));
  return device;
}

template <class K, class V>
SortedArray<K, V>::SortedArray(int device) : device_(use_device(device)) {
  GPUDICT_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  d_scalars_ = DeviceBuffer<unsigned long long>(4, "sorted-array counters");
  cur_.layout = FenceLayout::for_size(0, kTopMaxOf<K>);
  alt_.layout = FenceLayout::for_size(0, kTopMaxOf<K>);
}

template <class K, class V>
SortedArray<K, V>::~SortedArray() {
  if (stream_) {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
}


template <class K, class V>
uint64_t SortedArray<K, V>::device_bytes_needed(const capacity_bounds& b) {
  const uint64_t kv = sizeof(K) + sizeof(V);
  const uint64_t R = b.max_resident, B = b.max_batch, Q = b.max_queries, S = b.max_snapshots;
  const uint64_t R32 = round_up(R, kFanout) + kFanout;
  const FenceLayout f = FenceLayout::for_size(R, kTopMaxOf<K>);
  const uint64_t fence = (std::max<uint64_t>(f.fence_entries, round_up(div_up(R, kFanout), kFanout)) + kFanout) *
                         sizeof(K);
  // Live array + ping-pong buffer: updates grow capacity by x1.5.
  const uint64_t arrays = 2 * (R32 + R32 / 2) * kv + 2 * (fence + fence / 2);
  // Update scratch: two sort buffers of (key, payload), classify, scan, split.
  const uint64_t tiles = div_up(R + B, 2048) + 2;
  // u64 values: the values by update index too (u32 values ride in the payload).
  uint64_t update = B * (2 * sizeof(K) + 2 * sizeof(uint64_t) + 4 + 4 + 4 + 1 + (sizeof(V) > 4 ? sizeof(V) : 0)) + 8 +
                    tiles * 4;
  // CUB temporary storage (largest of the calls), asked from CUB itself.
  uint64_t cub = 0;
  {
    size_t bytes = 0;
    cub::DoubleBuffer<K> dk(nullptr, nullptr);
    cub::DoubleBuffer<V> dv(nullptr, nullptr);
    cub::DoubleBuffer<uint64_t> dp(nullptr, nullptr);
    if (cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, std::max<uint64_t>(R, 1), 0, 8 * sizeof(K)) ==
        cudaSuccess)
      cub = std::max<uint64_t>(cub, bytes);
    bytes = 0;
    if (cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dp, std::max<uint64_t>(B, 1), 0, 8 * sizeof(K)) ==
        cudaSuccess)
      cub = std::max<uint64_t>(cub, bytes);
    bytes = 0;
    if (cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<uint64_t*>(nullptr),
                                      static_cast<uint64_t*>(nullptr), std::max<uint64_t>(std::max(B, Q), 1) + 1) ==
        cudaSuccess)
      cub = std::max<uint64_t>(cub, bytes);
    bytes = 0;
    if (cub::DeviceSelect::Flagged(nullptr, bytes, static_cast<const K*>(nullptr), static_cast<const bool*>(nullptr),
                                   static_cast<K*>(nullptr), static_cast<unsigned long long*>(nullptr),
                                   std::max<uint64_t>(R, 1)) == cudaSuccess)
      cub = std::max<uint64_t>(cub, bytes);
    cudaGetLastError();
    cub += cub / 4 + 4096;
  }
  // Query scratch: per-query outputs, range sizes/offsets, range tiles (the
  // inputs are the caller's).
  const uint64_t queries = Q * (1 + sizeof(K) + sizeof(V) + 4 + 8 + 8) + 16 + (Q / 2048 + 2) * 4;
  // Snapshots: exact-size copies.
  const uint64_t snaps = S * (R32 * kv + fence);
  // Range results are allocated per batch as large as they come (not bounded here).
  return arrays + update + cub + queries + snaps + 4 * sizeof(unsigned long long);
}

template <class K, class V>
ArrayView<K, V> SortedArray<K, V>::view(const std::string& snapshot) const {
  if (snapshot.empty()) return cur_.view();
  auto it = snapshots_.find(snapshot);
  if (it == snapshots_.end()) throw InputError("unknown snapshot '" + snapshot + "'");
  return it->second->view();
}

template <class K, class V>
void SortedArray<K, V>::snapshot(const std::string& name) {
  if (snapshots_.count(name)) throw InputError("snapshot '" + name + "' already exists");
  auto s = std::make_unique<ArrayStore<K, V>>();
  const uint64_t n = cur_.n;
  const uint64_t padded = round_up(n, kFanout);
  if (padded) {
    s->keys = DeviceBuffer<K>(padded, "sorted-array snapshot keys");
    s->values = DeviceBuffer<V>(padded, "sorted-array snapshot values");
  }
  if (cur_.layout.fence_entries)
    s->fences = DeviceBuffer<K>(cur_.layout.fence_entries, "sorted-array snapshot index");
  s->n = n;
  s->layout = cur_.layout;
  timer_.start(stream_);
  if (padded) {
    GPUDICT_CUDA(cudaMemcpyAsync(s->keys.data(), cur_.keys.data(), padded * sizeof(K), cudaMemcpyDeviceToDevice,
                                 stream_));
    GPUDICT_CUDA(
        cudaMemcpyAsync(s->values.data(), cur_.values.data(), n * sizeof(V), cudaMemcpyDeviceToDevice, stream_));
  }
  if (cur_.layout.fence_entries)
    GPUDICT_CUDA(cudaMemcpyAsync(s->fences.data(), cur_.fences.data(), cur_.layout.fence_entries * sizeof(K),
                                 cudaMemcpyDeviceToDevice, stream_));
  add_time(timer_.stop(stream_));
  snapshots_.emplace(name, std::move(s));
}

template <class K, class V>
void SortedArray<K, V>::drop_snapshot(const std::string& name) {
  auto it = snapshots_.find(name);
  if (it == snapshots_.end()) throw InputError("unknown snapshot '" + name + "'");
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  snapshots_.erase(it);
}

template <class K, class V>
uint64_t SortedArray<K, V>::scratch_bytes() const {
  uint64_t b = temp_.bytes() + d_scalars_.bytes() + upd_e_.bytes() + upd_delta_.bytes() + upd_offset_.bytes() +
               upd_write_.bytes() + upd_split_.bytes() + q_found_.bytes() +
               q_key_out_.bytes() + q_value_out_.bytes() + q_u32_.bytes() + q_range_count_.bytes() +
               q_range_offset_.bytes() + q_range_tiles_.bytes() + range_keys_.bytes() + range_values_.bytes();
  b += upd_values_.bytes();
  for (int i = 0; i < 2; ++i) b += upd_keys_[i].bytes() + upd_payload_[i].bytes();
  return b;
}

template <class K, class V>
sorted_array_stats SortedArray<K, V>::stats() const {
  sorted_array_stats s;
  s.size = cur_.n;
  for (const auto& kv : snapshots_) s.snapshot_bytes += kv.second->bytes();
  s.capacity = cur_.capacity();
  s.index_levels = cur_.layout.levels - 1;
  s.index_top_entries = cur_.layout.size[cur_.layout.top()];
  s.index_fanout = kFanout;
  s.index_top_max = kTopMaxOf<K>;
  s.snapshots = snapshots_.size();
  s.scratch_bytes = scratch_bytes();
  s.device_bytes = cur_.bytes() + alt_.bytes() + s.snapshot_bytes + s.scratch_bytes;
  return s;
}

template class SortedArray<uint32_t, uint32_t>;
template class SortedArray<uint32_t, uint64_t>;
template class SortedArray<uint64_t, uint64_t>;

}  // namespace sa
}  // namespace gpudict
