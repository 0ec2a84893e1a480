// Sharded runs (workloads/sharding.hpp): the partitions, the shard threads,
// and a sharded CPU reference answering exactly as an unsharded one on random
// workloads, counts, ranges and successors across shard boundaries included.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/cpu_backend.hpp"
#include "workloads/parallel.hpp"
#include "workloads/shard_threads.hpp"
#include "workloads/sharding.hpp"

using namespace gpudict;

namespace {

constexpr uint64_t kMax32 = 0xFFFFFFFFull;

Capabilities ordered_caps() {
  Capabilities c;
  c.ordered = true;
  c.snapshots = true;
  c.key_types = {KeyType::U32, KeyType::U64};
  return c;
}

Capabilities hash_caps(Semantics sem) {
  Capabilities c;
  c.point_count_range = true;
  c.semantics = sem;
  c.phased_duplicates = sem == Semantics::Multimap ? DuplicateRule::DeletesThenInserts : DuplicateRule::LastWins;
  c.key_types = {KeyType::U32, KeyType::U64};
  return c;
}

std::unique_ptr<Dictionary> sharded_cpu(const Capabilities& caps, KeyType kt, uint32_t shards) {
  ShardSetup setup;
  setup.structure = "test";
  setup.key_type = kt;
  setup.devices.assign(shards, "cpu");
  setup.make = [caps, kt](uint32_t) { return make_cpu_dictionary(caps, kt, kt, "test"); };
  return make_sharded_dictionary(std::move(setup));
}

void check_same(const BatchResults& a, const BatchResults& b) {
  CHECK(a.found == b.found);
  CHECK(a.value == b.value);
  // Range offsets may differ only where the ranges' pairs do; both lay the
  // pairs out in batch order, so they are equal too.
  CHECK(a.key == b.key);
  CHECK(a.range_keys == b.range_keys);
  CHECK(a.range_values == b.range_values);
}

}  // namespace

TEST_CASE("sharding: an even range partition covers the domain at both widths") {
  const auto p = even_range_partition(4, kMax32);
  CHECK(p.first[0] == 0);
  CHECK(p.first[1] == 1ull << 30);
  CHECK(p.first[3] == 3ull << 30);
  CHECK(p.owner(0) == 0);
  CHECK(p.owner((1ull << 30) - 1) == 0);
  CHECK(p.owner(1ull << 30) == 1);
  CHECK(p.owner(kMax32) == 3);
  CHECK(p.highest(0, kMax32) == (1ull << 30) - 1);
  CHECK(p.highest(3, kMax32) == kMax32);

  const auto q = even_range_partition(3, UINT64_MAX);
  CHECK(q.owner(0) == 0);
  CHECK(q.owner(UINT64_MAX) == 2);
  CHECK(q.first[1] == UINT64_MAX / 3);  // floor(2^64 / 3)
  for (uint32_t s = 1; s < 3; ++s) CHECK(q.first[s] > q.first[s - 1]);

  const auto one = even_range_partition(1, UINT64_MAX);
  CHECK(one.owner(UINT64_MAX) == 0);
  CHECK_THROWS(even_range_partition(0, kMax32));
  CHECK_THROWS(even_range_partition(shard_partition::max_shards + 1, kMax32));
}

TEST_CASE("sharding: sampled boundaries follow the keys and always rise") {
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; k < 1000000; ++k) keys.push_back((k * 7919) % 1000000);  // 0..999999, shuffled
  const auto p = sampled_range_partition(keys, 4, kMax32);
  for (uint32_t s = 1; s < 4; ++s) CHECK(p.first[s] == doctest::Approx(250000.0 * s).epsilon(0.01));
  std::vector<uint64_t> per(4);
  for (uint64_t k : keys) ++per[p.owner(k)];
  for (uint64_t c : per) CHECK(c == doctest::Approx(250000).epsilon(0.02));

  // One key repeated: every shard still has a boundary of its own.
  const auto same = sampled_range_partition(std::vector<uint64_t>(1000, 77), 8, kMax32);
  for (uint32_t s = 1; s < 8; ++s) CHECK(same.first[s] > same.first[s - 1]);
  CHECK(same.owner(77) == 1);  // the quantiles are all 77: shard 1 starts there

  // Keys at the top of the domain: the last boundaries stay inside it.
  const auto top = sampled_range_partition(std::vector<uint64_t>(100, kMax32), 4, kMax32);
  CHECK(top.first[3] == kMax32);
  CHECK(top.first[2] == kMax32 - 1);
  CHECK(top.owner(kMax32) == 3);

  CHECK(sampled_range_partition({}, 4, kMax32).first[1] == even_range_partition(4, kMax32).first[1]);
}

