// What the hand-run benchmarks in tests/bench share: the median of timed
// runs, a timed measurement after one warm-up run, a one-option command
// line, and the no-device exit.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "core/common/device_info.hpp"

namespace gpudict::bench {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;  // no runs (e.g. --reps 0)
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Median of `reps` timed runs after one warm-up; f returns its milliseconds.
inline double measure(int reps, const std::function<double()>& f) {
  f();
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) ms.push_back(f());
  return median(ms);
}

// A command line of at most one option, `flag N` with lo <= N <= hi, into
// `value` (left as is when absent). False, with the usage on stderr, on
// anything else (the caller then exits with 2).
inline bool int_option(int argc, char** argv, const char* tool, const char* flag, int lo, int hi, int& value) {
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const long v = i + 1 < argc ? std::strtol(argv[i + 1], &end, 10) : 0;
    if (std::strcmp(argv[i], flag) != 0 || i + 1 >= argc || *end != '\0' || end == argv[i + 1] || v < lo || v > hi) {
      std::fprintf(stderr, "usage: %s [%s N] (N in [%d, %d])\n", tool, flag, lo, hi);
      return false;
    }
    value = static_cast<int>(v);
    ++i;
  }
  return true;
}

// Whether a CUDA device exists; if not, says so on stderr in `tool`'s name
// (the caller then exits with 3, the project's runtime-failure code).
inline bool have_device(const char* tool) {
  if (cuda_device_count() > 0) return true;
  std::fprintf(stderr, "%s: no CUDA device (%s)\n", tool, cuda_unavailable_reason().c_str());
  return false;
}

}  // namespace gpudict::bench
