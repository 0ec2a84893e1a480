// The multiversion B-Tree's structural checker, for tests: copies the tree,
// its version words and its version pool to the host and checks, at rest
// (no kernel running):
//   - the latest tree: every invariant of the B-Tree's checker
//     (core/btree/detail/btree_check.hpp);
//   - every version list: copies inside the pool's used part, none free,
//     none in two lists, each a leaf image, stamps strictly decreasing
//     from the head down; an origin only at a list's end, naming another
//     node of the tree;
//   - every live snapshot's tree: from the leftmost leaf, each head resolves
//     at the snapshot's stamp (its list reaches a stamp at or below it), the
//     states chain by their side links, each state's keys strictly
//     increasing inside [low, high), each high key the next state's low key,
//     and the keys of the whole chain strictly increasing.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/btree/detail/node.hpp"
#include "core/mvbtree/detail/versions.hpp"
#include "core/mvbtree/mvbtree_map.hpp"

namespace gpudict {
namespace mvbtree {

// A copy of everything the checker reads.
template <class Word>
struct VersionDump {
  std::vector<btree::Node<Word>> nodes;  // the B-Tree's used pool
  btree::TreeHeader header{};
  std::vector<VWord> head_v;             // a word per node of `nodes`
  std::vector<btree::Node<Word>> copies; // the version pool's used part
  std::vector<VWord> copy_v;
  std::vector<uint32_t> free_list;
  std::vector<uint32_t> live;            // the live snapshots' stamps
};

// What the checker reads of a map (mvbtree_map grants it; defined in mvbtree_map.cu).
template <class Key, class Value>
struct Inspect {
  using Word = std::conditional_t<sizeof(Key) == 8 || sizeof(Value) == 8, std::uint64_t, std::uint32_t>;
  static void dump(const mvbtree_map<Key, Value>& map, VersionDump<Word>& d);
};

}  // namespace mvbtree

// "" when the map's tree and versions are sound, else the first problems found.
template <class Key, class Value>
std::string check_mvbtree_structure(const mvbtree_map<Key, Value>& map);

// The same checks on a dump (tests corrupt one to show the checker sees it).
template <class Word>
std::string check_mvbtree_versions(const mvbtree::VersionDump<Word>& d, uint64_t reported_size,
                                   uint64_t pool_retries);

}  // namespace gpudict
