// Holds all but about `leave` bytes of the current device's free memory for
// its lifetime: the full-memory tests run a structure with almost nothing
// left, so that its next large allocation fails the way a full device makes
// it fail.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace gpudict::testing {

class MemoryHog {
 public:
  explicit MemoryHog(uint64_t leave) {
    // A few steps: the allocation granularity and the context's own growth
    // can leave more free than asked after the first one.
    for (int step = 0; step < 4; ++step) {
      const uint64_t f = free_now();
      if (f <= leave + (2u << 20)) break;
      void* p = nullptr;
      if (cudaMalloc(&p, f - leave) != cudaSuccess) {
        cudaGetLastError();  // not sticky; cleared so that no later check sees it
        break;
      }
      held_.push_back(p);
    }
  }
  ~MemoryHog() {
    for (void* p : held_) cudaFree(p);
  }
  MemoryHog(const MemoryHog&) = delete;
  MemoryHog& operator=(const MemoryHog&) = delete;
  // Whether the device is now that full.
  bool holding(uint64_t leave) const { return !held_.empty() && free_now() <= leave + (2u << 20); }
  static uint64_t free_now() {
    size_t f = 0, t = 0;
    if (cudaMemGetInfo(&f, &t) != cudaSuccess) return 0;
    return f;
  }

 private:
  std::vector<void*> held_;
};

}  // namespace gpudict::testing
