// The live progress line on stderr: batches done of the total, the step
// running, the rate and the time left. Shown when stderr is a terminal (or
// when asked for with --progress), never with --quiet; redrawn at most ten
// times a second, erased when the run ends or before other stderr output.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gpudict {

class ProgressLine {
 public:
  // total: batches of the whole run (every repetition); force: --progress.
  ProgressLine(uint64_t total, bool force, bool quiet);
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  void update(uint64_t done, const std::string& step);
  // Erases the line (before a message of its own on stderr, and at the end).
  void clear();

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_;
  bool shown_ = false;
  uint64_t total_;
  Clock::time_point start_, last_;
};

}  // namespace gpudict
