// The LSM's per-level lookup filters (core/lsm/detail/level_filter.cuh): the build
// kernel's words against a CPU build of the same definition, on both of its
// paths; the false-positive rate; and lookups with the filter on and off
// against the model where a key's records straddle a filter segment. The
// build runs for u32 and u64 keys (a u64 key is folded to 32 bits from all 64
// first); the lookups for every (key, value) width pair, their u32 keys and
// values mapped onto the width by an order-preserving injection (widen).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "workloads/registry/structures.hpp"
#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "core/common/device_buffer.hpp"
#include "core/common/key_traits.hpp"
#include "core/common/stream_copy.hpp"
#include "core/lsm/detail/level_filter.cuh"
#include "workloads/adapter/structures.hpp"
#include "model_compare.hpp"

using namespace gpudict;

namespace {

using gpudict::testing::all_kv_widths;
using gpudict::testing::compare;
using gpudict::testing::kv_label;
using gpudict::testing::KvWidths;
using gpudict::testing::Model;

// The filter words of sorted keys [0, n) by the definition in level_filter.cuh.
template <class K>
std::vector<uint32_t> cpu_filter(const std::vector<K>& keys, uint32_t seg_shift) {
  const uint64_t n = keys.size();
  const uint64_t segs = (n + (1ull << seg_shift) - 1) >> seg_shift;
  std::vector<uint32_t> w(segs << (seg_shift - 2), 0u);
  for (uint64_t p = 0; p < n; ++p) {
    const uint32_t k = lsm::filter_key(keys[p]);
    w[lsm::filter_word(static_cast<uint32_t>(p >> seg_shift), seg_shift - 2, k)] |= lsm::filter_mask(k);
  }
  return w;
}

template <class K>
bool cpu_may_contain(const std::vector<uint32_t>& w, uint32_t seg_shift, uint32_t seg, K key) {
  const uint32_t k = lsm::filter_key(key);
  const uint32_t m = lsm::filter_mask(k);
  return (w[lsm::filter_word(seg, seg_shift - 2, k)] & m) == m;
}

// A u32 key or value at width t: itself for u32; for u64 x 2^32 + (x mod 8),
// 0xFFFFFFFF -> 2^64 - 1 (order-preserving; the low halves repeat).
uint64_t widen(uint64_t x, KeyType t) {
  if (t == KeyType::U32) return x;
  if (x == 0xFFFFFFFFull) return ~0ull;
  return (x << 32) | (x & 7);
}
Batch widen_batch(const Batch& b, KvWidths w) {
  Batch o = b;
  for (size_t i = 0; i < o.size(); ++i) {
    o.keys[i] = widen(o.keys[i], w.key);
    if (o.types[i] == OpType::Insert) o.args[i] = widen(o.args[i], w.value);
    if (o.types[i] == OpType::Count || o.types[i] == OpType::Range) o.args[i] = widen(o.args[i], w.key);
  }
  return o;
}

std::string extra_of(const Dictionary& d, const std::string& name) {
  for (const auto& kv : d.stats().extra)
    if (kv.first == name) return kv.second;
  return "<missing " + name + ">";
}

uint64_t extra_u64_of(const Dictionary& d, const std::string& name) { return std::stoull(extra_of(d, name)); }

std::unique_ptr<Dictionary> make(uint64_t b, bool filter, KvWidths w) {
  StructureConfig c;
  c.key_type = w.key;
  c.value_type = w.value;
  c.options["batch-size"] = std::to_string(b);
  c.options["lookup-filter"] = filter ? "on" : "off";
  return make_lsm(c);
}

}  // namespace

