// The GPU sorted array against a std::map model: every query result of every
// batch is compared (found, key, value, counts, range pairs and offsets).
// Every case runs for each (key, value) width pair of all_kv_widths(), u32/u32
// first; the largest ones run at a smaller size for the 64-bit pairs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"
#include "workloads/registry/structures.hpp"
#include "core/common/errors.hpp"
#include "core/common/stream_copy.hpp"
#include "core/sorted_array/detail/search_index.cuh"
#include "workloads/adapter/structures.hpp"
#include "model_compare.hpp"

using namespace gpudict;

namespace {

using gpudict::testing::all_kv_widths;
using gpudict::testing::compare;
using gpudict::testing::domain_ends;
using gpudict::testing::kv_label;
using gpudict::testing::KvWidths;
using gpudict::testing::Model;
using gpudict::testing::model_of;
using gpudict::testing::spaced_keys;

std::unique_ptr<Dictionary> make(KvWidths w = {}) {
  StructureConfig c;
  c.key_type = w.key;
  c.value_type = w.value;
  return make_sorted_array(c);
}

// A test key of the widths w: k itself for u32 keys; for u64 keys an
// injective spread of k (k < 2^34) over the high bits: bit 0 of k goes to bit
// 32 and bit 1 to bit 63, so keys equal in their low 32 bits occur next to
// each other and at both ends of the domain.
uint64_t lift(KvWidths w, uint64_t k) {
  if (w.key == KeyType::U32) return k;
  return (k >> 2) | ((k & 1) << 32) | ((k & 2) << 62);
}

// testing::probe_batch for keys of width w: every query type on each probe
// and its neighbours, clamped to the width's domain.
Batch probe_batch(const std::vector<uint64_t>& probes, KvWidths w = {}) {
  return gpudict::testing::probe_batch(probes, max_of(w.key));
}

void apply_updates(Model& m, const Batch& b) {
  for (size_t i = 0; i < b.size(); ++i) {
    if (b.types[i] == OpType::Insert) m[b.keys[i]] = b.args[i];
    if (b.types[i] == OpType::Delete) m.erase(b.keys[i]);
  }
}

// Runs `b` on the structure and the model (updates first, then the queries on
// the live model or the named snapshot) and checks every result and the size.
void run_checked(Dictionary& d, Model& live, const std::map<std::string, Model>& snaps, const Batch& b,
                 DeviceTime* time = nullptr) {
  apply_updates(live, b);
  const Model& seen = b.snapshot.empty() ? live : snaps.at(b.snapshot);
  BatchResults r;
  DeviceTime t;
  d.execute(b, r, t);
  if (time) *time = t;
  const std::string err = compare(seen, b, r);
  INFO(err);
  CHECK(err.empty());
  CHECK(d.stats().size == live.size());
}

void run_checked(Dictionary& d, Model& live, const Batch& b, DeviceTime* time = nullptr) {
  run_checked(d, live, {}, b, time);
}

}  // namespace

TEST_CASE("sorted-array: capabilities, parameters, key types") {
  const Capabilities c = sorted_array_caps();
  CHECK(c.ordered);
  CHECK(c.deletes);
  CHECK(c.snapshots);
  CHECK_FALSE(c.native_concurrent);
  CHECK(c.phased_duplicates == DuplicateRule::LastWins);
  CHECK(c.supports(KeyType::U32));
  CHECK(c.supports(KeyType::U64));
  for (OpType t : kAllOpTypes) CHECK(c.supports(t) == !is_graph_op(t));  // every operation but the graph's

  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    auto d = make(w);
    CHECK(d->caps().ordered);
    const Params p = d->parameters();
    bool has_layout = false, has_search = false;
    for (const auto& kv : p) {
      has_layout |= kv.first == "layout";
      has_search |= kv.first == "search";
      // The layout names the instantiated pair.
      if (kv.first == "layout") CHECK(kv.second.find(kv_label(w)) != std::string::npos);
    }
    CHECK(has_layout);
    CHECK(has_search);
  }
  // u64 keys with u32 values run on the u64/u64 instantiation.
  StructureConfig mixed;
  mixed.key_type = KeyType::U64;
  mixed.value_type = KeyType::U32;
  auto d = make_sorted_array(mixed);
  bool named = false;
  for (const auto& kv : d->parameters())
    if (kv.first == "layout") named = kv.second.find("u64/u64") != std::string::npos;
  CHECK(named);
}

