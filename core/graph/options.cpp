// The dynamic graph's option checks.
#include "core/graph/options.hpp"

#include <cmath>
#include <string>

#include "core/common/errors.hpp"

namespace gpudict::graph {

void validate(const Options& o) {
  auto bad = [](const std::string& what, const char* field) { throw InputError("graph options: " + what, field); };
  if (o.variant != Variant::Map && o.variant != Variant::Set) bad("variant is not map or set", "variant");
  if (!std::isfinite(o.load_factor) || o.load_factor <= 0.0 || o.load_factor > 64.0)
    bad("load_factor " + std::to_string(o.load_factor) + " is not in (0, 64] (edges per bucket slot)", "load_factor");
  if (o.max_vertices == 0 || o.max_vertices > kMaxVertices)
    bad("max_vertices " + std::to_string(o.max_vertices) + " is not in [1, 2^31]", "max_vertices");
  if (o.vertex_capacity > o.max_vertices)
    bad("vertex_capacity " + std::to_string(o.vertex_capacity) + " is more than max_vertices " +
            std::to_string(o.max_vertices),
        "vertex_capacity");
  if (o.pool_slabs > (1ull << 30)) bad("pool_slabs " + std::to_string(o.pool_slabs) + " is more than 2^30", "pool_slabs");
  if (!std::isfinite(o.flush_tombstones) || o.flush_tombstones < 0.0)
    bad("flush_tombstones " + std::to_string(o.flush_tombstones) + " is not a fraction >= 0", "flush_tombstones");
}

}  // namespace gpudict::graph
