// The verifier (workloads/verifier.hpp): accepts exactly what docs/semantics.md
// allows and reports everything else. Results are written by hand here.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/common/errors.hpp"
#include "batch_run.hpp"
#include "workloads/parallel.hpp"
#include "workloads/verifier.hpp"

using namespace gpudict;

namespace {

constexpr uint64_t kMax32 = 0xFFFFFFFFull;
constexpr uint64_t kMax64 = UINT64_MAX;

// The shared batch-and-results builder (tests/batch_run.hpp) under the short
// names this file uses.
using testing::Run;
inline KeyValues kv(std::vector<uint64_t> keys, std::vector<uint64_t> values) {
  return testing::key_values(std::move(keys), std::move(values));
}
inline uint64_t check(Verifier& v, const Run& run, uint64_t index = 0) { return testing::check_run(v, run, index); }
inline const Mismatch& last(const Verifier& v) { return testing::last_mismatch(v); }

using P = std::pair<uint64_t, uint64_t>;
const std::nullopt_t none = std::nullopt;

}  // namespace

TEST_CASE("verifier: the full key and value domain") {
  Verifier v(KeyType::U64, KeyType::U64, DuplicateRule::LastWins);
  v.build(kv({0, kMax32, kMax64}, {kMax64, 0, kMax32}));
  Run ok;
  ok.lookup(0, kMax64).lookup(kMax32, 0).lookup(kMax64, kMax32).lookup(1, none).lookup(kMax64 - 1, none);
  ok.count(0, kMax64, 3).count(kMax64, kMax64, 1).count(1, kMax32 - 1, 0);
  ok.range(0, kMax64, {P{0, kMax64}, P{kMax32, 0}, P{kMax64, kMax32}});
  ok.successor(0, P{kMax32, 0}).successor(kMax32, P{kMax64, kMax32}).successor(kMax64, none);
  CHECK(v.check_batch(0, ok.b, ok.r) == 12);
  CHECK(v.checked() == 12);
  CHECK(v.mismatches() == 0);

  // Values 0 and the maximum are values like any other: "found, value 0" is
  // not "not found".
  Run bad;
  bad.lookup(kMax32, none).lookup(0, 0).successor(kMax64, P{0, kMax64});
  CHECK(check(v, bad, 1) == 3);
  REQUIRE(v.first_mismatches().size() == 3);
  CHECK(v.first_mismatches()[0].expected == "value 0");
  CHECK(v.first_mismatches()[0].got == "not found");
  CHECK(v.first_mismatches()[1].expected == "value 18446744073709551615");
  CHECK(v.first_mismatches()[2].expected == "not found");
  CHECK(v.first_mismatches()[2].got == "successor 0 (value 18446744073709551615)");
}

TEST_CASE("verifier: lookups: wrong value, missing key, found absent key") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({4, 9}, {17, 3}));
  Run run;
  run.lookup(4, 17).lookup(4, 18).lookup(9, none).lookup(5, 3);
  CHECK(check(v, run, 7) == 3);
  REQUIRE(v.first_mismatches().size() == 3);
  const Mismatch& m = v.first_mismatches()[0];
  CHECK(m.batch == 7);
  CHECK(m.op == 1);
  CHECK(m.type == OpType::Lookup);
  CHECK(m.key == 4);
  CHECK(m.expected == "value 17");
  CHECK(m.got == "value 18");
  CHECK(v.first_mismatches()[1].op == 2);
  CHECK(v.first_mismatches()[1].expected == "value 3");
  CHECK(v.first_mismatches()[1].got == "not found");
  CHECK(v.first_mismatches()[2].expected == "not found");
  CHECK(v.first_mismatches()[2].got == "value 3");
  CHECK(v.checked() == 4);
}

