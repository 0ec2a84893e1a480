// The replay engine: drives one Dictionary through a workload's steps, times
// every step, verifies every query result, and collects the report.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "core/common/device_info.hpp"
#include "workloads/verifier.hpp"
#include "workloads/workload.hpp"

namespace gpudict {

struct ReplayOptions {
  std::string structure = "this structure";  // named in refusals (refuse_unsupported)
  bool verify = true;
  int repeat = 1;                 // timed repetitions; the report gives the median
  std::string results_path;       // write every query result here (docs/output-formats.md)
  bool results_comment = false;   // with a "# gpudict results v1" first line
  bool gpu = true;                // check device memory before running
  std::function<void(const std::string&)> progress;  // --verbose: one line per step, to stderr
  // Called after every batch (the live progress line): batches done so far
  // over all repetitions, and the name of the step the batch belongs to.
  std::function<void(uint64_t batches_done, const std::string& step)> batch_done;
};

// One report row: one step and one timed category.
struct StepRow {
  Phase phase = Phase::Update;
  uint64_t ops = 0;
  uint64_t verified = 0;   // query results verified (always 0 for build/update/snapshot)
  bool has_results = false; // the category returns results (lookup, count, range, successor, concurrent)
  double device_ms = 0;    // median over repetitions
  std::vector<double> samples;  // every repetition's device ms, in run order

  // The fastest and slowest repetition (the median's when none were kept).
  double min_ms() const { return samples.empty() ? device_ms : *std::min_element(samples.begin(), samples.end()); }
  double max_ms() const { return samples.empty() ? device_ms : *std::max_element(samples.begin(), samples.end()); }
};

struct StepReport {
  uint64_t index = 0;
  std::string kind;  // "build", "phase", "snapshot", "drop_snapshot"
  std::string name;
  ExecMode mode = ExecMode::Phased;
  std::string snapshot;  // phase queries run against this snapshot
  uint64_t batches = 0;
  std::array<uint64_t, kNumOpTypes> ops{};
  std::vector<StepRow> rows;
  double e2e_ms = 0;        // median over repetitions; host wall clock incl. transfers
  double gen_ms = 0;        // host time generating or reading the step's operations (first repetition)
  double verify_ms = 0;     // host time checking the step's results against the reference (first repetition)
  uint64_t mismatches = 0;  // in this step (first repetition)
  Params before, after;     // cleanup steps: the structure's figures around it (first repetition)
  uint64_t device_bytes = 0;  // device memory held after the step (first repetition)
};

// One batch's device time (median over repetitions), for --batch-times.
struct BatchTime {
  uint64_t batch = 0;  // index over the whole workload
  uint64_t step = 0;   // report step it belongs to
  uint64_t ops = 0;
  uint64_t updates = 0;
  double device_ms = 0;
};

// Where and how a run was made: filled by the CLI, printed in the JSON run
// record and the text report's header.
struct Provenance {
  std::string version;  // gpudict's
  std::string commit;   // git describe of the source tree built, or "unknown"
  std::string command;  // the command line, shell-quoted
  std::string host;
  std::string date;     // start of the run, ISO 8601 UTC
  std::string driver, runtime;  // CUDA versions ("none" without a driver)
  std::optional<DeviceDescription> gpu;  // the device used (none on the CPU backend)
};

struct RunReport {
  WorkloadHeader workload;
  std::string structure;
  std::string backend;  // "gpu" or "cpu"
  std::string device;   // device name, or "CPU reference"
  Params parameters;
  int repeat = 1;
  bool verified = false;  // verification ran
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::vector<Mismatch> first_mismatches;
  std::vector<StepReport> steps;
  Stats final_stats;
  uint64_t peak_device_bytes = 0;
  uint64_t final_device_bytes = 0;  // held at the end of the first repetition
  double total_device_ms = 0;
  double total_e2e_ms = 0;
  // Host time (first repetition): generation, verification. wall_ms: the
  // whole replay, every repetition, structure set-up and teardown included.
  double total_gen_ms = 0;
  double total_verify_ms = 0;
  double wall_ms = 0;
  uint64_t peak_host_bytes = 0;  // the process's maximum resident set at the end (the command fills it)
  std::vector<BatchTime> batch_times;
  Provenance provenance;
};

using SourceFactory = std::function<std::unique_ptr<StepSource>()>;
using DictionaryFactory = std::function<std::unique_ptr<Dictionary>()>;

// Refuses (InputError, exit 2) a workload that uses an operation, a snapshot
// step or a key type the structure does not support, naming the structures
// that do.
void check_supported(const std::string& structure, const Capabilities& caps, const WorkloadHeader& header,
                     const WorkloadSummary& summary);

RunReport replay(const SourceFactory& open_source, const DictionaryFactory& make_dictionary,
                 const WorkloadSummary& summary, const ReplayOptions& options);

}  // namespace gpudict
