// The slab hash (Ashkiani et al., IPDPS 2018) in every mode and at every
// (key, value) width (u32/u32 first, then u32/u64 and u64/u64:
// gpu/model_compare.hpp's all_kv_widths) against a model of its semantics
// (docs/semantics.md, hash structures): phased batches exactly (several
// updates of one key in a map/set batch: any one of them, read back and then
// exact), concurrent batches by their allowed outcomes (untouched keys exact,
// touched keys within their sets), the engine with the verifier, the
// adversarial cases of the issue (one bucket, keys and values 0 and
// 0xFFFFFFFF, duplicates, hot keys inserted and deleted concurrently again and
// again with no key ever stored twice, flush between batches, pool
// exhaustion), and after every case the host-side table checker
// (core/slabhash/detail/inspect.hpp: chains, prefix of claimed slots, bitmaps,
// pristine free slabs, uniqueness), itself shown to catch each kind of
// corruption of a copy of a table, in every layout. The largest cases run in
// full at u32/u32 and smaller at the wider widths; the domain ends of each
// width (0, 1, 2^31, 2^32-1, 2^32, 2^63, 2^64-2, 2^64-1) are keys and values
// of a case of their own.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "../cli_helpers.hpp"
#include "borrowed_dictionary.hpp"
#include "memory_hog.hpp"
#include "model_compare.hpp"
#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "workloads/registry/structures.hpp"
#include "core/common/errors.hpp"
#include "slabhash_inspect.hpp"
#include "core/slabhash/options.hpp"
#include "core/slabhash/detail/slab_layout.cuh"
#include "workloads/adapter/structures.hpp"
#include "workloads/replay.hpp"
#include "workloads/workload.hpp"

using namespace gpudict;
using gpudict::testing::all_kv_widths;
using gpudict::testing::domain_ends;
using gpudict::testing::kv_label;
using gpudict::testing::KvWidths;

