// The library's containers and device refs (btree_map, btree_ref,
// slab_hash_map) on device arrays, at every (key, value) width, against a
// std::map model: duplicates in a call, the domain's ends, empty calls and
// calls of one, absent deletes, the B-Tree's merge and operations-kernel
// paths, a full node pool under a user kernel, pool growth of the slab hash.
#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "core/btree/btree_map.hpp"
#include "core/btree/btree_ref.cuh"
#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/errors.hpp"
#include "core/lsm/lsm_map.hpp"
#include "core/slabhash/slab_hash_map.hpp"
#include "core/sorted_array/sorted_array_map.hpp"
#include "core/sorted_array/sorted_array_ref.cuh"
#include "library_test_util.cuh"

using namespace library_test;

namespace {

// An ordered map's bulk calls (btree_map, sorted_array_map) against the model.
template <class Map, class K, class V>
void check_ordered_map(Map& map, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<K, V> model;
  CHECK(map.size() == 0);

  // Build: random pairs, every domain end as key and as value, and
  // duplicates (the later pair wins).
  std::vector<K> keys;
  std::vector<V> values;
  for (K k : ends<K>()) {
    keys.push_back(k);
    values.push_back(ends<V>()[rng() % ends<V>().size()]);
  }
  for (int i = 0; i < (1 << 16); ++i) {
    keys.push_back(i % 7 == 0 && !keys.empty() ? keys[rng() % keys.size()] : draw<K>(rng));
    values.push_back(draw<V>(rng));
  }
  for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = values[i];
  {
    const auto dk = to_device(keys);
    const auto dv = to_device(values);
    map.build(dk.data(), dv.data(), keys.size());
  }
  CHECK(map.size() == model.size());
  check_find(map, model, probes_of(model, rng, 4096));

  // Updates: a short list into the large tree (the operations kernel), a
  // list as large as the tree (merged), an empty call and a call of one;
  // erase absent keys too. No key twice in a call: several updates of one
  // key in a call may leave any of them (the operations kernel).
  for (size_t n : {size_t{1000}, size_t{1} << 17, size_t{0}, size_t{1}}) {
    std::map<K, V> call;
    while (call.size() < n) call[draw<K>(rng)] = draw<V>(rng);
    std::vector<K> ik;
    std::vector<V> iv;
    for (const auto& kv : call) {
      ik.push_back(kv.first);
      iv.push_back(kv.second);
      model[kv.first] = kv.second;
    }
    const auto dk = to_device(ik);
    const auto dv = to_device(iv);
    map.insert_or_assign(dk.data(), dv.data(), ik.size());
    CHECK(map.size() == model.size());

    std::vector<K> ek;
    for (const auto& kv : model)
      if (ek.size() < n / 2 && rng() % 3 == 0) ek.push_back(kv.first);
    for (size_t i = 0; i < n / 4; ++i) ek.push_back(draw<K>(rng));  // mostly absent
    std::sort(ek.begin(), ek.end());
    ek.erase(std::unique(ek.begin(), ek.end()), ek.end());
    for (K k : ek) model.erase(k);
    const auto de = to_device(ek);
    map.erase(de.data(), ek.size());
    CHECK(map.size() == model.size());
  }
  check_find(map, model, probes_of(model, rng, 4096));

  // count [lo, hi] and successor, the domain's ends included.
  std::vector<K> lo, hi;
  for (K a : ends<K>())
    for (K b : ends<K>()) {
      lo.push_back(a);
      hi.push_back(b);
    }
  for (int i = 0; i < 4096; ++i) {
    K a = draw<K>(rng), b = draw<K>(rng);
    if (rng() % 8) {
      if (a > b) std::swap(a, b);
    }
    lo.push_back(a);
    hi.push_back(b);
  }
  const auto dlo = to_device(lo);
  const auto dhi = to_device(hi);
  DeviceBuffer<uint64_t> dcount(lo.size(), "test counts");
  map.count(dlo.data(), dhi.data(), lo.size(), dcount.data());
  const auto counts = to_host(dcount, lo.size());
  int bad = 0;
  for (size_t i = 0; i < lo.size(); ++i) {
    const uint64_t want =
        lo[i] > hi[i] ? 0 : static_cast<uint64_t>(std::distance(model.lower_bound(lo[i]), model.upper_bound(hi[i])));
    if (counts[i] != want && ++bad <= 3) FAIL_CHECK("count [" << lo[i] << ", " << hi[i] << "]: " << counts[i] << " != " << want);
  }
  CHECK(bad == 0);

  check_successor(map, model, lo);
  check_count_range(map, model, rng);
}

}  // namespace

