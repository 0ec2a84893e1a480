#include "workloads/verifier_text.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace gpudict {

namespace {
// At most this many alternatives are spelled out in an "expected" text.
constexpr size_t kListLimit = 6;
// A multiset lists more before it is cut short: the repeats are the point.
constexpr size_t kBagLimit = 12;
}  // namespace

std::string describe(const Outcome& o, bool keys_only) {
  if (!o) return "not found";
  return keys_only ? std::string("found") : fmt::format("value {}", *o);
}

std::string describe(const Outcomes& set, bool keys_only) {
  if (set.size() == 1) return describe(set.front(), keys_only);
  std::string s = "one of: ";
  for (size_t i = 0; i < set.size() && i < kListLimit; ++i) s += (i ? ", " : "") + describe(set[i], keys_only);
  if (set.size() > kListLimit) s += fmt::format(", ... ({} in all)", set.size());
  return s;
}

std::string describe_values(const Outcomes& set, bool say_absent) {
  std::vector<uint64_t> values;
  bool absent = false;
  for (const Outcome& o : set) {
    if (o)
      values.push_back(*o);
    else
      absent = true;
  }
  std::string s = "value ";
  for (size_t i = 0; i < values.size() && i < kListLimit; ++i) s += fmt::format("{}{}", i ? " or " : "", values[i]);
  if (values.size() > kListLimit) s += fmt::format(" or ... ({} values)", values.size());
  if (say_absent && absent) s += " (or absent)";
  return s;
}

std::string describe_successor(uint64_t key, const std::vector<uint64_t>& values, bool keys_only) {
  if (keys_only) return fmt::format("successor {}", key);
  std::string s = fmt::format("successor {} (value ", key);
  for (size_t i = 0; i < values.size() && i < kListLimit; ++i) s += fmt::format("{}{}", i ? " or " : "", values[i]);
  if (values.size() > kListLimit) s += " or ...";
  return s + ")";
}

std::string describe(const ModelState::SuccessorOptions& o, bool keys_only) {
  const size_t alternatives = o.found.size() + (o.not_found ? 1 : 0);
  if (alternatives == 1)
    return o.not_found ? std::string("not found") : describe_successor(o.found[0].key, o.found[0].values(), keys_only);
  std::string s = "one of: ";
  for (size_t i = 0; i < o.found.size() && i < kListLimit; ++i)
    s += (i ? ", " : "") + describe_successor(o.found[i].key, o.found[i].values(), keys_only);
  if (o.found.size() > kListLimit) s += fmt::format(", ... ({} keys)", o.found.size());
  if (o.not_found) s += ", not found";
  return s;
}

std::string describe_bag(const ValueBag& b) {
  std::string s = "{";
  for (size_t i = 0; i < b.size() && i < kBagLimit; ++i) s += fmt::format("{}{}", i ? ", " : "", b[i]);
  if (b.size() > kBagLimit) s += fmt::format(", ... ({} values)", b.size());
  return s + "}";
}

std::optional<Problem> check_range_shape(uint64_t lo, uint64_t hi, const BatchResults& r, size_t i,
                                         bool equal_keys_allowed, RangePairs& pairs) {
  const uint64_t off = r.key[i];
  const uint64_t n = r.value[i];
  const uint64_t stored = std::min(r.range_keys.size(), r.range_values.size());
  if (off > stored || n > stored - off)
    return Problem{fmt::format("pairs within range_keys/range_values ({} pairs stored)", stored),
                   fmt::format("offset {}, {} pairs", off, n)};
  const uint64_t* rk = r.range_keys.data() + off;
  if (lo > hi) {
    if (n == 0) return std::nullopt;
    return Problem{"empty range (lo > hi)", fmt::format("{} pairs", n)};
  }
  for (uint64_t j = 0; j < n; ++j) {
    if (rk[j] < lo || rk[j] > hi)
      return Problem{fmt::format("keys in [{}, {}]", lo, hi), fmt::format("key {} in range", rk[j])};
    if (j == 0) continue;
    if (equal_keys_allowed ? rk[j] < rk[j - 1] : rk[j] <= rk[j - 1])
      return Problem{equal_keys_allowed ? "keys non-decreasing" : "keys strictly increasing",
                     fmt::format("key {} after key {}", rk[j], rk[j - 1])};
  }
  pairs = RangePairs{rk, r.range_values.data() + off, n};
  return std::nullopt;
}

}  // namespace gpudict
