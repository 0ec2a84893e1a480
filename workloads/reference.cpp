#include "workloads/reference.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/common/errors.hpp"
#include "workloads/kv_sort.hpp"
#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"
#include "workloads/triangles.hpp"

namespace gpudict {

// ---------------------------------------------------------------------------
// Outcome sets
// ---------------------------------------------------------------------------

Outcomes make_outcomes(std::vector<Outcome> o) {
  std::sort(o.begin(), o.end());  // nullopt sorts before every value
  o.erase(std::unique(o.begin(), o.end()), o.end());
  return o;
}

Outcomes union_outcomes(const Outcomes& a, const Outcomes& b) {
  Outcomes out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool contains(const Outcomes& set, const Outcome& o) {
  return std::binary_search(set.begin(), set.end(), o);
}

std::vector<KeyUpdates> group_updates(const Batch& batch) {
  // (key, batch index) of each update, sorted stably by key on the host's
  // threads: within a key, batch order is kept.
  std::vector<std::pair<uint64_t, uint32_t>> idx;
  for (uint32_t i = 0; i < batch.size(); ++i)
    if (is_update(batch.types[i])) idx.emplace_back(batch.keys[i], i);
  const auto key_of = [](const std::pair<uint64_t, uint32_t>& e) { return e.first; };
  const auto [varying, ascending] = varying_bits(idx, key_of);
  if (!ascending) parallel_radix_sort(idx, varying, key_of);
  // One group per run of a key, built on the host's threads (parallel_select
  // picks each run's first position; the group takes the whole run).
  const uint64_t n = idx.size();
  std::vector<KeyUpdates> groups;
  parallel_select(
      n, uint64_t{1} << 14, [&](uint64_t x) { return x == 0 || idx[x].first != idx[x - 1].first; },
      [&](uint64_t total) { groups.resize(total); },
      [&](uint64_t g, uint64_t x) {
        KeyUpdates& out = groups[g];
        out.key = idx[x].first;
        for (uint64_t y = x; y < n && idx[y].first == out.key; ++y) {
          const uint32_t i = idx[y].second;
          out.effects.push_back(batch.types[i] == OpType::Insert ? Outcome(batch.args[i]) : Outcome());
        }
      });
  return groups;
}

Outcomes resolve_phased(DuplicateRule rule, const std::vector<Outcome>& effects) {
  if (effects.empty()) return {};
  switch (rule) {
    case DuplicateRule::LastWins:
      return {effects.back()};
    case DuplicateRule::DeleteWinsElseAny:
      for (const Outcome& e : effects)
        if (!e) return {Outcome()};
      return make_outcomes(effects);
    case DuplicateRule::AnyUpdate:
      return make_outcomes(effects);
    case DuplicateRule::DeletesThenInserts: {  // map semantics: one of the inserts, else absent
      std::vector<Outcome> inserts;
      for (const Outcome& e : effects)
        if (e) inserts.push_back(e);
      return inserts.empty() ? Outcomes{Outcome()} : make_outcomes(inserts);
    }
  }
  return make_outcomes(effects);
}

Outcomes resolve_concurrent(const std::vector<Outcome>& effects) { return make_outcomes(effects); }

// ---------------------------------------------------------------------------
// TouchedKeys
// ---------------------------------------------------------------------------

TouchedKeys::TouchedKeys(const std::vector<KeyUpdates>& groups) {
  entries_.reserve(groups.size());
  for (const KeyUpdates& g : groups) entries_.push_back(Entry{g.key, resolve_concurrent(g.effects)});
}

size_t TouchedKeys::lower_bound(uint64_t key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, uint64_t k) { return e.key < k; });
  return static_cast<size_t>(it - entries_.begin());
}

const Outcomes* TouchedKeys::find(uint64_t key) const {
  const size_t i = lower_bound(key);
  return i < entries_.size() && entries_[i].key == key ? &entries_[i].effects : nullptr;
}

// ---------------------------------------------------------------------------
// Cell
// ---------------------------------------------------------------------------

namespace {
bool set_can_be_absent(const Outcomes& s) { return !s.empty() && !s.front(); }
bool set_can_be_present(const Outcomes& s) { return !s.empty() && s.back().has_value(); }
}  // namespace

