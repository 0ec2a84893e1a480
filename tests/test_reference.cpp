// The reference model (workloads/reference.hpp): what it considers possible.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "core/common/errors.hpp"
#include "workloads/definite_store.hpp"
#include "workloads/parallel.hpp"
#include "workloads/parallel_sort.hpp"
#include "workloads/reference.hpp"

using namespace gpudict;

namespace {

constexpr uint64_t kMax32 = 0xFFFFFFFFull;
constexpr uint64_t kMax64 = UINT64_MAX;
const Outcome kAbsent = std::nullopt;

KeyValues kv(std::vector<uint64_t> keys, std::vector<uint64_t> values) {
  KeyValues k;
  k.keys = std::move(keys);
  k.values = std::move(values);
  return k;
}

Outcomes outs(std::vector<Outcome> o) { return make_outcomes(std::move(o)); }

std::vector<uint64_t> cell_keys(const ModelState& s, uint64_t lo, uint64_t hi, const TouchedKeys* t = nullptr) {
  std::vector<uint64_t> keys;
  s.for_each_cell(lo, hi, t, [&](const Cell& c) {
    keys.push_back(c.key);
    return true;
  });
  return keys;
}

}  // namespace

TEST_CASE("reference: outcome sets are sorted, unique, absent first") {
  CHECK(make_outcomes({Outcome(5), kAbsent, Outcome(3), Outcome(5)}) == Outcomes{kAbsent, 3, 5});
  CHECK(union_outcomes(outs({1, 3}), outs({kAbsent, 3, 4})) == Outcomes{kAbsent, 1, 3, 4});
  CHECK(contains(outs({kAbsent, 7}), kAbsent));
  CHECK(contains(outs({kAbsent, 7}), Outcome(7)));
  CHECK_FALSE(contains(outs({7}), kAbsent));
}

TEST_CASE("reference: build keeps the last duplicate and the full key and value domain") {
  ModelState s;
  s.build(kv({5, 0, kMax32, 5, kMax64, 0}, {1, kMax64, 0, 2, kMax32, 9}));
  CHECK(s.definite().size() == 4);
  CHECK(s.outcomes(5) == Outcomes{2});
  CHECK(s.outcomes(0) == Outcomes{9});
  CHECK(s.outcomes(kMax32) == Outcomes{0});
  CHECK(s.outcomes(kMax64) == Outcomes{kMax32});
  CHECK(s.outcomes(1) == Outcomes{kAbsent});
  CHECK(s.ambiguous().empty());

  // Sorted input takes the fast path; same result.
  ModelState t;
  t.build(kv({0, 5, kMax32, kMax64}, {9, 2, 0, kMax32}));
  CHECK(t.definite() == s.definite());

  // Rebuilding replaces everything.
  s.build(kv({7}, {8}));
  CHECK(s.definite() == DefiniteMap{{7, 8}});
}

TEST_CASE("reference: build equals inserting the pairs in order (random keys, duplicates, every byte)") {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 20; ++round) {
    KeyValues init;
    DefiniteMap expect;
    const int n = 1 + static_cast<int>(rng() % 3000);
    const unsigned shift = static_cast<unsigned>(rng() % 64);  // keys varying in different bytes
    for (int i = 0; i < n; ++i) {
      uint64_t k = (rng() % 500) << shift;
      if (rng() % 50 == 0) k = rng() % 2 ? kMax64 : 0;
      const uint64_t v = rng();
      init.keys.push_back(k);
      init.values.push_back(v);
      expect[k] = v;
    }
    ModelState s;
    s.build(init);
    CHECK(s.definite() == expect);
  }
}

