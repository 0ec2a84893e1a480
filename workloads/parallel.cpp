#include "workloads/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpudict {

namespace {
std::atomic<unsigned> g_threads{0};  // 0: the default
}

unsigned host_threads() {
  const unsigned set = g_threads.load();
  if (set) return set;
  if (const char* env = std::getenv("GPUDICT_THREADS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v > 0) return static_cast<unsigned>(std::min<long>(v, 1024));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

void set_host_threads(unsigned n) { g_threads.store(n); }

void parallel_for(uint64_t n, uint64_t grain, const std::function<void(uint64_t, uint64_t)>& body) {
  if (n == 0) return;
  grain = std::max<uint64_t>(grain, 1);
  const uint64_t pieces = std::min<uint64_t>(host_threads(), (n + grain - 1) / grain);
  if (pieces <= 1) {
    body(0, n);
    return;
  }
  std::exception_ptr error;
  std::mutex m;
  auto run = [&](uint64_t p) {
    try {
      body(n * p / pieces, n * (p + 1) / pieces);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(pieces - 1);
  for (uint64_t p = 1; p < pieces; ++p) threads.emplace_back(run, p);
  run(0);
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

uint64_t parallel_pieces(uint64_t n, uint64_t grain) {
  grain = std::max<uint64_t>(grain, 1);
  return std::max<uint64_t>(1, std::min<uint64_t>(host_threads(), n / grain));
}

void parallel_each(uint64_t pieces, const std::function<void(uint64_t)>& body) {
  parallel_for(pieces, 1, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t p = lo; p < hi; ++p) body(p);
  });
}

}  // namespace gpudict
