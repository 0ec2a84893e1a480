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
#include "core/common/capacity_bounds.hpp"
#include "core/common/container_capabilities.hpp"
#include "core/common/device_timing.hpp"
#include "core/common/mixed_batch.hpp"

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

// The tree's figures (btree_map::stats()).
struct btree_stats {
  std::uint64_t size = 0;                  // live keys
  std::uint64_t device_bytes = 0;          // node pool, leaf directory and scratch
  std::uint64_t scratch_bytes = 0;         // of which the calls' lists, sorts and results
  std::uint64_t height = 0, nodes = 0, leaves = 0, node_bytes = 0;
  std::uint64_t pool_nodes = 0;            // the pool's capacity
  std::uint64_t pool_grows = 0;            // automatic pool growths
  std::uint64_t pool_retries = 0;          // update lists run again after the pool filled
  std::uint64_t range_reruns = 0;          // range lists run again: their output outgrew its estimate
  std::uint64_t merged_update_lists = 0;   // phased update lists merged level by level
  std::uint64_t ops_update_lists = 0;      // phased update lists through the operations kernel
  std::uint64_t point_range_lists = 0;     // range lists one thread per range
  std::uint64_t tile_range_lists = 0;      // range lists in lock-step tiles
  std::uint64_t concurrent_range_reruns = 0;  // mixed calls' ranges answered after the pass
  std::uint64_t grouped_updates = 0;       // updates applied together with others of their leaf
  std::uint64_t warp_taken_ops = 0;        // thread-kernel operations finished by their warp
  std::uint64_t directory_leaves = 0;      // the leaf directory's entries
  std::uint64_t directory_lists = 0;       // query lists answered through it
};

template <class Key, class Value>
class btree_ref;  // btree_ref.cuh

template <class Key, class Value>
class btree_map;
namespace btree {
// The used pool and counters of a map's tree (core/btree/detail/btree_check.hpp).
template <class Key, class Value>
struct Inspect;
}  // namespace btree

template <class Key, class Value>
class btree_map {
  static_assert((sizeof(Key) == 4 || sizeof(Key) == 8) && (sizeof(Value) == 4 || sizeof(Value) == 8),
                "btree_map: keys and values are uint32_t or uint64_t");

 public:
  using key_type = Key;
  using mapped_type = Value;
  // ordered; no snapshots; updates of one key in a call: any one wins (the
  // operations kernel; merged updates keep the last, which is one of them);
  // the ref finds, inserts and erases with 8 to 32 lanes.
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
  // Inserts and deletes in one call: erase[i] true deletes keys[i], else
  // (keys[i], values[i]) is inserted (upserted); values may be null when
  // every update is a delete. Several updates of one key: the merge path
  // keeps the last (deletes after inserts), the operations kernel any one.
  void update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n, cudaStream_t stream = 0);

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

  // n operations of mixed types as one concurrent pass (docs/semantics.md,
  // "concurrent"; core/common/mixed_batch.hpp): ops[i] (an op_code; ops
  // null: every one is `uniform`) on keys[i]; an insert's value values[i]
  // (null: 0); a count's or range's upper bound upper[i] (null: its own
  // key). Results by position into out (found, values, keys: successors';
  // counts: a count's keys, a range's pairs; offsets: where a range's pairs
  // start in the returned range_output, whose pairs carry their keys and
  // lie in the map's memory until its next call). A range that outgrows
  // the room its pre-pass count gave it is answered after the pass, on
  // the tree as the pass left it, which the concurrent semantics allow.
  range_output<Key, Value> apply(const std::uint8_t* ops, op_code uniform, const Key* keys, const Value* values,
                                 const Key* upper, std::uint64_t n, const mixed_outputs<Key, Value>& out,
                                 cudaStream_t stream = 0);

  // Live keys (read from the device: exact after user kernels too).
  std::uint64_t size() const;
  // The tree's figures (counters as of the last call).
  btree_stats stats() const;
  const btree_options& options() const;
  // Device bytes the map may need for contents and calls within `bounds`
  // (range output grows on demand, outside it).
  std::uint64_t device_bytes_needed(const capacity_bounds& bounds) const;
  // Every later call adds its device time to *timing (device_timing.hpp);
  // null stops it.
  void set_timing(device_timing* timing);
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
  template <class K, class V>
  friend struct btree::Inspect;
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class btree_map<std::uint32_t, std::uint32_t>;
extern template class btree_map<std::uint32_t, std::uint64_t>;
extern template class btree_map<std::uint64_t, std::uint32_t>;
extern template class btree_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
