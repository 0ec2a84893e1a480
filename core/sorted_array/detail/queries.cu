// Queries: lookup, count, range, successor. Each type of a batch runs as one
// launch of the search kernel (search_index.cuh) with its Op; ranges add a
// scan of their sizes and the balanced copy (range_copy.cu). Only device work
// is timed (device_timing.hpp).
//   lookup(k):     i = lower_bound(k); found iff i < n and keys[i] == k
//   count(lo, hi): lo > hi: 0; else upper_bound(hi) - lower_bound(lo)
//                  (upper_bound counts keys <= hi, so hi = the largest key of
//                  either width needs no +1)
//   range(lo, hi): the count's pairs, from lower_bound(lo)
//   successor(k):  i = upper_bound(k); found iff i < n
#include <cub/device/device_scan.cuh>

#include <cstdint>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/width_copy.cuh"
#include "core/sorted_array/detail/range_copy.cuh"
#include "core/sorted_array/detail/search_index.cuh"
#include "core/sorted_array/detail/sorted_array_impl.cuh"

namespace gpudict::sa {

namespace {

template <class K, class V>
struct LookupOp {
  static constexpr int kSearches = 1;
  const K* in;
  uint8_t* found;
  V* value;
  __device__ __forceinline__ void setup(uint32_t i, K (&q)[1], bool (&upper)[1]) const {
    q[0] = in[i];
    upper[0] = false;
  }
  __device__ __forceinline__ void finish(const ArrayView<K, V>& a, uint32_t i, const K (&q)[1],
                                         const uint32_t (&pos)[1]) const {
    const uint32_t p = pos[0];
    const bool f = p < a.n() && a.keys()[p] == q[0];
    found[i] = f ? 1 : 0;
    value[i] = f ? a.values[p] : V(0);
  }
};

template <class K, class V>
struct CountOp {
  static constexpr int kSearches = 2;
  const K* lo;
  const K* hi;
  uint32_t* count;
  __device__ __forceinline__ void setup(uint32_t i, K (&q)[2], bool (&upper)[2]) const {
    q[0] = lo[i];
    q[1] = hi[i];
    upper[0] = false;
    upper[1] = true;
  }
  __device__ __forceinline__ void finish(const ArrayView<K, V>&, uint32_t i, const K (&q)[2],
                                         const uint32_t (&pos)[2]) const {
    count[i] = q[0] <= q[1] ? pos[1] - pos[0] : 0u;
  }
};

template <class K, class V>
struct RangeCountOp {
  static constexpr int kSearches = 2;
  const K* lo;
  const K* hi;
  uint32_t* first;
  uint64_t* size;  // items + 1 entries: size[items] = 0 (the scan's total)
  uint32_t items;
  __device__ __forceinline__ void setup(uint32_t i, K (&q)[2], bool (&upper)[2]) const {
    q[0] = lo[i];
    q[1] = hi[i];
    upper[0] = false;
    upper[1] = true;
  }
  __device__ __forceinline__ void finish(const ArrayView<K, V>&, uint32_t i, const K (&q)[2],
                                         const uint32_t (&pos)[2]) const {
    first[i] = pos[0];
    size[i] = q[0] <= q[1] ? pos[1] - pos[0] : 0u;
    if (i == 0) size[items] = 0;
  }
};

template <class K, class V>
struct SuccessorOp {
  static constexpr int kSearches = 1;
  const K* in;
  uint8_t* found;
  K* key;
  V* value;
  __device__ __forceinline__ void setup(uint32_t i, K (&q)[1], bool (&upper)[1]) const {
    q[0] = in[i];
    upper[0] = true;
  }
  __device__ __forceinline__ void finish(const ArrayView<K, V>& a, uint32_t i, const K (&)[1],
                                         const uint32_t (&pos)[1]) const {
    const uint32_t p = pos[0];
    const bool f = p < a.n();
    found[i] = f ? 1 : 0;
    key[i] = f ? a.keys()[p] : K(0);
    value[i] = f ? a.values[p] : V(0);
  }
};

}  // namespace

template <class K, class V>
uint64_t SortedArray<K, V>::range_bounds(const ArrayView<K, V>& view, const K* lo, const K* hi, uint64_t q) {
  q_u32_.reserve_discard(q, "sorted-array range bounds");
  q_range_count_.reserve_discard(q + 1, "sorted-array range sizes");
  q_range_offset_.reserve_discard(q + 1, "sorted-array range offsets");
  h_u64_.reserve_discard(q + 1);
  const RangeCountOp<K, V> op{lo, hi, q_u32_.data(), q_range_count_.data(), static_cast<uint32_t>(q)};
  auto scan = [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, q_range_count_.data(), q_range_offset_.data(), q + 1, stream_);
  };
  temp_.prepare("cub::DeviceScan::ExclusiveSum (range sizes)", scan);
  timer_.start(stream_);
  launch_search(view, op, q, stream_, "search_kernel<RangeCountOp>");
  temp_.run("cub::DeviceScan::ExclusiveSum (range sizes)", scan);
  add_time(timer_.stop(stream_));
  copy_to_host(stream_, h_u64_.data(), q_range_offset_.data(), (q + 1) * sizeof(uint64_t));
  const uint64_t total = h_u64_[q];
  q_range_tiles_.reserve_discard(range_copy_tiles(total), "sorted-array range tiles");  // copy_range_pairs'
  return total;
}

