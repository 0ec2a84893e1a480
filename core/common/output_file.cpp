#include "core/common/output_file.hpp"

#include <cerrno>
#include <cstring>

#include "core/common/errors.hpp"

namespace gpudict {

std::FILE* open_output_file(const std::string& path, const std::string& option) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw InputError("--" + option + " " + path + ": cannot write: " + std::strerror(errno));
  return f;
}

void finish_output(std::FILE* out, const std::string& what) {
  errno = 0;  // a reason from an earlier, unrelated call must not be quoted
  if (std::fflush(out) != 0 || std::ferror(out))
    throw RuntimeFailure("cannot write " + what + ": " + (errno ? std::strerror(errno) : "write error"));
}

void close_output(std::FILE* out, const std::string& what) {
  try {
    finish_output(out, what);
  } catch (...) {
    std::fclose(out);
    throw;
  }
  if (std::fclose(out) != 0) throw RuntimeFailure("cannot write " + what + ": " + std::strerror(errno));
}

}  // namespace gpudict
