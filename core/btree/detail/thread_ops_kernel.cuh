// The operations kernel with one thread per operation (`--ops-kernel
// thread`, the default): concurrent batches and `--phased-updates ops`.
//
// Why: in the paper's kernel (ops_kernel.cuh) a warp serves its 32
// operations one after another, and each is a chain of dependent memory
// round trips, so a GPU keeps only one chain per warp in flight. Here every
// thread walks its own operation as the point-query
// kernel does (point_kernel.cuh: the whole node in 32 registers), with the
// same seqlock reads and the same leaf latch as the tiles (tree_ref.cuh), so
// a warp keeps 32 chains in flight. The walk starts below a read-only copy
// of the upper levels taken at the launch (top_copy.cuh): a validated read
// is a round trip to the L2, the copy's levels are L1 hits.
//
// First, the updates of a warp that fall into one leaf are applied together
// by one of their lanes under one latch (group_update, below): a sorted
// list brings neighbouring keys to the same leaf. Then a thread does what
// needs no waiting:
//   - lookups, successors, counts and ranges (ranges into their bounded slot,
//     as in the operations kernel);
//   - deletes, upserts of a present key, and inserts into a leaf with room:
//     CAS the leaf's meta word from the snapshot's version (the latch; it
//     succeeds only if nobody changed the leaf since the snapshot), change
//     the pairs in registers, store them, release;
//   - the split of a full leaf whose parent (read on the way down) has room:
//     the leaf's latch, then the parent's, each by a CAS (thread_split).
// What is left goes to the warp, in the same kernel, after every lane's
// own attempt: root splits, leaves under a full parent (the paper's
// proactive splits on the way down), a latch lost to other writers or a
// node read too often while a writer held it (kThreadTries). The warp
// serves those with the tile code of ops_kernel.cuh (a tile of 32 lanes),
// one at a time. A thread never waits for a latch and holds latches only
// across straight-line code (fence, stores, releases), so the tiles' waits
// for a parent and their readers' retries always end.
//
// Why each fence and coherent access (the protocol of tree_ref.cuh, for one
// thread instead of a tile):
//   - a read: ld.acquire of the meta word (V1), ld.relaxed of the whole node,
//     fence.acq_rel, ld.relaxed of the meta word (V2); accepted when V1 ==
//     V2 and unlatched: exactly the node at version V1 (see tree_ref.cuh);
//   - a write: the CAS latch, then fence.acq_rel before the stores (a reader
//     whose load sees one of them also sees the latch in its V2 and
//     retries), the relaxed stores, then st.release of the next version (one
//     thread wrote everything, so the release alone orders its stores before
//     the new version: no fence needed there, unlike a tile's lanes).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/ops_kernel.cuh"
#include "core/btree/detail/point_kernel.cuh"
#include "core/btree/detail/thread_node.cuh"
#include "core/btree/detail/top_copy.cuh"
#include "core/btree/detail/word_access.cuh"
#include "core/common/warp.cuh"

