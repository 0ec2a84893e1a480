// SlabAlloc's memory (host side): the super blocks and their bitmaps, growth
// by adding super blocks, and the device view (PoolRef, slab_alloc.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/common/device_buffer.hpp"
#include "core/slabhash/detail/slab_alloc.cuh"

namespace gpudict::slabhash {

class SlabPool {
 public:
  // Super block 0 of `slabs` slabs rounded up to a power of two >= 1024,
  // every slab pristine, every bit clear.
  void create(uint64_t slabs, cudaStream_t stream);
  void release();
  // Whether one more super block (as large as the pool) fits the address
  // space and `max_bytes` (0: no limit).
  bool can_grow(uint64_t max_bytes) const;
  // Adds that super block (pristine, bits clear).
  void grow(cudaStream_t stream);
  // Every slab pristine and every bit clear again.
  void reset(cudaStream_t stream);

  PoolRef ref(unsigned int* exhausted) const;
  uint64_t capacity() const { return slabs_.empty() ? 0 : 1ull << (lg0_ + slabs_.size() - 1); }
  uint64_t bytes() const { return capacity() * (kSlabBytes + 1.0 / 8); }
  uint64_t bytes_after_growth() const { return 2 * bytes(); }
  uint32_t super_blocks() const { return static_cast<uint32_t>(slabs_.size()); }
  uint32_t lg0() const { return lg0_; }
  uint64_t super_block_slabs(uint32_t k) const { return k == 0 ? 1ull << lg0_ : 1ull << (lg0_ + k - 1); }
  const Slab* super_block(uint32_t k) const { return slabs_[k].data(); }
  const uint32_t* super_block_bitmap(uint32_t k) const { return bitmaps_[k].data(); }

  // Allocated slabs: the bits set in every bitmap (copies them to the host).
  uint64_t allocated(cudaStream_t stream) const;

 private:
  void add_super_block(uint64_t slabs, cudaStream_t stream);

  uint32_t lg0_ = kMinLgSuper;
  std::vector<DeviceBuffer<Slab>> slabs_;
  std::vector<DeviceBuffer<uint32_t>> bitmaps_;
};

}  // namespace gpudict::slabhash
