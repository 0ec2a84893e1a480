// The containers' mixed update call (sorted_array_map::update,
// lsm_map::update, slab_hash_map::update: inserts and deletes in one call),
// the slab hash's mixed call (apply), device timing, typed stats and memory
// bounds, at every (key, value) width, against a std::map model: a key
// updated several times in a call (inserts and deletes mixed), the domain's
// ends, absent deletes, empty calls and calls of one, a call of deletes only
// (no values), multimap keys of several values.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "core/lsm/lsm_map.hpp"
#include "core/slabhash/slab_hash_map.hpp"
#include "core/sorted_array/sorted_array_map.hpp"
#include "library_test_util.cuh"

using namespace library_test;

namespace {

// What a call leaves for each key it updates: sorted array, the later
// update wins; LSM, a delete anywhere in the call wins, else the last insert.
enum class Rule { LaterWins, DeleteWins };

template <class K, class V>
void apply_model(std::map<K, V>& model, const std::vector<K>& keys, const std::vector<V>& values,
                 const std::vector<uint8_t>& erase, Rule rule) {
  std::map<K, bool> deleted;  // keys the call deletes (DeleteWins)
  for (size_t i = 0; i < keys.size(); ++i)
    if (erase[i]) deleted[keys[i]] = true;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (rule == Rule::DeleteWins && deleted.count(keys[i])) {
      model.erase(keys[i]);
    } else if (erase[i]) {
      model.erase(keys[i]);
    } else {
      model[keys[i]] = values[i];
    }
  }
}

template <class Map, class K, class V>
void check_mixed_updates(Map& map, Rule rule, uint64_t seed) {
  std::mt19937_64 rng(seed);
  gpudict::device_timing timing;
  map.set_timing(&timing);
  std::map<K, V> model = build_random(map, rng, 30000);
  CHECK(timing.ms > 0.0);
  // Calls: one insert, one delete, empty, small and large mixes, deletes
  // only; a quarter of each mix repeats a key of the call, a quarter names a
  // present key, the domain's ends are among the keys.
  struct Call {
    size_t n;
    int erase_percent;
  };
  for (Call c : {Call{1, 0}, Call{1, 100}, Call{0, 50}, Call{700, 50}, Call{20000, 30}, Call{5000, 100},
                 Call{20000, 70}}) {
    std::vector<K> uk;
    std::vector<V> uv;
    std::vector<uint8_t> ue;
    std::vector<K> present;
    for (const auto& kv : model)
      if (present.size() < 4096 && rng() % 8 == 0) present.push_back(kv.first);
    for (size_t i = 0; i < c.n; ++i) {
      const uint64_t pick = rng() % 4;
      K k;
      if (i < ends<K>().size() && c.n > 100) k = ends<K>()[i];
      else if (pick == 0 && !uk.empty()) k = uk[rng() % uk.size()];
      else if (pick == 1 && !present.empty()) k = present[rng() % present.size()];
      else k = draw<K>(rng);
      uk.push_back(k);
      uv.push_back(draw<V>(rng));
      ue.push_back(static_cast<int>(rng() % 100) < c.erase_percent ? 1 : 0);
    }
    apply_model(model, uk, uv, ue, rule);
    const auto dk = to_device(uk);
    const auto dv = to_device(uv);
    std::vector<uint8_t> flags(ue);
    const auto de = to_device(flags);
    const bool deletes_only = c.erase_percent == 100;
    const double before = timing.ms;
    map.update(dk.data(), deletes_only ? nullptr : dv.data(), reinterpret_cast<const bool*>(de.data()), uk.size());
    if (c.n > 0) CHECK(timing.ms > before);
    std::vector<K> probes = uk;
    const auto more = probes_of(model, rng, 1024);
    probes.insert(probes.end(), more.begin(), more.end());
    check_find(map, model, probes);
  }
  CHECK(map.stats().size == model.size());
  // The typed figures, and the bound for what the test did so far (range
  // calls come after: their outputs are the caller's, and what a map sizes
  // for a null output is outside its bound).
  gpudict::capacity_bounds b;
  b.max_resident = model.size() + 60000;
  b.max_inserted = model.size() + 60000;
  b.max_batch = 20000;
  b.max_queries = 1 << 16;
  b.max_snapshots = 1;
  {
    auto snap = map.snapshot();
    const auto s = map.stats();
    CHECK(s.snapshots == 1);
    CHECK(s.device_bytes > 0);
    CHECK(map.device_bytes_needed(b) >= s.device_bytes);
  }
  CHECK(map.stats().snapshots == 0);
  check_successor(map, model, probes_of(model, rng, 2048));
  check_count_range(map, model, rng);
  map.set_timing(nullptr);
  const double frozen = timing.ms;
  check_find(map, model, probes_of(model, rng, 256));
  CHECK(timing.ms == frozen);
}

}  // namespace