template <class K, class V>
void SortedArray<K, V>::copy_range_pairs(const ArrayView<K, V>& view, uint64_t q, uint64_t total, K* keys_out,
                                         V* values_out) {
  copy_ranges(view.keys(), view.values, q_u32_.data(), q_range_offset_.data(), static_cast<uint32_t>(q), total,
              q_range_tiles_, keys_out, values_out, stream_);
}

template <class K, class V>
uint64_t SortedArray<K, V>::range_device(const K* lo, const K* hi, uint64_t n, uint64_t* offsets_out, K* keys_out,
                                         V* values_out, uint64_t capacity, const std::string& snapshot) {
  if (n > kMaxKeys) throw InputError("sorted_array_map: more than " + std::to_string(kMaxKeys) + " queries in a call");
  if (n == 0) {
    if (offsets_out) GPUDICT_CUDA(cudaMemsetAsync(offsets_out, 0, sizeof(uint64_t), stream_));
    GPUDICT_CUDA(cudaStreamSynchronize(stream_));
    return 0;
  }
  const ArrayView<K, V> view = this->view(snapshot);
  const uint64_t total = range_bounds(view, lo, hi, n);
  if (offsets_out)
    GPUDICT_CUDA(cudaMemcpyAsync(offsets_out, q_range_offset_.data(), (n + 1) * sizeof(uint64_t),
                                 cudaMemcpyDeviceToDevice, stream_));
  if (total > 0 && total <= capacity && (keys_out || values_out)) {
    // A null output is written to scratch (copy_ranges writes both).
    if (!keys_out) range_keys_.reserve_discard(total, "sorted-array range results");
    if (!values_out) range_values_.reserve_discard(total, "sorted-array range results");
    timer_.start(stream_);
    copy_range_pairs(view, n, total, keys_out ? keys_out : range_keys_.data(),
                     values_out ? values_out : range_values_.data());
    add_time(timer_.stop(stream_));
  }
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
  return total;
}

template <class K, class V>
void SortedArray<K, V>::find_device(const K* keys, uint64_t n, V* values_out, bool* found_out,
                                    const std::string& snapshot) {
  if (n == 0) return;
  if (n > kMaxKeys) throw InputError("sorted_array_map: more than " + std::to_string(kMaxKeys) + " queries in a call");
  q_found_.reserve_discard(n, "sorted-array lookup results");
  q_value_out_.reserve_discard(n, "sorted-array lookup results");
  const ArrayView<K, V> a = view(snapshot);
  timer_.start(stream_);
  launch_search(a, LookupOp<K, V>{keys, q_found_.data(), values_out ? values_out : q_value_out_.data()}, n, stream_,
                "search_kernel<LookupOp>");
  add_time(timer_.stop(stream_));
  flags_to_bool(q_found_.data(), found_out, n, stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SortedArray<K, V>::count_device(const K* lo, const K* hi, uint64_t n, uint64_t* counts_out,
                                     const std::string& snapshot) {
  if (n == 0) return;
  if (n > kMaxKeys) throw InputError("sorted_array_map: more than " + std::to_string(kMaxKeys) + " queries in a call");
  q_u32_.reserve_discard(n, "sorted-array count results");
  const ArrayView<K, V> a = view(snapshot);
  timer_.start(stream_);
  launch_search(a, CountOp<K, V>{lo, hi, q_u32_.data()}, n, stream_, "search_kernel<CountOp>");
  add_time(timer_.stop(stream_));
  narrow_copy<uint32_t>(q_u32_.data(), nullptr, counts_out, 8, n, stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SortedArray<K, V>::successor_device(const K* keys, uint64_t n, K* keys_out, V* values_out, bool* found_out,
                                         const std::string& snapshot) {
  if (n == 0) return;
  if (n > kMaxKeys) throw InputError("sorted_array_map: more than " + std::to_string(kMaxKeys) + " queries in a call");
  q_found_.reserve_discard(n, "sorted-array successor results");
  q_key_out_.reserve_discard(n, "sorted-array successor results");
  q_value_out_.reserve_discard(n, "sorted-array successor results");
  const ArrayView<K, V> a = view(snapshot);
  timer_.start(stream_);
  launch_search(a,
                SuccessorOp<K, V>{keys, q_found_.data(), keys_out ? keys_out : q_key_out_.data(),
                                  values_out ? values_out : q_value_out_.data()},
                n, stream_, "search_kernel<SuccessorOp>");
  add_time(timer_.stop(stream_));
  flags_to_bool(q_found_.data(), found_out, n, stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

#define GPUDICT_SA_DEVICE_QUERIES(K, V)                                                       \
  template void SortedArray<K, V>::find_device(const K*, uint64_t, V*, bool*, const std::string&);                \
  template void SortedArray<K, V>::count_device(const K*, const K*, uint64_t, uint64_t*, const std::string&);     \
  template void SortedArray<K, V>::successor_device(const K*, uint64_t, K*, V*, bool*, const std::string&);      \
  template uint64_t SortedArray<K, V>::range_device(const K*, const K*, uint64_t, uint64_t*, K*, V*, uint64_t,     \
                                                    const std::string&);
GPUDICT_SA_DEVICE_QUERIES(uint32_t, uint32_t)
GPUDICT_SA_DEVICE_QUERIES(uint32_t, uint64_t)
GPUDICT_SA_DEVICE_QUERIES(uint64_t, uint64_t)
#undef GPUDICT_SA_DEVICE_QUERIES

}  // namespace gpudict::sa