TEST_CASE("reference: grouping updates keeps batch order per key") {
  Batch b;
  b.push(OpType::Insert, 9, 1);
  b.push(OpType::Lookup, 9);
  b.push(OpType::Delete, 2);
  b.push(OpType::Insert, 9, 3);
  b.push(OpType::Insert, 2, 4);
  const auto g = group_updates(b);
  REQUIRE(g.size() == 2);
  CHECK(g[0].key == 2);
  CHECK(g[0].effects == std::vector<Outcome>{kAbsent, Outcome(4)});
  CHECK(g[1].key == 9);
  CHECK(g[1].effects == std::vector<Outcome>{Outcome(1), Outcome(3)});

  // A large batch (grouped in pieces on the host's threads) with runs of one
  // key across the pieces' bounds: the groups an ordered map gives.
  std::mt19937_64 rng(17);
  Batch big;
  std::map<uint64_t, std::vector<Outcome>> want;
  for (int i = 0; i < 300000; ++i) {
    const uint64_t key = i % 1000 < 900 ? rng() % 2000 : rng();  // hot keys with long runs, and singles
    const int t = static_cast<int>(rng() % 3);
    const uint64_t v = rng();
    big.push(t == 0 ? OpType::Insert : t == 1 ? OpType::Delete : OpType::Lookup, key, v);
    if (t == 0) want[key].push_back(Outcome(v));
    if (t == 1) want[key].push_back(kAbsent);
  }
  const auto gb = group_updates(big);
  REQUIRE(gb.size() == want.size());
  size_t at = 0, bad = 0;
  for (const auto& [key, effects] : want) {
    bad += gb[at].key != key || gb[at].effects != effects;
    ++at;
  }
  CHECK(bad == 0);
}

TEST_CASE("reference: phased duplicate rules") {
  const std::vector<Outcome> ins_del_ins = {Outcome(1), kAbsent, Outcome(3)};
  const std::vector<Outcome> ins_ins = {Outcome(4), Outcome(2), Outcome(4)};
  const std::vector<Outcome> ins_del = {Outcome(1), kAbsent};

  CHECK(resolve_phased(DuplicateRule::LastWins, ins_del_ins) == Outcomes{3});
  CHECK(resolve_phased(DuplicateRule::LastWins, ins_del) == Outcomes{kAbsent});
  CHECK(resolve_phased(DuplicateRule::LastWins, ins_ins) == Outcomes{4});

  CHECK(resolve_phased(DuplicateRule::DeleteWinsElseAny, ins_del_ins) == Outcomes{kAbsent});
  CHECK(resolve_phased(DuplicateRule::DeleteWinsElseAny, ins_ins) == Outcomes{2, 4});
  CHECK(resolve_phased(DuplicateRule::DeleteWinsElseAny, {Outcome(6)}) == Outcomes{6});

  CHECK(resolve_phased(DuplicateRule::AnyUpdate, ins_del_ins) == Outcomes{kAbsent, 1, 3});
  CHECK(resolve_phased(DuplicateRule::AnyUpdate, ins_ins) == Outcomes{2, 4});

  CHECK(resolve_concurrent(ins_del_ins) == Outcomes{kAbsent, 1, 3});
}

TEST_CASE("reference: apply_phased replaces, deletes absent keys as no-ops, makes ambiguous cells") {
  ModelState s;
  s.build(kv({1, 2, 3}, {10, 20, 30}));
  Batch b;
  b.push(OpType::Insert, 1, 11);  // replace
  b.push(OpType::Delete, 50);     // absent: no-op
  b.push(OpType::Delete, 2);
  b.push(OpType::Insert, 3, 31);  // two inserts of 3
  b.push(OpType::Insert, 3, 32);
  const auto g = group_updates(b);

  ModelState last = s;
  last.apply_phased(g, DuplicateRule::LastWins);
  CHECK(last.definite() == DefiniteMap{{1, 11}, {3, 32}});
  CHECK(last.ambiguous().empty());

  ModelState any = s;
  any.apply_phased(g, DuplicateRule::AnyUpdate);
  CHECK(any.definite() == DefiniteMap{{1, 11}});
  REQUIRE(any.ambiguous().size() == 1);
  CHECK(any.outcomes(3) == Outcomes{31, 32});
  CHECK(any.outcomes(50) == Outcomes{kAbsent});

  // A definite update after an ambiguous one makes the key definite again.
  Batch b2;
  b2.push(OpType::Delete, 3);
  any.apply_phased(group_updates(b2), DuplicateRule::AnyUpdate);
  CHECK(any.ambiguous().empty());
  CHECK(any.outcomes(3) == Outcomes{kAbsent});
}

