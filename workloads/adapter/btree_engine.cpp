// The B-Tree (btree_map) behind the replay engine: its capabilities, the
// batches it refuses, the report's parameters and figures, and the factory.
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "core/btree/btree_map.hpp"
#include "core/common/key_traits.hpp"
#include "workloads/adapter/container_dictionary.hpp"
#include "workloads/adapter/structures.hpp"

namespace gpudict {

Params btree_stat_rows(const btree_stats& a) {
  return {
      {"height", std::to_string(a.height)},
      {"nodes", std::to_string(a.nodes)},
      {"leaves", std::to_string(a.leaves)},
      {"fill", fmt::format("{:.3f}", a.leaves ? static_cast<double>(a.size) / (static_cast<double>(a.leaves) * 14.0)
                                              : 0.0)},
      {"node-bytes", std::to_string(a.node_bytes)},
      {"pool-nodes", std::to_string(a.pool_nodes)},
      {"pool-grows", std::to_string(a.pool_grows)},
      {"pool-retries", std::to_string(a.pool_retries)},
      {"range-reruns", std::to_string(a.range_reruns)},
      {"merged-update-lists", std::to_string(a.merged_update_lists)},
      {"ops-update-lists", std::to_string(a.ops_update_lists)},
      {"point-range-lists", std::to_string(a.point_range_lists)},
      {"tile-range-lists", std::to_string(a.tile_range_lists)},
      {"concurrent-range-reruns", std::to_string(a.concurrent_range_reruns)},
      {"grouped-updates", std::to_string(a.grouped_updates)},
      {"warp-taken-ops", std::to_string(a.warp_taken_ops)},
      {"directory-leaves", std::to_string(a.directory_leaves)},
      {"directory-lists", std::to_string(a.directory_lists)},
  };
}

template <class K, class V>
struct EngineTraits<btree_map<K, V>> {
  static constexpr const char* name = "btree";

  static void check_batch(const Batch& b, uint64_t) {
    if (b.size() >= 0xFFFFFFFFull) throw InputError("btree: a batch holds at most 2^32 - 2 operations");
  }

