// Output files and streams with the project's errors: a path that cannot be
// opened is bad input (exit 2), a write that fails is a runtime failure
// (exit 3, "cannot write ..."), never a silent loss.
#pragma once

#include <cstdio>
#include <string>

namespace gpudict {

// fopen(path, "w"), or InputError "--OPTION PATH: cannot write: REASON".
std::FILE* open_output_file(const std::string& path, const std::string& option);
// Flushes `out` and throws RuntimeFailure "cannot write WHAT: REASON" if any
// write to it failed (stdio keeps the error flag until then).
void finish_output(std::FILE* out, const std::string& what);
// finish_output, then fclose (a failed close is a failed write too).
void close_output(std::FILE* out, const std::string& what);

}  // namespace gpudict