// sa::build_fence_levels over many arrays (the LSM's new levels): a job of
// more than 32 segments (key padding and fence levels) runs as several
// launches; every array must come out as if built on its own. K: the key
// width (u64 keys: 256-byte windows, the same fanout).
template <class K>
void check_fence_levels_of_many_arrays() {
  using Store = sa::ArrayStore<K, uint32_t>;
  constexpr int kArrays = 40;
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  for (int from_level : {0, 1}) {
    CAPTURE(from_level);
    std::vector<Store> stores(kArrays);
    std::vector<Store*> ptrs;
    std::vector<std::vector<K>> keys(kArrays);
    for (int a = 0; a < kArrays; ++a) {
      // 4,097 keys and up (two or three levels), never a multiple of 32.
      const uint64_t n = 4097 + 3001 * static_cast<uint64_t>(a) * (a % 5 == 0 ? 40 : 1) + a % 31;
      Store& st = stores[a];
      st.layout = sa::FenceLayout::for_size(n);
      st.n = n;
      st.reserve_pairs(n, false);
      st.reserve_fences(n, false);
      // Garbage everywhere the build must write (padding included).
      REQUIRE(cudaMemset(st.keys.data(), 0xAB, st.keys.bytes()) == cudaSuccess);
      REQUIRE(cudaMemset(st.fences.data(), 0xAB, st.fences.bytes()) == cudaSuccess);
      keys[a].resize(n);
      // u64: the high half varies too (keys stay sorted).
      for (uint64_t i = 0; i < n; ++i)
        keys[a][i] = static_cast<K>(sizeof(K) == 8 ? (7 * i + a) * 0x100000001ull : 7 * i + a);
      copy_to_device(stream, st.keys.data(), keys[a].data(), n * sizeof(K));
      if (from_level == 1) {  // level 1 as the placing kernels write it (no padding)
        std::vector<K> l1(st.layout.size[1]);
        for (uint64_t i = 0; i < l1.size(); ++i) l1[i] = keys[a][i * sa::kFanout];
        copy_to_device(stream, st.fences.data() + st.layout.offset[1], l1.data(), l1.size() * sizeof(K));
      }
      ptrs.push_back(&st);
    }
    sa::build_fence_levels(ptrs.data(), kArrays, from_level, stream);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    int three_levels = 0;
    for (int a = 0; a < kArrays; ++a) {
      CAPTURE(a);
      const Store& st = stores[a];
      const sa::FenceLayout& f = st.layout;
      three_levels += f.levels >= 3;
      std::vector<K> got(st.keys.capacity());
      copy_to_host(stream, got.data(), st.keys.data(), got.size() * sizeof(K));
      for (uint64_t i = st.n; i < sa::round_up(st.n, sa::kFanout); ++i) REQUIRE(got[i] == K(0));  // key padding
      std::vector<K> fences(f.fence_entries);
      copy_to_host(stream, fences.data(), st.fences.data(), fences.size() * sizeof(K));
      uint64_t stride = 1;
      for (int l = 1; l < f.levels; ++l) {
        CAPTURE(l);
        stride *= sa::kFanout;
        const uint64_t padded = sa::round_up(f.size[l], sa::kFanout);
        for (uint64_t i = 0; i < padded; ++i) {
          const K want = i < f.size[l] ? keys[a][i * stride] : K(0);
          if (fences[f.offset[l] + i] != want) {
            FAIL_CHECK("fence level " << l << " entry " << i << ": " << fences[f.offset[l] + i] << ", want " << want);
            break;
          }
        }
      }
    }
    CHECK(three_levels >= 4);  // the job holds arrays of both shapes
  }
  cudaStreamDestroy(stream);
}

TEST_CASE("sorted-array: fence levels of many arrays in one call") {
  SUBCASE("u32 keys") { check_fence_levels_of_many_arrays<uint32_t>(); }
  SUBCASE("u64 keys") { check_fence_levels_of_many_arrays<uint64_t>(); }
}

