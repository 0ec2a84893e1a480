// The replay engine: steps, per-category counts, median timing, verification
// wired through, unsupported operations refused before anything runs.
#include <doctest/doctest.h>

#include "cli/exit_codes.hpp"

#include "workloads/registry/registry.hpp"
#include "core/common/errors.hpp"
#include "workloads/cpu_backend.hpp"
#include "workloads/replay.hpp"
#include "workloads/step_cache.hpp"

using namespace gpudict;

namespace {

class VectorSource : public StepSource {
 public:
  VectorSource(WorkloadHeader h, std::vector<Step> steps) : h_(std::move(h)), steps_(std::move(steps)) {}
  const WorkloadHeader& header() const override { return h_; }
  bool next(Step& s) override {
    if (i_ == steps_.size()) return false;
    s = steps_[i_++];
    return true;
  }

 private:
  WorkloadHeader h_;
  std::vector<Step> steps_;
  size_t i_ = 0;
};

// Wraps a correct dictionary and corrupts chosen results, to prove the engine
// reports what the verifier finds.
class FaultyDictionary : public Dictionary {
 public:
  explicit FaultyDictionary(std::unique_ptr<Dictionary> inner) : inner_(std::move(inner)) {}
  const Capabilities& caps() const override { return inner_->caps(); }
  Params parameters() const override { return inner_->parameters(); }
  uint64_t device_bytes_needed(const WorkloadBounds& b) const override { return inner_->device_bytes_needed(b); }
  void build(const KeyValues& kv, DeviceTime& t) override { inner_->build(kv, t); }
  void execute(const Batch& b, BatchResults& r, DeviceTime& t) override {
    inner_->execute(b, r, t);
    for (size_t i = 0; i < b.size(); ++i) {
      if (b.types[i] == OpType::Lookup && r.found[i]) {
        r.value[i] ^= 1;  // a wrong value
        break;
      }
    }
    for (size_t i = 0; i < b.size(); ++i) {
      if (b.types[i] == OpType::Count) {
        r.value[i] += 1;  // a wrong count
        break;
      }
    }
  }
  void snapshot(const std::string& n, DeviceTime& t) override { inner_->snapshot(n, t); }
  void drop_snapshot(const std::string& n) override { inner_->drop_snapshot(n); }
  Stats stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<Dictionary> inner_;
};

std::vector<Step> small_workload() {
  std::vector<Step> steps;
  Step init;
  init.kind = StepKind::Initial;
  for (uint64_t k = 0; k < 100; ++k) {
    init.initial.keys.push_back(k * 3);
    init.initial.values.push_back(k + 1000);
  }
  steps.push_back(init);
  Step phase;
  phase.kind = StepKind::Phase;
  phase.name = "mixed";
  steps.push_back(phase);
  Step b;
  b.kind = StepKind::Batch;
  b.batch.push(OpType::Insert, 1, 5);
  b.batch.push(OpType::Delete, 3);
  b.batch.push(OpType::Lookup, 1);
  b.batch.push(OpType::Lookup, 6);
  b.batch.push(OpType::Count, 0, 30);
  b.batch.push(OpType::Range, 0, 10);
  b.batch.push(OpType::Successor, 0xFFFFFFFFull);
  steps.push_back(b);
  steps.push_back(b);
  Step snap;
  snap.kind = StepKind::Snapshot;
  snap.name = "s";
  steps.push_back(snap);
  Step drop;
  drop.kind = StepKind::DropSnapshot;
  drop.name = "s";
  steps.push_back(drop);
  return steps;
}

WorkloadSummary summary_of(const std::vector<Step>& steps) {
  WorkloadSummary s;
  for (const auto& st : steps)
    if (st.kind == StepKind::Batch)
      for (OpType t : st.batch.types) s.ops[static_cast<int>(t)]++;
  return s;
}

Capabilities ordered_caps() {
  Capabilities c;
  c.ordered = true;
  c.snapshots = true;
  return c;
}

}  // namespace

