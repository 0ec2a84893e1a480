// What the structures' GPU tests share: a std::map model of the state the
// queries see, the comparison of a batch's results with it (every lookup,
// count, range and successor, exactly) and batch builders. The engine-level
// tests use the verifier instead.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "workloads/dictionary.hpp"
#include "workloads/batch.hpp"

namespace gpudict::testing {

using Model = std::map<uint64_t, uint64_t>;

// The (key, value) widths the structures are instantiated for
// (core/common/key_traits.hpp); typed tests run each case for every pair.
struct KvWidths {
  KeyType key = KeyType::U32;
  KeyType value = KeyType::U32;
};
inline const std::vector<KvWidths>& all_kv_widths() {
  static const std::vector<KvWidths> w = {
      {KeyType::U32, KeyType::U32}, {KeyType::U32, KeyType::U64}, {KeyType::U64, KeyType::U64}};
  return w;
}
inline std::string kv_label(KvWidths w) { return std::string(type_name(w.key)) + "/" + std::string(type_name(w.value)); }

// The ends of the domain of width t, in ascending order: 0, 1, 2^31, 2^32-1
// and, for u64, 2^32, 2^63, 2^64-2, 2^64-1.
inline std::vector<uint64_t> domain_ends(KeyType t) {
  std::vector<uint64_t> e = {0, 1, 1ull << 31, 0xFFFFFFFFull};
  if (t == KeyType::U64) e.insert(e.end(), {1ull << 32, 1ull << 63, ~0ull - 1, ~0ull});
  return e;
}

// A random key or value of width t. Half of the u64 draws take their high
// half from {0, 1, 2^31, 2^32-1}, so keys that agree in their low 32 bits
// occur (a structure that drops the high half would merge them) and the
// domain's ends are near.
inline uint64_t random_of(std::mt19937_64& rng, KeyType t) {
  if (t == KeyType::U32) return rng() & 0xFFFFFFFFull;
  if (rng() % 2) return rng();
  static constexpr uint64_t kHigh[] = {0, 1, 1ull << 31, 0xFFFFFFFFull};
  return (kHigh[rng() % 4] << 32) | (rng() & 0xFFFFFFFFull);
}

// Compares every query result of `b` with the model `m`. With `contiguous`
// the ranges' pairs must also fill range_keys exactly, without gaps or
// overlaps, in any order of the ranges (what the phased paths produce: the
// B-Tree's in its sorted list's order); without it any layout within the
// arrays is accepted, as the result contract allows (a concurrent batch's
// ranges leave gaps). Returns the first few mismatches.
inline std::string compare(const Model& m, const Batch& b, const BatchResults& r, bool contiguous = true) {
  std::ostringstream err;
  int bad = 0;
  auto fail = [&](size_t i, const std::string& what) {
    if (bad++ < 5)
      err << "op " << i << " (" << op_name(b.types[i]) << " " << b.keys[i] << " " << b.args[i] << "): " << what
          << "\n";
  };
  if (r.found.size() != b.size() || r.value.size() != b.size() || r.key.size() != b.size())
    return "results not sized to the batch";
  if (r.range_keys.size() != r.range_values.size()) return "range keys and values differ in length";
  std::vector<uint64_t> keys, values;
  keys.reserve(m.size());
  values.reserve(m.size());
  for (const auto& kv : m) {
    keys.push_back(kv.first);
    values.push_back(kv.second);
  }
  auto lower = [&](uint64_t k) { return static_cast<size_t>(std::lower_bound(keys.begin(), keys.end(), k) - keys.begin()); };
  auto upper = [&](uint64_t k) { return static_cast<size_t>(std::upper_bound(keys.begin(), keys.end(), k) - keys.begin()); };
  uint64_t next_offset = 0;  // the ranges' pairs so far
  struct Laid {
    uint64_t at, count;
    size_t op;
  };
  std::vector<Laid> laid;  // each non-empty range's place in range_keys
  for (size_t i = 0; i < b.size(); ++i) {
    const uint64_t k = b.keys[i], a = b.args[i];
    switch (b.types[i]) {
      case OpType::Insert:
      case OpType::Delete:
        break;
      case OpType::Lookup: {
        const size_t p = lower(k);
        const bool f = p < keys.size() && keys[p] == k;
        if (r.found[i] != (f ? 1 : 0))
          fail(i, "found " + std::to_string(r.found[i]));
        else if (f && r.value[i] != values[p])
          fail(i, "value " + std::to_string(r.value[i]) + " expected " + std::to_string(values[p]));
        break;
      }
      case OpType::Count: {
        const uint64_t c = k <= a ? upper(a) - lower(k) : 0;
        if (r.value[i] != c) fail(i, "count " + std::to_string(r.value[i]) + " expected " + std::to_string(c));
        break;
      }
      case OpType::Range: {
        const size_t first = lower(k);
        const uint64_t c = k <= a ? upper(a) - first : 0;
        if (r.value[i] != c) {
          fail(i, "range size " + std::to_string(r.value[i]) + " expected " + std::to_string(c));
          break;
        }
        const uint64_t at = r.key[i];
        if (c > 0) laid.push_back({at, c, i});
        if (at > r.range_keys.size() || c > r.range_keys.size() - at) {
          fail(i, "range past the end of range_keys");
          break;
        }
        for (uint64_t x = 0; x < c; ++x) {
          const uint64_t gk = r.range_keys[at + x], gv = r.range_values[at + x];
          if (gk != keys[first + x] || gv != values[first + x]) {
            fail(i, "range pair " + std::to_string(x) + " is (" + std::to_string(gk) + ", " + std::to_string(gv) +
                        ") expected (" + std::to_string(keys[first + x]) + ", " + std::to_string(values[first + x]) +
                        ")");
            break;
          }
        }
        next_offset += c;
        break;
      }
      case OpType::Successor: {
        const size_t p = upper(k);
        const bool f = p < keys.size();
        if (r.found[i] != (f ? 1 : 0))
          fail(i, "found " + std::to_string(r.found[i]) + (f ? " expected successor " + std::to_string(keys[p]) : ""));
        else if (f && (r.key[i] != keys[p] || r.value[i] != values[p]))
          fail(i, "successor (" + std::to_string(r.key[i]) + ", " + std::to_string(r.value[i]) + ") expected (" +
                      std::to_string(keys[p]) + ", " + std::to_string(values[p]) + ")");
        break;
      }
    }
  }
  if (contiguous) {
    std::sort(laid.begin(), laid.end(), [](const Laid& x, const Laid& y) { return x.at < y.at; });
    uint64_t end = 0;
    for (const Laid& l : laid) {
      if (l.at != end) {
        fail(l.op, "range at offset " + std::to_string(l.at) + " where the ranges before it end at " +
                       std::to_string(end) + " (a gap or an overlap)");
        break;
      }
      end += l.count;
    }
    if (next_offset != r.range_keys.size())
      err << "range_keys holds " << r.range_keys.size() << " pairs, the ranges " << next_offset << "\n";
  }
  if (bad > 5) err << "... " << bad << " mismatches in all\n";
  return err.str();
}

// The model of initial contents (later duplicates win, as in build()).
inline Model model_of(const KeyValues& kv) {
  Model m;
  for (size_t i = 0; i < kv.size(); ++i) m[kv.keys[i]] = kv.values[i];
  return m;
}

// Every query type on each key of `probes` and its neighbours.
inline Batch probe_batch(const std::vector<uint64_t>& probes, uint64_t kMax = 0xFFFFFFFFull) {
  Batch b;
  for (uint64_t k : probes) {
    const uint64_t lo = k > 0 ? k - 1 : 0, hi = k < kMax ? k + 1 : kMax;
    b.push(OpType::Lookup, k);
    b.push(OpType::Lookup, lo);
    b.push(OpType::Lookup, hi);
    b.push(OpType::Successor, k);
    b.push(OpType::Successor, lo);
    b.push(OpType::Count, lo, hi);
    b.push(OpType::Count, k, k);
    b.push(OpType::Count, 0, k);
    b.push(OpType::Count, k, kMax);
    b.push(OpType::Range, lo, hi);
  }
  return b;
}

// n keys first, first + step, ... with values derived from the keys.
inline KeyValues spaced_keys(uint64_t n, uint64_t step, uint64_t first) {
  KeyValues kv;
  for (uint64_t i = 0; i < n; ++i) {
    kv.keys.push_back(first + step * i);
    kv.values.push_back((first + step * i) ^ 0x5A5A5A5Aull);
  }
  return kv;
}

// A random batch mixing every operation: 30% inserts, 15% deletes, 20%
// lookups, 13% counts (spans up to 2^24), 10% ranges (spans up to 2^15), 12%
// successors; keys half fresh, half drawn from `known` (which grows with the
// inserted keys, so later batches hit). Keys and values of the widths `w`
// (random_of: u64 keys include ones that share their low 32 bits).
inline Batch random_mixed_batch(std::mt19937_64& rng, std::vector<uint64_t>& known, int size, ExecMode mode,
                                KvWidths w = {}) {
  const uint64_t kmax = max_of(w.key);
  Batch b;
  b.mode = mode;
  for (int i = 0; i < size; ++i) {
    const uint64_t r = rng() % 100;
    const uint64_t fresh = random_of(rng, w.key);
    const uint64_t old = known[rng() % known.size()];
    const uint64_t k = rng() % 2 ? fresh : old;
    if (r < 30) {
      b.push(OpType::Insert, k, random_of(rng, w.value));
      known.push_back(k);
    } else if (r < 45) {
      b.push(OpType::Delete, k);
    } else if (r < 65) {
      b.push(OpType::Lookup, k);
    } else if (r < 78) {
      b.push(OpType::Count, k, k + std::min<uint64_t>(kmax - k, rng() % (1ull << 24)));
    } else if (r < 88) {
      b.push(OpType::Range, k, k + std::min<uint64_t>(kmax - k, rng() % (1ull << 15)));
    } else {
      b.push(OpType::Successor, k);
    }
  }
  return b;
}

// n random pairs of the widths `w` (keys may repeat).
inline KeyValues random_pairs(std::mt19937_64& rng, uint64_t n, KvWidths w = {}) {
  KeyValues kv;
  for (uint64_t i = 0; i < n; ++i) {
    kv.keys.push_back(random_of(rng, w.key));
    kv.values.push_back(random_of(rng, w.value));
  }
  return kv;
}

// The device time of a random_mixed_batch lands in the right categories:
// phased batches time every operation type, a concurrent batch is one pass.
inline void check_mixed_batch_times(const DeviceTime& bt, ExecMode mode) {
  if (mode == ExecMode::Phased) {
    CHECK(bt[Phase::Update] > 0.0);
    CHECK(bt[Phase::Lookup] > 0.0);
    CHECK(bt[Phase::Count] > 0.0);
    CHECK(bt[Phase::Range] > 0.0);
    CHECK(bt[Phase::Successor] > 0.0);
    CHECK(bt[Phase::Concurrent] == 0.0);
  } else {
    CHECK(bt[Phase::Concurrent] > 0.0);
    CHECK(bt[Phase::Update] == 0.0);
    CHECK(bt[Phase::Lookup] == 0.0);
  }
}

}  // namespace gpudict::testing
