// Generates a workload once for every pass over it: the repetitions of a
// run (--repeat N) and the structures of `gpudict compare`. Each pass reads
// the steps recorded so far, then goes on reading the source, recording
// what it reads; so a pass that stopped early (a structure refusing a batch
// part-way) leaves a record the next pass continues. Held in host memory, so
// the engine uses it only when the workload's operations fit a share of the
// machine's memory (fits_in_memory).
#pragma once

#include <memory>
#include <vector>

#include "workloads/workload.hpp"

namespace gpudict {

class StepCache {
 public:
  explicit StepCache(std::unique_ptr<StepSource> source) : source_(std::move(source)) {}

  // A pass over the workload from its first step. Passes run one at a
  // time: a pass is read (to its end or not) before the next one starts.
  std::unique_ptr<StepSource> pass();
  // Whether a pass has read the source to its end (every later pass only
  // replays the record).
  bool complete() const { return complete_; }

  // Whether a workload of this summary, held as the engine holds batches (a
  // type, a key and an argument per operation; a key and a value per
  // initial pair), takes at most a quarter of the machine's physical memory.
  static bool fits_in_memory(const WorkloadSummary& summary);

 private:
  class Pass;
  std::unique_ptr<StepSource> source_;
  std::vector<Step> steps_;
  bool complete_ = false;
};

}  // namespace gpudict
