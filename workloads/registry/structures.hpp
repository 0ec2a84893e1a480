// Each structure's command-line side, as the registry (registry.cpp) and the
// tests use it: the options as --help shows them (OptionSpec), their
// parsing from text into the structure's typed options (InputError naming
// the flag), and a factory from a StructureConfig. Defined per structure in
// workloads/registry/<structure>_options.cpp; the structures (core/) know
// none of this.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "workloads/dictionary.hpp"
#include "workloads/adapter/structures.hpp"
#include "workloads/registry/registry.hpp"

namespace gpudict {

// sorted-array: no options.
std::unique_ptr<Dictionary> make_sorted_array(const StructureConfig& config);

// lsm: --batch-size, --cleanup-every, --cleanup-stale-fraction, --lookup-filter, --stale-count.
std::vector<OptionSpec> lsm_option_specs();
void validate_lsm_options(const StructureConfig& config);
std::unique_ptr<Dictionary> make_lsm(const StructureConfig& config);
namespace lsm {
Options parse_options(const StructureConfig& config);
}

// btree: --node-pool, --fill, --tile, --sort, --query-tile, --phased-updates,
// --ops-kernel, --op-words, --leaf-groups, --leaf-directory.
std::vector<OptionSpec> btree_option_specs();
void validate_btree_options(const StructureConfig& config);
std::unique_ptr<Dictionary> make_btree(const StructureConfig& config);
namespace btree {
Options parse_options(const StructureConfig& config);
}

// mvbtree: the B-Tree's options (btree_option_specs), for the tree under
// the versions.
std::vector<OptionSpec> mvbtree_option_specs();
void validate_mvbtree_options(const StructureConfig& config);
std::unique_ptr<Dictionary> make_mvbtree(const StructureConfig& config);

// slabhash: --mode, --buckets, --load-factor, --expected-keys, --pool-slabs,
// --pool-growth, --max-pool-bytes, --flush-every, --flush-tombstones, --prefetch.
std::vector<OptionSpec> slabhash_option_specs();
void validate_slabhash_options(const StructureConfig& config);
std::unique_ptr<Dictionary> make_slabhash(const StructureConfig& config);
// The capabilities of the config's --mode (throws InputError for another).
Capabilities slabhash_caps_for(const StructureConfig& config);
namespace slabhash {
Options parse_options(const StructureConfig& config);
}

// graph: --variant, --load-factor, --vertex-capacity, --max-vertices,
// --pool-slabs, --pool-growth, --max-pool-bytes, --flush-tombstones.
std::vector<OptionSpec> graph_option_specs();
void validate_graph_options(const StructureConfig& config);
std::unique_ptr<Dictionary> make_graph(const StructureConfig& config);
// The capabilities of the config's --variant (throws InputError for another).
Capabilities graph_caps_for(const StructureConfig& config);
namespace graph {
Options parse_options(const StructureConfig& config);
}

}  // namespace gpudict
