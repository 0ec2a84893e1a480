// The GPU B-Tree against a std::map model (phased batches whose updates
// touch each key once, so the model is exact) and through the replay engine
// and the verifier (concurrent batches, duplicates in a batch: the outcomes
// docs/semantics.md allows, exactly). The structural checker
// (core/btree/detail/btree_check.hpp) runs at the end of every test case.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "../cli_helpers.hpp"
#include "borrowed_dictionary.hpp"
#include "memory_hog.hpp"
#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "workloads/registry/structures.hpp"
#include "btree_inspect.hpp"
#include "workloads/adapter/structures.hpp"
#include "core/btree/detail/launch.cuh"
#include "core/btree/detail/top_copy.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "core/common/stream_copy.hpp"
#include "model_compare.hpp"
#include "workloads/replay.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;

namespace {

using gpudict::testing::all_kv_widths;
using gpudict::testing::compare;
using gpudict::testing::domain_ends;
using gpudict::testing::kv_label;
using gpudict::testing::KvWidths;
using gpudict::testing::Model;
using gpudict::testing::model_of;
using gpudict::testing::spaced_keys;

// The (key, value) widths the running case is at (for_each_kv): make()
// builds that instantiation; kMax and kVMax are its largest key and value.
KvWidths g_kv;
uint64_t kMax = 0xFFFFFFFFull;
uint64_t kVMax = 0xFFFFFFFFull;

// A 64-bit key or value: the tree's nodes are 64-bit words.
bool wide() { return g_kv.key == KeyType::U64 || g_kv.value == KeyType::U64; }

void set_widths(KvWidths w) {
  g_kv = w;
  kMax = max_of(w.key);
  kVMax = max_of(w.value);
}

// Runs `body` at every (key, value) width pair, u32/u32 first (the case as
// it ran before 64-bit keys; `mixed` false: u32/u32 and u64/u64 only).
// Cases with large trees or many seeds make the 64-bit runs smaller where
// they test wide() (the 32-bit run keeps its sizes).
template <class F>
void for_each_kv(F&& body, bool mixed = true) {
  for (const KvWidths& w : all_kv_widths()) {
    if (!mixed && w.key != w.value) continue;
    const std::string widths = kv_label(w);
    CAPTURE(widths);
    set_widths(w);
    try {
      body();
    } catch (...) {
      set_widths({});
      throw;
    }
    set_widths({});
  }
}

// x, or, for u64 keys half of the time, x with a high half from {1, 2^31,
// 2^32 - 1}: keys equal in their low 32 bits (k and k + 2^32 ...) side by
// side. Order-preserving within one high half.
uint64_t spread_key(std::mt19937_64& rng, uint64_t x) {
  static constexpr uint64_t kHigh[] = {1, 1ull << 31, 0xFFFFFFFFull};
  if (g_kv.key != KeyType::U64 || rng() % 2 == 0) return x;
  return (kHigh[rng() % 3] << 32) | (x & 0xFFFFFFFFull);
}

// A workload's text with the key and value types of the running widths.
std::string typed_yaml(const std::string& yaml) {
  return "key_type: " + std::string(type_name(g_kv.key)) + "\nvalue_type: " + std::string(type_name(g_kv.value)) +
         "\n" + yaml;
}

std::unique_ptr<Dictionary> make(const std::map<std::string, std::string>& opts = {}) {
  StructureConfig c;
  c.key_type = g_kv.key;
  c.value_type = g_kv.value;
  for (const auto& o : btree_option_specs()) c.options[o.name] = o.default_value;
  for (const auto& [k, v] : opts) c.options[k] = v;
  return make_btree(c);
}

std::string extra(const Dictionary& d, const std::string& name) {
  for (const auto& kv : d.stats().extra)
    if (kv.first == name) return kv.second;
  return "<missing " + name + ">";
}
uint64_t extra_u64(const Dictionary& d, const std::string& name) { return std::stoull(extra(d, name)); }

// Every query type on each key of `probes` and its neighbours, at the
// running key width.
Batch probe_batch(const std::vector<uint64_t>& probes) { return gpudict::testing::probe_batch(probes, kMax); }

// kv with keys 0 (value v0) and kMax (value vmax) added.
KeyValues with_domain_ends(KeyValues kv, uint64_t v0, uint64_t vmax) {
  kv.keys.push_back(0);
  kv.values.push_back(v0);
  kv.keys.push_back(kMax);
  kv.values.push_back(vmax);
  return kv;
}

void require_sound(const Dictionary& d) {
  const std::string s = check_btree_structure(d);
  INFO(s);
  REQUIRE(s.empty());
}

// The whole tree against the model: one range and one count over the key domain.
void require_whole_tree(Dictionary& d, const Model& m) {
  Batch all;
  all.push(OpType::Range, 0, kMax);
  all.push(OpType::Count, 0, kMax);
  BatchResults r;
  DeviceTime t;
  d.execute(all, r, t);
  const std::string err = compare(m, all, r);
  INFO(err);
  REQUIRE(err.empty());
}

void apply_unique_updates(Model& m, const Batch& b) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (b.types[i] == OpType::Insert) m[b.keys[i]] = b.args[i];
    if (b.types[i] == OpType::Delete) m.erase(b.keys[i]);
  }
}

// Runs a batch whose updates touch every key at most once and checks every
// query result against the model (a concurrent batch: only where no query
// can see an update, e.g. queries of keys the batch does not update).
void run_checked(Dictionary& d, Model& m, const Batch& b) {
  apply_unique_updates(m, b);
  BatchResults r;
  DeviceTime t;
  d.execute(b, r, t);
  const std::string err = compare(m, b, r, b.mode != ExecMode::Concurrent);
  INFO(err);
  REQUIRE(err.empty());
  REQUIRE(d.stats().size == m.size());
}

// A phased batch mixing every operation; update keys unique in the batch.
Batch random_batch(std::mt19937_64& rng, std::vector<uint64_t>& known, int size, uint64_t domain) {
  Batch b;
  std::set<uint64_t> updated;
  auto pick = [&]() -> uint64_t {
    const uint64_t r = rng() % 16;
    if (r == 0) return kMax - rng() % 3;
    if (r == 1) return rng() % 3;
    if (r < 8 && !known.empty()) return known[rng() % known.size()];
    return spread_key(rng, rng() % domain);
  };
  for (int i = 0; i < size; ++i) {
    const uint64_t r = rng() % 100;
    const uint64_t k = pick();
    if (r < 45) {
      if (!updated.insert(k).second) continue;
      if (r < 30) {
        const uint64_t v = rng() % 7 == 0 ? (rng() % 2 ? 0 : kVMax) : rng() & kVMax;
        b.push(OpType::Insert, k, v);
        known.push_back(k);
      } else {
        b.push(OpType::Delete, k);
      }
    } else if (r < 65) {
      b.push(OpType::Lookup, k);
    } else if (r < 77) {
      b.push(OpType::Count, k, std::min<uint64_t>(kMax, k + rng() % (domain / 64 + 2)));
    } else if (r < 88) {
      b.push(OpType::Range, k, std::min<uint64_t>(kMax, k + rng() % (domain / 256 + 2)));
    } else {
      b.push(OpType::Successor, k);
    }
  }
  return b;
}

// `size` inserts and deletes (one in four) of distinct keys below `domain`
// (spread_key: u64 keys also above 2^32), random values.
Batch unique_updates(std::mt19937_64& rng, int size, uint64_t domain) {
  Batch b;
  std::set<uint64_t> used;
  while (static_cast<int>(b.size()) < size) {
    const uint64_t k = spread_key(rng, rng() % domain);
    if (!used.insert(k).second) continue;
    if (rng() % 4 == 0)
      b.push(OpType::Delete, k);
    else
      b.push(OpType::Insert, k, rng() & kVMax);
  }
  return b;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string p = "/tmp/gpudict_btree_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(p) << text;
  return p;
}

// Replays `path` (seed overridden) on `d` with the verifier.
RunReport run_engine(const std::string& path, Dictionary& d, uint64_t seed) {
  // (the typed workloads of 64-bit runs: typed_yaml)
  OpenOptions oo{true, seed};
  const WorkloadSummary summary = summarize_workload(path, oo);
  ReplayOptions opt;
  opt.gpu = true;
  return replay([&] { return open_workload(path, oo); },
                [&] { return std::make_unique<gpudict::testing::BorrowedDictionary>(d); }, summary, opt);
}

void require_verified(const RunReport& rep, const std::string& what) {
  std::string first;
  for (const auto& m : rep.first_mismatches)
    first += "batch " + std::to_string(m.batch) + " op " + std::to_string(m.op) + " " + std::string(op_name(m.type)) +
             " key " + std::to_string(m.key) + " arg " + std::to_string(m.arg) + ": expected " + m.expected +
             ", got " + m.got + "\n";
  INFO(what << "\n" << first);
  REQUIRE(rep.mismatches == 0);
  REQUIRE(rep.checked > 0);
}

const char* kConcurrentMix = R"(
seed: 5
initial: {count: 30000, keys: {distribution: uniform, min: 0, max: 200000}}
steps:
  - phase: {name: mixed, batches: 4, batch_size: 20000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.3, delete: 0.15, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.15},
            keys: {distribution: uniform, min: 0, max: 200000},
            range_length: {distribution: geometric, mean: 24}}
  - phase: {name: hot, batches: 2, batch_size: 8000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.35, delete: 0.15, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1},
            keys: {distribution: zipfian, exponent: 1.2, min: 0, max: 200000}}
  - phase: {name: grow, batches: 2, batch_size: 30000, mode: concurrent, hit_ratio: 0.2,
            mix: {insert: 0.7, lookup: 0.1, range: 0.1, successor: 0.1},
            keys: {distribution: uniform, min: 100000, max: 140000},
            range_length: {distribution: fixed, length: 64}}
  - phase: {name: check, batches: 1, batch_size: 20000, hit_ratio: 0.5,
            mix: {lookup: 0.4, count: 0.2, range: 0.2, successor: 0.2}}
)";

}  // namespace

