// gpudict::sorted_array_map<Key, Value>: the GPU sorted array
// (docs/sorted-array.md) as a library container. Host code, no CUDA
// compiler needed to include it.
//
// One sorted array of unique keys with a fence index: updates are merged in
// batches (sort, then one merge pass into a second buffer), queries search
// the index. Every bulk call takes device arrays and a stream: it runs after
// the work queued on that stream before it, and returns when its results are
// in the output arrays. Keys and values: uint32_t/uint32_t,
// uint32_t/uint64_t or uint64_t/uint64_t (u64 keys with u32 values are left
// out: the pairs are sorted as (key, value) arrays of their own widths, and
// a u32 value would save nothing the other pairings lack; use uint64_t
// values), at most 2^31 keys. Every key and value of the type is legal.
// Several updates of one key in one call: the later one wins. Errors are
// thrown (core/common/errors.hpp).
//
// A user kernel reads the array through ref() (sorted_array_ref.cuh): find,
// count and successor, one thread per query.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/common/capacity_bounds.hpp"
#include "core/common/container_capabilities.hpp"
#include "core/common/container_snapshot.hpp"
#include "core/common/device_timing.hpp"

namespace gpudict {

// A sorted_array_map's figures (stats()).
struct sorted_array_stats {
  std::uint64_t size = 0;               // keys present
  std::uint64_t capacity = 0;           // pairs the live array's buffers hold
  std::uint64_t index_levels = 0;       // fence levels above the keys
  std::uint64_t index_top_entries = 0;  // keys in the top level (searched in shared memory)
  std::uint64_t index_fanout = 0;       // keys per fence entry
  std::uint64_t index_top_max = 0;      // the top level's bound for this key width
  std::uint64_t snapshots = 0;          // live snapshots
  std::uint64_t snapshot_bytes = 0;     // device bytes they hold
  std::uint64_t scratch_bytes = 0;      // update and query scratch
  std::uint64_t device_bytes = 0;       // everything: array, merge buffer, snapshots, scratch
};

template <class Key, class Value>
class sorted_array_ref;  // sorted_array_ref.cuh

template <class Key, class Value>
class sorted_array_map {
  static_assert((sizeof(Key) == 4 || sizeof(Key) == 8) && (sizeof(Value) == 4 || sizeof(Value) == 8),
                "sorted_array_map: keys and values are uint32_t or uint64_t");
  static_assert(!(sizeof(Key) == 8 && sizeof(Value) == 4), "sorted_array_map: u64 keys take uint64_t values");

 public:
  using key_type = Key;
  using mapped_type = Value;
  // ordered, snapshots, the later update of a key in a call wins; the ref
  // is read-only (find, count, successor), one thread per query.
  static constexpr container_capabilities capabilities{true, true, true, false, true, 1, 1};
  using ref_type = sorted_array_ref<Key, Value>;

  // An empty array on `device` (-1: the current device).
  explicit sorted_array_map(int device = -1);
  ~sorted_array_map();
  sorted_array_map(sorted_array_map&&) noexcept;
  sorted_array_map& operator=(sorted_array_map&&) noexcept;
  sorted_array_map(const sorted_array_map&) = delete;
  sorted_array_map& operator=(const sorted_array_map&) = delete;

  // Replaces the contents with the n pairs: the later pair of a key wins.
  void build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts each pair, replacing the value of a key already present.
  void insert_or_assign(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Deletes each key that is present (absent keys are no-ops).
  void erase(const Key* keys, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts and deletes in one merge: erase[i] true deletes keys[i] (absent:
  // a no-op), else (keys[i], values[i]) is inserted or replaces the key's
  // value. Of several updates of one key, the later one (array order) wins.
  // values may be null when every update is a delete.
  void update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n, cudaStream_t stream = 0);

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
  // The smallest key greater than keys[i] and its value (0 and found false
  // when there is none). Any output may be null.
  void successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out, bool* found_out,
                 cudaStream_t stream = 0);

  std::uint64_t size() const;
  sorted_array_stats stats() const;
  // Device bytes the map may need (array, merge buffer, scratch, snapshots)
  // for contents and calls within `bounds`; range outputs are the caller's.
  static std::uint64_t device_bytes_needed(const capacity_bounds& bounds);
  // Every later call, its snapshots' included, adds its device time to
  // *timing (device_timing.hpp); null stops it.
  void set_timing(device_timing* timing);

  // The array for a kernel (read-only). Valid until the next build or update.
  template <class R = sorted_array_ref<Key, Value>>
  R ref() const {
    return R(view_storage());
  }
  // ref()'s source: the array's device view as sorted_array_ref.cuh reads it.
  const void* view_storage() const;

  // The contents as they are now, for queries while the map changes on: a
  // device copy of the array and its index (O(n) time and memory), freed
  // when the snapshot is destroyed.
  container_snapshot<sorted_array_map> snapshot();

 private:
  friend class container_snapshot<sorted_array_map>;
  struct impl;
  std::unique_ptr<impl> impl_;
};


extern template class sorted_array_map<std::uint32_t, std::uint32_t>;
extern template class sorted_array_map<std::uint32_t, std::uint64_t>;
extern template class sorted_array_map<std::uint64_t, std::uint64_t>;
extern template class container_snapshot<sorted_array_map<std::uint32_t, std::uint32_t>>;
extern template class container_snapshot<sorted_array_map<std::uint32_t, std::uint64_t>>;
extern template class container_snapshot<sorted_array_map<std::uint64_t, std::uint64_t>>;

// A snapshot of a sorted_array_map (container_snapshot.hpp).
template <class Key, class Value>
using sorted_array_snapshot = container_snapshot<sorted_array_map<Key, Value>>;

}  // namespace gpudict