TEST_CASE_TEMPLATE("sorted_array_map: update merges inserts and deletes, the later wins; timing, stats, bound", P,
                   u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  gpudict::sorted_array_map<K, V> map;
  check_mixed_updates<gpudict::sorted_array_map<K, V>, K, V>(map, Rule::LaterWins, 51);
}

TEST_CASE_TEMPLATE("lsm_map: update merges inserts and deletes, a delete wins; timing, stats, bound, cleanup", P,
                   u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  gpudict::lsm_options o;
  o.batch_size = 4096;
  o.stale_fraction = 0;    // no cleanups by the policy: the one below is the first
  o.exact_stale = true;    // stats().size exact
  gpudict::lsm_map<K, V> map(o);
  check_mixed_updates<gpudict::lsm_map<K, V>, K, V>(map, Rule::DeleteWins, 52);
  gpudict::device_timing timing;
  map.set_timing(&timing);
  const uint64_t size = map.stats().size;
  map.cleanup();
  CHECK(timing.cleanup_ms > 0.0);
  CHECK(map.stats().cleanups == 1);
  CHECK(map.stats().size == size);
  CHECK(map.stats().stale == 0);
  CHECK(map.stored_elements() == size);
}

namespace {

// A multimap model: each key's values, as a sorted list.
template <class K, class V>
using Multi = std::map<K, std::vector<V>>;

}  // namespace