TEST_CASE_TEMPLATE("btree_map: build, insert_or_assign, erase, find, count, range and successor on device arrays", P, u32_u32, u32_u64, u64_u32, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  gpudict::btree_map<K, V> map;
  check_ordered_map<gpudict::btree_map<K, V>, K, V>(map, 34);
  // Options are checked before anything is allocated.
  gpudict::btree_options bad_options;
  bad_options.fill = 1.5;
  using Map = gpudict::btree_map<K, V>;
  CHECK_THROWS_AS(Map{bad_options}, gpudict::InputError);
}

namespace {

// The B-Tree's operations for tile_ops_kernel (tiles of 32 lanes).
template <class K, class V>
struct BtreeServe {
  gpudict::btree_ref<K, V> ref;
  template <class Tile>
  __device__ bool operator()(const Tile& tile, uint8_t t, K k, V v, V& got) const {
    if (t == kFind) return ref.find(tile, k, &got);
    if (t == kInsert) return ref.insert_or_assign(tile, k, v);
    return ref.erase(tile, k);
  }
};

template <class K, class V>
void run_ref_kernel(gpudict::btree_map<K, V>& map, const RefOps<K, V>& ops, std::vector<V>& out_value,
                    std::vector<uint8_t>& out_ok) {
  run_tile_ops<32>(BtreeServe<K, V>{map.ref()}, ops, out_value, out_ok);
}

}  // namespace

TEST_CASE_TEMPLATE("btree_ref: a user kernel's finds, inserts and erases, concurrently", P, u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(35);
  gpudict::btree_map<K, V> map;
  std::map<K, V> model;
  // A tree of 2^16 keys; keys are split into three disjoint groups: found
  // (untouched), erased and inserted, all in one kernel.
  std::vector<K> bk;
  std::vector<V> bv;
  while (model.size() < (1u << 16)) model[draw<K>(rng)] = draw<V>(rng);
  for (const auto& kv : model) {
    bk.push_back(kv.first);
    bv.push_back(kv.second);
  }
  {
    const auto dk = to_device(bk);
    const auto dv = to_device(bv);
    map.build(dk.data(), dv.data(), bk.size());
  }
  RefOps<K, V> ops;
  std::map<K, V> after = model;
  for (const auto& kv : model) {
    const int g = static_cast<int>(rng() % 3);
    if (g == 0) {
      ops.push(kFind, kv.first, static_cast<V>(kv.second + 1));
    } else if (g == 1) {
      ops.push(kErase, kv.first, static_cast<V>(kv.second + 1));
      after.erase(kv.first);
    } else {
      ops.push(kInsert, kv.first, static_cast<V>(kv.second + 1));  // an upsert of a present key
      after[kv.first] = static_cast<V>(kv.second + 1);
    }
  }
  std::vector<K> fresh;
  for (K k : ends<K>())
    if (!model.count(k)) fresh.push_back(k);
  while (fresh.size() < (1u << 16)) {
    const K k = draw<K>(rng);
    if (!model.count(k)) fresh.push_back(k);
  }
  std::sort(fresh.begin(), fresh.end());
  fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
  for (K k : fresh) {
    ops.push(kInsert, k, draw<V>(rng));
    after[k] = ops.value.back();
  }
  ops.shuffle(rng);
  map.reserve_nodes(fresh.size());  // every insert finds a node: no failures expected
  std::vector<V> got;
  std::vector<uint8_t> ok;
  run_ref_kernel(map, ops, got, ok);
  int bad = 0;
  for (size_t i = 0; i < ops.key.size(); ++i) {
    if (ops.type[i] == kFind) {  // untouched keys: the exact pre-kernel value
      if (!ok[i] || got[i] != model.at(ops.key[i])) ++bad;
    } else if (!ok[i]) {
      ++bad;
    }
  }
  CHECK(bad == 0);
  CHECK(map.size() == after.size());
  check_find(map, after, probes_of(after, rng, 2048));
}

