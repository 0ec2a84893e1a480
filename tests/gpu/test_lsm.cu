// The GPU LSM against a std::map model that applies the paper's batch rule
// (III-A): a key deleted anywhere in a batch is deleted, otherwise its last
// insert (batch order) wins - the structure's deterministic choice. Every
// query result of every batch is compared (found, key, value, counts, range
// pairs and offsets), and the level layout and stale counts against r.
// Every case runs for each (key, value) width pair of all_kv_widths(), u32/u32
// first and as before: the cases are written over u32 keys and values, and
// for a 64-bit width they are mapped by an order-preserving injection
// (widen) onto keys and values that use the high half (0 and 0xFFFFFFFF go to
// 0 and 2^64 - 1), so every level, carry, cleanup and query runs the same
// way on 64-bit words. The largest cases run their 64-bit pairs smaller.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "workloads/registry/structures.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "core/common/key_traits.hpp"
#include "core/common/stream_copy.hpp"
#include "workloads/adapter/structures.hpp"
#include "core/lsm/detail/merge.cuh"
#include "model_compare.hpp"

using namespace gpudict;

namespace {

constexpr uint64_t kMax = 0xFFFFFFFFull;
using gpudict::testing::all_kv_widths;
using gpudict::testing::compare;
using gpudict::testing::kv_label;
using gpudict::testing::KvWidths;
using gpudict::testing::Model;
using gpudict::testing::probe_batch;
using gpudict::testing::spaced_keys;

// The widths the running case is at (set by WidthScope for one pass of a
// case's loop; u32/u32 otherwise).
KvWidths g_w;
bool g_native = false;  // the case draws keys and values of the widths itself: no widen
struct WidthScope {
  explicit WidthScope(KvWidths w) { g_w = w; }
  ~WidthScope() {
    g_w = KvWidths{};
    g_native = false;
  }
  WidthScope(const WidthScope&) = delete;
  WidthScope& operator=(const WidthScope&) = delete;
};
bool narrow() { return g_w.key == KeyType::U32 && g_w.value == KeyType::U32; }

// A u32 key or value of a case at width t: itself for u32; for u64 the
// order-preserving injection x -> x 2^32 + (x mod 8), 0xFFFFFFFF -> 2^64 - 1
// (the high half carries the order, the low halves repeat: a structure that
// dropped the high half would merge keys).
uint64_t widen(uint64_t x, KeyType t) {
  if (t == KeyType::U32) return x;
  if (x == kMax) return ~0ull;
  return (x << 32) | (x & 7);
}
uint64_t wk(uint64_t k) { return widen(k, g_w.key); }
uint64_t wv(uint64_t v) { return widen(v, g_w.value); }
// The u32 key of a widened one (wk's inverse), for batches built from a model.
uint64_t nk(uint64_t k) {
  if (narrow() || g_native || g_w.key == KeyType::U32) return k;
  return k == ~0ull ? kMax : k >> 32;
}

// The widths of the largest cases: u32/u32 at full size, u64/u64 (both
// words 64-bit) smaller; u32/u64 runs the same code on those paths as the
// other two (u32 keys, 64-bit values) and is covered by the other cases.
std::vector<KvWidths> big_widths() { return {all_kv_widths().front(), all_kv_widths().back()}; }

// A case's batch at the current widths: keys and bounds by wk, values by wv.
Batch widen_batch(const Batch& b) {
  if (narrow() || g_native) return b;
  Batch w = b;
  for (size_t i = 0; i < w.size(); ++i) {
    w.keys[i] = wk(w.keys[i]);
    const OpType t = w.types[i];
    if (t == OpType::Insert) w.args[i] = wv(w.args[i]);
    if (t == OpType::Count || t == OpType::Range) w.args[i] = wk(w.args[i]);
  }
  return w;
}
KeyValues widen_pairs(const KeyValues& kv) {
  if (narrow() || g_native) return kv;
  KeyValues w = kv;
  for (auto& k : w.keys) k = wk(k);
  for (auto& v : w.values) v = wv(v);
  return w;
}
// build() and the model of the initial pairs, at the current widths.
void build_w(Dictionary& d, const KeyValues& kv, DeviceTime& t) { d.build(widen_pairs(kv), t); }
Model model_w(const KeyValues& kv) { return gpudict::testing::model_of(widen_pairs(kv)); }

// testing::probe_batch for keys of any width: every query type on each probe
// and its neighbours, clamped to [0, top].
Batch probe_batch_to(const std::vector<uint64_t>& probes, uint64_t top) {
  return gpudict::testing::probe_batch(probes, top);
}

// An LSM with batch size b and no automatic cleanup unless asked for (the
// tests below count levels and stale records exactly), at the current widths.
std::unique_ptr<Dictionary> make(uint64_t b, uint64_t every = 0, const std::string& fraction = "0",
                                 const std::string& stale_count = "levels") {
  StructureConfig c;
  c.key_type = g_w.key;
  c.value_type = g_w.value;
  c.options["batch-size"] = std::to_string(b);
  c.options["cleanup-every"] = std::to_string(every);
  c.options["cleanup-stale-fraction"] = fraction;
  c.options["stale-count"] = stale_count;
  return make_lsm(c);
}

std::string extra(const Dictionary& d, const std::string& name) {
  for (const auto& kv : d.stats().extra)
    if (kv.first == name) return kv.second;
  return "<missing " + name + ">";
}
uint64_t extra_u64(const Dictionary& d, const std::string& name) { return std::stoull(extra(d, name)); }

// "0,3,5": the set bits of r.
std::string levels_of(uint64_t r) {
  std::string s;
  for (int i = 0; i < 64; ++i)
    if ((r >> i) & 1) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s.empty() ? "none" : s;
}

// The levels the update rule gives (core/lsm/detail/update.cu), restated: a chunk
// of at most b keys merges into level 0 when both fit in b, otherwise it
// carries through the occupied levels (a binary increment of r); build and
// cleanup fill the set bits of ceil(u / b), every level full but the
// smallest.
struct LevelSim {
  uint64_t b;
  uint64_t r = 0;
  uint64_t size[64] = {};
  uint64_t chunks = 0;
  explicit LevelSim(uint64_t batch) : b(batch) {}
  void update(uint64_t u) {
    for (uint64_t first = 0; first < u; first += b) chunk(std::min(b, u - first));
  }
  void chunk(uint64_t c) {
    ++chunks;
    if ((r & 1) && size[0] + c <= b) {
      size[0] += c;
      return;
    }
    int k = 0;
    while ((r >> k) & 1) ++k;
    uint64_t total = c;
    for (int j = 0; j < k; ++j) {
      total += size[j];
      size[j] = 0;
    }
    size[k] = total;
    ++r;
  }
  void place(uint64_t u) {
    r = (u + b - 1) / b;
    uint64_t rest = u;
    for (int i = 63; i >= 0; --i) {
      size[i] = 0;
      if (!((r >> i) & 1)) continue;
      const bool smallest = (r & ((1ull << i) - 1)) == 0;
      size[i] = smallest ? rest : (b << i);
      rest -= size[i];
    }
  }
  uint64_t elements() const {
    uint64_t s = 0;
    for (uint64_t x : size) s += x;
    return s;
  }
  std::string levels() const;
};

// The batch rule: a delete anywhere wins, else the last insert.
void apply_updates(Model& m, const Batch& b) {
  struct Effect {
    bool deleted = false;
    bool inserted = false;
    uint64_t value = 0;
  };
  std::map<uint64_t, Effect> eff;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b.types[i] == OpType::Insert) {
      Effect& e = eff[b.keys[i]];
      e.inserted = true;
      e.value = b.args[i];
    } else if (b.types[i] == OpType::Delete) {
      eff[b.keys[i]].deleted = true;
    }
  }
  for (const auto& kv : eff) {
    if (kv.second.deleted)
      m.erase(kv.first);
    else
      m[kv.first] = kv.second.value;
  }
}

std::string LevelSim::levels() const { return levels_of(r); }