TEST_CASE("verifier: insert replaces, delete of an absent key is a no-op, update results are ignored") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({1, 2}, {10, 20}));
  Run run;
  run.insert(1, 11).erase(7).erase(2);
  run.r.found[0] = 1;  // garbage in update slots is not looked at
  run.r.value[1] = 99;
  run.lookup(1, 11).lookup(7, none).lookup(2, none).count(0, 100, 1);
  CHECK(v.check_batch(0, run.b, run.r) == 4);
  CHECK(v.mismatches() == 0);

  Run stale;
  stale.lookup(1, 10);  // the replaced value
  CHECK(check(v, stale, 1) == 1);
  CHECK(last(v).expected == "value 11");
}

TEST_CASE("verifier: counts, inverted and empty ranges") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({1, 5, 9}, {0, 0, 0}));
  Run ok;
  ok.count(1, 9, 3).count(2, 4, 0).count(5, 5, 1).count(9, 1, 0).count(kMax32, 0, 0).count(0, kMax32, 3);
  CHECK(check(v, ok) == 0);

  Run bad;
  bad.count(1, 9, 2).count(9, 1, 1).count(6, 8, 1);
  CHECK(check(v, bad) == 3);
  REQUIRE(v.first_mismatches().size() == 3);
  CHECK(v.first_mismatches()[0].type == OpType::Count);
  CHECK(v.first_mismatches()[0].key == 1);
  CHECK(v.first_mismatches()[0].arg == 9);
  CHECK(v.first_mismatches()[0].expected == "count 3");
  CHECK(v.first_mismatches()[0].got == "count 2");
  CHECK(v.first_mismatches()[1].expected == "count 0");
  CHECK(v.first_mismatches()[2].got == "count 1");
}

TEST_CASE("verifier: ranges: every kind of wrong answer") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({2, 4, 6, 8}, {20, 40, 60, 80}));

  Run ok;
  ok.range(3, 7, {P{4, 40}, P{6, 60}}).range(0, 1, {}).range(8, 2, {}).range(0, kMax32, {P{2, 20}, P{4, 40}, P{6, 60}, P{8, 80}});
  ok.range(5, 5, {}).range(8, 8, {P{8, 80}});
  CHECK(check(v, ok) == 0);

  SUBCASE("missing pair") {
    Run r;
    r.range(3, 7, {P{4, 40}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).type == OpType::Range);
    CHECK(last(v).expected == "key 6 with value 60 in range");
    CHECK(last(v).got == "range of 1 pairs without key 6");
  }
  SUBCASE("extra key") {
    Run r;
    r.range(3, 7, {P{4, 40}, P{5, 1}, P{6, 60}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).expected == "no key 5 in range");
  }
  SUBCASE("extra key after the last present one") {
    Run r;
    r.range(3, 7, {P{4, 40}, P{6, 60}, P{7, 1}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).expected == "no key 7 in range");
  }
  SUBCASE("wrong value") {
    Run r;
    r.range(3, 7, {P{4, 41}, P{6, 60}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).expected == "key 4 with value 40 in range");
    CHECK(last(v).got == "key 4 with value 41");
  }
  SUBCASE("not sorted") {
    Run r;
    r.range(3, 7, {P{6, 60}, P{4, 40}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).expected == "keys strictly increasing");
    CHECK(last(v).got == "key 4 after key 6");
  }
  SUBCASE("duplicate key") {
    Run r;
    r.range(3, 7, {P{4, 40}, P{4, 40}, P{6, 60}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).expected == "keys strictly increasing");
  }
  SUBCASE("key outside [lo, hi]") {
    Run r;
    r.range(3, 7, {P{2, 20}, P{4, 40}, P{6, 60}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).expected == "keys in [3, 7]");
  }
  SUBCASE("pairs for an inverted range") {
    Run r;
    r.range(7, 3, {P{4, 40}});
    CHECK(check(v, r) == 1);
    CHECK(last(v).expected == "empty range (lo > hi)");
  }
  SUBCASE("offsets past the stored pairs") {
    Run r;
    r.range(3, 7, {P{4, 40}, P{6, 60}});
    r.r.key[0] = 1;  // 2 pairs from offset 1: past the end
    CHECK(check(v, r) == 1);
    CHECK(last(v).got == "offset 1, 2 pairs");
    Run r2;
    r2.range(3, 7, {P{4, 40}, P{6, 60}});
    r2.r.value[0] = kMax64;  // an absurd count must not overflow the check
    CHECK(check(v, r2) == 1);
  }
  SUBCASE("several ranges share the pair arrays") {
    Run r;
    r.range(6, 9, {P{6, 60}, P{8, 80}}).range(1, 3, {P{2, 20}});
    CHECK(check(v, r) == 0);
    std::swap(r.r.key[0], r.r.key[1]);  // each range pointing at the other's pairs
    CHECK(check(v, r) == 2);
  }
}

