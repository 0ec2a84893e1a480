// The B-Tree's operations as tile-cooperative device code, and the one kernel
// that runs a list of them (warp-cooperative work sharing, the GPU B-Tree
// paper s. 3.6, with a tile of G lanes in place of the warp): every lane
// brings one operation of any type; the tile serves its lanes' operations one
// at a time, all lanes working on each.
//
// Two instantiations of the kernel:
//   kValidated = false  phased queries with --query-tile 0: no writer runs,
//                       nodes are read through the read-only cache
//                       (TreeRef::read_plain)
//   kValidated = true   concurrent batches and --phased-updates ops: every node is
//                       read as a seqlock snapshot (TreeRef::try_read) and
//                       updates latch what they change
//
// Lists are usually sorted by key (the host sorts (key, slot) pairs): a tile
// then serves neighbouring keys, and each operation starts from the tile's
// cached leaf or its parent (TileCache, below) instead of the root. That is
// correct in a B-link tree whenever the start node's low key is <= the key:
// the search moves right through side links as far as needed. A cached node
// that is right of the key, or more than kFingerHops links left of it, sends
// the operation to the root instead.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/node.hpp"
#include "core/btree/detail/tile_node.cuh"
#include "core/btree/detail/tree_ref.cuh"

namespace gpudict::btree {

inline constexpr int kBlock = 256;
inline constexpr int kFingerHops = 2;
inline constexpr uint32_t kRangeOverflow = 0xFFFFFFFFu;  // a concurrent range outgrew its slot

// Operation codes: the values of gpudict::OpType.
enum : uint8_t { kInsert = 0, kDelete = 1, kLookup = 2, kCount = 3, kRange = 4, kSuccessor = 5 };

// A one-pass range list's (upper bound, slot) of each list position, the
// value its sort carries: (hi << 32) | slot in 8 bytes when the bound is
// 32-bit, a 16-byte pair (x: hi, y: slot) when it is 64-bit.
template <class Word>
struct HiSlotOf {
  using type = unsigned long long;
};
template <>
struct HiSlotOf<uint64_t> {
  using type = ulonglong2;
};
template <class Word>
using HiSlot = typename HiSlotOf<Word>::type;
__host__ __device__ __forceinline__ uint32_t hs_hi(unsigned long long w) { return static_cast<uint32_t>(w >> 32); }
__host__ __device__ __forceinline__ uint32_t hs_slot(unsigned long long w) { return static_cast<uint32_t>(w); }
__host__ __device__ __forceinline__ uint64_t hs_hi(ulonglong2 w) { return w.x; }
__host__ __device__ __forceinline__ uint32_t hs_slot(ulonglong2 w) { return static_cast<uint32_t>(w.y); }
template <class Word>
__host__ __device__ __forceinline__ HiSlot<Word> make_hs(Word hi, uint32_t slot) {
  if constexpr (sizeof(Word) == 4) {
    return (static_cast<unsigned long long>(hi) << 32) | slot;
  } else {
    return ulonglong2{static_cast<unsigned long long>(hi), slot};
  }
}

// One list of operations and where their results go (results by slot j).
// Word: the tree's word type (node.hpp); keys, arguments and the results'
// keys and values are of that width.
template <class Word>
struct OpsRef {
  uint64_t n = 0;           // operations in this launch: list positions start + i stride, i < n
  uint64_t start = 0;
  uint64_t stride = 1;
  uint32_t per_tile = 0;    // operations per tile, a multiple of G
  uint64_t tiles = 0;       // lock-step query kernel: the tiles that serve the list (query_grid)
  bool use_finger = false;  // the list is sorted by key (on the bits of sort_bits.hpp), or staged in key order
  uint8_t type = 0;         // every operation's type when `types` is null
  const Word* keys = nullptr;       // by position (sorted or in list order)
  const uint32_t* perm = nullptr;   // slot j of position s; null: j = s
  const Word* args = nullptr;       // by slot: value (insert) or hi (count, range; not one-pass ranges)
  // One-pass range lists (query_kernel.cuh, "Range output"), by list
  // position: (hi, slot) (HiSlot), sorted with the keys; read instead of
  // perm and args, which such a list leaves null.
  const HiSlot<Word>* hi_slot = nullptr;
  const uint8_t* types = nullptr;   // by slot
  // Update and concurrent lists of fewer than kMaxWordList operations, by
  // list position: op_word(slot, type, arg), sorted with the keys; read
  // instead of perm, args and types (which such a list leaves null), so a
  // thread finds its operation with one coalesced load instead of two reads
  // at random slots. Only when arguments are 32-bit (Word = uint32_t).
  const unsigned long long* op_words = nullptr;
  uint8_t* found = nullptr;         // lookup, successor
  Word* value = nullptr;            // lookup/successor value, count, range size
  Word* key_out = nullptr;          // successor key
  // First pair of the range's output: by slot, read by the operations
  // kernel; by list position, written by the lock-step query kernel
  // (query_kernel.cuh, "Range output", which also writes ranges' sizes in
  // `value` by list position).
  unsigned long long* range_offset = nullptr;
  // The one-thread-per-range kernel (kernels_query.cu) also writes each
  // range's size and offset by slot here, where not null (a mixed call's
  // outputs, by array position).
  unsigned long long* slot_sizes = nullptr;
  unsigned long long* slot_offsets = nullptr;
  const uint32_t* range_cap = nullptr;  // by slot: room at that offset; null: as large as needed
  Word* range_keys = nullptr;
  Word* range_values = nullptr;
  uint8_t* done = nullptr;  // by slot: 1 once an update has taken effect (null: not recorded)
  bool leaf_groups = false;  // the thread kernel's first attempt at updates per leaf (--leaf-groups)
  // Phased ranges in the lock-step query kernel, one pass (query_kernel.cuh,
  // "Range output"): tile t stores its stream's lines (32 pairs of
  // range_keys/range_values each) from line tile_base_line[t], or, when that
  // is null, from line t region_lines, at most region_lines of them.
  uint64_t region_lines = 0;
  const unsigned long long* tile_base_line = nullptr;
  unsigned long long* tile_lines = nullptr;      // by tile: lines of its stream (stored or not)
  unsigned long long* max_tile_lines = nullptr;  // the most lines a tile's stream has (atomicMax; zeroed by the caller)
};

// An operation's word (OpsRef::op_words): its argument in the high half,
// its type in bits 29-31 and its slot below.
inline constexpr int kOpTypeShift = 29;
inline constexpr uint32_t kOpSlotMask = (1u << kOpTypeShift) - 1u;
inline constexpr uint64_t kMaxWordList = uint64_t{1} << kOpTypeShift;
__host__ __device__ __forceinline__ unsigned long long op_word(uint32_t slot, uint32_t type, uint32_t arg) {
  return (static_cast<unsigned long long>(arg) << 32) | (type << kOpTypeShift) | slot;
}
__host__ __device__ __forceinline__ uint32_t word_slot(unsigned long long w) {
  return static_cast<uint32_t>(w) & kOpSlotMask;
}
__host__ __device__ __forceinline__ uint32_t word_type(unsigned long long w) {
  return static_cast<uint32_t>(w) >> kOpTypeShift;
}

// List position pos's slot j, type and argument (0 when the list has none).
template <class Word>
__device__ __forceinline__ void op_at(const OpsRef<Word>& ops, uint64_t pos, uint32_t& j, uint32_t& type, Word& arg) {
  if constexpr (sizeof(Word) == 4) {  // 64-bit arguments do not fit an operation word
    if (ops.op_words) {
      const unsigned long long w = ops.op_words[pos];
      j = word_slot(w);
      type = word_type(w);
      arg = static_cast<uint32_t>(w >> 32);
      return;
    }
  }
  j = ops.perm ? ops.perm[pos] : static_cast<uint32_t>(pos);
  type = ops.types ? ops.types[j] : ops.type;
  arg = ops.args ? ops.args[j] : Word{0};
}

template <class Word, unsigned G, bool kValidated>
__device__ __forceinline__ bool read_node(const Tile<G>& t, const TreeRef<Word>& tree, uint32_t node, Frag<Word, G>& f,
                                          Word& meta) {
  if constexpr (kValidated) {
    return tree.read_validated(t, node, f, meta);
  } else {
    tree.read_plain(t, node, f, meta);
    return true;
  }
}

// Whether k lies in the node's range [low, high) (no upper bound without a link).
template <class Word, unsigned G>
__device__ __forceinline__ bool covers(const Tile<G>& t, const Frag<Word, G>& f, same_t<Word> k) {
  return k >= word_at(t, f, kLowWord) && (word_at(t, f, kLinkWord) == kNil || k < word_at(t, f, kHighWord));
}

// Child of inner snapshot f for k: the last pivot <= k (pivot 0 = low <= k).
template <class Word, unsigned G>
__device__ __forceinline__ uint32_t child_for(const Tile<G>& t, const Frag<Word, G>& f, same_t<Word> meta,
                                                same_t<Word> k) {
  const int c = count_keys(t, f, static_cast<int>(meta_count(meta)), k, false);
  return static_cast<uint32_t>(value_at(t, f, c > 0 ? c - 1 : 0));  // a node index
}

// What a tile remembers between its operations (registers): the snapshot of
// the last leaf it used and of that leaf's parent. The list is sorted, so the
// next key is often in the same leaf (no read at all) or under the same
// parent (one read). Using an older snapshot is safe:
//   - a node's low key never changes, so a child pointer taken from any
//     snapshot of its parent leads to a node with low <= k, and the search
//     moves right from there through side links;
//   - answering a query from an earlier snapshot of this kernel gives the
//     exact answer for every key the batch does not update (they do not
//     change), and for a key it updates one of the states the semantics allow
//     (docs/semantics.md s. 4; phased queries run with no writer at all);
//   - an update latches with a CAS from the cached version: it succeeds only
//     if the node has not changed since, else the update reads it again. An
//     update that needs no change (delete of an absent key, insert of the
//     value the key holds) judged from a cached snapshot is ordered as of that
//     snapshot: no update of that key ran in between except other updates of
//     the same key in this batch, and the rules let any one of those win.
template <class Word, unsigned G>
struct TileCache {
  uint32_t leaf = kNil;
  Word leaf_meta = 0;
  uint32_t inner = kNil;
  Word inner_meta = 0;
  Frag<Word, G> leaf_f, inner_f;
};

// Where a search for k starts when the cached inner node does not cover it:
// the cached node's right sibling when k is right of it (a sorted list
// moves on to the next inner node; the sibling's low key is the snapshot's
// high key <= k and never changes, so the start is valid however old the
// snapshot), else the root.
template <class Word, unsigned G>
__device__ __forceinline__ uint32_t right_of_cached(const Tile<G>& t, const TileCache<Word, G>& cache,
                                                      same_t<Word> k) {
  if (cache.inner == kNil) return kRoot;
  const Word link = word_at(t, cache.inner_f, kLinkWord);
  return link != kNil && k >= word_at(t, cache.inner_f, kHighWord) ? static_cast<uint32_t>(link) : kRoot;
}

// Search for k's leaf, from the cache when it covers k, else from the cached
// parent (or the root). On success f/meta hold the leaf's snapshot, `node`
// its index, `parent` the last inner node the search came down from (kNil if
// none); the cache holds both.
template <class Word, unsigned G, bool kValidated>
__device__ bool descend(const Tile<G>& t, const TreeRef<Word>& tree, same_t<Word> k, TileCache<Word, G>& cache,
                        Frag<Word, G>& f, Word& meta, uint32_t& node, uint32_t& parent) {
  if (cache.leaf != kNil && covers(t, cache.leaf_f, k)) {
    f = cache.leaf_f;
    meta = cache.leaf_meta;
    node = cache.leaf;
    parent = cache.inner;
    return true;
  }
  Frag<Word, G> pf;
  Word pmeta = 0;
  bool at_start = false;
  int hops = 0;
  parent = kNil;
  if (cache.inner != kNil && covers(t, cache.inner_f, k)) {
    parent = cache.inner;
    pf = cache.inner_f;
    pmeta = cache.inner_meta;
    node = child_for(t, pf, pmeta, k);
  } else {
    node = right_of_cached(t, cache, k);
    at_start = node != kRoot;
    hops = at_start ? 1 : 0;
  }
  for (uint32_t it = 0; it < kSpinLimit; ++it) {
    if (!read_node<Word, G, kValidated>(t, tree, node, f, meta)) return false;
    if (k < word_at(t, f, kLowWord)) {  // only a cached node can be right of k
      node = kRoot;
      parent = kNil;
      at_start = false;
      continue;
    }
    const Word link = word_at(t, f, kLinkWord);
    if (link != kNil && k >= word_at(t, f, kHighWord)) {  // k moved right (a split): follow the side link
      if (at_start && ++hops > kFingerHops) {
        node = kRoot;
        parent = kNil;
        at_start = false;
        continue;
      }
      node = static_cast<uint32_t>(link);
      continue;
    }
    if (meta_leaf(meta)) {
      cache.leaf = node;
      cache.leaf_f = f;
      cache.leaf_meta = meta;
      if (parent != kNil) {
        cache.inner = parent;
        cache.inner_f = pf;
        cache.inner_meta = pmeta;
      }
      return true;
    }
    parent = node;
    pf = f;
    pmeta = meta;
    node = child_for(t, f, meta, k);
    at_start = false;
  }
  tree.report_error(t);
  return false;
}

template <class Word, unsigned G, bool kValidated>
__device__ void lookup_op(const Tile<G>& t, const TreeRef<Word>& tree, const OpsRef<Word>& ops, uint32_t j,
                          same_t<Word> k, TileCache<Word, G>& cache) {
  Frag<Word, G> f;
  Word meta;
  uint32_t node, parent;
  if (!descend<Word, G, kValidated>(t, tree, k, cache, f, meta, node, parent)) return;
  const int p = count_keys(t, f, static_cast<int>(meta_count(meta)), k, false);
  const bool hit = p > 0 && key_at(t, f, p - 1) == k;
  const Word v = hit ? value_at(t, f, p - 1) : Word{0};
  if (t.thread_rank() == 0) {
    ops.found[j] = hit ? 1 : 0;
    ops.value[j] = v;
  }
}

// The smallest key > k: in k's leaf, else the first key of the next
// non-empty leaf to the right (deletes leave empty leaves; no merges).
template <class Word, unsigned G, bool kValidated>
__device__ void successor_op(const Tile<G>& t, const TreeRef<Word>& tree, const OpsRef<Word>& ops, uint32_t j,
                             same_t<Word> k, TileCache<Word, G>& cache) {
  Frag<Word, G> f;
  Word meta;
  uint32_t node, parent;
  if (!descend<Word, G, kValidated>(t, tree, k, cache, f, meta, node, parent)) return;
  // A walk over empty leaves visits each at most once: more steps than the
  // pool has nodes would be a cycle (a corrupt tree), reported below.
  for (uint64_t it = 0; it <= tree.capacity; ++it) {
    const int cnt = static_cast<int>(meta_count(meta));
    const int p = count_keys(t, f, cnt, k, false);
    if (p < cnt) {
      const Word rk = key_at(t, f, p), rv = value_at(t, f, p);
      if (t.thread_rank() == 0) {
        ops.found[j] = 1;
        ops.key_out[j] = rk;
        ops.value[j] = rv;
      }
      return;
    }
    const Word link = word_at(t, f, kLinkWord);
    if (link == kNil) {
      if (t.thread_rank() == 0) {
        ops.found[j] = 0;
        ops.key_out[j] = 0;
        ops.value[j] = 0;
      }
      return;
    }
    // Every key of the right sibling is >= this snapshot's high key > k.
    node = static_cast<uint32_t>(link);
    if (!read_node<Word, G, kValidated>(t, tree, node, f, meta)) return;
  }
  tree.report_error(t);
}

// Count (kRange: also copy) the keys in [lo, hi]: from lo's leaf rightwards
// through side links. Each leaf snapshot contributes its keys in [lo, hi]
// below its high key; the next leaf starts exactly at that high key (its low
// key, which never changes), so every key is seen in exactly one snapshot.
template <class Word, unsigned G, bool kValidated>
__device__ void range_op(const Tile<G>& t, const TreeRef<Word>& tree, const OpsRef<Word>& ops, uint32_t j,
                         same_t<Word> lo, same_t<Word> hi, bool copy, TileCache<Word, G>& cache) {
  if (lo > hi) {
    if (t.thread_rank() == 0) ops.value[j] = 0;
    return;
  }
  Frag<Word, G> f;
  Word meta;
  uint32_t node, parent;
  if (!descend<Word, G, kValidated>(t, tree, lo, cache, f, meta, node, parent)) return;
  constexpr int W = Frag<Word, G>::W;
  const int r = static_cast<int>(t.thread_rank());
  const unsigned long long base = copy ? ops.range_offset[j] : 0ull;
  const uint64_t cap = (copy && ops.range_cap) ? ops.range_cap[j] : ~0ull;
  uint64_t total = 0;
  for (uint64_t it = 0;; ++it) {
    // A walk visits each leaf once (a range may walk millions): more steps
    // than nodes would be a cycle, a corrupt tree. Reported, never a
    // truncated count (the bound was 2^24 leaves, which a range over a
    // larger tree could pass).
    if (it > tree.capacity) {
      tree.report_error(t);
      return;
    }
    const int cnt = static_cast<int>(meta_count(meta));
    const int a = count_keys(t, f, cnt, lo, true);
    const int b = count_keys(t, f, cnt, hi, false);
    if (copy && b > a) {
      // W == 1: a pair's value sits on the next lane.
      const Word next_word = W == 1 ? t.shfl_down(f.w[0], 1) : Word{0};
#pragma unroll
      for (int s = 0; s < W; s += (W == 1 ? 1 : 2)) {
        const int idx = r * W + s;
        const int i = idx / 2;
        if (idx % 2 == 0 && i >= a && i < b) {
          const uint64_t pos = total + static_cast<uint64_t>(i - a);
          if (pos < cap) {
            ops.range_keys[base + pos] = f.w[s];
            ops.range_values[base + pos] = W == 1 ? next_word : f.w[(s + 1) % W];
          }
        }
      }
    }
    total += static_cast<uint64_t>(b - a);
    const Word link = word_at(t, f, kLinkWord);
    if (link == kNil || hi < word_at(t, f, kHighWord)) break;
    node = static_cast<uint32_t>(link);
    if (!read_node<Word, G, kValidated>(t, tree, node, f, meta)) return;
  }
  if (t.thread_rank() == 0) ops.value[j] = total > cap ? Word{kRangeOverflow} : static_cast<Word>(total);
}

// ---- updates (validated instantiation only) ----

enum SplitResult : int { kSplitDone = 0, kRestartParent = 1, kRestartRoot = 2, kAbort = 3 };

// The header's key and leaf counters as one tile changes them, added to the
// header once when the tile is done: one atomicAdd per update on a single
// address would serialise every tile of the kernel at that L2 line (and each
// later fence of the tile waits for it).
struct TileCounters {
  long long size = 0;
  unsigned long long leaves = 0;
};

// The root is full and latched (snapshot f/meta): its pairs move into two
// new nodes and the root becomes an inner node over them, so the root's
// index never changes. Releases the root. False: no room in the pool.
template <class Word, unsigned G>
__device__ bool split_root(const Tile<G>& t, const TreeRef<Word>& tree, const Frag<Word, G>& f, Word meta) {
  const Word latched = meta | kLatchBit;
  const bool leaf = meta_leaf(meta);
  const uint32_t a = tree.allocate(t, 2);
  if (a == kNil) {
    tree.unlatch(t, kRoot, latched);
    return false;
  }
  const uint32_t b = a + 1;
  constexpr int h = kCapacity / 2;
  const int cnt = static_cast<int>(meta_count(meta));
  const Word sep = key_at(t, f, h);
  const Word low = word_at(t, f, kLowWord);
  Frag<Word, G> left = f, right = f;
  shift_down(t, right, cnt, h);
  set_word(t, right, kHighWord, 0u);
  set_word(t, right, kLinkWord, kNil);  // the root has no right sibling
  set_word(t, right, kLowWord, sep);
  set_word(t, right, kMetaWord, meta_new<Word>(cnt - h, leaf));
  set_word(t, left, kHighWord, sep);
  set_word(t, left, kLinkWord, b);
  set_word(t, left, kLowWord, low);
  set_word(t, left, kMetaWord, meta_new<Word>(h, leaf));
  tree.store(t, a, left);  // both unreachable until the root's release
  tree.store(t, b, right);
  Frag<Word, G> root;
  constexpr int W = Frag<Word, G>::W;
#pragma unroll
  for (int s = 0; s < W; ++s) {
    const int idx = static_cast<int>(t.thread_rank()) * W + s;
    Word v = 0;
    if (idx == 0) v = low;
    if (idx == 1) v = a;
    if (idx == 2) v = sep;
    if (idx == 3) v = b;
    if (idx == kLinkWord) v = kNil;
    if (idx == kLowWord) v = low;
    if (idx == kMetaWord) v = latched;
    root.w[s] = v;
  }
  tree.store(t, kRoot, root);
  tree.release(t, kRoot, meta_release(latched, 2, false));
  if (t.thread_rank() == 0) {
    atomicAdd(&tree.hdr->height, 1ull);
    if (leaf) atomicAdd(&tree.hdr->leaves, 1ull);
  }
  return true;
}

// `node` is full and latched (snapshot f/meta); `parent` is where the search
// came from. Latches the parent (waiting, as the paper does), checks that it
// is still the parent and has room, moves the upper half of `node` into a
// new right sibling and adds (separator, sibling) to the parent. Releases
// both latches whatever happens.
template <class Word, unsigned G>
__device__ int split_child(const Tile<G>& t, const TreeRef<Word>& tree, uint32_t node, uint32_t parent, const Frag<Word, G>& f,
                           Word meta, Word& sep, uint32_t& sibling, TileCounters& counters) {
  const Word latched = meta | kLatchBit;
  const bool leaf = meta_leaf(meta);
  Word pmeta;
  if (!tree.latch_wait(t, parent, pmeta)) {
    tree.unlatch(t, node, latched);
    return kAbort;
  }
  Frag<Word, G> pf;
  tree.read_owned(t, parent, pf);
  const int pcnt = static_cast<int>(meta_count(pmeta));
  const int pos = find_child(t, pf, pcnt, node);
  if (pos < 0 || pcnt == kCapacity) {
    // pos < 0: the parent split meanwhile and `node` hangs under its right
    // part (restart from the parent and move right). Full: restart from the
    // root, which splits the parent on the way down.
    tree.unlatch(t, parent, pmeta);
    tree.unlatch(t, node, latched);
    return pos < 0 ? kRestartParent : kRestartRoot;
  }
  const uint32_t nn = tree.allocate(t, 1);
  if (nn == kNil) {
    tree.unlatch(t, parent, pmeta);
    tree.unlatch(t, node, latched);
    return kAbort;
  }
  constexpr int h = kCapacity / 2;
  const int cnt = static_cast<int>(meta_count(meta));
  sep = key_at(t, f, h);
  sibling = nn;
  Frag<Word, G> right = f, left = f;
  shift_down(t, right, cnt, h);
  set_word(t, right, kLowWord, sep);  // high key and link: the old node's
  set_word(t, right, kMetaWord, meta_new<Word>(cnt - h, leaf));
  tree.store(t, nn, right);  // unreachable until the releases below publish it
  set_word(t, left, kHighWord, sep);
  set_word(t, left, kLinkWord, nn);
  // The stored images keep the latched meta words: the latch stays set until
  // the releases below write the next versions.
  set_word(t, left, kMetaWord, latched);
  tree.store(t, node, left);
  insert_pair(t, pf, pcnt, pos + 1, sep, nn);
  set_word(t, pf, kMetaWord, pmeta);
  tree.store(t, parent, pf);
  tree.release(t, node, meta_release(latched, h, leaf));
  tree.release(t, parent, meta_release(pmeta, pcnt + 1, false));
  if (leaf) ++counters.leaves;
  return kSplitDone;
}

// Insert (upsert) or delete k (the GPU B-Tree paper's Algorithm 2 with
// proactive splits, restarts from the last known parent or the root, B-link
// moves right). True once the update has taken effect (or was a no-op); false
// when it was abandoned (pool full, or an internal error reported).
template <class Word, unsigned G>
__device__ bool update_op(const Tile<G>& t, const TreeRef<Word>& tree, same_t<Word> k, same_t<Word> v, bool is_insert,
                          TileCache<Word, G>& cache, TileCounters& counters) {
  Frag<Word, G> f, pf;
  Word meta = 0, pmeta = 0;
  uint32_t node, parent = kNil;
  bool at_start = false, have = false;
  int hops = 0;
  uint32_t fails = 0;
  if (cache.leaf != kNil && covers(t, cache.leaf_f, k)) {  // the cached leaf: no read unless it changed
    node = cache.leaf;
    f = cache.leaf_f;
    meta = cache.leaf_meta;
    parent = cache.inner;
    pf = cache.inner_f;
    pmeta = cache.inner_meta;
    have = true;
  } else if (cache.inner != kNil && covers(t, cache.inner_f, k)) {  // under the cached parent
    parent = cache.inner;
    pf = cache.inner_f;
    pmeta = cache.inner_meta;
    node = child_for(t, pf, pmeta, k);
  } else {
    node = right_of_cached(t, cache, k);
    at_start = node != kRoot;
    hops = at_start ? 1 : 0;
  }
  for (uint32_t it = 0; it < kSpinLimit; ++it) {
    if (have) {
      have = false;
    } else if (!tree.read_validated(t, node, f, meta)) {
      return false;
    }
    if (k < word_at(t, f, kLowWord)) {
      node = kRoot;
      parent = kNil;
      at_start = false;
      continue;
    }
    const Word link = word_at(t, f, kLinkWord);
    if (link != kNil && k >= word_at(t, f, kHighWord)) {
      if (at_start && ++hops > kFingerHops) {
        node = kRoot;
        parent = kNil;
        at_start = false;
        continue;
      }
      node = static_cast<uint32_t>(link);  // the parent stays the last known one (maybe not the true parent: checked at a split)
      continue;
    }
    const int cnt = static_cast<int>(meta_count(meta));
    const bool leaf = meta_leaf(meta);
    int p = 0;
    bool present = false;
    if (leaf) {
      p = count_keys(t, f, cnt, k, false);
      present = p > 0 && key_at(t, f, p - 1) == k;
    }
    if (is_insert && cnt == kCapacity && (!leaf || !present)) {
      // Proactive split of a full node on an insertion's path (a full leaf
      // only when the key is new: an upsert needs no room).
      cache.leaf = kNil;
      if (++fails > 4) __nanosleep(32u << min(fails - 4, 6u));  // back off under contention
      if (node == kRoot) {
        if (!tree.try_latch(t, node, meta)) continue;  // someone changed the root: read it again
        if (!split_root(t, tree, f, meta)) return false;
        cache.inner = kNil;
        continue;
      }
      if (parent == kNil) {  // parent unknown (started at a cached node or restarted there): from the root
        node = kRoot;
        at_start = false;
        continue;
      }
      if (!tree.try_latch(t, node, meta)) {  // restart from the last known parent instead of spinning
        node = parent;
        parent = kNil;
        at_start = false;
        continue;
      }
      Word sep = 0;
      uint32_t sibling = kNil;
      const int res = split_child(t, tree, node, parent, f, meta, sep, sibling, counters);
      if (res == kAbort) return false;
      if (res == kRestartParent) {
        node = parent;
        parent = kNil;
      } else if (res == kRestartRoot) {
        node = kRoot;
        parent = kNil;
      } else if (k >= sep) {
        node = sibling;  // the parent now holds both halves
      }
      at_start = false;
      continue;
    }
    if (leaf) {
      cache.leaf = node;
      cache.leaf_f = f;
      cache.leaf_meta = meta;
      if (parent != kNil && parent != cache.inner) {
        cache.inner = parent;
        cache.inner_f = pf;
        cache.inner_meta = pmeta;
      }
      if (!is_insert && !present) return true;                              // delete of an absent key
      if (is_insert && present && value_at(t, f, p - 1) == v) return true;  // nothing to change
      if (!tree.try_latch(t, node, meta)) {  // changed since the snapshot, or held: read again from the parent
        cache.leaf = kNil;
        if (++fails > 4) __nanosleep(32u << min(fails - 4, 6u));
        if (parent != kNil) node = parent;
        parent = kNil;
        at_start = false;
        continue;
      }
      // The latch proves the snapshot current: change it in registers.
      const Word latched = meta | kLatchBit;
      int new_cnt = cnt;
      if (is_insert && present) {
        set_value(t, f, p - 1, v);
      } else if (is_insert) {
        insert_pair(t, f, cnt, p, k, v);
        ++new_cnt;
      } else {
        remove_pair(t, f, cnt, p - 1);
        --new_cnt;
      }
      set_word(t, f, kMetaWord, latched);
      tree.store(t, node, f);
      const Word released = meta_release(latched, static_cast<uint32_t>(new_cnt), true);
      tree.release(t, node, released);
      // Our own write is the node's current state (until someone else's).
      cache.leaf_f = f;
      cache.leaf_meta = released;
      set_word(t, cache.leaf_f, kMetaWord, released);
      counters.size += new_cnt - cnt;
      return true;
    }
    parent = node;
    pf = f;
    pmeta = meta;
    node = child_for(t, f, meta, k);
    at_start = false;
  }
  tree.report_error(t);
  return false;
}

// One operation of any type, served by the whole tile (tile-uniform
// arguments): slot j, key k, arg = the insert's value or the range's hi.
template <class Word, unsigned G, bool kValidated>
__device__ __forceinline__ void serve_op(const Tile<G>& t, const TreeRef<Word>& tree, const OpsRef<Word>& ops, uint32_t type,
                                         uint32_t j, same_t<Word> k, same_t<Word> arg, TileCache<Word, G>& cache,
                                         TileCounters& counters) {
  switch (type) {
    case kLookup: lookup_op<Word, G, kValidated>(t, tree, ops, j, k, cache); break;
    case kSuccessor: successor_op<Word, G, kValidated>(t, tree, ops, j, k, cache); break;
    case kCount: range_op<Word, G, kValidated>(t, tree, ops, j, k, arg, false, cache); break;
    case kRange: range_op<Word, G, kValidated>(t, tree, ops, j, k, arg, true, cache); break;
    case kInsert:
    case kDelete:
      if constexpr (kValidated) {
        const bool ok = update_op<Word, G>(t, tree, k, arg, type == kInsert, cache, counters);
        if (ok && ops.done && t.thread_rank() == 0) ops.done[j] = 1;
      }
      break;
    default: break;
  }
}

template <class Word, unsigned G, bool kValidated>
__global__ void __launch_bounds__(kBlock) ops_kernel(TreeRef<Word> tree, OpsRef<Word> ops) {
  const Tile<G> t = cg::tiled_partition<G>(cg::this_thread_block());
  const uint64_t tile_id = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const uint64_t begin = tile_id * ops.per_tile;
  if (begin >= ops.n) return;  // the whole tile leaves together
  const uint64_t end = min(begin + static_cast<uint64_t>(ops.per_tile), ops.n);
  const uint32_t lane = t.thread_rank();
  TileCache<Word, G> cache;
  TileCounters counters;
  for (uint64_t base = begin; base < end; base += G) {
    // Each lane brings one operation...
    const uint64_t s = base + lane;
    Word my_key = 0;
    uint32_t my_j = 0;
    Word my_arg = 0;
    uint32_t my_type = ops.type;
    if (s < end) {
      const uint64_t pos = ops.start + s * ops.stride;
      my_key = ops.keys[pos];
      op_at(ops, pos, my_j, my_type, my_arg);
    }
    // ... and the tile serves them one at a time.
    const int m = static_cast<int>(min(static_cast<uint64_t>(G), end - base));
    for (int q = 0; q < m; ++q) {
      const Word k = t.shfl(my_key, q);
      const uint32_t j = t.shfl(my_j, q);
      const Word arg = t.shfl(my_arg, q);
      const uint32_t type = t.shfl(my_type, q);
      if (!ops.use_finger) {  // unsorted: neighbours are unrelated, start from the root
        cache.leaf = kNil;
        cache.inner = kNil;
      }
      serve_op<Word, G, kValidated>(t, tree, ops, type, j, k, arg, cache, counters);
    }
  }
  if (lane == 0) {  // a two's-complement add: a negative size change wraps modulo 2^64 as intended
    if (counters.size != 0) atomicAdd(&tree.hdr->size, static_cast<unsigned long long>(counters.size));
    if (counters.leaves != 0) atomicAdd(&tree.hdr->leaves, counters.leaves);
  }
}

}  // namespace gpudict::btree
