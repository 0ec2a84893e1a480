#include "workloads/verifier.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "workloads/multimap_checks.hpp"
#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"
#include "workloads/reference.hpp"
#include "workloads/triangles.hpp"
#include "workloads/verifier_text.hpp"

namespace gpudict {

namespace {
// Batches with fewer queries are checked on one thread (threads cost more).
constexpr uint64_t kParallelChecks = uint64_t{1} << 14;

// One query of a batch with its result, as the checks read them (batch
// indices fit 32 bits, as BatchPlan's do).
struct Query {
  uint64_t key, arg;    // the batch's
  uint64_t value, rkey;  // the result's value and key
  uint32_t i;            // its index in the batch
  OpType type;
  uint8_t found;
};
}  // namespace

struct Verifier::Impl {
  KeyType key_type;
  KeyType value_type;
  DuplicateRule rule;
  Semantics semantics;
  size_t max_reported;
  ReferenceModel model;  // map and set semantics
  std::unique_ptr<MultimapChecker> multi;  // multimap semantics (then `model` stays empty)
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::vector<Mismatch> first;
  bool queries_first = false;  // set_concurrent_queries_first

  // Set semantics: values play no part. The model holds every present key
  // with value 0, and every value a structure reports reads as 0.
  bool keys_only() const { return semantics == Semantics::Set; }
  uint64_t val(uint64_t v) const { return keys_only() ? 0 : v; }

  void build(KeyValues&& initial) {
    if (multi) return multi->build(initial);
    if (keys_only()) std::fill(initial.values.begin(), initial.values.end(), 0);
    model.build(std::move(initial));
  }
  void snapshot(const std::string& name) { multi ? multi->snapshot(name) : model.snapshot(name); }
  void drop_snapshot(const std::string& name) { multi ? multi->drop_snapshot(name) : model.drop_snapshot(name); }

  void report(uint64_t batch_index, uint64_t op, const Batch& b, Problem p) {
    ++mismatches;
    if (first.size() >= max_reported) return;
    Mismatch m;
    m.batch = batch_index;
    m.op = op;
    m.type = b.types[op];
    m.key = b.keys[op];
    m.arg = b.args[op];
    m.expected = std::move(p.expected);
    m.got = std::move(p.got);
    first.push_back(std::move(m));
  }

  // Each check returns the problem, if any; only a correct answer collapses
  // the model (after a mismatch the model keeps its own state).
  std::optional<Problem> check_lookup(ModelState& s, const TouchedKeys* t, uint64_t key, bool found,
                                      uint64_t value) {
    const Cell c = s.cell(key, t);
    const Outcome got = found ? Outcome(val(value)) : Outcome();
    if (!c.allows(got)) return Problem{describe(c.outcomes(), keys_only()), describe(got, keys_only())};
    if (!c.touched && !c.definite()) s.collapse(key, got);
    return std::nullopt;
  }

  std::optional<Problem> check_count(ModelState& s, const TouchedKeys* t, uint64_t lo, uint64_t hi,
                                     uint64_t got) {
    const ModelState::CountBounds b = s.count_bounds(lo, hi, t);
    if (got < b.min || got > b.max) {
      std::string expected =
          b.min == b.max ? fmt::format("count {}", b.min) : fmt::format("count in [{}, {}]", b.min, b.max);
      return Problem{std::move(expected), fmt::format("count {}", got)};
    }
    if (b.min < b.max && (got == b.min || got == b.max)) s.collapse_count(lo, hi, t, got == b.min);
    return std::nullopt;
  }

