// The CPU backend (workloads/cpu_backend.hpp): results written by hand for a
// scripted workload, then random workloads checked by the verifier.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/cpu_backend.hpp"
#include "workloads/parallel.hpp"
#include "workloads/verifier.hpp"

using namespace gpudict;

namespace {

constexpr uint64_t kMax32 = 0xFFFFFFFFull;
constexpr uint64_t kMax64 = UINT64_MAX;

KeyValues kv(std::vector<uint64_t> keys, std::vector<uint64_t> values) {
  KeyValues k;
  k.keys = std::move(keys);
  k.values = std::move(values);
  return k;
}

Capabilities ordered_caps(DuplicateRule rule = DuplicateRule::LastWins) {
  Capabilities c;
  c.ordered = true;
  c.deletes = true;
  c.snapshots = true;
  c.native_concurrent = true;  // the backend reports false whatever it is given
  c.phased_duplicates = rule;
  c.key_types = {KeyType::U32, KeyType::U64};
  return c;
}

// Lookup result of op i as an optional.
std::optional<uint64_t> found(const BatchResults& r, size_t i) {
  return r.found[i] ? std::optional<uint64_t>(r.value[i]) : std::nullopt;
}

std::vector<std::pair<uint64_t, uint64_t>> pairs(const BatchResults& r, size_t i) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint64_t j = 0; j < r.value[i]; ++j) out.emplace_back(r.range_keys[r.key[i] + j], r.range_values[r.key[i] + j]);
  return out;
}

using P = std::pair<uint64_t, uint64_t>;
using PV = std::vector<P>;

}  // namespace

TEST_CASE("cpu-backend: interface figures") {
  auto d = make_cpu_dictionary(ordered_caps(DuplicateRule::DeleteWinsElseAny), KeyType::U32, KeyType::U32);
  CHECK(d->caps().ordered);
  CHECK(d->caps().snapshots);
  CHECK_FALSE(d->caps().native_concurrent);
  CHECK(d->caps().phased_duplicates == DuplicateRule::DeleteWinsElseAny);
  REQUIRE(d->parameters().size() == 2);
  CHECK(d->parameters()[0] == std::make_pair(std::string("backend"), std::string("cpu-reference")));
  CHECK(d->parameters()[1] == std::make_pair(std::string("semantics"), std::string("map")));
  WorkloadBounds b;
  b.max_resident = 1u << 26;
  CHECK(d->device_bytes_needed(b) == 0);
  DeviceTime t;
  d->build(kv({1, 2, 3}, {1, 2, 3}), t);
  d->snapshot("a", t);
  const Stats s = d->stats();
  CHECK(s.size == 3);
  CHECK(s.device_bytes == 0);
  REQUIRE(s.extra.size() == 1);
  CHECK(s.extra[0] == std::make_pair(std::string("snapshots"), std::string("1")));
}

