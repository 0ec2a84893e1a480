// gpudict::slab_hash_ref<Key, Value>: a slab_hash_map's operations for a
// caller's kernels (CUDA code; include after slab_hash_map.hpp or alone).
//
// Trivially copyable: pass it to a kernel by value (map.ref()). Each
// operation is served by a tile of 4 lanes (cooperative_groups
// thread_block_tile<4>, from tiled_partition, so its lanes are 4 aligned
// lanes of one warp): the tile reads one 128-byte slab per step, 32 bytes a
// lane, as the library's batch kernel does. Every lane of the tile calls the
// operation with the same arguments and gets the same result. A warp whose
// lanes each hold an operation serves them four at a time, one per tile:
//
//   auto tile = cg::tiled_partition<4>(cg::this_thread_block());
//   for (int q = 0; q < 4; ++q) {
//     const Key k = tile.shfl(my_key, q);
//     Value v;
//     const bool hit = ref.find(tile, k, &v);
//     if (tile.thread_rank() == q) { my_found = hit; my_value = v; }
//   }
//
// Operations of any type may run concurrently, in one kernel or several:
// they follow the batch kernel's protocol (tile_ops.cuh; docs/slabhash.md,
// "Fences"): a slot is claimed by one CAS of the whole pair, so a reader
// sees an empty slot or a whole pair; a delete clears the slot's alive bit
// with one atomic; a full chain is extended by a CAS on the tail's next
// word. Each operation is linearizable, and a map or set never holds a key
// twice. insert returns false when the slab pool is full (nothing changed;
// grow it with slab_hash_map::reserve and run the insert again); it never
// waits for the host. The map's mode (map, multimap, set) is read at run
// time: the three layouts' code is compiled into the kernel.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "core/slabhash/mode.hpp"
#include "core/slabhash/detail/slab_alloc.cuh"
#include "core/slabhash/slab_hash_map.hpp"
#include "core/slabhash/detail/table_ref.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict {

class graph_ref;  // core/graph/graph_ref.cuh: this ref routed by vertex

template <class Key, class Value>
class slab_hash_ref {
  friend class graph_ref;

  static_assert(slab_hash_view::kMaxSuperBlocks == static_cast<int>(slabhash::kMaxSuperBlocks),
                "slab_hash_view mirrors PoolRef");

 public:
  using key_type = Key;
  using mapped_type = Value;

  __host__ __device__ explicit slab_hash_ref(const slab_hash_view& v) {
    t_.base = static_cast<slabhash::Slab*>(v.base_slabs);
    t_.buckets = v.buckets;
    t_.hash.a = v.hash[0];
    t_.hash.b = v.hash[1];
    t_.hash.a2 = v.hash[2];
    for (int k = 0; k < slab_hash_view::kMaxSuperBlocks; ++k) {
      t_.pool.slabs[k] = static_cast<slabhash::Slab*>(v.pool_slabs[k]);
      t_.pool.bitmaps[k] = v.pool_bitmaps[k];
    }
    t_.pool.lg0 = v.pool_lg0;
    t_.pool.super_blocks = v.pool_super_blocks;
    t_.pool.total_blocks = v.pool_total_blocks;
    t_.pool.exhausted = v.pool_exhausted;
    counts_ = v.counts;
    mode_ = static_cast<slabhash::Mode>(v.mode);
  }

  // Whether `key` is present; its value (multimap: one of its values; set:
  // 0) into *value when not null.
  template <class Parent>
  __device__ bool find(const cooperative_groups::thread_block_tile<4, Parent>&, Key key, Value* value = nullptr) const {
    switch (mode_) {
      case slabhash::Mode::Set: return find_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Set>>(key, value);
      default: return find_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Map>>(key, value);
    }
  }

  // Map: inserts (key, value) or replaces the value of a present key;
  // multimap: adds the pair; set: inserts the key (value ignored). False:
  // the slab pool is full and nothing changed.
  template <class Parent>
  __device__ bool insert(const cooperative_groups::thread_block_tile<4, Parent>&, Key key, Value value) const {
    switch (mode_) {
      case slabhash::Mode::Set:
        return insert_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Set>, false>(key, value);
      case slabhash::Mode::Multimap:
        return insert_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Map>, true>(key, value);
      default: return insert_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Map>, false>(key, value);
    }
  }

  // Deletes `key` (multimap: every pair of it). Whether anything was
  // deleted (an absent key is a no-op).
  template <class Parent>
  __device__ bool erase(const cooperative_groups::thread_block_tile<4, Parent>&, Key key) const {
    switch (mode_) {
      case slabhash::Mode::Set: return erase_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Set>, false>(key);
      case slabhash::Mode::Multimap:
        return erase_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Map>, true>(key);
      default: return erase_in<slabhash::LayoutFor<Key, Value, slabhash::Mode::Map>, false>(key);
    }
  }

 private:
  using Lanes = slabhash::TileLanes;

