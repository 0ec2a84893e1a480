// The slab: 128 bytes, read by a tile of 4 lanes (32 bytes each), and the
// layouts the modes use at each (key, value) width. Device code and the
// constants the host shares.
//
//   u32/u32 map / multimap (PairLayout): words 2s, 2s+1 = key, value of slot
//     s (15 slots of 8 bytes, words 0..29); word 30 = state; word 31 = next.
//   u32 set (KeyLayout): word s = key of slot s (30 slots, words 0..29);
//     word 30 = state; word 31 = next.
//   u64-value map / multimap (WidePairLayout<K>, u32/u64 and u64/u64): slot
//     s = bytes 16s .. 16s+15 (7 slots, words 0..27): the key word (8 bytes:
//     a u64 key, or a u32 key and 4 pad bytes 0xFF), then the value (8
//     bytes); words 28, 29 unused (0xFF); word 30 = state; word 31 = next.
//   u64 set (WideKeyLayout): words 2s, 2s+1 = the 8-byte key of slot s (15
//     slots, words 0..29); word 30 = state; word 31 = next.
//
// Why these widths: a slot is claimed by ONE compare-and-swap of everything
// a reader needs (the key and the value), so that a reader sees an empty
// slot or a whole pair and no fence is needed (docs/slabhash.md, "Fences").
// 8-byte pairs and keys take a 64-bit CAS, 16-byte pairs the 128-bit CAS of
// sm_90 on a 16-byte aligned slot. A u32/u64 pair (12 bytes) has no CAS of
// its size: it takes a 16-byte slot too (7 pairs, not the 10 that keys and
// values in separate parts would hold), since a split slot would need two
// writes to publish a pair (claim the key, then store the value), readers
// that can tell a claimed slot from a published one, and inserters of the
// same key that wait for the value - the single-CAS argument for unique keys
// (docs/slabhash.md, "Why a map never holds a key twice") would not hold.
// (state, next) stays in words 30, 31 in every layout, so the tile's meta
// lane and FLUSH find them in one place.
//
// state: bit s = 1 while slot s is NOT deleted ("alive" mask). A slot is
//   empty when its key is kEmptyKeyOf<K> (the largest key of its width);
//   claimed slots keep their key until FLUSH, and a delete only clears the
//   slot's alive bit (a tombstone).
// next: 32-bit SlabAlloc address of the next slab, kNullSlab at the tail
//   (addresses are indices into the pool at every key width).
//
// A free or empty slab is all 0xFF bytes ("pristine"): every key empty,
// every value all ones, every pad and unused word 0xFF, state all alive,
// next null. That is the state the pool and the base slabs start in (one
// memset) and the state FLUSH restores before it frees a slab, so allocating
// and linking a slab needs no stores and no fence (see docs/slabhash.md,
// "Fences").
//
// The user key key_max<K> (0xFFFFFFFF, or 2^64-1) equals the empty key: it
// lives in a bucket of its own (index `buckets`, past the hashed ones) where
// it is stored as kSpecialStoredKey (0). No other key maps there, so the
// stored 0 means key_max<K> without ambiguity, and no key or value of the
// user's domain is reserved, at either width.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/common/key_traits.hpp"
#include "core/common/memory_order.cuh"
#include "core/slabhash/mode.hpp"