TEST_CASE_TEMPLATE("slab_hash_map: update (multimap: deletes, then inserts), apply of mixed operations, cleanup, "
                   "timing, stats, bound",
                   P, u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  for (auto mode : {gpudict::slabhash::Mode::Map, gpudict::slabhash::Mode::Multimap}) {
    const bool multi = mode == gpudict::slabhash::Mode::Multimap;
    CAPTURE(multi);
    std::mt19937_64 rng(53);
    gpudict::slab_hash_options o;
    o.mode = mode;
    o.flush_tombstones = 0;  // no flush by the policy: cleanup() below is the first
    gpudict::slab_hash_map<K, V> map(o);
    gpudict::device_timing timing;
    map.set_timing(&timing);
    Multi<K, V> model;
    std::vector<K> keys = ends<K>();
    std::vector<V> values;
    for (size_t i = 0; i < keys.size(); ++i) values.push_back(ends<V>()[i % ends<V>().size()]);
    std::set<K> taken(keys.begin(), keys.end());
    while (keys.size() < 20000) {
      const K k = draw<K>(rng);
      if (!taken.insert(k).second) continue;
      keys.push_back(k);
      values.push_back(draw<V>(rng));
    }
    for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = {values[i]};
    {
      const auto dk = to_device(keys);
      const auto dv = to_device(values);
      map.build(dk.data(), dv.data(), keys.size());
    }
    CHECK(timing.ms > 0.0);
    // A mixed update: deletes of present and absent keys, inserts of new
    // keys and (multimap) of present ones; map mode keeps each key to one
    // update so that the outcome is determined.
    std::vector<K> uk;
    std::vector<V> uv;
    std::vector<uint8_t> ue;
    std::set<K> used;
    for (int i = 0; i < 30000; ++i) {
      const bool del = rng() % 3 == 0;
      K k = rng() % 2 ? keys[rng() % keys.size()] : draw<K>(rng);
      if (!multi && !used.insert(k).second) continue;
      uk.push_back(k);
      uv.push_back(draw<V>(rng));
      ue.push_back(del ? 1 : 0);
    }
    for (size_t i = 0; i < uk.size(); ++i)  // every delete first (multimap); map: one update per key
      if (ue[i]) model.erase(uk[i]);
    for (size_t i = 0; i < uk.size(); ++i)
      if (!ue[i]) {
        if (multi)
          model[uk[i]].push_back(uv[i]);
        else
          model[uk[i]] = {uv[i]};
      }
    {
      const auto dk = to_device(uk);
      const auto dv = to_device(uv);
      const auto de = to_device(ue);
      const double before = timing.ms;
      map.update(dk.data(), dv.data(), reinterpret_cast<const bool*>(de.data()), uk.size());
      CHECK(timing.ms > before);
    }
    uint64_t pairs = 0;
    for (const auto& kv : model) pairs += kv.second.size();
    CHECK(map.size() == pairs);
    // apply: counts and ranges of present and absent keys, finds, and
    // inserts of fresh keys nothing else in the call names (concurrent
    // semantics: the queries see the state before or after them, the same
    // for keys the call does not change).
    std::vector<K> ak;
    std::vector<V> av;
    std::vector<uint8_t> ops;
    std::vector<K> fresh;
    for (int i = 0; i < 8000; ++i) {
      const int kind = static_cast<int>(rng() % 4);
      if (kind == 0) {
        K k = draw<K>(rng);
        if (model.count(k) || !taken.insert(k).second) continue;
        fresh.push_back(k);
        ak.push_back(k);
        av.push_back(draw<V>(rng));
        ops.push_back(static_cast<uint8_t>(gpudict::op_code::insert));
        continue;
      }
      const K k = rng() % 4 ? uk[rng() % uk.size()] : draw<K>(rng);
      if (std::find(fresh.begin(), fresh.end(), k) != fresh.end()) continue;
      ak.push_back(k);
      av.push_back(0);
      ops.push_back(static_cast<uint8_t>(kind == 1 ? gpudict::op_code::find
                                                   : kind == 2 ? gpudict::op_code::count : gpudict::op_code::range));
    }
    const size_t n = ak.size();
    const auto dk = to_device(ak);
    const auto dv = to_device(av);
    const auto dops = to_device(ops);
    gpudict::DeviceBuffer<bool> found(n, "test");
    gpudict::DeviceBuffer<V> vals(n, "test");
    gpudict::DeviceBuffer<uint64_t> counts(n, "test"), offsets(n, "test");
    gpudict::mixed_outputs<K, V> out;
    out.found = found.data();
    out.values = vals.data();
    out.counts = counts.data();
    out.offsets = offsets.data();
    const auto pairs_out = map.apply(dops.data(), gpudict::op_code::find, dk.data(), dv.data(), nullptr, n, out);
    std::vector<V> range_values(pairs_out.size);
    if (pairs_out.size)
      GPUDICT_CUDA(cudaMemcpy(range_values.data(), pairs_out.values, pairs_out.size * sizeof(V),
                              cudaMemcpyDeviceToHost));
    CHECK(pairs_out.keys == nullptr);
    const auto hf = flags_to_host(found, n);
    const auto hv = to_host(vals, n);
    const auto hc = to_host(counts, n);
    const auto ho = to_host(offsets, n);
    int bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto it = model.find(ak[i]);
      const auto op = static_cast<gpudict::op_code>(ops[i]);
      const uint64_t want = it == model.end() ? 0 : it->second.size();
      bool ok = true;
      if (op == gpudict::op_code::find) {
        ok = hf[i] == (it != model.end()) &&
             (it == model.end() || std::find(it->second.begin(), it->second.end(), hv[i]) != it->second.end());
      } else if (op == gpudict::op_code::count) {
        ok = hc[i] == want;
      } else if (op == gpudict::op_code::range) {
        std::vector<V> got(range_values.begin() + static_cast<long>(std::min<uint64_t>(ho[i], range_values.size())),
                           range_values.begin() + static_cast<long>(std::min<uint64_t>(ho[i] + hc[i], range_values.size())));
        std::vector<V> w = it == model.end() ? std::vector<V>{} : it->second;
        std::sort(got.begin(), got.end());
        std::sort(w.begin(), w.end());
        ok = hc[i] == want && got == w;
      }
      if (!ok && ++bad <= 3) FAIL_CHECK("op " << int(ops[i]) << " key " << ak[i]);
    }
    CHECK(bad == 0);
    for (size_t i = 0; i < n; ++i)
      if (static_cast<gpudict::op_code>(ops[i]) == gpudict::op_code::insert) model[ak[i]].push_back(av[i]);
    pairs = 0;
    for (const auto& kv : model) pairs += kv.second.size();
    CHECK(map.size() == pairs);
    // Successors are refused.
    CHECK_THROWS_AS(map.apply(nullptr, gpudict::op_code::successor, dk.data(), nullptr, nullptr, 1, out), gpudict::InputError);
    // The bound covers what the map holds; cleanup drops the tombstones.
    gpudict::capacity_bounds b;
    b.max_resident = pairs + 40000;
    b.max_inserted = keys.size() + 40000;
    b.max_batch = 30000;
    b.max_queries = 30000;
    const auto s = map.stats();
    CHECK(s.size == pairs);
    CHECK(s.tombstones > 0);
    CHECK(map.device_bytes_needed(b) >= s.device_bytes);
    map.cleanup();
    CHECK(timing.cleanup_ms > 0.0);
    CHECK(map.stats().tombstones == 0);
    CHECK(map.stats().flushes == 1);
    CHECK(map.size() == pairs);
    std::map<K, V> one;  // a value of each key: find returns one of them
    for (const auto& kv : model) one[kv.first] = kv.second.front();
    if (!multi) check_find(map, one, probes_of(one, rng, 2048));
  }
}