TEST_CASE_TEMPLATE("btree_ref: inserts into a full fixed pool fail cleanly", P, u32_u32, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(36);
  gpudict::btree_options o;
  o.node_pool = 64;  // 64 nodes: about 600 keys at most
  gpudict::btree_map<K, V> map(o);
  RefOps<K, V> ops;
  std::map<K, V> model;
  while (ops.key.size() < (1u << 14)) {
    const K k = draw<K>(rng);
    if (model.count(k)) continue;
    ops.push(kInsert, k, draw<V>(rng));
    model[k] = ops.value.back();
  }
  std::vector<V> got;
  std::vector<uint8_t> ok;
  run_ref_kernel(map, ops, got, ok);
  std::map<K, V> stored;
  for (size_t i = 0; i < ops.key.size(); ++i)
    if (ok[i]) stored[ops.key[i]] = ops.value[i];
  CHECK(stored.size() > 0);
  CHECK(stored.size() < ops.key.size());
  CHECK(map.size() == stored.size());
  check_find(map, stored, ops.key);  // every insert that said true is there, none that said false
}

TEST_CASE_TEMPLATE("slab_hash_map: build, insert, erase and find on device arrays", P, u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  for (bool small_pool : {false, true}) {
    CAPTURE(small_pool);
    std::mt19937_64 rng(37);
    gpudict::slab_hash_options o;
    if (small_pool) {  // a first pool of 1024 slabs and no growth ahead: inserts run out, grow, re-run
      o.pool_slabs = 1024;
      o.grow_ahead = false;
      o.load_factor = 0.85;  // below every layout's ceiling (7 x 16 B: 0.875)
    }
    gpudict::slab_hash_map<K, V> map(o);
    std::map<K, V> model;
    std::vector<K> keys = ends<K>();
    std::vector<V> values;
    for (size_t i = 0; i < keys.size(); ++i) values.push_back(ends<V>()[i % ends<V>().size()]);
    for (int i = 0; i < (1 << 15); ++i) {
      keys.push_back(i % 5 == 0 ? keys[rng() % keys.size()] : draw<K>(rng));  // duplicates: the later pair wins
      values.push_back(draw<V>(rng));
    }
    for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = values[i];
    {
      const auto dk = to_device(keys);
      const auto dv = to_device(values);
      map.build(dk.data(), dv.data(), keys.size());
    }
    CHECK(map.size() == model.size());
    check_find(map, model, probes_of(model, rng, 4096));
    for (size_t n : {size_t{1} << 17, size_t{0}, size_t{1}}) {
      std::map<K, V> call;
      while (call.size() < n) call[draw<K>(rng)] = draw<V>(rng);
      std::vector<K> ik;
      std::vector<V> iv;
      for (const auto& kv : call) {
        ik.push_back(kv.first);
        iv.push_back(kv.second);
        model[kv.first] = kv.second;
      }
      const auto dk = to_device(ik);
      const auto dv = to_device(iv);
      map.insert(dk.data(), dv.data(), ik.size());
      CHECK(map.size() == model.size());
      std::vector<K> ek;
      for (const auto& kv : model)
        if (ek.size() < n / 2 && rng() % 3 == 0) ek.push_back(kv.first);
      for (size_t i = 0; i < n / 4; ++i) ek.push_back(draw<K>(rng));
      std::sort(ek.begin(), ek.end());
      ek.erase(std::unique(ek.begin(), ek.end()), ek.end());
      for (K k : ek) model.erase(k);
      const auto de = to_device(ek);
      map.erase(de.data(), ek.size());
      CHECK(map.size() == model.size());
    }
    check_find(map, model, probes_of(model, rng, 4096));
  }
  gpudict::slab_hash_options bad_options;
  bad_options.load_factor = 0.99;
  using Map = gpudict::slab_hash_map<K, V>;
  CHECK_THROWS_AS(Map{bad_options}, gpudict::InputError);
}

