// Multimap semantics (docs/semantics.md, section 10) in the reference model
// and the verifier: every allowed outcome accepted, each disallowed one
// reported, in phased and concurrent batches, with snapshots and collapses.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "batch_run.hpp"
#include "core/common/errors.hpp"
#include "workloads/multimap_reference.hpp"
#include "workloads/verifier.hpp"

using namespace gpudict;
using namespace gpudict::testing;

namespace {

const std::nullopt_t none = std::nullopt;

Verifier multimap(DuplicateRule rule = DuplicateRule::DeletesThenInserts) {
  return Verifier(KeyType::U32, KeyType::U32, rule, Semantics::Multimap, 50);
}

// A verifier whose model holds key 1 -> {10}, key 2 -> {20}, key 5 -> {1, 2},
// key 9 -> {90}, after which `concurrent` (a concurrent batch with no
// queries) has run.
void prepare(Verifier& v, const Run& concurrent) {
  v.build(key_values({1, 2, 5, 5, 9}, {10, 20, 1, 2, 90}));
  REQUIRE(check_run(v, concurrent) == 0);
}

// The concurrent batch the collapse tests start from: key 2 ends as any
// sub-multiset of {21, 22}.
Run delete_and_reinsert_2() {
  Run c(ExecMode::Concurrent);
  c.erase(2).insert(2, 21).insert(2, 22);
  return c;
}

}  // namespace

TEST_CASE("multimap model: updates grouped by key, multisets as sorted vectors") {
  Batch b;
  b.push(OpType::Insert, 7, 3);
  b.push(OpType::Delete, 7);
  b.push(OpType::Insert, 7, 1);
  b.push(OpType::Insert, 7, 3);
  b.push(OpType::Lookup, 7);
  b.push(OpType::Insert, 2, 5);
  const std::vector<MultiTouch> g = group_multi_updates(b);
  REQUIRE(g.size() == 2);
  CHECK(g[0].key == 2);
  CHECK(!g[0].deleted);
  CHECK(g[0].inserted == ValueBag{5});
  CHECK(g[1].key == 7);
  CHECK(g[1].deleted);
  CHECK(g[1].inserted == ValueBag{1, 3, 3});
  CHECK(g[1].inserted_after == ValueBag{1, 3});

  CHECK(bag_union({1, 3}, {1, 2}) == ValueBag{1, 1, 2, 3});
  CHECK(bag_includes({1, 1, 2}, {1, 1}));
  CHECK(!bag_includes({1, 2}, {1, 1}));
  CHECK(bag_minus({1, 1, 2, 3}, {1, 3}) == ValueBag{1, 2});

  MultiState s;
  s.build(key_values({4, 4, 4, 0, 0xFFFFFFFF}, {9, 9, 0, 0xFFFFFFFF, 0}));
  CHECK(s.pairs() == 5);
  CHECK(s.cells().at(4).must == ValueBag{0, 9, 9});
  s.apply_concurrent(group_multi_updates(b));  // 7: deleted and reinserted -> any of {1, 3, 3}
  CHECK(s.cells().at(7).must.empty());
  CHECK(s.cells().at(7).may == ValueBag{1, 3, 3});
  CHECK(s.cells().at(2).must == ValueBag{5});
}

