// SlabAlloc (the slab hash paper, section V), device side: the pool view
// kernels get and the tile-cooperative allocation and free.
//
// Pool: super blocks of memory blocks of 1024 slabs. Super block 0 holds
// 2^lg0 slabs; super block k >= 1 holds 2^(lg0 + k - 1), so each added super
// block doubles the pool and a 32-bit slab address decodes with one count of
// leading zeros (no search):
//   addresses [0, 2^lg0)                  -> super block 0
//   addresses [2^(lg0+k-1), 2^(lg0+k))    -> super block k
// Memory block g covers addresses [1024 g, 1024 (g + 1)); its bitmap is 32
// words (one per lane of a warp in the paper; 8 per lane of our 4-lane tile),
// bit = 1 while the slab is allocated.
//
// Allocation: each tile keeps a resident memory block and a register copy of
// its bitmap. The lowest lane with a free bit claims it with one atomicOr (the
// common case: one atomic per allocation); a lost race refreshes the copy from
// the atomic's result. A full resident block is replaced by a hashed choice
// (kHashedMoves times), then by a linear sweep over every memory block; if
// the sweep finds nothing the pool is full: the allocation FAILS (returns
// kNullSlab) and raises the pool's `exhausted` flag. It never spins: every
// retry either follows another tile's successful allocation or moves on.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/memory_order.cuh"
#include "core/common/mix32.cuh"
#include "core/slabhash/detail/slab_layout.cuh"

namespace gpudict::slabhash {

inline constexpr uint32_t kBlockSlabs = 1024;  // paper's N_U
inline constexpr uint32_t kBlockWords = kBlockSlabs / 32;
inline constexpr uint32_t kMinLgSuper = 10;    // one memory block
inline constexpr uint32_t kMaxLgTotal = 31;    // 2^31 slabs (256 GiB): no address reaches kNullSlab
inline constexpr uint32_t kMaxSuperBlocks = kMaxLgTotal - kMinLgSuper + 1;
inline constexpr uint32_t kNoBlock = 0xFFFFFFFFu;
inline constexpr uint32_t kHashedMoves = 8;
inline constexpr uint32_t kBitsWordsPerLane = kBlockWords / kTile;  // bitmap words a lane caches

struct PoolRef {
  Slab* slabs[kMaxSuperBlocks];
  uint32_t* bitmaps[kMaxSuperBlocks];
  uint32_t lg0 = kMinLgSuper;
  uint32_t super_blocks = 0;
  uint32_t total_blocks = 0;       // memory blocks in all super blocks
  unsigned int* exhausted = nullptr;  // device flag, raised by a failed allocation

