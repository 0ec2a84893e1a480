// The operations kernel for phased updates and concurrent batches (seqlock
// reads, latches, splits), for tiles of 8, 16 and 32 lanes.
#include "core/btree/launch.cuh"

namespace gpudict::btree {

GPUDICT_BTREE_DEFINE_LAUNCH(8, true)
GPUDICT_BTREE_DEFINE_LAUNCH(16, true)
GPUDICT_BTREE_DEFINE_LAUNCH(32, true)

}  // namespace gpudict::btree