namespace gpudict::slabhash {

inline constexpr uint32_t kSlabWords = 32;
inline constexpr uint32_t kSlabBytes = 128;
// Lanes that read one slab together. 4 (32 bytes each, two 16-byte loads)
// rather than 8: the four tiles of an 8-lane warp issued one instruction for
// 4 operations; eight 4-lane tiles issue one for 8 operations and keep 8 slab
// reads in flight per warp (docs/slabhash.md, "Warp-cooperative work sharing").
inline constexpr uint32_t kTile = 4;
inline constexpr uint32_t kTileLanes = (1u << kTile) - 1u;  // a tile's lanes, as bits from its first

// Tile-local ballot: bit l = lane l of the tile (tmask: the lanes that call
// it, the whole warp or the tile alone).
__device__ __forceinline__ unsigned tile_ballot(unsigned tmask, unsigned tbase, bool p) {
  return (__ballot_sync(tmask, p) >> tbase) & kTileLanes;
}
// The key of an empty slot at width K (and of every pristine slot).
template <class K>
inline constexpr K kEmptyKeyOf = key_max<K>;
inline constexpr uint32_t kEmptyKey = kEmptyKeyOf<uint32_t>;
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

// 64-bit elements: each u32/u32 (key, value) pair, each u64 set key and the
// (state, next) word are read as single-copy-atomic 64-bit accesses, the
// same size as the CAS that publishes a pair or key, so a reader sees a whole
// pair (key) or none of it.
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

// ---- the layouts ----
//
// Slot j of lane l is slot l * kPerLane + j ("lane-major"): the order in which
// inserters look for the first empty slot (docs/slabhash.md, uniqueness).
// Each layout names its key and value types (Key, Value), reads a tile's
// slab (load), takes a slot's key and value from what a lane read, claims,
// replaces and deletes, links the next slab, and writes slots plainly for
// FLUSH (put), which runs alone on the table.

// The (state, next) word as one 64-bit location (words 30, 31): deletes clear
// alive bits with a 64-bit atomicAnd, a new slab is linked with a 64-bit CAS;
// readers load it as one 64-bit element. Used by every layout whose slots are
// 64-bit elements or wider.
struct Meta64 {
  __device__ static __forceinline__ unsigned long long* ptr(Slab* s) {
    return reinterpret_cast<unsigned long long*>(s->w + 30);
  }
  // Clears alive bits (a delete); returns the alive mask before.
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) {
    // 64-bit atomic on the (state, next) word: the same size as its loads and
    // as the CAS that links the next slab; the high half (next) is kept.
    const unsigned long long keep = ~static_cast<unsigned long long>(slots);
    return static_cast<uint32_t>(atomicAnd(ptr(s), keep));
  }
  // Links `fresh` after `s` if s's next is still null. `state` is the state
  // half last read (the CAS compares the whole 64-bit word); a concurrent
  // delete in s changes it and the CAS is retried. Returns the next address
  // after the attempt (fresh on success, the winner's slab otherwise).
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t state, uint32_t fresh) {
    unsigned long long expect = (static_cast<unsigned long long>(kNullSlab) << 32) | state;
    for (;;) {
      const unsigned long long desired = (static_cast<unsigned long long>(fresh) << 32) | (expect & 0xFFFFFFFFull);
      const unsigned long long old = atomicCAS(ptr(s), expect, desired);
      if (old == expect) return fresh;
      if (static_cast<uint32_t>(old >> 32) != kNullSlab) return static_cast<uint32_t>(old >> 32);
      expect = old;  // only the state half changed (a delete): try again
    }
  }
};

// u32 keys, u32 values: 15 pairs of 8 bytes.
struct PairLayout {
  using Key = uint32_t;
  using Value = uint32_t;
  static constexpr bool kPairs = true;
  static constexpr bool kWide = false;  // 32-bit keys and values (the tuned kernels)
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
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) { return Meta64::kill(s, slots); }
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t state, uint32_t fresh) {
    return Meta64::link(s, state, fresh);
  }
  // FLUSH (alone on the table): a plain store of the pair.
  __device__ static __forceinline__ void put(Slab* s, uint32_t slot, uint32_t key, uint32_t value) {
    *pair_ptr(s, slot) = (static_cast<unsigned long long>(value) << 32) | key;
  }
};

// u32 keys (set): 30 keys of 4 bytes. V: the value type of the instantiation
// (set mode stores no values; lookups report 0).
template <class V>
struct KeyLayout {
  using Key = uint32_t;
  using Value = V;
  static constexpr bool kPairs = false;
  static constexpr bool kWide = false;
  static constexpr uint32_t kSlots = 30;
  static constexpr uint32_t kPerLane = kLaneWords;
  static constexpr uint32_t kDataBytes = 4;
  static constexpr uint32_t kAliveMask = (1u << kSlots) - 1;

