// The cleanup's fused merge and compaction (cleanup_tiles.cuh has the
// scheme). A tile is at most kTileSlots staged records (TileGeom); one block of
// kTileThreads threads handles it in six steps:
//
//  1. warp 0 reads the tile's bounds row of every level, slice [a, a + len),
//     and lays the slices out in shared memory with slice m starting at a
//     slot congruent to a (mod 4), so that the slices load as uint4 of keys
//     and u32 of status bytes (narrower loads kept the compaction well
//     below the memory bandwidth), with one slot before each for the key at
//     a - 1;
//  2. keys and status bytes (the place pass: keys and values) are loaded,
//     and the key before each slice: every thread issues its (up to 4) quads
//     and its scalar before storing any, so the loads are in flight together
//     (the kernels are bound by the bytes in flight: one round trip per
//     tile, and a tile as full as the plan allows);
//  3. the records of every slice but the largest find their merged slot,
//        z = own index + sum over the other slices j of
//            (j newer ? #keys <= k : #keys < k),
//     set bit z of a mask and record their staging slot in src[z]; the
//     largest slice's records fill the slots left free, in order, so most
//     records (the largest level dominates) do no search at all;
//  4. a scan of the mask's word popcounts (rank of a set bit);
//  5. each warp walks its range of merged slots: slot z's record is src[z]
//     if its bit is set, else the largest slice's record number
//     z - (set bits before z). It is kept iff it is not a tombstone and the
//     record before it in merged order has another key (slot 0 compares with
//     the records just before the tile: the previous merged record is the
//     largest of them);
//  6. count pass: the tile's kept count, and each warp's kept records'
//     staging slots in merged order (u16, at the warp's 512 entries of the
//     tile's 4096) with their number.
// The place pass runs steps 1-2 only (keys and values, no status bytes: a
// smaller block, so more of them in flight) and writes each warp's listed
// records from shared memory at tile_offset[tile] + (kept records before
// them in the tile), consecutive lanes on consecutive slots, in the level
// that holds the slot, with the level-1 fences. The count pass decided
// every record's fate once, so the slots are exactly the scanned counts.
// (Steps 3-5 are most of the cleanup's kernel time, so the place pass does
// not repeat them. Reading each listed record from its level instead of
// staging the tile's slices - no shared staging, the stale records never
// read - was measured slower.)
#include "core/lsm/detail/cleanup_tiles.cuh"

#include <algorithm>
#include <string>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict::lsm {

namespace {

constexpr int kTileThreads = 256;
constexpr int kTileWarps = kTileThreads / static_cast<int>(kWarpSize);
// Splitters per tile (cleanup_tiles.cuh): a tile of k splitters holds at
// most sum of min(S, size) + (k - 1) S records, and about k S on average, so
// a larger k fills tiles better (k / (k + L - 1) of the bound) at the cost
// of more splitter searches in the partition.
constexpr uint32_t kTileGroup = 8;
// Staging slots a slice may take beyond its records: 1 to 4 before it (the
// key before the slice, and the alignment to its position mod 4) and up to 3
// after (the rounding to quads).
constexpr uint32_t kSliceSlack = 7;
constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

// The tile geometry of a (key, value) pair: 4096 staged records for u32/u32
// (the place pass stages 32 KiB of keys and values); 2048 when a key or a
// value is 8 bytes, so that the place pass's keys and values stay within a
// block's 48 KiB of static shared memory (u32/u64: 24 KiB, u64/u64: 32 KiB;
// the count pass of u64 keys: 16 KiB of keys plus status, slots and mask).
template <class K, class V>
struct TileGeom {
  static constexpr uint32_t kTileSlots = sizeof(K) + sizeof(V) > 8 ? 2048 : 4096;  // staged records (and merged slots) per tile
  static constexpr uint32_t kTileWords = kTileSlots / 32;                            // words of the merged-slot mask
  static constexpr uint32_t kSlotsPerWarp = kTileSlots / kTileWarps;                 // merged slots each warp walks
  static constexpr int kChunksPerWarp = static_cast<int>(kSlotsPerWarp / 32);
  static constexpr int kQuadsPerThread = static_cast<int>(kTileSlots / 4 / kTileThreads);
  static_assert(kTileSlots <= 0x10000u, "staging slots are listed as u16");
  static_assert(kTileWords % kWarpSize == 0 && kTileWords <= static_cast<uint32_t>(kTileThreads),
                "one thread per mask word, whole warps");
  static_assert(kTileSlots % (4 * kTileThreads) == 0, "whole quads per thread");
  static_assert(kChunksPerWarp % 2 == 0, "the walk takes chunks in pairs");
};

// The largest key of the warp (every lane's k). 64-bit keys: a butterfly of
// shuffles (the warp reduction instruction takes 32 bits).
__device__ __forceinline__ uint32_t warp_max_key(uint32_t k) { return __reduce_max_sync(kFullMask, k); }
__device__ __forceinline__ uint64_t warp_max_key(uint64_t k) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) k = max(k, static_cast<uint64_t>(__shfl_xor_sync(kFullMask, k, d)));
  return k;
}

