// The host-side checker of a slab hash's table, for the tests: copies the
// base slabs, the pool and SlabAlloc's bitmaps to the host (copy_table) and
// checks every invariant the design rests on (docs/slabhash.md) on that copy
// (check_table_copy, a pure host function, so a test can corrupt a copy and
// see the checker catch it):
//   - chains: every next address is inside the pool, allocated, and reached
//     exactly once; every allocated slab is reached (slabs in use = bits set);
//   - free slabs are pristine (all 0xFF);
//   - claimed slots are a prefix of each chain (every slab but the last is
//     full; in the last, the empty slots come after the claimed ones);
//   - empty slots hold the empty pair and no tombstone; pad and unused
//     words are pristine (0xFF);
//   - every stored key is in its bucket (key key_max, 0xFFFFFFFF or
//     0xFFFFFFFFFFFFFFFF, only in the last one, stored as 0);
//   - map and set: no alive key twice.
// The copy knows its (key, value) width and reads every layout of
// slab_layout.cuh.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/slabhash/mode.hpp"
#include "core/slabhash/slab_hash_map.hpp"

namespace gpudict::slabhash {

struct TableCheck {
  std::string error;  // empty: every invariant holds; else the first violation
  std::vector<std::pair<uint64_t, uint64_t>> pairs;  // alive (key, value) pairs (set mode: value 0), any order
  uint64_t buckets = 0;       // chains checked (hashed buckets + 1)
  uint64_t pool_slabs = 0;    // pool slabs reached from the buckets
  uint64_t allocated = 0;     // bits set in the bitmaps
  uint64_t tombstones = 0;    // claimed slots whose alive bit is clear
  uint64_t max_chain = 0;     // longest chain, in slabs
};

// A slab's 32 words (slab_layout.cuh): the slots (u32/u32 map/multimap: key
// 2s, value 2s+1 of slot s, 15 slots; u32 set: key s, 30 slots; u64 values:
// words 4s..4s+3 = key word (a u32 key and its pad 0xFFFFFFFF, or a u64
// key), value, 7 slots, words 28-29 unused; u64 set: words 2s, 2s+1, 15
// slots), word 30 the state (bit s: slot s alive), word 31 the next slab's
// address. 64-bit keys and values are little-endian (low word first).
using SlabWords = std::array<uint32_t, 32>;

// Host copies of everything the checker reads. No table yet (nothing built
// or executed): buckets 0 and every vector empty.
struct TableCopy {
  Mode mode = Mode::Map;
  uint32_t key_bytes = 4, value_bytes = 4;  // the instantiation's widths (4 or 8)
  uint64_t buckets = 0;             // hashed buckets B
  uint32_t hash_a = 0, hash_b = 0;  // the universal hash's parameters (table_ref.cuh)
  uint32_t hash_a2 = 0;             // (u64 keys: the low half's multiplier)
  std::vector<SlabWords> base;      // B + 1 base slabs; base[B] is key key_max's bucket
  std::vector<SlabWords> pool;      // every pool slab, by SlabAlloc address
  std::vector<uint32_t> bitmap;     // bit a % 32 of word a / 32: pool slab a is allocated
};

// The table of `map` (u32/u32, u32/u64, u64/u64; declared as a friend in
// slab_hash_map.hpp).
template <class Key, class Value>
TableCopy copy_table(const slab_hash_map<Key, Value>& map);
// Checks the invariants above on a copy.
TableCheck check_table_copy(const TableCopy& t);
template <class Key, class Value>
TableCheck check_table(const slab_hash_map<Key, Value>& map) {
  return check_table_copy(copy_table(map));
}
// The bucket the table routes `key` to: B for key_max, else its hash.
uint64_t bucket_of(const TableCopy& t, uint64_t key);

// The copy's layout, for the checker and for tests that corrupt a copy:
// slots per slab, the largest key (the empty key), and slot `slot` of a
// slab: its key and value (set mode: 0) as stored, and writes of them (a
// u32 key's pad and the value of a set stay as they are).
uint32_t slots_of(const TableCopy& t);
uint64_t empty_key_of(const TableCopy& t);
uint64_t slot_key(const TableCopy& t, const SlabWords& s, uint32_t slot);
uint64_t slot_value(const TableCopy& t, const SlabWords& s, uint32_t slot);
void set_slot_key(const TableCopy& t, SlabWords& s, uint32_t slot, uint64_t key);
void set_slot_value(const TableCopy& t, SlabWords& s, uint32_t slot, uint64_t value);

}  // namespace gpudict::slabhash
