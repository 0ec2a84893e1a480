// The slab hash's command-line side: its options as --help shows them,
// their parsing into slabhash::Options (errors name the flag), the
// capabilities of --mode and the registry's factory. The structure itself
// (core/slabhash) knows none of this.
#include <cmath>
#include <cstdio>
#include <string>

#include "core/common/errors.hpp"
#include "workloads/adapter/structures.hpp"
#include "workloads/registry/structures.hpp"

namespace gpudict {

namespace sh = slabhash;

Capabilities slabhash_caps_for(const StructureConfig& config) { return slabhash_caps_of(sh::parse_options(config).mode); }

std::vector<OptionSpec> slabhash_option_specs() {
  const sh::Options d;  // the defaults --help shows
  return {
      {"mode",
       "map (unique keys; insert replaces the value), multimap (a key may hold several values; insert adds a "
       "pair, delete removes every pair of the key) or set (keys only)",
       std::string(sh::mode_name(d.mode)), "{map,multimap,set}"},
      {"buckets", "number of buckets (base slabs); default: from --load-factor. Not with --load-factor", "", "UINT"},
      {"load-factor",
       "expected memory utilization (stored bytes / slab bytes, the paper's definition) the buckets are sized for, "
       "in (0, 0.93]; default " + shortest_text(d.load_factor) + ". Not with --buckets",
       "", "FLOAT:in (0, 0.93]"},
      {"expected-keys",
       "keys --load-factor sizes the table for (0: the initial contents; give the final size for workloads that "
       "grow)",
       std::to_string(d.expected_keys), "UINT"},
      {"pool-slabs",
       "slabs in SlabAlloc's first super block (0: automatic, 1.5x the expected overflow slabs, at least 2^15); "
       "rounded up to a power of two >= 1024",
       std::to_string(d.pool_slabs), "UINT"},
      {"pool-growth",
       "ahead: as on, and also before a batch whose inserts are expected (keys hashing uniformly) to take the pool "
       "past 3/4 full; on: when the pool is full, add a super block (doubling the pool) and run the "
       "operations that found no slab again; off: exit 3 with 'out of slab memory'",
       d.grow_ahead ? "ahead" : d.growth ? "on" : "off", "{ahead,on,off}"},
      {"max-pool-bytes", "growth never takes the pool past this many bytes (0: device memory is the limit)", std::to_string(d.max_pool_bytes), "UINT"},
      {"flush-every", "FLUSH (compact the chains, free emptied slabs) after every N update batches (0: never)", std::to_string(d.flush_every), "UINT"},
      {"flush-tombstones",
       "FLUSH after an update batch that leaves more tombstones than this fraction of the base slots (buckets x "
       "slots per slab): deleted slots are reused only after a FLUSH, so this bounds the chains under churn "
       "(0: never)",
       shortest_text(d.flush_tombstones), "FLOAT:>= 0"},
      {"prefetch",
       "how an operation's base slab is fetched early: off; l2 (every lane asks L2 for its operation's base slab, "
       "4 sector prefetches, when it loads the operation, before its tile serves it); bulk (the same with one "
       "128-byte bulk prefetch, sm_90)",
       sh::kPrefetchNames[d.prefetch], "{off,l2,bulk}"},
  };
}

void validate_slabhash_options(const StructureConfig& config) { (void)sh::parse_options(config); }

std::unique_ptr<Dictionary> make_slabhash(const StructureConfig& config) {
  return make_slabhash_dictionary(sh::parse_options(config), config.device, config.key_type, config.value_type);
}

namespace slabhash {

namespace {

bool given(const StructureConfig& c, const char* name) {
  auto it = c.options.find(name);
  return it != c.options.end() && !it->second.empty();
}

constexpr bool same_text(const char* a, const char* b) { return *a == *b && (*a == '\0' || same_text(a + 1, b + 1)); }
static_assert(same_text(kDefaultPrefetch, kPrefetchNames[0]), "Options::prefetch defaults to index 0");

}  // namespace

Options parse_options(const StructureConfig& config) {
  Options o;
  if (given(config, "mode")) {
    constexpr Mode kModes[] = {Mode::Map, Mode::Multimap, Mode::Set};
    o.mode = kModes[config.get_one_of("mode", {"map", "multimap", "set"})];
  }
  const bool has_buckets = given(config, "buckets"), has_lf = given(config, "load-factor");
  if (has_buckets && has_lf)
    throw InputError("--buckets and --load-factor exclude each other (the load factor chooses the buckets)");
  if (has_buckets) {
    o.buckets = config.get_u64("buckets");
    if (o.buckets == 0 || o.buckets > kMaxBuckets)
      throw InputError("--buckets: '" + config.get("buckets") + "' is not between 1 and " +
                       std::to_string(kMaxBuckets));
  }
  if (has_lf) {
    const double x = config.get_double("load-factor");
    if (!std::isfinite(x) || x <= 0.0 || x > kMaxLoadFactor) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", kMaxLoadFactor);
      throw InputError("--load-factor: '" + config.get("load-factor") + "' is not in (0, " + buf + "]");
    }
    o.load_factor = x;
  }
  if (given(config, "expected-keys")) o.expected_keys = config.get_u64("expected-keys");
  if (given(config, "pool-slabs")) {
    o.pool_slabs = config.get_u64("pool-slabs");
    if (o.pool_slabs > (1ull << 30))
      throw InputError("--pool-slabs: '" + config.get("pool-slabs") + "' is more than 2^30 slabs (128 GiB)");
  }
  if (given(config, "pool-growth")) {
    const size_t g = config.get_one_of("pool-growth", {"ahead", "on", "off"});
    o.growth = g != 2;
    o.grow_ahead = g == 0;
  }
  if (given(config, "max-pool-bytes")) o.max_pool_bytes = config.get_u64("max-pool-bytes");
  if (given(config, "flush-every")) o.flush_every = config.get_u64("flush-every");
  if (given(config, "flush-tombstones")) {
    const double x = config.get_double("flush-tombstones");
    if (!std::isfinite(x) || x < 0.0)
      throw InputError("--flush-tombstones: '" + config.get("flush-tombstones") + "' is not a fraction >= 0");
    o.flush_tombstones = x;
  }
  if (given(config, "prefetch"))  // (not given: Options' 0, kDefaultPrefetch)
    o.prefetch = static_cast<uint8_t>(
        config.get_one_of("prefetch", {kPrefetchNames[0], kPrefetchNames[1], kPrefetchNames[2]}));
  return o;
}

}  // namespace slabhash
}  // namespace gpudict