TEST_CASE("reference: concurrent apply leaves any update effect, not the phased rule") {
  ModelState s;
  s.build(kv({1}, {10}));
  Batch b;
  b.mode = ExecMode::Concurrent;
  b.push(OpType::Insert, 1, 11);
  b.push(OpType::Delete, 1);
  b.push(OpType::Insert, 2, 20);
  s.apply_concurrent(group_updates(b));
  CHECK(s.outcomes(1) == Outcomes{kAbsent, 11});  // the pre-batch 10 is gone
  CHECK(s.outcomes(2) == Outcomes{20});
}

TEST_CASE("reference: collapse fixes an ambiguous cell, definite keys ignore it") {
  ModelState s;
  s.build(kv({1}, {10}));
  s.set(5, outs({kAbsent, 1, 2}));
  s.collapse(5, Outcome(3));  // not a possible outcome: ignored
  CHECK(s.outcomes(5) == Outcomes{kAbsent, 1, 2});
  s.collapse_present(5);
  CHECK(s.outcomes(5) == Outcomes{1, 2});
  s.collapse(5, Outcome(2));
  CHECK(s.outcomes(5) == Outcomes{2});
  CHECK(s.ambiguous().empty());
  s.collapse(1, kAbsent);  // definite: unchanged
  CHECK(s.outcomes(1) == Outcomes{10});
}

TEST_CASE("reference: cells merge definite, ambiguous and touched keys in order") {
  ModelState s;
  s.build(kv({0, 4, 8, kMax64}, {1, 2, 3, 4}));
  s.set(6, outs({kAbsent, 60}));
  Batch b;
  b.mode = ExecMode::Concurrent;
  b.push(OpType::Delete, 4);
  b.push(OpType::Insert, 5, 50);
  const auto g = group_updates(b);
  const TouchedKeys t(g);

  CHECK(cell_keys(s, 0, kMax64) == std::vector<uint64_t>{0, 4, 6, 8, kMax64});
  CHECK(cell_keys(s, 0, kMax64, &t) == std::vector<uint64_t>{0, 4, 5, 6, 8, kMax64});
  CHECK(cell_keys(s, 5, 7, &t) == std::vector<uint64_t>{5, 6});
  CHECK(cell_keys(s, 9, 3).empty());  // inverted
  CHECK(cell_keys(s, kMax64, kMax64) == std::vector<uint64_t>{kMax64});

  Cell c4 = s.cell(4, &t);
  CHECK(c4.touched);
  CHECK(c4.outcomes() == Outcomes{kAbsent, 2});
  Cell c5 = s.cell(5, &t);
  CHECK(c5.outcomes() == Outcomes{kAbsent, 50});
  // A touched cell keeps its pre-batch state and the effects apart: each
  // allows what either allows.
  CHECK(c4.allows(kAbsent));
  CHECK(c4.allows(Outcome(2)));
  CHECK_FALSE(c4.allows(Outcome(3)));
  CHECK(c4.can_be_absent());
  CHECK(c4.can_be_present());
  Cell c8 = s.cell(8, &t);
  CHECK_FALSE(c8.touched);
  CHECK(c8.definite());
  CHECK(c8.allows(Outcome(3)));
  CHECK_FALSE(c8.allows(kAbsent));
  Cell c9 = s.cell(9, &t);
  CHECK(c9.allows(kAbsent));
  CHECK_FALSE(c9.can_be_present());
}