  // One slab as the tile read it: its state and next words, this lane's
  // matches, and which lanes hold a match or an empty slot.
  template <class L>
  struct Step {
    slabhash::LaneWords v;
    uint32_t state, next;
    slabhash::LaneMatch m;
    unsigned hit_lanes, empty_lanes;
  };
  template <class L>
  __device__ Step<L> read(const Lanes& ln, const slabhash::Slab* s, typename L::Key stored) const {
    Step<L> x;
    x.v = L::load(s, ln.tl);
    x.state = slabhash::tile_state(x.v, ln.tmask, ln.tbase);
    x.next = slabhash::tile_next(x.v, ln.tmask, ln.tbase);
    x.m = slabhash::match_slots<L>(x.v, ln.tl, stored, x.state);
    x.hit_lanes = slabhash::tile_ballot(ln.tmask, ln.tbase, x.m.hit != 0);
    x.empty_lanes = slabhash::tile_ballot(ln.tmask, ln.tbase, x.m.empty != 0);
    return x;
  }

  __device__ void count(int which, unsigned long long n) const {
    if (n != 0) atomicAdd(counts_ + which, n);
  }

  template <class L>
  __device__ bool find_in(Key key, Value* value) const {
    const Lanes ln;
    uint32_t bucket;
    Key stored;
    t_.route(key, bucket, stored);
    const slabhash::Slab* cur = t_.base + bucket;
    for (;;) {
      const Step<L> x = read<L>(ln, cur, stored);
      if (x.hit_lanes) {
        const unsigned w = __ffs(x.hit_lanes) - 1;
        const Value v = static_cast<Value>(__shfl_sync(
            ln.tmask, slabhash::value_at<L>(x.v, x.m.hit ? __ffs(x.m.hit) - 1 : 0), ln.tbase + w));
        if (value) *value = v;
        return true;
      }
      if (x.next == slabhash::kNullSlab) return false;
      cur = t_.pool.slab(x.next);
    }
  }

  template <class L, bool kMulti>
  __device__ bool insert_in(Key key, Value value) const {
    const Lanes ln;
    uint32_t bucket;
    Key stored;
    t_.route(key, bucket, stored);
    slabhash::Slab* const head = t_.base + bucket;
    slabhash::Slab* cur = head;
    slabhash::TileAlloc alloc;
    for (;;) {
      const Step<L> x = read<L>(ln, cur, stored);
      if (!kMulti && x.hit_lanes) {  // alive here (and nowhere else): replace the value
        const unsigned w = __ffs(x.hit_lanes) - 1;
        if (ln.tl == w) L::replace(cur, w * L::kPerLane + (__ffs(x.m.hit) - 1), stored, value);
        return true;
      }
      if (x.empty_lanes) {
        // The chain's first empty slot (every earlier slab is full): claim
        // it. Lost, the insert starts again from the head, which may now
        // hold this very key.
        const unsigned w = __ffs(x.empty_lanes) - 1;
        unsigned won = 0;
        if (ln.tl == w) won = L::won(L::claim(cur, w * L::kPerLane + (__ffs(x.m.empty) - 1), stored, value)) ? 1u : 0u;
        won = __shfl_sync(ln.tmask, won, ln.tbase + w);
        if (won) {
          if (ln.tl == 0) count(0, 1);
          return true;
        }
        cur = head;
        continue;
      }
      if (x.next != slabhash::kNullSlab) {
        cur = t_.pool.slab(x.next);
        continue;
      }
      // The tail is full: allocate a slab and link it (lost the link: the
      // fresh slab was never reachable and is still pristine; return it).
      const uint32_t fresh = slabhash::tile_allocate(alloc, t_.pool, bucket ^ (blockIdx.x << 10) ^ ln.tbase, ln.tl,
                                                     ln.tmask, ln.tbase);
      if (fresh == slabhash::kNullSlab) return false;
      uint32_t now = 0;
      if (ln.tl == slabhash::kMetaLane) now = L::link(cur, x.state, fresh);
      now = __shfl_sync(ln.tmask, now, ln.tbase + slabhash::kMetaLane);
      if (ln.tl == 0) {
        if (now == fresh)
          count(2, 1);
        else
          slabhash::free_slab(t_.pool, fresh);
      }
      cur = t_.pool.slab(now);
    }
  }

  template <class L, bool kMulti>
  __device__ bool erase_in(Key key) const {
    const Lanes ln;
    uint32_t bucket;
    Key stored;
    t_.route(key, bucket, stored);
    slabhash::Slab* cur = t_.base + bucket;
    unsigned long long killed = 0;
    for (;;) {
      const Step<L> x = read<L>(ln, cur, stored);
      if (x.hit_lanes) {
        // Map, set: the key's one alive slot; multimap: every alive slot
        // with the key in this slab, with one atomic.
        uint32_t bits = 0;
        if (!kMulti) {
          const unsigned w = __ffs(x.hit_lanes) - 1;
          bits = 1u << (w * L::kPerLane + (__ffs(__shfl_sync(ln.tmask, x.m.hit, ln.tbase + w)) - 1));
        } else {
          bits = slabhash::tile_or(x.m.hit << (ln.tl * L::kPerLane), ln.tmask);
        }
        uint32_t k = 0;
        if (ln.tl == 0) k = __popc(L::kill(cur, bits) & bits);
        killed += __shfl_sync(ln.tmask, k, ln.tbase);
        if (!kMulti) break;
      }
      if (x.next == slabhash::kNullSlab) break;
      cur = t_.pool.slab(x.next);
    }
    if (ln.tl == 0) count(1, killed);
    return killed != 0;
  }

  slabhash::TableRef<Key> t_;
  unsigned long long* counts_ = nullptr;
  slabhash::Mode mode_ = slabhash::Mode::Map;
};

}  // namespace gpudict
