// The structures behind the replay engine: each one's capabilities and its
// factory, a ContainerDictionary (container_dictionary.hpp) over its
// container, instantiated for the engine's key and value widths. Defined in
// workloads/adapter/<structure>_engine.cpp.
#pragma once

#include <memory>

#include "core/api/dictionary.hpp"
#include "core/lsm/options.hpp"

namespace gpudict {

// Ordered queries, deletes, snapshots; u32 and u64 keys and values; a
// concurrent batch runs as its updates then its queries; several updates of
// one key in a phased batch: the last (batch order) wins.
Capabilities sorted_array_caps();
// u32/u32, u32/u64 and u64/u64 (u64 keys with u32 values run on u64/u64).
std::unique_ptr<Dictionary> make_sorted_array_dictionary(int device, KeyType key, KeyType value);

// Ordered queries, deletes, snapshots; u32 and u64 keys and values; a
// concurrent batch runs as its updates, then its queries; several updates
// of one key in a phased batch: a delete wins, otherwise one insert (the
// last in batch order).
Capabilities lsm_caps();
// u32/u32, u32/u64 and u64/u64 (u64 keys with u32 values run on u64/u64).
// Throws InputError for invalid options (lsm::validate).
std::unique_ptr<Dictionary> make_lsm_dictionary(const lsm::Options& options, int device, KeyType key, KeyType value);

}  // namespace gpudict