  __device__ static __forceinline__ LaneWords load(const Slab* s, unsigned tl) { return load_words_relaxed(s, tl); }
  __device__ static __forceinline__ uint32_t key(const LaneWords& v, unsigned j) { return v.w[j]; }
  __device__ static __forceinline__ V value(const LaneWords&, unsigned) { return 0; }
  __device__ static __forceinline__ bool valid(unsigned tl, unsigned j) {
    return tl * kPerLane + j < kSlots;  // words 30, 31 are state and next
  }
  __device__ static __forceinline__ uint32_t* key_ptr(Slab* s, uint32_t slot) { return s->w + slot; }

  // A 32-bit CAS of the key word from kEmptyKey: the key is the whole slot.
  using ClaimResult = uint32_t;
  __device__ static __forceinline__ ClaimResult claim(Slab* s, uint32_t slot, uint32_t key, V) {
    return atomicCAS(key_ptr(s, slot), kEmptyKey, key);
  }
  __device__ static __forceinline__ bool won(ClaimResult old) { return old == kEmptyKey; }
  __device__ static __forceinline__ void replace(Slab*, uint32_t, uint32_t, V) {}
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) { return atomicAnd(s->w + 30, ~slots); }
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t, uint32_t fresh) {
    const uint32_t old = atomicCAS(s->w + 31, kNullSlab, fresh);
    return old == kNullSlab ? fresh : old;
  }
  __device__ static __forceinline__ void put(Slab* s, uint32_t slot, uint32_t key, V) { s->w[slot] = key; }
};

// u64 keys (set): 15 keys of 8 bytes, each a 64-bit location (claimed by a
// 64-bit CAS, read as a 64-bit element of an ld.v2.u64: single-copy atomic,
// so a reader sees the empty key or the whole key, never half of one); the
// (state, next) word as in PairLayout. The same loads and meta atomics as the
// u32/u32 map: a u64 key takes the place of a u32 pair.
template <class V>
struct WideKeyLayout {
  using Key = uint64_t;
  using Value = V;
  static constexpr bool kPairs = false;
  static constexpr bool kWide = true;
  static constexpr uint32_t kSlots = 15;
  static constexpr uint32_t kPerLane = kLaneWords / 2;
  static constexpr uint32_t kDataBytes = 8;
  static constexpr uint32_t kAliveMask = (1u << kSlots) - 1;

  __device__ static __forceinline__ LaneWords load(const Slab* s, unsigned tl) { return load_pairs_relaxed(s, tl); }
  __device__ static __forceinline__ uint64_t key(const LaneWords& v, unsigned j) {
    return static_cast<uint64_t>(v.w[2 * j]) | (static_cast<uint64_t>(v.w[2 * j + 1]) << 32);
  }
  __device__ static __forceinline__ V value(const LaneWords&, unsigned) { return 0; }
  __device__ static __forceinline__ bool valid(unsigned tl, unsigned j) {
    return tl * kPerLane + j < kSlots;  // the meta lane's last element is (state, next)
  }
  __device__ static __forceinline__ unsigned long long* key_ptr(Slab* s, uint32_t slot) {
    return reinterpret_cast<unsigned long long*>(s->w + 2 * slot);
  }

  using ClaimResult = unsigned long long;
  __device__ static __forceinline__ ClaimResult claim(Slab* s, uint32_t slot, uint64_t key, V) {
    return atomicCAS(key_ptr(s, slot), ~0ull, static_cast<unsigned long long>(key));
  }
  __device__ static __forceinline__ bool won(ClaimResult old) { return old == ~0ull; }
  __device__ static __forceinline__ void replace(Slab*, uint32_t, uint64_t, V) {}
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) { return Meta64::kill(s, slots); }
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t state, uint32_t fresh) {
    return Meta64::link(s, state, fresh);
  }
  __device__ static __forceinline__ void put(Slab* s, uint32_t slot, uint64_t key, V) {
    *key_ptr(s, slot) = static_cast<unsigned long long>(key);
  }
};

