// Hash-structure semantics on the CPU backend (docs/semantics.md, sections 9
// to 12): multimap and set results by hand, the point count/range refusal,
// check_supported's messages, and whole workloads replayed and verified.
#include <doctest/doctest.h>

#include "cli/exit_codes.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch_run.hpp"
#include "cli_helpers.hpp"
#include "workloads/registry/registry.hpp"
#include "core/common/errors.hpp"
#include "workloads/adapter/structures.hpp"
#include "scratch_dir.hpp"
#include "workloads/cpu_backend.hpp"
#include "workloads/replay.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
using namespace gpudict::testing;

namespace {

// The slab hash's capabilities for each --mode (docs/semantics.md, section 12).
Capabilities hash_caps(Semantics s) {
  Capabilities c;
  c.ordered = false;
  c.point_count_range = true;
  c.deletes = true;
  c.native_concurrent = true;
  c.semantics = s;
  c.phased_duplicates = s == Semantics::Multimap ? DuplicateRule::DeletesThenInserts : DuplicateRule::AnyUpdate;
  return c;
}

std::vector<Pair> pairs_of(const BatchResults& r, size_t i) {
  std::vector<Pair> out;
  for (uint64_t j = 0; j < r.value[i]; ++j) out.emplace_back(r.range_keys[r.key[i] + j], r.range_values[r.key[i] + j]);
  return out;
}

// Runs `b` on `d` and returns its results.
BatchResults execute(Dictionary& d, const Batch& b) {
  BatchResults r;
  DeviceTime t;
  d.execute(b, r, t);
  return r;
}

// A wrapper that adds one to every count the structure answers.
class CountsOneTooMany final : public Dictionary {
 public:
  explicit CountsOneTooMany(std::unique_ptr<Dictionary> inner) : inner_(std::move(inner)) {}
  const Capabilities& caps() const override { return inner_->caps(); }
  Params parameters() const override { return inner_->parameters(); }
  uint64_t device_bytes_needed(const WorkloadBounds& b) const override { return inner_->device_bytes_needed(b); }
  void build(const KeyValues& initial, DeviceTime& t) override { inner_->build(initial, t); }
  void execute(const Batch& b, BatchResults& r, DeviceTime& t) override {
    inner_->execute(b, r, t);
    for (size_t i = 0; i < b.size(); ++i)
      if (b.types[i] == OpType::Count) r.value[i] += 1;
  }
  void snapshot(const std::string& name, DeviceTime& t) override { inner_->snapshot(name, t); }
  void drop_snapshot(const std::string& name) override { inner_->drop_snapshot(name); }
  Stats stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<Dictionary> inner_;
};

// Point counts and ranges (range_length 1), small key domain so keys repeat,
// phased and concurrent phases, a snapshot and a flush.
const char* kPointWorkload = R"(
seed: 11
initial: {count: 200, keys: {distribution: uniform, max: 999}}
steps:
  - batch:
      ops:
        - [insert, 5, 1]
        - [insert, 5, 1]
        - [delete, 5]
        - [insert, 5, 2]
        - [count, 5, 5]
        - [range, 5, 5]
        - [lookup, 5]
  - phase: {name: grow, batches: 4, batch_size: 300, keys: {distribution: uniform, max: 999}, hit_ratio: 0.7,
            mix: {insert: 0.5, delete: 0.1, lookup: 0.2, count: 0.1, range: 0.1}, range_length: 1}
  - snapshot: s
  - phase: {name: mixed, batches: 3, batch_size: 300, mode: concurrent, keys: {distribution: uniform, max: 999},
            hit_ratio: 0.7, mix: {insert: 0.4, delete: 0.1, lookup: 0.3, count: 0.1, range: 0.1},
            range_length: {distribution: fixed, length: 1}}
  - phase: {name: past, batches: 1, batch_size: 200, snapshot: s, keys: {distribution: uniform, max: 999},
            mix: {insert: 0.2, lookup: 0.4, count: 0.2, range: 0.2}, range_length: 1}
  - flush
  - phase: {name: after, batches: 1, batch_size: 300, keys: {distribution: uniform, max: 999},
            mix: {lookup: 0.4, count: 0.3, range: 0.3}, range_length: 1}
  - drop_snapshot: s
)";