namespace {

constexpr uint64_t kMax = 0xFFFFFFFFull;  // the largest u32 key and value
using Opts = std::map<std::string, std::string>;

enum class M { Map, Multi, Set };
const char* mode_arg(M m) { return m == M::Map ? "map" : m == M::Multi ? "multimap" : "set"; }

const KvWidths kU32U32{KeyType::U32, KeyType::U32};
const KvWidths kU64U64{KeyType::U64, KeyType::U64};
bool wide(KvWidths w) { return w.key == KeyType::U64 || w.value == KeyType::U64; }

std::unique_ptr<Dictionary> make(M m, const Opts& extra = {}, KvWidths w = {}) {
  StructureConfig c;
  for (const auto& o : slabhash_option_specs()) c.options[o.name] = o.default_value;
  c.options["mode"] = mode_arg(m);
  for (const auto& [k, v] : extra) c.options[k] = v;
  c.key_type = w.key;
  c.value_type = w.value;
  return make_slabhash(c);
}

// A test key below 2^32 at width w: itself for u32 keys; for u64 keys the
// same low half under a high half derived from it (never 0 or all ones), so
// distinct keys stay distinct and every one is above 2^32.
uint64_t lift(KvWidths w, uint64_t k) {
  if (w.key == KeyType::U32) return k;
  const uint64_t hi = ((k * 0x9E3779B1ull) & 0x7FFFFFFFull) | 1u;
  return (hi << 32) | (k & kMax);
}
// A test value below 2^32 at width w: itself, or with a high half for u64.
uint64_t lift_value(KvWidths w, uint64_t v) { return w.value == KeyType::U32 ? v : v | (0xA5A5A5A5ull << 32); }

// key -> its values (map/set: at most one; set: the value is 0).
using Model = std::map<uint64_t, std::multiset<uint64_t>>;

uint64_t model_pairs(const Model& m) {
  uint64_t n = 0;
  for (const auto& kv : m) n += kv.second.size();
  return n;
}

// The table's alive pairs (the checker's copy) must be the model's, and every
// invariant must hold.
void check_table_equals(const Dictionary& d, const Model& m, M mode) {
  const slabhash::TableCheck c = slabhash::check_table(d);
  INFO("table check: " << c.error);
  REQUIRE(c.error.empty());
  Model got;
  for (const auto& [k, v] : c.pairs) got[k].insert(mode == M::Set ? 0 : v);
  REQUIRE(got.size() == m.size());
  auto it = got.begin();
  for (const auto& kv : m) {
    INFO("key " << kv.first);
    REQUIRE(it->first == kv.first);
    REQUIRE(it->second == kv.second);
    ++it;
  }
  CHECK(d.stats().size == model_pairs(m));
}

std::string extra(const Dictionary& d, const std::string& name) {
  for (const auto& kv : d.stats().extra)
    if (kv.first == name) return kv.second;
  return "<missing " + name + ">";
}

// Results of the queries of `b` against the state `m` (phased: exact).
std::string compare(const Model& m, M mode, const Batch& b, const BatchResults& r) {
  std::ostringstream err;
  int bad = 0;
  auto fail = [&](size_t i, const std::string& what) {
    if (bad++ < 5) err << "op " << i << " (" << op_name(b.types[i]) << " " << b.keys[i] << "): " << what << "\n";
  };
  for (size_t i = 0; i < b.size(); ++i) {
    const uint64_t k = b.keys[i];
    auto it = m.find(k);
    const std::multiset<uint64_t> none;
    const std::multiset<uint64_t>& vals = it == m.end() ? none : it->second;
    switch (b.types[i]) {
      case OpType::Lookup:
        if (r.found[i] != (vals.empty() ? 0 : 1))
          fail(i, "found " + std::to_string(r.found[i]));
        else if (!vals.empty() && !vals.count(r.value[i]))
          fail(i, "value " + std::to_string(r.value[i]) + " is not one of the key's");
        break;
      case OpType::Count:
        if (r.value[i] != vals.size())
          fail(i, "count " + std::to_string(r.value[i]) + " expected " + std::to_string(vals.size()));
        break;
      case OpType::Range: {
        if (r.value[i] != vals.size()) {
          fail(i, "range of " + std::to_string(r.value[i]) + " expected " + std::to_string(vals.size()));
          break;
        }
        if (r.key[i] + r.value[i] > r.range_keys.size() || r.range_keys.size() != r.range_values.size()) {
          fail(i, "range pairs outside the arrays");
          break;
        }
        std::multiset<uint64_t> got;
        for (uint64_t j = r.key[i]; j < r.key[i] + r.value[i]; ++j) {
          if (r.range_keys[j] != k) fail(i, "range key " + std::to_string(r.range_keys[j]));
          got.insert(r.range_values[j]);
        }
        if (got != vals) fail(i, "range values differ");
        break;
      }
      default: break;
    }
  }
  (void)mode;
  if (bad > 5) err << "... " << bad << " mismatches\n";
  return err.str();
}

// Applies a phased batch's updates to the model by the mode's rule. Map/set
// keys with several updates (AnyUpdate: any one of them) are returned with
// their allowed outcomes (nullopt = absent) and left out of the model.
std::map<uint64_t, std::vector<std::optional<uint64_t>>> apply_phased(Model& m, M mode, const Batch& b) {
  std::map<uint64_t, std::vector<std::pair<OpType, uint64_t>>> upd;
  for (size_t i = 0; i < b.size(); ++i)
    if (is_update(b.types[i])) upd[b.keys[i]].push_back({b.types[i], mode == M::Set ? 0 : b.args[i]});
  std::map<uint64_t, std::vector<std::optional<uint64_t>>> amb;
  for (const auto& [k, ups] : upd) {
    if (mode == M::Multi) {  // DeletesThenInserts
      bool del = false;
      for (const auto& u : ups) del |= u.first == OpType::Delete;
      if (del) m.erase(k);
      for (const auto& u : ups)
        if (u.first == OpType::Insert) m[k].insert(u.second);
      continue;
    }
    std::vector<std::optional<uint64_t>> outs;
    for (const auto& u : ups) outs.push_back(u.first == OpType::Insert ? std::optional<uint64_t>(u.second) : std::nullopt);
    m.erase(k);
    if (ups.size() == 1 || std::all_of(outs.begin(), outs.end(), [&](const auto& o) { return o == outs[0]; })) {
      if (outs[0]) m[k].insert(*outs[0]);
    } else {
      amb[k] = outs;
    }
  }
  return amb;
}

BatchResults run(Dictionary& d, const Batch& b) {
  BatchResults r;
  DeviceTime t;
  d.execute(b, r, t);
  return r;
}

// Looks the keys up and settles them in the model (each within its allowed
// outcomes).
void settle(Dictionary& d, Model& m, M mode, const std::map<uint64_t, std::vector<std::optional<uint64_t>>>& amb) {
  if (amb.empty()) return;
  Batch probe;
  for (const auto& kv : amb) probe.push(OpType::Lookup, kv.first);
  const BatchResults r = run(d, probe);
  size_t i = 0;
  for (const auto& kv : amb) {
    const uint64_t k = kv.first;
    const auto& outs = kv.second;
    const std::optional<uint64_t> got = r.found[i] ? std::optional<uint64_t>(mode == M::Set ? 0 : r.value[i]) : std::nullopt;
    INFO("key " << k << " after a batch with several updates of it");
    REQUIRE(std::find(outs.begin(), outs.end(), got) != outs.end());
    if (got) m[k].insert(*got);
    ++i;
  }
}

// A phased batch: updates by the rule, queries exact.
void run_phased(Dictionary& d, Model& m, M mode, const Batch& b) {
  const auto amb = apply_phased(m, mode, b);
  const BatchResults r = run(d, b);
  settle(d, m, mode, amb);
  const std::string err = compare(m, mode, b, r);
  INFO(err);
  REQUIRE(err.empty());
}

// A random batch over [0, domain) plus the edge keys of the width; queries
// of one key. With u64 keys half the keys get a high half of {1, 2^31,
// 2^32-1}, so keys equal in their low 32 bits meet in a batch; values are
// of the value width (0 and its largest value among them).
Batch random_batch(std::mt19937_64& rng, size_t n, uint64_t domain, ExecMode exec, double del = 0.15,
                   KvWidths w = {}) {
  Batch b;
  b.mode = exec;
  const uint64_t kmax = max_of(w.key), vmax = max_of(w.value);
  const uint64_t edges[] = {0, 1, kmax, kmax - 1};
  static constexpr uint64_t kHigh[] = {1, 1ull << 31, kMax};
  for (size_t i = 0; i < n; ++i) {
    uint64_t k = rng() % 13 == 0 ? edges[rng() % 4] : rng() % domain;
    if (w.key == KeyType::U64 && k < kmax - 1 && rng() % 2) k |= kHigh[rng() % 3] << 32;
    const double u = static_cast<double>(rng() % 1000) / 1000.0;
    const uint64_t v = rng() % 8 == 0 ? 0 : rng() % 8 == 0 ? vmax : (rng() & vmax);
    if (u < 0.35)
      b.push(OpType::Insert, k, v);
    else if (u < 0.35 + del)
      b.push(OpType::Delete, k);
    else if (u < 0.75)
      b.push(OpType::Lookup, k);
    else if (u < 0.87)
      b.push(OpType::Count, k, k);
    else
      b.push(OpType::Range, k, k);
  }
  return b;
}

// Every key the model or a domain holds, queried every way (with u64 keys
// also each domain key with a high half of 1: absent unless inserted).
Batch probe_all(const Model& m, uint64_t domain, KvWidths w = {}) {
  Batch b;
  std::set<uint64_t> keys;
  const uint64_t kmax = max_of(w.key);
  for (const auto& kv : m) keys.insert(kv.first);
  for (uint64_t k = 0; k < domain; k += std::max<uint64_t>(1, domain / 4096)) {
    keys.insert(k);
    if (w.key == KeyType::U64) keys.insert(k | (1ull << 32));
  }
  for (uint64_t k : {uint64_t{0}, uint64_t{1}, kmax - 1, kmax}) keys.insert(k);
  for (uint64_t k : keys) {
    b.push(OpType::Lookup, k);
    b.push(OpType::Count, k, k);
    b.push(OpType::Range, k, k);
  }
  return b;
}

void check_probe(Dictionary& d, const Model& m, M mode, uint64_t domain, KvWidths w = {}) {
  const Batch p = probe_all(m, domain, w);
  const BatchResults r = run(d, p);
  const std::string err = compare(m, mode, p, r);
  INFO(err);
  REQUIRE(err.empty());
}

// ---- concurrent batches: the allowed outcomes (docs/semantics.md) ----

struct Touch {
  std::multiset<uint64_t> inserted;
  std::vector<std::optional<uint64_t>> effects;  // map/set: each update's effect
  bool deleted = false;
};

std::map<uint64_t, Touch> touches(const Batch& b, M mode) {
  std::map<uint64_t, Touch> t;
  for (size_t i = 0; i < b.size(); ++i) {
    if (!is_update(b.types[i])) continue;
    Touch& x = t[b.keys[i]];
    if (b.types[i] == OpType::Insert) {
      const uint64_t v = mode == M::Set ? 0 : b.args[i];
      x.inserted.insert(v);
      x.effects.push_back(v);
    } else {
      x.deleted = true;
      x.effects.push_back(std::nullopt);
    }
  }
  return t;
}

bool submultiset(const std::multiset<uint64_t>& a, const std::multiset<uint64_t>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

// Checks the queries of a concurrent batch run on `pre`, then replaces the
// model by the table's state after checking that every key holds what the
// rules allow (untouched: exactly its pre-batch state).
void run_concurrent(Dictionary& d, Model& m, M mode, const Batch& b) {
  const auto tk = touches(b, mode);
  const BatchResults r = run(d, b);
  std::ostringstream err;
  int bad = 0;
  auto fail = [&](size_t i, const std::string& what) {
    if (bad++ < 5) err << "op " << i << " (" << op_name(b.types[i]) << " " << b.keys[i] << "): " << what << "\n";
  };
  const std::multiset<uint64_t> none;
  for (size_t i = 0; i < b.size(); ++i) {
    if (is_update(b.types[i])) continue;
    const uint64_t k = b.keys[i];
    auto pit = m.find(k);
    const std::multiset<uint64_t>& pre = pit == m.end() ? none : pit->second;
    auto tit = tk.find(k);
    std::multiset<uint64_t> got;
    if (b.types[i] == OpType::Range) {
      if (r.key[i] + r.value[i] > r.range_values.size()) {
        fail(i, "range pairs outside the arrays");
        continue;
      }
      for (uint64_t j = r.key[i]; j < r.key[i] + r.value[i]; ++j) {
        if (r.range_keys[j] != k) fail(i, "range key " + std::to_string(r.range_keys[j]));
        got.insert(r.range_values[j]);
      }
    }
    if (tit == tk.end()) {  // untouched: exact
      if (b.types[i] == OpType::Lookup) {
        if (r.found[i] != (pre.empty() ? 0 : 1) || (!pre.empty() && !pre.count(r.value[i])))
          fail(i, "untouched key: found " + std::to_string(r.found[i]) + " value " + std::to_string(r.value[i]));
      } else if (b.types[i] == OpType::Count) {
        if (r.value[i] != pre.size()) fail(i, "untouched key: count " + std::to_string(r.value[i]));
      } else if (got != pre) {
        fail(i, "untouched key: range differs");
      }
      continue;
    }
    const Touch& t = tit->second;
    if (mode == M::Multi) {
      std::multiset<uint64_t> all = pre;
      all.insert(t.inserted.begin(), t.inserted.end());
      if (b.types[i] == OpType::Lookup) {
        if (r.found[i] && !all.count(r.value[i])) fail(i, "value " + std::to_string(r.value[i]) + " not in P + I");
      } else if (b.types[i] == OpType::Count) {
        const uint64_t lo = t.deleted ? 0 : pre.size(), hi = pre.size() + t.inserted.size();
        if (r.value[i] < lo || r.value[i] > hi) fail(i, "count " + std::to_string(r.value[i]) + " outside bounds");
      } else {
        if (!submultiset(got, all)) fail(i, "range not a sub-multiset of P + I");
        if (!t.deleted && !submultiset(pre, got)) fail(i, "range misses pre-batch pairs");
      }
    } else {
      // map/set: the pre-batch state or any update's effect.
      std::vector<std::optional<uint64_t>> allowed = t.effects;
      allowed.push_back(pre.empty() ? std::nullopt : std::optional<uint64_t>(*pre.begin()));
      auto ok = [&](const std::optional<uint64_t>& s) {
        return std::find(allowed.begin(), allowed.end(), s) != allowed.end();
      };
      if (b.types[i] == OpType::Lookup) {
        const std::optional<uint64_t> s = r.found[i] ? std::optional<uint64_t>(r.value[i]) : std::nullopt;
        if (!ok(s)) fail(i, "lookup outcome not allowed");
      } else if (b.types[i] == OpType::Count) {
        bool any = false;
        for (const auto& s : allowed) any |= (s ? 1u : 0u) == r.value[i];
        if (!any) fail(i, "count " + std::to_string(r.value[i]) + " not allowed");
      } else {
        const std::optional<uint64_t> s = got.empty() ? std::nullopt : std::optional<uint64_t>(*got.begin());
        if (got.size() > 1 || !ok(s)) fail(i, "range outcome not allowed");
      }
    }
  }
  INFO(err.str());
  REQUIRE(bad == 0);

  // After the batch: the table's state, key by key.
  const slabhash::TableCheck c = slabhash::check_table(d);
  INFO("table check: " << c.error);
  REQUIRE(c.error.empty());
  Model after;
  for (const auto& [k, v] : c.pairs) after[k].insert(mode == M::Set ? 0 : v);
  std::set<uint64_t> keys;
  for (const auto& kv : m) keys.insert(kv.first);
  for (const auto& kv : after) keys.insert(kv.first);
  for (uint64_t k : keys) {
    auto pit = m.find(k);
    auto ait = after.find(k);
    const std::multiset<uint64_t>& pre = pit == m.end() ? none : pit->second;
    const std::multiset<uint64_t>& now = ait == after.end() ? none : ait->second;
    auto tit = tk.find(k);
    INFO("key " << k);
    if (tit == tk.end()) {
      REQUIRE(now == pre);
      continue;
    }
    const Touch& t = tit->second;
    if (mode == M::Multi) {
      if (!t.deleted) {
        std::multiset<uint64_t> all = pre;
        all.insert(t.inserted.begin(), t.inserted.end());
        REQUIRE(now == all);
      } else {
        REQUIRE(submultiset(now, t.inserted));
      }
    } else {
      REQUIRE(now.size() <= 1);
      const std::optional<uint64_t> s = now.empty() ? std::nullopt : std::optional<uint64_t>(*now.begin());
      REQUIRE(std::find(t.effects.begin(), t.effects.end(), s) != t.effects.end());
    }
  }
  m = after;
  CHECK(d.stats().size == model_pairs(m));
}

// After a batch that inserted each of `keys` once (value k & 0xFFFF) and ran
// out of slab memory: the table is intact and holds a part of the batch's
// pairs, each at most once (an insert that found no slab wrote nothing, and
// none ran twice, so even a multimap holds each key at most once), and
// stats().size, the alive pairs (map/set: keys) the kernels counted, the
// failed pass included, is their number.
void check_survivors(const Dictionary& d, M mode, const std::vector<uint64_t>& keys,
                     const std::function<uint64_t(uint64_t)>& v_of = [](uint64_t k) { return k & 0xFFFF; }) {
  const slabhash::TableCheck c = slabhash::check_table(d);
  INFO("table check: " << c.error);
  REQUIRE(c.error.empty());
  const std::set<uint64_t> inserted(keys.begin(), keys.end());
  std::set<uint64_t> seen;
  int bad = 0;
  std::ostringstream err;
  for (const auto& [k, v] : c.pairs) {
    const uint64_t want = mode == M::Set ? 0 : v_of(k);
    const bool ok = inserted.count(k) && v == want && seen.insert(k).second;
    if (!ok && bad++ < 5) err << "surviving pair (" << k << ", " << v << ") not inserted, or twice\n";
  }
  INFO(err.str());
  CHECK(bad == 0);
  CHECK(c.pairs.size() > 0);
  CHECK(c.pairs.size() < keys.size());
  CHECK(d.stats().size == c.pairs.size());
}

// Values (k ^ salt) of the value width (u64 values: a high half too).
KeyValues pairs_of(const std::vector<uint64_t>& keys, uint64_t salt = 0x5A5A5A5A, KvWidths w = {}) {
  KeyValues kv;
  const uint64_t vsalt = w.value == KeyType::U32 ? salt : salt | (salt << 32);
  for (uint64_t k : keys) {
    kv.keys.push_back(k);
    kv.values.push_back((k ^ vsalt) & max_of(w.value));
  }
  return kv;
}

Model model_of(const KeyValues& kv, M mode) {
  Model m;
  for (size_t i = 0; i < kv.size(); ++i) {
    const uint64_t v = mode == M::Set ? 0 : kv.values[i];
    if (mode == M::Multi) {
      m[kv.keys[i]].insert(v);
    } else {
      m[kv.keys[i]] = {v};  // later duplicates win
    }
  }
  return m;
}

void build(Dictionary& d, const KeyValues& kv) {
  DeviceTime t;
  d.build(kv, t);
}

const M kModes[] = {M::Map, M::Multi, M::Set};

}  // namespace

TEST_CASE("slabhash: capabilities and options per mode") {
  for (M mode : kModes) {
    StructureConfig c;
    c.options["mode"] = mode_arg(mode);
    const Capabilities caps = slabhash_caps_for(c);
    CHECK_FALSE(caps.ordered);
    CHECK(caps.point_count_range);
    CHECK(caps.deletes);
    CHECK_FALSE(caps.snapshots);
    CHECK(caps.native_concurrent);
    CHECK(caps.supports(OpType::Count));
    CHECK(caps.supports(OpType::Range));
    CHECK_FALSE(caps.supports(OpType::Successor));
    CHECK(caps.supports(KeyType::U32));
    CHECK(caps.supports(KeyType::U64));
    CHECK(caps.semantics == (mode == M::Map ? Semantics::Map : mode == M::Multi ? Semantics::Multimap : Semantics::Set));
    CHECK(caps.phased_duplicates ==
          (mode == M::Multi ? DuplicateRule::DeletesThenInserts : DuplicateRule::AnyUpdate));
  }
  const StructureInfo* info = find_structure("slabhash");
  REQUIRE(info != nullptr);
  REQUIRE(info->make_gpu);
  StructureConfig mm;
  mm.options["mode"] = "multimap";
  CHECK(info->caps_with(mm).semantics == Semantics::Multimap);
  CHECK(structures_supporting(OpType::Count).find("slabhash") == std::string::npos);

  auto bad = [](const Opts& o) {
    StructureConfig c;
    for (const auto& [k, v] : o) c.options[k] = v;
    CHECK_THROWS_AS(validate_slabhash_options(c), InputError);
  };
  bad({{"mode", "bag"}});
  bad({{"buckets", "10"}, {"load-factor", "0.5"}});
  bad({{"buckets", "0"}});
  bad({{"load-factor", "0"}});
  bad({{"load-factor", "0.99"}});
  bad({{"load-factor", "x"}});
  bad({{"pool-growth", "maybe"}});
  bad({{"prefetch", "always"}});
  bad({{"pool-slabs", "-3"}});
  // Every width is made; the parameters name the instantiation (u64 keys
  // with u32 values run on u64/u64) and its slab.
  auto param = [](const Dictionary& d, const std::string& name) {
    for (const auto& kv : d.parameters())
      if (kv.first == name) return kv.second;
    return std::string("<missing ") + name + ">";
  };
  for (const KvWidths& w : all_kv_widths()) {
    const std::string kv = kv_label(w);
    CAPTURE(kv);
    for (M mode : kModes) {
      CAPTURE(mode_arg(mode));
      auto d = make(mode, {}, w);
      CHECK(param(*d, "types").rfind(kv, 0) == 0);
      const std::string slab = param(*d, "slab");
      const bool set = mode == M::Set;
      const char* want = !set ? (wide(w) ? "128 B: 7 pairs of 16 B" : "128 B: 15 pairs of 8 B")
                              : (w.key == KeyType::U64 ? "128 B: 15 keys of 8 B" : "128 B: 30 keys of 4 B");
      CHECK(slab.rfind(want, 0) == 0);
      CHECK(param(*d, "buckets").find(w.key == KeyType::U64 ? "key 0xFFFFFFFFFFFFFFFF" : "key 0xFFFFFFFF") !=
            std::string::npos);
    }
  }
  StructureConfig u64u32;
  u64u32.key_type = KeyType::U64;
  u64u32.value_type = KeyType::U32;
  CHECK(param(*make_slabhash(u64u32), "types").rfind("u64/u64", 0) == 0);
  // A load factor the layout cannot reach is refused, naming its ceiling.
  CHECK_THROWS_WITH_AS(make(M::Map, {{"load-factor", "0.9"}}, kU64U64), doctest::Contains("ceiling 0.875"),
                       InputError);
  CHECK_NOTHROW(make(M::Map, {{"load-factor", "0.9"}}));
  CHECK_NOTHROW(make(M::Set, {{"load-factor", "0.9"}}, kU64U64));  // 15 keys of 8 B: 0.9375

  auto d = make(M::Map);
  bool has_hash = false, has_slab = false;
  for (const auto& kv : d->parameters()) {
    has_hash |= kv.first == "hash";
    has_slab |= kv.first == "slab";
  }
  CHECK(has_hash);
  CHECK(has_slab);
  DeviceTime t;
  CHECK_THROWS_AS(d->snapshot("s", t), InputError);
}

TEST_CASE("slabhash: bucket sizing reaches the expected utilization") {
  using namespace slabhash;
  for (const KvWidths& w : all_kv_widths()) {
    const std::string kv = kv_label(w);
    CAPTURE(kv);
    const uint32_t kb = w.key == KeyType::U32 ? 4 : 8, vb = w.value == KeyType::U32 ? 4 : 8;
    for (Mode m : {Mode::Map, Mode::Set}) {
      const SlabShape sh = slab_shape(m, kb, vb);
      CHECK(sh.slots * sh.element_bytes <= 128);
      for (double lf : {0.2, 0.4, 0.6, 0.8, 0.9}) {
        if (lf >= utilization_ceiling(sh)) continue;  // refused by the constructor (see the capabilities case)
        const uint64_t n = 1 << 20;
        const uint64_t b = buckets_for(sh, n, lf);
        const double u = expected_utilization(sh, static_cast<double>(n) / static_cast<double>(b));
        CAPTURE(lf);
        CHECK(u == doctest::Approx(lf).epsilon(0.02));
      }
    }
  }
  const SlabShape map32 = slab_shape(Mode::Map, 4, 4);
  CHECK(map32.slots == 15);
  CHECK(slab_shape(Mode::Map, 4, 8).slots == 7);
  CHECK(slab_shape(Mode::Map, 8, 8).slots == 7);
  CHECK(slab_shape(Mode::Set, 4, 8).slots == 30);
  CHECK(slab_shape(Mode::Set, 8, 8).slots == 15);
  CHECK(buckets_for(map32, 0, 0.6) == kDefaultBuckets);
  CHECK(auto_pool_slabs(map32, 1000, 100) >= 32768);
}

TEST_CASE("slabhash: measured utilization follows --load-factor") {
  for (const KvWidths& w : all_kv_widths()) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    std::mt19937_64 rng(5);
    std::set<uint64_t> ks;
    while (ks.size() < 200000) ks.insert(w.key == KeyType::U32 ? rng() & kMax : gpudict::testing::random_of(rng, w.key));
    const KeyValues kv = pairs_of(std::vector<uint64_t>(ks.begin(), ks.end()), 0x5A5A5A5A, w);
    for (const char* lf : {"0.3", "0.6", "0.85"}) {
      auto d = make(M::Map, {{"load-factor", lf}}, w);
      build(*d, kv);
      CAPTURE(lf);
      CHECK(std::stod(extra(*d, "utilization")) == doctest::Approx(std::stod(lf)).epsilon(0.06));
      check_table_equals(*d, model_of(kv, M::Map), M::Map);
    }
  }
}

