// Phased updates merged into the tree level by level (--phased-updates
// merge, the default). In a phased batch no query runs while the updates
// do, so they need neither latches nor fences: the batch is sorted once and
// each touched node is rewritten once, with everything that lands in it
// merged by one thread.
//
// Per level L, starting at the leaves, with a sorted list of items (level 0:
// the batch's inserts and deletes; above: a (low key, node) pair for every
// node created one level below):
//   route     each item descends from the root to its node at level L
//             (levels above L are not changed yet, so the routing is exact);
//   count     items with the same node form a segment, cut into sub-segments
//             (a cut every 16 positions once a segment is long, never between
//             equal keys), so that a long run of keys into one node
//             (ascending inserts, an empty tree) is spread over many threads.
//             One thread per sub-segment merges its items with the node's
//             pairs in its key range (the warp loads its threads' nodes with
//             coalesced asynchronous copies into shared memory) and counts
//             the result N. The common case - the segment's only sub-segment,
//             N <= 14 - is written back at once, in place (pairs, then high
//             key, link, low key and the next version), by the warp, one
//             coalesced line per node;
//   scan      the others take one node if N <= 14 (the segment's own node for
//             its first sub-segment, a new node for the others), else
//             ceil(N / fill) nodes; the host reads their total (and the
//             flags) - a level above the leaves with nothing left ends the
//             batch here - and a scan numbers the new nodes;
//   write     the host checks (grows) the pool, then one thread per such
//             sub-segment (the count kernel lists them, so that every thread
//             has one) merges again and writes its nodes: the segment's
//             node in place, new nodes chained after it in key order (the
//             last one inherits the old high key and link). First the
//             sub-segments that create new nodes only (they read the
//             segment's node, which the first sub-segment then rewrites),
//             then the first ones;
//   next      every new node's (low key, id) is an item of level L + 1.
// A root that splits is first pushed down (its content moves to a new node,
// the root keeps that one child), so the root stays node 0 and the tree one
// level taller. Duplicate keys of a batch: the last of its updates in list
// order wins (the list holds the inserts, then the deletes, each in batch
// order, and the radix sort is stable) - one of the outcomes the any-update
// rule of phased batches allows.
// A fixed pool is never left half-updated: the levels are first run without
// writing (count, separators) to learn how many nodes the batch takes, and
// the batch is refused (exit 3) before anything changes if they do not fit.
#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/btree/detail/btree_impl.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"

