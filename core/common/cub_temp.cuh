// Temporary storage for CUB device algorithms: one growing device buffer,
// reused across calls. run() does CUB's size query, grows the buffer when
// needed (through DeviceBuffer, so the bytes are counted and an allocation
// failure reads "out of device memory") and runs the algorithm.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/common/device_buffer.hpp"

namespace gpudict {

class CubTemp {
 public:
  // f(void* temp, size_t& bytes) -> cudaError_t: a CUB call with its temporary
  // storage arguments left to this helper. `what` names it in error messages.
  template <class F>
  void run(const char* what, F&& f) {
    size_t bytes = 0;
    ::gpudict::cuda_check(f(static_cast<void*>(nullptr), bytes), what, __FILE__, __LINE__);
    reserve(bytes);
    ::gpudict::cuda_check(f(static_cast<void*>(buf_.data()), bytes), what, __FILE__, __LINE__);
  }
  // Bytes a call needs, without running it.
  template <class F>
  size_t query(const char* what, F&& f) const {
    size_t bytes = 0;
    ::gpudict::cuda_check(f(static_cast<void*>(nullptr), bytes), what, __FILE__, __LINE__);
    return bytes;
  }
  // Grows the buffer for a call now, so that run() then allocates nothing
  // (keeps cudaMalloc out of timed regions).
  template <class F>
  void prepare(const char* what, F&& f) {
    reserve(query(what, f));
  }
  void reserve(size_t bytes) {
    // Never leave the pointer null: CUB reads a null pointer as a size query.
    bytes = std::max<size_t>(bytes, 256);
    if (bytes <= buf_.capacity()) return;
    buf_.reserve_discard(bytes + bytes / 4, "CUB temporary storage");
  }
  uint64_t bytes() const { return buf_.bytes(); }
  // The buffer (a CUDA graph that captured a call keys on it).
  const void* data() const { return buf_.data(); }
  void release() { buf_.release(); }

 private:
  DeviceBuffer<unsigned char> buf_;
};

}  // namespace gpudict
