// The one interface the replay engine drives. Every structure (GPU or the CPU
// reference backend) implements it; the engine never knows which it runs.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workloads/batch.hpp"
#include "core/common/capacity_bounds.hpp"

namespace gpudict {

// What one key's several updates in one *phased* batch may leave behind. The
// verifier accepts exactly the outcomes the structure's rule allows.
enum class DuplicateRule : uint8_t {
  LastWins,          // the batch's last update to the key (batch order) takes effect
  DeleteWinsElseAny, // any delete of the key wins; otherwise one of its inserts (GPU LSM, III-A)
  AnyUpdate,         // the effect of one of the batch's updates to the key
  DeletesThenInserts,  // the batch's deletes of the key take effect, then all of its inserts
                       // (multimap: the key keeps every inserted value; map/set: one insert wins)
};

// What a key may hold (docs/semantics.md).
enum class Semantics : uint8_t {
  Map,       // unique keys, one value each (insert replaces)
  Multimap,  // a key may hold several values (insert adds a pair; delete removes every pair of the key)
  Set,       // keys only (values are ignored and reported as 0)
};
std::string_view semantics_name(Semantics s);
std::string_view rule_name(DuplicateRule r);
std::string_view rule_description(DuplicateRule r);

// Whether [lo, hi] is one vertex's block of edge keys: an edge (u, v) is
// the key u * 2^32 + v, so u's edges are [u * 2^32, u * 2^32 + 2^32 - 1].
inline bool is_vertex_block(uint64_t lo, uint64_t hi) { return (lo & 0xFFFFFFFFull) == 0 && hi == (lo | 0xFFFFFFFFull); }
// The refusal of a count or range that is not a vertex block, word for
// word in the graph and in the CPU backend.
std::string vertex_block_query_message(const std::string& structure, OpType type, uint64_t lo, uint64_t hi,
                                       uint64_t batch);

struct Capabilities {
  bool ordered = false;          // count, range, successor
  bool deletes = true;
  bool snapshots = false;
  bool native_concurrent = false;  // false: a concurrent batch runs as updates-then-queries,
                                   // which the concurrent semantics allow
  // A concurrent batch's queries all read the state before its updates
  // (one linearization: queries first). The verifier then checks them
  // exactly, with no allowance for the keys the batch updates.
  bool concurrent_queries_first = false;
  DuplicateRule phased_duplicates = DuplicateRule::LastWins;
  std::vector<KeyType> key_types = {KeyType::U32};
  Semantics semantics = Semantics::Map;
  // Unordered structures (hash tables) that still answer count and range of a
  // single key (lo == hi): a key's multiplicity and all of its values. Any
  // other count or range is refused (exit 2).
  bool point_count_range = false;
  // Unordered structures that answer count and range of a whole vertex
  // block of edge keys, [u * 2^32, u * 2^32 + 2^32 - 1] (the graph: a
  // vertex's degree and neighbours). Any other count or range is refused
  // (exit 2).
  bool vertex_count_range = false;

  // The graph operations (ops.hpp): vertex deletes and triangle counts
  // over the edge keys u * 2^32 + v.
  bool vertex_delete = false;
  bool triangles = false;
  // live_keys() is exactly the live keys: verified runs compare it with
  // the reference after every batch (where the reference knows its size).
  bool exact_size = false;

  bool supports(OpType t) const {
    if (t == OpType::Delete) return deletes;
    if (t == OpType::VertexDelete) return vertex_delete;
    if (t == OpType::Triangles) return triangles;
    if (t == OpType::Count || t == OpType::Range) return ordered || point_count_range || vertex_count_range;
    if (is_ordered_query(t)) return ordered;
    return true;
  }
  bool supports(KeyType t) const {
    for (KeyType k : key_types)
      if (k == t) return true;
    return false;
  }
  // Value widths, when they differ from the key widths (empty: key_types).
  std::vector<KeyType> value_types;
  bool supports_value(KeyType t) const {
    if (value_types.empty()) return supports(t);
    for (KeyType k : value_types)
      if (k == t) return true;
    return false;
  }
};

// Categories the report times separately. A phased batch's inserts and
// deletes run in one pass, timed as `update`; a concurrent batch is one pass.
enum class Phase : uint8_t {
  Build = 0,
  Update,
  Lookup,
  Count,
  Range,
  Successor,
  Concurrent,
  Snapshot,
  Cleanup,
  VertexDelete,  // a batch's vertex deletes (after its edge updates)
  Triangles,
};
inline constexpr int kNumPhases = 11;
std::string_view phase_name(Phase p);
Phase query_phase(OpType t);  // lookup/count/range/successor/triangles -> its phase

// Device time the structure spent, per category (milliseconds, CUDA events
// around device work only; the CPU backend reports its own compute time).
struct DeviceTime {
  std::array<double, kNumPhases> ms{};
  void add(Phase p, double v) { ms[static_cast<int>(p)] += v; }
  double& operator[](Phase p) { return ms[static_cast<int>(p)]; }
  double operator[](Phase p) const { return ms[static_cast<int>(p)]; }
};

// Upper bounds the engine derives from a workload before running it, so a
// structure can say how much device memory it needs before it allocates:
// the containers' own bounds (core/common/capacity_bounds.hpp). For a
// workload: max_resident is the initial count plus every insert, at most the
// key domain (2^32 for u32); max_inserted the same, uncapped; max_batch the
// largest batch; max_queries the most queries in a batch; max_snapshots the
// most snapshots alive at once.
using WorkloadBounds = capacity_bounds;

using Params = std::vector<std::pair<std::string, std::string>>;

struct Stats {
  uint64_t size = 0;          // live keys (structures that cannot tell cheaply report stored elements)
  uint64_t device_bytes = 0;  // device memory held (structure + snapshots + scratch)
  Params extra;               // structure-specific figures (levels, height, ...)
};

class Dictionary {
 public:
  virtual ~Dictionary() = default;

  virtual const Capabilities& caps() const = 0;
  // Parameters as the report shows them ("name", "value").
  virtual Params parameters() const = 0;
  // Device bytes this structure would need for a workload within `b`.
  virtual uint64_t device_bytes_needed(const WorkloadBounds& b) const = 0;

  // Replace the contents with `initial` (later duplicates win).
  virtual void build(const KeyValues& initial, DeviceTime& t) = 0;
  // Run one batch; `r` is sized and filled for every query of the batch.
  virtual void execute(const Batch& batch, BatchResults& r, DeviceTime& t) = 0;
  // Named snapshots (caps().snapshots). Names are unique among live snapshots.
  virtual void snapshot(const std::string& name, DeviceTime& t) = 0;
  virtual void drop_snapshot(const std::string& name) = 0;
  // A workload's `cleanup` step: drop stale internal state (the LSM's
  // tombstones and replaced elements, the slab hash's emptied slabs) without
  // changing what any query returns. Structures without such state do nothing.
  virtual void cleanup(DeviceTime& t) { (void)t; }

  virtual Stats stats() const = 0;
  // Live keys, where caps().exact_size says it is exact: what a verified
  // run compares after every batch, so it must be cheap (stats() may read
  // the device). The default: stats().size.
  virtual uint64_t live_keys() const { return stats().size; }

  // The widest keys and values this instance stores. A workload with wider
  // ones is refused by replay (it would be truncated); narrower ones widen
  // losslessly. The default: any width (a host-side store of 64-bit words).
  virtual KeyType key_type() const { return KeyType::U64; }
  virtual KeyType value_type() const { return KeyType::U64; }
};

}  // namespace gpudict