TEST_CASE("sorted-array: empty structure") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key);
    auto d = make(w);
    DeviceTime t;
    d->build(KeyValues{}, t);
    CHECK(d->stats().size == 0);
    Model live;
    run_checked(*d, live, probe_batch({0, 1, 12345, kMax}, w));

    Batch b;
    b.push(OpType::Range, 0, kMax);
    b.push(OpType::Count, 0, kMax);
    b.push(OpType::Successor, 0);
    run_checked(*d, live, b);

    // Deletes of absent keys into the empty array, then inserts.
    Batch dels;
    for (uint64_t k : std::initializer_list<uint64_t>{0, 5, kMax}) dels.push(OpType::Delete, k);
    dels.push(OpType::Lookup, 5);
    run_checked(*d, live, dels);
    CHECK(d->stats().size == 0);

    Batch ins;
    ins.push(OpType::Insert, lift(w, 7), 70);
    ins.push(OpType::Insert, lift(w, 3), 30);
    ins.push(OpType::Range, 0, kMax);
    ins.push(OpType::Successor, lift(w, 3));
    run_checked(*d, live, ins);
    CHECK(d->stats().size == 2);

    // Without build() at all.
    auto fresh = make(w);
    Model none;
    run_checked(*fresh, none, probe_batch({0, 9, kMax}, w));
  }
}

TEST_CASE("sorted-array: build with duplicate input keys keeps the last") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key), vMax = max_of(w.value);
    auto d = make(w);
    DeviceTime t;
    KeyValues kv;
    kv.keys = {5, 3, 5, 7, 3, 5, 0, kMax, 0};
    kv.values = {1, 2, 3, 4, 5, 6, vMax, 0, 9};
    d->build(kv, t);
    Model live = model_of(kv);
    CHECK(live.size() == 5);
    CHECK(d->stats().size == 5);
    Batch b;
    b.push(OpType::Range, 0, kMax);
    b.push(OpType::Lookup, 5);
    b.push(OpType::Lookup, 3);
    b.push(OpType::Lookup, 0);
    b.push(OpType::Lookup, kMax);
    run_checked(*d, live, b);

    // Many duplicates, random order; build again replaces the contents.
    std::mt19937_64 rng(7);
    KeyValues many;
    for (int i = 0; i < 200000; ++i) {
      many.keys.push_back(lift(w, rng() % 5000));
      many.values.push_back(rng() & vMax);
    }
    d->build(many, t);
    Model m2 = model_of(many);
    CHECK(d->stats().size == m2.size());
    Batch all;
    all.push(OpType::Range, 0, kMax);
    for (uint64_t k = 0; k < 5100; k += 7) all.push(OpType::Lookup, lift(w, k));
    run_checked(*d, m2, all);
    CHECK(t[Phase::Build] > 0.0);
  }
}

TEST_CASE("sorted-array: several updates of a key in one batch, last wins") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key), vMax = max_of(w.value);
    auto d = make(w);
    DeviceTime t;
    KeyValues kv;
    kv.keys = {lift(w, 10), lift(w, 20), lift(w, 60)};
    kv.values = {1, 2, 6};
    d->build(kv, t);
    Model live = model_of(kv);

    // u64 values: one that needs all its bits (u32/u32 as before: 2).
    const uint64_t big = w.value == KeyType::U64 ? vMax - 5 : 2;
    Batch b;
    b.push(OpType::Insert, lift(w, 10), 100);  // present: insert, delete, insert -> 101
    b.push(OpType::Delete, lift(w, 10));
    b.push(OpType::Insert, lift(w, 10), 101);
    b.push(OpType::Delete, lift(w, 20));  // present: delete, insert, delete -> gone
    b.push(OpType::Insert, lift(w, 20), 200);
    b.push(OpType::Delete, lift(w, 20));
    b.push(OpType::Insert, lift(w, 30), 1);  // absent: insert, insert -> big
    b.push(OpType::Insert, lift(w, 30), big);
    b.push(OpType::Delete, lift(w, 40));  // absent: delete, insert -> 7
    b.push(OpType::Insert, lift(w, 40), 7);
    b.push(OpType::Insert, lift(w, 50), 1);  // absent: insert, delete -> absent
    b.push(OpType::Delete, lift(w, 50));
    b.push(OpType::Delete, lift(w, 60));  // present: delete, insert -> replaced
    b.push(OpType::Insert, lift(w, 60), 66);
    for (uint64_t k : {10, 20, 30, 40, 50, 60}) b.push(OpType::Lookup, lift(w, k));
    b.push(OpType::Range, 0, kMax);
    run_checked(*d, live, b);
    CHECK(d->stats().size == 4);

    // Random batches over a small key space: runs of equal keys everywhere.
    std::mt19937_64 rng(11);
    for (int round = 0; round < 6; ++round) {
      Batch r;
      const int n = 1 << (10 + 2 * round % 8);
      for (int i = 0; i < n; ++i) {
        const uint64_t k = lift(w, rng() % 3000);
        switch (rng() % 4) {
          case 0:
          case 1: r.push(OpType::Insert, k, rng() & vMax); break;
          case 2: r.push(OpType::Delete, k); break;
          default: r.push(OpType::Lookup, k); break;
        }
      }
      r.push(OpType::Range, 0, kMax);
      run_checked(*d, live, r);
    }
  }
}

