// Phased lookups and successors in lock-step: the kernel
// that runs a query list while no writer runs (after the update kernel of a
// phased batch, before a concurrent batch's kernel, or on the final tree).
//
// Why a kernel of its own: in ops_kernel every tile serves one operation at
// a time, and the tiles of a warp diverge (each follows its own path), so
// the warp runs them one after another and has one node read in flight. Here
// a warp holds 32 / G tiles (G = 4 or 8 lanes), each with its own operation,
// and the loop is warp-uniform: every iteration, every tile that needs a node
// issues its 128-byte read in the same instruction (one coalesced line per
// tile), then works on it in registers. A warp so keeps 8 (G = 4) or 4
// (G = 8) dependent chains in flight instead of one, which is what a query
// pass was thought to be bound by (latency, not bandwidth; measured, it wins
// only at 2^26 keys and for small lists: docs/btree.md). Counts and ranges
// stay in the operations kernel, where they measured faster.
//
// Each tile serves a contiguous run of the (sorted) list with the same
// finger as ops_kernel (the last leaf and the last inner node as register
// snapshots): a key inside the cached leaf is answered without a read, one
// under the cached inner node costs one read, one just right of it starts at
// that node's right sibling.
//
// Nothing writes the tree during this kernel, so nodes are read through the
// read-only cache with no fence and no validation (TreeRef::read_plain).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/ops_kernel.cuh"

