// CUDA events around device work: the report's "device time".
#pragma once

#include <cuda_runtime.h>

#include "core/common/cuda_check.hpp"
#include "core/common/settle.hpp"

namespace gpudict {

class EventTimer {
 public:
  EventTimer() {
    GPUDICT_CUDA(cudaEventCreate(&start_));
    GPUDICT_CUDA(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start(cudaStream_t s = 0) { GPUDICT_CUDA(cudaEventRecord(start_, s)); }
  // start() after settle_before_timing(s) (settle.hpp: keeps the host's late
  // first launch out of a segment that follows allocations; used by the
  // LSM's build and cleanup, the pair its cleanup target compares).
  void start_settled(cudaStream_t s) {
    settle_before_timing(s);
    start(s);
  }
  // Records the stop event, waits for it and returns the milliseconds between.
  double stop(cudaStream_t s = 0) {
    GPUDICT_CUDA(cudaEventRecord(stop_, s));
    GPUDICT_CUDA(cudaEventSynchronize(stop_));
    float ms = 0.f;
    GPUDICT_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

}  // namespace gpudict
