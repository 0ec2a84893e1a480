#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace gpudict {

ProgressLine::ProgressLine(uint64_t total, bool force, bool quiet)
    : enabled_(!quiet && (force || isatty(STDERR_FILENO))), total_(total), start_(Clock::now()), last_() {}

void ProgressLine::update(uint64_t done, const std::string& step) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (done < total_ && shown_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double s = std::chrono::duration<double>(now - start_).count();
  const double rate = s > 0 ? static_cast<double>(done) / s : 0.0;
  std::string line = fmt::format("gpudict: {} of {} batches", done, total_);
  if (total_ > 0) line += fmt::format(" ({:.0f}%)", 100.0 * static_cast<double>(done) / static_cast<double>(total_));
  line += fmt::format(", step '{}', {:.1f} batches/s", step, rate);
  if (rate > 0 && done < total_) line += fmt::format(", about {:.0f} s left", static_cast<double>(total_ - done) / rate);
  // \r: back to the line's start; ESC[K: erase what a longer line left.
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace gpudict
