// Blocking copies between host and device on a structure's stream. The
// structures stage batches through reused pinned buffers, so a copy returns
// only when it is done: the source may be overwritten right after.
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

inline void copy_to_host(cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  GPUDICT_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
  GPUDICT_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace gpudict