TEST_CASE("btree: capabilities, options, parameters") {
  const Capabilities c = btree_caps();
  CHECK(c.ordered);
  CHECK(c.deletes);
  CHECK_FALSE(c.snapshots);
  CHECK(c.native_concurrent);
  CHECK(c.phased_duplicates == DuplicateRule::AnyUpdate);
  CHECK(c.semantics == Semantics::Map);
  CHECK(c.supports(KeyType::U32));
  CHECK(c.supports(KeyType::U64));
  for (OpType t : kAllOpTypes) CHECK(c.supports(t) == !is_graph_op(t));  // every operation but the graph's

  const auto opts = btree_option_specs();
  REQUIRE(opts.size() == 10);
  CHECK(opts[0].name == "node-pool");
  CHECK(opts[1].name == "fill");
  CHECK(opts[2].name == "tile");
  CHECK(opts[3].name == "sort");
  CHECK(opts[4].name == "query-tile");
  CHECK(opts[5].name == "phased-updates");
  CHECK(opts[5].default_value == "auto");
  CHECK(opts[6].name == "ops-kernel");
  CHECK(opts[6].default_value == "thread");
  CHECK(opts[7].name == "op-words");
  CHECK(opts[7].default_value == "on");
  CHECK(opts[8].name == "leaf-groups");
  CHECK(opts[8].default_value == "on");
  CHECK(opts[9].name == "leaf-directory");
  CHECK(opts[9].default_value == "on");
  const StructureInfo* info = find_structure("btree");
  REQUIRE(info != nullptr);
  CHECK(info->make_gpu != nullptr);

  StructureConfig bare;
  CHECK(make_btree(bare) != nullptr);
  for (const auto& option : std::vector<std::pair<std::string, std::string>>{
           {"fill", "0"}, {"fill", "1.5"}, {"fill", "x"}, {"tile", "4"}, {"tile", "64"}, {"sort", "maybe"},
           {"query-tile", "2"}, {"query-tile", "32"}, {"node-pool", "-1"}, {"node-pool", "abc"},
           {"phased-updates", "batched"}, {"phased-updates", "Auto"}, {"ops-kernel", "warp"}, {"ops-kernel", ""},
           {"op-words", "yes"}, {"leaf-groups", "1"}, {"leaf-directory", "yes"}}) {
    // Named copies: doctest's CAPTURE takes a lambda capture, and capturing
    // structured bindings is C++20.
    const std::string name = option.first, value = option.second;
    CAPTURE(name);
    CAPTURE(value);
    StructureConfig cfg;
    cfg.options[name] = value;
    CHECK_THROWS_AS(validate_btree_options(cfg), InputError);
  }
  // Every (key, value) width pair: u64 keys with u32 values run on the
  // u64/u64 instantiation (with_kv_types); parameters() names the pair.
  for (const auto& [key, value, name] :
       std::vector<std::tuple<KeyType, KeyType, std::string>>{{KeyType::U32, KeyType::U32, "u32/u32"},
                                                              {KeyType::U32, KeyType::U64, "u32/u64"},
                                                              {KeyType::U64, KeyType::U32, "u64/u64"},
                                                              {KeyType::U64, KeyType::U64, "u64/u64"}}) {
    const std::string want = name;
    CAPTURE(want);
    StructureConfig typed;
    typed.key_type = key;
    typed.value_type = value;
    auto d = make_btree(typed);
    REQUIRE(d != nullptr);
    std::string kv, node;
    for (const auto& p : d->parameters()) {
      if (p.first == "kv") kv = p.second;
      if (p.first == "node") node = p.second;
    }
    CHECK(kv == want);
    CHECK(node.rfind(want == "u32/u32" ? "128 B" : "256 B", 0) == 0);
    const uint64_t node_bytes = want == "u32/u32" ? 128 : 256;
    CHECK(extra_u64(*d, "node-bytes") == node_bytes);  // the empty tree's root
    require_sound(*d);
  }

  auto d = make();
  bool has_node = false;
  std::string qtile;
  for (const auto& kv : d->parameters()) {
    has_node |= kv.first == "node";
    if (kv.first == "query_tile") qtile = kv.second;
  }
  CHECK(has_node);
  CHECK(qtile.rfind("1: one thread per phased query", 0) == 0);  // the default
  for (const char* accepted : {"0", "1", "4", "8"}) {
    StructureConfig cfg;
    cfg.options["query-tile"] = accepted;
    CHECK_NOTHROW(validate_btree_options(cfg));
  }
  for (const char* name : {"height", "nodes", "leaves", "fill", "node-bytes", "pool-nodes", "directory-leaves",
                           "directory-lists"})
    CHECK(extra(*d, name).rfind("<missing", 0) != 0);
  DeviceTime t;
  CHECK_THROWS_AS(d->snapshot("s", t), InputError);
  require_sound(*d);
}

TEST_CASE("btree: empty trees answer every query") {
  for_each_kv([&] {
    for (const char* qtile : {"1", "4", "8", "0"})
    for (bool built : {false, true}) {
      CAPTURE(qtile);
      auto d = make({{"query-tile", qtile}});
      DeviceTime t;
      if (built) d->build(KeyValues{}, t);
      Model m;
      run_checked(*d, m, probe_batch({0, 1, 77, kMax - 1, kMax}));
      CHECK(d->stats().size == 0);
      CHECK(extra_u64(*d, "height") == 1);
      require_sound(*d);
      // Deletes of absent keys, phased and concurrent (with queries: nothing
      // is inserted, so every answer is exact), then concurrent inserts alone.
      Batch del;
      for (uint64_t k : {uint64_t{0}, uint64_t{5}, kMax - 1, kMax}) del.push(OpType::Delete, k);
      run_checked(*d, m, del);
      Batch cd = probe_batch({0, 1, 77, kMax - 1, kMax});
      cd.mode = ExecMode::Concurrent;
      for (uint64_t k : {uint64_t{0}, uint64_t{1}, kMax}) cd.push(OpType::Delete, k);
      run_checked(*d, m, cd);
      Batch ci;
      ci.mode = ExecMode::Concurrent;
      for (uint64_t k : {uint64_t{0}, uint64_t{7}, kMax}) ci.push(OpType::Insert, k, k ^ 0x1234u);
      run_checked(*d, m, ci);
      run_checked(*d, m, probe_batch({0, 1, 7, 8, kMax - 1, kMax}));
      require_sound(*d);
    }
  });
}

TEST_CASE("btree: bulk build keeps the last duplicate, every fill and tile") {
  for_each_kv([&] {
    KeyValues kv = spaced_keys(5000, 37, 3);
    std::mt19937_64 rng(11);
    for (int i = 0; i < 3000; ++i) {  // duplicates, later ones win
      const uint64_t k = kv.keys[rng() % 5000];
      kv.keys.push_back(k);
      kv.values.push_back(rng() & kVMax);
    }
    for (uint64_t k : std::vector<uint64_t>{0, 1, kMax - 1, kMax}) {
      kv.keys.push_back(k);
      kv.values.push_back(k ^ 0x1234);
    }
    const Model m = model_of(kv);
    std::vector<uint64_t> probes = {0, 1, 2, 3, 40, 41, kMax - 1, kMax};
    for (int i = 0; i < 200; ++i) probes.push_back(kv.keys[rng() % kv.size()] + rng() % 3);
    for (const char* fill : {"0.05", "0.5", "0.7", "1"})
      for (const char* tile : {"8", "16", "32"}) {
        CAPTURE(fill);
        CAPTURE(tile);
        auto d = make({{"fill", fill}, {"tile", tile}});
        DeviceTime t;
        d->build(kv, t);
        CHECK(d->stats().size == m.size());
        Model mm = m;
        run_checked(*d, mm, probe_batch(probes));
        require_sound(*d);
      }
  });
}

TEST_CASE("btree: phased random batches against the model, every tile, sorted and unsorted, both update paths") {
  for_each_kv([&] {
    for (const char* updates : {"merge", "ops", "ops-tile"})
    for (const char* tile : {"8", "16", "32"})
      for (const char* sort : {"on", "off"}) {
        CAPTURE(updates);
        CAPTURE(tile);
        CAPTURE(sort);
        // ops: the thread-per-operation kernel; ops-tile: the paper's, with tiles of `tile` lanes.
        const char* kernel = std::string(updates) == "ops-tile" ? "tile" : "thread";
        if (std::string(updates) == "ops-tile") updates = "ops";
        // Query tiles alternate with the update tile and path: every query kernel runs sorted and unsorted.
        const bool merge = std::string(updates) == "merge";
        const std::string ut = tile;
        const char* qtile = merge ? (ut == "8" ? "4" : ut == "16" ? "8" : "0") : (ut == "32" ? "4" : "1");
        CAPTURE(qtile);
        if (wide() && ut == "16") continue;  // 64-bit runs: tiles of 8 and 32 (16 shares their code), 4 batches
        auto d = make({{"tile", tile},
                       {"sort", sort},
                       {"query-tile", qtile},
                       {"phased-updates", updates},
                       {"ops-kernel", kernel},
                       {"op-words", ut == "16" ? "off" : "on"}});
        std::mt19937_64 rng(std::string(tile).size() * 7 + std::string(sort).size());
        const uint64_t domain = 400000;
        KeyValues kv;
        for (int i = 0; i < 20000; ++i) {
          kv.keys.push_back(spread_key(rng, rng() % domain));
          kv.values.push_back(rng() & kVMax);
        }
        DeviceTime t;
        d->build(kv, t);
        Model m = model_of(kv);
        std::vector<uint64_t> known(kv.keys.begin(), kv.keys.end());
        for (int batch = 0; batch < (wide() ? 4 : 10); ++batch) run_checked(*d, m, random_batch(rng, known, 30000, domain));
        require_sound(*d);
      }
  });
}

TEST_CASE("btree: ascending and descending inserts split the same path") {
  for_each_kv([&] {
    for (const char* updates : {"merge", "ops"})
    for (bool descending : {false, true})
      for (const char* tile : {"8", "32", "thread"}) {
        CAPTURE(updates);
        CAPTURE(descending);
        CAPTURE(tile);
        // "thread": the thread-per-operation kernel (threads split leaves, its warp the rest); else tiles of
        // that many lanes.
        const bool thread = std::string(tile) == "thread";
        auto d = make({{"tile", thread ? "32" : tile},
                       {"phased-updates", updates},
                       {"ops-kernel", thread ? "thread" : "tile"}});
        Model m;
        const uint64_t n = wide() ? 30000 : 60000;
        for (uint64_t first = 0; first < n; first += 6000) {
          Batch b;
          for (uint64_t i = first; i < first + 6000; ++i) {
            const uint64_t k = descending ? kMax - i : i;
            b.push(OpType::Insert, k, i);
          }
          run_checked(*d, m, b);
        }
        // One key per batch, many batches: the same leaf again and again.
        for (uint64_t i = 0; i < 200; ++i) {
          Batch b;
          b.push(OpType::Insert, descending ? n + 1000 - i : n + 1000 + i, i);
          run_checked(*d, m, b);
        }
        run_checked(*d, m, probe_batch({0, 1, n / 2, n - 1, n, kMax - n, kMax - 1, kMax}));
        CHECK(extra_u64(*d, "height") >= 3);
        require_sound(*d);
      }
  });
}