TEST_CASE("sorted-array: extreme keys and values, empty and inverted ranges") {
  constexpr uint64_t kMax = 0xFFFFFFFFull;
  auto d = make();
  DeviceTime t;
  KeyValues kv;
  kv.keys = {0, 1, 0xFFFFFFFEull, kMax, 0x80000000ull};
  kv.values = {kMax, 0, kMax, 0, 0x80000000ull};
  d->build(kv, t);
  Model live = model_of(kv);

  Batch b;
  for (uint64_t k : std::initializer_list<uint64_t>{0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFD, 0xFFFFFFFE, kMax}) {
    b.push(OpType::Lookup, k);
    b.push(OpType::Successor, k);
  }
  b.push(OpType::Count, 0, kMax);
  b.push(OpType::Count, kMax, kMax);
  b.push(OpType::Count, 0, 0);
  b.push(OpType::Count, 5, 4);      // inverted
  b.push(OpType::Count, kMax, 0);   // inverted
  b.push(OpType::Count, 2, 0x7FFFFFFF);  // empty
  b.push(OpType::Range, 0, kMax);   // everything
  b.push(OpType::Range, kMax, 0);   // inverted
  b.push(OpType::Range, 2, 3);      // empty
  b.push(OpType::Range, kMax, kMax);
  b.push(OpType::Range, 0, 0);
  b.push(OpType::Range, 0xFFFFFFFEull, kMax);
  run_checked(*d, live, b);

  // Updates at the extremes: value 0 and 0xFFFFFFFF, key 0 and 0xFFFFFFFF.
  Batch u;
  u.push(OpType::Delete, kMax);
  u.push(OpType::Insert, 0, 0);
  u.push(OpType::Insert, 2, kMax);
  u.push(OpType::Successor, 0xFFFFFFFEull);
  u.push(OpType::Successor, kMax);
  u.push(OpType::Lookup, 0);
  u.push(OpType::Lookup, kMax);
  u.push(OpType::Count, 0, kMax);
  u.push(OpType::Range, 0, kMax);
  run_checked(*d, live, u);

  Batch back;
  back.push(OpType::Insert, kMax, kMax);
  back.push(OpType::Delete, 0);
  back.push(OpType::Lookup, kMax);
  back.push(OpType::Lookup, 0);
  back.push(OpType::Successor, 0);
  back.push(OpType::Range, 0, kMax);
  run_checked(*d, live, back);
}