TEST_CASE("multimap verifier: initial pairs all kept, lookup, count, range of one key") {
  Verifier v = multimap();
  v.build(key_values({1, 1, 1, 2, 0xFFFFFFFF}, {10, 11, 10, 5, 0}));
  Run ok;
  ok.lookup(1, 10).lookup(1, 11).lookup(3, none).lookup(0xFFFFFFFF, 0);
  ok.count(1, 1, 3).count(2, 2, 1).count(3, 3, 0);
  ok.range(1, 1, {Pair{1, 11}, Pair{1, 10}, Pair{1, 10}});  // values in any order
  ok.range(3, 3, {});
  ok.range(0, 0xFFFFFFFF, {Pair{1, 10}, Pair{1, 10}, Pair{1, 11}, Pair{2, 5}, Pair{0xFFFFFFFF, 0}});
  ok.count(0, 0xFFFFFFFF, 5);
  ok.successor(1, Pair{2, 5}).successor(0, Pair{1, 11});
  CHECK(check_run(v, ok) == 0);

  Run bad;
  bad.lookup(1, 12).lookup(2, none).count(1, 1, 2).range(1, 1, {Pair{1, 10}, Pair{1, 11}});
  bad.range(2, 2, {}).range(3, 3, {Pair{3, 1}}).range(1, 2, {Pair{2, 5}, Pair{1, 10}});
  bad.range(1, 1, {Pair{1, 10}, Pair{1, 10}, Pair{1, 11}, Pair{1, 11}});
  CHECK(check_run(v, bad, 1) == 8);
  const auto& m = v.first_mismatches();
  REQUIRE(m.size() == 8);
  CHECK(m[0].expected == "one of: value 10, value 11");
  CHECK(m[0].got == "value 12");
  CHECK(m[1].expected == "value 5");
  CHECK(m[1].got == "not found");
  CHECK(m[2].expected == "count 3");
  CHECK(m[2].got == "count 2");
  CHECK(m[3].expected == "key 1 with values {10, 10, 11} in range");  // a definite pair missing
  CHECK(m[3].got == "key 1 with values {10, 11}");
  CHECK(m[4].expected == "key 2 with values {5} in range");
  CHECK(m[4].got == "range of 0 pairs without key 2");
  CHECK(m[5].expected == "no key 3 in range");
  CHECK(m[5].got == "range of 1 pairs with key 3 (value 1)");
  CHECK(m[6].expected == "keys non-decreasing");
  CHECK(m[6].got == "key 1 after key 2");
  CHECK(m[7].got == "key 1 with values {10, 10, 11, 11}");  // one pair too many
}

TEST_CASE("map verifier: a key reported twice by a range is a mismatch (only a multimap repeats keys)") {
  Verifier v(KeyType::U32, KeyType::U32, DuplicateRule::LastWins, Semantics::Map);
  v.build(key_values({1, 2}, {10, 20}));
  Run bad;
  bad.range(1, 2, {Pair{1, 10}, Pair{1, 10}, Pair{2, 20}});
  CHECK(check_run(v, bad) == 1);
  CHECK(last_mismatch(v).expected == "keys strictly increasing");
  CHECK(last_mismatch(v).got == "key 1 after key 1");
}

TEST_CASE("multimap verifier: phased batches run deletes, then every insert") {
  Verifier v = multimap();
  v.build(key_values({1, 3}, {10, 1}));
  Run b;
  // Key 1: the insert before the delete survives too (deletes run first).
  b.insert(1, 20).erase(1).insert(1, 20).insert(1, 30);
  b.insert(2, 7).insert(2, 7);  // identical pairs are both kept
  b.insert(3, 1);               // no delete: the pre-batch pair stays
  b.erase(4);                   // deleting an absent key is a no-op
  b.count(1, 1, 3).range(1, 1, {Pair{1, 30}, Pair{1, 20}, Pair{1, 20}}).count(2, 2, 2).count(3, 3, 2);
  b.lookup(1, 20).lookup(1, 30).lookup(4, none);
  CHECK(check_run(v, b) == 0);

  Run bad;
  bad.lookup(1, 10).count(1, 1, 2).range(3, 3, {Pair{3, 1}});
  CHECK(check_run(v, bad, 1) == 3);
  CHECK(v.first_mismatches()[0].expected == "one of: value 20, value 30");
  CHECK(v.first_mismatches()[1].expected == "count 3");
  CHECK(v.first_mismatches()[2].expected == "key 3 with values {1, 1} in range");

  // A delete alone empties the key.
  Run del;
  del.erase(1).count(1, 1, 0).lookup(1, none).range(1, 1, {});
  CHECK(check_run(v, del, 2) == 0);
}

TEST_CASE("multimap verifier: other phased rules, and any-update refused") {
  SUBCASE("last-wins runs the updates in batch order") {
    Verifier v = multimap(DuplicateRule::LastWins);
    v.build(key_values({1}, {10}));
    Run b;
    b.insert(1, 20).erase(1).insert(1, 30).insert(1, 31).range(1, 1, {Pair{1, 30}, Pair{1, 31}});
    CHECK(check_run(v, b) == 0);
  }
  SUBCASE("delete-wins-else-any empties a deleted key and drops its inserts") {
    Verifier v = multimap(DuplicateRule::DeleteWinsElseAny);
    v.build(key_values({1, 2}, {10, 20}));
    Run b;
    b.insert(1, 20).erase(1).insert(2, 21).count(1, 1, 0).range(2, 2, {Pair{2, 20}, Pair{2, 21}});
    CHECK(check_run(v, b) == 0);
  }
  CHECK_THROWS_AS(multimap(DuplicateRule::AnyUpdate), InputError);
}