RunReport replay_on_cpu(const std::string& yaml, const Capabilities& caps, bool faulty = false) {
  ReplayOptions opt;
  opt.structure = "slabhash";
  opt.gpu = false;
  return replay([&] { return open_workload(yaml); },
                [&]() -> std::unique_ptr<Dictionary> {
                  auto d = make_cpu_dictionary(caps, KeyType::U32, KeyType::U32, "slabhash");
                  if (faulty) return std::make_unique<CountsOneTooMany>(std::move(d));
                  return d;
                },
                summarize_workload(yaml), opt);
}

}  // namespace

TEST_CASE("cpu backend, multimap: pairs added, deletes first, one value per lookup") {
  Capabilities caps = hash_caps(Semantics::Multimap);
  caps.snapshots = true;
  auto d = make_cpu_dictionary(caps, KeyType::U32, KeyType::U32, "slabhash");
  CHECK(d->caps().semantics == Semantics::Multimap);
  CHECK_FALSE(d->caps().native_concurrent);
  DeviceTime t;
  d->build(key_values({1, 1, 2, 1}, {10, 11, 20, 10}), t);  // every initial pair kept
  CHECK(d->stats().size == 4);

  Run b;
  b.insert(1, 12).erase(2).insert(2, 21).insert(2, 20).insert(2, 21).erase(3);
  b.lookup(1, 0).count(1, 1, 0).range(1, 1, {}).count(2, 2, 0).range(2, 2, {}).lookup(3, 0).count(3, 3, 0);
  BatchResults r = execute(*d, b.b);
  CHECK(r.found[6] == 1);
  CHECK(r.value[6] == 10);  // the oldest value
  CHECK(r.value[7] == 4);
  CHECK(pairs_of(r, 8) == std::vector<Pair>{{1, 10}, {1, 11}, {1, 10}, {1, 12}});
  CHECK(r.value[9] == 3);  // the delete ran first: only the batch's inserts are left
  CHECK(pairs_of(r, 10) == std::vector<Pair>{{2, 21}, {2, 20}, {2, 21}});
  CHECK(r.found[11] == 0);
  CHECK(r.value[12] == 0);

  d->snapshot("s", t);
  Run c(ExecMode::Concurrent);
  c.erase(1).insert(1, 13).count(1, 1, 0);
  r = execute(*d, c.b);
  CHECK(r.value[2] == 1);  // updates, then queries
  Run past(ExecMode::Phased, "s");
  past.count(1, 1, 0);
  r = execute(*d, past.b);
  CHECK(r.value[0] == 4);
}

TEST_CASE("cpu backend, set: values are dropped and reported as 0") {
  auto d = make_cpu_dictionary(hash_caps(Semantics::Set), KeyType::U32, KeyType::U32, "slabhash");
  DeviceTime t;
  d->build(key_values({1, 1, 2}, {10, 11, 20}), t);
  CHECK(d->stats().size == 2);
  Run b;
  b.insert(3, 30).insert(3, 31).lookup(1, 0).lookup(3, 0).count(3, 3, 0).range(2, 2, {});
  BatchResults r = execute(*d, b.b);
  CHECK(r.found[2] == 1);
  CHECK(r.value[2] == 0);
  CHECK(r.found[3] == 1);
  CHECK(r.value[3] == 0);
  CHECK(r.value[4] == 1);
  CHECK(pairs_of(r, 5) == std::vector<Pair>{{2, 0}});
}

TEST_CASE("cpu backend, map under deletes-then-inserts: every delete first, then the last insert") {
  Capabilities caps;
  caps.ordered = true;
  caps.phased_duplicates = DuplicateRule::DeletesThenInserts;
  auto d = make_cpu_dictionary(caps, KeyType::U32, KeyType::U32);
  DeviceTime t;
  d->build(key_values({1, 2}, {5, 6}), t);
  Run b;
  b.insert(1, 7).erase(1).insert(1, 8).insert(2, 9).erase(2).erase(4).lookup(1, 0).lookup(2, 0).count(0, 9, 0);
  BatchResults r = execute(*d, b.b);
  CHECK(r.value[6] == 8);
  CHECK(r.found[7] == 1);
  CHECK(r.value[7] == 9);
  CHECK(r.value[8] == 2);
}