// A 16-byte slot as the 128-bit atomics take it: the key word, then the value.
struct alignas(16) Slot16 {
  unsigned long long lo, hi;
};
static_assert(sizeof(Slot16) == 16 && alignof(Slot16) == 16, "a 16-byte slot");

// 16-byte elements: each slot is read as ONE 128-bit access
// (ld.relaxed.gpu.b128, what cuda::atomic_ref of a 16-byte type loads with),
// the same size as the 128-bit CAS that claims it and the 128-bit store that
// replaces its value, so a reader sees an empty slot or a whole pair; two
// 64-bit loads of the key and the value would not be single-copy atomic
// together and could see the new key with the old (empty) value. The meta
// lane's second half is (unused word, (state, next)): two 64-bit elements,
// the size of the meta word's atomics.
__device__ __forceinline__ LaneWords load_slots16_relaxed(const Slab* s, unsigned tl) {
  unsigned long long a, b, c, d;
  const char* p = reinterpret_cast<const char*>(s) + 32 * tl;
  asm volatile(
      "{\n\t.reg .b128 t;\n\t"
      "ld.relaxed.gpu.global.b128 t, [%2];\n\t"
      "mov.b128 {%0, %1}, t;\n\t}"
      : "=l"(a), "=l"(b)
      : "l"(p)
      : "memory");
  asm volatile(
      "{\n\t.reg .pred m;\n\t.reg .b128 t;\n\t"
      "setp.ne.u32 m, %3, 0;\n\t"
      "@m ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];\n\t"
      "@!m ld.relaxed.gpu.global.b128 t, [%2];\n\t"
      "@!m mov.b128 {%0, %1}, t;\n\t}"
      : "=l"(c), "=l"(d)
      : "l"(p + 16), "r"(tl == kMetaLane ? 1u : 0u)
      : "memory");
  return {{static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32), static_cast<uint32_t>(b),
           static_cast<uint32_t>(b >> 32), static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32),
           static_cast<uint32_t>(d), static_cast<uint32_t>(d >> 32)}};
}

// u64 values (u32/u64 and u64/u64 map and multimap): 7 slots of 16 bytes,
// the key word (a u64 key, or a u32 key with 4 pad bytes 0xFF above it) and
// the value. Claimed by one 128-bit CAS (sm_90) of the whole slot, so key and
// value are published together as in PairLayout.
template <class K>
struct WidePairLayout {
  using Key = K;
  using Value = uint64_t;
  static constexpr bool kPairs = true;
  static constexpr bool kWide = true;
  static constexpr uint32_t kSlots = 7;
  static constexpr uint32_t kPerLane = 2;
  static constexpr uint32_t kDataBytes = 16;  // a slot (the u32 key's pad counts: it cannot hold data)
  static constexpr uint32_t kAliveMask = (1u << kSlots) - 1;

  __device__ static __forceinline__ LaneWords load(const Slab* s, unsigned tl) { return load_slots16_relaxed(s, tl); }
  __device__ static __forceinline__ K key(const LaneWords& v, unsigned j) {
    if constexpr (sizeof(K) == 4)
      return v.w[4 * j];
    else
      return static_cast<uint64_t>(v.w[4 * j]) | (static_cast<uint64_t>(v.w[4 * j + 1]) << 32);
  }
  __device__ static __forceinline__ uint64_t value(const LaneWords& v, unsigned j) {
    return static_cast<uint64_t>(v.w[4 * j + 2]) | (static_cast<uint64_t>(v.w[4 * j + 3]) << 32);
  }
  __device__ static __forceinline__ bool valid(unsigned tl, unsigned j) {
    return tl * kPerLane + j < kSlots;  // the meta lane's second half is (unused, (state, next))
  }
  __device__ static __forceinline__ Slot16* slot_ptr(Slab* s, uint32_t slot) {
    return reinterpret_cast<Slot16*>(s->w + 4 * slot);
  }
  // The key word: a u32 key keeps its pad bytes pristine (0xFF), so the
  // empty slot is all ones at both key widths.
  __device__ static __forceinline__ unsigned long long key_word(K key) {
    if constexpr (sizeof(K) == 4)
      return 0xFFFFFFFF00000000ull | key;
    else
      return static_cast<unsigned long long>(key);
  }

