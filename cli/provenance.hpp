// The provenance of a run (workloads/replay.hpp: Provenance): the tool's
// version and commit, the device, the host, the time and the command line.
#pragma once

#include <string>

#include "workloads/replay.hpp"

namespace gpudict {

// `argv` joined with shell quoting where an argument needs it.
std::string command_line(int argc, char** argv);

// Collects it now; `gpu`: describe CUDA device `device` too.
Provenance collect_provenance(const std::string& command, bool gpu, int device);

}  // namespace gpudict
