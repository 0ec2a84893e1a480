// Device layout of one sorted array: keys and values (SoA, sorted by key,
// unique keys) plus the fence levels of its search index. Shared by the live
// array, the ping-pong buffer and every snapshot.
//
// Fence index: level 0 is the key array; level l+1 holds every 32nd entry of
// level l (L[l+1][i] = L[l][32 i]); levels are added until the top one has at
// most kTopMax entries. Every level is padded to a multiple of 32 entries (one
// 128-byte line for u32 keys, two for u64) so a search can always load a whole
// aligned 32-entry window; padding is zero and never counted (bounds, not
// sentinels), so every key of either width, 0 and the largest included, is an
// ordinary key.
//
// The fanout is 32 at both key widths (not 128 bytes / sizeof(K) = 16 for u64
// keys): a level's window is one warp-instruction's load either way (8 lanes
// x 16 B for u32, 16 lanes x 16 B for u64, search_index.cuh), so the 256-byte
// u64 window costs the search no extra dependent load, while fanout 16 would
// add a level (one more dependent load per search) from 2^17 keys on and
// change the index geometry the LSM's level tops and filters are built on.
//
// Word width and the memory model: no kernel here (or in the LSM, which
// shares this layout) reads a key or value while another thread of the same
// launch may write it; kernels hand arrays to each other in stream order. So
// a 64-bit key or value needs no single-copy-atomicity argument, and none of
// the code relies on a pair of 32-bit halves being written together.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/common/device_buffer.hpp"

namespace gpudict::sa {

inline constexpr uint32_t kFanout = 32;     // entries per window (one aligned line for u32, two for u64)
inline constexpr uint32_t kTopMax = 4096;   // largest top level (searched in shared memory)
// The sorted array's largest top for keys of type K: 16 KiB of shared memory
// per search block at both widths (4096 u32 keys, 2048 u64 keys), so the
// search kernel keeps its 8 blocks per SM. For u64 keys a top of 2048 instead
// of 4096 adds a level only where the would-be top has 2049..4096 entries.
template <class K>
inline constexpr uint64_t kTopMaxOf = kTopMax * sizeof(uint32_t) / sizeof(K);
inline constexpr int kMaxLevels = 8;        // levels incl. level 0; 5 suffice for 2^31 keys
// Positions are u32 and the merge keys 2*pos+1: stay below 2^31.
inline constexpr uint64_t kMaxKeys = (1ull << 31) - (1ull << 16);

inline constexpr uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }
inline constexpr uint64_t div_up(uint64_t x, uint64_t m) { return (x + m - 1) / m; }

// Level 1 of the fence index holds every kFanout-th key of level 0: whoever
// writes the key at position o of a level also writes its fence.
template <class K>
__host__ __device__ __forceinline__ void put_fence(K* fences, uint64_t o, K key) {
  if ((o & (kFanout - 1)) == 0) fences[o / kFanout] = key;
}

// Level sizes and where levels >= 1 sit in the fence buffer (entries).
struct FenceLayout {
  int levels = 1;                  // including level 0; the top level is levels - 1
  uint64_t size[kMaxLevels] = {};  // entries of each level
  uint64_t offset[kMaxLevels] = {};  // offset of level l >= 1 in the fence buffer
  uint64_t fence_entries = 0;      // fence buffer entries needed (levels >= 1, padded)

  // Levels are added until the top has at most top_max keys (the LSM asks
  // for smaller tops, so that several levels' tops fit in shared memory).
  static FenceLayout for_size(uint64_t n, uint64_t top_max = kTopMax) {
    FenceLayout f;
    f.size[0] = n;
    while (f.size[f.levels - 1] > top_max && f.levels < kMaxLevels) {
      f.size[f.levels] = div_up(f.size[f.levels - 1], kFanout);
      ++f.levels;
    }
    uint64_t off = 0;
    for (int l = 1; l < f.levels; ++l) {
      f.offset[l] = off;
      off += round_up(f.size[l], kFanout);
    }
    f.fence_entries = off;
    return f;
  }
  int top() const { return levels - 1; }
};

// What a search needs, passed to kernels by value (__grid_constant__).
template <class K>
struct SearchView {
  const K* level[kMaxLevels];
  uint32_t size[kMaxLevels];
  int top;
};

template <class K, class V>
struct ArrayView {
  SearchView<K> ix;
  const V* values;
  __host__ __device__ uint32_t n() const { return ix.size[0]; }
  __host__ __device__ const K* keys() const { return ix.level[0]; }
};

// Device storage of one sorted array. Key capacity is a multiple of 32 (the
// search reads whole windows); the fence buffer holds levels >= 1.
template <class K, class V>
struct ArrayStore {
  DeviceBuffer<K> keys;
  DeviceBuffer<V> values;
  DeviceBuffer<K> fences;
  uint64_t n = 0;
  FenceLayout layout = FenceLayout::for_size(0);

  ArrayView<K, V> view() const {
    ArrayView<K, V> v{};
    v.values = values.data();
    v.ix.top = layout.top();
    for (int l = 0; l < kMaxLevels; ++l) {
      v.ix.level[l] = nullptr;
      v.ix.size[l] = 0;
    }
    v.ix.level[0] = keys.data();
    v.ix.size[0] = static_cast<uint32_t>(n);
    for (int l = 1; l < layout.levels; ++l) {
      v.ix.level[l] = fences.data() + layout.offset[l];
      v.ix.size[l] = static_cast<uint32_t>(layout.size[l]);
    }
    return v;
  }
  uint64_t bytes() const { return keys.bytes() + values.bytes() + fences.bytes(); }
  uint64_t capacity() const { return keys.capacity(); }

  // Room for `n_keys` keys and values; contents discarded when it grows.
  // `slack`: grow geometrically (x1.5) instead of to the exact size.
  void reserve_pairs(uint64_t n_keys, bool slack) {
    uint64_t need = round_up(n_keys, kFanout);
    if (need == 0 || need <= keys.capacity()) return;
    if (slack) need = round_up(std::max<uint64_t>(need, keys.capacity() + keys.capacity() / 2), kFanout);
    keys.reserve_discard(need, "sorted-array keys");
    values.reserve_discard(need, "sorted-array values");
  }
  // Room for the fence levels of any size up to `n_keys` (tops of at most
  // kTopMaxOf<K>), and for the level-1 fences that the merge writes (ceil(n/32)
  // entries).
  void reserve_fences(uint64_t n_keys, bool slack) {
    const FenceLayout f = FenceLayout::for_size(n_keys, kTopMaxOf<K>);
    uint64_t need = std::max<uint64_t>(f.fence_entries, round_up(div_up(n_keys, kFanout), kFanout));
    if (need == 0 || need <= fences.capacity()) return;
    if (slack) need = round_up(std::max<uint64_t>(need, fences.capacity() + fences.capacity() / 2), kFanout);
    fences.reserve_discard(need, "sorted-array fence index");
  }
  void swap(ArrayStore& o) noexcept {
    keys.swap(o.keys);
    values.swap(o.values);
    fences.swap(o.fences);
    std::swap(n, o.n);
    std::swap(layout, o.layout);
  }
};

}  // namespace gpudict::sa