TEST_CASE("replay: a correct run verifies every result and reports each category") {
  auto steps = small_workload();
  WorkloadHeader h;
  h.path = "test";
  ReplayOptions opt;
  opt.gpu = false;
  opt.repeat = 3;
  RunReport rep = replay([&] { return std::make_unique<VectorSource>(h, steps); },
                         [] { return make_cpu_dictionary(ordered_caps(), KeyType::U32, KeyType::U32); },
                         summary_of(steps), opt);
  CHECK(rep.mismatches == 0);
  CHECK(rep.checked == 10);  // 5 queries in each of 2 batches
  REQUIRE(rep.steps.size() == 4);
  CHECK(rep.steps[0].kind == "build");
  CHECK(rep.steps[1].kind == "phase");
  CHECK(rep.steps[1].name == "mixed");
  CHECK(rep.steps[1].batches == 2);
  CHECK(rep.steps[2].kind == "snapshot");
  CHECK(rep.steps[3].kind == "drop_snapshot");
  uint64_t update_ops = 0, lookup_verified = 0;
  for (const auto& row : rep.steps[1].rows) {
    if (row.phase == Phase::Update) update_ops = row.ops;
    if (row.phase == Phase::Lookup) lookup_verified = row.verified;
  }
  CHECK(update_ops == 4);
  CHECK(lookup_verified == 4);
  CHECK(rep.final_stats.size == 100);  // +1 inserted, -1 deleted
}

TEST_CASE("replay: planted wrong answers are counted and listed") {
  auto steps = small_workload();
  WorkloadHeader h;
  h.path = "test";
  ReplayOptions opt;
  opt.gpu = false;
  RunReport rep = replay([&] { return std::make_unique<VectorSource>(h, steps); },
                         [] {
                           return std::make_unique<FaultyDictionary>(
                               make_cpu_dictionary(ordered_caps(), KeyType::U32, KeyType::U32));
                         },
                         summary_of(steps), opt);
  CHECK(rep.mismatches == 4);  // one wrong lookup and one wrong count in each batch
  REQUIRE(rep.first_mismatches.size() == 4);
  CHECK(rep.first_mismatches[0].batch == 0);
  CHECK(rep.first_mismatches[0].type == OpType::Lookup);
  CHECK(rep.first_mismatches[1].type == OpType::Count);
  CHECK(rep.steps[1].mismatches == 4);
  for (const auto& row : rep.steps[1].rows) {
    if (row.phase == Phase::Lookup) CHECK(row.verified == 2);  // 4 lookups, 2 wrong
    if (row.phase == Phase::Count) CHECK(row.verified == 0);
  }
}

// A dictionary made for 32-bit keys, to prove replay refuses a 64-bit workload
// on it instead of truncating every key.
class NarrowDictionary final : public Dictionary {
 public:
  explicit NarrowDictionary(std::unique_ptr<Dictionary> inner) : inner_(std::move(inner)) {}
  const Capabilities& caps() const override { return inner_->caps(); }
  Params parameters() const override { return inner_->parameters(); }
  KeyType key_type() const override { return KeyType::U32; }
  KeyType value_type() const override { return KeyType::U64; }
  uint64_t device_bytes_needed(const WorkloadBounds& b) const override { return inner_->device_bytes_needed(b); }
  void build(const KeyValues& kv, DeviceTime& t) override { inner_->build(kv, t); }
  void execute(const Batch& b, BatchResults& r, DeviceTime& t) override { inner_->execute(b, r, t); }
  void snapshot(const std::string& n, DeviceTime& t) override { inner_->snapshot(n, t); }
  void drop_snapshot(const std::string& n) override { inner_->drop_snapshot(n); }
  Stats stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<Dictionary> inner_;
};