namespace gpudict::btree {

namespace {

constexpr unsigned kCut = 16;     // a long segment is cut every kCut positions
// Threads per block of the merge kernels: 128 at u32; 64 at u64, whose
// node rows are twice the bytes (two rows a thread: 33.8 KB of static
// shared memory a block either way, under the 48 KB limit).
template <class Word>
constexpr int kMergeBlock = sizeof(Word) == 4 ? 128 : 64;
constexpr int kRow = 33;          // a node image in shared memory: 32 words, padded (no bank conflicts)
constexpr int kPairWords = 2 * kCapacity;
// merge_walk's emit gets (key, from, item): an existing pair's value in
// `from`, or (item) the position of the item whose value goes in. The flag is
// its own argument: at 64-bit values no bit of `from` is free to mark it.

// One level's sorted items.
template <class Word>
struct Items {
  const Word* keys = nullptr;      // by position, sorted
  const uint32_t* perm = nullptr;  // level 0: the slot of each position (null: the position)
  const Word* vals = nullptr;      // by slot: value (level 0) or child node (above)
  const uint8_t* types = nullptr;  // by slot, level 0 without tags (null: every item inserts)
  bool tagged = false;             // perm carries kDeleteTag on deletes
  uint64_t n = 0;
  __device__ __forceinline__ uint32_t slot(uint64_t u) const {
    return perm ? (tagged ? perm[u] & ~kDeleteTag : perm[u]) : static_cast<uint32_t>(u);
  }
  // The last update of a key in the list wins; equal keys are adjacent.
  __device__ __forceinline__ bool winner(uint64_t u) const { return u + 1 == n || keys[u + 1] != keys[u]; }
  __device__ __forceinline__ bool deletes(uint64_t u) const {
    if (tagged) return (perm[u] & kDeleteTag) != 0;
    return types && types[slot(u)] == static_cast<uint8_t>(OpType::Delete);
  }
};

// Where each level's work goes (device arrays, by item position).
template <class Word>
struct LevelOut {
  uint32_t* target = nullptr;                // node of the item at this level
  unsigned long long* fresh = nullptr;       // new nodes of the sub-segment starting here (0 elsewhere); [n] = 0
  const unsigned long long* base = nullptr;  // exclusive scan of `fresh`
  uint32_t* merged = nullptr;                // N of the sub-segment starting here (listed heads only)
  Word* sep_keys = nullptr;                  // next level's items: low key and id of every new node
  Word* sep_vals = nullptr;
  unsigned long long* flags = nullptr;       // [0] the root's segment needs more than one node;
                                             // [1] keys added minus removed; [2] sub-segments left to the
                                             // write kernel (splits, long segments); [3] new nodes
  uint32_t* left = nullptr;                  // their first items' positions, in no order ([0, flags[2]))
  uint64_t left_n = 0;                       // the write kernel's copy of flags[2]
};

template <class Word>
__device__ __forceinline__ bool is_head(const uint32_t* target, const Word* keys, uint64_t i) {
  if (i == 0) return true;
  const uint32_t t = target[i];
  if (t != target[i - 1]) return true;
  return i % kCut == 0 && target[i - kCut] == t && keys[i] != keys[i - 1];
}

template <class Word>
__device__ __forceinline__ uint64_t next_head(const uint32_t* target, const Word* keys, uint64_t i, uint64_t n) {
  ++i;
  while (i < n && !is_head(target, keys, i)) ++i;
  return i;
}

// Nodes that N merged pairs take: one node up to a full node (none for an
// empty sub-segment that is not its segment's first), else nodes filled to
// at most `fill` pairs, evenly.
__device__ __forceinline__ int nodes_for(int N, bool first, int fill) {
  if (N <= kCapacity) return (first || N > 0) ? 1 : 0;
  return (N + fill - 1) / fill;
}

// The warp loads the node of every lane that has one (`node`, when `has`)
// into that lane's row of `rows`: lane l copies word l of each node with an
// asynchronous global-to-shared copy, so all of the warp's nodes are in
// flight at once and each is one coalesced access of the node (instead of
// eight scattered 16-byte loads per thread, one node after another). Every
// lane of the warp calls it.
template <class Word>
__device__ __forceinline__ void warp_load_nodes(const Node<Word>* nodes, uint32_t node, bool has, Word* rows) {
  const unsigned lane = lane_id();
  Word* warp_rows = rows + warp_in_block() * kWarpSize * kRow;
  const unsigned mask = __ballot_sync(kFullMask, has);
#pragma unroll 8
  for (int j = 0; j < 32; ++j) {
    const uint32_t id = __shfl_sync(kFullMask, node, j);
    if ((mask >> j) & 1u) __pipeline_memcpy_async(warp_rows + j * kRow + lane, nodes[id].w + lane, sizeof(Word));
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncwarp();
}

// The converse: the warp stores the row of every lane with `has` to its node.
template <class Word>
__device__ __forceinline__ void warp_store_nodes(Node<Word>* nodes, uint32_t node, bool has, const Word* rows) {
  const unsigned lane = lane_id();
  const Word* warp_rows = rows + warp_in_block() * kWarpSize * kRow;
  __syncwarp();
  const unsigned mask = __ballot_sync(kFullMask, has);
#pragma unroll 8
  for (int j = 0; j < 32; ++j) {
    const uint32_t id = __shfl_sync(kFullMask, node, j);
    if ((mask >> j) & 1u) nodes[id].w[lane] = warp_rows[j * kRow + lane];
  }
}

// A sub-segment: items [begin, end) of node t.
struct SubSeg {
  uint64_t begin = 0, end = 0;
  uint32_t t = 0;
  bool first = false;  // the first of its segment (it keeps node t)
  bool last = false;   // the last of its segment
};

template <class Word>
__device__ __forceinline__ SubSeg sub_segment(const uint32_t* target, const Items<Word>& it, uint64_t i) {
  SubSeg g;
  g.begin = i;
  g.t = target[i];
  g.first = i == 0 || target[i - 1] != g.t;
  g.end = next_head(target, it.keys, i, it.n);
  g.last = g.end == it.n || target[g.end] != g.t;
  return g;
}

// The dry run's pushed-down root: one child, no bounds.
template <class Word>
__device__ __forceinline__ void virtual_root_row(Word* row) {
  for (int w = 0; w < kNodeWords; ++w) row[w] = 0;
  row[1] = kNil;
  row[kLinkWord] = kNil;
  row[kMetaWord] = meta_new<Word>(1, false);
}

// Merges the sub-segment's winning items with the node's pairs (its staged
// row) in its key range [keys[begin], keys[end]) (unbounded on a side where
// the segment ends), in key order: emit(key, from, item) for every resulting
// pair (see put_pair).
// Returns the pairs emitted; `added` / `removed` count keys new to the node
// and keys deleted from it.
template <class Word, class Emit>
__device__ __forceinline__ int merge_walk(const Items<Word>& it, const SubSeg& g, const Word* row, Emit&& emit,
                                          int& added, int& removed) {
  int a = 0, eb = static_cast<int>(meta_count(row[kMetaWord]));
  if (!g.first) {
    const Word lo = it.keys[g.begin];
    while (a < eb && row[2 * a] < lo) ++a;
  }
  if (!g.last) {
    const Word hi = it.keys[g.end];
    while (eb > a && row[2 * (eb - 1)] >= hi) --eb;
  }
  uint64_t u = g.begin;
  int out = 0;
  for (;;) {
    while (u < g.end && !it.winner(u)) ++u;
    const bool ha = a < eb, hu = u < g.end;
    if (!ha && !hu) break;
    const Word ke = ha ? row[2 * a] : Word{0}, ku = hu ? it.keys[u] : Word{0};
    if (ha && (!hu || ke < ku)) {
      emit(ke, static_cast<uint64_t>(row[2 * a + 1]), false);
      ++a;
      ++out;
    } else {
      const bool del = it.deletes(u);
      const bool present = ha && ke == ku;
      if (!del) {
        emit(ku, u, true);  // the value is fetched only by the caller that writes
        ++out;
        if (!present) ++added;
      } else if (present) {
        ++removed;
      }
      if (present) ++a;
      ++u;
    }
  }
  return out;
}

// route: each item's node at `level` (levels above it are unchanged, so the
// child for a key is exact; a link is followed where a key is at or past a
// node's high key, as in any B-link descent). Read-only loads: nothing
// writes the upper levels during this kernel.
template <class Word>
__global__ void route_kernel(TreeRef<Word> tree, const Word* __restrict__ keys, uint64_t n, int root_level, int level,
                             uint32_t* __restrict__ target) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Word k = keys[i];
  uint32_t node = kRoot;
  int l = root_level;
  while (l > level) {
    uint32_t child = kNil;  // pivot 0 is the node's low key <= k: the loop always sets it
    if constexpr (sizeof(Word) == 4) {
      const uint4* p = reinterpret_cast<const uint4*>(tree.nodes[node].w);
      const uint4 tail = __ldg(p + 7);
      if (tail.y != kNil && k >= tail.x) {  // right of this node: its sibling
        node = tail.y;
        continue;
      }
      const int c = static_cast<int>(meta_count(tail.w));
      for (int q = 0; q < 7; ++q) {
        const uint4 v = __ldg(p + q);
        if (2 * q < c && v.x <= k) child = v.y;
        if (2 * q + 1 < c && v.z <= k) child = v.w;
      }
    } else {  // 16-byte loads of one (key, value) pair each; words 28..31 in the last two
      const ulonglong2* p = reinterpret_cast<const ulonglong2*>(tree.nodes[node].w);
      const ulonglong2 high_link = __ldg(p + kHighWord / 2), low_meta = __ldg(p + kLowWord / 2);
      if (high_link.y != kNil && k >= high_link.x) {  // right of this node: its sibling
        node = static_cast<uint32_t>(high_link.y);
        continue;
      }
      const int c = static_cast<int>(meta_count(low_meta.y));
      for (int q = 0; q < kCapacity; ++q) {
        const ulonglong2 v = __ldg(p + q);
        if (q < c && v.x <= k) child = static_cast<uint32_t>(v.y);
      }
    }
    node = child;
    --l;
  }
  target[i] = node;
}

// A merged pair into the node row being assembled: an existing pair's
// value (`from`), or (item) the value of the item at position `from`.
template <class Word>
__device__ __forceinline__ void put_pair(Word* orow, int slot, same_t<Word> key, uint64_t from, bool item,
                                         const Items<Word>& it) {
  orow[2 * slot] = key;
  orow[2 * slot + 1] = item ? it.vals[it.slot(from)] : static_cast<Word>(from);
}

// Completes a node row: unused pairs zero, the bounds and the meta word.
template <class Word>
__device__ __forceinline__ void seal_row(Word* orow, int count, same_t<Word> high, same_t<Word> link,
                                         same_t<Word> low, same_t<Word> meta) {
  for (int z = 2 * count; z < kPairWords; ++z) orow[z] = 0;
  orow[kHighWord] = high;
  orow[kLinkWord] = link;
  orow[kLowWord] = low;
  orow[kMetaWord] = meta;
}

// count: N and the number of new nodes of every sub-segment. The common
// case - a segment of one sub-segment whose merge fits its node - is written
// here at once, in place (settled); only splits and long segments are left
// to the write kernel, listed. kDry: nothing is written.
template <class Word, bool kDry>
__global__ void __launch_bounds__(kMergeBlock<Word>)
    count_kernel(TreeRef<Word> tree, Items<Word> it, LevelOut<Word> out, int fill, bool leaf_level,
                 bool virtual_root) {
  __shared__ Word in_rows[kMergeBlock<Word> * kRow];
  __shared__ Word out_rows[kDry ? 1 : kMergeBlock<Word> * kRow];
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == it.n) out.fresh[i] = 0;
  const bool head = i < it.n && is_head(out.target, it.keys, i);
  if (i < it.n && !head) out.fresh[i] = 0;
  SubSeg g;
  if (head) g = sub_segment(out.target, it, i);
  const bool virt = head && virtual_root && g.t == kRoot;
  warp_load_nodes(tree.nodes, g.t, head && !virt, in_rows);
  Word* row = in_rows + threadIdx.x * kRow;
  Word* orow = out_rows + (kDry ? 0 : threadIdx.x * kRow);
  bool pending = false;
  bool settled = false;  // merged and written back in place here
  long long delta = 0;
  unsigned long long new_nodes = 0;
  if (head) {
    if (virt) virtual_root_row(row);
    int added = 0, removed = 0, slot = 0;
    const int N = merge_walk(
        it, g, row,
        [&](Word key, uint64_t from, bool item) {
          if constexpr (!kDry) {
            if (slot < kCapacity) put_pair(orow, slot, key, from, item, it);
          }
          ++slot;
        },
        added, removed);
    const int k = nodes_for(N, g.first, fill);
    const int fresh = k - (g.first ? 1 : 0);
    out.fresh[i] = static_cast<unsigned long long>(fresh);
    new_nodes = static_cast<unsigned long long>(fresh);
    settled = g.first && g.last && k == 1;
    if (settled) {
      if constexpr (!kDry) {
        seal_row(orow, N, row[kHighWord], row[kLinkWord], row[kLowWord],
                 meta_release(row[kMetaWord], static_cast<uint32_t>(N), leaf_level));
        pending = true;
        delta = static_cast<long long>(added) - removed;
      }
    } else {
      out.merged[i] = static_cast<uint32_t>(N);
      if (g.t == kRoot && fresh > 0) atomicOr(out.flags, 1ull);
    }
  }
  // The sub-segments left to the write kernel, listed (one atomic per
  // warp), so that its threads are all busy: about one head in ten is left
  // when leaves fill up, and a pass over every item ran at that fraction of
  // its warps' lanes.
  const unsigned left = __ballot_sync(kFullMask, head && !settled);
  if (left != 0) {  // warp-uniform
    unsigned long long at = 0;
    if (lane_id() == 0) at = atomicAdd(out.flags + 2, static_cast<unsigned long long>(__popc(left)));
    at = __shfl_sync(kFullMask, at, 0);
    if (head && !settled) out.left[at + __popc(left & ((1u << lane_id()) - 1u))] = static_cast<uint32_t>(i);
  }
  // The level's new nodes in all, for the host (read with the flags; the
  // scan's total would be a second copy). Few warps have any.
  const unsigned long long warp_new = warp_sum(new_nodes);
  if (lane_id() == 0 && warp_new != 0) atomicAdd(out.flags + 3, warp_new);
  if constexpr (!kDry) {
    warp_store_nodes(tree.nodes, g.t, pending, out_rows);
    if (leaf_level) {
      const long long d = warp_sum(delta);
      if (lane_id() == 0 && d != 0) atomicAdd(out.flags + 1, static_cast<unsigned long long>(d));
    }
  }
}

// write: the nodes of every sub-segment the count kernel left (firsts ==
// false: the sub-segments after a segment's first; true: the first ones),
// and the next level's items. Each node is assembled in the thread's row of
// shared memory; a sub-segment's last node is stored by the warp,
// coalesced, the others (splits) by the thread. kDry: separators only (the
// fixed pool's counting run).
template <class Word, bool kDry>
__global__ void __launch_bounds__(kMergeBlock<Word>)
    write_kernel(TreeRef<Word> tree, Items<Word> it, LevelOut<Word> out, int fill, bool leaf_level, bool firsts,
                 uint32_t pool_base, uint32_t pushed_root, bool virtual_root) {
  __shared__ Word in_rows[kMergeBlock<Word> * kRow];
  __shared__ Word out_rows[kDry ? 1 : kMergeBlock<Word> * kRow];
  // One thread per listed sub-segment (the count kernel's list).
  const uint64_t k = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // The count kernel listed exactly the heads it did not settle.
  const bool head = k < out.left_n;
  const uint64_t i = head ? out.left[k] : it.n;
  SubSeg g;
  if (head) g = sub_segment(out.target, it, i);
  const bool mine = head && g.first == firsts;
  // The root's content was pushed down into `pushed_root`: merge into that.
  const uint32_t t = (g.t == kRoot && pushed_root != kNil) ? pushed_root : g.t;
  const bool virt = mine && virtual_root && g.t == kRoot;
  warp_load_nodes(tree.nodes, t, mine && !virt, in_rows);
  Word* row = in_rows + threadIdx.x * kRow;
  Word* orow = out_rows + (kDry ? 0 : threadIdx.x * kRow);
  long long delta = 0;
  bool pending = false;  // orow holds this thread's last node, for the warp to store
  uint32_t pending_id = 0;
  if (mine) {
    if (virt) virtual_root_row(row);
    const Word old_high = row[kHighWord], old_link = row[kLinkWord], old_low = row[kLowWord],
               old_meta = row[kMetaWord];
    const int N = static_cast<int>(out.merged[i]);
    const int k = nodes_for(N, g.first, fill);
    const uint64_t base = out.base[i];
    auto id_of = [&](int q) -> uint32_t {
      return (g.first && q == 0) ? t : pool_base + static_cast<uint32_t>(base + q - (g.first ? 1 : 0));
    };
    // Bounds of the last node: the next sub-segment of the segment that has
    // nodes, else the node's old ones.
    Word end_high = old_high, end_link = old_link;
    if (!g.last) {
      uint64_t h = g.end;
      while (h < it.n && out.target[h] == g.t && out.fresh[h] == 0) h = next_head(out.target, it.keys, h, it.n);
      if (h < it.n && out.target[h] == g.t) {
        end_high = it.keys[h];
        end_link = pool_base + static_cast<uint32_t>(out.base[h]);
      }
    }
    Word* sep_k = out.sep_keys + base;
    Word* sep_v = out.sep_vals + base;
    // Node q holds merged pairs [q N / k, (q + 1) N / k).
    int q = 0, o = 0, slot = 0;
    int next_bound = k > 0 ? N / k : 0;  // (q + 1) N / k for q = 0
    Word low = g.first ? old_low : it.keys[g.begin];
    auto finish = [&](Word high, Word link) {
      const uint32_t id = id_of(q);
      if (!(g.first && q == 0)) {
        sep_k[q - (g.first ? 1 : 0)] = low;
        sep_v[q - (g.first ? 1 : 0)] = id;
      }
      if constexpr (!kDry) {
        seal_row(orow, slot, high, link, low,
                 (g.first && q == 0) ? meta_release(old_meta, static_cast<uint32_t>(slot), leaf_level)
                                     : meta_new<Word>(static_cast<uint32_t>(slot), leaf_level));
        if (q + 1 < k) {  // a split's earlier node: stored now, the row is reused
          if constexpr (sizeof(Word) == 4) {
            uint4* dst = reinterpret_cast<uint4*>(tree.nodes[id].w);
            for (int z = 0; z < 8; ++z)
              dst[z] = make_uint4(orow[4 * z], orow[4 * z + 1], orow[4 * z + 2], orow[4 * z + 3]);
          } else {
            ulonglong2* dst = reinterpret_cast<ulonglong2*>(tree.nodes[id].w);
            for (int z = 0; z < kNodeWords / 2; ++z) dst[z] = make_ulonglong2(orow[2 * z], orow[2 * z + 1]);
          }
        } else {
          pending = true;
          pending_id = id;
        }
      }
    };
    int added = 0, removed = 0;
    merge_walk(
        it, g, row,
        [&](Word key, uint64_t from, bool item) {
          if (o == next_bound && o > 0) {  // node q is complete: this pair starts node q + 1
            finish(key, id_of(q + 1));
            ++q;
            slot = 0;
            low = key;
            next_bound = static_cast<int>((static_cast<int64_t>(q) + 1) * N / k);
          }
          if constexpr (!kDry) put_pair(orow, slot, key, from, item, it);
          ++slot;
          ++o;
        },
        added, removed);
    if (k > 0) finish(end_high, end_link);
    delta = static_cast<long long>(added) - removed;
  }
  if constexpr (!kDry) {
    warp_store_nodes(tree.nodes, pending_id, pending, out_rows);
    if (leaf_level) {
      const long long d = warp_sum(delta);
      if (lane_id() == 0 && d != 0) atomicAdd(out.flags + 1, static_cast<unsigned long long>(d));
    }
  }
}

// The root splits: its content moves to node `to`, the root becomes an
// inner node with that single child (pivot 0 = low key 0, no bounds).
template <class Word>
__global__ void push_down_kernel(TreeRef<Word> tree, uint32_t to) {
  const unsigned l = threadIdx.x;
  Word* root = tree.nodes[kRoot].w;
  const Word w = root[l];
  const Word meta = root[kMetaWord];
  __syncwarp();
  tree.nodes[to].w[l] = l == kMetaWord ? meta_new<Word>(meta_count(meta), meta_leaf(meta)) : w;
  Word nw = 0;
  if (l == 1) nw = to;
  if (l == kLinkWord) nw = kNil;
  if (l == kMetaWord) nw = meta_release(meta, 1, false);
  root[l] = nw;
}

// The level's counters into the header, then the flags cleared for the
// next level (one launch instead of a kernel and a memset).
__global__ void header_kernel(TreeHeader* h, unsigned long long next_free, unsigned long long height,
                              unsigned long long leaves_added, unsigned long long* flags, int nflags) {
  const unsigned long long size_delta = flags[1];
  h->next_free = next_free;
  h->height = height;
  h->leaves += leaves_added;
  h->size += size_delta;
  for (int f = 0; f < nflags; ++f) flags[f] = 0;
}

constexpr const char* kFreshScanName = "cub::DeviceScan::ExclusiveSum (btree merged updates)";

}  // namespace