TEST_CASE("verifier: successors") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({0, 7, kMax32}, {1, 3, 5}));
  Run ok;
  ok.successor(0, P{7, 3}).successor(6, P{7, 3}).successor(7, P{kMax32, 5}).successor(kMax32 - 1, P{kMax32, 5});
  ok.successor(kMax32, none);
  CHECK(check(v, ok) == 0);

  Run bad;
  bad.successor(0, P{kMax32, 5})  // skips 7
      .successor(0, P{7, 4})       // wrong value
      .successor(0, P{0, 1})       // not strictly greater
      .successor(8, none)          // there is one
      .successor(kMax32, P{kMax32, 5});
  CHECK(check(v, bad) == 5);
  REQUIRE(v.first_mismatches().size() == 5);
  CHECK(v.first_mismatches()[0].type == OpType::Successor);
  CHECK(v.first_mismatches()[0].expected == "successor 7 (value 3)");
  CHECK(v.first_mismatches()[0].got == "successor 4294967295 (value 5)");
  CHECK(v.first_mismatches()[1].got == "successor 7 (value 4)");
  CHECK(v.first_mismatches()[3].got == "not found");
  CHECK(v.first_mismatches()[4].expected == "not found");
}

TEST_CASE("verifier: phased duplicates, last-wins") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({1}, {100}));
  Run a;
  a.insert(1, 1).erase(1).insert(1, 3).insert(2, 5).insert(2, 6).insert(3, 7).erase(3);
  a.lookup(1, 3).lookup(2, 6).lookup(3, none);
  CHECK(check(v, a) == 0);

  Run b;
  b.insert(5, 1).erase(5).insert(6, 1).insert(6, 2);
  b.lookup(5, 1).lookup(6, 1).count(0, 10, 4);
  CHECK(check(v, b) == 3);
  CHECK(v.first_mismatches()[0].expected == "not found");
  CHECK(v.first_mismatches()[1].expected == "value 2");
  CHECK(v.first_mismatches()[2].expected == "count 3");
}

TEST_CASE("verifier: phased duplicates, delete-wins-else-any-insert") {
  SUBCASE("a delete anywhere wins") {
    Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::DeleteWinsElseAny);
    v.build(kv({1}, {100}));
    Run a;
    a.insert(1, 1).erase(1).insert(1, 3).lookup(1, none);
    CHECK(check(v, a) == 0);
    Run b;
    b.insert(2, 1).erase(2).insert(2, 3).lookup(2, 3);
    CHECK(check(v, b) == 1);
    CHECK(last(v).expected == "not found");
  }
  SUBCASE("without a delete, any insert; nothing else") {
    for (uint64_t seen : {1, 2}) {
      Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::DeleteWinsElseAny);
      v.build(kv({1}, {100}));
      Run a;
      a.insert(1, 1).insert(1, 2).lookup(1, seen);
      CHECK(check(v, a) == 0);
    }
    Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::DeleteWinsElseAny);
    v.build(kv({1}, {100}));
    Run a;
    a.insert(1, 1).insert(1, 2).lookup(1, 100).lookup(1, none).lookup(1, 3);
    CHECK(check(v, a) == 3);
    CHECK(v.first_mismatches()[0].expected == "one of: value 1, value 2");
    CHECK(v.first_mismatches()[0].got == "value 100");
  }
}