TEST_CASE("sharding: the hash partition spreads sequential keys evenly") {
  const auto p = hash_partition(8);
  std::vector<uint64_t> per(8);
  for (uint64_t k = 0; k < 800000; ++k) ++per[p.owner(k)];
  for (uint64_t c : per) CHECK(c == doctest::Approx(100000).epsilon(0.02));
  CHECK(p.owner(12345) == hash_partition(8).owner(12345));
  CHECK(hash_partition(1).owner(UINT64_MAX) == 0);
}

TEST_CASE("sharding: shard threads run every shard's work on its own thread") {
  std::atomic<int> entered{0};
  std::vector<std::thread::id> ids(4);
  ShardThreads threads(4, [&](uint32_t s) {
    ++entered;
    ids[s] = std::this_thread::get_id();
  });
  std::vector<std::thread::id> seen(4);
  threads.run_all([&](uint32_t s) { seen[s] = std::this_thread::get_id(); });
  CHECK(entered == 4);
  CHECK(seen == ids);
  CHECK(std::set<std::thread::id>(seen.begin(), seen.end()).size() == 4);
  // The first exception by shard comes back; the threads keep working.
  CHECK_THROWS_WITH(threads.run_all([](uint32_t s) {
    if (s >= 1) throw InputError("shard " + std::to_string(s));
  }),
                    "shard 1");
  std::atomic<int> ran{0};
  std::vector<std::thread::id> again(4);
  threads.run_all([&](uint32_t s) {
    ++ran;
    again[s] = std::this_thread::get_id();
  });
  CHECK(ran == 4);
  CHECK(again == ids);
}

TEST_CASE("sharding: successors, counts and ranges cross empty shards") {
  auto d = sharded_cpu(ordered_caps(), KeyType::U32, 4);
  DeviceTime t;
  // No build: the first batch's keys place the boundaries; these make the
  // even split, shards of 2^30 keys.
  Batch first;
  for (uint64_t s = 0; s < 4; ++s) first.push(OpType::Lookup, s << 30);
  BatchResults none;
  d->execute(first, none, t);
  Batch b;
  b.push(OpType::Insert, 5, 50);
  b.push(OpType::Insert, (3ull << 30) + 7, 70);
  b.push(OpType::Insert, kMax32, 99);
  b.push(OpType::Successor, 10);           // in shard 0, its answer in shard 3
  b.push(OpType::Successor, 0);            // in shard 0
  b.push(OpType::Successor, (3ull << 30) + 7);  // in shard 3: the domain's last key
  b.push(OpType::Successor, kMax32);       // none
  b.push(OpType::Count, 0, kMax32);
  b.push(OpType::Range, 1, kMax32);
  b.push(OpType::Range, 9, 3);             // empty (lo > hi)
  b.push(OpType::Count, 6, (3ull << 30) + 6);  // crosses every shard, holds none
  BatchResults r;
  d->execute(b, r, t);
  CHECK(r.found[3]);
  CHECK(r.key[3] == (3ull << 30) + 7);
  CHECK(r.value[3] == 70);
  CHECK(r.key[4] == 5);
  CHECK(r.key[5] == kMax32);
  CHECK(r.value[5] == 99);
  CHECK_FALSE(r.found[6]);
  CHECK(r.value[7] == 3);
  REQUIRE(r.value[8] == 3);
  CHECK(std::vector<uint64_t>(r.range_keys.begin() + r.key[8], r.range_keys.begin() + r.key[8] + 3) ==
        std::vector<uint64_t>{5, (3ull << 30) + 7, kMax32});
  CHECK(r.value[9] == 0);
  CHECK(r.value[10] == 0);
  CHECK(d->live_keys() == 3);
  bool listed = false;
  for (const auto& [name, value] : d->stats().extra)
    if (name == "shard-keys") listed = value == "1,0,0,2";
  CHECK(listed);
}