// Unique keys the batch updates (the number of records it stores).
uint64_t unique_updates(const Batch& b) {
  std::vector<uint64_t> k;
  for (size_t i = 0; i < b.size(); ++i)
    if (is_update(b.types[i])) k.push_back(b.keys[i]);
  std::sort(k.begin(), k.end());
  return static_cast<uint64_t>(std::unique(k.begin(), k.end()) - k.begin());
}

// Runs `b` on the structure and the model (updates by the batch rule, then
// the queries on the live model or the named snapshot) and checks every result.
void run_checked(Dictionary& d, Model& live, const std::map<std::string, Model>& snaps, const Batch& narrow_b,
                 DeviceTime* time = nullptr) {
  const Batch b = widen_batch(narrow_b);
  apply_updates(live, b);
  const Model& seen = b.snapshot.empty() ? live : snaps.at(b.snapshot);
  BatchResults r;
  DeviceTime t;
  d.execute(b, r, t);
  if (time) *time = t;
  const std::string err = compare(seen, b, r);
  INFO(err);
  REQUIRE(err.empty());
  if (extra(d, "stale_counted") == "exact") {
    CHECK(d.stats().size == live.size());
    CHECK(extra_u64(d, "elements") - extra_u64(d, "stale") == live.size());
  }
}

void run_checked(Dictionary& d, Model& live, const Batch& b, DeviceTime* time = nullptr) {
  run_checked(d, live, {}, b, time);
}

// Exhaustive queries over a small key domain [0, domain) plus the top keys.
Batch everything_batch(uint64_t domain) {
  Batch b;
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; k < domain; ++k) keys.push_back(k);
  for (uint64_t k : {kMax - 2, kMax - 1, kMax}) keys.push_back(k);
  for (uint64_t k : keys) {
    b.push(OpType::Lookup, k);
    b.push(OpType::Successor, k);
  }
  // A grid of (lo, hi) pairs, inverted ones included: steps of 3 and 4 keys for small
  // domains, about 25 x 19 pairs for large ones.
  const size_t si = std::max<size_t>(3, keys.size() / 24), sj = std::max<size_t>(4, keys.size() / 18);
  for (size_t i = 0; i < keys.size(); i += si)
    for (size_t j = 0; j < keys.size(); j += sj) {
      b.push(OpType::Count, keys[i], keys[j]);  // inverted when i > j
      b.push(OpType::Range, keys[i], keys[j]);
    }
  b.push(OpType::Count, 0, kMax);
  b.push(OpType::Range, 0, kMax);
  b.push(OpType::Range, kMax, kMax);
  b.push(OpType::Count, kMax, 0);
  return b;
}

// A batch of n updates over [0, domain) and the top key (duplicates,
// conflicting updates and deletes of absent keys included), values over the
// whole range (0 and 0xFFFFFFFF included).
Batch random_updates(std::mt19937_64& rng, size_t n, uint64_t domain, double delete_share = 0.3) {
  Batch b;
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = rng() % 17 == 0 ? kMax - rng() % 2 : rng() % domain;
    if (u01(rng) < delete_share) {
      b.push(OpType::Delete, k);
    } else {
      const uint64_t r = rng() % 8;
      const uint64_t v = r == 0 ? 0 : r == 1 ? kMax : (rng() & kMax);
      b.push(OpType::Insert, k, v);
    }
  }
  return b;
}

// Exactly n inserts of distinct keys from [0, domain) (n <= domain): one full
// chunk when n = b.
Batch distinct_inserts(std::mt19937_64& rng, size_t n, uint64_t domain) {
  std::vector<uint64_t> keys(domain);
  for (uint64_t k = 0; k < domain; ++k) keys[k] = k;
  std::shuffle(keys.begin(), keys.end(), rng);
  Batch b;
  for (size_t i = 0; i < n; ++i) b.push(OpType::Insert, keys[i], rng() & kMax);
  return b;
}

}  // namespace

TEST_CASE("lsm: capabilities, options, parameters") {
  const Capabilities c = lsm_caps();
  CHECK(c.ordered);
  CHECK(c.deletes);
  CHECK(c.snapshots);
  CHECK_FALSE(c.native_concurrent);
  CHECK(c.phased_duplicates == DuplicateRule::DeleteWinsElseAny);
  CHECK(c.supports(KeyType::U32));
  CHECK(c.supports(KeyType::U64));
  for (OpType t : kAllOpTypes) CHECK(c.supports(t) == !is_graph_op(t));  // every operation but the graph's

  const auto opts = lsm_option_specs();
  REQUIRE(opts.size() == 5);
  CHECK(opts[0].name == "batch-size");
  CHECK(opts[0].default_value == "1048576");
  CHECK(opts[1].name == "cleanup-every");
  CHECK(opts[2].name == "cleanup-stale-fraction");
  CHECK(opts[2].default_value == "0.5");
  CHECK(opts[3].name == "lookup-filter");
  CHECK(opts[3].default_value == "on");
  CHECK(opts[4].name == "stale-count");
  CHECK(opts[4].default_value == "levels");

  auto d = make(1 << 20);
  bool has_batch = false, has_status = false, has_search = false, has_cleanup = false, has_dups = false,
       has_filter = false;
  for (const auto& kv : d->parameters()) {
    has_batch |= kv.first == "batch_size" && kv.second.find("1048576") != std::string::npos;
    has_status |= kv.first == "levels" && kv.second.find("status") != std::string::npos;
    has_search |= kv.first == "search";
    has_cleanup |= kv.first == "cleanup";
    has_dups |= kv.first == "duplicates";
    has_filter |= kv.first == "lookup_filter" && kv.second.rfind("on", 0) == 0;
  }
  CHECK(has_batch);
  CHECK(has_status);
  CHECK(has_search);
  CHECK(has_cleanup);
  CHECK(has_dups);
  CHECK(has_filter);

  // Defaults when the config carries no options at all.
  StructureConfig bare;
  CHECK(make_lsm(bare) != nullptr);

  // Each bad value is refused with an InputError that names the option.
  const auto expect_rejected = [](const char* option, std::initializer_list<const char*> values) {
    for (const char* bad : values) {
      CAPTURE(option);
      CAPTURE(bad);
      StructureConfig cfg;
      cfg.options[option] = bad;
      try {
        make_lsm(cfg);
        FAIL("accepted --" << option << " " << bad);
      } catch (const InputError& e) {
        CHECK(std::string(e.what()).find(std::string("--") + option) != std::string::npos);
      }
    }
  };
  expect_rejected("batch-size", {"0", "3", "1000", "2147483648", "abc", "-4", ""});
  for (const char* good : {"1", "2", "4", "1073741824"}) {
    StructureConfig cfg;
    cfg.options["batch-size"] = good;
    CHECK(make_lsm(cfg) != nullptr);
  }
  expect_rejected("cleanup-stale-fraction", {"-0.5", "x", "nan"});
  expect_rejected("lookup-filter", {"yes", "1", ""});
  expect_rejected("stale-count", {"exactly", "1", ""});
  StructureConfig every;
  every.options["cleanup-every"] = "-1";
  CHECK_THROWS_AS(make_lsm(every), InputError);

  // Every width pair, the levels parameter naming it; u64 keys with u32
  // values run on u64/u64.
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    auto dw = make(1 << 10);
    bool named = false;
    for (const auto& kv : dw->parameters()) named |= kv.first == "levels" && kv.second.find(kv_label(w)) != std::string::npos;
    CHECK(named);
  }
  StructureConfig mixed;
  mixed.key_type = KeyType::U64;
  mixed.value_type = KeyType::U32;
  auto dm = make_lsm(mixed);
  bool named = false;
  for (const auto& kv : dm->parameters()) named |= kv.first == "levels" && kv.second.find("u64/u64") != std::string::npos;
  CHECK(named);
}

