// The structures behind the replay engine: each one's capabilities and its
// factory, a ContainerDictionary (container_dictionary.hpp) over its
// container, instantiated for the engine's key and value widths. Defined in
// workloads/adapter/<structure>_engine.cpp.
#pragma once

#include <memory>
#include <string>

#include "workloads/dictionary.hpp"
#include "core/btree/btree_map.hpp"
#include "core/btree/options.hpp"
#include "core/graph/options.hpp"
#include "core/lsm/options.hpp"
#include "core/mvbtree/options.hpp"
#include "core/slabhash/options.hpp"

namespace gpudict {

// Ordered queries, deletes, snapshots; u32 and u64 keys and values; a
// concurrent batch runs as its updates then its queries; several updates of
// one key in a phased batch: the last (batch order) wins.
Capabilities sorted_array_caps();
// u32/u32, u32/u64 and u64/u64 (u64 keys with u32 values run on u64/u64).
std::unique_ptr<Dictionary> make_sorted_array_dictionary(int device, KeyType key, KeyType value);

// Ordered queries and deletes, no snapshots; native concurrent batches (one
// kernel); u32 and u64 keys and values; several updates of one key in a
// phased batch: any one wins (the operations kernel; merged lists keep the
// last).
Capabilities btree_caps();
// u32/u32, u32/u64 and u64/u64 (u64 keys with u32 values run on u64/u64).
// Throws InputError for invalid options (btree::validate).
std::unique_ptr<Dictionary> make_btree_dictionary(const btree::Options& options, int device, KeyType key,
                                                  KeyType value);
// The report's parameters of a B-Tree with these options, key/value pair
// ("u32/u64") and node word (4 or 8 bytes); the multiversion tree's too.
Params btree_parameters(const btree::Options& options, const std::string& kv, int word_bytes);
// The report's figures of a B-Tree (final_stats), the multiversion tree's too.
Params btree_stat_rows(const btree_stats& stats);

// Ordered queries, deletes, snapshots (O(1), leaf states kept as versions);
// native concurrent batches; u32 and u64 keys and values; several updates
// of one key in a phased batch: any one wins (as the B-Tree).
Capabilities mvbtree_caps();
// u32/u32, u32/u64 and u64/u64 (u64 keys with u32 values run on u64/u64).
// Throws InputError for invalid options (mvbtree::validate).
std::unique_ptr<Dictionary> make_mvbtree_dictionary(const mvbtree::Options& options, int device, KeyType key,
                                                    KeyType value);

// Ordered queries, deletes, snapshots; u32 and u64 keys and values; a
// concurrent batch runs as its updates, then its queries; several updates
// of one key in a phased batch: a delete wins, otherwise one insert (the
// last in batch order).
Capabilities lsm_caps();
// u32/u32, u32/u64 and u64/u64 (u64 keys with u32 values run on u64/u64).
// Throws InputError for invalid options (lsm::validate).
std::unique_ptr<Dictionary> make_lsm_dictionary(const lsm::Options& options, int device, KeyType key, KeyType value);

// Unordered; counts and ranges of one key (lo == hi); deletes; no
// snapshots; native concurrent batches (one kernel); u32 and u64 keys and
// values. Several updates of one key in a phased batch: any one wins
// (multimap: every delete, then every insert).
Capabilities slabhash_caps_of(slabhash::Mode mode);
Capabilities slabhash_caps();  // map mode
// The refusal of a count or range over more than one key, word for word as
// the CPU backend gives it.
std::string slabhash_point_query_message(OpType type, uint64_t lo, uint64_t hi, uint64_t batch);
// u32/u32, u32/u64 and u64/u64 (u64 keys with u32 values run on u64/u64).
// Throws InputError for invalid options (slabhash::validate).
std::unique_ptr<Dictionary> make_slabhash_dictionary(const slabhash::Options& options, int device, KeyType key,
                                                     KeyType value);

// The dynamic graph: edges as u64 keys u * 2^32 + v; count and range over
// whole vertex blocks (degree, neighbours); deletes; no snapshots; a
// concurrent batch runs as its updates, then its queries. Several updates
// of one edge in a batch: any one wins.
Capabilities graph_caps();
Capabilities graph_caps_of(graph::Variant variant);
// u64 keys; u32 or u64 values (u32 weights are stored as u64). Throws
// InputError for invalid options (graph::validate) or 32-bit keys.
std::unique_ptr<Dictionary> make_graph_dictionary(const graph::Options& options, int device, KeyType key,
                                                  KeyType value);

}  // namespace gpudict
