// A per-process scratch directory for tests that write files, removed at exit.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace gpudict::testing {

inline std::filesystem::path scratch_dir() {
  struct Dir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("gpudict_test_" + std::to_string(::getpid()));
    Dir() { std::filesystem::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

// Writes `text` to scratch_dir()/name and returns the path.
inline std::string write_scratch_file(const std::string& name, const std::string& text) {
  const std::filesystem::path p = scratch_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

}  // namespace gpudict::testing
