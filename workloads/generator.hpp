// Generated workloads: a validated WorkloadSpec turned into steps, one batch
// at a time, deterministic from the seed bit for bit (docs/workload-format.md,
// "Generation").
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "workloads/spec.hpp"
#include "workloads/workload.hpp"

namespace gpudict {

// Operations of each type in one batch of `batch_size`: floor(mix[t] *
// batch_size) each, the remainder handed out one by one to the types with
// the largest fractional parts (ties: the lower OpType first). Types with mix
// 0 get none; the counts sum to batch_size. A mix of whole numbers summing
// to batch_size is taken as the counts themselves.
std::array<uint64_t, kNumOpTypes> batch_op_counts(const std::array<double, kNumOpTypes>& mix, uint64_t batch_size);

// The initial contents the spec describes (generated or read from its files).
KeyValues generate_initial(const WorkloadSpec& spec);
// Whether generate_initial can fail on a spec that parsed: a key file (keys
// above the key type) or keys drawn until `count` are unique (every
// distribution but uniform and sequential, which are unique by construction).
bool initial_can_fail(const InitialSpec& in);

// Steps of a YAML workload: Initial, then per phase a Phase step and its
// Batch steps, per explicit batch a Phase step and one Batch step, and the
// Snapshot/DropSnapshot steps, in the spec's order.
class GeneratedSource : public StepSource {
 public:
  explicit GeneratedSource(WorkloadSpec spec);
  ~GeneratedSource() override;
  GeneratedSource(const GeneratedSource&) = delete;
  GeneratedSource& operator=(const GeneratedSource&) = delete;

  const WorkloadHeader& header() const override;
  bool next(Step& step) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Exact summary of a spec, computed without generating anything.
WorkloadSummary summarize_spec(const WorkloadSpec& spec);

}  // namespace gpudict
