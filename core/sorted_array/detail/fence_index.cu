// Building the fence levels (search_index.cuh): one gather kernel for all
// levels of one or several arrays at once, plus the zero padding of every
// level.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"
#include "core/sorted_array/detail/search_index.cuh"

namespace gpudict::sa {

namespace {

// Per store: the key array's padding and each fence level (<= kMaxLevels);
// a job of several stores that needs more runs as several launches.
constexpr int kMaxSegments = 4 * kMaxLevels;

// Segment s: dst[i] = src[i * stride] for i < count, 0 for count <= i < length.
template <class K>
struct FenceJob {
  K* dst[kMaxSegments];
  const K* src[kMaxSegments];
  uint64_t stride[kMaxSegments];
  uint64_t count[kMaxSegments];
  uint64_t begin[kMaxSegments + 1];  // prefix of the lengths
  int segments;
};

template <class K>
__global__ void fence_gather_kernel(const __grid_constant__ FenceJob<K> job) {
  const uint64_t total = job.begin[job.segments];
  for (uint64_t g = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < total;
       g += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    int s = 0;
    while (g >= job.begin[s + 1]) ++s;
    const uint64_t i = g - job.begin[s];
    job.dst[s][i] = i < job.count[s] ? job.src[s][i * job.stride[s]] : K(0);
  }
}

template <class K>
void launch_fence_job(FenceJob<K>& job, int segments, uint64_t total, cudaStream_t stream) {
  job.begin[segments] = total;
  job.segments = segments;
  if (total == 0) return;
  const unsigned grid = blocks_for(total, 256, 4096);
  fence_gather_kernel<K><<<grid, 256, 0, stream>>>(job);
  GPUDICT_CHECK_LAUNCH("fence_gather_kernel");
}

}  // namespace

template <class K, class V>
void build_fence_levels(ArrayStore<K, V>* const* stores, int count, int from_level, cudaStream_t stream) {
  FenceJob<K> job{};
  int s = 0;
  uint64_t total = 0;
  auto add = [&](K* dst, const K* src, uint64_t stride, uint64_t copied, uint64_t length) {
    if (length == 0) return;
    if (s == kMaxSegments) {
      launch_fence_job(job, s, total, stream);
      job = FenceJob<K>{};
      s = 0;
      total = 0;
    }
    job.dst[s] = dst;
    job.src[s] = src;
    job.stride[s] = stride;
    job.count[s] = copied;
    job.begin[s] = total;
    total += length;
    ++s;
  };
  for (int a = 0; a < count; ++a) {
    ArrayStore<K, V>& st = *stores[a];
    const FenceLayout& f = st.layout;
    // Key array padding up to its 32-entry line.
    add(st.keys.data() + st.n, nullptr, 0, 0, round_up(st.n, kFanout) - st.n);
    const K* src = from_level == 0 ? st.keys.data() : st.fences.data() + f.offset[from_level];
    for (int l = 1; l < f.levels; ++l) {
      K* dst = st.fences.data() + f.offset[l];
      const uint64_t padded = round_up(f.size[l], kFanout);
      if (l <= from_level) {
        add(dst + f.size[l], nullptr, 0, 0, padded - f.size[l]);  // written already: padding only
      } else {
        uint64_t stride = 1;
        for (int k = from_level; k < l; ++k) stride *= kFanout;
        add(dst, src, stride, f.size[l], padded);
      }
    }
  }
  launch_fence_job(job, s, total, stream);
}

template <class K, class V>
void build_fence_levels(ArrayStore<K, V>& st, int from_level, cudaStream_t stream) {
  ArrayStore<K, V>* one = &st;
  build_fence_levels(&one, 1, from_level, stream);
}

// Every (key, value) pair an ArrayStore is used with: the sorted array's and
// the LSM's three, and u64 keys with u32 values (an index over u64 keys whose
// values are positions, as the B-Tree's leaf directory).
#define GPUDICT_FENCE_LEVELS(K, V)                                                            \
  template void build_fence_levels<K, V>(ArrayStore<K, V>* const*, int, int, cudaStream_t); \
  template void build_fence_levels<K, V>(ArrayStore<K, V>&, int, cudaStream_t);
GPUDICT_FENCE_LEVELS(uint32_t, uint32_t)
GPUDICT_FENCE_LEVELS(uint32_t, uint64_t)
GPUDICT_FENCE_LEVELS(uint64_t, uint32_t)
GPUDICT_FENCE_LEVELS(uint64_t, uint64_t)
#undef GPUDICT_FENCE_LEVELS

}  // namespace gpudict::sa
