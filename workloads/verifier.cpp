#include "workloads/verifier.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "workloads/reference.hpp"

namespace gpudict {

namespace {

// At most this many alternatives are spelled out in an "expected" text.
constexpr size_t kListLimit = 6;

std::string describe(const Outcome& o) { return o ? fmt::format("value {}", *o) : std::string("not found"); }

std::string describe(const Outcomes& set) {
  if (set.size() == 1) return describe(set.front());
  std::string s = "one of: ";
  for (size_t i = 0; i < set.size() && i < kListLimit; ++i) s += (i ? ", " : "") + describe(set[i]);
  if (set.size() > kListLimit) s += fmt::format(", ... ({} in all)", set.size());
  return s;
}

// "value 4", "value 4 or 5", with "(or absent)" when the key may be absent.
std::string describe_values(const Outcomes& set, bool say_absent) {
  std::vector<uint64_t> values;
  bool absent = false;
  for (const Outcome& o : set) {
    if (o)
      values.push_back(*o);
    else
      absent = true;
  }
  std::string s = "value ";
  for (size_t i = 0; i < values.size() && i < kListLimit; ++i) s += fmt::format("{}{}", i ? " or " : "", values[i]);
  if (values.size() > kListLimit) s += fmt::format(" or ... ({} values)", values.size());
  if (say_absent && absent) s += " (or absent)";
  return s;
}

std::string describe_successor(uint64_t key, const std::vector<uint64_t>& values) {
  std::string s = fmt::format("successor {} (value ", key);
  for (size_t i = 0; i < values.size() && i < kListLimit; ++i) s += fmt::format("{}{}", i ? " or " : "", values[i]);
  if (values.size() > kListLimit) s += " or ...";
  return s + ")";
}

std::string describe(const ModelState::SuccessorOptions& o) {
  const size_t alternatives = o.found.size() + (o.not_found ? 1 : 0);
  if (alternatives == 1)
    return o.not_found ? std::string("not found") : describe_successor(o.found[0].key, o.found[0].values);
  std::string s = "one of: ";
  for (size_t i = 0; i < o.found.size() && i < kListLimit; ++i)
    s += (i ? ", " : "") + describe_successor(o.found[i].key, o.found[i].values);
  if (o.found.size() > kListLimit) s += fmt::format(", ... ({} keys)", o.found.size());
  if (o.not_found) s += ", not found";
  return s;
}

struct Problem {
  std::string expected;
  std::string got;
};

}  // namespace

struct Verifier::Impl {
  KeyType key_type;
  KeyType value_type;
  DuplicateRule rule;
  size_t max_reported;
  ReferenceModel model;
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  std::vector<Mismatch> first;

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
    Outcomes scratch;
    const Cell c = s.cell(key, t, scratch);
    const Outcome got = found ? Outcome(value) : Outcome();
    if (!c.allows(got)) return Problem{describe(c.outcomes()), describe(got)};
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
    const uint64_t off = r.key[i];
    const uint64_t n = r.value[i];
    const uint64_t stored = std::min(r.range_keys.size(), r.range_values.size());
    if (off > stored || n > stored - off)
      return Problem{fmt::format("pairs within range_keys/range_values ({} pairs stored)", stored),
                     fmt::format("offset {}, {} pairs", off, n)};
    const uint64_t* rk = r.range_keys.data() + off;
    const uint64_t* rv = r.range_values.data() + off;
    if (lo > hi) {
      if (n == 0) return std::nullopt;
      return Problem{"empty range (lo > hi)", fmt::format("{} pairs", n)};
    }
    for (uint64_t j = 0; j < n; ++j) {
      if (rk[j] < lo || rk[j] > hi)
        return Problem{fmt::format("keys in [{}, {}]", lo, hi), fmt::format("key {} in range", rk[j])};
      if (j > 0 && rk[j] <= rk[j - 1])
        return Problem{"keys strictly increasing", fmt::format("key {} after key {}", rk[j], rk[j - 1])};
    }