  // One 128-bit CAS from the empty slot (all ones: empty slots are always
  // pristine) to (key word, value).
  using ClaimResult = Slot16;
  __device__ static __forceinline__ ClaimResult claim(Slab* s, uint32_t slot, K key, uint64_t value) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return atomicCAS(slot_ptr(s, slot), Slot16{~0ull, ~0ull},
                     Slot16{key_word(key), static_cast<unsigned long long>(value)});
#else
    (void)s, (void)slot, (void)key, (void)value;
    __trap();  // the host refuses u64 values before sm_90 (no 128-bit CAS)
    return Slot16{0, 0};
#endif
  }
  __device__ static __forceinline__ bool won(ClaimResult old) { return (old.lo & old.hi) == ~0ull; }
  // Map REPLACE: one 128-bit store of the same key word and the new value
  // (the size of the CAS and the loads).
  __device__ static __forceinline__ void replace(Slab* s, uint32_t slot, K key, uint64_t value) {
    asm volatile(
        "{\n\t.reg .b128 t;\n\t"
        "mov.b128 t, {%1, %2};\n\t"
        "st.relaxed.gpu.global.b128 [%0], t;\n\t}" ::"l"(slot_ptr(s, slot)),
        "l"(key_word(key)), "l"(static_cast<unsigned long long>(value))
        : "memory");
  }
  __device__ static __forceinline__ uint32_t kill(Slab* s, uint32_t slots) { return Meta64::kill(s, slots); }
  __device__ static __forceinline__ uint32_t link(Slab* s, uint32_t state, uint32_t fresh) {
    return Meta64::link(s, state, fresh);
  }
  __device__ static __forceinline__ void put(Slab* s, uint32_t slot, K key, uint64_t value) {
    *reinterpret_cast<ulonglong2*>(slot_ptr(s, slot)) = make_ulonglong2(key_word(key), value);
  }
};

// The layout of a mode at a (key, value) width.
template <class K, class V, Mode M>
struct LayoutOf {
  static_assert(sizeof(V) >= sizeof(K), "u64 keys run with u64 values (key_traits.hpp)");
  using type = std::conditional_t<
      M == Mode::Set, std::conditional_t<sizeof(K) == 4, KeyLayout<V>, WideKeyLayout<V>>,
      std::conditional_t<sizeof(V) == 4, PairLayout, WidePairLayout<K>>>;
};
template <class K, class V, Mode M>
using LayoutFor = typename LayoutOf<K, V, M>::type;

// State and next of a slab just read: lane kMetaLane holds words 30 and 31 in
// its last two words in both layouts.
__device__ __forceinline__ uint32_t tile_state(const LaneWords& v, unsigned tmask, unsigned tbase) {
  return __shfl_sync(tmask, v.w[kLaneWords - 2], tbase + kMetaLane);
}
__device__ __forceinline__ uint32_t tile_next(const LaneWords& v, unsigned tmask, unsigned tbase) {
  return __shfl_sync(tmask, v.w[kLaneWords - 1], tbase + kMetaLane);
}

// A tile's place in its warp, for device refs a caller's kernel drives: its
// lane in the tile, its first lane and its lanes as a mask (tiled_partition
// <kTile> tiles are kTile aligned lanes). %laneid, not threadIdx.x: a
// caller's blocks may be 2-D.
struct TileLanes {
  unsigned tl, tbase, tmask;
  __device__ TileLanes() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    tl = lane & (kTile - 1);
    tbase = lane & ~(kTile - 1);
    tmask = kTileLanes << tbase;
  }
};

}  // namespace gpudict::slabhash
