// The slab hash (slab_hash_map) behind the replay engine: its capabilities
// per mode, the batches it refuses, the report's parameters and figures,
// and the factory.
#include <string>

#include <fmt/format.h>

#include "core/common/cuda_check.hpp"
#include "core/common/key_traits.hpp"
#include "core/slabhash/slab_hash_map.hpp"
#include "workloads/adapter/container_dictionary.hpp"
#include "workloads/adapter/structures.hpp"

namespace gpudict {

namespace sh = slabhash;

namespace {

// "0xFFFFFFFF" or "0xFFFFFFFFFFFFFFFF": the key of its own bucket.
template <class K>
std::string max_key_name() {
  return sizeof(K) == 4 ? "0xFFFFFFFF" : "0xFFFFFFFFFFFFFFFF";
}

}  // namespace

template <class K, class V>
struct EngineTraits<slab_hash_map<K, V>> {
  static constexpr const char* name = "slabhash";

  // Refusals before any device work, so the table is untouched.
  static void check_batch(const Batch& b, uint64_t index) {
    if (b.size() >= (1ull << 32)) throw InputError("slabhash: a batch of 2^32 or more operations");
    for (uint64_t i = 0; i < b.size(); ++i) {
      const OpType ty = b.types[i];
      if ((ty == OpType::Count || ty == OpType::Range) && b.keys[i] != b.args[i])
        throw InputError(slabhash_point_query_message(ty, b.keys[i], b.args[i], index));
      if (ty == OpType::Successor)
        throw InputError("slabhash does not support successor operations (batch " + std::to_string(index) + ")");
      if (b.keys[i] > key_max<K> || (ty == OpType::Insert && b.args[i] > key_max<V>))
        throw InputError("slabhash: a key or value above the " + std::string(kv_name<K, V>()) +
                         " instantiation's range in batch " + std::to_string(index));
    }
  }