TEST_CASE_TEMPLATE("sorted_array_map: build, insert_or_assign, erase, find, count, range and successor on device arrays", P,
                   u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  gpudict::sorted_array_map<K, V> map;
  check_ordered_map<gpudict::sorted_array_map<K, V>, K, V>(map, 38);
}

namespace {

// One thread per query: find, count [q, q + span] and successor of q.
template <class K, class V>
__global__ void sorted_ref_kernel(gpudict::sorted_array_ref<K, V> ref, const K* q, uint64_t n, K span, V* value,
                                  uint8_t* found, uint64_t* count, K* next) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  V v;
  found[i] = ref.find(q[i], &v) ? 1 : 0;
  value[i] = v;
  const K hi = q[i] + span < q[i] ? ~K{0} : static_cast<K>(q[i] + span);
  count[i] = ref.count(q[i], hi);
  K k;
  if (!ref.successor(q[i], &k)) k = 0;
  next[i] = k;
}

}  // namespace

TEST_CASE_TEMPLATE("sorted_array_ref: a user kernel's finds, counts and successors", P, u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(39);
  std::map<K, V> model;
  for (K k : ends<K>()) model[k] = static_cast<V>(k);
  while (model.size() < (1u << 17)) model[draw<K>(rng)] = draw<V>(rng);
  std::vector<K> keys;
  std::vector<V> values;
  for (const auto& kv : model) {
    keys.push_back(kv.first);
    values.push_back(kv.second);
  }
  gpudict::sorted_array_map<K, V> map;
  {
    const auto dk = to_device(keys);
    const auto dv = to_device(values);
    map.build(dk.data(), dv.data(), keys.size());
  }
  const std::vector<K> q = probes_of(model, rng, 8192);
  const K span = sizeof(K) == 4 ? K(1u << 16) : K(1ull << 48);
  const auto dq = to_device(q);
  const size_t n = q.size();
  DeviceBuffer<V> dv(n, "out");
  DeviceBuffer<uint8_t> df(n, "out");
  DeviceBuffer<uint64_t> dc(n, "out");
  DeviceBuffer<K> dn(n, "out");
  sorted_ref_kernel<K, V><<<static_cast<unsigned>((n + 255) / 256), 256>>>(map.ref(), dq.data(), n, span, dv.data(),
                                                                          df.data(), dc.data(), dn.data());
  GPUDICT_CHECK_LAUNCH("sorted_ref_kernel");
  GPUDICT_CUDA(cudaDeviceSynchronize());
  const auto v = to_host(dv, n);
  const auto f = to_host(df, n);
  const auto c = to_host(dc, n);
  const auto nx = to_host(dn, n);
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto it = model.find(q[i]);
    const K hi = q[i] + span < q[i] ? ~K{0} : static_cast<K>(q[i] + span);
    const uint64_t want_count = static_cast<uint64_t>(std::distance(model.lower_bound(q[i]), model.upper_bound(hi)));
    const auto up = model.upper_bound(q[i]);
    const bool ok = (f[i] != 0) == (it != model.end()) && v[i] == (it != model.end() ? it->second : V{0}) &&
                    c[i] == want_count && nx[i] == (up != model.end() ? up->first : K{0});
    if (!ok && ++bad <= 3) FAIL_CHECK("query " << q[i]);
  }
  CHECK(bad == 0);
  CHECK(map.size() == model.size());
}