  static Stats stats(const btree_map<K, V>& m) {
    const btree_stats a = m.stats();
    Stats s;
    s.size = a.size;
    s.device_bytes = a.device_bytes;
    s.extra = btree_stat_rows(a);
    return s;
  }
};

namespace {

using btree::PhasedUpdates;

static_assert(btree::kAutoOpsMaxUpdates == 131072 && btree::kAutoOpsTreeRatio == 16,
              "the parameters say 131072 and 16");

const char* const kMergeText =
    "merge: sorted, routed to their leaves, merged into each touched node by one thread; splits level by level "
    "(split nodes filled like the bulk build)";
const char* const kOpsText = "ops: the operations kernel (ops_kernel), with latches";
const char* const kMergeDuplicates =
    "the last of a key's updates in a phased batch wins (the deletes after the inserts, each in batch order)";
const char* const kOpsDuplicates = "any one of a key's updates in a phased batch wins (they run concurrently)";

// What the parameters say of the path phased_updates takes: `merge` or
// `ops` for one path, `both` for auto.
std::string by_phased_path(const btree::Options& o, const std::string& merge, const std::string& ops,
                           const std::string& both) {
  switch (btree::effective_phased_updates(o)) {
    case PhasedUpdates::Merge: return merge;
    case PhasedUpdates::Ops: return ops;
    case PhasedUpdates::Auto: break;
  }
  return both;
}

}  // namespace

Params btree_parameters(const btree::Options& o, const std::string& kv, int word_bytes) {
  const uint64_t kNodeBytes = 32 * static_cast<uint64_t>(word_bytes);
  const std::string fill = fmt::format("{:g}: {} keys per leaf, {} children per inner node", o.fill,
                                      btree::leaf_fill(o.fill), btree::inner_fill(o.fill));
  const std::string node_text =
      word_bytes == 4 ? std::string("128 B: 14 (key, value) or (pivot, child) pairs of 4-byte words, high key, side "
                                      "link, low key, meta word (count, leaf flag, latch, version); every u32 key and "
                                      "value legal")
                        : std::string("256 B: 32 words of 8 bytes, 14 (key, value) or (pivot, child) pairs, high key, "
                                      "side link, low key, meta word (count, leaf flag, latch, 58-bit version); every "
                                      "key and value of ") + kv + " legal (a u32 key or value zero-extended)";
  return {
      {"kv", kv},
      {"node", node_text},
      {"tile", std::to_string(o.tile) + " lanes per operation (one coalesced access of a " +
                   std::to_string(kNodeBytes) + "-byte node)" +
                   (o.thread_ops ? std::string(" in query_tile 0 and ops_kernel tile") : std::string())},
      {"ops_kernel", o.thread_ops
                         ? "thread: one thread per operation of a concurrent or ops-updated list (leaf splits "
                           "included); its warp serves root splits, full parents and lost races (tiles of 32 lanes)"
                         : std::string("tile: ") + std::to_string(o.tile) +
                               " lanes per operation, one operation at a time (the paper's kernel)"},
      {"query_tile", o.query_tile == 1 ? std::string("1: one thread per phased query (lookup, successor, count, "
                                                        "range), from the root; lists of ranges expected to "
                                                        "hold more than 48 pairs each on average in tiles of 4 lanes")
                     : o.query_tile ? std::to_string(o.query_tile) + " lanes per phased query; "
                                         "the tiles of a warp advance in lock-step (one node read per tile per step)"
                                       : std::string("0: phased queries in the operations kernel (tile lanes)")},
      {"sort", o.sort ? "on: each list sorted by key (CUB radix sort of (key, slot), or of (key, operation "
                           "word) with op_words on); operations start from the previous one's parent"
                         : "off: batch order, every operation from the root"},
      {"op_words", word_bytes == 8 ? "off: 64-bit arguments do not fit an operation word; the operations "
                                       "kernel reads each operation's type and argument by slot"
                   : o.op_words ? "on: concurrent and ops-updated lists of fewer than 2^29 operations carry "
                                   "(argument, type, slot) in one 8-byte word through the sort"
                                 : "off: the operations kernel reads each operation's type and argument by slot"},
      {"leaf_groups", o.leaf_groups ? "on: a warp's updates that fall into one leaf are applied together where "
                                         "they fit, under one latch (thread kernel)"
                                       : "off: one leaf latch per update"},
      {"leaf_directory", word_bytes == 8 ? "none: the directory reads 128-byte nodes of 32-bit words (u32/u32 "
                                             "trees only); phased point queries descend from the root"
                         : o.leaf_directory
                             ? "on: phased lookups and successors (query_tile 1) of a bulk-built tree "
                               "find their leaf in the build's leaf directory, in batch order (no sort)"
                             : "off: phased point queries descend from the root"},
      {"node_pool", o.node_pool ? std::to_string(o.node_pool) + " nodes (fixed)"
                                   : std::string("automatic (bulk build x 1.25 + 1024, grown before update "
                                                 "batches)")},
      {"bulk_fill", fill},
      {"reads", "seqlock snapshots (acquire meta, relaxed node, fence, meta again) in the operations kernel "
                "(concurrent batches, phased_updates ops); read-only cache in phased query kernels"},
      {"updates", "in the operations kernel: one latch per node (CAS from the snapshot's version), proactive "
                  "splits, restarts from the last parent or the root; no merges"},
      {"phased_updates",
       by_phased_path(o, kMergeText, kOpsText,
                      std::string("auto: batches of at most 131072 updates into a tree of at least 16 times as many "
                                  "keys as ") + kOpsText + "; others as " + kMergeText)},
      {"duplicates", by_phased_path(o, kMergeDuplicates, kOpsDuplicates,
                                    std::string("batches run in the operations kernel: ") + kOpsDuplicates +
                                        "; merged ones: " + kMergeDuplicates)},
      {"concurrent", "native: one kernel over all of the batch's operations"},
  };
}

Capabilities btree_caps() {
  Capabilities c;
  c.ordered = true;
  c.deletes = true;
  c.snapshots = false;
  c.native_concurrent = true;
  c.phased_duplicates = DuplicateRule::AnyUpdate;  // a phased batch's updates may run concurrently in one kernel
  c.key_types = {KeyType::U32, KeyType::U64};
  c.semantics = Semantics::Map;
  return c;
}

std::unique_ptr<Dictionary> make_btree_dictionary(const btree::Options& options, int device, KeyType key,
                                                  KeyType value) {
  return with_kv_types(key, value, [&](auto k, auto v) -> std::unique_ptr<Dictionary> {
    using Map = btree_map<typename decltype(k)::type, typename decltype(v)::type>;
    Map map(options, device);  // validates the options
    using K = typename Map::key_type;
    using V = typename Map::mapped_type;
    Params params = btree_parameters(options, std::string(kv_name<K, V>()), sizeof(K) == 8 || sizeof(V) == 8 ? 8 : 4);
    return std::make_unique<ContainerDictionary<Map>>(device, std::move(map), btree_caps(), std::move(params));
  });
}

}  // namespace gpudict
