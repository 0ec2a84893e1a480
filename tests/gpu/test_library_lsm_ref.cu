// lsm_ref: a user kernel's finds and successors on an lsm_map of several
// levels with replaced pairs and tombstones, at every (key, value) width,
// against a std::map model; the domain's ends as keys and probes.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "core/common/cuda_check.hpp"
#include "core/common/device_buffer.hpp"
#include "core/lsm/lsm_map.hpp"
#include "core/lsm/lsm_ref.cuh"
#include "library_test_util.cuh"

using namespace library_test;

TEST_CASE_TEMPLATE("lsm_ref: a user kernel's finds and successors over levels, replaced pairs and tombstones", P,
                   u32_u32, u32_u64, u64_u64) {
  using K = typename P::Key;
  using V = typename P::Value;
  std::mt19937_64 rng(44);
  gpudict::lsm_options o;
  o.batch_size = 1024;  // many levels
  gpudict::lsm_map<K, V> map(o);
  std::map<K, V> model = build_random(map, rng, 8000, 3);
  // Calls that replace values, delete runs of neighbouring keys (successor
  // walks past them) and insert new keys, each one batch of the LSM.
  for (int round = 0; round < 9; ++round) {
    std::vector<K> uk;
    std::vector<V> uv;
    for (const auto& kv : model)
      if (rng() % 8 == 0) uk.push_back(kv.first);
    for (int i = 0; i < 600; ++i) uk.push_back(draw<K>(rng));
    for (K k : uk) {
      uv.push_back(draw<V>(rng));
      model[k] = uv.back();
    }
    const auto dk = to_device(uk);
    const auto dv = to_device(uv);
    map.insert_or_assign(dk.data(), dv.data(), uk.size());
    std::vector<K> ek;
    auto it = model.begin();
    std::advance(it, static_cast<long>(rng() % model.size()));
    for (int j = 0; j < 40 && it != model.end(); ++j, ++it) ek.push_back(it->first);  // a run
    for (const auto& kv : model)
      if (rng() % 10 == 0) ek.push_back(kv.first);
    ek.push_back(draw<K>(rng));  // mostly absent
    std::sort(ek.begin(), ek.end());
    ek.erase(std::unique(ek.begin(), ek.end()), ek.end());
    for (K k : ek) model.erase(k);
    const auto de = to_device(ek);
    map.erase(de.data(), ek.size());
  }
  CHECK(map.stored_elements() > model.size());  // tombstones and replaced pairs are still stored

  std::vector<K> q = probes_of(model, rng, 4096);
  for (K k : ends<K>()) {  // around the ends too
    q.push_back(static_cast<K>(k + 1));
    q.push_back(static_cast<K>(k - 1));
  }
  check_ref_queries(map.ref(), model, q);
}
