// The GPU B-Tree (Awad et al., PPoPP 2019, seed 002; seed 001 ch. 3): a
// B-link tree of 128-byte nodes, read without latches (seqlock snapshots),
// written under one latch per node, split proactively, served by tiles of
// cooperating lanes, one operation at a time per tile. Every 32-bit key and
// value is legal. docs/btree.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/api/dictionary.hpp"
#include "core/api/registry.hpp"

namespace gpudict {

// Ordered queries and deletes, no snapshots; native concurrent batches;
// several updates of one key in a phased batch: any one of them wins (they
// run concurrently in one kernel). u32 keys and values.
Capabilities btree_caps();

// --node-pool (nodes, 0 = automatic), --fill (bulk-build fill), --tile (8, 16
// or 32 lanes per operation), --sort (on/off: sort each batch by key).
std::vector<OptionSpec> btree_options();

// Throws InputError naming the option (also used with --backend cpu).
void validate_btree_options(const StructureConfig& config);

// Throws InputError for key or value types other than u32 and for bad options.
std::unique_ptr<Dictionary> make_btree(const StructureConfig& config);

}  // namespace gpudict
