// Generated workloads: determinism, exact counts, hit ratios, distributions
// (workloads/generator.hpp, distributions.hpp, rng.hpp).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/distributions.hpp"
#include "workloads/generator.hpp"
#include "workloads/parallel.hpp"
#include "workloads/rng.hpp"
#include "workloads/spec.hpp"
#include "scratch_dir.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
namespace fs = std::filesystem;

namespace {

fs::path gen_tmp_dir() { return gpudict::testing::scratch_dir(); }

std::string gen_yaml(const std::string& name, const std::string& text) {
  const fs::path p = gen_tmp_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::vector<Step> gen_steps(const std::string& path, const OpenOptions& opts = {}) {
  std::unique_ptr<StepSource> src = open_workload(path, opts);
  std::vector<Step> out;
  Step s;
  while (src->next(s)) out.push_back(s);
  return out;
}

bool gen_same_step(const Step& a, const Step& b) {
  return a.kind == b.kind && a.name == b.name && a.initial.keys == b.initial.keys &&
         a.initial.values == b.initial.values && a.batch.mode == b.batch.mode &&
         a.batch.snapshot == b.batch.snapshot && a.batch.types == b.batch.types && a.batch.keys == b.batch.keys &&
         a.batch.args == b.batch.args;
}

bool gen_same_steps(const std::vector<Step>& a, const std::vector<Step>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!gen_same_step(a[i], b[i])) return false;
  return true;
}

std::array<uint64_t, kNumOpTypes> type_counts(const Batch& b) {
  std::array<uint64_t, kNumOpTypes> c{};
  for (OpType t : b.types) ++c[static_cast<int>(t)];
  return c;
}

const char* kMixedYaml = R"(seed: 77
initial: {count: 5000, keys: uniform}
steps:
  - phase:
      name: a
      batches: 3
      batch_size: 1000
      mix: {insert: 0.3, delete: 0.1, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.2}
      keys: {distribution: zipfian, exponent: 0.9}
  - snapshot: s
  - phase:
      name: b
      batches: 2
      batch_size: 777
      mode: concurrent
      mix: {insert: 0.25, lookup: 0.25, range: 0.5}
      snapshot: s
      range_length: {distribution: geometric, mean: 4, unit: results}
  - batch: {ops: [[insert, 1, 2], [lookup, 1]]}
  - drop_snapshot: s
)";

}  // namespace

TEST_CASE("generator: same seed gives identical steps, another seed different ones") {
  const std::string path = gen_yaml("mixed.yaml", kMixedYaml);
  const std::vector<Step> a = gen_steps(path), b = gen_steps(path);
  REQUIRE(a.size() == 1 + (1 + 3) + 1 + (1 + 2) + (1 + 1) + 1);
  CHECK(gen_same_steps(a, b));

  OpenOptions other;
  other.has_seed_override = true;
  other.seed_override = 78;
  const std::vector<Step> c = gen_steps(path, other);
  REQUIRE(c.size() == a.size());
  CHECK_FALSE(gen_same_step(a[0], c[0]));  // initial keys differ
  CHECK_FALSE(gen_same_step(a[2], c[2]));  // first batch differs
  // The explicit batch is the same whatever the seed.
  CHECK(gen_same_step(a[a.size() - 2], c[c.size() - 2]));

  // The seed override replaces the YAML's seed, so override 77 gives the YAML's steps.
  OpenOptions same;
  same.has_seed_override = true;
  same.seed_override = 77;
  CHECK(gen_same_steps(a, gen_steps(path, same)));
  CHECK(open_workload(path, other)->header().seed == 78);
}

