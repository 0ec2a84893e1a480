// The library errors' options as the command line's flags.
#include "cli/exit_codes.hpp"

#include <map>

namespace gpudict {

std::string cli_message(const Error& e) {
  if (e.option().empty()) return e.what();
  // Fields whose flag is not their name with dashes.
  static const std::map<std::string, std::string> kFlags = {
      {"growth", "--pool-growth on or ahead, or a larger --pool-slabs"},
      {"backend", "--backend cpu runs the CPU reference"},
  };
  const auto it = kFlags.find(e.option());
  std::string flag;
  if (it != kFlags.end()) {
    flag = it->second;
  } else {
    flag = "--" + e.option();
    for (char& c : flag)
      if (c == '_') c = '-';
  }
  return std::string(e.what()) + " (command line: " + flag + ")";
}

}  // namespace gpudict
