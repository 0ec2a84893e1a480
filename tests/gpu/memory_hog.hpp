// Holds all but about `leave` bytes of the current device's free memory for
// its lifetime: the full-memory tests run a structure with almost nothing
// left, so that its next large allocation fails the way a full device makes
// it fail.
#pragma once

#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"

namespace gpudict::testing {

// The message of the RuntimeFailure (exit 3) that `f` throws; "" if none.
template <class F>
std::string runtime_failure_of(F&& f) {
  try {
    f();
  } catch (const RuntimeFailure& e) {
    return e.what();
  }
  return "";
}

class MemoryHog {
 public:
  explicit MemoryHog(uint64_t leave) : leave_(leave) {
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
  bool holding() const { return !held_.empty() && free_now() <= leave_ + (2u << 20); }
  static uint64_t free_now() {
    uint64_t f = 0, t = 0;
    device_memory_info(f, t);
    return f;
  }

 private:
  uint64_t leave_;
  std::vector<void*> held_;
};

// A hog holding all but about `leave` bytes, or null when the device could
// not be filled that far: the test `test` then fails, since a test that
// cannot fill the device has checked nothing, unless
// GPUDICT_ALLOW_UNFILLED_DEVICE=1 (a shared device whose memory other
// processes keep changing) lets it skip with a message. The caller returns
// (or goes on to its next case) on null.
inline std::unique_ptr<MemoryHog> fill_device(uint64_t leave, const char* test) {
  auto hog = std::make_unique<MemoryHog>(leave);
  if (hog->holding()) return hog;
  const char* allow = std::getenv("GPUDICT_ALLOW_UNFILLED_DEVICE");
  if (allow && std::string(allow) == "1")
    MESSAGE(test << ": could not fill the device; skipped (GPUDICT_ALLOW_UNFILLED_DEVICE=1)");
  else
    FAIL_CHECK(test << ": could not fill the device, so nothing was checked (" << MemoryHog::free_now()
                    << " bytes still free; GPUDICT_ALLOW_UNFILLED_DEVICE=1 makes this a skip)");
  return nullptr;
}

}  // namespace gpudict::testing
