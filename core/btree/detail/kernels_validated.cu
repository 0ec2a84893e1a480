// The operations kernel for phased updates and concurrent batches (seqlock
// reads, latches, splits), for tiles of 8, 16 and 32 lanes.
#include "core/btree/detail/launch.cuh"

namespace gpudict::btree {

GPUDICT_BTREE_DEFINE_LAUNCH(uint32_t, 8, true)
GPUDICT_BTREE_DEFINE_LAUNCH(uint32_t, 16, true)
GPUDICT_BTREE_DEFINE_LAUNCH(uint32_t, 32, true)
GPUDICT_BTREE_DEFINE_LAUNCH(uint64_t, 8, true)
GPUDICT_BTREE_DEFINE_LAUNCH(uint64_t, 16, true)
GPUDICT_BTREE_DEFINE_LAUNCH(uint64_t, 32, true)

}  // namespace gpudict::btree