TEST_CASE("cpu-backend: a scripted workload, results by hand") {
  auto d = make_cpu_dictionary(ordered_caps(), KeyType::U32, KeyType::U32);
  DeviceTime t;
  d->build(kv({5, 0, kMax32, 5, 9}, {50, kMax32, 0, 51, 90}), t);  // 5 -> 51 (later wins)
  CHECK(d->stats().size == 4);
  CHECK(t[Phase::Build] > 0);

  Batch b;
  b.push(OpType::Insert, 7, 70);      // 0
  b.push(OpType::Lookup, 5);          // 1
  b.push(OpType::Delete, 9);          // 2
  b.push(OpType::Delete, 8);          // 3: absent, no-op
  b.push(OpType::Lookup, 9);          // 4
  b.push(OpType::Lookup, 0);          // 5
  b.push(OpType::Count, 1, 7);        // 6
  b.push(OpType::Range, 0, 7);        // 7
  b.push(OpType::Successor, 5);       // 8
  b.push(OpType::Successor, kMax32);  // 9
  b.push(OpType::Count, 7, 1);        // 10: inverted
  b.push(OpType::Range, 6, 100);      // 11
  b.push(OpType::Range, 9, 3);        // 12: inverted
  b.push(OpType::Insert, 5, 52);      // 13: replaces 51
  b.push(OpType::Lookup, kMax32);     // 14
  BatchResults r;
  r.found.assign(3, 1);  // stale contents must be reset
  r.range_keys = {1, 2, 3};
  d->execute(b, r, t);

  REQUIRE(r.found.size() == b.size());
  CHECK(r.found[0] == 0);  // update slots unused
  CHECK(r.value[0] == 0);
  CHECK(found(r, 1) == std::optional<uint64_t>(52));
  CHECK(found(r, 4) == std::nullopt);
  CHECK(found(r, 5) == std::optional<uint64_t>(kMax32));
  CHECK(r.value[6] == 2);  // 5, 7
  CHECK(r.key[7] == 0);
  CHECK(pairs(r, 7) == PV{P{0, kMax32}, P{5, 52}, P{7, 70}});
  CHECK(r.found[8] == 1);
  CHECK(r.key[8] == 7);
  CHECK(r.value[8] == 70);
  CHECK(r.found[9] == 0);
  CHECK(r.value[10] == 0);
  CHECK(r.key[11] == 3);
  CHECK(pairs(r, 11) == PV{P{7, 70}});
  CHECK(r.value[12] == 0);
  CHECK(found(r, 14) == std::optional<uint64_t>(0));
  CHECK(r.range_keys.size() == 4);
  CHECK(r.range_values.size() == 4);
  CHECK(t[Phase::Update] > 0);
  CHECK(t[Phase::Lookup] > 0);
  CHECK(t[Phase::Count] > 0);
  CHECK(t[Phase::Range] > 0);
  CHECK(t[Phase::Successor] > 0);
  CHECK(t[Phase::Concurrent] == 0);
  CHECK(d->stats().size == 4);  // 0, 5, 7, max

  // Snapshot, change the live state, query both.
  d->snapshot("s", t);
  CHECK(t[Phase::Snapshot] > 0);
  Batch c;
  c.push(OpType::Delete, 0);
  c.push(OpType::Insert, 6, 60);
  c.push(OpType::Lookup, 0);
  c.push(OpType::Range, 0, 10);
  d->execute(c, r, t);
  CHECK(found(r, 2) == std::nullopt);
  CHECK(pairs(r, 3) == PV{P{5, 52}, P{6, 60}, P{7, 70}});
  Batch s;
  s.snapshot = "s";
  s.push(OpType::Insert, 1, 10);  // goes to the live state
  s.push(OpType::Lookup, 0);
  s.push(OpType::Lookup, 6);
  s.push(OpType::Lookup, 1);
  s.push(OpType::Count, 0, kMax32);
  s.push(OpType::Successor, 0);
  d->execute(s, r, t);
  CHECK(found(r, 1) == std::optional<uint64_t>(kMax32));
  CHECK(found(r, 2) == std::nullopt);
  CHECK(found(r, 3) == std::nullopt);
  CHECK(r.value[4] == 4);
  CHECK(r.key[5] == 5);
  CHECK(d->stats().size == 5);  // 1, 5, 6, 7, max
  d->drop_snapshot("s");
  CHECK(d->stats().extra[0].second == "0");
  CHECK_THROWS_AS(d->execute(s, r, t), InputError);
  CHECK_THROWS_AS(d->drop_snapshot("s"), InputError);
  d->snapshot("x", t);
  CHECK_THROWS_AS(d->snapshot("x", t), InputError);
}