TEST_CASE("slabhash: empty table, absent keys, first inserts, every mode") {
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kv = kv_label(w);
    CAPTURE(kv);
    CAPTURE(mode_arg(mode));
    auto d = make(mode, {}, w);
    Model m;
    Batch b;
    for (uint64_t k : {uint64_t{0}, uint64_t{5}, max_of(w.key)}) {
      b.push(OpType::Lookup, k);
      b.push(OpType::Count, k, k);
      b.push(OpType::Range, k, k);
      b.push(OpType::Delete, k);
    }
    run_phased(*d, m, mode, b);  // no build: the table is created on first use
    check_table_equals(*d, m, mode);
    build(*d, KeyValues{});
    Batch ins;
    ins.push(OpType::Insert, 7, 70);
    ins.push(OpType::Lookup, 7);
    run_phased(*d, m, mode, ins);
    check_table_equals(*d, m, mode);
  }
}

TEST_CASE("slabhash: keys and values 0 and the largest of the width") {
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    const uint64_t kmax = max_of(w.key), vmax = max_of(w.value);
    auto d = make(mode, {{"buckets", "3"}}, w);
    Model m;
    build(*d, pairs_of({0, kmax, kmax - 1, 12}, 0, w));
    m = model_of(pairs_of({0, kmax, kmax - 1, 12}, 0, w), mode);
    check_table_equals(*d, m, mode);
    Batch b;
    b.push(OpType::Insert, kmax, 0);
    b.push(OpType::Insert, 0, vmax);
    b.push(OpType::Insert, 17, vmax);
    b.push(OpType::Insert, 18, 0);
    run_phased(*d, m, mode, b);
    check_table_equals(*d, m, mode);
    check_probe(*d, m, mode, 32, w);
    Batch del;
    del.push(OpType::Delete, kmax);
    del.push(OpType::Delete, 0);
    run_phased(*d, m, mode, del);
    check_table_equals(*d, m, mode);
    check_probe(*d, m, mode, 32, w);
    Batch again;
    again.push(OpType::Insert, kmax, vmax);
    again.push(OpType::Insert, kmax, 3);
    run_phased(*d, m, mode, again);
    check_table_equals(*d, m, mode);
    check_probe(*d, m, mode, 32, w);
  }
}