// A tile's slices, their staging layout (step 1) and staged keys, for both passes.
template <class K, class V>
struct SliceShared {
  using G = TileGeom<K, V>;
  alignas(16) K key[G::kTileSlots];  // staged keys: slice m at [off[m], off[m] + len[m]), key[off[m] - 1]
                                         // = the level's key before the slice (if a[m] > 0)
  uint32_t a[kMaxLevels], len[kMaxLevels], off[kMaxLevels], head[kMaxLevels];
  uint32_t qbeg[kMaxLevels + 1];         // quads of the slices before (step 2's work list)
  const K* keys[kMaxLevels];
  const V* values[kMaxLevels];
  const uint8_t* status[kMaxLevels];
  uint32_t nt;   // records in the tile
  uint32_t big;  // the largest slice
  int count;     // levels
};

// The count pass's tile.
template <class K, class V>
struct TileShared : SliceShared<K, V> {
  using G = TileGeom<K, V>;
  static constexpr bool kStatus = true;  // tile_load stages status bytes (else values)
  alignas(16) uint8_t st[G::kTileSlots];    // staged status bytes, same slots
  uint16_t src[G::kTileSlots];              // merged slot -> staging slot (slices but the largest)
  uint32_t mask[G::kTileWords];             // bit z: merged slot z is taken by a slice other than the largest
  uint32_t wpre[G::kTileWords];             // set bits of the mask before word w
  uint32_t word_warp[kTileWarps];        // scan carries
  uint32_t warp_kept[kTileWarps];
  K prev_key;  // key of the merged record just before the tile (if has_prev)
  int has_prev;
};

// The place pass's tile: keys and values staged as by TileShared (steps 1-2).
template <class K, class V>
struct PlaceShared : SliceShared<K, V> {
  using G = TileGeom<K, V>;
  static constexpr bool kStatus = false;
  alignas(16) V value[G::kTileSlots];
};

// Step 1 (warp 0): the tile's slices and their staging layout. Lane m = level rank m.
template <class K, class V>
__device__ void tile_setup(SliceShared<K, V>& sh, const CleanupSource<K, V>& src, const uint32_t* __restrict__ bounds,
                           uint64_t t) {
  using G = TileGeom<K, V>;
  const int L = src.count;
  const unsigned m = lane_id();
  const bool lv = static_cast<int>(m) < L;
  uint32_t a0 = 0, len = 0;
  if (lv) {
    a0 = bounds[t * L + m];
    len = bounds[(t + 1) * L + m] - a0;
    sh.keys[m] = src.keys[m];
    sh.values[m] = src.values[m];
    sh.status[m] = src.status[m];
  }
  const uint32_t head = min(len, (4u - (a0 & 3u)) & 3u);  // scalar records up to the first 16-byte boundary
  const uint32_t quads = (len - head) >> 2;
  // The slice starts 1 to 4 slots into its span: room for the key before it.
  const uint32_t lead = ((a0 - 1u) & 3u) + 1u;
  const uint32_t span = lv ? (lead + len + 3u) & ~3u : 0u;
  const uint32_t span_incl = warp_inclusive_sum(span), quad_incl = warp_inclusive_sum(quads);
  if (lv) {
    sh.a[m] = a0;
    sh.len[m] = len;
    sh.off[m] = span_incl - span + lead;  // slot == position (mod 4): aligned vector copies
    sh.head[m] = head;
    sh.qbeg[m] = quad_incl - quads;
  }
  const uint32_t total_span = __shfl_sync(kFullMask, span_incl, 31);
  const uint32_t nt = warp_sum(len);
  const uint32_t big_key = __reduce_max_sync(kFullMask, lv ? (len << 5) | (31u - m) : 0u);
  const uint32_t total_quads = __shfl_sync(kFullMask, quad_incl, 31);
  if (m == 0) {
    // The plan bounds every tile (sum of min(S, level size) + (k - 1) S +
    // slack); a violation would overrun shared memory: stop with a launch
    // error instead.
    if (total_span > G::kTileSlots) __trap();
    sh.qbeg[L] = total_quads;
    sh.nt = nt;
    sh.big = 31u - (big_key & 31u);
    sh.count = L;
  }
}