TEST_CASE("btree: keys 0 and the largest key (2^32 - 1, 2^64 - 1) and their neighbours, values too") {
  for_each_kv([&] {
    for (const char* qtile : {"1", "4"}) {
      CAPTURE(qtile);
      auto d = make({{"query-tile", qtile}});
      Model m;
      Batch b;
      for (uint64_t k : std::vector<uint64_t>{0, 1, 2, kMax - 2, kMax - 1, kMax}) b.push(OpType::Insert, k, k == 0 ? kVMax : 0);
      run_checked(*d, m, b);
      run_checked(*d, m, probe_batch({0, 1, 2, 3, kMax - 3, kMax - 2, kMax - 1, kMax}));
      Batch del;
      del.push(OpType::Delete, 0);
      del.push(OpType::Delete, kMax);
      del.push(OpType::Delete, 12345);  // absent: no-op
      run_checked(*d, m, del);
      run_checked(*d, m, probe_batch({0, 1, kMax - 1, kMax}));
      Batch s;
      s.push(OpType::Successor, kMax);
      s.push(OpType::Successor, kMax - 1);
      s.push(OpType::Range, kMax, 0);
      s.push(OpType::Count, 0, kMax);
      s.push(OpType::Range, 0, kMax);
      s.push(OpType::Count, kMax, 0);  // empty ranges: lo > hi
      s.push(OpType::Count, 5, 4);
      s.push(OpType::Range, 5, 4);
      s.push(OpType::Count, kMax, kMax);
      run_checked(*d, m, s);
      require_sound(*d);
    }
  });
}

// Every domain end of the width (0, 1, 2^31, 2^32 - 1 and, with u64 keys,
// 2^32, 2^63, 2^64 - 2, 2^64 - 1) as keys and as values: stored by the
// bulk build and by every update path (merged, the thread and the tile
// operations kernels, a concurrent batch), looked up, replaced, deleted,
// with every ordered query across them and every phased query kernel.
// With u64 keys also keys equal in their low 32 bits (k, k + 2^32,
// k + 2^63, k + 2^64 - 2^32): a tree that dropped a key's high half would
// merge them.
TEST_CASE("btree: the domain ends of every width as keys and values, keys equal in their low 32 bits") {
  for_each_kv([&] {
    const std::vector<uint64_t> vends = domain_ends(g_kv.value), kends = domain_ends(g_kv.key);
    std::set<uint64_t> edge(kends.begin(), kends.end());
    if (g_kv.key == KeyType::U64)
      for (uint64_t k : {0ull, 5ull, 12345ull, 0x7FFFFFFFull, 0xFFFFFFFEull})
        for (uint64_t high : {1ull << 32, 1ull << 63, 0xFFFFFFFF00000000ull}) edge.insert(k + high);
    const std::vector<uint64_t> keys(edge.begin(), edge.end());
    // Filler: a tree of a few levels around them (and, with u64 keys, the
    // same low halves above 2^32).
    KeyValues filler;
    for (uint64_t i = 0; i < 6000; ++i) {
      const uint64_t k = 100 + i * 7919;
      if (edge.count(k)) continue;
      filler.keys.push_back(k);
      filler.values.push_back(vends[i % vends.size()] ^ (i & 1));
      if (g_kv.key == KeyType::U64 && !edge.count(k + (1ull << 32))) {
        filler.keys.push_back(k + (1ull << 32));
        filler.values.push_back(i);
      }
    }
    std::vector<uint64_t> probes = keys;
    for (int i = 0; i < 40; ++i) probes.push_back(filler.keys[static_cast<size_t>(i) * 97 % filler.size()]);
    // The ordered queries across the ends: successors, counts and ranges
    // from, to and between each pair of neighbouring ends.
    auto ordered = [&] {
      Batch q;
      for (size_t i = 0; i < keys.size(); ++i) {
        const uint64_t k = keys[i], next = i + 1 < keys.size() ? keys[i + 1] : kMax;
        q.push(OpType::Successor, k);
        q.push(OpType::Count, k, next);
        q.push(OpType::Range, k, next);
        q.push(OpType::Range, 0, k);
        q.push(OpType::Count, k, kMax);
        q.push(OpType::Range, k, k);
      }
      q.push(OpType::Range, 0, kMax);
      q.push(OpType::Count, 0, kMax);
      q.push(OpType::Range, kMax, 0);  // empty: lo > hi
      return q;
    };
    for (const char* path : {"build", "merge", "ops", "ops-tile", "concurrent"})
      for (const char* qtile : {"1", "4", "0"}) {
        CAPTURE(path);
        CAPTURE(qtile);
        const std::string how = path;
        auto d = make({{"phased-updates", how == "merge" ? "merge" : "ops"},
                       {"ops-kernel", how == "ops-tile" ? "tile" : "thread"},
                       {"query-tile", qtile}});
        DeviceTime t;
        KeyValues kv = filler;
        // The ends' values: each end of the value width, in turn.
        auto value_of = [&](size_t i, size_t shift) { return vends[(i + shift) % vends.size()]; };
        if (how == "build")
          for (size_t i = 0; i < keys.size(); ++i) {
            kv.keys.push_back(keys[i]);
            kv.values.push_back(value_of(i, 0));
          }
        d->build(kv, t);
        Model m = model_of(kv);
        const ExecMode mode = how == "concurrent" ? ExecMode::Concurrent : ExecMode::Phased;
        auto updates = [&](size_t shift, bool deletes) {
          Batch b;
          b.mode = mode;
          for (size_t i = 0; i < keys.size(); ++i) {
            if (deletes && i % 2 == 1)
              b.push(OpType::Delete, keys[i]);
            else
              b.push(OpType::Insert, keys[i], value_of(i, shift));
          }
          run_checked(*d, m, b);
        };
        if (how != "build") updates(0, false);
        run_checked(*d, m, probe_batch(probes));
        run_checked(*d, m, ordered());
        updates(3, false);  // every end key's value replaced by another end of the value width
        run_checked(*d, m, probe_batch(probes));
        updates(5, true);  // every other end key deleted, the others replaced again
        run_checked(*d, m, probe_batch(probes));
        run_checked(*d, m, ordered());
        require_whole_tree(*d, m);
        require_sound(*d);
      }
  });
}

TEST_CASE("btree: one thread per range: the warp's output ring, long, empty and missing ranges side by side") {
  for_each_kv([&] {
    // --query-tile 1 stores each warp's pairs through a ring of 256 pairs in
    // shared memory (kernels_query.cu) while the list's ranges are expected
    // to be short. Here the keys' span (0 and 0xFFFFFFFF among keys below
    // 240,000) makes the estimate tiny, so each fresh tree takes its first
    // list one thread per range whatever its ranges hold: ranges longer than
    // the ring, a warp whose ranges together fill it many times, empty ranges
    // (lo > hi) and ranges between keys (no result) next to long ones, ranges
    // that end in the last leaf; the output outgrows the estimate and the
    // list runs again.
    // Keys 100, 104, ..., 239996, 0 and 0xFFFFFFFF at every width (a span
    // up to 2^64 - 1 would make the estimate so small that the corrected
    // one, (pairs found + 1) / (expected + 1) times it, stays small too).
    KeyValues kv = spaced_keys(60000, 4, 100);
    kv.keys.insert(kv.keys.end(), {0, 0xFFFFFFFFull});
    kv.values.insert(kv.values.end(), {1, 2});
    std::mt19937_64 rng(7);
    for (int list = 0; list < 4; ++list) {
      CAPTURE(list);
      auto d = make({{"query-tile", "1"}, {"fill", "0.5"}});
      DeviceTime t;
      d->build(kv, t);
      Model m = model_of(kv);
      Batch q;
      const int n = list == 0 ? 40 : 5000;
      for (int i = 0; i < n; ++i) {
        const uint64_t k = rng() % 250000;
        switch ((i + list) % 5) {
          case 0: q.push(OpType::Range, k, k + 1000 + rng() % 4000); break;  // 250-1250 results: past the ring
          case 1: q.push(OpType::Range, k + 10, k); break;                   // empty: lo > hi
          case 2: q.push(OpType::Range, k * 4 + 101, k * 4 + 103); break;    // between two keys
          case 3: q.push(OpType::Range, k, k + rng() % 40); break;
          default: q.push(OpType::Range, k, k + 20000); break;               // about 5000 results
        }
      }
      if (list > 0) {  // (two such in a list of 40 would expect long ranges: tiles, not threads)
        q.push(OpType::Range, 239000, kMax);  // to the last leaf
        q.push(OpType::Range, 0, kMax);       // every key
      }
      run_checked(*d, m, q);
      CHECK(extra_u64(*d, "point-range-lists") == 1);
      CHECK(extra_u64(*d, "range-reruns") == 1);  // the estimate was far too small
      // The same list again: its estimate, corrected by the first run's error
      // (pairs found over pairs expected), says its ranges are long: tiles.
      run_checked(*d, m, q);
      CHECK(extra_u64(*d, "tile-range-lists") == 1);
      CHECK(extra_u64(*d, "point-range-lists") == 1);
      require_sound(*d);
    }
  });
}

TEST_CASE("btree: ranges one thread each when short, in tiles when long, on an estimate that fits") {
  for_each_kv([&] {
    auto d = make({{"query-tile", "1"}});
    const KeyValues kv = spaced_keys(200000, 5, 7);  // uniform over their span: the estimate is close
    DeviceTime t;
    d->build(kv, t);
    Model m = model_of(kv);
    std::mt19937_64 rng(11);
    for (int list = 0; list < 3; ++list) {
      Batch q;
      for (int i = 0; i < 30000; ++i) {
        const uint64_t k = rng() % 1000000;
        q.push(OpType::Range, k, k + rng() % 60);  // 0-12 results
      }
      run_checked(*d, m, q);
    }
    CHECK(extra_u64(*d, "point-range-lists") == 3);
    CHECK(extra_u64(*d, "range-reruns") == 0);  // the output fitted its room
    Batch q;
    for (int i = 0; i < 3000; ++i) {
      const uint64_t k = rng() % 1000000;
      q.push(OpType::Range, k, k + 500 + rng() % 200);  // about 100-140 results: beyond 48
    }
    run_checked(*d, m, q);
    CHECK(extra_u64(*d, "tile-range-lists") == 1);
    CHECK(extra_u64(*d, "point-range-lists") == 3);
    require_sound(*d);
  });
}

