// One host thread per shard of a sharded structure, for its whole life.
//
// A GPU shard's calls must come from a thread whose current device is the
// shard's (streams, launches and allocations are per device), and the shards
// of one batch should run at once. Each thread calls `enter(shard)` once when
// it starts (cudaSetDevice for a GPU shard) and then runs the work it is
// given; every call to a shard, its creation and its destruction included,
// runs on that shard's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpudict {

class ShardThreads {
 public:
  ShardThreads(uint32_t shards, std::function<void(uint32_t shard)> enter);
  ~ShardThreads();  // joins the threads (after the work in progress)
  ShardThreads(const ShardThreads&) = delete;
  ShardThreads& operator=(const ShardThreads&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(threads_.size()); }
  // Runs work(s) on every shard's thread at once; returns when all are done
  // and rethrows the first exception (by shard) if any threw.
  void run_all(const std::function<void(uint32_t shard)>& work);

 private:
  struct Slot {
    std::function<void()> task;  // empty: nothing to do
    std::exception_ptr error;
    bool done = true;
  };
  void loop(uint32_t s);
  void stop();  // after the work in progress; joins the threads

  std::function<void(uint32_t)> enter_;
  std::mutex m_;
  std::condition_variable wake_, finished_;
  std::vector<Slot> slots_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gpudict
