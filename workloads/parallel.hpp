// The host threads the engine's parallel loops use (generation today), and
// a static parallel for. Results never depend on the number of threads:
// every loop body computes each index from the index alone.
#pragma once

#include <cstdint>
#include <functional>

namespace gpudict {

// Threads for host loops: set_host_threads(n) (the command line's
// --threads), else GPUDICT_THREADS, else the machine's hardware threads.
unsigned host_threads();
// 0 restores the default.
void set_host_threads(unsigned n);

// Calls body(begin, end) on disjoint pieces covering [0, n), on up to
// host_threads() threads (fewer for small n: at least `grain` indices a
// piece). Returns when every piece is done; rethrows the first exception.
void parallel_for(uint64_t n, uint64_t grain, const std::function<void(uint64_t begin, uint64_t end)>& body);

}  // namespace gpudict
