// Set semantics (docs/semantics.md, section 11) and the DeletesThenInserts
// rule (section 3) in the verifier: a set ignores values everywhere; a map
// under DeletesThenInserts keeps one of a key's inserts.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>

#include "batch_run.hpp"
#include "workloads/reference.hpp"
#include "workloads/verifier.hpp"

using namespace gpudict;
using namespace gpudict::testing;

namespace {
const std::nullopt_t none = std::nullopt;

Verifier set_verifier(DuplicateRule rule = DuplicateRule::AnyUpdate) {
  return Verifier(KeyType::U32, KeyType::U32, rule, Semantics::Set, 50);
}
}  // namespace

TEST_CASE("set verifier: values are ignored in every answer") {
  Verifier v = set_verifier();
  v.build(key_values({1, 2, 0xFFFFFFFF}, {5, 6, 7}));
  Run ok;
  ok.lookup(1, 0).lookup(1, 12345).lookup(0xFFFFFFFF, 0xFFFFFFFF).lookup(3, none);
  ok.count(0, 0xFFFFFFFF, 4).range(1, 2, {Pair{1, 99}, Pair{2, 0}});  // 4: the insert below runs first
  ok.successor(1, Pair{2, 77}).successor(0xFFFFFFFF, none);
  ok.insert(4, 8).lookup(4, 1);  // an insert's value is dropped; the reported one is not compared
  CHECK(check_run(v, ok) == 0);

  Run bad;
  bad.lookup(3, 0).lookup(1, none).range(1, 2, {Pair{1, 0}}).range(1, 3, {Pair{1, 0}, Pair{2, 0}, Pair{3, 4}});
  bad.successor(0, Pair{2, 0});
  CHECK(check_run(v, bad, 1) == 5);
  const auto& m = v.first_mismatches();
  REQUIRE(m.size() == 5);
  CHECK(m[0].expected == "not found");
  CHECK(m[0].got == "found");
  CHECK(m[1].expected == "found");
  CHECK(m[1].got == "not found");
  CHECK(m[2].expected == "key 2 in range");
  CHECK(m[2].got == "range of 1 pairs without key 2");
  CHECK(m[3].expected == "no key 3 in range");
  CHECK(m[3].got == "range of 3 pairs with key 3");
  CHECK(m[4].expected == "successor 1");
  CHECK(m[4].got == "successor 2");
}

TEST_CASE("set verifier: duplicate rules decide present or absent, observations collapse") {
  Verifier v = set_verifier(DuplicateRule::AnyUpdate);
  v.build(key_values({4}, {1}));
  Run b;
  b.insert(4, 1).erase(4).insert(5, 2).insert(5, 3);  // 4: either; 5: present (both inserts are "present")
  b.count(5, 5, 1);
  CHECK(check_run(v, b) == 0);
  Run wrong;
  wrong.lookup(5, none).count(4, 5, 3);
  CHECK(check_run(v, wrong, 1) == 2);
  CHECK(v.first_mismatches()[0].expected == "found");
  CHECK(v.first_mismatches()[1].expected == "count in [1, 2]");

  Run seen;
  seen.lookup(4, 9);  // found (the value is not compared): collapses to present
  CHECK(check_run(v, seen, 2) == 0);
  Run later;
  later.lookup(4, none);
  CHECK(check_run(v, later, 3) == 1);
  CHECK(last_mismatch(v).expected == "found");
}

TEST_CASE("set verifier: concurrent batches follow the map rules") {
  Verifier v = set_verifier();
  v.build(key_values({1}, {1}));
  Run c(ExecMode::Concurrent);
  c.erase(1).insert(2, 5).lookup(1, none).lookup(1, 3).lookup(2, none).lookup(2, 0).range(1, 2, {Pair{2, 8}});
  CHECK(check_run(v, c) == 0);
  Run after;
  after.lookup(1, none).lookup(2, 6);
  CHECK(check_run(v, after, 1) == 0);
}

TEST_CASE("deletes-then-inserts: the outcomes the reference allows") {
  const Outcome absent;
  CHECK(resolve_phased(DuplicateRule::DeletesThenInserts, {Outcome(7), absent, Outcome(8)}) ==
        Outcomes{Outcome(7), Outcome(8)});
  CHECK(resolve_phased(DuplicateRule::DeletesThenInserts, {Outcome(7), absent}) == Outcomes{Outcome(7)});
  CHECK(resolve_phased(DuplicateRule::DeletesThenInserts, {absent, absent}) == Outcomes{absent});
  CHECK(resolve_phased(DuplicateRule::DeletesThenInserts, {Outcome(3)}) == Outcomes{Outcome(3)});
}

TEST_CASE("map verifier under deletes-then-inserts: a delete never beats an insert of the batch") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::DeletesThenInserts, Semantics::Map, 50);
  v.build(key_values({1, 2, 3}, {5, 6, 7}));
  Run b;
  b.insert(1, 7).erase(1).insert(1, 8);  // one of 7, 8
  b.insert(2, 9).erase(2);               // the delete runs first: 9
  b.erase(3);                            // only a delete: absent
  b.lookup(2, 9).lookup(3, none).count(1, 3, 2);
  CHECK(check_run(v, b) == 0);

  Run bad;
  bad.lookup(1, 5).lookup(1, none).lookup(2, none).range(3, 3, {Pair{3, 7}});
  CHECK(check_run(v, bad, 1) == 4);
  const auto& m = v.first_mismatches();
  CHECK(m[0].expected == "one of: value 7, value 8");
  CHECK(m[0].got == "value 5");
  CHECK(m[2].expected == "value 9");
  CHECK(m[3].expected == "no key 3 in range");

  Run ok;
  ok.lookup(1, 8).lookup(1, 8);  // collapsed by the first
  CHECK(check_run(v, ok, 2) == 0);
  Run contradiction;
  contradiction.lookup(1, 7);
  CHECK(check_run(v, contradiction, 3) == 1);
}
