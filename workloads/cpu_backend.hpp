// `--backend cpu`: a workload run on the CPU reference alone (sorted arrays,
// or an ordered map for multimaps, with snapshots), behind the same
// Dictionary interface as the GPU structures.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "workloads/dictionary.hpp"

namespace gpudict {

// `caps` are the chosen structure's capabilities (StructureInfo::caps_with):
// the CPU backend follows its semantics (map, multimap, set), refuses what the
// structure refuses (a count or range with lo != hi on a structure that is not
// ordered, when the batch runs: InputError, exit 2) and resolves several
// updates of one key in a phased batch by the structure's rule,
// deterministically (docs/semantics.md, section 9). `structure` names it in
// those messages.
std::unique_ptr<Dictionary> make_cpu_dictionary(const Capabilities& caps, KeyType key_type, KeyType value_type,
                                                const std::string& structure = "this structure");

// The same backend on the std::map store that the sorted arrays replaced for
// maps and sets: the tests' oracle for them (multimaps are std::map in both).
std::unique_ptr<Dictionary> make_cpu_dictionary_map_oracle(const Capabilities& caps,
                                                           const std::string& structure = "this structure");

// The refusal of a count or range over more than one key by a hash structure:
// "slabhash answers count and range for a single key only (lo == hi); got
// count [3, 9] in batch 4; ordered count and range: sorted-array, lsm".
std::string point_query_refusal(const std::string& structure, OpType t, uint64_t lo, uint64_t hi, uint64_t batch);

// What a structure with `caps` refuses in batch number `index` of a run
// (InputError, exit 2): an operation outside its capabilities, and on a hash
// structure a count or range over more than one key. The replay engine runs
// it before every batch on every backend, so the refusals read the same on
// the GPU and the CPU; the CPU backend also runs it on its own.
void refuse_unsupported(const Capabilities& caps, const std::string& structure, const Batch& batch, uint64_t index);

}  // namespace gpudict
