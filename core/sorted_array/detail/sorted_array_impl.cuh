// The sorted array's Dictionary implementation (internal). Its members are
// defined across small files:
//   sorted_array.cu   construction, execute() dispatch, snapshots, stats
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

#include "core/api/dictionary.hpp"
#include "core/common/cub_temp.cuh"
#include "core/common/stream_copy.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/pinned_buffer.cuh"
#include "core/common/stream_follow.hpp"
#include "core/sorted_array/detail/layout.cuh"

namespace gpudict::sa {

template <class K, class V>
class SortedArray final : public Dictionary {

 public:
  explicit SortedArray(int device);
  ~SortedArray() override;
  SortedArray(const SortedArray&) = delete;
  SortedArray& operator=(const SortedArray&) = delete;

  const Capabilities& caps() const override { return caps_; }
  Params parameters() const override;
  uint64_t device_bytes_needed(const WorkloadBounds& b) const override;
  void build(const KeyValues& initial, DeviceTime& t) override;
  void execute(const Batch& batch, BatchResults& r, DeviceTime& t) override;
  void snapshot(const std::string& name, DeviceTime& t) override;
  void drop_snapshot(const std::string& name) override;
  Stats stats() const override;

  // The library's bulk calls on device arrays (sorted_array_map), on this
  // array's stream; each returns when its results are written.
  // device_api.cu: a new array of the n pairs (the later pair of a key
  // wins); n inserts (upserts) or deletes, merged as one batch (the later
  // update of a key wins).
  void build_device(const K* keys, const V* values, uint64_t n);
  void update_device(const K* keys, const V* values, uint64_t m, bool insert);
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
  void build_staged(uint64_t n, DeviceTime& t);
  // merge_update.cu: the checks and scratch of an update batch of m
  // updates (inserts of them), and its merge once staged in upd_keys_[0],
  // upd_payload_[0] (and upd_values_ for 64-bit values).
  void reserve_update(uint64_t m, uint64_t inserts);
  void merge_staged(uint64_t m, Phase phase, DeviceTime& t);
  static int use_device(int device);
  // merge_update.cu: the batch's inserts and deletes, in batch order.
  void apply_updates(const Batch& batch, Phase phase, DeviceTime& t);
  // queries.cu: q ranges [lo[i], hi[i]] of `view`: where each starts
  // (q_u32_) and the exclusive sum of their sizes (q_range_offset_, q + 1
  // entries), timed into ms; returns the total (and sizes the copy's
  // scratch for it). Then their pairs, in range order, into keys_out and
  // values_out.
  uint64_t range_bounds(const ArrayView<K, V>& view, const K* lo, const K* hi, uint64_t q, double& ms);
  void copy_range_pairs(const ArrayView<K, V>& view, uint64_t q, uint64_t total, K* keys_out, V* values_out);
  // queries.cu: the batch's queries of one type (ops: their batch indices).
  void run_queries(OpType type, const Batch& batch, const std::vector<uint32_t>& ops, const ArrayView<K, V>& view,
                   Phase phase, BatchResults& r, DeviceTime& t);
  uint64_t scratch_bytes() const;

  int device_;
  Capabilities caps_;
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
  DeviceBuffer<K> q_keys_, q_args_;
  DeviceBuffer<uint8_t> q_found_;
  DeviceBuffer<K> q_key_out_;
  DeviceBuffer<V> q_value_out_;
  DeviceBuffer<uint32_t> q_u32_;          // count results; range lower bounds
  DeviceBuffer<uint64_t> q_range_count_;  // range sizes, then their offsets (R + 1)
  DeviceBuffer<uint64_t> q_range_offset_;
  DeviceBuffer<uint32_t> q_range_tiles_;
  DeviceBuffer<K> range_keys_;
  DeviceBuffer<V> range_values_;

  // Pinned host staging (reused across batches).
  PinnedBuffer<K> h_keys_, h_args_;
  PinnedBuffer<V> h_values_;
  PinnedBuffer<uint64_t> h_u64_;
  PinnedBuffer<uint32_t> h_u32_;
  PinnedBuffer<uint8_t> h_found_;
};

}  // namespace gpudict::sa