  static Stats stats(const slab_hash_map<K, V>& m) {
    const slab_hash_stats a = m.stats();
    Stats s;
    s.size = a.size;
    s.device_bytes = a.device_bytes;
    const uint64_t slabs = a.base_slabs + a.pool_slabs_used;
    const double util = slabs ? static_cast<double>(a.slot_bytes) * static_cast<double>(a.size) /
                                    (128.0 * static_cast<double>(slabs))
                              : 0.0;
    s.extra = {
        {"mode", std::string(sh::mode_name(m.options().mode))},
        {"buckets", std::to_string(a.buckets)},
        {"slabs", std::to_string(slabs)},
        {"base_slabs", std::to_string(a.base_slabs)},
        {"pool_slabs_used", std::to_string(a.pool_slabs_used)},
        {"avg_chain_slabs",
         fmt::format("{:.3f}", a.base_slabs ? static_cast<double>(slabs) / static_cast<double>(a.base_slabs) : 0.0)},
        {"utilization", fmt::format("{:.3f}", util)},
        {"alive", std::to_string(a.size)},
        {"tombstones", std::to_string(a.tombstones)},
        {"pool_slabs", std::to_string(a.pool_slabs)},
        {"pool_bytes", std::to_string(a.pool_bytes)},
        {"super_blocks", std::to_string(a.super_blocks)},
        {"pool_growths", std::to_string(a.pool_growths)},
        {"unfinished_reruns", std::to_string(a.unfinished_reruns)},
        {"flushes", std::to_string(a.flushes)},
        {"auto_flushes", std::to_string(a.auto_flushes)},
        {"build_duplicate_keys", std::to_string(a.build_duplicate_keys)},
        {"scratch_bytes", std::to_string(a.scratch_bytes)},
    };
    return s;
  }
};

namespace {

std::string flush_policy(const slab_hash_options& o) {
  std::string p;
  if (o.flush_every) p = "after every " + std::to_string(o.flush_every) + " update batches";
  if (o.flush_tombstones > 0)
    p += (p.empty() ? "" : "; ") + std::string("after an update batch that leaves tombstones > ") +
         fmt::format("{:g}", o.flush_tombstones) + " of the base slots";
  return (p.empty() ? std::string("on cleanup/flush steps only") : p + "; on cleanup/flush steps");
}

template <class K, class V>
Params slabhash_parameters(const slab_hash_options& o, const slab_hash_stats& st) {
  std::string sizing;
  if (o.buckets)
    sizing = "buckets " + std::to_string(o.buckets);
  else
    sizing = "load_factor " + fmt::format("{:g}", o.load_factor) + " (expected utilization) for " +
             (o.expected_keys ? std::to_string(o.expected_keys) + " keys or the initial contents, the larger"
                              : std::string("the initial contents"));
  std::string growth = !o.growth      ? "off (exit 3)"
                       : o.grow_ahead ? "ahead (a super block doubling the pool before a batch could fill it past 3/4, "
                                        "or when it is full: unfinished operations run again)"
                                      : "on (a super block doubling the pool when it is full; unfinished operations run again)";
  if (o.growth && o.max_pool_bytes) growth += ", at most " + format_bytes(o.max_pool_bytes);
  return {
      {"mode", std::string(sh::mode_name(o.mode)) +
                   (o.mode == sh::Mode::Map        ? " (unique keys, insert = REPLACE)"
                    : o.mode == sh::Mode::Multimap ? " (duplicates, insert = INSERT, delete = all pairs)"
                                                   : " (keys only)")},
      {"types", std::string(kv_name<K, V>()) + " (keys, values" +
                    (o.mode == sh::Mode::Set ? std::string("; set mode stores keys only)") : std::string(")"))},
      {"buckets", sizing + " + 1 bucket for key " + max_key_name<K>()},
      {"slab", "128 B: " + std::to_string(st.slots_per_slab) + (o.mode == sh::Mode::Set ? " keys" : " pairs") +
                   " of " + std::to_string(st.slot_bytes) + " B" +
                   (o.mode != sh::Mode::Set && sizeof(V) == 8
                        ? std::string(" (key word, value; one 128-bit CAS claims a pair)")
                        : std::string()) +
                   ", an alive-bit state word, a 32-bit next address; key " + max_key_name<K>() +
                   " marks an empty slot"},
      {"hash", std::string(sizeof(K) == 4 ? "((a k + b) mod p) mod B" : "((a2 lo + (a hi + b) mod p) mod p) mod B") +
                   ", p = 2^32 - 5, a = " + std::to_string(st.hash[0]) +
                   (sizeof(K) == 4 ? std::string() : ", a2 = " + std::to_string(st.hash[2])) +
                   ", b = " + std::to_string(st.hash[1])},
      {"work_sharing", std::string("tiles of 4 lanes, 32 B per lane, one slab per step; 8 operations per warp at once; "
                                   "prefetch ") + sh::kPrefetchNames[o.prefetch]},
      {"slaballoc", "memory blocks of 1024 slabs, bitmaps cached per tile, one atomicOr per allocation; super blocks " +
                        std::string("2^lg0, 2^lg0, 2^(lg0+1), ...")},
      {"pool_growth", growth},
      {"flush", flush_policy(o)},
      {"build", "concurrent insertion (timed: the insertion kernels; table allocation and clearing are not timed)"},
      {"concurrent", "native: every operation of a batch in one kernel"},
  };
}

}  // namespace

Capabilities slabhash_caps_of(sh::Mode mode) {
  Capabilities c;
  c.ordered = false;
  c.point_count_range = true;
  c.deletes = true;
  c.snapshots = false;
  c.native_concurrent = true;
  c.key_types = {KeyType::U32, KeyType::U64};
  c.semantics = mode == sh::Mode::Map ? Semantics::Map : mode == sh::Mode::Multimap ? Semantics::Multimap : Semantics::Set;
  c.phased_duplicates = mode == sh::Mode::Multimap ? DuplicateRule::DeletesThenInserts : DuplicateRule::AnyUpdate;
  return c;
}

Capabilities slabhash_caps() { return slabhash_caps_of(sh::Mode::Map); }

std::string slabhash_point_query_message(OpType type, uint64_t lo, uint64_t hi, uint64_t batch) {
  return "slabhash answers count and range for a single key only (lo == hi); got " + std::string(op_name(type)) +
         " [" + std::to_string(lo) + ", " + std::to_string(hi) + "] in batch " + std::to_string(batch);
}

std::unique_ptr<Dictionary> make_slabhash_dictionary(const slab_hash_options& options, int device, KeyType key,
                                                     KeyType value) {
  return with_kv_types(key, value, [&](auto k, auto v) -> std::unique_ptr<Dictionary> {
    using Map = slab_hash_map<typename decltype(k)::type, typename decltype(v)::type>;
    Map map(options, device);  // validates the options
    Params params = slabhash_parameters<typename Map::key_type, typename Map::mapped_type>(options, map.stats());
    return std::make_unique<ContainerDictionary<Map>>(device, std::move(map), slabhash_caps_of(options.mode),
                                                      std::move(params));
  });
}

}  // namespace gpudict