namespace gpudict::btree {

// Reads of a node a writer holds, and latch attempts on a leaf, before the
// thread leaves its operation to the warp.
inline constexpr uint32_t kThreadTries = 16;

// One thread's seqlock read of `node` (see above); false after kThreadTries
// attempts that each found the node latched or changing.
template <class Word>
__device__ __forceinline__ bool thread_read(const TreeRef<Word>& tree, uint32_t node, Word (&w)[kNodeWords],
                                            Word& meta) {
  Word* p = tree.words(node);
  for (uint32_t r = 0; r < kThreadTries; ++r) {
    const Word v1 = ld_acquire_w(p + kMetaWord);
    ld_relaxed_vec_w<kNodeWords>(p, w);
    fence_acq_rel_gpu();  // the node's loads before the second meta load
    const Word v2 = ld_relaxed_w(p + kMetaWord);
    if (v1 == v2 && !meta_latched(v1)) {
      meta = v1;
      return true;
    }
    __nanosleep(32u << min(r, 6u));
  }
  return false;
}

// From `node` (any node with low <= k: where top_start sent the thread, or
// a leaf this thread found for k before), the leaf that holds k's place:
// move right while k is at or past a node's high key (it split), descend
// through the child of the last pivot <= k. `parent` / `pmeta`: the last
// inner node read on the way down and its version (left as they were when
// the search starts at the leaf level; kNil: none known). False: a read
// gave up, or more steps than the pool has nodes (a cycle: the warp's code
// reports that as an internal error).
template <class Word>
__device__ __forceinline__ bool thread_find(const TreeRef<Word>& tree, same_t<Word> k, uint32_t& node,
                                            Word (&w)[kNodeWords], Word& meta, uint32_t& parent,
                                            Word& pmeta) {
  for (uint64_t steps = 0; steps <= tree.capacity; ++steps) {
    if (!thread_read(tree, node, w, meta)) return false;
    if (k < w[kLowWord]) {  // never expected (every start has low <= k); the root is always safe
      node = kRoot;
      parent = kNil;
      continue;
    }
    const Word link = w[kLinkWord];
    if (link != kNil && k >= w[kHighWord]) {
      node = static_cast<uint32_t>(link);
      continue;
    }
    if (meta_leaf(meta)) return true;
    // The child's low key is its pivot <= k.
    parent = node;
    pmeta = meta;
    node = child_of(w, meta, k);
  }
  return false;
}

// A query of slot j (lookup, successor, count, range) whose search starts
// at `start`; its answer from the leaf as the point kernel's, with
// validated reads. False: the thread gave up (or found a cycle, which the
// warp's walk reports); the warp answers it, overwriting any pairs of a
// range written so far.
template <class Word>
__device__ __forceinline__ bool thread_query(const TreeRef<Word>& tree, const OpsRef<Word>& ops, uint32_t start, uint32_t type,
                                             uint32_t j, same_t<Word> k, same_t<Word> hi) {
  if ((type == kCount || type == kRange) && k > hi) {  // an empty range
    ops.value[j] = 0;
    return true;
  }
  Word w[kNodeWords], meta, pmeta = 0;
  uint32_t node = start, parent = kNil;
  if (!thread_find(tree, k, node, w, meta, parent, pmeta)) return false;
  auto read = [&](uint32_t next, Word(&nw)[kNodeWords], Word& nmeta) {
    return thread_read(tree, next, nw, nmeta);
  };
  return answer_from_leaf(tree, ops, type, j, k, hi, w, meta, read);
}

enum ThreadSplit : int { kThreadSplitDone = 0, kThreadSplitRetry = 1, kThreadSplitWarp = 2 };

// Splits the full leaf L (validated snapshot w, version lmeta) under its
// parent P (version pmeta, from the same descent), as the tiles' split_child
// does but without waiting: the upper 7 pairs move to a new right sibling,
// (separator, sibling) goes into P. Both latches are taken by a CAS from
// the versions read (L first, then P, the tiles' order; a thread never
// waits, so it cannot be part of a cycle of waits). Returns kThreadSplitDone
// (the caller searches again from L), kThreadSplitRetry (a race was lost:
// nothing changed), or kThreadSplitWarp (P is full and needs the warp's
// proactive split, or the pool is full: the warp finds that out again and
// reports it).
template <class Word>
__device__ __forceinline__ int thread_split(const TreeRef<Word>& tree, uint32_t leaf, same_t<Word> lmeta,
                                            Word (&w)[kNodeWords], uint32_t parent, same_t<Word> pmeta,
                                            unsigned long long& leaves) {
  const int pcnt = static_cast<int>(meta_count(pmeta));
  if (pcnt == kCapacity) return kThreadSplitWarp;
  Word* const lw = tree.words(leaf);
  Word* const pw = tree.words(parent);
  const Word llatched = lmeta | kLatchBit, platched = pmeta | kLatchBit;
  if (cas_w(lw + kMetaWord, lmeta, llatched) != lmeta) return kThreadSplitRetry;
  if (cas_w(pw + kMetaWord, pmeta, platched) != pmeta) {
    st_release_w(lw + kMetaWord, meta_release(llatched, kCapacity, true));  // unchanged: next version
    return kThreadSplitRetry;
  }
  // Our stores after both latches (the readers' V2 sees them); P's words
  // below are the snapshot's (the CAS proves P unchanged since the version
  // this thread acquired).
  fence_acq_rel_gpu();
  int pos = -1;
#pragma unroll
  for (int c = 0; c < kCapacity; ++c)
    if (c < pcnt && ld_relaxed_w(pw + 2 * c + 1) == leaf) pos = c;
  unsigned long long fresh = ~0ull;
  if (pos >= 0) {
    fresh = atomicAdd(&tree.hdr->next_free, 1ull);
    if (fresh + 1 > tree.capacity) {
      atomicExch(&tree.hdr->overflow, 1ull);
      fresh = ~0ull;
    }
  }
  if (fresh == ~0ull) {
    // L hangs under P's right sibling (reached through a side link), or the
    // pool is full: undo the latches (next versions, nothing changed).
    st_release_w(pw + kMetaWord, meta_release(platched, static_cast<uint32_t>(pcnt), false));
    st_release_w(lw + kMetaWord, meta_release(llatched, kCapacity, true));
    return pos < 0 ? kThreadSplitRetry : kThreadSplitWarp;
  }
  const uint32_t nn = static_cast<uint32_t>(fresh);
  constexpr int h = kCapacity / 2;
  const Word sep = w[2 * h];
  // The sibling: L's pairs [h, 14), low key = separator, L's high key and
  // link. Unreachable until the releases below publish it.
  Word* const nw = tree.words(nn);
  Word right[kNodeWords];
#pragma unroll
  for (int q = 0; q < kNodeWords; ++q) right[q] = q < 2 * (kCapacity - h) ? w[2 * h + q] : Word{0};
  right[kHighWord] = w[kHighWord];
  right[kLinkWord] = w[kLinkWord];
  right[kLowWord] = sep;
  right[kMetaWord] = meta_new<Word>(kCapacity - h, true);
  st_relaxed_vec_w<kNodeWords>(nw, right);
  // L keeps pairs [0, h): its high key becomes the separator, its link the sibling.
  st_relaxed_w(lw + kHighWord, sep);
  st_relaxed_w(lw + kLinkWord, static_cast<Word>(nn));
  // P gets (separator, sibling) after L's entry.
  ld_relaxed_vec_w<kNodeWords>(pw, w);
  thread_insert_pair(w, pos + 1, sep, nn);
  st_relaxed_vec_w<kNodeWords, 2 * kCapacity>(pw, w);
  // Publish: each release orders all of this thread's stores before it.
  st_release_w(lw + kMetaWord, meta_release(llatched, h, true));
  st_release_w(pw + kMetaWord, meta_release(platched, static_cast<uint32_t>(pcnt + 1), false));
  ++leaves;
  return kThreadSplitDone;
}

// An insert (upsert) or delete of k whose search starts at `start` (with
// `parent` / `pmeta` as thread_find takes them: kNil when unknown), and
// starts again at `restart` (a node at or above the leaves' parents' level
// with low key <= k: top_start's, or the root) when it needs a leaf's
// parent. True once it took effect or needed no change; false: left to the
// warp (a root or a parent that is full, a latch lost kThreadTries times, a
// node held too long). `size` gets the change of the key count, `leaves`
// the leaves added by splits.
template <class Word>
__device__ __forceinline__ bool thread_update(const TreeRef<Word>& tree, uint32_t start, uint32_t parent, Word pmeta,
                                              uint32_t restart, bool is_insert, same_t<Word> k, same_t<Word> v,
                                              long long& size, unsigned long long& leaves) {
  Word w[kNodeWords], meta;
  uint32_t node = start;
  for (uint32_t attempt = 0; attempt < kThreadTries; ++attempt) {
    if (attempt > 0) __nanosleep(32u << min(attempt - 1, 6u));
    // After a lost latch or a split, from the leaf found before (its low
    // key <= k never changes; a split moved k at most to its right).
    if (!thread_find(tree, k, node, w, meta, parent, pmeta)) return false;
    const int cnt = static_cast<int>(meta_count(meta));
    int new_cnt = cnt, q = 0;
    const int change = leaf_update(w, new_cnt, is_insert, k, v, q);
    // Judged from a validated snapshot: ordered as of that snapshot (the
    // operations kernel's argument, ops_kernel.cuh TileCache).
    if (change == kLeafSame) return true;
    if (change == kLeafFull) {  // a split first (w unchanged)
      if (node == kRoot) return false;                  // the root is a full leaf: the warp's split_root
      if (parent == kNil) {                             // started at the leaf level: learn the parent
        node = restart;
        continue;
      }
      const int r = thread_split(tree, node, meta, w, parent, pmeta, leaves);
      if (r == kThreadSplitWarp) return false;
      if (r == kThreadSplitRetry) {  // P or L changed, or P is not L's parent: from `restart`
        node = restart;
        parent = kNil;
      }
      continue;  // split: from L (k may now belong to the sibling)
    }
    Word* const words = tree.words(node);
    if (cas_w(words + kMetaWord, meta, static_cast<Word>(meta | kLatchBit)) != meta) continue;  // changed or held: read w again
    fence_acq_rel_gpu();  // the latch before our stores (a reader's V2 sees it)
    if (change == kLeafValue)
      st_relaxed_w(words + 2 * q + 1, static_cast<Word>(v));
    else
      st_relaxed_vec_w<kNodeWords, 2 * kCapacity>(words, w);  // the pairs; high, link, low are unchanged
    // Release: our stores, then the next version (count updated, unlatched).
    st_release_w(words + kMetaWord, meta_release(static_cast<Word>(meta | kLatchBit), static_cast<uint32_t>(new_cnt), true));
    size += new_cnt - cnt;
    return true;
  }
  return false;
}

enum GroupOutcome : int { kGroupApplied = 0, kGroupAlone = 1, kGroupWarp = 2 };

// The first attempt of a warp's updates, made per leaf: every update lane
// descends to its leaf, the lanes that found the same leaf form a group
// (__match_any_sync), and the group's first lane applies all of their
// updates to its validated snapshot of the leaf in registers and publishes
// them with one latch (CAS from the snapshot's version, fence, stores,
// release). Why: a sorted list brings its neighbouring keys to the same
// leaf, and on a tree not much larger than the batch (Figure 5 at 2^20 and
// 2^22 keys: about ten updates per leaf) the lanes of a warp otherwise race
// for one leaf latch, one winner per round and the losers reading the leaf
// again. The group's updates become visible together, at the release: one
// order of them that the concurrent semantics and the phased any-update
// rule allow. Deletes are applied before inserts, so that a leaf with room
// for the group's net change does not fill on the way.
//
// Called by every lane of the warp, converged (the shuffles and the match
// need all 32). `upd`: this lane holds an insert or delete of k (value v).
// `node` / `parent` / `pmeta`: where its search starts, as thread_find
// takes them (the kernel passes top_start's node, parent unknown).
// For an update lane: kGroupApplied (done, or no change needed as of the
// validated snapshot), kGroupAlone (not applied: the key lies outside the
// leader's snapshot of the leaf, the leaf had no room, or the latch was
// lost; the lane goes on with thread_update from `node`, its leaf, with
// `parent` / `pmeta` from its descent), kGroupWarp (a read gave up: left to
// the warp). `grouped` counts the updates applied for groups of two or
// more lanes (the stats' grouped-updates).
template <class Word>
__device__ __forceinline__ int group_update(const TreeRef<Word>& tree, bool upd, bool is_insert, same_t<Word> k,
                                            same_t<Word> v, uint32_t& node, uint32_t& parent, Word& pmeta,
                                            long long& size, unsigned long long& leaves,
                                            unsigned long long& grouped) {
  Word w[kNodeWords], meta = 0;
  const bool found = upd && thread_find(tree, k, node, w, meta, parent, pmeta);
  // An update that changes nothing in the lane's own validated snapshot (a
  // delete of an absent key, an upsert of the value held) takes effect
  // there, as in thread_update: no latch, no round of its group (with half
  // the deletes absent, as in Figure 5, that is a quarter of the updates).
  bool noop = false;
  if (found) {
    int p;
    Word value;
    const bool present = leaf_find(w, static_cast<int>(meta_count(meta)), k, p, value);
    noop = is_insert ? present && value == v : !present;
  }
  const bool joins = found && !noop;
  const unsigned lane = lane_id();
  // Lanes that do not join get tags no node has (node ids are 32-bit).
  const unsigned group = __match_any_sync(kFullMask, joins ? static_cast<unsigned long long>(node)
                                                           : (1ull << 32) | lane);
  const int first = __ffs(group) - 1;
  const bool leader = joins && first == static_cast<int>(lane);
  // Every leader takes its group's members in lane order, the leaders of
  // different groups at the same time (a lane of a one-lane group is its
  // own leader: on a large tree nearly every group): first the deletes,
  // then the inserts, so each pass runs as many rounds as the largest
  // group has members of its type (a round is a search and a shift of the
  // leaf in the leaders' registers, the other lanes idle: the rounds were
  // the larger part of the warp's instructions while each pass went over
  // every member).
  const unsigned inserts = __ballot_sync(kFullMask, upd && is_insert);
  const unsigned my_deletes = leader ? group & ~inserts : 0u, my_inserts = leader ? group & inserts : 0u;
  const int delete_rounds = static_cast<int>(__reduce_max_sync(kFullMask, __popc(my_deletes)));
  const int insert_rounds = static_cast<int>(__reduce_max_sync(kFullMask, __popc(my_inserts)));
  const int cnt0 = static_cast<int>(meta_count(meta));
  const Word low = w[kLowWord], high = w[kHighWord], link = w[kLinkWord];
  int cnt = cnt0;
  unsigned applied = 0;
  bool changed = false, overflow = false;
  for (int pass = 0; pass < 2; ++pass) {  // deletes, then inserts
    const bool ins = pass == 1;
    unsigned todo = ins ? my_inserts : my_deletes;
    const int rounds = ins ? insert_rounds : delete_rounds;
    for (int round = 0; round < rounds; ++round) {
      const int r = todo != 0 ? __ffs(todo) - 1 : static_cast<int>(lane);
      const bool mine = todo != 0;  // this leader has a member to take this round
      todo &= todo - 1;
      const Word km = __shfl_sync(kFullMask, k, r);
      const Word vm = __shfl_sync(kFullMask, v, r);
      if (!mine) continue;
      // Member keys are in this leaf's range as of the member's own
      // snapshot; the leader's may be older or newer (a split between).
      if (km < low || (link != kNil && km >= high)) continue;
      int q;
      const int change = leaf_update(w, cnt, ins, km, vm, q);
      if (change == kLeafFull) {
        overflow = true;  // no room: the member goes on alone, after the split below
        continue;
      }
      changed = changed || change != kLeafSame;
      applied |= 1u << r;
    }
  }
  if (leader && changed) {
    Word* const words = tree.words(node);
    if (cas_w(words + kMetaWord, meta, static_cast<Word>(meta | kLatchBit)) == meta) {
      fence_acq_rel_gpu();  // the latch before our stores (a reader's V2 sees it)
      st_relaxed_vec_w<kNodeWords, 2 * kCapacity>(words, w);  // the pairs; high, link, low are unchanged
      meta = meta_release(static_cast<Word>(meta | kLatchBit), static_cast<uint32_t>(cnt), true);  // the next version: what w now is
      st_release_w(words + kMetaWord, meta);
      size += cnt - cnt0;
    } else {
      applied = 0;  // the leaf changed since the snapshot: every member goes on alone
      overflow = false;
    }
  }
  // Inserts that found the leaf full: the leader splits it (from the state
  // it just published, or its snapshot), so that the members left over
  // find room instead of racing each other for the split. A split that
  // fails (a lost race, a full parent, a full pool: flagged as by any
  // split) changes no node: the members then split on their own or leave
  // it to the warp.
  if (leader && overflow && parent != kNil && node != kRoot) thread_split(tree, node, meta, w, parent, pmeta, leaves);
  if (leader && __popc(group) > 1) grouped += __popc(applied);
  applied = __shfl_sync(kFullMask, applied, first);
  if (!found) return kGroupWarp;  // (lanes without an update ignore the outcome)
  if (noop) return kGroupApplied;
  return ((applied >> lane) & 1u) != 0 ? kGroupApplied : kGroupAlone;
}

// Blocks of 64 threads, 12 per SM: 80 registers, no spills, the same 24
// warps per SM as 3 blocks of 256. Why 64: a block's registers are freed
// only when all its warps are done, and a warp serving the operations its
// threads left (a proactive split from the root, say) runs many times
// longer than its neighbours; in blocks of 256 seven other warps' slots
// idled behind it, here one. Blocks of 64 measured faster on the concurrent
// mixes, the update-heavy ones most; docs/btree.md ("One thread per
// operation") says why persistent grids, per-block counter sums and a second
// kernel for the leftovers were not kept.
inline constexpr int kThreadOpsBlock = 64;
// Blocks per SM the register budget is set for: 12 at u32 (80 registers);
// at u64 a node takes 64 registers instead of 32: a bound of 8 blocks
// (128 registers) leaves the kernel without spills (it takes 112, so 9
// blocks, 18 warps, fit an SM).
template <class Word>
inline constexpr int kThreadOpsMinBlocks = sizeof(Word) == 4 ? 12 : 8;

// One list (positions start + i stride, i < n): the warp's updates first
// attempted per leaf (group_update, --leaf-groups on), then thread i's own
// attempt, then its warp serves what the threads left, one operation at a
// time.
template <class Word>
__global__ void __launch_bounds__(kThreadOpsBlock, kThreadOpsMinBlocks<Word>)
    thread_ops_kernel(TreeRef<Word> tree, OpsRef<Word> ops, const Node<Word>* top) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Word k = 0;
  uint32_t j = 0;
  Word arg = 0;
  uint32_t type = ops.type;
  bool left = false;
  long long size = 0;
  unsigned long long leaves = 0, grouped = 0;
  if (i < ops.n) {  // every lane stays for the warp's parts below
    const uint64_t pos = ops.start + i * ops.stride;
    k = ops.keys[pos];
    op_at(ops, pos, j, type, arg);
  }
  const uint32_t start = i < ops.n ? top_start(top, k) : kRoot;
  const bool upd = i < ops.n && (type == kInsert || type == kDelete);
  int g = kGroupAlone;
  uint32_t node = start, parent = kNil;
  Word pmeta = 0;
  if (ops.leaf_groups && __any_sync(kFullMask, upd))  // (ops.leaf_groups is the same for the whole grid)
    g = group_update(tree, upd, type == kInsert, k, arg, node, parent, pmeta, size, leaves, grouped);
  if (upd) {
    if (g == kGroupAlone)
      left = !thread_update(tree, node, parent, pmeta, start, type == kInsert, k, arg, size, leaves);
    else left = g == kGroupWarp;
    if (!left && ops.done) ops.done[j] = 1;
  } else if (i < ops.n) {
    left = !thread_query(tree, ops, start, type, j, k, arg);
  }
  const Tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
  TileCounters counters;
  unsigned pending = t.ballot(left);
  if (pending) {
    if (t.thread_rank() == 0) atomicAdd(&tree.hdr->warp_taken, static_cast<unsigned long long>(__popc(pending)));
    TileCache<Word, 32> cache;
    while (pending) {
      const int q = __ffs(pending) - 1;
      pending &= pending - 1;
      if (!ops.use_finger) {  // unsorted: neighbours are unrelated, start from the root
        cache.leaf = kNil;
        cache.inner = kNil;
      }
      serve_op<Word, 32, true>(t, tree, ops, t.shfl(type, q), t.shfl(j, q), t.shfl(k, q), t.shfl(arg, q), cache,
                         counters);
    }
  }
  size = warp_sum(size);
  leaves = warp_sum(leaves);
  grouped = warp_sum(grouped);
  if (t.thread_rank() == 0) {  // a two's-complement add: a negative change wraps modulo 2^64 as intended
    counters.size += size;
    counters.leaves += leaves;
    if (counters.size != 0) atomicAdd(&tree.hdr->size, static_cast<unsigned long long>(counters.size));
    if (counters.leaves != 0) atomicAdd(&tree.hdr->leaves, counters.leaves);
    if (grouped != 0) atomicAdd(&tree.hdr->grouped, grouped);
  }
}

}  // namespace gpudict::btree