TEST_CASE("cpu backend: a count or range over several keys on a hash structure is refused when it runs") {
  auto d = make_cpu_dictionary(hash_caps(Semantics::Map), KeyType::U32, KeyType::U32, "slabhash");
  DeviceTime t;
  d->build(key_values({1}, {1}), t);
  Run ok;
  ok.insert(3, 3).count(3, 3, 0).range(1, 1, {});
  BatchResults r = execute(*d, ok.b);
  CHECK(r.value[1] == 1);
  CHECK(pairs_of(r, 2) == std::vector<Pair>{{1, 1}});

  for (OpType type : {OpType::Count, OpType::Range}) {
    Batch b;
    b.push(OpType::Insert, 4, 4);
    b.push(type, 3, 9);
    try {
      execute(*d, b);
      FAIL("expected InputError");
    } catch (const InputError& e) {
      CHECK(exit_code_for(e) == 2);
      const std::string m = e.what();
      CHECK(m == point_query_refusal("slabhash", type, 3, 9, type == OpType::Count ? 1 : 2));
      CHECK(m.find(std::string("slabhash answers count and range for a single key only (lo == hi); got ") +
                   std::string(op_name(type)) + " [3, 9] in batch ") == 0);
      CHECK(m.find("ordered count and range: ") != std::string::npos);
      CHECK(m.find("sorted-array") != std::string::npos);
      CHECK(m.find("slabhash", 10) == std::string::npos);  // the list names ordered structures only
    }
  }
  Batch inverted;  // lo > hi is not a point query either
  inverted.push(OpType::Count, 9, 3);
  CHECK_THROWS_AS(execute(*d, inverted), InputError);
  Batch succ;
  succ.push(OpType::Successor, 1);
  CHECK_THROWS_AS(execute(*d, succ), InputError);
}

TEST_CASE("replay refuses a multi-key count before the structure sees the batch, on every backend") {
  // The GPU structures get the same refusal as the CPU backend, with the
  // structures that answer it, because replay refuses the batch itself
  // (refuse_unsupported): the wrapper below counts the batches that reach
  // the structure.
  class CountsBatches final : public Dictionary {
   public:
    CountsBatches(std::unique_ptr<Dictionary> inner, int& seen) : inner_(std::move(inner)), seen_(seen) {}
    const Capabilities& caps() const override { return inner_->caps(); }
    Params parameters() const override { return inner_->parameters(); }
    uint64_t device_bytes_needed(const WorkloadBounds& b) const override { return inner_->device_bytes_needed(b); }
    void build(const KeyValues& initial, DeviceTime& t) override { inner_->build(initial, t); }
    void execute(const Batch& b, BatchResults& r, DeviceTime& t) override {
      ++seen_;
      inner_->execute(b, r, t);
    }
    void snapshot(const std::string& name, DeviceTime& t) override { inner_->snapshot(name, t); }
    void drop_snapshot(const std::string& name) override { inner_->drop_snapshot(name); }
    Stats stats() const override { return inner_->stats(); }

   private:
    std::unique_ptr<Dictionary> inner_;
    int& seen_;
  };
  const std::string yaml = write_scratch_file("hash-wide-early.yaml", R"(
initial: {count: 100}
steps:
  - batch: {ops: [[insert, 1, 1], [count, 1, 1]]}
  - batch: {ops: [[lookup, 1], [range, 3, 9]]}
)");
  int seen = 0;
  ReplayOptions opt;
  opt.structure = "slabhash";
  opt.gpu = false;
  const Capabilities caps = hash_caps(Semantics::Map);
  try {
    replay([&] { return open_workload(yaml); },
           [&]() -> std::unique_ptr<Dictionary> {
             return std::make_unique<CountsBatches>(make_cpu_dictionary(caps, KeyType::U32, KeyType::U32, "slabhash"),
                                                    seen);
           },
           summarize_workload(yaml), opt);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == point_query_refusal("slabhash", OpType::Range, 3, 9, 1));
  }
  CHECK(seen == 1);  // batch 0 ran; batch 1 was refused before the structure saw it
}

TEST_CASE("check_supported and structures_supporting: general count and range are for ordered structures") {
  const std::string count_list = structures_supporting(OpType::Count);
  CHECK(count_list.find("sorted-array") != std::string::npos);
  CHECK(count_list.find("lsm") != std::string::npos);
  CHECK(count_list.find("slabhash") == std::string::npos);
  CHECK(structures_supporting(OpType::Range) == count_list);
  CHECK(structures_supporting(OpType::Successor).find("slabhash") == std::string::npos);

  WorkloadHeader h;
  h.path = "w.yaml";
  WorkloadSummary points;
  points.ops[static_cast<int>(OpType::Count)] = 3;
  points.ops[static_cast<int>(OpType::Range)] = 3;
  CHECK_NOTHROW(check_supported("slabhash", hash_caps(Semantics::Multimap), h, points));

  WorkloadSummary succ;
  succ.ops[static_cast<int>(OpType::Successor)] = 5;
  try {
    check_supported("slabhash", hash_caps(Semantics::Set), h, succ);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(exit_code_for(e) == 2);
    CHECK(m.find("slabhash does not support successor") != std::string::npos);
    const std::string who = m.substr(m.find("structures that do: "));
    CHECK(who.find("sorted-array") != std::string::npos);
    CHECK(who.find("slabhash") == std::string::npos);
  }
  Capabilities no_points = hash_caps(Semantics::Map);
  no_points.point_count_range = false;
  CHECK_THROWS_AS(check_supported("graph", no_points, h, points), InputError);
}

