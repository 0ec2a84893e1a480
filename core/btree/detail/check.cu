// The structural checker (btree_check.hpp): the whole pool copied to the
// host, the tree walked level by level from the root.
#include "core/btree/detail/btree_check.hpp"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "core/btree/detail/btree_impl.cuh"

namespace gpudict {

namespace {

using btree::kCapacity;
using btree::kHighWord;
using btree::kLinkWord;
using btree::kLowWord;
using btree::kMetaWord;
using btree::kNil;
using btree::Node;

struct Problems {
  std::ostringstream out;
  int n = 0;
  template <class... A>
  void add(A&&... parts) {
    if (n++ < 8) {
      (out << ... << parts);
      out << "\n";
    }
  }
  std::string str() const {
    std::string s = out.str();
    if (n > 8) s += "... " + std::to_string(n) + " problems in all\n";
    return s;
  }
};

}  // namespace

template <class Key, class Value>
std::string check_btree_structure(const btree_map<Key, Value>& map) {
  using I = btree::Inspect<Key, Value>;
  std::vector<Node<typename I::Word>> nodes;
  btree::TreeHeader h{};
  I::dump(map, nodes, h);
  const btree_stats st = map.stats();
  return check_btree_nodes(nodes, h, st.size, st.pool_retries);
}

template <class Word>
std::string check_btree_nodes(const std::vector<Node<Word>>& nodes, const btree::TreeHeader& h,
                              uint64_t reported_size, uint64_t pool_retries) {
  Problems bad;
  const uint64_t used = nodes.size();
  if (used == 0) return "the pool holds no root";
  auto count = [&](uint32_t id) { return static_cast<int>(btree::meta_count(nodes[id].w[kMetaWord])); };
  auto is_leaf = [&](uint32_t id) { return btree::meta_leaf(nodes[id].w[kMetaWord]); };
  auto link = [&](uint32_t id) { return nodes[id].w[kLinkWord]; };

  std::vector<uint32_t> level = {btree::kRoot};
  std::vector<uint8_t> seen(used, 0);
  seen[btree::kRoot] = 1;
  uint64_t depth = 0, keys = 0, leaves = 0;
  bool have_prev_key = false;
  Word prev_key = 0;
  while (!level.empty() && bad.n < 8) {
    ++depth;
    const bool leaf_level = is_leaf(level.front());
    std::vector<uint32_t> next;
    for (size_t x = 0; x < level.size(); ++x) {
      const uint32_t id = level[x];
      const Node<Word>& nd = nodes[id];
      const Word meta = nd.w[kMetaWord];
      const int c = count(id);
      const Word low = nd.w[kLowWord], high = nd.w[kHighWord];
      const bool bounded = link(id) != kNil;
      if (btree::meta_latched(meta)) bad.add("node ", id, " is latched at rest");
      if (c > kCapacity) bad.add("node ", id, " holds ", c, " pairs");
      if (is_leaf(id) != leaf_level) bad.add("node ", id, " at depth ", depth, ": leaves at different depths");
      // Side links: this level's nodes in order form the link chain.
      const uint32_t want_link = x + 1 < level.size() ? level[x + 1] : kNil;
      if (link(id) != want_link)
        bad.add("node ", id, " at depth ", depth, ": link ", link(id), ", the next node of its level is ", want_link);
      if (bounded && want_link != kNil && want_link < used && high != nodes[want_link].w[kLowWord])
        bad.add("node ", id, ": high key ", high, " but its right sibling's low key is ", nodes[want_link].w[kLowWord]);
      if (x == 0 && low != 0) bad.add("node ", id, ": the leftmost node of depth ", depth, " has low key ", low);
      for (int i = 0; i < c; ++i) {
        const Word k = nd.w[2 * i];
        if (i > 0 && k <= nd.w[2 * i - 2]) bad.add("node ", id, ": keys not strictly increasing at pair ", i);
        if (k < low || (bounded && k >= high))
          bad.add("node ", id, ": key ", k, " outside [", low, ", ", bounded ? std::to_string(high) : "inf", ")");
      }
      if (is_leaf(id)) {
        ++leaves;
        for (int i = 0; i < c; ++i) {
          const Word k = nd.w[2 * i];
          if (have_prev_key && k <= prev_key) bad.add("leaf ", id, ": key ", k, " after key ", prev_key, " in leaf order");
          have_prev_key = true;
          prev_key = k;
          ++keys;
        }
        continue;
      }
      if (c == 0) {
        bad.add("inner node ", id, " has no children");
        continue;
      }
      if (nd.w[0] != low) bad.add("inner node ", id, ": pivot 0 is ", nd.w[0], ", its low key ", low);
      for (int i = 0; i < c; ++i) {
        const Word child_word = nd.w[2 * i + 1];
        if (child_word >= used) {  // (a 64-bit word is checked whole: no high bits may be set)
          bad.add("inner node ", id, ": child ", child_word, " beyond the used pool (", used, " nodes)");
          continue;
        }
        const uint32_t child = static_cast<uint32_t>(child_word);
        if (seen[child]) {
          bad.add("node ", child, " is reachable twice (child of ", id, ")");
          continue;
        }
        seen[child] = 1;
        if (nodes[child].w[kLowWord] != nd.w[2 * i])
          bad.add("node ", child, ": low key ", nodes[child].w[kLowWord], ", its parent's pivot ", nd.w[2 * i]);
        const bool child_bounded = link(child) != kNil;
        if (i + 1 < c) {
          if (!child_bounded || nodes[child].w[kHighWord] != nd.w[2 * i + 2])
            bad.add("node ", child, ": high key does not equal its parent's next pivot ", nd.w[2 * i + 2]);
        } else if (bounded != child_bounded || (bounded && nodes[child].w[kHighWord] != high)) {
          bad.add("node ", child, ": the last child's upper bound differs from its parent ", id, "'s");
        }
        next.push_back(child);
      }
    }
    if (leaf_level) break;
    level.swap(next);
  }
  if (keys != h.size) bad.add("the leaves hold ", keys, " keys, the size counter says ", h.size);
  if (leaves != h.leaves) bad.add("the tree has ", leaves, " leaves, the counter says ", h.leaves);
  if (depth != h.height) bad.add("the tree has ", depth, " levels, the height counter says ", h.height);
  if (h.error) bad.add("the internal error flag is set");
  uint64_t reached = 0;
  for (uint8_t s : seen) reached += s;
  // Every allocated node is in the tree, but for one per time the pool
  // filled: a root split asks for two nodes at once, and when the pool's
  // last free node is the first of them, that one is lost (the cursor is
  // clamped to the capacity and the batch runs again on a grown pool).
  // Every other allocation takes one node and fails whole.
  const uint64_t may_lose = pool_retries + (h.overflow != 0 ? 1 : 0);
  if (used - reached > may_lose)  // reached <= used: `seen` has one entry per node
    bad.add(used - reached, " of ", used, " allocated nodes are not reachable from the root (", may_lose,
            " may be: one per time the pool filled)");
  if (reported_size != keys) bad.add("stats().size is ", reported_size, ", the leaves hold ", keys);
  return bad.str();
}

template std::string check_btree_structure(const btree_map<uint32_t, uint32_t>&);
template std::string check_btree_structure(const btree_map<uint32_t, uint64_t>&);
template std::string check_btree_structure(const btree_map<uint64_t, uint32_t>&);
template std::string check_btree_structure(const btree_map<uint64_t, uint64_t>&);
template std::string check_btree_nodes<uint32_t>(const std::vector<Node<uint32_t>>&, const btree::TreeHeader&,
                                                 uint64_t, uint64_t);
template std::string check_btree_nodes<uint64_t>(const std::vector<Node<uint64_t>>&, const btree::TreeHeader&,
                                                 uint64_t, uint64_t);

}  // namespace gpudict
