#include "core/common/device_info.hpp"

#include <cuda_runtime.h>

#include "core/common/cuda_check.hpp"

namespace gpudict {

namespace {
std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string cuda_unavailable_reason() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  cudaGetLastError();
  // Without an NVIDIA driver the runtime reports an "insufficient driver";
  // say what that means on a machine without a GPU.
  if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
    return std::string("no NVIDIA driver or CUDA device found: ") + cudaGetErrorString(err);
  if (err != cudaSuccess) return cudaGetErrorString(err);
  return n == 0 ? "no CUDA device found" : "";
}

bool describe_device(int i, DeviceDescription& out) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  DeviceDescription d;
  d.index = i;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.total_bytes = p.totalGlobalMem;
  d.l2_bytes = static_cast<uint64_t>(p.l2CacheSize);
  int mem_clock_khz = 0, sm_clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, i);
  cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, i);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, i);
  d.mem_bandwidth_gbs = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  d.sm_clock_mhz = sm_clock_khz / 1000;
  d.mem_clock_mhz = mem_clock_khz / 1000;
  int prev = 0;
  if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(i) == cudaSuccess) {
    size_t f = 0, t = 0;
    if (cudaMemGetInfo(&f, &t) == cudaSuccess) d.free_bytes = f;
    cudaSetDevice(prev);
  }
  cudaGetLastError();
  out = d;
  return true;
}

std::vector<DeviceDescription> describe_devices() {
  std::vector<DeviceDescription> out;
  const int n = cuda_device_count();
  for (int i = 0; i < n; ++i) {
    DeviceDescription d;
    if (describe_device(i, d)) out.push_back(d);
  }
  return out;
}

std::string driver_version_string() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess || v == 0) return "none";
  return version_string(v);
}

std::string runtime_version_string() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return "unknown";
  return version_string(v);
}

void select_device(int index) {
  int n = cuda_device_count();
  if (n == 0) throw RuntimeFailure("no CUDA device: " + cuda_unavailable_reason(), "backend");
  if (index < 0 || index >= n)
    throw RuntimeFailure("no CUDA device " + std::to_string(index) + ": this machine has " + std::to_string(n));
  GPUDICT_CUDA(cudaSetDevice(index));
}

std::string device_name(int index) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, index) != cudaSuccess) {
    cudaGetLastError();
    return "unknown";
  }
  return p.name;
}

}  // namespace gpudict