TEST_CASE("verifier: phased duplicates, any-update") {
  for (std::optional<uint64_t> seen : {std::optional<uint64_t>(), std::optional<uint64_t>(1), std::optional<uint64_t>(3)}) {
    Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::AnyUpdate);
    v.build(kv({1}, {100}));
    Run a;
    a.insert(1, 1).erase(1).insert(1, 3).lookup(1, seen);
    CHECK(check(v, a) == 0);
  }
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::AnyUpdate);
  v.build(kv({1}, {100}));
  Run a;
  a.insert(1, 1).erase(1).insert(1, 3).lookup(1, 100).lookup(1, 2);
  CHECK(check(v, a) == 2);
  CHECK(v.first_mismatches()[0].expected == "one of: not found, value 1, value 3");
  // Count bounds over an undecided key.
  Verifier w(KeyType::U32, KeyType::U32, DuplicateRule::AnyUpdate);
  w.build(kv({1, 2}, {100, 200}));
  Run c;
  c.insert(5, 1).erase(5).count(0, 10, 4);
  CHECK(check(w, c) == 1);
  CHECK(last(w).expected == "count in [2, 3]");
  CHECK(last(w).got == "count 4");
}

TEST_CASE("verifier: an observed outcome collapses an ambiguous key") {
  auto make = [] {
    auto v = std::make_unique<Verifier>(KeyType::U32, KeyType::U32, DuplicateRule::AnyUpdate);
    v->build(kv({1}, {100}));
    Run a;
    a.insert(5, 1).insert(5, 2).insert(6, 3).erase(6);
    v->check_batch(0, a.b, a.r);
    return v;
  };
  SUBCASE("lookup then a contradicting lookup, same batch and a later one") {
    auto v = make();
    Run a;
    a.lookup(5, 1).lookup(5, 1).lookup(5, 2);
    CHECK(check(*v, a) == 1);
    CHECK(last(*v).expected == "value 1");
    Run b;
    b.lookup(5, 2).range(0, 10, {P{1, 100}, P{5, 1}});
    CHECK(check(*v, b) == 1);
  }
  SUBCASE("range that omits the key, then a lookup that finds it") {
    auto v = make();
    Run a;
    a.range(0, 10, {P{1, 100}, P{5, 2}}).lookup(6, 3);
    CHECK(check(*v, a) == 1);
    CHECK(last(*v).expected == "not found");
    CHECK(last(*v).op == 1);
  }
  SUBCASE("count at its minimum makes possibly-absent keys absent") {
    auto v = make();
    Run a;
    a.count(0, 10, 2).successor(5, P{6, 3});
    CHECK(check(*v, a) == 1);
    CHECK(last(*v).expected == "not found");
  }
  SUBCASE("count at its maximum makes them present") {
    auto v = make();
    Run a;
    a.count(6, 6, 1).lookup(6, none);
    CHECK(check(*v, a) == 1);
    CHECK(last(*v).expected == "value 3");
  }
  SUBCASE("a count strictly between the bounds fixes nothing") {
    auto v = make();
    Run seven;
    seven.insert(7, 1).erase(7);  // 7: absent or 1
    CHECK(check(*v, seven) == 0);
    Run a;
    a.count(0, 10, 3).lookup(6, none).lookup(7, 1);
    CHECK(check(*v, a) == 0);
  }
  SUBCASE("successor fixes the keys it passes and the one it returns") {
    auto v = make();
    Run a;
    a.successor(1, P{5, 2}).lookup(5, 1);
    CHECK(check(*v, a) == 1);
    Run b;
    b.successor(1, P{5, 2}).successor(5, none);  // 6 may still be absent
    CHECK(check(*v, b) == 0);
    Run c;
    c.lookup(6, 3);  // ... and now it is
    CHECK(check(*v, c) == 1);
  }
  SUBCASE("a wrong answer does not collapse the model") {
    auto v = make();
    Run a;
    a.range(0, 10, {P{1, 100}, P{5, 1}, P{9, 9}});  // 5 -> 1 is fine, 9 is extra
    a.lookup(5, 2);                                 // so 5 is still undecided
    CHECK(check(*v, a) == 1);
    CHECK(v->first_mismatches()[0].op == 0);
    CHECK(v->first_mismatches()[0].expected == "no key 9 in range");
  }
}

