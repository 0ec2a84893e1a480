// How a sharded structure deals keys among its shards: by key range for the
// ordered structures (so that a count, range or successor reaches the few
// shards its keys can lie in, in key order) and by a hash of the key for the
// hash tables (so that skewed keys still spread).
//
// The partition is a small, trivially copyable value with no allocation, so
// that the same owner() can run on the host (the engine splits a batch there)
// and in a kernel (a device-side split before an exchange between GPUs).
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/device_search.cuh"

namespace gpudict {

struct shard_partition {
  static constexpr uint32_t max_shards = 64;
  enum class kind : uint8_t { range, hash };

  kind how = kind::range;
  uint32_t shards = 1;
  // range: shard s holds the keys in [first[s], first[s + 1] - 1], the last
  // shard up to the largest key; first[0] is 0 and first[] strictly rises.
  uint64_t first[max_shards] = {};

  // The shard that holds `key`.
  __host__ __device__ uint32_t owner(uint64_t key) const {
    if (how == kind::hash) {
      // splitmix64's finalizer with a constant of its own, so that the keys
      // of one shard do not share the low bits a hash table's own hash of
      // them starts from; multiply-shift maps it onto [0, shards).
      uint64_t z = key ^ 0x6a09e667f3bcc909ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      return static_cast<uint32_t>(((z >> 32) * shards) >> 32);
    }
    return count_before(first, shards, key, true) - 1;  // the last s with first[s] <= key (first[0] is 0)
  }
  // range: the smallest and largest key shard s may hold (`domain_max`: the
  // largest key of the key width).
  __host__ __device__ uint64_t lowest(uint32_t s) const { return first[s]; }
  __host__ __device__ uint64_t highest(uint32_t s, uint64_t domain_max) const {
    return s + 1 < shards ? first[s + 1] - 1 : domain_max;
  }
};

// Builders (host). shards from 1 to max_shards (std::invalid_argument
// otherwise); domain_max: the largest key of the key width.
shard_partition hash_partition(uint32_t shards);
// The key domain [0, domain_max] in equal parts.
shard_partition even_range_partition(uint32_t shards, uint64_t domain_max);
// Boundaries at the quantiles of a strided sample of `keys` (a few thousand
// a shard; even_range_partition when empty); a boundary that would repeat
// the one before moves up by one.
shard_partition sampled_range_partition(const std::vector<uint64_t>& keys, uint32_t shards, uint64_t domain_max);

}  // namespace gpudict
