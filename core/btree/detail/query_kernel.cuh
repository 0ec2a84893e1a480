// Phased queries (lookup, successor, count, range) in lock-step, while no
// writer runs (after a phased batch's updates, merged or by the operations
// kernel, or on the final tree): every query type with --query-tile 4|8,
// and with the default --query-tile 1 the lists of long ranges (other
// queries then run one thread each: point_kernel.cuh, and ranges.cu for
// short ranges).
//
// Why a kernel of its own: in ops_kernel every tile serves one operation at
// a time, and the tiles of a warp diverge (each follows its own path), so
// the warp runs them one after another and has one node read in flight.
// Here a warp holds 32 / G tiles (G = 4 or 8 lanes), each with its own
// operation, and every iteration of the loop is the same for the whole
// warp: every tile moves its operation on by one node, and every tile that
// needs a node issues its node read (128 or 256 bytes) in the same instruction.
//
// Every collective (shuffle, ballot) runs on the whole warp (WarpTile, full
// mask) and outside any tile-divergent branch: a tile with nothing to do
// still takes part and discards the result. The first version used
// cooperative-groups tiles inside per-tile branches; the compiler then
// wrapped each shuffle in convergence checks, which cost more warp
// instructions than the lookup's own work (docs/btree.md).
//
// One iteration, per tile:
//   1. a tile whose node read has arrived moves its operation on with it:
//      down a level, right through a link, or to an answer;
//   2. a tile without an operation (also one answered in step 1) takes the
//      next one of its run and starts it from the finger: the last leaf
//      (answered at once when its range holds the key) or the last inner
//      node (its child for the key is the node to read);
//   3. every tile that needs a node issues the read.
// So a sorted list costs about one read and one iteration per operation
// when consecutive keys fall under the same inner node.
//
// Each tile serves a contiguous run of the (sorted) list. Nothing writes the
// tree during this kernel, so nodes are read through the read-only cache
// with no fence and no validation (as TreeRef::read_plain).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/btree/detail/ops_kernel.cuh"
#include "core/common/warp.cuh"