TEST_CASE("sharding: a sharded CPU reference answers as an unsharded one") {
  for (const KeyType kt : {KeyType::U32, KeyType::U64}) {
    for (const uint32_t shards : {2u, 3u, 7u}) {
      CAPTURE(shards);
      std::mt19937_64 rng(shards * 1000 + static_cast<int>(kt));
      // A narrow key span at one end of the domain: many shards stay empty
      // and the ranges cross several.
      const uint64_t top = kt == KeyType::U64 ? UINT64_MAX : kMax32;
      auto key = [&] { return rng() % 2 ? rng() % 5000 : top - rng() % 5000; };
      auto one = make_cpu_dictionary(ordered_caps(), kt, kt, "test");
      auto many = sharded_cpu(ordered_caps(), kt, shards);
      DeviceTime t;
      KeyValues init;
      for (int i = 0; i < 3000; ++i) {
        init.keys.push_back(key());
        init.values.push_back(rng());
      }
      one->build(init, t);
      many->build(init, t);
      for (int batch = 0; batch < 40; ++batch) {
        Batch b;
        b.mode = batch % 5 == 4 ? ExecMode::Concurrent : ExecMode::Phased;
        if (batch == 20) {
          one->snapshot("s", t);
          many->snapshot("s", t);
        }
        if (batch > 20 && batch % 3 == 0) b.snapshot = "s";
        for (int i = 0; i < 2000; ++i) {
          const int what = static_cast<int>(rng() % 6);
          const uint64_t k = key();
          if (!b.snapshot.empty() || what >= 2) {
            switch (what % 4) {
              case 0: b.push(OpType::Lookup, k); break;
              case 1: b.push(OpType::Successor, k); break;
              case 2: b.push(OpType::Count, k, rng() % 4 ? k + rng() % 3000 : key()); break;
              default: b.push(OpType::Range, k, rng() % 4 ? k + rng() % 3000 : key()); break;
            }
          } else {
            b.push(what ? OpType::Delete : OpType::Insert, k, what ? 0 : rng());
          }
        }
        BatchResults ra, rb;
        one->execute(b, ra, t);
        many->execute(b, rb, t);
        check_same(ra, rb);
        CHECK(one->live_keys() == many->live_keys());
      }
      many->drop_snapshot("s");
      CHECK_THROWS_AS(many->drop_snapshot("s"), InputError);
    }
  }
}

TEST_CASE("sharding: hash-partitioned maps and multimaps answer as unsharded ones") {
  for (const Semantics sem : {Semantics::Map, Semantics::Multimap}) {
    std::mt19937_64 rng(7);
    auto one = make_cpu_dictionary(hash_caps(sem), KeyType::U32, KeyType::U32, "test");
    auto many = sharded_cpu(hash_caps(sem), KeyType::U32, 5);
    DeviceTime t;
    for (int batch = 0; batch < 30; ++batch) {
      Batch b;
      for (int i = 0; i < 3000; ++i) {
        const uint64_t k = rng() % 4000;
        switch (rng() % 5) {
          case 0: b.push(OpType::Insert, k, rng() % 1000); break;
          case 1: b.push(OpType::Delete, k); break;
          case 2: b.push(OpType::Lookup, k); break;
          case 3: b.push(OpType::Count, k, k); break;
          default: b.push(OpType::Range, k, k); break;
        }
      }
      BatchResults ra, rb;
      one->execute(b, ra, t);
      many->execute(b, rb, t);
      check_same(ra, rb);
    }
    CHECK(one->live_keys() == many->live_keys());
  }
}

TEST_CASE("sharding: what cannot be sharded, and failures naming the shard") {
  Capabilities graph = ordered_caps();
  graph.ordered = false;
  graph.vertex_delete = graph.triangles = graph.vertex_count_range = true;
  CHECK_THROWS_WITH_AS(sharded_cpu(graph, KeyType::U64, 2), doctest::Contains("cannot be sharded"), InputError);
  CHECK(sharding_refusal("sorted-array", ordered_caps()).empty());
  CHECK_THROWS_AS(sharded_cpu(ordered_caps(), KeyType::U32, shard_partition::max_shards + 1), InputError);

  ShardSetup setup;
  setup.structure = "test";
  setup.devices = {"0", "1"};
  setup.make = [](uint32_t s) -> std::unique_ptr<Dictionary> {
    if (s == 1) throw DeviceOutOfMemory("out of device memory");
    return make_cpu_dictionary(ordered_caps(), KeyType::U32, KeyType::U32, "test");
  };
  CHECK_THROWS_WITH_AS(make_sharded_dictionary(std::move(setup)), "shard 1 on device 1: out of device memory",
                       DeviceOutOfMemory);
}

