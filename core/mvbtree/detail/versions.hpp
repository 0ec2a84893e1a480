// The multiversion B-Tree's version words (docs/mvbtree.md, "Versions").
//
// The tree under the versions is core/btree's, unchanged: its nodes are the
// *heads*, the latest state, read and written by the B-Tree's kernels. A
// leaf's earlier states live apart from it:
//
//   head_v[node]   one 8-byte word per node of the B-Tree's pool: the stamp
//                  of the head's state and where its next older state is;
//   copies[c]      the version pool: images of earlier leaf states, in the
//                  B-Tree's node layout (so one reader serves heads and
//                  copies), each with its own word copy_v[c].
//
// A version word holds a stamp (low 32 bits) and `older` (high 32 bits):
// none (0), a copy (kOlderCopy | c) or an origin (kOlderOrigin | head): a
// leaf created by a split points at the head it split from, whose own list
// holds the states before the split (only leaves split off from it exist
// later; a leaf's key range never grows, as nodes never merge). A version
// with stamp t whose newer neighbour in its list has stamp t' is the state
// for every snapshot s with t <= s < t' (the head: t <= s). A zero word (a
// node no snapshot ever needed the past of) is stamp 0 and no older state:
// valid for every snapshot.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUDICT_MV_HD __host__ __device__ __forceinline__
#else
#define GPUDICT_MV_HD inline
#endif

namespace gpudict::mvbtree {

using VWord = unsigned long long;

inline constexpr uint32_t kOlderNone = 0;
inline constexpr uint32_t kOlderCopy = 1u << 30;
inline constexpr uint32_t kOlderOrigin = 1u << 31;
inline constexpr uint32_t kOlderIndex = kOlderCopy - 1u;  // copies and heads below 2^30
inline constexpr uint64_t kMaxCopies = kOlderIndex;

GPUDICT_MV_HD uint32_t vstamp(VWord v) { return static_cast<uint32_t>(v); }
GPUDICT_MV_HD uint32_t volder(VWord v) { return static_cast<uint32_t>(v >> 32); }
GPUDICT_MV_HD VWord vword(uint32_t stamp, uint32_t older) {
  return (static_cast<VWord>(older) << 32) | stamp;
}

// The stamp of "the latest state" in a query: above every stamp in use.
inline constexpr uint32_t kLatest = 0xFFFFFFFFu;

}  // namespace gpudict::mvbtree
