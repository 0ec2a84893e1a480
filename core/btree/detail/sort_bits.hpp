// The key bits a phased query list is radix-sorted on. Queries are sorted
// only for locality (neighbouring keys share leaves and the tile's finger),
// not for correctness: the query kernel answers a list in any order. So the
// sort skips the high bits every key of the list shares (they order
// nothing) and low bits: as few passes as buckets no wider than the mean
// distance between neighbouring keys need (such a bucket holds about one
// key of the list; keys that close usually share a leaf anyway), and within
// those passes as many low bits as fit. CUB sorts 8 bits per pass: at 2^22
// uniform keys this is 3 passes instead of 4 (bits 8..31); at 2^22 uniform
// 64-bit keys 3 instead of 8 (bits 40..63).
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpudict::btree {

struct SortBits {
  int begin = 0, end = 32;  // CUB's [begin_bit, end_bit); end == 0: nothing to order
};

// For keys of type K (uint32_t or uint64_t) in [lo, hi]: the same bits
// for a u32 list at either width (the bit positions of a key do not
// depend on the word it is held in).
template <class K>
SortBits query_sort_bits_of(K lo, K hi, uint64_t n) {
  static_assert(sizeof(K) == 4 || sizeof(K) == 8, "32- or 64-bit keys");
  if (n < 2 || lo == hi) return {0, 0};
  // The highest bit in which two keys differ, + 1.
  const int end = 64 - __builtin_clzll(static_cast<uint64_t>(lo ^ hi));
  // (hi - lo + 1) / n without overflow: the span is 2^64 for the whole u64 domain.
  const uint64_t gap = static_cast<uint64_t>((static_cast<unsigned __int128>(hi - lo) + 1) / n);
  const int coarsest = gap >= 2 ? std::min(63 - __builtin_clzll(gap), end - 1) : 0;  // floor(log2(gap))
  const int passes = (end - coarsest + 7) / 8;
  return {std::max(0, end - 8 * passes), end};
}

inline SortBits query_sort_bits(uint32_t lo, uint32_t hi, uint64_t n) { return query_sort_bits_of(lo, hi, n); }

}  // namespace gpudict::btree