// K: the key type (u64 keys: random over all 64 bits).
template <class K>
void check_filter_build() {
  std::mt19937_64 rng(41);
  // (n, log2 of the segment): segments inside one block's tile (5, 10, 15:
  // shared memory), partial last tiles and segments, and segments larger
  // than a tile (16, 20: global-memory ORs); several levels in one launch.
  const std::vector<std::pair<uint64_t, uint32_t>> cases = {
      {2048, 5}, {40000, 10}, {3 * 32768 + 100, 15}, {70000, 16}, {200000, 20}, {1u << 20, 10}, {33, 5}};
  std::vector<std::vector<K>> keys(cases.size());
  std::vector<DeviceBuffer<K>> d_keys(cases.size());
  std::vector<DeviceBuffer<uint32_t>> d_words(cases.size());
  std::vector<lsm::FilterBuild<K>> jobs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const uint64_t n = cases[c].first;
    auto& k = keys[c];
    for (uint64_t i = 0; i < n; ++i) k.push_back(static_cast<K>(rng()));
    // duplicates (a key's records are adjacent in a level) and the extremes
    for (uint64_t i = 0; i + 1 < n; i += 97) k[i + 1] = k[i];
    k[0] = 0;
    k[n - 1] = key_max<K>;
    std::sort(k.begin(), k.end());
    const uint64_t words = ((n + (1ull << cases[c].second) - 1) >> cases[c].second) << (cases[c].second - 2);
    d_keys[c] = DeviceBuffer<K>(n, "test keys");
    d_words[c] = DeviceBuffer<uint32_t>(words, "test filter");
    // garbage first: the shared-memory path writes every word, the global path zeroes them
    GPUDICT_CUDA(cudaMemset(d_words[c].data(), 0xA5, words * sizeof(uint32_t)));
    copy_to_device(nullptr, d_keys[c].data(), k.data(), n * sizeof(K));
    jobs.push_back({d_keys[c].data(), d_words[c].data(), n, cases[c].second});
  }
  lsm::build_level_filters(jobs.data(), static_cast<int>(jobs.size()), nullptr);
  GPUDICT_CUDA(cudaDeviceSynchronize());
  for (size_t c = 0; c < cases.size(); ++c) {
    CAPTURE(cases[c].first);
    CAPTURE(cases[c].second);
    const std::vector<uint32_t> want = cpu_filter(keys[c], cases[c].second);
    std::vector<uint32_t> got(want.size());
    copy_to_host(nullptr, got.data(), d_words[c].data(), got.size() * sizeof(uint32_t));
    CHECK(got == want);
  }
  // False positives at random absent keys, in the segment the search
  // probes: with p = lower_bound(q) > 0, c = ceil(p / S) top entries are
  // below q, so segment c - 1 = (p - 1) / S (the filter is 8 bits per key, 4
  // bits per key set in one word).
  const auto& k = keys[5];
  const uint32_t shift = cases[5].second;
  const std::vector<uint32_t> w = cpu_filter(k, shift);
  uint64_t probes = 0, positives = 0;
  for (int i = 0; i < 200000; ++i) {
    const K q = static_cast<K>(rng());
    const auto it = std::lower_bound(k.begin(), k.end(), q);
    if ((it != k.end() && *it == q) || it == k.begin()) continue;
    const uint64_t p = static_cast<uint64_t>(it - k.begin());
    ++probes;
    positives += cpu_may_contain(w, shift, static_cast<uint32_t>((p - 1) >> shift), q) ? 1 : 0;
  }
  const double fpr = static_cast<double>(positives) / static_cast<double>(probes);
  CAPTURE(fpr);
  CHECK(fpr < 0.06);
  CHECK(fpr > 0.02);  // the filter is not all-zero or degenerate either way
}

TEST_CASE("lsm: lookup filter build: both kernel paths equal a CPU build, false positives about 4%") {
  SUBCASE("u32 keys") { check_filter_build<uint32_t>(); }
  SUBCASE("u64 keys") { check_filter_build<uint64_t>(); }
}

// Runs b on every structure and applies it to the model by the batch rule
// (a delete anywhere in the batch wins, else the last insert); checks every
// query result against `seen` (the live model unless given).
// The batch is a u32 one, widened to the widths w first.
void run_all(std::vector<std::unique_ptr<Dictionary>>& ds, Model& live, const Batch& narrow_b, KvWidths w,
             const Model* seen = nullptr) {
  const Batch b = widen_batch(narrow_b, w);
  std::map<uint64_t, std::pair<bool, uint64_t>> eff;  // key -> (deleted, last insert's value)
  for (size_t j = 0; j < b.size(); ++j) {
    if (!is_update(b.types[j])) continue;
    auto& e = eff[b.keys[j]];
    if (b.types[j] == OpType::Delete) e.first = true;
    if (b.types[j] == OpType::Insert) e.second = b.args[j];
  }
  for (const auto& kv : eff) {
    if (kv.second.first)
      live.erase(kv.first);
    else
      live[kv.first] = kv.second.second;
  }
  for (auto& d : ds) {
    BatchResults r;
    DeviceTime t;
    d->execute(b, r, t);
    const std::string err = compare(seen ? *seen : live, b, r);
    INFO(err);
    REQUIRE(err.empty());
  }
}

