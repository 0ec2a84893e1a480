// The multiversion B-Tree's options as a typed struct (the library's
// mvbtree_map and the command line's flags both configure it).
#pragma once

#include <cstdint>

#include "core/btree/options.hpp"

namespace gpudict::mvbtree {

struct Options {
  btree::Options tree;  // the B-Tree under the versions (docs/btree.md, "Options")
  // The global stamp is renumbered (docs/mvbtree.md, "Stamps") before a
  // snapshot would take a stamp above this: 2^32 - 2 by default, so the
  // 32-bit stamps never wrap however many snapshots a run takes. Tests lower
  // it to run the renumbering.
  std::uint32_t stamp_limit = 0xFFFFFFFEu;
};

// Throws InputError naming the field when a value is outside its range.
void validate(const Options& o);

}  // namespace gpudict::mvbtree