TEST_CASE("btree: ranges across many leaves, successor of the largest key") {
  for_each_kv([&] {
    for (const char* qtile : {"1", "4"}) {
      CAPTURE(qtile);
      auto d = make({{"fill", "0.5"}, {"query-tile", qtile}});
      KeyValues kv = spaced_keys(200000, 11, 5);
      DeviceTime t;
      d->build(kv, t);
      Model m = model_of(kv);
      // Empty most leaves of one stretch and of the tail: successors and
      // ranges walk empty leaves, some up to the rightmost leaf.
      Batch del;
      for (uint64_t i = 50000; i < 150000; ++i) del.push(OpType::Delete, kv.keys[i]);
      for (uint64_t i = 185000; i < 200000; ++i) del.push(OpType::Delete, kv.keys[i]);
      run_checked(*d, m, del);
      Batch q;
      q.push(OpType::Range, 0, kMax);
      q.push(OpType::Count, 0, kMax);
      q.push(OpType::Range, kv.keys[1000], kv.keys[190000]);
      q.push(OpType::Successor, kv.keys[50000 - 1]);
      q.push(OpType::Successor, kv.keys[120000]);
      q.push(OpType::Successor, kv.keys.back());
      q.push(OpType::Successor, kv.keys.back() - 1);
      q.push(OpType::Successor, kMax);
      q.push(OpType::Lookup, kv.keys.back());
      q.push(OpType::Successor, kv.keys[184999 - 1]);  // the last live key
      q.push(OpType::Successor, kv.keys[184999]);      // none: walks the emptied tail
      q.push(OpType::Count, kv.keys[184000], kMax);
      q.push(OpType::Range, kv.keys[184990], kMax);
      for (int i = 0; i < 2000; ++i) {
        q.push(OpType::Range, kv.keys[i * 97], kv.keys[i * 97] + 5000);
        q.push(OpType::Count, kv.keys[i * 97] + 1, kv.keys[i * 97] + 20000);  // some across the emptied stretch
      }
      run_checked(*d, m, q);
      require_sound(*d);
    }
  });
}

TEST_CASE("btree: query lists sorted on few key bits (a dense cluster among far keys), one-pass ranges") {
  for_each_kv([&] {
    // The query sort drops low bits up to the mean gap between the list's
    // keys, in whole 8-bit passes (core/btree/detail/sort_bits.hpp): with keys 0 and
    // 0xFFFFFFFF in a short list, the cluster's keys share buckets and reach
    // the kernel in no particular order (backwards steps, repeated keys). A
    // list of one key is not sorted at all.
    // Ranges of every length exercise the one-pass output: ranges that start
    // and end inside 32-pair lines, lines completed by several leaves, ranges
    // longer than a line, and outputs larger than the estimate (run again).
    for (const char* tile : {"1", "4", "8"}) {
      CAPTURE(tile);
      auto d = make({{"fill", "0.6"}, {"query-tile", tile}});
      // Keys 1000, 1003, ... (about 21,000 leaves), 0 and 0xFFFFFFFF.
      const KeyValues kv = with_domain_ends(spaced_keys(300000, 3, 1000), 7, 9);
      DeviceTime t;
      d->build(kv, t);
      Model m = model_of(kv);
      std::mt19937_64 rng(41);
      for (int list = 0; list < 6; ++list) {
        Batch q;
        const int n = list < 3 ? 600 : 20000;
        for (uint64_t k : std::vector<uint64_t>{0, kMax, 1, kMax - 1}) {
          q.push(OpType::Lookup, k);
          q.push(OpType::Successor, k);
          q.push(OpType::Count, k, kMax);
          q.push(OpType::Range, k, std::min<uint64_t>(kMax, k + 40));
        }
        for (int i = 0; i < n; ++i) {
          const uint64_t k = 1000 + rng() % 900000;  // the cluster: every key a hit, a miss or a bound
          const uint64_t len = list % 3 == 0 ? rng() % 4 : list % 3 == 1 ? rng() % 100 : rng() % 3000;
          switch (rng() % 4) {
            case 0: q.push(OpType::Lookup, k); break;
            case 1: q.push(OpType::Successor, k); break;
            case 2: q.push(OpType::Count, k, k + len); break;
            default: q.push(OpType::Range, k, k + len); break;
          }
        }
        run_checked(*d, m, q);
      }
      // One key only: the sort is skipped (every key equal), the finger used.
      Batch same;
      for (int i = 0; i < 50; ++i) {
        same.push(OpType::Lookup, 1003);
        same.push(OpType::Range, 1003, 1003 + static_cast<uint64_t>(i) * 7);
      }
      run_checked(*d, m, same);
      // The one-pass output is sized from the keys' span and the tree's mean
      // density: ranges of up to 3000 keys on the dense cluster (the span
      // includes 0 and 0xFFFFFFFF) outgrew it and ran again.
      CHECK(extra_u64(*d, "range-reruns") > 0);
      require_sound(*d);
    }
  });
}

TEST_CASE("btree: several updates of one key in a phased batch: one of them wins") {
  for_each_kv([&] {
    // Both paths (auto merges this batch: 9,050 updates into 10,000 keys).
    for (const char* updates : {"merge", "ops"}) {
      CAPTURE(updates);
      auto d = make({{"phased-updates", updates}});
      DeviceTime t;
      d->build(spaced_keys(10000, 3, 0), t);
      Batch b;
      for (int i = 0; i < 3000; ++i) b.push(OpType::Insert, 300, 1000 + i % 5);  // present key
      for (int i = 0; i < 3000; ++i) b.push(OpType::Insert, 301, 2000 + i % 3);  // absent key
      for (int i = 0; i < 50; ++i) b.push(OpType::Delete, 301);
      for (int i = 0; i < 3000; ++i) b.push(OpType::Insert, 7777777, 5);
      BatchResults r;
      d->execute(b, r, t);
      Batch q;
      q.push(OpType::Lookup, 300);
      q.push(OpType::Lookup, 301);
      q.push(OpType::Lookup, 7777777);
      q.push(OpType::Lookup, 303);
      d->execute(q, r, t);
      CHECK(r.found[0] == 1);
      CHECK((r.value[0] >= 1000 && r.value[0] < 1005));
      CHECK((r.found[1] == 0 || (r.value[1] >= 2000 && r.value[1] < 2003)));
      CHECK(r.found[2] == 1);
      CHECK(r.value[2] == 5);
      CHECK(r.found[3] == 1);
      CHECK(r.value[3] == (303 ^ 0x5A5A5A5Aull));
      // Every other key is untouched: the whole tree is the model, with the
      // three updated keys as the rule allows.
      Model m = model_of(spaced_keys(10000, 3, 0));
      m[300] = r.value[0];
      if (r.found[1]) m[301] = r.value[1];
      m[7777777] = 5;
      require_whole_tree(*d, m);
      CHECK(d->stats().size == m.size());
      require_sound(*d);
    }
  });
}

TEST_CASE("btree: one hot key in a concurrent batch leaves every other key exact") {
  for_each_kv([&] {
    // Repeated: each seed another hot key and another interleaving.
    for (const char* tile : {"8", "32", "thread"})
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      if (wide() && seed > 2) break;  // 64-bit runs: two seeds
      CAPTURE(tile);
      CAPTURE(seed);
      const bool thread = std::string(tile) == "thread";
      auto d = make({{"tile", thread ? "32" : tile}, {"ops-kernel", thread ? "thread" : "tile"}});
      KeyValues kv = spaced_keys(50000, 7, 1);
      DeviceTime t;
      d->build(kv, t);
      Model m = model_of(kv);
      const uint64_t hot = kv.keys[(seed * 7919) % kv.size()];
      Batch b;
      b.mode = ExecMode::Concurrent;
      std::mt19937_64 rng(seed);
      std::vector<uint64_t> values;
      for (int i = 0; i < 20000; ++i) {
        const uint64_t r = rng() % 10;
        if (r < 4) {
          values.push_back(rng() & kVMax);
          b.push(OpType::Insert, hot, values.back());
        } else if (r < 5) {
          b.push(OpType::Delete, hot);
        } else {
          const uint64_t k = kv.keys[rng() % kv.size()] + (rng() % 2);
          if (k == hot) continue;
          if (r < 7) {
            b.push(OpType::Lookup, k);
          } else if (r < 8) {
            if (k + 7 >= hot && k < hot) continue;  // its answer could be the hot key
            b.push(OpType::Successor, k);
          } else {
            b.push(OpType::Count, k, k < hot && hot <= k + 200 ? hot - 1 : k + 200);
          }
        }
      }
      BatchResults r;
      d->execute(b, r, t);
      // Untouched keys: the exact pre-batch answers.
      Model pre = m;
      pre.erase(hot);
      Batch queries;
      BatchResults qr;
      qr.reset(0);
      for (size_t i = 0; i < b.size(); ++i) {
        if (is_update(b.types[i])) continue;
        queries.push(b.types[i], b.keys[i], b.args[i]);
        qr.found.push_back(r.found[i]);
        qr.value.push_back(r.value[i]);
        qr.key.push_back(r.key[i]);
      }
      const std::string err = compare(pre, queries, qr);
      INFO(err);
      CHECK(err.empty());
      // The hot key holds the effect of one of its updates.
      Batch q;
      q.push(OpType::Lookup, hot);
      d->execute(q, r, t);
      if (r.found[0]) CHECK(std::find(values.begin(), values.end(), r.value[0]) != values.end());
      require_sound(*d);
    }
  });
}

TEST_CASE("btree: a concurrent batch of one key (an unsorted list) with ranges and counts over untouched keys") {
  for_each_kv([&] {
    // Every operation's key is the same, so the list is not sorted (staged
    // order, no permutation): the ranges are picked from it as staged.
    // Repeated: each seed another key and another interleaving.
    for (const char* kernel : {"thread", "tile"})
      for (const char* words : {"on", "off"})
      for (uint64_t seed = 11; seed < 16; ++seed) {
        if (wide() && seed > 12) break;  // 64-bit runs: two seeds
        CAPTURE(kernel);
        CAPTURE(words);
        CAPTURE(seed);
        auto d = make({{"ops-kernel", kernel}, {"op-words", words}});
        const KeyValues kv = spaced_keys(20000, 5, 1);
        DeviceTime t;
        d->build(kv, t);
        const Model m = model_of(kv);
        const uint64_t hot = kv.keys[(seed * 1237) % 19000], hi = hot + 200;  // (hot, hi]: 40 keys no update touches
        std::vector<uint64_t> allowed = {m.at(hot)};
        std::vector<std::pair<uint64_t, uint64_t>> above;  // the pairs in (hot, hi]
        for (auto it = m.upper_bound(hot); it != m.end() && it->first <= hi; ++it) above.push_back(*it);
        Batch b;
        b.mode = ExecMode::Concurrent;
        std::mt19937_64 rng(seed);
        for (int i = 0; i < 6000; ++i) {
          switch (rng() % 6) {
            case 0: allowed.push_back(rng() & kVMax); b.push(OpType::Insert, hot, allowed.back()); break;
            case 1: b.push(OpType::Delete, hot); break;
            case 2: b.push(OpType::Lookup, hot); break;
            case 3: b.push(OpType::Count, hot, hi); break;
            case 4: b.push(OpType::Range, hot, hi); break;
            default: b.push(OpType::Successor, hot); break;
          }
        }
        BatchResults r;
        d->execute(b, r, t);
        auto ok_value = [&](uint64_t v) { return std::find(allowed.begin(), allowed.end(), v) != allowed.end(); };
        uint64_t ranges = 0;
        for (size_t i = 0; i < b.size(); ++i) {
          CAPTURE(i);
          switch (b.types[i]) {
            case OpType::Lookup:
              if (r.found[i]) CHECK(ok_value(r.value[i]));
              break;
            case OpType::Count: CHECK((r.value[i] == above.size() || r.value[i] == above.size() + 1)); break;
            case OpType::Successor:
              REQUIRE(r.found[i]);
              CHECK(r.key[i] == above.front().first);
              CHECK(r.value[i] == above.front().second);
              break;
            case OpType::Range: {
              ++ranges;
              const uint64_t off = r.key[i], cnt = r.value[i];
              REQUIRE((cnt == above.size() || cnt == above.size() + 1));
              REQUIRE(off + cnt <= r.range_keys.size());
              uint64_t x = off;
              if (cnt == above.size() + 1) {  // the hot key, first, with one of its values
                CHECK(r.range_keys[x] == hot);
                CHECK(ok_value(r.range_values[x]));
                ++x;
              }
              for (const auto& [k, v] : above) {
                CHECK(r.range_keys[x] == k);
                CHECK(r.range_values[x] == v);
                ++x;
              }
              break;
            }
            default: break;
          }
        }
        CHECK(ranges > 500);
        require_sound(*d);
        if (std::string(kernel) == "thread") CHECK(extra_u64(*d, "grouped-updates") > 0);  // a warp's update lanes share the leaf
      }
  });
}

