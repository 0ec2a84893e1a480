// A diagnostic: with GPUDICT_TRACE=1 in the environment, a structure marks
// points of a batch on its stream (a CUDA event each) and prints, per mark,
// the device time since the previous one to stderr, and in brackets the
// host's time between the two mark() calls. Time between two marks is the
// work between them plus any time the device waited for the host to launch
// it, so gaps in a timed region show up at the mark after them; a device
// time much longer than the host's says the device itself was slow (the
// host issues work asynchronously, so its time is usually the shorter).
// Disabled (the default), mark() and flush() cost a branch.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/common/cuda_check.hpp"

namespace gpudict {

class TraceEvents {
 public:
  TraceEvents() {
    const char* env = std::getenv("GPUDICT_TRACE");
    on_ = env != nullptr && env[0] == '1';
  }
  ~TraceEvents() {
    for (cudaEvent_t e : pool_) cudaEventDestroy(e);
  }
  TraceEvents(const TraceEvents&) = delete;
  TraceEvents& operator=(const TraceEvents&) = delete;

  // Records an event named `what` on `s` (the first mark of a trace is its origin).
  void mark(cudaStream_t s, const char* what) {
    if (!on_) return;
    if (used_ == pool_.size()) {
      cudaEvent_t e{};
      GPUDICT_CUDA(cudaEventCreate(&e));
      pool_.push_back(e);
    }
    GPUDICT_CUDA(cudaEventRecord(pool_[used_], s));
    host_.push_back(std::chrono::steady_clock::now());
    names_.emplace_back(what);
    ++used_;
  }

  // Waits for the last mark and prints "trace <title>: what us, ..." (one
  // line per trace), then starts a new trace.
  void flush(const char* title) {
    if (!on_ || used_ == 0) return;
    GPUDICT_CUDA(cudaEventSynchronize(pool_[used_ - 1]));
    std::string line = std::string("trace ") + title + ":";
    float total = 0.f;
    for (size_t i = 1; i < used_; ++i) {
      float ms = 0.f;
      GPUDICT_CUDA(cudaEventElapsedTime(&ms, pool_[i - 1], pool_[i]));
      total += ms;
      const double host_us = std::chrono::duration<double, std::micro>(host_[i] - host_[i - 1]).count();
      char buf[128];
      std::snprintf(buf, sizeof buf, " %s %.1f [%.1f]", names_[i].c_str(), ms * 1e3f, host_us);
      line += buf;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, " | total %.1f us", total * 1e3f);
    std::fprintf(stderr, "%s%s\n", line.c_str(), buf);
    used_ = 0;
    names_.clear();
    host_.clear();
  }

 private:
  bool on_ = false;
  std::vector<cudaEvent_t> pool_;
  std::vector<std::string> names_;
  std::vector<std::chrono::steady_clock::time_point> host_;  // when each mark() was called
  size_t used_ = 0;
};

}  // namespace gpudict
