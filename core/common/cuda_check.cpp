#include "core/common/cuda_check.hpp"

#include <cstdio>

namespace gpudict {

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  cudaGetLastError();  // clear a sticky launch error so later calls can report their own
  std::string msg = std::string(err == cudaErrorMemoryAllocation ? "out of device memory: " : "CUDA error: ") +
                    cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") in " + what + " at " + file +
                    ":" + std::to_string(line);
  if (err == cudaErrorMemoryAllocation) throw DeviceOutOfMemory(msg);
  throw RuntimeFailure(msg);
}

}  // namespace gpudict