TEST_CASE("lsm: empty structure, deletes of absent keys, first inserts") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    for (uint64_t b : {1ull, 4ull, 1ull << 20}) {
      CAPTURE(b);
      auto d = make(b);
      DeviceTime t;
      d->build(KeyValues{}, t);
      CHECK(d->stats().size == 0);
      CHECK(extra(*d, "levels") == "none");
      Model live;
      run_checked(*d, live, probe_batch({0, 1, 12345, kMax}));

      Batch dels;
      for (uint64_t k : std::initializer_list<uint64_t>{0, 5, kMax}) dels.push(OpType::Delete, k);
      dels.push(OpType::Lookup, 5);
      dels.push(OpType::Successor, 0);
      dels.push(OpType::Count, 0, kMax);
      dels.push(OpType::Range, 0, kMax);
      run_checked(*d, live, dels);
      CHECK(live.empty());

      Batch ins;
      ins.push(OpType::Insert, 7, 70);
      ins.push(OpType::Insert, 3, 30);
      ins.push(OpType::Range, 0, kMax);
      ins.push(OpType::Successor, 3);
      ins.push(OpType::Successor, 0);  // 3 is live, 0 and 5 are tombstones
      ins.push(OpType::Lookup, 5);
      run_checked(*d, live, ins);
      run_checked(*d, live, probe_batch({0, 3, 5, 7, kMax}));

      DeviceTime ct;
      d->cleanup(ct);
      CHECK(d->stats().size == 2);
      run_checked(*d, live, probe_batch({0, 3, 5, 7, kMax}));
    }
    // Without build() at all, and a cleanup of nothing.
    auto fresh = make(8);
    Model none;
    run_checked(*fresh, none, probe_batch({0, 9, kMax}));
    DeviceTime t;
    fresh->cleanup(t);
    CHECK(extra(*fresh, "levels") == "none");
    run_checked(*fresh, none, probe_batch({0, 9, kMax}));
  }
}

TEST_CASE("lsm: several updates of a key in one batch: a delete wins, else the last insert") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    auto d = make(8);
    DeviceTime t;
    KeyValues kv;
    kv.keys = {10, 20, 60, 0, kMax};
    kv.values = {1, 2, 6, kMax, 0};
    build_w(*d, kv, t);
    Model live = model_w(kv);

    Batch b;
    b.push(OpType::Insert, 10, 100);  // present: insert, delete, insert -> deleted (a delete wins)
    b.push(OpType::Delete, 10);
    b.push(OpType::Insert, 10, 101);
    b.push(OpType::Delete, 20);  // present: delete, insert -> deleted
    b.push(OpType::Insert, 20, 200);
    b.push(OpType::Insert, 30, 1);  // absent: insert x3 -> the last one
    b.push(OpType::Insert, 30, 2);
    b.push(OpType::Insert, 30, 3);
    b.push(OpType::Delete, 40);  // absent: delete, insert -> still absent
    b.push(OpType::Insert, 40, 7);
    b.push(OpType::Delete, 50);  // absent, deleted twice
    b.push(OpType::Delete, 50);
    b.push(OpType::Insert, 60, 66);  // present: two inserts -> the last
    b.push(OpType::Insert, 60, 67);
    b.push(OpType::Insert, 0, 0);  // extremes as keys and values
    b.push(OpType::Insert, kMax, kMax);
    b.push(OpType::Insert, kMax, 5);
    for (uint64_t k : std::initializer_list<uint64_t>{0, 10, 20, 30, 40, 50, 60, kMax}) b.push(OpType::Lookup, k);
    b.push(OpType::Range, 0, kMax);
    b.push(OpType::Successor, 0);
    b.push(OpType::Successor, 5);  // 10 and 20 are deleted: 30
    run_checked(*d, live, b);
    REQUIRE(live.count(wk(30)));
    CHECK(live[wk(30)] == wv(3));
    CHECK(live[wk(kMax)] == wv(5));
    CHECK(live.count(wk(10)) == 0);
    CHECK(live.count(wk(40)) == 0);

    // The same key in a later batch replaces it; a delete of a deleted key is a no-op.
    Batch c;
    c.push(OpType::Insert, 10, 1000);
    c.push(OpType::Delete, 20);
    c.push(OpType::Delete, kMax);
    c.push(OpType::Insert, kMax, kMax);  // deleted in the batch: gone
    c.push(OpType::Lookup, 10);
    c.push(OpType::Lookup, kMax);
    c.push(OpType::Successor, 60);
    c.push(OpType::Count, 0, kMax);
    run_checked(*d, live, c);

    // Random batches over a small key space: runs of equal keys everywhere,
    // batches larger than b (several chunks), phased and concurrent.
    std::mt19937_64 rng(11);
    for (int round = 0; round < 12; ++round) {
      Batch r = random_updates(rng, 3 + rng() % 40, 64, 0.35);
      if (round % 3 == 2) r.mode = ExecMode::Concurrent;
      for (int i = 0; i < 30; ++i) r.push(OpType::Lookup, rng() % 70);
      r.push(OpType::Range, 0, kMax);
      r.push(OpType::Count, 0, kMax);
      run_checked(*d, live, r);
    }
    run_checked(*d, live, everything_batch(70));
  }
}

TEST_CASE("lsm: every arrangement of full levels, b = 4 and 8, r = 1..64") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    for (uint64_t b : {4ull, 8ull}) {
      CAPTURE(b);
      auto d = make(b);
      Model live;
      std::mt19937_64 rng(100 + b);
      for (uint64_t r = 1; r <= 64; ++r) {
        CAPTURE(r);
        // Exactly b unique keys: a full chunk, never absorbed by level 0, so
        // one binary increment per update batch.
        Batch u = distinct_inserts(rng, b, 48);
        if (r % 3 == 0) u.push(OpType::Delete, u.keys[0]);  // a tombstone instead of one insert
        DeviceTime t;
        run_checked(*d, live, {}, u, &t);
        CHECK(t[Phase::Update] > 0.0);
        CHECK(extra_u64(*d, "batches") == r);
        CHECK(extra(*d, "levels") == levels_of(r));
        CHECK(extra_u64(*d, "elements") == r * b);
        run_checked(*d, live, everything_batch(52));
      }
      CHECK(extra_u64(*d, "update_chunks") == 64);
    }
  }
}

TEST_CASE("lsm: cleanup after every r, then more batches") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 4;
    for (uint64_t cut = 1; cut <= 40; ++cut) {
      CAPTURE(cut);
      auto d = make(b);
      Model live;
      LevelSim sim(b);
      std::mt19937_64 rng(77);  // the same batches for every cut
      for (uint64_t r = 1; r <= cut; ++r) {
        const Batch u = random_updates(rng, 1 + rng() % b, 40);
        sim.update(unique_updates(u));
        run_checked(*d, live, u);
      }
      REQUIRE(extra(*d, "levels") == sim.levels());
      REQUIRE(extra_u64(*d, "elements") == sim.elements());
      DeviceTime t;
      d->cleanup(t);
      CHECK(t[Phase::Cleanup] > 0.0);
      // Only live records remain; the levels are the bits of ceil(live / b).
      const uint64_t rr = (live.size() + b - 1) / b;
      CHECK(extra_u64(*d, "batches") == rr);
      CHECK(extra(*d, "levels") == levels_of(rr));
      CHECK(extra_u64(*d, "elements") == live.size());
      CHECK(extra_u64(*d, "stale") == 0);
      CHECK(extra(*d, "stale_counted") == "exact");
      CHECK(d->stats().size == live.size());
      run_checked(*d, live, everything_batch(44));
      // The smallest level holds what the full ones leave, so small batches
      // after the cleanup merge into a partial level 0.
      sim.place(live.size());
      for (int more = 0; more < 8; ++more) {
        const Batch u = random_updates(rng, 1 + rng() % (2 * b), 40);
        sim.update(unique_updates(u));
        run_checked(*d, live, u);
        CHECK(extra(*d, "levels") == sim.levels());
        CHECK(extra_u64(*d, "elements") == sim.elements());
        run_checked(*d, live, everything_batch(44));
      }
    }
  }
}

