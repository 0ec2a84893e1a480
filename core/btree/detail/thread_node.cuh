// A node held by one thread: its 32 words (of the node's width) in registers (read whole by the
// point queries, the thread-per-operation kernel and the top copy's
// search), searched and changed with compares and selects over the fixed
// capacity, so the words stay in registers. The tiles' versions, where a
// node is spread over a tile's lanes, are in tile_node.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/node.hpp"

namespace gpudict::btree {

// How many of the keys of pairs [0, count) are <= k (strict: < k): keys
// are sorted, so the upper (lower) bound position of k. Unrolled over the
// fixed capacity, so the node stays in registers.
template <class Word>
__device__ __forceinline__ int keys_below(const Word (&w)[kNodeWords], int count, same_t<Word> k, bool strict) {
  int c = 0;
#pragma unroll
  for (int i = 0; i < kCapacity; ++i) c += (i < count && (strict ? w[2 * i] < k : w[2 * i] <= k)) ? 1 : 0;
  return c;
}

// Pair q of the node (0 <= q < kCapacity), by selects.
template <class Word>
__device__ __forceinline__ void pair_of(const Word (&w)[kNodeWords], int q, Word& key, Word& value) {
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

// Where k belongs in leaf w holding `count` pairs: p = how many of its keys
// are <= k; true when pair p - 1 holds k (its value in `value`).
template <class Word>
__device__ __forceinline__ bool leaf_find(const Word (&w)[kNodeWords], int count, same_t<Word> k, int& p,
                                          Word& value) {
  p = keys_below(w, count, k, false);
  Word key;
  pair_of(w, p > 0 ? p - 1 : 0, key, value);
  return p > 0 && key == k;
}

// The child of inner node w (count in meta) whose range holds k: the one
// of the last pivot <= k (pivot 0 is the node's low key <= k).
template <class Word>
__device__ __forceinline__ uint32_t child_of(const Word (&w)[kNodeWords], same_t<Word> meta, same_t<Word> k) {
  const int p = keys_below(w, static_cast<int>(meta_count(meta)), k, false);
  Word pivot, child;
  pair_of(w, p > 0 ? p - 1 : 0, pivot, child);
  return static_cast<uint32_t>(child);  // a node index: 32-bit at both widths
}

// Pair q's value becomes v.
template <class Word>
__device__ __forceinline__ void thread_set_value(Word (&w)[kNodeWords], int q, same_t<Word> v) {
#pragma unroll
  for (int i = 0; i < kCapacity; ++i)
    if (i == q) w[2 * i + 1] = v;
}

// Pairs [p, count) move one slot up and pair p becomes (k, v) (count < kCapacity).
template <class Word>
__device__ __forceinline__ void thread_insert_pair(Word (&w)[kNodeWords], int p, same_t<Word> k, same_t<Word> v) {
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
template <class Word>
__device__ __forceinline__ void thread_remove_pair(Word (&w)[kNodeWords], int q) {
#pragma unroll
  for (int i = 0; i + 1 < kCapacity; ++i) {  // bottom up: pair i + 1 is read before it is overwritten
    if (i >= q) {
      w[2 * i] = w[2 * i + 2];
      w[2 * i + 1] = w[2 * i + 3];
    }
  }
}

// What one update did to a leaf held in registers (leaf_update).
enum LeafChange : int {
  kLeafSame = 0,   // nothing to change: a delete of an absent key, an upsert of the value already held
  kLeafValue = 1,  // pair q's value replaced (an upsert of a present key)
  kLeafPairs = 2,  // a pair inserted or removed; count changed
  kLeafFull = 3,   // an insert of a new key into a full leaf: nothing changed, a split first
};

// Applies an insert (upsert) of (k, v) or a delete of k to leaf w holding
// `count` pairs, in registers (the thread kernel's updates, alone or for a
// leaf group; the caller latches and stores).
template <class Word>
__device__ __forceinline__ int leaf_update(Word (&w)[kNodeWords], int& count, bool is_insert, same_t<Word> k,
                                           same_t<Word> v, int& q) {
  int p;
  Word value;
  const bool present = leaf_find(w, count, k, p, value);
  q = p - 1;
  if (!is_insert) {
    if (!present) return kLeafSame;
    thread_remove_pair(w, q);
    --count;
    return kLeafPairs;
  }
  if (present) {
    if (value == v) return kLeafSame;
    thread_set_value(w, q, v);
    return kLeafValue;
  }
  if (count == kCapacity) return kLeafFull;
  thread_insert_pair(w, p, k, v);
  ++count;
  return kLeafPairs;
}

}  // namespace gpudict::btree
