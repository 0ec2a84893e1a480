#include "workloads/multimap_reference.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/common/errors.hpp"

namespace gpudict {

// ---------------------------------------------------------------------------
// Multisets as sorted vectors
// ---------------------------------------------------------------------------

ValueBag bag_union(const ValueBag& a, const ValueBag& b) {
  ValueBag out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));  // keeps repeats
  return out;
}

bool bag_includes(const ValueBag& big, const ValueBag& small) {
  return std::includes(big.begin(), big.end(), small.begin(), small.end());  // counts multiplicity
}

ValueBag bag_minus(const ValueBag& a, const ValueBag& b) {
  ValueBag out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<MultiTouch> group_multi_updates(const Batch& batch) {
  std::vector<uint32_t> idx;
  for (uint32_t i = 0; i < batch.size(); ++i)
    if (is_update(batch.types[i])) idx.push_back(i);
  // Stable: within a key, batch order is kept (LastWins needs it).
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t x, uint32_t y) { return batch.keys[x] < batch.keys[y]; });
  std::vector<MultiTouch> groups;
  for (uint32_t i : idx) {
    const uint64_t key = batch.keys[i];
    if (groups.empty() || groups.back().key != key) {
      groups.emplace_back();
      groups.back().key = key;
    }
    MultiTouch& g = groups.back();
    if (batch.types[i] == OpType::Delete) {
      g.deleted = true;
      g.inserted_after.clear();
    } else {
      g.inserted.push_back(batch.args[i]);
      g.inserted_after.push_back(batch.args[i]);
    }
  }
  for (MultiTouch& g : groups) {
    std::sort(g.inserted.begin(), g.inserted.end());
    std::sort(g.inserted_after.begin(), g.inserted_after.end());
  }
  return groups;
}

const MultiTouch* find_touch(const std::vector<MultiTouch>* touched, uint64_t key) {
  if (!touched) return nullptr;
  auto it = std::lower_bound(touched->begin(), touched->end(), key,
                             [](const MultiTouch& t, uint64_t k) { return t.key < k; });
  return it != touched->end() && it->key == key ? &*it : nullptr;
}

// ---------------------------------------------------------------------------
// MultiView: what the semantics allow a query to see of one key
// ---------------------------------------------------------------------------

namespace {
const ValueBag kNoValues;
const ValueBag& must_of(const MultiCell* c) { return c ? c->must : kNoValues; }
const ValueBag& may_of(const MultiCell* c) { return c ? c->may : kNoValues; }
bool bag_has(const ValueBag& b, uint64_t v) { return std::binary_search(b.begin(), b.end(), v); }
}  // namespace

uint64_t MultiView::min_pairs() const {
  // A touched key that the batch deletes may show no pairs at all while the
  // batch runs; otherwise its certain pairs are always visible.
  return (touch && touch->deleted) ? 0 : must_of(cell).size();
}

uint64_t MultiView::max_pairs() const {
  return must_of(cell).size() + may_of(cell).size() + (touch ? touch->inserted.size() : 0);
}

ValueBag MultiView::required() const { return (touch && touch->deleted) ? ValueBag{} : must_of(cell); }

ValueBag MultiView::allowed() const {
  ValueBag a = bag_union(must_of(cell), may_of(cell));
  return touch ? bag_union(a, touch->inserted) : a;
}

// A concurrent insert only adds pairs: a key the batch does not delete keeps
// the pairs it had, so a lookup may miss only when the key may show none.
bool MultiView::lookup_may_miss() const { return min_pairs() == 0; }

bool MultiView::lookup_may_return(uint64_t value) const {
  return bag_has(must_of(cell), value) || bag_has(may_of(cell), value) ||
         (touch && bag_has(touch->inserted, value));
}

// ---------------------------------------------------------------------------
// MultiState
// ---------------------------------------------------------------------------

void MultiState::build(const KeyValues& initial) {
  std::vector<std::pair<uint64_t, uint64_t>> pairs(initial.size());
  for (size_t i = 0; i < initial.size(); ++i) pairs[i] = {initial.keys[i], initial.values[i]};
  std::sort(pairs.begin(), pairs.end());  // by key, then value: each key's bag comes out sorted
  cells_.clear();
  for (const auto& [key, value] : pairs) {
    if (cells_.empty() || std::prev(cells_.end())->first != key) cells_.emplace_hint(cells_.end(), key, MultiCell{});
    std::prev(cells_.end())->second.must.push_back(value);
  }
}

void MultiState::store(uint64_t key, MultiCell c) {
  if (c.empty())
    cells_.erase(key);
  else
    cells_[key] = std::move(c);
}

