// The sorted array (sorted_array_map) behind the replay engine: its
// capabilities, the report's parameters and figures, and the factory.
#include <string>

#include "core/common/key_traits.hpp"
#include "core/sorted_array/sorted_array_map.hpp"
#include "workloads/adapter/container_dictionary.hpp"
#include "workloads/adapter/structures.hpp"

namespace gpudict {

template <class K, class V>
struct EngineTraits<sorted_array_map<K, V>> {
  static constexpr const char* name = "sorted-array";
  static Stats stats(const sorted_array_map<K, V>& m) {
    const sorted_array_stats a = m.stats();
    Stats s;
    s.size = a.size;
    s.device_bytes = a.device_bytes;
    s.extra = {
        {"capacity", std::to_string(a.capacity)},
        {"index_levels", std::to_string(a.index_levels)},
        {"index_top_entries", std::to_string(a.index_top_entries)},
        {"snapshots", std::to_string(a.snapshots)},
        {"snapshot_bytes", std::to_string(a.snapshot_bytes)},
        {"scratch_bytes", std::to_string(a.scratch_bytes)},
    };
    return s;
  }
};

namespace {

template <class K, class V>
Params sorted_array_parameters(const sorted_array_stats& s) {
  const std::string kv(kv_name<K, V>());
  return {
      {"layout", "SoA " + kv + ", sorted, unique keys"},
      {"search", "fence index, fanout " + std::to_string(s.index_fanout) + ", levels up to a top of <= " +
                     std::to_string(s.index_top_max) + " keys (in shared memory); one " +
                     std::to_string(s.index_fanout * sizeof(K)) + "-byte window per level"},
      {"update", "stable radix sort of the batch, one merge-path pass into a ping-pong buffer"},
      {"duplicates", "last update of a key in batch order wins"},
      {"concurrent", "runs as the batch's updates, then its queries"},
      {"snapshots", "full device copy of keys, values and index (O(n))"},
  };
}

}  // namespace

Capabilities sorted_array_caps() {
  Capabilities c;
  c.ordered = true;
  c.deletes = true;
  c.snapshots = true;
  c.native_concurrent = false;  // a concurrent batch runs as its updates, then its queries
  c.phased_duplicates = DuplicateRule::LastWins;
  c.key_types = {KeyType::U32, KeyType::U64};
  return c;
}

std::unique_ptr<Dictionary> make_sorted_array_dictionary(int device, KeyType key, KeyType value) {
  return with_kv_types(key, value, [&](auto k, auto v) -> std::unique_ptr<Dictionary> {
    using Map = sorted_array_map<typename decltype(k)::type, typename decltype(v)::type>;
    Map map(device);
    Params params = sorted_array_parameters<typename Map::key_type, typename Map::mapped_type>(map.stats());
    return std::make_unique<ContainerDictionary<Map>>(device, std::move(map), sorted_array_caps(), std::move(params));
  });
}

}  // namespace gpudict
