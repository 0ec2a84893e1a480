// The GPU B-Tree (Awad et al., PPoPP 2019, seed 002; seed 001 ch. 3): a
// B-link tree of 32-word nodes (128 bytes with u32 keys and values, 256 with
// a 64-bit key or value), read without latches (seqlock snapshots), written
// under one latch per node, split proactively, served by tiles of
// cooperating lanes, one operation at a time per tile. Every key and value
// of either width is legal. docs/btree.md.
#pragma once

#include <memory>

#include "core/api/dictionary.hpp"
#include "core/btree/options.hpp"

namespace gpudict {

// Ordered queries and deletes, no snapshots; native concurrent batches;
// several updates of one key in a phased batch: any one of them wins (they
// run concurrently in one kernel). u32 and u64 keys, u32 and u64 values.
Capabilities btree_caps();

// The B-Tree behind the replay engine's interface, on `device`, for the
// key and value types (with_kv_types: u32/u32, u32/u64, u64 keys on
// u64/u64); throws InputError for invalid options (btree::validate).
std::unique_ptr<Dictionary> make_btree_dictionary(const btree::Options& options, int device, KeyType key,
                                                  KeyType value);

}  // namespace gpudict
