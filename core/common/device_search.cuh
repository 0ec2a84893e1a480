// Binary search of a sorted array by one thread, shared by every structure:
// the sorted array's fence index, the B-Tree's leaf directory, the LSM's
// merges, the graph's vertex lookups, and a sharded structure's key ranges
// (shard_partition.hpp, which also runs on the host).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gpudict {

// Whether `key` counts before q: lower bound counts keys < q, upper bound keys <= q.
template <class K>
__host__ __device__ __forceinline__ bool counts_before(K key, K q, bool upper) {
  return (key < q) | (upper & (key == q));  // no short-circuit: no branches
}

// Entries of the sorted a[0, size) that count before q: lower_bound (upper
// false) or upper_bound (upper true). The halving form keeps one live range
// length instead of two bounds, and never reads past a[size - 1].
template <class K, class I = uint32_t>
__host__ __device__ __forceinline__ I count_before(const K* a, I size, K q, bool upper) {
  I lo = 0, len = size;
  while (len > 0) {
    const I half = len >> 1;
    if (counts_before(a[lo + half], q, upper)) {
      lo += half + 1;
      len -= half + 1;
    } else {
      len = half;
    }
  }
  return lo;
}

// Whether the sorted a[0, size) holds q.
template <class K, class I = uint32_t>
__device__ __forceinline__ bool sorted_contains(const K* a, I size, K q) {
  const I i = count_before(a, size, q, false);
  return i < size && a[i] == q;
}

}  // namespace gpudict