TEST_CASE("slabhash: every domain end of the width as keys and as values, keys equal in their low 32 bits") {
  // Each end of the key width is a key, holding each end of the value width
  // in turn; with u64 keys, k and k + 2^32 (and k + 2^63) are distinct keys
  // side by side in one bucket and in many. Insert, look up, count, range,
  // delete, re-insert, FLUSH; the checker after every step.
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes)
  for (const char* buckets : {"1", "64"}) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    CAPTURE(buckets);
    const std::vector<uint64_t> kends = domain_ends(w.key), vends = domain_ends(w.value);
    std::vector<uint64_t> keys = kends;
    if (w.key == KeyType::U64)
      for (uint64_t k : {uint64_t{0}, uint64_t{5}, uint64_t{1} << 31, kMax}) {
        keys.push_back(k + (1ull << 32));  // equal to k in the low half
        keys.push_back(k + (1ull << 63));
      }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    auto d = make(mode, {{"buckets", buckets}}, w);
    build(*d, KeyValues{});
    Model m;
    // Every value end on every key (rotated), inserted in one batch.
    Batch ins;
    for (size_t i = 0; i < keys.size(); ++i) ins.push(OpType::Insert, keys[i], vends[i % vends.size()]);
    run_phased(*d, m, mode, ins);
    check_table_equals(*d, m, mode);
    REQUIRE(m.size() == keys.size());
    auto probe = [&] {
      Batch q;
      for (uint64_t k : keys) {
        q.push(OpType::Lookup, k);
        q.push(OpType::Count, k, k);
        q.push(OpType::Range, k, k);
        // Neighbours of the ends (absent unless they are keys themselves).
        if (k > 0) q.push(OpType::Lookup, k - 1);
        if (k < max_of(w.key)) q.push(OpType::Lookup, k + 1);
      }
      const BatchResults r = run(*d, q);
      const std::string err = compare(m, mode, q, r);
      INFO(err);
      REQUIRE(err.empty());
    };
    probe();
    // Each key takes each value end: map replaces, multimap adds, set keeps.
    for (size_t round = 1; round < vends.size(); ++round) {
      Batch b;
      for (size_t i = 0; i < keys.size(); ++i) b.push(OpType::Insert, keys[i], vends[(i + round) % vends.size()]);
      run_phased(*d, m, mode, b);
    }
    check_table_equals(*d, m, mode);
    probe();
    // Delete the keys whose bit 0 and bit 32 agree: of two keys equal in
    // their low halves and one apart in their high halves, one goes.
    auto goes = [](uint64_t k) { return ((k ^ (k >> 32)) & 1) == 0; };
    Batch del;
    for (uint64_t k : keys)
      if (goes(k)) del.push(OpType::Delete, k);
    run_phased(*d, m, mode, del);
    check_table_equals(*d, m, mode);
    probe();
    DeviceTime t;
    d->cleanup(t);
    check_table_equals(*d, m, mode);
    Batch back;
    for (size_t i = 0; i < keys.size(); ++i)
      if (goes(keys[i])) back.push(OpType::Insert, keys[i], vends[vends.size() - 1 - i % vends.size()]);
    run_phased(*d, m, mode, back);
    check_table_equals(*d, m, mode);
    probe();
    // The same keys concurrently: deletes and inserts of the ends.
    Batch c;
    c.mode = ExecMode::Concurrent;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i % 3 == 0) c.push(OpType::Delete, keys[i]);
      if (i % 3 == 1) c.push(OpType::Insert, keys[i], vends[i % vends.size()]);
      c.push(OpType::Lookup, keys[i]);
    }
    run_concurrent(*d, m, mode, c);
    probe();
  }
}

TEST_CASE("slabhash: build with duplicate keys (map: the later pair wins, multimap: every pair)") {
  for (const KvWidths& w : all_kv_widths()) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    std::mt19937_64 rng(11);
    KeyValues kv;
    for (int i = 0; i < 60000; ++i) {
      // u64 keys: the same 20000 low halves under two high halves.
      const uint64_t k = rng() % 20000;
      kv.keys.push_back(w.key == KeyType::U32 ? k : k | ((rng() % 2) << 32));
      kv.values.push_back(rng() & max_of(w.value));
    }
    kv.keys.push_back(max_of(w.key));
    kv.values.push_back(1);
    kv.keys.push_back(max_of(w.key));
    kv.values.push_back(2);
    for (M mode : kModes) {
      CAPTURE(mode_arg(mode));
      auto d = make(mode, {}, w);
      build(*d, kv);
      const Model m = model_of(kv, mode);
      check_table_equals(*d, m, mode);
      check_probe(*d, m, mode, 20000, w);
      if (mode == M::Map) CHECK(std::stoull(extra(*d, "build_duplicate_keys")) > 0);
    }
  }
}

TEST_CASE("slabhash: random phased batches against the model, every mode and --prefetch") {
  // u32/u32 in full (every --prefetch, 12 batches of 40000); the wider
  // widths with --prefetch off and bulk, 6 batches.
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes)
  for (const char* prefetch : {"off", "l2", "bulk"}) {
    if (wide(w) && std::string(prefetch) == "l2") continue;
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    CAPTURE(prefetch);
    std::mt19937_64 rng(100 + static_cast<int>(mode));
    std::vector<uint64_t> init;
    for (uint64_t k = 0; k < 30000; k += 3) init.push_back(k);
    const KeyValues kv = pairs_of(init, 0x5A5A5A5A, w);
    auto d = make(mode, {{"load-factor", "0.7"}, {"prefetch", prefetch}}, w);
    build(*d, kv);
    Model m = model_of(kv, mode);
    const int batches = wide(w) ? 6 : 12;
    for (int b = 0; b < batches; ++b) {
      CAPTURE(b);
      const Batch batch = random_batch(rng, 40000, 50000, ExecMode::Phased, 0.15, w);
      run_phased(*d, m, mode, batch);
      if (b % 4 == 3) check_table_equals(*d, m, mode);
    }
    check_probe(*d, m, mode, 50000, w);
    check_table_equals(*d, m, mode);
  }
}

TEST_CASE("slabhash: several updates of one key in a phased batch") {
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    auto d = make(mode, {{"buckets", "16"}}, w);
    Model m;
    const uint64_t k1 = lift(w, 1), k2 = lift(w, 2), k3 = lift(w, 3);
    build(*d, pairs_of({k1, k2, k3}, 0x5A5A5A5A, w));
    m = model_of(pairs_of({k1, k2, k3}, 0x5A5A5A5A, w), mode);
    for (int rep = 0; rep < 20; ++rep) {
      Batch b;
      for (int i = 0; i < 40; ++i) {
        b.push(OpType::Insert, k1, lift_value(w, 100 + i));  // many inserts of one key
        b.push(OpType::Insert, k2, lift_value(w, 7));        // the same pair again and again
        if (i % 7 == 0) b.push(OpType::Delete, k3);
        if (i % 9 == 0) b.push(OpType::Insert, k3, lift_value(w, i));
        b.push(OpType::Lookup, k1);
        b.push(OpType::Count, k2, k2);
      }
      run_phased(*d, m, mode, b);
      check_table_equals(*d, m, mode);
    }
  }
}

namespace {

// A table of one bucket holding the keys 0, 7919, ..., 2999 * 7919 (one
// chain of a few hundred slabs), checked, and its model. u64 keys: the same
// keys with a high half of 1 for odd k, so both halves matter.
uint64_t one_bucket_key(KvWidths w, uint64_t k) {
  return k * 7919 + (w.key == KeyType::U64 && k % 2 ? 1ull << 32 : 0);
}
std::unique_ptr<Dictionary> one_bucket_table(M mode, Model& m, KvWidths w = {}) {
  auto d = make(mode, {{"buckets", "1"}}, w);
  std::vector<uint64_t> init;
  for (uint64_t k = 0; k < 3000; ++k) init.push_back(one_bucket_key(w, k));
  const KeyValues kv = pairs_of(init, 0x5A5A5A5A, w);
  build(*d, kv);
  m = model_of(kv, mode);
  check_table_equals(*d, m, mode);
  return d;
}

}  // namespace

TEST_CASE("slabhash: every key in one bucket") {
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    std::mt19937_64 rng(7);
    Model m;
    auto d = one_bucket_table(mode, m, w);
    for (int b = 0; b < 4; ++b) {
      const Batch batch = random_batch(rng, 6000, 3000 * 7919, ExecMode::Phased, 0.3, w);
      run_phased(*d, m, mode, batch);
    }
    check_table_equals(*d, m, mode);
    DeviceTime t;
    const uint64_t before = std::stoull(extra(*d, "slabs"));
    d->cleanup(t);
    CHECK(std::stoull(extra(*d, "slabs")) <= before);
    CHECK(extra(*d, "tombstones") == "0");
    check_table_equals(*d, m, mode);
    check_probe(*d, m, mode, 3000 * 7919, w);
  }
}

