// Checking every CUDA call and launch. A failure throws RuntimeFailure (exit 3)
// naming the call, the file and the line; out-of-memory gets its own wording.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/common/errors.hpp"

namespace gpudict {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line);

inline void cuda_check(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, what, file, line);
}

// Human-readable byte count: "1.50 GiB".
std::string format_bytes(uint64_t bytes);

}  // namespace gpudict

#define GPUDICT_CUDA(call) ::gpudict::cuda_check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors now, execution errors at
// the next synchronising call (which is itself checked).
#define GPUDICT_CHECK_LAUNCH(name) ::gpudict::cuda_check(cudaGetLastError(), name, __FILE__, __LINE__)
