// The device time of a container's bulk calls, for benchmarks (it is the
// replay engine's "device time"). A program attaches one with the
// container's set_timing(); every bulk call then adds the milliseconds of
// its device work, measured with CUDA events around its sorts, kernels and
// device copies. Allocation, the host's waits between launches and the
// conversion of the caller's arrays into the container's own layout are left
// out, so the figure is the structure's work alone and does not depend on
// how the caller staged its inputs.
//
// Compaction (an LSM's cleanup, a hash table's flush) is counted apart, in
// cleanup_ms, whether the program asked for it or a call's automatic
// policy ran it, so that a call's own work and the upkeep it set off can be
// told apart.
#pragma once

namespace gpudict {

struct device_timing {
  double ms = 0.0;          // the calls' own work
  double cleanup_ms = 0.0;  // compaction, asked for or automatic
  void add(double v) { ms += v; }
  void add_cleanup(double v) { cleanup_ms += v; }
};

}  // namespace gpudict
