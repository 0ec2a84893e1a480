// gpudict_slaballoc_bench: SlabAlloc (the slab hash paper, section V) on its
// own.
// Allocation the way the slab hash uses it: every tile of kTile lanes (a warp
// holds 32 / kTile, persistent grid) takes slabs one at a time; median of CUDA-event
// times over repetitions, each on a pool pre-filled to a given fraction.
// Then the deallocation rate (one atomicAnd per slab) and, for scale, CUDA's
// device malloc of 128 bytes per thread. Every row checks its result: no
// address twice, every address allocated, the bitmaps' count right.
//   gpudict_slaballoc_bench [--log2-pool P] [--log2-allocs A] [--reps R]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/device_info.hpp"
#include "core/common/errors.hpp"
#include "core/common/event_timer.hpp"
#include "core/common/grid.cuh"
#include "core/common/warp.cuh"
#include "core/slabhash/detail/slab_alloc.cuh"
#include "core/slabhash/detail/slab_pool.hpp"
#include "tests/bench/bench_util.hpp"

using namespace gpudict;
using namespace gpudict::slabhash;
using gpudict::bench::median;

namespace {

constexpr int kThreads = 256;

// Tile t takes allocations t, t + T, ... (T tiles in the grid).
__global__ void __launch_bounds__(kThreads)
    alloc_kernel(const __grid_constant__ PoolRef p, uint32_t* out, uint64_t n, unsigned int* fails) {
  const unsigned lane = lane_id(), tl = lane & (kTile - 1), tbase = lane & ~(kTile - 1), tmask = group_mask<kTile>(lane);
  const uint64_t tile = (static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kTile;
  const uint64_t tiles = static_cast<uint64_t>(gridDim.x) * blockDim.x / kTile;
  TileAlloc a;
  for (uint64_t i = tile; i < n; i += tiles) {
    const uint32_t addr = tile_allocate(a, p, static_cast<uint32_t>(tile), tl, tmask, tbase);
    if (tl == 0) {
      out[i] = addr;
      if (addr == kNullSlab) atomicAdd(fails, 1u);
    }
  }
}

__global__ void free_kernel(const __grid_constant__ PoolRef p, const uint32_t* addr, uint64_t n) {
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    free_slab(p, addr[i]);
}

__global__ void malloc_kernel(void** out, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = malloc(128);
}
__global__ void count_null_kernel(void* const* ptrs, uint64_t n, unsigned long long* nulls) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && !ptrs[i]) atomicAdd(nulls, 1ull);
}
__global__ void mfree_kernel(void** ptrs, uint64_t n) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n && ptrs[i]) free(ptrs[i]);
}

