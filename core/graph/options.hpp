// The dynamic graph's options as a typed struct (the library's graph_map and
// the command line's flags both configure it).
#pragma once

#include <cstdint>

#include "core/slabhash/options.hpp"

namespace gpudict::graph {

// map: every edge keeps a value (a weight); set: destinations only (Awad's
// dissertation, 5.4). Both store an edge as its 64-bit key u * 2^32 + v.
enum class Variant : std::uint8_t { Map = 0, Set = 1 };
inline constexpr const char* variant_name(Variant v) { return v == Variant::Map ? "map" : "set"; }

inline constexpr double kDefaultLoadFactor = 0.7;  // chapter 5's choice in every run
inline constexpr std::uint64_t kDefaultMaxVertices = 1ull << 28;
inline constexpr std::uint64_t kMaxVertices = (1ull << 31);  // every vertex has a bucket; buckets are 32-bit

struct Options {
  Variant variant = Variant::Map;
  // Chapter 5's load factor: edges per bucket slot. A vertex of degree d
  // gets max(1, ceil(d / (load_factor * slots per slab))) buckets when the
  // graph is built; a vertex first named later gets 1.
  double load_factor = kDefaultLoadFactor;
  // Vertices with buckets before any growth; 0: those the build names.
  std::uint64_t vertex_capacity = 0;
  // The vertex ids an insert may name: [0, max_vertices). A batch naming a
  // vertex beyond the capacity grows it (doubling, up to this); beyond this
  // it fails (RuntimeFailure naming the field).
  std::uint64_t max_vertices = kDefaultMaxVertices;
  // The slab pool and its cleanup, as the slab hash's (core/slabhash/options.hpp).
  std::uint64_t pool_slabs = 0;  // 0: automatic
  bool growth = true;
  std::uint64_t max_pool_bytes = 0;
  double flush_tombstones = slabhash::kDefaultFlushTombstones;
};

// Throws InputError naming the field when a value is outside its range.
void validate(const Options& o);

}  // namespace gpudict::graph
