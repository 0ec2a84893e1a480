// The key bits a phased query list is radix-sorted on. Queries are sorted
// only for locality (neighbouring keys share leaves and the tile's finger),
// not for correctness: the query kernel answers a list in any order. So the
// sort skips the high bits every key of the list shares (they order
// nothing) and low bits: as few passes as buckets no wider than the mean
// distance between neighbouring keys need (such a bucket holds about one
// key of the list; keys that close usually share a leaf anyway), and within
// those passes as many low bits as fit. CUB sorts 8 bits per pass: at 2^22
// uniform keys this is 3 passes instead of 4 (bits 8..31).
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpudict::btree {

struct SortBits {
  int begin = 0, end = 32;  // CUB's [begin_bit, end_bit); end == 0: nothing to order
};

inline SortBits query_sort_bits(uint32_t lo, uint32_t hi, uint64_t n) {
  if (n < 2 || lo == hi) return {0, 0};
  const int end = 32 - __builtin_clz(lo ^ hi);  // the highest bit in which two keys differ, + 1
  const uint64_t gap = (static_cast<uint64_t>(hi) - lo + 1) / n;
  const int coarsest = gap >= 2 ? std::min(63 - __builtin_clzll(gap), end - 1) : 0;  // floor(log2(gap))
  const int passes = (end - coarsest + 7) / 8;
  return {std::max(0, end - 8 * passes), end};
}

}  // namespace gpudict::btree