template <class Word>
void BTree<Word>::reserve_merge(uint64_t items) {
  const uint64_t m = std::max<uint64_t>(items, 1) + 1;
  d_mtarget_.reserve_discard(m, "btree merged updates");
  d_mfresh_.reserve_discard(m, "btree merged updates");
  d_mbase_.reserve_discard(m, "btree merged updates");
  d_mmerged_.reserve_discard(m, "btree merged updates");
  d_mleft_.reserve_discard(m, "btree merged updates");
}

template <class Word>
uint64_t BTree<Word>::merge_levels(const Word* keys, const uint32_t* perm, uint64_t n, bool dry, double& ms,
                             bool timing) {
  // Level 0's items: the sorted list (keys, slots) with the staged values and types.
  Items<Word> it;
  it.keys = keys;
  it.perm = perm;
  it.vals = d_args_.data();
  it.tagged = perm != nullptr && n < kTaggedLists;
  it.types = it.tagged ? nullptr : d_types_.data();
  it.n = n;
  const int leaf_keys = leaf_fill(opt_.fill), inner_children = inner_fill(opt_.fill);
  TreeHeader& h = h_hdr_[0];
  const uint64_t real_height = h.height;
  uint64_t next_free = h.next_free, height = h.height, total = 0;
  unsigned long long* flags = d_scalars_.data();
  GPUDICT_CUDA(cudaMemsetAsync(flags, 0, kMergeFlags * sizeof(unsigned long long), stream_));
  // One host wait per level (the node count); the timer runs from one
  // level's writes on into the next level's routing and counting (and,
  // when `timing` says it is running, from the caller's sort into level 0).
  for (int level = 0; it.n > 0; ++level) {
    const bool leaf_level = level == 0;
    const int fill = leaf_level ? leaf_keys : inner_children;
    // The dry run's root after a split: a virtual node with one child.
    const bool virtual_root = dry && static_cast<uint64_t>(level) + 1 == height && height > real_height;
    if (!leaf_level) {  // level 0's are the caller's, before its timed segment began
      reserve_merge(it.n);
      temp_.prepare(kFreshScanName, exclusive_sum_u64(d_mfresh_.data(), d_mbase_.data(), it.n + 1, stream_));
    }
    LevelOut<Word> out;
    out.target = d_mtarget_.data();
    out.fresh = d_mfresh_.data();
    out.base = d_mbase_.data();
    out.merged = d_mmerged_.data();
    out.flags = flags;
    out.left = d_mleft_.data();
    if (!timing) timer_.start(stream_);
    trace_.mark(stream_, "L-start");
    route_kernel<<<blocks_for(it.n, 256), 256, 0, stream_>>>(ref(), it.keys, it.n, static_cast<int>(height) - 1, level,
                                                             out.target);
    GPUDICT_CHECK_LAUNCH("btree route_kernel");
    trace_.mark(stream_, "route");
    if (leaf_level && !dry && leaf_hook) {
      leaf_hook(out.target, it.n);
      trace_.mark(stream_, "hook");
    }
    if (dry)
      count_kernel<Word, true><<<blocks_for(it.n + 1, kMergeBlock<Word>), kMergeBlock<Word>, 0, stream_>>>(ref(), it, out, fill,
                                                                                          leaf_level, virtual_root);
    else
      count_kernel<Word, false><<<blocks_for(it.n + 1, kMergeBlock<Word>), kMergeBlock<Word>, 0, stream_>>>(ref(), it, out, fill,
                                                                                           leaf_level, false);
    GPUDICT_CHECK_LAUNCH("btree count_kernel");
    trace_.mark(stream_, "count");
    // The new nodes' numbers: at the leaves here (they nearly always split
    // some), above them only after the host read (a level that ends the
    // batch needs none).
    if (leaf_level) {
      temp_.run(kFreshScanName, exclusive_sum_u64(d_mfresh_.data(), d_mbase_.data(), it.n + 1, stream_));
      trace_.mark(stream_, "scan");
    }
    GPUDICT_CUDA(cudaMemcpyAsync(h_u64_.data(), flags, kMergeFlags * sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, stream_));
    trace_.mark(stream_, "copy");
    ms += timer_.stop(stream_);  // waits: the host needs the node count
    timing = false;
    const uint64_t fresh = h_u64_[3];
    const bool root_splits = h_u64_[0] != 0 && static_cast<uint64_t>(level) + 1 == height;
    out.left_n = h_u64_[2];  // sub-segments the count kernel left (splits, long segments)
    // Above the leaves, a level whose nodes all took their items in place
    // is done: nothing to write, and its header update would change nothing
    // (sizes change at the leaves only). Its flags are all zero already:
    // the root flag and the two totals are set only with new nodes or left
    // sub-segments, the size delta only at the leaves.
    if (!leaf_level && fresh == 0 && out.left_n == 0 && !root_splits) break;
    const uint64_t need = fresh + (root_splits ? 1 : 0);
    total += need;
    if (!dry && next_free + need > capacity_) {
      if (opt_.node_pool != 0)  // the dry run said it fits: never expected
        throw RuntimeFailure("btree: internal error: merged updates outgrew the node pool the dry run sized");
      ms += grow_pool(std::max<uint64_t>(next_free + need + 1024, capacity_ + capacity_ / 2));
    }
    if (need > 0xFFFFFFF0ull - next_free) throw RuntimeFailure("btree: more than 2^32 - 16 nodes");
    const int nxt = (level + 1) & 1;  // this level's separators; the items came from the other buffer
    d_sep_keys_[nxt].reserve_discard(std::max<uint64_t>(fresh, 1), "btree merged updates");
    d_sep_vals_[nxt].reserve_discard(std::max<uint64_t>(fresh, 1), "btree merged updates");
    out.sep_keys = d_sep_keys_[nxt].data();
    out.sep_vals = d_sep_vals_[nxt].data();
    timer_.start(stream_);
    trace_.mark(stream_, "(host)");
    timing = true;
    if (!leaf_level) {
      temp_.run(kFreshScanName, exclusive_sum_u64(d_mfresh_.data(), d_mbase_.data(), it.n + 1, stream_));
      trace_.mark(stream_, "scan");
    }
    uint32_t pushed = kNil;
    if (root_splits) {
      pushed = static_cast<uint32_t>(next_free++);
      if (!dry) {
        push_down_kernel<<<1, 32, 0, stream_>>>(ref(), pushed);
        GPUDICT_CHECK_LAUNCH("btree push_down_kernel");
      }
      ++height;
    }
    const uint32_t pool_base = static_cast<uint32_t>(next_free);
    for (bool firsts : {false, true}) {
      if (out.left_n == 0) break;  // the count kernel wrote every node
      if (dry)
        write_kernel<Word, true><<<blocks_for(out.left_n, kMergeBlock<Word>), kMergeBlock<Word>, 0, stream_>>>(
            ref(), it, out, fill, leaf_level, firsts, pool_base, kNil, virtual_root);
      else
        write_kernel<Word, false><<<blocks_for(out.left_n, kMergeBlock<Word>), kMergeBlock<Word>, 0, stream_>>>(
            ref(), it, out, fill, leaf_level, firsts, pool_base, pushed, false);
      GPUDICT_CHECK_LAUNCH("btree write_kernel");
      trace_.mark(stream_, "write");
    }
    next_free += fresh;
    if (!dry) {
      h.next_free = next_free;  // the host's view (a pool growth copies the used nodes)
      h.height = height;
      header_kernel<<<1, 1, 0, stream_>>>(hdr_.data(), next_free, height, leaf_level ? fresh : 0, flags, kMergeFlags);
      GPUDICT_CHECK_LAUNCH("btree header_kernel");
    } else {
      GPUDICT_CUDA(cudaMemsetAsync(flags, 0, kMergeFlags * sizeof(unsigned long long), stream_));
    }
    trace_.mark(stream_, "header");
    // The timer stops here only if the next level allocates larger arrays
    // (host work that is not device time) or there is none.
    if (fresh == 0 || fresh + 1 > d_mtarget_.capacity()) {
      ms += timer_.stop(stream_);
      timing = false;
    }
    // The next level: the new nodes, sorted by low key.
    it = Items<Word>{};
    it.keys = d_sep_keys_[nxt].data();
    it.vals = d_sep_vals_[nxt].data();
    it.n = fresh;
  }
  return total;
}

