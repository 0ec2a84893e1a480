// A call's inserts and deletes, merged as one batch.
//
//  1. stage the updates (key, payload = is_delete << 32 | value) in order;
//     with 64-bit values the payload is is_delete << 32 | j, j the update's
//     index in batch order, and the values go to the device in that order
//     too (the merge gathers a surviving insert's value by j), so the sort
//     still moves 8-byte payloads;
//  2. stable radix sort by key: a key's updates stay in batch order, so the
//     last one of each run of equal keys is the one that takes effect;
//  3. classify each sorted entry j (the search kernel with ClassifyOp):
//     pos_j = lower_bound(A, key_j), present_j = A[pos_j] == key_j,
//     e_j = 2 pos_j + present_j, delta_j = +1 (insert of an absent key),
//     -1 (delete of a present key), 0 otherwise or when not the last of its
//     run; write_j = last of run and an insert;
//  4. D = exclusive scan of delta (D_m = size change);
//  5. one merge pass into the ping-pong buffer. Array element i has merge key
//     2 i + 1, entry j has e_j; entry j precedes element i iff e_j <= 2 i.
//     Element i goes to i + D_k(i), k(i) = #entries with e <= 2 i, unless the
//     next entry has e = 2 i + 1 (a delete or replace of that very key);
//     a surviving insert j goes to pos_j + D_j (a replacement lands exactly
//     where its old pair would have gone). The pass is split into equal tiles
//     of (elements + entries) by merge path, so tiles are balanced whatever
//     the batch looks like (clustered, larger than the array, empty array);
//     a tile stages its entries' e and D in shared memory and every element
//     finds k(i) by a short binary search there. A tile writes one contiguous
//     output range; every element is read once and written once (8 B + 8 B).
//     The writer of every 32nd output also writes the level-1 fence;
//  6. the upper fence levels from level 1, and swap buffers.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>
#include <cstring>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/sorted_array/detail/search_index.cuh"
#include "core/sorted_array/detail/sorted_array_impl.cuh"

namespace gpudict::sa {

namespace {

constexpr int kMergeThreads = 256;
constexpr int kMergePerThread = 8;
constexpr uint32_t kMergeTile = kMergeThreads * kMergePerThread;  // elements + entries per tile

constexpr uint64_t kDeleteBit = 1ull << 32;

// Whether a value of type V rides in the payload's low 32 bits (u32 values)
// or is gathered by the update index the payload holds there (u64 values).
template <class V>
inline constexpr bool kInlineValue = sizeof(V) <= 4;

template <class K, class V>
struct ClassifyOp {
  static constexpr int kSearches = 1;
  const K* keys;            // sorted batch keys
  const uint64_t* payload;  // sorted with them (stable)
  uint32_t m;
  uint32_t* e;
  int32_t* delta;  // m + 1 entries; delta[m] = 0 (the scan's total)
  uint8_t* write;

  __device__ __forceinline__ void setup(uint32_t j, K (&q)[1], bool (&upper)[1]) const {
    q[0] = keys[j];
    upper[0] = false;
  }
  __device__ __forceinline__ void finish(const ArrayView<K, V>& a, uint32_t j, const K (&q)[1],
                                         const uint32_t (&pos)[1]) const {
    const uint32_t p = pos[0];
    const bool present = p < a.n() && a.keys()[p] == q[0];
    const bool last = j + 1 == m || keys[j + 1] != q[0];
    const bool del = (payload[j] & kDeleteBit) != 0;
    int32_t d = 0;
    if (last) d = del ? (present ? -1 : 0) : (present ? 0 : 1);
    e[j] = 2 * p + (present ? 1u : 0u);
    delta[j] = d;
    write[j] = (last && !del) ? 1 : 0;
    if (j == 0) delta[m] = 0;
  }
};

// Merge-path split of every tile boundary: split[t] = array elements among the
// first min(t * kMergeTile, n + m) items of the merged order.
__global__ void merge_partition_kernel(const uint32_t* __restrict__ e, uint32_t n, uint32_t m, uint32_t tiles,
                                       uint32_t* __restrict__ split) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t > tiles) return;
  const uint64_t total = static_cast<uint64_t>(n) + m;
  const uint64_t d = min(static_cast<uint64_t>(t) * kMergeTile, total);
  uint64_t lo = d > m ? d - m : 0;
  uint64_t hi = min(d, static_cast<uint64_t>(n));
  while (lo < hi) {
    const uint64_t mid = (lo + hi) >> 1;
    // Element mid precedes entry d-1-mid iff 2 mid + 1 <= e.
    if (2 * mid + 1 <= e[d - 1 - mid])
      lo = mid + 1;
    else
      hi = mid;
  }
  split[t] = static_cast<uint32_t>(lo);
}

