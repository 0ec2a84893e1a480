// The batch kernels of the u64/u64 instantiation (batch_kernels.cuh).
#include "core/slabhash/detail/batch_kernels.cuh"

namespace gpudict::slabhash {

GPUDICT_SLABHASH_BATCH_KERNELS(uint64_t, uint64_t)

}  // namespace gpudict::slabhash
