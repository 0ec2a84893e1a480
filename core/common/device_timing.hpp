// The device time of a container's bulk calls, for benchmarks (it is the
// replay engine's "device time"). A program attaches one with the
// container's set_timing(); every bulk call then adds the milliseconds of
// its device work, measured with CUDA events around its sorts, kernels and
// device copies. Allocation, the host's waits between launches and the
// conversion of the caller's arrays into the container's own layout are left
// out, so the figure is the structure's work alone and does not depend on
// how the caller staged its inputs.
#pragma once

namespace gpudict {

struct device_timing {
  double ms = 0.0;
  void add(double v) { ms += v; }
};

}  // namespace gpudict
