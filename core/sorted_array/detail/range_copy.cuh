// The load-balanced copy of range results: R ranges, range r = the pairs at
// [first[r], first[r] + size_r) of the array, going to out[offset[r] ..).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/common/device_buffer.hpp"

namespace gpudict::sa {

// Entries the `tiles` scratch needs for `total` output pairs.
uint64_t range_copy_tiles(uint64_t total);

// offset: R + 1 entries (exclusive scan of the sizes; offset[R] = total).
// tiles: scratch of at least range_copy_tiles(total) entries.
template <class K, class V>
void copy_ranges(const K* keys, const V* values, const uint32_t* first, const uint64_t* offset, uint32_t R,
                 uint64_t total, DeviceBuffer<uint32_t>& tiles, K* out_keys, V* out_values, cudaStream_t stream);

}  // namespace gpudict::sa