TEST_CASE("generator: step sequence") {
  const std::vector<Step> s = gen_steps(gen_yaml("mixed.yaml", kMixedYaml));
  const std::vector<StepKind> want = {StepKind::Initial, StepKind::Phase,    StepKind::Batch, StepKind::Batch,
                                      StepKind::Batch,   StepKind::Snapshot, StepKind::Phase, StepKind::Batch,
                                      StepKind::Batch,   StepKind::Phase,    StepKind::Batch, StepKind::DropSnapshot};
  REQUIRE(s.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(s[i].kind == want[i]);
  CHECK(s[0].initial.size() == 5000);
  CHECK(s[1].name == "a");
  CHECK(s[5].name == "s");
  CHECK(s[6].name == "b");
  CHECK(s[7].batch.mode == ExecMode::Concurrent);
  CHECK(s[7].batch.snapshot == "s");
  CHECK(s[9].name == "batch3");
  CHECK(s[10].batch.size() == 2);
  CHECK(s[10].batch.types[0] == OpType::Insert);
  CHECK(s[10].batch.keys[0] == 1);
  CHECK(s[10].batch.args[0] == 2);
  CHECK(s[11].name == "s");
  CHECK(s[2].batch.size() == 1000);
  CHECK(s[7].batch.size() == 777);

  // No initial: the Initial step is still first, and empty.
  const std::vector<Step> t =
      gen_steps(gen_yaml("noinit.yaml", "steps:\n  - phase: {batches: 1, batch_size: 3, mix: {insert: 1}}\n"));
  REQUIRE(t.size() == 3);
  CHECK(t[0].kind == StepKind::Initial);
  CHECK(t[0].initial.size() == 0);
  CHECK(t[1].name == "phase0");
}

TEST_CASE("generator: op counts are exact (largest remainder) and match the summary") {
  std::array<double, kNumOpTypes> third{};
  third[0] = third[1] = third[2] = 1.0 / 3.0;
  auto c = batch_op_counts(third, 10);
  CHECK(c[0] == 4);  // remainders tie: the lower type wins
  CHECK(c[1] == 3);
  CHECK(c[2] == 3);
  CHECK(c[3] == 0);

  std::array<double, kNumOpTypes> mix = {0.3, 0.1, 0.2, 0.1, 0.1, 0.2};
  c = batch_op_counts(mix, 1000);
  CHECK(c == std::array<uint64_t, kNumOpTypes>{300, 100, 200, 100, 100, 200});
  for (uint64_t n : {1ull, 2ull, 7ull, 999ull, 65537ull, 4294967295ull}) {
    c = batch_op_counts(mix, n);
    uint64_t sum = 0;
    for (int t = 0; t < kNumOpTypes; ++t) {
      sum += c[t];
      CHECK(std::fabs(static_cast<double>(c[t]) - mix[t] * static_cast<double>(n)) < 1.0);
    }
    CHECK(sum == n);
  }
  std::array<double, kNumOpTypes> one{};
  one[2] = 1.0;
  c = batch_op_counts(one, 12345);
  CHECK(c[2] == 12345);
  CHECK(c[0] + c[1] + c[3] + c[4] + c[5] == 0);
  // 0.5 + 0.5 with a tiny overshoot still sums exactly.
  std::array<double, kNumOpTypes> over{};
  over[0] = 0.5 + 1e-10;
  over[1] = 0.5;
  c = batch_op_counts(over, 3);
  CHECK(c[0] + c[1] == 3);

  // Every generated batch has exactly those counts; the summary agrees.
  const std::string path = gen_yaml("mixed.yaml", kMixedYaml);
  const WorkloadSpec spec = parse_workload_spec(path);
  const auto ca = batch_op_counts(spec.steps[0].phase.mix, 1000);
  const auto cb = batch_op_counts(spec.steps[2].phase.mix, 777);
  const std::vector<Step> s = gen_steps(path);
  for (int i : {2, 3, 4}) CHECK(type_counts(s[i].batch) == ca);
  for (int i : {7, 8}) CHECK(type_counts(s[i].batch) == cb);

  const WorkloadSummary sum = summarize_workload(path);
  CHECK(sum.initial == 5000);
  REQUIRE(sum.phases.size() == 3);
  CHECK(sum.phases[0].name == "a");
  CHECK(sum.phases[0].batches == 3);
  CHECK(sum.phases[0].max_batch == 1000);
  for (int t = 0; t < kNumOpTypes; ++t) CHECK(sum.phases[0].ops[t] == 3 * ca[t]);
  CHECK(sum.phases[1].mode == ExecMode::Concurrent);
  CHECK(sum.phases[1].snapshot == "s");
  CHECK(sum.phases[2].name == "batch3");
  CHECK(sum.phases[2].ops[0] == 1);
  CHECK(sum.phases[2].ops[2] == 1);
  CHECK(sum.batches == 6);
  CHECK(sum.snapshot_steps == std::vector<std::string>{"snapshot s", "drop_snapshot s"});
  CHECK(sum.bounds.max_resident == 5000 + 3 * ca[0] + 2 * cb[0] + 1);
  CHECK(sum.bounds.max_batch == 1000);
  CHECK(sum.bounds.max_queries == std::max<uint64_t>(1000 - ca[0] - ca[1], 777 - cb[0]));
  CHECK(sum.bounds.max_snapshots == 1);
}

TEST_CASE("generator: the resident bound never exceeds the key domain") {
  // 5000 batches of 2^20 upserts: 5.2e9 inserts, more than there are u32 keys.
  const char* body = "initial: {count: 1000}\nsteps:\n"
                     "  - phase: {name: up, batches: 5000, batch_size: 1048576, mix: {insert: 1.0}}\n";
  const WorkloadSummary s32 = summarize_workload(gen_yaml("upserts32.yaml", std::string("seed: 1\n") + body));
  CHECK(s32.ops[0] == 5000ull * 1048576);
  CHECK(s32.bounds.max_resident == (uint64_t{1} << 32));
  CHECK(s32.bounds.max_inserted == 1000 + 5000ull * 1048576);  // what an LSM or a multimap may store
  const WorkloadSummary s64 =
      summarize_workload(gen_yaml("upserts64.yaml", std::string("seed: 1\nkey_type: u64\n") + body));
  CHECK(s64.bounds.max_resident == 1000 + 5000ull * 1048576);
  CHECK(s64.bounds.max_inserted == s64.bounds.max_resident);
  WorkloadBounds b;
  set_resident_bounds(b, UINT64_MAX, 5, KeyType::U64);  // saturates
  CHECK(b.max_inserted == UINT64_MAX);
  CHECK(b.max_resident == UINT64_MAX);
  set_resident_bounds(b, 7, 3, KeyType::U32);
  CHECK(b.max_resident == 10);
  CHECK(b.max_inserted == 10);
}

TEST_CASE("generator: hit ratio is close to its target on a big batch") {
  const std::string path = gen_yaml("hits.yaml", R"(seed: 5
initial: {count: 100000, keys: {distribution: uniform, min: 0, max: 10000000}}
steps:
  - phase:
      batches: 1
      batch_size: 200000
      mix: {lookup: 0.5, delete: 0.25, successor: 0.25}
      keys: {distribution: uniform, min: 0, max: 10000000}
      hit_ratio: 0.3
)");
  const std::vector<Step> s = gen_steps(path);
  const std::vector<uint64_t> init = s[0].initial.keys;
  const std::set<uint64_t> present(init.begin(), init.end());
  const Batch& b = s[2].batch;
  // Deletes are drawn from the pre-batch state.
  uint64_t del = 0, del_hit = 0;
  for (size_t i = 0; i < b.size(); ++i)
    if (b.types[i] == OpType::Delete) {
      ++del;
      del_hit += present.count(b.keys[i]);
    }
  CHECK(del == 50000);
  CHECK(static_cast<double>(del_hit) / static_cast<double>(del) == doctest::Approx(0.3).epsilon(0.03));
  // Phased: queries see the state after the deletes.
  std::set<uint64_t> after = present;
  for (size_t i = 0; i < b.size(); ++i)
    if (b.types[i] == OpType::Delete) after.erase(b.keys[i]);
  uint64_t q = 0, q_hit = 0;
  for (size_t i = 0; i < b.size(); ++i)
    if (b.types[i] == OpType::Lookup || b.types[i] == OpType::Successor) {
      ++q;
      q_hit += after.count(b.keys[i]);
    }
  CHECK(q == 150000);
  CHECK(static_cast<double>(q_hit) / static_cast<double>(q) == doctest::Approx(0.3).epsilon(0.03));

  // hit_ratio 1 and 0 are exact.
  const std::vector<Step> all = gen_steps(gen_yaml("hits1.yaml", R"(initial: {count: 1000, keys: {distribution: uniform, max: 100000}}
steps:
  - phase: {batches: 1, batch_size: 5000, mix: {lookup: 1}, hit_ratio: 1, keys: {distribution: uniform, max: 100000}}
  - phase: {batches: 1, batch_size: 5000, mix: {lookup: 1}, hit_ratio: 0, keys: {distribution: uniform, max: 100000}}
)"));
  const std::set<uint64_t> p1(all[0].initial.keys.begin(), all[0].initial.keys.end());
  for (uint64_t k : all[2].batch.keys) REQUIRE(p1.count(k) == 1);
  for (uint64_t k : all[4].batch.keys) REQUIRE(p1.count(k) == 0);
}

TEST_CASE("generator: phased queries see the batch's updates, concurrent ones do not") {
  const std::string text = R"(steps:
  - phase: {batches: 1, batch_size: 2000, mode: MODE, mix: {insert: 0.5, lookup: 0.5}, hit_ratio: 1}
)";
  auto with_mode = [&](const std::string& m) {
    std::string t = text;
    t.replace(t.find("MODE"), 4, m);
    return gen_steps(gen_yaml("mode-" + m + ".yaml", t));
  };
  const std::vector<Step> ph = with_mode("phased"), co = with_mode("concurrent");
  auto inserted_hits = [](const Batch& b) {
    std::set<uint64_t> ins;
    for (size_t i = 0; i < b.size(); ++i)
      if (b.types[i] == OpType::Insert) ins.insert(b.keys[i]);
    uint64_t hits = 0;
    for (size_t i = 0; i < b.size(); ++i)
      if (b.types[i] == OpType::Lookup) hits += ins.count(b.keys[i]);
    return hits;
  };
  CHECK(inserted_hits(ph[2].batch) == 1000);  // every lookup names a key the batch inserted
  CHECK(inserted_hits(co[2].batch) < 5);      // nothing was present before: universe draws

  // Deletes at hit ratio 1 name present keys; the model follows the updates across batches.
  const std::vector<Step> d = gen_steps(gen_yaml("dels.yaml", R"(initial: {count: 300, keys: {distribution: uniform, max: 1000000}}
steps:
  - phase: {batches: 4, batch_size: 100, mix: {delete: 1}, hit_ratio: 1}
  - phase: {batches: 1, batch_size: 400, mix: {lookup: 1}, hit_ratio: 0, keys: {distribution: uniform, max: 1000000}}
)"));
  std::set<uint64_t> live(d[0].initial.keys.begin(), d[0].initial.keys.end());
  for (int i = 2; i <= 5; ++i) {
    // A batch's deletes are drawn from the pre-batch state (the same key may come twice).
    for (uint64_t k : d[i].batch.keys) CHECK(live.count(k) == 1);
    for (uint64_t k : d[i].batch.keys) live.erase(k);
  }
  for (uint64_t k : d[7].batch.keys) CHECK(live.count(k) == 0);
}

TEST_CASE("generator: initial keys are unique, exact in number and in bounds") {
  for (const char* dist :
       {"uniform", "zipfian", "normal", "hotset", "sequential", "{distribution: sequential, start: 7, stride: 3}",
        "{distribution: zipfian, exponent: 1.2}"}) {
    const std::string text = std::string("initial: {count: 3000, keys: ") + dist + "}\n";
    const std::vector<Step> s = gen_steps(gen_yaml("init.yaml", text));
    const std::vector<uint64_t>& k = s[0].initial.keys;
    INFO(dist);
    CHECK(k.size() == 3000);
    CHECK(std::set<uint64_t>(k.begin(), k.end()).size() == 3000);
    CHECK(s[0].initial.values.size() == 3000);
  }
  // Bounded domains, including a dense one (count = domain size) and u64 at the top.
  const std::vector<Step> dense = gen_steps(gen_yaml("dense.yaml", "initial: {count: 1000, keys: {distribution: uniform, min: 5000, max: 5999}, values: key}\n"));
  std::vector<uint64_t> k = dense[0].initial.keys;
  std::sort(k.begin(), k.end());
  for (uint64_t i = 0; i < 1000; ++i) REQUIRE(k[i] == 5000 + i);
  CHECK(dense[0].initial.values == dense[0].initial.keys);

  const std::vector<Step> mid = gen_steps(gen_yaml("mid.yaml", "initial: {count: 700, keys: {distribution: uniform, min: 10, max: 1009}, values: index}\n"));
  k = mid[0].initial.keys;
  CHECK(std::set<uint64_t>(k.begin(), k.end()).size() == 700);
  CHECK(*std::min_element(k.begin(), k.end()) >= 10);
  CHECK(*std::max_element(k.begin(), k.end()) <= 1009);
  for (size_t i = 0; i < 700; ++i) CHECK(mid[0].initial.values[i] == i);

  const std::vector<Step> seq = gen_steps(gen_yaml("seq.yaml", "initial: {count: 10, keys: {distribution: sequential, start: 8, stride: 3, min: 100, max: 109}}\n"));
  CHECK(seq[0].initial.keys == std::vector<uint64_t>{108, 101, 104, 107, 100, 103, 106, 109, 102, 105});

  const std::vector<Step> big = gen_steps(gen_yaml("u64.yaml", R"(key_type: u64
value_type: u64
initial: {count: 2000, keys: {distribution: zipfian, min: 0xFFFFFFFFFFFF0000}, values: random}
steps:
  - phase: {batches: 1, batch_size: 1000, mix: {insert: 0.5, lookup: 0.25, range: 0.25}, range_length: 100000}
)"));
  for (uint64_t x : big[0].initial.keys) CHECK(x >= 0xFFFFFFFFFFFF0000ull);
  bool any_high_value = false;
  for (uint64_t v : big[0].initial.values) any_high_value |= v > 0xFFFFFFFFull;
  CHECK(any_high_value);
  const Batch& b = big[2].batch;
  bool saturated = false;
  for (size_t i = 0; i < b.size(); ++i)
    if (b.types[i] == OpType::Range) {
      CHECK(b.args[i] >= b.keys[i]);
      saturated |= b.args[i] == ~0ull;
    }
  CHECK(saturated);  // lo + 99999 runs past 2^64 - 1 for most draws near the top

  // A distribution that cannot produce that many unique keys: an InputError at count.
  const std::string narrow = gen_yaml("narrow.yaml", "initial:\n  count: 50\n  keys: {distribution: normal, stddev: 0.000001, max: 1000}\n");
  try {
    gen_steps(narrow);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(narrow + ":2:10: initial.count: distribution 'normal' produced only") == 0);
  }
}

TEST_CASE("generator: range lengths, in keys and in expected results") {
  const std::vector<Step> s = gen_steps(gen_yaml("ranges.yaml", R"(initial: {count: 1000, keys: {distribution: uniform, max: 999999}}
steps:
  - phase: {batches: 1, batch_size: 100, mix: {count: 0.5, range: 0.5}, keys: {distribution: uniform, max: 999999}, range_length: {distribution: fixed, length: 17}}
  - phase: {batches: 1, batch_size: 2000, mix: {range: 1}, keys: {distribution: uniform, max: 999999}, range_length: {distribution: uniform, min: 3, max: 6}}
  - phase: {batches: 1, batch_size: 20000, mix: {count: 1}, keys: {distribution: uniform, max: 999999}, range_length: {distribution: geometric, mean: 5}}
  - phase: {batches: 1, batch_size: 10, mix: {range: 1}, keys: {distribution: uniform, max: 999999}, range_length: {length: 4, unit: results}}
  - phase: {batches: 1, batch_size: 10, mix: {range: 1}, keys: {distribution: uniform, min: 0xFFFFFFF0}}
)"));
  for (size_t i = 0; i < 100; ++i) CHECK(s[2].batch.args[i] - s[2].batch.keys[i] == 16);
  std::set<uint64_t> lens;
  for (size_t i = 0; i < 2000; ++i) lens.insert(s[4].batch.args[i] - s[4].batch.keys[i] + 1);
  CHECK(lens == std::set<uint64_t>{3, 4, 5, 6});
  double sum = 0;
  for (size_t i = 0; i < 20000; ++i) sum += static_cast<double>(s[6].batch.args[i] - s[6].batch.keys[i] + 1);
  CHECK(sum / 20000 == doctest::Approx(5.0).epsilon(0.05));
  // unit results: span = 4 * 1000000 / 1000 = 4000 keys.
  for (size_t i = 0; i < 10; ++i) CHECK(s[8].batch.args[i] - s[8].batch.keys[i] + 1 == 4000);
  // Saturation at the key type's maximum.
  for (size_t i = 0; i < 10; ++i) {
    const uint64_t lo = s[10].batch.keys[i], hi = s[10].batch.args[i];
    CHECK(hi == std::min<uint64_t>(lo + 7, 0xFFFFFFFFull));
  }
}

TEST_CASE("generator: ranges in whole vertex blocks of graph edge keys (degree and neighbours)") {
  const std::vector<Step> s = gen_steps(gen_yaml("vertices.yaml", R"(key_type: u64
initial: {count: 5000, keys: {distribution: rmat, scale: 10}}
steps:
  - phase: {batches: 1, batch_size: 200, mix: {count: 0.5, range: 0.5}, keys: {distribution: rmat, scale: 10}, hit_ratio: 0.5, range_length: {distribution: fixed, length: 1, unit: vertices}}
  - phase: {batches: 1, batch_size: 50, mix: {count: 1}, hit_ratio: 1, range_length: {distribution: fixed, length: 3, unit: vertices}}
)"));
  for (size_t i = 0; i < 200; ++i) {
    const uint64_t lo = s[2].batch.keys[i], hi = s[2].batch.args[i];
    CHECK((lo & 0xFFFFFFFFull) == 0);                 // the vertex's first edge key
    CHECK(hi == lo + 0xFFFFFFFFull);                  // and its last: one vertex
    CHECK((lo >> 32) < 1024);
  }
  for (size_t i = 0; i < 50; ++i) CHECK(s[4].batch.args[i] - s[4].batch.keys[i] == 3 * 0x100000000ull - 1);
  // Vertex blocks need 64-bit keys.
  CHECK_THROWS_AS(gen_steps(gen_yaml("v32.yaml", "steps:\n  - phase: {batches: 1, batch_size: 2, mix: {count: 1}, "
                                                 "range_length: {length: 1, unit: vertices}}\n")),
                  InputError);
}

TEST_CASE("generator: insert-only workloads are fast (no re-sorting per batch)") {
  const std::vector<Step> s = gen_steps(gen_yaml("ins.yaml", R"(initial: {count: 100000}
steps:
  - phase: {batches: 256, batch_size: 4096, mix: {insert: 1}}
)"));
  CHECK(s.size() == 258);
  const std::vector<Step> t = gen_steps(gen_yaml("ins2.yaml", R"(initial: {count: 100000}
steps:
  - phase: {batches: 256, batch_size: 4096, mix: {insert: 1}}
  - phase: {batches: 1, batch_size: 10000, mix: {lookup: 1}, hit_ratio: 1}
)"));
  // The final lookups hit keys inserted anywhere before them.
  std::set<uint64_t> all(t[0].initial.keys.begin(), t[0].initial.keys.end());
  for (size_t i = 2; i < 258; ++i) all.insert(t[i].batch.keys.begin(), t[i].batch.keys.end());
  for (uint64_t k : t[259].batch.keys) REQUIRE(all.count(k) == 1);
  // The same seed gives the same inserts whether or not a later phase needs the model.
  for (size_t i = 0; i < 258; ++i) REQUIRE(gen_same_step(s[i], t[i]));
}

TEST_CASE("generator: the random number generator") {
  Rng a(1), b(1), c(2);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    CHECK(x == b.next());
    CHECK(x != c.next());
  }
  // Known first outputs (splitmix64 of 0 is a published value).
  CHECK(splitmix64(0) == 0xE220A8397B1DCDAFull);
  // below(): in range, every value reachable.
  Rng r(9);
  std::vector<int> seen(7);
  for (int i = 0; i < 7000; ++i) {
    const uint64_t v = r.below(7);
    REQUIRE(v < 7);
    ++seen[v];
  }
  for (int n : seen) CHECK(n > 800);
  for (int i = 0; i < 1000; ++i) {
    const double u = r.uniform01();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
  }
  CHECK(r.between(5, 5) == 5);
  // Streams differ by coordinates.
  CHECK(Rng::stream(1, 2, 3, 4).next() != Rng::stream(1, 2, 3, 5).next());
  CHECK(Rng::stream(1, 2, 3, 4).next() == Rng::stream(1, 2, 3, 4).next());
}

TEST_CASE("generator: deterministic math matches the C library") {
  for (double x = -700; x < 700; x += 0.731) CHECK(det_exp(x) == doctest::Approx(std::exp(x)).epsilon(1e-14));
  for (double x = 1e-300; x < 1e300; x *= 3.7) CHECK(det_log(x) == doctest::Approx(std::log(x)).epsilon(1e-14));
  for (double x = -0.99; x < 5; x += 0.0137) {
    CHECK(det_log1p(x) == doctest::Approx(std::log1p(x)).epsilon(1e-14));
    CHECK(det_expm1(x) == doctest::Approx(std::expm1(x)).epsilon(1e-14));
  }
  CHECK(det_log1p(1e-20) == 1e-20);
  CHECK(det_expm1(1e-20) == 1e-20);
  CHECK(det_log(1.0) == 0.0);
  CHECK(det_exp(0.0) == 1.0);
}

TEST_CASE("generator: Feistel scrambling is a bijection") {
  for (uint64_t last : {0ull, 1ull, 2ull, 6ull, 255ull, 256ull, 999ull, 4096ull, 65535ull}) {
    const FeistelPermutation p(last, 12345);
    std::vector<char> hit(last + 1, 0);
    for (uint64_t r = 0; r <= last; ++r) {
      const uint64_t x = p(r);
      REQUIRE(x <= last);
      REQUIRE(hit[x] == 0);
      hit[x] = 1;
    }
  }
  const FeistelPermutation full(~0ull, 7);
  std::set<uint64_t> out;
  for (uint64_t r = 0; r < 1000; ++r) out.insert(full(r));
  CHECK(out.size() == 1000);
  CHECK(*out.rbegin() > (1ull << 40));  // spread over the domain
}

TEST_CASE("generator: zipfian rank frequencies follow the theory") {
  auto top_frequency = [](double s, uint64_t last, bool scramble, int draws) {
    KeyDistSpec d;
    d.kind = DistKind::Zipfian;
    d.exponent = s;
    d.scramble = scramble;
    d.min = 0;
    d.max = last;
    KeySampler k(d, 99);
    Rng rng(3);
    std::map<uint64_t, int> freq;
    for (int i = 0; i < draws; ++i) ++freq[k.universe(rng)];
    int best = 0;
    uint64_t best_key = 0;
    for (auto& [key, n] : freq)
      if (n > best) {
        best = n;
        best_key = key;
      }
    return std::make_pair(static_cast<double>(best) / draws, best_key);
  };
  auto harmonic = [](double s, uint64_t n) {
    double h = 0;
    for (uint64_t r = 1; r <= n; ++r) h += 1.0 / std::pow(static_cast<double>(r), s);
    return h;
  };
  // Unscrambled: rank 0 is key min, with probability 1 / H(N, s).
  auto [f1, k1] = top_frequency(1.0, 999, false, 200000);
  CHECK(k1 == 0);
  CHECK(f1 == doctest::Approx(1.0 / harmonic(1.0, 1000)).epsilon(0.04));
  auto [f2, k2] = top_frequency(0.5, 99, false, 200000);
  CHECK(k2 == 0);
  CHECK(f2 == doctest::Approx(1.0 / harmonic(0.5, 100)).epsilon(0.04));
  // Scrambled: same top frequency, the hot key is somewhere else.
  auto [f3, k3] = top_frequency(1.0, 999, true, 200000);
  CHECK(f3 == doctest::Approx(1.0 / harmonic(1.0, 1000)).epsilon(0.04));
  CHECK(k3 != 0);
  // N = 2^64, s = 2: P(rank 0) = 1 / zeta(2) = 6 / pi^2.
  auto [f4, k4] = top_frequency(2.0, ~0ull, false, 100000);
  CHECK(k4 == 0);
  CHECK(f4 == doctest::Approx(6.0 / (3.14159265358979323846 * 3.14159265358979323846)).epsilon(0.02));
  // Second rank of the unscrambled s = 1 law: half the first.
  KeyDistSpec d;
  d.kind = DistKind::Zipfian;
  d.exponent = 1.0;
  d.scramble = false;
  d.max = 999;
  KeySampler k(d, 1);
  Rng rng(8);
  int r0 = 0, r1 = 0;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t x = k.universe(rng);
    r0 += x == 0;
    r1 += x == 1;
  }
  CHECK(static_cast<double>(r1) / r0 == doctest::Approx(0.5).epsilon(0.06));
}

TEST_CASE("generator: uniform, sequential, normal and hotset distributions") {
  Rng rng(21);
  {  // uniform: chi-square over 100 bins of [1000, 1999]
    KeyDistSpec d;
    d.min = 1000;
    d.max = 1999;
    KeySampler k(d, 1);
    std::vector<double> bins(100);
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
      const uint64_t x = k.universe(rng);
      REQUIRE(x >= 1000);
      REQUIRE(x <= 1999);
      bins[(x - 1000) / 10] += 1;
    }
    double chi2 = 0;
    for (double b : bins) chi2 += (b - n / 100.0) * (b - n / 100.0) / (n / 100.0);
    CHECK(chi2 < 160);  // 99 degrees of freedom: p < 1e-4 above 160
    CHECK(chi2 > 50);   // and not suspiciously regular
  }
  {  // sequential: (start + i * stride) mod N over [min, max]
    KeyDistSpec d;
    d.kind = DistKind::Sequential;
    d.start = 5;
    d.stride = 4;
    d.min = 10;
    d.max = 19;
    KeySampler k(d, 1);
    std::vector<uint64_t> got;
    for (int i = 0; i < 6; ++i) got.push_back(k.universe(rng));
    CHECK(got == std::vector<uint64_t>{15, 19, 13, 17, 11, 15});
    // Present draws count separately.
    CHECK(k.present_rank(rng, 99) == 5);
    CHECK(k.present_rank(rng, 99) == 9);
    // Full u64 domain wraps mod 2^64.
    KeyDistSpec w;
    w.kind = DistKind::Sequential;
    w.start = ~0ull - 1;
    w.stride = 1;
    w.max = ~0ull;
    KeySampler kw(w, 1);
    CHECK(kw.universe(rng) == ~0ull - 1);
    CHECK(kw.universe(rng) == ~0ull);
    CHECK(kw.universe(rng) == 0);
  }
  {  // normal: mean and stddev as fractions of the domain
    KeyDistSpec d;
    d.kind = DistKind::Normal;
    d.mean = 0.3;
    d.stddev = 0.05;
    d.max = 999999;
    KeySampler k(d, 1);
    double sum = 0, sq = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
      const double x = static_cast<double>(k.universe(rng)) / 1e6;
      sum += x;
      sq += x * x;
    }
    const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    CHECK(mean == doctest::Approx(0.3).epsilon(0.01));
    CHECK(sd == doctest::Approx(0.05).epsilon(0.03));
    double zs = 0, zs2 = 0;
    for (int i = 0; i < n; ++i) {
      const double z = sample_standard_normal(rng);
      zs += z;
      zs2 += z * z;
    }
    CHECK(std::fabs(zs / n) < 0.02);
    CHECK(zs2 / n == doctest::Approx(1.0).epsilon(0.02));
  }
  {  // hotset: unscrambled hot set = ranks [0, ceil(f * N)); P(hot) = p + (1 - p) f
    KeyDistSpec d;
    d.kind = DistKind::Hotset;
    d.hot_fraction = 0.05;
    d.hot_probability = 0.8;
    d.scramble = false;
    d.max = 9999;
    KeySampler k(d, 1);
    int hot = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i) hot += k.universe(rng) < 500;
    CHECK(static_cast<double>(hot) / n == doctest::Approx(0.8 + 0.2 * 0.05).epsilon(0.02));
    // Scrambled: the same mass on 500 keys spread over the domain.
    d.scramble = true;
    KeySampler ks(d, 1);
    std::map<uint64_t, int> freq;
    for (int i = 0; i < n; ++i) ++freq[ks.universe(rng)];
    std::vector<int> counts;
    for (auto& kv : freq) counts.push_back(kv.second);
    std::sort(counts.rbegin(), counts.rend());
    double top = 0;
    for (int i = 0; i < 500; ++i) top += counts[i];
    CHECK(top / n == doctest::Approx(0.81).epsilon(0.03));
    int hot_below_500 = 0;
    for (auto& kv : freq) hot_below_500 += (kv.first < 500 && kv.second > 100);
    CHECK(hot_below_500 < 100);  // the hot keys are not the first 500
  }
}

TEST_CASE("generator: rmat edges: endpoints inside 2^scale vertices, heavy-tailed degrees, deterministic") {
  KeyDistSpec d;
  d.kind = DistKind::Rmat;
  d.scale = 12;
  d.max = ~0ull;
  d.scramble = false;
  KeySampler k(d, 3);
  Rng rng(77);
  const int n = 1 << 16;
  std::map<uint64_t, int> out_degree;
  int low_quadrant = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t e = k.universe(rng);
    const uint64_t u = e >> 32, v = e & 0xFFFFFFFFull;
    REQUIRE(u < 4096);
    REQUIRE(v < 4096);
    ++out_degree[u];
    low_quadrant += u < 2048 && v < 2048;
  }
  // The top level puts an edge in quadrant (0, 0) with probability a.
  CHECK(static_cast<double>(low_quadrant) / n == doctest::Approx(0.57).epsilon(0.03));
  // Unscrambled, vertex 0 is the hub: its expected out-degree is n (a + b)^12.
  const double hub = n * std::pow(0.76, 12);
  CHECK(out_degree[0] == doctest::Approx(hub).epsilon(0.1));
  int max_degree = 0;
  for (auto& kv : out_degree) max_degree = std::max(max_degree, kv.second);
  CHECK(max_degree > 20 * n / 4096);  // far above the mean of 16
  // Scrambled: the same degrees on permuted ids; the same seed, the same edges.
  d.scramble = true;
  KeySampler s1(d, 3), s2(d, 3);
  Rng r1(9), r2(9);
  std::map<uint64_t, int> scrambled;
  for (int i = 0; i < n; ++i) {
    const uint64_t e = s1.universe(r1);
    CHECK(e == s2.universe(r2));
    ++scrambled[e >> 32];
  }
  CHECK(scrambled[0] < hub / 4);  // the hub moved away from 0
  int smax = 0;
  for (auto& kv : scrambled) smax = std::max(smax, kv.second);
  CHECK(smax == doctest::Approx(hub).epsilon(0.15));
}

