#include "workloads/step_cache.hpp"

#include <unistd.h>

namespace gpudict {

class StepCache::Pass : public StepSource {
 public:
  explicit Pass(StepCache& cache) : cache_(cache) {}
  const WorkloadHeader& header() const override { return cache_.source_->header(); }
  bool next(Step& step) override {
    if (i_ < cache_.steps_.size()) {
      step = cache_.steps_[i_++];  // copied: the engine reuses `step`, the record stays for the next pass
      return true;
    }
    if (cache_.complete_) return false;
    if (!cache_.source_->next(step)) {
      cache_.complete_ = true;
      return false;
    }
    cache_.steps_.push_back(step);
    ++i_;
    return true;
  }

 private:
  StepCache& cache_;
  size_t i_ = 0;
};

std::unique_ptr<StepSource> StepCache::pass() { return std::make_unique<Pass>(*this); }

bool StepCache::fits_in_memory(const WorkloadSummary& summary) {
  uint64_t ops = 0;
  for (uint64_t n : summary.ops) ops += n;
  // Batch: a type (1 byte), a key and an argument (8 bytes each) per
  // operation; the initial pairs: a key and a value (8 bytes each).
  const double bytes = 17.0 * static_cast<double>(ops) + 16.0 * static_cast<double>(summary.initial);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return false;
  return bytes <= 0.25 * static_cast<double>(pages) * static_cast<double>(page);
}

}  // namespace gpudict
