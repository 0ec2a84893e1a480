// What the library's GPU tests share (test_library*.cu): the (key, value)
// pairings as doctest types, copies to and from the device, draws that
// cover the domain's ends, and find checked against a std::map model.
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

}  // namespace library_test
