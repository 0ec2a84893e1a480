// A radix index over a sorted array of distinct u64 keys, for searches that
// must be fast on large arrays: bucket b holds the keys k with
// (k - front) >> shift == b, at [start[b], start[b + 1]), so a search is one
// read of the table and a binary search of a few keys. Arrays under 2^15
// keys (or over 2^32) get no table and fall back to a plain binary search.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "workloads/parallel.hpp"
#include "workloads/uninit_vector.hpp"

namespace gpudict {

class SortedIndex {
 public:
  // Indexes `keys` (sorted, distinct; a vector of u64); valid until they change.
  template <class Keys>
  void build(const Keys& keys) {
    start_.clear();
    shift_ = 0;
    if (keys.size() < (size_t{1} << 15) || keys.size() > 0xFFFFFFFFull) return;
    const uint64_t front = keys.front(), span = keys.back() - front;
    int span_bits = 0;
    while (span_bits < 64 && (span >> span_bits) != 0) ++span_bits;
    int size_bits = 0;
    while ((uint64_t{1} << size_bits) < keys.size()) ++size_bits;
    const int table_bits = std::min(24, std::max(10, size_bits - 2));
    shift_ = std::max(0, span_bits - table_bits);
    const uint64_t buckets = (span >> shift_) + 1;
    start_.resize(buckets + 1);
    // Bucket b starts at the first key of a bucket >= b: key i writes the
    // buckets after its predecessor's, up to its own (each entry written
    // once, so the pieces run on the host's threads).
    const uint64_t n = keys.size();
    parallel_for(n, uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
      uint64_t b = lo == 0 ? 0 : ((keys[lo - 1] - front) >> shift_) + 1;
      for (uint64_t i = lo; i < hi; ++i) {
        const uint64_t kb = (keys[i] - front) >> shift_;
        while (b <= kb) start_[b++] = static_cast<uint32_t>(i);
      }
    });
    for (uint64_t b = ((keys.back() - front) >> shift_) + 1; b <= buckets; ++b) start_[b] = static_cast<uint32_t>(n);
  }

  // The first position of `keys` (the array indexed) with a key >= `key`.
  template <class Keys>
  size_t lower(const Keys& keys, uint64_t key) const {
    if (start_.empty()) return static_cast<size_t>(std::lower_bound(keys.begin(), keys.end(), key) - keys.begin());
    if (key <= keys.front()) return 0;
    if (key > keys.back()) return keys.size();
    const uint64_t b = (key - keys.front()) >> shift_;
    return static_cast<size_t>(std::lower_bound(keys.begin() + start_[b], keys.begin() + start_[b + 1], key) -
                               keys.begin());
  }
  template <class Keys>
  bool contains(const Keys& keys, uint64_t key) const {
    const size_t i = lower(keys, key);
    return i < keys.size() && keys[i] == key;
  }
  // Asks the cache for the table entry a search of `key` reads first.
  template <class Keys>
  void prefetch(const Keys& keys, uint64_t key) const {
    if (start_.empty() || key < keys.front() || key > keys.back()) return;
    __builtin_prefetch(&start_[(key - keys.front()) >> shift_]);
  }

 private:
  int shift_ = 0;
  uninit_vector<uint32_t> start_;  // every entry written by build
};

}  // namespace gpudict
