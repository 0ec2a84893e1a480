// The multiversion B-Tree (mvbtree_map) against std::map models, with the
// structural checker (mvbtree_check.hpp) after every step: every query at
// the latest state and at several live snapshots while updates go on; trees grown from empty (the root leaf pushed down under snapshots)
// by ascending, descending and random streams; snapshots dropped in every
// order with the version pool emptying; stamps renumbered; a hot key
// updated by a whole call; concurrent mixed calls; the merge path and the
// operations kernel; every (key, value) width.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "core/common/errors.hpp"
#include "core/mvbtree/detail/mvbtree_check.hpp"
#include "core/mvbtree/mvbtree_map.hpp"
#include "core/mvbtree/mvbtree_ref.cuh"
#include "library_test_util.cuh"

using namespace library_test;

namespace {

template <class K, class V>
using Map = gpudict::mvbtree_map<K, V>;
template <class K, class V>
using Snap = gpudict::mvbtree_snapshot<K, V>;

gpudict::mvbtree_options options_for(gpudict::btree::PhasedUpdates path) {
  gpudict::mvbtree_options o;
  o.tree.phased_updates = path;
  return o;
}

// find, successor, count, range and the ref's find and successor of a
// state (the map or a snapshot) against its model.
template <class S, class K, class V>
void check_state(S& s, const std::map<K, V>& model, std::mt19937_64& rng, size_t absent = 512) {
  const auto probes = probes_of(model, rng, absent);
  check_find(s, model, probes);
  check_successor(s, model, probes);
  check_count_range(s, model, rng);
  check_ref_queries(s.template ref<gpudict::mvbtree_ref<K, V>>(), model, probes);
}

// One update call: `ins` inserted (upserts of present keys among them),
// `del` deleted (absent ones among them), keys unique within the call.
template <class K, class V>
void update_call(Map<K, V>& map, std::map<K, V>& model, const std::vector<K>& ins, const std::vector<K>& del,
                 std::mt19937_64& rng) {
  std::vector<K> keys;
  std::vector<V> values;
  std::vector<uint8_t> erase;
  std::set<K> seen;
  for (K k : ins) {
    if (!seen.insert(k).second) continue;
    keys.push_back(k);
    values.push_back(draw<V>(rng));
    erase.push_back(0);
    model[k] = values.back();
  }
  for (K k : del) {
    if (!seen.insert(k).second) continue;
    keys.push_back(k);
    values.push_back(V{0});
    erase.push_back(1);
    model.erase(k);
  }
  const auto dk = to_device(keys);
  const auto dv = to_device(values);
  const auto de = to_device(erase);
  map.update(dk.data(), dv.data(), reinterpret_cast<const bool*>(de.data()), keys.size());
}

// n keys of a stream: ascending, descending or random, from `next`.
template <class K>
std::vector<K> stream_keys(int kind, K& next, int n, std::mt19937_64& rng) {
  std::vector<K> k;
  for (int i = 0; i < n; ++i) {
    if (kind == 0) k.push_back(next++);
    else if (kind == 1) k.push_back(next--);
    else k.push_back(draw<K>(rng));
  }
  return k;
}

template <class K, class V>
std::vector<K> some_present(const std::map<K, V>& model, std::mt19937_64& rng, int one_in) {
  std::vector<K> k;
  for (const auto& kv : model)
    if (rng() % one_in == 0) k.push_back(kv.first);
  return k;
}

template <class K, class V>
struct Live {
  Snap<K, V> snap;
  std::map<K, V> model;
};

template <class K, class V>
void grow_from_empty(gpudict::btree::PhasedUpdates path, int kind, uint64_t seed) {
  CAPTURE(kind);
  CAPTURE(static_cast<int>(path));
  std::mt19937_64 rng(seed);
  Map<K, V> map(options_for(path));
  std::map<K, V> model;
  std::deque<Live<K, V>> live;
  K next = kind == 1 ? K(~K{0}) : K{0};  // the domain's ends first
  for (int call = 0; call < 24; ++call) {
    live.push_back({map.snapshot(), model});
    const auto ins = stream_keys<K>(kind, next, 64 + 40 * call, rng);
    update_call(map, model, ins, some_present(model, rng, 9), rng);
    if (call % 6 == 5) {
      CHECK(gpudict::check_mvbtree_structure(map) == "");
      check_state(map, model, rng);
      for (auto& l : live) check_state(l.snap, l.model, rng, 64);
    }
    if (live.size() > 4) live.erase(live.begin() + static_cast<long>(rng() % live.size()));  // dropped here
  }
  check_state(map, model, rng);
  for (auto& l : live) check_state(l.snap, l.model, rng);
  CHECK(map.stats().version_copies > 0);
  CHECK(gpudict::check_mvbtree_structure(map) == "");
  live.clear();
  CHECK(gpudict::check_mvbtree_structure(map) == "");
  const auto s = map.stats();
  CHECK(s.snapshots == 0);
  CHECK(s.version_copies == 0);
  CHECK(s.versioned_leaves == 0);
  CHECK(s.copies_reclaimed == s.copies_made);
  CHECK(s.version_pool_nodes == 0);  // the empty pool went back to the device
  check_state(map, model, rng);
}

}  // namespace

