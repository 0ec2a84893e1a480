// gpudict::mvbtree_ref<Key, Value>: an mvbtree_map's state for a caller's
// kernels (CUDA code; include after mvbtree_map.hpp or alone): the latest
// state (map.ref()) or a snapshot's (snapshot.ref()).
//
// Trivially copyable: pass it to a kernel by value. Read-only (find, successor),
// one thread per operation. It reads without latches or validation, so no call on the
// map may run while a kernel uses it (order them on streams); a snapshot's
// ref stays valid while the snapshot lives and the map makes no bulk
// build, a latest-state ref until the map's next update.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/mvbtree/detail/version_ref.cuh"
#include "core/mvbtree/mvbtree_map.hpp"

namespace gpudict {

template <class Key, class Value>
class mvbtree_ref {
 public:
  using key_type = Key;
  using mapped_type = Value;
  using word_type = std::conditional_t<sizeof(Key) == 8 || sizeof(Value) == 8, std::uint64_t, std::uint32_t>;

  __host__ __device__ explicit mvbtree_ref(const mvbtree_view& v) { set(v); }
  // From a snapshot's ref_source() (a host pointer to its view).
  __host__ explicit mvbtree_ref(const void* v) { set(*static_cast<const mvbtree_view*>(v)); }

  // Whether `key` is present in this state; its value into *value (when
  // not null; 0 when absent). False also when the versions are corrupt
  // (never expected; the map's checks report it).
  __device__ bool find(Key key, Value* value = nullptr) const {
    bool hit = false;
    word_type v = 0;
    if (!mvbtree::find_at(v_, stamp_, static_cast<word_type>(key), hit, v)) hit = false;
    if (value) *value = hit ? static_cast<Value>(v) : Value{0};
    return hit;
  }

  // The smallest key greater than `key` in this state and its value
  // (0 and false when there is none).
  __device__ bool successor(Key key, Key* key_out = nullptr, Value* value_out = nullptr) const {
    bool found = false;
    word_type k = 0, v = 0;
    if (!mvbtree::successor_at(v_, stamp_, static_cast<word_type>(key), found, k, v)) found = false;
    if (key_out) *key_out = found ? static_cast<Key>(k) : Key{0};
    if (value_out) *value_out = found ? static_cast<Value>(v) : Value{0};
    return found;
  }

 private:
  __host__ __device__ void set(const mvbtree_view& v) {
    v_.tree.nodes = static_cast<btree::Node<word_type>*>(v.tree.nodes);
    v_.tree.hdr = static_cast<btree::TreeHeader*>(v.tree.header);
    v_.tree.capacity = v.tree.capacity;
    v_.head_v = static_cast<const mvbtree::VWord*>(v.head_versions);
    v_.copies = static_cast<const btree::Node<word_type>*>(v.copies);
    v_.copy_v = static_cast<const mvbtree::VWord*>(v.copy_versions);
    v_.copy_capacity = v.copy_capacity;
    stamp_ = v.stamp;
  }
  mvbtree::VersionsRef<word_type> v_;
  std::uint32_t stamp_ = mvbtree::kLatest;
};

}  // namespace gpudict
