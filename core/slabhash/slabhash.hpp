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
#include <vector>

#include "core/api/dictionary.hpp"
#include "core/api/registry.hpp"
#include "core/slabhash/options.hpp"

namespace gpudict {

// Capabilities of `--mode map|multimap|set` (throws InputError for another
// mode): unordered, count and range of a single key only, deletes, native
// concurrent batches; phased duplicates AnyUpdate (map, set) or
// DeletesThenInserts (multimap).
Capabilities slabhash_caps_for(const StructureConfig& config);
// The map mode's capabilities (the registry's default entry).
Capabilities slabhash_caps();
Capabilities slabhash_caps_of(slabhash::Mode mode);

namespace slabhash {
// Options from the command line; throws InputError naming the option.
Options parse_options(const StructureConfig& config);
}  // namespace slabhash

// --mode, --buckets, --load-factor, --expected-keys, --pool-slabs,
// --pool-growth, --max-pool-bytes, --flush-every, --flush-tombstones, --prefetch.
std::vector<OptionSpec> slabhash_options();

// Throws InputError naming the option when an option is invalid (also used
// with --backend cpu).
void validate_slabhash_options(const StructureConfig& config);

std::unique_ptr<Dictionary> make_slabhash(const StructureConfig& config);

// "slabhash answers count and range for a single key only (lo == hi); got
// count [lo, hi] in batch B; ordered count and range: ..." (exit 2).
std::string slabhash_point_query_message(OpType type, uint64_t lo, uint64_t hi, uint64_t batch);

}  // namespace gpudict