namespace {

// A shard that only reports a fixed device time for every build.
class TimedShard final : public Dictionary {
 public:
  explicit TimedShard(double ms) : ms_(ms) { caps_.ordered = true; }
  const Capabilities& caps() const override { return caps_; }
  Params parameters() const override { return {}; }
  uint64_t device_bytes_needed(const WorkloadBounds&) const override { return 0; }
  void build(const KeyValues&, DeviceTime& t) override { t.add(Phase::Build, ms_); }
  void execute(const Batch& b, BatchResults& r, DeviceTime&) override { r.reset(b.size()); }
  void snapshot(const std::string&, DeviceTime&) override {}
  void drop_snapshot(const std::string&) override {}
  Stats stats() const override { return {}; }

 private:
  double ms_;
  Capabilities caps_;
};

}  // namespace

TEST_CASE("sharding: a phase's time is the busiest device's, its shards' times added") {
  auto timed = [](std::vector<std::string> devices, std::vector<double> ms) {
    ShardSetup setup;
    setup.structure = "test";
    setup.devices = std::move(devices);
    setup.make = [ms](uint32_t s) { return std::make_unique<TimedShard>(ms[s]); };
    auto d = make_sharded_dictionary(std::move(setup));
    DeviceTime t;
    d->build(KeyValues{}, t);
    return t[Phase::Build];
  };
  CHECK(timed({"0", "1", "2"}, {1, 4, 2}) == 4);  // one shard a device: the slowest
  CHECK(timed({"0", "0", "1"}, {1, 2, 4}) == 4);  // device 0: 1 + 2
  CHECK(timed({"0", "0", "1"}, {3, 2, 4}) == 5);  // device 0: 3 + 2
  CHECK(timed({"0", "0"}, {3, 2}) == 5);          // two shards on one GPU: never faster than one
}

TEST_CASE("sharding: a large batch split and joined on several threads answers as on one") {
  std::mt19937_64 rng(99);
  KeyValues init;
  for (int i = 0; i < 100000; ++i) {
    init.keys.push_back(rng() % 1000000);
    init.values.push_back(rng());
  }
  Batch b;
  for (int i = 0; i < 300000; ++i) {
    const uint64_t k = rng() % 1000000;
    switch (rng() % 6) {
      case 0: b.push(OpType::Insert, k, rng()); break;
      case 1: b.push(OpType::Delete, k); break;
      case 2: b.push(OpType::Lookup, k); break;
      case 3: b.push(OpType::Successor, k); break;
      case 4: b.push(OpType::Count, k, k + rng() % 20000); break;  // about 1 in 16 crosses a boundary
      default: b.push(OpType::Range, k, k + rng() % 2000); break;
    }
  }
  auto answers = [&](unsigned threads, uint32_t shards) {
    set_host_threads(threads);
    auto d = shards ? sharded_cpu(ordered_caps(), KeyType::U32, shards)
                    : make_cpu_dictionary(ordered_caps(), KeyType::U32, KeyType::U32, "test");
    DeviceTime t;
    d->build(init, t);
    BatchResults r;
    d->execute(b, r, t);
    set_host_threads(0);
    return r;
  };
  const BatchResults one = answers(1, 0);
  check_same(one, answers(1, 6));
  check_same(one, answers(4, 6));
  check_same(one, answers(3, 2));
}

TEST_CASE("sharding: with no initial keys, the first batch's keys place the boundaries") {
  auto d = sharded_cpu(ordered_caps(), KeyType::U32, 4);
  DeviceTime t;
  d->build(KeyValues{}, t);  // an empty build leaves the choice to the first batch
  std::mt19937_64 rng(5);
  for (int batch = 0; batch < 4; ++batch) {
    Batch b;
    for (int i = 0; i < 5000; ++i) b.push(OpType::Insert, rng() % 10000, 1);  // a narrow span of the domain
    BatchResults r;
    d->execute(b, r, t);
  }
  std::string keys;
  for (const auto& [name, value] : d->stats().extra)
    if (name == "shard-keys") keys = value;
  INFO(keys);
  uint64_t total = 0, least = UINT64_MAX;
  for (size_t at = 0; at <= keys.size();) {
    const size_t comma = std::min(keys.find(',', at), keys.size());
    const uint64_t k = std::stoull(keys.substr(at, comma - at));
    total += k;
    least = std::min(least, k);
    at = comma + 1;
  }
  CHECK(total == d->live_keys());
  CHECK(least * 4 >= total * 8 / 10);  // every shard within 20 % of an even share
}
