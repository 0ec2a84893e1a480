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

#include "core/common/container_capabilities.hpp"
#include "core/slabhash/options.hpp"

namespace gpudict {

using slab_hash_options = slabhash::Options;

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
  // unordered, no snapshots, updates of one key in a call: any one wins;
  // the ref finds, inserts and erases with tiles of 4 lanes.
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
  // values_out[i]: the value of keys[i] (multimap: one of its values), 0
  // when absent; found_out[i] whether it is present. Either may be null.
  void find(const Key* keys, std::uint64_t n, Value* values_out, bool* found_out, cudaStream_t stream = 0);

  // Stored pairs (map, set: live keys), including what user kernels did
  // through ref().
  std::uint64_t size() const;
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
  struct impl;
  std::unique_ptr<impl> impl_;
};

extern template class slab_hash_map<std::uint32_t, std::uint32_t>;
extern template class slab_hash_map<std::uint32_t, std::uint64_t>;
extern template class slab_hash_map<std::uint64_t, std::uint64_t>;

}  // namespace gpudict
