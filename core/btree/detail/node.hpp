// The B-Tree's node: 32 words of one width, the same layout for leaves and
// inner nodes (the GPU B-Tree paper, Fig. 1), with the latch, the leaf flag
// and the count in a metadata word instead of the keys' top bit, so every key
// and value of the width is legal.
//
// The word type Word is the wider of the key and value types: uint32_t for
// u32 keys and u32 values (a node is one 128-byte line), uint64_t when the
// key or the value is 64-bit (a node is 256 bytes: two lines, the same 14
// pairs and word positions). A u32 key or value in a 64-bit word is
// zero-extended, so it compares as it does at 32 bits. Why 32 words of 8
// bytes rather than a 128-byte node of 6 pairs: the fanout stays 14 (a
// 6-pair node would add about 0.5 x log2(n) levels: 12 instead of 8 at 2^26
// keys, each level a dependent round trip of every search), a tile of 32
// lanes still reads the node with one coalesced access (8 bytes a lane),
// and the layout, the split points and the protocol stay the code's
// (docs/btree.md, "64-bit keys and values").
//
//   words 0..27   14 pairs, interleaved: word 2i = key i (inner: pivot i),
//                 word 2i+1 = value i (inner: child node index i)
//   word 28       high key: the right sibling's lower bound (valid only
//                 when the link is not kNil; the rightmost node of a level
//                 has no upper bound)
//   word 29       link: the right sibling's node index, or kNil
//   word 30       low key: this node's lower bound; set when the node is
//                 created and never changed (no merges), so a search that
//                 starts from any node with low <= key is correct
//   word 31       meta: count (bits 0-3), leaf flag (bit 4), latch (bit 5),
//                 version (bits 6 up to the word's top, +1 at every
//                 release of the latch: 26 bits at u32, 58 at u64)
//
// Node indices (children, links) are 32-bit at both widths, zero-extended
// in a 64-bit word; kNil is 2^32 - 1 in either (never a key: links and
// keys are different words).
//
// A node holds the keys k with low <= k < high. In an inner node pivot 0 is
// the node's low key and child i holds [pivot i, pivot i+1) (the last child
// up to the node's high key). Plain C++ so the host-side checker and the
// bulk-build planner share it with the kernels.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUDICT_BT_HD __host__ __device__ __forceinline__
#else
#define GPUDICT_BT_HD inline
#endif

namespace gpudict::btree {

// T in a parameter that takes part in no template argument deduction (a
// key or value argument converts to the node's word type).
template <class T>
struct SameType {
  using type = T;
};
template <class T>
using same_t = typename SameType<T>::type;

inline constexpr int kNodeWords = 32;
template <class Word>
inline constexpr int kNodeBytes = kNodeWords * static_cast<int>(sizeof(Word));  // 128 (u32) or 256 (u64)
inline constexpr int kCapacity = 14;  // pairs per node
inline constexpr int kHighWord = 28;
inline constexpr int kLinkWord = 29;
inline constexpr int kLowWord = 30;
inline constexpr int kMetaWord = 31;

inline constexpr uint32_t kNil = 0xFFFFFFFFu;  // no node (links only: keys and values use every bit of their width)
inline constexpr uint32_t kRoot = 0;           // the root never moves: a root split moves its content down

inline constexpr uint32_t kCountMask = 0xFu;
inline constexpr uint32_t kLeafBit = 1u << 4;
inline constexpr uint32_t kLatchBit = 1u << 5;
inline constexpr uint32_t kVersionUnit = 1u << 6;

template <class Word>
GPUDICT_BT_HD uint32_t meta_count(Word m) { return static_cast<uint32_t>(m) & kCountMask; }
template <class Word>
GPUDICT_BT_HD bool meta_leaf(Word m) { return (static_cast<uint32_t>(m) & kLeafBit) != 0; }
template <class Word>
GPUDICT_BT_HD bool meta_latched(Word m) { return (static_cast<uint32_t>(m) & kLatchBit) != 0; }
// The meta word a writer publishes when it releases the latch: the next
// version, the new count, the node's (possibly new) kind, unlatched.
template <class Word>
GPUDICT_BT_HD Word meta_release(Word latched, uint32_t count, bool leaf) {
  const Word version = (latched & ~static_cast<Word>(kVersionUnit - 1)) + kVersionUnit;
  return version | (count & kCountMask) | (leaf ? kLeafBit : 0u);
}
template <class Word>
GPUDICT_BT_HD Word meta_new(uint32_t count, bool leaf) {
  return static_cast<Word>((count & kCountMask) | (leaf ? kLeafBit : 0u));
}

template <class Word>
struct alignas(kNodeBytes<Word>) Node {
  Word w[kNodeWords];
};
static_assert(sizeof(Node<uint32_t>) == 128, "a u32 node is one 128-byte line");
static_assert(sizeof(Node<uint64_t>) == 256, "a u64 node is two 128-byte lines");

// Device-side counters of the tree (one instance in device memory).
struct TreeHeader {
  unsigned long long next_free;  // node allocation cursor (may pass the capacity: those allocations fail)
  unsigned long long size;       // live keys (+1 per new key, -1 per deleted key)
  unsigned long long leaves;
  unsigned long long height;     // levels, leaves included
  unsigned long long overflow;   // set when an allocation found the pool full
  unsigned long long error;      // set when a latch wait exceeded its bound or a search found a corrupt tree (a bug: never expected)
  unsigned long long grouped;    // updates a leader applied for a leaf group of >= 2 lanes (thread_ops_kernel.cuh), since the start
  unsigned long long warp_taken; // operations the thread kernel's threads left to their warp, since the start
};

}  // namespace gpudict::btree
