// The dynamic graph (graph_map) behind the replay engine: its capabilities,
// the batches it refuses, the report's parameters and figures, and the
// factory. A workload's keys are edges u * 2^32 + v (64-bit keys); count
// and range over a vertex block are a degree and a neighbour list.
#include <string>

#include <fmt/format.h>

#include "core/graph/graph_map.hpp"
#include "workloads/adapter/container_dictionary.hpp"
#include "workloads/adapter/structures.hpp"

namespace gpudict {

template <>
struct EngineTraits<graph_map> {
  static constexpr const char* name = "graph";

  // Refused before any device work. (Successors and counts or ranges that
  // are not vertex blocks are refused by replay for every structure,
  // refuse_unsupported, and by graph_map itself.)
  static void check_batch(const Batch& b, uint64_t) {
    if (b.size() >= (1ull << 32)) throw InputError("graph: a batch of 2^32 or more operations");
  }

  static Stats stats(const graph_map& m) {
    const graph_stats a = m.stats();
    Stats s;
    s.size = a.edges;
    s.device_bytes = a.device_bytes;
    const uint64_t slabs = a.buckets + a.pool_slabs_used;
    s.extra = {
        {"variant", graph::variant_name(m.options().variant)},
        {"edges", std::to_string(a.edges)},
        {"vertices", std::to_string(a.vertices)},
        {"buckets", std::to_string(a.buckets)},
        {"slabs", std::to_string(slabs)},
        {"pool_slabs_used", std::to_string(a.pool_slabs_used)},
        {"avg_chain_slabs",
         fmt::format("{:.3f}", a.buckets ? static_cast<double>(slabs) / static_cast<double>(a.buckets) : 0.0)},
        {"utilization", fmt::format("{:.3f}", slabs ? static_cast<double>(a.edges) /
                                                          (static_cast<double>(a.slots_per_slab) * slabs)
                                                    : 0.0)},
        {"tombstones", std::to_string(a.tombstones)},
        {"pool_slabs", std::to_string(a.pool_slabs)},
        {"pool_bytes", std::to_string(a.pool_bytes)},
        {"pool_growths", std::to_string(a.pool_growths)},
        {"vertex_growths", std::to_string(a.vertex_growths)},
        {"vertex_moves", std::to_string(a.vertex_moves)},
        {"moved_edges", std::to_string(a.moved_edges)},
        {"vertex_deletes", std::to_string(a.vertex_deletes)},
        {"flushes", std::to_string(a.flushes)},
        {"scratch_bytes", std::to_string(a.scratch_bytes)},
    };
    return s;
  }
};

Capabilities graph_caps() {
  Capabilities c;
  c.ordered = false;
  c.vertex_count_range = true;
  c.vertex_delete = true;
  c.triangles = true;
  c.exact_size = true;  // live edges: the table's counters, kept by every call
  c.deletes = true;
  c.snapshots = false;
  c.native_concurrent = false;  // a concurrent batch runs as its updates, then its queries
  c.key_types = {KeyType::U64};  // edges
  c.value_types = {KeyType::U32, KeyType::U64};  // weights (u32 ones stored as u64)
  c.semantics = Semantics::Map;
  c.phased_duplicates = DuplicateRule::AnyUpdate;
  return c;
}

Capabilities graph_caps_of(graph::Variant variant) {
  Capabilities c = graph_caps();
  if (variant == graph::Variant::Set) c.semantics = Semantics::Set;
  return c;
}

namespace {

Params graph_parameters(const graph_options& o, const graph_stats& st) {
  const bool map = o.variant == graph::Variant::Map;
  return {
      {"variant", std::string(graph::variant_name(o.variant)) +
                      (map ? " (an edge keeps a u64 weight; insert replaces it)" : " (edges only)")},
      {"edges", "key u * 2^32 + v; vertex ids below max_vertices " + std::to_string(o.max_vertices)},
      {"tables", "one slab hash per vertex: buckets = max(1, ceil(degree / (" + fmt::format("{:g}", o.load_factor) +
                     " x " + std::to_string(st.slots_per_slab) +
                     "))) from the build's degrees, 1 for a vertex first named later; " +
                     "hashed by v, base slabs of all vertices in one arena"},
      {"slab", "128 B: " + std::to_string(st.slots_per_slab) + (map ? " edges with weights" : " edges") +
                   " (the slab hash's u64 layout), an alive-bit state word, a 32-bit next address"},
      {"vertex_growth", "a batch naming a vertex beyond the capacity grows it (at least doubling, up to max_vertices)"},
      {"resizing", "a vertex whose inserted edges pass twice what its buckets are sized for (and 4 slabs) is counted "
                   "before the call inserts and, if it needs more buckets for the call's edges, moved to new ones"},
      {"degree_neighbours", "count / range over a vertex block: a tile of 4 lanes walks the vertex's buckets and "
                            "chains (neighbours in table order; the report sorts them)"},
      {"pool_growth", o.growth ? "on (ahead of inserts and when full)" : "off (exit 3)"},
      {"vertex_delete", "every chain swept of the edges into the deleted vertices (alive bits cleared), then their own "
                        "chains released; a vertex keeps its id and buckets"},
      {"triangles", "the live edges gathered undirected, sorted, oriented by degree into CSR, sorted out-lists merged "
                    "per oriented edge (exact; the hash tables are not probed)"},
      {"concurrent", "a concurrent batch runs as its updates, then its queries"},
  };
}

}  // namespace

std::unique_ptr<Dictionary> make_graph_dictionary(const graph_options& options, int device, KeyType key,
                                                  KeyType value) {
  if (key != KeyType::U64)
    throw InputError("graph: edges are 64-bit keys u * 2^32 + v (key_type u64, or --key-type u64)");
  (void)value;  // u32 weights widen into the u64 ones
  graph_map map(options, device);
  Params params = graph_parameters(options, map.stats());
  return std::make_unique<ContainerDictionary<graph_map>>(device, std::move(map), graph_caps_of(options.variant),
                                                          std::move(params));
}

}  // namespace gpudict
