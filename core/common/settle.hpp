// Before a timed segment that follows host work on device memory.
#pragma once

#include <cuda_runtime.h>

namespace gpudict {

// Launches an empty kernel on `stream` and waits for it. A timed segment
// starts with an event on an idle stream, so the device waits inside it for
// the host to issue the segment's first launch; after host work such as the
// LSM cleanup's cudaFree / cudaMalloc calls that first launch arrives late,
// and the delay lands in the timed segment although no device work causes
// it. Which host call makes the launch slow was not isolated (neither an
// allocation pair nor a host pause alone accounts for all of it).
// Called through EventTimer::start_settled, by the LSM's build and cleanup
// (the pair the cleanup target compares), by the segments of update batches
// that follow the host's read of a count (the LSM's chunks, the sorted
// array's fence levels), and by the B-Tree's concurrent batches after the
// host sized their ranges' output; other timed segments are measured
// without it.
void settle_before_timing(cudaStream_t stream);

}  // namespace gpudict