TEST_CASE("lsm: lookups with filters: records starting at a segment boundary, snapshots, on and off agree") {
  // u32/u32 and u64/u64 (the filters hash keys only: u32/u64 probes as u32/u32).
  for (const KvWidths w : {all_kv_widths().front(), all_kv_widths().back()}) {
    CAPTURE(kv_label(w));
    // b = 1024: level 1 (2048 records) has a fence top of stride S = 32. Four
    // batches of other keys fill level 2 first (the largest level has no
    // filter). Then batch 1 inserts 0..1023; batch 2 deletes (or re-inserts
    // with other values) 0..1022 and inserts 5000, so in level 1 key k < 1023
    // has its records at positions 2k (batch 2) and 2k + 1: key 16 j starts
    // exactly at top entry j (position 32 j), in segment j, while its top
    // count c = j points the filter at segment j - 1. Without the kernel's
    // top_equals guard, those re-inserted keys would be reported absent.
    for (bool del : {true, false}) {
      CAPTURE(del);
      std::vector<std::unique_ptr<Dictionary>> ds;
      ds.push_back(make(1024, true, w));
      ds.push_back(make(1024, false, w));
      Model live;
      Batch fill[4], b1, b2, q;
      for (uint64_t k = 0; k < 4096; ++k) fill[k / 1024].push(OpType::Insert, 100000 + 7 * k, k);
      for (uint64_t k = 0; k < 1024; ++k) b1.push(OpType::Insert, k, k + 7);
      for (uint64_t k = 0; k < 1023; ++k)
        if (del)
          b2.push(OpType::Delete, k);
        else
          b2.push(OpType::Insert, k, k * 3 + 1);
      b2.push(OpType::Insert, 5000, 1);
      for (uint64_t k = 0; k < 1100; ++k) q.push(OpType::Lookup, k);
      for (uint64_t k : {4999ull, 5000ull, 5001ull, 100000ull, 100007ull, 0xFFFFFFFFull}) q.push(OpType::Lookup, k);
      for (const Batch* b : {&fill[0], &fill[1], &fill[2], &fill[3], &b1, &b2}) run_all(ds, live, *b, w);
      for (auto& d : ds) CHECK(extra_of(*d, "levels") == "1,2");
      run_all(ds, live, q, w);
      // After the same batches, the structures differ by level 1's filter
      // alone: 2048 keys, 1 byte each (level 2, the largest, has none).
      CHECK(ds[0]->stats().device_bytes == ds[1]->stats().device_bytes + 2048);
    }

    // Random levels at b = 256, hits, misses and deleted keys; a cleanup (its
    // levels have no filters, the merged ones after it do); lookups on a
    // snapshot taken before more updates (its levels' filters are built when
    // first queried, after the live structure moved on); filter on and off.
    // At the end, levels 8 (2^16 records: a top of stride 1024) and 9 are
    // full, so a filter with segments of 1024 positions is probed too.
    std::mt19937_64 rng(5);
    std::vector<std::unique_ptr<Dictionary>> ds;
    ds.push_back(make(256, true, w));
    ds.push_back(make(256, false, w));
    Model live, snap;
    std::vector<uint64_t> known;
    auto lookups = [&]() {
      Batch q;
      for (int i = 0; i < 20000; ++i)
        q.push(OpType::Lookup, i % 2 && !known.empty() ? known[rng() % known.size()] : rng() & 0xFFFFFFFFull);
      return q;
    };
    auto updates = [&](int n, bool with_deletes) {
      Batch u;
      for (int i = 0; i < n; ++i) {
        if (with_deletes && rng() % 4 == 0 && !known.empty()) {
          u.push(OpType::Delete, known[rng() % known.size()]);
        } else {
          const uint64_t k =
              with_deletes && rng() % 3 == 0 && !known.empty() ? known[rng() % known.size()] : rng() & 0xFFFFFFFFull;
          u.push(OpType::Insert, k, rng() & 0xFFFFFFFFull);
          known.push_back(k);
        }
      }
      return u;
    };
    for (int batch = 0; batch < 200; ++batch) {
      run_all(ds, live, updates(1200, true), w);
      if (batch == 60)
        for (auto& d : ds) {
          DeviceTime t;
          d->cleanup(t);
        }
      if (batch == 120) {
        snap = live;
        for (auto& d : ds) {
          DeviceTime t;
          d->snapshot("s", t);
        }
      }
      if (batch % 23 == 0) run_all(ds, live, lookups(), w);
    }
    // Batches of fresh keys until r has bits 8 and 9 set (r grows by about 4
    // per batch of 1024 keys).
    for (int i = 0; i < 400 && ((extra_u64_of(*ds[0], "batches") >> 8) & 3) != 3; ++i)
      run_all(ds, live, updates(1024, false), w);
    const std::string levels = extra_of(*ds[0], "levels");
    CAPTURE(levels);
    CHECK(((extra_u64_of(*ds[0], "batches") >> 8) & 3) == 3);
    run_all(ds, live, lookups(), w);
    Batch q = lookups();
    q.snapshot = "s";
    run_all(ds, live, q, w, &snap);
  }
}
