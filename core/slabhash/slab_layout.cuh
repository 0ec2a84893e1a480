// The slab: 128 bytes, read by a tile of 4 lanes (32 bytes each), and the two
// layouts the modes use. Device code and the constants the host shares.
//
//   map / multimap (PairLayout): words 2s, 2s+1 = key, value of slot s (15
//     slots, words 0..29); word 30 = state; word 31 = next.
//   set (KeyLayout): word s = key of slot s (30 slots, words 0..29); word 30 =
//     state; word 31 = next.
//
// state: bit s = 1 while slot s is NOT deleted ("alive" mask). A slot is
//   empty when its key word is kEmptyKey; claimed slots keep their key until
//   FLUSH, and a delete only clears the slot's alive bit (a tombstone).
// next: 32-bit SlabAlloc address of the next slab, kNullSlab at the tail.
//
// A free or empty slab is all 0xFF bytes ("pristine"): every key kEmptyKey,
// every value 0xFFFFFFFF, state all alive, next null. That is the state the
// pool and the base slabs start in (one memset) and the state FLUSH restores
// before it frees a slab, so allocating and linking a slab needs no stores and
// no fence (see docs/slabhash.md, "Fences").
//
// The user key 0xFFFFFFFF equals kEmptyKey: it lives in a bucket of its own
// (index `buckets`, past the hashed ones) where it is stored as
// kSpecialStoredKey (0). No other key maps there, so the stored 0 means
// 0xFFFFFFFF without ambiguity, and no value of the user's domain is reserved.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/memory_order.cuh"
#include "core/slabhash/mode.hpp"

namespace gpudict::slabhash {

inline constexpr uint32_t kSlabWords = 32;
inline constexpr uint32_t kSlabBytes = 128;
// Lanes that read one slab together. 4 (32 bytes each, two 16-byte loads)
// rather than 8: the four tiles of an 8-lane warp issued one instruction for
// 4 operations; eight 4-lane tiles issue one for 8 operations and keep 8 slab
// reads in flight per warp (docs/slabhash.md, "tile size").
inline constexpr uint32_t kTile = 4;
inline constexpr uint32_t kTileLanes = (1u << kTile) - 1u;  // a tile's lanes, as bits from its first

// Tile-local ballot: bit l = lane l of the tile (tmask: the lanes that call
// it, the whole warp or the tile alone).
__device__ __forceinline__ unsigned tile_ballot(unsigned tmask, unsigned tbase, bool p) {
  return (__ballot_sync(tmask, p) >> tbase) & kTileLanes;
}
inline constexpr uint32_t kEmptyKey = 0xFFFFFFFFu;
inline constexpr uint32_t kNullSlab = 0xFFFFFFFFu;
inline constexpr uint32_t kSpecialStoredKey = 0;
inline constexpr uint32_t kMetaLane = kTile - 1;  // holds words 24..31 (state and next: its w[6], w[7])

// One slab (the allocation is 128-byte aligned).
struct alignas(128) Slab {
  uint32_t w[kSlabWords];
};
static_assert(sizeof(Slab) == kSlabBytes, "a slab is 128 bytes");

// What a lane of a tile holds after reading a slab: words 8l .. 8l+7.
inline constexpr uint32_t kLaneWords = kSlabWords / kTile;
struct LaneWords {
  uint32_t w[kLaneWords];
};
static_assert(kLaneWords == 8, "the pair loads below read two 16-byte halves per lane");

// ---- loads (the access size matches the writers', see below) ----

// 64-bit elements: each (key, value) pair and the (state, next) word are read
// as single-copy-atomic 64-bit accesses, the same size as the CAS that
// publishes a pair, so a reader sees a whole pair or none of it.
__device__ __forceinline__ LaneWords load_pairs_relaxed(const Slab* s, unsigned tl) {
  unsigned long long a, b, c, d;
  // relaxed at gpu scope: bypasses the SM-local L1, sees other SMs' atomics.
  const char* p = reinterpret_cast<const char*>(s) + 32 * tl;
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(c), "=l"(d) : "l"(p + 16) : "memory");
  return {{static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32), static_cast<uint32_t>(b),
           static_cast<uint32_t>(b >> 32), static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32),
           static_cast<uint32_t>(d), static_cast<uint32_t>(d >> 32)}};
}
// 32-bit elements: the set layout's keys and its state and next words are
// separate 32-bit locations, written by 32-bit atomics (relaxed, gpu scope:
// never a stale L1 line).
__device__ __forceinline__ LaneWords load_words_relaxed(const Slab* s, unsigned tl) {
  LaneWords v;
  ld_relaxed_gpu_vec<kLaneWords>(s->w + kLaneWords * tl, v.w);
  return v;
}
// Kernels in which nothing writes the table (phased queries): the read-only
// path (the table was last written by an earlier kernel).
__device__ __forceinline__ LaneWords load_readonly(const Slab* s, unsigned tl) {
  LaneWords v;
  ld_readonly_vec<kLaneWords>(s->w + kLaneWords * tl, v.w);
  return v;
}

// ---- the two layouts ----
//
// Slot j of lane l is slot l * kPerLane + j ("lane-major"): the order in which
// inserters look for the first empty slot (docs/slabhash.md, uniqueness).

struct PairLayout {
  static constexpr bool kPairs = true;
  static constexpr uint32_t kSlots = 15;
  static constexpr uint32_t kPerLane = kLaneWords / 2;
  static constexpr uint32_t kDataBytes = 8;  // per stored element (paper's x)
  static constexpr uint32_t kAliveMask = (1u << kSlots) - 1;