TEST_CASE("verifier: concurrent batches of a structure that runs their queries first are checked exactly") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::AnyUpdate);
  v.set_concurrent_queries_first(true);
  v.build(kv({1, 2, 3}, {10, 20, 30}));
  SUBCASE("the state before the batch passes") {
    Run a(ExecMode::Concurrent);
    a.erase(1).insert(4, 40).insert(2, 21);
    a.count(0, 10, 3).range(0, 10, {P{1, 10}, P{2, 20}, P{3, 30}}).lookup(2, 20).successor(3, none);
    CHECK(check(v, a) == 0);
    Run b;  // and after it, one of each key's updates
    b.lookup(1, none).lookup(2, 21).lookup(4, 40);
    CHECK(check(v, b) == 0);
  }
  SUBCASE("a planted mixture is caught: one key from before the batch, one from after") {
    Run a(ExecMode::Concurrent);
    a.erase(1).insert(4, 40);
    a.range(0, 10, {P{1, 10}, P{2, 20}, P{3, 30}, P{4, 40}});  // 1 before its delete, 4 after its insert
    a.range(0, 10, {P{2, 20}, P{3, 30}});                      // after the delete, before the insert
    a.count(0, 10, 4).lookup(4, 40).successor(3, P{4, 40});
    CHECK(check(v, a) == 5);
    CHECK(v.first_mismatches()[0].expected == "no key 4 in range");
    CHECK(v.first_mismatches()[1].expected == "key 1 with value 10 in range");
  }
  SUBCASE("without the flag the same mixture passes the general rule") {
    Verifier g(KeyType::U32, KeyType::U32, DuplicateRule::AnyUpdate);
    g.build(kv({1, 2, 3}, {10, 20, 30}));
    Run a(ExecMode::Concurrent);
    a.erase(1).insert(4, 40).range(0, 10, {P{1, 10}, P{2, 20}, P{3, 30}, P{4, 40}});
    CHECK(check(g, a) == 0);
  }
}

