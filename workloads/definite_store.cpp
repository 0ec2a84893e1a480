#include "workloads/definite_store.hpp"

#include <algorithm>

#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"

namespace gpudict {

namespace {
constexpr size_t kMergeMin = size_t{1} << 16;  // an overlay or delta this small is never folded on size alone
constexpr size_t kListMin = 4096;              // a sorted list this short goes into the overlay key by key
}  // namespace

DefiniteStore::DefiniteStore(const DefiniteStore& o)
    : base_(o.base_), delta_(o.delta_), overlay_(o.overlay_, &pool_) {}

void DefiniteStore::build(const std::vector<uint64_t>& keys, const std::vector<uint64_t>& values) {
  build(uninit_vector<uint64_t>(keys.begin(), keys.end()), uninit_vector<uint64_t>(values.begin(), values.end()));
}

void DefiniteStore::build(uninit_vector<uint64_t> keys, uninit_vector<uint64_t> values) {
  auto b = std::make_shared<Base>();
  b->keys = std::move(keys);
  b->values = std::move(values);
  b->index();
  base_ = std::move(b);
  delta_ = std::make_shared<Delta>();
  overlay_.clear();
  pool_.release();
}

void DefiniteStore::clear() { build(uninit_vector<uint64_t>{}, uninit_vector<uint64_t>{}); }

const uint64_t* DefiniteStore::below(uint64_t key) const {
  const Delta& d = *delta_;
  if (!d.keys.empty()) {
    const size_t i = d.lower(key);
    if (i < d.keys.size() && d.keys[i] == key) return d.kind[i] == kTomb ? nullptr : &d.values[i];
  }
  const Base& b = *base_;
  const size_t i = b.lower(key);
  return i < b.keys.size() && b.keys[i] == key ? &b.values[i] : nullptr;
}

void DefiniteStore::put(uint64_t key, uint64_t value) {
  overlay_[key] = value;
  maybe_merge();
}

void DefiniteStore::erase(uint64_t key) {
  if (below(key)) {
    overlay_[key] = std::nullopt;  // a tombstone over the pair below
    maybe_merge();
  } else {
    overlay_.erase(key);
  }
}

void DefiniteStore::apply_sorted(const std::vector<uint64_t>& keys,
                                 const std::vector<std::optional<uint64_t>>& outcomes) {
  // Key by key into the overlay costs a tree insert each; a merge into the
  // delta reads and writes the delta once, on every thread, and keeps the
  // delta at most a sixteenth of the base, so each pair of the base is
  // rewritten once per that many updates.
  if (keys.size() <= kListMin) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (outcomes[i])
        put(keys[i], *outcomes[i]);
      else
        erase(keys[i]);
    }
    return;
  }
  if (!overlay_.empty()) fold_overlay();  // older than the list: under it
  merge_into_delta(
      keys.size(), [&](uint64_t j) { return keys[j]; },
      [&](uint64_t j) { return outcomes[j] ? &*outcomes[j] : nullptr; });
}

const uint64_t* DefiniteStore::find(uint64_t key) const {
  if (!overlay_.empty()) {
    auto it = overlay_.find(key);
    if (it != overlay_.end()) return it->second ? &*it->second : nullptr;
  }
  return below(key);
}

uint64_t DefiniteStore::count(uint64_t lo, uint64_t hi) const {
  if (lo > hi) return 0;
  auto count_in = [&](const Base& a) {
    const size_t x = a.lower(lo);
    const size_t y = hi == UINT64_MAX ? a.keys.size() : a.lower(hi + 1);
    return std::make_pair(x, y);
  };
  const auto [a, b] = count_in(*base_);
  int64_t n = static_cast<int64_t>(b - a);
  const Delta& d = *delta_;
  if (!d.keys.empty()) {
    const auto [x, y] = count_in(d);
    n += d.adjust[y] - d.adjust[x];
  }
  for (auto it = overlay_.lower_bound(lo); it != overlay_.end() && it->first <= hi; ++it) {
    const bool present_below = below(it->first) != nullptr;
    if (it->second && !present_below) ++n;
    if (!it->second && present_below) --n;
  }
  return static_cast<uint64_t>(n);
}

void DefiniteStore::maybe_merge() {
  if (overlay_.size() > kMergeMin && overlay_.size() > (base_->keys.size() + delta_->keys.size()) / 16)
    fold_overlay();
}

void DefiniteStore::settle(uint64_t reads) {
  // A fold reads and writes the level below once; each read it saves
  // searches one level fewer (the overlay's tree: a few cache misses more
  // than an array's search).
  if (!overlay_.empty() && reads * 8 >= delta_->keys.size() + overlay_.size()) fold_overlay();
  if (!delta_->keys.empty() && reads * 8 >= base_->keys.size() + delta_->keys.size()) fold_delta();
}

void DefiniteStore::fold_overlay() {
  // The overlay as arrays (its tree cannot be split into pieces).
  std::vector<uint64_t> keys;
  std::vector<const std::optional<uint64_t>*> changes;
  keys.reserve(overlay_.size());
  changes.reserve(overlay_.size());
  for (const auto& [k, v] : overlay_) {
    keys.push_back(k);
    changes.push_back(&v);
  }
  merge_into_delta(
      keys.size(), [&](uint64_t j) { return keys[j]; },
      [&](uint64_t j) { return changes[j]->has_value() ? &**changes[j] : nullptr; });
  overlay_.clear();
  pool_.release();
}