// Every domain end of the width as a key and as a value (0, 1, 2^31, 2^32-1
// and, for u64, 2^32, 2^63, 2^64-2, 2^64-1), by build and by insert; lookups,
// successors, counts and ranges around each; keys equal in their low 32 bits
// (k and k + 2^32) stay distinct; deletes of each end.
TEST_CASE("sorted-array: domain ends of every width as keys and values") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key);
    const std::vector<uint64_t> ends = domain_ends(w.key);
    const std::vector<uint64_t> vends = domain_ends(w.value);
    std::vector<uint64_t> keys = ends;
    if (w.key == KeyType::U64)  // keys whose low 32 bits equal those of other keys (k + 2^32, k - 2^32)
      keys.insert(keys.end(), {(1ull << 32) + 1, (1ull << 32) + (1ull << 31), (1ull << 33) - 1,
                               (1ull << 63) + (1ull << 32), ~0ull - (1ull << 32)});
    std::vector<uint64_t> probes = keys;
    for (uint64_t k : keys) {
      if (k > 0) probes.push_back(k - 1);
      if (k < kMax) probes.push_back(k + 1);
    }

    for (int by_insert = 0; by_insert < 2; ++by_insert) {
      CAPTURE(by_insert);
      auto d = make(w);
      DeviceTime t;
      Model live;
      KeyValues kv;
      for (size_t i = 0; i < keys.size(); ++i) {
        kv.keys.push_back(keys[i]);
        kv.values.push_back(vends[(i * 3 + 1) % vends.size()]);
      }
      if (by_insert) {
        d->build(KeyValues{}, t);
        Batch ins;
        for (size_t i = 0; i < kv.size(); ++i) ins.push(OpType::Insert, kv.keys[i], kv.values[i]);
        run_checked(*d, live, ins);
      } else {
        d->build(kv, t);
        live = model_of(kv);
      }
      REQUIRE(d->stats().size == keys.size());
      Batch q = probe_batch(probes, w);
      q.push(OpType::Range, 0, kMax);
      q.push(OpType::Count, 0, kMax);
      q.push(OpType::Range, kMax, 0);  // inverted
      q.push(OpType::Range, 0, 0xFFFFFFFFull);  // the u32 domain: u64 keys above it stay out
      q.push(OpType::Range, (1ull << 32) & kMax, kMax);
      run_checked(*d, live, q);

      // Every value end on every key, then each key deleted in turn with
      // queries in between (the last ones see an empty array).
      for (size_t v = 0; v < vends.size(); ++v) {
        Batch rv;
        for (size_t i = 0; i < keys.size(); ++i) rv.push(OpType::Insert, keys[i], vends[(i + v) % vends.size()]);
        for (uint64_t k : keys) rv.push(OpType::Lookup, k);
        rv.push(OpType::Range, 0, kMax);
        run_checked(*d, live, rv);
      }
      for (size_t i = 0; i < keys.size(); ++i) {
        Batch del;
        del.push(OpType::Delete, keys[i]);
        for (uint64_t k : keys) {
          del.push(OpType::Lookup, k);
          del.push(OpType::Successor, k);
        }
        del.push(OpType::Count, 0, kMax);
        del.push(OpType::Range, 0, kMax);
        run_checked(*d, live, del);
      }
      CHECK(d->stats().size == 0);
    }
  }
}

TEST_CASE("sorted-array: only deletes of absent keys, batch of one, batch larger than the array") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key), vMax = max_of(w.value);
    auto d = make(w);
    DeviceTime t;
    KeyValues kv = spaced_keys(100, 10, 5);
    for (auto& k : kv.keys) k = lift(w, k);
    d->build(kv, t);
    Model live = model_of(kv);

    Batch absent;
    for (uint64_t k = 0; k < 2000; k += 10) absent.push(OpType::Delete, lift(w, k));  // keys end in 5: never present
    run_checked(*d, live, absent);
    CHECK(d->stats().size == 100);
    run_checked(*d, live, probe_batch({lift(w, 5), lift(w, 15), lift(w, 995), lift(w, 1000)}, w));

    Batch one_insert;
    one_insert.push(OpType::Insert, lift(w, 7), 77);
    run_checked(*d, live, one_insert);
    Batch one_delete;
    one_delete.push(OpType::Delete, lift(w, 15));
    run_checked(*d, live, one_delete);
    Batch one_lookup;
    one_lookup.push(OpType::Lookup, lift(w, 7));
    run_checked(*d, live, one_lookup);
    Batch one_range;
    one_range.push(OpType::Range, 0, kMax);
    run_checked(*d, live, one_range);

    // 2^16 inserts into 100 keys, many below, inside and above the array.
    std::mt19937_64 rng(3);
    Batch big;
    for (int i = 0; i < (1 << 16); ++i) big.push(OpType::Insert, lift(w, rng() % 4000000), rng() & vMax);
    big.push(OpType::Count, 0, kMax);
    run_checked(*d, live, big);
    run_checked(*d, live, probe_batch({0, lift(w, 5), lift(w, 7), lift(w, 1005), lift(w, 3999999), kMax}, w));

    // Delete everything (plus absent keys), then the array is empty.
    Batch all;
    for (const auto& kv2 : live) all.push(OpType::Delete, kv2.first);
    all.push(OpType::Delete, kMax);
    all.push(OpType::Count, 0, kMax);
    run_checked(*d, live, all);
    CHECK(d->stats().size == 0);
    run_checked(*d, live, probe_batch({0, lift(w, 5), kMax}, w));
  }
}