template <class K, class V>
__global__ void __launch_bounds__(kMergeThreads)
    merge_tiles_kernel(const K* __restrict__ a_keys, const V* __restrict__ a_values, uint32_t n,
                       const K* __restrict__ b_keys, const uint64_t* __restrict__ b_payload,
                       const uint32_t* __restrict__ b_e, const int32_t* __restrict__ b_offset,
                       const uint8_t* __restrict__ b_write, uint32_t m, const uint32_t* __restrict__ split,
                       const V* __restrict__ b_values, K* __restrict__ out_keys, V* __restrict__ out_values,
                       K* __restrict__ out_fences) {
  __shared__ uint32_t s_e[kMergeTile + 1];
  __shared__ int32_t s_off[kMergeTile + 1];
  const uint32_t tile = blockIdx.x;
  const uint64_t total = static_cast<uint64_t>(n) + m;
  const uint64_t d0 = static_cast<uint64_t>(tile) * kMergeTile;
  const uint64_t d1 = min(d0 + kMergeTile, total);
  const uint32_t i0 = split[tile], i1 = split[tile + 1];
  const uint32_t k0 = static_cast<uint32_t>(d0 - i0), k1 = static_cast<uint32_t>(d1 - i1);
  const uint32_t na = i1 - i0, nb = k1 - k0;
  const uint32_t tid = threadIdx.x;

  // The tile's array elements, all loads in flight before anything else.
  K ak[kMergePerThread];
  V av[kMergePerThread];
#pragma unroll
  for (int r = 0; r < kMergePerThread; ++r) {
    const uint32_t t = r * kMergeThreads + tid;
    if (t < na) {
      ak[r] = a_keys[i0 + t];
      av[r] = a_values[i0 + t];
    }
  }
  // The tile's entries (and the one after it: element i may be matched by
  // entry k1 of the next tile); D is defined up to index m.
  for (uint32_t x = tid; x <= nb; x += kMergeThreads) {
    const uint32_t k = k0 + x;
    s_off[x] = b_offset[k];
    if (k < m) s_e[x] = b_e[k];
  }
  __syncthreads();

#pragma unroll
  for (int r = 0; r < kMergePerThread; ++r) {
    const uint32_t t = r * kMergeThreads + tid;
    if (t < na) {
      const uint32_t i = i0 + t;
      const uint32_t local = count_before<uint32_t>(s_e, nb, 2 * i, true);  // entries with e <= 2 i
      const bool matched = k0 + local < m && s_e[local] == 2 * i + 1;
      if (!matched) {
        const uint32_t o = i + static_cast<uint32_t>(s_off[local]);
        out_keys[o] = ak[r];
        out_values[o] = av[r];
        put_fence(out_fences, o, ak[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kMergePerThread; ++r) {
    const uint32_t x = r * kMergeThreads + tid;
    if (x < nb) {
      const uint32_t j = k0 + x;
      if (b_write[j]) {
        const uint32_t o = (s_e[x] >> 1) + static_cast<uint32_t>(s_off[x]);
        const K key = b_keys[j];
        out_keys[o] = key;
        if constexpr (kInlineValue<V>)
          out_values[o] = static_cast<V>(b_payload[j]);
        else
          out_values[o] = b_values[static_cast<uint32_t>(b_payload[j])];  // by update index
        put_fence(out_fences, o, key);
      }
    }
  }
}

}  // namespace

template <class K, class V>
void SortedArray<K, V>::reserve_update(uint64_t m, uint64_t inserts) {
  const uint64_t n = cur_.n;
  const uint64_t upper = n + inserts;
  if (upper > kMaxKeys || m > kMaxKeys)
    throw RuntimeFailure("sorted-array holds at most " + std::to_string(kMaxKeys) + " keys (" + std::to_string(n) +
                         " resident + " + std::to_string(inserts) + " inserts)");
  // Scratch, output buffer and its index, all allocated before the timed work.
  const uint64_t total = n + m;
  const uint32_t tiles = static_cast<uint32_t>(div_up(total, kMergeTile));
  for (int b = 0; b < 2; ++b) {
    upd_keys_[b].reserve_discard(m, "sorted-array update keys");
    upd_payload_[b].reserve_discard(m, "sorted-array update payload");
  }
  upd_e_.reserve_discard(m, "sorted-array update positions");
  upd_delta_.reserve_discard(m + 1, "sorted-array update deltas");
  upd_offset_.reserve_discard(m + 1, "sorted-array update offsets");
  upd_write_.reserve_discard(m, "sorted-array update flags");
  upd_split_.reserve_discard(static_cast<uint64_t>(tiles) + 1, "sorted-array merge splits");
  if constexpr (!kInlineValue<V>) upd_values_.reserve_discard(m, "sorted-array update values");
  alt_.reserve_pairs(upper, true);
  alt_.reserve_fences(upper, true);
}

template <class K, class V>
void SortedArray<K, V>::merge_staged(uint64_t m) {
  const uint64_t n = cur_.n;
  const uint64_t total = n + m;
  const uint32_t tiles = static_cast<uint32_t>(div_up(total, kMergeTile));
  const ArrayView<K, V> a = cur_.view();
  cub::DoubleBuffer<K> dk(upd_keys_[0].data(), upd_keys_[1].data());
  cub::DoubleBuffer<uint64_t> dp(upd_payload_[0].data(), upd_payload_[1].data());
  auto sort = [&](void* p, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(p, bytes, dk, dp, m, 0, static_cast<int>(8 * sizeof(K)), stream_);
  };
  auto scan = [&](void* p, size_t& bytes) {
    return cub::DeviceScan::ExclusiveSum(p, bytes, upd_delta_.data(), upd_offset_.data(), m + 1, stream_);
  };
  temp_.prepare("cub::DeviceRadixSort::SortPairs (update batch)", sort);
  temp_.prepare("cub::DeviceScan::ExclusiveSum (update deltas)", scan);
  timer_.start(stream_);
  temp_.run("cub::DeviceRadixSort::SortPairs (update batch)", sort);
  const ClassifyOp<K, V> classify{dk.Current(), dp.Current(), static_cast<uint32_t>(m), upd_e_.data(),
                                  upd_delta_.data(), upd_write_.data()};
  launch_search(a, classify, m, stream_, "search_kernel<ClassifyOp>");
  temp_.run("cub::DeviceScan::ExclusiveSum (update deltas)", scan);
  merge_partition_kernel<<<blocks_for(static_cast<uint64_t>(tiles) + 1, 256), 256, 0, stream_>>>(
      upd_e_.data(), static_cast<uint32_t>(n), static_cast<uint32_t>(m), tiles, upd_split_.data());
  GPUDICT_CHECK_LAUNCH("merge_partition_kernel");
  merge_tiles_kernel<K, V><<<tiles, kMergeThreads, 0, stream_>>>(
      a.keys(), a.values, static_cast<uint32_t>(n), dk.Current(), dp.Current(), upd_e_.data(), upd_offset_.data(),
      upd_write_.data(), static_cast<uint32_t>(m), upd_split_.data(), kInlineValue<V> ? nullptr : upd_values_.data(),
      alt_.keys.data(), alt_.values.data(), alt_.fences.data());
  GPUDICT_CHECK_LAUNCH("merge_tiles_kernel");
  double ms = timer_.stop(stream_);

  // New size: n + D_m.
  h_u32_.reserve_discard(1);
  copy_to_host(stream_, h_u32_.data(), upd_offset_.data() + m, sizeof(int32_t));
  int32_t change = 0;
  std::memcpy(&change, h_u32_.data(), sizeof change);
  const uint64_t n_new = static_cast<uint64_t>(static_cast<int64_t>(n) + change);

  alt_.n = n_new;
  alt_.layout = FenceLayout::for_size(n_new, kTopMaxOf<K>);
  // Settled: this segment follows the host's read of the new size, after
  // which its first launch arrives late (core/common/settle.hpp); the LSM's
  // update chunks are timed the same way.
  timer_.start_settled(stream_);
  build_fence_levels(alt_, 1, stream_);
  ms += timer_.stop(stream_);
  cur_.swap(alt_);
  add_time(ms);
}

namespace {
// A device call's updates as the merge takes them: keys, and each one's
// payload (delete bit | value, or | its index with 64-bit values, whose
// values go into `values` by index). With per-update flags (erase), the
// inserts among them are counted into *inserts (the merge output's size
// bound).
template <class K, class V>
__global__ void stage_updates_kernel(const K* in_keys, const V* in_values, const bool* erase, bool all_insert,
                                     uint64_t m, K* keys, uint64_t* payload, V* values,
                                     unsigned long long* inserts) {
  const uint64_t j = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool insert = j < m && (erase ? !erase[j] : all_insert);
  if (erase) {
    const unsigned ins = __ballot_sync(0xFFFFFFFFu, insert);
    if ((threadIdx.x & 31) == 0 && ins) atomicAdd(inserts, static_cast<unsigned long long>(__popc(ins)));
  }
  if (j >= m) return;
  keys[j] = in_keys[j];
  const V v = insert && in_values ? in_values[j] : V(0);
  if constexpr (kInlineValue<V>) {
    payload[j] = insert ? static_cast<uint64_t>(v) : kDeleteBit;
  } else {
    payload[j] = (insert ? 0 : kDeleteBit) | j;
    values[j] = v;
  }
}
}  // namespace

template <class K, class V>
void SortedArray<K, V>::update_device(const K* keys, const V* values, const bool* erase, uint64_t m, bool insert) {
  if (m == 0) return;
  if (m > kMaxKeys) throw InputError("sorted_array_map: more than " + std::to_string(kMaxKeys) + " updates in a call");
  // Mixed updates: the scratch first, the merge output once the inserts
  // are counted.
  reserve_update(m, erase ? 0 : (insert ? m : 0));
  unsigned long long* d_inserts = d_scalars_.data() + 2;
  if (erase) GPUDICT_CUDA(cudaMemsetAsync(d_inserts, 0, sizeof(unsigned long long), stream_));
  stage_updates_kernel<K, V><<<blocks_for(m, 256), 256, 0, stream_>>>(
      keys, values, erase, insert, m, upd_keys_[0].data(), upd_payload_[0].data(),
      kInlineValue<V> ? nullptr : upd_values_.data(), d_inserts);
  GPUDICT_CHECK_LAUNCH("stage_updates_kernel");
  if (erase) {
    h_u64_.reserve_discard(1);
    copy_to_host(stream_, h_u64_.data(), d_inserts, sizeof(unsigned long long));
    reserve_update(m, h_u64_[0]);
  }
  merge_staged(m);
  GPUDICT_CUDA(cudaStreamSynchronize(stream_));
}

#define GPUDICT_SA_UPDATES(K, V)                                               \
  template void SortedArray<K, V>::reserve_update(uint64_t, uint64_t);         \
  template void SortedArray<K, V>::merge_staged(uint64_t);                      \
  template void SortedArray<K, V>::update_device(const K*, const V*, const bool*, uint64_t, bool);
GPUDICT_SA_UPDATES(uint32_t, uint32_t)
GPUDICT_SA_UPDATES(uint32_t, uint64_t)
GPUDICT_SA_UPDATES(uint64_t, uint64_t)
#undef GPUDICT_SA_UPDATES

}  // namespace gpudict::sa
