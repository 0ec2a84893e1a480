// slab_hash_map's implementation object, shared by its members
// (slab_hash_map.cu) and the tests' table copy (inspect.cu).
#pragma once

#include "core/slabhash/detail/slabhash_impl.cuh"
#include "core/slabhash/slab_hash_map.hpp"

namespace gpudict {

template <class Key, class Value>
struct slab_hash_map<Key, Value>::impl {
  slabhash::SlabHash<Key, Value> table;
  impl(const slab_hash_options& o, int device) : table(device, o) {}
};

}  // namespace gpudict