TEST_CASE("verifier: concurrent batches") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({1, 2, 3}, {10, 20, 30}));

  SUBCASE("untouched keys are exact") {
    Run a(ExecMode::Concurrent);
    a.insert(2, 21).lookup(1, 10).lookup(3, 31).lookup(4, 1).successor(2, P{3, 31});
    CHECK(check(v, a) == 3);
    CHECK(v.first_mismatches()[0].expected == "value 30");
  }
  SUBCASE("touched keys: pre-batch or any update effect, even two different ones in one batch") {
    Run a(ExecMode::Concurrent);
    a.insert(2, 21).erase(2).insert(2, 22).insert(5, 50);
    a.lookup(2, 20).lookup(2, 21).lookup(2, none).lookup(2, 22).lookup(5, none).lookup(5, 50);
    CHECK(check(v, a) == 0);
  }
  SUBCASE("touched keys: anything else is rejected") {
    Run b(ExecMode::Concurrent);
    b.insert(2, 21).insert(5, 50).lookup(2, 23).lookup(5, 20);
    CHECK(check(v, b) == 2);
    CHECK(v.first_mismatches()[0].expected == "one of: value 20, value 21");
    CHECK(v.first_mismatches()[1].expected == "one of: not found, value 50");
  }
  SUBCASE("counts and ranges include untouched keys exactly, touched ones optionally") {
    Run a(ExecMode::Concurrent);
    a.erase(1).insert(4, 40);
    a.count(0, 10, 2).count(0, 10, 3).count(0, 10, 4);
    a.range(0, 10, {P{2, 20}, P{3, 30}}).range(0, 10, {P{1, 10}, P{2, 20}, P{3, 30}, P{4, 40}});
    CHECK(check(v, a) == 0);
  }
  SUBCASE("counts and ranges: untouched deviations and impossible touched values are rejected") {
    Run b(ExecMode::Concurrent);
    b.erase(1).insert(4, 40);
    b.count(0, 10, 1).count(0, 10, 5).range(0, 10, {P{1, 10}, P{3, 30}}).range(0, 10, {P{2, 20}, P{3, 30}, P{4, 41}});
    b.range(0, 10, {P{2, 20}, P{3, 30}, P{9, 1}});
    CHECK(check(v, b) == 5);
    CHECK(v.first_mismatches()[0].expected == "count in [2, 4]");
    CHECK(v.first_mismatches()[2].expected == "key 2 with value 20 in range");
    CHECK(v.first_mismatches()[3].expected == "key 4 with value 40 (or absent) in range");
    CHECK(v.first_mismatches()[4].expected == "no key 9 in range");
  }
  SUBCASE("a touched key absent before and after can never be included") {
    Run a(ExecMode::Concurrent);
    a.erase(7).lookup(7, 0).range(0, 10, {P{1, 10}, P{2, 20}, P{3, 30}, P{7, 0}}).count(0, 10, 4);
    CHECK(check(v, a) == 3);
    CHECK(v.first_mismatches()[1].expected == "no key 7 in range");
  }
  SUBCASE("successor may stop at any touched key that may be present") {
    Run a(ExecMode::Concurrent);
    a.erase(2).insert(5, 50);
    a.successor(1, P{2, 20}).successor(1, P{3, 30}).successor(3, P{5, 50}).successor(3, none);
    CHECK(check(v, a) == 0);
  }
  SUBCASE("successor: keys that must be present cannot be skipped") {
    Run b(ExecMode::Concurrent);
    b.erase(2).successor(0, P{2, 20}).successor(1, P{3, 31}).successor(1, P{3, 30});
    CHECK(check(v, b) == 2);
    CHECK(v.first_mismatches()[0].expected == "successor 1 (value 10)");
    CHECK(v.first_mismatches()[1].expected == "one of: successor 2 (value 20), successor 3 (value 30)");
  }
  SUBCASE("after the batch a touched key holds one of its update effects") {
    Run a(ExecMode::Concurrent);
    a.insert(1, 11).erase(1).insert(3, 31).insert(3, 32);  // last-wins does not apply
    CHECK(check(v, a) == 0);
    Run b;
    b.lookup(1, none).lookup(3, 31);
    CHECK(check(v, b) == 0);
    Run c;
    c.lookup(1, 11).lookup(3, 32).lookup(1, 10).lookup(3, 30);
    CHECK(check(v, c) == 4);  // 1 and 3 were observed above; 10/30 are gone
  }
  SUBCASE("touched observations inside the batch do not collapse") {
    Verifier w(KeyType::U32, KeyType::U32, DuplicateRule::AnyUpdate);
    w.build(kv({}, {}));
    Run p;
    p.insert(5, 1).insert(5, 2);  // phased: ambiguous 1 or 2
    CHECK(check(w, p) == 0);
    Run a(ExecMode::Concurrent);
    a.insert(5, 3).lookup(5, 1).lookup(5, 2).lookup(5, 3);
    CHECK(check(w, a) == 0);
    Run b;
    b.lookup(5, 1);
    CHECK(check(w, b) == 1);
    CHECK(last(w).expected == "value 3");
  }
}

TEST_CASE("verifier: snapshots") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins);
  v.build(kv({1, 2}, {10, 20}));
  v.snapshot("s");
  Run a;
  a.insert(1, 11).erase(2).insert(3, 30).lookup(1, 11).count(0, 9, 2);
  CHECK(check(v, a) == 0);

  // A phased batch on the snapshot: its updates go to the live state, its
  // queries see the snapshot exactly.
  Run b(ExecMode::Phased, "s");
  b.erase(1).lookup(1, 10).lookup(2, 20).lookup(3, none).count(0, 9, 2).range(0, 9, {P{1, 10}, P{2, 20}});
  b.successor(1, P{2, 20});
  CHECK(check(v, b) == 0);
  Run c(ExecMode::Concurrent, "s");
  c.insert(4, 40).lookup(1, 11).lookup(2, none).lookup(4, 40);
  CHECK(check(v, c) == 3);  // no concurrent allowance on a snapshot
  CHECK(v.first_mismatches()[0].expected == "value 10");
  CHECK(v.first_mismatches()[2].expected == "not found");
  Run live;
  live.lookup(1, none).lookup(2, none).lookup(3, 30).lookup(4, 40);
  CHECK(check(v, live) == 0);

  v.drop_snapshot("s");
  Run gone(ExecMode::Phased, "s");
  gone.lookup(1, 10);
  CHECK_THROWS_AS(v.check_batch(9, gone.b, gone.r), InputError);
  CHECK_THROWS_AS(v.drop_snapshot("s"), InputError);
}

