// Initial contents sorted by key with later duplicates winning, for filling an
// ordered map in order (std::map::emplace_hint at the end: O(1) per key).
// A stable LSD radix sort on (key, value) pairs, on the host's threads
// (parallel_sort.hpp): equal keys keep their input order, so the last pair
// of each run is the one that wins. Byte positions in which no two keys
// differ are skipped (4 passes for 32-bit keys).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "workloads/batch.hpp"
#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"
#include "workloads/uninit_vector.hpp"

namespace gpudict {

namespace detail {
inline uninit_vector<std::pair<uint64_t, uint64_t>> sort_last_wins(uninit_vector<std::pair<uint64_t, uint64_t>> a) {
  const auto key_of = [](const std::pair<uint64_t, uint64_t>& p) { return p.first; };
  const auto [varying, ascending] = varying_bits(a, key_of);
  if (ascending) return a;  // strictly ascending already: nothing to do
  parallel_radix_sort(a, varying, key_of);
  keep_last_of_runs(a, key_of);
  return a;
}
inline uninit_vector<std::pair<uint64_t, uint64_t>> pairs_of(const KeyValues& kv) {
  uninit_vector<std::pair<uint64_t, uint64_t>> a(kv.size());
  parallel_for(kv.size(), uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) a[i] = {kv.keys[i], kv.values[i]};
  });
  return a;
}
}  // namespace detail

inline uninit_vector<std::pair<uint64_t, uint64_t>> sorted_last_wins(const KeyValues& initial) {
  return detail::sort_last_wins(detail::pairs_of(initial));
}
// The same, freeing the pairs once copied (less host memory at the sort's peak).
inline uninit_vector<std::pair<uint64_t, uint64_t>> sorted_last_wins(KeyValues&& initial) {
  auto a = detail::pairs_of(initial);
  initial = KeyValues{};
  return detail::sort_last_wins(std::move(a));
}

}  // namespace gpudict
