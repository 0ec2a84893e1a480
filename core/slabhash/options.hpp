// The slab hash's options as a typed struct (what slab_hash_map and the
// command line's flags both configure) and the sizing arithmetic (host only).
#pragma once

#include <cstdint>
#include <string>

#include "core/slabhash/mode.hpp"

namespace gpudict::slabhash {

// The default of --flush-tombstones: FLUSH once the tombstones could fill
// half of every bucket's base slab, so chains carry on average at most half
// a slab of them (docs/churn.md has the measurements).
inline constexpr double kDefaultFlushTombstones = 0.5;

struct Options {
  Mode mode = Mode::Map;
  uint64_t buckets = 0;         // 0: from the load factor
  double load_factor = 0.6;     // the expected memory utilization (paper's definition)
  uint64_t expected_keys = 0;   // keys the load factor sizes for; 0: the initial contents
  uint64_t pool_slabs = 0;      // 0: automatic
  bool growth = true;           // grow the pool when it runs out (--pool-growth on or ahead)
  bool grow_ahead = true;       // and ahead of batches whose inserts could fill it (--pool-growth ahead)
  uint64_t max_pool_bytes = 0;  // growth limit; 0: device memory
  uint64_t flush_every = 0;     // FLUSH after every N update batches; 0: never
  double flush_tombstones = kDefaultFlushTombstones;  // FLUSH when tombstones exceed this share of the base slots; 0: never
  uint8_t prefetch = 0;         // --prefetch off (0), l2 (1), bulk (2): OpsIn::prefetch
};

inline constexpr double kDefaultLoadFactor = 0.6;
inline constexpr double kMaxLoadFactor = 0.93;  // u32 layouts' ceiling is 15/16 (30/32 for sets); see utilization_ceiling
inline constexpr uint64_t kDefaultBuckets = 1024;  // when nothing says how many keys to expect
inline constexpr uint64_t kMaxBuckets = (1ull << 31) - 2;

inline constexpr const char* kPrefetchNames[] = {"off", "l2", "bulk"};
inline constexpr const char* kDefaultPrefetch = "off";

// Throws InputError naming the field ("slab hash options: load_factor
// ...") when a value is outside its range.
void validate(const Options& o);

// What a slab holds in a mode at a (key, value) width (slab_layout.cuh):
// elements per slab and bytes per element (the paper's x; for u64 values a
// 16-byte slot, the u32 key's pad included).
//   map, multimap  u32/u32: 15 x 8 B   u32/u64, u64/u64: 7 x 16 B
//   set            u32 keys: 30 x 4 B  u64 keys: 15 x 8 B
struct SlabShape {
  uint32_t slots = 15;
  uint32_t element_bytes = 8;
};
SlabShape slab_shape(Mode m, uint32_t key_bytes, uint32_t value_bytes);
// The utilization no table of the shape reaches: slots x / 128.
double utilization_ceiling(SlabShape s);

// Expected slabs per bucket when n keys hash uniformly into `buckets` (bucket
// loads Poisson with mean n / buckets; a bucket of L keys holds
// max(1, ceil(L / M)) slabs).
double expected_slabs_per_bucket(SlabShape s, double keys_per_bucket);
// Expected memory utilization (paper, III-C): x n / (128 * slabs).
double expected_utilization(SlabShape s, double keys_per_bucket);
// Buckets for n keys at the expected utilization `lf` (below the ceiling).
uint64_t buckets_for(SlabShape s, uint64_t n, double lf);
// Expected pool slabs (slabs past the base slabs) when `slots` claimed slots
// hash uniformly into `buckets` buckets.
double expected_overflow_slabs(SlabShape s, uint64_t slots, uint64_t buckets);
// Pool slabs the automatic sizing gives n keys in `buckets` buckets: 1.5 x the
// expected overflow slabs plus 2^14, at least 2^15, a power of two.
uint64_t auto_pool_slabs(SlabShape s, uint64_t n, uint64_t buckets);

}  // namespace gpudict::slabhash