TEST_CASE("sorted-array: search index at sizes around multiples of 32 and 1024") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key), vMax = max_of(w.value);
    const bool narrow = w.key == KeyType::U32 && w.value == KeyType::U32;
    // u32/u32 at every size up to 2^22 + 1; the 64-bit pairs up to 2^16 + 1,
    // with the sizes around the u64 top of 2048 entries (2^16: one level more).
    const std::vector<uint64_t> sizes =
        narrow ? std::vector<uint64_t>{1,    2,    31,   32,    33,    63,     64,     65,     1023,   1024,
                                       1025, 4095, 4096, 4097,  32768, 32769,  131072, 131073, 131104, 4194304 + 1}
               : std::vector<uint64_t>{1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 4097, 65535, 65536, 65537};
    std::mt19937_64 rng(5);
    for (uint64_t n : sizes) {
      CAPTURE(n);
      auto d = make(w);
      DeviceTime t;
      // Keys 1, 4, 7, ... (both neighbours absent); u64 keys: the same
      // spread times 2^32 + 1, so their high halves vary and stay sorted.
      KeyValues kv = spaced_keys(n, 3, 1);
      if (!narrow && w.key == KeyType::U64)
        for (auto& k : kv.keys) k *= 0x100000001ull;
      d->build(kv, t);
      Model live = model_of(kv);
      REQUIRE(d->stats().size == n);
      std::vector<uint64_t> probes;
      if (n <= 4097) {
        for (uint64_t i = 0; i < n; ++i) probes.push_back(kv.keys[i]);
      } else {
        // Window and level boundaries, the ends, and a random sample.
        for (uint64_t f = 32; f <= n; f *= 32)
          for (uint64_t j = f; j < n; j += f * 3 + 1)
            for (uint64_t x : std::initializer_list<uint64_t>{j - 1, j, j + 1})
              if (x < n) probes.push_back(kv.keys[x]);
        for (uint64_t i = 0; i < 64 && i < n; ++i) {
          probes.push_back(kv.keys[i]);
          probes.push_back(kv.keys[n - 1 - i]);
        }
        for (int i = 0; i < 20000; ++i) probes.push_back(kv.keys[rng() % n]);
      }
      probes.push_back(0);
      probes.push_back(kMax);
      probes.push_back(kv.keys[n - 1] + 1);
      run_checked(*d, live, probe_batch(probes, w));

      // Same sizes with random keys over the whole range, including 0 and max.
      KeyValues rk;
      for (uint64_t i = 0; i < n; ++i) {
        rk.keys.push_back(narrow ? rng() & kMax : gpudict::testing::random_of(rng, w.key));
        rk.values.push_back(rng() & vMax);
      }
      rk.keys[0] = 0;
      if (n > 1) rk.keys[1] = kMax;
      d->build(rk, t);
      Model rm = model_of(rk);
      REQUIRE(d->stats().size == rm.size());
      std::vector<uint64_t> rprobes;
      for (uint64_t i = 0; i < std::min<uint64_t>(n, 20000); ++i) rprobes.push_back(rk.keys[rng() % n]);
      for (int i = 0; i < 2000; ++i) rprobes.push_back(narrow ? rng() & kMax : gpudict::testing::random_of(rng, w.key));
      run_checked(*d, rm, probe_batch(rprobes, w));
    }
  }
}

TEST_CASE("sorted-array: ranges of many lengths") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key);
    // u64 keys: the same even keys above 2^33 + 2^32 (a high half that is
    // neither 0 nor all ones), so a range's bounds differ in both halves.
    const uint64_t base = w.key == KeyType::U64 ? 3ull << 32 : 0;
    auto d = make(w);
    DeviceTime t;
    KeyValues kv = spaced_keys(1 << 17, 2, base);  // even keys base .. base + 2^18 - 2
    d->build(kv, t);
    Model live = model_of(kv);
    std::mt19937_64 rng(9);
    Batch b;
    b.push(OpType::Range, 0, kMax);  // everything
    for (int i = 0; i < 12000; ++i) {
      const uint64_t lo = base + rng() % (1 << 18);
      b.push(OpType::Range, lo, lo);          // 0 or 1 pair
      b.push(OpType::Range, lo | 1, lo | 1);  // odd: empty
    }
    for (int i = 0; i < 3000; ++i) {
      const uint64_t lo = base + rng() % (1 << 18);
      b.push(OpType::Range, lo, lo + 15);  // 8 pairs
    }
    for (int i = 0; i < 100; ++i) {
      const uint64_t lo = base + rng() % (1 << 18);
      b.push(OpType::Range, lo, lo + 2000 + rng() % 20000);
      b.push(OpType::Range, lo + 10, lo);  // inverted
    }
    b.push(OpType::Range, base + (1 << 18), kMax);  // past the end: empty
    b.push(OpType::Range, 0, kMax);
    if (base) b.push(OpType::Range, 0, base - 1);  // below the keys: empty
    run_checked(*d, live, b);
  }
}

