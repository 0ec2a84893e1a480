// Copies between host and device on a structure's stream. The blocking
// ones return only when the copy is done: the source may be overwritten
// right after (batches staged through reused pinned buffers).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "core/common/cuda_check.hpp"

namespace gpudict {

inline void copy_to_device(cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  GPUDICT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
  GPUDICT_CUDA(cudaStreamSynchronize(stream));
}

// Queued copies, not waited for: the host memory must be pinned, src must
// stay unchanged until the stream has run the copy, and dst is read only
// after a wait on the stream (cudaStreamSynchronize). Several queued copies
// then cost one wait, and device work queued behind them starts without the
// host in between.
inline void copy_to_device_queued(cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  GPUDICT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
}
inline void copy_to_host_queued(cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  GPUDICT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
}

inline void copy_to_host(cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  GPUDICT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
  GPUDICT_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace gpudict