TEST_CASE("btree: concurrent batches verified exactly, 50 seeds") {
  for_each_kv([&] {
    const std::string p = write_temp("concurrent.yaml", typed_yaml(kConcurrentMix));
    uint64_t late_ranges = 0;  // ranges answered after their batch (the "grow" phase overfills their room)
    uint64_t grouped = 0;      // updates applied for a leaf group of two or more lanes
    for (uint64_t seed = 1; seed <= (wide() ? 10u : 50u); ++seed) {
      CAPTURE(seed);
      auto d = make({{"tile", seed % 5 == 0 ? "32" : seed % 5 == 1 ? "16" : "8"},
                     {"ops-kernel", seed % 3 == 0 ? "tile" : "thread"},
                     {"op-words", (seed / 4) % 2 == 0 ? "on" : "off"},
                     {"leaf-groups", seed % 8 < 5 ? "on" : "off"},
                     {"sort", seed % 7 == 3 ? "off" : "on"},
                     {"query-tile", seed % 4 == 0 ? "8" : seed % 4 == 1 ? "4" : seed % 4 == 2 ? "1" : "0"}});
      require_verified(run_engine(p, *d, seed), "seed " + std::to_string(seed));
      require_sound(*d);
      late_ranges += extra_u64(*d, "concurrent-range-reruns");
      grouped += extra_u64(*d, "grouped-updates");
    }
    CHECK(late_ranges > 0);
    CHECK(grouped > 0);
    std::remove(p.c_str());
  });
}

TEST_CASE("btree: concurrent batches with the default options, 30 seeds") {
  for_each_kv([&] {
    // The configuration users get, repeated (the 50 seeds above vary it).
    const std::string p = write_temp("concurrent-default.yaml", typed_yaml(kConcurrentMix));
    for (uint64_t seed = 101; seed <= (wide() ? 105u : 130u); ++seed) {
      CAPTURE(seed);
      auto d = make();
      require_verified(run_engine(p, *d, seed), "seed " + std::to_string(seed));
      require_sound(*d);
    }
    std::remove(p.c_str());
  });
}

TEST_CASE("btree: concurrent batches at the key domain's ends") {
  for_each_kv([&] {
    // Keys 0, 1, 2 and 0xFFFFFFFD..0xFFFFFFFF are inserted, replaced and
    // deleted in one concurrent batch with every query type on them, among
    // thousands of updates of keys far from both ends. Each edge key has one
    // update, so an edge query's allowed answers are those of the 2^5 worlds
    // in which any subset of the edge updates is applied; the far updates never
    // touch the far keys next to the ends (the smallest and largest).
    const uint64_t kFarLo = 100000, kFarHi = kMax - 100000;
    for (const char* kernel : {"thread", "tile"})
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      if (wide() && seed > 3) break;  // 64-bit runs: three seeds
      CAPTURE(kernel);
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      KeyValues kv;
      for (uint64_t k : {uint64_t{0}, uint64_t{2}, kMax - 2, kMax}) {
        kv.keys.push_back(k);
        kv.values.push_back(rng() & kVMax);
      }
      std::set<uint64_t> far;
      while (far.size() < 30000) far.insert(kFarLo + rng() % (kFarHi - kFarLo));
      for (uint64_t k : far) {
        kv.keys.push_back(k);
        kv.values.push_back(rng() & kVMax);
      }
      auto d = make({{"ops-kernel", kernel}});
      DeviceTime t;
      d->build(kv, t);
      Model m = model_of(kv);
      // The edge updates, each key once; far updates of distinct keys.
      struct Edge { OpType type; uint64_t key, value; };
      const std::vector<Edge> edges = {{OpType::Insert, 1, rng() & kVMax}, {OpType::Insert, kMax - 1, kVMax},
                                       {OpType::Delete, 0, 0}, {OpType::Delete, kMax, 0},
                                       {OpType::Insert, 2, 0}};
      Batch b;
      b.mode = ExecMode::Concurrent;
      for (const Edge& e : edges) b.push(e.type, e.key, e.value);
      const uint64_t far_lo = *far.begin(), far_hi = *far.rbegin();
      std::set<uint64_t> touched;
      for (int i = 0; i < 8000; ++i) {
        // Half of them of built keys, half fresh; none at or beyond the far ends.
        uint64_t k = kFarLo + rng() % (kFarHi - kFarLo);
        if (rng() % 2) {
          auto it = far.lower_bound(k);
          if (it == far.end()) continue;
          k = *it;
        }
        if (k <= far_lo || k >= far_hi || !touched.insert(k).second) continue;
        if (rng() % 3 == 0) b.push(OpType::Delete, k); else b.push(OpType::Insert, k, rng() & kVMax);
      }
      const std::vector<uint64_t> probes = {0, 1, 2, 3, kMax - 3, kMax - 2, kMax - 1, kMax};
      const size_t first_query = b.size();
      for (uint64_t k : probes) {
        b.push(OpType::Lookup, k);
        b.push(OpType::Successor, k);
      }
      b.push(OpType::Count, 0, 3);
      b.push(OpType::Count, kMax - 3, kMax);
      b.push(OpType::Range, 0, 3);
      b.push(OpType::Range, kMax - 3, kMax);
      b.push(OpType::Range, 0, 0);
      b.push(OpType::Range, kMax, kMax);
      for (int i = 0; i < 2000; ++i) {  // far keys no update touches: exact
        const uint64_t k = kFarLo + rng() % (kFarHi - kFarLo);
        if (!touched.count(k)) b.push(OpType::Lookup, k);
      }
      // Shuffle, so that the edge operations land in different warps' lists.
      std::vector<size_t> order(b.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      Batch sb;
      sb.mode = ExecMode::Concurrent;
      std::vector<size_t> pos(b.size());
      for (size_t j = 0; j < order.size(); ++j) {
        sb.push(b.types[order[j]], b.keys[order[j]], b.args[order[j]]);
        pos[order[j]] = j;
      }
      BatchResults r;
      d->execute(sb, r, t);

      // The far updates, applied in every world (no edge query can see them).
      Model base = m;
      for (size_t i = edges.size(); i < first_query; ++i) {
        if (b.types[i] == OpType::Insert) base[b.keys[i]] = b.args[i];
        else base.erase(b.keys[i]);
      }
      std::vector<Model> worlds;
      for (unsigned mask = 0; mask < (1u << edges.size()); ++mask) {
        Model w = base;
        for (size_t e = 0; e < edges.size(); ++e)
          if (mask >> e & 1) {
            if (edges[e].type == OpType::Insert) w[edges[e].key] = edges[e].value;
            else w.erase(edges[e].key);
          }
        worlds.push_back(std::move(w));
      }
      // The answer of query i in world w, as the results arrays hold it.
      auto answer_matches = [&](const Model& w, size_t i, size_t j) {
        const uint64_t k = b.keys[i], a = b.args[i];
        switch (b.types[i]) {
          case OpType::Lookup: {
            auto it = w.find(k);
            return it == w.end() ? !r.found[j] : (r.found[j] && r.value[j] == it->second);
          }
          case OpType::Successor: {  // the smallest key strictly greater
            auto it = w.upper_bound(k);
            return it == w.end() ? !r.found[j] : (r.found[j] && r.key[j] == it->first && r.value[j] == it->second);
          }
          case OpType::Count: {
            uint64_t c = 0;
            for (auto it = w.lower_bound(k); it != w.end() && it->first <= a; ++it) ++c;
            return r.value[j] == c;
          }
          case OpType::Range: {
            uint64_t x = r.key[j];
            const uint64_t cnt = r.value[j];
            if (x + cnt > r.range_keys.size()) return false;
            uint64_t c = 0;
            for (auto it = w.lower_bound(k); it != w.end() && it->first <= a; ++it, ++x, ++c)
              if (c >= cnt || r.range_keys[x] != it->first || r.range_values[x] != it->second) return false;
            return c == cnt;
          }
          default: return false;
        }
      };
      uint64_t wrong = 0;
      for (size_t i = first_query; i < b.size(); ++i) {
        bool ok = false;
        for (const Model& w : worlds) ok = ok || answer_matches(w, i, pos[i]);
        if (!ok && wrong++ < 5)
          MESSAGE("query " << i << " (" << op_name(b.types[i]) << " " << b.keys[i] << ", " << b.args[i]
                            << ") matches no world");
      }
      CHECK(wrong == 0);
      // After the batch: every update applied, exactly.
      m = worlds.back();
      run_checked(*d, m, probe_batch(probes));
      require_whole_tree(*d, m);
      require_sound(*d);
    }
  });
}

TEST_CASE("btree racecheck: small concurrent mix") {
  for_each_kv([&] {
    const std::string p = write_temp("race.yaml", typed_yaml(R"(
seed: 2
initial: {count: 3000, keys: {distribution: uniform, min: 0, max: 20000}}
steps:
  - phase: {name: c, batches: 2, batch_size: 2048, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.35, delete: 0.15, lookup: 0.2, count: 0.1, range: 0.1, successor: 0.1},
            keys: {distribution: uniform, min: 0, max: 20000},
            range_length: {distribution: geometric, mean: 16}}
)"));
    for (const char* kernel : {"thread", "tile"}) {
      CAPTURE(kernel);
      auto d = make({{"ops-kernel", kernel}});
      require_verified(run_engine(p, *d, 2), "racecheck workload");
      require_sound(*d);
      auto w = make({{"ops-kernel", kernel}, {"op-words", "off"}});
      require_verified(run_engine(p, *w, 2), "racecheck workload, --op-words off");
      require_sound(*w);
      auto s = make({{"ops-kernel", kernel}, {"leaf-groups", "off"}});
      require_verified(run_engine(p, *s, 2), "racecheck workload, --leaf-groups off");
      require_sound(*s);
    }
    std::remove(p.c_str());
  }, false);
}