TEST_CASE("sorted-array: large random workload, every query type") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const bool narrow = w.key == KeyType::U32 && w.value == KeyType::U32;
    // u32/u32 at 2^20 keys and batches up to 2^18; the 64-bit pairs at a
    // quarter of that.
    const int shift = narrow ? 0 : 2;
    std::mt19937_64 rng(2024);
    auto d = make(w);
    DeviceTime t;
    const KeyValues kv = gpudict::testing::random_pairs(rng, 1 << (20 - shift), w);
    d->build(kv, t);
    Model live = model_of(kv);
    REQUIRE(d->stats().size == live.size());
    std::vector<uint64_t> known(kv.keys);  // keys likely present

    const int sizes[] = {1 << 16, 1 << 17, 1 << 18, 1 << 16, 1 << 18, 1 << 17};
    int round = 0;
    for (int size : sizes) {
      CAPTURE(round);
      Batch b = gpudict::testing::random_mixed_batch(rng, known, size >> shift,
                                                     round % 3 == 2 ? ExecMode::Concurrent : ExecMode::Phased, w);
      DeviceTime bt;
      run_checked(*d, live, {}, b, &bt);
      gpudict::testing::check_mixed_batch_times(bt, b.mode);
      ++round;
    }
  }
}

TEST_CASE("sorted-array: snapshots see the contents they were taken with") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key), vMax = max_of(w.value);
    auto d = make(w);
    DeviceTime t;
    KeyValues kv = spaced_keys(50000, 7, 3);
    for (auto& k : kv.keys) k = lift(w, k);
    d->build(kv, t);
    Model live = model_of(kv);
    std::map<std::string, Model> snaps;

    d->snapshot("s1", t);
    snaps["s1"] = live;
    CHECK(t[Phase::Snapshot] >= 0.0);
    CHECK_THROWS_AS(d->snapshot("s1", t), InputError);

    std::mt19937_64 rng(4);
    // Change the live array, then query s1 in a batch that also updates.
    for (int round = 0; round < 3; ++round) {
      Batch b;
      for (int i = 0; i < 20000; ++i) {
        const uint64_t k = lift(w, rng() % 400000);
        if (rng() % 2)
          b.push(OpType::Insert, k, rng() & vMax);
        else
          b.push(OpType::Delete, kv.keys[rng() % kv.size()]);
      }
      run_checked(*d, live, snaps, b);
      Batch q = probe_batch({lift(w, 3), lift(w, 10), lift(w, 17), lift(w, 349996), 0, kMax}, w);
      for (int i = 0; i < 5000; ++i) q.push(OpType::Lookup, kv.keys[rng() % kv.size()]);
      q.push(OpType::Range, 0, kMax);
      q.push(OpType::Insert, lift(w, 3), 333);  // applies to the live array only
      q.push(OpType::Delete, lift(w, 10));
      q.snapshot = "s1";
      run_checked(*d, live, snaps, q);
      // The live array answers with the updates applied.
      Batch lq = probe_batch({lift(w, 3), lift(w, 10), lift(w, 17)}, w);
      lq.push(OpType::Range, 0, lift(w, 100));
      run_checked(*d, live, snaps, lq);
    }

    d->snapshot("s2", t);
    snaps["s2"] = live;
    CHECK(d->stats().extra.size() > 0);
    d->drop_snapshot("s1");
    snaps.erase("s1");
    Batch gone;
    gone.push(OpType::Lookup, lift(w, 3));
    gone.snapshot = "s1";
    BatchResults r;
    CHECK_THROWS_AS(d->execute(gone, r, t), InputError);
    CHECK_THROWS_AS(d->drop_snapshot("s1"), InputError);
    CHECK_THROWS_AS(d->drop_snapshot("never"), InputError);
    bool counted = false;
    for (const auto& kv2 : d->stats().extra)
      if (kv2.first == "snapshots") counted = kv2.second == "1";
    CHECK(counted);

    // s2 after more changes, and a snapshot of an empty structure.
    Batch more;
    for (int i = 0; i < 1000; ++i) more.push(OpType::Insert, lift(w, rng() % 1000000), i);
    run_checked(*d, live, snaps, more);
    Batch q2 = probe_batch({lift(w, 3), lift(w, 10), lift(w, 24)}, w);
    q2.push(OpType::Range, 0, kMax);
    q2.snapshot = "s2";
    run_checked(*d, live, snaps, q2);

    auto e = make(w);
    Model empty;
    std::map<std::string, Model> esnaps;
    e->build(KeyValues{}, t);
    e->snapshot("nothing", t);
    esnaps["nothing"] = empty;
    Batch fill;
    fill.push(OpType::Insert, lift(w, 1), 1);
    fill.push(OpType::Lookup, lift(w, 1));
    fill.push(OpType::Range, 0, kMax);
    fill.snapshot = "nothing";
    run_checked(*e, empty, esnaps, fill);
  }
}