bool Cell::can_be_absent() const {
  const bool base = set ? set_can_be_absent(*set) : !present;
  return base || (effects && set_can_be_absent(*effects));
}

bool Cell::can_be_present() const {
  const bool base = set ? set_can_be_present(*set) : present;
  return base || (effects && set_can_be_present(*effects));
}

bool Cell::allows(const Outcome& o) const {
  const bool base = set ? contains(*set, o) : (!o ? !present : present && value == *o);
  return base || (effects && contains(*effects, o));
}

Outcomes Cell::outcomes() const {
  const Outcomes base = set ? *set : Outcomes{present ? Outcome(value) : Outcome()};
  return effects ? union_outcomes(base, *effects) : base;
}

std::vector<uint64_t> ModelState::SuccessorOption::values() const {
  std::vector<uint64_t> v;
  for (const Outcome& o : cell.outcomes())
    if (o) v.push_back(*o);
  return v;
}

// ---------------------------------------------------------------------------
// ModelState
// ---------------------------------------------------------------------------

ModelState::ModelState(const ModelState& o) : definite_(o.definite_), ambiguous_(o.ambiguous_, &pool_) {}

void ModelState::clear() {
  definite_.clear();
  ambiguous_.clear();
  pool_.release();  // both maps are empty: give the pool's chunks back too
}

void ModelState::build(const KeyValues& initial) { build_sorted(sorted_last_wins(initial)); }

void ModelState::build(KeyValues&& initial) { build_sorted(sorted_last_wins(std::move(initial))); }

void ModelState::build_sorted(const uninit_vector<std::pair<uint64_t, uint64_t>>& pairs) {
  clear();
  uninit_vector<uint64_t> keys(pairs.size()), values(pairs.size());
  parallel_for(pairs.size(), uint64_t{1} << 16, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      keys[i] = pairs[i].first;
      values[i] = pairs[i].second;
    }
  });
  definite_.build(std::move(keys), std::move(values));
}

void ModelState::put(uint64_t key, uint64_t value) {
  ambiguous_.erase(key);
  definite_.put(key, value);
}

void ModelState::erase(uint64_t key) {
  ambiguous_.erase(key);
  definite_.erase(key);
}

void ModelState::set(uint64_t key, const Outcomes& outcomes) {
  if (outcomes.size() == 1) {
    if (outcomes.front())
      put(key, *outcomes.front());
    else
      erase(key);
    return;
  }
  if (outcomes.empty()) return;  // no update: nothing changes
  definite_.erase(key);
  ambiguous_[key] = outcomes;
}

template <class Resolve>
void ModelState::apply_groups(const std::vector<KeyUpdates>& groups, Resolve resolve) {
  // The keys whose updates resolve to one outcome become definite (as
  // set() makes them) through one sorted list for the definite store,
  // merged into its arrays, not put key by key; the others are set one at
  // a time.
  std::vector<uint64_t> keys;
  std::vector<Outcome> outcomes;
  keys.reserve(groups.size());
  outcomes.reserve(groups.size());
  for (const KeyUpdates& g : groups) {
    // One update has its own effect as its only outcome under every rule
    // and in either mode: no outcome set to build.
    Outcomes o;
    const Outcome* one = g.effects.size() == 1 ? &g.effects.front() : nullptr;
    if (!one) {
      o = resolve(g.effects);
      if (o.size() == 1) one = &o.front();
    }
    if (!one) {
      set(g.key, o);  // several outcomes (ambiguous), or none (no change)
      continue;
    }
    if (!ambiguous_.empty()) ambiguous_.erase(g.key);
    keys.push_back(g.key);
    outcomes.push_back(*one);
  }
  definite_.apply_sorted(keys, outcomes);
}

void ModelState::apply_phased(const std::vector<KeyUpdates>& groups, DuplicateRule rule) {
  apply_groups(groups, [rule](const std::vector<Outcome>& effects) { return resolve_phased(rule, effects); });
}

void ModelState::apply_concurrent(const std::vector<KeyUpdates>& groups) {
  apply_groups(groups, [](const std::vector<Outcome>& effects) { return resolve_concurrent(effects); });
}