TEST_CASE("multimap verifier: concurrent batches, during the batch") {
  Verifier v = multimap();
  v.build(key_values({1, 2, 5, 5, 9}, {10, 20, 1, 2, 90}));
  // Key 1: P = {10}, I = {11}, not deleted. Key 2: P = {20}, I = {21, 22},
  // deleted. Key 5: P = {1, 2}, deleted, no inserts. Key 9: untouched.
  auto batch = [] {
    Run c(ExecMode::Concurrent);
    c.insert(1, 11).erase(2).insert(2, 21).insert(2, 22).erase(5);
    return c;
  };
  Run ok = batch();
  ok.lookup(1, 10).lookup(1, 11);  // key 1 keeps its pair 10 throughout (inserts only add)
  ok.lookup(2, 20).lookup(2, 22).lookup(5, 2).lookup(5, none);
  ok.count(1, 1, 1).count(1, 1, 2).count(2, 2, 0).count(2, 2, 3).count(5, 5, 1);
  ok.range(1, 1, {Pair{1, 10}}).range(1, 1, {Pair{1, 11}, Pair{1, 10}});
  ok.range(2, 2, {}).range(2, 2, {Pair{2, 21}}).range(2, 2, {Pair{2, 22}, Pair{2, 20}, Pair{2, 21}});
  ok.range(5, 5, {Pair{5, 2}});
  ok.lookup(9, 90).count(9, 9, 1).count(1, 9, 6);  // untouched: exact; a sum of bounds over several keys
  CHECK(check_run(v, ok) == 0);

  Verifier w = multimap();
  w.build(key_values({1, 2, 5, 5, 9}, {10, 20, 1, 2, 90}));
  Run bad = batch();
  bad.lookup(1, 12).count(1, 1, 0).count(1, 1, 3).count(2, 2, 4);
  bad.range(1, 1, {Pair{1, 11}});                    // the pre-batch pair is missing (not deleted)
  bad.range(2, 2, {Pair{2, 21}, Pair{2, 21}});       // 21 inserted once
  bad.lookup(9, none).count(9, 9, 0);                // untouched keys answer exactly
  bad.lookup(1, none);                               // key 1 keeps its pair 10 (not deleted)
  CHECK(check_run(w, bad) == 9);
  const auto& m = w.first_mismatches();
  REQUIRE(m.size() == 9);
  CHECK(m[0].expected == "one of: value 10, value 11");
  CHECK(m[1].expected == "count in [1, 2]");
  CHECK(m[3].expected == "count in [0, 3]");
  CHECK(m[4].expected == "key 1 with values {10} plus any of {11} in range");
  CHECK(m[4].got == "key 1 with values {11}");
  CHECK(m[5].expected == "key 2 with any of {20, 21, 22} (or absent) in range");
  CHECK(m[6].expected == "value 90");
  CHECK(m[8].expected == "one of: value 10, value 11");
  CHECK(m[8].got == "not found");
}

TEST_CASE("multimap verifier: concurrent batches, after the batch") {
  Verifier v = multimap();
  prepare(v, [] {
    Run c(ExecMode::Concurrent);
    c.insert(1, 11).erase(2).insert(2, 21).insert(2, 22).erase(5).insert(7, 70).insert(7, 70);
    return c;
  }());
  Run after;
  after.range(1, 1, {Pair{1, 10}, Pair{1, 11}});  // not deleted: exactly P ⊎ I
  after.count(5, 5, 0).lookup(5, none);            // deleted, no inserts: no pairs
  after.count(7, 7, 2).lookup(9, 90);
  after.count(2, 2, 1);                            // any sub-multiset of {21, 22}: strictly inside, fixes nothing
  CHECK(check_run(v, after, 1) == 0);
  Run bad;
  bad.count(1, 1, 1).lookup(2, 20).count(2, 2, 3);
  CHECK(check_run(v, bad, 2) == 3);
  CHECK(v.first_mismatches()[0].expected == "count 2");
  CHECK(v.first_mismatches()[1].expected == "one of: not found, value 21, value 22");
  CHECK(v.first_mismatches()[2].expected == "count in [0, 2]");
}

