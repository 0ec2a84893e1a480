// Page-locked host staging buffer, reused across batches (grows, never
// shrinks). Copies from and to it run at full PCIe/NVLink speed and can be
// asynchronous. Host memory: not counted as device bytes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "core/common/cuda_check.hpp"

namespace gpudict {

template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept { swap(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }

  // Discards the contents when it grows (by at least half, so a slowly
  // growing workload does not reallocate every batch).
  void reserve_discard(size_t n) {
    if (n <= cap_) return;
    release();
    size_t want = n + n / 2;
    void* p = nullptr;
    if (cudaMallocHost(&p, want * sizeof(T)) != cudaSuccess) {
      cudaGetLastError();
      want = n;
      GPUDICT_CUDA(cudaMallocHost(&p, want * sizeof(T)));
    }
    ptr_ = static_cast<T*>(p);
    cap_ = want;
  }
  void release() noexcept {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    cap_ = 0;
  }
  void swap(PinnedBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(cap_, o.cap_);
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  T& operator[](size_t i) { return ptr_[i]; }
  const T& operator[](size_t i) const { return ptr_[i]; }
  size_t capacity() const { return cap_; }

 private:
  T* ptr_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace gpudict
