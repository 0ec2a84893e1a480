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
//     strictly increasing), their number equals stats().size, and the height
//     and leaf count equal the tree's counters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/dictionary.hpp"
#include "core/btree/detail/node.hpp"

namespace gpudict {

// "" when the structure is sound, else the first problems found (a
// Dictionary that is not a B-Tree is reported as such). Trees of either
// word width (node.hpp).
std::string check_btree_structure(const Dictionary& d);

// The same checks on a copy of the used pool and the counters (what
// dump_btree gives), with `reported_size` as stats().size and
// `pool_retries` the times the pool filled in a batch and grew (at most
// one node lost each). Tests corrupt a copy to show the checker sees it.
// Word: uint32_t or uint64_t (instantiated for both in check.cu).
template <class Word>
std::string check_btree_nodes(const std::vector<btree::Node<Word>>& nodes, const btree::TreeHeader& header,
                              uint64_t reported_size, uint64_t pool_retries);

// The used part of the node pool and the counters, for tests that run
// device code on a copy of a tree; false when `d` is not a B-Tree of
// nodes of Word.
template <class Word>
bool dump_btree(const Dictionary& d, std::vector<btree::Node<Word>>& nodes, btree::TreeHeader& header);

}  // namespace gpudict