TEST_CASE("sorted-array: concurrent batch runs as its updates, then its queries") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    auto d = make(w);
    DeviceTime t;
    KeyValues kv = spaced_keys(10000, 5, 0);
    for (auto& k : kv.keys) k = lift(w, k);
    d->build(kv, t);
    Model live = model_of(kv);
    Batch b;
    b.mode = ExecMode::Concurrent;
    b.push(OpType::Lookup, lift(w, 5));
    b.push(OpType::Delete, lift(w, 5));
    b.push(OpType::Insert, lift(w, 6), 66);
    b.push(OpType::Lookup, lift(w, 6));
    b.push(OpType::Successor, lift(w, 5));
    b.push(OpType::Count, 0, lift(w, 10));
    b.push(OpType::Range, 0, lift(w, 20));
    DeviceTime bt;
    run_checked(*d, live, {}, b, &bt);
    CHECK(bt[Phase::Concurrent] > 0.0);
  }
}

TEST_CASE("sorted-array: device memory estimate covers what it holds") {
  for (const KvWidths w : all_kv_widths()) {
    CAPTURE(kv_label(w));
    const uint64_t kMax = max_of(w.key);
    const uint64_t pair_bytes = (w.key == KeyType::U64 ? 8 : 4) + (w.value == KeyType::U64 ? 8 : 4);
    auto d = make(w);
    DeviceTime t;
    std::mt19937_64 rng(8);
    KeyValues kv;
    for (int i = 0; i < (1 << 18); ++i) {
      kv.keys.push_back(rng() & kMax);
      kv.values.push_back(i);
    }
    WorkloadBounds bounds;
    bounds.max_resident = kv.size() + 3 * (1 << 16);
    bounds.max_batch = 1 << 16;
    bounds.max_queries = 1 << 16;
    bounds.max_snapshots = 1;
    const uint64_t need = d->device_bytes_needed(bounds);
    CHECK(need >= bounds.max_resident * pair_bytes * 2);
    d->build(kv, t);
    Model live = model_of(kv);
    std::map<std::string, Model> snaps;
    for (int round = 0; round < 3; ++round) {
      Batch b;
      // u64 values above 2^32: the update values travel by index.
      for (int i = 0; i < (1 << 15); ++i) {
        const uint64_t k = rng() & kMax;
        b.push(OpType::Insert, k, w.value == KeyType::U64 ? i | (rng() << 32) : i);
      }
      for (int i = 0; i < (1 << 15); ++i) b.push(OpType::Lookup, rng() & kMax);
      run_checked(*d, live, snaps, b);
      if (round == 1) {
        d->snapshot("s", t);
        snaps["s"] = live;
      }
    }
    const Stats s = d->stats();
    INFO("held " << s.device_bytes << " estimated " << need);
    CHECK(s.device_bytes > 0);
    CHECK(s.device_bytes <= need);
    WorkloadBounds bigger = bounds;
    bigger.max_resident *= 4;
    CHECK(d->device_bytes_needed(bigger) > need);
  }
}
