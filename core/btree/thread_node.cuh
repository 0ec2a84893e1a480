// A node held by one thread: its 32 words in registers (read whole by the
// point queries, the thread-per-operation kernel and the top copy's
// search), searched and changed with compares and selects over the fixed
// capacity, so the words stay in registers. The tiles' versions, where a
// node is spread over a tile's lanes, are in tile_node.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/node.hpp"

namespace gpudict::btree {

// How many of the keys of pairs [0, count) are <= k (strict: < k): keys
// are sorted, so the upper (lower) bound position of k. Unrolled over the
// fixed capacity, so the node stays in registers.
__device__ __forceinline__ int keys_below(const uint32_t (&w)[kNodeWords], int count, uint32_t k, bool strict) {
  int c = 0;
#pragma unroll
  for (int i = 0; i < kCapacity; ++i) c += (i < count && (strict ? w[2 * i] < k : w[2 * i] <= k)) ? 1 : 0;
  return c;
}

// Pair q of the node (0 <= q < kCapacity), by selects.
__device__ __forceinline__ void pair_of(const uint32_t (&w)[kNodeWords], int q, uint32_t& key, uint32_t& value) {
  key = w[0];
  value = w[1];
#pragma unroll
  for (int i = 1; i < kCapacity; ++i) {
    if (q == i) {
      key = w[2 * i];
      value = w[2 * i + 1];
    }
  }
}

// The child of inner node w (count in meta) whose range holds k: the one
// of the last pivot <= k (pivot 0 is the node's low key <= k).
__device__ __forceinline__ uint32_t child_of(const uint32_t (&w)[kNodeWords], uint32_t meta, uint32_t k) {
  const int p = keys_below(w, static_cast<int>(meta_count(meta)), k, false);
  uint32_t pivot, child;
  pair_of(w, p > 0 ? p - 1 : 0, pivot, child);
  return child;
}

// Pair q's value becomes v.
__device__ __forceinline__ void thread_set_value(uint32_t (&w)[kNodeWords], int q, uint32_t v) {
#pragma unroll
  for (int i = 0; i < kCapacity; ++i)
    if (i == q) w[2 * i + 1] = v;
}

// Pairs [p, count) move one slot up and pair p becomes (k, v) (count < kCapacity).
__device__ __forceinline__ void thread_insert_pair(uint32_t (&w)[kNodeWords], int p, uint32_t k, uint32_t v) {
#pragma unroll
  for (int i = kCapacity - 1; i >= 1; --i) {  // top down: pair i - 1 is read before it is overwritten
    if (i > p) {
      w[2 * i] = w[2 * i - 2];
      w[2 * i + 1] = w[2 * i - 1];
    } else if (i == p) {
      w[2 * i] = k;
      w[2 * i + 1] = v;
    }
  }
  if (p == 0) {
    w[0] = k;
    w[1] = v;
  }
}

// Pair q leaves; the pairs above it move one slot down.
__device__ __forceinline__ void thread_remove_pair(uint32_t (&w)[kNodeWords], int q) {
#pragma unroll
  for (int i = 0; i + 1 < kCapacity; ++i) {  // bottom up: pair i + 1 is read before it is overwritten
    if (i >= q) {
      w[2 * i] = w[2 * i + 2];
      w[2 * i + 1] = w[2 * i + 3];
    }
  }
}

}  // namespace gpudict::btree
