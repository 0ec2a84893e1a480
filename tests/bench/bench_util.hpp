// What the hand-run benchmarks in tests/bench share: the median of timed
// runs, and a timed measurement after one warm-up run.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

namespace gpudict::bench {

inline double median(std::vector<double> v) {
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

}  // namespace gpudict::bench
