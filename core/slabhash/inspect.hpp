// The host-side checker of a slab hash's table, for the tests: copies the
// base slabs, the pool and SlabAlloc's bitmaps to the host and checks every
// invariant the design rests on (docs/slabhash.md):
//   - chains: every next address is inside the pool, allocated, and reached
//     exactly once; every allocated slab is reached (slabs in use = bits set);
//   - free slabs are pristine (all 0xFF);
//   - claimed slots are a prefix of each chain (every slab but the last is
//     full; in the last, the empty slots come after the claimed ones);
//   - empty slots hold the empty pair and no tombstone;
//   - every stored key is in its bucket (key 0xFFFFFFFF only in the last one,
//     stored as 0);
//   - map and set: no alive key twice.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/api/dictionary.hpp"

namespace gpudict::slabhash {

struct TableCheck {
  std::string error;  // empty: every invariant holds; else the first violation
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // alive (key, value) pairs (set mode: value 0), any order
  uint64_t buckets = 0;       // chains checked (hashed buckets + 1)
  uint64_t pool_slabs = 0;    // pool slabs reached from the buckets
  uint64_t allocated = 0;     // bits set in the bitmaps
  uint64_t tombstones = 0;    // claimed slots whose alive bit is clear
  uint64_t max_chain = 0;     // longest chain, in slabs
};

// Throws InputError if `d` is not a slab hash.
TableCheck check_table(const Dictionary& d);

}  // namespace gpudict::slabhash
