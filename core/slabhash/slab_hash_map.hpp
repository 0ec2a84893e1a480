// gpudict::slab_hash_map<Key, Value>: the slab hash with SlabAlloc
// (docs/slabhash.md) as a library container. Host code, no CUDA compiler
// needed to include it.
//
// Every bulk call takes device arrays and a stream: it runs after the work
// queued on that stream before it, and returns when its results are in the
// output arrays (inserts may grow the slab pool, which needs the host).
// Keys and values: uint32_t/uint32_t, uint32_t/uint64_t or
// uint64_t/uint64_t (a u64 key's slot is 16 bytes whatever its value, so
// u64 keys with u32 values are left out: use uint64_t values). Every key
// and value of the type is legal, 0 and the maximum included. options.mode
// picks map (insert replaces), multimap or set. Several updates of one key
// in one call: any one of them wins (docs/semantics.md). Errors are thrown
// (core/common/errors.hpp): InputError for a bad argument or option,
// RuntimeFailure when the pool cannot grow or a CUDA call fails.
//
// A user kernel reaches the table through ref() (slab_hash_ref.cuh): find,
// insert and erase served by a tile of 4 lanes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "core/common/capacity_bounds.hpp"
#include "core/common/container_capabilities.hpp"
#include "core/common/device_timing.hpp"
#include "core/common/mixed_batch.hpp"
#include "core/slabhash/options.hpp"

namespace gpudict {

using slab_hash_options = slabhash::Options;

template <class Key, class Value>
class slab_hash_map;
namespace slabhash {
struct TableCopy;  // detail/inspect.hpp: the tests' host copy of a table
template <class Key, class Value>
TableCopy copy_table(const slab_hash_map<Key, Value>& map);
}  // namespace slabhash

// A slab_hash_map's figures (stats()).
struct slab_hash_stats {
  std::uint64_t size = 0;             // alive pairs (map, set: keys)
  std::uint64_t buckets = 0;          // hashed buckets (plus one for the largest key, not counted here)
  std::uint64_t base_slabs = 0;
  std::uint64_t pool_slabs_used = 0;  // pool slabs in chains
  std::uint64_t pool_slabs = 0;       // the pool's capacity
  std::uint64_t pool_bytes = 0;
  std::uint64_t super_blocks = 0;
  std::uint64_t tombstones = 0;       // claimed slots not alive, since the last cleanup
  std::uint64_t pool_growths = 0;
  std::uint64_t unfinished_reruns = 0;  // passes run again for operations that found no slab or no room
  std::uint64_t flushes = 0;          // cleanups, asked for or by the policy
  std::uint64_t auto_flushes = 0;     // of which by the policy
  std::uint64_t build_duplicate_keys = 0;
  std::uint64_t scratch_bytes = 0;
  std::uint64_t device_bytes = 0;     // everything: base slabs, pool, scratch
  std::uint32_t slot_bytes = 0;       // a slot's key and value
  std::uint32_t slots_per_slab = 0;
  std::uint32_t hash[3] = {};         // the universal hash's a, b, a2
};

// The table as a kernel sees it (slab_hash_ref.cuh builds its ref from
// this): base slabs, the hash, the slab pool, and where refs count what
// they change so that the map's size() stays exact.
struct slab_hash_view {
  static constexpr int kMaxSuperBlocks = 22;  // the pool's 2^31-slab address space (slab_alloc.cuh)
  void* base_slabs = nullptr;
  std::uint32_t buckets = 0;
  std::uint32_t hash[3] = {};  // the universal hash's a, b, a2 (table_ref.cuh)
  void* pool_slabs[kMaxSuperBlocks] = {};
  std::uint32_t* pool_bitmaps[kMaxSuperBlocks] = {};
  std::uint32_t pool_lg0 = 0;
  std::uint32_t pool_super_blocks = 0;
  std::uint32_t pool_total_blocks = 0;
  unsigned int* pool_exhausted = nullptr;
  unsigned long long* counts = nullptr;  // slots claimed, alive bits cleared, slabs linked by refs
  int mode = 0;                          // slabhash::Mode
};

template <class Key, class Value>
class slab_hash_ref;  // slab_hash_ref.cuh

template <class Key, class Value>
class slab_hash_map {
  static_assert((sizeof(Key) == 4 || sizeof(Key) == 8) && (sizeof(Value) == 4 || sizeof(Value) == 8),
                "slab_hash_map: keys and values are uint32_t or uint64_t");
  static_assert(!(sizeof(Key) == 8 && sizeof(Value) == 4),
                "slab_hash_map: u64 keys take uint64_t values (the slot is 16 bytes either way)");

