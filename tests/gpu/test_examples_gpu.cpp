// Every example workload, and generated random/adversarial ones, replayed on
// every built GPU structure that supports them, verified by the CPU reference
// through the engine.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <map>
#include <set>
#include <sys/wait.h>

#include "../cli_helpers.hpp"
#include "workloads/registry/registry.hpp"
#include "core/common/errors.hpp"
#include "workloads/replay.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
namespace fs = std::filesystem;

namespace {

// The built structures; `options` overrides their defaults by name.
std::vector<const StructureInfo*> built_structures() {
  std::vector<const StructureInfo*> v;
  for (const auto& s : structures())
    if (s.make_gpu) v.push_back(&s);
  return v;
}

RunReport run_on(const StructureInfo& info, const std::string& path, uint64_t seed = 0, bool override_seed = false,
                 const std::map<std::string, std::string>& options = {}) {
  OpenOptions oo{override_seed, seed};
  WorkloadSummary summary = summarize_workload(path, oo);
  StructureConfig cfg;
  const WorkloadHeader header = open_workload(path, oo)->header();
  cfg.key_type = header.key_type;  // the structure at the workload's widths, as the CLI makes it
  cfg.value_type = header.value_type;
  for (const auto& o : info.options) cfg.options[o.name] = o.default_value;
  for (const auto& [k, v] : options) cfg.options[k] = v;
  ReplayOptions opt;
  opt.gpu = true;
  opt.structure = info.name;  // as the CLI names it in refusals
  return replay([&] { return open_workload(path, oo); }, [&] { return info.make_gpu(cfg); }, summary, opt);
}

// Runs `path` on every built structure that supports it; the names of those
// that ran it (none: false in a boolean test).
struct Ran {
  std::set<std::string> names;
  explicit operator bool() const { return !names.empty(); }
};
Ran verify_everywhere(const std::string& path, uint64_t seed = 0, bool override_seed = false) {
  Ran ran;
  for (const StructureInfo* info : built_structures()) {
    OpenOptions oo{override_seed, seed};
    auto src = open_workload(path, oo);
    // Capabilities may depend on options (the slab hash's --mode): the defaults here.
    StructureConfig cfg;
    for (const auto& o : info->options) cfg.options[o.name] = o.default_value;
    cfg.key_type = src->header().key_type;
    cfg.value_type = src->header().value_type;
    try {
      check_supported(info->name, info->caps_with(cfg), src->header(), summarize_workload(path, oo));
    } catch (const InputError&) {
      continue;
    }
    // Small batch sizes exercise the LSM's level arithmetic on small examples.
    std::map<std::string, std::string> opts;
    if (info->name == "lsm") opts["batch-size"] = "256";
    RunReport rep;
    try {
      rep = run_on(*info, path, seed, override_seed, opts);
    } catch (const InputError& e) {
      // A hash structure refuses a count or range over several keys (the
      // graph: one that is not a whole vertex block) only when the batch
      // holding it runs (point_count_range, vertex_count_range): not a
      // workload for it. Any other input error is a failure.
      const Capabilities caps = info->caps_with(cfg);
      if (caps.ordered || !(caps.point_count_range || caps.vertex_count_range)) throw;
      const std::string refusal = info->name + (caps.vertex_count_range
                                                    ? " answers count and range over a whole vertex block only"
                                                    : " answers count and range for a single key only");
      if (std::string(e.what()).rfind(refusal, 0) != 0) throw;
      continue;
    }
    CHECK_MESSAGE(rep.mismatches == 0, info->name << " on " << path);
    CHECK_MESSAGE(rep.checked > 0, info->name << " on " << path);
    ran.names.insert(info->name);
  }
  return ran;
}

RunReport run_on_gpu(const std::string& path, uint64_t seed = 0, bool override_seed = false) {
  const StructureInfo* info = find_structure("sorted-array");
  REQUIRE(info != nullptr);
  return run_on(*info, path, seed, override_seed);
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string p = "/tmp/gpudict_gpu_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("gpu examples: every example verifies on every built structure") {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(GPUDICT_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".yaml" && e.path().filename().string().rfind("bench-", 0) != 0)
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 5);
  // Every built structure runs at least one example (none is dropped by a
  // capability check or a refusal that should not have happened).
  std::map<std::string, int> runs;
  for (const auto& f : files) {
    const Ran ran = verify_everywhere(f);
    CHECK_MESSAGE(ran, f);
    for (const auto& name : ran.names) ++runs[name];
  }
  for (const StructureInfo* info : built_structures()) {
    INFO(info->name);
    CHECK(runs[info->name] > 0);
  }
}