TEST_CASE("generator: summaries of the examples match what they generate") {
  const fs::path dir = fs::path(GPUDICT_SOURCE_DIR) / "examples";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string path = e.path().string();
    if (e.path().extension() != ".yaml" || path.find("bench-") != std::string::npos) continue;
    INFO(path);
    const WorkloadSummary sum = summarize_workload(path);
    std::unique_ptr<StepSource> src = open_workload(path);
    Step s;
    REQUIRE(src->next(s));
    REQUIRE(s.kind == StepKind::Initial);
    CHECK(s.initial.size() == sum.initial);
    size_t phase = 0;
    std::vector<std::string> snaps;
    std::array<uint64_t, kNumOpTypes> ops{};
    uint64_t batches = 0, max_batch = 0;
    std::vector<PhaseSummary> seen;
    while (src->next(s)) {
      if (s.kind == StepKind::Phase) {
        seen.emplace_back();
        seen.back().name = s.name;
      } else if (s.kind == StepKind::Batch) {
        REQUIRE(!seen.empty());
        const auto c = type_counts(s.batch);
        ++seen.back().batches;
        seen.back().max_batch = std::max<uint64_t>(seen.back().max_batch, s.batch.size());
        for (int t = 0; t < kNumOpTypes; ++t) {
          seen.back().ops[t] += c[t];
          ops[t] += c[t];
        }
        ++batches;
        max_batch = std::max<uint64_t>(max_batch, s.batch.size());
      } else if (s.kind == StepKind::Snapshot) {
        snaps.push_back("snapshot " + s.name);
      } else if (s.kind == StepKind::DropSnapshot) {
        snaps.push_back("drop_snapshot " + s.name);
      }
    }
    REQUIRE(seen.size() == sum.phases.size());
    for (phase = 0; phase < seen.size(); ++phase) {
      CHECK(seen[phase].name == sum.phases[phase].name);
      CHECK(seen[phase].batches == sum.phases[phase].batches);
      CHECK(seen[phase].max_batch == sum.phases[phase].max_batch);
      CHECK(seen[phase].ops == sum.phases[phase].ops);
    }
    CHECK(ops == sum.ops);
    CHECK(batches == sum.batches);
    CHECK(max_batch == sum.bounds.max_batch);
    CHECK(snaps == sum.snapshot_steps);
    CHECK(sum.bounds.max_resident == sum.initial + sum.ops[0]);
    ++checked;
  }
  CHECK(checked >= 7);
}

