// The GPU LSM behind lsm_map (internal). Its members are defined across
// small files:
//   lsm.cu            validate(Options), construction, the cleanup policy,
//                     snapshots, stats, the memory bound
//   update.cu         a batch's updates: resolve, chunk, pad, merge down
//   build_cleanup.cu  the build, the cleanup and the slicing of a sorted run
//                     into levels (with placebos)
//   cleanup_tiles.cu  the cleanup's kernels: the merge of every level fused
//                     with the compaction, tile by tile
//   point_queries.cu  lookup and successor
//   range_queries.cu  count and range (bounds, candidates, sort, validity)
//   merge.cu          the stable two-run merge (update carries)
//   level.cu          level storage, pool, views
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
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
#include "core/common/graph_cache.hpp"
#include "core/common/trace_events.hpp"
#include "core/common/pinned_buffer.cuh"
#include "core/common/stream_follow.hpp"
#include "core/lsm/detail/level.cuh"
#include "core/lsm/lsm_map.hpp"
#include "core/lsm/options.hpp"

namespace gpudict::lsm {


// Scratch arrays in level format (ping-pong merge buffers, the chunk buffer).
template <class K, class V>
struct RunBuffers {
  DeviceBuffer<K> keys;
  DeviceBuffer<V> values;
  DeviceBuffer<uint8_t> status;
  void reserve(uint64_t n, const char* what) {
    keys.reserve_discard(n, what);
    values.reserve_discard(n, what);
    status.reserve_discard(n, what);
  }
  void release() {
    keys.release();
    values.release();
    status.release();
  }
  uint64_t bytes() const { return keys.bytes() + values.bytes() + status.bytes(); }
};

// K, V: the key and value types (u32/u32, u32/u64, u64/u64: with_kv_types).
template <class K, class V>
class Lsm {
 public:
  using Level = lsm::Level<K, V>;
  using LevelList = lsm::LevelList<K, V>;
  using LevelPool = lsm::LevelPool<K, V>;
  using LsmView = lsm::LsmView<K, V>;
  using RunBuffers = lsm::RunBuffers<K, V>;

  Lsm(int device, const Options& options);
  ~Lsm();
  Lsm(const Lsm&) = delete;
  Lsm& operator=(const Lsm&) = delete;

  // lsm_map's bound and figures (lsm.cu).
  uint64_t device_bytes_needed(const capacity_bounds& b) const;
  lsm_stats stats() const;
  const Options& options() const { return opt_; }
  // Every later call adds its device time here (device_timing.hpp); null: none.
  void set_timing(device_timing* t) { timing_ = t; }
  // Shares the live levels under `name` (InputError when taken).
  void snapshot(const std::string& name);
  void drop_snapshot(const std::string& name);
  // Drops every stale element (build_cleanup.cu).
  void cleanup();

  // The library's bulk calls on device arrays (lsm_map), on this LSM's
  // stream; each returns when its results are written. build_device: a new
  // LSM of the n pairs (the later pair of a key wins); update_device: m
  // updates as one batch, erase[j] (or, when erase is null, !insert)
  // deleting keys[j], else inserting (keys[j], values[j]): a key the batch
  // deletes anywhere is deleted, otherwise its last insert wins; then the
  // cleanup policy. find_device, successor_device (and count_device,
  // range_device below): on the live levels or the named snapshot's (a null
  // output is skipped; not found: 0).
  void build_device(const K* keys, const V* values, uint64_t n);
  void update_device(const K* keys, const V* values, const bool* erase, uint64_t m, bool insert);
  void find_device(const K* keys, uint64_t n, V* values_out, bool* found_out, const std::string& snapshot = {});
  void successor_device(const K* keys, uint64_t n, K* keys_out, V* values_out, bool* found_out,
                        const std::string& snapshot = {});
  // range_queries.cu: counts of [lo[i], hi[i]] into counts_out; ranges:
  // offsets_out (n + 1 entries, may be null) the exclusive sum of their
  // sizes, their pairs into keys_out, values_out (either may be null) while
  // they fit `capacity`; returns the total pairs.
  void count_device(const K* lo, const K* hi, uint64_t n, uint64_t* counts_out, const std::string& snapshot = {});
  uint64_t range_device(const K* lo, const K* hi, uint64_t n, uint64_t* offsets_out, K* keys_out, V* values_out,
                        uint64_t capacity, const std::string& snapshot = {});
  // The live level list (snapshot empty) or a snapshot's, for lsm_ref
  // (lsm_ref.cuh), copied to the device; valid until the levels change (a
  // snapshot's: until it is dropped).
  const LsmView* device_view(const std::string& snapshot = {});
  // The live levels or a snapshot's (InputError for an unknown snapshot).
  const LevelList& levels(const std::string& snapshot) const;
  // Orders this LSM's stream after the caller's work queued on `caller`.
  void follow(cudaStream_t caller) { follower_.follow(stream_, caller); }
  uint64_t stored_elements() const { return stored(); }

