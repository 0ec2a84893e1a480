// Building the lookup filters of LSM levels (level_filter.cuh): one block per
// tile of kTile positions of a level. A tile covers whole segments when the
// level's segments are at most kTile positions (every level up to 2^25
// keys): the block ORs its keys' bits into shared memory and writes its
// words once, so the build is one streaming read of the keys and one write
// of the filter. Larger segments (levels past 2^25 keys) span several
// tiles: those blocks OR into the zeroed filter in global memory.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/cuda_check.hpp"
#include "core/common/errors.hpp"
#include "core/lsm/detail/level.cuh"
#include "core/lsm/detail/level_filter.cuh"

namespace gpudict::lsm {

namespace {

constexpr uint32_t kTileShift = 15;
constexpr uint32_t kTile = 1u << kTileShift;  // positions per block
constexpr uint32_t kTileWords = kTile / kFilterKeysPerWord;
constexpr int kThreads = 512;

template <class K>
struct FilterJobs {
  FilterBuild<K> level[kMaxLevels];
  uint32_t first_tile[kMaxLevels + 1];  // prefix of the levels' tile counts
};

template <class K>
__global__ void __launch_bounds__(kThreads) filter_build_kernel(const __grid_constant__ FilterJobs<K> jobs) {
  __shared__ uint32_t s_words[kTileWords];
  int j = 0;
  while (blockIdx.x >= jobs.first_tile[j + 1]) ++j;
  const FilterBuild<K>& L = jobs.level[j];
  const uint64_t p0 = static_cast<uint64_t>(blockIdx.x - jobs.first_tile[j]) << kTileShift;
  const uint32_t cnt = static_cast<uint32_t>(min(static_cast<uint64_t>(kTile), L.n - p0));
  const uint32_t wps_shift = L.seg_shift - 2;  // words per segment: S / 4
  const K* keys = L.keys + p0;
  if (L.seg_shift <= kTileShift) {  // block-uniform: whole segments in this tile
    const uint32_t words = static_cast<uint32_t>(filter_words(cnt, L.seg_shift));  // <= kTileWords
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) s_words[i] = 0;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < cnt; i += blockDim.x) {
      const uint32_t k = filter_key(keys[i]);
      atomicOr(&s_words[filter_word(i >> L.seg_shift, wps_shift, k)], filter_mask(k));
    }
    __syncthreads();
    // Segments are contiguous and S / 4 words each, so the tile's words
    // start at p0 / 4.
    uint32_t* out = L.words + (p0 >> 2);
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) out[i] = s_words[i];
  } else {  // one segment spans several tiles: OR into the zeroed global words
    const uint32_t seg = static_cast<uint32_t>(p0 >> L.seg_shift);
    for (uint32_t i = threadIdx.x; i < cnt; i += blockDim.x) {
      const uint32_t k = filter_key(keys[i]);
      atomicOr(&L.words[filter_word(seg, wps_shift, k)], filter_mask(k));
    }
  }
}

}  // namespace

template <class K>
void build_level_filters(const FilterBuild<K>* levels, int count, cudaStream_t stream) {
  if (count <= 0) return;
  if (count > kMaxLevels) throw RuntimeFailure("lsm: more than 32 level filters in one build");
  FilterJobs<K> jobs{};
  uint64_t tiles = 0;
  for (int i = 0; i < count; ++i) {
    const FilterBuild<K>& L = levels[i];
    if (L.seg_shift < 5 || L.n == 0) throw RuntimeFailure("lsm: a filter for a level without fence levels");
    jobs.level[i] = L;
    jobs.first_tile[i] = static_cast<uint32_t>(tiles);
    tiles += (L.n + kTile - 1) >> kTileShift;
    if (L.seg_shift > kTileShift) {
      GPUDICT_CUDA(cudaMemsetAsync(L.words, 0, filter_words(L.n, L.seg_shift) * sizeof(uint32_t), stream));
    }
  }
  jobs.first_tile[count] = static_cast<uint32_t>(tiles);
  filter_build_kernel<K><<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(jobs);
  GPUDICT_CHECK_LAUNCH("filter_build_kernel");
}

template void build_level_filters<uint32_t>(const FilterBuild<uint32_t>*, int, cudaStream_t);
template void build_level_filters<uint64_t>(const FilterBuild<uint64_t>*, int, cudaStream_t);

}  // namespace gpudict::lsm