TEST_CASE("cpu-backend: the u64 domain") {
  auto d = make_cpu_dictionary(ordered_caps(), KeyType::U64, KeyType::U64);
  DeviceTime t;
  d->build(kv({kMax64, 0, kMax32}, {0, kMax64, 1}), t);
  Batch b;
  b.push(OpType::Lookup, kMax64);
  b.push(OpType::Successor, kMax32);
  b.push(OpType::Successor, kMax64);
  b.push(OpType::Count, 0, kMax64);
  b.push(OpType::Range, kMax32, kMax64);
  BatchResults r;
  d->execute(b, r, t);
  CHECK(found(r, 0) == std::optional<uint64_t>(0));
  CHECK(r.found[1] == 1);
  CHECK(r.key[1] == kMax64);
  CHECK(r.found[2] == 0);
  CHECK(r.value[3] == 3);
  CHECK(pairs(r, 4) == PV{P{kMax32, 1}, P{kMax64, 0}});
}

TEST_CASE("cpu-backend: several updates of one key in a batch follow the caps' rule") {
  Batch b;
  b.push(OpType::Insert, 1, 11);
  b.push(OpType::Delete, 1);
  b.push(OpType::Insert, 1, 13);  // 1: insert, delete, insert
  b.push(OpType::Insert, 2, 21);
  b.push(OpType::Insert, 2, 22);  // 2: two inserts
  b.push(OpType::Insert, 3, 31);
  b.push(OpType::Delete, 3);  // 3: insert, delete
  b.push(OpType::Lookup, 1);
  b.push(OpType::Lookup, 2);
  b.push(OpType::Lookup, 3);

  for (ExecMode mode : {ExecMode::Phased, ExecMode::Concurrent}) {
    b.mode = mode;
    CAPTURE(mode_name(mode));
    BatchResults r;
    DeviceTime t;
    for (DuplicateRule rule : {DuplicateRule::LastWins, DuplicateRule::AnyUpdate}) {
      auto d = make_cpu_dictionary(ordered_caps(rule), KeyType::U32, KeyType::U32);
      d->build(kv({3}, {30}), t);
      d->execute(b, r, t);
      CHECK(found(r, 7) == std::optional<uint64_t>(13));
      CHECK(found(r, 8) == std::optional<uint64_t>(22));
      CHECK(found(r, 9) == std::nullopt);
    }
    auto d = make_cpu_dictionary(ordered_caps(DuplicateRule::DeleteWinsElseAny), KeyType::U32, KeyType::U32);
    d->build(kv({3}, {30}), t);
    d->execute(b, r, t);
    CHECK(found(r, 7) == std::nullopt);
    CHECK(found(r, 8) == std::optional<uint64_t>(22));
    CHECK(found(r, 9) == std::nullopt);
    if (mode == ExecMode::Concurrent) {
      CHECK(t[Phase::Concurrent] > 0);
    } else {
      CHECK(t[Phase::Concurrent] == 0);
      CHECK(t[Phase::Update] > 0);
    }
  }
}