namespace gpudict::btree {

// Words 28..31 of a node (high key, link, low key, meta): all on the tile's
// last lane, the last four words of its slice.
template <class Word>
struct NodeHead {
  Word high = 0, link = kNil, low = 0, meta = 0;
};
static_assert(kHighWord == 28 && kLinkWord == 29 && kLowWord == 30 && kMetaWord == 31,
              "head_of reads the last four words of the last lane's slice");

template <class Word, unsigned G>
__device__ __forceinline__ NodeHead<Word> head_of(const WarpTile<G>& t, const Frag<Word, G>& f) {
  constexpr int W = Frag<Word, G>::W;
  static_assert(W >= 4, "the head must sit on one lane");
  return {t.shfl(f.w[W - 4], G - 1), t.shfl(f.w[W - 3], G - 1), t.shfl(f.w[W - 2], G - 1),
          t.shfl(f.w[W - 1], G - 1)};
}

// Pair q (0 <= q < kCapacity) on every lane of the tile: two shuffles.
template <class Word, unsigned G>
__device__ __forceinline__ void pair_at(const WarpTile<G>& t, const Frag<Word, G>& f, int q, Word& key,
                                        Word& value) {
  constexpr int P = Frag<Word, G>::W / 2;  // pairs per lane
  const int slot = q % P;
  Word k = f.w[0], v = f.w[1];
#pragma unroll
  for (int s = 1; s < P; ++s) {
    if (slot == s) {
      k = f.w[2 * s];
      v = f.w[2 * s + 1];
    }
  }
  key = t.shfl(k, q / P);
  value = t.shfl(v, q / P);
}

// The finger (tile-uniform): snapshots of the last leaf and the last inner
// node the tile used, with the bounds that decide whether they cover a key.
template <class Word, unsigned G>
struct QueryFinger {
  uint32_t leaf = kNil, inner = kNil;
  NodeHead<Word> leaf_h, inner_h;  // their heads, so that starting from them needs no shuffle
  Frag<Word, G> leaf_f, inner_f;
};

// Whether k lies in the node's range [low, high) (no upper bound without a link).
template <class Word>
__device__ __forceinline__ bool head_covers(const NodeHead<Word>& h, same_t<Word> k) {
  return k >= h.low && (h.link == kNil || k < h.high);
}

template <class Word>
__device__ __forceinline__ NodeHead<Word> select_head(bool pred, const NodeHead<Word>& a, const NodeHead<Word>& b) {
  return {pred ? a.high : b.high, pred ? a.link : b.link, pred ? a.low : b.low, pred ? a.meta : b.meta};
}

// Range output, in one pass. A tile serves a contiguous run of the sorted
// list, so its ranges' pairs form one stream, a few pairs per leaf visit
// (4-14). The tile collects them in shared memory, a ring of two 32-pair
// lines (keys, values), and when the stream leaves a line it stores the line
// whole, in 16-byte stores (stored pair by pair, each 128-byte line was
// completed over many iterations and the L2 wrote most of them back
// half-written: about twice the output's bytes went to DRAM),
// with the streaming cache hint: the lines are not read again, and the L2
// is better spent on the nodes. A range's size (value) and offset are stored
// by list position, not by slot: a tile's run of positions is consecutive,
// so its writes fill whole sectors, where by slot they scatter (ranges.cu
// maps them back with the slots the sort carried, below). A range's upper bound is
// read by list position too: the list's sort carries (hi, slot) as
// its value (OpsRef::hi_slot), so a range costs no read of the permutation
// and no dependent random read of its bound by slot; the kernel saves more
// than the wider sort value costs the list's sort.
// Where: tile t's stream has lines [t R, (t + 1) R) of the output to itself
// (R = region_lines, sized from an estimate), so each range's offset is
// known when it starts and is written then; the output has holes where
// tiles used less than R. A stream longer than R stores nothing past it
// (its pairs are counted all the same) and the host runs the list again
// with exact regions: tile_base_line from a scan of every tile's lines
// (ranges.cu). So ranges need no counting pass first and no pass that moves
// the output afterwards.
inline constexpr int kLineWords = 32;  // pairs per output line: 32 keys, then 32 values (128 or 256 bytes each)
inline constexpr int kStageWords = 2 * kLineWords;
static_assert(2 * kCapacity < kLineWords, "a loop iteration (two leaf visits) completes at most one line");
// Dynamic shared memory of a range launch: a ring of keys and one of values per tile.
// (u64: 64 KiB a block at G = 4, above the default 48 KiB: launch.cuh
// raises the kernel's limit.)
template <class Word, unsigned G>
inline constexpr size_t kRangeStageBytes = (kBlock / G) * 2 * kStageWords * sizeof(Word);

// The tile's rings (keys; values follow), recomputed where used: registers
// are what this kernel is short of.
template <class Word, unsigned G>
__device__ __forceinline__ Word* range_ring() {
  extern __shared__ __align__(16) uint32_t range_stage[];  // 16-byte loads in flush_line
  return reinterpret_cast<Word*>(range_stage) + (threadIdx.x / G) * (2 * kStageWords);
}

// The first output line of tile `tile`'s region (see Range output).
template <class Word>
__device__ __forceinline__ uint64_t region_line0(const OpsRef<Word>& ops, uint64_t tile) {
  return ops.tile_base_line != nullptr ? ops.tile_base_line[tile] : tile * ops.region_lines;
}

// Stores line `line` of the tile's stream (from the ring) at its place in the
// tile's region, for the tiles with `store`, unless it lies past a region of
// estimated size. Every lane of the warp calls it.
template <class Word, unsigned G>
__device__ __forceinline__ void flush_line(const WarpTile<G>& t, const OpsRef<Word>& ops, uint64_t tile, uint64_t line,
                                           bool store) {
  constexpr int kPerLane = kLineWords / static_cast<int>(G);
  constexpr int kPiece = 16 / static_cast<int>(sizeof(Word));  // words per 16-byte store
  static_assert(kPerLane % kPiece == 0, "lines are stored in 16-byte pieces");
  if (store && (ops.tile_base_line != nullptr || line < ops.region_lines)) {
    const uint64_t at = region_line0(ops, tile) + line;
    const int first = static_cast<int>(t.rank) * kPerLane;  // the lane's pairs in the line
    const Word* ring = range_ring<Word, G>() + static_cast<int>(line & 1) * kLineWords + first;
    Word* keys = ops.range_keys + at * kLineWords + first;
    Word* values = ops.range_values + at * kLineWords + first;
#pragma unroll
    for (int q = 0; q < kPerLane; q += kPiece) {
      __stcs(reinterpret_cast<uint4*>(keys + q), *reinterpret_cast<const uint4*>(ring + q));
      __stcs(reinterpret_cast<uint4*>(values + q), *reinterpret_cast<const uint4*>(ring + kStageWords + q));
    }
  }
}

// The operation a tile is serving (tile-uniform).
template <class Word>
struct QueryOp {
  Word k = 0;           // the key (count, range: lo)
  Word hi = 0;          // count, range: the upper bound
  uint32_t j = 0;       // where its results go: its slot (ranges: its list position)
  unsigned long long out = 0;   // range: the next pair's place in the tile's stream (Range output, above)
  uint32_t total = 0;   // count, range: keys so far
  uint32_t node = kNil; // the node to read next
  uint32_t steps = 0;   // nodes read (bounded by the pool's nodes: a loop would be a corrupt tree)
  bool down = true;     // descending to k's leaf (else walking right along the leaves)
  bool from_cache = false;  // `node` is the cached inner node's right sibling: one hop, then the root
};

template <class Word, unsigned G>
__device__ __forceinline__ void select_frag(bool pred, const Frag<Word, G>& a, Frag<Word, G>& out) {
#pragma unroll
  for (int s = 0; s < Frag<Word, G>::W; ++s) out.w[s] = pred ? a.w[s] : out.w[s];
}

// Moves a tile's operation on with the snapshot `cur` of node `cur_node`
// (its head h: head_of(cur), or the finger's copy).
// Returns true when it needs the node op.node read next, false when it is
// answered (or when the tile is not `active`). Every lane of the warp must
// call it; only active tiles change anything. Written with selects, not
// branches: the tiles of a warp take different paths here, and branches
// made the warp run every path one after another (plus the register copies
// at each join: several times the instructions per loop iteration).
template <class Word, unsigned G, uint8_t kType>
__device__ __forceinline__ bool advance(const WarpTile<G>& t, const TreeRef<Word>& tree, const OpsRef<Word>& ops, bool active,
                                        QueryOp<Word>& op, QueryFinger<Word, G>& fin, const Frag<Word, G>& cur, const NodeHead<Word>& h,
                                        uint32_t cur_node) {
  constexpr bool kRanged = kType == kCount || kType == kRange;
  constexpr int W = Frag<Word, G>::W;
  // Collectives first, for every tile.
  const int cnt = static_cast<int>(meta_count(h.meta));
  const bool leaf = meta_leaf(h.meta);
  // Inner nodes, lookups, successors: keys <= k. A range's leaf: keys < lo.
  const int p = count_keys(t, cur, cnt, op.k, kRanged && leaf);
  const int b = kRanged ? count_keys(t, cur, cnt, op.hi, false) : 0;
  // The pair of interest: the successor (first key > k) in a successor's
  // leaf, else the last key <= k (an inner node's child for k; a lookup's hit).
  const int q = (kType == kSuccessor && leaf) ? min(p, kCapacity - 1) : max(p - 1, 0);
  Word pk, pv;
  pair_at(t, cur, q, pk, pv);

  // Where the snapshot sends the operation. Going down: k < low only after
  // a start right of k (-> the root); k >= high: a B-link move right, or the
  // root when the start was the cached inner node's sibling (the root is
  // then closer). No writer runs here, so only finger starts move at all.
  const bool left = op.down && op.k < h.low;
  const bool right = op.down && !left && h.link != kNil && op.k >= h.high;
  const bool move = left || right;
  const uint32_t move_to = (left || op.from_cache) ? kRoot : static_cast<uint32_t>(h.link);
  const bool at_inner = active && !move && !leaf;
  const bool at_leaf = active && !move && leaf;
  // The finger follows: the last inner node on the way down (the leaf's
  // parent), and any leaf snapshot (walks right included).
  fin.inner = at_inner ? cur_node : fin.inner;
  fin.inner_h = select_head(at_inner, h, fin.inner_h);
  select_frag(at_inner, cur, fin.inner_f);
  fin.leaf = at_leaf ? cur_node : fin.leaf;
  fin.leaf_h = select_head(at_leaf, h, fin.leaf_h);
  select_frag(at_leaf, cur, fin.leaf_f);

  bool walk = false;  // at a leaf, and the answer continues in the next leaf
  const bool lane0 = t.rank == 0;
  if constexpr (kType == kLookup) {
    const bool hit = p > 0 && pk == op.k;
    if (at_leaf && lane0) {
      ops.found[op.j] = hit ? 1 : 0;
      ops.value[op.j] = hit ? pv : Word{0};
    }
  } else if constexpr (kType == kSuccessor) {
    // Every key of a right sibling is >= this snapshot's high key > k.
    const bool found = p < cnt;
    walk = at_leaf && !found && h.link != kNil;
    if (at_leaf && !walk && lane0) {
      ops.found[op.j] = found ? 1 : 0;
      ops.key_out[op.j] = found ? pk : Word{0};
      ops.value[op.j] = found ? pv : Word{0};
    }
  } else {
    // Keys [p, b) of this snapshot are in [lo, hi]; the next leaf starts at
    // this snapshot's high key, so every key is counted once.
    if constexpr (kType == kRange) {
      // Pairs [p, b) go to places out, out + 1, ... of the stream, in the
      // ring (the kernel stores lines once per iteration). The __syncwarp()
      // orders these stores after the last flush's loads by other lanes.
      __syncwarp();
      Word* ring = range_ring<Word, G>();
      const int first = static_cast<int>(t.rank) * (W / 2);
#pragma unroll
      for (int s = 0; s < W; s += 2) {
        const int i = first + s / 2;
        if (at_leaf && i >= p && i < b) {
          const unsigned at = static_cast<unsigned>(op.out + static_cast<unsigned long long>(i - p)) % kStageWords;
          ring[at] = cur.w[s];
          ring[kStageWords + at] = cur.w[s + 1];
        }
      }
      op.out += at_leaf ? static_cast<unsigned long long>(b - p) : 0ull;
    }
    op.total += at_leaf ? static_cast<uint32_t>(b - p) : 0u;
    walk = at_leaf && h.link != kNil && op.hi >= h.high;
    if (at_leaf && !walk && lane0) ops.value[op.j] = op.total;
  }

  op.steps += active ? 1u : 0u;
  // A path visits each node at most once (a range may walk millions of
  // leaves): more steps than nodes would be a cycle, a corrupt tree.
  const bool error = active && op.steps > tree.capacity;
  if (error && lane0) atomicExch(&tree.hdr->error, 1ull);
  const bool need = active && !error && (move || at_inner || walk);
  op.node = !active ? op.node : move ? move_to : at_inner ? static_cast<uint32_t>(pv) : static_cast<uint32_t>(h.link);
  op.from_cache = active ? false : op.from_cache;
  op.down = op.down && !walk;
  return need;
}

// One list of queries of type kType (no writer runs). Tile i serves list
// positions [i per_tile, (i + 1) per_tile); lane r of a tile holds the
// r-th operation of the tile's current window of G, loaded together.
// Blocks per SM the registers are budgeted for: at u64 a lane's slice of
// a node is twice the registers (four slices live: f, cur and the
// finger's two), so 2 blocks (128 registers) for either tile: with 3 the
// tiles of 8 spilled up to 116 bytes; at 2 only the ranges of tiles of 4
// spill (28 bytes).
template <class Word, unsigned G>
inline constexpr int kQueryMinBlocks = sizeof(Word) == 4 ? (G == 4 ? 3 : 4) : 2;

template <class Word, unsigned G, uint8_t kType>
__global__ void __launch_bounds__(kBlock, kQueryMinBlocks<Word, G>) query_kernel(TreeRef<Word> tree, OpsRef<Word> ops) {
  constexpr int W = Frag<Word, G>::W;
  constexpr bool kRanged = kType == kCount || kType == kRange;
  const WarpTile<G> t;
  const uint64_t tile_id = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  uint64_t next = tile_id * ops.per_tile;
  const uint64_t end = min(next + static_cast<uint64_t>(ops.per_tile), ops.n);
  QueryFinger<Word, G> fin;
  QueryOp<Word> op;
  Frag<Word, G> f;  // the node read issued in the previous iteration
  bool reading = false;
  // The window: lane r holds operation w_at + r of the tile's next G.
  Word w_key = 0;
  uint32_t w_j = 0;
  Word w_hi = 0;
  int w_size = 0, w_at = 0;
  // Ranges: the tile's stream starts at 0, at its region's first line (Range output, above).
  // No lane returns early: the loop's exit test is a warp vote and every
  // collective needs the whole warp.
  while (__any_sync(kFullMask, reading || next < end)) {
    // Ranges: the stream's line (its low 32 bits suffice: an iteration adds
    // at most 2 x 14 pairs, so it ends in this line or the next).
    const unsigned line_lo = kType == kRange ? static_cast<unsigned>(op.out) / kLineWords : 0u;
    // 1. Reads that arrived move their operations on.
    bool busy = false;
    if (__any_sync(kFullMask, reading))
      busy = advance<Word, G, kType>(t, tree, ops, reading, op, fin, f, head_of(t, f), op.node);

    // 2. Free tiles take their next operation and start it from the finger.
    const bool take = !busy && next < end;
    if (__any_sync(kFullMask, take)) {
      if (take && w_at == w_size) {  // no collective inside: lanes load their own operation
        const uint64_t p = next + t.rank;
        if (p < end) {
          const uint64_t pos = ops.start + p * ops.stride;
          w_key = ops.keys[pos];
          if constexpr (kType == kRange) {  // bound and results by list position (Range output, above)
            w_hi = hs_hi(ops.hi_slot[pos]);
            w_j = static_cast<uint32_t>(pos);
          } else {
            w_j = ops.perm ? ops.perm[pos] : static_cast<uint32_t>(pos);
            if constexpr (kRanged) w_hi = ops.args[w_j];
          }
        }
        w_size = static_cast<int>(min(static_cast<uint64_t>(G), end - next));
        w_at = 0;
      }
      const int src = w_at & static_cast<int>(G - 1);
      const Word k = t.shfl(w_key, src);
      const uint32_t j = t.shfl(w_j, src);
      const Word hi = kRanged ? t.shfl(w_hi, src) : Word{0};
      w_at += take ? 1 : 0;
      next += take ? 1 : 0;
      op.k = take ? k : op.k;
      op.j = take ? j : op.j;
      op.hi = take ? hi : op.hi;
      op.total = take ? 0u : op.total;
      if constexpr (kType == kRange) {
        if (take && t.rank == 0) ops.range_offset[j] = region_line0(ops, tile_id) * kLineWords + op.out;
      }
      op.steps = take ? 0u : op.steps;
      op.down = take ? true : op.down;
      // Unsorted: neighbours are unrelated, every operation from the root.
      const bool forget = take && !ops.use_finger;
      fin.leaf = forget ? kNil : fin.leaf;
      fin.inner = forget ? kNil : fin.inner;
      const bool empty = kRanged && k > hi;
      if (take && empty && t.rank == 0) ops.value[j] = 0;
      const bool go = take && !empty;
      const bool leaf_ok = fin.leaf != kNil && head_covers(fin.leaf_h, k);
      const bool inner_ok = fin.inner != kNil && head_covers(fin.inner_h, k);
      const bool use_leaf = go && leaf_ok;
      const bool use_inner = go && !leaf_ok && inner_ok;
      // Neither covers k: the cached inner node's right sibling when k is
      // right of it (sorted: usually the next inner node), else the root.
      const bool start_read = go && !leaf_ok && !inner_ok;
      const bool sibling = fin.inner != kNil && fin.inner_h.link != kNil && k >= fin.inner_h.high;
      op.node = start_read ? (sibling ? static_cast<uint32_t>(fin.inner_h.link) : kRoot) : op.node;
      op.from_cache = take ? (start_read && sibling) : op.from_cache;
      busy = busy || start_read;
      Frag<Word, G> cur = fin.inner_f;
      select_frag(use_leaf, fin.leaf_f, cur);
      const uint32_t cur_node = use_leaf ? fin.leaf : fin.inner;
      const bool use = use_leaf || use_inner;
      const NodeHead<Word> cur_h = select_head(use_leaf, fin.leaf_h, fin.inner_h);
      const bool need = advance<Word, G, kType>(t, tree, ops, use, op, fin, cur, cur_h, cur_node);
      busy = busy || need;
    }

    // Ranges: a line the stream left is complete: store it.
    if constexpr (kType == kRange) {
      __syncwarp();  // the ring's stores (by any lane of the tile) before its loads
      const bool left_line = static_cast<unsigned>(op.out) / kLineWords != line_lo;
      flush_line(t, ops, tile_id, op.out / kLineWords - 1, left_line);
    }

    // 3. Every tile that needs a node reads it: one node per tile.
    if (busy) ld_readonly_vec_w<W>(tree.words(op.node) + t.rank * W, f.w);
    reading = busy;
  }
  // The stream's last line, if it is partly filled (every tile of the warp
  // left the loop together), and the stream's length in lines.
  if constexpr (kType == kRange) {
    __syncwarp();
    flush_line(t, ops, tile_id, op.out / kLineWords, op.out % kLineWords != 0);
    const unsigned long long lines = (op.out + kLineWords - 1) / kLineWords;
    if (t.rank == 0 && tile_id < ops.tiles) {
      ops.tile_lines[tile_id] = lines;
      if (lines > 0) atomicMax(ops.max_tile_lines, lines);
    }
  }
}

}  // namespace gpudict::btree
