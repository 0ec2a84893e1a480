#include "workloads/shard_threads.hpp"

#include <utility>

namespace gpudict {

ShardThreads::ShardThreads(uint32_t shards, std::function<void(uint32_t)> enter)
    : enter_(std::move(enter)), slots_(shards) {
  threads_.reserve(shards);
  try {
    for (uint32_t s = 0; s < shards; ++s) threads_.emplace_back([this, s] { loop(s); });
  } catch (...) {  // (no thread could be made) the ones made stop before the error leaves
    stop();
    throw;
  }
}

ShardThreads::~ShardThreads() { stop(); }

void ShardThreads::stop() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void ShardThreads::loop(uint32_t s) {
  std::exception_ptr enter_error;
  try {
    if (enter_) enter_(s);
  } catch (...) {
    enter_error = std::current_exception();  // reported by every task, which then does not run
  }
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !slots_[s].done; });
    if (!slots_[s].done) {
      std::function<void()> task = std::move(slots_[s].task);
      lock.unlock();
      std::exception_ptr error = enter_error;
      if (!error) {
        try {
          task();
        } catch (...) {
          error = std::current_exception();
        }
      }
      lock.lock();
      slots_[s].error = error;
      slots_[s].done = true;
      finished_.notify_all();
      continue;
    }
    if (stop_) return;
  }
}

void ShardThreads::run_all(const std::function<void(uint32_t)>& work) {
  {
    std::lock_guard<std::mutex> lock(m_);
    for (uint32_t s = 0; s < slots_.size(); ++s) {
      slots_[s].task = [&work, s] { work(s); };
      slots_[s].error = nullptr;
      slots_[s].done = false;
    }
  }
  wake_.notify_all();
  std::unique_lock<std::mutex> lock(m_);
  finished_.wait(lock, [&] {
    for (const Slot& slot : slots_)
      if (!slot.done) return false;
    return true;
  });
  for (const Slot& slot : slots_)
    if (slot.error) std::rethrow_exception(slot.error);
}

}  // namespace gpudict