template <class UpdateKey, class ValueOf>
void DefiniteStore::merge_into_delta(uint64_t m, UpdateKey update_key, ValueOf value_of) {
  if (m == 0) return;
  const Delta& old = *delta_;
  const Base& base = *base_;
  // Whether each update's key is in the base: known from the delta's entry
  // for it, else searched in the base.
  std::vector<uint8_t> in_base(m);
  parallel_for(m, uint64_t{1} << 12, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t j = lo; j < hi; ++j) {
      const uint64_t k = update_key(j);
      const size_t i = old.keys.empty() ? 0 : old.lower(k);
      in_base[j] = i < old.keys.size() && old.keys[i] == k ? old.kind[i] != kNew : base.contains(k);
    }
  });
  auto d = std::make_shared<Delta>();
  // A delete of a key the base lacks leaves nothing (and drops the delta's
  // new key); every other update is an entry.
  merge_with_updates(
      old.keys.size(), [&](uint64_t i) { return old.keys[i]; }, m, update_key,
      [&](uint64_t j) { return value_of(j) != nullptr || in_base[j]; },
      [&](uint64_t total) {
        d->keys.resize(total);
        d->values.resize(total);
        d->kind.resize(total);
      },
      [&](uint64_t at, bool from_old, uint64_t i) {
        if (from_old) {
          d->keys[at] = old.keys[i];
          d->values[at] = old.values[i];
          d->kind[at] = old.kind[i];
          return;
        }
        const uint64_t* v = value_of(i);
        d->keys[at] = update_key(i);
        d->values[at] = v ? *v : 0;
        d->kind[at] = !v ? kTomb : in_base[i] ? kOver : kNew;
      });
  d->adjust.resize(d->keys.size() + 1);
  d->adjust[0] = 0;
  for (size_t i = 0; i < d->keys.size(); ++i)
    d->adjust[i + 1] = d->adjust[i] + (d->kind[i] == kNew ? 1 : d->kind[i] == kTomb ? -1 : 0);
  d->index();
  delta_ = std::move(d);
  if (delta_->keys.size() > kMergeMin && delta_->keys.size() > base_->keys.size() / 16) fold_delta();
}

void DefiniteStore::fold_delta() {
  const Delta& d = *delta_;
  if (d.keys.empty()) return;
  const Base& old = *base_;
  auto b = std::make_shared<Base>();
  merge_with_updates(
      old.keys.size(), [&](uint64_t i) { return old.keys[i]; }, d.keys.size(), [&](uint64_t j) { return d.keys[j]; },
      [&](uint64_t j) { return d.kind[j] != kTomb; },
      [&](uint64_t total) {
        b->keys.resize(total);
        b->values.resize(total);
      },
      [&](uint64_t at, bool from_base, uint64_t i) {
        b->keys[at] = from_base ? old.keys[i] : d.keys[i];
        b->values[at] = from_base ? old.values[i] : d.values[i];
      });
  b->index();
  base_ = std::move(b);
  delta_ = std::make_shared<Delta>();
}

DefiniteStore::Cursor DefiniteStore::lower_bound(uint64_t lo) const {
  Cursor c;
  c.s_ = this;
  c.bi_ = base_->lower(lo);
  c.di_ = delta_->keys.empty() ? 0 : delta_->lower(lo);
  c.oi_ = overlay_.lower_bound(lo);
  c.settle();
  return c;
}

void DefiniteStore::Cursor::settle() {
  // The smallest key of the three levels; the newest level holding it
  // decides (a tombstone hides it: on to the next key).
  const Base& b = *s_->base_;
  const Delta& d = *s_->delta_;
  while (true) {
    const bool hb = bi_ < b.keys.size();
    const bool hd = di_ < d.keys.size();
    const bool ho = oi_ != s_->overlay_.end();
    if (!hb && !hd && !ho) {
      valid_ = false;
      return;
    }
    uint64_t k = UINT64_MAX;
    if (hb) k = std::min(k, b.keys[bi_]);
    if (hd) k = std::min(k, d.keys[di_]);
    if (ho) k = std::min(k, oi_->first);
    const bool at_b = hb && b.keys[bi_] == k, at_d = hd && d.keys[di_] == k, at_o = ho && oi_->first == k;
    bool present;
    uint64_t value = 0;
    if (at_o) {
      present = oi_->second.has_value();
      if (present) value = *oi_->second;
    } else if (at_d) {
      present = d.kind[di_] != kTomb;
      value = d.values[di_];
    } else {
      present = true;
      value = b.values[bi_];
    }
    if (present) {
      key_ = k;
      value_ = value;
      valid_ = true;
      return;
    }
    if (at_b) ++bi_;
    if (at_d) ++di_;
    if (at_o) ++oi_;
  }
}

void DefiniteStore::Cursor::next() {
  const Base& b = *s_->base_;
  const Delta& d = *s_->delta_;
  if (bi_ < b.keys.size() && b.keys[bi_] == key_) ++bi_;
  if (di_ < d.keys.size() && d.keys[di_] == key_) ++di_;
  if (oi_ != s_->overlay_.end() && oi_->first == key_) ++oi_;
  settle();
}

std::map<uint64_t, uint64_t> DefiniteStore::to_map() const {
  std::map<uint64_t, uint64_t> m;
  for (Cursor c = lower_bound(0); c.valid(); c.next()) m.emplace_hint(m.end(), c.key(), c.value());
  return m;
}

}  // namespace gpudict