TEST_CASE("slabhash: every key in one bucket, concurrent batches") {
  // One chain of hundreds of slabs that every operation of a batch walks at
  // once: inserts race for its tail slots and for linking its next slab
  // while deletes clear bits and lookups read the same slabs. The keys are
  // drawn from the initial ones and as many new ones, so deletes and lookups
  // mostly hit and inserts both replace and add. Odd batches carry counts and
  // ranges too (the full kernel), even ones inserts, deletes and lookups only
  // (the point-operation kernel).
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    std::mt19937_64 rng(71 + static_cast<int>(mode));
    Model m;
    auto d = one_bucket_table(mode, m, w);
    const uint64_t kmax = max_of(w.key), vmax = max_of(w.value);
    const uint64_t edges[] = {1, kmax, kmax - 1};
    for (int b = 0; b < 6; ++b) {
      CAPTURE(b);
      Batch batch;
      batch.mode = ExecMode::Concurrent;
      for (int i = 0; i < 6000; ++i) {
        const uint64_t k = rng() % 16 == 0 ? edges[rng() % 3] : one_bucket_key(w, rng() % 6000);
        const uint64_t r = rng() % 20;
        if (r < 7) {
          batch.push(OpType::Insert, k, rng() % 8 == 0 ? vmax : rng() & vmax);
        } else if (r < 12) {
          batch.push(OpType::Delete, k);
        } else if (b % 2 == 1 && r == 18) {
          batch.push(OpType::Count, k, k);
        } else if (b % 2 == 1 && r == 19) {
          batch.push(OpType::Range, k, k);
        } else {
          batch.push(OpType::Lookup, k);
        }
      }
      run_concurrent(*d, m, mode, batch);  // checks the table after the batch
      CHECK(slabhash::check_table(*d).max_chain > 50);  // it stayed one long chain
      if (b == 2) {
        DeviceTime t;
        d->cleanup(t);
        check_table_equals(*d, m, mode);
      }
    }
    check_probe(*d, m, mode, 6000 * 7919, w);
  }
}

TEST_CASE("slabhash: FLUSH compacts chains, frees slabs, changes no answer") {
  // u32/u32: 100000 keys; the wider widths 30000.
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    const uint64_t n = wide(w) ? 30000 : 100000;
    std::mt19937_64 rng(21);
    std::vector<uint64_t> init;
    for (uint64_t k = 0; k < n; ++k) init.push_back(lift(w, k * 3 + 1));
    const KeyValues kv = pairs_of(init, 0x5A5A5A5A, w);
    // No automatic FLUSH: the tombstones stay until the cleanup below.
    auto d = make(mode, {{"load-factor", "0.85"}, {"flush-tombstones", "0"}}, w);
    build(*d, kv);
    Model m = model_of(kv, mode);
    Batch del;
    for (uint64_t k = 0; k < n; ++k)
      if (rng() % 4 != 0) del.push(OpType::Delete, lift(w, k * 3 + 1));
    run_phased(*d, m, mode, del);
    const uint64_t slabs_before = std::stoull(extra(*d, "slabs"));
    CHECK(std::stoull(extra(*d, "tombstones")) > 0);
    DeviceTime t;
    d->cleanup(t);
    CHECK(t[Phase::Cleanup] > 0);
    CHECK(std::stoull(extra(*d, "slabs")) < slabs_before);
    CHECK(extra(*d, "tombstones") == "0");
    check_table_equals(*d, m, mode);
    check_probe(*d, m, mode, 3 * n, w);
    // Batches after a flush, and flush between batches.
    for (int b = 0; b < 6; ++b) {
      run_phased(*d, m, mode, random_batch(rng, 20000, 3 * n, ExecMode::Phased, 0.3, w));
      if (b % 2) d->cleanup(t);
      check_table_equals(*d, m, mode);
    }
    // The policy: --flush-every 2 (and no flush for tombstones).
    auto e = make(mode, {{"flush-every", "2"}, {"flush-tombstones", "0"}}, w);
    build(*e, kv);
    Model me = model_of(kv, mode);
    for (int b = 0; b < 5; ++b)
      run_phased(*e, me, mode, random_batch(rng, 20000, 3 * n, ExecMode::Phased, 0.4, w));
    CHECK(extra(*e, "auto_flushes") == "2");
    check_table_equals(*e, me, mode);
  }
}

// Hot keys under churn: every batch inserts and deletes the same few keys.
// Deleted slots are reused only after a FLUSH, so without one the chains grow
// by a slot per re-inserted key; --flush-tombstones (on by default) runs one
// whenever the tombstones pass that share of the base slots, and the chains
// stay short.
TEST_CASE("slabhash: hot keys under churn: the tombstone policy bounds the chains") {
  // u32/u32: 200 batches; the wider widths 100 (u64 keys: the hot keys are
  // 2^31 + i and 2^63 + 2^31 + i, equal in their low halves).
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    std::mt19937_64 rng(77);
    auto hot = [&](uint64_t i) {
      return (1ull << 31) + (w.key == KeyType::U64 && i % 2 ? (1ull << 63) + i - 1 : i);
    };
    std::vector<uint64_t> init;
    for (uint64_t k = 0; k < 32; ++k) init.push_back(hot(2 * k));
    const KeyValues kv = pairs_of(init, 0x5A5A5A5A, w);
    auto d = make(mode, {}, w);  // the defaults: --flush-tombstones 0.5
    auto off = make(mode, {{"flush-tombstones", "0"}}, w);
    build(*d, kv);
    build(*off, kv);
    Model m = model_of(kv, mode);
    Model m_off = model_of(kv, mode);
    const uint64_t base = std::stoull(extra(*d, "base_slabs"));
    const uint32_t kb = w.key == KeyType::U32 ? 4 : 8, vb = w.value == KeyType::U32 ? 4 : 8;
    const double slots = static_cast<double>(base) *
                         slabhash::slab_shape(mode == M::Set ? slabhash::Mode::Set : slabhash::Mode::Map, kb, vb).slots;
    const int batches = wide(w) ? 100 : 200;
    for (int b = 0; b < batches; ++b) {
      Batch batch;
      for (int i = 0; i < 512; ++i) {
        const uint64_t k = hot(rng() % 64);
        const int r = static_cast<int>(rng() % 4);
        if (r == 0)
          batch.push(OpType::Delete, k);
        else if (r == 1)
          batch.push(OpType::Insert, k, rng() & max_of(w.value));
        else
          batch.push(OpType::Lookup, k);
      }
      batch.mode = ExecMode::Concurrent;
      run_concurrent(*d, m, mode, batch);
      run_concurrent(*off, m_off, mode, batch);
      // After every update batch the policy has run: at most the share left.
      CHECK(static_cast<double>(std::stoull(extra(*d, "tombstones"))) <= 0.5 * slots);
    }
    CHECK(std::stoull(extra(*d, "auto_flushes")) > 10);
    CHECK(extra(*off, "auto_flushes") == "0");
    // Without the policy the chains keep every tombstone.
    CHECK(std::stoull(extra(*off, "tombstones")) > 1000);
    CHECK(std::stoull(extra(*d, "slabs")) * 20 < std::stoull(extra(*off, "slabs")));
    check_table_equals(*d, m, mode);
    check_table_equals(*off, m_off, mode);
  }
}

TEST_CASE("slabhash: concurrent batches mixing every operation, every mode") {
  // u32/u32: 10 batches; the wider widths 6.
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    std::mt19937_64 rng(31 + static_cast<int>(mode));
    std::vector<uint64_t> init;
    for (uint64_t k = 0; k < 20000; k += 2) init.push_back(k);
    const KeyValues kv = pairs_of(init, 0x5A5A5A5A, w);
    auto d = make(mode, {{"load-factor", "0.8"}}, w);
    build(*d, kv);
    Model m = model_of(kv, mode);
    const int batches = wide(w) ? 6 : 10;
    for (int b = 0; b < batches; ++b) {
      CAPTURE(b);
      run_concurrent(*d, m, mode, random_batch(rng, 30000, 25000, ExecMode::Concurrent, 0.2, w));
      if (b == 4) {
        DeviceTime t;
        d->cleanup(t);
        check_table_equals(*d, m, mode);
      }
    }
  }
}

TEST_CASE("slabhash: concurrent batches of inserts, deletes and lookups only (the point-operation kernel)") {
  // Without counts and ranges a concurrent batch runs the kernel compiled
  // for insert + delete + lookup; hot keys in few buckets make its claims
  // race and get lost, so inserts are served again by their tiles.
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    std::mt19937_64 rng(57 + static_cast<int>(mode));
    std::vector<uint64_t> init;
    for (uint64_t k = 0; k < 4000; k += 3) init.push_back(k);
    const KeyValues kv = pairs_of(init, 0x5A5A5A5A, w);
    for (const char* buckets : {"7", "4000"}) {
      CAPTURE(buckets);
      auto d = make(mode, {{"buckets", buckets}}, w);
      build(*d, kv);
      Model m = model_of(kv, mode);
      for (int b = 0; b < 12; ++b) {
        CAPTURE(b);
        Batch bt = random_batch(rng, b % 3 == 0 ? 1 : 20000, b % 2 ? 64 : 6000, ExecMode::Concurrent, 0.3, w);
        for (size_t i = 0; i < bt.size(); ++i)
          if (bt.types[i] == OpType::Count || bt.types[i] == OpType::Range) {
            bt.types[i] = OpType::Lookup;
            bt.args[i] = 0;
          }
        run_concurrent(*d, m, mode, bt);
      }
    }
  }
}

TEST_CASE("slabhash racecheck: a small concurrent batch") {
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    std::mt19937_64 rng(3);
    auto d = make(mode, {{"buckets", "4"}}, w);
    build(*d, pairs_of({1, 2, 3, 4, 5}, 0x5A5A5A5A, w));
    Model m = model_of(pairs_of({1, 2, 3, 4, 5}, 0x5A5A5A5A, w), mode);
    run_concurrent(*d, m, mode, random_batch(rng, 256, 16, ExecMode::Concurrent, 0.3, w));
    DeviceTime t;
    d->cleanup(t);
    check_table_equals(*d, m, mode);
  }
}

