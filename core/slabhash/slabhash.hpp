// The slab hash with SlabAlloc (Ashkiani, Farach-Colton, Owens, IPDPS 2018,
// seed 004): a chained hash table whose buckets are lists of 128-byte slabs,
// served by warp-cooperative work sharing, with its own slab allocator.
// Modes map (unique keys, REPLACE), multimap (duplicates, INSERT) and set
// (keys only). Keys and values of u32/u32, u32/u64 and u64/u64 (u64 keys
// with u32 values run as u64/u64); every key and value of a width is
// storable.
// docs/slabhash.md.
#pragma once

#include <memory>
#include <string>

#include "core/api/dictionary.hpp"
#include "core/slabhash/options.hpp"

namespace gpudict {

// The capabilities of a mode: unordered, count and range of a single key
// only, deletes, native concurrent batches; phased duplicates AnyUpdate
// (map, set) or DeletesThenInserts (multimap).
Capabilities slabhash_caps_of(slabhash::Mode mode);
// The map mode's capabilities (the default mode's).
Capabilities slabhash_caps();

// The slab hash behind the replay engine's interface, on `device`:
// u32/u32, u32/u64 and u64/u64 (with_kv_types: u64 keys with u32 values run
// on u64/u64). Throws InputError for invalid options (slabhash::validate).
std::unique_ptr<Dictionary> make_slabhash_dictionary(const slabhash::Options& options, int device, KeyType key,
                                                     KeyType value);

// "slabhash answers count and range for a single key only (lo == hi); got
// count [lo, hi] in batch B" (InputError). Through the replay engine such a
// batch is refused before it reaches the structure (refuse_unsupported, in
// workloads/cpu_backend.hpp, with the structures that answer it); this is
// the structure's own check for callers that execute batches directly.
std::string slabhash_point_query_message(OpType type, uint64_t lo, uint64_t hi, uint64_t batch);

}  // namespace gpudict