TEST_CASE("verifier: reporting keeps the first max_reported, counts all, survives bad results") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins, 2);
  v.build(kv({1}, {10}));
  Run a;
  a.lookup(1, 11).lookup(1, 12).lookup(1, 13).lookup(1, 10);
  CHECK(v.check_batch(3, a.b, a.r) == 4);
  CHECK(v.mismatches() == 3);
  CHECK(v.checked() == 4);
  REQUIRE(v.first_mismatches().size() == 2);
  CHECK(v.first_mismatches()[0].got == "value 11");
  CHECK(v.first_mismatches()[1].got == "value 12");

  // Results that are too short: every query is a mismatch, nothing crashes.
  Run b;
  b.lookup(1, 10).count(0, 5, 1);
  b.r.found.clear();
  CHECK(check(v, b) == 2);
  CHECK(v.mismatches() == 5);
  // And the model still holds its own state.
  Run c;
  c.lookup(1, 10);
  CHECK(check(v, c) == 0);
}

TEST_CASE("verifier: a large batch of lookups is fast") {
  const uint64_t n = 1u << 20;
  std::mt19937_64 rng(7);
  KeyValues init;
  for (uint64_t i = 0; i < n; ++i) {
    init.keys.push_back(rng());
    init.values.push_back(i);
  }
  Verifier v(KeyType::U64, KeyType::U64, DuplicateRule::LastWins);
  const auto start = std::chrono::steady_clock::now();
  v.build(init);
  Run a;
  for (uint64_t i = 0; i < n; ++i) a.lookup(init.keys[i], i);
  CHECK(v.check_batch(0, a.b, a.r) == n);
  CHECK(v.mismatches() == 0);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(s < 20.0);
}

TEST_CASE("verifier: a large batch checked on several threads reports what one thread does, in batch order") {
  // 2^15 queries of every type on a state without ambiguous cells (the
  // parallel path), wrong answers scattered among them; then the same batch
  // after a phased any-update batch left ambiguous cells (the serial path).
  auto run_with = [](unsigned threads, bool ambiguous) {
    set_host_threads(threads);
    Verifier v(KeyType::U64, KeyType::U64, ambiguous ? DuplicateRule::AnyUpdate : DuplicateRule::LastWins, 50);
    std::vector<uint64_t> keys, values;
    for (uint64_t k = 0; k < 40000; ++k) {
      keys.push_back(2 * k);
      values.push_back(k * 7);
    }
    v.build(kv(keys, values));
    if (ambiguous) {
      Run dup;
      dup.insert(10, 1).insert(10, 2);
      check(v, dup, 0);
    }
    Run q;
    std::mt19937_64 rng(3);
    for (int i = 0; i < (1 << 15); ++i) {
      const uint64_t k = 2 * (rng() % 40000);
      const bool wrong = i % 997 == 0;
      switch (i % 4) {
        case 0: q.lookup(k, wrong ? std::optional<uint64_t>(1) : std::optional<uint64_t>(k / 2 * 7)); break;
        case 1: q.count(k, k + 3, wrong ? 5 : 2); break;
        case 2: q.range(k, k + 1, wrong ? std::vector<P>{} : std::vector<P>{P{k, k / 2 * 7}}); break;
        default:
          q.successor(k, k + 2 < 80000 ? std::optional<P>(P{k + 2, (k + 2) / 2 * 7 + (wrong ? 1 : 0)})
                                       : std::nullopt);
      }
    }
    check(v, q, 1);
    set_host_threads(0);
    std::vector<std::pair<uint64_t, std::string>> got;
    for (const Mismatch& m : v.first_mismatches()) got.emplace_back(m.op, m.expected + " / " + m.got);
    return std::make_pair(v.mismatches(), got);
  };
  for (bool ambiguous : {false, true}) {
    CAPTURE(ambiguous);
    const auto one = run_with(1, ambiguous);
    const auto many = run_with(4, ambiguous);
    CHECK(one.first > 20);
    CHECK(one.first == many.first);
    CHECK(one.second == many.second);
    for (size_t i = 1; i < one.second.size(); ++i) CHECK(one.second[i - 1].first < one.second[i].first);
  }
}

