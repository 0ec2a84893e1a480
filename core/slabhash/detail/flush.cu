// FLUSH (the slab hash paper, IV-C4): compact every chain into the fewest
// slabs and return the emptied slabs to SlabAlloc. One tile per bucket; the
// kernel runs alone on the table (no concurrent operation can see a chain
// half compacted), so plain loads and stores suffice; the bitmap bits are
// cleared with atomics because tiles of different buckets share bitmap words.
//
// Per chain: a read cursor walks the slabs in chain order; the alive pairs
// go, in the same order, to a write cursor (slab w, w_fill slots used) that
// never passes the read cursor (in-place compaction). Afterwards the last
// written slab gets empty slots after its pairs, an all-alive state and a null
// next; every slab after it is made pristine (all 0xFF) and freed. Result:
// every slab but the last full, no tombstones, the empty slots a suffix.
#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/slabhash/detail/kernels.cuh"
#include "core/slabhash/detail/tile_ops.cuh"

namespace gpudict::slabhash {

namespace {

constexpr int kFlushThreads = 256;

__device__ __forceinline__ LaneWords load_plain(const Slab* s, unsigned tl) {
  const uint4 a = reinterpret_cast<const uint4*>(s->w)[2 * tl];
  const uint4 b = reinterpret_cast<const uint4*>(s->w)[2 * tl + 1];
  return {{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
}

template <class L>
__global__ void __launch_bounds__(kFlushThreads)
    flush_kernel(const __grid_constant__ TableRef<typename L::Key> t, unsigned long long* live_out) {
  using K = typename L::Key;
  using V = typename L::Value;
  const unsigned lane = lane_id();
  const unsigned tl = lane & (kTile - 1);
  const unsigned tbase = lane & ~(kTile - 1);
  const unsigned tmask = group_mask<kTile>(lane);
  const uint64_t tiles = static_cast<uint64_t>(gridDim.x) * blockDim.x / kTile;
  const uint64_t chains = static_cast<uint64_t>(t.buckets) + 1;
  unsigned long long live = 0;

  for (uint64_t b = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kTile; b < chains; b += tiles) {
    Slab* const head = t.base + b;
    Slab* r = head;   // read cursor
    Slab* w = head;   // write cursor
    uint32_t fill = 0;  // slots of w already holding compacted pairs
    for (;;) {
      const LaneWords v = load_plain(r, tl);
      const uint32_t state = tile_state(v, tmask, tbase);
      const uint32_t r_next = tile_next(v, tmask, tbase);
      uint32_t alive = 0;
#pragma unroll
      for (unsigned j = 0; j < L::kPerLane; ++j) {
        const unsigned slot = tl * L::kPerLane + j;
        if (L::valid(tl, j) && L::key(v, j) != kEmptyKeyOf<K> && ((state >> slot) & 1u)) alive |= 1u << j;
      }
      const TileHits<L> h = tile_hits<L>(alive, tl, tmask, tbase);
      // The pairs spill past w only if w is behind r (the pairs read so far
      // cannot outnumber the slots read so far), so w's next is a slab
      // already read and its next word is still the original.
      const bool spill = fill + h.total > L::kSlots;
      Slab* const w_next = spill ? t.pool.slab(w->w[31]) : nullptr;
      // Every lane has read r (possibly w or w_next) before any lane writes.
      __syncwarp(tmask);
#pragma unroll
      for (unsigned j = 0; j < L::kPerLane; ++j) {
        if (!((alive >> j) & 1u)) continue;
        const uint32_t o = fill + h.rank[j];
        if (o < L::kSlots)
          L::put(w, o, L::key(v, j), value_at<L>(v, j));
        else
          L::put(w_next, o - L::kSlots, L::key(v, j), value_at<L>(v, j));
      }
      if (spill) {
        if (tl == 0) w->w[30] = 0xFFFFFFFFu;  // full of alive pairs
        w = w_next;
        fill = fill + h.total - L::kSlots;
      } else {
        fill += h.total;
      }
      if (tl == 0) live += h.total;
      if (r_next == kNullSlab) break;
      r = t.pool.slab(r_next);
    }
    __syncwarp(tmask);
    // w is the last slab with pairs (the head if there are none): empty slots
    // after them, no tombstones, the tail cut off.
#pragma unroll
    for (unsigned j = 0; j < L::kPerLane; ++j) {
      const unsigned slot = tl * L::kPerLane + j;
      if (L::valid(tl, j) && slot >= fill) L::put(w, slot, kEmptyKeyOf<K>, key_max<V>);  // pristine: all ones
    }
    uint32_t tail = 0;
    if (tl == kMetaLane) {
      tail = w->w[31];
      w->w[30] = 0xFFFFFFFFu;
      w->w[31] = kNullSlab;
    }
    tail = __shfl_sync(tmask, tail, tbase + kMetaLane);
    while (tail != kNullSlab) {
      Slab* const f = t.pool.slab(tail);
      const uint32_t next = __shfl_sync(tmask, tl == kMetaLane ? f->w[31] : 0u, tbase + kMetaLane);
      __syncwarp(tmask);  // next is read before the slab is overwritten
      reinterpret_cast<uint4*>(f->w)[2 * tl] = make_uint4(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu);
      reinterpret_cast<uint4*>(f->w)[2 * tl + 1] = make_uint4(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu);
      if (tl == 0) free_slab(t.pool, tail);
      tail = next;
    }
  }
  live = warp_sum(live);
  if (lane == 0 && live) atomicAdd(live_out, live);
}

}  // namespace

template <class K, class V>
void prepare_flush(Mode mode) {
  if (mode == Mode::Set)
    (void)resident_blocks(flush_kernel<LayoutFor<K, V, Mode::Set>>, kFlushThreads, 0);
  else
    (void)resident_blocks(flush_kernel<LayoutFor<K, V, Mode::Map>>, kFlushThreads, 0);
}

namespace {

template <class L>
void launch_flush_of(const TableRef<typename L::Key>& t, unsigned long long* live, cudaStream_t stream) {
  const uint64_t chains = static_cast<uint64_t>(t.buckets) + 1;
  const unsigned grid = persistent_grid(flush_kernel<L>, kFlushThreads, 0, chains, kFlushThreads / kTile);
  flush_kernel<L><<<grid, kFlushThreads, 0, stream>>>(t, live);
}

}  // namespace

template <class K, class V>
void launch_flush(Mode mode, const TableRef<K>& t, unsigned long long* live, cudaStream_t stream) {
  // (map and multimap share a layout)
  if (mode == Mode::Set)
    launch_flush_of<LayoutFor<K, V, Mode::Set>>(t, live, stream);
  else
    launch_flush_of<LayoutFor<K, V, Mode::Map>>(t, live, stream);
  GPUDICT_CHECK_LAUNCH("slabhash flush kernel");
}

#define GPUDICT_SLABHASH_FLUSH(K, V)        \
  template void prepare_flush<K, V>(Mode); \
  template void launch_flush<K, V>(Mode, const TableRef<K>&, unsigned long long*, cudaStream_t);
GPUDICT_SLABHASH_FLUSH(uint32_t, uint32_t)
GPUDICT_SLABHASH_FLUSH(uint32_t, uint64_t)
GPUDICT_SLABHASH_FLUSH(uint64_t, uint64_t)
#undef GPUDICT_SLABHASH_FLUSH

}  // namespace gpudict::slabhash
