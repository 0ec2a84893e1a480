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
  if (v.empty()) return 0.0;  // no runs: callers require at least one
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

// One integer option of a benchmark's command line: `flag N`, lo <= N <= hi.
struct IntOption {
  const char* flag;
  int lo, hi;
  int* value;  // left as is when the option is absent
};

// A command line of `flag N` options from `opts`, each at most once. False,
// with the usage on stderr, on anything else (the caller then exits with 2).
inline bool int_options(int argc, char** argv, const char* tool, const std::vector<IntOption>& opts) {
  auto usage = [&] {
    std::fprintf(stderr, "usage: %s", tool);
    for (const auto& o : opts) std::fprintf(stderr, " [%s N]", o.flag);
    std::fprintf(stderr, " (");
    for (size_t k = 0; k < opts.size(); ++k)
      std::fprintf(stderr, "%s%s in [%d, %d]", k ? ", " : "", opts[k].flag, opts[k].lo, opts[k].hi);
    std::fprintf(stderr, ")\n");
    return false;
  };
  std::vector<bool> seen(opts.size(), false);
  for (int i = 1; i < argc; i += 2) {
    size_t k = 0;
    while (k < opts.size() && std::strcmp(argv[i], opts[k].flag) != 0) ++k;
    if (k == opts.size() || seen[k] || i + 1 >= argc) return usage();
    char* end = nullptr;
    const long v = std::strtol(argv[i + 1], &end, 10);
    if (*end != '\0' || end == argv[i + 1] || v < opts[k].lo || v > opts[k].hi) return usage();
    *opts[k].value = static_cast<int>(v);
    seen[k] = true;
  }
  return true;
}

// The same for a command line of at most one option.
inline bool int_option(int argc, char** argv, const char* tool, const char* flag, int lo, int hi, int& value) {
  return int_options(argc, argv, tool, {{flag, lo, hi, &value}});
}

// Whether a CUDA device exists; if not, says so on stderr in `tool`'s name
// (the caller then exits with 3, the project's runtime-failure code).
inline bool have_device(const char* tool) {
  if (cuda_device_count() > 0) return true;
  std::fprintf(stderr, "%s: no CUDA device (%s)\n", tool, cuda_unavailable_reason().c_str());
  return false;
}

}  // namespace gpudict::bench
