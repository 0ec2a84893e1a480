#include "core/common/settle.hpp"

#include "core/common/cuda_check.hpp"

namespace gpudict {

namespace {
__global__ void settle_kernel() {}
}  // namespace

void settle_before_timing(cudaStream_t stream) {
  settle_kernel<<<1, 32, 0, stream>>>();
  GPUDICT_CHECK_LAUNCH("settle_kernel");
  GPUDICT_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace gpudict