TEST_CASE("generator: output is pinned (the same bits on every platform and build)") {
  // A change here changes every generated workload: only on purpose
  // (docs/workload-format.md: reports' provenance tells the generators apart).
  const std::string path = gen_yaml("golden.yaml", R"(seed: 20240601
initial: {count: 2000, keys: {distribution: zipfian, exponent: 0.7, max: 99999999}}
steps:
  - phase: {batches: 2, batch_size: 500, mix: {insert: 0.3, delete: 0.2, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1},
            keys: {distribution: normal, mean: 0.4, stddev: 0.2, max: 99999999},
            range_length: {distribution: geometric, mean: 3, unit: results}}
  - phase: {batches: 1, batch_size: 500, mode: concurrent, mix: {insert: 0.5, lookup: 0.25, successor: 0.25},
            keys: {distribution: hotset, hot_fraction: 0.05, max: 99999999}, hit_ratio: 0.7}
  - phase: {batches: 1, batch_size: 300, mix: {insert: 0.5, range: 0.5},
            keys: {distribution: zipfian, exponent: 1.3}, range_length: {distribution: uniform, min: 1, max: 1000}}
  - phase: {batches: 1, batch_size: 100, mix: {insert: 1}, keys: {distribution: sequential, start: 3, stride: 7}}
)");
  uint64_t h = 1469598103934665603ull;  // FNV-1a over every number of every step
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  };
  for (const Step& s : gen_steps(path)) {
    mix(static_cast<uint64_t>(s.kind));
    for (uint64_t k : s.initial.keys) mix(k);
    for (uint64_t v : s.initial.values) mix(v);
    mix(static_cast<uint64_t>(s.batch.mode));
    for (size_t i = 0; i < s.batch.size(); ++i) {
      mix(static_cast<uint64_t>(s.batch.types[i]));
      mix(s.batch.keys[i]);
      mix(s.batch.args[i]);
    }
  }
  CHECK(h == 911148328315803693ull);
}