  std::optional<Problem> check_range(ModelState& s, const TouchedKeys* t, uint64_t lo, uint64_t hi,
                                     const BatchResults& r, size_t i) {
    RangePairs pairs;
    if (auto shape = check_range_shape(lo, hi, r, i, /*equal_keys_allowed=*/false, pairs)) return shape;
    if (lo > hi) return std::nullopt;
    const uint64_t* rk = pairs.keys;
    const uint64_t* rv = pairs.values;
    const uint64_t n = pairs.n;

    std::optional<Problem> problem;
    std::vector<std::pair<uint64_t, Outcome>> collapses;
    uint64_t j = 0;
    auto extra = [&](uint64_t jj) {
      return Problem{fmt::format("no key {} in range", rk[jj]),
                     keys_only() ? fmt::format("range of {} pairs with key {}", n, rk[jj])
                                 : fmt::format("range of {} pairs with key {} (value {})", n, rk[jj], rv[jj])};
    };
    s.for_each_cell(lo, hi, t, [&](const Cell& c) {
      if (j < n && rk[j] < c.key) {  // a key the model has as definitely absent
        problem = extra(j);
        return false;
      }
      const bool collapsible = !c.touched && !c.definite();
      if (j < n && rk[j] == c.key) {
        if (!c.allows(Outcome(val(rv[j])))) {
          if (!c.can_be_present())
            problem = extra(j);
          else
            problem = Problem{fmt::format("key {} with {} in range", c.key, describe_values(c.outcomes(), true)),
                              fmt::format("key {} with value {}", c.key, rv[j])};
          return false;
        }
        if (collapsible) collapses.emplace_back(c.key, Outcome(val(rv[j])));
        ++j;
      } else {
        if (!c.can_be_absent()) {
          problem = Problem{
              keys_only() ? fmt::format("key {} in range", c.key)
                          : fmt::format("key {} with {} in range", c.key, describe_values(c.outcomes(), false)),
              fmt::format("range of {} pairs without key {}", n, c.key)};
          return false;
        }
        if (collapsible) collapses.emplace_back(c.key, Outcome());
      }
      return true;
    });
    if (!problem && j < n) problem = extra(j);
    if (problem) return problem;
    for (const auto& [k, o] : collapses) s.collapse(k, o);
    return std::nullopt;
  }

  std::optional<Problem> check_successor(ModelState& s, const TouchedKeys* t, uint64_t key, bool found,
                                         uint64_t got_key, uint64_t reported_value) {
    const uint64_t got_value = val(reported_value);
    const ModelState::SuccessorOptions o = s.successor_options(key, t);
    bool ok = false;
    if (!found) {
      ok = o.not_found;
    } else {
      for (const ModelState::SuccessorOption& opt : o.found)
        if (opt.key == got_key)
          ok = opt.cell.allows(Outcome(got_value));
    }
    if (!ok)
      return Problem{describe(o, keys_only()),
                     !found       ? std::string("not found")
                     : keys_only() ? fmt::format("successor {}", got_key)
                                   : fmt::format("successor {} (value {})", got_key, got_value)};
    std::optional<std::pair<uint64_t, uint64_t>> result;
    if (found) result = std::make_pair(got_key, got_value);
    s.collapse_successor(key, result, t);
    return std::nullopt;
  }

  static std::optional<Problem> check_triangles(const ModelState::CountBounds& b, uint64_t got) {
    if (got >= b.min && got <= b.max) return std::nullopt;
    return Problem{b.min == b.max ? fmt::format("{} triangles", b.min)
                                  : fmt::format("between {} and {} triangles", b.min, b.max),
                   fmt::format("{} triangles", got)};
  }

