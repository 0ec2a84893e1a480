// Initial contents sorted by key with later duplicates winning, for filling an
// ordered map in order (std::map::emplace_hint at the end: O(1) per key).
// A stable LSD radix sort on (key, value) pairs: equal keys keep their input
// order, so the last pair of each run is the one that wins. Byte positions in
// which no two keys differ are skipped (4 passes for 32-bit keys).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "workloads/batch.hpp"

namespace gpudict {

inline std::vector<std::pair<uint64_t, uint64_t>> sorted_last_wins(const KeyValues& initial) {
  const size_t n = initial.size();
  std::vector<std::pair<uint64_t, uint64_t>> a(n);
  bool sorted = true;  // strictly ascending already: nothing to do
  uint64_t any_set = 0, all_set = ~uint64_t{0};
  for (size_t i = 0; i < n; ++i) {
    a[i] = {initial.keys[i], initial.values[i]};
    any_set |= initial.keys[i];
    all_set &= initial.keys[i];
    if (i > 0 && initial.keys[i - 1] >= initial.keys[i]) sorted = false;
  }
  if (sorted) return a;

  const uint64_t varying = any_set ^ all_set;  // bits in which some keys differ
  std::vector<std::pair<uint64_t, uint64_t>> b(n);
  for (unsigned shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xFF) == 0) continue;  // every key has the same byte here
    size_t start[257] = {};
    for (const auto& p : a) ++start[((p.first >> shift) & 0xFF) + 1];
    for (int d = 0; d < 256; ++d) start[d + 1] += start[d];
    for (const auto& p : a) b[start[(p.first >> shift) & 0xFF]++] = p;
    a.swap(b);
  }
  // Keep the last pair of each run of equal keys.
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 < n && a[i + 1].first == a[i].first) continue;
    a[w++] = a[i];
  }
  a.resize(w);
  return a;
}

}  // namespace gpudict
