// The lookup filter of an LSM level: a blocked Bloom filter per segment of
// the level's fence top, so that a lookup can skip a level that cannot hold
// its key without reading the level's fence windows and key line.
//
// Why per top segment: a lookup binary searches each level's top (shared
// memory) anyway, and c = the top entries < k places k's records, if any,
// in positions [(c-1) S, c S) of the level (S = the top's stride), unless k
// equals the top entry c itself, which the kernel sees in the top. So the
// filter needs only the keys of that segment: it is partitioned by position,
// not by key, which keeps it uniform for any key distribution, and a block
// builds a whole tile of segments in shared memory from contiguous keys
// (one streaming read of the keys, one write of the filter).
//
// Layout: 8 bits per position (1 byte per key); segment s owns words
// [s W, (s + 1) W), W = S / 4 words; a key sets kFilterBits bits of one
// word, the word and the bits chosen by two mixes of the key
// (core/common/mix32.cuh). A u64 key is first folded to 32 bits from all
// 64 (filter_key): keys that agree in their low half still differ in the
// word and bits they choose. At either width the filter has 8 bits per key. False positive rate about 4% at random keys (tests/gpu/test_lsm_filter.cu); a
// false positive costs the level's search that the filter would have
// skipped, never a wrong answer.
//
// Which levels get one (wants_lookup_filter, level.cuh): a filter pays where it
// lets a lookup skip a level it would otherwise search. So none for a level
// of at most kLevelTopMax keys (the top is the whole level: its search costs
// no more than a probe), none for the largest level of a list and none for
// the levels of build() and cleanup() (disjoint key ranges: at most one of
// them is searched): there a probe could save a miss one search and would
// cost every hit a probe on top of its search (docs/lsm.md, "Lookup
// filters", says what was measured).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/mix32.cuh"
#include "core/sorted_array/detail/layout.cuh"

namespace gpudict::lsm {

inline constexpr uint32_t kFilterKeysPerWord = 4;  // 8 bits per key
inline constexpr int kFilterBits = 4;               // bits a key sets in its word

// The 32 bits the filter hashes of a key: a u32 key itself; a u64 key's low
// half xor a mix of its high half (every one of the 64 bits counts).
__host__ __device__ __forceinline__ uint32_t filter_key(uint32_t k) { return k; }
__host__ __device__ __forceinline__ uint32_t filter_key(uint64_t k) {
  return static_cast<uint32_t>(k) ^ mix32(static_cast<uint32_t>(k >> 32) ^ 0x85EBCA6Bu);
}

// The word of segment `seg` that key k maps to (W = 1 << wps_shift words per
// segment; k: filter_key of the key).
__host__ __device__ inline uint32_t filter_word(uint32_t seg, uint32_t wps_shift, uint32_t k) {
  return (seg << wps_shift) + (mix32(k) & ((1u << wps_shift) - 1u));
}

// The kFilterBits bits key k sets in its word (from a second hash of the key).
__host__ __device__ inline uint32_t filter_mask(uint32_t k) {
  const uint32_t g = mix32(k ^ 0x9e3779b9u);
  uint32_t m = 0;
#pragma unroll
  for (int i = 0; i < kFilterBits; ++i) m |= 1u << ((g >> (5 * i)) & 31u);
  return m;
}

// log2 of the top's stride (32^(levels - 1)); 0 for a level that is its own
// top (no filter).
inline uint32_t filter_segment_shift(const sa::FenceLayout& f) {
  return static_cast<uint32_t>(5 * (f.levels - 1));
}

// Words of the filter of n positions in segments of 2^seg_shift (seg_shift
// >= 5): whole segments of S / 4 words each.
__host__ __device__ inline uint64_t filter_words(uint64_t n, uint32_t seg_shift) {
  return ((n + (1ull << seg_shift) - 1) >> seg_shift) << (seg_shift - 2);
}

// Words of the filter of a level of this layout (0: a level that is its own top).
inline uint64_t filter_words(const sa::FenceLayout& f) {
  const uint32_t shift = filter_segment_shift(f);
  return shift == 0 ? 0 : filter_words(f.size[0], shift);
}

// Whether a filter built from the keys of segment `seg` may contain key.
template <class K>
__device__ __forceinline__ bool filter_may_contain(const uint32_t* filter, uint32_t seg_shift, uint32_t seg,
                                                   K key) {
  const uint32_t k = filter_key(key);
  const uint32_t w = __ldg(filter + filter_word(seg, seg_shift - 2, k));
  const uint32_t m = filter_mask(k);
  return (w & m) == m;
}

// One level's filter to build: its sorted keys [0, n) into `words`.
template <class K>
struct FilterBuild {
  const K* keys;
  uint32_t* words;
  uint64_t n;
  uint32_t seg_shift;  // filter_segment_shift(layout), >= 5
};

// Builds the filters of `count` levels (count <= 32) in one launch on
// `stream` (plus a memset for levels whose segments exceed a block's tile).
template <class K>
void build_level_filters(const FilterBuild<K>* levels, int count, cudaStream_t stream);

}  // namespace gpudict::lsm