// Step 2: the slices' keys, and status bytes (the count pass: Sh::kStatus)
// or values (the place pass), into shared memory. A quad of 8-byte keys or
// values is two 16-byte loads (its position is a multiple of 4: 32-byte
// aligned).
template <class K, class V, class Sh>
__device__ void tile_load(Sh& sh) {
  using G = TileGeom<K, V>;
  constexpr bool kValues = !Sh::kStatus;
  constexpr int KQ = static_cast<int>(sizeof(K) / 4);  // uint4 per quad of keys
  constexpr int VQ = static_cast<int>(sizeof(V) / 4);  // uint4 per quad of values
  const uint32_t total_quads = sh.qbeg[sh.count];
  uint4 kq[G::kQuadsPerThread][KQ];
  uint4 vq[G::kQuadsPerThread][VQ];
  uint32_t sq[G::kQuadsPerThread];
  uint32_t dst[G::kQuadsPerThread];
  int m = 0;
#pragma unroll
  for (int r = 0; r < G::kQuadsPerThread; ++r) {
    const uint32_t g = static_cast<uint32_t>(r) * kTileThreads + threadIdx.x;
    dst[r] = kNoSlot;
#pragma unroll
    for (int h = 0; h < KQ; ++h) kq[r][h] = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int h = 0; h < VQ; ++h) vq[r][h] = make_uint4(0, 0, 0, 0);
    sq[r] = 0;
    if (g < total_quads) {
      while (g >= sh.qbeg[m + 1]) ++m;
      const uint32_t i = sh.head[m] + 4u * (g - sh.qbeg[m]);
      const uint64_t pos = static_cast<uint64_t>(sh.a[m]) + i;  // a multiple of 4: 16-byte aligned
#pragma unroll
      for (int h = 0; h < KQ; ++h) kq[r][h] = reinterpret_cast<const uint4*>(sh.keys[m] + pos)[h];
      if constexpr (kValues) {
#pragma unroll
        for (int h = 0; h < VQ; ++h) vq[r][h] = reinterpret_cast<const uint4*>(sh.values[m] + pos)[h];
      }
      if constexpr (Sh::kStatus) sq[r] = *reinterpret_cast<const uint32_t*>(sh.status[m] + pos);
      dst[r] = sh.off[m] + i;
    }
  }
  // The unaligned ends: thread 8 l + e takes level l's head record e (e < 3),
  // tail record e - 4 (4 <= e < 7; at most 3 of each), or, for e = 7, the
  // key before the slice.
  K sk = 0;
  V sv = 0;
  uint32_t sdst = kNoSlot;
  uint8_t ss = 0;
  {
    const int l = static_cast<int>(threadIdx.x / 8);
    const uint32_t e = threadIdx.x % 8;
    if (l < sh.count) {
      const uint32_t len = sh.len[l], head = sh.head[l];
      const uint32_t tail0 = head + 4u * (sh.qbeg[l + 1] - sh.qbeg[l]);
      uint32_t i = kNoSlot;
      if (e < 3) {
        if (e < head) i = e;
      } else if (e >= 4 && e < 7) {
        if (tail0 + (e - 4) < len) i = tail0 + (e - 4);
      } else if (e == 7 && sh.a[l] > 0) {
        sk = sh.keys[l][sh.a[l] - 1];
        sdst = sh.off[l] - 1;
      }
      if (i != kNoSlot) {
        const uint64_t pos = static_cast<uint64_t>(sh.a[l]) + i;
        sk = sh.keys[l][pos];
        if constexpr (kValues) sv = sh.values[l][pos];
        if constexpr (Sh::kStatus) ss = sh.status[l][pos];
        sdst = sh.off[l] + i;
      }
    }
  }