namespace {

// A random workload over a small key space (many duplicates in a batch),
// with the ends of the domain, both modes, snapshots. Runs it on the CPU
// backend and checks every batch with the verifier. `corrupt_batch`: that
// batch's results get one impossible answer.
struct RandomRun {
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::vector<Mismatch> reported;
  uint64_t corrupted_op = 0;
};

constexpr uint64_t kImpossible = 999999;  // never inserted

RandomRun random_run(DuplicateRule rule, KeyType kt, uint64_t seed, int corrupt_batch = -1) {
  std::mt19937_64 rng(seed);
  const uint64_t kmax = max_of(kt);
  auto key = [&]() -> uint64_t {
    switch (rng() % 10) {
      case 0: return 0;
      case 1: return kmax;
      case 2: return kmax - (rng() % 3);
      default: return rng() % 48;
    }
  };
  auto value = [&]() -> uint64_t {
    switch (rng() % 8) {
      case 0: return 0;
      case 1: return kMax32;
      default: return rng() % 1000;
    }
  };
  Capabilities caps = ordered_caps(rule);
  auto d = make_cpu_dictionary(caps, kt, kt);
  Verifier v(kt, kt, rule, 5);
  DeviceTime t;
  KeyValues init;
  for (int i = 0; i < 40; ++i) {
    init.keys.push_back(key());
    init.values.push_back(value());
  }
  d->build(init, t);
  v.build(init);

  RandomRun out;
  std::vector<std::string> snaps;
  int next_snap = 0;
  BatchResults r;
  for (int bi = 0; bi < 300; ++bi) {
    if (rng() % 12 == 0 && snaps.size() < 3) {
      const std::string name = "s" + std::to_string(next_snap++);
      d->snapshot(name, t);
      v.snapshot(name);
      snaps.push_back(name);
    }
    if (rng() % 15 == 0 && !snaps.empty()) {
      const size_t i = rng() % snaps.size();
      d->drop_snapshot(snaps[i]);
      v.drop_snapshot(snaps[i]);
      snaps.erase(snaps.begin() + static_cast<long>(i));
    }
    Batch b;
    b.mode = rng() % 2 ? ExecMode::Concurrent : ExecMode::Phased;
    if (!snaps.empty() && rng() % 5 == 0) b.snapshot = snaps[rng() % snaps.size()];
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const OpType type = kAllOpTypes[rng() % 6];  // the dictionary operations (not the graph's, last)
      const uint64_t k = key();
      switch (type) {
        case OpType::Insert: b.push(type, k, value()); break;
        case OpType::Count:
        case OpType::Range: b.push(type, k, rng() % 4 == 0 ? key() : k + rng() % 20); break;
        default: b.push(type, k); break;
      }
    }
    if (bi == corrupt_batch) b.push(OpType::Lookup, key());  // at least one query to corrupt
    d->execute(b, r, t);
    if (bi == corrupt_batch) {
      std::vector<size_t> queries;
      for (size_t i = 0; i < b.size(); ++i)
        if (!is_update(b.types[i])) queries.push_back(i);
      const size_t q = queries[rng() % queries.size()];
      out.corrupted_op = q;
      switch (b.types[q]) {
        case OpType::Count: r.value[q] = 1u << 20; break;
        case OpType::Range:
          if (r.value[q] > 0) {
            r.range_values[r.key[q]] = kImpossible;
          } else {
            r.key[q] = r.range_keys.size();
            r.value[q] = 1;
            r.range_keys.push_back(b.keys[q]);
            r.range_values.push_back(kImpossible);
          }
          break;
        default:  // lookup, successor: found with a value nothing ever had
          if (b.types[q] == OpType::Successor && !r.found[q]) r.key[q] = b.keys[q] == kmax ? kmax : b.keys[q] + 1;
          r.found[q] = 1;
          r.value[q] = kImpossible;
          break;
      }
    }
    v.check_batch(static_cast<uint64_t>(bi), b, r);
  }
  out.checked = v.checked();
  out.mismatches = v.mismatches();
  out.reported = v.first_mismatches();
  return out;
}

}  // namespace

TEST_CASE("cpu-backend: random workloads pass the verifier under every rule, both modes") {
  for (DuplicateRule rule : {DuplicateRule::LastWins, DuplicateRule::DeleteWinsElseAny, DuplicateRule::AnyUpdate}) {
    for (KeyType kt : {KeyType::U32, KeyType::U64}) {
      for (uint64_t seed = 1; seed <= 4; ++seed) {
        CAPTURE(rule_name(rule));
        CAPTURE(type_name(kt));
        CAPTURE(seed);
        const RandomRun run = random_run(rule, kt, seed);
        CHECK(run.checked > 1000);
        CHECK(run.mismatches == 0);
        if (!run.reported.empty()) {
          const Mismatch& m = run.reported[0];
          MESSAGE("batch ", m.batch, " op ", m.op, " ", op_name(m.type), " ", m.key, " ", m.arg,
                  ": expected ", m.expected, ", got ", m.got);
        }
      }
    }
  }
}