  uint64_t check(uint64_t batch_index, const Batch& b, const BatchResults& r) {
    if (multi) multi->begin_batch(b);
    std::optional<ModelState::CountBounds> triangles;
    std::vector<KeyUpdates> groups = multi ? std::vector<KeyUpdates>{} : group_updates(b);
    if (keys_only())
      for (KeyUpdates& g : groups)
        for (Outcome& e : g.effects)
          if (e) e = 0;  // a set drops an insert's value
    ModelState& queried = model.state(multi ? std::string() : b.snapshot);  // throws for an unknown snapshot
    TouchedKeys touched_keys;
    const TouchedKeys* touched = nullptr;
    if (multi) {
      // the multimap checker keeps its own model
    } else if (b.mode == ExecMode::Phased) {
      model.live().apply_phased(groups, rule);
      model.live().erase_vertices(deleted_vertices(b));  // the vertex deletes, after the edge updates
    } else if (b.snapshot.empty() && !queries_first) {
      touched_keys = TouchedKeys(groups);
      touched = &touched_keys;
    }  // queries first: the queries read the state before the batch, exactly (no touched allowance)

    const size_t n = b.size();
    const bool slots_ok = r.found.size() >= n && r.value.size() >= n && r.key.size() >= n;
    // One query's check from its fields (Query: the batch's and the
    // result's, gathered); i only for a range's pairs and the multimap.
    auto check_query = [&](const Query& q) -> std::optional<Problem> {
      const size_t i = q.i;
      if (multi) return multi->check(b, i, r);
      switch (q.type) {
        case OpType::Lookup: return check_lookup(queried, touched, q.key, q.found != 0, q.value);
        case OpType::Count: return check_count(queried, touched, q.key, q.arg, q.value);
        case OpType::Range: return check_range(queried, touched, q.key, q.arg, r, i);
        case OpType::Successor: return check_successor(queried, touched, q.key, q.found != 0, q.rkey, q.value);
        case OpType::Triangles: return check_triangles(*triangles, q.value);
        default: return std::nullopt;
      }
    };
    auto query_at = [&](size_t i) {
      return Query{b.keys[i], b.args[i], r.value[i], r.key[i], static_cast<uint32_t>(i), b.types[i], r.found[i]};
    };
    auto check_one = [&](size_t i) -> std::optional<Problem> {
      if (!slots_ok)
        return Problem{"a result for every operation of the batch",
                       fmt::format("results sized {} for {} operations",
                                   std::min({r.found.size(), r.value.size(), r.key.size()}), n)};
      return check_query(query_at(i));
    };
    uint64_t queries = 0;
    bool counts_triangles = false;
    for (size_t i = 0; i < n; ++i) {
      queries += is_query(b.types[i]) ? 1 : 0;
      counts_triangles |= b.types[i] == OpType::Triangles;
    }
    // Every triangle count of the batch reads one state: counted once,
    // before the checks (which may run on several threads).
    if (counts_triangles && !multi) triangles = queried.triangle_bounds();
    if (!multi) queried.settle(queries);
    // Only an ambiguous cell can be collapsed by what a query observes
    // (touched cells never are, and collapsing a definite key changes
    // nothing), and a check reads cells only inside the keys its answer
    // covers. So a query whose keys hold no ambiguous cell only reads the
    // model, and no collapse by another query changes what it reads: those
    // are checked in parallel, the others after them on one thread in batch
    // order, and every problem is reported in batch order, as the serial
    // loop would.
    if (!multi && queries >= kParallelChecks) {
      const AmbiguousMap& amb = queried.ambiguous();
      auto meets_ambiguous = [&](const Query& q) {
        if (amb.empty()) return false;
        switch (q.type) {
          case OpType::Lookup: return amb.count(q.key) != 0;
          case OpType::Count:
          case OpType::Range: {
            if (q.key > q.arg) return false;
            auto it = amb.lower_bound(q.key);
            return it != amb.end() && it->first <= q.arg;
          }
          case OpType::Successor: {  // cells between key and the answer, the answer included
            auto it = amb.upper_bound(q.key);
            return it != amb.end() && (q.found == 0 || it->first <= q.rkey);
          }
          default: return false;
        }
      };
      // The queries in key order: neighbouring checks then read neighbouring
      // lines of the model's arrays, which a batch of random keys would
      // otherwise read at random, a few cache and TLB misses per check. The
      // order cannot change a result: these checks only read the model.
      uninit_vector<std::pair<uint64_t, uint64_t>> order;  // (key, operation)
      parallel_select(
          n, uint64_t{1} << 16, [&](uint64_t i) { return is_query(b.types[i]); },
          [&](uint64_t total) { order.resize(total); }, [&](uint64_t rank, uint64_t i) { order[rank] = {b.keys[i], i}; });
      const auto key_of = [](const std::pair<uint64_t, uint64_t>& e) { return e.first; };
      parallel_radix_sort(order, varying_bits(order, key_of).first, key_of);
      // Each query's fields gathered in key order first: a tight loop of
      // independent loads keeps many cache misses in flight, where the
      // checks (long, with their own model reads between) would take the
      // batch's and the results' arrays one miss at a time.
      uninit_vector<Query> sorted(order.size());
      if (slots_ok)
        parallel_for(order.size(), uint64_t{1} << 14, [&](uint64_t lo, uint64_t hi) {
          for (uint64_t o = lo; o < hi; ++o) sorted[o] = query_at(order[o].second);
        });
      std::vector<uint8_t> later(n, 0);
      std::vector<std::vector<std::pair<size_t, Problem>>> found(host_threads());
      std::atomic<size_t> next_slot{0};
      parallel_for(order.size(), uint64_t{1} << 12, [&](uint64_t lo, uint64_t hi) {
        std::vector<std::pair<size_t, Problem>>& mine = found[next_slot++];
        for (uint64_t o = lo; o < hi; ++o) {
          const size_t i = order[o].second;
          if (!slots_ok) {
            if (auto p = check_one(i)) mine.emplace_back(i, std::move(*p));
            continue;
          }
          if (meets_ambiguous(sorted[o])) {
            later[i] = 1;
            continue;
          }
          if (auto p = check_query(sorted[o])) mine.emplace_back(i, std::move(*p));
        }
      });
      std::vector<std::pair<size_t, Problem>> all;
      for (auto& f : found)
        for (auto& e : f) all.push_back(std::move(e));
      for (size_t i = 0; i < n; ++i)
        if (later[i])
          if (auto p = check_one(i)) all.emplace_back(i, std::move(*p));
      std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (auto& [i, p] : all) report(batch_index, i, b, std::move(p));
    } else {
      for (size_t i = 0; i < n; ++i) {
        if (!is_query(b.types[i])) continue;
        if (auto p = check_one(i)) report(batch_index, i, b, std::move(*p));
      }
    }
    checked += queries;

    if (multi)
      multi->end_batch(b);
    else if (b.mode == ExecMode::Concurrent)
      model.live().apply_concurrent(groups);
    return queries;
  }
};

Verifier::Verifier(KeyType key_type, KeyType value_type, DuplicateRule phased_rule, size_t max_reported)
    : Verifier(key_type, value_type, phased_rule, Semantics::Map, max_reported) {}

Verifier::Verifier(KeyType key_type, KeyType value_type, DuplicateRule phased_rule, Semantics semantics,
                   size_t max_reported)
    : impl_(new Impl{key_type, value_type, phased_rule, semantics, max_reported, {}, nullptr, 0, 0, {}}) {
  if (semantics == Semantics::Multimap) impl_->multi = std::make_unique<MultimapChecker>(phased_rule);
}

Verifier::~Verifier() = default;

void Verifier::build(const KeyValues& initial) { impl_->build(KeyValues(initial)); }
void Verifier::build(KeyValues&& initial) { impl_->build(std::move(initial)); }

uint64_t Verifier::check_batch(uint64_t batch_index, const Batch& batch, const BatchResults& results) {
  return impl_->check(batch_index, batch, results);
}

void Verifier::set_concurrent_queries_first(bool on) { impl_->queries_first = on; }

void Verifier::check_size(uint64_t batch_index, uint64_t live) {
  Impl& v = *impl_;
  if (v.multi || !v.model.live().ambiguous().empty()) return;  // the size is not known exactly
  const uint64_t expected = v.model.live().definite_size();
  if (live == expected) return;
  ++v.mismatches;
  if (v.first.size() >= v.max_reported) return;
  Mismatch m;
  m.batch = batch_index;
  m.subject = "live keys after the batch";
  m.expected = fmt::format("{} keys", expected);
  m.got = fmt::format("{} keys", live);
  v.first.push_back(std::move(m));
}

void Verifier::snapshot(const std::string& name) { impl_->snapshot(name); }
void Verifier::drop_snapshot(const std::string& name) { impl_->drop_snapshot(name); }

uint64_t Verifier::checked() const { return impl_->checked; }
uint64_t Verifier::mismatches() const { return impl_->mismatches; }
const std::vector<Mismatch>& Verifier::first_mismatches() const { return impl_->first; }

}  // namespace gpudict
