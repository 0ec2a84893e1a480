// The ordered containers' mixed update call (sorted_array_map::update,
// lsm_map::update: inserts and deletes merged in one call), their device
// timing, typed stats and memory bound, at every (key, value) width, against
// a std::map model: a key updated several times in a call (inserts and
// deletes mixed), the domain's ends, absent deletes, empty calls and calls
// of one, a call of deletes only (no values).
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "core/common/device_buffer.hpp"
#include "core/lsm/lsm_map.hpp"
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
  std::map<K, V> model;
  std::vector<K> keys = ends<K>();
  std::vector<V> values;
  for (size_t i = 0; i < keys.size(); ++i) values.push_back(ends<V>()[i % ends<V>().size()]);
  for (int i = 0; i < 30000; ++i) {
    keys.push_back(draw<K>(rng));
    values.push_back(draw<V>(rng));
  }
  for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = values[i];
  {
    const auto dk = to_device(keys);
    const auto dv = to_device(values);
    map.build(dk.data(), dv.data(), keys.size());
  }
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
  b.max_inserted = keys.size() + 60000;
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