// The cleanup cuts the merged order of all levels into tiles of at most 4096
// records at splitter records (core/lsm/detail/cleanup_tiles.cuh); these cases put
// tile boundaries where they are hardest to get right.
TEST_CASE("lsm: cleanup tiles: runs of one key longer than a tile, boundaries inside runs across levels") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    // b = 2^13: each batch stores one record of each hot key it updates, so
    // thousands of batches make runs of one key longer than a tile (4096
    // records), in level 0 and, after carries, across levels, cut by
    // splitters of each level.
    const uint64_t b = 1 << 13;
    const std::vector<uint64_t> hot = {0, 1, 7, 1000, kMax - 1, kMax};
    std::mt19937_64 rng(99);
    auto d = make(b);
    Model live;
    for (int round = 1; round <= 24; ++round) {
      CAPTURE(round);
      // Hot updates alone, checked against the model (no queries: cheap).
      for (int k = 0; k < 400; ++k) {
        Batch h;
        for (uint64_t key : hot) {
          if (rng() % 4 == 0)
            h.push(OpType::Delete, key);
          else
            h.push(OpType::Insert, key, rng() & kMax);
        }
        run_checked(*d, live, h);
      }
      Batch u;
      const int n = 1 + static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) {
        const uint64_t k = hot[rng() % hot.size()];
        if (rng() % 4 == 0)
          u.push(OpType::Delete, k);
        else
          u.push(OpType::Insert, k, rng() & kMax);
      }
      // Now and then distinct keys between the runs, so that tiles mix both.
      if (round % 4 == 0)
        for (int i = 0; i < 3000; ++i) u.push(OpType::Insert, 2000 + rng() % 100000, rng() & kMax);
      run_checked(*d, live, u);
      if (round % 12 == 0) {
        const uint64_t stored = extra_u64(*d, "elements");
        DeviceTime t;
        d->cleanup(t);
        const uint64_t rr = (live.size() + b - 1) / b;
        CHECK(stored > 4800 * hot.size());  // 4,800 records of each hot key
        CHECK(extra_u64(*d, "last_cleanup_stale") == stored - live.size());
        CHECK(extra_u64(*d, "batches") == rr);
        CHECK(extra(*d, "levels") == levels_of(rr));
        CHECK(extra_u64(*d, "stale") == 0);
        run_checked(*d, live, probe_batch(hot));
        run_checked(*d, live, everything_batch(20));
      }
    }
  }
}

TEST_CASE("lsm: cleanup tiles: every record stale, 1-element levels, many levels and tiles") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    std::mt19937_64 rng(123);
    // Every record stale (tombstones, deleted records): nothing is kept, no
    // level remains, and the structure grows again from empty.
    {
      const uint64_t b = 4;
      auto d = make(b);
      Model live;
      Batch ins, del;
      for (uint64_t k = 0; k < 41; ++k) ins.push(OpType::Insert, k == 40 ? kMax : k, k);
      for (uint64_t k = 0; k < 41; ++k) del.push(OpType::Delete, k == 40 ? kMax : k);
      LevelSim sim(b);
      run_checked(*d, live, ins);
      run_checked(*d, live, del);
      sim.update(41);
      sim.update(41);
      REQUIRE(extra(*d, "levels") == sim.levels());
      REQUIRE(extra_u64(*d, "elements") == 82);
      DeviceTime t;
      d->cleanup(t);
      CHECK(extra_u64(*d, "last_cleanup_stale") == 82);
      CHECK(extra_u64(*d, "batches") == 0);
      CHECK(extra(*d, "levels") == "none");
      CHECK(d->stats().size == 0);
      run_checked(*d, live, everything_batch(45));
      for (int i = 0; i < 6; ++i) run_checked(*d, live, random_updates(rng, 1 + rng() % 8, 45));
      d->cleanup(t);
      run_checked(*d, live, everything_batch(45));
    }
    // b = 1: levels of 1, 2, 4, ... records, up to 7 of them.
    {
      auto d = make(1);
      Model live;
      for (uint64_t r = 1; r <= 90; ++r) {
        CAPTURE(r);
        run_checked(*d, live, random_updates(rng, 1, 12));  // one update: one LSM batch
        if (r % 9 == 0) {
          DeviceTime t;
          d->cleanup(t);
          CHECK(extra(*d, "levels") == levels_of(live.size()));
          CHECK(extra_u64(*d, "stale") == 0);
          run_checked(*d, live, everything_batch(12));
        }
      }
    }
    // b = 256 over about 2^17 keys: up to 10 levels, dozens of tiles, keys
    // repeated across levels with tombstones and replaced records.
    {
      const uint64_t b = 256;
      auto d = make(b);
      DeviceTime t;
      KeyValues kv;
      for (int i = 0; i < 100000; ++i) {
        kv.keys.push_back(rng() % (1u << 17));
        kv.values.push_back(rng() & kMax);
      }
      build_w(*d, kv, t);
      Model live = model_w(kv);
      for (int round = 1; round <= 40; ++round) {
        CAPTURE(round);
        run_checked(*d, live, random_updates(rng, 1 + rng() % 2000, 1u << 17));
        if (round % 13 == 0 || round == 40) {
          CAPTURE(extra(*d, "levels"));
          d->cleanup(t);
          CHECK(d->stats().size == live.size());
          Batch q;
          q.push(OpType::Range, 0, kMax);
          q.push(OpType::Count, 0, kMax);
          for (int i = 0; i < 3000; ++i) {
            const uint64_t k = rng() % ((1u << 17) + 10);
            q.push(OpType::Lookup, k);
            q.push(OpType::Successor, k);
          }
          run_checked(*d, live, q);
        }
      }
    }
  }
}

// A large cleanup: about 6.2 M stored records in 5 levels (some 2,300
// tiles), and the fence levels of 4 new levels in one job.
TEST_CASE("lsm: cleanup tiles: a cleanup of thousands of tiles") {
  for (const KvWidths w : big_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    // u64/u64: a quarter of the records in tiles of half the slots (2048).
    const int shift = narrow() ? 0 : 2;
    std::mt19937_64 rng(2026);
    const uint64_t b = 1 << (16 - shift);
    auto d = make(b);
    DeviceTime t;
    KeyValues kv;
    for (int i = 0; i < (1 << (22 - shift)); ++i) {
      kv.keys.push_back(rng() & kMax);
      kv.values.push_back(rng() & kMax);
    }
    kv.keys.push_back(0);
    kv.values.push_back(5);
    kv.keys.push_back(kMax);
    kv.values.push_back(6);
    build_w(*d, kv, t);
    Model live = model_w(kv);
    // Deletes of every third present key (0 among them) and of 0xFFFFFFFF,
    // new keys, and deletes of absent ones: tombstones and replaced records in
    // the smaller levels, most of the largest one kept.
    Batch u;
    uint64_t i = 0;
    for (const auto& e : live)
      if (i++ % 3 == 0) u.push(OpType::Delete, nk(e.first));
    u.push(OpType::Delete, kMax);
    for (int j = 0; j < (1 << (19 - shift)); ++j) {
      const uint64_t k = rng() & kMax;
      u.push(OpType::Insert, k, rng() & kMax);
    }
    for (int j = 0; j < 1000; ++j) u.push(OpType::Delete, rng() & kMax);
    run_checked(*d, live, u);
    const uint64_t stored = extra_u64(*d, "elements");
    // u32/u32: well over a thousand tiles of at most 4096 records; u64/u64:
    // several hundred of at most 2048.
    REQUIRE(stored > (4500000u >> shift));
    d->cleanup(t);
    CHECK(extra_u64(*d, "last_cleanup_stale") == stored - live.size());
    CHECK(extra_u64(*d, "stale") == 0);
    CHECK(extra_u64(*d, "elements") == live.size());
    Batch q;
    q.push(OpType::Range, 0, kMax);
    q.push(OpType::Count, 0, kMax);
    q.push(OpType::Count, 1, kMax - 1);
    for (int j = 0; j < 20000; ++j) {
      const uint64_t k = rng() & kMax;
      q.push(OpType::Lookup, k);
      q.push(OpType::Successor, k);
    }
    for (uint64_t k : {uint64_t{0}, uint64_t{1}, kMax - 1, kMax}) {
      q.push(OpType::Lookup, k);
      q.push(OpType::Successor, k);
    }
    run_checked(*d, live, q);
    // A second cleanup: nothing stale.
    d->cleanup(t);
    CHECK(extra_u64(*d, "last_cleanup_stale") == 0);
    run_checked(*d, live, q);
  }
}