TEST_CASE_TEMPLATE("mvbtree_map: grown from empty under snapshots (ascending, descending, random streams)", P,
                   u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  for (auto path : {gpudict::btree::PhasedUpdates::Merge, gpudict::btree::PhasedUpdates::Ops})
    for (int kind = 0; kind < 3; ++kind) grow_from_empty<K, V>(path, kind, 100 + kind);
}

TEST_CASE_TEMPLATE("mvbtree_map: snapshots dropped in every order return their versions to the pool", P, u32_u32,
                   u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::vector<int> order = {0, 1, 2, 3};
  int runs = 0;
  do {
    if (++runs % 4 != 1) continue;  // 6 of the 24 orders, each snapshot dropped first once
    CAPTURE(order[0]);
    std::mt19937_64 rng(200 + runs);
    Map<K, V> map;
    std::map<K, V> model = build_random(map, rng, 20000);
    std::vector<Live<K, V>> live;
    for (int i = 0; i < 4; ++i) {
      live.push_back({map.snapshot(), model});
      std::vector<K> ins;
      for (int j = 0; j < 3000; ++j) ins.push_back(draw<K>(rng));
      update_call(map, model, ins, some_present(model, rng, 5), rng);
    }
    std::vector<bool> dropped(4, false);
    uint64_t before = map.stats().version_copies;
    CHECK(before > 0);
    for (int d : order) {
      { auto gone = std::move(live[d].snap); }
      dropped[d] = true;
      const uint64_t after = map.stats().version_copies;
      CHECK(after <= before);
      CHECK(gpudict::check_mvbtree_structure(map) == "");
      before = after;
      for (int i = 0; i < 4; ++i)
        if (!dropped[i]) check_state(live[i].snap, live[i].model, rng, 128);
      check_state(map, model, rng, 128);
    }
    const auto s = map.stats();
    CHECK(s.version_copies == 0);
    CHECK(s.copies_reclaimed == s.copies_made);
    CHECK(s.version_pool_nodes == 0);
    // Versions again after the pool went back: a snapshot, an update, a check.
    auto again = map.snapshot();
    const auto m_again = model;
    std::vector<K> ins;
    for (int j = 0; j < 1000; ++j) ins.push_back(draw<K>(rng));
    update_call(map, model, ins, some_present(model, rng, 7), rng);
    check_state(again, m_again, rng, 128);
    check_state(map, model, rng, 128);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_CASE_TEMPLATE("mvbtree_map: stamps renumbered before they reach the limit keep every snapshot exact", P,
                   u32_u32, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(300);
  gpudict::mvbtree_options o;
  o.stamp_limit = 9;  // renumbered every few snapshots
  Map<K, V> map(o);
  std::map<K, V> model = build_random(map, rng, 6000);
  std::deque<Live<K, V>> live;
  for (int i = 0; i < 30; ++i) {
    live.push_back({map.snapshot(), model});
    std::vector<K> ins;
    for (int j = 0; j < 500; ++j) ins.push_back(draw<K>(rng));
    update_call(map, model, ins, some_present(model, rng, 15), rng);
    if (live.size() > 3) live.pop_front();
    CHECK(gpudict::check_mvbtree_structure(map) == "");
    for (auto& l : live) check_state(l.snap, l.model, rng, 64);
  }
  check_state(map, model, rng);
  CHECK(map.stats().renumberings > 0);
  CHECK(map.stats().stamp <= 9);
}

TEST_CASE_TEMPLATE("mvbtree_map: a hot key updated by a whole call, the domain's ends as keys and values", P, u32_u32,
                   u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  for (auto path : {gpudict::btree::PhasedUpdates::Merge, gpudict::btree::PhasedUpdates::Ops}) {
    std::mt19937_64 rng(400);
    Map<K, V> map(options_for(path));
    std::map<K, V> model = build_random(map, rng, 5000, 2);
    auto s0 = map.snapshot();
    const auto m0 = model;
    for (K hot : ends<K>()) {
      std::vector<K> keys(4096, hot);
      std::vector<V> values(4096);
      for (auto& v : values) v = draw<V>(rng);
      values[7] = ends<V>().back();
      const auto dk = to_device(keys);
      const auto dv = to_device(values);
      map.insert_or_assign(dk.data(), dv.data(), keys.size());
      std::vector<K> probe = {hot};
      const auto dp = to_device(probe);
      DeviceBuffer<V> out(1, "test out");
      DeviceBuffer<bool> found(1, "test out");
      map.find(dp.data(), 1, out.data(), found.data());
      const V got = to_host(out, 1)[0];
      CHECK(flags_to_host(found, 1)[0] == 1);
      CHECK(std::find(values.begin(), values.end(), got) != values.end());  // any one of the call's wins
      model[hot] = got;
      auto s1 = map.snapshot();  // taken and dropped while the hot key changes on
    }
    CHECK(gpudict::check_mvbtree_structure(map) == "");
    check_state(s0, m0, rng);
    check_state(map, model, rng);
  }
}

TEST_CASE_TEMPLATE("mvbtree_map: a mixed call's queries read the state before it, exactly; its updates apply", P,
                   u32_u32, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  for (uint64_t seed = 500; seed < 508; ++seed) {  // many seeds, every other one with a snapshot live
    const bool with_snapshot = seed % 2 == 1;
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    Map<K, V> map;
    std::map<K, V> model = build_random(map, rng, 10000 + 5000 * static_cast<int>(seed % 4));
    std::vector<Live<K, V>> live;
    if (with_snapshot) live.push_back({map.snapshot(), model});
    const auto before = model;
    // Erases of present keys, inserts of new ones and upserts, with finds,
    // successors, counts and ranges over the same keys, shuffled: one call.
    std::vector<K> keys, upper;
    std::vector<V> values;
    std::vector<uint8_t> ops;
    std::set<K> updated;
    auto add = [&](gpudict::op_code op, K k, V v, K hi) {
      keys.push_back(k);
      values.push_back(v);
      upper.push_back(hi);
      ops.push_back(static_cast<uint8_t>(op));
    };
    for (const auto& kv : before)
      if (rng() % 4 == 0 && updated.insert(kv.first).second) add(gpudict::op_code::erase, kv.first, V{0}, kv.first);
    for (int i = 0; i < 20000; ++i) {
      const K k = draw<K>(rng);
      if (updated.insert(k).second) add(gpudict::op_code::insert, k, draw<V>(rng), k);
    }
    std::vector<K> touched(updated.begin(), updated.end());
    for (int i = 0; i < 6000; ++i) {
      const K k = rng() % 2 ? touched[rng() % touched.size()] : draw<K>(rng);
      add(gpudict::op_code::find, k, V{0}, k);
      add(gpudict::op_code::successor, k, V{0}, k);
      const K hi = k + static_cast<K>(rng() % 2 ? (K(1) << (8 * sizeof(K) - 12)) : 1000);
      add(rng() % 2 ? gpudict::op_code::count : gpudict::op_code::range, k, V{0}, hi < k ? K(~K{0}) : hi);
    }
    std::vector<size_t> perm(keys.size());
    std::iota(perm.begin(), perm.end(), size_t{0});
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<K> pk, pu;
    std::vector<V> pv;
    std::vector<uint8_t> po;
    for (size_t i : perm) {
      pk.push_back(keys[i]);
      pu.push_back(upper[i]);
      pv.push_back(values[i]);
      po.push_back(ops[i]);
      if (po.back() == static_cast<uint8_t>(gpudict::op_code::erase)) model.erase(keys[i]);
      else if (po.back() == static_cast<uint8_t>(gpudict::op_code::insert)) model[keys[i]] = values[i];
    }
    const size_t n = pk.size();
    const auto dk = to_device(pk), du = to_device(pu);
    const auto dv = to_device(pv);
    const auto dops = to_device(po);
    DeviceBuffer<bool> found(n, "test out");
    DeviceBuffer<V> vout(n, "test out");
    DeviceBuffer<K> kout(n, "test out");
    DeviceBuffer<uint64_t> counts(n, "test out"), offsets(n, "test out");
    gpudict::mixed_outputs<K, V> out;
    out.found = found.data();
    out.values = vout.data();
    out.keys = kout.data();
    out.counts = counts.data();
    out.offsets = offsets.data();
    const auto pairs = map.apply(dops.data(), gpudict::op_code::insert, dk.data(), dv.data(), du.data(), n, out);
    const auto f = flags_to_host(found, n);
    const auto v = to_host(vout, n);
    const auto k = to_host(kout, n);
    const auto c = to_host(counts, n), o = to_host(offsets, n);
    std::vector<K> rk(pairs.size);
    std::vector<V> rv(pairs.size);
    if (pairs.size) {
      GPUDICT_CUDA(cudaMemcpy(rk.data(), pairs.keys, pairs.size * sizeof(K), cudaMemcpyDeviceToHost));
      GPUDICT_CUDA(cudaMemcpy(rv.data(), pairs.values, pairs.size * sizeof(V), cudaMemcpyDeviceToHost));
    }
    int bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto op = static_cast<gpudict::op_code>(po[i]);
      if (op == gpudict::op_code::find) {
        const auto it = before.find(pk[i]);
        const bool want = it != before.end();
        if (f[i] != want || v[i] != (want ? it->second : V{0}))
          if (++bad <= 3) FAIL_CHECK("find " << pk[i] << " not as before the call");
      } else if (op == gpudict::op_code::successor) {
        const auto it = before.upper_bound(pk[i]);
        const bool want = it != before.end();
        if (f[i] != want || (want && (k[i] != it->first || v[i] != it->second)))
          if (++bad <= 3) FAIL_CHECK("successor " << pk[i] << " not as before the call");
      } else if (op == gpudict::op_code::count || op == gpudict::op_code::range) {
        auto a = before.lower_bound(pk[i]), b = before.upper_bound(pu[i]);
        const uint64_t want = pk[i] > pu[i] ? 0 : static_cast<uint64_t>(std::distance(a, b));
        if (c[i] != want) {
          if (++bad <= 3) FAIL_CHECK("count/range " << pk[i] << ".." << pu[i] << ": " << c[i] << " want " << want);
          continue;
        }
        if (op == gpudict::op_code::range)
          for (uint64_t j = 0; j < want; ++j, ++a)
            if (rk[o[i] + j] != a->first || rv[o[i] + j] != a->second) {
              if (++bad <= 3) FAIL_CHECK("range " << pk[i] << ": pair " << j << " not as before the call");
              break;
            }
      }
    }
    CHECK(bad == 0);
    CHECK(gpudict::check_mvbtree_structure(map) == "");
    check_state(map, model, rng);
    for (auto& l : live) check_state(l.snap, l.model, rng);
  }
}

TEST_CASE("mvbtree_map: a bulk build while snapshots are live is refused, and works once they are dropped") {
  std::mt19937_64 rng(600);
  Map<uint32_t, uint32_t> map;
  std::map<uint32_t, uint32_t> model = build_random(map, rng, 1000);
  {
    auto s = map.snapshot();
    std::vector<uint32_t> k = {1, 2, 3};
    const auto dk = to_device(k);
    CHECK_THROWS_AS(map.build(dk.data(), dk.data(), k.size()), gpudict::InputError);
    check_state(s, model, rng);
  }
  model = build_random(map, rng, 2000);
  check_state(map, model, rng);
}

TEST_CASE("mvbtree structural checker: sees corrupted version lists") {
  std::mt19937_64 rng(700);
  Map<uint32_t, uint32_t> map;
  std::map<uint32_t, uint32_t> model = build_random(map, rng, 20000);
  auto s0 = map.snapshot();
  std::vector<uint32_t> ins;
  for (int j = 0; j < 4000; ++j) ins.push_back(draw<uint32_t>(rng));
  update_call(map, model, ins, some_present(model, rng, 5), rng);
  auto s1 = map.snapshot();
  update_call(map, model, ins, {}, rng);  // upserts: the same leaves again
  REQUIRE(gpudict::check_mvbtree_structure(map) == "");
  gpudict::mvbtree::VersionDump<uint32_t> d;
  gpudict::mvbtree::Inspect<uint32_t, uint32_t>::dump(map, d);
  const auto size = map.stats().tree.size;
  REQUIRE(gpudict::check_mvbtree_versions(d, size, 0) == "");
  REQUIRE(!d.copies.empty());
  using gpudict::mvbtree::vword;
  using gpudict::mvbtree::vstamp;
  using gpudict::mvbtree::volder;
  // A head whose list holds a copy.
  size_t h = 0;
  while (h < d.head_v.size() && !(volder(d.head_v[h]) & gpudict::mvbtree::kOlderCopy)) ++h;
  REQUIRE(h < d.head_v.size());
  const uint32_t c = volder(d.head_v[h]) & gpudict::mvbtree::kOlderIndex;
  SUBCASE("a copy not older than its head") {
    auto bad = d;
    bad.copy_v[c] = vword(vstamp(bad.head_v[h]), volder(bad.copy_v[c]));
    CHECK(gpudict::check_mvbtree_versions(bad, size, 0).find("not below") != std::string::npos);
  }
  SUBCASE("a copy on the free list") {
    auto bad = d;
    bad.free_list.push_back(c);
    CHECK(gpudict::check_mvbtree_versions(bad, size, 0).find("free list") != std::string::npos);
  }
  SUBCASE("a list that ends before a live snapshot's stamp") {
    auto bad = d;
    bad.head_v[h] = vword(vstamp(bad.head_v[h]), gpudict::mvbtree::kOlderNone);
    CHECK(gpudict::check_mvbtree_versions(bad, size, 0).find("no state at or below") != std::string::npos);
  }
  SUBCASE("a copy whose keys leave their range") {
    auto bad = d;
    auto& w = bad.copies[c].w;
    if (gpudict::btree::meta_count(w[gpudict::btree::kMetaWord]) >= 2) std::swap(w[0], w[2]);
    else w[0] = w[gpudict::btree::kLowWord] - 1;
    CHECK(gpudict::check_mvbtree_versions(bad, size, 0).find("out of order") != std::string::npos);
  }
}
