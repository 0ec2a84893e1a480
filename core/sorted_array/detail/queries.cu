// Queries: lookup, count, range, successor. Each type of a batch runs as one
// launch of the search kernel (search_index.cuh) with its Op; ranges add a
// scan of their sizes and the balanced copy (range_copy.cu). Only device work
// is timed; the copies of inputs and results are not.
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
void SortedArray<K, V>::run_queries(OpType type, const Batch& batch, const std::vector<uint32_t>& ops,
                                    const ArrayView<K, V>& view, Phase phase, BatchResults& r, DeviceTime& t) {
  const uint64_t q = ops.size();
  if (q == 0) return;
  if (q > kMaxKeys) throw RuntimeFailure("sorted-array: more than " + std::to_string(kMaxKeys) + " queries of a type");
  const bool two_keys = type == OpType::Count || type == OpType::Range;
  h_keys_.reserve_discard(q);
  q_keys_.reserve_discard(q, "sorted-array query keys");
  for (uint64_t j = 0; j < q; ++j) h_keys_[j] = static_cast<K>(batch.keys[ops[j]]);
  if (two_keys) {
    h_args_.reserve_discard(q);
    q_args_.reserve_discard(q, "sorted-array query bounds");
    for (uint64_t j = 0; j < q; ++j) h_args_[j] = static_cast<K>(batch.args[ops[j]]);
  }
  copy_to_device(stream_, q_keys_.data(), h_keys_.data(), q * sizeof(K));
  if (two_keys) copy_to_device(stream_, q_args_.data(), h_args_.data(), q * sizeof(K));

  switch (type) {
    case OpType::Lookup: {
      q_found_.reserve_discard(q, "sorted-array lookup results");
      q_value_out_.reserve_discard(q, "sorted-array lookup results");
      h_found_.reserve_discard(q);
      h_values_.reserve_discard(q);
      timer_.start(stream_);
      launch_search(view, LookupOp<K, V>{q_keys_.data(), q_found_.data(), q_value_out_.data()}, q, stream_,
                    "search_kernel<LookupOp>");
      t.add(phase, timer_.stop(stream_));
      copy_to_host(stream_, h_found_.data(), q_found_.data(), q);
      copy_to_host(stream_, h_values_.data(), q_value_out_.data(), q * sizeof(V));
      for (uint64_t j = 0; j < q; ++j) {
        const uint32_t i = ops[j];
        r.found[i] = h_found_[j];
        r.value[i] = h_values_[j];
      }
      break;
    }
    case OpType::Count: {
      q_u32_.reserve_discard(q, "sorted-array count results");
      h_u32_.reserve_discard(q);
      timer_.start(stream_);
      launch_search(view, CountOp<K, V>{q_keys_.data(), q_args_.data(), q_u32_.data()}, q, stream_,
                    "search_kernel<CountOp>");
      t.add(phase, timer_.stop(stream_));
      copy_to_host(stream_, h_u32_.data(), q_u32_.data(), q * sizeof(uint32_t));
      for (uint64_t j = 0; j < q; ++j) r.value[ops[j]] = h_u32_[j];
      break;
    }
    case OpType::Successor: {
      q_found_.reserve_discard(q, "sorted-array successor results");
      q_key_out_.reserve_discard(q, "sorted-array successor results");
      q_value_out_.reserve_discard(q, "sorted-array successor results");
      h_found_.reserve_discard(q);
      h_args_.reserve_discard(q);
      h_values_.reserve_discard(q);
      timer_.start(stream_);
      launch_search(view, SuccessorOp<K, V>{q_keys_.data(), q_found_.data(), q_key_out_.data(), q_value_out_.data()},
                    q, stream_, "search_kernel<SuccessorOp>");
      t.add(phase, timer_.stop(stream_));
      copy_to_host(stream_, h_found_.data(), q_found_.data(), q);
      copy_to_host(stream_, h_args_.data(), q_key_out_.data(), q * sizeof(K));
      copy_to_host(stream_, h_values_.data(), q_value_out_.data(), q * sizeof(V));
      for (uint64_t j = 0; j < q; ++j) {
        const uint32_t i = ops[j];
        r.found[i] = h_found_[j];
        r.key[i] = h_args_[j];
        r.value[i] = h_values_[j];
      }
      break;
    }
    case OpType::Range: {
      double ms = 0.0;
      const uint64_t total = range_bounds(view, q_keys_.data(), q_args_.data(), q, ms);
      if (total > 0) {
        range_keys_.reserve_discard(total, "sorted-array range results");
        range_values_.reserve_discard(total, "sorted-array range results");
        timer_.start(stream_);
        copy_range_pairs(view, q, total, range_keys_.data(), range_values_.data());
        ms += timer_.stop(stream_);
      }
      t.add(phase, ms);
      for (uint64_t j = 0; j < q; ++j) {
        const uint32_t i = ops[j];
        r.key[i] = h_u64_[j];
        r.value[i] = h_u64_[j + 1] - h_u64_[j];
      }
      r.range_keys.resize(total);
      r.range_values.resize(total);
      if (total > 0) {
        h_keys_.reserve_discard(total);
        h_values_.reserve_discard(total);
        copy_to_host(stream_, h_keys_.data(), range_keys_.data(), total * sizeof(K));
        copy_to_host(stream_, h_values_.data(), range_values_.data(), total * sizeof(V));
        for (uint64_t x = 0; x < total; ++x) {
          r.range_keys[x] = h_keys_[x];
          r.range_values[x] = h_values_[x];
        }
      }
      break;
    }
    default:
      throw InputError("sorted-array: " + std::string(op_name(type)) + " is not a query");
  }
}

