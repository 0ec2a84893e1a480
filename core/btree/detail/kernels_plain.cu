// The operations kernel for phased queries (read-only cache, no fences),
// for tiles of 8, 16 and 32 lanes.
#include "core/btree/detail/launch.cuh"

namespace gpudict::btree {

GPUDICT_BTREE_DEFINE_LAUNCH(uint32_t, 8, false)
GPUDICT_BTREE_DEFINE_LAUNCH(uint32_t, 16, false)
GPUDICT_BTREE_DEFINE_LAUNCH(uint32_t, 32, false)
GPUDICT_BTREE_DEFINE_LAUNCH(uint64_t, 8, false)
GPUDICT_BTREE_DEFINE_LAUNCH(uint64_t, 16, false)
GPUDICT_BTREE_DEFINE_LAUNCH(uint64_t, 32, false)

}  // namespace gpudict::btree