void ModelState::erase_vertices(std::vector<uint32_t> vertices) {
  if (vertices.empty()) return;
  std::sort(vertices.begin(), vertices.end());
  vertices.erase(std::unique(vertices.begin(), vertices.end()), vertices.end());
  auto touches = [&](uint64_t k) { return touches_vertex(vertices, k); };
  std::vector<uint64_t> keys;  // ascending: the cursor's order
  for (DefiniteStore::Cursor c = definite_.lower_bound(0); c.valid(); c.next())
    if (touches(c.key())) keys.push_back(c.key());
  for (auto it = ambiguous_.begin(); it != ambiguous_.end();)
    it = touches(it->first) ? ambiguous_.erase(it) : std::next(it);
  definite_.apply_sorted(keys, std::vector<Outcome>(keys.size()));
}

ModelState::CountBounds ModelState::triangle_bounds() const {
  std::vector<uint64_t> must;
  must.reserve(definite_.size());
  for (DefiniteStore::Cursor c = definite_.lower_bound(0); c.valid(); c.next()) must.push_back(c.key());
  if (ambiguous_.empty()) {
    const uint64_t n = count_triangles(std::move(must));
    return {n, n};
  }
  // The count only grows with the edges: the fewest are the definite ones,
  // the most add every ambiguous cell that may be present.
  std::vector<uint64_t> may = must;
  for (const auto& [key, outcomes] : ambiguous_)
    if (outcomes.back()) may.push_back(key);  // (absent sorts first: the last outcome is a value if any is)
  return {count_triangles(std::move(must)), count_triangles(std::move(may))};
}

void ModelState::collapse(uint64_t key, const Outcome& observed) {
  auto it = ambiguous_.find(key);
  if (it == ambiguous_.end() || !contains(it->second, observed)) return;
  set(key, {observed});
}

void ModelState::collapse_present(uint64_t key) {
  auto it = ambiguous_.find(key);
  if (it == ambiguous_.end() || it->second.front()) return;  // unknown, or cannot be absent
  Outcomes rest(it->second.begin() + 1, it->second.end());
  set(key, rest);
}

Outcomes ModelState::outcomes(uint64_t key) const {
  auto a = ambiguous_.find(key);
  if (a != ambiguous_.end()) return a->second;
  if (const uint64_t* d = definite_.find(key)) return {Outcome(*d)};
  return {Outcome()};
}

Cell ModelState::cell(uint64_t key, const TouchedKeys* touched) const {
  Cell c;
  c.key = key;
  if (touched) {
    c.effects = touched->find(key);
    c.touched = c.effects != nullptr;
  }
  auto a = ambiguous_.find(key);
  if (a != ambiguous_.end()) {
    c.set = &a->second;
    return c;
  }
  if (const uint64_t* d = definite_.find(key)) {
    c.present = true;
    c.value = *d;
  }
  return c;
}

namespace {

// Merges the definite map, the ambiguous map and the touched keys from their
// given starting points, in key order, up to `hi` inclusive.
template <class AmbIt>
void merge_cells(DefiniteStore::Cursor d, AmbIt a, AmbIt a_end, const TouchedKeys* touched, size_t t, uint64_t hi,
                 const std::function<bool(const Cell&)>& fn) {
  const size_t t_end = touched ? touched->size() : 0;
  while (true) {
    const bool has_d = d.valid() && d.key() <= hi;
    const bool has_a = a != a_end && a->first <= hi;
    const bool has_t = t < t_end && (*touched)[t].key <= hi;
    if (!has_d && !has_a && !has_t) return;
    uint64_t k = UINT64_MAX;
    if (has_d) k = std::min(k, d.key());
    if (has_a) k = std::min(k, a->first);
    if (has_t) k = std::min(k, (*touched)[t].key);

    Cell c;
    c.key = k;
    if (has_t && (*touched)[t].key == k) {
      c.touched = true;
      c.effects = &(*touched)[t].effects;
      ++t;
    }
    if (has_a && a->first == k) {
      c.set = &a->second;
      ++a;
    } else if (has_d && d.key() == k) {
      c.present = true;
      c.value = d.value();
      d.next();
    }
    if (!fn(c)) return;
  }
}

}  // namespace

