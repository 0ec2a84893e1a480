// `--backend cpu`: a workload run on the CPU reference alone (an ordered map
// with snapshots), behind the same Dictionary interface as the GPU structures.
#pragma once

#include <memory>

#include "core/api/dictionary.hpp"

namespace gpudict {

// `caps` are the chosen structure's capabilities: the CPU backend refuses what
// the structure refuses and resolves several updates of one key in a phased
// batch by the structure's rule (deterministically: LastWins and AnyUpdate take
// the last update; DeleteWinsElseAny takes a delete if any, else the last insert).
std::unique_ptr<Dictionary> make_cpu_dictionary(const Capabilities& caps, KeyType key_type, KeyType value_type);

}  // namespace gpudict