 private:
  static int use_device(int device);
  void add_time(double ms) {
    if (timing_) timing_->add(ms);
  }
  void add_cleanup_time(double ms) {
    if (timing_) timing_->add_cleanup(ms);
  }
  // build_cleanup.cu: drops every level (snapshots keep theirs) and the
  // counters; the build of n pairs staged (reversed) in pp_[0].
  void reset_contents();
  void build_staged(uint64_t n);
  // update.cu: the checks and scratch of m updates, and their resolve and
  // merge once staged in upd_keys_[0], upd_payload_[0], upd_values_.
  void reserve_update(uint64_t m);
  void update_staged(uint64_t m);
  // point_queries.cu: q lookups (successors) of keys (device), into
  // q_found_ and q_value_out_ (q_key_out_).
  void lookup_staged(const K* keys, uint64_t q, const LevelList& list);
  void successor_staged(const K* keys, uint64_t q, const LsmView& v);
  // lsm.cu: the cleanup policy after an update batch.
  void maybe_cleanup();
  // build_cleanup.cu. With place_if_stale_over >= 0 it is a check: the
  // count pass runs (it counts the live keys exactly), and the levels are
  // rewritten only if more than that share of the stored elements is
  // stale. Returns whether they were.
  bool run_cleanup(double place_if_stale_over = -1.0);
  // Places the sorted unique pairs keys/values[0, u) (device) into new levels
  // (binary representation of ceil(u / b), smallest keys in the smallest
  // level, which holds what the full larger ones leave); replaces the live
  // list. Returns the device milliseconds.
  double place_sorted(const K* keys, const V* values, uint64_t u);
  // The fresh levels for u sorted pairs (the set bits of ceil(u / b), sized:
  // every level full but the smallest), and their installation as the live
  // list (the old levels are dropped).
  LevelList acquire_levels_for(uint64_t u);
  void replace_live(LevelList&& fresh);
  // The fence levels above from_level of every level in the list, in one
  // launch (a few past 32 segments: sa::build_fence_levels).
  void build_fences(LevelList& levels, int from_level);
  // range_queries.cu: Q counts or ranges of bounds [lo[i], hi[i]] (the
  // caller's device arrays) over `list`, timed, in rounds of
  // whole queries; after each round,
  // round_done(first query, queries, candidates): with candidates > 0 the
  // round's sizes are in q_size_out_, its ranges' offsets (from the round's
  // first pair) in q_offset_out_, its pairs in range_keys_, range_values_
  // (cand_scan_[candidates] of them); with 0 every query of it is empty and
  // nothing was written.
  void ordered_staged(bool is_range, const K* lo, const K* hi, uint64_t Q, const LevelList& list,
                      const std::function<void(uint64_t, uint64_t, uint64_t)>& round_done);
  // point_queries.cu: allocates (host side, before the timer) the lookup
  // filters the list's levels want (wants_lookup_filter) and lack, and
  // returns those levels.
  std::vector<Level*> levels_without_filter(const LevelList& list);

  // Levels dropped by device work still queued are kept here until the
  // stream is synchronised (then they return to the pool or are freed).
  void release_dropped();
  uint64_t stored() const { return live_.elements(); }
  // The sum of the live levels' local stale counts.
  uint64_t levels_stale() const;
  uint64_t scratch_bytes() const;

  int device_;
  device_timing* timing_ = nullptr;
  Options opt_;
  uint64_t b_;
  cudaStream_t stream_ = nullptr;
  StreamFollower follower_;  // follow()
  EventTimer timer_;
  TraceEvents trace_;  // GPUDICT_TRACE=1: per-step device times of a batch on stderr