  __device__ __forceinline__ uint32_t super_of(uint32_t addr, uint32_t& offset) const {
    const uint32_t hi = addr >> lg0;
    const uint32_t sb = hi ? 32u - __clz(hi) : 0u;
    offset = sb ? addr - (1u << (lg0 + sb - 1)) : addr;
    return sb;
  }
  __device__ __forceinline__ Slab* slab(uint32_t addr) const {
    uint32_t off;
    const uint32_t sb = super_of(addr, off);
    return slabs[sb] + off;
  }
  __device__ __forceinline__ uint32_t* bitmap_word(uint32_t addr) const {
    uint32_t off;
    const uint32_t sb = super_of(addr, off);
    return bitmaps[sb] + (off >> 5);
  }
  __device__ __forceinline__ uint32_t* block_bitmap(uint32_t block) const { return bitmap_word(block * kBlockSlabs); }
};

// A tile's allocator state, kept in registers for the kernel's lifetime.
struct TileAlloc {
  uint32_t block = kNoBlock;  // resident memory block (tile-uniform)
  uint32_t changes = 0;       // resident changes so far (input of the hashed choice)
  uint32_t bits[kBitsWordsPerLane] = {};  // this lane's words of the resident block's bitmap
};

__device__ __forceinline__ uint32_t hashed_block(uint32_t tile_id, uint32_t changes, uint32_t total) {
  return __umulhi(mix32(tile_id * 0x9E3779B9u + changes * 0x85EBCA6Bu + 0x165667B1u), total);
}

__device__ __forceinline__ void load_bitmap(const PoolRef& p, uint32_t block, unsigned tl,
                                            uint32_t (&bits)[kBitsWordsPerLane]) {
  // relaxed, gpu scope: other SMs change these words with atomics.
  ld_relaxed_gpu_vec<kBitsWordsPerLane>(p.block_bitmap(block) + kBitsWordsPerLane * tl, bits);
}

__device__ __forceinline__ bool pool_exhausted(const PoolRef& p) { return ld_relaxed_gpu(p.exhausted) != 0; }

// Allocates one slab for the calling tile (all its lanes call it together).
// Returns its address, or kNullSlab when the pool is full. The slab is
// pristine (all 0xFF): free slabs always are.
__device__ __forceinline__ uint32_t tile_allocate(TileAlloc& a, const PoolRef& p, uint32_t tile_id, unsigned tl,
                                                  unsigned tmask, unsigned tbase) {
  if (p.total_blocks == 0) return kNullSlab;
  uint32_t moves = 0;
  if (a.block == kNoBlock) {
    a.block = hashed_block(tile_id, a.changes++, p.total_blocks);
    load_bitmap(p, a.block, tl, a.bits);
  }
  for (;;) {
    uint32_t all = 0xFFFFFFFFu;
#pragma unroll
    for (uint32_t q = 0; q < kBitsWordsPerLane; ++q) all &= a.bits[q];
    const bool has = all != 0xFFFFFFFFu;
    const unsigned lanes = tile_ballot(tmask, tbase, has);
    if (lanes) {
      const unsigned owner = __ffs(lanes) - 1;
      uint32_t addr = 0, ok = 0;
      if (tl == owner) {
        // The lowest word with a free bit, with constant indices only (a
        // dynamic index would put the bitmap copy in local memory).
        unsigned j = kBitsWordsPerLane;
        uint32_t word = 0;
#pragma unroll
        for (int q = static_cast<int>(kBitsWordsPerLane) - 1; q >= 0; --q)
          if (a.bits[q] != 0xFFFFFFFFu) {
            j = static_cast<unsigned>(q);
            word = a.bits[q];
          }
        const unsigned b = __ffs(~word) - 1;
        const uint32_t old = atomicOr(p.block_bitmap(a.block) + kBitsWordsPerLane * tl + j, 1u << b);
        ok = (old >> b) & 1u ? 0u : 1u;
        const uint32_t now = old | (1u << b);  // refresh the copy with what others took
#pragma unroll
        for (uint32_t q = 0; q < kBitsWordsPerLane; ++q)
          if (q == j) a.bits[q] = now;
        addr = a.block * kBlockSlabs + (kBitsWordsPerLane * tl + j) * 32 + b;
      }
      ok = __shfl_sync(tmask, ok, tbase + owner);
      addr = __shfl_sync(tmask, addr, tbase + owner);
      if (ok) return addr;
      continue;
    }
    // The resident block is full: move to another one.
    ++moves;
    if (moves > kHashedMoves + p.total_blocks) break;
    // Another tile swept the whole pool and found it full: give up now.
    if (moves > kHashedMoves && pool_exhausted(p)) break;
    a.block = moves <= kHashedMoves ? hashed_block(tile_id, a.changes++, p.total_blocks)
                                    : (a.block + 1 == p.total_blocks ? 0 : a.block + 1);
    load_bitmap(p, a.block, tl, a.bits);
  }
  if (tl == 0) atomicExch(p.exhausted, 1u);
  return kNullSlab;
}

// Returns a pristine slab to the pool: clears its bit. A slab is only freed
// when nobody can reach it (never linked, or unlinked by FLUSH, which runs
// alone), and only in its pristine state.
__device__ __forceinline__ void free_slab(const PoolRef& p, uint32_t addr) {
  atomicAnd(p.bitmap_word(addr), ~(1u << (addr & 31u)));
}

}  // namespace gpudict::slabhash
