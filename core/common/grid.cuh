// Launch-size helpers: blocks for a number of items, and the number of blocks
// that fit on the device at once (for persistent, grid-stride kernels).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "core/common/cuda_check.hpp"

namespace gpudict {

// Blocks of `per_block` items covering `items` (at least 1, at most max_blocks).
inline unsigned blocks_for(uint64_t items, uint64_t per_block, uint64_t max_blocks = 0x7FFFFFFFull) {
  uint64_t b = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(b, max_blocks)));
}

// Multiprocessors of the current device (cached per device).
inline int device_sm_count() {
  static std::mutex mu;
  static std::map<int, int> cache;
  int dev = 0;
  GPUDICT_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(dev);
  if (it != cache.end()) return it->second;
  int sms = 0;
  GPUDICT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cache[dev] = sms;
  return sms;
}

// Blocks of `kernel` (launched with `block` threads and `smem` dynamic shared
// bytes) that are resident on the whole device at once; cached.
template <class Kernel>
int resident_blocks(Kernel kernel, int block, size_t smem) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void*, int, size_t>, int> cache;
  int dev = 0;
  GPUDICT_CUDA(cudaGetDevice(&dev));
  const auto key = std::make_tuple(dev, reinterpret_cast<const void*>(kernel), block, smem);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  int per_sm = 0;
  GPUDICT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem));
  const int blocks = std::max(1, per_sm) * device_sm_count();
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = blocks;
  return blocks;
}

// Grid for a persistent kernel: enough blocks to fill the device, no more
// than the work needs.
template <class Kernel>
unsigned persistent_grid(Kernel kernel, int block, size_t smem, uint64_t items, uint64_t items_per_block) {
  const uint64_t need = (items + items_per_block - 1) / items_per_block;
  const uint64_t fit = static_cast<uint64_t>(resident_blocks(kernel, block, smem));
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(need, fit)));
}

}  // namespace gpudict