TEST_CASE("lsm: partial batches store only their keys, batch_fill and padding report the room left") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 64;
    auto d = make(b);
    Model live;
    LevelSim sim(b);
    std::mt19937_64 rng(5);
    uint64_t next_key = 1000;
    for (uint64_t n : std::initializer_list<uint64_t>{1, b - 1, b, b + 1, 3 * b + 5, 2, 5 * b, 1, 1, 7}) {
      CAPTURE(n);
      Batch u;
      for (uint64_t i = 0; i < n; ++i) u.push(OpType::Insert, next_key++, rng() & kMax);
      u.push(OpType::Range, 0, kMax);
      u.push(OpType::Lookup, next_key - 1);
      u.push(OpType::Successor, next_key - 2);
      run_checked(*d, live, u);
      sim.update(n);
      CHECK(extra_u64(*d, "batches") == sim.r);
      CHECK(extra(*d, "levels") == sim.levels());
      CHECK(extra_u64(*d, "elements") == sim.elements());
      CHECK(extra_u64(*d, "elements") == live.size());  // new keys only: nothing stale, nothing padded
      CHECK(extra_u64(*d, "padding") == sim.r * b - sim.elements());
      CHECK(extra_u64(*d, "update_chunks") == sim.chunks);
      CHECK(extra_u64(*d, "stale") == 0);
    }
    // 1 + 63 + 64 + 65 + 197 + 2 + 320 + 1 + 1 + 7 = 721 keys in 18 chunks of room 64.
    CHECK(sim.chunks == 18);
    CHECK(extra(*d, "batch_fill") == "62.59");
    run_checked(*d, live, probe_batch({0, 1000, 1001, 1063, 1064, 1711, 1712, 1720, kMax}));
    DeviceTime t;
    d->cleanup(t);
    CHECK(extra_u64(*d, "last_cleanup_stale") == 0);
    CHECK(extra_u64(*d, "elements") == live.size());
    run_checked(*d, live, everything_batch(2000));
  }
}

// The issue this guards against: a batch of a few keys used to be padded to
// b with copies of its last key, so every count or range over that key
// gathered all of them. Now a partial batch stores its keys alone: after 300
// batches of one hot key, a count over it has at most 300 candidates and the
// structure stores one element per batch.
TEST_CASE("lsm: hot keys in small batches: one element per update, exact counts and ranges") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 1 << 16;
    auto d = make(b);
    Model live;
    std::mt19937_64 rng(6);
    const uint64_t hot = 1ull << 31;
    for (int i = 1; i <= 300; ++i) {
      Batch u;
      if (i % 5 == 0)
        u.push(OpType::Delete, hot);
      else
        u.push(OpType::Insert, hot, static_cast<uint64_t>(i));
      u.push(OpType::Count, hot, hot);
      u.push(OpType::Range, hot - 1, hot + 1);
      u.push(OpType::Lookup, hot);
      u.push(OpType::Successor, hot - 1);
      run_checked(*d, live, u);
      CHECK(extra_u64(*d, "elements") == static_cast<uint64_t>(i));
    }
    CHECK(extra(*d, "levels") == "0");  // every batch merged into level 0
    CHECK(extra_u64(*d, "stale") == 300);  // every record: the last batch deleted the key
    CHECK(extra(*d, "stale_counted") == "exact");  // one level: its own count is the whole story
  }
}

TEST_CASE("lsm: the key 0xFFFFFFFF in partial and carried levels") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 8;
    const std::vector<uint64_t> probes = {0, 1, kMax - 3, kMax - 2, kMax - 1, kMax};
    // Built with the top key present: 14 keys in one level of room 16.
    {
      auto d = make(b);
      DeviceTime t;
      KeyValues kv = spaced_keys(13, 1, 0);
      kv.keys.push_back(kMax);
      kv.values.push_back(12345);
      build_w(*d, kv, t);
      Model live = model_w(kv);
      CHECK(extra_u64(*d, "elements") == 14);
      CHECK(extra_u64(*d, "padding") == 2);
      CHECK(extra_u64(*d, "stale") == 0);
      CHECK(extra(*d, "levels") == "1");
      run_checked(*d, live, probe_batch(probes));
      Batch q;
      q.push(OpType::Lookup, kMax);
      q.push(OpType::Count, kMax, kMax);
      q.push(OpType::Range, kMax - 1, kMax);
      q.push(OpType::Successor, kMax - 1);
      q.push(OpType::Successor, 12);
      run_checked(*d, live, q);

      // Delete it (a tombstone in a newer level), insert it again, clean up.
      Batch del;
      del.push(OpType::Delete, kMax);
      del.push(OpType::Lookup, kMax);
      del.push(OpType::Successor, 12);
      run_checked(*d, live, del);
      Batch ins;
      ins.push(OpType::Insert, kMax, 0);
      ins.push(OpType::Lookup, kMax);
      ins.push(OpType::Range, 0, kMax);
      run_checked(*d, live, ins);
      d->cleanup(t);
      run_checked(*d, live, probe_batch(probes));
      // Carries that merge the levels holding the key with newer ones.
      std::mt19937_64 rng(9);
      for (int i = 0; i < 20; ++i) {
        Batch u;
        for (int j = 0; j < 6; ++j) u.push(OpType::Insert, rng() % 30, rng() & kMax);
        if (i % 3 == 0) u.push(OpType::Insert, kMax, static_cast<uint64_t>(i));
        if (i % 3 == 1) u.push(OpType::Delete, kMax);
        run_checked(*d, live, u);
        run_checked(*d, live, probe_batch(probes));
        if (i % 7 == 6) {
          d->cleanup(t);
          run_checked(*d, live, probe_batch(probes));
        }
      }
    }
    // Built without the top key: it must not appear, and a later insert of it
    // (a smaller level) must be found.
    {
      auto d = make(b);
      DeviceTime t;
      KeyValues kv = spaced_keys(3, 5, 1);
      build_w(*d, kv, t);
      Model live = model_w(kv);
      CHECK(extra_u64(*d, "stale") == 0);
      CHECK(extra_u64(*d, "elements") == 3);
      run_checked(*d, live, probe_batch(probes));
      Batch q;
      q.push(OpType::Lookup, kMax);
      q.push(OpType::Count, 0, kMax);
      q.push(OpType::Count, kMax, kMax);
      q.push(OpType::Range, 0, kMax);
      q.push(OpType::Successor, 11);
      q.push(OpType::Successor, kMax - 1);
      run_checked(*d, live, q);
      Batch ins;
      ins.push(OpType::Insert, kMax, kMax);
      ins.push(OpType::Lookup, kMax);
      ins.push(OpType::Successor, 11);
      ins.push(OpType::Count, 0, kMax);
      run_checked(*d, live, ins);
      // 8 more batches: level 0 takes them, then carries merge it with the key's record.
      for (int i = 0; i < 8; ++i) {
        Batch u;
        u.push(OpType::Insert, 100 + static_cast<uint64_t>(i), 1);
        run_checked(*d, live, u);
        run_checked(*d, live, probe_batch(probes));
      }
      d->cleanup(t);
      run_checked(*d, live, probe_batch(probes));
      CHECK(d->stats().size == live.size());
    }
  }
}

TEST_CASE("lsm: successor across long runs of deleted keys and across levels") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 16;
    auto d = make(b);
    DeviceTime t;
    KeyValues kv = spaced_keys(3000, 1, 0);  // 0 .. 2999
    build_w(*d, kv, t);
    Model live = model_w(kv);
    // Delete 1 .. 2998 in batches of various sizes: tombstones in every level.
    uint64_t k = 1;
    std::mt19937_64 rng(3);
    while (k < 2999) {
      Batch del;
      const uint64_t n = std::min<uint64_t>(1 + rng() % 300, 2999 - k);
      for (uint64_t i = 0; i < n; ++i) del.push(OpType::Delete, k++);
      run_checked(*d, live, del);
    }
    Batch q;
    for (uint64_t s : std::initializer_list<uint64_t>{0, 1, 500, 1500, 2997, 2998, 2999, kMax}) q.push(OpType::Successor, s);
    for (int i = 0; i < 200; ++i) q.push(OpType::Successor, rng() % 3100);
    q.push(OpType::Count, 0, kMax);
    q.push(OpType::Range, 0, kMax);
    run_checked(*d, live, q);
    // Re-insert a few keys in the middle: the walk must stop there.
    Batch ins;
    for (uint64_t x : {700ull, 1400ull, 2100ull}) ins.push(OpType::Insert, x, x * 3);
    for (int i = 0; i < 100; ++i) ins.push(OpType::Successor, rng() % 3000);
    run_checked(*d, live, ins);
    d->cleanup(t);
    CHECK(d->stats().size == live.size());
    run_checked(*d, live, q);
  }
}

