// The slab hash's command-line options, capabilities and sizing arithmetic.
#include "core/slabhash/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/common/errors.hpp"
#include "core/slabhash/slabhash.hpp"

namespace gpudict {

namespace sh = slabhash;

Capabilities slabhash_caps_for(const StructureConfig& config) { return slabhash_caps_of(sh::parse_options(config).mode); }

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

Capabilities slabhash_caps() { return slabhash_caps_for(StructureConfig{}); }

std::vector<OptionSpec> slabhash_options() {
  return {
      {"mode",
       "map (unique keys; insert replaces the value), multimap (a key may hold several values; insert adds a "
       "pair, delete removes every pair of the key) or set (keys only)",
       "map", "{map,multimap,set}"},
      {"buckets", "number of buckets (base slabs); default: from --load-factor. Not with --load-factor", "", "UINT"},
      {"load-factor",
       "expected memory utilization (stored bytes / slab bytes, the paper's definition) the buckets are sized for, "
       "in (0, 0.93]; default 0.6. Not with --buckets",
       "", "FLOAT:in (0, 0.93]"},
      {"expected-keys",
       "keys --load-factor sizes the table for (0: the initial contents; give the final size for workloads that "
       "grow)",
       "0", "UINT"},
      {"pool-slabs",
       "slabs in SlabAlloc's first super block (0: automatic, 1.5x the expected overflow slabs, at least 2^15); "
       "rounded up to a power of two >= 1024",
       "0", "UINT"},
      {"pool-growth",
       "ahead: as on, and also before a batch whose inserts are expected (keys hashing uniformly) to take the pool "
       "past 3/4 full; on: when the pool is full, add a super block (doubling the pool) and run the "
       "operations that found no slab again; off: exit 3 with 'out of slab memory'",
       "ahead", "{ahead,on,off}"},
      {"max-pool-bytes", "growth never takes the pool past this many bytes (0: device memory is the limit)", "0", "UINT"},
      {"flush-every", "FLUSH (compact the chains, free emptied slabs) after every N update batches (0: never)", "0", "UINT"},
      {"flush-tombstones",
       "FLUSH after an update batch that leaves more tombstones than this fraction of the base slots (buckets x "
       "slots per slab): deleted slots are reused only after a FLUSH, so this bounds the chains under churn "
       "(0: never)",
       shortest_text(sh::kDefaultFlushTombstones), "FLOAT:>= 0"},
      {"prefetch",
       "how an operation's base slab is fetched early: off; l2 (every lane asks L2 for its operation's base slab, "
       "4 sector prefetches, when it loads the operation, before its tile serves it); bulk (the same with one "
       "128-byte bulk prefetch, sm_90)",
       sh::kDefaultPrefetch, "{off,l2,bulk}"},
  };
}

void validate_slabhash_options(const StructureConfig& config) { (void)sh::parse_options(config); }

std::string slabhash_point_query_message(OpType type, uint64_t lo, uint64_t hi, uint64_t batch) {
  std::string ordered;
  for (const auto& s : structures())
    if (s.make_gpu && s.caps.ordered) ordered += (ordered.empty() ? "" : ", ") + s.name;
  if (ordered.empty()) ordered = "none yet";
  return "slabhash answers count and range for a single key only (lo == hi); got " + std::string(op_name(type)) +
         " [" + std::to_string(lo) + ", " + std::to_string(hi) + "] in batch " + std::to_string(batch) +
         "; ordered count and range: " + ordered;
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

void validate(const Options& o) {
  auto bad = [](const std::string& what) { throw InputError("slab hash options: " + what); };
  if (o.mode != Mode::Map && o.mode != Mode::Multimap && o.mode != Mode::Set) bad("mode is not map, multimap or set");
  if (o.buckets > kMaxBuckets) bad("buckets " + std::to_string(o.buckets) + " is more than " + std::to_string(kMaxBuckets));
  if (!std::isfinite(o.load_factor) || o.load_factor <= 0.0 || o.load_factor > kMaxLoadFactor)
    bad("load_factor " + std::to_string(o.load_factor) + " is not in (0, 0.93]");
  if (o.pool_slabs > (1ull << 30)) bad("pool_slabs " + std::to_string(o.pool_slabs) + " is more than 2^30");
  if (!std::isfinite(o.flush_tombstones) || o.flush_tombstones < 0.0)
    bad("flush_tombstones " + std::to_string(o.flush_tombstones) + " is not a fraction >= 0");
  if (o.prefetch > 2) bad("prefetch " + std::to_string(o.prefetch) + " is not 0 (off), 1 (l2) or 2 (bulk)");
}

SlabShape slab_shape(Mode m, uint32_t key_bytes, uint32_t value_bytes) {
  if (m == Mode::Set) return key_bytes == 4 ? SlabShape{30, 4} : SlabShape{15, 8};
  return key_bytes == 4 && value_bytes == 4 ? SlabShape{15, 8} : SlabShape{7, 16};
}

double utilization_ceiling(SlabShape s) { return static_cast<double>(s.slots) * s.element_bytes / 128.0; }

double expected_slabs_per_bucket(SlabShape s, double lambda) {
  const double M = s.slots;
  if (lambda <= 0) return 1.0;
  if (lambda > 1e6) return lambda / M + 0.5;  // the Poisson mass is far past one slab
  const double hi = lambda + 12.0 * std::sqrt(lambda) + 40.0;
  double sum = 0.0, mass = 0.0;
  for (double l = 0; l <= hi; l += 1.0) {
    const double p = std::exp(-lambda + l * std::log(lambda) - std::lgamma(l + 1.0));
    mass += p;
    sum += p * std::max(1.0, std::ceil(l / M));
  }
  return mass > 0 ? sum / mass : 1.0;
}

double expected_utilization(SlabShape s, double lambda) {
  return s.element_bytes * lambda / (128.0 * expected_slabs_per_bucket(s, lambda));
}

uint64_t buckets_for(SlabShape s, uint64_t n, double lf) {
  if (n == 0) return kDefaultBuckets;
  // Bisection on log(lambda): the utilization grows with the keys per bucket.
  double lo = std::log(1e-4), hi = std::log(1e7);
  for (int it = 0; it < 80; ++it) {
    const double mid = 0.5 * (lo + hi);
    if (expected_utilization(s, std::exp(mid)) < lf)
      lo = mid;
    else
      hi = mid;
  }
  const double lambda = std::exp(0.5 * (lo + hi));
  const double b = std::round(static_cast<double>(n) / lambda);
  return static_cast<uint64_t>(std::clamp(b, 1.0, static_cast<double>(kMaxBuckets)));
}

double expected_overflow_slabs(SlabShape s, uint64_t slots, uint64_t buckets) {
  const double b = static_cast<double>(std::max<uint64_t>(buckets, 1));
  return b * (expected_slabs_per_bucket(s, static_cast<double>(slots) / b) - 1.0);
}

uint64_t auto_pool_slabs(SlabShape s, uint64_t n, uint64_t buckets) {
  const double overflow = expected_overflow_slabs(s, n, buckets);
  const double want = std::max(1.5 * overflow + 16384.0, 32768.0);
  uint64_t p = 1024;
  while (static_cast<double>(p) < want && p < (1ull << 30)) p <<= 1;
  return p;
}

}  // namespace slabhash
}  // namespace gpudict
