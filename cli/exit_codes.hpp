// The command line's exit codes (README: exit codes) and the library
// errors they stand for.
#pragma once

#include <string>

#include "core/common/errors.hpp"

namespace gpudict {

enum ExitCode : int { kExitOk = 0, kExitVerifyFailed = 1, kExitBadInput = 2, kExitRuntime = 3 };

// InputError: bad input or usage (2); any other error: a runtime failure (3).
inline int exit_code_for(const Error& e) {
  return dynamic_cast<const InputError*>(&e) ? kExitBadInput : kExitRuntime;
}

// The error's message as the command line prints it: with the flag that
// sets the option it names, if any ("...; the option: --node-pool").
std::string cli_message(const Error& e);

}  // namespace gpudict