  __device__ static __forceinline__ LaneWords load(const Slab* s, unsigned tl) { return load_pairs_relaxed(s, tl); }
  __device__ static __forceinline__ uint32_t key(const LaneWords& v, unsigned j) { return v.w[2 * j]; }
  __device__ static __forceinline__ uint32_t value(const LaneWords& v, unsigned j) { return v.w[2 * j + 1]; }
  __device__ static __forceinline__ bool valid(unsigned tl, unsigned j) {
    return tl * kPerLane + j < kSlots;  // the meta lane's last pair is (state, next)
  }
  __device__ static __forceinline__ unsigned long long* pair_ptr(Slab* s, uint32_t slot) {
    return reinterpret_cast<unsigned long long*>(s->w + 2 * slot);
  }
  __device__ static __forceinline__ unsigned long long* meta_ptr(Slab* s) {
    return reinterpret_cast<unsigned long long*>(s->w + 30);
  }

  // Claims an empty slot for (key, value): one 64-bit CAS from the empty pair
  // (kEmptyKey, 0xFFFFFFFF: empty slots are always pristine) to the new pair.
  // The CAS publishes key and value together; no reader can see half a pair.
  // Returns what the slot held; won(it) is false when another insert claimed
  // the slot first. (Split so that the kernel tests the result a step later,
  // without waiting for the atomic's round trip.)
  using ClaimResult = unsigned long long;
  __device__ static __forceinline__ ClaimResult claim(Slab* s, uint32_t slot, uint32_t key, uint32_t value) {
    const unsigned long long desired = (static_cast<unsigned long long>(value) << 32) | key;
    return atomicCAS(pair_ptr(s, slot), ~0ull, desired);
  }
  __device__ static __forceinline__ bool won(ClaimResult old) { return old == ~0ull; }
  // Map REPLACE of a live key: a 64-bit store of the same key and the new
  // value (same size as the CAS and the loads; the key never changes while
  // the slot is claimed, so rewriting it is harmless).
  __device__ static __forceinline__ void replace(Slab* s, uint32_t slot, uint32_t key, uint32_t value) {
    const unsigned long long pair = (static_cast<unsigned long long>(value) << 32) | key;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(pair_ptr(s, slot)), "l"(pair) : "memory");
  }
  // Clears alive bits (a delete); returns the alive mask before.
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) {
    // 64-bit atomic on the (state, next) word: the same size as its loads and
    // as the CAS that links the next slab; the high half (next) is kept.
    const unsigned long long keep = ~static_cast<unsigned long long>(slots);
    return static_cast<uint32_t>(atomicAnd(meta_ptr(s), keep));
  }
  // Links `fresh` after `s` if s's next is still null. `state` is the state
  // half last read (the CAS compares the whole 64-bit word); a concurrent
  // delete in s changes it and the CAS is retried. Returns the next address
  // after the attempt (fresh on success, the winner's slab otherwise).
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t state, uint32_t fresh) {
    unsigned long long expect = (static_cast<unsigned long long>(kNullSlab) << 32) | state;
    for (;;) {
      const unsigned long long desired = (static_cast<unsigned long long>(fresh) << 32) | (expect & 0xFFFFFFFFull);
      const unsigned long long old = atomicCAS(meta_ptr(s), expect, desired);
      if (old == expect) return fresh;
      if (static_cast<uint32_t>(old >> 32) != kNullSlab) return static_cast<uint32_t>(old >> 32);
      expect = old;  // only the state half changed (a delete): try again
    }
  }
};

struct KeyLayout {
  static constexpr bool kPairs = false;
  static constexpr uint32_t kSlots = 30;
  static constexpr uint32_t kPerLane = kLaneWords;
  static constexpr uint32_t kDataBytes = 4;
  static constexpr uint32_t kAliveMask = (1u << kSlots) - 1;

  __device__ static __forceinline__ LaneWords load(const Slab* s, unsigned tl) { return load_words_relaxed(s, tl); }
  __device__ static __forceinline__ uint32_t key(const LaneWords& v, unsigned j) { return v.w[j]; }
  __device__ static __forceinline__ uint32_t value(const LaneWords&, unsigned) { return 0; }
  __device__ static __forceinline__ bool valid(unsigned tl, unsigned j) {
    return tl * kPerLane + j < kSlots;  // words 30, 31 are state and next
  }
  __device__ static __forceinline__ uint32_t* key_ptr(Slab* s, uint32_t slot) { return s->w + slot; }

  // A 32-bit CAS of the key word from kEmptyKey: the key is the whole slot.
  using ClaimResult = uint32_t;
  __device__ static __forceinline__ ClaimResult claim(Slab* s, uint32_t slot, uint32_t key, uint32_t) {
    return atomicCAS(key_ptr(s, slot), kEmptyKey, key);
  }
  __device__ static __forceinline__ bool won(ClaimResult old) { return old == kEmptyKey; }
  __device__ static __forceinline__ void replace(Slab*, uint32_t, uint32_t, uint32_t) {}
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) { return atomicAnd(s->w + 30, ~slots); }
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t, uint32_t fresh) {
    const uint32_t old = atomicCAS(s->w + 31, kNullSlab, fresh);
    return old == kNullSlab ? fresh : old;
  }
};

// State and next of a slab just read: lane kMetaLane holds words 30 and 31 in
// its last two words in both layouts.
__device__ __forceinline__ uint32_t tile_state(const LaneWords& v, unsigned tmask, unsigned tbase) {
  return __shfl_sync(tmask, v.w[kLaneWords - 2], tbase + kMetaLane);
}
__device__ __forceinline__ uint32_t tile_next(const LaneWords& v, unsigned tmask, unsigned tbase) {
  return __shfl_sync(tmask, v.w[kLaneWords - 1], tbase + kMetaLane);
}

}  // namespace gpudict::slabhash
