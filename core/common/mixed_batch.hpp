// A bulk call of operations of several types run as one concurrent pass
// (docs/semantics.md, "concurrent"): the inputs' codes and the per-operation
// outputs, for the containers that have such a call (slab_hash_map::apply).
#pragma once

#include <cstdint>

namespace gpudict {

// An operation's code in a mixed call's `ops` array.
enum class op_code : std::uint8_t { insert = 0, erase = 1, find = 2, count = 3, range = 4, successor = 5 };

// Per-operation outputs of a mixed call, by position in the call; any may
// be null (not written). Positions of operations that do not write an
// output are left as they were. The hints, when the caller knows them,
// spare the call a pass over its operations and a wait for the result.
template <class Key, class Value>
struct mixed_outputs {
  bool* found = nullptr;            // find, successor: present
  Value* values = nullptr;          // find, successor: the value (0 when absent)
  Key* keys = nullptr;              // successor: the key
  std::uint64_t* counts = nullptr;  // count: the keys (pairs) counted; range: its pairs
  std::uint64_t* offsets = nullptr;  // range: its first pair's position in the call's range_output
  std::uint64_t range_hint = 0;     // range pairs expected: room made before the pass (more grows it)
  std::uint32_t kinds_hint = 0;     // bit 1 << code of every op_code in ops (0: unknown)
  std::uint64_t inserts_hint = 0;   // inserts among ops (read when kinds_hint is given)
};

// The pairs of a mixed call's ranges, in memory the container owns: valid
// until its next call. A range's pairs are contiguous; ranges may lie in
// any order.
template <class Key, class Value>
struct range_output {
  const Key* keys = nullptr;  // null: every pair's key is its range's key (point ranges of a hash table)
  const Value* values = nullptr;
  std::uint64_t size = 0;
};

}  // namespace gpudict
