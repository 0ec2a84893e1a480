// Sharded GPU runs (`--devices`): every example on every shardable structure
// verified with several shards (on one device, or on two where the machine
// has them), the results equal to one shard's where the structure's answers
// are deterministic, and the errors that name a device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "../cli_helpers.hpp"
#include "memory_hog.hpp"
#include "core/common/device_info.hpp"
#include "core/common/errors.hpp"
#include "workloads/registry/registry.hpp"
#include "workloads/sharding.hpp"

using namespace gpudict;
using namespace gpudict::testing;

namespace {

// Three shards: on devices 0 and 1 where there are two, else all on 0.
std::string shard_devices() { return cuda_device_count() > 1 ? "0,1,0" : "0,0,0"; }

}  // namespace

TEST_CASE("sharded: the examples verify sharded on every shardable structure, at both widths") {
  const std::string devices = shard_devices();
  MESSAGE("shards on devices " << devices);
  const std::map<std::string, std::vector<std::string>> runs = {
      {"sorted-array", {"quickstart", "snapshots", "adversarial", "mixed-concurrent", "skewed"}},
      {"lsm", {"quickstart", "snapshots", "adversarial", "mixed-concurrent"}},
      {"btree", {"adversarial", "mixed-concurrent", "churn-hot-point"}},
      {"mvbtree", {"quickstart", "snapshots", "mixed-concurrent"}},
      {"slabhash", {"hash-quickstart", "churn-hot-point"}},
  };
  for (const auto& [structure, examples] : runs) {
    if (!find_structure(structure) || !find_structure(structure)->make_gpu) continue;
    for (const auto& ex : examples)
      for (const char* widths : {"", " --key-type u64 --value-type u64"}) {
        const std::string args = structure + " examples/" + ex + ".yaml --backend gpu --format json --devices " +
                                 devices + widths;
        INFO("gpudict " << args);
        const auto r = run_gpudict(args);
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("\"mismatches\":0") != std::string::npos);
        CHECK(r.out.find("\"shards\":3") != std::string::npos);
      }
  }
}

TEST_CASE("sharded: results equal one GPU's where the answers are deterministic") {
  // The sorted array resolves a key's several updates in one batch by the
  // last (LastWins), so its results do not depend on the order of work.
  for (const char* ex : {"quickstart", "snapshots", "adversarial"}) {
    const std::string one = temp_path("one.tsv"), many = temp_path("many.tsv");
    const std::string base = std::string("sorted-array examples/") + ex + ".yaml --backend gpu -q";
    const auto a = run_gpudict(base + " --results " + one);
    const auto b = run_gpudict(base + " --devices " + shard_devices() + " --results " + many);
    INFO(ex << ": " << a.err << b.err);
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    CHECK(slurp(one) == slurp(many));
    std::remove(one.c_str());
    std::remove(many.c_str());
  }
}

TEST_CASE("sharded: a device that does not exist, and a shard out of memory, name the device") {
  const int n = cuda_device_count();
  const auto r = run_gpudict("sorted-array examples/quickstart.yaml --backend gpu --devices 0," + std::to_string(n));
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("no CUDA device " + std::to_string(n)) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

  const StructureInfo* info = find_structure("sorted-array");
  REQUIRE(info);
  StructureConfig cfg;
  for (const auto& o : info->options) cfg.options[o.name] = o.default_value;
  ShardSetup setup;
  setup.structure = "sorted-array";
  setup.devices = {"0", "0"};
  setup.enter = [](uint32_t) { select_device(0); };
  setup.make = [&](uint32_t) { return info->make_gpu(cfg); };
  auto d = make_sharded_dictionary(std::move(setup));
  KeyValues kv;
  for (uint64_t i = 0; i < (1u << 24); ++i) {
    kv.keys.push_back(i * 255);
    kv.values.push_back(i);
  }
  auto hog = fill_device(16u << 20, "sharded out of memory");
  if (!hog) return;
  DeviceTime t;
  const std::string message = runtime_failure_of([&] { d->build(kv, t); });
  CHECK(message.find("on device 0: ") != std::string::npos);
  CHECK(message.find("shard ") == 0);
}
