// Phased point queries (lookup, successor, count) with one thread per
// query, each searched from the root: `--query-tile 1`, the default. (Ranges
// one thread each, point_range_kernel in kernels_query.cu, are built from
// the same pieces: descend_to_leaf and walk_range.)
//
// Why not the lock-step kernel (query_kernel.cuh): its tiles of 4 lanes
// start each query from a finger (the previous query's leaf or parent),
// which saves reads but costs instructions: the finger's state, selects
// between three start nodes, ballots and shuffles per node (56 warp
// instructions per lookup). Here one thread holds the whole node in 32
// registers (64 at u64) and searches it with compares and selects, so a warp
// instruction serves 32 queries instead of 8. Walking down from the root
// costs little: the upper levels are read by every query and stay in L1 /
// L2, and the list is sorted, so neighbouring threads read the same inner
// nodes (one transaction for the warp) and neighbouring leaves. Tiles of 2
// and 4 lanes per query in this kernel, and coarser sorts, were measured
// and were slower (docs/btree.md, "Point queries from the root").
//
// No writer runs during this kernel (phased queries), so nodes are read
// through the read-only cache with no fence and no validation (as
// TreeRef::read_plain).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/ops_kernel.cuh"
#include "core/btree/detail/thread_node.cuh"
#include "core/btree/detail/word_access.cuh"

