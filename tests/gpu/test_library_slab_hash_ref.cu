// slab_hash_ref: a user kernel's finds, inserts and erases on a
// slab_hash_map, in every mode and at every (key, value) width, against a
// model: concurrent operations of every type in one kernel, the same key
// inserted by many tiles at once, absent erases, the domain's ends, a pool
// that runs out under the kernel, and the map's size and bulk calls after.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/slabhash/slab_hash_map.hpp"
#include "core/slabhash/slab_hash_ref.cuh"
#include "library_test_util.cuh"

using namespace library_test;

namespace {

// The slab hash's operations for tile_ops_kernel (tiles of 4 lanes).
template <class K, class V>
struct SlabServe {
  gpudict::slab_hash_ref<K, V> ref;
  template <class Tile>
  __device__ bool operator()(const Tile& tile, uint8_t t, K k, V v, V& got) const {
    if (t == kFind) return ref.find(tile, k, &got);
    if (t == kInsert) return ref.insert(tile, k, v);
    return ref.erase(tile, k);
  }
};

template <class K, class V>
void run_slab_ref_kernel(gpudict::slab_hash_map<K, V>& map, const RefOps<K, V>& ops, std::vector<V>& out_value,
                         std::vector<uint8_t>& out_ok) {
  run_tile_ops<4>(SlabServe<K, V>{map.ref()}, ops, out_value, out_ok);
}

template <class K, class V>
void build_map(gpudict::slab_hash_map<K, V>& map, const std::map<K, V>& model) {
  std::vector<K> bk;
  std::vector<V> bv;
  for (const auto& kv : model) {
    bk.push_back(kv.first);
    bv.push_back(kv.second);
  }
  const auto dk = to_device(bk);
  const auto dv = to_device(bv);
  map.build(dk.data(), dv.data(), bk.size());
}

}  // namespace

TEST_CASE_TEMPLATE("slab_hash_ref: a user kernel's finds, inserts and erases, concurrently (map)", P, u32_u32,
                   u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(41);
  gpudict::slab_hash_map<K, V> map;
  std::map<K, V> model;
  for (K k : ends<K>()) model[k] = ends<V>()[rng() % ends<V>().size()];
  while (model.size() < (1u << 16)) model[draw<K>(rng)] = draw<V>(rng);
  build_map(map, model);
  // Present keys split three ways (found untouched, erased, replaced);
  // fresh keys inserted, each by 1 to 4 tiles with the same value; absent
  // keys erased (false) and looked up (false).
  RefOps<K, V> ops;
  std::map<K, V> after = model;
  for (const auto& kv : model) {
    const int g = static_cast<int>(rng() % 3);
    if (g == 0) {
      ops.push(kFind, kv.first);
    } else if (g == 1) {
      ops.push(kErase, kv.first);
      after.erase(kv.first);
    } else {
      ops.push(kInsert, kv.first, static_cast<V>(kv.second + 1));
      after[kv.first] = static_cast<V>(kv.second + 1);
    }
  }
  std::set<K> fresh, absent;
  while (fresh.size() < (1u << 15)) {
    const K k = draw<K>(rng);
    if (!model.count(k)) fresh.insert(k);
  }
  while (absent.size() < 1024) {
    const K k = draw<K>(rng);
    if (!model.count(k) && !fresh.count(k)) absent.insert(k);
  }
  for (K k : fresh) {
    const V v = draw<V>(rng);
    for (int c = 1 + static_cast<int>(rng() % 4); c > 0; --c) ops.push(kInsert, k, v);
    after[k] = v;
  }
  for (K k : absent) {
    ops.push(kErase, k);
    ops.push(kFind, k);
  }
  ops.shuffle(rng);
  map.reserve(fresh.size());
  std::vector<V> got;
  std::vector<uint8_t> ok;
  run_slab_ref_kernel(map, ops, got, ok);
  int bad = 0;
  for (size_t i = 0; i < ops.key.size(); ++i) {
    const K k = ops.key[i];
    if (absent.count(k)) {
      if (ok[i]) ++bad;  // neither found nor erased
    } else if (ops.type[i] == kFind) {
      if (!ok[i] || got[i] != model.at(k)) ++bad;  // untouched: the value before the kernel
    } else if (!ok[i]) {
      ++bad;  // every insert finds a slab; every erase of a present key erases it
    }
  }
  CHECK(bad == 0);
  CHECK(map.size() == after.size());  // a key inserted by 4 tiles at once is stored once
  check_find(map, after, probes_of(after, rng, 2048));

  // The bulk calls after the kernel: erase half of what is there.
  std::vector<K> ek;
  for (const auto& kv : after)
    if (rng() % 2) ek.push_back(kv.first);
  for (K k : ek) after.erase(k);
  const auto de = to_device(ek);
  map.erase(de.data(), ek.size());
  CHECK(map.size() == after.size());
  check_find(map, after, probes_of(after, rng, 2048));
}

