// The GPU LSM (Ashkiani et al., IPDPS 2018, seed 000): levels of sorted
// arrays of capacity b 2^i, each full or empty; tombstones for deletes;
// lookups from the most recent level down; count/range by a candidate sort;
// cleanup by merging every level. u32/u32, u32/u64 and u64/u64 keys and
// values, every key and value of the width legal.
// Level memory is reference-counted, so snapshots are O(levels).
// docs/lsm.md.
#pragma once

#include <memory>

#include "core/api/dictionary.hpp"
#include "core/lsm/options.hpp"

namespace gpudict {

// Ordered queries, deletes, snapshots; u32 and u64 keys and values; a concurrent batch
// runs as its updates, then its queries; several updates of one key in a
// phased batch: a delete wins, otherwise one insert (the last in batch order).
Capabilities lsm_caps();

// The LSM behind the replay engine's interface, on `device`: u32/u32,
// u32/u64 and u64/u64 (with_kv_types: u64 keys with u32 values run on
// u64/u64). Throws InputError for invalid options (lsm::validate).
std::unique_ptr<Dictionary> make_lsm_dictionary(const lsm::Options& options, int device, KeyType key, KeyType value);

}  // namespace gpudict
