// The CPU backend's map and set store (cpu_backend.cpp): sorted arrays, in
// two levels so that a batch costs about its own size, not the store's.
//
//   base   sorted unique keys and their values, with a radix index
//          (sorted_index.hpp) for point searches;
//   delta  sorted unique keys changed since the base was last rebuilt:
//          each live (inserted or replaced, with its value) or dead (a
//          delete). Invariant: a dead entry's key is in the base, so a dead
//          entry always hides a base pair and a live one with no base pair
//          is a new key.
//
// A batch's updates are first resolved to one effect per key (the caller's
// duplicate rule), then merged into the delta (O(delta + batch)). When the
// delta outgrows about sqrt(base x batch) (at least kMinDelta), it is merged
// into the base (O(n), on the host's threads), so a run of batches of b
// into n keys costs about sqrt(n b) per batch. Queries read both levels, the
// delta's entry winning; the store is only read while queries run, so they
// may run on many threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "workloads/parallel_sort.hpp"
#include "workloads/sorted_index.hpp"

namespace gpudict {

class CpuSortedStore {
 public:
  // One key's outcome of a batch: present with `value`, or deleted.
  struct Effect {
    uint64_t key;
    bool live;
    uint64_t value;
  };

  // Sets the contents to `pairs` (sorted by key, unique).
  template <class Pairs>
  void assign(const Pairs& pairs, bool keys_only) {
    base_keys_.resize(pairs.size());
    base_values_.resize(pairs.size());
    parallel_for(pairs.size(), uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
      for (uint64_t i = lo; i < hi; ++i) {
        base_keys_[i] = pairs[i].first;
        base_values_[i] = keys_only ? 0 : pairs[i].second;
      }
    });
    delta_.clear();
    index_delta();
    delta_new_ = delta_dead_ = 0;
    index_.build(base_keys_);
  }

  // Applies `effects` (sorted by key, unique); `batch_updates` is the
  // batch's update count (the delta's budget grows with it).
  void apply(const std::vector<Effect>& effects, uint64_t batch_updates) {
    if (effects.empty()) return;
    // Which effects' keys the base holds: a search each, on the host's threads.
    std::vector<uint8_t> in_base(effects.size());
    parallel_for(effects.size(), uint64_t{1} << 14, [&](uint64_t lo, uint64_t hi) {
      for (uint64_t e = lo; e < hi; ++e) in_base[e] = base_contains(effects[e].key);
    });
    // The effects over the old delta (an effect replaces its key's entry); a
    // delete of a key the base lacks leaves no entry (only the delta held it,
    // or nothing did).
    std::vector<Delta> merged;
    merge_with_updates(
        delta_.size(), [&](uint64_t i) { return delta_[i].key; }, effects.size(),
        [&](uint64_t j) { return effects[j].key; }, [&](uint64_t j) { return effects[j].live || in_base[j]; },
        [&](uint64_t total) { merged.resize(total); },
        [&](uint64_t at, bool from_delta, uint64_t i) {
          merged[at] = from_delta ? delta_[i] : Delta{effects[i].key, effects[i].value, effects[i].live, in_base[i] != 0};
        });
    delta_.swap(merged);
    index_delta();
    delta_new_ = delta_dead_ = 0;
    for (const Delta& d : delta_) {
      delta_new_ += d.live && !d.in_base;
      delta_dead_ += !d.live;
    }
    const double budget = 2.0 * std::sqrt(static_cast<double>(base_keys_.size()) *
                                          static_cast<double>(std::max<uint64_t>(batch_updates, 1)));
    if (static_cast<double>(delta_.size()) > std::max(static_cast<double>(kMinDelta), budget)) compact();
  }

  // Folds the delta into the base.
  void compact() {
    if (delta_.empty()) return;
    std::vector<uint64_t> keys, values;
    merge_with_updates(
        base_keys_.size(), [&](uint64_t i) { return base_keys_[i]; }, delta_.size(),
        [&](uint64_t j) { return delta_[j].key; }, [&](uint64_t j) { return delta_[j].live; },
        [&](uint64_t total) {
          keys.resize(total);
          values.resize(total);
        },
        [&](uint64_t at, bool from_base, uint64_t i) {
          keys[at] = from_base ? base_keys_[i] : delta_[i].key;
          values[at] = from_base ? base_values_[i] : delta_[i].value;
        });
    base_keys_.swap(keys);
    base_values_.swap(values);
    delta_.clear();
    index_delta();
    delta_new_ = delta_dead_ = 0;
    index_.build(base_keys_);
  }

  uint64_t size() const { return base_keys_.size() + delta_new_ - delta_dead_; }