TEST_CASE("lsm: snapshots see their levels while updates and cleanups continue") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 8;
    auto d = make(b);
    DeviceTime t;
    KeyValues kv = spaced_keys(100, 3, 1);
    build_w(*d, kv, t);
    Model live = model_w(kv);
    std::map<std::string, Model> snaps;
    std::vector<std::string> order;
    std::mt19937_64 rng(21);

    d->snapshot("s0", t);
    snaps["s0"] = live;
    order.push_back("s0");
    CHECK(extra_u64(*d, "snapshot_bytes") == 0);  // shares every level
    CHECK_THROWS_AS(d->snapshot("s0", t), InputError);

    for (int round = 1; round <= 30; ++round) {
      CAPTURE(round);
      Batch u = random_updates(rng, 1 + rng() % 30, 320);
      run_checked(*d, live, snaps, u);
      if (round % 5 == 0) {
        const std::string name = "s" + std::to_string(round);
        d->snapshot(name, t);
        snaps[name] = live;
        order.push_back(name);
      }
      if (round % 7 == 0) {
        d->cleanup(t);
        CHECK(d->stats().size == live.size());
      }
      if (round % 11 == 0 && !order.empty()) {
        d->drop_snapshot(order.front());
        snaps.erase(order.front());
        order.erase(order.begin());
      }
      for (const auto& name : order) {
        Batch q = everything_batch(0);
        for (uint64_t k = 0; k < 330; k += 7) {
          q.push(OpType::Lookup, k);
          q.push(OpType::Successor, k);
          q.push(OpType::Range, k, k + 20);
          q.push(OpType::Count, k, k + 50);
        }
        q.push(OpType::Insert, rng() % 320, 1);  // applies to the live levels only
        q.push(OpType::Delete, rng() % 320);
        q.snapshot = name;
        run_checked(*d, live, snaps, q);
      }
      Batch lq = everything_batch(0);
      for (uint64_t k = 0; k < 330; k += 5) lq.push(OpType::Lookup, k);
      run_checked(*d, live, snaps, lq);
    }
    CHECK(extra_u64(*d, "snapshots") == order.size());
    CHECK(extra_u64(*d, "snapshot_bytes") > 0);
    Batch gone;
    gone.push(OpType::Lookup, 3);
    gone.snapshot = "never";
    BatchResults r;
    CHECK_THROWS_AS(d->execute(gone, r, t), InputError);
    CHECK_THROWS_AS(d->drop_snapshot("never"), InputError);
    for (const auto& name : order) d->drop_snapshot(name);
    CHECK(extra_u64(*d, "snapshots") == 0);
    CHECK(extra_u64(*d, "snapshot_bytes") == 0);
    run_checked(*d, live, everything_batch(330));

    // A snapshot of an empty structure stays empty.
    auto e = make(b);
    Model empty;
    std::map<std::string, Model> esnaps;
    e->snapshot("nothing", t);
    esnaps["nothing"] = empty;
    Batch fill;
    fill.push(OpType::Insert, 1, 1);
    fill.push(OpType::Lookup, 1);
    fill.push(OpType::Range, 0, kMax);
    fill.push(OpType::Successor, 0);
    fill.snapshot = "nothing";
    run_checked(*e, empty, esnaps, fill);
  }
}

TEST_CASE("lsm: stats before and after cleanup, exact stale counting") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 32;
    auto d = make(b, 0, "0", "exact");
    DeviceTime t;
    KeyValues kv = spaced_keys(1000, 2, 0);
    build_w(*d, kv, t);
    Model live = model_w(kv);
    CHECK(extra(*d, "stale_counted") == "exact");
    CHECK(extra_u64(*d, "stale") == 0);
    CHECK(extra_u64(*d, "elements") == 1000);
    CHECK(extra(*d, "levels") == "5");
    std::mt19937_64 rng(8);
    for (int round = 0; round < 25; ++round) {
      Batch u;
      for (int i = 0; i < 50; ++i) {
        const uint64_t k = rng() % 2100;
        if (rng() % 3 == 0)
          u.push(OpType::Delete, k);
        else
          u.push(OpType::Insert, k, rng() & kMax);
      }
      run_checked(*d, live, u);  // checks size and elements - stale == live keys
    }
    const uint64_t before_elements = extra_u64(*d, "elements");
    const uint64_t before_stale = extra_u64(*d, "stale");
    CHECK(before_elements - before_stale == live.size());
    CHECK(before_stale > 0);
    d->cleanup(t);
    CHECK(extra_u64(*d, "last_cleanup_stale") == before_stale);
    const uint64_t rr = (live.size() + b - 1) / b;
    CHECK(extra_u64(*d, "elements") == live.size());
    CHECK(extra_u64(*d, "stale") == 0);
    CHECK(extra(*d, "levels") == levels_of(rr));
    CHECK(extra_u64(*d, "cleanups") == 1);
    run_checked(*d, live, everything_batch(2100));

    // Counting per level, the count after updates is a lower bound: records
    // shadowed by a newer level are counted once their levels merge.
    auto lb = make(b);
    build_w(*lb, kv, t);
    Model live2 = model_w(kv);
    Batch u;
    u.push(OpType::Insert, 0, 5);  // replaces a live key of level 5: not counted yet
    u.push(OpType::Delete, 2);     // a tombstone: counted
    run_checked(*lb, live2, u);
    CHECK(extra(*lb, "levels") == "0,5");
    CHECK(extra(*lb, "stale_counted") == "lower bound");
    CHECK(extra_u64(*lb, "stale") == 1);
    CHECK(lb->stats().size == extra_u64(*lb, "elements"));
    lb->cleanup(t);
    CHECK(extra_u64(*lb, "last_cleanup_stale") == 1002 - live2.size());  // the exact count, found by the cleanup
    CHECK(extra(*lb, "stale_counted") == "exact");
    CHECK(lb->stats().size == live2.size());
  }
}

TEST_CASE("lsm: cleanup policy options") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 16;
    std::mt19937_64 rng(31);
    {
      auto d = make(b, 3);
      Model live;
      for (int i = 1; i <= 10; ++i) {
        DeviceTime t;
        run_checked(*d, live, {}, random_updates(rng, 40, 500), &t);
        CHECK(extra_u64(*d, "auto_cleanups") == static_cast<uint64_t>(i / 3));
        if (i % 3 == 0) {
          CHECK(t[Phase::Cleanup] > 0.0);
          CHECK(extra(*d, "stale_counted") == "exact");
        }
        run_checked(*d, live, everything_batch(0));
      }
      // Query-only batches do not count.
      run_checked(*d, live, everything_batch(500));
      CHECK(extra_u64(*d, "auto_cleanups") == 3);
    }
    {
      auto d = make(b, 0, "0.25");
      Model live;
      uint64_t cleanups = 0;
      for (int i = 0; i < 30; ++i) {
        run_checked(*d, live, random_updates(rng, 30, 200, 0.5));
        const uint64_t c = extra_u64(*d, "auto_cleanups");
        if (c == cleanups) {
          // No cleanup ran: the stale share is at most x.
          const uint64_t stale = extra_u64(*d, "stale");
          CHECK(static_cast<double>(stale) <= 0.25 * static_cast<double>(extra_u64(*d, "elements")));
        }
        cleanups = c;
      }
      CHECK(cleanups > 0);
      run_checked(*d, live, everything_batch(210));
    }
  }
}