#pragma unroll
  for (int r = 0; r < G::kQuadsPerThread; ++r) {
    if (dst[r] == kNoSlot) continue;
#pragma unroll
    for (int h = 0; h < KQ; ++h) reinterpret_cast<uint4*>(&sh.key[dst[r]])[h] = kq[r][h];
    if constexpr (kValues) {
#pragma unroll
      for (int h = 0; h < VQ; ++h) reinterpret_cast<uint4*>(&sh.value[dst[r]])[h] = vq[r][h];
    }
    if constexpr (Sh::kStatus) *reinterpret_cast<uint32_t*>(&sh.st[dst[r]]) = sq[r];
  }
  if (sdst != kNoSlot) {
    sh.key[sdst] = sk;
    if constexpr (kValues) sh.value[sdst] = sv;
    if constexpr (Sh::kStatus) sh.st[sdst] = ss;  // (the key before a slice: a slot no record uses)
  }
}

// Warp 0, after the load: the key of the merged record just before the
// tile. The last record of level m before the tile (at a[m] - 1) has, by the
// splitter order, a key <= every key of the tile, and equal to the tile's
// first key iff that key has a record before the tile; the merged record
// just before the tile is the largest of them.
template <class K, class V>
__device__ void tile_before(TileShared<K, V>& sh) {
  const unsigned m = lane_id();
  const bool has = static_cast<int>(m) < sh.count && sh.a[m] > 0;
  const K key = has ? sh.key[sh.off[m] - 1] : K(0);
  const bool any = __any_sync(kFullMask, has);
  const K prev = warp_max_key(key);
  if (m == 0) {
    sh.has_prev = any ? 1 : 0;
    sh.prev_key = prev;
  }
}

// Step 3: merged slots of the records of every slice but the largest.
template <class K, class V>
__device__ void tile_merge_small(TileShared<K, V>& sh) {
  const int L = sh.count;
  const int big = static_cast<int>(sh.big);
  for (int m = 0; m < L; ++m) {
    if (m == big) continue;
    const uint32_t len = sh.len[m], off = sh.off[m];
    for (uint32_t i = threadIdx.x; i < len; i += kTileThreads) {
      const K k = sh.key[off + i];
      uint32_t z = i;
      // Records of a newer level (j < m) precede equal keys, older ones follow.
      for (int j = 0; j < L; ++j)
        if (j != m) z += sa::count_before(sh.key + sh.off[j], sh.len[j], k, j < m);
      // Different records have different slots, but share mask words: the
      // atomic OR keeps every bit (no plain read-modify-write races).
      atomicOr(&sh.mask[z >> 5], 1u << (z & 31));
      sh.src[z] = static_cast<uint16_t>(off + i);
    }
  }
}

// Step 4: wpre[w] = set bits of mask[0, w).
template <class K, class V>
__device__ void tile_mask_scan(TileShared<K, V>& sh) {
  using G = TileGeom<K, V>;
  uint32_t c = 0, incl = 0;
  const unsigned lane = lane_id(), warp = warp_in_block();
  if (threadIdx.x < G::kTileWords) {
    c = __popc(sh.mask[threadIdx.x]);
    incl = warp_inclusive_sum(c);
    if (lane == 31) sh.word_warp[warp] = incl;
  }
  __syncthreads();
  if (threadIdx.x < G::kTileWords) {
    uint32_t base = 0;
    for (unsigned w = 0; w < warp; ++w) base += sh.word_warp[w];
    sh.wpre[threadIdx.x] = base + incl - c;
  }
}

