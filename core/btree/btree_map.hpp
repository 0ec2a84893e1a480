// gpudict::btree_map<Key, Value>: the GPU B-Tree (docs/btree.md) as a library
// container. Host code, no CUDA compiler needed to include it.
//
// Every bulk call takes device arrays and a stream: it runs after the work
// queued on that stream before it, and returns when its results are in the
// output arrays (the tree's own stream does the work; a call may grow the
// node pool, which needs the host). Keys and values: uint32_t or uint64_t,
// every value of the type legal (0 and the maximum included). Several
// updates of one key in one call: any one of them wins (the operations
// kernel) or the last (the merge path); docs/semantics.md. Errors are thrown
// (core/common/errors.hpp): InputError for a bad argument or option,
// DeviceOutOfMemory when the node pool cannot grow, RuntimeFailure for any
// other CUDA error.
//
// A user kernel reaches the tree through ref() (btree_ref.cuh): find,
// insert_or_assign and erase served by a tile of 8, 16 or 32 lanes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/btree/options.hpp"
#include "core/common/container_capabilities.hpp"

namespace gpudict {

using btree_options = btree::Options;

// The tree as a kernel sees it (btree_ref.cuh builds its ref from this):
// node pool, header, capacity in nodes; word_bytes is the node word (4 for
// u32 keys and values, else 8).
struct btree_view {
  void* nodes = nullptr;
  void* header = nullptr;
  std::uint64_t capacity = 0;
  int word_bytes = 4;
};

template <class Key, class Value>
class btree_ref;  // btree_ref.cuh

template <class Key, class Value>
class btree_map {
  static_assert((sizeof(Key) == 4 || sizeof(Key) == 8) && (sizeof(Value) == 4 || sizeof(Value) == 8),
                "btree_map: keys and values are uint32_t or uint64_t");

 public:
  using key_type = Key;
  using mapped_type = Value;
  // ordered; no snapshots; updates of one key in a call: any one wins (the
  // operations kernel); the ref finds, inserts and erases with 8 to 32 lanes.
  static constexpr container_capabilities capabilities{true, false, false, true, false, 8, 32};

  // An empty tree on `device` (-1: the current device); options are
  // validated (InputError naming the field).
  explicit btree_map(const btree_options& options = {}, int device = -1);
  ~btree_map();
  btree_map(btree_map&&) noexcept;
  btree_map& operator=(btree_map&&) noexcept;
  btree_map(const btree_map&) = delete;
  btree_map& operator=(const btree_map&) = delete;

  // Replaces the contents with the n pairs (keys[i], values[i]): sorted,
  // the later pair of a key wins, nodes filled to options.fill.
  void build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts each pair, replacing the value of a key already present.
  void insert_or_assign(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Deletes each key that is present (absent keys are no-ops).
  void erase(const Key* keys, std::uint64_t n, cudaStream_t stream = 0);

  // values_out[i]: the value of keys[i], 0 when absent; found_out[i]
  // whether it is present. Either output may be null.
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

  // Live keys (read from the device: exact after user kernels too).
  std::uint64_t size() const;
  // Grows the node pool so that at least `free_nodes` nodes are free: room
  // for that many splits by user kernels (an insert splits at most one node
  // per level, on average one node per seven inserts).
  void reserve_nodes(std::uint64_t free_nodes);

  // The tree for a kernel. Valid until the next call on this map that may
  // reallocate the pool (build, insert_or_assign, reserve_nodes).
  btree_view view();
  template <class R = btree_ref<Key, Value>>
  R ref() {
    return R(view());
  }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class btree_map<std::uint32_t, std::uint32_t>;
extern template class btree_map<std::uint32_t, std::uint64_t>;
extern template class btree_map<std::uint64_t, std::uint32_t>;
extern template class btree_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
