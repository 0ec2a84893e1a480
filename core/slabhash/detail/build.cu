// The map build's "later duplicate wins" fix-up: after the concurrent bulk
// insertion, keys that appear several times in the initial contents hold one
// of their values (any); the last occurrence's pair is re-inserted, which for
// a present key is a REPLACE. This kernel picks those pairs from the initial
// pairs sorted by (key, index) (a stable radix sort by key).
#include "core/common/cuda_check.hpp"
#include "core/common/grid.cuh"
#include "core/slabhash/detail/kernels.cuh"

namespace gpudict::slabhash {

namespace {

constexpr int kThreads = 256;

template <class K, class V>
__global__ void __launch_bounds__(kThreads)
    last_of_runs_kernel(const K* __restrict__ keys, const uint32_t* __restrict__ index, const V* __restrict__ values,
                        uint64_t n, K* __restrict__ out_keys, V* __restrict__ out_values, unsigned long long* count) {
  for (uint64_t p = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    // Within a run of equal keys the stable sort kept the input order, so
    // the run's last element is the key's last occurrence.
    if (p + 1 < n && keys[p + 1] == keys[p]) continue;
    // Only keys that occur more than once need the fix-up.
    if (p == 0 || keys[p - 1] != keys[p]) continue;
    const unsigned long long slot = atomicAdd(count, 1ull);
    out_keys[slot] = keys[p];
    out_values[slot] = values[index[p]];
  }
}

__global__ void __launch_bounds__(kThreads) iota_kernel(uint32_t* out, uint64_t n) {
  for (uint64_t p = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < n;
       p += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    out[p] = static_cast<uint32_t>(p);
}

}  // namespace

void launch_iota(uint32_t* out, uint64_t n, cudaStream_t stream) {
  if (n == 0) return;
  iota_kernel<<<blocks_for(n, kThreads, 65535), kThreads, 0, stream>>>(out, n);
  GPUDICT_CHECK_LAUNCH("slabhash iota kernel");
}

template <class K, class V>
void launch_last_of_runs(const K* sorted_keys, const uint32_t* sorted_index, const V* values, uint64_t n, K* out_keys,
                         V* out_values, unsigned long long* count, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned grid = blocks_for(n, kThreads, 65535);
  last_of_runs_kernel<K, V><<<grid, kThreads, 0, stream>>>(sorted_keys, sorted_index, values, n, out_keys,
                                                           out_values, count);
  GPUDICT_CHECK_LAUNCH("slabhash last_of_runs kernel");
}

#define GPUDICT_SLABHASH_LAST_OF_RUNS(K, V)                                                                    \
  template void launch_last_of_runs<K, V>(const K*, const uint32_t*, const V*, uint64_t, K*, V*, unsigned long long*, \
                                          cudaStream_t);
GPUDICT_SLABHASH_LAST_OF_RUNS(uint32_t, uint32_t)
GPUDICT_SLABHASH_LAST_OF_RUNS(uint32_t, uint64_t)
GPUDICT_SLABHASH_LAST_OF_RUNS(uint64_t, uint64_t)
#undef GPUDICT_SLABHASH_LAST_OF_RUNS

}  // namespace gpudict::slabhash
