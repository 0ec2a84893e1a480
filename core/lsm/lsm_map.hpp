// gpudict::lsm_map<Key, Value>: the GPU LSM (docs/lsm.md) as a library
// container. Host code, no CUDA compiler needed to include it.
//
// Sorted levels of b, 2b, 4b, ... elements (b = options.batch_size); an
// update call is one batch: its inserts and deletes (tombstones) are
// resolved, sorted and merged down the levels; a cleanup drops stale
// elements when options say so. Every bulk call takes device arrays and a
// stream: it runs after the work queued on that stream before it, and
// returns when its results are in the output arrays. Keys and values:
// uint32_t/uint32_t, uint32_t/uint64_t or uint64_t/uint64_t (with u64 keys
// use uint64_t values), every value of the type legal. Several updates of
// one key in one insert_or_assign or erase call: the later wins (update(),
// which mixes them: a delete anywhere wins). Errors are thrown
// (core/common/errors.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/common/capacity_bounds.hpp"
#include "core/common/container_capabilities.hpp"
#include "core/common/container_snapshot.hpp"
#include "core/common/device_timing.hpp"

#include "core/lsm/options.hpp"

namespace gpudict {

using lsm_options = lsm::Options;

// An lsm_map's figures (stats()).
struct lsm_stats {
  std::uint64_t size = 0;             // live keys (exact when stale_exact; else stored minus known stale)
  std::uint64_t stored = 0;           // elements in the levels: live, replaced and tombstones
  std::uint64_t stale = 0;            // stored elements that are not a key's live record
  bool stale_exact = true;            // false: stale is a lower bound
  std::uint64_t level_mask = 0;       // bit i: level i (b 2^i elements) is occupied
  std::uint64_t batches = 0;          // the levels' size in units of b (their binary counter)
  std::uint64_t update_chunks = 0;    // chunks written by update calls
  std::uint64_t resolved = 0;         // unique keys of those calls (the chunks' elements)
  std::uint64_t cleanups = 0;         // cleanups run, asked for or by the policy
  std::uint64_t auto_cleanups = 0;    // of which by the policy
  std::uint64_t last_cleanup_stale = 0;
  std::uint64_t stale_checks = 0;     // policy checks that found too little to clean up
  std::uint64_t snapshots = 0;
  std::uint64_t snapshot_bytes = 0;   // levels only snapshots hold
  std::uint64_t pool_bytes = 0;       // free levels kept for reuse
  std::uint64_t scratch_bytes = 0;
  std::uint64_t device_bytes = 0;     // everything: levels, snapshots' levels, pool, scratch
};

template <class Key, class Value>
class lsm_ref;  // lsm_ref.cuh

template <class Key, class Value>
class lsm_map {
  static_assert((sizeof(Key) == 4 || sizeof(Key) == 8) && (sizeof(Value) == 4 || sizeof(Value) == 8),
                "lsm_map: keys and values are uint32_t or uint64_t");
  static_assert(!(sizeof(Key) == 8 && sizeof(Value) == 4), "lsm_map: u64 keys take uint64_t values");

 public:
  using key_type = Key;
  using mapped_type = Value;
  // ordered, snapshots, the later update of a key in an insert_or_assign or
  // erase call wins (update: a delete wins); the ref
  // is read-only (find, successor), one thread per query.
  static constexpr container_capabilities capabilities{true, true, true, false, true, 1, 1};
  using ref_type = lsm_ref<Key, Value>;

  // An empty LSM on `device` (-1: the current device); options are
  // validated (InputError naming the field).
  explicit lsm_map(const lsm_options& options = {}, int device = -1);
  ~lsm_map();
  lsm_map(lsm_map&&) noexcept;
  lsm_map& operator=(lsm_map&&) noexcept;
  lsm_map(const lsm_map&) = delete;
  lsm_map& operator=(const lsm_map&) = delete;

  // Replaces the contents with the n pairs: the later pair of a key wins.
  void build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts each pair, replacing the value of a key already present.
  void insert_or_assign(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Deletes each key (a tombstone; absent keys are no-ops for queries).
  void erase(const Key* keys, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts and deletes as one batch: erase[i] true deletes keys[i], else
  // (keys[i], values[i]) is inserted or replaces the key's value. A key the
  // call deletes anywhere is deleted; otherwise its last insert wins.
  // values may be null when every update is a delete.
  void update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n, cudaStream_t stream = 0);
  // Drops every replaced pair and tombstone (queries answer as before).
  void cleanup(cudaStream_t stream = 0);

  // values_out[i]: the value of keys[i], 0 when absent; found_out[i]
  // whether it is present. Either may be null.
  void find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out, cudaStream_t stream = 0);
  // counts_out[i]: the keys in [lo[i], hi[i]] (0 when lo > hi).
  void count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out, cudaStream_t stream = 0);
  // The pairs of every range [lo[i], hi[i]] in key order, range after
  // range: range i's are at [offsets_out[i], offsets_out[i + 1]) of
  // keys_out and values_out. offsets_out holds n + 1 entries (the last: the
  // total). Returns the total. The pairs are all written when the total
  // fits `capacity`; otherwise keys_out and values_out hold no result (size
  // the output with capacity 0, or with count() and an exclusive sum).
  // offsets_out, keys_out and values_out may be null.
  std::uint64_t range(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* offsets_out, Key* keys_out,
                      Value* values_out, std::uint64_t capacity, cudaStream_t stream = 0);
  // The smallest present key greater than keys[i] and its value (0 and
  // found false when there is none). Any output may be null.
  void successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out, bool* found_out,
                 cudaStream_t stream = 0);

  // Elements stored in the levels: live pairs, and the replaced pairs and
  // tombstones no cleanup has dropped yet.
  std::uint64_t stored_elements() const;
  lsm_stats stats() const;
  const lsm_options& options() const;
  // Device bytes the map may need (levels, their rebuild, scratch,
  // snapshots) for contents and calls within `bounds`; range outputs are
  // the caller's.
  std::uint64_t device_bytes_needed(const capacity_bounds& bounds) const;
  // Every later call, its snapshots' included, adds its device time to
  // *timing (device_timing.hpp; cleanups, automatic ones included, to its
  // cleanup_ms); null stops it.
  void set_timing(device_timing* timing);

  // The levels for a kernel (read-only: find and successor, lsm_ref.cuh).
  // Valid until the next build, update or cleanup of the map.
  template <class R = lsm_ref<Key, Value>>
  R ref() const {
    return R(device_view());
  }
  // ref()'s source: the level list as lsm_ref.cuh reads it, in device memory.
  const void* device_view() const;

  // The contents as they are now, for queries while the map changes on:
  // the levels are shared with the map, reference-counted (O(levels) time
  // and no copy), and kept while the snapshot lives.
  container_snapshot<lsm_map> snapshot();

 private:
  friend class container_snapshot<lsm_map>;
  struct impl;
  std::unique_ptr<impl> impl_;
};


extern template class lsm_map<std::uint32_t, std::uint32_t>;
extern template class lsm_map<std::uint32_t, std::uint64_t>;
extern template class lsm_map<std::uint64_t, std::uint64_t>;
extern template class container_snapshot<lsm_map<std::uint32_t, std::uint32_t>>;
extern template class container_snapshot<lsm_map<std::uint32_t, std::uint64_t>>;
extern template class container_snapshot<lsm_map<std::uint64_t, std::uint64_t>>;

// A snapshot of an lsm_map (container_snapshot.hpp).
template <class Key, class Value>
using lsm_snapshot = container_snapshot<lsm_map<Key, Value>>;

}  // namespace gpudict