TEST_CASE("cpu-backend: a corrupted result in a random workload is caught") {
  for (DuplicateRule rule : {DuplicateRule::LastWins, DuplicateRule::DeleteWinsElseAny, DuplicateRule::AnyUpdate}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      CAPTURE(rule_name(rule));
      CAPTURE(seed);
      const int batch = static_cast<int>(seed * 37 % 300);
      const RandomRun run = random_run(rule, seed % 2 ? KeyType::U32 : KeyType::U64, seed, batch);
      CHECK(run.mismatches >= 1);
      REQUIRE_FALSE(run.reported.empty());
      CHECK(run.reported[0].batch == static_cast<uint64_t>(batch));
      CHECK(run.reported[0].op == run.corrupted_op);
    }
  }
}

TEST_CASE("cpu-backend: queries on many threads give the one-thread results, ranges in place") {
  // Enough queries of each type for several pieces of the parallel loops;
  // keys in a narrow domain, so ranges hold pairs and lookups both hit and
  // miss; the multimap holds several values per key.
  for (Semantics sem : {Semantics::Map, Semantics::Multimap}) {
    CAPTURE(static_cast<int>(sem));
    Capabilities caps = ordered_caps(sem == Semantics::Multimap ? DuplicateRule::DeletesThenInserts : DuplicateRule::LastWins);
    caps.semantics = sem;
    std::mt19937_64 rng(11);
    KeyValues initial;
    for (int i = 0; i < 20000; ++i) {
      initial.keys.push_back(rng() % 40000);
      initial.values.push_back(rng());
    }
    Batch b;
    for (int i = 0; i < 24000; ++i) {
      const uint64_t k = rng() % 40000;
      switch (i % 5) {
        case 0: b.push(OpType::Lookup, k); break;
        case 1: b.push(OpType::Count, k, k + rng() % 16); break;
        case 2: b.push(OpType::Range, k, k + rng() % 16); break;
        case 3: b.push(OpType::Successor, k); break;
        default: b.push(OpType::Range, k + 8, k); break;  // inverted: empty
      }
    }
    auto results_on = [&](unsigned threads) {
      set_host_threads(threads);
      auto d = make_cpu_dictionary(caps, KeyType::U32, KeyType::U64);
      DeviceTime t;
      d->build(initial, t);
      BatchResults r;
      d->execute(b, r, t);
      set_host_threads(0);
      return r;
    };
    const BatchResults one = results_on(1), many = results_on(4);
    CHECK(one.found == many.found);
    CHECK(one.value == many.value);
    CHECK(one.key == many.key);
    CHECK(one.range_keys == many.range_keys);
    CHECK(one.range_values == many.range_values);
    // Ranges in batch order, each pair within its bounds and in key order.
    uint64_t expect_at = 0, pairs_seen = 0;
    for (size_t i = 0; i < b.size(); ++i) {
      if (b.types[i] != OpType::Range) continue;
      REQUIRE(one.key[i] == expect_at);
      for (uint64_t j = 0; j < one.value[i]; ++j) {
        const uint64_t k = one.range_keys[expect_at + j];
        CHECK((k >= b.keys[i] && k <= b.args[i]));
        if (j > 0) CHECK(one.range_keys[expect_at + j - 1] <= k);
      }
      expect_at += one.value[i];
      pairs_seen += one.value[i];
    }
    CHECK(expect_at == one.range_keys.size());
    CHECK(pairs_seen > 1000);
  }
}