    std::optional<Problem> problem;
    std::vector<std::pair<uint64_t, Outcome>> collapses;
    uint64_t j = 0;
    auto extra = [&](uint64_t jj) {
      return Problem{fmt::format("no key {} in range", rk[jj]),
                     fmt::format("range of {} pairs with key {} (value {})", n, rk[jj], rv[jj])};
    };
    s.for_each_cell(lo, hi, t, [&](const Cell& c) {
      if (j < n && rk[j] < c.key) {  // a key the model has as definitely absent
        problem = extra(j);
        return false;
      }
      const bool collapsible = !c.touched && !c.definite();
      if (j < n && rk[j] == c.key) {
        if (!c.allows(Outcome(rv[j]))) {
          if (!c.can_be_present())
            problem = extra(j);
          else
            problem = Problem{fmt::format("key {} with {} in range", c.key, describe_values(c.outcomes(), true)),
                              fmt::format("key {} with value {}", c.key, rv[j])};
          return false;
        }
        if (collapsible) collapses.emplace_back(c.key, Outcome(rv[j]));
        ++j;
      } else {
        if (!c.can_be_absent()) {
          problem = Problem{
              fmt::format("key {} with {} in range", c.key, describe_values(c.outcomes(), false)),
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
                                         uint64_t got_key, uint64_t got_value) {
    const ModelState::SuccessorOptions o = s.successor_options(key, t);
    bool ok = false;
    if (!found) {
      ok = o.not_found;
    } else {
      for (const ModelState::SuccessorOption& opt : o.found)
        if (opt.key == got_key)
          ok = std::binary_search(opt.values.begin(), opt.values.end(), got_value);
    }
    if (!ok)
      return Problem{describe(o), found ? fmt::format("successor {} (value {})", got_key, got_value)
                                        : std::string("not found")};
    std::optional<std::pair<uint64_t, uint64_t>> result;
    if (found) result = std::make_pair(got_key, got_value);
    s.collapse_successor(key, result, t);
    return std::nullopt;
  }

  uint64_t check(uint64_t batch_index, const Batch& b, const BatchResults& r) {
    const std::vector<KeyUpdates> groups = group_updates(b);
    ModelState& queried = model.state(b.snapshot);  // throws for an unknown snapshot
    TouchedKeys touched_keys;
    const TouchedKeys* touched = nullptr;
    if (b.mode == ExecMode::Phased) {
      model.live().apply_phased(groups, rule);
    } else if (b.snapshot.empty()) {
      touched_keys = TouchedKeys(groups);
      touched = &touched_keys;
    }

    const size_t n = b.size();
    const bool slots_ok = r.found.size() >= n && r.value.size() >= n && r.key.size() >= n;
    uint64_t queries = 0;
    for (size_t i = 0; i < n; ++i) {
      const OpType type = b.types[i];
      if (is_update(type)) continue;
      ++queries;
      const uint64_t key = b.keys[i];
      const uint64_t arg = b.args[i];
      std::optional<Problem> p;
      if (!slots_ok) {
        p = Problem{"a result for every operation of the batch",
                    fmt::format("results sized {} for {} operations",
                                std::min({r.found.size(), r.value.size(), r.key.size()}), n)};
      } else {
        switch (type) {
          case OpType::Lookup: p = check_lookup(queried, touched, key, r.found[i] != 0, r.value[i]); break;
          case OpType::Count: p = check_count(queried, touched, key, arg, r.value[i]); break;
          case OpType::Range: p = check_range(queried, touched, key, arg, r, i); break;
          case OpType::Successor:
            p = check_successor(queried, touched, key, r.found[i] != 0, r.key[i], r.value[i]);
            break;
          default: break;
        }
      }
      if (p) report(batch_index, i, b, std::move(*p));
    }
    checked += queries;

    if (b.mode == ExecMode::Concurrent) model.live().apply_concurrent(groups);
    return queries;
  }
};

Verifier::Verifier(KeyType key_type, KeyType value_type, DuplicateRule phased_rule, size_t max_reported)
    : impl_(new Impl{key_type, value_type, phased_rule, max_reported, {}, 0, 0, {}}) {}

Verifier::~Verifier() = default;

void Verifier::build(const KeyValues& initial) { impl_->model.build(initial); }

uint64_t Verifier::check_batch(uint64_t batch_index, const Batch& batch, const BatchResults& results) {
  return impl_->check(batch_index, batch, results);
}

void Verifier::snapshot(const std::string& name) { impl_->model.snapshot(name); }
void Verifier::drop_snapshot(const std::string& name) { impl_->model.drop_snapshot(name); }

uint64_t Verifier::checked() const { return impl_->checked; }
uint64_t Verifier::mismatches() const { return impl_->mismatches; }
const std::vector<Mismatch>& Verifier::first_mismatches() const { return impl_->first; }

}  // namespace gpudict
