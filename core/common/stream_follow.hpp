// Orders a structure's own stream after the work a caller queued on another
// stream, without a host wait: an event recorded on the caller's stream, and
// the structure's stream waiting for it. The library's bulk calls take the
// caller's stream this way (btree_map.hpp and the other containers).
#pragma once

#include <cuda_runtime.h>

#include "core/common/cuda_check.hpp"

namespace gpudict {

class StreamFollower {
 public:
  StreamFollower() = default;
  StreamFollower(const StreamFollower&) = delete;
  StreamFollower& operator=(const StreamFollower&) = delete;
  ~StreamFollower() {
    if (event_) cudaEventDestroy(event_);
  }

  void follow(cudaStream_t own, cudaStream_t caller) {
    if (!event_) GPUDICT_CUDA(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    GPUDICT_CUDA(cudaEventRecord(event_, caller));
    GPUDICT_CUDA(cudaStreamWaitEvent(own, event_, 0));
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// `device`, or the calling thread's current device when it is negative.
inline int device_or_current(int device) {
  if (device < 0) GPUDICT_CUDA(cudaGetDevice(&device));
  return device;
}

}  // namespace gpudict
