// btree_map's mixed calls against a std::map model, at every (key, value)
// width: update (inserts and deletes in one call; a key updated several
// times in a call ends as one of its updates left it), apply (every
// operation type in one concurrent pass: successors, counts and ranges with
// upper bounds, next to inserts and deletes; ranges that outgrow their room
// answered after the pass), device timing, typed stats, the memory bound
// and the structure after all of it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "core/btree/btree_map.hpp"
#include "core/btree/detail/btree_check.hpp"
#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "library_test_util.cuh"

using namespace library_test;

namespace {

// Keys of the lower half of the domain (the calls' updates) or the upper
// half (their queries: no query of an apply call sees a key it updates).
template <class K>
K lower(std::mt19937_64& rng) {
  return static_cast<K>(draw<K>(rng) >> 1);
}
template <class K>
K upper_half(std::mt19937_64& rng) {
  return static_cast<K>(draw<K>(rng) | (K{1} << (8 * sizeof(K) - 1)));
}

template <class K, class V>
void check_update_calls(gpudict::btree_map<K, V>& map, std::map<K, V>& model, std::mt19937_64& rng) {
  struct Call {
    size_t n;
    int erase_percent;
    bool repeats;  // keys repeated in the call
  };
  for (Call c : {Call{1, 0, false}, Call{1, 100, false}, Call{0, 50, false}, Call{700, 50, false},
                 Call{20000, 30, false}, Call{5000, 100, false}, Call{300000, 40, false}, Call{4000, 50, true}}) {
    std::vector<K> uk;
    std::vector<V> uv;
    std::vector<uint8_t> ue;
    std::set<K> named;
    std::vector<K> present;
    for (const auto& kv : model)
      if (present.size() < 4096 && rng() % 8 == 0) present.push_back(kv.first);
    for (size_t i = 0; i < c.n; ++i) {
      K k;
      if (i < ends<K>().size() && c.n > 100) k = ends<K>()[i];
      else if (c.repeats && !uk.empty() && rng() % 3 == 0) k = uk[rng() % uk.size()];
      else if (rng() % 3 == 0 && !present.empty()) k = present[rng() % present.size()];
      else k = draw<K>(rng);
      if (!c.repeats && !named.insert(k).second) continue;
      uk.push_back(k);
      uv.push_back(draw<V>(rng));
      ue.push_back(static_cast<int>(rng() % 100) < c.erase_percent ? 1 : 0);
    }
    const auto dk = to_device(uk);
    const auto dv = to_device(uv);
    const auto de = to_device(ue);
    const bool deletes_only = c.erase_percent == 100;
    map.update(dk.data(), deletes_only ? nullptr : dv.data(), reinterpret_cast<const bool*>(de.data()), uk.size());
    // What each key may be now: absent when the call deletes it, else any
    // value the call inserts for it (several updates: any one may win).
    std::map<K, std::vector<std::pair<bool, V>>> outcomes;
    for (size_t i = 0; i < uk.size(); ++i) outcomes[uk[i]].push_back({!ue[i], uv[i]});
    std::vector<K> keys;
    for (const auto& o : outcomes) keys.push_back(o.first);
    gpudict::DeviceBuffer<V> vals(std::max<size_t>(keys.size(), 1), "test");
    gpudict::DeviceBuffer<bool> found(std::max<size_t>(keys.size(), 1), "test");
    const auto dq = to_device(keys);
    map.find(dq.data(), keys.size(), vals.data(), found.data());
    const auto hv = to_host(vals, keys.size());
    const auto hf = flags_to_host(found, keys.size());
    int bad = 0;
    for (size_t j = 0; j < keys.size(); ++j) {
      const auto& may = outcomes[keys[j]];
      const bool ok = std::any_of(may.begin(), may.end(), [&](const std::pair<bool, V>& o) {
        return o.first == static_cast<bool>(hf[j]) && (!o.first || o.second == hv[j]);
      });
      if (!ok && ++bad <= 3) FAIL_CHECK("key " << keys[j] << " found " << int(hf[j]) << " value " << hv[j]);
      if (may.size() > 1 || c.repeats) {  // the model follows the outcome the tree chose
        if (hf[j]) model[keys[j]] = hv[j];
        else model.erase(keys[j]);
      } else if (may[0].first) {
        model[keys[j]] = may[0].second;
      } else {
        model.erase(keys[j]);
      }
    }
    CHECK(bad == 0);
    check_find(map, model, probes_of(model, rng, 1024));
  }
}

template <class K, class V>
void check_apply(gpudict::btree_map<K, V>& map, std::map<K, V>& model, std::mt19937_64& rng, size_t n_ops,
                 bool crowded_ranges) {
  std::vector<uint8_t> ops;
  std::vector<K> keys, upper;
  std::vector<V> values;
  std::set<K> named;  // keys the call updates (each once)
  std::vector<K> lower_present;
  for (auto it = model.begin(); it != model.end() && lower_present.size() < 4096; ++it)
    if (!(it->first >> (8 * sizeof(K) - 1)) && rng() % 4 == 0) lower_present.push_back(it->first);
  auto push = [&](gpudict::op_code op, K k, V v, K hi) {
    ops.push_back(static_cast<uint8_t>(op));
    keys.push_back(k);
    values.push_back(v);
    upper.push_back(hi);
  };
  // Crowded ranges: a range of the upper half and 300 inserts into it in
  // the same call, more than the room its pre-pass count gives it when the
  // inserts land first.
  std::vector<std::pair<K, K>> crowded;
  if (crowded_ranges) {
    for (int r = 0; r < 4; ++r) {
      const K lo = std::min<K>(upper_half<K>(rng), static_cast<K>(~K{0} - 100000));
      crowded.push_back({lo, static_cast<K>(lo + 50000)});
    }
  }
  // Whether [lo, hi] meets a crowded range (queries there are left out).
  auto touches_crowd = [&](K lo, K hi) {
    for (const auto& c : crowded)
      if (lo <= c.second && c.first <= hi) return true;
    return false;
  };
  for (size_t i = 0; i < n_ops; ++i) {
    const int kind = static_cast<int>(rng() % 6);
    if (kind == 0) {  // insert a fresh key of the lower half
      const K k = lower<K>(rng);
      if (!named.insert(k).second) continue;
      push(gpudict::op_code::insert, k, draw<V>(rng), 0);
    } else if (kind == 1) {  // delete a present (or absent) key of the lower half
      const K k = !lower_present.empty() && rng() % 2 ? lower_present[rng() % lower_present.size()] : lower<K>(rng);
      if (!named.insert(k).second) continue;
      push(gpudict::op_code::erase, k, 0, 0);
    } else {
      const K k = upper_half<K>(rng);
      const K span = static_cast<K>(rng() % 3 == 0 ? rng() % 64 : (draw<K>(rng) >> (8 * sizeof(K) - 24)));
      const K hi = k > static_cast<K>(~K{0} - span) ? static_cast<K>(~K{0}) : static_cast<K>(k + span);
      const gpudict::op_code op = kind == 2   ? gpudict::op_code::find
                                  : kind == 3 ? gpudict::op_code::successor
                                  : kind == 4 ? gpudict::op_code::count
                                              : gpudict::op_code::range;
      if (op == gpudict::op_code::find && touches_crowd(k, k)) continue;
      if (op == gpudict::op_code::successor) {
        const auto it = model.upper_bound(k);
        if (touches_crowd(k, it == model.end() ? static_cast<K>(~K{0}) : it->first)) continue;
      }
      if ((op == gpudict::op_code::count || op == gpudict::op_code::range) && touches_crowd(k, hi)) continue;
      push(op, k, 0, hi);
    }
  }
  std::map<K, V> crowd_inserts;
  for (const auto& c : crowded) {
    push(gpudict::op_code::range, c.first, 0, c.second);
    for (int j = 0; j < 300; ++j) {
      const K k = static_cast<K>(c.first + rng() % 50001);
      if (crowd_inserts.count(k) || model.count(k)) continue;  // fresh keys only
      const V v = draw<V>(rng);
      crowd_inserts[k] = v;
      push(gpudict::op_code::insert, k, v, 0);
    }
  }
  const size_t n = ops.size();
  const auto dops = to_device(ops);
  const auto dk = to_device(keys);
  const auto dv = to_device(values);
  const auto dhi = to_device(upper);
  const size_t room = std::max<size_t>(n, 1);
  gpudict::DeviceBuffer<bool> found(room, "test");
  gpudict::DeviceBuffer<V> vals(room, "test");
  gpudict::DeviceBuffer<K> succ(room, "test");
  gpudict::DeviceBuffer<uint64_t> counts(room, "test"), offsets(room, "test");
  gpudict::mixed_outputs<K, V> out;
  out.found = found.data();
  out.values = vals.data();
  out.keys = succ.data();
  out.counts = counts.data();
  out.offsets = offsets.data();
  const auto pairs = map.apply(dops.data(), gpudict::op_code::find, dk.data(), dv.data(), dhi.data(), n, out);
  REQUIRE((pairs.size == 0 || (pairs.keys != nullptr && pairs.values != nullptr)));
  std::vector<K> pk(pairs.size);
  std::vector<V> pv(pairs.size);
  if (pairs.size) {
    GPUDICT_CUDA(cudaMemcpy(pk.data(), pairs.keys, pairs.size * sizeof(K), cudaMemcpyDeviceToHost));
    GPUDICT_CUDA(cudaMemcpy(pv.data(), pairs.values, pairs.size * sizeof(V), cudaMemcpyDeviceToHost));
  }
  const auto hf = flags_to_host(found, n);
  const auto hv = to_host(vals, n);
  const auto hs = to_host(succ, n);
  const auto hc = to_host(counts, n);
  const auto ho = to_host(offsets, n);
  // Queries of the upper half see the model (the call updates none of its
  // keys), but for the crowded ranges: any subset of their inserts.
  int bad = 0;
  size_t crowded_at = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto op = static_cast<gpudict::op_code>(ops[i]);
    const K k = keys[i], hi = upper[i];
    bool ok = true;
    if (op == gpudict::op_code::find) {
      const auto it = model.find(k);
      ok = static_cast<bool>(hf[i]) == (it != model.end()) && hv[i] == (it == model.end() ? V{0} : it->second);
    } else if (op == gpudict::op_code::successor) {
      const auto it = model.upper_bound(k);
      ok = static_cast<bool>(hf[i]) == (it != model.end()) &&
           (it == model.end() ? hs[i] == 0 && hv[i] == 0 : hs[i] == it->first && hv[i] == it->second);
    } else if (op == gpudict::op_code::count || op == gpudict::op_code::range) {
      const bool is_crowded = op == gpudict::op_code::range && crowded_at < crowded.size() &&
                              crowded[crowded_at].first == k && crowded[crowded_at].second == hi;
      std::vector<std::pair<K, V>> want;
      for (auto it = model.lower_bound(k); it != model.end() && it->first <= hi; ++it) want.push_back(*it);
      if (op == gpudict::op_code::count) {
        ok = hc[i] == want.size();
      } else {
        ok = ho[i] + hc[i] <= pairs.size;
        std::vector<std::pair<K, V>> got;
        for (uint64_t x = ho[i]; ok && x < ho[i] + hc[i]; ++x) got.push_back({pk[x], pv[x]});
        if (is_crowded) {
          // Every pair the model has there, and any of the call's inserts
          // into it, in key order.
          ++crowded_at;
          for (size_t x = 1; x < got.size(); ++x) ok = ok && got[x - 1].first < got[x].first;
          for (const auto& p : got) {
            const auto m = model.find(p.first);
            const auto c = crowd_inserts.find(p.first);
            ok = ok && ((m != model.end() && m->second == p.second) ||
                        (c != crowd_inserts.end() && c->second == p.second));
          }
          for (const auto& w : want) ok = ok && std::find(got.begin(), got.end(), w) != got.end();
        } else {
          ok = ok && got == want;
        }
      }
    }
    if (!ok && ++bad <= 3) FAIL_CHECK("op " << int(ops[i]) << " key " << k << " upper " << hi);
  }
  CHECK(bad == 0);
  for (size_t i = 0; i < n; ++i) {
    const auto op = static_cast<gpudict::op_code>(ops[i]);
    if (op == gpudict::op_code::insert) model[keys[i]] = values[i];
    if (op == gpudict::op_code::erase) model.erase(keys[i]);
  }
  CHECK(map.size() == model.size());
}