TEST_CASE("reference: count bounds, inverted ranges, collapse at the bounds") {
  ModelState s;
  s.build(kv({0, 1, 2, kMax32, kMax64}, {0, 0, 0, 0, 0}));
  CHECK(s.count_bounds(0, kMax64, nullptr).min == 5);
  CHECK(s.count_bounds(0, kMax64, nullptr).max == 5);
  CHECK(s.count_bounds(3, 2, nullptr).max == 0);       // inverted
  CHECK(s.count_bounds(kMax64, 0, nullptr).max == 0);  // inverted
  CHECK(s.count_bounds(3, kMax32 - 1, nullptr).max == 0);
  CHECK(s.count_bounds(kMax32, kMax32, nullptr).min == 1);

  s.set(10, outs({kAbsent, 1}));
  s.set(11, outs({kAbsent, 2}));
  s.set(12, outs({3, 4}));  // present either way
  auto b = s.count_bounds(10, 12, nullptr);
  CHECK(b.min == 1);
  CHECK(b.max == 3);

  ModelState lo = s;
  lo.collapse_count(10, 12, nullptr, true);
  CHECK(lo.outcomes(10) == Outcomes{kAbsent});
  CHECK(lo.outcomes(11) == Outcomes{kAbsent});
  CHECK(lo.outcomes(12) == Outcomes{3, 4});
  ModelState hi = s;
  hi.collapse_count(10, 12, nullptr, false);
  CHECK(hi.outcomes(10) == Outcomes{1});
  CHECK(hi.outcomes(11) == Outcomes{2});
  CHECK(hi.outcomes(12) == Outcomes{3, 4});

  // Touched keys widen the bounds but are never collapsed.
  Batch c;
  c.mode = ExecMode::Concurrent;
  c.push(OpType::Delete, 0);
  c.push(OpType::Insert, 5, 1);
  const auto g = group_updates(c);
  const TouchedKeys t(g);
  b = s.count_bounds(0, 5, &t);
  CHECK(b.min == 2);  // 1, 2
  CHECK(b.max == 4);  // 0, 1, 2, 5
  s.collapse_count(0, 5, &t, true);
  CHECK(s.outcomes(0) == Outcomes{0});
}

TEST_CASE("reference: successor options") {
  ModelState s;
  s.build(kv({3, 9, kMax64}, {30, 90, 1}));
  auto o = s.successor_options(3, nullptr);
  REQUIRE(o.found.size() == 1);
  CHECK(o.found[0].key == 9);
  CHECK(o.found[0].values() == std::vector<uint64_t>{90});
  CHECK_FALSE(o.not_found);
  o = s.successor_options(kMax64, nullptr);  // successor of the maximum
  CHECK(o.found.empty());
  CHECK(o.not_found);
  o = s.successor_options(kMax64 - 1, nullptr);
  REQUIRE(o.found.size() == 1);
  CHECK(o.found[0].key == kMax64);

  // An ambiguous cell that may be absent is a candidate, not a barrier.
  s.set(5, outs({kAbsent, 50}));
  s.set(7, outs({70, 71}));  // present either way: a barrier
  o = s.successor_options(3, nullptr);
  REQUIRE(o.found.size() == 2);
  CHECK(o.found[0].key == 5);
  CHECK(o.found[1].key == 7);
  CHECK(o.found[1].values() == std::vector<uint64_t>{70, 71});
  CHECK_FALSE(o.not_found);

  // Collapse: between k and the result absent, the result present.
  ModelState a = s;
  a.collapse_successor(3, std::make_pair(uint64_t{7}, uint64_t{71}), nullptr);
  CHECK(a.outcomes(5) == Outcomes{kAbsent});
  CHECK(a.outcomes(7) == Outcomes{71});
  ModelState b = s;
  b.collapse_successor(3, std::make_pair(uint64_t{5}, uint64_t{50}), nullptr);
  CHECK(b.outcomes(5) == Outcomes{50});
  CHECK(b.outcomes(7) == Outcomes{70, 71});

  // Only possibly-absent keys above: not found is allowed.
  ModelState e;
  e.set(100, outs({kAbsent, 1}));
  o = e.successor_options(0, nullptr);
  CHECK(o.found.size() == 1);
  CHECK(o.not_found);
  e.collapse_successor(0, std::nullopt, nullptr);
  CHECK(e.outcomes(100) == Outcomes{kAbsent});
}

TEST_CASE("reference: snapshots are copies with their ambiguous cells, unknown names throw") {
  ReferenceModel m;
  m.build(kv({1, 2}, {10, 20}));
  m.live().set(3, outs({kAbsent, 30}));
  m.snapshot("s");
  CHECK(m.has_snapshot("s"));
  CHECK(m.snapshots() == 1);
  m.live().erase(1);
  m.live().collapse(3, Outcome(30));
  CHECK(m.state("s").outcomes(1) == Outcomes{10});
  CHECK(m.state("s").outcomes(3) == Outcomes{kAbsent, 30});
  CHECK(m.state("").outcomes(1) == Outcomes{kAbsent});
  CHECK(&m.state("") == &m.live());
  CHECK_THROWS_AS(m.snapshot("s"), InputError);
  CHECK_THROWS_AS(m.state("nope"), InputError);
  m.drop_snapshot("s");
  CHECK_FALSE(m.has_snapshot("s"));
  CHECK_THROWS_AS(m.drop_snapshot("s"), InputError);
  CHECK_THROWS_AS(m.state("s"), InputError);
}

