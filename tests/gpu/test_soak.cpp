// Hot-key churn over many batches on every built structure, verified through
// the engine: the rate of the last batches stays within 1.5x of the first
// ones, and the device memory held at the end within 2x of the live data's
// need (at most the window's keys) plus the structure's fixed overhead (the
// memory it held after the first phase: its scratch and pools at steady
// state). A smaller version of
// scripts/soak.py (10,000 batches of 8,192).
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>

#include "../scratch_dir.hpp"
#include "workloads/registry/registry.hpp"
#include "workloads/replay.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;

namespace {

// `phases` phases of `batches` concurrent batches of `size` operations on
// keys in [lo, hi]; `ordered`: every query type, else point operations.
std::string churn_yaml(uint64_t initial, uint64_t lo, uint64_t hi, const std::string& dist, bool ordered,
                       int phases, int batches, int size, bool wide) {
  const std::string mix = ordered ? "{insert: 0.25, delete: 0.25, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1}"
                                  : "{insert: 0.25, delete: 0.25, lookup: 0.5}";
  std::string y = std::string(wide ? "key_type: u64\n" : "") + "seed: 5\ninitial: {count: " + std::to_string(initial) + ", keys: {distribution: uniform, min: " +
                  std::to_string(lo) + ", max: " + std::to_string(hi) + "}}\nsteps:\n";
  for (int p = 0; p < phases; ++p)
    y += "  - phase: {name: p" + std::to_string(p) + ", batches: " + std::to_string(batches) +
         ", batch_size: " + std::to_string(size) + ", mode: concurrent, mix: " + mix + ", keys: {distribution: " +
         dist + ", min: " + std::to_string(lo) + ", max: " + std::to_string(hi) +
         "}, range_length: {distribution: uniform, min: 1, max: 64, unit: keys}}\n";
  return y;
}

double phase_rate(const StepReport& s) {
  uint64_t ops = 0;
  double ms = 0;
  for (const StepRow& r : s.rows) {
    ops += r.ops;
    ms += r.device_ms;
  }
  return ms > 0 ? static_cast<double>(ops) / ms : 0.0;
}

void soak(const std::string& name, uint64_t initial, uint64_t window, const std::string& dist) {
  const uint64_t lo = (1ull << 31) - window / 2, hi = lo + window - 1;
  for (const auto& info : structures()) {
    if (!info.make_gpu) continue;
    CAPTURE(info.name);
    CAPTURE(name);
    const bool ordered = info.caps.ordered;
    // A structure of 64-bit keys only (the graph) gets the same keys as
    // u64: edges of vertex 0 to destinations around 2^31, one hot table.
    const bool wide = !info.caps.supports(KeyType::U32);
    const std::string path = testing::write_scratch_file(
        "soak-" + name + (ordered ? "-ordered" : "-point") + (wide ? "-u64" : "") + ".yaml",
        churn_yaml(initial, lo, hi, dist, ordered, 4, 500, 1024, wide));
    OpenOptions oo{};
    const WorkloadSummary summary = summarize_workload(path, oo);
    StructureConfig cfg;
    if (wide) cfg.key_type = KeyType::U64;
    for (const auto& o : info.options) cfg.options[o.name] = o.default_value;
    ReplayOptions opt;
    opt.gpu = true;
    const RunReport rep = replay([&] { return open_workload(path, oo); }, [&] { return info.make_gpu(cfg); }, summary, opt);
    CHECK(rep.mismatches == 0);
    uint64_t queries = 0;
    for (const StepReport& st : rep.steps)
      for (OpType ty : {OpType::Lookup, OpType::Count, OpType::Range, OpType::Successor})
        queries += st.ops[static_cast<int>(ty)];
    CHECK(queries > 0);
    CHECK(rep.checked == queries);  // every query's result
    std::vector<const StepReport*> phases;
    for (const StepReport& s : rep.steps)
      if (s.kind == "phase") phases.push_back(&s);
    REQUIRE(phases.size() == 4);
    const double first = phase_rate(*phases.front()), last = phase_rate(*phases.back());
    INFO("ops per device ms: first phase " << first << ", last " << last);
    CHECK(last * 1.5 >= first);
    const uint64_t fixed = phases.front()->device_bytes;
    const uint64_t bound = 2 * (fixed + window * 8);  // the live keys: at most the window's
    INFO("device bytes after the first phase " << fixed << ", at the end " << phases.back()->device_bytes);
    CHECK(phases.back()->device_bytes <= bound);
  }
}

}  // namespace

TEST_CASE("soak: hot keys (64 around 2^31), 2,000 concurrent batches, every structure") {
  soak("hot", 32, 64, "uniform");
}

TEST_CASE("soak: 2^16 keys, zipfian 0.99, 2,000 concurrent batches, every structure") {
  soak("zipf", 1 << 15, 1 << 16, "zipfian, exponent: 0.99");
}
