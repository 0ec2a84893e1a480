// The multiversion B-Tree (mvbtree_map) behind the replay engine: its
// capabilities, the report's parameters and figures, and the factory.
#include <string>

#include <fmt/format.h>

#include "core/common/key_traits.hpp"
#include "core/mvbtree/mvbtree_map.hpp"
#include "workloads/adapter/container_dictionary.hpp"
#include "workloads/adapter/structures.hpp"

namespace gpudict {

template <class K, class V>
struct EngineTraits<mvbtree_map<K, V>> {
  static constexpr const char* name = "mvbtree";

  static void check_batch(const Batch& b, uint64_t) {
    if (b.size() >= 0xFFFFFFFFull) throw InputError("mvbtree: a batch holds at most 2^32 - 2 operations");
  }

  static Stats stats(const mvbtree_map<K, V>& m) {
    const mvbtree_stats a = m.stats();
    const btree_stats& t = a.tree;
    Stats s;
    s.size = t.size;
    s.device_bytes = a.device_bytes;
    s.extra = btree_stat_rows(t);
    const Params versions = {
        {"snapshots", std::to_string(a.snapshots)},
        {"version-copies", std::to_string(a.version_copies)},
        {"version-bytes", std::to_string(a.version_bytes)},
        {"version-scratch-bytes", std::to_string(a.version_scratch_bytes)},
        {"version-overhead", fmt::format("{:.4f}", t.device_bytes ? static_cast<double>(a.version_bytes) /
                                                                        static_cast<double>(t.device_bytes)
                                                                  : 0.0)},
        {"version-pool-nodes", std::to_string(a.version_pool_nodes)},
        {"copies-made", std::to_string(a.copies_made)},
        {"copies-reclaimed", std::to_string(a.copies_reclaimed)},
        {"versioned-leaves", std::to_string(a.versioned_leaves)},
        {"stamp", std::to_string(a.stamp)},
        {"renumberings", std::to_string(a.renumberings)},
    };
    s.extra.insert(s.extra.end(), versions.begin(), versions.end());
    return s;
  }
};

Capabilities mvbtree_caps() {
  Capabilities c = btree_caps();
  c.snapshots = true;
  c.concurrent_queries_first = true;  // mvbtree_map::apply
  return c;
}

std::unique_ptr<Dictionary> make_mvbtree_dictionary(const mvbtree::Options& options, int device, KeyType key,
                                                    KeyType value) {
  return with_kv_types(key, value, [&](auto k, auto v) -> std::unique_ptr<Dictionary> {
    using K = typename decltype(k)::type;
    using V = typename decltype(v)::type;
    using Map = mvbtree_map<K, V>;
    Map map(options, device);  // validates the options
    Params params = btree_parameters(options.tree, std::string(kv_name<K, V>()), sizeof(K) == 8 || sizeof(V) == 8 ? 8 : 4);
    params.emplace_back("versions",
                        "leaves only: a leaf changed while a live snapshot reads it is first copied into the version "
                        "pool (one copy per leaf per update call, whatever the number of its updates); a leaf split "
                        "off while snapshots live points at the leaf it came from; inner nodes are the latest ones "
                        "for every snapshot");
    params.emplace_back("snapshots", "O(1): a stamp (32-bit, renumbered before it would wrap) and an entry in the "
                                     "table of live ones; queries at a snapshot resolve each leaf to its state then, "
                                     "one thread per query from the root");
    for (auto& [key, text] : params)
      if (key == "concurrent")
        text = "queries first, on the state before the batch (the B-Tree's query kernel), then the updates (its "
               "update paths): every count and range reads one state; checked exactly";
    params.emplace_back("reclamation", "dropping a snapshot sweeps the versioned leaves' lists and returns the states "
                                       "no live snapshot reads to the pool's free list");
    return std::make_unique<ContainerDictionary<Map>>(device, std::move(map), mvbtree_caps(), std::move(params));
  });
}

}  // namespace gpudict
