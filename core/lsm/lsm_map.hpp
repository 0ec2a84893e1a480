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
// one key in one call: the later wins. Errors are thrown
// (core/common/errors.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/common/container_capabilities.hpp"
#include "core/common/container_snapshot.hpp"

#include "core/lsm/options.hpp"

namespace gpudict {

using lsm_options = lsm::Options;

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
  // ordered, snapshots, the later update of a key in a call wins; the ref
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