TEST_CASE("gpu examples: random mixed workloads in both modes, several seeds") {
  std::string p = write_temp("random.yaml", R"(
seed: 3
initial: {count: 200000, keys: {distribution: uniform, min: 0, max: 1000000}}
steps:
  - phase: {name: p, batches: 6, batch_size: 50000, hit_ratio: 0.6,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1},
            keys: {distribution: uniform, min: 0, max: 1000000},
            range_length: {distribution: geometric, mean: 20}}
  - snapshot: s
  - phase: {name: c, batches: 4, batch_size: 30000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1},
            keys: {distribution: zipfian, exponent: 1.1, min: 0, max: 1000000}}
  - phase: {name: old, batches: 2, batch_size: 20000, snapshot: s,
            mix: {insert: 0.5, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1}}
  - drop_snapshot: s
)");
  // Snapshots: the structures that keep them run it (the sorted array and
  // the LSM); the B-Tree and the slab hash are checked by their own tests.
  for (uint64_t seed : {1ull, 2ull, 3ull}) {
    const Ran ran = verify_everywhere(p, seed, true);
    CHECK_MESSAGE(ran.names.count("sorted-array"), "seed " << seed);
    CHECK_MESSAGE(ran.names.count("lsm"), "seed " << seed);
  }
  std::remove(p.c_str());
}

TEST_CASE("gpu examples: batches of size 1 and of a million") {
  std::string p = write_temp("sizes.yaml", R"(
seed: 9
initial: {count: 1}
steps:
  - phase: {name: ones, batches: 50, batch_size: 1, hit_ratio: 0.5,
            mix: {insert: 0.4, delete: 0.2, lookup: 0.1, count: 0.1, range: 0.1, successor: 0.1}}
  - phase: {name: million, batches: 2, batch_size: 1048576, hit_ratio: 0.5,
            mix: {insert: 0.5, delete: 0.1, lookup: 0.2, count: 0.05, range: 0.05, successor: 0.1}}
)");
  RunReport rep = run_on_gpu(p);
  CHECK(rep.mismatches == 0);
  CHECK(rep.checked == 838860);  // 40% queries of 2 x 2^20
  // Every built structure: all of them run point and ordered queries in
  // phased batches, except that a hash structure refuses ranges over
  // several keys (then it is not listed).
  const Ran ran = verify_everywhere(p);
  for (const char* name : {"sorted-array", "lsm", "btree"}) CHECK_MESSAGE(ran.names.count(name), name);
  std::remove(p.c_str());
}

TEST_CASE("gpu examples: a workload larger than device memory is refused before it runs") {
  // At most 2^32 u32 keys can be resident however many are inserted: about
  // 103 GB of sorted-array arrays, and each live snapshot adds a copy of
  // 34 GB; with two, about 175 GB, more than any device these tests run on.
  std::string p = write_temp("huge.yaml", R"(
seed: 1
initial: {count: 1000}
steps:
  - snapshot: a
  - snapshot: b
  - phase: {name: grow, batches: 4096, batch_size: 67108864, mix: {insert: 1.0}}
)");
  // Under a time limit: were it not refused, it would run for hours.
  const std::string cmd = "timeout 120 '" + gpudict::testing::gpudict_binary() + "' sorted-array " + p +
                          " --backend gpu 2>" + p + ".err";
  const int status = std::system(cmd.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  std::ifstream err(p + ".err");
  std::string line;
  std::getline(err, line);
  CHECK(line.rfind("gpudict: out of device memory: needs ", 0) == 0);
  CHECK(line.find(", free ") != std::string::npos);
  std::remove(p.c_str());
  std::remove((p + ".err").c_str());
}
