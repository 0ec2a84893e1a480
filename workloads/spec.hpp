// A YAML workload, parsed and validated (docs/workload-format.md). Every
// problem is an InputError with one line:
//   FILE:LINE:COLUMN: FIELD: what is wrong (what was expected)
// FIELD is the path of the offending field, e.g. steps[2].phase.mix.insert.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/batch.hpp"
#include "workloads/width_override.hpp"
#include "workloads/distributions.hpp"
#include "workloads/graph_gen.hpp"
#include "workloads/keyfile.hpp"

namespace gpudict {

// A position in a YAML file, 1-based (0: unknown).
struct SourcePos {
  std::string file;
  uint64_t line = 0;
  uint64_t column = 0;
  std::string str() const;  // "FILE:LINE:COLUMN" (or "FILE" when unknown)
};

// Throws InputError("POS: FIELD: what (expected)").
[[noreturn]] void throw_spec_error(const SourcePos& pos, const std::string& field, const std::string& what,
                                   const std::string& expected);

enum class InitialValues : uint8_t { Random = 0, Key, Index, File };

struct InitialSpec {
  enum class Source : uint8_t { None = 0, Generated, File, Graph };
  Source source = Source::None;
  uint64_t count = 0;   // number of initial keys (File: resolved, <= the file's count; Graph: 0, its edges known
                        // once made, graph_gen.hpp)
  GraphFamily graph_family = GraphFamily::Rgg;  // Graph: a generated graph's edges
  uint32_t graph_scale = 0;                     // Graph: 2^scale vertices
  KeyDistSpec keys;     // Generated
  KeyFileInfo file;     // File: probed at parse time
  InitialValues values = InitialValues::Random;
  std::string values_file;  // InitialValues::File, resolved path (raw, value width)
  unsigned values_file_width = 4;  // bytes per value in values_file: the width the YAML's value_type declares
  SourcePos pos;            // the `initial:` map
  SourcePos count_pos;      // `count:` (or `initial:` when absent)
  SourcePos file_pos;       // `file:`
  SourcePos values_pos;     // `values:` {file: ...}
};

struct PhaseSpec {
  std::string name;
  uint64_t batches = 0;
  uint64_t batch_size = 0;
  ExecMode mode = ExecMode::Phased;
  std::array<double, kNumOpTypes> mix{};  // sums to 1 (within 1e-9)
  KeyDistSpec keys;
  double hit_ratio = 0.5;
  RangeLengthSpec range_length;
  std::string snapshot;  // queries run against this snapshot; empty: live
};

enum class StepSpecKind : uint8_t { Phase = 0, Batch, Snapshot, DropSnapshot, Cleanup };

struct StepSpec {
  StepSpecKind kind = StepSpecKind::Phase;
  SourcePos pos;
  PhaseSpec phase;   // Phase
  std::string name;  // Batch: phase name (`name:` or batch<index>); Snapshot/DropSnapshot: snapshot
  Batch batch;       // Batch: the explicit operations, mode and snapshot
};

struct WorkloadSpec {
  std::string path;  // the YAML file
  std::string name;  // `name:` or the file's stem
  uint64_t seed = 1;
  KeyType key_type = KeyType::U32;
  KeyType value_type = KeyType::U32;
  InitialSpec initial;
  std::vector<StepSpec> steps;
  // An undirected graph (64-bit edge keys u * 2^32 + v): every generated
  // insert and delete, and every generated initial edge, comes with the
  // same operation on the reverse edge (v, u), right after it.
  bool undirected = false;
};

// Reads and validates a YAML workload. Relative file names inside it resolve
// against the YAML file's directory; key files are probed (not read).
WorkloadSpec parse_workload_spec(const std::string& path, const WidthOverride& widths = {});

// Edit distance (Levenshtein), used for "did you mean" suggestions.
size_t edit_distance(const std::string& a, const std::string& b);
// "did you mean 'X'?" for the closest of `valid` (or a name it abbreviates),
// if it is close enough; "" otherwise.
std::string suggestion(const std::string& name, const std::vector<std::string>& valid);

}  // namespace gpudict
