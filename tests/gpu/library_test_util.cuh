// What the library's GPU tests share (test_library*.cu): the (key, value)
// pairings as doctest types, copies to and from the device, draws that
// cover the domain's ends, and find, count and range checked against a
// std::map model.
#pragma once

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"

// The (key, value) pairings, named as the test cases show them.
template <class K, class V>
struct Pair {
  using Key = K;
  using Value = V;
};
using u32_u32 = Pair<uint32_t, uint32_t>;
using u32_u64 = Pair<uint32_t, uint64_t>;
using u64_u32 = Pair<uint64_t, uint32_t>;
using u64_u64 = Pair<uint64_t, uint64_t>;
TYPE_TO_STRING(u32_u32);
TYPE_TO_STRING(u32_u64);
TYPE_TO_STRING(u64_u32);
TYPE_TO_STRING(u64_u64);

namespace library_test {

namespace cg = cooperative_groups;
using gpudict::DeviceBuffer;

template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& h) {
  DeviceBuffer<T> d(std::max<size_t>(h.size(), 1), "test array");
  if (!h.empty()) GPUDICT_CUDA(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> to_host(const DeviceBuffer<T>& d, size_t n) {
  std::vector<T> h(n);
  if (n) GPUDICT_CUDA(cudaMemcpy(h.data(), d.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// bool has no std::vector<bool>::data(): found flags come back as bytes.
inline std::vector<uint8_t> flags_to_host(const DeviceBuffer<bool>& d, size_t n) {
  std::vector<uint8_t> h(n);
  if (n) GPUDICT_CUDA(cudaMemcpy(h.data(), d.data(), n, cudaMemcpyDeviceToHost));
  return h;
}

template <class T>
T draw(std::mt19937_64& rng) {
  if constexpr (sizeof(T) == 4) return static_cast<T>(rng());
  // Half of the u64 draws share their high half with other keys.
  static constexpr uint64_t kHigh[] = {0, 1, 1ull << 31, 0xFFFFFFFFull};
  return rng() % 2 ? rng() : (kHigh[rng() % 4] << 32) | (rng() & 0xFFFFFFFFull);
}

template <class T>
std::vector<T> ends() {
  std::vector<T> e = {T(0), T(1), T(1ull << 31), T(0xFFFFFFFFull)};
  if constexpr (sizeof(T) == 8) e.insert(e.end(), {T(1ull << 32), T(1ull << 63), T(~0ull - 1), T(~0ull)});
  return e;
}

// Builds `map` from the domain's ends (their values: ends<V>() rotated by
// `shift`) and n random pairs, and returns the model (a key's later pair wins).
template <class Map, class K = typename Map::key_type, class V = typename Map::mapped_type>
std::map<K, V> build_random(Map& map, std::mt19937_64& rng, int n, size_t shift = 0) {
  std::vector<K> keys = ends<K>();
  std::vector<V> values;
  for (size_t i = 0; i < keys.size(); ++i) values.push_back(ends<V>()[(i + shift) % ends<V>().size()]);
  for (int i = 0; i < n; ++i) {
    keys.push_back(draw<K>(rng));
    values.push_back(draw<V>(rng));
  }
  std::map<K, V> model;
  for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = values[i];
  const auto dk = to_device(keys);
  const auto dv = to_device(values);
  map.build(dk.data(), dv.data(), keys.size());
  return model;
}

// Checks find over `probes` against the model.
template <class Map, class K, class V>
void check_find(Map& map, const std::map<K, V>& model, const std::vector<K>& probes) {
  const auto d_probes = to_device(probes);
  DeviceBuffer<V> d_values(std::max<size_t>(probes.size(), 1), "test values");
  DeviceBuffer<bool> d_found(std::max<size_t>(probes.size(), 1), "test found");
  map.find(d_probes.data(), probes.size(), d_values.data(), d_found.data());
  const auto values = to_host(d_values, probes.size());
  const auto found = flags_to_host(d_found, probes.size());
  int bad = 0;
  for (size_t i = 0; i < probes.size(); ++i) {
    const auto it = model.find(probes[i]);
    const bool want = it != model.end();
    if (found[i] != want || values[i] != (want ? it->second : V{0})) {
      if (++bad <= 3)
        FAIL_CHECK("find " << probes[i] << ": got (" << int(found[i]) << ", " << values[i] << "), want (" << want
                           << ", " << (want ? it->second : V{0}) << ")");
    }
  }
  CHECK(bad == 0);
}

template <class K, class V>
std::vector<K> probes_of(const std::map<K, V>& model, std::mt19937_64& rng, size_t absent) {
  std::vector<K> p = ends<K>();
  for (const auto& kv : model)
    if (rng() % 4 == 0) p.push_back(kv.first);
  for (size_t i = 0; i < absent; ++i) p.push_back(draw<K>(rng));
  return p;
}

// count and range of an ordered map (btree_map, sorted_array_map, lsm_map)
// against the model: every pair of the domain's ends as bounds, empty
// ranges (lo > hi, gaps between keys), ranges of one key and of up to a
// few hundred, in one call; range sized first (capacity 0), then filled,
// then with values only and no offsets.
template <class Map, class K, class V>
void check_count_range(Map& map, const std::map<K, V>& model, std::mt19937_64& rng) {
  std::vector<K> sorted;
  for (const auto& kv : model) sorted.push_back(kv.first);
  std::vector<K> lo, hi;
  for (K a : ends<K>())
    for (K b : ends<K>()) {
      lo.push_back(a);
      hi.push_back(b);
    }
  for (int i = 0; i < 4096 && !sorted.empty(); ++i) {
    const size_t a = rng() % sorted.size();
    const size_t w = i % 4 == 0 ? 0 : rng() % 300;
    K l = sorted[a], h = sorted[std::min(sorted.size() - 1, a + w)];
    if (i % 5 == 1) std::swap(l, h);        // lo > hi: empty (unless equal)
    if (i % 7 == 2) h = l = draw<K>(rng);   // one key, mostly absent
    lo.push_back(l);
    hi.push_back(h);
  }
  const size_t n = lo.size();
  std::vector<uint64_t> want_off(n + 1, 0);
  for (size_t i = 0; i < n; ++i)
    want_off[i + 1] = want_off[i] + (lo[i] > hi[i] ? 0
                                     : static_cast<uint64_t>(std::distance(model.lower_bound(lo[i]),
                                                                           model.upper_bound(hi[i]))));
  const uint64_t total = want_off[n];
  const auto dlo = to_device(lo);
  const auto dhi = to_device(hi);

  DeviceBuffer<uint64_t> dcount(n, "test counts");
  map.count(dlo.data(), dhi.data(), n, dcount.data());
  const auto counts = to_host(dcount, n);
  int bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (counts[i] != want_off[i + 1] - want_off[i] && ++bad <= 3)
      FAIL_CHECK("count [" << lo[i] << ", " << hi[i] << "]: " << counts[i] << " != " << want_off[i + 1] - want_off[i]);
  CHECK(bad == 0);

  DeviceBuffer<uint64_t> doff(n + 1, "test offsets");
  CHECK(map.range(dlo.data(), dhi.data(), n, doff.data(), nullptr, nullptr, 0) == total);
  CHECK(to_host(doff, n + 1) == want_off);
  DeviceBuffer<K> dk(std::max<uint64_t>(total, 1), "test range keys");
  DeviceBuffer<V> dv(std::max<uint64_t>(total, 1), "test range values");
  CHECK(map.range(dlo.data(), dhi.data(), n, doff.data(), dk.data(), dv.data(), total) == total);
  CHECK(to_host(doff, n + 1) == want_off);
  const auto rk = to_host(dk, total);
  const auto rv = to_host(dv, total);
  bad = 0;
  for (size_t i = 0; i < n; ++i) {
    if (lo[i] > hi[i]) continue;
    uint64_t at = want_off[i];
    for (auto it = model.lower_bound(lo[i]); it != model.end() && it->first <= hi[i]; ++it, ++at)
      if ((rk[at] != it->first || rv[at] != it->second) && ++bad <= 3)
        FAIL_CHECK("range [" << lo[i] << ", " << hi[i] << "] pair " << at - want_off[i] << ": (" << rk[at] << ", "
                             << rv[at] << ") != (" << it->first << ", " << it->second << ")");
  }
  CHECK(bad == 0);
  // Values only, no offsets.
  DeviceBuffer<V> dv2(std::max<uint64_t>(total, 1), "test range values");
  CHECK(map.range(dlo.data(), dhi.data(), n, nullptr, nullptr, dv2.data(), total) == total);
  CHECK(to_host(dv2, total) == rv);
  // No ranges at all.
  CHECK(map.range(dlo.data(), dhi.data(), 0, doff.data(), dk.data(), dv.data(), total) == 0);
  CHECK(to_host(doff, 1)[0] == 0);
}

// successor of every probe against the model (the smallest key above it).
template <class Map, class K, class V>
void check_successor(Map& map, const std::map<K, V>& model, const std::vector<K>& probes) {
  const size_t n = probes.size();
  const auto dq = to_device(probes);
  DeviceBuffer<K> dk(std::max<size_t>(n, 1), "test successor keys");
  DeviceBuffer<V> dv(std::max<size_t>(n, 1), "test successor values");
  DeviceBuffer<bool> df(std::max<size_t>(n, 1), "test successor found");
  map.successor(dq.data(), n, dk.data(), dv.data(), df.data());
  const auto sk = to_host(dk, n);
  const auto sv = to_host(dv, n);
  const auto sf = flags_to_host(df, n);
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto it = model.upper_bound(probes[i]);
    const bool want = it != model.end();
    if ((sf[i] != 0) != want || sk[i] != (want ? it->first : K{0}) || sv[i] != (want ? it->second : V{0}))
      if (++bad <= 3) FAIL_CHECK("successor " << probes[i] << ": (" << int(sf[i]) << ", " << sk[i] << ")");
  }
  CHECK(bad == 0);
}

// A read-only device ref's find and successor (sorted_array_ref, lsm_ref,
// or one of a snapshot), one thread per probe, against the model.
template <class Ref, class K, class V>
__global__ void ref_queries_kernel(Ref ref, const K* q, uint64_t n, uint8_t* found, V* value, uint8_t* has_next,
                                   K* next, V* next_value) {
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  V v;
  found[i] = ref.find(q[i], &v) ? 1 : 0;
  value[i] = v;
  K k;
  V w;
  has_next[i] = ref.successor(q[i], &k, &w) ? 1 : 0;
  next[i] = k;
  next_value[i] = w;
}

template <class Ref, class K, class V>
void check_ref_queries(const Ref& ref, const std::map<K, V>& model, const std::vector<K>& probes) {
  const size_t n = probes.size();
  const auto dq = to_device(probes);
  DeviceBuffer<uint8_t> df(std::max<size_t>(n, 1), "test out"), dh(std::max<size_t>(n, 1), "test out");
  DeviceBuffer<V> dv(std::max<size_t>(n, 1), "test out"), dnv(std::max<size_t>(n, 1), "test out");
  DeviceBuffer<K> dn(std::max<size_t>(n, 1), "test out");
  ref_queries_kernel<Ref, K, V><<<static_cast<unsigned>((n + 127) / 128), 128>>>(ref, dq.data(), n, df.data(), dv.data(),
                                                                               dh.data(), dn.data(), dnv.data());
  GPUDICT_CHECK_LAUNCH("ref_queries_kernel");
  GPUDICT_CUDA(cudaDeviceSynchronize());
  const auto f = to_host(df, n), h = to_host(dh, n);
  const auto v = to_host(dv, n), nv = to_host(dnv, n);
  const auto nk = to_host(dn, n);
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto it = model.find(probes[i]);
    const bool want = it != model.end();
    if (f[i] != (want ? 1 : 0) || v[i] != (want ? it->second : V{0}))
      if (++bad <= 3) FAIL_CHECK("ref find " << probes[i] << ": (" << int(f[i]) << ", " << v[i] << ")");
    const auto up = model.upper_bound(probes[i]);
    const bool has = up != model.end();
    if (h[i] != (has ? 1 : 0) || nk[i] != (has ? up->first : K{0}) || nv[i] != (has ? up->second : V{0}))
      if (++bad <= 3) FAIL_CHECK("ref successor " << probes[i] << ": (" << int(h[i]) << ", " << nk[i] << ")");
  }
  CHECK(bad == 0);
}

// A user kernel's mixed operations through a device ref that serves them
// by tiles (btree_ref, slab_hash_ref): the operations, in a random order so
// that every warp mixes types.
enum : uint8_t { kFind = 0, kInsert = 1, kErase = 2 };

template <class K, class V>
struct RefOps {
  std::vector<uint8_t> type;
  std::vector<K> key;
  std::vector<V> value;
  void push(uint8_t t, K k, V v = V{0}) {
    type.push_back(t);
    key.push_back(k);
    value.push_back(v);
  }
  void shuffle(std::mt19937_64& rng) {
    std::vector<size_t> order(key.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    RefOps s;
    for (size_t i : order) s.push(type[i], key[i], value[i]);
    *this = s;
  }
};

// Every thread brings one operation; each tile of G lanes serves its G one
// at a time (work sharing), every lane of the tile calling
// serve(tile, type, key, value, got) with that operation's arguments.
template <unsigned G, class Serve, class K, class V>
__global__ void tile_ops_kernel(Serve serve, const uint8_t* type, const K* keys, const V* values, uint64_t n,
                                V* out_value, uint8_t* out_ok) {
  auto tile = cg::tiled_partition<G>(cg::this_thread_block());
  const uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool mine = i < n;
  const uint8_t my_type = mine ? type[i] : kFind;
  const K my_key = mine ? keys[i] : K{0};
  const V my_value = mine ? values[i] : V{0};
  const unsigned active = tile.ballot(mine);
  for (unsigned q = 0; q < G; ++q) {
    if (!((active >> q) & 1u)) continue;
    V got{0};
    const bool ok = serve(tile, tile.shfl(my_type, q), tile.shfl(my_key, q), tile.shfl(my_value, q), got);
    if (tile.thread_rank() == q) {
      out_value[i] = got;
      out_ok[i] = ok ? 1 : 0;
    }
  }
}

template <unsigned G, class Serve, class K, class V>
void run_tile_ops(const Serve& serve, const RefOps<K, V>& ops, std::vector<V>& out_value,
                  std::vector<uint8_t>& out_ok) {
  const size_t n = ops.key.size();
  const auto dt = to_device(ops.type);
  const auto dk = to_device(ops.key);
  const auto dv = to_device(ops.value);
  DeviceBuffer<V> dov(std::max<size_t>(n, 1), "test out");
  DeviceBuffer<uint8_t> dok(std::max<size_t>(n, 1), "test out");
  tile_ops_kernel<G, Serve, K, V><<<static_cast<unsigned>((n + 255) / 256), 256>>>(serve, dt.data(), dk.data(),
                                                                                 dv.data(), n, dov.data(), dok.data());
  GPUDICT_CHECK_LAUNCH("tile_ops_kernel");
  GPUDICT_CUDA(cudaDeviceSynchronize());
  out_value = to_host(dov, n);
  out_ok = to_host(dok, n);
}

}  // namespace library_test