TEST_CASE("slabhash: hot keys inserted and deleted concurrently, never stored twice") {
  // Few buckets, so the hot keys share chains, slabs fill, new slabs are
  // linked while other inserts and deletes of the same keys run. After every
  // batch the checker scans the whole table: no alive key twice (map, set),
  // every chain intact, the bitmaps equal to the chains.
  //
  // Every insert of a batch brings a value of its own, so each (key, value)
  // pair of the batch may legally be stored at most once: in multimap mode an
  // insert applied twice then shows in run_concurrent's check after the batch
  // (a key the batch deleted must hold a sub-multiset of the batch's inserted
  // pairs, which holds each pair once; a key it did not delete exactly its
  // pre-batch pairs plus the inserted ones), where equal pairs inserted again
  // and again would hide it. The first insert of a batch stores the largest
  // value and the second 0, so both edge values stay in play. u64 keys: hot
  // keys that share their low halves (1 and 2^32 + 1, 2 and 2^63 + 2, 2^32 - 1
  // and 2^32) and the ends of the width. u32/u32: 150 batches (map) or 40;
  // the wider widths 50 or 20.
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    std::mt19937_64 rng(77);
    auto d = make(mode, {{"buckets", "4"}, {"pool-slabs", "1024"}}, w);
    build(*d, KeyValues{});
    Model m;
    const uint64_t kmax = max_of(w.key), vmax = max_of(w.value);
    const std::vector<uint64_t> hot =
        w.key == KeyType::U32
            ? std::vector<uint64_t>{0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, kMax, kMax - 1, 1000003, 77}
            : std::vector<uint64_t>{0,  1,  1 + (1ull << 32), 2,  2 + (1ull << 63), 3,    5,          8,
                                    13, 21, 34,               55, kmax,             kmax - 1, kMax, 1ull << 32};
    const int reps = mode == M::Map ? (wide(w) ? 50 : 150) : (wide(w) ? 20 : 40);
    for (int rep = 0; rep < reps; ++rep) {
      CAPTURE(rep);
      Batch b;
      b.mode = ExecMode::Concurrent;
      int inserts = 0;
      for (int i = 0; i < 2048; ++i) {
        const uint64_t k = hot[rng() % 16];
        const uint64_t r = rng() % 10;
        if (r < 5) {
          // 1 + rep * 2048 + i < 0xFFFFFFFF: distinct within the batch (and
          // from the batch's 0 and the largest value).
          const uint64_t v = inserts == 0 ? vmax : inserts == 1 ? 0 : lift_value(w, 1 + static_cast<uint64_t>(rep) * 2048 + i);
          ++inserts;
          b.push(OpType::Insert, k, v);
        } else if (r < 9) {
          b.push(OpType::Delete, k);
        } else {
          b.push(OpType::Lookup, k);
        }
      }
      run_concurrent(*d, m, mode, b);  // checks the table after the batch
      if (mode == M::Multi) {
        // The values other than 0 and 0xFFFFFFFF are distinct over the whole
        // test, so the table (now the model) holds each such pair once.
        for (const auto& kv : m)
          for (uint64_t v : kv.second)
            if (v != 0 && v != vmax) {
              INFO("key " << kv.first << " value " << v);
              REQUIRE(kv.second.count(v) == 1);
            }
      }
      if (rep % 25 == 24) {
        DeviceTime t;
        d->cleanup(t);
        check_table_equals(*d, m, mode);
      }
    }
  }
}

namespace {

// ---- corrupting a host copy of the table (inspect.hpp) ----

using slabhash::SlabWords;
using slabhash::TableCopy;

using slabhash::kNullSlab;
uint32_t claimed_in(const TableCopy& t, const SlabWords& s) {
  uint32_t n = 0;
  for (uint32_t slot = 0; slot < slabhash::slots_of(t); ++slot)
    n += slabhash::slot_key(t, s, slot) != slabhash::empty_key_of(t);
  return n;
}
// Bucket b's chain, in order: (SlabAlloc address, slab); the base slab's
// address is given as kNullSlab.
std::vector<std::pair<uint32_t, SlabWords*>> chain_of(TableCopy& t, uint64_t b) {
  std::vector<std::pair<uint32_t, SlabWords*>> c{{kNullSlab, &t.base[b]}};
  for (uint32_t next = t.base[b][31]; next != kNullSlab; next = t.pool[next][31]) c.push_back({next, &t.pool[next]});
  return c;
}
// Slot `from` of `a` (key, value, alive bit) into slot `to` of `b`.
void copy_slot(const TableCopy& t, const SlabWords& a, uint32_t from, SlabWords& b, uint32_t to) {
  slabhash::set_slot_key(t, b, to, slabhash::slot_key(t, a, from));
  slabhash::set_slot_value(t, b, to, slabhash::slot_value(t, a, from));
  b[30] = (b[30] & ~(1u << to)) | (((a[30] >> from) & 1u) << to);
}
// Slot `slot` of `s` empty, as in a pristine slab (empty pair, alive bit set).
void empty_slot(const TableCopy& t, SlabWords& s, uint32_t slot) {
  slabhash::set_slot_key(t, s, slot, slabhash::empty_key_of(t));
  slabhash::set_slot_value(t, s, slot, t.value_bytes == 4 ? kMax : ~0ull);  // the empty pair's value
  s[30] |= 1u << slot;
}
bool allocated(const TableCopy& t, uint64_t a) { return (t.bitmap[a / 32] >> (a % 32)) & 1u; }

}  // namespace

TEST_CASE("slabhash: the table checker catches every kind of corrupted table") {
  // The checker guards every other test, so it must be seen to fail: a
  // sound table's copy passes, and each corruption of the copy is reported
  // with its own message, in every layout (every mode at every width).
  for (const KvWidths& w : all_kv_widths())
  for (M mode : kModes) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    // 4 buckets of about 100 keys: chains of several slabs (7, 15 or 30
    // slots each), the last ones with free slots; the largest key alone in
    // the last bucket.
    auto d = make(mode, {{"buckets", "4"}, {"pool-slabs", "1024"}}, w);
    std::vector<uint64_t> init;
    for (uint64_t k = 0; k < 400; ++k) init.push_back(lift(w, k * 7 + 3));
    init.push_back(max_of(w.key));
    const KeyValues kv = pairs_of(init, 0x5A5A5A5A, w);
    build(*d, kv);
    check_table_equals(*d, model_of(kv, mode), mode);
    const TableCopy sound = slabhash::copy_table(*d);
    const slabhash::TableCheck c0 = slabhash::check_table_copy(sound);
    INFO("sound copy: " << c0.error);
    REQUIRE(c0.error.empty());
    REQUIRE(c0.pairs.size() == init.size());
    REQUIRE(c0.pool_slabs > 0);
    REQUIRE(sound.buckets == 4);
    REQUIRE(sound.key_bytes == (w.key == KeyType::U32 ? 4u : 8u));
    REQUIRE(sound.value_bytes == (w.value == KeyType::U32 ? 4u : 8u));
    CHECK(slabhash::check_table_copy(TableCopy{}).error.empty());  // no table yet
    const uint32_t slots = slabhash::slots_of(sound);

    // A bucket whose last slab has 1 to slots - 2 claimed slots (room for a
    // copy, and for a gap before it), and a hashed bucket of two slabs or more.
    uint64_t part = 5, longb = 5;
    for (uint64_t b = 0; b <= 4; ++b) {
      TableCopy t = sound;
      const auto c = chain_of(t, b);
      const uint32_t k = claimed_in(t, *c.back().second);
      if (part == 5 && k >= 1 && k + 2 <= slots) part = b;
      if (longb == 5 && b < 4 && c.size() >= 2) longb = b;
    }
    CAPTURE(part);
    CAPTURE(longb);
    REQUIRE(part < 5);
    REQUIRE(longb < 4);
    uint64_t free_slab = sound.pool.size();  // a slab of the pool no chain holds
    while (free_slab > 0 && allocated(sound, free_slab - 1)) --free_slab;
    REQUIRE(free_slab > 0);
    --free_slab;

    auto expect = [&](const char* what, const std::string& needle, const std::function<void(TableCopy&)>& corrupt) {
      TableCopy t = sound;
      corrupt(t);
      const slabhash::TableCheck c = slabhash::check_table_copy(t);
      INFO(what << ": the checker says \"" << c.error << "\"");
      CHECK(c.error.find(needle) != std::string::npos);
    };
    // The first pair of the chain again, alive, in the first empty slot.
    auto twice = [&](TableCopy& t) {
      const auto c = chain_of(t, part);
      SlabWords& last = *c.back().second;
      copy_slot(t, *c.front().second, 0, last, claimed_in(t, last));
    };
    if (mode == M::Multi) {
      // A multimap may hold a pair twice: the checker must let it be.
      TableCopy t = sound;
      twice(t);
      const slabhash::TableCheck c = slabhash::check_table_copy(t);
      INFO(c.error);
      CHECK(c.error.empty());
      CHECK(c.pairs.size() == init.size() + 1);
    } else {
      expect("an alive key stored twice", "is stored twice (alive)", twice);
    }
    expect("a claimed slot after an empty one", "claimed slot after an empty one", [&](TableCopy& t) {
      SlabWords& last = *chain_of(t, part).back().second;
      const uint32_t k = claimed_in(t, last);
      copy_slot(t, last, k - 1, last, k + 1);  // the last pair moves on by one slot,
      empty_slot(t, last, k - 1);              // leaving two empty slots before it
    });
    expect("an empty slot with a tombstone", "empty slot with a tombstone", [&](TableCopy& t) {
      SlabWords& last = *chain_of(t, part).back().second;
      last[30] &= ~(1u << claimed_in(t, last));
    });
    if (mode != M::Set)
      expect("an empty slot with a value", "empty slot with value 7", [&](TableCopy& t) {
        SlabWords& last = *chain_of(t, part).back().second;
        slabhash::set_slot_value(t, last, claimed_in(t, last), 7);
      });
    expect("a free slab that is not pristine", "free slab " + std::to_string(free_slab) + " is not pristine",
           [&](TableCopy& t) { t.pool[free_slab][5] = 0; });
    expect("a key in a bucket its hash does not map it to", "does not hash to this bucket", [&](TableCopy& t) {
      uint64_t x = 7;  // a multiple of 7 below 2^32: no initial key
      while (slabhash::bucket_of(t, x) == longb) x += 7;
      slabhash::set_slot_key(t, t.base[longb], 0, x);
    });
    expect("another key in the largest key's bucket", "key key_max's bucket holds stored key 14",
           [&](TableCopy& t) { slabhash::set_slot_key(t, t.base[4], 0, 14); });
    if (w.key == KeyType::U64) {
      // A key whose high half is cleared lands where its hash does not lead
      // (the high half is part of the key: dropping it is caught).
      expect("a u64 key without its high half", "does not hash to this bucket", [&](TableCopy& t) {
        SlabWords& s = t.base[longb];
        for (uint32_t slot = 0; slot < slots; ++slot) {
          const uint64_t k = slabhash::slot_key(t, s, slot);
          if (k != slabhash::empty_key_of(t) && slabhash::bucket_of(t, k & kMax) != longb) {
            slabhash::set_slot_key(t, s, slot, k & kMax);
            return;
          }
        }
      });
    }
    if (mode != M::Set && w.value == KeyType::U64) {
      expect("unused words of a 16-byte-slot slab written", "unused words 28, 29 are not pristine",
             [&](TableCopy& t) { t.base[longb][29] = 0; });
      if (w.key == KeyType::U32)
        expect("a u32 key's pad written", "the key's pad is not pristine",
               [&](TableCopy& t) { t.base[longb][4 * 0 + 1] = 0; });
    }
    expect("a bit set for a slab no chain reaches", "slab " + std::to_string(free_slab) + " is allocated but in no chain",
           [&](TableCopy& t) { t.bitmap[free_slab / 32] |= 1u << (free_slab % 32); });
    expect("a reached slab whose bit is clear", "which is not allocated", [&](TableCopy& t) {
      const uint32_t a = chain_of(t, longb)[1].first;
      t.bitmap[a / 32] &= ~(1u << (a % 32));
    });
    expect("a next address outside the pool", "outside the pool", [&](TableCopy& t) {
      (*chain_of(t, longb).back().second)[31] = static_cast<uint32_t>(t.pool.size());
    });
    expect("a chain that loops", "reached twice", [&](TableCopy& t) {
      const auto c = chain_of(t, longb);
      (*c.back().second)[31] = c[1].first;
    });
    // The copies were corrupted, never the table.
    const slabhash::TableCheck c1 = slabhash::check_table(*d);
    INFO(c1.error);
    CHECK(c1.error.empty());
    CHECK(c1.pairs.size() == init.size());
  }
}