TEST_CASE("cpu-backend: the sorted-array store gives the std::map oracle's results, every rule and mode") {
  // Small key domains (duplicates in a batch, deletes of absent keys, keys
  // re-inserted after deletes), batches large and small so that the delta
  // is folded into the base many times, both ends of the domain, phased and
  // concurrent batches, snapshots, and on u64 keys vertex deletes and
  // triangle counts.
  for (DuplicateRule rule : {DuplicateRule::LastWins, DuplicateRule::DeleteWinsElseAny, DuplicateRule::AnyUpdate,
                             DuplicateRule::DeletesThenInserts}) {
    for (Semantics sem : {Semantics::Map, Semantics::Set}) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        CAPTURE(rule_name(rule));
        CAPTURE(static_cast<int>(sem));
        CAPTURE(seed);
        const bool graph = seed == 3;
        Capabilities caps = ordered_caps(rule);
        caps.semantics = sem;
        if (graph) {
          caps.vertex_delete = true;
          caps.triangles = true;
        }
        std::mt19937_64 rng(seed * 1000 + static_cast<uint64_t>(rule) * 10 + static_cast<uint64_t>(sem));
        const uint64_t domain = seed == 1 ? 3000 : graph ? 8000 : 60000;
        auto key = [&]() -> uint64_t {
          if (graph) return ((rng() % 400) << 32) | (rng() % 400);
          const uint64_t r = rng() % (domain + 2);
          return r == domain ? 0 : r == domain + 1 ? kMax64 : r;
        };
        KeyValues initial;
        for (uint64_t i = 0; i < domain / 2; ++i) {
          initial.keys.push_back(key());
          initial.values.push_back(rng());
        }
        auto sorted = make_cpu_dictionary(caps, KeyType::U64, KeyType::U64);
        auto oracle = make_cpu_dictionary_map_oracle(caps);
        DeviceTime t;
        sorted->build(initial, t);
        oracle->build(initial, t);
        bool snap = false;
        size_t mismatched_batches = 0;
        for (int bi = 0; bi < 100; ++bi) {
          Batch b;
          b.mode = bi % 3 == 2 && !graph ? ExecMode::Concurrent : ExecMode::Phased;
          if (snap && bi % 4 == 1) b.snapshot = "s";
          const int n = bi % 10 == 0 ? 10000 : 1 + static_cast<int>(rng() % 400);
          for (int i = 0; i < n; ++i) {
            const uint64_t k = key();
            const unsigned c = static_cast<unsigned>(rng() % 10);
            if (!b.snapshot.empty() && c < 4) continue;  // a snapshot batch only queries
            if (c < 3) b.push(OpType::Insert, k, rng());
            else if (c < 5) b.push(OpType::Delete, k);
            else if (c < 6) b.push(OpType::Lookup, k);
            else if (c < 7) b.push(OpType::Successor, k);
            else if (c < 8) b.push(OpType::Count, k, rng() % 4 ? k + rng() % 50 : k - 1);
            else b.push(OpType::Range, k, graph ? k | 0xFFFFFFFFull : k + rng() % 50);
          }
          if (graph && b.snapshot.empty() && b.mode == ExecMode::Phased) {
            if (bi % 7 == 3) b.push(OpType::VertexDelete, (rng() % 400) << 32);
            if (bi % 40 == 39) b.push(OpType::Triangles, 0);  // (the backends' counter is slow)
          }
          BatchResults rs, ro;
          sorted->execute(b, rs, t);
          oracle->execute(b, ro, t);
          const bool same = rs.found == ro.found && rs.value == ro.value && rs.key == ro.key &&
                            rs.range_keys == ro.range_keys && rs.range_values == ro.range_values;
          if (!same) ++mismatched_batches;
          CHECK(sorted->stats().size == oracle->stats().size);
          if (bi == 30) {
            sorted->snapshot("s", t);
            oracle->snapshot("s", t);
            snap = true;
          }
          if (bi == 80) {
            sorted->drop_snapshot("s");
            oracle->drop_snapshot("s");
            snap = false;
          }
        }
        CHECK(mismatched_batches == 0);
      }
    }
  }
}

TEST_CASE("batch plan: a large batch grouped on several threads keeps batch order within each type") {
  std::mt19937_64 rng(17);
  Batch b;
  for (int i = 0; i < 300000; ++i) b.push(kAllOpTypes[rng() % kNumOpTypes], rng());
  std::array<std::vector<uint32_t>, kNumOpTypes> expected;
  for (uint32_t i = 0; i < b.size(); ++i) expected[static_cast<int>(b.types[i])].push_back(i);
  for (unsigned threads : {1u, 3u, 8u}) {
    set_host_threads(threads);
    const BatchPlan plan(b);
    set_host_threads(0);
    for (OpType t : kAllOpTypes) CHECK(plan.of(t) == expected[static_cast<int>(t)]);
  }
}
