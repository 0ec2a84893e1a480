// CUDA events around device work: the report's "device time".
#pragma once

#include <cuda_runtime.h>

#include "core/common/cuda_check.hpp"

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