TEST_CASE_TEMPLATE("slab_hash_ref: multimap and set modes", P, u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(42);
  {
    gpudict::slab_hash_options o;
    o.mode = gpudict::slabhash::Mode::Multimap;
    o.expected_keys = 1 << 14;
    gpudict::slab_hash_map<K, V> map(o);
    // Every key inserted 1 to 3 times by different tiles (values distinct):
    // a multimap keeps every pair.
    std::map<K, std::multiset<V>> model;
    RefOps<K, V> ops;
    std::vector<K> keys = ends<K>();
    while (keys.size() < (1u << 13)) keys.push_back(draw<K>(rng));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    uint64_t pairs = 0;
    for (K k : keys)
      for (int c = 1 + static_cast<int>(rng() % 3); c > 0; --c) {
        const V v = static_cast<V>(c + 7 * static_cast<int>(rng() % 1000));
        ops.push(kInsert, k, v);
        model[k].insert(v);
        ++pairs;
      }
    ops.shuffle(rng);
    map.reserve(pairs);
    std::vector<V> got;
    std::vector<uint8_t> ok;
    run_slab_ref_kernel(map, ops, got, ok);
    CHECK(std::count(ok.begin(), ok.end(), uint8_t{1}) == static_cast<long>(pairs));
    CHECK(map.size() == pairs);
    // Finds return one of the key's values; erases remove every pair.
    RefOps<K, V> second;
    std::set<K> erased;
    for (K k : keys) {
      if (rng() % 2) {
        second.push(kErase, k);
        erased.insert(k);
      } else {
        second.push(kFind, k);
      }
    }
    second.shuffle(rng);
    run_slab_ref_kernel(map, second, got, ok);
    int bad = 0;
    uint64_t left = 0;
    for (size_t i = 0; i < second.key.size(); ++i) {
      const auto& vals = model.at(second.key[i]);
      if (!ok[i]) ++bad;
      if (second.type[i] == kFind && !vals.count(got[i])) ++bad;
    }
    for (const auto& kv : model)
      if (!erased.count(kv.first)) left += kv.second.size();
    CHECK(bad == 0);
    CHECK(map.size() == left);
  }
  {
    gpudict::slab_hash_options o;
    o.mode = gpudict::slabhash::Mode::Set;
    gpudict::slab_hash_map<K, V> map(o);
    std::set<K> model;
    RefOps<K, V> ops;
    for (K k : ends<K>()) model.insert(k);
    while (model.size() < (1u << 14)) model.insert(draw<K>(rng));
    for (K k : model) ops.push(kInsert, k, draw<V>(rng));  // set: values ignored
    map.reserve(model.size());
    std::vector<V> got;
    std::vector<uint8_t> ok;
    run_slab_ref_kernel(map, ops, got, ok);
    CHECK(std::count(ok.begin(), ok.end(), uint8_t{1}) == static_cast<long>(model.size()));
    CHECK(map.size() == model.size());
    RefOps<K, V> finds;
    for (K k : model) finds.push(kFind, k);
    for (int i = 0; i < 512; ++i) {
      const K k = draw<K>(rng);
      if (!model.count(k)) finds.push(kFind, k);
    }
    run_slab_ref_kernel(map, finds, got, ok);
    int bad = 0;
    for (size_t i = 0; i < finds.key.size(); ++i)
      if (ok[i] != (model.count(finds.key[i]) ? 1 : 0) || got[i] != V{0}) ++bad;
    CHECK(bad == 0);
  }
}

TEST_CASE_TEMPLATE("slab_hash_ref: inserts into a full pool fail cleanly, reserve makes room", P, u32_u32, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(43);
  gpudict::slab_hash_options o;
  o.buckets = 64;        // chains of hundreds of slabs: the pool runs out
  o.pool_slabs = 1024;   // one memory block
  o.growth = false;
  o.grow_ahead = false;
  gpudict::slab_hash_map<K, V> map(o);
  RefOps<K, V> ops;
  std::set<K> keys;
  while (keys.size() < (1u << 15)) keys.insert(draw<K>(rng));
  for (K k : keys) ops.push(kInsert, k, static_cast<V>(k) ^ V{0x5A5A});
  ops.shuffle(rng);
  std::vector<V> got;
  std::vector<uint8_t> ok;
  run_slab_ref_kernel(map, ops, got, ok);
  std::map<K, V> stored;
  RefOps<K, V> failed;
  for (size_t i = 0; i < ops.key.size(); ++i) {
    if (ok[i])
      stored[ops.key[i]] = ops.value[i];
    else
      failed.push(kInsert, ops.key[i], ops.value[i]);
  }
  CHECK(stored.size() > 0);
  CHECK(failed.key.size() > 0);
  CHECK(map.size() == stored.size());
  // Every insert that said true is there, none that said false: found by
  // the ref (no bulk call in between, so the pool-full flag the failed
  // inserts raised is still set when reserve runs).
  RefOps<K, V> finds;
  for (K k : ops.key) finds.push(kFind, k);
  run_slab_ref_kernel(map, finds, got, ok);
  int bad = 0;
  for (size_t i = 0; i < finds.key.size(); ++i) {
    const auto it = stored.find(finds.key[i]);
    if (ok[i] != (it != stored.end() ? 1 : 0) || (it != stored.end() && got[i] != it->second)) ++bad;
  }
  CHECK(bad == 0);

  // Room for the rest, and the failed inserts again.
  map.reserve(failed.key.size() * 2);
  run_slab_ref_kernel(map, failed, got, ok);
  CHECK(std::count(ok.begin(), ok.end(), uint8_t{1}) == static_cast<long>(failed.key.size()));
  for (size_t i = 0; i < failed.key.size(); ++i) stored[failed.key[i]] = failed.value[i];
  CHECK(map.size() == keys.size());
  check_find(map, stored, ops.key);
}
