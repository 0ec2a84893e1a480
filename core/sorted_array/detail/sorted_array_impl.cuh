// The sorted array behind sorted_array_map (internal). Its members are
// defined across small files:
//   sorted_array.cu   construction, snapshots, stats, the memory bound
//   build.cu          build(): radix sort + last-wins dedupe + fence index
//   merge_update.cu   a batch's updates: sort, classify, scan, merge-path merge
//   queries.cu        lookup / count / range / successor
//   range_copy.cu     the load-balanced copy of range results
//   fence_index.cu    the fence levels
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/capacity_bounds.hpp"
#include "core/common/cub_temp.cuh"
#include "core/common/device_timing.hpp"
#include "core/common/stream_copy.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/pinned_buffer.cuh"
#include "core/common/stream_follow.hpp"
#include "core/sorted_array/detail/layout.cuh"
#include "core/sorted_array/sorted_array_map.hpp"

namespace gpudict::sa {

template <class K, class V>
class SortedArray {

 public:
  explicit SortedArray(int device);
  ~SortedArray();
  SortedArray(const SortedArray&) = delete;
  SortedArray& operator=(const SortedArray&) = delete;

  // sorted_array_map's bound and figures (sorted_array.cu).
  static uint64_t device_bytes_needed(const capacity_bounds& b);
  sorted_array_stats stats() const;
  // Every later call adds its device time here (device_timing.hpp); null: none.
  void set_timing(device_timing* t) { timing_ = t; }
  // A device copy of the live array under `name` (InputError when taken).
  void snapshot(const std::string& name);
  void drop_snapshot(const std::string& name);

  // The library's bulk calls on device arrays (sorted_array_map), on this
  // array's stream; each returns when its results are written.
  // device_api.cu: a new array of the n pairs (the later pair of a key
  // wins); m updates merged as one batch (the later update of a key wins):
  // erase[j] (or, when erase is null, !insert) deletes keys[j], else
  // (keys[j], values[j]) is inserted or replaces the key's value.
  void build_device(const K* keys, const V* values, uint64_t n);
  void update_device(const K* keys, const V* values, const bool* erase, uint64_t m, bool insert);
  // Orders this array's stream after the caller's work queued on `caller`.
  void follow(cudaStream_t caller) { follower_.follow(stream_, caller); }
  // queries.cu: lookups, counts of [lo, hi], successors into the caller's
  // arrays (a null output is skipped; not found: 0), on the live array or
  // the named snapshot.
  void find_device(const K* keys, uint64_t n, V* values_out, bool* found_out, const std::string& snapshot = {});
  void count_device(const K* lo, const K* hi, uint64_t n, uint64_t* counts_out, const std::string& snapshot = {});
  void successor_device(const K* keys, uint64_t n, K* keys_out, V* values_out, bool* found_out,
                        const std::string& snapshot = {});
  // Ranges [lo[i], hi[i]]: offsets_out (n + 1 entries, may be null) the
  // exclusive sum of their sizes; their pairs into keys_out, values_out
  // (either may be null) when the total fits `capacity`. Returns the total.
  uint64_t range_device(const K* lo, const K* hi, uint64_t n, uint64_t* offsets_out, K* keys_out, V* values_out,
                        uint64_t capacity, const std::string& snapshot = {});
  // The live array (snapshot empty) or a snapshot's, for the queries above
  // and a caller's kernels (sorted_array_ref.cuh); valid until the next
  // update or build (a snapshot's: until it is dropped). InputError for an
  // unknown snapshot.
  ArrayView<K, V> view(const std::string& snapshot = {}) const;
  uint64_t size() const { return cur_.n; }

 private:
  // build.cu: the bulk build of n pairs staged in cur_ (keys, values), both
  // buffers reserved for n pairs.
  void build_staged(uint64_t n);
  // merge_update.cu: the checks and scratch of an update batch of m
  // updates (inserts of them), and its merge once staged in upd_keys_[0],
  // upd_payload_[0] (and upd_values_ for 64-bit values).
  void reserve_update(uint64_t m, uint64_t inserts);
  void merge_staged(uint64_t m);
  static int use_device(int device);
  void add_time(double ms) {
    if (timing_) timing_->add(ms);
  }
  // queries.cu: q ranges [lo[i], hi[i]] of `view`: where each starts
  // (q_u32_) and the exclusive sum of their sizes (q_range_offset_, q + 1
  // entries), timed; returns the total (and sizes the copy's scratch for
  // it). Then their pairs, in range order, into keys_out and values_out.
  uint64_t range_bounds(const ArrayView<K, V>& view, const K* lo, const K* hi, uint64_t q);
  void copy_range_pairs(const ArrayView<K, V>& view, uint64_t q, uint64_t total, K* keys_out, V* values_out);
  uint64_t scratch_bytes() const;

  int device_;
  device_timing* timing_ = nullptr;
  cudaStream_t stream_ = nullptr;
  StreamFollower follower_;  // follow()
  EventTimer timer_;

  ArrayStore<K, V> cur_;  // the live array
  ArrayStore<K, V> alt_;  // ping-pong: the merge output, and the sort's second buffer at build
  std::map<std::string, std::unique_ptr<ArrayStore<K, V>>> snapshots_;

  CubTemp temp_;
  DeviceBuffer<unsigned long long> d_scalars_;  // small device counters

  // Update scratch.
  DeviceBuffer<K> upd_keys_[2];
  DeviceBuffer<uint64_t> upd_payload_[2];  // (is_delete << 32) | value (u32 values) or update index (u64)
  DeviceBuffer<V> upd_values_;             // u64 values: by update index (u32 values ride in the payload)
  DeviceBuffer<uint32_t> upd_e_;           // 2 * lower_bound + present
  DeviceBuffer<int32_t> upd_delta_;        // size change of each entry (m + 1)
  DeviceBuffer<int32_t> upd_offset_;       // exclusive scan of delta (m + 1)
  DeviceBuffer<uint8_t> upd_write_;        // 1: a surviving insert
  DeviceBuffer<uint32_t> upd_split_;       // merge-path split per tile

  // Query scratch.
  DeviceBuffer<uint8_t> q_found_;
  DeviceBuffer<K> q_key_out_;
  DeviceBuffer<V> q_value_out_;
  DeviceBuffer<uint32_t> q_u32_;          // count results; range lower bounds
  DeviceBuffer<uint64_t> q_range_count_;  // range sizes, then their offsets (R + 1)
  DeviceBuffer<uint64_t> q_range_offset_;
  DeviceBuffer<uint32_t> q_range_tiles_;
  DeviceBuffer<K> range_keys_;
  DeviceBuffer<V> range_values_;

  // Pinned host words read back between launches (sizes, counts).
  PinnedBuffer<uint64_t> h_u64_;
  PinnedBuffer<uint32_t> h_u32_;
};

}  // namespace gpudict::sa
