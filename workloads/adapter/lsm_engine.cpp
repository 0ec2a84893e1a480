// The GPU LSM (lsm_map) behind the replay engine: its capabilities, the
// report's parameters and figures, and the factory.
#include <string>

#include <fmt/format.h>

#include "core/common/key_traits.hpp"
#include "core/lsm/lsm_map.hpp"
#include "workloads/adapter/container_dictionary.hpp"
#include "workloads/adapter/structures.hpp"

namespace gpudict {

template <class K, class V>
struct EngineTraits<lsm_map<K, V>> {
  static constexpr const char* name = "lsm";
  static Stats stats(const lsm_map<K, V>& m) {
    const lsm_stats a = m.stats();
    const uint64_t b = m.options().batch_size;
    Stats s;
    s.size = a.size;
    s.device_bytes = a.device_bytes;
    std::string levels;
    for (int i = 0; i < 64; ++i)
      if (a.level_mask >> i & 1) levels += (levels.empty() ? "" : ",") + std::to_string(i);
    std::string fill = "n/a";
    if (a.update_chunks > 0)
      fill = fmt::format("{:.2f}", 100.0 * static_cast<double>(a.resolved) /
                                       (static_cast<double>(a.update_chunks) * static_cast<double>(b)));
    s.extra = {
        {"levels", levels.empty() ? "none" : levels},
        {"batches", std::to_string(a.batches)},
        {"elements", std::to_string(a.stored)},
        {"stale", std::to_string(a.stale)},
        {"stale_counted", a.stale_exact ? "exact" : "lower bound"},
        {"batch_fill", fill},
        {"padding", std::to_string(a.batches * b - a.stored)},
        {"update_chunks", std::to_string(a.update_chunks)},
        {"cleanups", std::to_string(a.cleanups)},
        {"last_cleanup_stale", std::to_string(a.last_cleanup_stale)},
        {"auto_cleanups", std::to_string(a.auto_cleanups)},
        {"stale_checks", std::to_string(a.stale_checks)},
        {"snapshots", std::to_string(a.snapshots)},
        {"snapshot_bytes", std::to_string(a.snapshot_bytes)},
        {"pool_bytes", std::to_string(a.pool_bytes)},
        {"scratch_bytes", std::to_string(a.scratch_bytes)},
    };
    return s;
  }
};

namespace {

template <class K, class V>
Params lsm_parameters(const lsm_options& o) {
  const uint64_t b = o.batch_size;
  int lg = 0;
  while ((1ull << lg) < b) ++lg;
  std::string policy;
  if (o.cleanup_every) policy = "after every " + std::to_string(o.cleanup_every) + " update batches";
  if (o.stale_fraction > 0)
    policy += fmt::format("{}when stale elements > {:g} of stored elements", policy.empty() ? "" : "; ",
                          o.stale_fraction);
  if (policy.empty()) policy = "on cleanup steps only";
  return {
      {"batch_size", std::to_string(b) + " (2^" + std::to_string(lg) + ")"},
      {"levels", "room for b 2^i elements, holding 1 to b 2^i of them, or empty; SoA " + std::string(kv_name<K, V>()) +
                     " keys and values, u8 status (bit 0 = tombstone): " + std::to_string(sizeof(K) + sizeof(V) + 1) +
                     " B per element, the status adds 1 B per " + std::to_string(sizeof(K) + sizeof(V)) + " B pair"},
      {"search", "per-level fence index (fanout 32, top <= 1024 keys, tops staged in shared memory up to 16 KiB); "
                 "levels most recent first, a lookup stops at the first record of its key"},
      {"update", "stable radix sort + reduce-by-key of the batch (delete wins, else the last insert); chunks of at "
                 "most b unique keys, none padded; a chunk that fits merges into level 0, otherwise it carries "
                 "(binary counter); merge-path merges, newer first"},
      {"count_range", "per-level bounds, candidate gather, radix sort on (query, key, level) unless already in "
                      "order; the first record of a key counts unless a tombstone"},
      {"lookup_filter", o.lookup_filter
                            ? "on: per merged level of more than 1024 keys but the largest, 8 bits per key "
                              "(blocked Bloom filter per top segment, ~4% false positives), built by the first "
                              "lookup batch after the level is written"
                            : "off"},
      {"successor", "min over levels of the first key > k; a deleted candidate continues by a warp walk"},
      {"duplicates", "delete wins; otherwise the last insert in batch order"},
      {"cleanup", policy},
      {"stale_count", o.exact_stale ? "exact (one lookup per updated key and batch)"
                                    : "per level (exact after build/cleanup and with one level; otherwise a "
                                      "lower bound)"},
      {"snapshots", "shared, reference-counted levels (O(levels) time and memory to take)"},
      {"concurrent", "runs as the batch's updates, then its queries"},
  };
}

}  // namespace

Capabilities lsm_caps() {
  Capabilities c;
  c.ordered = true;
  c.deletes = true;
  c.snapshots = true;
  c.native_concurrent = false;  // a concurrent batch runs as its updates, then its queries
  c.phased_duplicates = DuplicateRule::DeleteWinsElseAny;
  c.key_types = {KeyType::U32, KeyType::U64};
  return c;
}

std::unique_ptr<Dictionary> make_lsm_dictionary(const lsm_options& options, int device, KeyType key,
                                                KeyType value) {
  return with_kv_types(key, value, [&](auto k, auto v) -> std::unique_ptr<Dictionary> {
    using Map = lsm_map<typename decltype(k)::type, typename decltype(v)::type>;
    Map map(options, device);  // validates the options
    Params params = lsm_parameters<typename Map::key_type, typename Map::mapped_type>(options);
    return std::make_unique<ContainerDictionary<Map>>(device, std::move(map), lsm_caps(), std::move(params));
  });
}

}  // namespace gpudict