 public:
  using key_type = Key;
  using mapped_type = Value;
  // unordered, no snapshots, updates of one key in a call: any one wins
  // (multimap: every delete, then every insert); the ref finds, inserts and
  // erases with tiles of 4 lanes. count and range serve one key each (its
  // pairs), in apply().
  static constexpr container_capabilities capabilities{false, false, false, true, false, 4, 4};

  // An empty table on `device` (-1: the current device), sized for
  // options.expected_keys (or a default) at options.load_factor; options
  // are validated (InputError naming the field).
  explicit slab_hash_map(const slab_hash_options& options = {}, int device = -1);
  ~slab_hash_map();
  slab_hash_map(slab_hash_map&&) noexcept;
  slab_hash_map& operator=(slab_hash_map&&) noexcept;
  slab_hash_map(const slab_hash_map&) = delete;
  slab_hash_map& operator=(const slab_hash_map&) = delete;

  // A new table sized for max(n, options.expected_keys) keys, holding the
  // n pairs (map: the later pair of a key wins).
  void build(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts each pair (map: replacing the value of a present key; multimap:
  // adding a pair; set: values ignored).
  void insert(const Key* keys, const Value* values, std::uint64_t n, cudaStream_t stream = 0);
  // Deletes each key (multimap: every pair of the key); absent keys are no-ops.
  void erase(const Key* keys, std::uint64_t n, cudaStream_t stream = 0);
  // Inserts and deletes in one call: erase[i] true deletes keys[i], else
  // (keys[i], values[i]) is inserted. Map and set: one pass, and of several
  // updates of one key any may win; multimap: every delete, then every
  // insert. values may be null when every update is a delete.
  void update(const Key* keys, const Value* values, const bool* erase, std::uint64_t n, cudaStream_t stream = 0);
  // values_out[i]: the value of keys[i] (multimap: one of its values), 0
  // when absent; found_out[i] whether it is present. Either may be null.
  void find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out, cudaStream_t stream = 0);
  // n operations of mixed types as one concurrent pass: ops[i] (op_code:
  // insert, erase, find, count, range; or, with ops null, every one is
  // `uniform`) on keys[i], inserts with values[i] (null: no inserts). A
  // count is the pairs of its key (map, set: 0 or 1); a range, the key's
  // values (multimap: all of them), in the returned range_output
  // (out.offsets, out.counts). upper (an ordered map's upper bounds) must
  // be null: a hash table counts and lists one key. Successors are refused
  // (InputError).
  range_output<Key, Value> apply(const std::uint8_t* ops, op_code uniform, const Key* keys, const Value* values,
                                 const Key* upper, std::uint64_t n, const mixed_outputs<Key, Value>& out,
                                 cudaStream_t stream = 0);
  // Drops the tombstones: every chain rewritten compactly (FLUSH).
  void cleanup(cudaStream_t stream = 0);

  // Stored pairs (map, set: live keys), including what user kernels did
  // through ref().
  std::uint64_t size() const;
  slab_hash_stats stats() const;
  const slab_hash_options& options() const;
  // Device bytes the map may need (table, pool, scratch) for contents and
  // calls within `bounds` (range values grow on demand, outside it).
  std::uint64_t device_bytes_needed(const capacity_bounds& bounds) const;
  // Every later call adds its device time to *timing (device_timing.hpp;
  // flushes, automatic ones included, to its cleanup_ms); null stops it.
  void set_timing(device_timing* timing);
  // Grows the slab pool ahead of about `inserts` more keys from user
  // kernels (the chains uniform hashing predicts, as the bulk inserts grow
  // it): a ref's insert that finds no free slab fails instead of waiting.
  void reserve(std::uint64_t inserts);

  // The table for a kernel. Valid until the next call on this map that may
  // reallocate the table or grow its pool (build, insert, reserve).
  slab_hash_view view();
  template <class R = slab_hash_ref<Key, Value>>
  R ref() {
    return R(view());
  }

 private:
  template <class K, class V>
  friend slabhash::TableCopy slabhash::copy_table(const slab_hash_map<K, V>& map);
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class slab_hash_map<std::uint32_t, std::uint32_t>;
extern template class slab_hash_map<std::uint32_t, std::uint64_t>;
extern template class slab_hash_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