// Counting per level misses records shadowed by a newer level until their
// levels merge; the policy's check (a count pass once the stored elements
// exceed known_live / (1 - x) + b) still bounds them: rewriting every key of
// a large level keeps at most about twice the live keys stored.
TEST_CASE("lsm: the cleanup policy bounds records shadowed across levels (stale checks)") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 64;
    std::mt19937_64 rng(71);
    {
      auto d = make(b, 0, "0.5");
      DeviceTime t;
      KeyValues kv = spaced_keys(4096, 3, 0);
      build_w(*d, kv, t);
      Model live = model_w(kv);
      uint64_t most = 0;
      for (int i = 0; i < 150; ++i) {
        Batch u;
        for (int j = 0; j < 256; ++j) u.push(OpType::Insert, 3 * (rng() % 4096), rng() & kMax);  // rewrites only
        run_checked(*d, live, u);
        most = std::max(most, extra_u64(*d, "elements"));
        CHECK(extra_u64(*d, "elements") <= 2 * live.size() + b + 256);
      }
      INFO("most stored " << most << ", live " << live.size());
      CHECK(extra_u64(*d, "auto_cleanups") > 0);
      run_checked(*d, live, everything_batch(200));
    }
    {
      // Growth alone: checks find nothing to clean up and leave the levels.
      auto d = make(b, 0, "0.5");
      Model live;
      uint64_t next = 0;
      for (int i = 0; i < 60; ++i) {
        Batch u;
        for (int j = 0; j < 100; ++j) u.push(OpType::Insert, next++, rng() & kMax);
        run_checked(*d, live, u);
      }
      CHECK(extra_u64(*d, "stale_checks") > 0);
      CHECK(extra_u64(*d, "auto_cleanups") == 0);
      CHECK(extra_u64(*d, "elements") == live.size());
      run_checked(*d, live, everything_batch(100));
    }
  }
}

TEST_CASE("lsm: count and range over many candidates (rounds) and many queries (blocks)") {
  for (const KvWidths w : big_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 1 << 14;
    auto d = make(b);
    DeviceTime t;
    std::mt19937_64 rng(44);
    KeyValues kv;
    for (int i = 0; i < (1 << 20); ++i) {
      kv.keys.push_back(rng() % (1ull << 21));
      kv.values.push_back(rng() & kMax);
    }
    build_w(*d, kv, t);
    Model live = model_w(kv);
    // Overlapping levels with stale records.
    for (int round = 0; round < 5; ++round) {
      Batch u;
      for (int i = 0; i < 50000; ++i) {
        const uint64_t k = rng() % (1ull << 21);
        if (rng() % 4 == 0)
          u.push(OpType::Delete, k);
        else
          u.push(OpType::Insert, k, rng() & kMax);
      }
      run_checked(*d, live, u);
    }
    // About 1.2M stored records: 20 full counts and 3 full ranges are more
    // than 2^24 candidates, so the batch runs in several rounds.
    Batch big;
    for (int i = 0; i < 20; ++i) big.push(OpType::Count, 0, kMax);
    for (int i = 0; i < 3; ++i) big.push(OpType::Range, 0, kMax);
    for (int i = 0; i < 1000; ++i) {
      const uint64_t lo = rng() % (1ull << 21);
      big.push(OpType::Range, lo, lo + rng() % 5000);
      big.push(OpType::Count, lo, lo + rng() % 50000);
    }
    run_checked(*d, live, big);

    // More than 2^20 count queries: two blocks of bounds.
    Batch many;
    for (int i = 0; i < (1 << 20) + 777; ++i) {
      const uint64_t lo = rng() % (1ull << 21);
      many.push(OpType::Count, lo, lo + rng() % 64);
    }
    for (int i = 0; i < 5000; ++i) {
      const uint64_t lo = rng() % (1ull << 21);
      many.push(OpType::Range, lo, lo + rng() % 64);
    }
    run_checked(*d, live, many);
  }
}

TEST_CASE("lsm: large random workload, every query type") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    // Keys and values drawn at the width (random_of: u64 keys include ones
    // equal in their low 32 bits); u32/u32 as before, the 64-bit pairs at a
    // quarter of the sizes.
    g_native = true;
    const int shift = narrow() ? 0 : 2;
    std::mt19937_64 rng(2024);
    const uint64_t b = 1 << (16 - shift);
    auto d = make(b);
    DeviceTime t;
    const KeyValues kv = gpudict::testing::random_pairs(rng, 1 << (20 - shift), g_w);
    build_w(*d, kv, t);
    CHECK(t[Phase::Build] > 0.0);
    Model live = model_w(kv);
    std::vector<uint64_t> known(kv.keys);

    for (int round = 0; round < 30; ++round) {
      CAPTURE(round);
      const int size = 1 << (15 - shift + round % 3);
      Batch b2 = gpudict::testing::random_mixed_batch(rng, known, size,
                                                      round % 3 == 2 ? ExecMode::Concurrent : ExecMode::Phased, g_w);
      DeviceTime bt;
      run_checked(*d, live, {}, b2, &bt);
      gpudict::testing::check_mixed_batch_times(bt, b2.mode);
      if (round == 14) {
        d->cleanup(t);
        CHECK(d->stats().size == live.size());
      }
    }
    const uint64_t top = max_of(g_w.key);
    run_checked(*d, live, probe_batch_to({0, 1, top - 1, top}, top));
  }
}

TEST_CASE("lsm: device memory estimate covers what it holds") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    const uint64_t b = 1 << 14;
    auto d = make(b);
    DeviceTime t;
    std::mt19937_64 rng(8);
    KeyValues kv;
    for (int i = 0; i < (1 << 18); ++i) {
      kv.keys.push_back(rng() & kMax);
      kv.values.push_back(i);
    }
    WorkloadBounds bounds;
    bounds.max_resident = kv.size() + 3 * (1 << 16);
    bounds.max_inserted = bounds.max_resident;  // the LSM sizes for every insert stored
    bounds.max_batch = 1 << 16;
    bounds.max_queries = 1 << 16;
    bounds.max_snapshots = 1;
    const uint64_t need = d->device_bytes_needed(bounds);
    const uint64_t record = (g_w.key == KeyType::U64 ? 8 : 4) + (g_w.value == KeyType::U64 ? 8 : 4) + 1;
    CHECK(need >= bounds.max_resident * record);
    build_w(*d, kv, t);
    Model live = model_w(kv);
    std::map<std::string, Model> snaps;
    for (int round = 0; round < 3; ++round) {
      Batch b2;
      for (int i = 0; i < (1 << 15); ++i) b2.push(OpType::Insert, rng() & kMax, i);
      for (int i = 0; i < (1 << 13); ++i) b2.push(OpType::Lookup, rng() & kMax);
      for (int i = 0; i < (1 << 13); ++i) {
        const uint64_t lo = rng() & kMax;
        b2.push(OpType::Range, lo, std::min<uint64_t>(kMax, lo + (1 << 16)));
      }
      run_checked(*d, live, snaps, b2);
      if (round == 1) {
        d->snapshot("s", t);
        snaps["s"] = live;
      }
    }
    const Stats s = d->stats();
    INFO("held " << s.device_bytes << " estimated " << need);
    CHECK(s.device_bytes > 0);
    CHECK(s.device_bytes <= need);
    WorkloadBounds bigger = bounds;
    bigger.max_resident *= 4;
    bigger.max_inserted *= 4;
    CHECK(d->device_bytes_needed(bigger) > need);
  }
}