TEST_CASE("reference: a copied state is independent of its original (pooled maps), and so is a copy of a copy") {
  ModelState s;
  s.build(kv({1, 2, 3}, {10, 20, 30}));
  s.set(4, make_outcomes({Outcome(), Outcome(40)}));
  ModelState copy(s);
  s.erase(2);
  s.put(5, 50);
  s.erase(4);
  CHECK(copy.definite() == DefiniteMap{{1, 10}, {2, 20}, {3, 30}});
  REQUIRE(copy.ambiguous().size() == 1);
  CHECK(copy.ambiguous().at(4) == Outcomes{Outcome(), Outcome(40)});
  CHECK(s.definite() == DefiniteMap{{1, 10}, {3, 30}, {5, 50}});
  CHECK(s.ambiguous().empty());
  ModelState second(std::move(copy));  // a move copies too (the maps stay in their pool)
  second.erase(1);
  second.put(6, 60);
  CHECK(second.definite() == DefiniteMap{{2, 20}, {3, 30}, {6, 60}});
  CHECK(second.outcomes(4) == Outcomes{Outcome(), Outcome(40)});
  CHECK(copy.definite() == DefiniteMap{{1, 10}, {2, 20}, {3, 30}});
}

TEST_CASE("reference: the definite store against an ordered map (puts, deletes, sorted lists, counts, walks, copies, merges)") {
  // Random operations on a base of 2^17 keys (indexed) with overlays that
  // cross the merge threshold, walks and counts over ranges of every width,
  // the domain's ends, and copies that must not see later changes.
  std::mt19937_64 rng(91);
  std::vector<uint64_t> keys, values;
  std::map<uint64_t, uint64_t> oracle;
  for (uint64_t k = 0; k < (1u << 17); ++k) {
    keys.push_back(k * 5 + (k % 3));
    values.push_back(rng());
    oracle[keys.back()] = values.back();
  }
  keys.push_back(UINT64_MAX);
  values.push_back(0);
  oracle[UINT64_MAX] = 0;
  DefiniteStore s;
  s.build(keys, values);
  auto draw_key = [&]() -> uint64_t {
    switch (rng() % 4) {
      case 0: return rng() % 8 == 0 ? UINT64_MAX - rng() % 3 : rng() % 4;
      default: return rng() % (5u << 17);
    }
  };
  std::optional<DefiniteStore> copy;
  std::map<uint64_t, uint64_t> copy_oracle;
  int bad = 0;
  auto change = [&](uint64_t k, bool put) {  // one put or erase, in the store and the oracle
    if (put) {
      const uint64_t v = rng();
      s.put(k, v);
      oracle[k] = v;
    } else {
      s.erase(k);
      oracle.erase(k);
    }
  };
  for (int round = 0; round < 9; ++round) {
    const int ops = round % 2 ? 100000 : 5000;  // some rounds merge, some do not
    for (int i = 0; i < ops; ++i) {
      const uint64_t k = draw_key();
      change(k, rng() % 3 != 0);
    }
    if (round == 2) {
      copy.emplace(s);
      copy_oracle = oracle;
    }
    {
      // A sorted list of puts and deletes (present and absent keys): key by
      // key into the overlay when short, else merged into the delta (which
      // folds into the base past a sixteenth of it: 60000 of 2^17 keys).
      std::map<uint64_t, std::optional<uint64_t>> list;
      const int n = round % 3 == 0 ? 3000 : round % 3 == 1 ? 6000 : 60000;
      for (int i = 0; i < n; ++i) list[draw_key()] = rng() % 3 ? std::optional<uint64_t>(rng()) : std::nullopt;
      std::vector<uint64_t> lk;
      std::vector<std::optional<uint64_t>> lo;
      for (const auto& [k, o] : list) {
        lk.push_back(k);
        lo.push_back(o);
        if (o)
          oracle[k] = *o;
        else
          oracle.erase(k);
      }
      s.apply_sorted(lk, lo);
      for (int i = 0; i < 500; ++i) {  // and single changes over it: all three levels at once
        const uint64_t k = i % 2 ? lk[rng() % lk.size()] : draw_key();
        change(k, rng() % 2 != 0);
      }
    }
    if (round == 4) s.settle(UINT64_MAX);  // a read-heavy batch folds the overlay in
    for (int q = 0; q < 5000; ++q) {
      const uint64_t k = draw_key();
      const uint64_t* got = s.find(k);
      const auto it = oracle.find(k);
      if ((got == nullptr) != (it == oracle.end()) || (got && *got != it->second)) ++bad;
      // Narrow ranges (the oracle counts by walking), a few of every width.
      uint64_t lo = draw_key(), hi = q % 256 == 0 ? draw_key() : lo + rng() % 64;
      if (hi < lo && q % 256 != 0) hi = UINT64_MAX;
      if (rng() % 2 && lo > hi) std::swap(lo, hi);
      const uint64_t want = lo > hi ? 0 : static_cast<uint64_t>(std::distance(oracle.lower_bound(lo), oracle.upper_bound(hi)));
      if (s.count(lo, hi) != want) ++bad;
      if (q % 64 == 0) {  // a walk of up to 50 keys
        auto c = s.lower_bound(lo);
        auto o = oracle.lower_bound(lo);
        for (int w = 0; w < 50; ++w, c.next(), ++o) {
          if (c.valid() != (o != oracle.end())) {
            ++bad;
            break;
          }
          if (!c.valid()) break;
          if (c.key() != o->first || c.value() != o->second) ++bad;
        }
      }
    }
    CHECK(bad == 0);
    CHECK(s.size() == oracle.size());
  }
  CHECK(s.to_map() == oracle);
  REQUIRE(copy.has_value());
  CHECK(copy->to_map() == copy_oracle);
  s.clear();
  CHECK(s.size() == 0);
  CHECK(s.find(0) == nullptr);
  CHECK(!s.lower_bound(0).valid());
}

