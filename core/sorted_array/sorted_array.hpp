// The GPU sorted array (the "GPU SA" baseline of the GPU LSM paper): keys and
// values in two device arrays sorted by key, a static fence index for
// searches, batched updates by sort + one fused merge pass. docs/sorted-array.md.
#pragma once

#include <memory>

#include "core/api/dictionary.hpp"
#include "core/api/registry.hpp"

namespace gpudict {

// What the sorted array supports: ordered queries, deletes, snapshots; u32 keys
// and values; a concurrent batch runs as its updates then its queries; several
// updates of one key in a phased batch: the last (batch order) wins.
Capabilities sorted_array_caps();

// Throws InputError for a key or value type other than u32. Takes no options.
std::unique_ptr<Dictionary> make_sorted_array(const StructureConfig& config);

}  // namespace gpudict