namespace gpudict::btree {

template <unsigned G>
struct QueryState {
  // The operation in progress (tile-uniform).
  uint32_t k = 0, j = 0;
  uint32_t node = kNil;    // the next node to read
  bool busy = false;       // an operation waits for the read of `node`
  bool down = true;        // descending to k's leaf (else walking right: successor)
  bool from_cache = false; // `node` is the cached inner node's right sibling: one hop, then the root
  uint32_t steps = 0;      // reads of this operation (bounded: a loop would be a bug)
  // The finger (tile-uniform snapshots).
  uint32_t leaf = kNil, leaf_meta = 0;
  uint32_t inner = kNil, inner_meta = 0;
  Frag<G> leaf_f, inner_f;
};

// The operation is at a leaf snapshot f (k's leaf when descending, else the
// next leaf to the right: successor). Answers what it can; true: it needs
// the leaf at s.node next (walking right).
template <unsigned G>
__device__ __forceinline__ bool query_at_leaf(const Tile<G>& t, const OpsRef& ops, uint8_t type,
                                              QueryState<G>& s, const Frag<G>& f, uint32_t meta) {
  const int cnt = static_cast<int>(meta_count(meta));
  const uint32_t link = word_at(t, f, kLinkWord);
  const bool lane0 = t.thread_rank() == 0;
  if (type == kLookup) {
    const int p = count_keys(t, f, cnt, s.k, false);
    const bool hit = p > 0 && key_at(t, f, p - 1) == s.k;
    const uint32_t v = hit ? value_at(t, f, p - 1) : 0u;
    if (lane0) {
      ops.found[s.j] = hit ? 1 : 0;
      ops.value[s.j] = v;
    }
    return false;
  }
  if (type == kSuccessor) {
    // Every key of a right sibling is >= this snapshot's high key > k.
    const int p = count_keys(t, f, cnt, s.k, false);
    if (p < cnt || link == kNil) {
      const bool found = p < cnt;
      const uint32_t rk = found ? key_at(t, f, p) : 0u, rv = found ? value_at(t, f, p) : 0u;
      if (lane0) {
        ops.found[s.j] = found ? 1 : 0;
        ops.key_out[s.j] = rk;
        ops.value[s.j] = rv;
      }
      return false;
    }
    s.node = link;
    s.down = false;
    return true;
  }
  // Count / range lists run in the operations kernel (launch_phased_queries).
  return false;
}

// Starts an operation on key s.k: answered from the cached leaf (false), or
// the first node to read is set in s.node (true).
template <unsigned G>
__device__ __forceinline__ bool query_start(const Tile<G>& t, const OpsRef& ops, uint8_t type, QueryState<G>& s) {
  s.steps = 0;
  s.down = true;
  s.from_cache = false;
  if (!ops.use_finger) {  // unsorted: neighbours are unrelated, every operation from the root
    s.leaf = kNil;
    s.inner = kNil;
  }
  if (s.leaf != kNil && covers(t, s.leaf_f, s.k)) return query_at_leaf(t, ops, type, s, s.leaf_f, s.leaf_meta);
  s.node = kRoot;
  if (s.inner != kNil) {
    if (covers(t, s.inner_f, s.k)) {
      s.node = child_for(t, s.inner_f, s.inner_meta, s.k);
    } else {
      const uint32_t link = word_at(t, s.inner_f, kLinkWord);
      if (link != kNil && s.k >= word_at(t, s.inner_f, kHighWord)) {  // sorted: usually the next inner node
        s.node = link;
        s.from_cache = true;
      }
    }
  }
  return true;
}

// The tile has read s.node into f; moves the operation on. True: it needs
// another read (s.node).
template <unsigned G>
__device__ __forceinline__ bool query_step(const Tile<G>& t, const TreeRef& tree, const OpsRef& ops, uint8_t type,
                                           QueryState<G>& s, const Frag<G>& f, uint32_t meta) {
  if (++s.steps > kSpinLimit) {  // never expected: a cycle would be a corrupt tree
    tree.report_error(t);
    return false;
  }
  const bool leaf = meta_leaf(meta);
  if (!s.down) {
    s.leaf = s.node;  // the finger follows the walk (any leaf snapshot is a valid finger)
    s.leaf_f = f;
    s.leaf_meta = meta;
    return query_at_leaf(t, ops, type, s, f, meta);
  }
  if (s.k < word_at(t, f, kLowWord)) {  // only a start right of k can get here
    s.node = kRoot;
    s.from_cache = false;
    return true;
  }
  const uint32_t link = word_at(t, f, kLinkWord);
  if (link != kNil && s.k >= word_at(t, f, kHighWord)) {
    // Past the cached node's sibling: the root is closer. Else a B-link move
    // right (no writer runs here, so only a finger start can need it).
    s.node = s.from_cache ? kRoot : link;
    s.from_cache = false;
    return true;
  }
  s.from_cache = false;
  if (leaf) {
    s.leaf = s.node;
    s.leaf_f = f;
    s.leaf_meta = meta;
    return query_at_leaf(t, ops, type, s, f, meta);
  }
  s.inner = s.node;  // the last inner node on the way down: the leaf's parent
  s.inner_f = f;
  s.inner_meta = meta;
  s.node = child_for(t, f, meta, s.k);
  return true;
}

// One list of lookups or successors (ops.type; no writer runs). Tile i serves list
// positions [i per_tile, (i + 1) per_tile); lane r of a tile holds the
// (key, slot) of the window's r-th operation, loaded together.
template <unsigned G>
__global__ void __launch_bounds__(kBlock) query_kernel(TreeRef tree, OpsRef ops) {
  const Tile<G> t = cg::tiled_partition<G>(cg::this_thread_block());
  const int r = static_cast<int>(t.thread_rank());
  const uint64_t tile_id = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  uint64_t next = tile_id * ops.per_tile;
  const uint64_t end = min(next + static_cast<uint64_t>(ops.per_tile), ops.n);
  const uint8_t type = ops.type;
  QueryState<G> s;
  uint32_t w_key = 0, w_j = 0;
  int w_size = 0, w_at = 0;
  Frag<G> f;
  uint32_t meta = 0;
  // No lane returns early: the loop's exit test is a warp vote, so every
  // lane of the warp must reach it (idle tiles just skip the work). Each
  // iteration, every free tile picks up one operation (answered at once when
  // the finger holds its leaf), then every tile that needs a node reads it:
  // both steps run converged across the warp's tiles instead of one tile
  // after another.
  while (__any_sync(0xFFFFFFFFu, s.busy || next < end)) {
    if (!s.busy && next < end) {
      if (w_at == w_size) {
        const uint64_t p = next + static_cast<uint64_t>(r);
        if (p < end) {
          const uint64_t pos = ops.start + p * ops.stride;
          w_key = ops.keys[pos];
          w_j = ops.perm ? ops.perm[pos] : static_cast<uint32_t>(pos);
        }
        w_size = static_cast<int>(min(static_cast<uint64_t>(G), end - next));
        w_at = 0;
      }
      s.k = t.shfl(w_key, w_at);
      s.j = t.shfl(w_j, w_at);
      ++w_at;
      ++next;
      s.busy = query_start(t, ops, type, s);
    }
    if (s.busy) {
      tree.read_plain(t, s.node, f, meta);
      s.busy = query_step(t, tree, ops, type, s, f, meta);
    }
  }
}

}  // namespace gpudict::btree
