#include "workloads/definite_store.hpp"

#include <algorithm>

#include "workloads/parallel_sort.hpp"

namespace gpudict {

namespace {
constexpr size_t kMergeMin = size_t{1} << 16;  // an overlay this small is never merged on size alone
}  // namespace

DefiniteStore::DefiniteStore(const DefiniteStore& o) : base_(o.base_), overlay_(o.overlay_, &pool_) {}

void DefiniteStore::build(std::vector<uint64_t> keys, std::vector<uint64_t> values) {
  auto b = std::make_shared<Base>();
  b->keys = std::move(keys);
  b->values = std::move(values);
  b->index();
  base_ = std::move(b);
  overlay_.clear();
  pool_.release();
}

void DefiniteStore::clear() { build({}, {}); }

bool DefiniteStore::in_base(uint64_t key) const {
  const size_t i = base_->lower(key);
  return i < base_->keys.size() && base_->keys[i] == key;
}

void DefiniteStore::put(uint64_t key, uint64_t value) {
  overlay_[key] = value;
  maybe_merge();
}

void DefiniteStore::erase(uint64_t key) {
  if (in_base(key)) {
    overlay_[key] = std::nullopt;  // a tombstone over the base's pair
    maybe_merge();
  } else {
    overlay_.erase(key);
  }
}

const uint64_t* DefiniteStore::find(uint64_t key) const {
  if (!overlay_.empty()) {
    auto it = overlay_.find(key);
    if (it != overlay_.end()) return it->second ? &*it->second : nullptr;
  }
  const size_t i = base_->lower(key);
  return i < base_->keys.size() && base_->keys[i] == key ? &base_->values[i] : nullptr;
}

uint64_t DefiniteStore::count(uint64_t lo, uint64_t hi) const {
  if (lo > hi) return 0;
  const size_t a = base_->lower(lo);
  const size_t b = hi == UINT64_MAX ? base_->keys.size() : base_->lower(hi + 1);
  int64_t n = static_cast<int64_t>(b - a);
  for (auto it = overlay_.lower_bound(lo); it != overlay_.end() && it->first <= hi; ++it) {
    const bool base = in_base(it->first);
    if (it->second && !base) ++n;
    if (!it->second && base) --n;
  }
  return static_cast<uint64_t>(n);
}

void DefiniteStore::apply_sorted(const std::vector<uint64_t>& keys,
                                 const std::vector<std::optional<uint64_t>>& outcomes) {
  // Key by key into the overlay costs a tree insert each, and the overlay
  // is merged into the base once it holds a sixteenth of it; a list that
  // large on its own is merged at once (a read and write of the base, on
  // every thread), skipping the tree.
  if (keys.size() <= kMergeMin / 16 || keys.size() * 16 < base_->keys.size()) {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (outcomes[i])
        put(keys[i], *outcomes[i]);
      else
        erase(keys[i]);
    }
    return;
  }
  if (!overlay_.empty()) merge();
  merge_into_base(
      keys.size(), [&](uint64_t j) { return keys[j]; },
      [&](uint64_t j) { return outcomes[j] ? &*outcomes[j] : nullptr; });
}

void DefiniteStore::maybe_merge() {
  if (overlay_.size() > kMergeMin && overlay_.size() > base_->keys.size() / 16) merge();
}

void DefiniteStore::settle(uint64_t reads) {
  // A merge reads and writes the base once; each read it saves searches the
  // overlay's tree (a few cache misses more than the arrays' search).
  if (!overlay_.empty() && reads * 8 >= base_->keys.size() + overlay_.size()) merge();
}

template <class UpdateKey, class ValueOf>
void DefiniteStore::merge_into_base(uint64_t m, UpdateKey update_key, ValueOf value_of) {
  auto b = std::make_shared<Base>();
  const Base& old = *base_;
  merge_with_updates(
      old.keys.size(), [&](uint64_t i) { return old.keys[i]; }, m, update_key,
      [&](uint64_t j) { return value_of(j) != nullptr; },
      [&](uint64_t total) {
        b->keys.resize(total);
        b->values.resize(total);
      },
      [&](uint64_t at, bool from_base, uint64_t i) {
        b->keys[at] = from_base ? old.keys[i] : update_key(i);
        b->values[at] = from_base ? old.values[i] : *value_of(i);
      });
  b->index();
  base_ = std::move(b);
}

void DefiniteStore::merge() {
  // The overlay as arrays (its tree cannot be split into pieces), then the
  // base and the overlay merged on the host's threads.
  std::vector<uint64_t> keys;
  std::vector<const std::optional<uint64_t>*> changes;
  keys.reserve(overlay_.size());
  changes.reserve(overlay_.size());
  for (const auto& [k, v] : overlay_) {
    keys.push_back(k);
    changes.push_back(&v);
  }
  merge_into_base(
      keys.size(), [&](uint64_t j) { return keys[j]; },
      [&](uint64_t j) { return changes[j]->has_value() ? &**changes[j] : nullptr; });
  overlay_.clear();
  pool_.release();
}

DefiniteStore::Cursor DefiniteStore::lower_bound(uint64_t lo) const {
  Cursor c;
  c.s_ = this;
  c.bi_ = base_->lower(lo);
  c.oi_ = overlay_.lower_bound(lo);
  c.settle();
  return c;
}

void DefiniteStore::Cursor::settle() {
  const Base& b = *s_->base_;
  while (true) {
    const bool hb = bi_ < b.keys.size();
    const bool ho = oi_ != s_->overlay_.end();
    if (!hb && !ho) {
      valid_ = false;
      return;
    }
    if (ho && (!hb || oi_->first <= b.keys[bi_])) {
      if (hb && oi_->first == b.keys[bi_]) ++bi_;  // the overlay's entry replaces the base's
      if (oi_->second) {
        key_ = oi_->first;
        value_ = *oi_->second;
        from_overlay_ = true;
        valid_ = true;
        return;
      }
      ++oi_;  // a tombstone
      continue;
    }
    key_ = b.keys[bi_];
    value_ = b.values[bi_];
    from_overlay_ = false;
    valid_ = true;
    return;
  }
}

void DefiniteStore::Cursor::next() {
  if (from_overlay_)
    ++oi_;
  else
    ++bi_;
  settle();
}

std::map<uint64_t, uint64_t> DefiniteStore::to_map() const {
  std::map<uint64_t, uint64_t> m;
  for (Cursor c = lower_bound(0); c.valid(); c.next()) m.emplace_hint(m.end(), c.key(), c.value());
  return m;
}

}  // namespace gpudict