TEST_CASE("btree: leaf groups: a warp's updates of one leaf applied under one latch, verified exactly") {
  for_each_kv([&] {
    // About fifteen updates per leaf in each concurrent batch (the tree is
    // not much larger than the batch: Figure 5's hard case), inserts and
    // deletes of the same keys in one batch, leaves that overflow (the
    // leader's split, members going on alone), then queries. With
    // --leaf-groups on the groups must have applied updates; off, none.
    const std::string p = write_temp("groups.yaml", typed_yaml(R"(
seed: 9
initial: {count: 8000, keys: {distribution: uniform, min: 0, max: 40000}}
steps:
  - phase: {name: churn, batches: 3, batch_size: 12000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.5, delete: 0.5},
            keys: {distribution: uniform, min: 0, max: 40000}}
  - phase: {name: fill, batches: 2, batch_size: 16000, mode: concurrent, hit_ratio: 0.1,
            mix: {insert: 0.8, delete: 0.1, lookup: 0.05, range: 0.05},
            keys: {distribution: uniform, min: 0, max: 40000},
            range_length: {distribution: fixed, length: 8}}
  - phase: {name: hot, batches: 2, batch_size: 6000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.4, delete: 0.4, lookup: 0.1, successor: 0.1},
            keys: {distribution: uniform, min: 20000, max: 20040}}
  - phase: {name: check, batches: 1, batch_size: 20000, hit_ratio: 0.5,
            mix: {lookup: 0.4, count: 0.2, range: 0.2, successor: 0.2}}
)"));
    for (const char* groups : {"on", "off"})
      for (const char* words : {"on", "off"}) {
        CAPTURE(groups);
        CAPTURE(words);
        auto d = make({{"leaf-groups", groups}, {"op-words", words}});
        require_verified(run_engine(p, *d, 9), std::string("leaf groups ") + groups);
        require_sound(*d);
        if (std::string(groups) == "on")
          CHECK(extra_u64(*d, "grouped-updates") > 10000);
        else
          CHECK(extra_u64(*d, "grouped-updates") == 0);
      }
    std::remove(p.c_str());
  });
}

TEST_CASE("btree: leaf groups: updates that change nothing, beside real ones in the same leaves") {
  for_each_kv([&] {
    // Keys 0, 4, 8, ... (about ten to a leaf, as the bulk build fills them)
    // and, in each concurrent batch of distinct keys, every kind of update in
    // every leaf: upserts of the value a key holds and deletes of absent keys
    // (no change in the lane's own snapshot: it finishes without joining its
    // leaf's group), upserts of a new value, deletes of present keys and
    // inserts of new keys (the group's work, some overflowing the leaf). The
    // same batches run with groups off and in the tile kernel, which has no
    // groups. Exact: no key is updated twice in a batch, so the whole tree
    // must equal the model.
    for (const char* kernel : {"thread", "tile"})
      for (const char* groups : {"on", "off"}) {
        CAPTURE(kernel);
        CAPTURE(groups);
        auto d = make({{"ops-kernel", kernel}, {"leaf-groups", groups}});
        const KeyValues kv = spaced_keys(40000, 4, 0);
        DeviceTime t;
        d->build(kv, t);
        Model m = model_of(kv);
        std::mt19937_64 rng(17);
        for (int round = 0; round < 3; ++round) {
          Batch b;
          b.mode = ExecMode::Concurrent;
          for (uint64_t base = 0; base < 4 * 40000; base += 4) {
            const uint64_t r = rng() % 8;
            const auto held = m.find(base);
            if (r < 2 && held != m.end()) {
              b.push(OpType::Insert, base, held->second);  // the value it holds: no change
            } else if (r < 3) {
              b.push(OpType::Delete, base + 1 + rng() % 3);  // absent (unless inserted before): usually no change
            } else if (r < 4) {
              b.push(OpType::Insert, base, rng() & kVMax);
            } else if (r < 5) {
              b.push(OpType::Delete, base);
            } else if (r < 7) {
              b.push(OpType::Insert, base + 1 + rng() % 3, rng() & kVMax);
            }
          }
          run_checked(*d, m, b);
          require_whole_tree(*d, m);
          require_sound(*d);
        }
        if (std::string(kernel) == "thread" && std::string(groups) == "on")
          CHECK(extra_u64(*d, "grouped-updates") > 10000);
        else
          CHECK(extra_u64(*d, "grouped-updates") == 0);
      }
  });
}

// top_start for each key, on the device.
template <class Word>
__global__ void top_start_kernel(const btree::Node<Word>* top, const Word* keys, uint32_t* starts, uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) starts[i] = btree::top_start(top, keys[i]);
}

// A device copy of v (at least one element).
template <class T>
DeviceBuffer<T> device_copy(const std::vector<T>& v) {
  DeviceBuffer<T> b(std::max<size_t>(v.size(), 1), "test buffer");
  if (!v.empty()) copy_to_device(nullptr, b.data(), v.data(), v.size() * sizeof(T));
  return b;
}

// The top copy of a tree of `keys` keys (nodes of Word) with room for
// `budget` nodes, and top_start for probe keys against the host's walk.
template <class Word>
void check_top_copy(uint64_t keys, uint32_t budget) {
  using namespace gpudict::btree;
  auto d = make({{"fill", keys == 3000000 ? "0.5" : "0.7"}});
  KeyValues kv = spaced_keys(keys, 13, 2);
  DeviceTime t;
  d->build(kv, t);
  if (keys >= 20000) {  // uneven fill: inserts split some nodes
    Batch b;
    std::mt19937_64 rng(keys + budget);
    for (int i = 0; i < 20000; ++i) b.push(OpType::Insert, spread_key(rng, rng() & kMax), i);
    BatchResults r;
    d->execute(b, r, t);
  }
  std::vector<Node<Word>> nodes;
  TreeHeader h{};
  REQUIRE(dump_btree(*d, nodes, h));
  DeviceBuffer<Node<Word>> d_nodes = device_copy(nodes);
  DeviceBuffer<TreeHeader> d_hdr = device_copy(std::vector<TreeHeader>{h});
  DeviceBuffer<Node<Word>> d_top(std::max(budget, 1u), "test top copy");
  TreeRef<Word> ref;
  ref.nodes = d_nodes.data();
  ref.hdr = d_hdr.data();
  ref.capacity = nodes.size();
  launch_top_copy(ref, d_top.data(), budget, nullptr);
  std::vector<Word> probe = {0, 1, static_cast<Word>(kMax - 1), static_cast<Word>(kMax)};
  if (wide())
    for (uint64_t e : domain_ends(g_kv.key)) probe.push_back(static_cast<Word>(e));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 4000; ++i) probe.push_back(static_cast<Word>(spread_key(rng, rng() & kMax)));
  for (uint64_t i = 0; i < kv.size(); i += 97) probe.push_back(static_cast<Word>(kv.keys[i]));
  DeviceBuffer<Word> d_probe = device_copy(probe);
  const uint32_t n = static_cast<uint32_t>(probe.size());
  DeviceBuffer<uint32_t> d_starts(n, "test starts");
  top_start_kernel<Word><<<(n + 255) / 256, 256>>>(d_top.data(), d_probe.data(), d_starts.data(), n);
  GPUDICT_CHECK_LAUNCH("top_start_kernel");
  std::vector<uint32_t> starts(n);
  std::vector<Node<Word>> top(std::max(budget, 1u));
  copy_to_host(nullptr, starts.data(), d_starts.data(), n * sizeof(uint32_t));
  copy_to_host(nullptr, top.data(), d_top.data(), top.size() * sizeof(Node<Word>));

  // The levels from the root down, on the host (the tree is at rest).
  std::vector<std::vector<uint32_t>> levels = {{kRoot}};
  while (!meta_leaf(nodes[levels.back()[0]].w[kMetaWord])) {
    std::vector<uint32_t> next;
    for (uint32_t id : levels.back())
      for (uint32_t c = 0; c < meta_count(nodes[id].w[kMetaWord]); ++c)
        next.push_back(static_cast<uint32_t>(nodes[id].w[2 * c + 1]));
    levels.push_back(next);
  }
  // Whole inner levels, as many as fit with the header; never the leaves or their parents.
  uint64_t expect = 0, used = 1;
  if (budget >= 2)
    while (expect + 2 < levels.size() && used + levels[expect].size() <= budget) used += levels[expect++].size();
  const uint64_t copied = top[0].w[0];
  CHECK(copied == expect);
  if (keys == 3000000) CHECK((expect >= 2 && levels[expect - 2].size() > 1024));  // chunks of parents ran
  // Each key's start is the node of level `copied` on its path from the root.
  uint64_t wrong = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t id = kRoot;
    for (uint64_t l = 0; l < copied; ++l) {
      const Node<Word>& nd = nodes[id];
      uint32_t c = 0;
      while (c + 1 < meta_count(nd.w[kMetaWord]) && nd.w[2 * (c + 1)] <= probe[i]) ++c;
      id = static_cast<uint32_t>(nd.w[2 * c + 1]);
    }
    wrong += starts[i] != id;
  }
  CHECK(wrong == 0);
  require_sound(*d);
}

TEST_CASE("btree: the top copy holds whole upper levels and sends every key to the node that covers it") {
  // 3 M keys at fill 0.5 (7 children per node): a copied level of more than 1024 parents (the kernel's
  // block scan in chunks); 64-bit runs up to 300,000 keys.
  for_each_kv([&] {
    for (uint64_t keys : {0ull, 10ull, 200ull, 20000ull, 300000ull, 3000000ull})
      for (uint32_t budget : {0u, 1u, 2u, 3u, 12u, 40u, 500u, 16384u}) {
        if (keys == 3000000 && (budget != 16384 || wide())) continue;
        CAPTURE(keys);
        CAPTURE(budget);
        if (wide())
          check_top_copy<uint64_t>(keys, budget);
        else
          check_top_copy<uint32_t>(keys, budget);
      }
  });
}

