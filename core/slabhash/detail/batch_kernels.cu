// The batch kernels of the u32/u32 instantiation (batch_kernels.cuh).
#include "core/slabhash/detail/batch_kernels.cuh"

namespace gpudict::slabhash {

GPUDICT_SLABHASH_BATCH_KERNELS(uint32_t, uint32_t)

}  // namespace gpudict::slabhash
