// The kernels that keep the versions (docs/mvbtree.md, "Updates under
// snapshots", "Reclamation"): around each update call of the B-Tree while
// snapshots are live,
//   claim_kernel   every leaf an update will change, once per call (by
//                  descent; claim_routes_kernel: from the merged path's
//                  routing): its version word takes the call's stamp;
//                  when a live snapshot sees its current state, it is
//                  listed for a copy;
//   copy_kernel    the listed leaves' images into the version pool, each
//                  head's `older` pointing at its copy;
//   origin_kernel  after the B-Tree's kernels: every leaf the call created
//                  points at the leaf it split from (versions.hpp), found
//                  among the touched leaves sorted by low key;
// and, when a snapshot is dropped, sweep_kernel (the versions no live
// snapshot needs leave their lists for the free list), and, before the
// global stamp would pass its limit, renumber_kernel. Each runs between
// the B-Tree's kernels on the tree's stream: no tree kernel runs
// concurrently, so plain loads and stores suffice; appends to shared lists
// take one atomicAdd per group of lanes (append_slot).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/ops_kernel.cuh"
#include "core/btree/detail/point_kernel.cuh"
#include "core/btree/detail/thread_node.cuh"
#include "core/mvbtree/detail/versions.hpp"

namespace gpudict::mvbtree {

// The update operations of a call, as the B-Tree's DeviceSource gives them.
struct UpdateSource {
  const void* keys = nullptr;
  int key_bytes = 4;
  const uint8_t* types = nullptr;
  const bool* erase = nullptr;
  const uint32_t* index = nullptr;
  uint8_t type = 0;
  uint64_t n = 0;
};

// Lists a claim fills (capacity: the call's operations) and their counts.
struct ClaimLists {
  uint32_t* touched = nullptr;     // leaves an update changes, each once
  VWord* touched_old = nullptr;    // their version words before the call
  uint32_t* copy_of = nullptr;     // positions in touched of the leaves to copy
  unsigned long long* counts = nullptr;  // [0] touched, [1] copies
};

// A slot in a list shared by the grid (its length at *count): one atomic
// per group of lanes that append together, not one per lane (a call's
// claims and freed copies come by the hundred thousand).
__device__ __forceinline__ unsigned long long append_slot(unsigned long long* count) {
  const auto g = cooperative_groups::coalesced_threads();
  unsigned long long base = 0;
  if (g.thread_rank() == 0) base = atomicAdd(count, static_cast<unsigned long long>(g.size()));
  return g.shfl(base, 0) + g.thread_rank();
}

template <class Word>
__device__ __forceinline__ Word source_key(const UpdateSource& src, uint64_t j) {
  return src.key_bytes == 8 ? static_cast<Word>(static_cast<const uint64_t*>(src.keys)[j])
                            : static_cast<Word>(static_cast<const uint32_t*>(src.keys)[j]);
}

// A leaf an update call changes, claimed by one thread of the call: listed
// as touched with its version word before the call; unless its state is
// already the call's stamp (changed since the newest snapshot: none sees
// it), it takes the stamp, and it is listed for a copy when the newest live
// snapshot sees its state.
__device__ __forceinline__ void claim_leaf(uint32_t leaf, VWord* head_v, uint32_t stamp, uint32_t newest_live,
                                          const ClaimLists& lists) {
  const VWord old = head_v[leaf];
  const uint64_t t = append_slot(lists.counts + 0);
  lists.touched[t] = leaf;
  lists.touched_old[t] = old;
  if (vstamp(old) == stamp) return;
  head_v[leaf] = vword(stamp, volder(old));
  if (vstamp(old) <= newest_live) lists.copy_of[append_slot(lists.counts + 1)] = static_cast<uint32_t>(t);
}

// One thread per operation. A delete of a key its leaf does not hold
// changes nothing and claims nothing; every insert claims its leaf (an
// upsert of the value already held too: the operations kernel may split a
// full leaf on its way). mark[leaf] == call: claimed by this call already.
// stamp: the call's (the global stamp); newest_live: the newest live
// snapshot (a state with a stamp above it is seen by none).
template <class Word>
__global__ void __launch_bounds__(256) claim_kernel(btree::TreeRef<Word> tree, VWord* head_v, uint32_t* mark,
                                                    uint32_t call, UpdateSource src, uint32_t stamp,
                                                    uint32_t newest_live, ClaimLists lists,
                                                    unsigned long long* error) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= src.n) return;
  const uint64_t j = src.index ? src.index[i] : i;
  const uint8_t type = src.types ? src.types[j] : src.erase ? (src.erase[j] ? btree::kDelete : btree::kInsert) : src.type;
  if (type != btree::kInsert && type != btree::kDelete) return;
  const Word k = source_key<Word>(src, j);
  Word w[btree::kNodeWords], meta;
  uint32_t leaf;
  if (!btree::descend_to_leaf(tree, k, w, meta, leaf, btree::readonly_reader(tree))) {
    atomicExch(error, 1ull);
    return;
  }
  if (type == btree::kDelete) {
    int p;
    Word v;
    if (!btree::leaf_find(w, static_cast<int>(btree::meta_count(meta)), k, p, v)) return;
  }
  // Claimed by another operation of this call already: a plain read first,
  // so that a leaf every operation of a call goes to (a small tree's) is
  // not one atomic per operation.
  if (*static_cast<volatile uint32_t*>(mark + leaf) == call || atomicExch(mark + leaf, call) == call) return;
  claim_leaf(leaf, head_v, stamp, newest_live, lists);
}

