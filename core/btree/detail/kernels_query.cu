// The kernels for phased query lists and their launch: one thread per
// lookup, successor, count or range (point_kernel.cuh, qtile 1), or the lock-step
// kernel (query_kernel.cuh) with tiles of 4 or 8 lanes, for each query type.
#include <algorithm>
#include <string>

#include <cub/block/block_scan.cuh>

#include "core/btree/detail/launch.cuh"
#include "core/btree/detail/point_kernel.cuh"
#include "core/btree/detail/query_kernel.cuh"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"

namespace gpudict::btree {

namespace {

template <class Word, unsigned G, uint8_t kType>
QueryGrid grid_t(uint64_t n) {
  // Every resident tile gets an equal contiguous run of the list (a run of
  // a sorted list keeps the finger useful), launched in one wave.
  const size_t smem = kType == kRange ? kRangeStageBytes<Word, G> : 0;  // ranges: the tiles' output rings
  if (smem > 48 * 1024) {  // above the default limit of dynamic shared memory (u64 rings at G = 4)
    static const bool raised = [smem] {
      GPUDICT_CUDA(cudaFuncSetAttribute(query_kernel<Word, G, kType>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
      return true;
    }();
    (void)raised;
  }
  const uint64_t resident =
      static_cast<uint64_t>(resident_blocks(query_kernel<Word, G, kType>, kBlock, smem)) * (kBlock / G);
  const uint64_t per_tile = std::max<uint64_t>(1, (n + resident - 1) / resident);
  if (per_tile > 0xFFFFFFFFull) throw RuntimeFailure("btree: query list too long for one launch");
  QueryGrid g;
  g.per_tile = static_cast<uint32_t>(per_tile);
  g.tiles = (n + per_tile - 1) / per_tile;
  g.blocks = blocks_for(g.tiles * G, kBlock);
  g.smem = smem;
  return g;
}

template <class Word, unsigned G, uint8_t kType>
void launch_queries_t(const TreeRef<Word>& tree, OpsRef<Word> ops, cudaStream_t stream) {
  const QueryGrid g = grid_t<Word, G, kType>(ops.n);
  ops.per_tile = g.per_tile;
  ops.tiles = g.tiles;
  query_kernel<Word, G, kType><<<static_cast<unsigned>(g.blocks), kBlock, g.smem, stream>>>(tree, ops);
  GPUDICT_CHECK_LAUNCH("btree query_kernel");
}

template <class Word, unsigned G>
QueryGrid grid_g(uint8_t type, uint64_t n) {
  switch (type) {
    case kLookup: return grid_t<Word, G, kLookup>(n);
    case kSuccessor: return grid_t<Word, G, kSuccessor>(n);
    case kCount: return grid_t<Word, G, kCount>(n);
    case kRange: return grid_t<Word, G, kRange>(n);
    default: throw RuntimeFailure("btree: the lock-step query kernel serves queries only");
  }
}

template <class Word, unsigned G>
void launch_queries_g(const TreeRef<Word>& tree, const OpsRef<Word>& ops, cudaStream_t stream) {
  switch (ops.type) {
    case kLookup: launch_queries_t<Word, G, kLookup>(tree, ops, stream); break;
    case kSuccessor: launch_queries_t<Word, G, kSuccessor>(tree, ops, stream); break;
    case kCount: launch_queries_t<Word, G, kCount>(tree, ops, stream); break;
    case kRange: launch_queries_t<Word, G, kRange>(tree, ops, stream); break;
    default: throw RuntimeFailure("btree: the lock-step query kernel serves queries only");
  }
}

template <class Word, uint8_t kType>
void launch_points_t(const TreeRef<Word>& tree, const OpsRef<Word>& ops, cudaStream_t stream) {
  point_query_kernel<Word, kType><<<blocks_for(ops.n, kBlock), kBlock, 0, stream>>>(tree, ops);
  GPUDICT_CHECK_LAUNCH("btree point_query_kernel");
}

template <class Word>
void launch_points(const TreeRef<Word>& tree, const OpsRef<Word>& ops, cudaStream_t stream) {
  switch (ops.type) {
    case kLookup: launch_points_t<Word, kLookup>(tree, ops, stream); break;
    case kSuccessor: launch_points_t<Word, kSuccessor>(tree, ops, stream); break;
    case kCount: launch_points_t<Word, kCount>(tree, ops, stream); break;
    default: throw RuntimeFailure("btree: the point query kernel serves lookups, successors and counts (ranges: launch_point_ranges)");
  }
}

// A phased list of ranges with one thread per range (--query-tile 1):
// thread i serves list position i (a whole list, stride 1, whose sort
// carried (hi, slot) in hi_slot) in two walks over its leaves.
//
// The first walk counts. A block scan of the counts and one atomicAdd per
// block on `cursor` give each range its offset: the block's ranges lie
// contiguously in list order, and the output has no holes. Sizes (value)
// and offsets (range_offset) are written by list position, as the lock-step
// kernel writes them (ranges.cu maps them back by the slots in hi_slot),
// and by slot into slot_sizes and slot_offsets where asked.
//
// The second walk stores the pairs, from the first leaf again (read moments
// before: an L1 or L2 hit), through a ring of kRangeRing pairs per warp in
// shared memory: a thread's own stores would be 4-byte stores to as many
// sectors as lanes (its neighbours' ranges start 8 pairs apart), each its
// own L2 write; the warp's ranges are contiguous, so the warp stores
// coalesced runs of consecutive pairs instead. Each step every lane puts the pairs of its current
// leaf that fall in the ring's window [F, F + kRangeRing) into the ring
// (position p at p mod kRangeRing; a lane whose next pair lies past the
// window waits) and moves to its next leaf when it has put them all; then
// the warp stores [F, the smallest position a lane has still to put),
// coalesced, and the window moves there. The lane holding that position
// always puts at least one pair or finishes a leaf, so every step makes
// progress.
//
// A block whose output would end past `room` pairs stores none: the host
// reads the cursor, makes room for all and runs the list again (nothing
// changes the tree in between).
inline constexpr uint32_t kRangeRing = 256;  // pairs per warp: 2 KiB, 16 KiB per block (u64: 4 and 32 KiB)
static_assert((kRangeRing & (kRangeRing - 1)) == 0, "the ring is indexed modulo its size");

__device__ __forceinline__ unsigned long long warp_min_u64(unsigned long long v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = min(v, __shfl_xor_sync(kFullMask, v, d));
  return v;
}

// A (key, value) pair in the ring: two words of the tree's width.
template <class Word>
struct RingPairOf {
  using type = uint2;
};
template <>
struct RingPairOf<uint64_t> {
  using type = ulonglong2;
};

template <class Word>
__global__ void __launch_bounds__(kBlock)
    point_range_kernel(TreeRef<Word> tree, OpsRef<Word> ops, unsigned long long* cursor, uint64_t room) {
  using RingPair = typename RingPairOf<Word>::type;
  using Scan = cub::BlockScan<unsigned long long, kBlock>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ unsigned long long block_base;
  __shared__ RingPair rings[kBlock / kWarpSize][kRangeRing];  // (key, value)
  const uint64_t pos = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool mine = pos < ops.n;
  Word k = 0, hi = 0;
  if (mine) {
    k = ops.keys[pos];
    hi = hs_hi(ops.hi_slot[pos]);
  }
  const auto read = readonly_reader(tree);
  uint32_t leaf = kNil;
  uint64_t count = 0;
  bool ok = true;
  if (mine && k <= hi) {  // else an empty range
    Word w[kNodeWords], meta;
    ok = descend_to_leaf(tree, k, w, meta, leaf, read) &&
         walk_range(tree, k, hi, w, meta, read, false, nullptr, nullptr, 0, count);
    if (!ok) {
      atomicExch(&tree.hdr->error, 1ull);
      count = 0;
    }
  }
  unsigned long long offset = 0, block_total = 0;
  Scan(scan).ExclusiveSum(static_cast<unsigned long long>(count), offset, block_total);
  if (threadIdx.x == 0) block_base = block_total > 0 ? atomicAdd(cursor, block_total) : 0ull;
  __syncthreads();
  offset += block_base;
  if (mine) {
    ops.value[pos] = static_cast<Word>(count);
    ops.range_offset[pos] = offset;
    if (ops.slot_sizes || ops.slot_offsets) {
      const uint32_t slot = hs_slot(ops.hi_slot[pos]);  // unsorted lists: the position
      if (ops.slot_sizes) ops.slot_sizes[slot] = count;
      if (ops.slot_offsets) ops.slot_offsets[slot] = offset;
    }
  }
  if (block_total == 0 || block_base + block_total > room) return;  // the same for the whole block

  // The second walk, through the warp's ring (every lane of the warp takes
  // part, those without pairs too).
  const unsigned lane = lane_id();
  RingPair* ring = rings[warp_in_block()];
  const uint64_t end = __shfl_sync(kFullMask, offset + count, kWarpSize - 1);  // the warp's output: [F, end)
  uint64_t window = __shfl_sync(kFullMask, offset, 0);                         // F
  bool active = count > 0;
  uint64_t next = offset;  // the next position this lane has to put
  uint64_t base = offset;  // the position of the current leaf's first pair in the range
  Word w[kNodeWords], meta = 0;
  int a = 0, b = 0;        // the current leaf's pairs in the range: [a, b)
  uint64_t steps = 0;
  auto enter = [&]() {     // the leaf just read
    const int cnt = static_cast<int>(meta_count(meta));
    a = keys_below(w, cnt, k, true);
    b = keys_below(w, cnt, hi, false);
  };
  if (active) {
    read(leaf, w, meta);
    enter();
  }
  for (;;) {
    if (active && next < window + kRangeRing) {  // else this lane's next pair lies past the window
      // Pairs i in [i0, i1) of this leaf go to positions base + (i - a)
      // (base <= next < stop: a lane's position never moves back).
      const uint64_t leaf_end = base + static_cast<uint64_t>(b - a);
      const uint64_t stop = min(leaf_end, window + kRangeRing);
      const int i0 = a + static_cast<int>(next - base), i1 = a + static_cast<int>(stop - base);
      const uint32_t at = static_cast<uint32_t>(base) - static_cast<uint32_t>(a);  // ring index of pair 0, mod 2^32
#pragma unroll
      for (int i = 0; i < kCapacity; ++i)
        if (i >= i0 && i < i1) ring[(at + static_cast<uint32_t>(i)) & (kRangeRing - 1)] = RingPair{w[2 * i], w[2 * i + 1]};
      next = stop;
      if (next == leaf_end) {  // this leaf is done
        if (w[kLinkWord] == kNil || hi < w[kHighWord]) {
          active = false;
        } else if (++steps > tree.capacity) {  // a cycle: a corrupt tree (the count walk would have said so)
          atomicExch(&tree.hdr->error, 1ull);
          active = false;
        } else {
          read(static_cast<uint32_t>(w[kLinkWord]), w, meta);
          enter();
          base = leaf_end;
        }
      }
    }
    const uint64_t frontier = warp_min_u64(active ? next : end);
    __syncwarp();  // the ring's puts before the stores that read them
    for (uint64_t p = window + lane; p < frontier; p += kWarpSize) {
      const RingPair v = ring[static_cast<uint32_t>(p) & (kRangeRing - 1)];
      __stcs(ops.range_keys + p, static_cast<Word>(v.x));  // streaming: the output is not read again on the device
      __stcs(ops.range_values + p, static_cast<Word>(v.y));
    }
    __syncwarp();  // the stores' reads before the next step's puts
    window = frontier;
    if (window >= end) break;
  }
}

}  // namespace

template <class Word>
void launch_point_ranges(const TreeRef<Word>& tree, const OpsRef<Word>& ops, unsigned long long* cursor, uint64_t room,
                         cudaStream_t stream) {
  if (ops.n == 0) return;
  if (ops.stride != 1 || ops.start != 0 || ops.hi_slot == nullptr || ops.range_cap != nullptr)
    throw RuntimeFailure("btree: point ranges need a whole list of stride 1 and its (hi, slot) words");
  point_range_kernel<<<blocks_for(ops.n, kBlock), kBlock, 0, stream>>>(tree, ops, cursor, room);
  GPUDICT_CHECK_LAUNCH("btree point_range_kernel");
}

template <class Word>
QueryGrid query_grid(int qtile, uint8_t type, uint64_t n) {
  switch (qtile) {
    case 4: return grid_g<Word, 4>(type, n);
    case 8: return grid_g<Word, 8>(type, n);
    default: throw InputError("btree: query tile of " + std::to_string(qtile) + " lanes is not built");
  }
}

template <class Word>
void launch_queries(int qtile, const TreeRef<Word>& tree, const OpsRef<Word>& ops, cudaStream_t stream) {
  if (ops.n == 0) return;
  // A concurrent range's bounded slot (range_cap) is the operations kernel's business.
  if (ops.range_cap != nullptr) throw RuntimeFailure("btree: the lock-step query kernel writes unbounded ranges only");
  // Tile i serves list positions [i per_tile, (i + 1) per_tile) and stores
  // its range stream in a region of its own (query_kernel.cuh, "Range output").
  if (ops.type == kRange &&
      (ops.stride != 1 || ops.start != 0 || ops.tile_lines == nullptr || ops.hi_slot == nullptr))
    throw RuntimeFailure("btree: lock-step ranges need a whole list of stride 1, its (hi, slot) words and their output lines");
  switch (qtile) {
    case 1: launch_points(tree, ops, stream); break;
    case 4: launch_queries_g<Word, 4>(tree, ops, stream); break;
    case 8: launch_queries_g<Word, 8>(tree, ops, stream); break;
    default: throw InputError("btree: query tile of " + std::to_string(qtile) + " lanes is not built");
  }
}

#define GPUDICT_BTREE_QUERY_LAUNCHES(Word)                                                                       \
  template void launch_point_ranges<Word>(const TreeRef<Word>&, const OpsRef<Word>&, unsigned long long*,       \
                                          uint64_t, cudaStream_t);                                              \
  template QueryGrid query_grid<Word>(int, uint8_t, uint64_t);                                                  \
  template void launch_queries<Word>(int, const TreeRef<Word>&, const OpsRef<Word>&, cudaStream_t);
GPUDICT_BTREE_QUERY_LAUNCHES(uint32_t)
GPUDICT_BTREE_QUERY_LAUNCHES(uint64_t)
#undef GPUDICT_BTREE_QUERY_LAUNCHES

}  // namespace gpudict::btree