TEST_CASE("verifier: with ambiguous cells, a large batch reports what the same queries in small batches report") {
  // Ambiguous cells on every 13th key (two inserts of it in one any-update
  // batch); queries of every type meet them, their answers collapse some
  // (a lookup or range seeing one value) and later queries of the batch
  // read the collapsed cells, agreeing or not. One batch of 2^15 queries
  // (checked in parallel, the queries that meet an ambiguous cell after
  // them in batch order) against the same queries in batches of 2^12 (the
  // one-thread loop): the same mismatches, at the same positions.
  std::vector<uint64_t> keys, values;
  for (uint64_t k = 0; k < 40000; ++k) {
    keys.push_back(2 * k);
    values.push_back(k * 7);
  }
  std::mt19937_64 rng(17);
  std::vector<std::function<void(Run&)>> queries;
  for (int i = 0; i < (1 << 15); ++i) {
    const uint64_t j = rng() % 40000, k = 2 * j;
    const bool amb = j % 13 == 0;
    const uint64_t v = amb ? (rng() % 2 ? 100 + j : 200 + j) : j * 7;  // an ambiguous key: either of its values
    const bool wrong = i % 501 == 0;
    switch (i % 4) {
      case 0: queries.push_back([=](Run& q) { q.lookup(k, wrong ? std::optional<uint64_t>(1) : std::optional<uint64_t>(v)); }); break;
      case 1: queries.push_back([=](Run& q) { q.count(k, k + 1, wrong ? 3 : 1); }); break;
      case 2: queries.push_back([=](Run& q) { q.range(k, k, wrong ? std::vector<P>{} : std::vector<P>{P{k, v}}); }); break;
      default: {
        const uint64_t s = k + 2 < 80000 ? k + 2 : 0;
        const uint64_t sv = (s / 2) % 13 == 0 ? 100 + s / 2 : s / 2 * 7;
        queries.push_back([=](Run& q) {
          q.successor(k, s ? std::optional<P>(P{s, sv + (wrong ? 5 : 0)}) : std::nullopt);
        });
      }
    }
  }
  auto run_in = [&](size_t batch, unsigned threads) {
    set_host_threads(threads);
    Verifier v(KeyType::U64, KeyType::U64, DuplicateRule::AnyUpdate, 1000);
    v.build(kv(keys, values));
    Run dup;
    for (uint64_t j = 0; j < 40000; j += 13) dup.insert(2 * j, 100 + j).insert(2 * j, 200 + j);
    check(v, dup, 0);
    std::vector<std::pair<uint64_t, std::string>> got;
    uint64_t first = 0;
    for (uint64_t b = 1; first < queries.size(); ++b) {
      Run q;
      const size_t end = std::min(queries.size(), first + batch);
      for (size_t i = first; i < end; ++i) queries[i](q);
      const size_t before = v.first_mismatches().size();
      check(v, q, b);
      for (size_t m = before; m < v.first_mismatches().size(); ++m) {
        const Mismatch& x = v.first_mismatches()[m];
        got.emplace_back(first + x.op, x.expected + " / " + x.got);
      }
      first = end;
    }
    set_host_threads(0);
    return std::make_pair(v.mismatches(), got);
  };
  const auto serial = run_in(1 << 12, 1);
  const auto parallel = run_in(1 << 15, 4);
  CHECK(serial.first > 60);
  CHECK(serial.first == parallel.first);
  CHECK(serial.second == parallel.second);
}
