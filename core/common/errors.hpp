// Error types that carry the process exit code they map to (README: exit codes).
// Thrown anywhere; caught once in cli/main.cpp, which prints the one-line message.
#pragma once

#include <stdexcept>
#include <string>

namespace gpudict {

enum ExitCode : int { kExitOk = 0, kExitVerifyFailed = 1, kExitBadInput = 2, kExitRuntime = 3 };

class Error : public std::runtime_error {
 public:
  Error(int exit_code, const std::string& what) : std::runtime_error(what), code_(exit_code) {}
  int exit_code() const { return code_; }

 private:
  int code_;
};

// Bad input or usage (exit 2): malformed workload, unknown field, bad option,
// an operation the structure does not support. The message names the file,
// line and field where there is one.
struct InputError : Error {
  explicit InputError(const std::string& what) : Error(kExitBadInput, what) {}
};

// Runtime failure (exit 3): no device, out of device memory, CUDA error.
struct RuntimeFailure : Error {
  explicit RuntimeFailure(const std::string& what) : Error(kExitRuntime, what) {}
};

// The one runtime failure a structure may recover from or restate in its own
// terms: an allocation the device had no memory for (cudaErrorMemoryAllocation;
// the error is cleared, nothing else is wrong). Other CUDA errors stay
// RuntimeFailure and end the run as they are.
struct DeviceOutOfMemory : RuntimeFailure {
  explicit DeviceOutOfMemory(const std::string& what) : RuntimeFailure(what) {}
};

}  // namespace gpudict
