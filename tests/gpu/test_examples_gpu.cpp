// Every example workload, and generated random/adversarial ones, replayed on
// every built GPU structure that supports them, verified by the CPU reference
// through the engine.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <map>
#include <sys/wait.h>

#include "../cli_helpers.hpp"
#include "core/api/registry.hpp"
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
  for (const auto& o : info.options) cfg.options[o.name] = o.default_value;
  for (const auto& [k, v] : options) cfg.options[k] = v;
  ReplayOptions opt;
  opt.gpu = true;
  return replay([&] { return open_workload(path, oo); }, [&] { return info.make_gpu(cfg); }, summary, opt);
}

// Runs `path` on every built structure that supports it; false if none does.
bool verify_everywhere(const std::string& path, uint64_t seed = 0, bool override_seed = false) {
  bool ran = false;
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
    } catch (const InputError&) {
      // A hash structure refuses a count or range over several keys only when
      // the batch holding it runs (point_count_range): not a workload for it.
      const Capabilities caps = info->caps_with(cfg);
      if (caps.ordered || !caps.point_count_range) throw;
      continue;
    }
    CHECK_MESSAGE(rep.mismatches == 0, info->name << " on " << path);
    CHECK_MESSAGE(rep.checked > 0, info->name << " on " << path);
    ran = true;
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
  for (const auto& f : files) CHECK_MESSAGE(verify_everywhere(f), f);
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
  for (uint64_t seed : {1ull, 2ull, 3ull}) CHECK_MESSAGE(verify_everywhere(p, seed, true), "seed " << seed);
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
  CHECK(verify_everywhere(p));
  std::remove(p.c_str());
}

TEST_CASE("gpu examples: a workload larger than device memory is refused before it runs") {
  std::string p = write_temp("huge.yaml", R"(
seed: 1
initial: {count: 1000}
steps:
  - phase: {name: grow, batches: 4096, batch_size: 67108864, mix: {insert: 1.0}}
)");
  const std::string cmd = "'" + gpudict::testing::gpudict_binary() + "' sorted-array " + p + " --backend gpu 2>" + p + ".err";
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