int run(int argc, char** argv) {
  int log2_pool = 22, log2_allocs = 20, reps = 5;
  // At least one timed repetition (an untimed warm-up runs first).
  if (!bench::int_options(argc, argv, "gpudict_slaballoc_bench",
                          {{"--log2-pool", 12, 30, &log2_pool}, {"--log2-allocs", 1, 26, &log2_allocs},
                           {"--reps", 1, 1000, &reps}}))
    return 2;
  if (!bench::have_device("gpudict_slaballoc_bench")) return 3;
  select_device(0);
  std::printf("device: %s\n", device_name(0).c_str());
  cudaStream_t s = nullptr;
  GPUDICT_CUDA(cudaStreamCreate(&s));
  EventTimer timer;
  const uint64_t pool_slabs = 1ull << log2_pool;
  DeviceBuffer<unsigned int> flag(2, "flags");
  DeviceBuffer<uint32_t> addr(pool_slabs, "addresses");
  std::vector<uint32_t> host(pool_slabs);
  bool ok = true;
  std::printf("| pool slabs | filled before | allocations | alloc ms | M slabs/s | free ms | M frees/s | check |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (double fill : {0.0, 0.5, 0.9}) {
    const uint64_t pre = static_cast<uint64_t>(fill * static_cast<double>(pool_slabs));
    const uint64_t n = std::min<uint64_t>(1ull << log2_allocs, (pool_slabs - pre) * 9 / 10);
    std::vector<double> ta, tf;
    std::string verdict = "ok";
    for (int r = 0; r < reps + 1; ++r) {
      SlabPool pool;
      pool.create(pool_slabs, s);
      GPUDICT_CUDA(cudaMemsetAsync(flag.data(), 0, 2 * sizeof(unsigned int), s));
      const PoolRef p = pool.ref(flag.data());
      const unsigned grid = persistent_grid(alloc_kernel, kThreads, 0, std::max<uint64_t>(pre, n) * kTile, kThreads);
      if (pre) alloc_kernel<<<grid, kThreads, 0, s>>>(p, addr.data() + n, pre, flag.data() + 1);  // untimed fill
      GPUDICT_CHECK_LAUNCH("alloc_kernel");
      GPUDICT_CUDA(cudaStreamSynchronize(s));
      timer.start(s);
      alloc_kernel<<<grid, kThreads, 0, s>>>(p, addr.data(), n, flag.data() + 1);
      GPUDICT_CHECK_LAUNCH("alloc_kernel");
      const double a_ms = timer.stop(s);
      // Check: n distinct addresses, none null; the bitmaps count pre + n.
      GPUDICT_CUDA(cudaMemcpy(host.data(), addr.data(), n * 4, cudaMemcpyDeviceToHost));
      unsigned int fails[2] = {0, 0};
      GPUDICT_CUDA(cudaMemcpy(fails, flag.data(), sizeof fails, cudaMemcpyDeviceToHost));
      std::vector<uint32_t> v(host.begin(), host.begin() + n);
      std::sort(v.begin(), v.end());
      const bool unique = std::adjacent_find(v.begin(), v.end()) == v.end();
      const uint64_t counted = pool.allocated(s);
      if (fails[1] || !unique || counted != pre + n || (n && v.back() >= pool.capacity())) {
        verdict = "FAILED (" + std::to_string(fails[1]) + " failures, unique " + (unique ? "yes" : "no") +
                  ", bitmaps " + std::to_string(counted) + ")";
        ok = false;
      }
      timer.start(s);
      free_kernel<<<blocks_for(n, kThreads, 65535), kThreads, 0, s>>>(p, addr.data(), n);
      GPUDICT_CHECK_LAUNCH("free_kernel");
      const double f_ms = timer.stop(s);
      if (pool.allocated(s) != pre) {
        verdict = "FAILED (frees)";
        ok = false;
      }
      if (r > 0) {  // the first repetition warms up
        ta.push_back(a_ms);
        tf.push_back(f_ms);
      }
    }
    const double a = median(ta), f = median(tf);
    std::printf("| %llu | %.0f%% | %llu | %.3f | %.0f | %.3f | %.0f | %s |\n",
                static_cast<unsigned long long>(pool_slabs), 100 * fill, static_cast<unsigned long long>(n), a,
                static_cast<double>(n) / a / 1e3, f, static_cast<double>(n) / f / 1e3, verdict.c_str());
  }
  // CUDA's device malloc of 128 B, one per thread, for scale.
  {
    const uint64_t n = 1ull << log2_allocs;
    GPUDICT_CUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, static_cast<size_t>(n) * 512));
    DeviceBuffer<void*> ptrs(n, "malloc pointers");
    DeviceBuffer<unsigned long long> nulls(1, "malloc failures");
    std::vector<double> tm;
    unsigned long long failed = 0;  // allocations that returned NULL, over all runs
    for (int r = 0; r < 3; ++r) {
      timer.start(s);
      malloc_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(ptrs.data(), n);
      GPUDICT_CHECK_LAUNCH("malloc_kernel");
      tm.push_back(timer.stop(s));
      GPUDICT_CUDA(cudaMemsetAsync(nulls.data(), 0, sizeof(unsigned long long), s));
      count_null_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(ptrs.data(), n, nulls.data());
      GPUDICT_CHECK_LAUNCH("count_null_kernel");
      unsigned long long h = 0;
      GPUDICT_CUDA(cudaMemcpyAsync(&h, nulls.data(), sizeof h, cudaMemcpyDeviceToHost, s));
      GPUDICT_CUDA(cudaStreamSynchronize(s));
      failed += h;
      mfree_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(ptrs.data(), n);
      GPUDICT_CHECK_LAUNCH("mfree_kernel");
      GPUDICT_CUDA(cudaStreamSynchronize(s));
    }
    const double m = median(tm);
    // A failed malloc returns at once: a rate with failures in it is not a rate of allocations.
    if (failed)
      std::printf("device malloc(128): %llu of %llu allocations returned NULL; no rate reported (FAILED)\n", failed,
                  3ull * n);
    else
      std::printf("device malloc(128), one per thread: %llu allocations, %.3f ms, %.1f M/s\n",
                  static_cast<unsigned long long>(n), m, static_cast<double>(n) / m / 1e3);
    ok = ok && failed == 0;
  }
  cudaStreamDestroy(s);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "gpudict_slaballoc_bench: %s\n", e.what());
    return dynamic_cast<const InputError*>(&e) ? 2 : 3;  // the command line's codes (cli/exit_codes.hpp)
  }
}
