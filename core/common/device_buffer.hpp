// Owning device memory (plain cudaMalloc, never managed memory). Every
// allocation goes through DeviceBuffer, so the bytes a structure holds are
// counted in one place and an allocation failure reads the same everywhere.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/common/cuda_check.hpp"

namespace gpudict {

// Raw allocation with the project's error message:
// "out of device memory: needs X, free Y (what)" (DeviceOutOfMemory).
void* device_allocate(size_t bytes, const char* what);
void device_free(void* p, size_t bytes) noexcept;
// Bytes currently held through DeviceBuffer by this process.
uint64_t device_bytes_in_use();
// Free and total device memory of the current device.
void device_memory_info(uint64_t& free_bytes, uint64_t& total_bytes);

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n, const char* what = "device buffer") { allocate(n, what); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }

  // Discards the contents; no-op when the capacity already suffices.
  void reserve_discard(size_t n, const char* what = "device buffer") {
    if (n <= cap_) return;
    release();
    allocate(n, what);
  }
  void release() noexcept {
    if (ptr_) device_free(ptr_, cap_ * sizeof(T));
    ptr_ = nullptr;
    cap_ = 0;
  }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(cap_, o.cap_);
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  size_t capacity() const { return cap_; }
  size_t bytes() const { return cap_ * sizeof(T); }

 private:
  void allocate(size_t n, const char* what) {
    if (n == 0) return;
    ptr_ = static_cast<T*>(device_allocate(n * sizeof(T), what));
    cap_ = n;
  }
  T* ptr_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace gpudict
