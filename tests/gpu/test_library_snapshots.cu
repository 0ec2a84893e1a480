// Snapshots of the library's containers that have them (sorted_array_map,
// lsm_map, mvbtree_map): each snapshot answers find, count, range, successor and its
// device ref's find and successor as the map was when it was taken, while the map takes
// further updates; snapshots moved, dropped early and taken back to back;
// every (key, value) width, against std::map models.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/lsm/lsm_map.hpp"
#include "core/lsm/lsm_ref.cuh"
#include "core/mvbtree/mvbtree_map.hpp"
#include "core/mvbtree/mvbtree_ref.cuh"
#include "core/sorted_array/sorted_array_map.hpp"
#include "core/sorted_array/sorted_array_ref.cuh"
#include "library_test_util.cuh"

using namespace library_test;

namespace {

template <class Snap, class K, class V>
void check_all(Snap& s, const std::map<K, V>& model, std::mt19937_64& rng) {
  const auto probes = probes_of(model, rng, 2048);
  check_find(s, model, probes);
  check_successor(s, model, probes);
  check_count_range(s, model, rng);
  check_ref_queries(s.ref(), model, probes);
}

// One update call of inserts (new keys and upserts) and one of erases (present
// keys and absent ones).
template <class Map, class K, class V>
void update(Map& map, std::map<K, V>& model, std::mt19937_64& rng) {
  std::vector<K> ik;
  std::vector<V> iv;
  for (const auto& kv : model)
    if (rng() % 6 == 0) ik.push_back(kv.first);
  for (int i = 0; i < 2000; ++i) ik.push_back(draw<K>(rng));
  std::sort(ik.begin(), ik.end());
  ik.erase(std::unique(ik.begin(), ik.end()), ik.end());
  for (K k : ik) {
    iv.push_back(draw<V>(rng));
    model[k] = iv.back();
  }
  const auto dk = to_device(ik);
  const auto dv = to_device(iv);
  map.insert_or_assign(dk.data(), dv.data(), ik.size());
  std::vector<K> ek;
  for (const auto& kv : model)
    if (rng() % 5 == 0) ek.push_back(kv.first);
  for (int i = 0; i < 100; ++i) ek.push_back(draw<K>(rng));
  std::sort(ek.begin(), ek.end());
  ek.erase(std::unique(ek.begin(), ek.end()), ek.end());
  for (K k : ek) model.erase(k);
  const auto de = to_device(ek);
  map.erase(de.data(), ek.size());
}

template <class Map, class K, class V>
void check_snapshots(Map& map, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<K, V> model = build_random(map, rng, 12000, 1);
  auto s0 = map.snapshot();
  const auto m0 = model;
  update(map, model, rng);
  { auto dropped = map.snapshot(); }  // taken and dropped between updates
  update(map, model, rng);
  auto s1 = map.snapshot();
  auto s2 = map.snapshot();  // two of the same contents
  const auto m1 = model;
  update(map, model, rng);
  update(map, model, rng);

  check_all(map, model, rng);
  check_all(s0, m0, rng);
  check_all(s1, m1, rng);
  {
    auto moved = std::move(s2);
    check_all(moved, m1, rng);
  }  // dropped here; s1 still answers
  check_all(s1, m1, rng);
  s0 = std::move(s1);  // drops the first snapshot, keeps the second
  check_all(s0, m1, rng);
  update(map, model, rng);
  check_all(s0, m1, rng);
  check_all(map, model, rng);
}

}  // namespace

TEST_CASE_TEMPLATE("sorted_array_map: snapshots answer as the map was while it changes on", P, u32_u32, u32_u64,
                   u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  gpudict::sorted_array_map<K, V> map;
  check_snapshots<gpudict::sorted_array_map<K, V>, K, V>(map, 45);
}

TEST_CASE_TEMPLATE("lsm_map: snapshots answer as the map was while it changes on", P, u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  gpudict::lsm_options o;
  o.batch_size = 2048;  // several levels
  o.cleanup_every = 3;  // cleanups replace levels the snapshots still hold
  gpudict::lsm_map<K, V> map(o);
  check_snapshots<gpudict::lsm_map<K, V>, K, V>(map, 46);
}

TEST_CASE_TEMPLATE("mvbtree_map: snapshots answer as the map was while it changes on", P, u32_u32, u32_u64,
                   u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  for (auto path : {gpudict::btree::PhasedUpdates::Merge, gpudict::btree::PhasedUpdates::Ops}) {
    CAPTURE(static_cast<int>(path));
    gpudict::mvbtree_options o;
    o.tree.phased_updates = path;
    gpudict::mvbtree_map<K, V> map(o);
    check_snapshots<gpudict::mvbtree_map<K, V>, K, V>(map, 47);
  }
}
