// gpudict::lsm_ref<Key, Value>: an lsm_map's point queries for a caller's
// kernels (CUDA code; include after lsm_map.hpp or alone).
//
// Trivially copyable: pass it to a kernel by value (map.ref()). It holds a
// pointer to the map's level list on the device (the levels, their fence
// indexes and status bytes), read-only: the levels change only by the map's
// batched updates, and a ref must not be used after the next build, update
// or cleanup of the map. Each query is one thread's. No insert or erase:
// an LSM applies updates as sorted batches merged into its levels, never
// one at a time, and count and range need the candidates of every level
// merged (the bulk calls do that).
//   find       levels most recent first, a fence-indexed search per level
//              (sorted_array_ref's); the first record of the key decides: a
//              tombstone means absent.
//   successor  the smallest key above `key` over all levels; if its most
//              recent record is a tombstone, on from there (a run of deleted
//              keys costs a round each: the bulk call walks such runs with a
//              warp instead).
#pragma once

#include <cstdint>

#include "core/lsm/detail/level.cuh"
#include "core/lsm/lsm_map.hpp"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict {

template <class Key, class Value>
class lsm_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;

  __host__ __device__ explicit lsm_ref(const void* device_view)
      : v_(static_cast<const lsm::LsmView<Key, Value>*>(device_view)) {}

  // Whether `key` is present; its value into *value (when not null).
  __device__ bool find(Key key, Value* value = nullptr) const {
    Value x{0};
    const bool hit = latest(key, x) == kLive;
    if (value) *value = hit ? x : Value{0};
    return hit;
  }

  // The smallest present key greater than `key`, and its value; false when
  // there is none.
  __device__ bool successor(Key key, Key* next, Value* value = nullptr) const {
    Key k = key;
    for (;;) {
      Key c;
      if (!smallest_above(k, c)) break;
      Value x{0};
      if (latest(c, x) == kLive) {
        if (next) *next = c;
        if (value) *value = x;
        return true;
      }
      k = c;  // deleted: the next candidate is above it
    }
    if (next) *next = Key{0};
    if (value) *value = Value{0};
    return false;
  }

 private:
  enum Record { kNone, kLive, kDeleted };

  // The key's most recent record: none, live (its value into x), or a tombstone.
  __device__ Record latest(Key key, Value& x) const {
    const int levels = v_->count;
    for (int r = 0; r < levels; ++r) {
      const lsm::LevelView<Key, Value>& l = v_->lv[r];
      const uint32_t p = sa::count_before_indexed(l.ix, key, false);
      if (p < l.n && l.ix.level[0][p] == key) {
        if (l.status[p] & lsm::kTombstone) return kDeleted;
        x = l.values[p];
        return kLive;
      }
    }
    return kNone;
  }

  // The smallest stored key (of any record) above k, over every level.
  __device__ bool smallest_above(Key k, Key& out) const {
    bool any = false;
    const int levels = v_->count;
    for (int r = 0; r < levels; ++r) {
      const lsm::LevelView<Key, Value>& l = v_->lv[r];
      const uint32_t p = sa::count_before_indexed(l.ix, k, true);
      if (p < l.n && (!any || l.ix.level[0][p] < out)) {
        out = l.ix.level[0][p];
        any = true;
      }
    }
    return any;
  }

  const lsm::LsmView<Key, Value>* v_;
};

}  // namespace gpudict