void ModelState::for_each_cell(uint64_t lo, uint64_t hi, const TouchedKeys* touched,
                               const std::function<bool(const Cell&)>& fn) const {
  if (lo > hi) return;
  merge_cells(definite_.lower_bound(lo), ambiguous_.lower_bound(lo), ambiguous_.end(), touched,
              touched ? touched->lower_bound(lo) : 0, hi, fn);
}

void ModelState::for_each_cell_above(uint64_t key, const TouchedKeys* touched,
                                     const std::function<bool(const Cell&)>& fn) const {
  if (key == UINT64_MAX) return;
  for_each_cell(key + 1, UINT64_MAX, touched, fn);
}

ModelState::CountBounds ModelState::count_bounds(uint64_t lo, uint64_t hi, const TouchedKeys* touched) const {
  CountBounds b;
  if (lo > hi) return b;
  const bool no_touched_in_range =
      !touched || touched->lower_bound(lo) == touched->size() || (*touched)[touched->lower_bound(lo)].key > hi;
  const bool no_ambiguous_in_range =
      ambiguous_.lower_bound(lo) == ambiguous_.end() || ambiguous_.lower_bound(lo)->first > hi;
  if (no_touched_in_range && no_ambiguous_in_range) {  // fast path: every key definite
    b.min = b.max = definite_.count(lo, hi);
    return b;
  }
  for_each_cell(lo, hi, touched, [&](const Cell& c) {
    if (!c.can_be_absent()) ++b.min;
    if (c.can_be_present()) ++b.max;
    return true;
  });
  return b;
}

void ModelState::collapse_count(uint64_t lo, uint64_t hi, const TouchedKeys* touched, bool to_min) {
  if (lo > hi) return;
  std::vector<uint64_t> keys;
  for_each_cell(lo, hi, touched, [&](const Cell& c) {
    if (!c.touched && !c.definite()) keys.push_back(c.key);
    return true;
  });
  for (uint64_t k : keys) {
    if (to_min)
      collapse(k, Outcome());
    else
      collapse_present(k);
  }
}

ModelState::SuccessorOptions ModelState::successor_options(uint64_t key, const TouchedKeys* touched) const {
  SuccessorOptions o;
  o.not_found = true;
  for_each_cell_above(key, touched, [&](const Cell& c) {
    if (c.can_be_present()) {
      o.found.push_back(SuccessorOption{c.key, c});
    }
    if (!c.can_be_absent()) {  // a key that must be present ends the search
      o.not_found = false;
      return false;
    }
    return true;
  });
  return o;
}

void ModelState::collapse_successor(uint64_t key, const std::optional<std::pair<uint64_t, uint64_t>>& result,
                                    const TouchedKeys* touched) {
  if (key == UINT64_MAX) return;
  const uint64_t hi = result ? result->first : UINT64_MAX;
  std::vector<uint64_t> absent;
  for_each_cell(key + 1, hi, touched, [&](const Cell& c) {
    if (!c.touched && !c.definite() && !(result && c.key == result->first)) absent.push_back(c.key);
    return true;
  });
  for (uint64_t k : absent) collapse(k, Outcome());
  if (result && !(touched && touched->find(result->first))) collapse(result->first, Outcome(result->second));
}

// ---------------------------------------------------------------------------
// ReferenceModel
// ---------------------------------------------------------------------------

void ReferenceModel::build(const KeyValues& initial) { live_.build(initial); }
void ReferenceModel::build(KeyValues&& initial) { live_.build(std::move(initial)); }

ModelState& ReferenceModel::state(const std::string& snapshot) {
  if (snapshot.empty()) return live_;
  auto it = snapshots_.find(snapshot);
  if (it == snapshots_.end()) throw InputError("unknown snapshot '" + snapshot + "'");
  return it->second;
}

const ModelState& ReferenceModel::state(const std::string& snapshot) const {
  return const_cast<ReferenceModel*>(this)->state(snapshot);
}

void ReferenceModel::snapshot(const std::string& name) {
  if (name.empty()) throw InputError("a snapshot needs a name");
  if (snapshots_.count(name)) throw InputError("snapshot '" + name + "' already exists");
  snapshots_.emplace(name, live_);
}

void ReferenceModel::drop_snapshot(const std::string& name) {
  if (snapshots_.erase(name) == 0) throw InputError("unknown snapshot '" + name + "'");
}

}  // namespace gpudict
