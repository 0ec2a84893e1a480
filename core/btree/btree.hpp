// The GPU B-Tree (Awad et al., PPoPP 2019, seed 002; seed 001 ch. 3): a
// B-link tree of 32-word nodes (128 bytes with u32 keys and values, 256 with
// a 64-bit key or value), read without latches (seqlock snapshots), written
// under one latch per node, split proactively, served by tiles of
// cooperating lanes, one operation at a time per tile. Every key and value
// of either width is legal. docs/btree.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/api/dictionary.hpp"
#include "core/api/registry.hpp"

namespace gpudict {

// Ordered queries and deletes, no snapshots; native concurrent batches;
// several updates of one key in a phased batch: any one of them wins (they
// run concurrently in one kernel). u32 and u64 keys, u32 and u64 values.
Capabilities btree_caps();

// --node-pool (nodes, 0 = automatic), --fill (bulk-build fill), --tile (8, 16
// or 32 lanes per operation), --sort (on/off: sort each batch by key).
std::vector<OptionSpec> btree_options();

// Throws InputError naming the option (also used with --backend cpu).
void validate_btree_options(const StructureConfig& config);

// The instantiation for the config's key and value types (with_kv_types:
// u32/u32, u32/u64, u64 keys on u64/u64); throws InputError for bad options.
std::unique_ptr<Dictionary> make_btree(const StructureConfig& config);

}  // namespace gpudict