TEST_CASE_TEMPLATE("lsm_map: build, insert_or_assign, erase, find, count, range and successor on device arrays", P, u32_u32,
                   u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(40);
  gpudict::lsm_options o;
  o.batch_size = 1024;   // many levels
  o.cleanup_every = 5;   // and cleanups between the calls
  gpudict::lsm_map<K, V> map(o);
  std::map<K, V> model;
  std::vector<K> keys = ends<K>();
  std::vector<V> values;
  for (size_t i = 0; i < keys.size(); ++i) values.push_back(ends<V>()[i % ends<V>().size()]);
  for (int i = 0; i < 20000; ++i) {
    keys.push_back(i % 6 == 0 ? keys[rng() % keys.size()] : draw<K>(rng));  // the later pair wins
    values.push_back(draw<V>(rng));
  }
  for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = values[i];
  {
    const auto dk = to_device(keys);
    const auto dv = to_device(values);
    map.build(dk.data(), dv.data(), keys.size());
  }
  check_find(map, model, probes_of(model, rng, 2048));
  // Update calls of 1, 0, 700 and 5000 operations, with repeated keys in a
  // call (the later update wins) and absent deletes.
  for (size_t n : {size_t{1}, size_t{0}, size_t{700}, size_t{5000}, size_t{3000}, size_t{5000}, size_t{700}}) {
    std::vector<K> uk;
    std::vector<V> uv;
    for (size_t i = 0; i < n; ++i) {
      uk.push_back(i % 5 == 0 && !uk.empty() ? uk[rng() % uk.size()] : draw<K>(rng));
      uv.push_back(draw<V>(rng));
    }
    for (size_t i = 0; i < n; ++i) model[uk[i]] = uv[i];
    const auto dk = to_device(uk);
    const auto dv = to_device(uv);
    map.insert_or_assign(dk.data(), dv.data(), uk.size());
    std::vector<K> ek;
    for (const auto& kv : model)
      if (ek.size() < n / 3 && rng() % 4 == 0) ek.push_back(kv.first);
    for (size_t i = 0; i < n / 4; ++i) ek.push_back(draw<K>(rng));
    if (!ek.empty()) ek.push_back(ek.front());  // one key deleted twice in the call
    for (K k : ek) model.erase(k);
    const auto de = to_device(ek);
    map.erase(de.data(), ek.size());
  }
  check_find(map, model, probes_of(model, rng, 4096));
  CHECK(map.stored_elements() >= model.size());
  // Successors, the domain's ends included.
  check_successor(map, model, probes_of(model, rng, 4096));
  check_count_range(map, model, rng);
  gpudict::lsm_options bad_options;
  bad_options.batch_size = 1000;  // not a power of two
  using Map = gpudict::lsm_map<K, V>;
  CHECK_THROWS_AS(Map{bad_options}, gpudict::InputError);
}

// What each container offers, as compile-time constants.
static_assert(gpudict::btree_map<uint64_t, uint32_t>::capabilities.ordered &&
              gpudict::btree_map<uint64_t, uint32_t>::capabilities.ref_updates &&
              !gpudict::btree_map<uint64_t, uint32_t>::capabilities.snapshots);
static_assert(gpudict::sorted_array_map<uint32_t, uint32_t>::capabilities.snapshots &&
              !gpudict::sorted_array_map<uint32_t, uint32_t>::capabilities.ref_updates);
static_assert(gpudict::lsm_map<uint64_t, uint64_t>::capabilities.ordered &&
              gpudict::lsm_map<uint64_t, uint64_t>::capabilities.later_update_wins);
static_assert(!gpudict::slab_hash_map<uint32_t, uint64_t>::capabilities.ordered &&
              gpudict::slab_hash_map<uint32_t, uint64_t>::capabilities.ref_min_lanes == 4);

// The library's option types and the command line's option tables live
// side by side in namespace gpudict: one file can include both.
#include "workloads/registry/structures.hpp"
TEST_CASE("library and registry headers together: btree_options is a type, btree_option_specs the flags") {
  gpudict::btree_options o;
  gpudict::lsm_options l;
  CHECK(o.fill > 0.0);
  CHECK(l.batch_size > 0);
  CHECK(!gpudict::btree_option_specs().empty());
  CHECK(!gpudict::lsm_option_specs().empty());
}
