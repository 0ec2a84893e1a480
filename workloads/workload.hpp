// The workload model: a header plus a stream of steps. A YAML workload is
// generated step by step (deterministic from the seed); a trace file or a key
// file is read step by step. The replay engine consumes any StepSource.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "workloads/width_override.hpp"

namespace gpudict {

struct WorkloadHeader {
  std::string name;       // workload name (YAML `name`, else the file's stem)
  std::string path;       // file it came from
  std::string format;     // "yaml", "trace", "keys-raw", "keys-sosd"
  KeyType key_type = KeyType::U32;
  KeyType value_type = KeyType::U32;
  uint64_t seed = 0;
  bool undirected = false;  // a YAML graph workload whose updates are mirrored (`undirected: true`)
};

enum class StepKind : uint8_t { Initial = 0, Phase = 1, Batch = 2, Snapshot = 3, DropSnapshot = 4, Cleanup = 5 };

// One step of a workload. Initial comes first (possibly empty). A Phase step
// opens a phase named `name`: the Batch steps after it belong to it. Snapshot
// and DropSnapshot carry the snapshot's name. Cleanup asks the structure to drop
// stale state (Dictionary::cleanup); it changes no query's answer.
struct Step {
  StepKind kind = StepKind::Initial;
  std::string name;
  KeyValues initial;  // kind == Initial
  Batch batch;        // kind == Batch

  // Empties the step for reuse, keeping the vectors' capacity.
  void clear() {
    kind = StepKind::Initial;
    name.clear();
    initial.keys.clear();
    initial.values.clear();
    batch.clear();
  }
};

class StepSource {
 public:
  virtual ~StepSource() = default;
  virtual const WorkloadHeader& header() const = 0;
  // Fills `step` with the next step; false at the end.
  virtual bool next(Step& step) = 0;
};

// Counts that `gpudict check` prints and the engine sizes device memory from.
struct PhaseSummary {
  std::string name;
  ExecMode mode = ExecMode::Phased;
  std::string snapshot;  // queries run against this snapshot, if any
  uint64_t batches = 0;
  uint64_t max_batch = 0;
  std::array<uint64_t, kNumOpTypes> ops{};
};

struct WorkloadSummary {
  uint64_t initial = 0;
  std::vector<PhaseSummary> phases;
  std::vector<std::string> snapshot_steps;  // "snapshot NAME" / "drop_snapshot NAME", in order
  uint64_t cleanups = 0;                    // cleanup steps
  std::array<uint64_t, kNumOpTypes> ops{};  // totals
  uint64_t batches = 0;
  WorkloadBounds bounds;
};

// The bounds on stored keys: max_inserted, the initial contents plus every
// insert (saturating), and max_resident, the same but never more keys than
// the key type has values (some inserts replace): a long run of upserts of
// u32 keys must not ask a map to size itself for more than 2^32 keys.
inline void set_resident_bounds(WorkloadBounds& b, uint64_t initial, uint64_t inserts, KeyType key_type) {
  b.max_inserted = initial + inserts < initial ? UINT64_MAX : initial + inserts;
  b.max_resident = key_type == KeyType::U32 ? std::min<uint64_t>(b.max_inserted, uint64_t{1} << 32) : b.max_inserted;
}

// Opens any workload file: YAML (by extension .yaml/.yml), an operation trace
// (by its magic bytes), otherwise a binary key file (docs/workload-format.md).
// `seed_override` replaces the YAML's seed when set. Throws InputError.
struct OpenOptions {
  bool has_seed_override = false;
  uint64_t seed_override = 0;
  WidthOverride widths;  // YAML only: replaces key_type / value_type (a trace or key file refuses it)
};
std::unique_ptr<StepSource> open_workload(const std::string& path, const OpenOptions& opts = {});

// The workload file itself, before its kind is looked at: InputError
// "PATH: no such file | is a directory | cannot access: ... | cannot open: ... (expected)"
// when it is missing, a directory or unreadable. open_workload and
// summarize_workload call it first; the CLI calls it before anything else
// touches the workload, so each subcommand reports it as one line.
void check_workload_file(const std::string& path);

// Summary without running: exact for YAML (computed from the spec, nothing is
// generated) and for traces (record headers are read, bodies skipped).
WorkloadSummary summarize_workload(const std::string& path, const OpenOptions& opts = {});

// What `gpudict check` adds to the summary: a YAML workload's initial
// contents are read or generated where only that can find the error (a key
// file's keys above the key type, a zipfian, normal or hotset distribution
// too narrow for `count` distinct keys), as a run would; uniform and
// sequential keys are checked from the spec alone, so a check of a large
// uniform workload stays instant. Traces and key files: nothing more.
// Throws InputError.
void check_initial_contents(const std::string& path, const OpenOptions& opts = {});

}  // namespace gpudict
