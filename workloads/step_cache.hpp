// Generates a workload once for every repetition of a run (--repeat N): the
// first pass records each step as the source produces it, later passes read
// the record instead of generating (or reading a file) again. Held in host
// memory, so the engine uses it only when the workload's operations fit a
// share of the machine's memory (fits_in_memory).
#pragma once

#include <memory>
#include <vector>

#include "workloads/workload.hpp"

namespace gpudict {

class StepCache {
 public:
  explicit StepCache(std::unique_ptr<StepSource> source) : source_(std::move(source)) {}

  // The first pass: the source's steps, recorded as they are read.
  std::unique_ptr<StepSource> record();
  // A later pass over the recorded steps. Requires the recording pass to
  // have been read to its end (a replay never stops early, or throws).
  std::unique_ptr<StepSource> replay() const;
  bool complete() const { return complete_; }

  // Whether a workload of this summary, held as the engine holds batches (a
  // type, a key and an argument per operation; a key and a value per
  // initial pair), takes at most a quarter of the machine's physical memory.
  static bool fits_in_memory(const WorkloadSummary& summary);

 private:
  class Recorder;
  class Player;
  std::unique_ptr<StepSource> source_;
  std::vector<Step> steps_;
  bool complete_ = false;
};

}  // namespace gpudict