TEST_CASE("merge_with_updates: in pieces on eight threads, the sorted set a sequential merge gives") {
  // Base and updates each longer than the other in turn (the splitters come
  // from the longer), updates below, inside and above the base's keys,
  // deletes of present and absent keys, the domain's ends. The expected
  // set: (base minus every updated key) united with the kept updates.
  std::mt19937_64 rng(29);
  auto sorted_unique = [](std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  set_host_threads(8);
  for (const auto& [n, m] : {std::pair<uint64_t, uint64_t>{3u << 20, 40000}, {50000, 3u << 20}, {3u << 20, 3u << 20}}) {
    CAPTURE(n);
    CAPTURE(m);
    std::vector<uint64_t> base = {0, UINT64_MAX};
    for (uint64_t i = 0; i < n; ++i) base.push_back(rng() % (uint64_t{1} << 40));
    base = sorted_unique(base);
    std::vector<uint64_t> touched = {0, UINT64_MAX - 1};
    for (uint64_t i = 0; i < m; ++i)
      touched.push_back(rng() % 4 == 0 ? base[rng() % base.size()] : rng() % (uint64_t{1} << 41));
    touched = sorted_unique(touched);
    std::vector<std::pair<uint64_t, bool>> ups;
    std::vector<uint64_t> kept;
    for (uint64_t k : touched) {
      ups.push_back({k, k == UINT64_MAX - 1 || (k != 0 && rng() % 3 != 0)});
      if (ups.back().second) kept.push_back(k);
    }
    std::vector<uint64_t> rest, expect;
    std::set_difference(base.begin(), base.end(), touched.begin(), touched.end(), std::back_inserter(rest));
    std::set_union(rest.begin(), rest.end(), kept.begin(), kept.end(), std::back_inserter(expect));
    std::vector<uint64_t> got;
    merge_with_updates(
        base.size(), [&](uint64_t i) { return base[i]; }, ups.size(), [&](uint64_t j) { return ups[j].first; },
        [&](uint64_t j) { return ups[j].second; }, [&](uint64_t total) { got.assign(total, 1); },
        [&](uint64_t at, bool from_base, uint64_t i) { got[at] = from_base ? base[i] : ups[i].first; });
    CHECK(got == expect);
  }
  set_host_threads(0);
}