  // The pool outlives every level (declared before the lists: destroyed after).
  std::shared_ptr<LevelPool> pool_;
  LevelList live_;
  std::map<std::string, LevelList> snapshots_;
  std::vector<std::shared_ptr<Level>> dropped_;

  // What the structure knows about its contents.
  uint64_t stale_ = 0;          // elements that are not the live record of a key
  bool stale_exact_ = true;     // false: stale_ is a lower bound
  uint64_t chunks_ = 0;         // chunks written by update batches
  uint64_t resolved_ = 0;       // unique keys of the update batches (the chunks' elements)
  uint64_t cleanups_ = 0;       // cleanups run (steps and policy)
  uint64_t auto_cleanups_ = 0;  // of which by the policy
  uint64_t since_cleanup_ = 0;  // update batches since the last cleanup or build
  uint64_t last_cleanup_stale_ = 0;  // stale elements the last cleanup found (exact: stored - live)
  uint64_t known_live_ = 0;   // live keys at the last build, cleanup or stale check (exact)
  uint64_t stale_checks_ = 0;  // stale checks that found too little to clean up

  CubTemp temp_;
  GraphCache resolve_graph_;  // an update batch's sort and reduce-by-key (update.cu)
  DeviceBuffer<unsigned long long> d_counters_;
  DeviceBuffer<unsigned long long> d_level_stale_;  // per chunk of a group: its level's local stale count

  // Update scratch.
  DeviceBuffer<K> upd_keys_[2];
  DeviceBuffer<uint32_t> upd_payload_[2];  // delete << 31 | update index
  DeviceBuffer<V> upd_values_;             // by update index
  DeviceBuffer<K> uniq_keys_;
  DeviceBuffer<uint32_t> uniq_payload_;
  RunBuffers chunk_;
  RunBuffers pp_[2];  // merge intermediates; build's sort buffers
  DeviceBuffer<uint32_t> cl_bounds_;    // cleanup: each tile's first position in every level
  DeviceBuffer<uint16_t> cl_kept_;      // cleanup: the count pass's kept lists for the place pass
  DeviceBuffer<uint64_t> tile_count_;   // cleanup: kept records per tile
  DeviceBuffer<uint64_t> tile_offset_;  // cleanup: their exclusive scan (the last entry: the total)

  // Query scratch.
  DeviceBuffer<uint8_t> q_found_;
  DeviceBuffer<K> q_key_out_;
  DeviceBuffer<V> q_value_out_;
  DeviceBuffer<uint32_t> q_slow_item_;
  DeviceBuffer<K> q_slow_key_;
  DeviceBuffer<uint64_t> q_bounds_;   // count/range: per (query, level) counts, scanned in place
  DeviceBuffer<uint32_t> q_first_;    // per (query, level) lower bound
  DeviceBuffer<uint64_t> q_starts_;   // per-query candidate offsets (when split in rounds)
  // u32 keys: (query << (32 + lb)) | (key << lb) | level rank; u64 keys:
  // the key (range_queries.cu), with cand_tag_ = (query << lb) | rank.
  DeviceBuffer<uint64_t> cand_comp_[2];
  DeviceBuffer<uint32_t> cand_pos_[2];   // position within its level
  DeviceBuffer<uint64_t> cand_tag_[2];   // u64 keys: (query << lb) | level rank, sorted with the keys
  DeviceBuffer<uint32_t> cand_scan_;     // exclusive scan of the validity flags
  DeviceBuffer<uint32_t> cand_tiles_;
  DeviceBuffer<const uint8_t*> d_status_ptrs_;  // status array of each level rank (kMaxLevels)
  DeviceBuffer<uint64_t> q_size_out_, q_offset_out_;
  DeviceBuffer<uint64_t> range_sizes_;  // range_device(): sizes by query, then their scan
  std::map<std::string, DeviceBuffer<LsmView>> d_views_;  // device_view(), by snapshot ("": live)
  DeviceBuffer<K> range_keys_;
  DeviceBuffer<V> range_values_;

  // Pinned host words read back between launches (sizes, flags).
  PinnedBuffer<uint64_t> h_u64_;
};

}  // namespace gpudict::lsm