// Steps 1-4 (with the barriers between them).
template <class K, class V>
__device__ void tile_stage_and_merge(TileShared<K, V>& sh, const CleanupSource<K, V>& src,
                                     const uint32_t* __restrict__ bounds, uint64_t t) {
  using G = TileGeom<K, V>;
  if (threadIdx.x < kWarpSize) tile_setup(sh, src, bounds, t);
  for (uint32_t w = threadIdx.x; w < G::kTileWords; w += kTileThreads) sh.mask[w] = 0;
  __syncthreads();
  tile_load<K, V>(sh);
  __syncthreads();
  if (threadIdx.x < kWarpSize) tile_before(sh);  // read by the walk, two barriers on
  tile_merge_small(sh);
  __syncthreads();
  tile_mask_scan(sh);
  __syncthreads();
}

// The staging slot of the record in merged slot z.
template <class K, class V>
__device__ __forceinline__ uint32_t merged_source(const TileShared<K, V>& sh, uint32_t z, uint32_t off_big) {
  const uint32_t w = z >> 5, b = z & 31u;
  const uint32_t word = sh.mask[w];
  if ((word >> b) & 1u) return sh.src[z];
  return off_big + z - (sh.wpre[w] + __popc(word & ((1u << b) - 1u)));
}

// Step 5 for this warp's slots: returns the kept records (every lane) and
// lists their staging slots, in merged order, at list[0, kept). Chunks of 32
// slots go in pairs: the two chains of shared-memory reads (mask, source,
// key) are independent, so a warp waits for one latency per pair.
template <class K, class V>
__device__ uint32_t tile_walk(const TileShared<K, V>& sh, uint16_t* __restrict__ list) {
  using G = TileGeom<K, V>;
  const uint32_t nt = sh.nt;
  const uint32_t off_big = sh.off[sh.big];
  const unsigned lane = lane_id();
  const unsigned below = (1u << lane) - 1u;
  const uint32_t z0 = warp_in_block() * G::kSlotsPerWarp;
  // The merged record before this warp's first slot.
  bool carry_has = false;
  K carry_key = 0;
  if (z0 == 0) {
    carry_has = sh.has_prev != 0;
    carry_key = sh.prev_key;
  } else if (z0 - 1 < nt) {
    carry_has = true;
    carry_key = sh.key[merged_source(sh, z0 - 1, off_big)];
  }
  uint32_t kept = 0;
  for (int c = 0; c < G::kChunksPerWarp; c += 2) {
    const uint32_t zc = z0 + 32u * c;
    if (zc >= nt) break;  // uniform over the warp
    const uint32_t za = zc + lane, zb = za + 32u;
    const bool va = za < nt, vb = zb < nt;
    uint32_t xa = 0, xb = 0;
    K ka = 0, kb = 0;
    uint8_t st_a = kTombstone, st_b = kTombstone;
    if (va) xa = merged_source(sh, za, off_big);
    if (vb) xb = merged_source(sh, zb, off_big);
    if (va) {
      ka = sh.key[xa];
      st_a = sh.st[xa];
    }
    if (vb) {
      kb = sh.key[xb];
      st_b = sh.st[xb];
    }
    const K upa = __shfl_up_sync(kFullMask, ka, 1);
    const K upb = __shfl_up_sync(kFullMask, kb, 1);
    const K last_a = __shfl_sync(kFullMask, ka, 31);  // valid whenever chunk b has a slot
    const K last_b = __shfl_sync(kFullMask, kb, 31);  // valid whenever another pair follows
    const bool dup_a = lane == 0 ? (carry_has && carry_key == ka) : upa == ka;
    const bool dup_b = lane == 0 ? last_a == kb : upb == kb;
    const bool keep_a = va && !(st_a & kTombstone) && !dup_a;
    const bool keep_b = vb && !(st_b & kTombstone) && !dup_b;
    carry_key = last_b;
    carry_has = true;
    const unsigned ba = __ballot_sync(kFullMask, keep_a), bb = __ballot_sync(kFullMask, keep_b);
    if (keep_a) list[kept + __popc(ba & below)] = static_cast<uint16_t>(xa);
    kept += __popc(ba);
    if (keep_b) list[kept + __popc(bb & below)] = static_cast<uint16_t>(xb);
    kept += __popc(bb);
  }
  return kept;
}