TEST_CASE("slabhash: a pool that cannot grow on a full device ends the batch with out of slab memory") {
  // 8 buckets and a first super block of 2^17 slabs (16 MiB) hold at most
  // 15 * (8 + 131072) pairs (u64/u64: 7 * (8 + 131072)); the batch brings
  // more.
  for (const KvWidths& w : {kU32U32, kU64U64}) {
  const std::string kvl = kv_label(w);
  CAPTURE(kvl);
  auto d = make(M::Map, {{"buckets", "8"}, {"pool-slabs", "131072"}}, w);
  build(*d, KeyValues{});
  const uint64_t n = wide(w) ? 1100000 : 2300000;
  // A first update batch of as many operations sizes every buffer an update
  // batch uses (the engine's staging, the update's types, the pass's
  // unfinished list): 1000 inserts and deletes of absent keys.
  Batch warm;
  for (uint64_t i = 0; i < n; ++i) warm.push(i < 1000 ? OpType::Insert : OpType::Delete, lift(w, 2 * i + 1), i);
  BatchResults r;
  DeviceTime t;
  d->execute(warm, r, t);
  auto hog = gpudict::testing::fill_device(4ull << 20, "slab hash pool on a full device");
  if (!hog) return;
  Batch ins;
  for (uint64_t i = 0; i < n; ++i) ins.push(OpType::Insert, lift(w, 2 * i + 2), lift_value(w, i));
  const std::string msg = gpudict::testing::runtime_failure_of([&] { d->execute(ins, r, t); });
  INFO(msg);
  // Growing ahead found no memory and left the batch to the pool it had;
  // when that filled, the growth on demand failed too and ended the batch.
  CHECK(msg.rfind("out of slab memory: all 131072 slabs of the pool", 0) == 0);
  CHECK(msg.find("failed: out of device memory: needs ") != std::string::npos);
  hog.reset();
  const slabhash::TableCheck c = slabhash::check_table(*d);
  INFO(c.error);
  CHECK(c.error.empty());
  }
}

TEST_CASE("slabhash: pool exhaustion ends the batch with a clean error, or grows the pool") {
  for (const KvWidths& w : all_kv_widths()) {
  const std::string kvl = kv_label(w);
  CAPTURE(kvl);
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; k < 40000; ++k) keys.push_back(lift(w, k * 2654435761ull & kMax));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  auto v_of = [&](uint64_t k) { return lift_value(w, k & 0xFFFF); };
  Batch ins;
  for (uint64_t k : keys) ins.push(OpType::Insert, k, v_of(k));
  // 8 base slabs + 1024 pool slabs hold at most 15 * 1032 = 15480 pairs
  // (set: 30 * 1032 = 30960 keys; u64 values 7 * 1032, u64 set keys
  // 15 * 1032), fewer than the batch brings.
  for (M mode : kModes)
  for (ExecMode exec : {ExecMode::Phased, ExecMode::Concurrent}) {
    CAPTURE(mode_arg(mode));
    CAPTURE(exec == ExecMode::Phased ? "phased" : "concurrent");
    auto d = make(mode, {{"buckets", "8"}, {"pool-slabs", "1024"}, {"pool-growth", "off"}}, w);
    build(*d, KeyValues{});
    Batch b = ins;
    b.mode = exec;
    BatchResults r;
    DeviceTime t;
    bool threw = false;
    try {
      d->execute(b, r, t);
    } catch (const RuntimeFailure& e) {
      threw = true;
      const std::string msg = e.what();
      CHECK(msg.rfind("out of slab memory: ", 0) == 0);
      CHECK(msg.find("pool_slabs, now 1024") != std::string::npos);
      CHECK(e.option() == "growth");  // the command line names --pool-growth and --pool-slabs (cli_message)
    }
    CHECK(threw);
    // Whatever was inserted is intact, and nothing else.
    check_survivors(*d, mode, keys, v_of);
    // Lost link races may have freed a few slabs after the pool was seen full.
    CHECK(slabhash::check_table(*d).allocated > 512);
  }
  {
    auto d = make(M::Map, {{"buckets", "8"}, {"pool-slabs", "1024"}, {"max-pool-bytes", "300000"}}, w);
    build(*d, KeyValues{});
    BatchResults r;
    DeviceTime t;
    try {
      d->execute(ins, r, t);
      FAIL("expected RuntimeFailure");
    } catch (const RuntimeFailure& e) {
      CHECK(std::string(e.what()).find("past its limit of 300000 bytes") != std::string::npos);
      CHECK(e.option() == "max_pool_bytes");
    }
    check_survivors(*d, M::Map, keys, v_of);
  }
  for (M mode : kModes) {
    CAPTURE(mode_arg(mode));
    // on: grown when full, the operations that found no slab run again.
    auto d = make(mode, {{"buckets", "8"}, {"pool-slabs", "1024"}, {"pool-growth", "on"}}, w);
    build(*d, KeyValues{});
    Model m;
    run_phased(*d, m, mode, ins);
    CHECK(std::stoull(extra(*d, "pool_growths")) >= 1);
    CHECK(std::stoull(extra(*d, "unfinished_reruns")) >= 1);
    check_table_equals(*d, m, mode);  // every insert applied exactly once (multimap included)
    // ahead (the default): grown before the batch, nothing to run again.
    auto a = make(mode, {{"buckets", "8"}, {"pool-slabs", "1024"}}, w);
    build(*a, KeyValues{});
    Model ma;
    run_phased(*a, ma, mode, ins);
    CHECK(std::stoull(extra(*a, "pool_growths")) >= 1);
    CHECK(extra(*a, "unfinished_reruns") == "0");
    check_table_equals(*a, ma, mode);
    // Concurrent batches that exhaust the pool grow it too.
    auto e = make(mode, {{"buckets", "8"}, {"pool-slabs", "1024"}, {"pool-growth", "on"}}, w);
    build(*e, KeyValues{});
    Model me;
    Batch c = ins;
    c.mode = ExecMode::Concurrent;
    run_concurrent(*e, me, mode, c);
    CHECK(me.size() == keys.size());
  }
  }
}

TEST_CASE("slabhash: a multimap key with many values (range buffer growth)") {
  for (const KvWidths& w : all_kv_widths()) {
  const std::string kvl = kv_label(w);
  CAPTURE(kvl);
  auto d = make(M::Multi, {{"buckets", "64"}}, w);
  KeyValues kv;
  const uint64_t key = lift(w, 42);
  for (uint64_t i = 0; i < 30000; ++i) {
    kv.keys.push_back(key);
    kv.values.push_back(lift_value(w, i));
  }
  for (uint64_t i = 0; i < 1000; ++i) {
    kv.keys.push_back(lift(w, 1000 + i));
    kv.values.push_back(i);
  }
  build(*d, kv);
  const Model m = model_of(kv, M::Multi);
  Batch q;
  for (int i = 0; i < 4; ++i) {
    q.push(OpType::Range, key, key);
    q.push(OpType::Count, key, key);
    q.push(OpType::Lookup, key);
  }
  const BatchResults r = run(*d, q);
  const std::string err = compare(m, M::Multi, q, r);
  INFO(err);
  CHECK(err.empty());
  check_table_equals(*d, m, M::Multi);
  }
}

