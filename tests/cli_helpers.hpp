// Running the gpudict binary from tests: exit code, stdout and stderr apart.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpudict::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string temp_path(const std::string& name) {
  static int counter = 0;
  return "/tmp/gpudict_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" + name;
}

// The gpudict binary: $GPUDICT_BINARY when set (a build copied elsewhere, as
// scripts/gpu-check.sh runs it), else the one this build made.
inline std::string gpudict_binary() {
  const char* env = std::getenv("GPUDICT_BINARY");
  return env && *env ? env : GPUDICT_BINARY;
}

// `args` is appended to the binary's path as is (shell syntax); `prefix`, if
// any, comes before it (a command that runs the binary, e.g. as another user).
inline CommandResult run_gpudict(const std::string& args, const std::string& prefix = "") {
  std::string out_file = temp_path("out"), err_file = temp_path("err");
  std::string cmd = std::string("cd '") + GPUDICT_SOURCE_DIR + "' && " + prefix + (prefix.empty() ? "" : " ") + "'" +
                    gpudict_binary() + "' " + args + " >'" + out_file + "' 2>'" + err_file + "' </dev/null";
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_file);
  r.err = slurp(err_file);
  std::remove(out_file.c_str());
  std::remove(err_file.c_str());
  return r;
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

inline size_t count_fields(const std::string& csv_line) {
  size_t n = 1;
  bool quoted = false;
  for (char c : csv_line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) ++n;
  }
  return n;
}

}  // namespace gpudict::testing
