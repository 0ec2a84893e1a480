// The verifier's words: how an allowed outcome or a wrong answer is spelt in a
// Mismatch (docs/semantics.md, section 7). Shared by the map/set checks
// (verifier.cpp) and the multimap checks (multimap_checks.cpp). Internal to
// the verifier.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "workloads/multimap_reference.hpp"
#include "workloads/reference.hpp"

namespace gpudict {

// What a failed check expected and what it got, in words.
struct Problem {
  std::string expected;
  std::string got;
};

// `keys_only` (set semantics): values are not shown ("found", "successor 7").
std::string describe(const Outcome& o, bool keys_only = false);
// "value 17", "one of: not found, value 3, value 5".
std::string describe(const Outcomes& set, bool keys_only = false);
// "value 4", "value 4 or 5", with "(or absent)" when `say_absent` and the key may be absent.
std::string describe_values(const Outcomes& set, bool say_absent);
// "successor 7 (value 3 or 4)"; keys_only: "successor 7".
std::string describe_successor(uint64_t key, const std::vector<uint64_t>& values, bool keys_only = false);
// "successor 7 (value 3)", "not found", "one of: ..., not found".
std::string describe(const ModelState::SuccessorOptions& o, bool keys_only = false);
// A multiset of values: "{4, 4, 7}" (long ones cut short).
std::string describe_bag(const ValueBag& b);

// A range result's pairs, once their shape is checked.
struct RangePairs {
  const uint64_t* keys = nullptr;
  const uint64_t* values = nullptr;
  uint64_t n = 0;
};
// The checks every range answer must pass whatever the semantics: its pairs
// lie within range_keys/range_values, lo > hi gives none, every key is in
// [lo, hi], keys strictly increasing (`equal_keys_allowed`: non-decreasing,
// a multimap's pairs of one key). Fills `pairs` when the shape is right.
std::optional<Problem> check_range_shape(uint64_t lo, uint64_t hi, const BatchResults& r, size_t i,
                                         bool equal_keys_allowed, RangePairs& pairs);

}  // namespace gpudict
