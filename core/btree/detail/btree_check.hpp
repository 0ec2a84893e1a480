// The B-Tree's structural checker, for tests: copies the node pool to the
// host and checks every invariant of a tree at rest (no kernel running):
//   - every node reachable from the root: count <= 14, not latched, keys
//     (pivots) strictly increasing and inside [low, high) (no upper bound for
//     a level's last node), inner pivot 0 = low, leaves all at one depth;
//   - each child's low key is its pivot and its high key the next pivot (the
//     parent's high key for the last child);
//   - side links: each level's nodes, left to right, form one chain through
//     their links, the last with no link, and each high key equals the right
//     sibling's low key;
//   - every key in exactly one leaf (the leaves' keys, in chain order, are
//     strictly increasing), their number equals the map's size, and the
//     height and leaf count equal the tree's counters.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/btree/btree_map.hpp"
#include "core/btree/detail/node.hpp"

namespace gpudict {

namespace btree {
// What the checker reads of a map (btree_map grants it; defined in btree_map.cu).
template <class Key, class Value>
struct Inspect {
  using Word = std::conditional_t<sizeof(Key) == 8 || sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  // The used part of the node pool and the counters.
  static void dump(const btree_map<Key, Value>& map, std::vector<Node<Word>>& nodes, TreeHeader& header);
};
}  // namespace btree

// "" when the map's tree is sound, else the first problems found.
template <class Key, class Value>
std::string check_btree_structure(const btree_map<Key, Value>& map);

// The same checks on a copy of the used pool and the counters (what
// Inspect::dump gives), with `reported_size` as the map's size and
// `pool_retries` the times the pool filled in a call and grew (at most
// one node lost each). Tests corrupt a copy to show the checker sees it.
// Word: uint32_t or uint64_t (instantiated for both in check.cu).
template <class Word>
std::string check_btree_nodes(const std::vector<btree::Node<Word>>& nodes, const btree::TreeHeader& header,
                              uint64_t reported_size, uint64_t pool_retries);

}  // namespace gpudict
