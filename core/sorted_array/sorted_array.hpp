// The GPU sorted array (the "GPU SA" baseline of the GPU LSM paper): keys and
// values in two device arrays sorted by key, a static fence index for
// searches, batched updates by sort + one fused merge pass. docs/sorted-array.md.
#pragma once

#include <memory>

#include "core/api/dictionary.hpp"

namespace gpudict {

// What the sorted array supports: ordered queries, deletes, snapshots; u32 and
// u64 keys and values; a concurrent batch runs as its updates then its queries; several
// updates of one key in a phased batch: the last (batch order) wins.
Capabilities sorted_array_caps();

// The sorted array behind the replay engine's interface, on `device`:
// u32/u32, u32/u64 and u64/u64 (with_kv_types: u64 keys with u32 values run
// on u64/u64). Takes no options.
std::unique_ptr<Dictionary> make_sorted_array_dictionary(int device, KeyType key, KeyType value);

}  // namespace gpudict
