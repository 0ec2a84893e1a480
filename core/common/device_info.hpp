// What `gpudict info` prints and how the CLI picks the default backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpudict {

struct DeviceDescription {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t l2_bytes = 0;
  double mem_bandwidth_gbs = 0;  // from the memory clock and bus width (a datasheet figure)
  int sm_clock_mhz = 0, mem_clock_mhz = 0;  // peak clocks
};

// 0 when there is no usable device (no driver, no GPU); never throws.
int cuda_device_count();
// Why cuda_device_count() is 0, in words ("no CUDA-capable device is detected").
std::string cuda_unavailable_reason();
std::vector<DeviceDescription> describe_devices();
// Device `index`; false (and `out` untouched) when it cannot be read.
bool describe_device(int index, DeviceDescription& out);
std::string driver_version_string();   // "13.0" or "none"
std::string runtime_version_string();
// Selects the device; throws RuntimeFailure with a clear message if absent.
void select_device(int index);
std::string device_name(int index);

}  // namespace gpudict