TEST_CASE("slabhash: count or range over several keys is refused when its batch runs") {
  for (const KvWidths& w : all_kv_widths()) {
    const std::string kvl = kv_label(w);
    CAPTURE(kvl);
    auto d = make(M::Map, {}, w);
    Batch b;
    b.push(OpType::Insert, 1, 1);
    b.push(OpType::Count, 3, 9);
    BatchResults r;
    DeviceTime t;
    CHECK_THROWS_WITH_AS(d->execute(b, r, t),
                         doctest::Contains("slabhash answers count and range for a single key only (lo == hi); got count [3, 9] in batch 0"),
                         InputError);
    // Nothing of the refused batch ran.
    check_table_equals(*d, Model{}, M::Map);
  }
  // A key above the instantiation's range is refused (the engine never
  // sends one: u64 keys make a u64/u64 table).
  auto d = make(M::Map);
  Batch big;
  big.push(OpType::Insert, 1ull << 32, 1);
  BatchResults r;
  DeviceTime t;
  CHECK_THROWS_WITH_AS(d->execute(big, r, t), doctest::Contains("above the u32/u32 instantiation's range"), InputError);
  auto e = make(M::Map, {}, KvWidths{KeyType::U32, KeyType::U64});
  Batch val;
  val.push(OpType::Insert, 1, 1ull << 40);
  CHECK_NOTHROW(e->execute(val, r, t));
}

namespace {

std::string write_yaml(const std::string& name, const std::string& text) {
  const std::string p = gpudict::testing::temp_path(name);
  std::ofstream(p) << text;
  return p;
}

// Replays `path` on a slab hash with `opts`; `kept`, when given, receives
// the slab hash, which the engine only borrows (one repetition: the engine
// makes one).
RunReport replay_on(const std::string& path, const Opts& opts, std::unique_ptr<Dictionary>* kept = nullptr) {
  const StructureInfo* info = find_structure("slabhash");
  REQUIRE(info != nullptr);
  OpenOptions oo{};
  WorkloadSummary summary = summarize_workload(path, oo);
  StructureConfig cfg;
  for (const auto& o : info->options) cfg.options[o.name] = o.default_value;
  for (const auto& [k, v] : opts) cfg.options[k] = v;
  {  // the structure's widths are the workload's, as the CLI sets them
    const auto src = open_workload(path, oo);
    cfg.key_type = src->header().key_type;
    cfg.value_type = src->header().value_type;
  }
  ReplayOptions ro;
  ro.gpu = true;
  auto make_dictionary = [&]() -> std::unique_ptr<Dictionary> {
    if (!kept) return info->make_gpu(cfg);
    *kept = info->make_gpu(cfg);
    return std::make_unique<gpudict::testing::BorrowedDictionary>(**kept);
  };
  return replay([&] { return open_workload(path, oo); }, make_dictionary, summary, ro);
}

}  // namespace

TEST_CASE("slabhash: generated workloads through the engine and the verifier, every mode") {
  const std::string p = write_yaml("slabhash.yaml", R"(
seed: 5
initial: {count: 50000, keys: {distribution: uniform, min: 0, max: 200000}}
steps:
  - phase: {name: p, batches: 4, batch_size: 40000, hit_ratio: 0.6,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: uniform, min: 0, max: 200000}, range_length: 1}
  - flush
  - phase: {name: c, batches: 4, batch_size: 40000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: zipfian, exponent: 1.1, min: 0, max: 200000}, range_length: 1}
  - cleanup
  - batch:
      name: edges
      ops:
        - [insert, 0, 0]
        - [insert, 0xFFFFFFFF, 0xFFFFFFFF]
        - [insert, 0xFFFFFFFF, 5]
        - [lookup, 0xFFFFFFFF]
        - [count, 0xFFFFFFFF, 0xFFFFFFFF]
        - [range, 0, 0]
  - phase: {name: q, batches: 2, batch_size: 20000, hit_ratio: 0.5,
            mix: {lookup: 0.6, count: 0.2, range: 0.2}, range_length: 1}
)");
  // The same workload at u32/u64 and u64/u64: keys across 2^32 (u64), the
  // edge batch with the ends of the width.
  const std::string text64 = R"(
key_type: u64
value_type: u64
seed: 5
initial: {count: 50000, keys: {distribution: uniform, min: 4294867296, max: 4295167296}}
steps:
  - phase: {name: p, batches: 4, batch_size: 40000, hit_ratio: 0.6,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: uniform, min: 4294867296, max: 4295167296}, range_length: 1}
  - flush
  - phase: {name: c, batches: 4, batch_size: 40000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: zipfian, exponent: 1.1, min: 0, max: 200000}, range_length: 1}
  - cleanup
  - batch:
      name: edges
      ops:
        - [insert, 0, 0]
        - [insert, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]
        - [insert, 0xFFFFFFFFFFFFFFFF, 5]
        - [insert, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFE]
        - [insert, 0x100000000, 0x100000000]
        - [lookup, 0xFFFFFFFFFFFFFFFF]
        - [lookup, 0xFFFFFFFF]
        - [lookup, 0x100000000]
        - [count, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF]
        - [range, 0, 0]
  - phase: {name: q, batches: 2, batch_size: 20000, hit_ratio: 0.5,
            mix: {lookup: 0.6, count: 0.2, range: 0.2}, range_length: 1}
)";
  const std::string p64 = write_yaml("slabhash64.yaml", text64);
  const std::string text3264 = R"(
key_type: u32
value_type: u64
seed: 5
initial: {count: 50000, keys: {distribution: uniform, min: 0, max: 200000}}
steps:
  - phase: {name: p, batches: 4, batch_size: 40000, hit_ratio: 0.6,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: uniform, min: 0, max: 200000}, range_length: 1}
  - flush
  - phase: {name: c, batches: 4, batch_size: 40000, mode: concurrent, hit_ratio: 0.5,
            mix: {insert: 0.3, delete: 0.2, lookup: 0.3, count: 0.1, range: 0.1},
            keys: {distribution: zipfian, exponent: 1.1, min: 0, max: 200000}, range_length: 1}
  - cleanup
  - batch:
      name: edges
      ops:
        - [insert, 0, 0]
        - [insert, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF]
        - [insert, 0xFFFFFFFF, 5]
        - [insert, 0xFFFFFFFE, 0x100000000]
        - [lookup, 0xFFFFFFFF]
        - [lookup, 0xFFFFFFFE]
        - [count, 0xFFFFFFFF, 0xFFFFFFFF]
        - [range, 0, 0]
  - phase: {name: q, batches: 2, batch_size: 20000, hit_ratio: 0.5,
            mix: {lookup: 0.6, count: 0.2, range: 0.2}, range_length: 1}
)";
  const std::string p3264 = write_yaml("slabhash3264.yaml", text3264);
  const std::pair<std::string, std::string> files[] = {{"u32/u32", p}, {"u32/u64", p3264}, {"u64/u64", p64}};
  for (const auto& file : files)
  for (M mode : kModes) {
    const std::string& kvl = file.first;
    const std::string& path = file.second;
    CAPTURE(kvl);
    CAPTURE(mode_arg(mode));
    for (const Opts& o : {Opts{{"mode", mode_arg(mode)}}, Opts{{"mode", mode_arg(mode)}, {"buckets", "97"}, {"flush-every", "3"}}}) {
      std::unique_ptr<Dictionary> d;
      const RunReport rep = replay_on(path, o, &d);
      CHECK(rep.mismatches == 0);
      CHECK(rep.checked > 0);
      for (const auto& mm : rep.first_mismatches)
        MESSAGE("batch " << mm.batch << " op " << mm.op << ": expected " << mm.expected << ", got " << mm.got);
      // The table the engine left: intact, and holding the pairs it counts.
      REQUIRE(d != nullptr);
      const slabhash::TableCheck c = slabhash::check_table(*d);
      INFO("table check: " << c.error);
      CHECK(c.error.empty());
      CHECK(c.pairs.size() == rep.final_stats.size);
      CHECK(slabhash::copy_table(*d).key_bytes == (kvl == "u64/u64" ? 8u : 4u));
      CHECK(slabhash::copy_table(*d).value_bytes == (kvl == "u32/u32" ? 4u : 8u));
    }
  }
  for (const std::string& f : {p, p64, p3264}) std::remove(f.c_str());
}

TEST_CASE("slabhash: the binary refuses what the slab hash cannot answer (exit 2) and a full pool (exit 3)") {
  using gpudict::testing::run_gpudict;
  const std::string bad = write_yaml("wide.yaml", R"(
seed: 1
initial: {count: 100}
steps:
  - batch: {name: b, ops: [[insert, 1, 1], [count, 3, 9]]}
)");
  auto r = run_gpudict("slabhash '" + bad + "' --backend gpu");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("single key only (lo == hi)") != std::string::npos);
  const std::string succ = write_yaml("succ.yaml", R"(
seed: 1
initial: {count: 100}
steps:
  - batch: {name: b, ops: [[successor, 1]]}
)");
  r = run_gpudict("slabhash '" + succ + "' --backend gpu");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("successor") != std::string::npos);
  const std::string big = write_yaml("big.yaml", R"(
seed: 1
initial: {count: 100000}
steps:
  - phase: {name: grow, batches: 1, batch_size: 400000, mix: {insert: 1.0}}
)");
  r = run_gpudict("slabhash '" + big + "' --backend gpu --buckets 64 --pool-slabs 1024 --pool-growth off");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("out of slab memory: ") != std::string::npos);
  r = run_gpudict("slabhash '" + big + "' --backend gpu --mode multimap --format json");
  CHECK(r.exit_code == 0);
  // u64 keys and values: the same exits.
  const std::string big64 = write_yaml("big64.yaml", R"(
key_type: u64
value_type: u64
seed: 1
initial: {count: 100000}
steps:
  - phase: {name: grow, batches: 1, batch_size: 400000, mix: {insert: 1.0}}
)");
  r = run_gpudict("slabhash '" + big64 + "' --backend gpu --buckets 64 --pool-slabs 1024 --pool-growth off");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("out of slab memory: ") != std::string::npos);
  r = run_gpudict("slabhash '" + big64 + "' --backend gpu --mode multimap --format json");
  CHECK(r.exit_code == 0);
  for (const auto& f : {bad, succ, big, big64}) std::remove(f.c_str());
}
