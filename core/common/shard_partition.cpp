#include "core/common/shard_partition.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpudict {

namespace {

void check_shards(uint32_t shards) {
  if (shards < 1 || shards > shard_partition::max_shards)
    throw std::invalid_argument(std::to_string(shards) + " shards: from 1 to " +
                                std::to_string(shard_partition::max_shards));
}

}  // namespace

shard_partition hash_partition(uint32_t shards) {
  check_shards(shards);
  shard_partition p;
  p.how = shard_partition::kind::hash;
  p.shards = shards;
  return p;
}

shard_partition even_range_partition(uint32_t shards, uint64_t domain_max) {
  check_shards(shards);
  shard_partition p;
  p.how = shard_partition::kind::range;
  p.shards = shards;
  // (domain_max + 1) * s / shards without overflow at 64 bits.
  const unsigned __int128 domain = static_cast<unsigned __int128>(domain_max) + 1;
  for (uint32_t s = 0; s < shards; ++s) p.first[s] = static_cast<uint64_t>(domain * s / shards);
  return p;
}

shard_partition sampled_range_partition(const std::vector<uint64_t>& keys, uint32_t shards, uint64_t domain_max) {
  if (keys.empty() || shards == 1) return even_range_partition(shards, domain_max);
  check_shards(shards);
  // A strided sample of a few thousand keys a shard places the boundaries
  // within a fraction of a percent of the true quantiles.
  const uint64_t want = std::min<uint64_t>(keys.size(), uint64_t{4096} * shards);
  std::vector<uint64_t> sample(want);
  for (uint64_t i = 0; i < want; ++i)
    sample[i] = keys[static_cast<uint64_t>(static_cast<unsigned __int128>(i) * keys.size() / want)];
  std::sort(sample.begin(), sample.end());
  shard_partition p;
  p.how = shard_partition::kind::range;
  p.shards = shards;
  p.first[0] = 0;
  for (uint32_t s = 1; s < shards; ++s) {
    uint64_t q = sample[static_cast<uint64_t>(static_cast<unsigned __int128>(s) * want / shards)];
    q = std::max(q, p.first[s - 1] + 1);
    // Leave room for the shards after s (a domain of 2^32 keys has room for 64).
    q = std::min(q, domain_max - (shards - 1 - s));
    p.first[s] = q;
  }
  return p;
}

}  // namespace gpudict
