// The slab: 128 bytes, read by a tile of 8 lanes (16 bytes each), and the two
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
inline constexpr uint32_t kTile = 8;  // lanes that read one slab together
inline constexpr uint32_t kEmptyKey = 0xFFFFFFFFu;
inline constexpr uint32_t kNullSlab = 0xFFFFFFFFu;
inline constexpr uint32_t kSpecialStoredKey = 0;
inline constexpr uint32_t kMetaLane = kTile - 1;  // holds words 28..31 (state and next)

// One slab, 16-byte aligned per lane (the allocation is 128-byte aligned).
struct alignas(128) Slab {
  uint32_t w[kSlabWords];
};
static_assert(sizeof(Slab) == kSlabBytes, "a slab is 128 bytes");

// What a lane of a tile holds after reading a slab: words 4l .. 4l+3.
struct LaneWords {
  uint32_t w[4];
};

// ---- loads (the access size matches the writers', see below) ----

// 64-bit elements: each (key, value) pair and the (state, next) word are read
// as single-copy-atomic 64-bit accesses, the same size as the CAS that
// publishes a pair, so a reader sees a whole pair or none of it.
__device__ __forceinline__ LaneWords load_pairs_relaxed(const Slab* s, unsigned tl) {
  unsigned long long a, b;
  // relaxed at gpu scope: bypasses the SM-local L1, sees other SMs' atomics.
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(a), "=l"(b)
               : "l"(reinterpret_cast<const char*>(s) + 16 * tl)
               : "memory");
  return {{static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32), static_cast<uint32_t>(b),
           static_cast<uint32_t>(b >> 32)}};
}
// 32-bit elements: the set layout's keys and its state and next words are
// separate 32-bit locations, written by 32-bit atomics (relaxed, gpu scope:
// never a stale L1 line).
__device__ __forceinline__ LaneWords load_words_relaxed(const Slab* s, unsigned tl) {
  LaneWords v;
  ld_relaxed_gpu_vec<4>(s->w + 4 * tl, v.w);
  return v;
}
// Kernels in which nothing writes the table (phased queries): the read-only
// path (the table was last written by an earlier kernel).
__device__ __forceinline__ LaneWords load_readonly(const Slab* s, unsigned tl) {
  LaneWords v;
  ld_readonly_vec<4>(s->w + 4 * tl, v.w);
  return v;
}

// ---- the two layouts ----
//
// Slot j of lane l is slot l * kPerLane + j ("lane-major"): the order in which
// inserters look for the first empty slot (docs/slabhash.md, uniqueness).

struct PairLayout {
  static constexpr bool kPairs = true;
  static constexpr uint32_t kSlots = 15;
  static constexpr uint32_t kPerLane = 2;
  static constexpr uint32_t kDataBytes = 8;  // per stored element (paper's x)
  static constexpr uint32_t kAliveMask = (1u << kSlots) - 1;

  __device__ static __forceinline__ LaneWords load(const Slab* s, unsigned tl) { return load_pairs_relaxed(s, tl); }
  __device__ static __forceinline__ uint32_t key(const LaneWords& v, unsigned j) { return v.w[2 * j]; }
  __device__ static __forceinline__ uint32_t value(const LaneWords& v, unsigned j) { return v.w[2 * j + 1]; }
  __device__ static __forceinline__ bool valid(unsigned tl, unsigned j) { return tl < kMetaLane || j == 0; }
  __device__ static __forceinline__ unsigned long long* pair_ptr(Slab* s, uint32_t slot) {
    return reinterpret_cast<unsigned long long*>(s->w + 2 * slot);
  }
  __device__ static __forceinline__ unsigned long long* meta_ptr(Slab* s) {
    return reinterpret_cast<unsigned long long*>(s->w + 30);
  }

  // Claims an empty slot for (key, value): one 64-bit CAS from the empty pair
  // (kEmptyKey, 0xFFFFFFFF: empty slots are always pristine) to the new pair.
  // The CAS publishes key and value together; no reader can see half a pair.
  // False: another insert claimed the slot first.
  __device__ static __forceinline__ bool claim(Slab* s, uint32_t slot, uint32_t key, uint32_t value) {
    const unsigned long long desired = (static_cast<unsigned long long>(value) << 32) | key;
    return atomicCAS(pair_ptr(s, slot), ~0ull, desired) == ~0ull;
  }
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
  static constexpr uint32_t kPerLane = 4;
  static constexpr uint32_t kDataBytes = 4;
  static constexpr uint32_t kAliveMask = (1u << kSlots) - 1;

  __device__ static __forceinline__ LaneWords load(const Slab* s, unsigned tl) { return load_words_relaxed(s, tl); }
  __device__ static __forceinline__ uint32_t key(const LaneWords& v, unsigned j) { return v.w[j]; }
  __device__ static __forceinline__ uint32_t value(const LaneWords&, unsigned) { return 0; }
  __device__ static __forceinline__ bool valid(unsigned tl, unsigned j) { return tl < kMetaLane || j < 2; }
  __device__ static __forceinline__ uint32_t* key_ptr(Slab* s, uint32_t slot) { return s->w + slot; }

  // A 32-bit CAS of the key word from kEmptyKey: the key is the whole slot.
  __device__ static __forceinline__ bool claim(Slab* s, uint32_t slot, uint32_t key, uint32_t) {
    return atomicCAS(key_ptr(s, slot), kEmptyKey, key) == kEmptyKey;
  }
  __device__ static __forceinline__ void replace(Slab*, uint32_t, uint32_t, uint32_t) {}
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) { return atomicAnd(s->w + 30, ~slots); }
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t, uint32_t fresh) {
    const uint32_t old = atomicCAS(s->w + 31, kNullSlab, fresh);
    return old == kNullSlab ? fresh : old;
  }
};

// State and next of a slab just read: lane kMetaLane holds words 30 and 31 in
// w[2], w[3] in both layouts.
__device__ __forceinline__ uint32_t tile_state(const LaneWords& v, unsigned tmask, unsigned tbase) {
  return __shfl_sync(tmask, v.w[2], tbase + kMetaLane);
}
__device__ __forceinline__ uint32_t tile_next(const LaneWords& v, unsigned tmask, unsigned tbase) {
  return __shfl_sync(tmask, v.w[3], tbase + kMetaLane);
}

}  // namespace gpudict::slabhash