TEST_CASE("multimap verifier: observations collapse an open key") {
  SUBCASE("a range observes the whole multiset") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.range(2, 2, {Pair{2, 22}});
    CHECK(check_run(v, a, 1) == 0);
    Run b;
    b.count(2, 2, 2).lookup(2, 21).count(2, 2, 1);
    CHECK(check_run(v, b, 2) == 2);
    CHECK(v.first_mismatches()[0].expected == "count 1");
    CHECK(v.first_mismatches()[1].expected == "value 22");
  }
  SUBCASE("a count at its minimum: no pairs") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.count(2, 2, 0);
    CHECK(check_run(v, a, 1) == 0);
    Run b;
    b.lookup(2, 21);
    CHECK(check_run(v, b, 2) == 1);
    CHECK(last_mismatch(v).expected == "not found");
  }
  SUBCASE("a count at its maximum: every possible pair") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.count(1, 2, 3);  // key 1 {10} plus key 2 at its maximum
    CHECK(check_run(v, a, 1) == 0);
    Run b;
    b.range(2, 2, {Pair{2, 21}});
    CHECK(check_run(v, b, 2) == 1);
    CHECK(last_mismatch(v).expected == "key 2 with values {21, 22} in range");
  }
  SUBCASE("a count strictly inside its bounds fixes nothing") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.count(2, 2, 1).count(2, 2, 0);  // the second is the minimum: it still may be
    CHECK(check_run(v, a, 1) == 0);
  }
  SUBCASE("a lookup: only that the value is there") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.lookup(2, 21);
    CHECK(check_run(v, a, 1) == 0);
    Run ok;
    ok.count(2, 2, 2).lookup(2, 22);  // the other pair is still open
    CHECK(check_run(v, ok, 2) == 0);
  }
  SUBCASE("a lookup at least fixes the key as non-empty") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.lookup(2, 21);
    CHECK(check_run(v, a, 1) == 0);
    Run b;
    b.count(2, 2, 0).lookup(2, none);
    CHECK(check_run(v, b, 2) == 2);
    CHECK(v.first_mismatches()[0].expected == "count in [1, 2]");
  }
  SUBCASE("a lookup not found: no pairs") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.lookup(2, none);
    CHECK(check_run(v, a, 1) == 0);
    Run b;
    b.lookup(2, 22);
    CHECK(check_run(v, b, 2) == 1);
  }
  SUBCASE("a wrong answer collapses nothing") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run a;
    a.range(2, 2, {Pair{2, 20}});  // 20 was deleted
    CHECK(check_run(v, a, 1) == 1);
    Run ok;
    ok.count(2, 2, 2);
    CHECK(check_run(v, ok, 2) == 0);
  }
  SUBCASE("observations of touched keys inside a concurrent batch collapse nothing") {
    Verifier v = multimap();
    prepare(v, delete_and_reinsert_2());
    Run c(ExecMode::Concurrent);
    c.insert(2, 23).count(2, 2, 0);  // touched: nothing collapses
    CHECK(check_run(v, c, 1) == 0);
    Run after;  // still any of {21, 22}, plus 23
    after.count(2, 2, 3);
    CHECK(check_run(v, after, 2) == 0);
  }
}

TEST_CASE("multimap verifier: snapshots copy the model, open keys included") {
  Verifier v = multimap();
  prepare(v, delete_and_reinsert_2());
  v.snapshot("s");
  Run live;
  live.insert(1, 12).range(2, 2, {Pair{2, 21}, Pair{2, 22}});  // collapses the live key only
  CHECK(check_run(v, live, 1) == 0);

  Run past(ExecMode::Phased, "s");
  past.insert(1, 13);  // updates still go to the live state
  past.count(1, 1, 1).range(1, 1, {Pair{1, 10}}).count(2, 2, 0);
  CHECK(check_run(v, past, 2) == 0);
  Run past_bad(ExecMode::Concurrent, "s");
  past_bad.count(2, 2, 2).range(1, 1, {Pair{1, 10}, Pair{1, 12}});
  CHECK(check_run(v, past_bad, 3) == 2);  // the snapshot's key 2 collapsed to none above
  CHECK(v.first_mismatches()[1].expected == "key 1 with values {10} in range");

  Run now;
  now.count(1, 1, 3).count(2, 2, 2);
  CHECK(check_run(v, now, 4) == 0);
  v.drop_snapshot("s");
  CHECK_THROWS_AS(v.drop_snapshot("s"), InputError);
}