// The levels' keys and sizes are their indexes' level 0 (ix.level[0], ix.size[0]).
template <class K>
__global__ void cleanup_partition_kernel(const __grid_constant__ CleanupIndex<K> index,
                                         const __grid_constant__ CleanupPlan plan, int lanes,
                                         uint32_t* __restrict__ bounds) {
  const uint64_t g = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int L = plan.levels;
  const uint64_t s = g / static_cast<uint64_t>(lanes);  // the splitter of this lane group
  const int m = static_cast<int>(g % static_cast<uint64_t>(lanes));  // the level this lane bounds
  const bool valid = s < plan.splitters && m < L;
  uint32_t a = 0;
  if (valid) {
    int l = 0;
    while (s >= plan.first_splitter[l + 1]) ++l;
    const uint64_t q = (s - plan.first_splitter[l] + 1) * plan.spacing;
    const K key = index.ix[l].level[0][q];
    // Level m's records before the splitter (key, l, q): a newer level's
    // equal keys precede it, an older level's follow it.
    a = m == l ? static_cast<uint32_t>(q) : sa::count_before_indexed(index.ix[m], key, m < l);
  }
  // Splitters of level m before this one: those at S, 2S, ... < a. Their
  // sum over the levels is this splitter's rank among all splitters; every
  // k-th splitter (rank k - 1, 2k - 1, ...) starts a tile.
  uint32_t rank = a == 0 ? 0u : (a - 1) / plan.spacing;
  for (int d = lanes >> 1; d > 0; d >>= 1) rank += __shfl_xor_sync(kFullMask, rank, d);
  if (valid && (rank + 1) % kTileGroup == 0) bounds[static_cast<uint64_t>((rank + 1) / kTileGroup) * L + m] = a;
  if (g < static_cast<uint64_t>(L)) {
    bounds[g] = 0;                                   // tile 0 starts at every level's start
    bounds[plan.tiles * L + g] = index.ix[g].size[0];  // the last tile ends at every level's end
  }
}

// The kept list (cleanup_kept_entries): tile t's warp w lists at
// [t kTileSlots + w kSlotsPerWarp, + its count); the counts follow all the
// lists, at tiles kTileSlots + t kTileWarps + w.
template <class G>
__device__ __forceinline__ uint64_t kept_list_at(uint64_t t, unsigned w) {
  return t * G::kTileSlots + w * G::kSlotsPerWarp;
}
template <class G>
__device__ __forceinline__ uint64_t kept_count_at(uint64_t tiles, uint64_t t, unsigned w) {
  return tiles * G::kTileSlots + t * kTileWarps + w;
}

template <class K, class V>
__global__ void __launch_bounds__(kTileThreads)
    cleanup_count_kernel(const __grid_constant__ CleanupSource<K, V> src, const uint32_t* __restrict__ bounds,
                         uint64_t* __restrict__ tile_count, uint16_t* __restrict__ kept_list) {
  using G = TileGeom<K, V>;
  __shared__ TileShared<K, V> sh;
  tile_stage_and_merge(sh, src, bounds, blockIdx.x);
  const unsigned warp = warp_in_block();
  const uint32_t kept = tile_walk(sh, kept_list + kept_list_at<G>(blockIdx.x, warp));
  if (lane_id() == 0) {
    sh.warp_kept[warp] = kept;
    kept_list[kept_count_at<G>(gridDim.x, blockIdx.x, warp)] = static_cast<uint16_t>(kept);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint64_t total = 0;
    for (int w = 0; w < kTileWarps; ++w) total += sh.warp_kept[w];
    tile_count[blockIdx.x] = total;
  }
}