// The merged path's claims (BTree::leaf_hook): each item's leaf, sorted by
// key, so the first item of each run of equal leaves claims it. Every
// update claims, a delete of an absent key too (the merge has not looked
// yet; a copy too many costs a line, never a wrong answer).
template <class Word>
__global__ void __launch_bounds__(256) claim_routes_kernel(const uint32_t* leaves, uint64_t n, VWord* head_v,
                                                           uint32_t stamp, uint32_t newest_live, ClaimLists lists) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint32_t leaf = leaves[i];
  if (i > 0 && leaves[i - 1] == leaf) return;
  claim_leaf(leaf, head_v, stamp, newest_live, lists);
}

// The version pool's allocation for a call's `copies` copies: copy i takes
// the free list's entry free_count - 1 - i while there are any, then
// cursor + (i - free_count) (the host sized the pool before the launch).
struct CopyAlloc {
  const uint32_t* free_list = nullptr;
  uint64_t free_count = 0;
  uint64_t cursor = 0;
  __device__ __forceinline__ uint32_t slot(uint64_t i) const {
    return static_cast<uint32_t>(i < free_count ? free_list[free_count - 1 - i] : cursor + (i - free_count));
  }
};

// The count of heads with an older state (a stat): +1 where a head's
// `older` goes from none to something, recounted by each sweep.
struct HeadCount {
  unsigned long long* count = nullptr;
  __device__ __forceinline__ void add() const { (void)append_slot(count); }
};

// One thread per copy the claims listed (lists.counts[1] of them; the
// grid covers at most n): the leaf's current image into its slot, with
// the leaf's old version word; the head then points at the copy.
template <class Word>
__global__ void __launch_bounds__(256) copy_kernel(const btree::Node<Word>* heads, btree::Node<Word>* copies,
                                                   VWord* copy_v, VWord* head_v, ClaimLists lists, uint64_t n,
                                                   CopyAlloc alloc, uint32_t stamp, HeadCount versioned) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n || i >= lists.counts[1]) return;
  const uint32_t t = lists.copy_of[i];
  const uint32_t leaf = lists.touched[t];
  const VWord old = lists.touched_old[t];
  const uint32_t c = alloc.slot(i);
  const uint4* from = reinterpret_cast<const uint4*>(heads + leaf);
  uint4* to = reinterpret_cast<uint4*>(copies + c);
#pragma unroll
  for (int q = 0; q < static_cast<int>(sizeof(btree::Node<Word>) / sizeof(uint4)); ++q) to[q] = from[q];
  copy_v[c] = old;
  head_v[leaf] = vword(stamp, kOlderCopy | c);
  if (volder(old) == kOlderNone) versioned.add();
}

// The touched leaves' low keys (which never change), to be sorted with
// their node indices for origin_kernel.
template <class Word>
__global__ void __launch_bounds__(256) touched_lows_kernel(btree::TreeRef<Word> tree, ClaimLists lists, uint64_t n,
                                                           Word* lows) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) lows[i] = tree.words(lists.touched[i])[btree::kLowWord];
}

// One thread per node the call allocated (pool indices [first, end)),
// after the B-Tree's kernels: a new leaf S was split off (directly or
// through other new leaves) from the nearest leaf left of it that existed
// before the call, which the call changed, so claimed: the touched leaf
// with the greatest low key <= S's (no old leaf lies between them). S
// takes the call's stamp and that origin. When the root was a leaf and was
// pushed down, every leaf is new and the root (low key 0) is the origin of
// all. Inner nodes and allocations a full pool left unlinked are skipped
// or harmless (never reached).
template <class Word>
__global__ void __launch_bounds__(256) origin_kernel(btree::TreeRef<Word> tree, VWord* head_v, const Word* lows,
                                                     const uint32_t* ids, uint64_t touched, uint64_t first,
                                                     uint64_t end, uint32_t stamp, HeadCount versioned,
                                                     unsigned long long* error) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (first + i >= end) return;
  const uint32_t node = static_cast<uint32_t>(first + i);
  const Word* w = tree.words(node);
  if (!btree::meta_leaf(w[btree::kMetaWord])) return;
  const Word low = w[btree::kLowWord];
  uint64_t a = 0, b = touched;  // the first low > S's
  while (a < b) {
    const uint64_t m = (a + b) / 2;
    if (lows[m] <= low) a = m + 1; else b = m;
  }
  if (a == 0) {  // no touched leaf left of it: never expected
    atomicExch(error, 1ull);
    return;
  }
  head_v[node] = vword(stamp, kOlderOrigin | ids[a - 1]);
  versioned.add();
}

