// The B-Tree checker (core/btree/detail/btree_check.hpp) on what the
// engine's factory returns: the tree of the btree_map inside the engine's
// adapter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/btree/detail/btree_check.hpp"
#include "workloads/adapter/container_dictionary.hpp"

namespace gpudict {

// Calls f(map) with the btree_map behind d; false when d holds none.
template <class F>
bool with_btree_map(const Dictionary& d, F&& f) {
  if (auto* c = dynamic_cast<const ContainerDictionary<btree_map<uint32_t, uint32_t>>*>(&d)) return f(c->container());
  if (auto* c = dynamic_cast<const ContainerDictionary<btree_map<uint32_t, uint64_t>>*>(&d)) return f(c->container());
  if (auto* c = dynamic_cast<const ContainerDictionary<btree_map<uint64_t, uint32_t>>*>(&d)) return f(c->container());
  if (auto* c = dynamic_cast<const ContainerDictionary<btree_map<uint64_t, uint64_t>>*>(&d)) return f(c->container());
  return false;
}

// "" when the tree is sound, else its problems ("not a btree" for another structure).
inline std::string check_btree_structure(const Dictionary& d) {
  std::string problems = "not a btree";
  with_btree_map(d, [&](const auto& map) {
    problems = check_btree_structure(map);
    return true;
  });
  return problems;
}

// The used pool and counters of d's tree; false when d is not a B-Tree of
// nodes of Word.
template <class Word>
bool dump_btree(const Dictionary& d, std::vector<btree::Node<Word>>& nodes, btree::TreeHeader& header) {
  return with_btree_map(d, [&](const auto& map) {
    using Map = std::decay_t<decltype(map)>;
    using I = btree::Inspect<typename Map::key_type, typename Map::mapped_type>;
    if constexpr (std::is_same_v<typename I::Word, Word>) {
      I::dump(map, nodes, header);
      return true;
    } else {
      return false;
    }
  });
}

}  // namespace gpudict
