// The B-Tree's node: one 128-byte line of 32 words, the same layout for
// leaves and inner nodes (seed 002, Fig. 1), with the latch, the leaf flag
// and the count in a metadata word instead of the keys' top bit, so every
// 32-bit key and value is legal.
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
//                 version (bits 6-31, +1 at every release of the latch)
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

inline constexpr int kNodeWords = 32;
inline constexpr int kNodeBytes = 128;
inline constexpr int kCapacity = 14;  // pairs per node
inline constexpr int kHighWord = 28;
inline constexpr int kLinkWord = 29;
inline constexpr int kLowWord = 30;
inline constexpr int kMetaWord = 31;

inline constexpr uint32_t kNil = 0xFFFFFFFFu;  // no node (links only: keys and values use all 32 bits)
inline constexpr uint32_t kRoot = 0;           // the root never moves: a root split moves its content down

inline constexpr uint32_t kCountMask = 0xFu;
inline constexpr uint32_t kLeafBit = 1u << 4;
inline constexpr uint32_t kLatchBit = 1u << 5;
inline constexpr uint32_t kVersionUnit = 1u << 6;

GPUDICT_BT_HD uint32_t meta_count(uint32_t m) { return m & kCountMask; }
GPUDICT_BT_HD bool meta_leaf(uint32_t m) { return (m & kLeafBit) != 0; }
GPUDICT_BT_HD bool meta_latched(uint32_t m) { return (m & kLatchBit) != 0; }
// The meta word a writer publishes when it releases the latch: the next
// version, the new count, the node's (possibly new) kind, unlatched.
GPUDICT_BT_HD uint32_t meta_release(uint32_t latched, uint32_t count, bool leaf) {
  const uint32_t version = (latched & ~(kVersionUnit - 1)) + kVersionUnit;
  return version | (count & kCountMask) | (leaf ? kLeafBit : 0u);
}
GPUDICT_BT_HD uint32_t meta_new(uint32_t count, bool leaf) { return (count & kCountMask) | (leaf ? kLeafBit : 0u); }

struct alignas(128) Node {
  uint32_t w[kNodeWords];
};
static_assert(sizeof(Node) == kNodeBytes, "a node is one 128-byte line");

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