  // Lookup: whether `key` is present, and its value.
  bool find(uint64_t key, uint64_t& value) const {
    const size_t d = delta_lower(key);
    if (d < delta_.size() && delta_[d].key == key) {
      value = delta_[d].value;
      return delta_[d].live;
    }
    const size_t b = index_.lower(base_keys_, key);
    if (b < base_keys_.size() && base_keys_[b] == key) {
      value = base_values_[b];
      return true;
    }
    return false;
  }

  // The pairs with keys in [lo, hi], in key order: emit(key, value) each.
  template <class Emit>
  void for_range(uint64_t lo, uint64_t hi, Emit&& emit) const {
    if (lo > hi) return;
    walk(lo, [&](uint64_t k, uint64_t v) {
      if (k > hi) return false;
      emit(k, v);
      return true;
    });
  }

  // The present keys in [lo, hi] (0 when lo > hi), from positions alone:
  // the base's keys in the interval, plus the delta's new keys there, minus
  // its dead ones (prefix sums over the delta).
  uint64_t count(uint64_t lo, uint64_t hi) const {
    if (lo > hi) return 0;
    const auto upper = [](const SortedIndex& ix, const std::vector<uint64_t>& keys, uint64_t k) {
      return k == ~uint64_t{0} ? keys.size() : ix.lower(keys, k + 1);
    };
    const size_t b0 = index_.lower(base_keys_, lo), b1 = upper(index_, base_keys_, hi);
    const size_t d0 = delta_lower(lo), d1 = upper(delta_index_, delta_keys_, hi);
    return (b1 - b0) + static_cast<uint64_t>(delta_adjust_[d1] - delta_adjust_[d0]);
  }

  // Successor: the first present key above `key`, and its value.
  bool successor(uint64_t key, uint64_t& next, uint64_t& value) const {
    if (key == ~uint64_t{0}) return false;
    bool found = false;
    walk(key + 1, [&](uint64_t k, uint64_t v) {
      next = k;
      value = v;
      found = true;
      return false;
    });
    return found;
  }

  // Keeps the pairs for which keep(key) holds.
  template <class Keep>
  void filter(Keep&& keep) {
    compact();
    size_t w = 0;
    for (size_t i = 0; i < base_keys_.size(); ++i)
      if (keep(base_keys_[i])) {
        base_keys_[w] = base_keys_[i];
        base_values_[w++] = base_values_[i];
      }
    base_keys_.resize(w);
    base_values_.resize(w);
    index_.build(base_keys_);
  }

 private:
  static constexpr uint64_t kMinDelta = uint64_t{1} << 10;

  struct Delta {
    uint64_t key, value;
    bool live;     // present with `value`; else deleted
    bool in_base;  // the base holds the key (a dead entry always does)
  };

  bool base_contains(uint64_t key) const { return index_.contains(base_keys_, key); }
  size_t delta_lower(uint64_t key) const { return delta_index_.lower(delta_keys_, key); }
  // The delta's keys apart, radix-indexed as the base's are: a delta may
  // reach millions of entries between compactions.
  // delta_adjust_[i]: what the delta's entries before i add to the base's
  // key count (+1 a new key, -1 a dead one), for count().
  void index_delta() {
    delta_keys_.resize(delta_.size());
    parallel_for(delta_.size(), uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
      for (uint64_t i = lo; i < hi; ++i) delta_keys_[i] = delta_[i].key;
    });
    delta_index_.build(delta_keys_);
    delta_adjust_.resize(delta_.size() + 1);
    delta_adjust_[0] = 0;
    for (size_t i = 0; i < delta_.size(); ++i)
      delta_adjust_[i + 1] = delta_adjust_[i] + (delta_[i].live ? (delta_[i].in_base ? 0 : 1) : -1);
  }

  // Calls step(key, value) for the present pairs from the first key >= lo
  // on, in key order, while it returns true.
  template <class Step>
  void walk(uint64_t lo, Step&& step) const {
    size_t b = index_.lower(base_keys_, lo), d = delta_lower(lo);
    const size_t nb = base_keys_.size(), nd = delta_.size();
    while (b < nb || d < nd) {
      if (d < nd && (b == nb || delta_[d].key <= base_keys_[b])) {
        const Delta& x = delta_[d++];
        if (b < nb && base_keys_[b] == x.key) ++b;  // the delta's entry hides the base's
        if (x.live && !step(x.key, x.value)) return;
      } else {
        if (!step(base_keys_[b], base_values_[b])) return;
        ++b;
      }
    }
  }

  std::vector<uint64_t> base_keys_, base_values_;
  SortedIndex index_;
  std::vector<Delta> delta_;
  std::vector<uint64_t> delta_keys_;  // delta_[i].key
  SortedIndex delta_index_;
  std::vector<int64_t> delta_adjust_ = {0};
  uint64_t delta_new_ = 0;   // live entries whose key the base lacks
  uint64_t delta_dead_ = 0;  // dead entries (each hides a base pair)
};

}  // namespace gpudict