TEST_CASE("btree: a fixed node pool that fills stops with exit 3 and says how to enlarge it") {
  for_each_kv([&] {
    {
      auto d = make({{"node-pool", "64"}});
      DeviceTime t;
      try {
        d->build(spaced_keys(100000, 3, 0), t);
        FAIL("no error");
      } catch (const RuntimeFailure& e) {
        CHECK(std::string(e.what()).rfind("out of device memory for B-Tree nodes: ", 0) == 0);
        CHECK(e.option() == "node_pool");  // the command line names --node-pool (cli_message)
      }
      require_sound(*d);  // refused before it changed the (empty) tree
      CHECK(d->stats().size == 0);
    }
    for (const char* updates : {"merge", "ops"}) {
      CAPTURE(updates);
      auto d = make({{"node-pool", "200"}, {"phased-updates", updates}});
      DeviceTime t;
      d->build(spaced_keys(1000, 1000, 0), t);
      // A batch that fits (merged updates: counted first, then written).
      Model m = model_of(spaced_keys(1000, 1000, 0));
      Batch small;
      for (uint64_t i = 0; i < 300; ++i) small.push(OpType::Insert, i * 3331 + 7, i);
      run_checked(*d, m, small);
      Batch b;
      for (uint64_t i = 0; i < 50000; ++i) b.push(OpType::Insert, i * 7 + 1, i);
      BatchResults r;
      try {
        d->execute(b, r, t);
        FAIL("no error");
      } catch (const RuntimeFailure& e) {
        CHECK(std::string(e.what()).rfind("out of device memory for B-Tree nodes: ", 0) == 0);
      }
      require_sound(*d);  // the abandoned inserts left the tree sound
      // Merged updates refuse before changing anything.
      if (std::string(updates) == "merge") run_checked(*d, m, probe_batch({8, 3338, 1000, 999000, 1000000}));
    }
    const std::string p = write_temp("pool.yaml", typed_yaml(R"(
seed: 1
initial: {count: 1000}
steps:
  - phase: {name: grow, batches: 2, batch_size: 100000, mix: {insert: 1.0}}
)"));
    const std::string cmd = "'" + gpudict::testing::gpudict_binary() + "' btree " + p +
                            " --backend gpu --node-pool 500 >/dev/null 2>" + p + ".err";
    const int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 3);
    const std::string err = gpudict::testing::slurp(p + ".err");
    CHECK(err.find("out of device memory for B-Tree nodes: ") != std::string::npos);
    CHECK(err.find("(command line: --node-pool)") != std::string::npos);
    std::remove(p.c_str());
    std::remove((p + ".err").c_str());
  });
}

TEST_CASE("btree: an automatic pool that cannot grow on a full device stops with the node-pool message") {
  for_each_kv([&] {
    for (const char* updates : {"merge", "ops"}) {
      CAPTURE(updates);
      auto d = make({{"phased-updates", updates}});
      DeviceTime t;
      const KeyValues kv = spaced_keys(1u << 22, 1000, 5);  // a pool of about 72 MB after the build
      d->build(kv, t);
      Model m = model_of(kv);
      // Inserts of fresh keys (odd: the built keys are 5 + 1000 i): the first
      // batch sizes every scratch buffer, then the device is filled so that
      // growing the pool (1.5 times, the old one still held) cannot succeed.
      uint64_t next = 1;
      auto fresh_batch = [&] {
        Batch b;
        for (int i = 0; i < (1 << 16); ++i, next += 2) b.push(OpType::Insert, next, next ^ 0x77u);
        return b;
      };
      run_checked(*d, m, fresh_batch());
      auto hog = gpudict::testing::fill_device(32ull << 20, "btree node pool on a full device");
      if (!hog) continue;
      std::string msg;
      for (int round = 0; round < 200 && msg.empty(); ++round) {
        const Batch b = fresh_batch();
        BatchResults r;
        msg = gpudict::testing::runtime_failure_of([&] {
          d->execute(b, r, t);
          apply_unique_updates(m, b);
        });
      }
      INFO(msg);
      CHECK(msg.rfind("out of device memory for B-Tree nodes: growing the pool of ", 0) == 0);
      CHECK(msg.find("could not be allocated: out of device memory: needs ") != std::string::npos);
      hog.reset();
      require_sound(*d);  // whatever the batch applied left the tree sound
      // Merged updates grow before they write; the operations kernel's
      // growth after a pass leaves that pass's inserts applied.
      if (std::string(updates) == "merge") CHECK(d->stats().size == m.size());
    }
  }, false);
}

TEST_CASE("btree: a bulk build that cannot get its pool on a full device leaves an empty, usable tree") {
  for_each_kv([&] {
    auto d = make();
    DeviceTime t;
    const KeyValues big = spaced_keys(1u << 23, 3, 1);  // a pool of about 135 MB
    d->build(big, t);                                   // sizes the build's staging and sort buffers
    d->build(spaced_keys(1000, 3, 1), t);               // a small tree: the pool shrinks
    require_sound(*d);
    // Room for the engine's staging of the pairs (the adapter's, freed after
    // the build) and 32 MiB: not for the pool.
    const uint64_t pair_bytes = g_kv.key == KeyType::U64 ? 16 : g_kv.value == KeyType::U64 ? 12 : 8;
    auto hog = gpudict::testing::fill_device(big.size() * pair_bytes + (32ull << 20),
                                             "btree bulk build on a full device");
    if (!hog) return;
    // The small pool is released first: a build replaces the contents.
    const std::string msg = gpudict::testing::runtime_failure_of([&] { d->build(big, t); });
    INFO(msg);
    CHECK(msg.rfind("out of device memory for B-Tree nodes: the bulk build of 8388608 keys", 0) == 0);
    hog.reset();
    // An empty tree in a first pool: sound, and it takes inserts and builds again.
    require_sound(*d);
    CHECK(d->stats().size == 0);
    Model m;
    Batch ins;
    for (uint64_t k = 0; k < 50000; ++k) ins.push(OpType::Insert, k * 77 + 5, k);
    run_checked(*d, m, ins);
    run_checked(*d, m, probe_batch({0, 5, 82, 77 * 49999 + 5, kMax}));
    require_sound(*d);
    d->build(big, t);
    CHECK(d->stats().size == big.size());
    require_sound(*d);
  });
}

TEST_CASE("btree: the automatic pool grows, also in the middle of a batch") {
  for_each_kv([&] {
    for (const char* updates : {"merge", "ops"}) {
    CAPTURE(updates);
    auto d = make({{"phased-updates", updates}});
    DeviceTime t;
    d->build(spaced_keys(2000, 1 << 20, 0), t);
    const uint64_t before = extra_u64(*d, "pool-nodes");
    Model m = model_of(spaced_keys(2000, 1 << 20, 0));
    std::mt19937_64 rng(5);
    {
      // Ascending new keys leave every leaf half full: more nodes than the
      // pool is grown by ahead of a batch, so the batch runs out and retries.
      Batch b;
      for (uint64_t i = 0; i < 400000; ++i) b.push(OpType::Insert, (1ull << 31) + i, i);
      run_checked(*d, m, b);
    }
    for (int round = 0; round < (wide() ? 1 : 2); ++round) {  // 64-bit runs: one random round
      Batch b;
      std::set<uint64_t> seen;
      for (int i = 0; i < 400000; ++i) {
        const uint64_t k = rng() & kMax;
        if (seen.insert(k).second && !m.count(k)) b.push(OpType::Insert, k, k + 1);
      }
      run_checked(*d, m, b);
    }
    CHECK(extra_u64(*d, "pool-nodes") > before);
    CHECK(extra_u64(*d, "pool-grows") > 0);
    // The operations kernel runs out inside the kernel and retries; merged
    // updates grow the pool level by level before writing, never retrying.
    if (std::string(updates) == "ops")
      CHECK(extra_u64(*d, "pool-retries") > 0);
    else
      CHECK(extra_u64(*d, "pool-retries") == 0);
    run_checked(*d, m, probe_batch({0, 1, 12345, kMax}));
    require_sound(*d);
    }
  }, false);
}

// Merged phased updates (merge_updates.cu): long runs into one node (an
// empty tree, ascending keys past the largest), splits that carry up through
// several levels, new roots, deletes that empty leaves, duplicates, tiny and
// full nodes, a batch of one.
TEST_CASE("btree: merged updates against the model: big segments, root splits, every fill") {
  for_each_kv([&] {
    for (const char* fill : {"0.05", "0.7", "1"}) {
      CAPTURE(fill);
      auto d = make({{"fill", fill}, {"phased-updates", "merge"}});
      Model m;
      // One batch into the empty tree: a single segment of 200000 keys, the
      // root pushed down level after level.
      Batch first;
      for (uint64_t i = 0; i < 200000; ++i) first.push(OpType::Insert, i * 5 + 3, i ^ 0xABCDu);
      run_checked(*d, m, first);
      CHECK(extra_u64(*d, "height") >= 3);
      require_sound(*d);
      // Ascending past the largest key, descending below the smallest, keys 0
      // and 0xFFFFFFFF.
      Batch edge;
      for (uint64_t i = 0; i < 50000; ++i) edge.push(OpType::Insert, 2000000 + i, i);
      edge.push(OpType::Insert, 0, kVMax);
      edge.push(OpType::Insert, 1, 0);
      edge.push(OpType::Insert, kMax, kVMax);
      edge.push(OpType::Insert, kMax - 1, 1);
      run_checked(*d, m, edge);
      require_sound(*d);
      // Deletes that empty whole stretches (and absent ones), then inserts back.
      Batch del;
      for (uint64_t i = 10000; i < 90000; ++i) del.push(OpType::Delete, i * 5 + 3);
      for (uint64_t i = 0; i < 1000; ++i) del.push(OpType::Delete, i * 5 + 4);  // absent
      del.push(OpType::Delete, kMax);
      run_checked(*d, m, del);
      require_sound(*d);
      std::mt19937_64 rng(std::string(fill).size());
      for (int round = 0; round < 4; ++round) {
        run_checked(*d, m, unique_updates(rng, 60000, 1200000));
        require_sound(*d);
      }
      Batch one;
      one.push(OpType::Insert, 77, 78);
      run_checked(*d, m, one);
      Batch q;
      q.push(OpType::Range, 0, kMax);
      q.push(OpType::Count, 0, kMax);
      q.push(OpType::Successor, 0);
      q.push(OpType::Successor, kMax - 1);
      run_checked(*d, m, q);
      run_checked(*d, m, probe_batch({0, 1, 2, 3, 77, 50003, 449998, 2000000, 2049999, kMax - 1, kMax}));
      require_sound(*d);
    }
  }, false);
}

