// Before a timed segment that follows host work on device memory.
#pragma once

#include <cuda_runtime.h>

namespace gpudict {

// Launches an empty kernel on `stream` and waits for it. A timed segment
// starts with an event on an idle stream, so the device waits for the
// segment's first launch inside it; right after cudaMalloc / cudaFree that
// launch costs the host about 20 us more than usual (the LSM cleanup's first
// kernel on an H200: 36-46 us from the start event, 19-23 us after this
// call; the kernel itself runs 11 us). Calling this first keeps that host
// cost out of the device time, which is meant to be device work only.
void settle_before_timing(cudaStream_t stream);

}  // namespace gpudict
