// A batch and hand-written results side by side, for the semantics tests
// (multimap, set, duplicate rules): `Run().insert(1, 2).lookup(1, 2)` is a
// batch whose lookup reported value 2.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workloads/batch.hpp"
#include "workloads/verifier.hpp"

namespace gpudict::testing {

using Pair = std::pair<uint64_t, uint64_t>;

inline KeyValues key_values(std::vector<uint64_t> keys, std::vector<uint64_t> values) {
  KeyValues k;
  k.keys = std::move(keys);
  k.values = std::move(values);
  return k;
}

struct Run {
  Batch b;
  BatchResults r;

  explicit Run(ExecMode mode = ExecMode::Phased, std::string snapshot = "") {
    b.mode = mode;
    b.snapshot = std::move(snapshot);
  }
  size_t push(OpType t, uint64_t key, uint64_t arg = 0) {
    b.push(t, key, arg);
    r.found.push_back(0);
    r.value.push_back(0);
    r.key.push_back(0);
    return b.size() - 1;
  }
  Run& insert(uint64_t k, uint64_t v) { return push(OpType::Insert, k, v), *this; }
  Run& erase(uint64_t k) { return push(OpType::Delete, k), *this; }
  Run& lookup(uint64_t k, std::optional<uint64_t> got) {
    const size_t i = push(OpType::Lookup, k);
    r.found[i] = got.has_value();
    r.value[i] = got.value_or(0);
    return *this;
  }
  Run& count(uint64_t lo, uint64_t hi, uint64_t got) {
    const size_t i = push(OpType::Count, lo, hi);
    r.value[i] = got;
    return *this;
  }
  Run& range(uint64_t lo, uint64_t hi, const std::vector<Pair>& got) {
    const size_t i = push(OpType::Range, lo, hi);
    r.key[i] = r.range_keys.size();
    r.value[i] = got.size();
    for (const auto& [k, v] : got) {
      r.range_keys.push_back(k);
      r.range_values.push_back(v);
    }
    return *this;
  }
  Run& successor(uint64_t k, std::optional<Pair> got) {
    const size_t i = push(OpType::Successor, k);
    if (got) {
      r.found[i] = 1;
      r.key[i] = got->first;
      r.value[i] = got->second;
    }
    return *this;
  }
};

// Checks `run` as batch `index`; returns the number of new mismatches.
inline uint64_t check_run(Verifier& v, const Run& run, uint64_t index = 0) {
  const uint64_t before = v.mismatches();
  v.check_batch(index, run.b, run.r);
  return v.mismatches() - before;
}

inline const Mismatch& last_mismatch(const Verifier& v) { return v.first_mismatches().back(); }

}  // namespace gpudict::testing