TEST_CASE("replay: a workload wider than the structure's keys is refused before anything runs") {
  auto steps = small_workload();
  WorkloadHeader h;
  h.path = "wide.yaml";
  h.key_type = KeyType::U64;
  ReplayOptions opt;
  opt.gpu = false;
  auto narrow = [] { return std::make_unique<NarrowDictionary>(make_cpu_dictionary(ordered_caps(), KeyType::U64, KeyType::U64)); };
  try {
    replay([&] { return std::make_unique<VectorSource>(h, steps); }, narrow, summary_of(steps), opt);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(exit_code_for(e) == 2);
    CHECK(std::string(e.what()) ==
          "wide.yaml: the workload has u64 keys and u32 values; the structure was made for u32 keys and u64 values "
          "(make it with the workload's widths)");
  }
  // The same structure runs a workload of its own widths or narrower.
  h.key_type = KeyType::U32;
  const RunReport rep = replay([&] { return std::make_unique<VectorSource>(h, steps); }, narrow, summary_of(steps), opt);
  CHECK(rep.mismatches == 0);
  CHECK(rep.checked == 10);
}

TEST_CASE("replay: unsupported operations and snapshots are refused naming who supports them") {
  WorkloadHeader h;
  h.path = "w.yaml";
  WorkloadSummary s;
  s.ops[static_cast<int>(OpType::Range)] = 5;
  Capabilities unordered;
  unordered.ordered = false;
  try {
    check_supported("slabhash", unordered, h, s);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(exit_code_for(e) == 2);
    CHECK(m.find("slabhash does not support range") != std::string::npos);
    CHECK(m.find("sorted-array") != std::string::npos);
  }
  WorkloadSummary snap;
  snap.snapshot_steps.push_back("snapshot a");
  Capabilities no_snap;
  no_snap.ordered = true;
  CHECK_THROWS_AS(check_supported("btree", no_snap, h, snap), InputError);
  WorkloadHeader wide = h;
  wide.key_type = KeyType::U64;
  CHECK_THROWS_AS(check_supported("sorted-array", ordered_caps(), wide, WorkloadSummary{}), InputError);
  CHECK_NOTHROW(check_supported("sorted-array", ordered_caps(), h, s));
}

TEST_CASE("replay: a step cache replays exactly the steps the source made, as often as asked") {
  const std::string path = std::string(GPUDICT_SOURCE_DIR) + "/examples/quickstart.yaml";
  auto read_all = [](StepSource& src) {
    std::vector<Step> steps;
    Step s;
    while (src.next(s)) steps.push_back(s);
    return steps;
  };
  auto same = [](const std::vector<Step>& a, const std::vector<Step>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].kind == b[i].kind);
      CHECK(a[i].name == b[i].name);
      CHECK(a[i].initial.keys == b[i].initial.keys);
      CHECK(a[i].initial.values == b[i].initial.values);
      CHECK(a[i].batch.types == b[i].batch.types);
      CHECK(a[i].batch.keys == b[i].batch.keys);
      CHECK(a[i].batch.args == b[i].batch.args);
      CHECK(a[i].batch.mode == b[i].batch.mode);
      CHECK(a[i].batch.snapshot == b[i].batch.snapshot);
    }
  };
  auto fresh = open_workload(path);
  const std::vector<Step> expected = read_all(*fresh);
  REQUIRE(expected.size() > 5);

  StepCache cache(open_workload(path));
  {
    // A pass that stops early (a structure refusing a batch part-way)...
    auto part = cache.pass();
    CHECK(part->header().name == fresh->header().name);
    Step s;
    REQUIRE(part->next(s));
    REQUIRE(part->next(s));
    CHECK_FALSE(cache.complete());
  }
  // ...leaves a record the next pass replays, then continues from the source.
  auto rec = cache.pass();
  same(read_all(*rec), expected);
  REQUIRE(cache.complete());
  for (int pass = 0; pass < 2; ++pass) {
    auto again = cache.pass();
    same(read_all(*again), expected);
  }
  CHECK(StepCache::fits_in_memory(summarize_workload(path)));
  WorkloadSummary huge;
  huge.ops[0] = uint64_t{1} << 60;
  CHECK_FALSE(StepCache::fits_in_memory(huge));
}