// Whether a live snapshot (sorted, `count` of them) lies in [lo, hi).
__device__ __forceinline__ bool live_in(const uint32_t* live, uint32_t count, uint32_t lo, uint32_t hi) {
  uint32_t a = 0, b = count;  // the first live >= lo
  while (a < b) {
    const uint32_t m = (a + b) / 2;
    if (live[m] < lo) a = m + 1; else b = m;
  }
  return a < count && live[a] < hi;
}

// One thread per head (the whole version-word array: 8 bytes a node, read
// once; a head with no older state returns at once): its list keeps the
// versions some live snapshot reads (a copy with stamp t whose newer
// neighbour has stamp t' is read by the snapshots in [t, t'); an origin at
// the list's end by those below its newer neighbour's stamp); the others
// leave it, copies to the free list. Removing a version leaves its older
// neighbour read by the same live snapshots (none lies in the removed one's
// interval). Runs between kernels: no reader is inside a list.
template <class Word>
__global__ void __launch_bounds__(256) sweep_kernel(VWord* head_v, VWord* copy_v, uint64_t heads, HeadCount versioned,
                                                    uint32_t* free_list, unsigned long long* free_count,
                                                    const uint32_t* live, uint32_t live_count, uint64_t copy_capacity,
                                                    unsigned long long* error) {
  const uint64_t h = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (h >= heads) return;
  const VWord hv = head_v[h];
  if (volder(hv) == kOlderNone) return;
  uint32_t newer = vstamp(hv);  // the stamp of the version above the one looked at
  uint32_t first = kOlderNone;  // the head's new `older`
  int64_t tail = -1;            // the last copy kept (-1: none yet)
  auto attach = [&](uint32_t older) {
    if (tail < 0) first = older;
    else copy_v[tail] = vword(vstamp(copy_v[tail]), older);
  };
  uint32_t cur = volder(hv), end = kOlderNone;  // end: what the kept list ends with (none or a kept origin)
  for (uint64_t hops = 0; cur != kOlderNone; ++hops) {
    if (hops > copy_capacity) {
      atomicExch(error, 1ull);
      return;
    }
    if (cur & kOlderOrigin) {
      if (live_count > 0 && live[0] < newer) end = cur;
      break;
    }
    const uint32_t c = cur & kOlderIndex;
    const VWord cv = copy_v[c];
    const uint32_t t = vstamp(cv);
    cur = volder(cv);
    if (live_in(live, live_count, t, newer)) {
      attach(kOlderCopy | c);
      tail = c;
    } else {
      free_list[append_slot(free_count)] = c;
    }
    newer = t;
  }
  attach(end);
  head_v[h] = vword(vstamp(hv), first);
  if (first != kOlderNone) versioned.add();
}

// A stamp renumbered so that the live snapshots (sorted, `count`) become
// 2, 4, ..., 2 count and every other stamp t becomes 2 #{live < t} + 1:
// t <= s holds afterwards exactly when it held before, for every live s
// (all that a read compares stamps for). 0 stays 0 (below everything).
__device__ __forceinline__ uint32_t renumbered(uint32_t t, const uint32_t* live, uint32_t count) {
  if (t == 0) return 0;
  uint32_t a = 0, b = count;
  while (a < b) {
    const uint32_t m = (a + b) / 2;
    if (live[m] < t) a = m + 1; else b = m;
  }
  return a < count && live[a] == t ? 2 * a + 2 : 2 * a + 1;
}

// One thread per version word (heads, then copies).
static __global__ void __launch_bounds__(256) renumber_kernel(VWord* head_v, uint64_t heads, VWord* copy_v, uint64_t copies,
                                                       const uint32_t* live, uint32_t count) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= heads + copies) return;
  VWord* p = i < heads ? head_v + i : copy_v + (i - heads);
  const VWord v = *p;
  *p = vword(renumbered(vstamp(v), live, count), volder(v));
}

}  // namespace gpudict::mvbtree