TEST_CASE("replay on the CPU backend: multimap and set workloads verify") {
  const std::string yaml = write_scratch_file("hash-points.yaml", kPointWorkload);
  for (Semantics s : {Semantics::Multimap, Semantics::Set, Semantics::Map}) {
    Capabilities caps = hash_caps(s);
    caps.snapshots = true;  // the CPU backend keeps copies whatever the structure does
    RunReport rep = replay_on_cpu(yaml, caps);
    CHECK_MESSAGE(rep.mismatches == 0, semantics_name(s));
    CHECK_MESSAGE(rep.checked > 1000, semantics_name(s));
    bool flushed = false;
    for (const auto& step : rep.steps) flushed |= step.kind == "cleanup";
    CHECK(flushed);

    RunReport bad = replay_on_cpu(yaml, caps, /*faulty=*/true);
    CHECK_MESSAGE(bad.mismatches > 0, semantics_name(s));
    REQUIRE(!bad.first_mismatches.empty());
    CHECK(bad.first_mismatches[0].type == OpType::Count);
    CHECK(bad.first_mismatches[0].batch == 0);
  }
}

TEST_CASE("replay on the CPU backend: a multi-key count on a hash structure stops the run (exit 2)") {
  const std::string yaml = write_scratch_file("hash-wide.yaml", R"(
initial: {count: 100}
steps:
  - batch: {ops: [[insert, 1, 1], [count, 1, 1]]}
  - batch: {ops: [[lookup, 1], [range, 3, 9]]}
)");
  try {
    replay_on_cpu(yaml, hash_caps(Semantics::Multimap));
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(exit_code_for(e) == 2);
    CHECK(std::string(e.what()) == point_query_refusal("slabhash", OpType::Range, 3, 9, 1));
  }
}

TEST_CASE("cli: slabhash --backend cpu in every mode") {
  const StructureInfo* info = find_structure("slabhash");
  REQUIRE(info != nullptr);
  REQUIRE(info->make_gpu);  // built, not planned
  // The slab hash keeps no snapshots: the same kind of workload without them.
  const std::string yaml = write_scratch_file("cli-hash-points.yaml", R"(
seed: 3
initial: {count: 200, keys: {distribution: uniform, max: 999}}
steps:
  - phase: {name: grow, batches: 3, batch_size: 300, keys: {distribution: uniform, max: 999}, hit_ratio: 0.7,
            mix: {insert: 0.5, delete: 0.1, lookup: 0.2, count: 0.1, range: 0.1}, range_length: 1}
  - phase: {name: mixed, batches: 2, batch_size: 300, mode: concurrent, keys: {distribution: uniform, max: 999},
            hit_ratio: 0.7, mix: {insert: 0.4, delete: 0.1, lookup: 0.3, count: 0.1, range: 0.1}, range_length: 1}
  - flush
  - phase: {name: after, batches: 1, batch_size: 300, keys: {distribution: uniform, max: 999},
            mix: {lookup: 0.4, count: 0.3, range: 0.3}, range_length: 1}
)");
  for (const char* mode : {"map", "multimap", "set"}) {
    auto r = run_gpudict("slabhash '" + yaml + "' --backend cpu --quiet --mode " + mode);
    CHECK_MESSAGE(r.exit_code == 0, mode << ": " << r.err);
  }
  const std::string wide = write_scratch_file("cli-hash-wide.yaml", R"(
initial: {count: 100}
steps:
  - batch: {ops: [[insert, 1, 1], [count, 3, 9]]}
)");
  auto w = run_gpudict("slabhash '" + wide + "' --backend cpu --mode multimap");
  CHECK(w.exit_code == 2);
  CHECK(w.err.find("slabhash answers count and range for a single key only (lo == hi); got count [3, 9] in batch 0") !=
        std::string::npos);
  auto s = run_gpudict("slabhash examples/quickstart.yaml --backend cpu");
  CHECK(s.exit_code == 2);
  CHECK(s.err.find("successor") != std::string::npos);
}