template <class K, class V>
uint64_t SortedArray<K, V>::range_bounds(const ArrayView<K, V>& view, const K* lo, const K* hi, uint64_t q,
                                         double& ms) {
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
  ms += timer_.stop(stream_);
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
  double ms = 0.0;
  const uint64_t total = range_bounds(view, lo, hi, n, ms);
  if (offsets_out)
    GPUDICT_CUDA(cudaMemcpyAsync(offsets_out, q_range_offset_.data(), (n + 1) * sizeof(uint64_t),
                                 cudaMemcpyDeviceToDevice, stream_));
  if (total > 0 && total <= capacity && (keys_out || values_out)) {
    // A null output is written to scratch (copy_ranges writes both).
    if (!keys_out) range_keys_.reserve_discard(total, "sorted-array range results");
    if (!values_out) range_values_.reserve_discard(total, "sorted-array range results");
    copy_range_pairs(view, n, total, keys_out ? keys_out : range_keys_.data(),
                     values_out ? values_out : range_values_.data());
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
  launch_search(view(snapshot), LookupOp<K, V>{keys, q_found_.data(), values_out ? values_out : q_value_out_.data()}, n,
                stream_, "search_kernel<LookupOp>");
  flags_to_bool(q_found_.data(), found_out, n, stream_);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

template <class K, class V>
void SortedArray<K, V>::count_device(const K* lo, const K* hi, uint64_t n, uint64_t* counts_out,
                                     const std::string& snapshot) {
  if (n == 0) return;
  if (n > kMaxKeys) throw InputError("sorted_array_map: more than " + std::to_string(kMaxKeys) + " queries in a call");
  q_u32_.reserve_discard(n, "sorted-array count results");
  launch_search(view(snapshot), CountOp<K, V>{lo, hi, q_u32_.data()}, n, stream_, "search_kernel<CountOp>");
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
  launch_search(view(snapshot),
                SuccessorOp<K, V>{keys, q_found_.data(), keys_out ? keys_out : q_key_out_.data(),
                                  values_out ? values_out : q_value_out_.data()},
                n, stream_, "search_kernel<SuccessorOp>");
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

template void SortedArray<uint32_t, uint32_t>::run_queries(OpType, const Batch&, const std::vector<uint32_t>&,
                                                           const ArrayView<uint32_t, uint32_t>&, Phase,
                                                           BatchResults&, DeviceTime&);
template void SortedArray<uint32_t, uint64_t>::run_queries(OpType, const Batch&, const std::vector<uint32_t>&,
                                                           const ArrayView<uint32_t, uint64_t>&, Phase,
                                                           BatchResults&, DeviceTime&);
template void SortedArray<uint64_t, uint64_t>::run_queries(OpType, const Batch&, const std::vector<uint32_t>&,
                                                           const ArrayView<uint64_t, uint64_t>&, Phase,
                                                           BatchResults&, DeviceTime&);

}  // namespace gpudict::sa
