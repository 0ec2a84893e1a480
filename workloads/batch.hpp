// The replay engine's operation model: a workload's initial contents, its
// batches of operations and their results, shared by the workload readers,
// the generators, the CPU reference, the verifier and the adapter.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/ops.hpp"

namespace gpudict {

// phased: the batch's updates take effect, then its queries see the result.
// concurrent: all operations of the batch in one concurrent pass (docs/semantics.md).
enum class ExecMode : uint8_t { Phased = 0, Concurrent = 1 };
inline std::string_view mode_name(ExecMode m) { return m == ExecMode::Phased ? "phased" : "concurrent"; }

// Initial contents: keys[i] maps to values[i]. Keys need not be unique or
// sorted: a later duplicate replaces an earlier one (last wins).
struct KeyValues {
  std::vector<uint64_t> keys;
  std::vector<uint64_t> values;
  size_t size() const { return keys.size(); }
};

// One batch of operations as a struct of arrays, in batch order.
//   insert:    keys[i] = key, args[i] = value
//   delete:    keys[i] = key, args[i] = 0
//   lookup:    keys[i] = key, args[i] = 0
//   count:     keys[i] = lo,  args[i] = hi   (both ends included; lo > hi is empty)
//   range:     keys[i] = lo,  args[i] = hi
//   successor: keys[i] = key, args[i] = 0    (smallest present key > key)
//   vertex_delete: keys[i] = u * 2^32, args[i] = 0 (every edge from or to u)
//   triangles: keys[i] = 0, args[i] = 0
struct Batch {
  ExecMode mode = ExecMode::Phased;
  std::string snapshot;  // queries run against this snapshot; empty: the live structure
  std::vector<OpType> types;
  std::vector<uint64_t> keys;
  std::vector<uint64_t> args;

  size_t size() const { return types.size(); }
  void clear() {  // keeps the vectors' capacity
    mode = ExecMode::Phased;
    snapshot.clear();
    types.clear();
    keys.clear();
    args.clear();
  }
  void push(OpType t, uint64_t key, uint64_t arg = 0) {
    types.push_back(t);
    keys.push_back(key);
    args.push_back(arg);
  }
};

// Results of one batch, indexed by the operation's position in the batch.
// Update slots are left unused (found 0, value 0).
//   lookup:    found[i], value[i]
//   count:     value[i] = number of present keys in [lo, hi]
//   range:     value[i] = number of pairs, key[i] = offset of the first pair in
//              range_keys/range_values; pairs sorted by key
//   successor: found[i], key[i] = successor key, value[i] = its value
//   triangles: value[i] = the number of triangles
struct BatchResults {
  std::vector<uint8_t> found;
  std::vector<uint64_t> value;
  std::vector<uint64_t> key;
  std::vector<uint64_t> range_keys;
  std::vector<uint64_t> range_values;

  void reset(size_t n) {
    found.assign(n, 0);
    value.assign(n, 0);
    key.assign(n, 0);
    range_keys.clear();
    range_values.clear();
  }
};

// Operation indices of a batch grouped by type, in batch order within a type
// (a large batch is grouped on the host's threads: batch.cpp).
struct BatchPlan {
  std::array<std::vector<uint32_t>, kNumOpTypes> by_type;

  explicit BatchPlan(const Batch& b);
  const std::vector<uint32_t>& of(OpType t) const { return by_type[static_cast<int>(t)]; }
  size_t updates() const { return of(OpType::Insert).size() + of(OpType::Delete).size(); }
  size_t queries() const {
    size_t n = 0;
    for (OpType t : kAllOpTypes)
      if (is_query(t)) n += of(t).size();
    return n;
  }
};

}  // namespace gpudict
