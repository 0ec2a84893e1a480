// gpudict::sorted_array_ref<Key, Value>: a sorted_array_map's queries for a
// caller's kernels (CUDA code).
//
// Trivially copyable: pass it to a kernel by value (map.ref()). Read-only:
// the array changes only by the map's batched updates, and a ref taken
// before one of them must not be used after it. Each query is one thread's:
// a binary search of the fence index's top, then one 32-entry window per
// level (a 128-byte line for u32 keys, two for u64), the same search the
// LSM's cleanup uses (search_index.cuh). The library's own bulk queries
// search each window with a group of lanes instead (search_index.cuh).
#pragma once

#include <cstdint>

#include "core/sorted_array/detail/layout.cuh"
#include "core/sorted_array/detail/search_index.cuh"
#include "core/sorted_array/sorted_array_map.hpp"

namespace gpudict {

template <class Key, class Value>
class sorted_array_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;

  __host__ __device__ explicit sorted_array_ref(const void* view_storage)
      : a_(*static_cast<const sa::ArrayView<Key, Value>*>(view_storage)) {}

  // Whether `key` is present; its value into *value (when not null).
  __device__ bool find(Key key, Value* value = nullptr) const {
    const uint32_t p = sa::count_before_indexed(a_.ix, key, false);
    const bool hit = p < a_.n() && a_.keys()[p] == key;
    if (value) *value = hit ? a_.values[p] : Value{0};
    return hit;
  }

  // The keys in [lo, hi] (0 when lo > hi).
  __device__ uint64_t count(Key lo, Key hi) const {
    if (lo > hi) return 0;
    return sa::count_before_indexed(a_.ix, hi, true) - sa::count_before_indexed(a_.ix, lo, false);
  }

  // The smallest key greater than `key`, and its value; false when none.
  __device__ bool successor(Key key, Key* next, Value* value = nullptr) const {
    const uint32_t p = sa::count_before_indexed(a_.ix, key, true);
    const bool hit = p < a_.n();
    if (next) *next = hit ? a_.keys()[p] : Key{0};
    if (value) *value = hit ? a_.values[p] : Value{0};
    return hit;
  }

  __host__ __device__ uint64_t size() const { return a_.n(); }

 private:
  sa::ArrayView<Key, Value> a_;
};

}  // namespace gpudict