// Each block places one tile's kept records.
template <class K, class V>
__global__ void __launch_bounds__(kTileThreads)
    cleanup_place_kernel(const __grid_constant__ CleanupSource<K, V> src, const uint32_t* __restrict__ bounds,
                         const uint64_t* __restrict__ tile_offset, const uint16_t* __restrict__ kept_list,
                         const __grid_constant__ CleanupTargets<K, V> out) {
  using G = TileGeom<K, V>;
  __shared__ PlaceShared<K, V> sh;
  // The target table in shared memory: indexing the kernel parameter with a
  // run-time index goes through local memory.
  __shared__ uint64_t s_start[kMaxLevels + 1];
  __shared__ K* s_keys[kMaxLevels];
  __shared__ V* s_values[kMaxLevels];
  __shared__ uint8_t* s_status[kMaxLevels];
  __shared__ K* s_fences[kMaxLevels];
  if (threadIdx.x < kMaxLevels) {
    const int l = static_cast<int>(threadIdx.x);
    s_start[l] = l < out.count ? out.start[l] : ~0ull;
    s_keys[l] = out.keys[l];
    s_values[l] = out.values[l];
    s_status[l] = out.status[l];
    s_fences[l] = out.fences[l];
  }
  if (threadIdx.x == 0) s_start[kMaxLevels] = ~0ull;
  if (threadIdx.x < kWarpSize) tile_setup(sh, src, bounds, blockIdx.x);
  __syncthreads();  // also publishes the target table
  tile_load<K, V>(sh);
  __syncthreads();

  const unsigned lane = lane_id(), warp = warp_in_block();
  const uint16_t* counts = kept_list + kept_count_at<G>(gridDim.x, blockIdx.x, 0);
  uint64_t next = tile_offset[blockIdx.x];
  for (unsigned w = 0; w < warp; ++w) next += counts[w];
  const uint32_t kept = counts[warp];
  const uint16_t* list = kept_list + kept_list_at<G>(blockIdx.x, warp);
  int level = 0;
  while (next >= s_start[level + 1]) ++level;
#pragma unroll 4
  for (uint32_t i = lane; i < kept; i += kWarpSize) {
    const uint32_t x = list[i];
    const uint64_t p = next + i;
    while (p >= s_start[level + 1]) ++level;  // slots grow with i: the level only moves up
    const uint64_t o = p - s_start[level];
    const K k = sh.key[x];
    s_keys[level][o] = k;
    s_values[level][o] = sh.value[x];
    s_status[level][o] = 0;
    sa::put_fence(s_fences[level], o, k);
  }
}

unsigned tile_grid(const CleanupPlan& plan) {
  if (plan.tiles > 0x7FFFFFFFull)
    throw RuntimeFailure("lsm cleanup: " + std::to_string(plan.tiles) + " tiles exceed one grid");
  return static_cast<unsigned>(plan.tiles);
}

}  // namespace

template <class K, class V>
CleanupPlan plan_cleanup(const uint64_t* sizes, int count) {
  using G = TileGeom<K, V>;
  CleanupPlan p;
  p.slots = G::kTileSlots;
  p.levels = count;
  if (count <= 0) return p;
  if (count > kMaxLevels) throw RuntimeFailure("lsm cleanup: more than 32 levels");
  const uint64_t cap = G::kTileSlots - kSliceSlack * static_cast<uint64_t>(count);
  // A tile of k splitters (its first one included) holds of each level m at
  // most (j_m + 1) S records and at most its size, where j_m counts the
  // tile's other splitters of level m (sum k - 1): at most
  // sum of min(S, size) + (k - 1) S. The largest S whose bound fits the
  // capacity (S = 1 always does: 32 levels x 8 + 7 <= 2048).
  auto fill = [&](uint64_t s) {
    uint64_t t = (kTileGroup - 1) * s;
    for (int m = 0; m < count; ++m) t += std::min<uint64_t>(s, sizes[m]);
    return t;
  };
  uint64_t lo = 1, hi = cap;
  while (lo < hi) {
    const uint64_t mid = (lo + hi + 1) / 2;
    if (fill(mid) <= cap)
      lo = mid;
    else
      hi = mid - 1;
  }
  p.spacing = static_cast<uint32_t>(lo);
  uint64_t total = 0;
  for (int m = 0; m < count; ++m) {
    if (sizes[m] == 0) throw RuntimeFailure("lsm cleanup: an occupied level of size 0");
    p.first_splitter[m] = total;
    total += (sizes[m] - 1) / lo;  // splitters at S, 2S, ... < size
  }
  for (int m = count; m <= kMaxLevels; ++m) p.first_splitter[m] = total;
  p.splitters = total;
  p.tiles = total / kTileGroup + 1;
  return p;
}