void MultiState::apply_phased(const std::vector<MultiTouch>& groups, DuplicateRule rule) {
  for (const MultiTouch& g : groups) {
    auto it = cells_.find(g.key);
    MultiCell c = it == cells_.end() ? MultiCell{} : it->second;
    if (!g.deleted) {
      c.must = bag_union(c.must, g.inserted);  // no delete: every rule keeps the pairs and adds the inserts
    } else if (rule == DuplicateRule::LastWins) {
      c = MultiCell{g.inserted_after, {}};
    } else if (rule == DuplicateRule::DeleteWinsElseAny) {
      c = MultiCell{};
    } else {  // DeletesThenInserts (and AnyUpdate, refused for multimaps before it gets here)
      c = MultiCell{g.inserted, {}};
    }
    store(g.key, std::move(c));
  }
}

void MultiState::apply_concurrent(const std::vector<MultiTouch>& groups) {
  for (const MultiTouch& g : groups) {
    if (g.deleted) {  // the inserts that ran after the last delete survive: any sub-multiset of them
      store(g.key, MultiCell{{}, g.inserted});
      continue;
    }
    auto it = cells_.find(g.key);
    MultiCell c = it == cells_.end() ? MultiCell{} : it->second;
    c.must = bag_union(c.must, g.inserted);
    store(g.key, std::move(c));
  }
}

MultiView MultiState::view(uint64_t key, const std::vector<MultiTouch>* touched) const {
  MultiView v;
  v.key = key;
  auto it = cells_.find(key);
  if (it != cells_.end()) v.cell = &it->second;
  v.touch = find_touch(touched, key);
  return v;
}

void MultiState::for_each(uint64_t lo, uint64_t hi, const std::vector<MultiTouch>* touched,
                          const std::function<bool(const MultiView&)>& fn) const {
  if (lo > hi) return;
  auto c = cells_.lower_bound(lo);
  size_t t = 0, t_end = 0;
  if (touched) {
    t = static_cast<size_t>(std::lower_bound(touched->begin(), touched->end(), lo,
                                             [](const MultiTouch& x, uint64_t k) { return x.key < k; }) -
                            touched->begin());
    t_end = touched->size();
  }
  while (true) {
    const bool has_c = c != cells_.end() && c->first <= hi;
    const bool has_t = t < t_end && (*touched)[t].key <= hi;
    if (!has_c && !has_t) return;
    MultiView v;
    v.key = has_c ? c->first : UINT64_MAX;
    if (has_t) v.key = std::min(v.key, (*touched)[t].key);
    if (has_c && c->first == v.key) v.cell = &(c++)->second;
    if (has_t && (*touched)[t].key == v.key) v.touch = &(*touched)[t++];
    if (!fn(v)) return;
  }
}

void MultiState::observe_lookup(uint64_t key, bool found, uint64_t value) {
  auto it = cells_.find(key);
  if (it == cells_.end() || it->second.may.empty()) return;
  MultiCell c = it->second;
  if (!found) {  // only possible when `must` is empty: the key holds no pairs
    c = MultiCell{};
  } else if (!bag_has(c.must, value) && bag_has(c.may, value)) {
    // The key holds at least one pair with this value; nothing else is learnt.
    c.may.erase(std::lower_bound(c.may.begin(), c.may.end(), value));
    c.must = bag_union(c.must, {value});
  }
  store(key, std::move(c));
}

void MultiState::observe_pairs(uint64_t key, const ValueBag& seen) { store(key, MultiCell{seen, {}}); }

void MultiState::observe_count_extreme(uint64_t key, bool at_min) {
  auto it = cells_.find(key);
  if (it == cells_.end() || it->second.may.empty()) return;
  MultiCell c = it->second;
  if (!at_min) c.must = bag_union(c.must, c.may);
  c.may.clear();
  store(key, std::move(c));
}

uint64_t MultiState::pairs() const {
  uint64_t n = 0;
  for (const auto& [k, c] : cells_) n += c.must.size();
  return n;
}

// ---------------------------------------------------------------------------
// MultiReference
// ---------------------------------------------------------------------------

MultiState& MultiReference::state(const std::string& snapshot) {
  if (snapshot.empty()) return live_;
  auto it = snapshots_.find(snapshot);
  if (it == snapshots_.end()) throw InputError("unknown snapshot '" + snapshot + "'");
  return it->second;
}

void MultiReference::snapshot(const std::string& name) {
  if (name.empty()) throw InputError("a snapshot needs a name");
  if (snapshots_.count(name)) throw InputError("snapshot '" + name + "' already exists");
  snapshots_.emplace(name, live_);
}

void MultiReference::drop_snapshot(const std::string& name) {
  if (snapshots_.erase(name) == 0) throw InputError("unknown snapshot '" + name + "'");
}

}  // namespace gpudict