template <class Word>
void BTree<Word>::merge_staged(uint64_t n, double& total_ms) {
  sync_header();
  // Level 0's arrays and scan storage first (the sort's graph keys on the
  // CUB buffer): the timed segment can run on from the sort into level 0.
  reserve_merge(n);
  temp_.prepare(kFreshScanName, exclusive_sum_u64(d_mfresh_.data(), d_mbase_.data(), n + 1, stream_));
  prepare_update_sort(n);
  double ms = 0.0;
  timer_.start(stream_);
  trace_.mark(stream_, "start");
  const Word* keys = nullptr;
  const uint32_t* perm = nullptr;
  sort_update_list(n, keys, perm);
  trace_.mark(stream_, "sort");
  const bool fixed_pool = opt_.node_pool != 0;
  if (fixed_pool) {
    ms += timer_.stop(stream_);
    // Count first, refuse before changing anything.
    const uint64_t need = merge_levels(keys, perm, n, true, ms);
    const uint64_t used = used_nodes();
    if (used + need > capacity_)
      throw_pool_full("an update batch of " + std::to_string(n) + " operations (" + std::to_string(need) +
                      " new nodes, " + std::to_string(capacity_ - used) + " free)");
  }
  merge_levels(keys, perm, n, false, ms, !fixed_pool);  // an automatic pool: the sort's segment goes on
  total_ms += ms;
  trace_.flush("btree merged updates");
  sync_header();
}

template class BTree<uint32_t>;
template class BTree<uint64_t>;

}  // namespace gpudict::btree