uint64_t cleanup_kept_entries(const CleanupPlan& plan) { return plan.tiles * (plan.slots + kTileWarps); }

uint64_t cleanup_scratch_bytes(const CleanupPlan& plan) {
  return plan.bound_entries() * sizeof(uint32_t) + 2 * (plan.tiles + 1) * sizeof(uint64_t) +
         cleanup_kept_entries(plan) * sizeof(uint16_t);
}

template <class K>
void cleanup_partition(const CleanupIndex<K>& index, const CleanupPlan& plan, uint32_t* bounds, cudaStream_t stream) {
  int lanes = 1;  // per splitter: one per level, a power of two <= 32 (groups never straddle a warp)
  while (lanes < plan.levels) lanes <<= 1;
  const uint64_t threads = std::max<uint64_t>(plan.splitters * static_cast<uint64_t>(lanes), plan.levels);
  cleanup_partition_kernel<K><<<blocks_for(threads, 256), 256, 0, stream>>>(index, plan, lanes, bounds);
  GPUDICT_CHECK_LAUNCH("cleanup_partition_kernel");
}

template <class K, class V>
void cleanup_count(const CleanupSource<K, V>& src, const CleanupPlan& plan, const uint32_t* bounds,
                   uint64_t* tile_count, uint16_t* kept, cudaStream_t stream) {
  if (plan.slots != TileGeom<K, V>::kTileSlots) throw RuntimeFailure("lsm cleanup: a plan of another tile size");
  cleanup_count_kernel<K, V><<<tile_grid(plan), kTileThreads, 0, stream>>>(src, bounds, tile_count, kept);
  GPUDICT_CHECK_LAUNCH("cleanup_count_kernel");
}

template <class K, class V>
void cleanup_place(const CleanupSource<K, V>& src, const CleanupPlan& plan, const uint32_t* bounds,
                   const uint64_t* tile_offset, const uint16_t* kept, const CleanupTargets<K, V>& out, uint64_t u,
                   cudaStream_t stream) {
  if (u == 0 || out.count == 0) return;
  if (plan.slots != TileGeom<K, V>::kTileSlots) throw RuntimeFailure("lsm cleanup: a plan of another tile size");
  const int k = out.count - 1;
  if (out.start[k] + out.n[k] != u)
    throw RuntimeFailure("lsm cleanup: the new levels hold " + std::to_string(out.start[k] + out.n[k]) +
                         " elements, not the " + std::to_string(u) + " kept");
  cleanup_place_kernel<K, V><<<tile_grid(plan), kTileThreads, 0, stream>>>(src, bounds, tile_offset, kept, out);
  GPUDICT_CHECK_LAUNCH("cleanup_place_kernel");
}

#define GPUDICT_LSM_CLEANUP(K, V)                                                                                   \
  template CleanupPlan plan_cleanup<K, V>(const uint64_t*, int);                                                 \
  template void cleanup_count<K, V>(const CleanupSource<K, V>&, const CleanupPlan&, const uint32_t*, uint64_t*,  \
                                    uint16_t*, cudaStream_t);                                                     \
  template void cleanup_place<K, V>(const CleanupSource<K, V>&, const CleanupPlan&, const uint32_t*,             \
                                    const uint64_t*, const uint16_t*, const CleanupTargets<K, V>&, uint64_t,      \
                                    cudaStream_t);
GPUDICT_LSM_CLEANUP(uint32_t, uint32_t)
GPUDICT_LSM_CLEANUP(uint32_t, uint64_t)
GPUDICT_LSM_CLEANUP(uint64_t, uint64_t)
#undef GPUDICT_LSM_CLEANUP
template void cleanup_partition<uint32_t>(const CleanupIndex<uint32_t>&, const CleanupPlan&, uint32_t*, cudaStream_t);
template void cleanup_partition<uint64_t>(const CleanupIndex<uint64_t>&, const CleanupPlan&, uint32_t*, cudaStream_t);

}  // namespace gpudict::lsm