namespace gpudict::btree {

// The keys in [k, hi] from leaf snapshot w (meta) rightwards, leaf by leaf,
// each next leaf read by `read(node, w, meta)` (false: give up): counted in
// `total`, and with `copy` stored at keys_out / values_out [0, cap) in key
// order. Each next leaf starts at the previous snapshot's high key (its low
// key, which never changes), so every key is seen in exactly one snapshot,
// even while leaves split. False: a read gave up, or more steps than the
// pool has nodes (a corrupt tree).
template <class Word, class Read>
__device__ __forceinline__ bool walk_range(const TreeRef<Word>& tree, same_t<Word> k, same_t<Word> hi,
                                           Word (&w)[kNodeWords], same_t<Word> meta, Read read, bool copy,
                                           same_t<Word>* keys_out, same_t<Word>* values_out, uint64_t cap,
                                           uint64_t& total) {
  total = 0;
  for (uint64_t steps = 0; steps <= tree.capacity; ++steps) {
    const int cnt = static_cast<int>(meta_count(meta));
    const Word link = w[kLinkWord];
    const int a = keys_below(w, cnt, k, true), b = keys_below(w, cnt, hi, false);  // keys [a, b) are in [k, hi]
    if (copy) {
#pragma unroll
      for (int i = 0; i < kCapacity; ++i) {
        const uint64_t pos = total + static_cast<uint64_t>(i - a);
        if (i >= a && i < b && pos < cap) {
          keys_out[pos] = w[2 * i];
          values_out[pos] = w[2 * i + 1];
        }
      }
    }
    total += static_cast<uint64_t>(b - a);
    if (link == kNil || hi < w[kHighWord]) return true;
    if (!read(static_cast<uint32_t>(link), w, meta)) return false;
  }
  return false;
}

// A query's answer from its leaf (snapshot w / meta), by one thread, written
// by slot j: a lookup from this leaf; a successor, count or range (kRange:
// pairs into its slot, at most range_cap[j] of them) walking right leaf by
// leaf, each read by `read(node, w, meta)` (false: give up). Each next leaf
// starts at the previous snapshot's high key (its low key, which never
// changes), so every key is seen in exactly one snapshot, even while
// leaves split. Shared by the point kernel (read-only reads) and the
// thread ops kernel (validated reads). False: a read gave up, or more steps
// than the pool has nodes (a corrupt tree); nothing is answered. (Its count
// and range loop is walk_range's, written out with the successor's: sharing
// walk_range cost the thread ops kernel two registers and measurably slowed
// its update-only batches.)
template <class Word, class Read>
__device__ __forceinline__ bool answer_from_leaf(const TreeRef<Word>& tree, const OpsRef<Word>& ops, uint32_t type, uint32_t j,
                                                 same_t<Word> k, same_t<Word> hi, Word (&w)[kNodeWords],
                                                 Word meta, Read read) {
  Word key, value;
  if (type == kLookup) {
    int p;
    const bool hit = leaf_find(w, static_cast<int>(meta_count(meta)), k, p, value);
    ops.found[j] = hit ? 1 : 0;
    ops.value[j] = hit ? value : Word{0};
    return true;
  }
  const uint64_t base = type == kRange ? ops.range_offset[j] : 0ull;
  const uint64_t cap = (type == kRange && ops.range_cap) ? ops.range_cap[j] : ~0ull;
  uint64_t total = 0;
  for (uint64_t steps = 0; steps <= tree.capacity; ++steps) {
    const int cnt = static_cast<int>(meta_count(meta));
    const Word link = w[kLinkWord];
    if (type == kSuccessor) {
      const int p = keys_below(w, cnt, k, false);
      if (p < cnt || link == kNil) {  // else every key of the next leaf is >= this one's high key > k
        pair_of(w, p, key, value);
        const bool found = p < cnt;
        ops.found[j] = found ? 1 : 0;
        ops.key_out[j] = found ? key : Word{0};
        ops.value[j] = found ? value : Word{0};
        return true;
      }
    } else {  // count, range: keys [a, b) of this leaf are in [k, hi]
      const int a = keys_below(w, cnt, k, true), b = keys_below(w, cnt, hi, false);
      if (type == kRange) {
#pragma unroll
        for (int i = 0; i < kCapacity; ++i) {
          const uint64_t pos = total + static_cast<uint64_t>(i - a);
          if (i >= a && i < b && pos < cap) {
            ops.range_keys[base + pos] = w[2 * i];
            ops.range_values[base + pos] = w[2 * i + 1];
          }
        }
      }
      total += static_cast<uint64_t>(b - a);
      if (link == kNil || hi < w[kHighWord]) {
        ops.value[j] = total > cap ? Word{kRangeOverflow} : static_cast<Word>(total);
        return true;
      }
    }
    if (!read(static_cast<uint32_t>(link), w, meta)) return false;
  }
  return false;
}

// The `read` of the functions here for kernels in which no writer runs
// (phased queries): node `node` whole through the read-only cache, no
// fence, no validation (as TreeRef::read_plain); never gives up.
template <class Word>
__device__ __forceinline__ auto readonly_reader(const TreeRef<Word>& tree) {
  return [&tree](uint32_t node, Word(&w)[kNodeWords], Word& meta) {
    ld_readonly_node(tree.words(node), w);
    meta = w[kMetaWord];
    return true;
  };
}

// Walks from the root down to the leaf whose range holds k (B-link moves
// right where a node's high key is <= k), reading each node whole with
// `read`; `node` ends as the leaf's id, w / meta as its snapshot. False: more
// steps than the pool has nodes (a corrupt tree; a path visits each node at
// most once), reported by the caller, not spun on.
template <class Word, class Read>
__device__ __forceinline__ bool descend_to_leaf(const TreeRef<Word>& tree, same_t<Word> k, Word (&w)[kNodeWords],
                                                Word& meta, uint32_t& node, Read read) {
  node = kRoot;
  for (uint64_t steps = 0; steps <= tree.capacity; ++steps) {
    read(node, w, meta);
    // Right of this node: a B-link move. (Not expected from the root of a
    // tree no writer is changing, but cheap, and correct for every query
    // type: the node holds no key >= its high key.)
    if (w[kLinkWord] != kNil && k >= w[kHighWord]) {
      node = static_cast<uint32_t>(w[kLinkWord]);
      continue;
    }
    if (meta_leaf(meta)) return true;
    node = child_of(w, meta, k);
  }
  return false;
}

// A query answered from the root (descend_to_leaf, answer_from_leaf),
// results by slot j; a corrupt tree raises the internal error flag.
template <class Word, class Read>
__device__ __forceinline__ void answer_from_root(const TreeRef<Word>& tree, const OpsRef<Word>& ops, uint32_t type, uint32_t j,
                                                 same_t<Word> k, same_t<Word> hi, Read read) {
  Word w[kNodeWords], meta;
  uint32_t leaf;
  if (descend_to_leaf(tree, k, w, meta, leaf, read) && answer_from_leaf(tree, ops, type, j, k, hi, w, meta, read))
    return;
  atomicExch(&tree.hdr->error, 1ull);
}

// One list of kType queries: thread i serves list position start + i stride
// and writes its results by slot.
template <class Word, uint8_t kType>
__global__ void __launch_bounds__(kBlock) point_query_kernel(TreeRef<Word> tree, OpsRef<Word> ops) {
  static_assert(kType == kLookup || kType == kSuccessor || kType == kCount, "point queries only");
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= ops.n) return;
  const uint64_t pos = ops.start + i * ops.stride;
  const Word k = ops.keys[pos];  // count: the lower bound
  const uint32_t j = ops.perm ? ops.perm[pos] : static_cast<uint32_t>(pos);
  Word hi = 0;
  if constexpr (kType == kCount) {
    hi = ops.args[j];
    if (k > hi) {  // an empty range
      ops.value[j] = 0;
      return;
    }
  }
  answer_from_root(tree, ops, kType, j, k, hi, readonly_reader(tree));
}

}  // namespace gpudict::btree
