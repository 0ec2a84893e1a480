// The command line: one subcommand per structure (from the registry), plus
// gen, check and info. Returns the process exit code (README: exit codes).
#pragma once

namespace gpudict {

int run_cli(int argc, char** argv);

}  // namespace gpudict
