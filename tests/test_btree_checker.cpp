// The B-Tree's structural checker (core/btree/detail/btree_check.hpp) on trees
// built by hand: a sound tree passes, and each kind of damage the GPU tests
// rely on it to catch is reported, for nodes of 32-bit words (u32 keys and
// values) and of 64-bit words. Host code only, so CI runs it without a
// GPU; the GPU tests run the same checker on every tree they build.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/btree/detail/btree_check.hpp"
#include "core/btree/detail/node.hpp"
#include "core/common/key_traits.hpp"

using namespace gpudict;
using namespace gpudict::btree;

namespace {

template <class Word>
Node<Word> make_node(const std::vector<std::pair<Word, Word>>& pairs, bool leaf, Word low, Word high, Word link) {
  Node<Word> n{};
  for (int i = 0; i < kNodeWords; ++i) n.w[i] = static_cast<Word>(0xDEADBEEFDEADBEEFull);  // unused slots hold anything
  for (size_t i = 0; i < pairs.size(); ++i) {
    n.w[2 * i] = pairs[i].first;
    n.w[2 * i + 1] = pairs[i].second;
  }
  n.w[kHighWord] = high;
  n.w[kLinkWord] = link;
  n.w[kLowWord] = low;
  n.w[kMetaWord] = meta_new<Word>(static_cast<uint32_t>(pairs.size()), leaf);
  return n;
}

// Root 0 over leaves 1 = [0, 100) and 2 = [100, inf): five keys, the
// domain's ends of the word's width included.
template <class Word>
struct HandTree {
  std::vector<Node<Word>> nodes;
  TreeHeader h{};
  uint64_t size = 5;
  HandTree() {
    nodes.push_back(make_node<Word>({{0, 1}, {100, 2}}, false, 0, 0, kNil));
    nodes.push_back(make_node<Word>({{0, 7}, {20, 8}, {99, 9}}, true, 0, 100, 2));
    nodes.push_back(make_node<Word>({{100, 10}, {key_max<Word>, key_max<Word>}}, true, 100, 0, kNil));
    h.next_free = nodes.size();
    h.size = 5;
    h.leaves = 2;
    h.height = 2;
  }
  std::string check(uint64_t retries = 0) const { return check_btree_nodes(nodes, h, size, retries); }
};

template <class Word>
void require_reports(const HandTree<Word>& t, const std::string& what) {
  const std::string got = t.check();
  INFO("expected a report containing '" << what << "', got: " << got);
  REQUIRE(got.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE_TEMPLATE("btree checker: a sound hand-built tree passes", Word, uint32_t, uint64_t) {
  HandTree<Word> t;
  CHECK(t.check() == "");
}

TEST_CASE_TEMPLATE("btree checker: every kind of damage is reported", Word, uint32_t, uint64_t) {
  SUBCASE("keys out of order in a leaf") {
    HandTree<Word> t;
    std::swap(t.nodes[1].w[0], t.nodes[1].w[2]);
    require_reports(t, "keys not strictly increasing");
  }
  SUBCASE("a key outside its leaf's bounds") {
    HandTree<Word> t;
    t.nodes[1].w[4] = 150;  // leaf 1 covers [0, 100)
    require_reports(t, "outside [0, 100)");
  }
  SUBCASE("a broken side link") {
    HandTree<Word> t;
    t.nodes[1].w[kLinkWord] = kNil;
    require_reports(t, "the next node of its level is 2");
  }
  SUBCASE("a high key that is not the right sibling's low key") {
    HandTree<Word> t;
    t.nodes[1].w[kHighWord] = 90;
    require_reports(t, "high key 90 but its right sibling's low key is 100");
  }
  SUBCASE("a child whose low key is not its pivot") {
    HandTree<Word> t;
    t.nodes[0].w[2] = 50;  // pivot 1: 50, leaf 2's low key 100
    require_reports(t, "its parent's pivot 50");
  }
  SUBCASE("a node latched at rest") {
    HandTree<Word> t;
    t.nodes[2].w[kMetaWord] |= kLatchBit;
    require_reports(t, "is latched at rest");
  }
  SUBCASE("a child beyond the used pool") {
    HandTree<Word> t;
    t.nodes[0].w[3] = 7;
    require_reports(t, "beyond the used pool");
  }
  SUBCASE("a node reachable twice") {
    HandTree<Word> t;
    t.nodes[0].w[3] = 1;
    require_reports(t, "reachable twice");
  }
  SUBCASE("leaves at different depths") {
    HandTree<Word> t;
    t.nodes[2].w[kMetaWord] = meta_new<Word>(2, false);
    require_reports(t, "leaves at different depths");
  }
  SUBCASE("counters that disagree with the tree") {
    HandTree<Word> t;
    t.h.size = 4;
    require_reports(t, "the size counter says 4");
    t.h.size = 5;
    t.h.leaves = 3;
    require_reports(t, "the counter says 3");
    t.h.leaves = 2;
    t.h.height = 3;
    require_reports(t, "the height counter says 3");
    t.h.height = 2;
    t.size = 6;
    require_reports(t, "stats().size is 6");
    t.size = 5;
    t.h.error = 1;
    require_reports(t, "internal error flag");
  }
  SUBCASE("an allocated node the tree does not reach: one allowed per pool growth in a batch") {
    HandTree<Word> t;
    t.nodes.push_back(make_node<Word>({}, true, 0, 0, kNil));
    require_reports(t, "1 of 4 allocated nodes are not reachable");
    CHECK(t.check(1) == "");  // one pool retry may lose one node
    t.nodes.push_back(make_node<Word>({}, true, 0, 0, kNil));
    CHECK(t.check(1).find("2 of 5 allocated nodes are not reachable") != std::string::npos);
    t.h.overflow = 1;  // and a pool that filled in the last batch, one more
    CHECK(t.check(1) == "");
  }
}

TEST_CASE("btree checker: 64-bit words are compared whole") {
  // Keys equal in their low 32 bits (100 and 2^32 + 100) are two keys, in order.
  constexpr uint64_t kHigh = (1ull << 32) + 100;
  HandTree<uint64_t> t;
  t.nodes[2] = make_node<uint64_t>({{100, 10}, {kHigh, 11}}, true, 100, 0, kNil);
  CHECK(t.check() == "");
  std::swap(t.nodes[2].w[0], t.nodes[2].w[2]);
  require_reports(t, "keys not strictly increasing");
  // A child index with a bit above the 32nd set is no node.
  HandTree<uint64_t> c;
  c.nodes[0].w[3] = 2 + (1ull << 32);
  require_reports(c, "beyond the used pool");
  // A link word with high bits set is not the next node.
  HandTree<uint64_t> l;
  l.nodes[1].w[kLinkWord] = 2 + (1ull << 40);
  require_reports(l, "the next node of its level is 2");
}
