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

// `release`: the pairs are freed once copied (less host memory at the peak
// of the sort).
inline uninit_vector<std::pair<uint64_t, uint64_t>> sorted_last_wins(const KeyValues& initial,
                                                                     KeyValues* release = nullptr) {
  using Pair = std::pair<uint64_t, uint64_t>;
  const size_t n = initial.size();
  uninit_vector<Pair> a(n);
  parallel_for(n, uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) a[i] = {initial.keys[i], initial.values[i]};
  });
  if (release) *release = KeyValues{};
  const auto key_of = [](const Pair& p) { return p.first; };
  const auto [varying, ascending] = varying_bits(a, key_of);
  if (ascending) return a;  // strictly ascending already: nothing to do
  parallel_radix_sort(a, varying, key_of);
  keep_last_of_runs(a, key_of);
  return a;
}

}  // namespace gpudict