TEST_CASE("btree: merged updates: duplicates in a batch, the last update of a key wins") {
  for_each_kv([&] {
    auto d = make({{"phased-updates", "merge"}});
    DeviceTime t;
    d->build(spaced_keys(20000, 3, 0), t);
    Model m = model_of(spaced_keys(20000, 3, 0));
    Batch b;
    // A hot present key: 5000 inserts, then one delete (deletes come after
    // inserts): deleted. A hot absent key inserted 5000 times: the last value.
    for (int i = 0; i < 5000; ++i) b.push(OpType::Insert, 300, 1000 + i);
    for (int i = 0; i < 5000; ++i) b.push(OpType::Insert, 301, 2000 + i);
    b.push(OpType::Delete, 300);
    // Runs of equal keys across the 16-position cuts of a long segment.
    for (uint64_t k = 100000; k < 100400; ++k)
      for (int r = 0; r < 1 + static_cast<int>(k % 19); ++r) b.push(OpType::Insert, k, k * 10 + r);
    m.erase(300);
    m[301] = 2000 + 4999;
    for (uint64_t k = 100000; k < 100400; ++k) m[k] = k * 10 + k % 19;
    BatchResults r;
    d->execute(b, r, t);
    REQUIRE(d->stats().size == m.size());
    run_checked(*d, m, probe_batch({299, 300, 301, 302, 100000, 100017, 100399, 100400}));
    Batch all;
    all.push(OpType::Range, 0, kMax);
    run_checked(*d, m, all);
    require_sound(*d);
  });
}

TEST_CASE("btree: stats describe the tree") {
  for_each_kv([&] {
    auto d = make({{"fill", "0.5"}});
    DeviceTime t;
    d->build(spaced_keys(70000, 2, 0), t);  // 7 keys per leaf: 10000 leaves
    CHECK(d->stats().size == 70000);
    CHECK(extra_u64(*d, "leaves") == 10000);
    CHECK(extra(*d, "fill") == "0.500");
    CHECK(extra_u64(*d, "height") == 6);  // 10000, 1429, 205, 30, 5, 1
    CHECK(extra_u64(*d, "node-bytes") == extra_u64(*d, "nodes") * (wide() ? 256 : 128));
    require_sound(*d);
  });
}

// Update batches of alternating sizes on one tree: CUB sorts a short list
// in a single tile and leaves it in the other buffer than its onesweep
// passes do; the update sort's cached CUDA graphs must each remember where
// their own output is (a shared record once read a large batch's sort from
// the wrong buffer after a small batch: the tree was corrupted).
TEST_CASE("btree: merged update batches of alternating sizes reuse cached sort graphs") {
  for_each_kv([&] {
    auto d = make({{"phased-updates", "merge"}});
    DeviceTime t;
    const KeyValues initial = spaced_keys(200000, 7, 1);
    d->build(initial, t);
    Model m = model_of(initial);
    std::mt19937_64 rng(4242);
    for (const int size : {40000, 1000, 40000, 3, 40000, 2, 5000, 40000, 1000, 40000}) {
      CAPTURE(size);
      run_checked(*d, m, unique_updates(rng, size, 3000000));
      run_checked(*d, m, probe_batch({0, 1, 7, 8, 1000001, 2999999, 3000000, kMax}));
    }
    Batch all;
    all.push(OpType::Range, 0, kMax);
    run_checked(*d, m, all);
    require_sound(*d);
  });
}

// --phased-updates auto (the default): phased lists of at most 131072
// updates into a tree of at least 16 times as many keys run in the thread
// operations kernel, the others are merged; with --ops-kernel tile every
// list is merged; merge and ops as asked. The stats count the lists each
// path served; every batch is checked against the model (unique keys: both
// paths must give the same tree) and the tree by the structural checker.
TEST_CASE("btree: --phased-updates auto picks the operations kernel for small lists, the merge for large ones") {
  for_each_kv([&] {
    for (const char* mode : {"auto", "auto-tile", "merge", "ops"}) {
      if (wide() && std::string(mode) != "auto") continue;  // 64-bit runs: the default path only
      CAPTURE(mode);
      const std::string which = mode;
      const bool tile = which == "auto-tile";
      auto expect_merged = [&](uint64_t updates, uint64_t keys) {
        if (which == "merge" || tile) return true;
        if (which == "ops") return false;
        return updates > 131072 || updates * 16 > keys;
      };
      uint64_t merged = 0, ops = 0;
      // Each limit exactly and one past it, on fresh trees, and a batch of one:
      // a large tree (2.2 M keys: 131072 updates are less than a sixteenth),
      // then 16000 keys with exactly a sixteenth (1000) and one more (1001).
      struct Run {
        uint64_t tree_keys;
        std::vector<int> sizes;
      };
      for (const Run& run : {Run{2200000, {131072, 131073, 1}}, Run{16000, {1000}}, Run{16000, {1001}}}) {
        const uint64_t tree_keys = run.tree_keys;
        CAPTURE(tree_keys);
        auto d = make({{"phased-updates", tile ? "auto" : mode}, {"ops-kernel", tile ? "tile" : "thread"}});
        DeviceTime t;
        const KeyValues initial = spaced_keys(tree_keys, 3, 5);
        d->build(initial, t);
        Model m = model_of(initial);
        std::mt19937_64 rng(99);
        uint64_t local_merged = 0, local_ops = 0;
        for (const int size : run.sizes) {
          CAPTURE(size);
          const bool want = expect_merged(size, d->stats().size);
          run_checked(*d, m, unique_updates(rng, size, 8000000));
          (want ? local_merged : local_ops) += 1;
          CHECK(extra_u64(*d, "merged-update-lists") == local_merged);
          CHECK(extra_u64(*d, "ops-update-lists") == local_ops);
          require_sound(*d);
        }
        // A concurrent batch is neither: it always runs in the operations kernel.
        Batch b = unique_updates(rng, 1000, 8000000);
        b.mode = ExecMode::Concurrent;
        run_checked(*d, m, b);
        CHECK(extra_u64(*d, "merged-update-lists") == local_merged);
        CHECK(extra_u64(*d, "ops-update-lists") == local_ops);
        run_checked(*d, m, probe_batch({0, 5, 16, 3300000, 7999999, kMax}));
        require_sound(*d);
        merged += local_merged;
        ops += local_ops;
      }
      // Under auto: merged one past each limit, the operations kernel at them and for the batch of one.
      if (which == "auto") CHECK((merged == 2 && ops == 3));
    }
  }, false);
}

// Phased lookups and successors of a bulk-built tree find their leaf in the
// leaf directory (core/btree/detail/leaf_directory.cuh), unsorted; the leaves
// split since the build are reached by B-link moves (counts, checked too,
// descend from the root). 10,715 full leaves (--fill 1): the directory has
// a level below its top, and every insert splits; an ascending run into
// the last leaf splits it again and again, so its directory entry sits
// hundreds of links left of those keys (queries there start again from
// the root); deletes empty whole leaves. Against the model, with the
// directory on and off, every update path.
TEST_CASE("btree: leaf directory: point queries through it across splits, empty leaves and the key domain's ends") {
  for_each_kv([&] {
    for (const char* updates : {"merge", "ops", "ops-tile"})
      for (const char* directory : {"on", "off"}) {
        CAPTURE(updates);
        CAPTURE(directory);
        // A 64-bit tree has no directory (leaf_directory.cuh): the queries descend from the root.
      const bool on = std::string(directory) == "on" && !wide();
        // ops-tile: the paper's kernel splits the leaves (tiles of 32 lanes).
        const bool tile = std::string(updates) == "ops-tile";
        auto d = make({{"fill", "1"},
                       {"phased-updates", tile ? "ops" : updates},
                       {"ops-kernel", tile ? "tile" : "thread"},
                       {"leaf-directory", directory}});
        DeviceTime t;
        // Keys 1000, 1010, ... (14 per leaf) and the domain's ends.
        const KeyValues initial = with_domain_ends(spaced_keys(150000, 10, 1000), 7, 9);
        d->build(initial, t);
        Model m = model_of(initial);
        CHECK(extra_u64(*d, "directory-leaves") == (on ? extra_u64(*d, "leaves") : 0));
        std::mt19937_64 rng(77);
        // Random inserts between the keys: every leaf they reach splits.
        std::set<uint64_t> seen;  // keys inserted between the initial ones: each once (an exact model)
        auto spread = [&](int inserts) {
          Batch b;
          for (int i = 0; i < inserts; ++i) {
            const uint64_t k = 1000 + 10 * (rng() % 150000) + 1 + rng() % 9;
            if (seen.insert(k).second) b.push(OpType::Insert, k, rng() & kVMax);
          }
          run_checked(*d, m, b);
        };
        spread(3000);
        // An ascending run into the range of one leaf: 3000 keys above all but
        // 0xFFFFFFFF, so all in the last leaf, which splits again and again.
        for (int round = 0; round < 3; ++round) {
          Batch run;
          for (uint64_t i = 0; i < 1000; ++i) run.push(OpType::Insert, (500001ull << 12) + round * 1000 + i, i);
          run_checked(*d, m, run);
        }
        // Deletes that empty every leaf of a stretch of keys.
        Batch del;
        for (uint64_t k = 200000; k < 260000; k += 10) del.push(OpType::Delete, k);
        run_checked(*d, m, del);
        // Queries everywhere: random keys, the run (hundreds of moves behind
        // its entry: answered from the root), the emptied stretch, the ends.
        auto queries = [&] {
          Batch q;
          for (int i = 0; i < 40000; ++i) {
            const uint64_t k = rng() % 8 == 0 ? (500001ull << 12) + rng() % 3100 : rng() % 1600000;
            switch (rng() % 3) {
              case 0: q.push(OpType::Lookup, k); break;
              case 1: q.push(OpType::Successor, k); break;
              default: q.push(OpType::Count, k, std::min<uint64_t>(kMax, k + rng() % 5000)); break;
            }
          }
          run_checked(*d, m, q);
          run_checked(*d, m, probe_batch({0, 1, 999, 1000, 200000, 229990, 259990, 500001ull << 12,
                                          (500001ull << 12) + 2999, 1500990, 1501000, kMax - 1, kMax}));
        };
        queries();
        const uint64_t lists = extra_u64(*d, "directory-lists");
        CHECK((lists > 0) == on);
        // Past half again as many leaves as the build made, the directory is
        // no longer used (sorted lists from the root), and the answers hold.
        spread(6000);
        CHECK(2 * extra_u64(*d, "leaves") > 3 * extra_u64(*d, "directory-leaves"));
        queries();
        CHECK(extra_u64(*d, "directory-lists") == lists);
        require_sound(*d);
        // A new bulk build makes a new directory; an empty build and a tree of
        // one leaf (the root) have none, and their queries still answer.
        const KeyValues small = spaced_keys(10, 3, 5);
        d->build(small, t);
        Model ms = model_of(small);
        CHECK(extra_u64(*d, "directory-leaves") == 0);
        run_checked(*d, ms, probe_batch({0, 5, 6, 32, 33, kMax}));
        d->build(KeyValues{}, t);
        Model empty;
        CHECK(extra_u64(*d, "directory-leaves") == 0);
        run_checked(*d, empty, probe_batch({0, 5, kMax}));
        d->build(initial, t);
        Model again = model_of(initial);
        CHECK(extra_u64(*d, "directory-leaves") == (on ? extra_u64(*d, "leaves") : 0));
        run_checked(*d, again, probe_batch({0, 1000, 1005, 1500990, kMax}));
        require_sound(*d);
      }
  });
}
