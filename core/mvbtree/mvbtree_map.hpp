// gpudict::mvbtree_map<Key, Value>: the multiversion GPU B-Tree (Awad's
// dissertation, 2022, chapter 4; docs/mvbtree.md) as a library container:
// core/btree's tree with the earlier states of its leaves kept for the live
// snapshots. Host code, no CUDA compiler needed to include it.
//
// Every bulk call of btree_map is here with the same contract (device
// arrays and a stream; results written when it returns); updates keep
// whatever states live snapshots read. snapshot() freezes the current
// contents in O(1) (a stamp): the snapshot's queries answer as the map was
// then, whatever it did after, and destroying the snapshot returns the
// states only it read to the version pool. A bulk build while snapshots
// are live is refused (InputError): they would read a tree that is gone.
// Keys and values: uint32_t or uint64_t, every value of the type legal.
// Errors are thrown (core/common/errors.hpp) as btree_map's are.
//
// A user kernel reads the map through ref() (mvbtree_ref.cuh), the latest
// state, or a snapshot's ref(), its state: find and successor, one thread
// per operation.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/btree/btree_map.hpp"
#include "core/common/capacity_bounds.hpp"
#include "core/common/container_capabilities.hpp"
#include "core/common/container_snapshot.hpp"
#include "core/common/device_timing.hpp"
#include "core/common/mixed_batch.hpp"
#include "core/mvbtree/options.hpp"

namespace gpudict {

using mvbtree_options = mvbtree::Options;

// The map's figures (mvbtree_map::stats()).
struct mvbtree_stats {
  btree_stats tree;                         // the B-Tree under the versions (its device_bytes: its own)
  std::uint64_t snapshots = 0;              // live snapshots
  std::uint64_t version_copies = 0;         // earlier leaf states held for them
  std::uint64_t version_pool_nodes = 0;     // the version pool's capacity
  std::uint64_t copies_made = 0;            // since the start
  std::uint64_t copies_reclaimed = 0;       // returned to the pool by dropped snapshots
  std::uint64_t versioned_leaves = 0;       // leaves with an earlier state held
  std::uint64_t stamp = 0;                  // the global stamp (the next snapshot's)
  std::uint64_t renumberings = 0;           // times the stamps were renumbered
  std::uint64_t version_bytes = 0;          // device bytes of the versions: a word per node, the pool
  std::uint64_t version_scratch_bytes = 0;  // the calls' claim lists and sorts, snapshot queries' scratch
  std::uint64_t device_bytes = 0;           // everything: tree + versions + their scratch
};

// The map as a kernel reads it at one state (mvbtree_ref.cuh builds its ref
// from this): the tree's view, the version words and pool, the stamp read at
// (0xFFFFFFFF: the latest state).
struct mvbtree_view {
  btree_view tree;
  const void* head_versions = nullptr;
  const void* copies = nullptr;
  const void* copy_versions = nullptr;
  std::uint64_t copy_capacity = 0;
  std::uint32_t stamp = 0xFFFFFFFFu;
};

template <class Key, class Value>
class mvbtree_ref;  // mvbtree_ref.cuh

namespace mvbtree {
// The tree, version words and pool of a map (core/mvbtree/detail/mvbtree_check.hpp).
template <class Key, class Value>
struct Inspect;
}  // namespace mvbtree

template <class Key, class Value>
class mvbtree_map {
  static_assert((sizeof(Key) == 4 || sizeof(Key) == 8) && (sizeof(Value) == 4 || sizeof(Value) == 8),
                "mvbtree_map: keys and values are uint32_t or uint64_t");

 public:
  using key_type = Key;
  using mapped_type = Value;
  using ref_type = mvbtree_ref<Key, Value>;
  // ordered, snapshots; updates of one key in a call: any one wins (as
  // btree_map); the ref finds and gives successors, one thread per operation.
  static constexpr container_capabilities capabilities{true, true, false, false, true, 1, 1};

  explicit mvbtree_map(const mvbtree_options& options = {}, int device = -1);
  ~mvbtree_map();
  mvbtree_map(mvbtree_map&&) noexcept;
  mvbtree_map& operator=(mvbtree_map&&) noexcept;
  mvbtree_map(const mvbtree_map&) = delete;
  mvbtree_map& operator=(const mvbtree_map&) = delete;

  // As btree_map's calls of the same names (btree_map.hpp), but for apply:
  // a mixed call runs its queries first, on the state before the call, then
  // its updates (one of the orders the concurrent semantics allow, and one
  // in which every count and range reads one state of the map, never a
  // mixture; docs/mvbtree.md, "Concurrent batches"). Its outputs and range
  // pairs are as btree_map::apply's.
  void build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  void insert_or_assign(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  void erase(const Key* keys, std::uint64_t n, cudaStream_t stream = 0);
  void update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n, cudaStream_t stream = 0);
  void find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out, cudaStream_t stream = 0);
  void count(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* counts_out, cudaStream_t stream = 0);
  std::uint64_t range(const Key* lo, const Key* hi, std::uint64_t n, std::uint64_t* offsets_out, Key* keys_out,
                      Value* values_out, std::uint64_t capacity, cudaStream_t stream = 0);
  void successor(const Key* keys, std::uint64_t n, Key* keys_out, Value* values_out, bool* found_out,
                 cudaStream_t stream = 0);
  range_output<Key, Value> apply(const std::uint8_t* ops, op_code uniform, const Key* keys, const Value* values,
                                 const Key* upper, std::uint64_t n, const mixed_outputs<Key, Value>& out,
                                 cudaStream_t stream = 0);

  // The current contents, frozen (container_snapshot.hpp); O(1).
  container_snapshot<mvbtree_map> snapshot();

  std::uint64_t size() const;
  mvbtree_stats stats() const;
  const mvbtree_options& options() const;
  std::uint64_t device_bytes_needed(const capacity_bounds& bounds) const;
  void set_timing(device_timing* timing);

  // The latest state for a kernel; valid until the next call on this map.
  mvbtree_view view();
  template <class R = ref_type>
  R ref() {
    return R(view());
  }


 private:
  friend class container_snapshot<mvbtree_map>;
  template <class K, class V>
  friend struct mvbtree::Inspect;
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class mvbtree_map<std::uint32_t, std::uint32_t>;
extern template class mvbtree_map<std::uint32_t, std::uint64_t>;
extern template class mvbtree_map<std::uint64_t, std::uint64_t>;
extern template class container_snapshot<mvbtree_map<std::uint32_t, std::uint32_t>>;
extern template class container_snapshot<mvbtree_map<std::uint32_t, std::uint64_t>>;
extern template class container_snapshot<mvbtree_map<std::uint64_t, std::uint64_t>>;

// A snapshot of an mvbtree_map (container_snapshot.hpp).
template <class Key, class Value>
using mvbtree_snapshot = container_snapshot<mvbtree_map<Key, Value>>;

}  // namespace gpudict