// apply of ranges only, n of them from keys drawn from the model or the
// domain, each over about mean_pairs keys: given as a uniform code, or as ops with or without the kinds
// hint. Each range's pairs lie contiguously at its offset, in key order
// (ranges in any order); short ranges come back where the range list left
// them, long ones laid out after it.
template <class K, class V>
void check_apply_ranges(gpudict::btree_map<K, V>& map, const std::map<K, V>& model, std::mt19937_64& rng, size_t n,
                        size_t mean_pairs, int how) {
  std::vector<K> sorted;
  for (const auto& kv : model) sorted.push_back(kv.first);
  std::vector<K> lo(n), hi(n);
  for (size_t i = 0; i < n; ++i) {
    // From a key of the model or of the domain to the key about mean_pairs
    // keys further (the domain's end past the last).
    lo[i] = i < ends<K>().size() ? ends<K>()[i] : rng() % 2 ? sorted[rng() % sorted.size()] : draw<K>(rng);
    const size_t at = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), lo[i]) - sorted.begin());
    const size_t last = at + mean_pairs / 2 + rng() % (mean_pairs + 1);
    hi[i] = last < sorted.size() ? sorted[last] : std::numeric_limits<K>::max();
  }
  if (n > 3) hi[3] = lo[3] > 0 ? lo[3] - 1 : lo[3];  // an empty range (lo > hi), or one key
  const auto dlo = to_device(lo);
  const auto dhi = to_device(hi);
  const std::vector<uint8_t> ops(n, static_cast<uint8_t>(gpudict::op_code::range));
  const auto dops = to_device(ops);
  gpudict::DeviceBuffer<uint64_t> counts(n, "test"), offsets(n, "test");
  gpudict::mixed_outputs<K, V> out;
  out.counts = counts.data();
  out.offsets = offsets.data();
  if (how == 2) out.kinds_hint = 1u << static_cast<unsigned>(gpudict::op_code::range);
  const auto pairs = how == 0 ? map.apply(nullptr, gpudict::op_code::range, dlo.data(), nullptr, dhi.data(), n, out)
                              : map.apply(dops.data(), gpudict::op_code::find, dlo.data(), nullptr, dhi.data(), n, out);
  REQUIRE(pairs.keys != nullptr);
  std::vector<K> pk(pairs.size);
  std::vector<V> pv(pairs.size);
  if (pairs.size) {
    GPUDICT_CUDA(cudaMemcpy(pk.data(), pairs.keys, pairs.size * sizeof(K), cudaMemcpyDeviceToHost));
    GPUDICT_CUDA(cudaMemcpy(pv.data(), pairs.values, pairs.size * sizeof(V), cudaMemcpyDeviceToHost));
  }
  const auto hc = to_host(counts, n);
  const auto ho = to_host(offsets, n);
  int bad = 0;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::pair<K, V>> want;
    if (lo[i] <= hi[i])
      for (auto it = model.lower_bound(lo[i]); it != model.end() && it->first <= hi[i]; ++it) want.push_back(*it);
    bool ok = hc[i] == want.size() && ho[i] + hc[i] <= pairs.size;
    for (size_t j = 0; ok && j < want.size(); ++j)
      ok = pk[ho[i] + j] == want[j].first && pv[ho[i] + j] == want[j].second;
    total += want.size();
    if (!ok && ++bad <= 3)
      FAIL_CHECK("range " << i << " [" << lo[i] << ", " << hi[i] << "]: " << hc[i] << " pairs at " << ho[i]
                          << ", want " << want.size());
  }
  CHECK(bad == 0);
  CHECK(pairs.size >= total);
  MESSAGE("apply of " << n << " ranges (" << total << " pairs, " << pairs.size << " slots)");
}

}  // namespace