TEST_CASE("generator: one thread and many make the same operations") {
  // Large enough that every parallel loop splits (initial draws and values,
  // batch types and keys), every distribution, both modes, hits and misses,
  // sequential keys (one thread by design) and a dense initial set.
  const std::string path = gen_yaml("threads.yaml", R"(seed: 77
initial: {count: 300000, keys: {distribution: uniform, max: 2000000}}
steps:
  - phase: {batches: 2, batch_size: 40000, mix: {insert: 0.3, delete: 0.2, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1},
            keys: {distribution: zipfian, exponent: 0.9, max: 2000000}, hit_ratio: 0.6}
  - phase: {batches: 2, batch_size: 30000, mode: concurrent, mix: {insert: 0.4, delete: 0.2, lookup: 0.4},
            keys: {distribution: hotset, hot_fraction: 0.05, max: 2000000}, hit_ratio: 0.5}
  - phase: {batches: 1, batch_size: 20000, mix: {insert: 0.5, range: 0.5},
            keys: {distribution: normal, mean: 0.5, stddev: 0.1, max: 2000000}, range_length: {distribution: geometric, mean: 4, unit: results}}
  - phase: {batches: 1, batch_size: 20000, mix: {insert: 1}, keys: {distribution: sequential, start: 5, stride: 3, max: 2000000}}
  - phase: {batches: 1, batch_size: 20000, mix: {lookup: 1}, hit_ratio: 0.3}
)");
  const std::string dense = gen_yaml("threads-dense.yaml", R"(seed: 78
initial: {count: 150000, keys: {distribution: uniform, max: 199999}}
steps:
  - phase: {batches: 1, batch_size: 50000, mix: {delete: 0.5, lookup: 0.5}, hit_ratio: 0.5}
)");
  for (const std::string& p : {path, dense}) {
    CAPTURE(p);
    set_host_threads(1);
    const std::vector<Step> one = gen_steps(p);
    set_host_threads(7);
    const std::vector<Step> many = gen_steps(p);
    set_host_threads(0);
    CHECK(gen_same_steps(one, many));
  }
}