// Every domain end of the width as a key and as a value (0, 1, 2^31, 2^32-1
// and, for u64, 2^32, 2^63, 2^64-2, 2^64-1), plus u64 keys equal in their low
// 32 bits to other keys (k + 2^32, k - 2^32): by build and by inserts into
// levels of b = 2 and 4 (carries, shadowed records), rewritten with every
// value end, half deleted (tombstones: the successor walk steps over them),
// cleaned up, then all deleted and inserted again. Keys and values are
// drawn at the width (no widen).
TEST_CASE("lsm: domain ends of every width as keys and values, across levels, deletes and cleanup") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const WidthScope scope(w);
    g_native = true;
    const uint64_t top = max_of(w.key);
    const std::vector<uint64_t> vends = gpudict::testing::domain_ends(w.value);
    std::vector<uint64_t> keys = gpudict::testing::domain_ends(w.key);
    if (w.key == KeyType::U64)
      keys.insert(keys.end(), {(1ull << 32) + 1, (1ull << 32) + (1ull << 31), (1ull << 33) - 1,
                               (1ull << 63) + (1ull << 32), ~0ull - (1ull << 32)});
    std::vector<uint64_t> probes = keys;
    for (uint64_t k : keys) {
      if (k > 0) probes.push_back(k - 1);
      if (k < top) probes.push_back(k + 1);
    }
    auto everything = [&] {
      Batch q = probe_batch_to(probes, top);
      q.push(OpType::Range, 0, top);
      q.push(OpType::Count, 0, top);
      q.push(OpType::Range, top, 0);  // inverted
      q.push(OpType::Range, 0, 0xFFFFFFFFull);
      q.push(OpType::Count, 1ull << 31, top);
      return q;
    };
    for (uint64_t b : {2ull, 4ull}) {
      CAPTURE(b);
      auto d = make(b);
      DeviceTime t;
      KeyValues kv;
      for (size_t i = 0; i < keys.size(); i += 2) {
        kv.keys.push_back(keys[i]);
        kv.values.push_back(vends[i % vends.size()]);
      }
      build_w(*d, kv, t);
      Model live = model_w(kv);
      for (size_t i = 1; i < keys.size(); i += 2) {
        Batch ins;
        ins.push(OpType::Insert, keys[i], vends[(3 * i + 1) % vends.size()]);
        run_checked(*d, live, ins);
      }
      REQUIRE(live.size() == keys.size());
      run_checked(*d, live, everything());
      for (size_t v = 0; v < vends.size(); ++v) {
        Batch rv;
        for (size_t i = 0; i < keys.size(); ++i) rv.push(OpType::Insert, keys[i], vends[(i + v) % vends.size()]);
        for (uint64_t k : keys) rv.push(OpType::Lookup, k);
        rv.push(OpType::Range, 0, top);
        run_checked(*d, live, rv);
      }
      Batch del;
      for (size_t i = 0; i < keys.size(); i += 2) del.push(OpType::Delete, keys[i]);
      run_checked(*d, live, del);
      run_checked(*d, live, everything());
      d->cleanup(t);
      run_checked(*d, live, everything());
      Batch rest;
      for (size_t i = 1; i < keys.size(); i += 2) rest.push(OpType::Delete, keys[i]);
      run_checked(*d, live, rest);
      REQUIRE(live.empty());
      run_checked(*d, live, everything());
      Batch again;
      for (size_t i = 0; i < keys.size(); ++i) again.push(OpType::Insert, keys[i], vends[vends.size() - 1 - i % vends.size()]);
      run_checked(*d, live, again);
      run_checked(*d, live, everything());
      d->cleanup(t);
      run_checked(*d, live, everything());
      CHECK(d->stats().size == keys.size());
    }
  }
}

// The merge itself (core/lsm/detail/merge.cu: each tile finds its boundary splits
// with a 32-way warp search): runs of every size relation, few distinct keys
// (long runs of equal keys across many tiles, in both inputs), keys 0 and
// 0xFFFFFFFF. Values tag the run and position, so the check is exact: on
// equal keys every `newer` element first, each run in its own order.
// K, V: the run's key and value types (u64: keys spread over the high half,
// 0 and the largest key included; values tag the run in bit 63).
template <class K, class V>
void check_merge_path() {
  std::mt19937_64 rng(99);
  struct Sizes {
    uint64_t na, nb, distinct;
  };
  for (const Sizes& z : {Sizes{0, 5000, 3}, Sizes{5000, 0, 3}, Sizes{1, 1, 1}, Sizes{3000, 7001, 2},
                         Sizes{7001, 3000, 5}, Sizes{2048, 2048, 1}, Sizes{100000, 40000, 7},
                         Sizes{1u << 20, 1u << 20, 1u << 30}, Sizes{1u << 20, 3, 4}}) {
    CAPTURE(z.na);
    CAPTURE(z.nb);
    CAPTURE(z.distinct);
    // A sorted run; values tag the run and position, status alternates
    // (from 0 in `a`, from 1 in `b`).
    struct Run {
      std::vector<K> keys;
      std::vector<V> values;
      std::vector<uint8_t> status;
    };
    auto run_of = [&](uint64_t n, V tag, uint8_t first_status) {
      Run r;
      r.keys.resize(n);
      for (auto& k : r.keys) {
        const uint64_t x = rng() % z.distinct;
        const uint32_t k32 =
            x == 0 ? 0u : (x == 1 ? 0xFFFFFFFFu : static_cast<uint32_t>(x * 2654435761u % 0xFFFFFFFFull));
        k = static_cast<K>(widen(k32, key_type_of<K>));
      }
      std::sort(r.keys.begin(), r.keys.end());
      for (uint64_t i = 0; i < n; ++i) {
        r.values.push_back(tag | static_cast<V>(i));
        r.status.push_back(static_cast<uint8_t>((i & 1) ^ first_status));
      }
      return r;
    };
    const Run a = run_of(z.na, V(0), 0), b = run_of(z.nb, static_cast<V>(V(1) << (8 * sizeof(V) - 1)), 1);
    // The reference: a stable merge, ties to `newer` (a).
    Run ref;
    for (uint64_t i = 0, j = 0; i < z.na || j < z.nb;) {
      const bool from_a = j == z.nb || (i < z.na && a.keys[i] <= b.keys[j]);
      const Run& src = from_a ? a : b;
      const uint64_t at = from_a ? i++ : j++;
      ref.keys.push_back(src.keys[at]);
      ref.values.push_back(src.values[at]);
      ref.status.push_back(src.status[at]);
    }
    const uint64_t total = z.na + z.nb;
    DeviceBuffer<K> dak(std::max<uint64_t>(z.na, 1)), dbk(std::max<uint64_t>(z.nb, 1)), ok(total);
    DeviceBuffer<V> dav(std::max<uint64_t>(z.na, 1)), dbv(std::max<uint64_t>(z.nb, 1)), ov(total);
    DeviceBuffer<uint8_t> das(std::max<uint64_t>(z.na, 1)), dbs(std::max<uint64_t>(z.nb, 1)), os(total);
    copy_to_device(nullptr, dak.data(), a.keys.data(), z.na * sizeof(K));
    copy_to_device(nullptr, dav.data(), a.values.data(), z.na * sizeof(V));
    copy_to_device(nullptr, das.data(), a.status.data(), z.na);
    copy_to_device(nullptr, dbk.data(), b.keys.data(), z.nb * sizeof(K));
    copy_to_device(nullptr, dbv.data(), b.values.data(), z.nb * sizeof(V));
    copy_to_device(nullptr, dbs.data(), b.status.data(), z.nb);
    lsm::merge_runs(lsm::RunIn<K, V>{dak.data(), dav.data(), das.data(), z.na},
                    lsm::RunIn<K, V>{dbk.data(), dbv.data(), dbs.data(), z.nb},
                    lsm::RunOut<K, V>{ok.data(), ov.data(), os.data(), nullptr, nullptr}, nullptr);
    Run got;
    got.keys.resize(total);
    got.values.resize(total);
    got.status.resize(total);
    copy_to_host(nullptr, got.keys.data(), ok.data(), total * sizeof(K));
    copy_to_host(nullptr, got.values.data(), ov.data(), total * sizeof(V));
    copy_to_host(nullptr, got.status.data(), os.data(), total);
    uint64_t bad = 0;
    for (uint64_t o = 0; o < total; ++o)
      bad += got.keys[o] != ref.keys[o] || got.values[o] != ref.values[o] || got.status[o] != ref.status[o];
    CHECK(bad == 0);
  }
}

TEST_CASE("lsm: merge path across tiles: equal keys in both runs, stability, empty runs") {
  SUBCASE("u32/u32") { check_merge_path<uint32_t, uint32_t>(); }
  SUBCASE("u32/u64") { check_merge_path<uint32_t, uint64_t>(); }
  SUBCASE("u64/u64") { check_merge_path<uint64_t, uint64_t>(); }
}
