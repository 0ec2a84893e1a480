#include "workloads/multimap_checks.hpp"

#include <algorithm>
#include <deque>
#include <utility>

#include <fmt/format.h>

#include "core/common/errors.hpp"

namespace gpudict {

namespace {

// The distinct values of a bag, as lookup outcomes ("one of: not found, value 3, ...").
Outcomes lookup_outcomes(const MultiView& v) {
  std::vector<Outcome> o;
  if (v.lookup_may_miss()) o.emplace_back();
  for (uint64_t x : v.allowed()) o.emplace_back(x);
  return make_outcomes(std::move(o));
}

// What a range must report for the key: its certain pairs, plus any of the
// pairs it may hold.
std::string expected_pairs(const MultiView& v) {
  const ValueBag req = v.required();
  const ValueBag opt = bag_minus(v.allowed(), req);
  if (opt.empty()) return fmt::format("key {} with values {} in range", v.key, describe_bag(req));
  if (req.empty()) return fmt::format("key {} with any of {} (or absent) in range", v.key, describe_bag(opt));
  return fmt::format("key {} with values {} plus any of {} in range", v.key, describe_bag(req), describe_bag(opt));
}

std::vector<uint64_t> distinct(const ValueBag& b) {
  std::vector<uint64_t> d = b;
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

}  // namespace

MultimapChecker::MultimapChecker(DuplicateRule phased_rule) : rule_(phased_rule) {
  if (rule_ == DuplicateRule::AnyUpdate)
    throw InputError("multimap semantics with the any-update duplicate rule are not defined (a multimap's phased "
                     "batches follow deletes-then-inserts, last-wins or delete-wins-else-any-insert)");
}

void MultimapChecker::begin_batch(const Batch& b) {
  groups_ = group_multi_updates(b);
  queried_ = &model_.state(b.snapshot);  // throws for an unknown snapshot
  touched_ = nullptr;
  if (b.mode == ExecMode::Phased)
    model_.live().apply_phased(groups_, rule_);
  else if (b.snapshot.empty())
    touched_ = &groups_;  // nothing updates a snapshot: its queries see no batch in flight
}

void MultimapChecker::end_batch(const Batch& b) {
  if (b.mode == ExecMode::Concurrent) model_.live().apply_concurrent(groups_);
  touched_ = nullptr;
  queried_ = nullptr;
}

std::optional<Problem> MultimapChecker::check(const Batch& b, size_t i, const BatchResults& r) {
  const uint64_t key = b.keys[i];
  const uint64_t arg = b.args[i];
  switch (b.types[i]) {
    case OpType::Lookup: return check_lookup(*queried_, key, r.found[i] != 0, r.value[i]);
    case OpType::Count: return check_count(*queried_, key, arg, r.value[i]);
    case OpType::Range: return check_range(*queried_, key, arg, r, i);
    case OpType::Successor: return check_successor(*queried_, key, r.found[i] != 0, r.key[i], r.value[i]);
    default: return std::nullopt;
  }
}

std::optional<Problem> MultimapChecker::check_lookup(MultiState& s, uint64_t key, bool found, uint64_t value) {
  const MultiView v = s.view(key, touched_);
  const bool ok = found ? v.lookup_may_return(value) : v.lookup_may_miss();
  if (!ok) return Problem{describe(lookup_outcomes(v)), describe(found ? Outcome(value) : Outcome())};
  // A lookup reports one value of many: it only tells that value is there
  // (or that no pair is).
  if (v.collapsible()) s.observe_lookup(key, found, value);
  return std::nullopt;
}

std::optional<Problem> MultimapChecker::check_count(MultiState& s, uint64_t lo, uint64_t hi, uint64_t got) {
  uint64_t min = 0, max = 0;
  s.for_each(lo, hi, touched_, [&](const MultiView& v) {
    min += v.min_pairs();
    max += v.max_pairs();
    return true;
  });
  if (got < min || got > max) {
    std::string expected = min == max ? fmt::format("count {}", min) : fmt::format("count in [{}, {}]", min, max);
    return Problem{std::move(expected), fmt::format("count {}", got)};
  }
  if (min < max && (got == min || got == max)) {
    std::vector<uint64_t> keys;
    s.for_each(lo, hi, touched_, [&](const MultiView& v) {
      if (v.collapsible()) keys.push_back(v.key);
      return true;
    });
    for (uint64_t k : keys) s.observe_count_extreme(k, got == min);
  }
  return std::nullopt;
}

std::optional<Problem> MultimapChecker::check_range(MultiState& s, uint64_t lo, uint64_t hi, const BatchResults& r,
                                                    size_t i) {
  RangePairs pairs;
  // Equal keys are the multimap's several pairs of one key; they come together.
  if (auto shape = check_range_shape(lo, hi, r, i, /*equal_keys_allowed=*/true, pairs)) return shape;
  if (lo > hi) return std::nullopt;
  const uint64_t* rk = pairs.keys;
  const uint64_t* rv = pairs.values;
  const uint64_t n = pairs.n;

  std::optional<Problem> problem;
  std::vector<std::pair<uint64_t, ValueBag>> collapses;
  uint64_t j = 0;
  auto extra = [&](uint64_t jj) {
    return Problem{fmt::format("no key {} in range", rk[jj]),
                   fmt::format("range of {} pairs with key {} (value {})", n, rk[jj], rv[jj])};
  };
  s.for_each(lo, hi, touched_, [&](const MultiView& v) {
    if (j < n && rk[j] < v.key) {  // a key the model has without any pair
      problem = extra(j);
      return false;
    }
    const uint64_t first = j;
    ValueBag seen;
    for (; j < n && rk[j] == v.key; ++j) seen.push_back(rv[j]);
    std::sort(seen.begin(), seen.end());
    if (!seen.empty() && v.max_pairs() == 0) {
      problem = extra(first);
      return false;
    }
    if (!bag_includes(seen, v.required()) || !bag_includes(v.allowed(), seen)) {
      problem = Problem{expected_pairs(v), seen.empty()
                                               ? fmt::format("range of {} pairs without key {}", n, v.key)
                                               : fmt::format("key {} with values {}", v.key, describe_bag(seen))};
      return false;
    }
    if (v.collapsible()) collapses.emplace_back(v.key, std::move(seen));
    return true;
  });
  if (!problem && j < n) problem = extra(j);
  if (problem) return problem;
  for (const auto& [k, bag] : collapses) s.observe_pairs(k, bag);
  return std::nullopt;
}

std::optional<Problem> MultimapChecker::check_successor(MultiState& s, uint64_t key, bool found, uint64_t got_key,
                                                        uint64_t got_value) {
  ModelState::SuccessorOptions o;
  o.not_found = true;
  std::deque<Outcomes> sets;  // each option's values, as the cell's set (a deque keeps them in place)
  if (key != UINT64_MAX) {
    s.for_each(key + 1, UINT64_MAX, touched_, [&](const MultiView& v) {
      if (v.max_pairs() > 0) {
        Outcomes values;
        for (uint64_t x : distinct(v.allowed())) values.emplace_back(x);
        sets.push_back(std::move(values));
        Cell c;
        c.key = v.key;
        c.set = &sets.back();
        o.found.push_back({v.key, c});
      }
      if (v.min_pairs() > 0) {  // a key that certainly has a pair ends the search
        o.not_found = false;
        return false;
      }
      return true;
    });
  }
  bool ok = !found && o.not_found;
  if (found)
    for (const auto& opt : o.found)
      if (opt.key == got_key) ok = opt.cell.allows(Outcome(got_value));
  if (!ok)
    return Problem{describe(o), found ? fmt::format("successor {} (value {})", got_key, got_value)
                                      : std::string("not found")};
  if (key == UINT64_MAX) return std::nullopt;
  // The keys in between hold no pairs; the successor holds at least the value seen.
  std::vector<uint64_t> empty_keys;
  s.for_each(key + 1, found ? got_key : UINT64_MAX, touched_, [&](const MultiView& v) {
    if (v.collapsible() && !(found && v.key == got_key)) empty_keys.push_back(v.key);
    return true;
  });
  for (uint64_t k : empty_keys) s.observe_pairs(k, {});
  if (found && s.view(got_key, touched_).collapsible()) s.observe_lookup(got_key, true, got_value);
  return std::nullopt;
}

}  // namespace gpudict
