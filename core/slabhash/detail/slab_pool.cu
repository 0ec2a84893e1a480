#include "core/slabhash/detail/slab_pool.hpp"

#include <algorithm>

#include "core/common/cuda_check.hpp"
#include "core/common/pinned_buffer.cuh"

namespace gpudict::slabhash {

void SlabPool::create(uint64_t slabs, cudaStream_t stream) {
  release();
  lg0_ = kMinLgSuper;
  while ((1ull << lg0_) < slabs && lg0_ < kMaxLgTotal - 1) ++lg0_;
  add_super_block(1ull << lg0_, stream);
}

void SlabPool::release() {
  slabs_.clear();
  bitmaps_.clear();
}

bool SlabPool::can_grow(uint64_t max_bytes) const {
  if (slabs_.empty()) return false;
  if (slabs_.size() >= kMaxSuperBlocks) return false;
  if (lg0_ + slabs_.size() > kMaxLgTotal) return false;  // the doubled pool must stay within 2^31 slabs
  return max_bytes == 0 || bytes_after_growth() <= max_bytes;
}

void SlabPool::grow(cudaStream_t stream) { add_super_block(capacity(), stream); }

void SlabPool::add_super_block(uint64_t slabs, cudaStream_t stream) {
  DeviceBuffer<Slab> s(slabs, "slabhash SlabAlloc super block");
  DeviceBuffer<uint32_t> b(slabs / 32, "slabhash SlabAlloc bitmaps");
  // Pristine slabs (all 0xFF: empty keys, alive state, null next), clear bits.
  GPUDICT_CUDA(cudaMemsetAsync(s.data(), 0xFF, s.bytes(), stream));
  GPUDICT_CUDA(cudaMemsetAsync(b.data(), 0, b.bytes(), stream));
  slabs_.push_back(std::move(s));
  bitmaps_.push_back(std::move(b));
}

void SlabPool::reset(cudaStream_t stream) {
  for (size_t k = 0; k < slabs_.size(); ++k) {
    GPUDICT_CUDA(cudaMemsetAsync(slabs_[k].data(), 0xFF, slabs_[k].bytes(), stream));
    GPUDICT_CUDA(cudaMemsetAsync(bitmaps_[k].data(), 0, bitmaps_[k].bytes(), stream));
  }
}

PoolRef SlabPool::ref(unsigned int* exhausted) const {
  PoolRef p;
  for (uint32_t k = 0; k < kMaxSuperBlocks; ++k) {
    p.slabs[k] = k < slabs_.size() ? const_cast<Slab*>(slabs_[k].data()) : nullptr;
    p.bitmaps[k] = k < bitmaps_.size() ? const_cast<uint32_t*>(bitmaps_[k].data()) : nullptr;
  }
  p.lg0 = lg0_;
  p.super_blocks = super_blocks();
  p.total_blocks = static_cast<uint32_t>(capacity() / kBlockSlabs);
  p.exhausted = exhausted;
  return p;
}

uint64_t SlabPool::allocated(cudaStream_t stream) const {
  uint64_t total = 0;
  std::vector<uint32_t> host;
  for (size_t k = 0; k < bitmaps_.size(); ++k) {
    host.resize(bitmaps_[k].capacity());
    GPUDICT_CUDA(cudaMemcpyAsync(host.data(), bitmaps_[k].data(), bitmaps_[k].bytes(), cudaMemcpyDeviceToHost, stream));
    GPUDICT_CUDA(cudaStreamSynchronize(stream));
    for (uint32_t w : host) total += static_cast<uint64_t>(__builtin_popcount(w));
  }
  return total;
}

}  // namespace gpudict::slabhash