TEST_CASE_TEMPLATE("btree_map: update of mixed inserts and deletes, apply of every operation type, timing, stats, "
                   "bound, structure", P, u32_u32, u32_u64, u64_u32, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(61);
  gpudict::btree_map<K, V> map;
  gpudict::device_timing timing;
  map.set_timing(&timing);
  std::map<K, V> model = build_random(map, rng, 200000);
  CHECK(timing.ms > 0.0);
  double before = timing.ms;
  check_update_calls(map, model, rng);
  CHECK(timing.ms > before);
  CHECK(map.size() == model.size());
  const auto s = map.stats();
  CHECK(s.merged_update_lists + s.ops_update_lists >= 6);
  // The bound for what the map did so far (range calls come after: their
  // outputs grow with their results, outside the bound).
  gpudict::capacity_bounds b;
  b.max_resident = model.size() + 300000;
  b.max_inserted = model.size() + 300000;
  b.max_batch = 300000;
  b.max_queries = 1 << 16;
  CHECK(map.device_bytes_needed(b) >= s.device_bytes);
  before = timing.ms;
  check_apply(map, model, rng, 1, false);
  check_apply(map, model, rng, 40000, false);
  check_apply(map, model, rng, 3000, true);
  check_apply(map, model, rng, 200000, true);
  CHECK(timing.ms > before);
  MESSAGE("concurrent ranges answered after their pass: " << map.stats().concurrent_range_reruns);
  // An apply of updates only (the operations kernel, no queries) and of an
  // empty call; an operation code that is none is refused before anything runs.
  {
    std::vector<K> uk = {lower<K>(rng), lower<K>(rng)};
    if (uk[0] == uk[1]) uk.pop_back();
    std::vector<V> uv(uk.size(), V{7});
    std::vector<uint8_t> ops(uk.size(), static_cast<uint8_t>(gpudict::op_code::insert));
    const auto dops = to_device(ops);
    const auto dk = to_device(uk);
    const auto dv = to_device(uv);
    const auto pairs = map.apply(dops.data(), gpudict::op_code::find, dk.data(), dv.data(), nullptr, uk.size(), {});
    CHECK(pairs.size == 0);
    for (K k : uk) model[k] = 7;
    CHECK(map.apply(nullptr, gpudict::op_code::find, dk.data(), nullptr, nullptr, 0, {}).size == 0);
    std::vector<uint8_t> bad_ops(uk.size(), 9);
    const auto dbad = to_device(bad_ops);
    CHECK_THROWS_AS(map.apply(dbad.data(), gpudict::op_code::find, dk.data(), nullptr, nullptr, uk.size(), {}),
                    gpudict::InputError);
  }
  check_find(map, model, probes_of(model, rng, 1024));
  check_successor(map, model, probes_of(model, rng, 2048));
  check_count_range(map, model, rng);
  for (int how = 0; how < 3; ++how) {
    check_apply_ranges(map, model, rng, 1, 8, how);
    check_apply_ranges(map, model, rng, 30000, 8, how);    // one thread per range: no holes
    check_apply_ranges(map, model, rng, 2000, 200, how);   // the lock-step kernel: laid out after it
  }
  // Which kernel a list takes follows its estimate (u64 keys here are
  // clustered: their estimates are off until learned), so no count of either.
  MESSAGE("range lists: " << map.stats().point_range_lists << " one thread per range, "
                          << map.stats().tile_range_lists << " in tiles");
  CHECK(map.size() == model.size());
  const std::string problems = gpudict::check_btree_structure(map);
  INFO(problems);
  CHECK(problems.empty());
  map.set_timing(nullptr);
  const double frozen = timing.ms;
  check_find(map, model, probes_of(model, rng, 256));
  CHECK(timing.ms == frozen);
}
