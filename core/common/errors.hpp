// The errors gpudict's library throws. Each says what went wrong in one
// line; none carries a process exit code (cli/exit_codes.hpp maps them for
// the command line: InputError to 2, the others to 3).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace gpudict {

// Every error of the library. `option` names the field of the structure's
// typed options whose value avoids the error ("node_pool"), when there is
// one: the message says what to change in the library's words, and the
// command line adds the flag that sets it (cli/exit_codes.hpp).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, std::string option = {})
      : std::runtime_error(what), option_(std::move(option)) {}
  const std::string& option() const { return option_; }

 private:
  std::string option_;
};

// An invalid argument: an option out of its range, an operation the
// structure does not support, a malformed workload (the message names the
// file, line and field where there is one).
struct InputError : Error {
  using Error::Error;
};

// A failure at run time: no device, a CUDA error, a pool that cannot grow.
struct RuntimeFailure : Error {
  using Error::Error;
};

// The one runtime failure a structure may recover from or restate in its own
// terms: an allocation the device had no memory for (cudaErrorMemoryAllocation;
// the error is cleared, nothing else is wrong). Other CUDA errors stay
// RuntimeFailure.
struct DeviceOutOfMemory : RuntimeFailure {
  using RuntimeFailure::RuntimeFailure;
};

}  // namespace gpudict
