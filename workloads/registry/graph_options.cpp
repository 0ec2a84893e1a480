// The dynamic graph's command-line side: its options as --help shows them,
// their parsing into graph::Options (errors name the flag), the
// capabilities of --variant and the registry's factory. The structure
// itself (core/graph) knows none of this.
#include <cmath>
#include <string>

#include "core/common/errors.hpp"
#include "workloads/adapter/structures.hpp"
#include "workloads/registry/structures.hpp"

namespace gpudict {

Capabilities graph_caps_for(const StructureConfig& config) { return graph_caps_of(graph::parse_options(config).variant); }

std::vector<OptionSpec> graph_option_specs() {
  const graph::Options d;  // the defaults --help shows
  return {
      {"variant", "map (every edge keeps a weight, the workload's value; insert replaces it) or set (edges only)",
       graph::variant_name(d.variant), "{map,set}"},
      {"load-factor",
       "chapter 5's load factor: edges per bucket slot. The build gives each vertex max(1, ceil(degree / "
       "(load-factor x slots per slab))) buckets (7 edges per slab in map, 15 in set); a vertex first named "
       "later gets 1",
       shortest_text(d.load_factor), "FLOAT:in (0, 64]"},
      {"vertex-capacity", "vertices with buckets before any growth (0: those the initial edges name)", std::to_string(d.vertex_capacity), "UINT"},
      {"max-vertices",
       "vertex ids an edge may name are below this, at most 2^31; a batch naming a vertex beyond the capacity grows "
       "it (at least doubling), one beyond this ends the run (exit 3)",
       std::to_string(d.max_vertices), "UINT"},
      {"pool-slabs", "slabs in SlabAlloc's first super block (0: automatic); as slabhash's", std::to_string(d.pool_slabs), "UINT"},
      {"pool-growth", "on: the pool grows ahead of inserts and when full; off: exit 3 with 'out of slab memory'",
       on_off(d.growth), "{on,off}"},
      {"max-pool-bytes", "growth never takes the pool past this many bytes (0: device memory is the limit)", std::to_string(d.max_pool_bytes), "UINT"},
      {"flush-tombstones",
       "FLUSH (compact every chain) after an update batch that leaves more deleted slots than this fraction of the "
       "base slots (0: never)",
       shortest_text(d.flush_tombstones), "FLOAT:>= 0"},
  };
}

void validate_graph_options(const StructureConfig& config) { (void)graph::parse_options(config); }

std::unique_ptr<Dictionary> make_graph(const StructureConfig& config) {
  return make_graph_dictionary(graph::parse_options(config), config.device, config.key_type, config.value_type);
}

namespace graph {

namespace {
bool given(const StructureConfig& c, const char* name) {
  auto it = c.options.find(name);
  return it != c.options.end() && !it->second.empty();
}
}  // namespace

Options parse_options(const StructureConfig& config) {
  Options o;
  if (given(config, "variant")) o.variant = config.get_one_of("variant", {"map", "set"}) == 0 ? Variant::Map : Variant::Set;
  if (given(config, "load-factor")) {
    const double x = config.get_double("load-factor");
    if (!std::isfinite(x) || x <= 0.0 || x > 64.0)
      throw InputError("--load-factor: '" + config.get("load-factor") + "' is not in (0, 64]");
    o.load_factor = x;
  }
  if (given(config, "max-vertices")) {
    o.max_vertices = config.get_u64("max-vertices");
    if (o.max_vertices == 0 || o.max_vertices > kMaxVertices)
      throw InputError("--max-vertices: '" + config.get("max-vertices") + "' is not between 1 and 2^31");
  }
  if (given(config, "vertex-capacity")) {
    o.vertex_capacity = config.get_u64("vertex-capacity");
    if (o.vertex_capacity > o.max_vertices)
      throw InputError("--vertex-capacity: '" + config.get("vertex-capacity") + "' is more than --max-vertices " +
                       std::to_string(o.max_vertices));
  }
  if (given(config, "pool-slabs")) {
    o.pool_slabs = config.get_u64("pool-slabs");
    if (o.pool_slabs > (1ull << 30))
      throw InputError("--pool-slabs: '" + config.get("pool-slabs") + "' is more than 2^30 slabs (128 GiB)");
  }
  if (given(config, "pool-growth")) o.growth = config.get_choice("pool-growth", "on", "off");
  if (given(config, "max-pool-bytes")) o.max_pool_bytes = config.get_u64("max-pool-bytes");
  if (given(config, "flush-tombstones")) {
    const double x = config.get_double("flush-tombstones");
    if (!std::isfinite(x) || x < 0.0)
      throw InputError("--flush-tombstones: '" + config.get("flush-tombstones") + "' is not a fraction >= 0");
    o.flush_tombstones = x;
  }
  validate(o);
  return o;
}

}  // namespace graph
}  // namespace gpudict
