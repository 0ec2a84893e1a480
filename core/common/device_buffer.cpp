#include "core/common/device_buffer.hpp"

#include <atomic>
#include <string>

namespace gpudict {

namespace {
std::atomic<uint64_t> g_bytes{0};
}

void device_memory_info(uint64_t& free_bytes, uint64_t& total_bytes) {
  size_t f = 0, t = 0;
  GPUDICT_CUDA(cudaMemGetInfo(&f, &t));
  free_bytes = f;
  total_bytes = t;
}

void* device_allocate(size_t bytes, const char* what) {
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    throw DeviceOutOfMemory("out of device memory: needs " + format_bytes(bytes) + ", free " + format_bytes(f) +
                         " (" + what + ")");
  }
  cuda_check(err, "cudaMalloc", __FILE__, __LINE__);
  g_bytes += bytes;
  return p;
}

void device_free(void* p, size_t bytes) noexcept {
  if (!p) return;
  cudaFree(p);  // errors here are reported by the next checked call
  g_bytes -= bytes;
}

uint64_t device_bytes_in_use() { return g_bytes.load(); }

}  // namespace gpudict
